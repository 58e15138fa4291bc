//! Issue 30: trust nothing a task can write (SPEC §2 principle 8, §4, §7, §8, §11).
//!
//! Each test is one attack made as an agent makes it: plain `git` (plumbing, `git config`,
//! `update-ref`, `worktree move`) run in its own task worktree, hooks skipped where the agent
//! would skip them. Then the user runs the victim `git task` command as usual, and git is the
//! oracle: what is on disk (the victim's files still there, the markers of injected commands
//! absent), the refs, `git fsck`, the exit code (never 101) and the JSON kind. The last tests
//! (`root_cause_*`) each cover one of the causes the issue names, across commands.
//!
//! Every path an attack names (markers, hook scripts, "autostart") lies inside the test's own
//! temporary directory.

use crate::common::{all_refs, collect, commit_all, rev, task_command, write_script};
use crate::common::{Run, TestRepo};
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;

// ---------------------------------------------------------------------------------------------
// The agent's tools: git in its worktree.

/// `git -c core.hooksPath=/dev/null args..` in `dir`, as an agent that skips hooks; must succeed.
#[track_caller]
fn agent(repo: &TestRepo, dir: &Path, args: &[&str]) -> String {
    let mut all = vec!["-c", "core.hooksPath=/dev/null"];
    all.extend_from_slice(args);
    repo.git(dir, &all)
}

/// Like [`agent`], with `input` on stdin; returns trimmed stdout.
#[track_caller]
fn agent_stdin(repo: &TestRepo, dir: &Path, args: &[&str], input: &str) -> String {
    let mut cmd = repo.command("git", dir);
    cmd.args(["-c", "core.hooksPath=/dev/null"]).args(args);
    let mut child = cmd
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
    let run = collect(child);
    assert_eq!(run.code, 0, "git {args:?} failed:\n{run}");
    run.stdout.trim().to_owned()
}

/// Replaces the `key = ...` line of a `task.toml` with `key = value` (value as TOML).
fn set_field(toml: &str, key: &str, value: &str) -> String {
    let prefix = format!("{key} = ");
    let mut found = false;
    let mut out: Vec<String> = toml
        .lines()
        .map(|l| {
            if l.starts_with(&prefix) {
                found = true;
                format!("{key} = {value}")
            } else {
                l.to_owned()
            }
        })
        .collect();
    if !found {
        out.push(format!("{key} = {value}"));
    }
    out.join("\n") + "\n"
}

