//! Every refusal carries its next step (issue 34, item 5): in words (`hints`, the `hint:` lines
//! of the command line) and, where a tool does it, as `git task mcp` tool calls (`next`).

use crate::common::TestRepo;
use serde_json::Value;

/// The kinds of documents that answer yes (or just report); every other kind is a refusal.
const ANSWERS: &[&str] = &[
    "accept",
    "adopt",
    "audit",
    "changes",
    "checkpoint",
    "claim",
    "commit",
    "contract_ok",
    "diff",
    "drop",
    "event",
    "fetch",
    "hooks_install",
    "hooks_status",
    "hooks_uninstall",
    "list",
    "log",
    "merge",
    "overlaps",
    "path",
    "pool",
    "push",
    "queue_add",
    "queue_remove",
    "queue_run",
    "queue_status",
    "release",
    "remove",
    "reset",
    "revert",
    "scratch",
    "start",
    "status",
    "sweep",
    "sync",
    "trust",
    "trust_records",
];

/// The `kind` values an object schema names (`const` or `enum`).
fn kinds(object: &Value) -> Vec<String> {
    let kind = &object["properties"]["kind"];
    let mut out: Vec<String> = kind["enum"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect();
    if let Some(k) = kind["const"].as_str() {
        out.push(k.to_owned());
    }
    out
}

/// The object schemas a document may be, each with the properties it has (its own, and those
/// of the schema it is a variant of), followed through `$ref`s, `oneOf`, `anyOf` and `allOf`.
fn shapes(defs: &Value, schema: &Value, inherited: &[String], out: &mut Vec<(Value, Vec<String>)>) {
    if let Some(target) = schema["$ref"].as_str() {
        let name = target.trim_start_matches("#/$defs/");
        shapes(defs, &defs[name], inherited, out);
        return;
    }
    let mut props: Vec<String> = inherited.to_vec();
    props.extend(
        schema["properties"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, _)| k.clone()),
    );
    let mut nested = false;
    for key in ["oneOf", "anyOf", "allOf"] {
        for variant in schema[key].as_array().into_iter().flatten() {
            nested = true;
            shapes(defs, variant, &props, out);
        }
    }
    if !nested || schema["properties"]["kind"].is_object() {
        out.push((schema.clone(), props));
    }
}

/// The published schemas: every refusal kind a command prints declares `hints` and `next`.
/// A new refusal without them fails here.
#[test]
fn every_refusal_kind_declares_hints_and_next() {
    let mut missing = Vec::new();
    let mut refusals = Vec::new();
    for (path, doc) in git_task::testing::commands::schema::documents() {
        let stem = std::path::Path::new(&path)
            .file_stem()
            .unwrap()
            .to_string_lossy()
            .replace('-', "_");
        let defs = &doc["$defs"];
        let mut found = Vec::new();
        shapes(defs, &doc, &[], &mut found);
        for (shape, props) in found {
            for kind in kinds(&shape) {
                if kind == stem || ANSWERS.contains(&kind.as_str()) {
                    continue;
                }
                refusals.push(kind.clone());
                for field in ["hints", "next"] {
                    if !props.iter().any(|p| p == field) {
                        missing.push(format!("{path}: {kind} has no '{field}'"));
                    }
                }
            }
        }
    }
    missing.sort();
    missing.dedup();
    assert!(missing.is_empty(), "{missing:#?}");
    // The walk sees the refusals (it would pass vacuously otherwise).
    for kind in [
        "contract_violation",
        "checks_failed",
        "uncommitted_work",
        "worktree_not_on_branch",
        "merge_conflict",
        "target_dirty",
        "record_tampered",
        "remote_moved",
        "sync_conflict",
        "uncommitted_changes",
        "claimed_by",
        "revert_conflict",
        "setup_failed",
    ] {
        assert!(refusals.iter().any(|k| k == kind), "{kind}: {refusals:?}");
    }
}

fn json(run: &crate::common::Run) -> Value {
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {run}"))
}

fn hints(doc: &Value) -> Vec<String> {
    doc["hints"]
        .as_array()
        .unwrap_or_else(|| panic!("no hints: {doc}"))
        .iter()
        .map(|h| h.as_str().unwrap().to_owned())
        .collect()
}

