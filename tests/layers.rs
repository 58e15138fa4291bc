//! The import graph of `src/`: no file reaches, through the files it imports, back to itself.
//!
//! A file imports another when it names a path into it (`crate::a::b::Item`, `super::b`,
//! `use crate::a::{b, c}`); the path is resolved to the longest module prefix that is a file
//! (`a/b.rs`, `a/b/mod.rs`). A directory module's `mod.rs` declaring and re-exporting its
//! children is structure, not an import: only the paths written in code count, comments and
//! `#[cfg(test)]` modules left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir`, as its path relative to `src/` with `/` separators.
fn files(dir: &Path, root: &Path, out: &mut BTreeMap<String, String>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files(&path, root, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            out.insert(rel, std::fs::read_to_string(&path).unwrap());
        }
    }
}

/// The module path of a file: `a/b.rs` and `a/b/mod.rs` are both `["a", "b"]`.
fn module_of(rel: &str) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .trim_end_matches(".rs")
        .split('/')
        .map(str::to_owned)
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    if parts == ["lib"] || parts == ["main"] {
        parts.clear();
    }
    parts
}

/// The code of a file without comments and without its `#[cfg(test)]` tail.
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or("");
    text.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The module paths a file's code names, from `crate::` and `super::` (groups expanded).
fn named_paths(me: &[String], code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    // `super` of module `a::b` (file `a/b.rs` or `a/b/mod.rs`) is `a`.
    let parent = me[..me.len().saturating_sub(1)].to_vec();
    for (prefix, base) in [("crate::", Vec::new()), ("super::", parent)] {
        for (pos, _) in code.match_indices(prefix) {
            if pos > 0 && code[..pos].ends_with(|c: char| is_ident(c) || c == ':') {
                continue;
            }
            let rest = &code[pos + prefix.len()..];
            let mut path = base.clone();
            // `super::{a, b}`: the group follows the prefix directly.
            let mut tail = rest;
            let mut grouped = String::from("::");
            if rest.starts_with('{') {
                grouped.push_str(rest);
                tail = &grouped;
            }
            loop {
                let seg: String = tail.chars().take_while(|c| is_ident(*c)).collect();
                if seg.is_empty() && !tail.starts_with("::{") {
                    break;
                }
                if !seg.is_empty() {
                    path.push(seg.clone());
                }
                tail = &tail[seg.len()..];
                if let Some(t) = tail.strip_prefix("::") {
                    if let Some(group) = t.strip_prefix('{') {
                        for item in group.split('}').next().unwrap_or("").split(',') {
                            let first: String =
                                item.trim().chars().take_while(|c| is_ident(*c)).collect();
                            if !first.is_empty() {
                                let mut p = path.clone();
                                p.push(first);
                                out.push(p);
                            }
                        }
                        break;
                    }
                    tail = t;
                } else {
                    break;
                }
            }
            out.push(path);
        }
    }
    out
}

/// The import edges between files of `src/`.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let mut all = BTreeMap::new();
    let root = src();
    files(&root, &root, &mut all);
    let by_module: BTreeMap<Vec<String>, String> = all
        .keys()
        .map(|rel| (module_of(rel), rel.clone()))
        .collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (rel, text) in &all {
        let me = module_of(rel);
        let targets = edges.entry(rel.clone()).or_default();
        for path in named_paths(&me, &code(text)) {
            let target = (1..=path.len())
                .rev()
                .find_map(|n| by_module.get(&path[..n]));
            if let Some(t) = target.filter(|t| *t != rel) {
                targets.insert(t.clone());
            }
        }
    }
    edges
}

/// Strongly connected components of more than one file (Tarjan).
fn circles(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        g: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on.insert(v);
        for w in s.g.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(w);
                comp.push(w.to_owned());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                s.out.push(comp);
            }
        }
    }
    let mut s = State {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in g.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out
}

/// Issue 13: `src/` has no import circle.
#[test]
fn src_has_no_import_circle() {
    let g = graph();
    let found = circles(&g);
    let text: Vec<String> = found
        .iter()
        .map(|c| {
            let edges: Vec<String> = c
                .iter()
                .flat_map(|a| {
                    g[a].iter()
                        .filter(|b| c.contains(b))
                        .map(move |b| format!("    {a} -> {b}"))
                })
                .collect();
            format!("  {}\n{}", c.join(", "), edges.join("\n"))
        })
        .collect();
    assert!(
        found.is_empty(),
        "import circles in src/:\n{}",
        text.join("\n")
    );
}

/// The guard sees a circle when there is one (and follows `super::` and `use` groups).
#[test]
fn the_circle_finder_finds_a_planted_circle() {
    let me = module_of("task/start.rs");
    assert_eq!(me, ["task", "start"]);
    let paths = named_paths(
        &me,
        "use super::{reset, layout::x};\nlet a = crate::git::refs::apply();",
    );
    assert!(
        paths.contains(&vec!["task".into(), "reset".into()]),
        "{paths:?}"
    );
    assert!(
        paths.contains(&vec!["git".into(), "refs".into(), "apply".into()]),
        "{paths:?}"
    );
    let mut g = BTreeMap::new();
    g.insert("a.rs".to_owned(), BTreeSet::from(["b.rs".to_owned()]));
    g.insert("b.rs".to_owned(), BTreeSet::from(["c.rs".to_owned()]));
    g.insert("c.rs".to_owned(), BTreeSet::from(["a.rs".to_owned()]));
    g.insert("d.rs".to_owned(), BTreeSet::from(["a.rs".to_owned()]));
    assert_eq!(circles(&g), vec![vec!["a.rs", "b.rs", "c.rs"]]);
}
