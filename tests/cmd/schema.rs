//! The published JSON Schemas (`schema/`): the files are what the Rust types generate, every
//! document the CLI prints carries `schema_version`, and the real `--json` output of every
//! command, over a whole life cycle, validates against its schema (the `jsonschema` crate).
//!
//! After changing a report type: `GIT_TASK_BLESS=1 cargo test --test cli schema` writes the
//! files again; review `git diff schema/` and commit them.

use crate::common::{Run, TestRepo};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn schema_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("schema")
}

/// The text a schema file holds: pretty JSON and a newline.
fn text(doc: &Value) -> String {
    let mut text = serde_json::to_string_pretty(doc).unwrap();
    text.push('\n');
    text
}

#[test]
fn schema_files_are_what_the_types_generate() {
    let bless = std::env::var_os("GIT_TASK_BLESS").is_some_and(|v| v == "1");
    let dir = schema_dir();
    let docs = git_task::testing::commands::schema::documents();
    let mut stale = Vec::new();
    for (path, doc) in &docs {
        let file = dir.join(path);
        let want = text(doc);
        if bless {
            // Through a new file renamed in place: the tests reading the schemas meanwhile
            // never see half of one.
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            let tmp = file.with_extension("json.tmp");
            std::fs::write(&tmp, &want).unwrap();
            std::fs::rename(&tmp, &file).unwrap();
        } else if std::fs::read_to_string(&file).ok().as_deref() != Some(want.as_str()) {
            stale.push(path.clone());
        }
    }
    // No file the types no longer generate.
    let generated: BTreeSet<PathBuf> = docs.iter().map(|(p, _)| dir.join(p)).collect();
    let mut extra = Vec::new();
    for entry in walk(&dir) {
        if !generated.contains(&entry) {
            if bless {
                std::fs::remove_file(&entry).unwrap();
            } else {
                extra.push(entry.display().to_string());
            }
        }
    }
    assert!(
        stale.is_empty() && extra.is_empty(),
        "schema/ is out of date (differs: {stale:?}; not generated: {extra:?}); \
         run `GIT_TASK_BLESS=1 cargo test --test cli schema` and review `git diff schema/`"
    );
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[test]
fn every_schema_is_a_valid_json_schema() {
    let docs = git_task::testing::commands::schema::documents();
    assert!(docs.len() > 20, "{}", docs.len());
    for (path, doc) in docs {
        if let Err(e) = jsonschema::meta::validate(&doc) {
            panic!("{path} is not a valid JSON Schema: {e}");
        }
        jsonschema::validator_for(&doc).unwrap_or_else(|e| panic!("{path}: {e}"));
    }
}

/// The schema in `schema/<name>.json` (the checked-in file, as users get it).
fn schema(name: &str) -> Value {
    let file = schema_dir().join(format!("{name}.json"));
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{file:?}: {e}"));
    serde_json::from_str(&text).unwrap()
}

/// The errors of `doc` against `schema/<name>.json`.
fn errors(name: &str, doc: &Value) -> Vec<String> {
    let validator = jsonschema::validator_for(&schema(name)).unwrap();
    validator
        .iter_errors(doc)
        .map(|e| format!("{e} (at '{}')", e.instance_path()))
        .collect()
}

/// Asserts `doc` (one JSON document `git task <name>` printed) has `schema_version` 1 and
/// validates against `schema/<name>.json`; returns it.
#[track_caller]
fn valid(name: &str, doc: Value) -> Value {
    assert_eq!(doc["schema_version"], 1, "{name}: {doc:#}");
    let errors = errors(name, &doc);
    assert!(
        errors.is_empty(),
        "{name} output does not match schema/{name}.json:\n{}\n{doc:#}",
        errors.join("\n")
    );
    doc
}

/// Runs `git task --json ARGS` in `dir`, expects exit `code`, validates its output against
/// `schema/<name>.json` and returns it.
#[track_caller]
fn json(repo: &TestRepo, dir: &Path, name: &str, code: i32, args: &[&str]) -> Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let run: Run = repo.task(dir, &all).code(code);
    valid(name, run.json())
}