/// A merge refused for uncommitted work says, in JSON too, to commit and merge again: hints
/// and the tool calls `commit` then `merge`; following them lands the task.
#[test]
fn uncommitted_work_carries_its_way_out_and_it_lands() {
    let repo = TestRepo::new();
    let wt = repo.start("u", &["--allow", "src/**"]);
    repo.write(&wt, "src/lib.rs", "pub fn u() {}\n");
    let run = repo.task_root(&["merge", "--json", "u"]).code(1);
    let doc = json(&run);
    assert_eq!(doc["kind"], "uncommitted_work", "{doc}");
    let hints = hints(&doc);
    assert!(hints[0].contains("git task commit u"), "{hints:?}");
    assert!(hints[1].contains("git task merge u"), "{hints:?}");
    assert_eq!(
        doc["next"],
        serde_json::json!([
            {"tool": "commit", "arguments": {"id": "u"}},
            {"tool": "merge", "arguments": {"ids": ["u"]}},
        ])
    );
    // The human form says the same.
    let human = repo.task_root(&["merge", "u"]).code(1);
    for hint in &hints {
        assert!(human.stderr.contains(&format!("hint: {hint}")), "{human}");
    }
    repo.task_root(&["commit", "u"]).ok();
    repo.task_root(&["merge", "u"]).ok();
    assert_eq!(
        repo.git(repo.root(), &["show", "main:src/lib.rs"]),
        "pub fn u() {}"
    );
}

/// A violation's next step is `revert` of the offending paths, then `commit` (and for a merge,
/// `merge` again); taken on the command line, they land the task without the offending file.
#[test]
fn a_violation_names_revert_with_paths_then_commit() {
    let repo = TestRepo::new();
    let wt = repo.start("v", &["--allow", "src/**"]);
    repo.write(&wt, "src/lib.rs", "pub fn v() {}\n");
    repo.write(&wt, "README.md", "outside\n");
    repo.git(&wt, &["commit", "-q", "-am", "both"]);
    let check = json(&repo.task_root(&["check", "--json", "v"]).code(1));
    assert_eq!(check["kind"], "contract_violation");
    assert_eq!(
        check["next"],
        serde_json::json!([
            {"tool": "revert", "arguments": {"id": "v", "paths": ["README.md"]}},
            {"tool": "commit", "arguments": {"id": "v"}},
        ])
    );
    assert!(
        hints(&check)[0].contains("git task revert v --path README.md"),
        "{check}"
    );
    let merge = json(&repo.task_root(&["merge", "--json", "v"]).code(1));
    assert_eq!(merge["kind"], "contract_violation");
    assert_eq!(merge["next"][2]["tool"], "merge", "{merge}");
    assert!(
        hints(&merge).iter().any(|h| h.contains("git task merge v")),
        "{merge}"
    );
    repo.task_root(&["revert", "v", "--path", "README.md"]).ok();
    repo.task_root(&["commit", "v"]).ok();
    repo.task_root(&["merge", "v"]).ok();
    assert_eq!(
        repo.git(repo.root(), &["show", "main:src/lib.rs"]),
        "pub fn v() {}"
    );
    assert_eq!(repo.git(repo.root(), &["show", "main:README.md"]), "# demo");
}