/// The agent appends an event commit named `event` to task `id`'s record, from `dir`, with
/// `task.toml` rewritten by `edit` (contract and everything else kept), and points the record
/// at it (`commit-tree` + `update-ref`). Returns the forged commit.
fn forge_record(
    repo: &TestRepo,
    dir: &Path,
    id: &str,
    event: &str,
    edit: &dyn Fn(&str) -> String,
) -> String {
    let record = format!("refs/tasks/{id}/record");
    let tip = agent(repo, dir, &["rev-parse", &record]);
    let state = agent(repo, dir, &["show", &format!("{tip}:task.toml")]);
    let blob = agent_stdin(
        repo,
        dir,
        &["hash-object", "-w", "--stdin"],
        &edit(&format!("{state}\n")),
    );
    let entries: String = agent(repo, dir, &["ls-tree", &tip])
        .lines()
        .map(|l| {
            if l.ends_with("\ttask.toml") {
                format!("100644 blob {blob}\ttask.toml\n")
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    let tree = agent_stdin(repo, dir, &["mktree"], &entries);
    let forged = agent(
        repo,
        dir,
        &["commit-tree", &tree, "-p", &tip, "-m", event, "-m", "{}"],
    );
    agent(repo, dir, &["update-ref", &record, &forged, &tip]);
    forged
}

/// The agent makes a record for `id` from nothing (a root `started` commit whose frozen contract
/// is `contract`), with state `active`, and points `refs/tasks/<id>/record` at it.
fn make_record(
    repo: &TestRepo,
    dir: &Path,
    id: &str,
    branch: &str,
    worktree: &Path,
    contract: &str,
) -> String {
    let main = agent(repo, dir, &["rev-parse", "main"]);
    let state = format!(
        "id = \"{id}\"\nmode = \"worktree\"\nstatus = \"active\"\nbranch = \"{branch}\"\n\
         base_branch = \"refs/heads/main\"\nbase_commit = \"{main}\"\nworktree = \"{}\"\n\
         created = 1\npid = 1\n",
        worktree.display()
    );
    let state_blob = agent_stdin(repo, dir, &["hash-object", "-w", "--stdin"], &state);
    let contract_blob = agent_stdin(repo, dir, &["hash-object", "-w", "--stdin"], contract);
    let tree = agent_stdin(
        repo,
        dir,
        &["mktree"],
        &format!(
            "100644 blob {contract_blob}\tcontract.toml\n100644 blob {state_blob}\ttask.toml\n"
        ),
    );
    let commit = agent(
        repo,
        dir,
        &["commit-tree", &tree, "-m", "started", "-m", "{}"],
    );
    agent(
        repo,
        dir,
        &["update-ref", &format!("refs/tasks/{id}/record"), &commit],
    );
    commit
}

// ---------------------------------------------------------------------------------------------
// The oracle.

/// Asserts a command did not crash: exit 101 is a Rust panic, 134 an abort, -1 a signal.
#[track_caller]
fn no_crash(run: &Run, what: &str) {
    assert!(
        ![101, 134, -1].contains(&run.code),
        "{what} crashed (exit {}):\n{run}",
        run.code
    );
    assert!(
        !run.stderr.contains("panicked") && !run.stderr.contains("stack overflow"),
        "{what} panicked:\n{run}"
    );
}

/// Asserts exit 1 with JSON kind `kind` on stdout.
#[track_caller]
fn refused_as(run: &Run, kind: &str, what: &str) -> Value {
    no_crash(run, what);
    assert_eq!(run.code, 1, "{what}: expected exit 1 ({kind}):\n{run}");
    let json: Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("{what}: stdout is not one JSON document ({e}):\n{run}"));
    assert_eq!(json["kind"], kind, "{what}: {json}");
    json
}

/// Asserts `record_tampered` (exit 1).
#[track_caller]
fn tampered(run: &Run, what: &str) -> Value {
    refused_as(run, "record_tampered", what)
}

/// The names in `dir` (sorted), or nothing when it does not exist.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// Every file below `dir` with its contents (skipping `.git`): a fingerprint of a worktree.
fn files(dir: &Path) -> Vec<(String, String)> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<(String, String)>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let path = e.path();
            if e.file_name() == ".git" {
                continue;
            }
            if path.is_dir() {
                walk(base, &path, out);
            } else {
                let rel = path.strip_prefix(base).unwrap().display().to_string();
                out.push((rel, std::fs::read_to_string(&path).unwrap_or_default()));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// The common git dir's `git-task/` directory.
fn state_dir(repo: &TestRepo) -> PathBuf {
    repo.root().join(".git").join("git-task")
}

/// The `tasks[]` entry of `list --json` for `id`.
fn listed<'a>(list: &'a Value, id: &str) -> Option<&'a Value> {
    list["tasks"]
        .as_array()
        .and_then(|a| a.iter().find(|t| t["id"] == id))
}

/// Whether a `list --json` entry says its record is tampered.
fn is_tampered(entry: &Value) -> bool {
    entry["status"] == "tampered" || entry["tampered"] == true
}

/// A worktree with an uncommitted edit of a tracked file and an untracked file.
fn make_dirty(repo: &TestRepo, wt: &Path) {
    repo.write(wt, "src/lib.rs", "pub fn unsaved() {}\n");
    repo.write(wt, "notes/untracked.txt", "precious, never committed\n");
}

// ---------------------------------------------------------------------------------------------
// Forged records.

/// Attack: the agent rewrites its own record as an "abandoned start" (status `provisioning`, a
/// pid that cannot be alive) with `commit-tree` + `update-ref`. Must hold: the user's routine
/// `sweep` reports the record as tampered (JSON `tampered`) and leaves it alone: no roll-back,
/// the record ref, the worktree with its work, the branch and the frozen digests untouched.
#[test]
fn attack_forged_abandoned_start_is_not_rolled_back_by_sweep() {
    let repo = TestRepo::new();
    let wt = repo.start("t1", &["--forbid", "src/store/**"]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 1 }\n");
    commit_all(&repo, &wt, "allowed work");
    repo.write(&wt, "notes/todo.txt", "untracked\n");
    let frozen = state_dir(&repo).join("frozen").join("t1");
    let digests = listing(&frozen);
    let branch = rev(&repo, "task/t1");

    let forged = forge_record(&repo, &wt, "t1", "started", &|s| {
        set_field(
            &set_field(s, "status", "\"provisioning\""),
            "pid",
            "4000000000",
        )
    });

    let run = repo.task_root(&["sweep", "--json"]);
    no_crash(&run, "sweep");
    assert_eq!(run.code, 0, "{run}");
    let j = run.json();
    assert!(
        j["tampered"]
            .as_array()
            .is_some_and(|a| a.contains(&json!("t1"))),
        "sweep must report t1 as tampered: {j}"
    );
    assert_eq!(rev(&repo, "refs/tasks/t1/record"), forged, "record touched");
    assert_eq!(rev(&repo, "task/t1"), branch, "branch touched");
    assert!(repo.worktrees().contains(&wt), "worktree removed");
    assert_eq!(repo.read(&wt, "notes/todo.txt"), "untracked\n");
    assert_eq!(listing(&frozen), digests, "frozen digests deleted");
    repo.fsck();
}

/// Attack: the genuine `started` commit git-task wrote (status `provisioning`, the starting
/// process long gone) is still in the record's history; the agent points its record back at it
/// (`update-ref refs/tasks/t1/record <record>~1`), no forgery needed. Must hold: a record rolled
/// back to an older commit is tampered too; `sweep` does not roll the live task back.
#[test]
fn attack_record_rolled_back_to_its_started_commit_is_not_rolled_back_by_sweep() {
    let repo = TestRepo::new();
    let wt = repo.start("t1", &[]);
    make_dirty(&repo, &wt);
    let branch = rev(&repo, "task/t1");
    let started = rev(&repo, "refs/tasks/t1/record~1");
    agent(
        &repo,
        &wt,
        &["update-ref", "refs/tasks/t1/record", &started],
    );

    let run = repo.task_root(&["sweep", "--json"]);
    no_crash(&run, "sweep");
    assert_eq!(run.code, 0, "{run}");
    let j = run.json();
    assert!(
        j["tampered"]
            .as_array()
            .is_some_and(|a| a.contains(&json!("t1"))),
        "sweep must report t1 as tampered: {j}"
    );
    assert_eq!(rev(&repo, "refs/tasks/t1/record"), started);
    assert_eq!(rev(&repo, "task/t1"), branch);
    assert_eq!(
        repo.read(&wt, "notes/untracked.txt"),
        "precious, never committed\n"
    );
    let run = repo.task_root(&["merge", "t1", "--no-checks", "--json"]);
    tampered(&run, "merge of a rolled-back record");
    repo.fsck();
}

/// Attack (the whole chain of the issue): the agent rewrites its record as an abandoned start,
/// the user's `sweep` runs; then the agent (from a second task's worktree, its own may be gone)
/// deletes whatever record is left and re-creates one from nothing with a loosened contract,
/// pointing its branch at a commit that changes the forbidden `src/store/mod.rs`. Must hold:
/// there is no "made before digests" trust path: `merge` refuses with `record_tampered` and
/// nothing lands.
#[test]
fn attack_recreated_looser_record_after_sweep_does_not_land() {
    let repo = TestRepo::new();
    let wt = repo.start("t1", &["--forbid", "src/store/**"]);
    let helper = repo.start("t2", &[]);
    let main_before = rev(&repo, "main");
    // The evil commit: a loosened branch contract and the forbidden change.
    repo.write(&wt, ".task-contract.toml", "version = 1\ntask = \"t1\"\n");
    repo.write(&wt, "src/store/mod.rs", "// stolen\n");
    commit_all(&repo, &wt, "steal");
    let evil = rev(&repo, "task/t1");

    forge_record(&repo, &wt, "t1", "started", &|s| {
        set_field(
            &set_field(s, "status", "\"provisioning\""),
            "pid",
            "4000000000",
        )
    });
    let run = repo.task_root(&["sweep", "--json"]);
    no_crash(&run, "sweep");

    // Stage two, from the helper worktree.
    let _ = repo.git_run(
        &helper,
        &[
            "-c",
            "core.hooksPath=/dev/null",
            "update-ref",
            "-d",
            "refs/tasks/t1/record",
        ],
    );
    make_record(
        &repo,
        &helper,
        "t1",
        "refs/heads/task/t1",
        &wt,
        "version = 1\ntask = \"t1\"\n",
    );
    agent(&repo, &helper, &["update-ref", "refs/heads/task/t1", &evil]);
    agent(
        &repo,
        &helper,
        &["update-ref", "refs/tasks/t1/base", &main_before],
    );

    let run = repo.task_root(&["merge", "t1", "--no-checks", "--json"]);
    tampered(&run, "merge of a re-created record");
    assert_eq!(rev(&repo, "main"), main_before, "main moved");
    assert_eq!(
        repo.git(repo.root(), &["show", "main:src/store/mod.rs"]),
        "pub fn store() {}"
    );
    assert_eq!(
        repo.read(repo.root(), "src/store/mod.rs"),
        "pub fn store() {}\n"
    );
    repo.fsck();
}

/// Attack: the agent appends a forged `merged` event to its own record whose `worktree` field
/// names another task's worktree (t2, with uncommitted and untracked work). Must hold: the
/// user's `merge t1` and `remove t1` refuse with `record_tampered` (no "already merged" clean-up
/// of the named directory), and t2's worktree, files and branch are intact.
#[test]
fn attack_forged_merged_event_does_not_remove_another_tasks_worktree() {
    let repo = TestRepo::new();
    let wt1 = repo.start("t1", &[]);
    let wt2 = repo.start("t2", &[]);
    make_dirty(&repo, &wt2);
    let before = files(&wt2);
    let branch2 = rev(&repo, "task/t2");
    let target = wt2.display().to_string();
    forge_record(&repo, &wt1, "t1", "merged", &|s| {
        set_field(
            &set_field(s, "status", "\"merged\""),
            "worktree",
            &format!("\"{target}\""),
        )
    });

    tampered(
        &repo.task_root(&["merge", "t1", "--json"]),
        "merge of a forged merged record",
    );
    tampered(
        &repo.task_root(&["remove", "t1", "--json"]),
        "remove of a forged merged record",
    );
    assert!(repo.worktrees().contains(&wt2), "t2's worktree was removed");
    assert_eq!(files(&wt2), before, "t2's files changed");
    assert_eq!(rev(&repo, "task/t2"), branch2);
    assert!(repo.refs("refs/tasks/t2/attempts/").is_empty());
    repo.fsck();
}

/// Attack: the agent (t1) rewrites another task's record (t2) so that its `worktree` field is
/// the user's main worktree. Must hold: `path`, `exec` and `remove` of t2 refuse with
/// `record_tampered`; `exec` runs nothing; the main worktree's tracked edit and untracked file
/// are intact.
#[test]
fn attack_forged_worktree_field_never_points_commands_at_the_main_worktree() {
    let repo = TestRepo::new();
    let wt1 = repo.start("t1", &[]);
    let wt2 = repo.start("t2", &[]);
    make_dirty(&repo, repo.root());
    let main_files = files(repo.root());
    let main_status = repo.porcelain(repo.root());
    let target = repo.root().display().to_string();
    forge_record(&repo, &wt1, "t2", "checkpoint", &|s| {
        set_field(s, "worktree", &format!("\"{target}\""))
    });

    tampered(&repo.task_root(&["path", "--json", "t2"]), "path");
    let marker = repo.base().join("exec-ran");
    let touch = format!("touch '{}'", marker.display());
    tampered(
        &repo.task_root(&["exec", "--json", "t2", "--", "sh", "-c", &touch]),
        "exec",
    );
    assert!(!marker.exists(), "exec ran the command");
    tampered(&repo.task_root(&["remove", "--json", "t2"]), "remove");
    assert_eq!(files(repo.root()), main_files, "the main worktree changed");
    assert_eq!(repo.porcelain(repo.root()), main_status);
    assert!(repo.worktrees().contains(&wt2));
    repo.fsck();
}

/// Attack: the agent (t1) points t2's record's `worktree` at t3's worktree, which holds t3's
/// uncommitted and untracked work. Must hold: `revert t2` and `commit t2` refuse with
/// `record_tampered`; t3's files, index and branch are exactly as they were, and nothing was
/// saved under t2's name.
#[test]
fn attack_forged_worktree_field_never_reverts_or_commits_another_task() {
    let repo = TestRepo::new();
    let wt1 = repo.start("t1", &[]);
    repo.start("t2", &[]);
    let wt3 = repo.start("t3", &[]);
    make_dirty(&repo, &wt3);
    let before = files(&wt3);
    let status = repo.porcelain(&wt3);
    let branch3 = rev(&repo, "task/t3");
    let target = wt3.display().to_string();
    forge_record(&repo, &wt1, "t2", "checkpoint", &|s| {
        set_field(s, "worktree", &format!("\"{target}\""))
    });

    tampered(&repo.task_root(&["revert", "--json", "t2"]), "revert");
    tampered(
        &repo.task_root(&["commit", "--json", "t2", "-m", "x"]),
        "commit",
    );
    assert_eq!(files(&wt3), before, "t3's files changed");
    assert_eq!(repo.porcelain(&wt3), status);
    assert_eq!(rev(&repo, "task/t3"), branch3, "t3's branch moved");
    assert!(repo.refs("refs/tasks/t2/attempts/").is_empty());
    repo.fsck();
}

/// Attack: the agent deletes another live task's record (`update-ref -d`), so that the id looks
/// free. Must hold: an id the ledger knows whose record is gone is `record_tampered`: the user's
/// `sweep` reports it and does not take t2 for a branch without a record, `start t2` refuses,
/// and t2's worktree (with its work) and branch are intact.
#[test]
fn attack_deleted_record_of_a_live_task_is_tampered_not_free() {
    let repo = TestRepo::new();
    let wt1 = repo.start("t1", &[]);
    let wt2 = repo.start("t2", &[]);
    make_dirty(&repo, &wt2);
    let before = files(&wt2);
    let branch2 = rev(&repo, "task/t2");
    agent(&repo, &wt1, &["update-ref", "-d", "refs/tasks/t2/record"]);

    let run = repo.task_root(&["sweep", "--json"]);
    no_crash(&run, "sweep");
    assert_eq!(run.code, 0, "{run}");
    assert!(
        repo.worktrees().contains(&wt2),
        "sweep removed t2's worktree:\n{run}"
    );
    assert_eq!(files(&wt2), before, "{run}");
    assert_eq!(
        repo.refs("refs/heads/task/t2"),
        vec!["refs/heads/task/t2".to_owned()],
        "sweep deleted t2's branch:\n{run}"
    );
    assert!(
        run.json()["tampered"]
            .as_array()
            .is_some_and(|a| a.contains(&json!("t2"))),
        "sweep must report t2 as tampered: {run}"
    );
    tampered(
        &repo.task_root(&["start", "t2", "--json"]),
        "start of a deleted record",
    );
    tampered(
        &repo.task_root(&["start", "t2", "--reset", "--json"]),
        "start --reset of a deleted record",
    );
    assert_eq!(files(&wt2), before);
    assert_eq!(rev(&repo, "task/t2"), branch2);
    repo.fsck();
}

/// Attack: a record made with plumbing for an id git-task never started (as a repository from an
/// older version would hold, or an agent forges), with a contract allowing everything and a
/// branch adding a file. Must hold: unknown to the ledger, it is
/// `record_tampered` and `merge` lands nothing; after the user runs `git task trust --records`
/// (accepting, `--yes` when asked), the record is adopted as genuine and `status` works.
#[test]
fn attack_record_unknown_to_the_ledger_is_tampered_until_trusted() {
    let repo = TestRepo::new();
    let wt1 = repo.start("t1", &[]);
    let main_before = rev(&repo, "main");
    // A ghost branch with work, and a record git-task never wrote.
    let ghost_dir = repo.task_dir("ghost");
    agent(&repo, &wt1, &["branch", "task/ghost", "main"]);
    let blob = agent_stdin(&repo, &wt1, &["hash-object", "-w", "--stdin"], "ghost\n");
    let base_tree = agent(&repo, &wt1, &["rev-parse", "main^{tree}"]);
    let mut entries: String = agent(&repo, &wt1, &["ls-tree", &base_tree])
        .lines()
        .map(|l| format!("{l}\n"))
        .collect();
    entries.push_str(&format!("100644 blob {blob}\tghost.txt\n"));
    let contract = agent_stdin(
        &repo,
        &wt1,
        &["hash-object", "-w", "--stdin"],
        "version = 1\ntask = \"ghost\"\n",
    );
    entries.push_str(&format!("100644 blob {contract}\t.task-contract.toml\n"));
    let tree = agent_stdin(&repo, &wt1, &["mktree"], &entries);
    let commit = agent(
        &repo,
        &wt1,
        &["commit-tree", &tree, "-p", "main", "-m", "ghost"],
    );
    agent(
        &repo,
        &wt1,
        &["update-ref", "refs/heads/task/ghost", &commit],
    );
    agent(
        &repo,
        &wt1,
        &["update-ref", "refs/tasks/ghost/base", &main_before],
    );
    make_record(
        &repo,
        &wt1,
        "ghost",
        "refs/heads/task/ghost",
        &ghost_dir,
        "version = 1\ntask = \"ghost\"\n",
    );

    tampered(
        &repo.task_root(&["merge", "ghost", "--no-checks", "--json"]),
        "merge of a record git-task never wrote",
    );
    assert_eq!(rev(&repo, "main"), main_before, "main moved");

    let mut run = repo.task_root(&["trust", "--records"]);
    if run.code == 1 {
        run = repo.task_root(&["trust", "--records", "--yes"]);
    }
    no_crash(&run, "trust --records");
    assert_eq!(run.code, 0, "git task trust --records:\n{run}");
    repo.task_root(&["status", "--json", "ghost"]).ok();
}

/// Attack: the agent rewrites its record (a forged event on top). Must hold: `list` does not
/// fail: the task is listed as tampered (`"status":"tampered"` or `tampered: true`) and the
/// other tasks list normally, exit 0.
#[test]
fn attack_tampered_record_is_listed_as_tampered_and_others_list_normally() {
    let repo = TestRepo::new();
    let wt1 = repo.start("t1", &[]);
    repo.start("t2", &[]);
    forge_record(&repo, &wt1, "t1", "checkpoint", &|s| {
        set_field(s, "status", "\"active\"")
    });
    let run = repo.task_root(&["list", "--json"]);
    no_crash(&run, "list");
    assert_eq!(run.code, 0, "{run}");
    let j = run.json();
    let t1 = listed(&j, "t1").unwrap_or_else(|| panic!("t1 not listed: {j}"));
    assert!(is_tampered(t1), "t1 not shown as tampered: {t1}");
    let t2 = listed(&j, "t2").unwrap_or_else(|| panic!("t2 not listed: {j}"));
    assert_eq!(t2["status"], "active", "{t2}");
    assert!(!is_tampered(t2), "{t2}");
    repo.task_root(&["list"]).ok();
}

// ---------------------------------------------------------------------------------------------
// git config an agent can write.

/// Attack: with a `.task-contract.toml` of defaults committed on `main` (as for harness-made
/// tasks) and a user branch `feature`, the agent runs `git config task.branchPrefix ""`, so that
/// `main` and `feature` look like task branches without a record. Must hold: the user's `sweep`
/// deletes neither (same commits), saves nothing under their names, and the main worktree is
/// still on `main`.
#[test]
fn attack_empty_branch_prefix_never_makes_sweep_delete_main() {
    let repo = TestRepo::new();
    repo.write(repo.root(), ".task-contract.toml", "version = 1\n");
    commit_all(&repo, repo.root(), "task defaults");
    repo.git(repo.root(), &["branch", "feature"]);
    repo.task_root(&["hooks", "install"]).ok();
    let wt = repo.start("t1", &[]);
    let main = rev(&repo, "main");
    agent(&repo, &wt, &["config", "task.branchPrefix", ""]);

    let run = repo.task_root(&["sweep", "--json"]);
    no_crash(&run, "sweep");
    let heads = repo.refs("refs/heads/");
    assert!(
        heads.contains(&"refs/heads/main".to_owned()),
        "main deleted: {run}"
    );
    assert!(
        heads.contains(&"refs/heads/feature".to_owned()),
        "feature deleted: {run}"
    );
    assert_eq!(rev(&repo, "main"), main, "main moved");
    assert!(repo.refs("refs/tasks/main/").is_empty(), "{run}");
    assert!(repo.refs("refs/tasks/feature/").is_empty(), "{run}");
    assert_eq!(
        repo.git(repo.root(), &["symbolic-ref", "HEAD"]),
        "refs/heads/main"
    );
    assert_eq!(rev(&repo, "HEAD"), main);
    repo.fsck();
}

/// Attack: the user pinned `task.harnessAllow=src/**` and `task.harnessForbid=src/store/**`
/// (then `hooks install`); the agent edits the forbid away and widens the allow with
/// `git config`. Must hold: the next harness-made task (Claude Code's WorktreeCreate) still gets
/// the pinned contract, and a warning names the changed key and `git task trust`.
#[test]
fn attack_harness_forbid_edited_away_is_ignored() {
    let repo = TestRepo::new();
    repo.git(repo.root(), &["config", "task.harnessAllow", "src/**"]);
    repo.git(
        repo.root(),
        &["config", "task.harnessForbid", "src/store/**"],
    );
    repo.task_root(&["hooks", "install"]).ok();
    let wt = repo.start("t1", &[]);
    agent(&repo, &wt, &["config", "--unset-all", "task.harnessForbid"]);
    agent(
        &repo,
        &wt,
        &["config", "--replace-all", "task.harnessAllow", "**"],
    );

    let input = json!({
        "session_id": "abc123",
        "transcript_path": repo.base().join("t.jsonl").display().to_string(),
        "cwd": repo.root().display().to_string(),
        "hook_event_name": "WorktreeCreate",
        "name": "next",
    })
    .to_string();
    let mut child = task_command(&repo, repo.root(), &["harness", "claude", "create"])
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
    let run = collect(child);
    no_crash(&run, "harness create");
    assert_eq!(run.code, 0, "{run}");
    let contract = repo.read(&repo.task_dir("next"), ".task-contract.toml");
    assert!(
        contract.contains("forbidden = [\"src/store/**\"]"),
        "the pinned forbid was dropped:\n{contract}"
    );
    assert!(
        contract.contains("allowed = [\"src/**\"]"),
        "the pinned allow was widened:\n{contract}"
    );
    assert!(
        run.stderr.contains("task.harness") && run.stderr.contains("git task trust"),
        "no warning naming the changed key:\n{run}"
    );
}

/// Attack: after `hooks install`, the agent sets `task.setup` to a command of its choosing.
/// Must hold: the user's next `start` never runs it (its marker file is absent), starts the
/// task, and warns naming `task.setup` and `git task trust`.
#[test]
fn attack_task_setup_set_by_the_agent_never_runs() {
    let repo = TestRepo::new();
    repo.task_root(&["hooks", "install"]).ok();
    let wt = repo.start("t1", &[]);
    let marker = repo.base().join("setup-ran");
    agent(
        &repo,
        &wt,
        &[
            "config",
            "task.setup",
            &format!("touch '{}'", marker.display()),
        ],
    );

    let run = repo.task_root(&["start", "t2"]);
    no_crash(&run, "start");
    assert!(!marker.exists(), "the agent's task.setup ran:\n{run}");
    assert_eq!(run.code, 0, "{run}");
    assert!(
        run.stderr.contains("task.setup") && run.stderr.contains("git task trust"),
        "no warning naming task.setup:\n{run}"
    );
    assert!(repo.worktrees().contains(&repo.task_dir("t2")));
}

/// Attack: after `hooks install`, the agent points `core.hooksPath` at a directory of its own
/// whose `post-checkout` (which `start` runs in the new worktree) writes a marker. Must hold:
/// the user's next `start` refuses with `config_changed` naming `core.hooksPath`, runs nothing
/// (marker absent) and makes nothing (no refs, no worktree of t2).
#[test]
fn attack_core_hookspath_set_by_the_agent_makes_start_refuse() {
    let repo = TestRepo::new();
    repo.task_root(&["hooks", "install"]).ok();
    let wt = repo.start("t1", &[]);
    let marker = repo.base().join("hook-ran");
    let hooks = repo.base().join("agent/hooks");
    for name in ["post-checkout", "pre-commit", "reference-transaction"] {
        write_script(
            &hooks.join(name),
            &format!("#!/bin/sh\ntouch '{}'\nexit 0\n", marker.display()),
        );
    }
    agent(
        &repo,
        &wt,
        &["config", "core.hooksPath", hooks.to_str().unwrap()],
    );

    let run = repo.task_root(&["start", "t2", "--json"]);
    assert!(!marker.exists(), "the agent's hook ran:\n{run}");
    let j = refused_as(&run, "config_changed", "start");
    assert!(j.to_string().contains("core.hooksPath"), "{j}");
    assert!(j.to_string().contains("git task trust"), "{j}");
    assert!(repo.refs("refs/tasks/t2/").is_empty());
    assert!(!repo.task_dir("t2").exists());
    assert!(!marker.exists());
}

/// Attack: the agent sets `core.fsmonitor` to a script of its own (git runs it whenever it
/// refreshes an index). Must hold: `merge`, `start`, `sync` and `check --run` refuse with
/// `config_changed` naming `core.fsmonitor` and `git task trust`; the script never runs (marker
/// absent); `main` does not move.
#[test]
fn attack_core_fsmonitor_set_by_the_agent_makes_merge_start_sync_check_refuse() {
    let repo = TestRepo::new();
    repo.task_root(&["hooks", "install"]).ok();
    let wt = repo.start("t1", &["--check", "true"]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 1 }\n");
    commit_all(&repo, &wt, "work");
    // The base moves, so that `sync` has work to do.
    repo.write(repo.root(), "docs/new.md", "new\n");
    commit_all(&repo, repo.root(), "base work");
    let main_before = rev(&repo, "main");
    let marker = repo.base().join("fsmonitor-ran");
    let script = repo.base().join("agent/fsmonitor");
    write_script(
        &script,
        &format!("#!/bin/sh\ntouch '{}'\nexit 1\n", marker.display()),
    );
    agent(
        &repo,
        &wt,
        &["config", "core.fsmonitor", script.to_str().unwrap()],
    );

    for args in [
        vec!["merge", "t1", "--json"],
        vec!["start", "t2", "--json"],
        vec!["sync", "t1", "--json"],
        vec!["check", "t1", "--run", "--json"],
    ] {
        let run = repo.task_root(&args);
        assert!(
            !marker.exists(),
            "{args:?} ran the agent's fsmonitor:\n{run}"
        );
        let j = refused_as(&run, "config_changed", &format!("{args:?}"));
        assert!(j.to_string().contains("core.fsmonitor"), "{args:?}: {j}");
    }
    assert_eq!(rev(&repo, "main"), main_before, "main moved");
    assert!(repo.refs("refs/tasks/t2/").is_empty());
    assert!(!marker.exists());
}

/// Attack: the agent defines `filter.x.smudge` (a command that writes a marker and overwrites
/// the forbidden `src/store/mod.rs` of the user's worktree) and commits `src/.gitattributes`
/// (`* filter=x`) under its allowed `src/**`. Must hold: `merge` refuses (`config_changed`
/// and/or the `protected` `.gitattributes`), the smudge never runs, the user's files on disk
/// and `main` are unchanged.
#[test]
fn attack_smudge_filter_and_gitattributes_never_run_at_merge() {
    let repo = TestRepo::new();
    repo.task_root(&["hooks", "install"]).ok();
    let main_before = rev(&repo, "main");
    let wt = repo.start("t1", &["--allow", "src/**", "--forbid", "src/store/**"]);
    let marker = repo.base().join("smudge-ran");
    let victim = repo.root().join("src/store/mod.rs");
    let script = repo.base().join("agent/smudge");
    write_script(
        &script,
        &format!(
            "#!/bin/sh\ntouch '{}'\necho pwned > '{}'\ncat\n",
            marker.display(),
            victim.display()
        ),
    );
    repo.write(&wt, "src/.gitattributes", "* filter=x\n");
    repo.write(&wt, "src/new.rs", "pub fn new() {}\n");
    commit_all(&repo, &wt, "attributes");
    agent(
        &repo,
        &wt,
        &["config", "filter.x.smudge", script.to_str().unwrap()],
    );
    agent(&repo, &wt, &["config", "filter.x.clean", "cat"]);

    let run = repo.task_root(&["merge", "t1", "--no-checks", "--json"]);
    assert!(!marker.exists(), "the agent's smudge filter ran:\n{run}");
    no_crash(&run, "merge");
    assert_eq!(run.code, 1, "{run}");
    let j = run.json();
    assert!(
        j["kind"] == "config_changed"
            || j["violations"]
                .as_array()
                .is_some_and(|v| v.iter().any(|v| v["reason"] == "protected")),
        "{j}"
    );
    assert_eq!(
        std::fs::read_to_string(&victim).unwrap(),
        "pub fn store() {}\n"
    );
    assert_eq!(rev(&repo, "main"), main_before, "main moved");
    assert!(!repo.root().join("src/.gitattributes").exists());
    assert!(!marker.exists());
    repo.fsck();
}

/// Attack: the agent sets `status.showUntrackedFiles=no`, so that git hides untracked files.
/// Must hold: the user's `remove t2` (without `--force`) still sees t2's untracked file, refuses
/// as dirty (exit 1), and the file survives.
#[test]
fn attack_status_show_untracked_no_never_lets_remove_delete_untracked_work() {
    let repo = TestRepo::new();
    let wt1 = repo.start("t1", &[]);
    let wt2 = repo.start("t2", &[]);
    repo.write(&wt2, "notes/untracked.txt", "precious\n");
    agent(&repo, &wt1, &["config", "status.showUntrackedFiles", "no"]);

    let run = repo.task_root(&["remove", "t2"]);
    no_crash(&run, "remove");
    assert_eq!(
        run.code, 1,
        "remove without --force deleted untracked work:\n{run}"
    );
    assert_eq!(repo.read(&wt2, "notes/untracked.txt"), "precious\n");
    assert!(repo.worktrees().contains(&wt2));
}

/// Attack: the agent sets `core.excludesFile` to a file of its own that ignores `*`. Must hold:
/// only the repository's `.gitignore` files and `info/exclude` count as ignored: the user's
/// `remove t2` (without `--force`) refuses as dirty (exit 1) and t2's untracked file survives.
#[test]
fn attack_core_excludesfile_never_lets_remove_delete_untracked_work() {
    let repo = TestRepo::new();
    let wt1 = repo.start("t1", &[]);
    let wt2 = repo.start("t2", &[]);
    repo.write(&wt2, "notes/untracked.txt", "precious\n");
    let excludes = repo.base().join("agent/ignore-all");
    repo.write(&repo.base(), "agent/ignore-all", "*\n");
    agent(
        &repo,
        &wt1,
        &["config", "core.excludesFile", excludes.to_str().unwrap()],
    );

    let run = repo.task_root(&["remove", "t2"]);
    no_crash(&run, "remove");
    assert_eq!(
        run.code, 1,
        "remove without --force deleted untracked work:\n{run}"
    );
    assert_eq!(repo.read(&wt2, "notes/untracked.txt"), "precious\n");
    assert!(repo.worktrees().contains(&wt2));
}

/// Attack: the agent pins nothing but changes a pinned setting (`task.branchPrefix`) after
/// `hooks install`. Must hold: `git task trust` (no `--yes`, no TTY) shows the difference naming
/// the key and exits 1 changing nothing (the next start still uses `task/`); `git task trust
/// --yes` accepts it, and the start after that uses the new prefix.
#[test]
fn attack_trust_shows_the_difference_and_accepts_only_with_yes() {
    let repo = TestRepo::new();
    repo.task_root(&["hooks", "install"]).ok();
    let wt = repo.start("t1", &[]);
    agent(&repo, &wt, &["config", "task.branchPrefix", "agent/"]);

    let run = repo.task_root(&["trust"]);
    no_crash(&run, "trust");
    assert_eq!(run.code, 1, "{run}");
    assert!(
        format!("{}{}", run.stdout, run.stderr).contains("task.branchPrefix"),
        "{run}"
    );
    let run = repo.task_root(&["start", "t2"]).ok();
    assert!(
        repo.refs("refs/heads/task/")
            .contains(&"refs/heads/task/t2".to_owned()),
        "the unpinned prefix was used:\n{run}"
    );
    assert!(repo.refs("refs/heads/agent/").is_empty());
    assert!(run.stderr.contains("task.branchPrefix"), "{run}");

    repo.task_root(&["trust", "--yes"]).ok();
    repo.task_root(&["start", "t3"]).ok();
    assert_eq!(
        repo.refs("refs/heads/agent/"),
        vec!["refs/heads/agent/t3".to_owned()]
    );
}

// ---------------------------------------------------------------------------------------------
// Refs that are not the task's own.

/// Attack: with the hooks installed, the agent moves refs that are not its own branch: the base
/// (`update-ref refs/heads/main`, `push . HEAD:release`, `push . HEAD:main` with
/// `receive.denyCurrentBranch=ignore`), a user branch (`branch -f feature`), another task's
/// branch (`update-ref -d`, `branch -D` of one not checked out) and record. Must hold: the
/// `reference-transaction` hook refuses each (non-zero exit) and every ref is unchanged.
#[test]
fn attack_foreign_ref_updates_are_refused_by_the_reference_transaction_hook() {
    let repo = TestRepo::new();
    repo.git(repo.root(), &["branch", "feature"]);
    repo.git(repo.root(), &["branch", "release"]);
    repo.task_root(&["hooks", "install"]).ok();
    let wt = repo.start("t1", &[]);
    let wt2 = repo.start("t2", &[]);
    let wt3 = repo.start("t3", &[]);
    // t3's branch is not checked out any more (its worktree went away with git).
    repo.git(
        repo.root(),
        &["worktree", "remove", "--force", wt3.to_str().unwrap()],
    );
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 1 }\n");
    repo.git(&wt, &["commit", "-q", "-am", "own work"]);
    let before = all_refs(&repo);

    for args in [
        vec!["update-ref", "refs/heads/main", "HEAD"],
        vec!["push", "-q", ".", "HEAD:release"],
        vec![
            "-c",
            "receive.denyCurrentBranch=ignore",
            "push",
            "-q",
            ".",
            "HEAD:main",
        ],
        vec!["branch", "-f", "feature", "HEAD"],
        vec!["update-ref", "-d", "refs/heads/task/t2"],
        vec!["branch", "-D", "task/t3"],
        vec!["update-ref", "refs/tasks/t2/record", "HEAD"],
    ] {
        let run = repo.git_run(&wt, &args);
        assert_ne!(run.code, 0, "git {args:?} was allowed:\n{run}");
        assert_eq!(all_refs(&repo), before, "git {args:?} moved a ref");
    }
    assert!(repo.worktrees().contains(&wt2));
    repo.fsck();
}

