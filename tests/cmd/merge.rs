//! `git task merge`: the gate. Each scenario checks the effect with real git.

use crate::common::TestRepo;
use crate::common::{commit_all, rev};
use std::path::Path;

fn tree_files(repo: &TestRepo, rev: &str) -> Vec<String> {
    repo.git(repo.root(), &["ls-tree", "-r", "--name-only", rev])
        .lines()
        .map(str::to_owned)
        .collect()
}

/// A task that keeps its contract lands as one squash commit with trailer and note; the checked-out base follows.
#[test]
fn squash_lands_one_commit_with_trailer_and_note() {
    let repo = TestRepo::new();
    let before = rev(&repo, "main");
    let wt = repo.start(
        "t1",
        &["--allow", "src/**", "--check", "test -f src/lib.rs"],
    );
    repo.write(&wt, "src/lib.rs", "pub fn lib() { changed() }\n");
    repo.write(&wt, "src/new.rs", "pub fn changed() {}\n");
    commit_all(&repo, &wt, "Change lib");

    let run = repo.task_root(&["merge", "t1"]).ok();
    assert!(run.stdout.contains("Merged task 't1' into main"), "{run}");

    // One commit on top of the old tip, with the trailer and the note.
    assert_eq!(repo.git(repo.root(), &["rev-parse", "main~1"]), before);
    let message = repo.git(repo.root(), &["log", "-1", "--format=%B", "main"]);
    assert!(message.starts_with("Change lib"), "{message}");
    assert!(message.contains("Task-Id: t1"), "{message}");
    let log = repo.git(repo.root(), &["log", "--notes=tasks", "-1", "main"]);
    assert!(log.contains("Notes (tasks):"), "{log}");
    assert!(log.contains("Task: t1"), "{log}");
    assert!(log.contains("Contract: "), "{log}");
    assert!(log.contains("ok  test -f src/lib.rs"), "{log}");

    // The checked-out base is updated and clean; the contract file never reached it.
    assert_eq!(repo.porcelain(repo.root()), "");
    assert_eq!(
        repo.read(repo.root(), "src/lib.rs"),
        "pub fn lib() { changed() }\n"
    );
    assert_eq!(
        repo.read(repo.root(), "src/new.rs"),
        "pub fn changed() {}\n"
    );
    assert!(!tree_files(&repo, "main").contains(&".task-contract.toml".to_owned()));
    assert!(!repo.root().join(".task-contract.toml").exists());

    // Worktree and branch are gone, the record stays with a `merged` event.
    assert!(!wt.exists());
    assert_eq!(repo.worktrees().len(), 1);
    assert!(repo.refs("refs/heads/task/").is_empty());
    assert!(repo
        .refs("refs/tasks/t1/")
        .contains(&"refs/tasks/t1/record".to_owned()));
    let events = repo.git(repo.root(), &["log", "--format=%s", "refs/tasks/t1/record"]);
    assert_eq!(
        events.lines().take(2).collect::<Vec<_>>(),
        vec!["merged", "checks"]
    );
    repo.fsck();
}

/// Merging a merged task again is a no-op that reports the earlier merge.
#[test]
fn merging_twice_reports_the_earlier_merge() {
    let repo = TestRepo::new();
    let wt = repo.start("t1", &[]);
    repo.write(&wt, "README.md", "# changed\n");
    commit_all(&repo, &wt, "Edit readme");
    let first = repo.task_root(&["merge", "t1", "--json"]).ok().json();
    assert_eq!(first["kind"], "merge");
    assert_eq!(first["into"], "refs/heads/main");
    assert_eq!(first["tasks"][0]["task"], "t1");
    assert_eq!(first["tasks"][0]["already_merged"], false);
    assert_eq!(first["tasks"][0]["strategy"], "squash");
    assert_eq!(first["tasks"][0]["removed"], true);
    let commit = first["tasks"][0]["commit"].as_str().unwrap().to_owned();
    assert_eq!(commit, rev(&repo, "main"));

    let tip = rev(&repo, "main");
    let again = repo.task_root(&["merge", "t1", "--json"]).ok().json();
    assert_eq!(again["tasks"][0]["already_merged"], true);
    assert_eq!(again["tasks"][0]["commit"], commit.as_str());
    assert_eq!(rev(&repo, "main"), tip);
    let human = repo.task_root(&["merge", "t1"]).ok();
    assert!(human.stdout.contains("already merged"), "{human}");
    repo.fsck();
}

/// A forbidden path committed with `--no-verify` is caught by the gate; nothing moves.
#[test]
fn no_verify_violation_is_refused() {
    let repo = TestRepo::new();
    let before = rev(&repo, "main");
    let wt = repo.start("t1", &["--forbid", "src/store/**"]);
    repo.write(&wt, "src/store/mod.rs", "// sneaked in\n");
    commit_all(&repo, &wt, "Touch the store");

    let run = repo.task_root(&["merge", "t1"]).code(1);
    assert!(run.stderr.contains("src/store/mod.rs"), "{run}");
    assert!(run.stderr.contains("forbidden"), "{run}");
    assert_eq!(rev(&repo, "main"), before);
    assert!(wt.exists());
    assert_eq!(repo.refs("refs/heads/task/"), vec!["refs/heads/task/t1"]);

    let json = repo.task_root(&["merge", "t1", "--json"]).code(1).json();
    assert_eq!(json["kind"], "contract_violation");
    assert_eq!(json["violations"][0]["file"], "src/store/mod.rs");
    assert_eq!(json["violations"][0]["reason"], "forbidden");
    assert_eq!(rev(&repo, "main"), before);
    repo.fsck();
}

/// Uncommitted work in the task worktree never lands: the task is its branch tip (SPEC §7.1).
#[test]
fn uncommitted_violation_is_refused() {
    let repo = TestRepo::new();
    let before = rev(&repo, "main");
    let wt = repo.start("t1", &["--allow", "src/**"]);
    repo.write(&wt, "docs/x.md", "not allowed\n");
    let json = repo.task_root(&["merge", "t1", "--json"]).code(1).json();
    assert_eq!(json["kind"], "uncommitted_work");
    assert_eq!(json["paths"], serde_json::json!(["docs/x.md"]));
    assert_eq!(rev(&repo, "main"), before);
}

/// Uncommitted work that keeps the contract is not silently dropped: the merge refuses.
#[test]
fn uncommitted_work_is_refused() {
    let repo = TestRepo::new();
    let before = rev(&repo, "main");
    let wt = repo.start("t1", &[]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 2 }\n");
    let run = repo.task_root(&["merge", "t1"]).code(1);
    assert!(run.stderr.contains("uncommitted work"), "{run}");
    assert!(run.stderr.contains("src/lib.rs"), "{run}");
    assert_eq!(rev(&repo, "main"), before);
    assert_eq!(repo.read(&wt, "src/lib.rs"), "pub fn lib() { 2 }\n");
}

/// Loosening the branch's contract file is tampering; nothing moves.
#[test]
fn tampered_contract_is_refused() {
    let repo = TestRepo::new();
    let before = rev(&repo, "main");
    let wt = repo.start("t1", &["--forbid", "src/store/**"]);
    repo.write(&wt, ".task-contract.toml", "version = 1\ntask = \"t1\"\n");
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 1 }\n");
    commit_all(&repo, &wt, "Loosen the contract");

    let run = repo.task_root(&["merge", "t1"]).code(1);
    assert!(run.stderr.contains("contract_tampered"), "{run}");
    assert_eq!(rev(&repo, "main"), before);
    assert!(wt.exists());
    repo.fsck();
}

/// Deleting the contract file is tampering too.
#[test]
fn deleted_contract_is_refused() {
    let repo = TestRepo::new();
    let before = rev(&repo, "main");
    let wt = repo.start("t1", &[]);
    repo.git(&wt, &["rm", "-q", ".task-contract.toml"]);
    repo.git(&wt, &["commit", "-q", "--no-verify", "-m", "drop contract"]);
    let json = repo.task_root(&["merge", "t1", "--json"]).code(1).json();
    assert_eq!(json["violations"][0]["reason"], "contract_tampered");
    assert_eq!(rev(&repo, "main"), before);
}