#[test]
fn every_commands_json_output_matches_its_schema() {
    let repo = TestRepo::new();
    let root = repo.root().to_path_buf();
    repo.write(&root, "Makefile", "test:\n\ttrue\n");
    crate::common::commit_all(&repo, &root, "makefile");

    // start, path, scratch, list, status.
    let start = json(
        &repo,
        &root,
        "start",
        0,
        &["start", "a", "--allow", "src/**"],
    );
    assert_eq!(start["kind"], "start");
    let wt = PathBuf::from(start["worktree"].as_str().unwrap());
    json(&repo, &root, "start", 0, &["start", "a"]); // already there: a no-op
    json(&repo, &root, "path", 0, &["path", "a"]);
    json(&repo, &root, "scratch", 0, &["scratch", "a"]);

    // Work: checkpoint, changes, diff, check (clean and with --run), commit.
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 1; }\n");
    repo.write(&wt, "src/new.rs", "pub fn new() {}\n");
    json(&repo, &wt, "checkpoint", 0, &["checkpoint", "-m", "one"]);
    repo.write(&wt, "src/new.rs", "pub fn new() { 2; }\n");
    json(&repo, &wt, "checkpoint", 0, &["checkpoint", "-m", "two"]);
    json(&repo, &root, "list", 0, &["list"]);
    json(&repo, &root, "list", 0, &["list", "--all"]);
    // The warm pool: fill, status, list --all with an entry, drain.
    json(&repo, &root, "pool", 0, &["pool", "fill", "1", "--wait"]);
    let pool = json(&repo, &root, "pool", 0, &["pool", "status"]);
    assert_eq!(pool["entries"].as_array().unwrap().len(), 1);
    json(&repo, &root, "list", 0, &["list", "--all"]);
    json(&repo, &root, "pool", 0, &["pool", "drain"]);
    json(&repo, &root, "status", 0, &["status", "a"]);
    json(&repo, &root, "changes", 0, &["changes", "a"]);
    json(&repo, &root, "diff", 0, &["diff", "a"]);
    json(&repo, &root, "check", 0, &["check", "a"]);
    json(&repo, &root, "check", 0, &["check", "a", "--run"]);
    json(
        &repo,
        &root,
        "revert",
        0,
        &["revert", "a", "--checkpoint", "2"],
    );
    json(&repo, &root, "commit", 0, &["commit", "a", "-m", "work"]);
    json(&repo, &root, "commit", 1, &["commit", "a", "-m", "nothing"]);

    // A change outside the contract: check, checkpoint and commit refuse it.
    repo.write(&wt, "README.md", "# changed\n");
    let check = json(&repo, &root, "check", 1, &["check", "a"]);
    assert_eq!(check["kind"], "contract_violation");
    let cp = json(&repo, &wt, "checkpoint", 1, &["checkpoint"]);
    assert_eq!(cp["kind"], "contract_violation");
    json(&repo, &root, "commit", 1, &["commit", "a"]);
    // Committed behind the contract's back: the merge is refused.
    repo.git(&wt, &["commit", "-qam", "sneak"]);
    let refused = json(&repo, &root, "merge", 1, &["merge", "a"]);
    assert_eq!(refused["kind"], "contract_violation");
    json(&repo, &root, "reset", 0, &["reset", "a"]);

    // Work that lands.
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 3; }\n");
    json(&repo, &root, "commit", 0, &["commit", "a"]);
    repo.write(&root, "NOTES.md", "main moved on\n");
    crate::common::commit_all(&repo, &root, "notes");
    let synced = json(&repo, &root, "sync", 0, &["sync", "a"]);
    assert_eq!(synced["kind"], "sync");
    let merged = json(&repo, &root, "merge", 0, &["merge", "a", "--keep"]);
    assert_eq!(merged["kind"], "merge");

    // Refusals of other kinds: uncommitted work, failing checks.
    let b = repo.start("b", &["--allow", "src/**", "--check", "false"]);
    repo.write(&b, "src/b.rs", "b\n");
    let uncommitted = json(&repo, &root, "merge", 1, &["merge", "b"]);
    assert_eq!(uncommitted["kind"], "uncommitted_work");
    json(&repo, &root, "commit", 0, &["commit", "b"]);
    let failed = json(&repo, &root, "merge", 1, &["merge", "b"]);
    assert_eq!(failed["kind"], "checks_failed");
    json(&repo, &root, "check", 1, &["check", "b", "--run"]);

    // A sync that conflicts.
    let c = repo.start("c", &[]);
    repo.write(&c, "README.md", "# c\n");
    repo.git(&c, &["commit", "-qam", "c"]);
    repo.write(&root, "README.md", "# main\n");
    repo.git(&root, &["commit", "-qam", "main"]);
    let conflict = json(&repo, &root, "sync", 1, &["sync", "c"]);
    assert_eq!(conflict["kind"], "sync_conflict");
    repo.git(&c, &["merge", "--abort"]);

    // Patch mode: accept, and its refusal.
    let p = json(&repo, &root, "start", 0, &["start", "p", "--mode", "patch"]);
    assert_eq!(p["mode"], "patch");
    repo.write(&root, "src/p.rs", "p\n");
    let accepted = json(&repo, &root, "merge", 0, &["merge", "p"]);
    assert_eq!(accepted["kind"], "accept");

    // Overlaps and claims (a is kept after its merge, c and p are live).
    json(&repo, &root, "overlaps", 1, &["overlaps"]); // c conflicts with the base
    repo.start("d", &[]);
    json(&repo, &root, "claim", 0, &["claim", "c", "docs/**"]);
    let refused = json(&repo, &root, "claim", 1, &["claim", "d", "docs/x.md"]);
    assert_eq!(refused["kind"], "claimed_by");
    json(&repo, &root, "release", 0, &["release", "c"]);

    // Several machines: push, fetch, list --remote and adopt through a bare remote.
    let bare = repo.base().join("remote.git");
    let bare_s = bare.to_str().unwrap();
    repo.git(&root, &["init", "-q", "--bare", bare_s]);
    repo.git(&root, &["remote", "add", "origin", bare_s]);
    repo.git(&root, &["push", "-q", "origin", "main"]);
    json(&repo, &root, "push", 0, &["push", "d"]);
    json(&repo, &root, "fetch", 0, &["fetch"]);
    let remote = json(&repo, &root, "list", 0, &["list", "--remote", "origin"]);
    assert_eq!(remote["kind"], "list");
    let other = repo.base().join("other");
    repo.git(&root, &["clone", "-q", bare_s, other.to_str().unwrap()]);
    json(&repo, &other, "fetch", 0, &["fetch"]);
    let adopted = json(&repo, &other, "adopt", 0, &["adopt", "d"]);
    assert_eq!(adopted["kind"], "adopt");

    // A setup that fails.
    let setup = json(
        &repo,
        &root,
        "start",
        1,
        &["start", "s", "--setup", "exit 3"],
    );
    assert_eq!(setup["kind"], "setup_failed");

    // The log, and each event's details against its own schema.
    let log = json(&repo, &root, "log", 0, &["log", "a"]);
    let mut kinds = BTreeSet::new();
    for task in ["a", "b", "c", "p"] {
        let log = json(&repo, &root, "log", 0, &["log", task]);
        for entry in log["events"].as_array().unwrap() {
            let name = entry["event"].as_str().unwrap();
            let errors = errors(&format!("events/{name}"), &entry["details"]);
            assert!(errors.is_empty(), "{name}: {errors:?}\n{entry:#}");
            kinds.insert(name.to_owned());
        }
    }
    assert!(log["events"].as_array().unwrap().len() > 5, "{log:#}");

    // The end of tasks: drop, remove, sweep; hooks.
    json(&repo, &root, "drop", 0, &["drop", "b", "-m", "giving up"]);
    json(&repo, &root, "remove", 0, &["remove", "b"]);
    json(&repo, &root, "remove", 0, &["remove", "b"]); // gone: a no-op
    json(&repo, &root, "remove", 0, &["remove", "c", "--force"]);
    json(&repo, &root, "sweep", 0, &["sweep", "--dry-run"]);
    json(&repo, &root, "sweep", 0, &["sweep"]);
    json(&repo, &root, "hooks", 0, &["hooks", "status"]);
    json(&repo, &root, "hooks", 0, &["hooks", "install"]);
    json(&repo, &root, "hooks", 0, &["hooks", "status"]);
    json(&repo, &root, "hooks", 0, &["hooks", "uninstall"]);
    for task in ["b", "c"] {
        let log = json(&repo, &root, "log", 0, &["log", task]);
        for entry in log["events"].as_array().unwrap() {
            let name = entry["event"].as_str().unwrap();
            let errors = errors(&format!("events/{name}"), &entry["details"]);
            assert!(errors.is_empty(), "{name}: {errors:?}\n{entry:#}");
            kinds.insert(name.to_owned());
        }
    }
    for want in [
        "started",
        "provisioned",
        "checkpoint",
        "violation",
        "checks",
        "merged",
        "dropped",
        "removed",
        "reverted",
        "reset",
        "synced",
    ] {
        assert!(
            kinds.contains(want),
            "no '{want}' event was validated: {kinds:?}"
        );
    }
}