/// Attack: the agent moves the base with the hooks skipped
/// (`git -c core.hooksPath=/dev/null update-ref refs/heads/main <its tip>`), so that its
/// forbidden change is on `main` without the gate. Must hold: `list`, `status` and `check`
/// report `base_moved_unattributed` (JSON and human), and `merge` never says "(no change)" with
/// exit 0: it refuses with exit 1, kind `base_moved_unattributed`.
#[test]
fn attack_base_moved_with_hooks_skipped_is_reported_and_merge_refuses() {
    let repo = TestRepo::new();
    repo.task_root(&["hooks", "install"]).ok();
    let wt = repo.start("t1", &["--forbid", "src/store/**"]);
    repo.write(&wt, "src/store/mod.rs", "// stolen\n");
    commit_all(&repo, &wt, "forbidden");
    let tip = rev(&repo, "task/t1");
    agent(&repo, &wt, &["update-ref", "refs/heads/main", &tip]);

    for args in [
        vec!["list", "--json"],
        vec!["status", "--json", "t1"],
        vec!["check", "--json", "t1"],
    ] {
        let run = repo.task_root(&args);
        no_crash(&run, &format!("{args:?}"));
        assert!(
            run.stdout.contains("base_moved_unattributed"),
            "{args:?} does not report the move:\n{run}"
        );
    }
    for args in [vec!["list"], vec!["status", "t1"], vec!["check", "t1"]] {
        let run = repo.task_root(&args);
        no_crash(&run, &format!("{args:?}"));
        assert!(
            run.stderr.contains("base_moved_unattributed")
                || run.stderr.contains("moved outside git-task"),
            "{args:?} does not warn:\n{run}"
        );
    }
    let run = repo.task_root(&["merge", "t1", "--no-checks", "--json"]);
    assert!(!run.stdout.contains("no change"), "{run}");
    refused_as(&run, "base_moved_unattributed", "merge");
    repo.fsck();
}