/// A failing check exits 1, keeps the worktree, records the run, and moves nothing.
#[test]
fn failing_check_is_refused() {
    let repo = TestRepo::new();
    let before = rev(&repo, "main");
    let wt = repo.start("t1", &["--check", "echo checking; exit 3"]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 1 }\n");
    commit_all(&repo, &wt, "Change");

    let run = repo.task_root(&["merge", "t1"]).code(1);
    assert!(run.stderr.contains("checking"), "{run}");
    assert!(run.stderr.contains("exit 3"), "{run}");
    assert_eq!(rev(&repo, "main"), before);
    assert!(wt.exists());
    assert_eq!(repo.refs("refs/heads/task/"), vec!["refs/heads/task/t1"]);

    let json = repo.task_root(&["merge", "t1", "--json"]).code(1).json();
    assert_eq!(json["kind"], "checks_failed");
    assert_eq!(json["checks"]["passed"], false);
    assert_eq!(json["checks"]["commands"][0]["code"], 3);
    assert!(json["checks"]["commands"][0]["output"]
        .as_str()
        .unwrap()
        .contains("checking"));
    let events = repo.git(repo.root(), &["log", "--format=%s", "refs/tasks/t1/record"]);
    assert_eq!(events.lines().next(), Some("checks"), "{events}");
    assert_eq!(rev(&repo, "main"), before);

    // --no-checks skips them, and the skip is recorded.
    let json = repo
        .task_root(&["merge", "t1", "--no-checks", "--json"])
        .ok()
        .json();
    assert_eq!(json["tasks"][0]["checks"]["skipped"], true);
    let log = repo.git(repo.root(), &["log", "--notes=tasks", "-1", "main"]);
    assert!(log.contains("Checks: skipped"), "{log}");
    let checks_event = repo.git(
        repo.root(),
        &["log", "-1", "--format=%B", "refs/tasks/t1/record~1"],
    );
    assert!(checks_event.contains("\"skipped\":true"), "{checks_event}");
    repo.fsck();
}

