//! Issue 29 item 2: every field of a record given a hostile value, by plain git and adopted by the
//! user (`git task trust --records`), so that the record verifies and each command must read it.
//!
//! The normal run tries one value of each field; `slow::hostile_records` tries them all.
//!
//! Must hold for every value and every read command: no panic (exit 101), and a failure names
//! the record (`t1` and "record"); `list` still lists the other task; the main worktree, `main`
//! and the other task's worktree are untouched; `git fsck` passes.

use super::mcp::Session;
use crate::common::{rev, trust_records};
use crate::common::{Run, TestRepo};
use serde_json::{json, Value};
use std::io::Write;
use std::path::Path;
use std::process::Stdio;

/// Runs `git args..` in `dir` with `input` on stdin; returns trimmed stdout.
#[track_caller]
fn git_in(repo: &TestRepo, dir: &Path, args: &[&str], input: &str) -> String {
    let mut child = repo
        .command("git", dir)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// `task.toml` with the `key = ..` line replaced by (or, absent, added as) `key = value`.
fn with_field(toml: &str, key: &str, value: &Value) -> String {
    // A JSON string, number, boolean or array of them is also a TOML literal.
    let literal = value.to_string();
    let prefix = format!("{key} = ");
    let mut found = false;
    let mut lines: Vec<String> = toml
        .lines()
        .map(|l| {
            if l.starts_with(&prefix) {
                found = true;
                format!("{key} = {literal}")
            } else {
                l.to_owned()
            }
        })
        .collect();
    if !found {
        lines.push(format!("{key} = {literal}"));
    }
    lines.join("\n") + "\n"
}

/// Appends to `id`'s record a `checkpoint` event whose `task.toml` and the state in its message
/// both have `key` set to `value`, then adopts it as the user would (`trust --records --yes`).
fn forge(repo: &TestRepo, id: &str, key: &str, value: &Value) {
    let record = format!("refs/tasks/{id}/record");
    let tip = rev(repo, &record);
    let forged = forged_event(repo, &tip, key, value);
    repo.git(repo.root(), &["update-ref", &record, &forged, &tip]);
    trust_records(repo, &[id]);
}

/// A `checkpoint` event commit on top of record commit `tip` whose `task.toml` and the state in
/// its message both have `key` set to `value` (no ref names it).
fn forged_event(repo: &TestRepo, tip: &str, key: &str, value: &Value) -> String {
    let dir = repo.root();
    let state = repo.git(dir, &["show", &format!("{tip}:task.toml")]);
    let blob = git_in(
        repo,
        dir,
        &["hash-object", "-w", "--stdin"],
        &with_field(&format!("{state}\n"), key, value),
    );
    let entries: String = repo
        .git(dir, &["ls-tree", tip])
        .lines()
        .map(|l| match l.ends_with("\ttask.toml") {
            true => format!("100644 blob {blob}\ttask.toml\n"),
            false => format!("{l}\n"),
        })
        .collect();
    let tree = git_in(repo, dir, &["mktree"], &entries);
    let message = repo.git(dir, &["log", "-1", "--format=%B", tip]);
    let mut body: Value = message
        .split_once("\n\n")
        .and_then(|(_, json)| serde_json::from_str(json.trim()).ok())
        .unwrap_or_else(|| json!({}));
    body["state"][key] = value.clone();
    git_in(
        repo,
        dir,
        &["commit-tree", &tree, "-p", tip, "-F", "-"],
        &format!("checkpoint\n\n{body}\n"),
    )
}

/// Asserts `run` did not crash and exited 0, 1, 2 or 128.
#[track_caller]
fn no_crash(run: &Run, what: &str) {
    assert!(
        !run.stderr.contains("panicked") && !run.stderr.contains("stack overflow"),
        "{what} panicked:\n{run}"
    );
    assert!(
        [0, 1, 2, 128].contains(&run.code),
        "{what}: exit {}:\n{run}",
        run.code
    );
}

/// Asserts a failed `run` says which record is bad (the task and the word "record").
#[track_caller]
fn names_record(run: &Run, what: &str) {
    if run.code == 0 {
        return;
    }
    let text = format!("{}{}", run.stdout, run.stderr);
    assert!(
        text.contains("t1") && text.contains("record"),
        "{what}: the error does not name t1's record:\n{run}"
    );
}

/// Every file below `dir` with its contents (skipping `.git`).
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = e.path();
            if e.file_name() == ".git" {
                continue;
            }
            if path.is_dir() {
                walk(base, &path, out);
            } else {
                let rel = path.strip_prefix(base).unwrap().display().to_string();
                out.push((rel, std::fs::read(&path).unwrap_or_default()));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// The read commands, then those that act (`sync`, `reset`, `merge`, `remove`), each against t1.
const COMMANDS: &[&[&str]] = &[
    &["list"],
    &["list", "--all", "--json"],
    &["status", "t1"],
    &["status", "--json"],
    &["path", "t1"],
    &["log", "t1", "--json"],
    &["check", "t1", "--json"],
    &["sweep", "--dry-run", "--json"],
    &["diff", "t1"],
    &["changes", "t1", "--json"],
    &["overlaps", "--json"],
    &["sync", "t1", "--json"],
    &["reset", "t1", "--json"],
    &["merge", "t1", "--no-checks", "--json"],
    &["remove", "t1", "--force", "--json"],
];

/// For each hostile `value` of `key`: a fresh repository with tasks t1 and t2, t1's record forged
/// and adopted, then every command and an MCP `list`. With `bad`, the reader must refuse the
/// value: a command aimed at t1 either succeeds without it or fails naming t1's record.
pub(crate) fn every_command_survives(key: &str, values: &[Value], bad: bool) {
    for value in values {
        let shown: String = value.to_string().chars().take(60).collect();
        let what = format!("{key} = {shown}");
        let repo = TestRepo::new();
        repo.start("t1", &[]);
        let wt2 = repo.start("t2", &[]);
        repo.write(&wt2, "notes.txt", "t2's work\n");
        let main = rev(&repo, "main");
        let main_files = files(repo.root());
        let t2_files = files(&wt2);
        forge(&repo, "t1", key, value);

        for args in COMMANDS {
            let run = repo.task_root(args);
            let what = format!("{args:?} with {what}");
            no_crash(&run, &what);
            if bad && args.contains(&"t1") {
                names_record(&run, &what);
            }
        }
        let list = repo.task_root(&["list", "--json"]);
        no_crash(&list, &what);
        assert_eq!(list.code, 0, "list failed on t1's record ({what}):\n{list}");
        assert!(
            list.json()["tasks"]
                .as_array()
                .is_some_and(|t| t.iter().any(|t| t["id"] == "t2")),
            "{what}: t2 is not listed:\n{list}"
        );

        let mut session = Session::open(&repo, &repo.base());
        let (_, doc, result) =
            session.call("list", json!({"repo": repo.root().display().to_string()}));
        assert!(
            doc["tasks"]
                .as_array()
                .is_some_and(|t| t.iter().any(|t| t["id"] == "t2")),
            "mcp list with {what}: {result}"
        );
        assert_eq!(session.close(), 0, "mcp with {what}");

        assert_eq!(rev(&repo, "main"), main, "{what}: main moved");
        assert_eq!(
            files(repo.root()),
            main_files,
            "{what}: main worktree changed"
        );
        assert_eq!(files(&wt2), t2_files, "{what}: t2's worktree changed");
        repo.fsck();
    }
}

/// Values no field should take: NUL, control characters, a megabyte, and wrong types.
fn junk() -> Vec<Value> {
    vec![
        json!("a\u{0}b"),
        json!("line\nbreak\u{1b}[31m"),
        json!("x".repeat(1 << 20)),
        json!(5),
        json!(["a"]),
    ]
}

/// `extra`, then [`junk`].
pub(crate) fn bad_values(extra: &[Value]) -> Vec<Value> {
    extra.iter().cloned().chain(junk()).collect()
}

/// One hostile value of each field, each command against it (what [`every_command_survives`]
/// asserts); `slow::hostile_records` gives every field every value.
#[test]
fn hostile_fields_fail_naming_the_record() {
    every_command_survives("id", &[json!("../x")], true);
    every_command_survives("branch", &[json!("refs/heads/task/../x")], true);
    every_command_survives("base_branch", &[json!("main")], true);
    every_command_survives("worktree", &[json!("relative/dir")], true);
}

/// As [`hostile_fields_fail_naming_the_record`]: the other fields, junk, and a valid value
/// that is not this task's.
#[test]
fn hostile_values_fail_naming_the_record() {
    every_command_survives("base_commit", &[json!("zz")], true);
    every_command_survives("status", &[json!(5)], true);
    every_command_survives("pid", &[json!("a\u{0}b")], true);
    every_command_survives("branch", &[json!("refs/heads/main")], false);
}

/// A record pushed to the shared remote with a hostile field (`git push`, as an agent with the
/// remote's credentials would). Must hold on the other machine: `fetch` neither panics nor
/// fails as a whole, `list` lists, `adopt` refuses naming the record, and its checked-out `main`
/// is unchanged; on the machine that has the task live, `fetch` leaves it as it was.
#[test]
fn hostile_remote_record_is_refused_naming_the_record() {
    for (key, value) in [
        ("id", json!("../x")),
        ("branch", json!("refs/heads/main")),
        ("branch", json!("main")),
        ("base_branch", json!("refs/heads/refs/heads/main")),
        ("worktree", json!("relative")),
        ("base_commit", json!("main~1")),
        ("status", json!(5)),
    ] {
        let what = format!("remote record with {key} = {value}");
        let repo = TestRepo::new();
        let bare = super::remote::bare_remote(&repo);
        super::remote::publish(&repo, bare.to_str().unwrap());
        let two = super::remote::machine(&repo, bare.to_str().unwrap(), "two");
        repo.start("t1", &[]);
        repo.task_root(&["push", "t1"]).ok();
        let local = rev(&repo, "refs/tasks/t1/record");
        let forged = forged_event(&repo, &local, key, &value);
        repo.git(
            repo.root(),
            &[
                "push",
                "-q",
                "-f",
                "origin",
                &format!("{forged}:refs/tasks/t1/record"),
            ],
        );
        let main_two = repo.git(&two, &["rev-parse", "main"]);

        let fetch = repo.task(&two, &["fetch", "--json"]);
        no_crash(&fetch, &format!("fetch on two, {what}"));
        let list = repo.task(&two, &["list", "--json"]);
        no_crash(&list, &what);
        assert_eq!(list.code, 0, "{what}:\n{list}");
        let adopt = repo.task(&two, &["adopt", "t1", "--json"]);
        no_crash(&adopt, &format!("adopt, {what}"));
        if adopt.code != 0 {
            names_record(&adopt, &format!("adopt, {what}"));
        }
        assert_eq!(repo.git(&two, &["rev-parse", "main"]), main_two, "{what}");
        assert_eq!(repo.git(&two, &["symbolic-ref", "HEAD"]), "refs/heads/main");

        let fetch = repo.task_root(&["fetch", "--json"]);
        no_crash(&fetch, &format!("fetch on one, {what}"));
        let status = repo.task_root(&["status", "t1", "--json"]);
        no_crash(&status, &what);
        assert_eq!(status.code, 0, "{what}: t1 here:\n{status}");
        assert_eq!(status.json()["status"], "active", "{what}:\n{status}");
        assert_eq!(
            rev(&repo, "refs/tasks/t1/record"),
            local,
            "{what}: t1's record moved"
        );
        repo.fsck();
    }
}

/// A record rewritten (and adopted) to name `main` as its branch and another branch as its base:
/// `sync` would fast-forward `main` onto the base, `reset` move it to a contract commit, `remove`
/// delete it. Must hold: each refuses as `record_tampered` (exit 1) and `main` stays.
#[test]
fn record_naming_main_as_its_branch_never_moves_main() {
    let repo = TestRepo::new();
    repo.start("t1", &[]);
    let ahead = repo.git(
        repo.root(),
        &["commit-tree", "main^{tree}", "-p", "main", "-m", "other"],
    );
    repo.git(repo.root(), &["update-ref", "refs/heads/other", &ahead]);
    forge(&repo, "t1", "branch", &json!("refs/heads/main"));
    forge(&repo, "t1", "base_branch", &json!("refs/heads/other"));
    let main = rev(&repo, "main");
    for args in [
        &["sync", "t1", "--json"][..],
        &["reset", "t1", "--json"],
        &["merge", "t1", "--no-checks", "--json"],
        &["remove", "t1", "--force", "--json"],
    ] {
        let run = repo.task_root(args);
        no_crash(&run, &format!("{args:?}"));
        assert_eq!(run.code, 1, "{args:?}:\n{run}");
        assert_eq!(run.json()["kind"], "record_tampered", "{args:?}:\n{run}");
        assert_eq!(rev(&repo, "main"), main, "{args:?} moved main:\n{run}");
    }
    repo.fsck();
}
