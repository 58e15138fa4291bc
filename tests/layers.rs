//! The import graph of `src/`: no file reaches, through the files it imports, back to itself.
//!
//! A file imports another when it names a path into it (`crate::a::b::Item`, `super::b`,
//! `use crate::a::{b, c}`); the path is resolved to the longest module prefix that is a file
//! (`a/b.rs`, `a/b/mod.rs`). A directory module's `mod.rs` declaring and re-exporting its
//! children is structure, not an import: only the paths written in code count, comments and
//! `#[cfg(test)]` modules left out.
//!
//! The same graph with each file collapsed to its top-level module (`task/id.rs` is `task`,
//! `app.rs` is `app`) has no cycle either, and keeps the layers: front ends → `commands` →
//! verbs → services → vocabulary (`task`) → `git` and `error`.

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

/// The code of a file without comments and without its `#[cfg(test)]` tail (none at all for
/// a file that is only tests, `#![cfg(test)]`).
fn code(text: &str) -> String {
    if text.contains("#![cfg(test)]") {
        return String::new();
    }
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

/// A file's top-level module: `task/id.rs` and `git/refs/read.rs` are `task` and `git`, a
/// top-level file (`app.rs`, `lib.rs`, `main.rs`) is its own module.
fn top_module(rel: &str) -> String {
    let first = rel.split('/').next().unwrap_or(rel);
    first.trim_end_matches(".rs").to_owned()
}

/// The import edges between top-level modules: the file graph with each file collapsed to
/// its module, for each edge the file edges that make it.
fn module_graph(
    files: &BTreeMap<String, BTreeSet<String>>,
) -> BTreeMap<String, BTreeMap<String, Vec<String>>> {
    let mut out: BTreeMap<String, BTreeMap<String, Vec<String>>> = BTreeMap::new();
    for (a, targets) in files {
        let ma = top_module(a);
        let edges = out.entry(ma.clone()).or_default();
        for b in targets {
            let mb = top_module(b);
            if mb != ma {
                edges.entry(mb).or_default().push(format!("{a} -> {b}"));
            }
        }
    }
    out
}

/// The module graph without the files that make each edge.
fn bare(g: &BTreeMap<String, BTreeMap<String, Vec<String>>>) -> BTreeMap<String, BTreeSet<String>> {
    g.iter()
        .map(|(a, t)| (a.clone(), t.keys().cloned().collect()))
        .collect()
}

/// One shortest cycle through the first module of `comp`, inside `comp`: `a -> b -> a`.
fn a_cycle(g: &BTreeMap<String, BTreeSet<String>>, comp: &[String]) -> Vec<String> {
    let start = &comp[0];
    let mut came: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start.as_str()]);
    while let Some(v) = queue.pop_front() {
        for w in g.get(v).into_iter().flatten() {
            if !comp.contains(w) {
                continue;
            }
            if w == start {
                let mut path = vec![start.clone(), v.to_owned()];
                let mut at = v;
                while at != start {
                    at = came[at];
                    path.push(at.to_owned());
                }
                path.reverse();
                return path;
            }
            if !came.contains_key(w.as_str()) {
                came.insert(w, v);
                queue.push_back(w);
            }
        }
    }
    Vec::new()
}

/// Issue 29: no top-level module of `src/` reaches itself through the modules it imports.
#[test]
fn src_has_no_module_cycle() {
    let g = module_graph(&graph());
    let b = bare(&g);
    let mut text = Vec::new();
    for comp in circles(&b) {
        let mut lines = vec![
            format!("  {}", comp.join(", ")),
            format!("    cycle: {}", a_cycle(&b, &comp).join(" -> ")),
        ];
        for a in &comp {
            for (m, why) in &g[a] {
                if comp.contains(m) {
                    lines.push(format!("    {a} -> {m}: {}", why.join(", ")));
                }
            }
        }
        text.push(lines.join("\n"));
    }
    assert!(
        text.is_empty(),
        "module cycles in src/:\n{}",
        text.join("\n")
    );
}

/// Front ends: they parse, dispatch and print; nothing below them imports them.
const FRONT_ENDS: &[&str] = &["app", "cli", "mcp", "harness", "main", "lib"];
/// The verbs: each does one thing to tasks, called by `commands/` (and each other).
const VERBS: &[&str] = &[
    "lifecycle",
    "merge",
    "overlaps",
    "patch",
    "pool",
    "recover",
    "remote",
    "sync",
    "undo",
];
/// The vocabulary: what a task is.
const VOCABULARY: &[&str] = &["task"];
/// The bottom: the gix adapter and the error type.
const BOTTOM: &[&str] = &["git", "error"];

/// The layer of a module, higher above: front ends, `commands`, verbs, services (the rest),
/// vocabulary, bottom.
fn layer(m: &str) -> u8 {
    if FRONT_ENDS.contains(&m) {
        5
    } else if m == "commands" {
        4
    } else if VERBS.contains(&m) {
        3
    } else if VOCABULARY.contains(&m) {
        1
    } else if BOTTOM.contains(&m) {
        0
    } else {
        2
    }
}

/// Issue 29: front ends → `commands` → verbs → services → vocabulary (`task`) → `git`:
/// no module imports one of a higher layer; `git` imports only `error`, `task` only `git`
/// and `error`.
#[test]
fn src_modules_keep_their_layers() {
    let g = module_graph(&graph());
    let mut offences = Vec::new();
    for (a, targets) in &g {
        for (b, why) in targets {
            let bad = match a.as_str() {
                "git" => b != "error",
                "error" => true,
                "task" => !BOTTOM.contains(&b.as_str()),
                _ => layer(b) > layer(a),
            };
            if bad {
                offences.push(format!("  {a} -> {b}: {}", why.join(", ")));
            }
        }
    }
    assert!(
        offences.is_empty(),
        "imports against the layers (front ends → commands → verbs → services → task → git):\n{}",
        offences.join("\n")
    );
}

/// The module pass collapses files to their top-level module and sees a cycle between them.
#[test]
fn the_module_pass_finds_a_planted_module_cycle() {
    assert_eq!(top_module("task/id.rs"), "task");
    assert_eq!(top_module("git/refs/read.rs"), "git");
    assert_eq!(top_module("app.rs"), "app");
    let mut files = BTreeMap::new();
    files.insert("a/x.rs".to_owned(), BTreeSet::from(["b/mod.rs".to_owned()]));
    files.insert("b/mod.rs".to_owned(), BTreeSet::from(["c.rs".to_owned()]));
    files.insert("c.rs".to_owned(), BTreeSet::from(["a/y.rs".to_owned()]));
    files.insert("a/y.rs".to_owned(), BTreeSet::new());
    let b = bare(&module_graph(&files));
    assert!(circles(&files).is_empty());
    let found = circles(&b);
    assert_eq!(found, vec![vec!["a", "b", "c"]]);
    assert_eq!(a_cycle(&b, &found[0]), ["a", "b", "c", "a"]);
}