/// Attack: as above, the agent moves `main` with hooks skipped, after a git-task merge (t2) and
/// a commit the user made in the main worktree. Must hold: `git task audit main` lists every
/// move git-task saw, attributed: the merge of t2, the main worktree, and the agent's move as
/// unattributed with its commit.
#[test]
fn attack_audit_lists_every_move_of_the_base_attributed() {
    let repo = TestRepo::new();
    repo.task_root(&["hooks", "install"]).ok();
    let wt1 = repo.start("t1", &[]);
    let wt2 = repo.start("t2", &[]);
    repo.write(&wt2, "docs/t2.md", "t2\n");
    commit_all(&repo, &wt2, "t2 work");
    repo.task_root(&["merge", "t2", "--no-checks"]).ok();
    repo.write(repo.root(), "docs/user.md", "user\n");
    repo.git(repo.root(), &["add", "-A"]);
    repo.git(repo.root(), &["commit", "-q", "-m", "user work"]);
    repo.write(&wt1, "docs/t1.md", "t1\n");
    commit_all(&repo, &wt1, "t1 work");
    let x = agent(
        &repo,
        &wt1,
        &["commit-tree", "task/t1^{tree}", "-p", "main", "-m", "x"],
    );
    agent(&repo, &wt1, &["update-ref", "refs/heads/main", &x]);

    let run = repo.task_root(&["audit", "main"]);
    no_crash(&run, "audit");
    assert_eq!(run.code, 0, "{run}");
    let out = run.stdout.clone();
    assert!(out.contains("unattributed"), "{run}");
    assert!(
        out.contains(&x[..7]),
        "the unattributed commit is not named:\n{run}"
    );
    assert!(out.contains("t2"), "the merge of t2 is not listed:\n{run}");
    assert!(
        out.contains("main worktree"),
        "the user's commit is not listed:\n{run}"
    );
}