/// Checks added in the branch's contract file are never run: only the frozen ones are.
#[test]
fn checks_from_the_branch_file_are_not_run() {
    let repo = TestRepo::new();
    let marker = repo.base().join("marker");
    let wt = repo.start("t1", &["--check", "true"]);
    let contract = repo.read(&wt, ".task-contract.toml");
    let edited = contract.replace(
        "commands = [\"true\"]",
        &format!("commands = [\"true\", \"touch {}\"]", marker.display()),
    );
    assert_ne!(contract, edited, "{contract}");
    repo.write(&wt, ".task-contract.toml", &edited);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 1 }\n");
    commit_all(&repo, &wt, "Add a check in the branch file");

    let json = repo.task_root(&["merge", "t1", "--json"]).ok().json();
    assert_eq!(
        json["tasks"][0]["checks"]["commands"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert!(!marker.exists(), "a check from the branch file ran");
    assert!(!tree_files(&repo, "main").contains(&".task-contract.toml".to_owned()));
    repo.fsck();
}

/// A conflict exits 1, names the path, hints `sync`, and leaves base and both worktrees untouched.
#[test]
fn conflict_is_refused_and_changes_nothing() {
    let repo = TestRepo::new();
    let wt = repo.start("t1", &[]);
    repo.write(&wt, "README.md", "# from the task\n");
    commit_all(&repo, &wt, "Task edit");
    repo.write(repo.root(), "README.md", "# from main\n");
    commit_all(&repo, repo.root(), "Main edit");
    let before = rev(&repo, "main");
    let task_tip = repo.git(repo.root(), &["rev-parse", "task/t1"]);

    let run = repo.task_root(&["merge", "t1"]).code(1);
    assert!(run.stderr.contains("README.md"), "{run}");
    assert!(run.stderr.contains("git task sync t1"), "{run}");
    assert_eq!(rev(&repo, "main"), before);
    assert_eq!(repo.git(repo.root(), &["rev-parse", "task/t1"]), task_tip);
    assert_eq!(repo.porcelain(repo.root()), "");
    assert_eq!(repo.porcelain(&wt), "");
    assert_eq!(repo.read(repo.root(), "README.md"), "# from main\n");
    assert_eq!(repo.read(&wt, "README.md"), "# from the task\n");

    let json = repo.task_root(&["merge", "t1", "--json"]).code(1).json();
    assert_eq!(json["kind"], "merge_conflict");
    assert_eq!(json["paths"], serde_json::json!(["README.md"]));
    repo.fsck();
}

/// A local edit in the base worktree that the merge would overwrite makes it refuse; the edit survives.
#[test]
fn local_edit_in_base_worktree_blocks_the_merge() {
    let repo = TestRepo::new();
    let before = rev(&repo, "main");
    let wt = repo.start("t1", &[]);
    repo.write(&wt, "README.md", "# from the task\n");
    repo.write(&wt, "added.txt", "task file\n");
    commit_all(&repo, &wt, "Task edit");
    repo.write(repo.root(), "README.md", "# my unsaved edit\n");

    let run = repo.task_root(&["merge", "t1"]).code(1);
    assert!(run.stderr.contains("README.md"), "{run}");
    assert!(run.stderr.contains("would overwrite"), "{run}");
    assert_eq!(repo.read(repo.root(), "README.md"), "# my unsaved edit\n");
    assert_eq!(rev(&repo, "main"), before);
    assert!(wt.exists());
    assert!(!repo.root().join("added.txt").exists());
    let events = repo.git(repo.root(), &["log", "--format=%s", "refs/tasks/t1/record"]);
    assert!(!events.contains("merged"), "{events}");

    // A staged edit is protected the same way.
    repo.git(repo.root(), &["add", "README.md"]);
    let json = repo.task_root(&["merge", "t1", "--json"]).code(1).json();
    assert_eq!(json["kind"], "target_dirty");
    assert_eq!(json["paths"], serde_json::json!(["README.md"]));
    // git's own words, without its advice about the graft file git-task switches off.
    let detail = json["detail"].as_str().unwrap();
    assert!(
        detail.contains("README.md") && !detail.contains("graft"),
        "{json}"
    );
    assert_eq!(repo.read(repo.root(), "README.md"), "# my unsaved edit\n");
    assert_eq!(rev(&repo, "main"), before);
    repo.fsck();
}

/// An untracked file in the way of a file the task adds is protected too.
#[test]
fn untracked_file_in_the_way_blocks_the_merge() {
    let repo = TestRepo::new();
    let before = rev(&repo, "main");
    let wt = repo.start("t1", &[]);
    repo.write(&wt, "added.txt", "task file\n");
    commit_all(&repo, &wt, "Add a file");
    repo.write(repo.root(), "added.txt", "mine, untracked\n");
    let json = repo.task_root(&["merge", "t1", "--json"]).code(1).json();
    assert_eq!(json["kind"], "target_dirty");
    assert_eq!(json["paths"], serde_json::json!(["added.txt"]));
    assert_eq!(repo.read(repo.root(), "added.txt"), "mine, untracked\n");
    assert_eq!(rev(&repo, "main"), before);
}

/// Unrelated local edits (unstaged and staged) in the base worktree survive a merge that updates other files.
#[test]
fn unrelated_local_edits_survive_the_merge() {
    let repo = TestRepo::new();
    let wt = repo.start("t1", &[]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 42 }\n");
    commit_all(&repo, &wt, "Task edit");
    repo.write(repo.root(), "README.md", "# my unsaved edit\n");
    repo.write(repo.root(), "src/store/mod.rs", "// staged by me\n");
    repo.git(repo.root(), &["add", "src/store/mod.rs"]);
    repo.write(repo.root(), "notes.txt", "untracked\n");

    repo.task_root(&["merge", "t1"]).ok();
    assert_eq!(
        repo.read(repo.root(), "src/lib.rs"),
        "pub fn lib() { 42 }\n"
    );
    assert_eq!(repo.read(repo.root(), "README.md"), "# my unsaved edit\n");
    assert_eq!(repo.read(repo.root(), "notes.txt"), "untracked\n");
    assert_eq!(
        repo.porcelain(repo.root()),
        " M README.md\nM  src/store/mod.rs\n?? notes.txt"
    );
    repo.fsck();
}

/// The target checked out in a linked worktree is updated there.
#[test]
fn target_checked_out_in_a_linked_worktree_is_updated() {
    let repo = TestRepo::new();
    repo.git(repo.root(), &["branch", "umbrella"]);
    let side = repo.base().join("side");
    repo.git(
        repo.root(),
        &["worktree", "add", "-q", side.to_str().unwrap(), "umbrella"],
    );
    let wt = repo.start("t1", &[]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 7 }\n");
    commit_all(&repo, &wt, "Task edit");
    let main_before = rev(&repo, "main");

    repo.task_root(&["merge", "t1", "--into", "umbrella"]).ok();
    assert_eq!(rev(&repo, "main"), main_before);
    assert_eq!(repo.read(&side, "src/lib.rs"), "pub fn lib() { 7 }\n");
    assert_eq!(repo.porcelain(&side), "");
    assert_eq!(repo.read(repo.root(), "src/lib.rs"), "pub fn lib() {}\n");
    repo.fsck();
}

/// Several tasks land together, one commit each, in the given order.
#[test]
fn several_tasks_land_together() {
    let repo = TestRepo::new();
    let before = rev(&repo, "main");
    let a = repo.start("a", &[]);
    let b = repo.start("b", &[]);
    repo.write(&a, "src/lib.rs", "pub fn lib() { 1 }\n");
    commit_all(&repo, &a, "Task a");
    repo.write(&b, "README.md", "# b\n");
    commit_all(&repo, &b, "Task b");

    let json = repo.task_root(&["merge", "a", "b", "--json"]).ok().json();
    assert_eq!(json["tasks"].as_array().unwrap().len(), 2);
    let subjects = repo.git(
        repo.root(),
        &["log", "--format=%s", &format!("{before}..main")],
    );
    assert_eq!(subjects, "Task b\nTask a");
    assert_eq!(repo.read(repo.root(), "README.md"), "# b\n");
    assert_eq!(repo.read(repo.root(), "src/lib.rs"), "pub fn lib() { 1 }\n");
    assert_eq!(repo.porcelain(repo.root()), "");
    let reflog = repo.git(repo.root(), &["reflog", "--format=%gs", "main"]);
    assert_eq!(
        reflog.lines().next(),
        Some("git-task: merge a b"),
        "the base moved once:\n{reflog}"
    );
    repo.fsck();
}

/// When the second task conflicts, nothing lands: not even the first.
#[test]
fn several_tasks_second_conflicts_nothing_lands() {
    let repo = TestRepo::new();
    let a = repo.start("a", &[]);
    let b = repo.start("b", &[]);
    repo.write(&a, "src/lib.rs", "pub fn lib() { 1 }\n");
    commit_all(&repo, &a, "Task a");
    repo.write(&b, "src/lib.rs", "pub fn lib() { 2 }\n");
    commit_all(&repo, &b, "Task b");
    let before = rev(&repo, "main");

    let run = repo.task_root(&["merge", "a", "b"]).code(1);
    assert!(run.stderr.contains("task 'b' conflicts"), "{run}");
    assert!(run.stderr.contains("src/lib.rs"), "{run}");
    assert_eq!(rev(&repo, "main"), before);
    assert_eq!(repo.porcelain(repo.root()), "");
    assert!(a.exists() && b.exists());
    let status = repo.task_root(&["log", "a"]).ok();
    assert!(!status.stdout.contains("merged"), "{status}");
    repo.fsck();
}

/// `--merge` makes a merge commit with the task branch as second parent, without the contract file.
#[test]
fn merge_commit_mode() {
    let repo = TestRepo::new();
    let before = rev(&repo, "main");
    let wt = repo.start("t1", &[]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 1 }\n");
    commit_all(&repo, &wt, "Task edit");
    let task_tip = repo.git(repo.root(), &["rev-parse", "task/t1"]);

    repo.task_root(&["merge", "t1", "--merge"]).ok();
    let parents = repo.git(repo.root(), &["rev-list", "--parents", "-1", "main"]);
    let parents: Vec<&str> = parents.split(' ').skip(1).collect();
    assert_eq!(parents, vec![before.as_str(), task_tip.as_str()]);
    assert!(!tree_files(&repo, "main").contains(&".task-contract.toml".to_owned()));
    assert!(repo
        .git(repo.root(), &["log", "-1", "--format=%B", "main"])
        .contains("Task-Id: t1"));
    assert_eq!(repo.porcelain(repo.root()), "");
    repo.fsck();
}

/// `--rebase` replays the task's own commits (authors kept), never the contract file.
#[test]
fn rebase_mode_replays_commits_without_the_contract() {
    let repo = TestRepo::new();
    let before = rev(&repo, "main");
    let wt = repo.start("t1", &[]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 1 }\n");
    repo.git(&wt, &["add", "-A"]);
    repo.git(
        &wt,
        &[
            "-c",
            "user.name=Agent One",
            "-c",
            "user.email=a1@example.com",
            "commit",
            "-q",
            "-m",
            "First",
        ],
    );
    repo.write(&wt, "README.md", "# second\n");
    commit_all(&repo, &wt, "Second");
    // Main moves on, so the replay really lands on a new base.
    repo.write(repo.root(), "other.txt", "main\n");
    commit_all(&repo, repo.root(), "Main moves");

    repo.task_root(&["merge", "t1", "--rebase"]).ok();
    let subjects = repo.git(
        repo.root(),
        &["log", "--format=%s|%an", &format!("{before}..main")],
    );
    assert_eq!(
        subjects,
        "Second|Test User\nFirst|Agent One\nMain moves|Test User"
    );
    let history = repo.git(
        repo.root(),
        &["log", "--format=%H", "main", "--", ".task-contract.toml"],
    );
    assert_eq!(history, "", "the contract file reached the base history");
    assert_eq!(
        repo.git(repo.root(), &["rev-list", "--merges", "--count", "main"]),
        "0"
    );
    assert_eq!(repo.read(repo.root(), "README.md"), "# second\n");
    assert_eq!(repo.porcelain(repo.root()), "");
    let log = repo.git(repo.root(), &["log", "--notes=tasks", "-1", "main"]);
    assert!(log.contains("Mode: rebase"), "{log}");
    repo.fsck();
}

/// `--into` lands on an umbrella branch and leaves the base branch alone.
#[test]
fn into_an_umbrella_branch() {
    let repo = TestRepo::new();
    let before = rev(&repo, "main");
    repo.git(repo.root(), &["branch", "umbrella"]);
    let a = repo.start("a", &[]);
    let b = repo.start("b", &[]);
    repo.write(&a, "src/lib.rs", "pub fn lib() { 1 }\n");
    commit_all(&repo, &a, "Task a");
    repo.write(&b, "README.md", "# b\n");
    commit_all(&repo, &b, "Task b");

    let json = repo
        .task_root(&["merge", "a", "b", "--into", "umbrella", "--json"])
        .ok()
        .json();
    assert_eq!(json["into"], "refs/heads/umbrella");
    assert_eq!(rev(&repo, "main"), before);
    assert_eq!(repo.git(repo.root(), &["rev-parse", "umbrella~2"]), before);
    assert!(tree_files(&repo, "umbrella").contains(&"src/lib.rs".to_owned()));
    assert_eq!(
        repo.git(repo.root(), &["show", "umbrella:README.md"]),
        "# b"
    );
    assert!(!tree_files(&repo, "umbrella").contains(&".task-contract.toml".to_owned()));
    assert_eq!(repo.porcelain(repo.root()), "");
    repo.fsck();
}

/// `--keep` (or task.keepOnMerge) leaves worktree and branch in place.
#[test]
fn keep_leaves_worktree_and_branch() {
    let repo = TestRepo::new();
    let wt = repo.start("t1", &[]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 1 }\n");
    commit_all(&repo, &wt, "Task edit");
    let run = repo.task_root(&["merge", "t1", "--keep"]).ok();
    assert!(run.stderr.contains("Kept the worktree"), "{run}");
    assert!(wt.exists());
    assert_eq!(repo.refs("refs/heads/task/"), vec!["refs/heads/task/t1"]);
    assert_eq!(repo.read(repo.root(), "src/lib.rs"), "pub fn lib() { 1 }\n");

    repo.git(repo.root(), &["config", "task.keepOnMerge", "true"]);
    // Set after the first start pinned the settings: trusted to be used.
    repo.task_root(&["trust", "--yes"]).ok();
    let wt2 = repo.start("t2", &[]);
    repo.write(&wt2, "README.md", "# t2\n");
    commit_all(&repo, &wt2, "Task t2");
    repo.task_root(&["merge", "t2"]).ok();
    assert!(wt2.exists());
    repo.fsck();
}

/// A task whose base moved merges cleanly after `sync` resolves the conflict in the task.
#[test]
fn sync_then_merge_succeeds() {
    let repo = TestRepo::new();
    let wt = repo.start("t1", &[]);
    repo.write(&wt, "README.md", "# from the task\n");
    commit_all(&repo, &wt, "Task edit");
    repo.write(repo.root(), "README.md", "# from main\n");
    commit_all(&repo, repo.root(), "Main edit");
    repo.task_root(&["merge", "t1"]).code(1);

    let run = repo.task(&wt, &["sync"]).code(1);
    assert!(run.stderr.contains("README.md"), "{run}");
    assert!(repo.read(&wt, "README.md").contains("<<<<<<<"));
    repo.write(&wt, "README.md", "# from both\n");
    commit_all(&repo, &wt, "Resolve");
    repo.task(&wt, &["sync"]).ok();
    assert_eq!(
        repo.git(repo.root(), &["rev-parse", "refs/tasks/t1/base"]),
        rev(&repo, "main")
    );

    repo.task_root(&["merge", "t1"]).ok();
    assert_eq!(repo.read(repo.root(), "README.md"), "# from both\n");
    assert_eq!(repo.porcelain(repo.root()), "");
    assert!(!tree_files(&repo, "main").contains(&".task-contract.toml".to_owned()));
    repo.fsck();
}

/// With no id, the task checked out in the current worktree is merged.
#[test]
fn merge_defaults_to_the_active_task() {
    let repo = TestRepo::new();
    let wt = repo.start("t1", &[]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 1 }\n");
    commit_all(&repo, &wt, "Task edit");
    repo.task(&wt, &["merge", "--keep"]).ok();
    assert_eq!(repo.read(repo.root(), "src/lib.rs"), "pub fn lib() { 1 }\n");
}

/// A policy or contract file already on the base is kept as the base has it.
#[test]
fn the_bases_own_contract_file_is_kept() {
    let repo = TestRepo::new();
    repo.write(
        repo.root(),
        ".task-contract.toml",
        "# the base's own file\n",
    );
    commit_all(&repo, repo.root(), "Base has a file of that name");
    let wt = repo.start("t1", &[]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 1 }\n");
    commit_all(&repo, &wt, "Task edit");
    repo.task_root(&["merge", "t1"]).ok();
    assert_eq!(
        repo.git(repo.root(), &["show", "main:.task-contract.toml"]),
        "# the base's own file"
    );
    assert_eq!(repo.porcelain(repo.root()), "");
}

/// A file rewritten with the same content (stale stat data in the index) does not block the merge.
#[test]
fn touched_but_unchanged_file_does_not_block() {
    let repo = TestRepo::new();
    let wt = repo.start("t1", &[]);
    repo.write(&wt, "README.md", "# from the task\n");
    commit_all(&repo, &wt, "Task edit");
    std::thread::sleep(std::time::Duration::from_millis(20));
    repo.write(repo.root(), "README.md", "# demo\n");
    repo.task_root(&["merge", "t1"]).ok();
    assert_eq!(repo.read(repo.root(), "README.md"), "# from the task\n");
    assert_eq!(repo.porcelain(repo.root()), "");
    repo.fsck();
}

/// An unfinished merge in the base worktree blocks the merge; nothing moves.
#[test]
fn unfinished_merge_in_base_worktree_blocks_the_merge() {
    let repo = TestRepo::new();
    let wt = repo.start("t1", &[]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 1 }\n");
    commit_all(&repo, &wt, "Task edit");
    repo.git(repo.root(), &["checkout", "-q", "-b", "other"]);
    repo.write(repo.root(), "README.md", "# other\n");
    commit_all(&repo, repo.root(), "Other");
    repo.git(repo.root(), &["checkout", "-q", "main"]);
    repo.write(repo.root(), "README.md", "# main\n");
    commit_all(&repo, repo.root(), "Main");
    assert_eq!(repo.git_run(repo.root(), &["merge", "-q", "other"]).code, 1);
    let before = rev(&repo, "main");

    let json = repo.task_root(&["merge", "t1", "--json"]).code(1).json();
    assert_eq!(json["kind"], "target_dirty");
    assert_eq!(rev(&repo, "main"), before);
    assert!(repo.porcelain(repo.root()).contains("UU README.md"));
    assert!(wt.exists());
}

/// A merge interrupted before its clean-up is finished by running it again.
#[test]
fn repeating_a_merge_finishes_its_clean_up() {
    let repo = TestRepo::new();
    let wt = repo.start("t1", &[]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 1 }\n");
    commit_all(&repo, &wt, "Task edit");
    repo.task_root(&["merge", "t1"]).ok();
    // What a merge killed right after its ref transaction leaves: the worktree still registered.
    repo.git(
        repo.root(),
        &["worktree", "add", "-q", "--detach", wt.to_str().unwrap()],
    );
    let json = repo.task_root(&["merge", "t1", "--json"]).ok().json();
    assert_eq!(json["tasks"][0]["already_merged"], true);
    assert!(!wt.exists());
    assert_eq!(repo.worktrees().len(), 1);
    repo.fsck();
}

/// Bad input exits 2 and changes nothing.
#[test]
fn bad_input_exits_2() {
    let repo = TestRepo::new();
    let before = rev(&repo, "main");
    repo.start("t1", &[]);
    repo.task_root(&["merge", "nope"]).code(2);
    repo.task_root(&["merge", "t1", "--into", "no-such-branch"])
        .code(2);
    repo.task_root(&["merge", "t1", "--rebase", "-m", "x"])
        .code(2);
    repo.task_root(&["merge", "t1", "--merge", "--squash"])
        .code(2);
    repo.task_root(&["merge", "t1", "t1"]).code(2);
    repo.task_root(&["sync", "nope"]).code(2);
    assert_eq!(rev(&repo, "main"), before);
}

/// A staged change and an untracked file each count as uncommitted work.
#[test]
fn staged_or_untracked_work_is_refused() {
    let repo = TestRepo::new();
    let before = rev(&repo, "main");
    let wt = repo.start("t1", &[]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 1 }\n");
    commit_all(&repo, &wt, "Task edit");
    repo.write(&wt, "README.md", "# staged\n");
    repo.git(&wt, &["add", "README.md"]);
    let json = repo.task_root(&["merge", "t1", "--json"]).code(1).json();
    assert_eq!(json["kind"], "uncommitted_work");
    assert_eq!(json["paths"], serde_json::json!(["README.md"]));
    repo.git(&wt, &["reset", "-q", "--hard"]);
    repo.write(&wt, "scratch.txt", "untracked\n");
    let json = repo.task_root(&["merge", "t1", "--json"]).code(1).json();
    assert_eq!(json["paths"], serde_json::json!(["scratch.txt"]));
    assert_eq!(rev(&repo, "main"), before);
    assert_eq!(repo.read(&wt, "scratch.txt"), "untracked\n");
}

/// Two merges into the same branch at the same time both land, one after the other.
#[test]
fn concurrent_merges_into_one_branch_both_land() {
    let repo = TestRepo::new();
    let before = rev(&repo, "main");
    let ids = ["a", "b", "c"];
    for (i, id) in ids.iter().enumerate() {
        let wt = repo.start(id, &["--check", "sleep 0.2"]);
        repo.write(&wt, &format!("src/file{i}.rs"), &format!("// {id}\n"));
        commit_all(&repo, &wt, &format!("Task {id}"));
    }
    let runs: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = ids
            .iter()
            .map(|id| s.spawn(|| repo.task_root(&["merge", id])))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for run in runs {
        run.ok();
    }
    let subjects = repo.git(
        repo.root(),
        &["log", "--format=%s", &format!("{before}..main")],
    );
    assert_eq!(subjects.lines().count(), 3, "{subjects}");
    for (i, id) in ids.iter().enumerate() {
        assert_eq!(
            repo.read(repo.root(), &format!("src/file{i}.rs")),
            format!("// {id}\n")
        );
    }
    assert_eq!(repo.porcelain(repo.root()), "");
    repo.fsck();
}

/// Twelve merges of disjoint tasks into one branch at once all land: each waits for its turn on
/// the branch's lock instead of giving up because the branch kept moving (issue 33).
#[test]
fn twelve_parallel_merges_all_land() {
    let repo = TestRepo::new();
    let before = rev(&repo, "main");
    let ids: Vec<String> = (0..12).map(|i| format!("p{i}")).collect();
    for (i, id) in ids.iter().enumerate() {
        let wt = repo.start(id, &["--check", "true"]);
        repo.write(&wt, &format!("src/par{i}.rs"), &format!("// {id}\n"));
        commit_all(&repo, &wt, &format!("Task {id}"));
    }
    let runs: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = ids
            .iter()
            .map(|id| s.spawn(|| repo.task_root(&["merge", id])))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for run in runs {
        run.ok();
    }
    let subjects = repo.git(
        repo.root(),
        &["log", "--format=%s", &format!("{before}..main")],
    );
    assert_eq!(subjects.lines().count(), 12, "{subjects}");
    for (i, id) in ids.iter().enumerate() {
        assert_eq!(
            repo.git(repo.root(), &["show", &format!("main:src/par{i}.rs")]),
            format!("// {id}")
        );
        assert_eq!(
            repo.read(repo.root(), &format!("src/par{i}.rs")),
            format!("// {id}\n")
        );
    }
    assert_eq!(repo.porcelain(repo.root()), "");
    let queue = repo
        .root()
        .join(".git/git-task/locks/merge-refs%heads%main.queue");
    assert_eq!(
        std::fs::read_dir(queue).unwrap().count(),
        0,
        "no ticket left"
    );
    assert!(!repo
        .root()
        .join(".git/git-task/locks/merge-refs%heads%main.lock")
        .exists());
    repo.fsck();
}

/// When the second task's check fails, nothing lands, and both check runs are recorded.
#[test]
fn several_tasks_second_check_fails_nothing_lands() {
    let repo = TestRepo::new();
    let a = repo.start("a", &["--check", "true"]);
    let b = repo.start("b", &["--check", "false"]);
    repo.write(&a, "src/lib.rs", "pub fn lib() { 1 }\n");
    commit_all(&repo, &a, "Task a");
    repo.write(&b, "README.md", "# b\n");
    commit_all(&repo, &b, "Task b");
    let before = rev(&repo, "main");
    let json = repo
        .task_root(&["merge", "a", "b", "--json"])
        .code(1)
        .json();
    assert_eq!(json["kind"], "checks_failed");
    assert_eq!(json["task"], "b");
    assert_eq!(rev(&repo, "main"), before);
    for id in ["a", "b"] {
        let last = repo.git(
            repo.root(),
            &[
                "log",
                "-1",
                "--format=%s",
                &format!("refs/tasks/{id}/record"),
            ],
        );
        assert_eq!(last, "checks", "task {id}");
    }
    assert_eq!(repo.porcelain(repo.root()), "");
    repo.fsck();
}

/// `git write-tree` computed from the index entries alone (a copy of the index without its cached
/// tree): what `git write-tree` must give when the index's cached tree is not stale.
fn tree_of_entries(repo: &TestRepo, dir: &Path) -> String {
    let scratch = repo.base().join("entries.index");
    let _ = std::fs::remove_file(&scratch);
    let entries = repo.git(dir, &["ls-files", "-s"]);
    let mut child = repo
        .command("git", dir)
        .env("GIT_INDEX_FILE", &scratch)
        .args(["update-index", "--add", "--index-info"])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(format!("{entries}\n").as_bytes()).unwrap();
    drop(stdin);
    assert!(child.wait().unwrap().success());
    let mut cmd = repo.command("git", dir);
    cmd.env("GIT_INDEX_FILE", &scratch).arg("write-tree");
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::remove_file(&scratch).unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// Whether the main worktree's index file holds the extension with signature `sig`.
fn index_has_extension(repo: &TestRepo, sig: &[u8; 4]) -> bool {
    let bytes = std::fs::read(repo.root().join(".git/index")).unwrap();
    bytes.windows(4).any(|w| w == sig)
}

/// A task that modifies, adds (in a new directory), deletes (emptying a directory), and adds an
/// executable and a symlink: the checked-out base follows exactly, with a valid index.
#[test]
fn checked_out_base_follows_every_kind_of_change() {
    let repo = TestRepo::new();
    repo.write(repo.root(), "old/only.txt", "going away\n");
    commit_all(&repo, repo.root(), "Add a file to delete");
    repo.git(repo.root(), &["write-tree"]); // a full cached tree, as after any commit
    let wt = repo.start("t1", &[]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 2 }\n");
    repo.write(&wt, "docs/deep/new.md", "# new\n");
    repo.write(&wt, "run.sh", "#!/bin/sh\necho hi\n");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(wt.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink("src/lib.rs", wt.join("link")).unwrap();
    std::fs::remove_file(wt.join("old/only.txt")).unwrap();
    commit_all(&repo, &wt, "Every kind of change");

    repo.task_root(&["merge", "t1"]).ok();
    let root = repo.root();
    assert_eq!(repo.porcelain(root), "");
    assert_eq!(repo.git(root, &["diff-index", "--cached", "HEAD"]), "");
    assert_eq!(repo.read(root, "src/lib.rs"), "pub fn lib() { 2 }\n");
    assert_eq!(repo.read(root, "docs/deep/new.md"), "# new\n");
    let mode = std::fs::metadata(root.join("run.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o111, 0o111, "run.sh is executable: {mode:o}");
    assert_eq!(
        std::fs::read_link(root.join("link")).unwrap(),
        Path::new("src/lib.rs")
    );
    assert!(
        !root.join("old").exists(),
        "the emptied directory is removed"
    );
    // The cached tree is valid: write-tree gives the new HEAD's tree, as computed from the entries.
    let head_tree = repo.git(root, &["rev-parse", "HEAD^{tree}"]);
    assert_eq!(repo.git(root, &["write-tree"]), head_tree);
    assert_eq!(tree_of_entries(&repo, root), head_tree);
    assert_eq!(
        repo.git(root, &["ls-files", "-s", "run.sh", "link"])
            .lines()
            .map(|l| l.split(' ').next().unwrap())
            .collect::<Vec<_>>(),
        vec!["120000", "100755"]
    );
    repo.fsck();
}

/// Staged and unstaged changes elsewhere, and untracked files, survive the update untouched; the
/// cached tree still matches the entries, so the next commit records exactly what is staged.
#[test]
fn staged_changes_elsewhere_survive_with_a_valid_cached_tree() {
    let repo = TestRepo::new();
    let wt = repo.start("t1", &[]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 3 }\n");
    repo.write(&wt, "src/added.rs", "// added\n");
    commit_all(&repo, &wt, "Task edit");
    repo.write(repo.root(), "src/store/mod.rs", "// staged by me\n");
    repo.git(repo.root(), &["add", "src/store/mod.rs"]);
    repo.write(repo.root(), "README.md", "# unstaged edit\n");
    repo.write(repo.root(), "scratch/notes.txt", "untracked\n");
    repo.git(repo.root(), &["write-tree"]);

    repo.task_root(&["merge", "t1"]).ok();
    let root = repo.root();
    assert_eq!(
        repo.porcelain(root),
        " M README.md\nM  src/store/mod.rs\n?? scratch/notes.txt"
    );
    assert_eq!(
        repo.git(root, &["diff-index", "--cached", "--name-only", "HEAD"]),
        "src/store/mod.rs"
    );
    assert_eq!(
        repo.git(root, &["write-tree"]),
        tree_of_entries(&repo, root)
    );
    repo.git(root, &["commit", "-q", "--no-verify", "-m", "mine"]);
    assert_eq!(
        repo.git(root, &["diff", "--name-only", "HEAD~1", "HEAD"]),
        "src/store/mod.rs"
    );
    assert_eq!(repo.read(root, "src/added.rs"), "// added\n");
    repo.fsck();
}

/// A local edit made after the merge's first look (here by a check) is still protected: the
/// update refuses, the refs move back, and nothing in the worktree changes.
#[test]
fn local_edit_made_while_checks_run_refuses_and_changes_nothing() {
    let repo = TestRepo::new();
    let before = rev(&repo, "main");
    let readme = repo.root().join("README.md");
    let check = format!(
        "printf '# edited during checks\\n' > '{}'",
        readme.display()
    );
    let wt = repo.start("t1", &["--check", &check]);
    repo.write(&wt, "README.md", "# from the task\n");
    repo.write(&wt, "new/added.txt", "task file\n");
    commit_all(&repo, &wt, "Task edit");
    let index_before = std::fs::read(repo.root().join(".git/index")).unwrap();

    let json = repo.task_root(&["merge", "t1", "--json"]).code(1).json();
    assert_eq!(json["kind"], "target_dirty", "{json}");
    assert_eq!(json["paths"], serde_json::json!(["README.md"]));
    assert_eq!(rev(&repo, "main"), before);
    assert_eq!(
        repo.read(repo.root(), "README.md"),
        "# edited during checks\n"
    );
    assert!(!repo.root().join("new").exists());
    assert_eq!(repo.porcelain(repo.root()), " M README.md");
    assert_eq!(
        std::fs::read(repo.root().join(".git/index")).unwrap(),
        index_before,
        "the index was not rewritten"
    );
    let events = repo.git(repo.root(), &["log", "--format=%s", "refs/tasks/t1/record"]);
    assert!(!events.contains("merged"), "{events}");
    assert!(wt.exists());
    repo.fsck();
}

/// An untracked file that appears where the task adds a file while the checks run is protected too.
#[test]
fn untracked_file_appearing_while_checks_run_refuses() {
    let repo = TestRepo::new();
    let before = rev(&repo, "main");
    let target = repo.root().join("added.txt");
    let check = format!("printf 'mine\\n' > '{}'", target.display());
    let wt = repo.start("t1", &["--check", &check]);
    repo.write(&wt, "added.txt", "task file\n");
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 4 }\n");
    commit_all(&repo, &wt, "Task edit");

    let json = repo.task_root(&["merge", "t1", "--json"]).code(1).json();
    assert_eq!(json["kind"], "target_dirty", "{json}");
    assert_eq!(json["paths"], serde_json::json!(["added.txt"]));
    assert_eq!(rev(&repo, "main"), before);
    assert_eq!(repo.read(repo.root(), "added.txt"), "mine\n");
    assert_eq!(repo.read(repo.root(), "src/lib.rs"), "pub fn lib() {}\n");
    assert_eq!(repo.porcelain(repo.root()), "?? added.txt");
}

/// An untracked file where the task needs a directory (`a` in the way of `a/b`) refuses; nothing changes.
#[test]
fn untracked_file_in_the_way_of_a_new_directory_refuses() {
    let repo = TestRepo::new();
    let before = rev(&repo, "main");
    let wt = repo.start("t1", &[]);
    repo.write(&wt, "tools/run.txt", "task file\n");
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 5 }\n");
    commit_all(&repo, &wt, "Task edit");
    repo.write(repo.root(), "tools", "mine, untracked\n");

    let json = repo.task_root(&["merge", "t1", "--json"]).code(1).json();
    assert_eq!(json["kind"], "target_dirty", "{json}");
    assert_eq!(rev(&repo, "main"), before);
    assert_eq!(repo.read(repo.root(), "tools"), "mine, untracked\n");
    assert_eq!(repo.read(repo.root(), "src/lib.rs"), "pub fn lib() {}\n");
    assert_eq!(repo.porcelain(repo.root()), "?? tools");
}

/// A file the task turns into a directory is left to git, which updates the worktree.
#[test]
fn file_becoming_a_directory_is_updated_by_git() {
    let repo = TestRepo::new();
    let wt = repo.start("t1", &[]);
    std::fs::remove_file(wt.join("README.md")).unwrap();
    repo.write(&wt, "README.md/index.md", "# now a directory\n");
    commit_all(&repo, &wt, "File to directory");

    repo.task_root(&["merge", "t1"]).ok();
    assert_eq!(
        repo.read(repo.root(), "README.md/index.md"),
        "# now a directory\n"
    );
    assert_eq!(repo.porcelain(repo.root()), "");
    let head_tree = repo.git(repo.root(), &["rev-parse", "HEAD^{tree}"]);
    assert_eq!(repo.git(repo.root(), &["write-tree"]), head_tree);
    repo.fsck();
}

/// An index with an untracked cache (an extension gix cannot write) is updated by git, which keeps it.
#[test]
fn index_with_untracked_cache_falls_back_to_git() {
    let repo = TestRepo::new();
    repo.git(repo.root(), &["config", "core.untrackedCache", "true"]);
    repo.git(repo.root(), &["update-index", "--untracked-cache"]);
    repo.git(repo.root(), &["status", "--porcelain"]);
    assert!(index_has_extension(&repo, b"UNTR"));
    let wt = repo.start("t1", &[]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 6 }\n");
    repo.write(&wt, "extra.txt", "extra\n");
    commit_all(&repo, &wt, "Task edit");

    repo.task_root(&["merge", "t1"]).ok();
    assert!(
        index_has_extension(&repo, b"UNTR"),
        "the untracked cache survives"
    );
    assert_eq!(repo.read(repo.root(), "src/lib.rs"), "pub fn lib() { 6 }\n");
    assert_eq!(repo.porcelain(repo.root()), "");
    let head_tree = repo.git(repo.root(), &["rev-parse", "HEAD^{tree}"]);
    assert_eq!(repo.git(repo.root(), &["write-tree"]), head_tree);
    repo.fsck();
}

/// A split index is updated by git too, and stays split.
#[test]
fn split_index_falls_back_to_git() {
    let repo = TestRepo::new();
    repo.git(repo.root(), &["update-index", "--split-index"]);
    assert!(index_has_extension(&repo, b"link"));
    let wt = repo.start("t1", &[]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 7 }\n");
    commit_all(&repo, &wt, "Task edit");

    repo.task_root(&["merge", "t1"]).ok();
    assert!(index_has_extension(&repo, b"link"), "the index stays split");
    assert_eq!(repo.read(repo.root(), "src/lib.rs"), "pub fn lib() { 7 }\n");
    assert_eq!(repo.porcelain(repo.root()), "");
    repo.fsck();
}

/// With attributes that convert content (`eol=crlf`), git writes the files, converted.
#[test]
fn attributes_that_convert_content_fall_back_to_git() {
    let repo = TestRepo::new();
    repo.write(repo.root(), ".gitattributes", "*.txt text eol=crlf\n");
    commit_all(&repo, repo.root(), "Attributes");
    let wt = repo.start("t1", &[]);
    repo.write(&wt, "notes.txt", "one\ntwo\n");
    commit_all(&repo, &wt, "Task edit");

    repo.task_root(&["merge", "t1"]).ok();
    assert_eq!(repo.read(repo.root(), "notes.txt"), "one\r\ntwo\r\n");
    assert_eq!(repo.porcelain(repo.root()), "");
    repo.fsck();
}

/// Files checked out and committed within the same second are racily clean in the task worktree:
/// they are compared by content (on two threads when there are many), so a same-size uncommitted
/// edit among them is still found; once committed, the task lands.
#[test]
fn same_size_edit_among_racily_clean_task_files_is_found() {
    let repo = TestRepo::new();
    for i in 0..150 {
        repo.write(
            repo.root(),
            &format!("many/f{i:03}.txt"),
            &format!("file {i:03}\n"),
        );
    }
    commit_all(&repo, repo.root(), "Many files");
    let before = rev(&repo, "main");
    let wt = repo.start("t1", &[]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 8 }\n");
    commit_all(&repo, &wt, "Task edit");
    repo.write(&wt, "many/f149.txt", "FILE 149\n");

    let run = repo.task_root(&["merge", "t1"]).code(1);
    assert!(run.stderr.contains("uncommitted work"), "{run}");
    assert!(run.stderr.contains("many/f149.txt"), "{run}");
    assert_eq!(rev(&repo, "main"), before);

    commit_all(&repo, &wt, "Second edit");
    repo.task_root(&["merge", "t1"]).ok();
    assert_eq!(repo.read(repo.root(), "many/f149.txt"), "FILE 149\n");
    assert_eq!(repo.read(repo.root(), "src/lib.rs"), "pub fn lib() { 8 }\n");
    assert_eq!(repo.porcelain(repo.root()), "");
    repo.fsck();
}

/// An index that turns unreadable while the checks run (here a check overwrites it) is left to
/// git, which refuses: the refs move back and the index is not rewritten.
#[test]
fn index_corrupted_while_checks_run_refuses_and_moves_nothing() {
    let repo = TestRepo::new();
    let before = rev(&repo, "main");
    let index = repo.root().join(".git/index");
    let check = format!("printf 'not an index' > '{}'", index.display());
    let wt = repo.start("t1", &["--check", &check]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 9 }\n");
    commit_all(&repo, &wt, "Task edit");

    let run = repo.task_root(&["merge", "t1"]).code(1);
    assert_eq!(rev(&repo, "main"), before, "{run}");
    assert_eq!(std::fs::read(&index).unwrap(), b"not an index");
    assert_eq!(repo.read(repo.root(), "src/lib.rs"), "pub fn lib() {}\n");
    let events = repo.git(repo.root(), &["log", "--format=%s", "refs/tasks/t1/record"]);
    assert!(!events.contains("merged"), "{events}");
}

/// A landing that writes many trees (the base moved in the same directories as the task, so
/// every one of them is merged into a new tree) writes them and its commit as one pack: git
/// reads all of them, none is also loose, and no `.keep` is left once the base names them.
#[test]
fn a_landing_writes_its_trees_as_one_pack() {
    use crate::common::assert_one_new_pack;
    let (repo, before) = both_sides_moved(&[]);
    let root = repo.root().to_path_buf();

    repo.task_root(&["merge", "t1"]).ok();
    let revs: Vec<String> = ["main", "main^{tree}", "main:d3", "main:d3/x", "main:d11/x"]
        .iter()
        .map(|r| r.to_string())
        .collect();
    assert_one_new_pack(&repo, &before, &revs);
    assert_eq!(repo.read(&root, "d3/x/task.txt"), "task 3\n");
    assert_eq!(repo.read(&root, "d3/x/base.txt"), "base 3\n");
    assert_eq!(repo.porcelain(&root), "");
    repo.fsck();
}

/// A refused landing is not kept, so its trees are not written as a pack (they are loose
/// garbage `git gc` prunes, as before): an agent retrying a refused merge piles up no packs.
#[test]
fn a_refused_landing_writes_no_pack() {
    use crate::common::packs;
    let (repo, before) = both_sides_moved(&["--forbid", "d0/**"]);
    let root = repo.root().to_path_buf();
    for _ in 0..3 {
        let refused = repo.task_root(&["merge", "t1"]).code(1);
        assert!(refused.stderr.contains("d0/x/task.txt"), "{refused}");
        assert_eq!(packs(&root).0, before);
    }
    repo.fsck();
}

/// Task `t1` (started with `start_args`) and main each changed one file in the same 12
/// directories, so a landing merges every one of them into a new tree; everything is packed
/// (the pack names are returned) so that what the merge writes can be told apart.
fn both_sides_moved(start_args: &[&str]) -> (TestRepo, std::collections::BTreeSet<String>) {
    let repo = TestRepo::new();
    let root = repo.root().to_path_buf();
    for i in 0..12 {
        repo.write(&root, &format!("d{i}/x/base.txt"), "base\n");
        repo.write(&root, &format!("d{i}/x/task.txt"), "base\n");
    }
    commit_all(&repo, &root, "dirs");
    let wt = repo.start("t1", start_args);
    for i in 0..12 {
        repo.write(&wt, &format!("d{i}/x/task.txt"), &format!("task {i}\n"));
        repo.write(&root, &format!("d{i}/x/base.txt"), &format!("base {i}\n"));
    }
    commit_all(&repo, &wt, "task work");
    commit_all(&repo, &root, "base work");
    let before = crate::common::pack_everything(&repo);
    (repo, before)
}

/// The paths the commits `from..to` of the main worktree change, each commit's own diff.
fn touched_between(repo: &TestRepo, from: &str, to: &str) -> Vec<String> {
    let range = format!("{from}..{to}");
    let out = repo.git(
        repo.root(),
        &["log", "--format=", "--name-only", "--no-merges", &range],
    );
    out.lines()
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}

/// A commit that broke the contract, repaired by the tool's own `revert` and `commit`: the
/// net result of the commit and its repair keeps the contract, so `--rebase` lands it (the
/// repaired range as one commit, the rest as they are), and no commit that lands touches the
/// path the repair put back.
#[test]
fn rebase_lands_after_a_repair_commit_undid_a_violation() {
    let repo = TestRepo::new();
    let wt = repo.start("t1", &["--allow", "src/**"]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 1 }\n");
    repo.write(&wt, "README.md", "# not allowed\n");
    commit_all(&repo, &wt, "Edit lib and README");
    repo.write(&wt, "src/store/mod.rs", "pub fn store() { 2 }\n");
    commit_all(&repo, &wt, "Edit store");
    let refused = repo.task_root(&["merge", "t1", "--rebase"]).code(1);
    assert!(refused.stderr.contains("README.md"), "{refused}");
    repo.task_root(&["revert", "t1", "--path", "README.md"])
        .ok();
    repo.task_root(&["commit", "t1", "-m", "Put README back"])
        .ok();
    let before = rev(&repo, "main");

    let merged = repo
        .task_root(&["merge", "t1", "--rebase", "--json"])
        .ok()
        .json();
    assert_eq!(merged["tasks"][0]["task"], "t1", "{merged}");
    assert_eq!(repo.read(repo.root(), "README.md"), "# demo\n");
    assert_eq!(repo.read(repo.root(), "src/lib.rs"), "pub fn lib() { 1 }\n");
    assert_eq!(
        repo.read(repo.root(), "src/store/mod.rs"),
        "pub fn store() { 2 }\n"
    );
    let touched = touched_between(&repo, &before, "main");
    assert!(!touched.contains(&"README.md".to_owned()), "{touched:?}");
    assert!(touched.contains(&"src/lib.rs".to_owned()), "{touched:?}");
    // The commits up to the repair land as one, their messages kept.
    let messages = repo.git(
        repo.root(),
        &["log", "--format=%B", &format!("{before}..main")],
    );
    for subject in ["Edit lib and README", "Edit store", "Put README back"] {
        assert!(messages.contains(subject), "{messages}");
    }
    repo.fsck();
}

/// A commit whose whole effect a later commit of the task undid is not replayed at all.
#[test]
fn rebase_skips_a_commit_a_later_commit_undid() {
    let repo = TestRepo::new();
    let wt = repo.start("t1", &["--allow", "src/**"]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 1 }\n");
    commit_all(&repo, &wt, "Edit lib");
    repo.write(&wt, "README.md", "# not allowed\n");
    commit_all(&repo, &wt, "Edit README");
    repo.write(&wt, "README.md", "# demo\n");
    commit_all(&repo, &wt, "Undo README");
    let before = rev(&repo, "main");

    repo.task_root(&["merge", "t1", "--rebase"]).ok();
    let subjects = repo.git(
        repo.root(),
        &["log", "--format=%s", &format!("{before}..main")],
    );
    assert_eq!(subjects, "Edit lib");
    assert_eq!(touched_between(&repo, &before, "main"), ["src/lib.rs"]);
    repo.fsck();
}

/// After a `sync` whose conflict was resolved in the task, `--rebase` lands (or names the
/// modes that do), never sends the user back to `sync`, which has nothing left to do.
#[test]
fn rebase_after_a_resolved_sync_conflict_lands_without_a_loop() {
    let repo = TestRepo::new();
    let wt = repo.start("t1", &[]);
    repo.write(&wt, "README.md", "# task\n");
    commit_all(&repo, &wt, "Task README");
    repo.write(repo.root(), "README.md", "# main\n");
    commit_all(&repo, repo.root(), "Main README");
    repo.task_root(&["sync", "t1"]).code(1);
    repo.write(&wt, "README.md", "# both\n");
    commit_all(&repo, &wt, "Resolve");
    repo.task_root(&["sync", "t1"]).ok();
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 3 }\n");
    commit_all(&repo, &wt, "After the sync");
    let sync = repo.task_root(&["sync", "t1", "--json"]).ok().json();
    assert_eq!(sync["changed"], false, "{sync}");
    let before = rev(&repo, "main");

    let run = repo.task_root(&["merge", "t1", "--rebase", "--json"]);
    if run.code != 0 {
        let json = run.json();
        let text = json.to_string();
        assert!(!text.contains("git task sync"), "{run}");
        assert!(text.contains("--squash"), "{run}");
        repo.task_root(&["merge", "t1", "--squash"]).ok();
    } else {
        let subjects = repo.git(
            repo.root(),
            &["log", "--format=%s", &format!("{before}..main")],
        );
        assert!(subjects.starts_with("After the sync"), "{subjects}");
        // No merge commit of the base lands with --rebase: a line of single-parent commits.
        let merges = repo.git(
            repo.root(),
            &["rev-list", "--merges", &format!("{before}..main")],
        );
        assert!(merges.is_empty(), "{merges}");
    }
    assert_eq!(repo.read(repo.root(), "README.md"), "# both\n");
    assert_eq!(repo.read(repo.root(), "src/lib.rs"), "pub fn lib() { 3 }\n");
    repo.fsck();
}

/// A commit that conflicts with the target when replayed on its own, whose change a later commit
/// of the task undid: the range lands as its net result (here only the other file), so
/// `--rebase` lands instead of sending the user to a `sync` that has nothing to do.
#[test]
fn rebase_lands_a_conflicting_commit_a_later_commit_undid() {
    let repo = TestRepo::new();
    let wt = repo.start("t1", &[]);
    repo.write(&wt, "README.md", "# task\n");
    commit_all(&repo, &wt, "Try README");
    repo.write(&wt, "README.md", "# demo\n");
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 5 }\n");
    commit_all(&repo, &wt, "Undo README, edit lib");
    repo.write(repo.root(), "README.md", "# main\n");
    commit_all(&repo, repo.root(), "Main README");
    let before = rev(&repo, "main");

    let run = repo.task_root(&["merge", "t1", "--rebase", "--json"]);
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(repo.read(repo.root(), "README.md"), "# main\n");
    assert_eq!(repo.read(repo.root(), "src/lib.rs"), "pub fn lib() { 5 }\n");
    assert_eq!(touched_between(&repo, &before, "main"), ["src/lib.rs"]);
    repo.fsck();
}

/// When `--rebase` cannot land but the task's net change does, the refusal names the modes that
/// land it (`--squash`, `--merge`), not `sync`, which has nothing to bring: the task already
/// holds the target's tip.
#[test]
fn a_rebase_conflict_names_the_modes_that_land() {
    let repo = TestRepo::new();
    let wt = repo.start("t1", &[]);
    // The task's first commit conflicts with the target; the task then merges the target in
    // by hand (git merge, -X ours), so no commit of its line undoes the conflicting change.
    repo.write(&wt, "README.md", "# task\n");
    commit_all(&repo, &wt, "Task README");
    repo.write(repo.root(), "README.md", "# main\n");
    commit_all(&repo, repo.root(), "Main README");
    repo.git(&wt, &["merge", "-q", "-X", "ours", "--no-edit", "main"]);
    repo.write(&wt, "README.md", "# main\n\nand the task\n");
    commit_all(&repo, &wt, "README on top of main");
    let sync = repo.task_root(&["sync", "t1", "--json"]).ok().json();
    assert_eq!(sync["merged"], false, "{sync}");
    let before = rev(&repo, "main");

    let run = repo.task_root(&["merge", "t1", "--rebase", "--json"]);
    if run.code != 0 {
        let text = run.stdout.clone();
        assert!(!text.contains("git task sync"), "{run}");
        assert!(text.contains("--squash"), "{run}");
        let human = repo.task_root(&["merge", "t1", "--rebase"]).code(1);
        assert!(human.stderr.contains("--squash"), "{human}");
        assert!(!human.stderr.contains("git task sync"), "{human}");
        repo.task_root(&["merge", "t1", "--squash"]).ok();
    }
    assert_ne!(rev(&repo, "main"), before);
    assert_eq!(
        repo.read(repo.root(), "README.md"),
        "# main\n\nand the task\n"
    );
    repo.fsck();
}

/// A failed check is run again on the target's tip without the task (issue 33): when it fails
/// there too, the refusal says the target breaks it and names `--no-checks` and the contract
/// fix; when it passes there, the task is told to fix its work. Without a `.worktreeinclude`
/// on the target, the hint says no ignored file is copied into the checks' checkout.
#[test]
fn a_failed_check_says_whether_it_also_fails_without_the_task() {
    let repo = TestRepo::new();
    let broken = repo.start("broken", &["--check", "test -f needed.txt"]);
    repo.write(&broken, "src/broken.rs", "// b\n");
    commit_all(&repo, &broken, "work");
    let own = repo.start("own", &["--check", "! test -f src/bad.rs"]);
    repo.write(&own, "src/bad.rs", "// bad\n");
    commit_all(&repo, &own, "work");
    let main = rev(&repo, "main");

    let run = repo.task_root(&["merge", "broken"]).code(1);
    assert!(
        run.stderr
            .contains("also fails on the target's tip without the task")
            && run.stderr.contains("git task merge broken --no-checks"),
        "{run}"
    );
    assert!(run.stderr.contains("no .worktreeinclude"), "{run}");
    let j = repo
        .task_root(&["merge", "broken", "--json"])
        .code(1)
        .json();
    assert_eq!(j["fails_without_task"], true, "{j}");

    let run = repo.task_root(&["merge", "own"]).code(1);
    assert!(!run.stderr.contains("also fails"), "{run}");
    assert!(run.stderr.contains("git task commit own"), "{run}");
    let j = repo.task_root(&["merge", "own", "--json"]).code(1).json();
    assert_eq!(j["fails_without_task"], false, "{j}");
    assert_eq!(rev(&repo, "main"), main, "nothing was merged");
}

/// A check that timed out is not run again on the target's tip: nobody waits for it twice.
#[test]
fn a_timed_out_check_is_not_run_again_without_the_task() {
    let repo = TestRepo::new();
    let count = repo.base().join("runs");
    let contract = repo.base().join("slow.toml");
    std::fs::write(
        &contract,
        format!(
            "version = 1\nallowed = [\"src/**\"]\n\n[checks]\ncommands = [\"echo run >> '{}'; sleep 30\"]\ntimeout_s = 1\n",
            count.display()
        ),
    )
    .unwrap();
    let wt = repo.start("slow", &["--contract", contract.to_str().unwrap()]);
    repo.write(&wt, "src/slow.rs", "// s\n");
    commit_all(&repo, &wt, "work");
    let j = repo.task_root(&["merge", "slow", "--json"]).code(1).json();
    assert_eq!(j["kind"], "checks_failed", "{j}");
    assert!(j.get("fails_without_task").is_none(), "{j}");
    assert_eq!(std::fs::read_to_string(&count).unwrap(), "run\n");
}