/// A schema that does not describe the output fails the validation: the check can fail.
#[test]
fn a_document_that_breaks_its_schema_is_caught() {
    let doc = serde_json::json!({ "schema_version": 1, "kind": "path", "task": "a", "path": 3, "exists": true });
    assert!(!errors("path", &doc).is_empty());
    let doc = serde_json::json!({ "schema_version": 2, "kind": "path", "task": "a", "path": "/x", "exists": true });
    assert!(!errors("path", &doc).is_empty());
    // A field the types do not declare.
    let doc = serde_json::json!({ "schema_version": 1, "kind": "path", "task": "a", "path": "/x", "exists": true, "extra": 1 });
    assert!(!errors("path", &doc).is_empty());
    let doc = serde_json::json!({ "schema_version": 1, "kind": "path", "task": "a", "path": "/x", "exists": true });
    assert_eq!(errors("path", &doc), Vec::<String>::new());
    // In a flattened, tagged enum too (the refusals of a merge).
    let doc = serde_json::json!({ "schema_version": 1, "kind": "merge_conflict", "task": "a", "into": "refs/heads/main", "paths": [], "hint": "h", "hints": ["h"], "next": [{"tool": "sync", "arguments": {"id": "a"}}] });
    assert_eq!(errors("merge", &doc), Vec::<String>::new());
    let mut bad = doc.clone();
    bad["detail"] = "x".into();
    assert!(!errors("merge", &bad).is_empty());
    // An event's details.
    let doc = serde_json::json!({ "event": "dropped", "task": "a", "time": 5, "message": null });
    assert_eq!(errors("events/dropped", &doc), Vec::<String>::new());
    let mut bad = doc.clone();
    bad["why"] = 3.into();
    assert!(!errors("events/dropped", &bad).is_empty());
}