/// Attack: the agent moves another task's worktree (t2, with uncommitted and untracked work) to
/// a name like an interrupted removal (`git worktree move … .t2.removing-1-1`). Must hold: what
/// `sweep` deletes is what the ledger says git-task left half-done, never a directory chosen by
/// its name: the moved worktree and its files survive.
#[test]
fn attack_worktree_moved_to_a_removing_name_is_not_deleted_by_sweep() {
    let repo = TestRepo::new();
    let wt1 = repo.start("t1", &[]);
    let wt2 = repo.start("t2", &[]);
    make_dirty(&repo, &wt2);
    let before = files(&wt2);
    let moved = wt2.with_file_name(".t2.removing-1-1");
    agent(
        &repo,
        &wt1,
        &[
            "worktree",
            "move",
            wt2.to_str().unwrap(),
            moved.to_str().unwrap(),
        ],
    );

    let run = repo.task_root(&["sweep", "--json"]);
    no_crash(&run, "sweep");
    assert!(moved.is_dir(), "sweep deleted t2's moved worktree:\n{run}");
    assert_eq!(files(&moved), before, "t2's files changed:\n{run}");
    assert!(repo.worktrees().contains(&moved), "{run}");
    repo.fsck();
}

/// Attack: a junk `refs/tasks/_claims` (pointing at a blob, then at a commit of garbage),
/// written by the agent with `update-ref`, while task t1 claims `src/store/**`. Must hold:
/// commits of tasks that do not touch a claimed path still succeed under the hook; the trusted
/// copy of the claims still refuses a change of `src/store/**` by another task; the junk is
/// reported (by the hook or by `sweep`).
#[test]
fn attack_junk_claims_ref_blocks_no_commit_and_frees_no_claim() {
    let repo = TestRepo::new();
    repo.task_root(&["hooks", "install"]).ok();
    repo.start("t1", &[]);
    repo.task_root(&["claim", "t1", "src/store/**"]).ok();
    // t2 may change everything but what t1 claims.
    let wt2 = repo.start("t2", &["--share"]);
    let blob = agent_stdin(&repo, &wt2, &["hash-object", "-w", "--stdin"], "junk\n");
    agent(&repo, &wt2, &["update-ref", "refs/tasks/_claims", &blob]);

    repo.write(&wt2, "src/lib.rs", "pub fn lib() { 1 }\n");
    repo.git(&wt2, &["add", "-A"]);
    let run = repo.git_run(&wt2, &["commit", "-q", "-m", "unclaimed work"]);
    let mut reported = run.stderr.contains("_claims") || run.stderr.contains("claims");
    assert_eq!(run.code, 0, "a junk claims ref blocked a commit:\n{run}");

    repo.write(&wt2, "src/store/mod.rs", "// claimed\n");
    repo.git(&wt2, &["add", "-A"]);
    let run = repo.git_run(&wt2, &["commit", "-q", "-m", "claimed work"]);
    assert_ne!(run.code, 0, "the junk ref freed t1's claim:\n{run}");
    repo.git(&wt2, &["reset", "-q", "--hard", "HEAD"]);

    let garbage = agent_stdin(
        &repo,
        &wt2,
        &["hash-object", "-w", "--stdin"],
        "[[[ not toml\n",
    );
    let tree = agent_stdin(
        &repo,
        &wt2,
        &["mktree"],
        &format!("100644 blob {garbage}\tclaims.toml\n"),
    );
    let commit = agent(&repo, &wt2, &["commit-tree", &tree, "-m", "junk"]);
    agent(&repo, &wt2, &["update-ref", "refs/tasks/_claims", &commit]);
    repo.write(&wt2, "README.md", "# changed\n");
    repo.git(&wt2, &["add", "-A"]);
    let run = repo.git_run(&wt2, &["commit", "-q", "-m", "more unclaimed work"]);
    assert_eq!(run.code, 0, "a junk claims ref blocked a commit:\n{run}");
    reported |= run.stderr.contains("claims");

    let run = repo.task_root(&["sweep"]);
    no_crash(&run, "sweep");
    reported |= format!("{}{}", run.stdout, run.stderr).contains("claims");
    assert!(reported, "the junk claims ref was never reported:\n{run}");
}

/// Attack: the agent (t2) runs `git task release t1` from its own worktree to free the paths t1
/// claims. Must hold: claims have owners: `release` works only from the claiming task's
/// worktree or the main worktree; it is refused (exit 1 or 2) and the claim stays.
#[test]
fn attack_release_from_another_tasks_worktree_is_refused() {
    let repo = TestRepo::new();
    repo.start("t1", &[]);
    let wt2 = repo.start("t2", &[]);
    repo.task_root(&["claim", "t1", "src/store/**"]).ok();
    let claims = repo.git(repo.root(), &["show", "refs/tasks/_claims:claims.toml"]);

    let run = repo.task(&wt2, &["release", "t1"]);
    no_crash(&run, "release");
    assert!(
        [1, 2].contains(&run.code),
        "another task released t1's claim:\n{run}"
    );
    assert_eq!(
        repo.git(repo.root(), &["show", "refs/tasks/_claims:claims.toml"]),
        claims
    );
    let run = repo.task(&wt2, &["release", "t1", "src/store/**"]);
    assert!([1, 2].contains(&run.code), "{run}");
    // The owner's worktree and the main worktree may.
    repo.task_root(&["release", "t1"]).ok();
}

// ---------------------------------------------------------------------------------------------
// Content that steers git, and bounded work.