/// With `--no-deletions`, a rename is a deletion the contract refuses: the repair puts back both
/// names (the old one restored, the new one gone), and so does the `revert` it names.
#[test]
fn a_refused_rename_is_put_back_whole() {
    let repo = TestRepo::new();
    let wt = repo.start("mv", &["--no-deletions"]);
    repo.git(&wt, &["mv", "src/lib.rs", "src/moved.rs"]);
    repo.git(&wt, &["commit", "-q", "-m", "rename"]);
    let doc = json(&repo.task_root(&["check", "--json", "mv"]).code(1));
    assert_eq!(doc["violations"][0]["file"], "src/lib.rs", "{doc}");
    assert_eq!(
        doc["next"][0]["arguments"]["paths"],
        serde_json::json!(["src/lib.rs", "src/moved.rs"]),
        "{doc}"
    );
    // The repair's git commands, run as printed, undo the rename.
    let repair = doc["repair"].as_str().unwrap();
    let line = repair
        .lines()
        .find(|l| l.contains("src/moved.rs"))
        .unwrap_or_else(|| panic!("the new name is not put back: {repair}"));
    let command = line.split("   #").next().unwrap().trim();
    let out = std::process::Command::new("sh")
        .args(["-c", command])
        .current_dir(repo.root())
        .output()
        .unwrap();
    assert!(out.status.success(), "{command}: {out:?}");
    assert_eq!(
        repo.git(&wt, &["status", "--porcelain"]),
        "R  src/moved.rs -> src/lib.rs"
    );
    assert!(!wt.join("src/moved.rs").exists());
    assert!(wt.join("src/lib.rs").exists());
    repo.task_root(&["commit", "mv"]).ok();
    repo.task_root(&["check", "mv"]).ok();

    // The git-task way out (`revert` with both paths, then `commit`) does the same.
    let wt = repo.start("mv2", &["--no-deletions"]);
    repo.git(&wt, &["mv", "src/lib.rs", "src/moved.rs"]);
    repo.git(&wt, &["commit", "-q", "-m", "rename"]);
    let doc = json(&repo.task_root(&["check", "--json", "mv2"]).code(1));
    let mut args = vec!["revert".to_owned(), "mv2".to_owned()];
    for path in doc["next"][0]["arguments"]["paths"].as_array().unwrap() {
        args.extend(["--path".to_owned(), path.as_str().unwrap().to_owned()]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    repo.task_root(&args).ok();
    repo.task_root(&["commit", "mv2"]).ok();
    repo.task_root(&["check", "mv2"]).ok();
    assert!(wt.join("src/lib.rs").exists() && !wt.join("src/moved.rs").exists());
}

/// Uncommitted work of which a part breaks the contract: `commit` would leave that part behind
/// (and the merge refuse again), so the way out puts it back first: `revert` of those paths,
/// then `commit`, then `merge`; followed, they land the task without the outside file.
#[test]
fn uncommitted_work_outside_the_contract_is_put_back_first() {
    let repo = TestRepo::new();
    let wt = repo.start("o", &["--allow", "src/**"]);
    repo.write(&wt, "src/lib.rs", "pub fn o() {}\n");
    repo.write(&wt, "README.md", "outside\n");
    let doc = json(&repo.task_root(&["merge", "--json", "o"]).code(1));
    assert_eq!(doc["kind"], "uncommitted_work", "{doc}");
    assert_eq!(
        doc["next"],
        serde_json::json!([
            {"tool": "revert", "arguments": {"id": "o", "paths": ["README.md"]}},
            {"tool": "commit", "arguments": {"id": "o"}},
            {"tool": "merge", "arguments": {"ids": ["o"]}},
        ])
    );
    assert!(
        hints(&doc)[0].contains("git task revert o --path README.md"),
        "{doc}"
    );
    repo.task_root(&["revert", "o", "--path", "README.md"]).ok();
    repo.task_root(&["commit", "o"]).ok();
    repo.task_root(&["merge", "o"]).ok();
    assert_eq!(
        repo.git(repo.root(), &["show", "main:src/lib.rs"]),
        "pub fn o() {}"
    );
    assert_eq!(repo.git(repo.root(), &["show", "main:README.md"]), "# demo");
}

/// Every error raised with its own `kind` (`.with_code(..)`) says what to do next: a `.hint(..)`
/// (or a `refusal(..)` that adds them) in the same expression. A new coded error without one
/// fails here.
#[test]
fn every_coded_error_carries_a_hint() {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    walk(&root, &mut files);
    let mut coded = 0;
    let mut bare = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let text = text.split("#[cfg(test)]").next().unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (n, line) in lines.iter().enumerate() {
            if !line.contains(".with_code(\"") {
                continue;
            }
            coded += 1;
            // The expression around it: back to the error's constructor, on to its end.
            let from = (0..=n)
                .rev()
                .find(|&i| {
                    lines[i].contains("Error::") || lines[i].contains(".refusal(") || i + 25 == n
                })
                .unwrap_or(0);
            let to = (n..lines.len())
                .find(|&i| lines[i].trim_end().ends_with(';') || i == n + 25)
                .unwrap_or(lines.len() - 1);
            let expr = lines[from..=to].join("\n");
            if !expr.contains(".hint(") && !expr.contains(".refusal(") {
                bare.push(format!("{}:{}", file.display(), n + 1));
            }
        }
    }
    assert!(coded >= 10, "the walk found {coded} coded errors");
    assert!(bare.is_empty(), "coded errors without a hint: {bare:#?}");
}

/// `merge --merge` of a task whose history holds a change its net change undid: putting paths
/// back changes no commit, so the way out is the squash landing of the net change
/// (`merge` with `strategy: squash`), and it lands.
#[test]
fn a_violation_in_the_history_only_names_the_squash_landing() {
    let repo = TestRepo::new();
    let wt = repo.start("h", &["--allow", "src/**"]);
    repo.write(&wt, "README.md", "outside\n");
    repo.git(&wt, &["commit", "-q", "-am", "outside"]);
    repo.write(&wt, "README.md", "# demo\n");
    repo.write(&wt, "src/lib.rs", "pub fn h() {}\n");
    repo.git(&wt, &["commit", "-q", "-am", "undo outside, work inside"]);
    let doc = json(&repo.task_root(&["merge", "--merge", "--json", "h"]).code(1));
    assert_eq!(doc["kind"], "contract_violation", "{doc}");
    assert_eq!(
        doc["next"],
        serde_json::json!([
            {"tool": "merge", "arguments": {"ids": ["h"], "strategy": "squash"}},
        ])
    );
    assert!(
        hints(&doc)[0].contains("git task merge h --squash"),
        "{doc}"
    );
    repo.task_root(&["merge", "h", "--squash"]).ok();
    assert_eq!(
        repo.git(repo.root(), &["show", "main:src/lib.rs"]),
        "pub fn h() {}"
    );
}