/// Every visible command has a schema, or is known to print no JSON document.
#[test]
fn every_command_has_a_schema() {
    use clap::CommandFactory;
    // Commands whose output is not a JSON document: `exec` passes its child's output on,
    // `completions` prints a script; an MCP server and harness hooks speak their own protocols.
    let without = ["exec", "completions", "mcp", "harness", "guard"];
    let with: BTreeSet<&str> = git_task::testing::commands::JSON_SCHEMAS
        .iter()
        .map(|(name, _, _)| *name)
        .collect();
    let cli = git_task::cli::Cli::command();
    let missing: Vec<&str> = cli
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(|s| s.get_name())
        .filter(|name| !with.contains(name) && !without.contains(name))
        .collect();
    assert!(
        missing.is_empty(),
        "no schema for {missing:?}: add it to commands::JSON_SCHEMAS and bless schema/"
    );
}

/// Every event stored in a record commit (its message: the name, a blank line, the JSON body
/// with `state`, the task state after it) is described by its published schema
/// (`schema/events/<name>.json`), `state` included (issue 34, item 9).
#[test]
fn stored_record_events_and_their_state_match_the_event_schemas() {
    let repo = TestRepo::new();
    let wt = repo.start("st", &["--allow", "src/**"]);
    repo.write(&wt, "src/lib.rs", "pub fn st() {}\n");
    repo.task_root(&["commit", "st"]).ok();
    repo.write(&wt, "src/lib.rs", "pub fn st2() {}\n");
    repo.task_root(&["checkpoint", "st", "-m", "one"]).ok();
    repo.write(&wt, "README.md", "outside\n");
    repo.task_root(&["check", "st"]).code(1);
    repo.task_root(&["revert", "st", "--path", "README.md"])
        .ok();
    repo.task_root(&["drop", "st"]).ok();
    let bodies = repo.git(
        repo.root(),
        &["log", "--format=%H%x00%B%x01", "refs/tasks/st/record"],
    );
    let mut seen = BTreeSet::new();
    for entry in bodies
        .split('\u{1}')
        .map(str::trim)
        .filter(|e| !e.is_empty())
    {
        let (commit, message) = entry.split_once('\0').unwrap();
        let (name, body) = message.split_once("\n\n").unwrap();
        let body: Value = serde_json::from_str(body.trim()).unwrap();
        assert!(body["state"].is_object(), "{commit}: {body}");
        let errors = errors(&format!("events/{}", name.trim()), &body);
        assert!(errors.is_empty(), "{commit} {name}: {errors:?}\n{body:#}");
        seen.insert(name.trim().to_owned());
    }
    for want in [
        "started",
        "provisioned",
        "checkpoint",
        "committed",
        "dropped",
    ] {
        assert!(seen.contains(want), "{want}: {seen:?}");
    }
}