/// Attack: under `--allow src/**`, the agent commits `src/.gitattributes` (it changes how other
/// paths are checked out) and, under an allow-everything contract, `.worktreeinclude` (it
/// changes what is copied into the gate's checkout). Must hold: both are `protected` unless the
/// contract names the file exactly (a wildcard does not count); named exactly, it lands.
#[test]
fn attack_gitattributes_and_worktreeinclude_under_a_wildcard_are_protected() {
    let repo = TestRepo::new();
    let main_before = rev(&repo, "main");
    let wt = repo.start("t1", &["--allow", "src/**"]);
    repo.write(&wt, "src/.gitattributes", "*.rs text eol=crlf\n");
    commit_all(&repo, &wt, "attributes");
    let j = repo
        .task_root(&["merge", "t1", "--no-checks", "--json"])
        .code(1)
        .json();
    assert_eq!(j["kind"], "contract_violation", "{j}");
    assert!(
        j["violations"]
            .as_array()
            .unwrap()
            .iter()
            .any(|v| { v["file"] == "src/.gitattributes" && v["reason"] == "protected" }),
        "{j}"
    );
    let wt2 = repo.start("t2", &[]);
    repo.write(&wt2, ".worktreeinclude", "target/\n");
    commit_all(&repo, &wt2, "include");
    let j = repo
        .task_root(&["merge", "t2", "--no-checks", "--json"])
        .code(1)
        .json();
    assert!(
        j["violations"].as_array().is_some_and(|v| v
            .iter()
            .any(|v| v["file"] == ".worktreeinclude" && v["reason"] == "protected")),
        "{j}"
    );
    assert_eq!(rev(&repo, "main"), main_before);

    let wt3 = repo.start(
        "t3",
        &["--allow", "src/**", "--allow", "src/.gitattributes"],
    );
    repo.write(&wt3, "src/.gitattributes", "*.rs text\n");
    commit_all(&repo, &wt3, "named attributes");
    repo.task_root(&["merge", "t3", "--no-checks", "--json"])
        .ok();
    assert_eq!(
        repo.git(repo.root(), &["show", "main:src/.gitattributes"]),
        "*.rs text"
    );
    repo.fsck();
}

/// Attack: a tree 20,000 levels deep (`git fast-import`, deeper than git's own limit) committed
/// on the task branch. Must hold: `merge`, `check` and `overlaps` end with an error, exit 1 or
/// 128 — never a panic, an abort or a stack overflow — and `main` does not move.
#[test]
fn attack_tree_twenty_thousand_levels_deep_crashes_nothing() {
    let repo = TestRepo::new();
    let wt = repo.start("t1", &[]);
    repo.start("t2", &[]);
    let main_before = rev(&repo, "main");
    let path = "d/".repeat(20_000) + "f";
    let stream = format!(
        "commit refs/heads/task/t1\ncommitter Agent <agent@example.com> 0 +0000\ndata 4\ndeep\n\
         from refs/heads/task/t1^0\nM 100644 inline {path}\ndata 2\nx\n\n"
    );
    agent_stdin(&repo, &wt, &["fast-import", "--quiet"], &stream);
    // The agent leaves its worktree, so that the gate judges the branch alone.
    repo.git(
        repo.root(),
        &["worktree", "remove", "--force", wt.to_str().unwrap()],
    );

    for args in [
        vec!["check", "t1", "--json"],
        vec!["overlaps", "--json"],
        vec!["merge", "t1", "--no-checks", "--json"],
    ] {
        let run = repo.task_root(&args);
        no_crash(&run, &format!("{args:?}"));
        assert!(
            [1, 128].contains(&run.code),
            "{args:?} on a 20,000-deep tree: expected exit 1 or 128:\n{run}"
        );
    }
    assert_eq!(rev(&repo, "main"), main_before);
    // One task's deep tree does not stop `list` from listing every task.
    let run = repo.task_root(&["list", "--json"]);
    no_crash(&run, "list");
    let ids: Vec<String> = run.json()["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids, ["t1", "t2"], "{run}");
}

/// Attack: the checks run by `merge` use a working directory an agent could predict and
/// prepare. Must hold: the checks' directory is made by git-task with mode 0700, outside every
/// worktree, in a directory of git-task's own that is private too (since issue 33 the gate
/// checkout under the common dir, the same one from run to run so that it stays warm: its name
/// is predictable by design), and whatever was planted in it before a run is gone when the
/// checks start (the check refuses to pass if it finds the planted file).
#[test]
fn attack_checks_directory_is_private_and_unpredictable() {
    let repo = TestRepo::new();
    let out = repo.base().join("check-dir");
    let check = format!(
        "test ! -e planted.sh && stat -c %a . >> '{0}'; stat -c %a .. >> '{0}'; pwd >> '{0}'",
        out.display()
    );
    for round in 0..2 {
        let wt = repo.start("t1", &["--check", &check]);
        repo.write(&wt, "docs/x.md", &format!("{round}\n"));
        commit_all(&repo, &wt, "work");
        if round == 1 {
            // Prepared by someone who predicted the directory.
            let dir = std::fs::read_to_string(&out).unwrap();
            let dir = dir.lines().nth(2).unwrap().to_owned();
            std::fs::write(Path::new(&dir).join("planted.sh"), "evil\n").unwrap();
        }
        repo.task_root(&["merge", "t1"]).ok();
    }
    let text = std::fs::read_to_string(&out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 6, "{text}");
    for i in [0, 1, 3, 4] {
        assert_eq!(lines[i], "700", "{text}");
    }
    for dir in [lines[2], lines[5]] {
        assert!(
            !Path::new(dir).starts_with(repo.base().join("repo.tasks")),
            "{dir}"
        );
        assert!(
            Path::new(dir).starts_with(repo.root().join(".git/git-task/gate")),
            "{dir}"
        );
    }
}

/// Attack: the agent writes bad ids into its record's `task.toml` (`"../x"`, `""`, `"a b"`).
/// Must hold: no repository content makes a command panic: `list`, `status`, `sweep` exit 0, 1
/// or 128 (never 101), and the other task still lists.
#[test]
fn attack_record_with_a_bad_id_makes_no_command_panic() {
    let repo = TestRepo::new();
    let wt = repo.start("t1", &[]);
    repo.start("t2", &[]);
    let genuine = rev(&repo, "refs/tasks/t1/record");
    for bad in ["\"../x\"", "\"\"", "\"a b\""] {
        forge_record(&repo, &wt, "t1", "checkpoint", &|s| set_field(s, "id", bad));
        for args in [
            vec!["list", "--json"],
            vec!["list"],
            vec!["status", "--json", "t1"],
            vec!["sweep", "--dry-run", "--json"],
        ] {
            let run = repo.task_root(&args);
            no_crash(&run, &format!("{args:?} with id {bad}"));
            assert!([0, 1, 128].contains(&run.code), "{args:?}: {run}");
        }
        let run = repo.task_root(&["list", "--json"]);
        assert!(
            [0, 1].contains(&run.code),
            "list must not fail as a repository error: {run}"
        );
        agent(
            &repo,
            &wt,
            &["update-ref", "refs/tasks/t1/record", &genuine],
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Inputs from outside the repository: MCP clients and remotes.

use super::mcp::Session;

/// Attack: an MCP client (the agent) calls `start` with a `path` of its choosing outside the
/// tasks directory (here `<tmp>/home/.config/autostart/evil`, standing for
/// `~/.config/autostart`). Must hold: a tool error of kind bad input (exit 2), nothing created
/// there, no task refs.
#[test]
fn attack_mcp_start_with_a_path_outside_the_tasks_directory_is_refused() {
    let repo = TestRepo::new();
    let autostart = repo.base().join("home/.config/autostart");
    let mut s = Session::open(&repo, repo.root());
    let (err, doc, _) = s.call(
        "start",
        json!({"id": "evil", "path": autostart.join("evil").display().to_string()}),
    );
    let _ = s.close();
    assert!(err, "an MCP start wrote outside the tasks directory: {doc}");
    assert_eq!(doc["error"], "input", "{doc}");
    assert_eq!(doc["exit_code"], 2, "{doc}");
    assert!(!autostart.exists(), "{} was created", autostart.display());
    assert!(repo.refs("refs/tasks/evil/").is_empty());
    assert!(repo.refs("refs/heads/task/").is_empty());
}

/// Attack: an MCP client sends malformed lines (not JSON, an unterminated object, a JSON array,
/// an object that is no request) and one oversized request (64 MiB). Must hold: each gets a
/// JSON-RPC error (an `error` member), never silence, and the server goes on answering.
#[test]
fn attack_mcp_malformed_and_oversized_requests_get_json_rpc_errors() {
    let repo = TestRepo::new();
    let mut s = Session::open(&repo, repo.root());
    for bad in [
        "this is not json",
        "{\"jsonrpc\":\"2.0\",\"id\":77,\"method\":\"tools/list\"",
        "[1,2]",
        "{\"jsonrpc\":\"2.0\",\"id\":{\"x\":1},\"method\":7}",
    ] {
        s.send_line(bad);
        let id = s.next;
        s.next += 1;
        s.send_line(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}).to_string());
        let seen = s.until(id);
        assert!(
            seen[..seen.len() - 1]
                .iter()
                .any(|m| m.get("error").is_some()),
            "no JSON-RPC error for {bad:?}: {seen:?}"
        );
    }
    // 64 MiB in one request: MCP messages are a few kilobytes.
    let id = s.next;
    s.next += 1;
    let pad = "x".repeat(64 << 20);
    let big = json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": {"pad": pad}})
        .to_string();
    let mut stdin = s.child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = writeln!(stdin, "{big}");
        let _ = stdin.flush();
        stdin
    });
    let mut answer = None;
    while let Ok(line) = s.lines.recv_timeout(std::time::Duration::from_secs(120)) {
        let msg: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
        if msg["id"] == id || (msg["id"].is_null() && msg.get("error").is_some()) {
            answer = Some(msg);
            break;
        }
    }
    // End the server, so that the writer never waits on a pipe nobody reads.
    let _ = s.child.kill();
    drop(writer.join().unwrap());
    let _ = s.child.wait();
    let answer = answer.expect("silence for a 64 MiB request");
    assert!(answer.get("error").is_some(), "no JSON-RPC error: {answer}");
}

/// Attack: an MCP client passes `repo` naming another repository than the one the server was
/// started in. Must hold: MCP tools act only on the server's repository: a tool error, and
/// nothing is written in the other repository.
#[test]
fn attack_mcp_acts_only_on_the_repository_it_was_started_in() {
    let repo = TestRepo::new();
    let other = TestRepo::new();
    let before = all_refs(&other);
    let mut s = Session::open(&repo, repo.root());
    let (err, doc, _) = s.call(
        "start",
        json!({"id": "x", "repo": other.root().display().to_string()}),
    );
    let _ = s.close();
    assert!(err, "an MCP call acted on another repository: {doc}");
    assert_eq!(all_refs(&other), before);
    assert!(!other.task_dir("x").exists());
}

/// Attack: the agent pushes to the shared remote a record for a task `evil` whose `branch` is
/// `refs/heads/main`, and a new `main` commit there. Must hold: `adopt evil` on another machine
/// validates the remote record (the branch must be `task/evil`, never a checked-out branch or a
/// base): refused (exit 1 or 2), that machine's checked-out `main` unchanged, no `evil` record.
#[test]
fn attack_adopt_of_a_remote_record_naming_main_is_refused() {
    let repo = TestRepo::new();
    let bare = super::remote::bare_remote(&repo);
    super::remote::publish(&repo, bare.to_str().unwrap());
    let two = super::remote::machine(&repo, bare.to_str().unwrap(), "two");
    let wt = repo.start("t1", &[]);
    let evil = agent(
        &repo,
        &wt,
        &["commit-tree", "main^{tree}", "-p", "main", "-m", "evil"],
    );
    agent(
        &repo,
        &wt,
        &["push", "-q", "origin", &format!("{evil}:refs/heads/main")],
    );
    make_record(
        &repo,
        &wt,
        "evil",
        "refs/heads/main",
        &repo.base().join("evil"),
        "version = 1\ntask = \"evil\"\n",
    );
    agent(
        &repo,
        &wt,
        &[
            "push",
            "-q",
            "origin",
            "refs/tasks/evil/record:refs/tasks/evil/record",
        ],
    );
    let main_two = repo.git(&two, &["rev-parse", "main"]);

    let run = repo.task(&two, &["adopt", "evil", "--json"]);
    no_crash(&run, "adopt");
    assert_eq!(
        repo.git(&two, &["rev-parse", "main"]),
        main_two,
        "adopt moved the checked-out main:\n{run}"
    );
    assert!([1, 2].contains(&run.code), "{run}");
    assert_eq!(repo.git(&two, &["symbolic-ref", "HEAD"]), "refs/heads/main");
    assert!(repo
        .git(&two, &["for-each-ref", "refs/tasks/evil/"])
        .is_empty());
    assert!(repo.porcelain(&two).is_empty(), "{}", repo.porcelain(&two));
}

/// Attack: the agent pushes a junk record (a blob) for a task `bad` to the shared remote beside a
/// good task. Must hold: `fetch` treats remote records as untrusted input: the bad one is
/// reported, the good one is fetched, and the command does not fail as a whole.
#[test]
fn attack_one_bad_remote_record_does_not_fail_the_others() {
    let repo = TestRepo::new();
    let bare = super::remote::bare_remote(&repo);
    super::remote::publish(&repo, bare.to_str().unwrap());
    let two = super::remote::machine(&repo, bare.to_str().unwrap(), "two");
    let wt = repo.start("t1", &[]);
    repo.task_root(&["push", "t1"]).ok();
    let junk = agent_stdin(&repo, &wt, &["hash-object", "-w", "--stdin"], "junk\n");
    agent(
        &repo,
        &wt,
        &[
            "push",
            "-q",
            "origin",
            &format!("{junk}:refs/tasks/bad/record"),
        ],
    );

    let run = repo.task(&two, &["fetch", "--json"]);
    no_crash(&run, "fetch");
    assert_eq!(run.code, 0, "one bad record failed the fetch:\n{run}");
    let j = run.json();
    assert!(
        j["tasks"]
            .as_array()
            .is_some_and(|t| t.iter().any(|t| t["id"] == "t1")),
        "{j}"
    );
    assert!(
        format!("{}{}", run.stdout, run.stderr).contains("bad"),
        "the bad record is not reported:\n{run}"
    );
}

/// Attack: the agent appends a forged `merged` event to its own task's record on the shared
/// remote (`commit-tree` on top of the pushed record, `git push`). Must hold: a remote record
/// never ends a live local task: after the user's `fetch` and `push`, the local record still
/// says `active` and the worktree and branch are there.
#[test]
fn attack_remote_record_never_ends_a_live_local_task() {
    let repo = TestRepo::new();
    let bare = super::remote::bare_remote(&repo);
    super::remote::publish(&repo, bare.to_str().unwrap());
    let wt = repo.start("t1", &[]);
    repo.task_root(&["push", "t1"]).ok();
    let tip = agent(&repo, &wt, &["rev-parse", "refs/tasks/t1/record"]);
    let state = agent(&repo, &wt, &["show", &format!("{tip}:task.toml")]);
    let blob = agent_stdin(
        &repo,
        &wt,
        &["hash-object", "-w", "--stdin"],
        &set_field(&state, "status", "\"merged\""),
    );
    let entries: String = agent(&repo, &wt, &["ls-tree", &tip])
        .lines()
        .map(|l| {
            if l.ends_with("\ttask.toml") {
                format!("100644 blob {blob}\ttask.toml\n")
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    let tree = agent_stdin(&repo, &wt, &["mktree"], &entries);
    let forged = agent(
        &repo,
        &wt,
        &["commit-tree", &tree, "-p", &tip, "-m", "merged", "-m", "{}"],
    );
    agent(
        &repo,
        &wt,
        &[
            "push",
            "-q",
            "origin",
            &format!("{forged}:refs/tasks/t1/record"),
        ],
    );
    let branch = rev(&repo, "task/t1");

    for args in [vec!["fetch"], vec!["push", "t1"], vec!["list", "--json"]] {
        let run = repo.task_root(&args);
        no_crash(&run, &format!("{args:?}"));
    }
    let local = repo.git(repo.root(), &["show", "refs/tasks/t1/record:task.toml"]);
    assert!(
        local.contains("status = \"active\""),
        "a remote record ended the live local task:\n{local}"
    );
    assert_eq!(rev(&repo, "task/t1"), branch);
    assert!(repo.worktrees().contains(&wt));
}

// ---------------------------------------------------------------------------------------------
// One test per root cause.

/// Root cause 1 — records are trusted: any record the task rewrote is `record_tampered`, and no
/// command acts on any of its fields. The agent appends an event commit that changes nothing but
/// the tip. Must hold: merge, remove, drop, path, exec, revert, commit, checkpoint, reset, sync,
/// status, check, start and start --reset all refuse (exit 1, `record_tampered`), nothing in
/// refs or the worktree changes, the hint names the genuine tip (`git update-ref … <tip>`), and
/// restoring it makes the task usable again.
#[test]
fn root_cause_records_no_command_acts_on_a_tampered_record() {
    let repo = TestRepo::new();
    let wt = repo.start("t1", &[]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 1 }\n");
    commit_all(&repo, &wt, "work");
    let genuine = rev(&repo, "refs/tasks/t1/record");
    forge_record(&repo, &wt, "t1", "checkpoint", &|s| s.to_owned());
    let refs_before = all_refs(&repo);
    let files_before = files(&wt);
    let marker = repo.base().join("exec-ran");
    let touch = format!("touch '{}'", marker.display());

    for args in [
        vec!["merge", "t1", "--no-checks", "--json"],
        vec!["remove", "t1", "--force", "--json"],
        vec!["drop", "t1", "--json"],
        vec!["path", "t1", "--json"],
        vec!["exec", "t1", "--json", "--", "sh", "-c", &touch],
        vec!["revert", "t1", "--json"],
        vec!["commit", "t1", "-m", "x", "--json"],
        vec!["checkpoint", "t1", "--json"],
        vec!["reset", "t1", "--json"],
        vec!["sync", "t1", "--json"],
        vec!["status", "t1", "--json"],
        vec!["check", "t1", "--json"],
        vec!["start", "t1", "--json"],
        vec!["start", "t1", "--reset", "--json"],
    ] {
        let run = repo.task_root(&args);
        tampered(&run, &format!("{args:?}"));
        assert_eq!(all_refs(&repo), refs_before, "{args:?} changed refs");
        assert_eq!(files(&wt), files_before, "{args:?} changed the worktree");
    }
    assert!(!marker.exists(), "exec ran the command");
    let run = repo.task_root(&["merge", "t1", "--no-checks", "--json"]);
    assert!(
        run.stdout.contains(&genuine) && run.stdout.contains("update-ref"),
        "the hint does not name the genuine tip {genuine}:\n{run}"
    );
    agent(
        &repo,
        &wt,
        &["update-ref", "refs/tasks/t1/record", &genuine],
    );
    repo.task_root(&["status", "t1", "--json"]).ok();
    repo.fsck();
}

/// Root cause 2 — decisions taken from names and settings: what `sweep` deletes comes from the
/// ledger, never from a directory's name pattern or from `task.branchPrefix`. The user keeps a
/// directory of their own named like a removal in the tasks directory; the agent empties the
/// branch prefix (with a user branch holding a `.task-contract.toml`) and moves t2's worktree to
/// a removal name. Must hold: `sweep` deletes none of them and deletes no branch.
#[test]
fn root_cause_names_sweep_deletes_only_what_the_ledger_left_half_done() {
    let repo = TestRepo::new();
    let wt1 = repo.start("t1", &[]);
    let wt2 = repo.start("t2", &[]);
    make_dirty(&repo, &wt2);
    let before2 = files(&wt2);
    let tasks = repo.base().join("repo.tasks");
    let own = tasks.join(".notes.removing-7-7");
    repo.write(&own, "keep.txt", "the user's\n");
    repo.git(repo.root(), &["switch", "-q", "-c", "defaults"]);
    repo.write(repo.root(), ".task-contract.toml", "version = 1\n");
    commit_all(&repo, repo.root(), "defaults");
    repo.git(repo.root(), &["switch", "-q", "main"]);
    let heads = all_refs(&repo);
    let moved = tasks.join(".t2.removing-9-9");
    agent(
        &repo,
        &wt1,
        &[
            "worktree",
            "move",
            wt2.to_str().unwrap(),
            moved.to_str().unwrap(),
        ],
    );
    agent(&repo, &wt1, &["config", "task.branchPrefix", ""]);

    let run = repo.task_root(&["sweep", "--json"]);
    no_crash(&run, "sweep");
    assert_eq!(repo.read(&own, "keep.txt"), "the user's\n", "{run}");
    assert_eq!(files(&moved), before2, "{run}");
    for line in heads.lines().filter(|l| l.contains(" refs/heads/")) {
        assert!(
            all_refs(&repo).lines().any(|l| l == line),
            "sweep deleted or moved {line}:\n{run}"
        );
    }
}

/// Root cause 3 — settings read live from `git config`: every setting that changes what
/// git-task enforces or runs is read from the snapshot `hooks install` wrote. The agent changes
/// `task.branchPrefix`, `task.worktreeDir`, `task.setup` and `task.keepOnMerge`. Must hold: the
/// user's `start` uses the pinned values (branch `task/t2` at the default path, no setup run)
/// and warns naming each changed key it reads and `git task trust`; `merge` removes the
/// worktree as the pinned `keepOnMerge` says, and `task.keepOnMerge` is named by a warning.
#[test]
fn root_cause_settings_every_pinned_key_is_ignored_until_trusted() {
    let repo = TestRepo::new();
    repo.task_root(&["hooks", "install"]).ok();
    let wt1 = repo.start("t1", &[]);
    let marker = repo.base().join("setup-ran");
    let elsewhere = repo.base().join("elsewhere");
    for (key, value) in [
        ("task.branchPrefix", "agent/".to_owned()),
        ("task.worktreeDir", elsewhere.display().to_string()),
        ("task.setup", format!("touch '{}'", marker.display())),
        ("task.keepOnMerge", "true".to_owned()),
    ] {
        agent(&repo, &wt1, &["config", key, &value]);
    }

    let run = repo.task_root(&["start", "t2"]);
    no_crash(&run, "start");
    assert_eq!(run.code, 0, "{run}");
    assert!(!marker.exists(), "the agent's setup ran");
    assert!(!elsewhere.exists(), "the agent's worktreeDir was used");
    let wt2 = repo.task_dir("t2");
    assert!(repo.worktrees().contains(&wt2), "{run}");
    assert!(repo.refs("refs/heads/agent/").is_empty());
    for key in ["task.branchPrefix", "task.worktreeDir", "task.setup"] {
        assert!(run.stderr.contains(key), "no warning naming {key}:\n{run}");
    }
    assert!(run.stderr.contains("git task trust"), "{run}");

    repo.write(&wt2, "docs/t2.md", "t2\n");
    commit_all(&repo, &wt2, "t2 work");
    let merged = repo.task_root(&["merge", "t2", "--no-checks"]).ok();
    assert!(
        format!("{}{}", run.stderr, merged.stderr).contains("task.keepOnMerge"),
        "no warning naming task.keepOnMerge:\n{run}\n{merged}"
    );
    assert!(!wt2.exists(), "the agent's keepOnMerge was used");
    assert!(!marker.exists());
}

/// Root cause 4 — refs that are not the task's own: the `reference-transaction` hook refuses,
/// from a task worktree, every update of a ref other than that task's own branch, while the own
/// branch moves normally (`commit`, `commit --amend`, `reset --hard HEAD~`).
#[test]
fn root_cause_refs_only_the_tasks_own_branch_moves_from_its_worktree() {
    let repo = TestRepo::new();
    repo.task_root(&["hooks", "install"]).ok();
    let wt = repo.start("t1", &[]);
    repo.start("t2", &[]);
    let start_tip = rev(&repo, "task/t1");
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 1 }\n");
    repo.git(&wt, &["commit", "-q", "-am", "one"]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 2 }\n");
    repo.git(&wt, &["commit", "-q", "-a", "--amend", "--no-edit"]);
    assert_eq!(
        repo.git(repo.root(), &["show", "task/t1:src/lib.rs"]),
        "pub fn lib() { 2 }"
    );
    repo.git(&wt, &["reset", "-q", "--hard", "HEAD~1"]);
    assert_eq!(rev(&repo, "task/t1"), start_tip);

    let before = all_refs(&repo);
    for args in [
        vec!["update-ref", "refs/heads/main", "HEAD"],
        vec!["update-ref", "refs/heads/task/t2", "HEAD"],
        vec!["update-ref", "refs/tasks/t2/base", "HEAD"],
        vec!["update-ref", "refs/tasks/t1/record", "HEAD"],
        vec!["update-ref", "refs/notes/tasks", "HEAD"],
        vec!["update-ref", "refs/heads/new-branch", "HEAD"],
        vec!["tag", "v-agent"],
    ] {
        let run = repo.git_run(&wt, &args);
        assert_ne!(run.code, 0, "git {args:?} was allowed:\n{run}");
        assert_eq!(all_refs(&repo), before, "git {args:?} moved a ref");
    }
}

/// Root cause 5 — inputs from outside the repository: MCP arguments steer nothing outside the
/// server's repository and its tasks directory. Must hold: `path` outside the tasks directory
/// (a sibling of the repository, the home directory) and `repo` naming another repository are
/// tool errors; nothing is created there.
#[test]
fn root_cause_inputs_mcp_arguments_stay_inside_the_repository() {
    let repo = TestRepo::new();
    let other = TestRepo::new();
    let mut s = Session::open(&repo, repo.root());
    for (n, path) in [
        repo.base().join("sibling"),
        repo.base().join("home/evil"),
        repo.root().join("inside-main-worktree"),
    ]
    .into_iter()
    .enumerate()
    {
        let id = format!("p{n}");
        let (err, doc, _) = s.call(
            "start",
            json!({"id": id, "path": path.display().to_string()}),
        );
        assert!(
            err,
            "start with path {} was accepted: {doc}",
            path.display()
        );
        assert_eq!(doc["exit_code"], 2, "{doc}");
        assert!(!path.exists(), "{} was created", path.display());
    }
    let before = all_refs(&other);
    let (err, doc, _) = s.call("list", json!({"repo": other.root().display().to_string()}));
    assert!(err, "list acted on another repository: {doc}");
    assert_eq!(all_refs(&other), before);
    let _ = s.close();
    assert!(repo.refs("refs/tasks/").is_empty());
}

/// Root cause 6 — content that steers git: files that change how other paths are checked out or
/// copied (`.gitattributes` at any depth, `.worktreeinclude`) are protected under wildcards, at
/// the hook too: a commit of `docs/deep/.gitattributes` under `--allow docs/**` is refused by
/// the pre-commit hook with `protected`.
#[test]
fn root_cause_content_gitattributes_is_protected_at_the_hook_under_a_wildcard() {
    let repo = TestRepo::new();
    repo.task_root(&["hooks", "install"]).ok();
    let wt = repo.start("t1", &["--allow", "docs/**"]);
    repo.write(&wt, "docs/deep/.gitattributes", "*.md text\n");
    repo.git(&wt, &["add", "-A"]);
    let run = repo.git_run(&wt, &["commit", "-q", "-m", "attributes"]);
    assert_eq!(run.code, 1, "the hook let .gitattributes through:\n{run}");
    assert!(run.stderr.contains("protected"), "{run}");
    let run = repo.task_root(&["check", "t1", "--staged", "--json"]);
    let j = run.json();
    assert!(
        j["violations"].as_array().is_some_and(|v| v
            .iter()
            .any(|v| v["file"] == "docs/deep/.gitattributes" && v["reason"] == "protected")),
        "{j}"
    );
}

/// Root cause 7 — unbounded work and panics on repository content: a record ref pointing at a
/// blob, a tree, a commit without `task.toml`, or a `task.toml` with a bad branch, base branch
/// or mode. Must hold: `list`, `list --all`, `status`, `log`, `overlaps` and `sweep --dry-run`
/// never panic (exit 0, 1 or 128), and `list` still lists the healthy task (exit 0).
#[test]
fn root_cause_no_panic_and_no_failure_of_others_on_any_record_content() {
    let repo = TestRepo::new();
    let wt = repo.start("t1", &[]);
    repo.start("t2", &[]);
    let genuine = rev(&repo, "refs/tasks/t1/record");
    let blob = agent_stdin(&repo, &wt, &["hash-object", "-w", "--stdin"], "junk\n");
    let tree = agent(&repo, &wt, &["rev-parse", "HEAD^{tree}"]);
    let no_toml = agent(&repo, &wt, &["commit-tree", &tree, "-m", "checkpoint"]);

    let mut forms: Vec<(String, Box<dyn Fn() + '_>)> = Vec::new();
    for target in [blob, tree, no_toml] {
        let (r, w) = (&repo, wt.clone());
        let t = target.clone();
        forms.push((
            format!("record at {target}"),
            Box::new(move || {
                agent(r, &w, &["update-ref", "refs/tasks/t1/record", &t]);
            }),
        ));
    }
    for (key, value) in [
        ("branch", "\"refs/heads/task/../x\""),
        ("branch", "\"\""),
        ("base_branch", "\"refs/heads/ma in\""),
        ("mode", "\"x\""),
        ("worktree", "\"\""),
        ("base_commit", "\"zz\""),
    ] {
        let (r, w) = (&repo, wt.clone());
        forms.push((
            format!("{key} = {value}"),
            Box::new(move || {
                forge_record(r, &w, "t1", "checkpoint", &|s| set_field(s, key, value));
            }),
        ));
    }
    for (what, make) in &forms {
        make();
        for args in [
            vec!["list", "--json"],
            vec!["list", "--all"],
            vec!["status", "t1", "--json"],
            vec!["log", "t1", "--json"],
            vec!["overlaps", "--json"],
            vec!["sweep", "--dry-run", "--json"],
        ] {
            let run = repo.task_root(&args);
            no_crash(&run, &format!("{args:?} with {what}"));
            assert!(
                [0, 1, 128].contains(&run.code),
                "{args:?} with {what}: {run}"
            );
        }
        let run = repo.task_root(&["list", "--json"]);
        assert_eq!(
            run.code, 0,
            "list failed because of t1's record ({what}):\n{run}"
        );
        assert!(listed(&run.json(), "t2").is_some(), "{what}: {run}");
        agent(
            &repo,
            &wt,
            &["update-ref", "refs/tasks/t1/record", &genuine],
        );
    }
}
