//! The merge gate against an agent that uses git cleverly inside its own worktree (SPEC §7, §11).
//!
//! Each test is one way a task tried to land what its contract forbids; after every refusal
//! the target is unchanged and `git fsck` is clean.

use crate::common::TestRepo;
use crate::common::{commit_all, rev};
use std::path::Path;

/// `git show` with replace refs off: what is really on the branch.
fn show(repo: &TestRepo, rev: &str, path: &str) -> String {
    repo.git(
        repo.root(),
        &["--no-replace-objects", "show", &format!("{rev}:{path}")],
    )
}

#[track_caller]
fn assert_refused_unchanged(
    repo: &TestRepo,
    run_json: &serde_json::Value,
    kind: &str,
    before: &str,
) {
    assert_eq!(run_json["kind"], kind, "{run_json}");
    assert_eq!(rev(repo, "main"), before, "the target must not move");
    repo.fsck();
}

/// The worktree is parked on a clean older commit while the branch tip carries the violation.
#[test]
fn parked_worktree_does_not_hide_the_branch_tip() {
    let repo = TestRepo::new();
    let before = rev(&repo, "main");
    let wt = repo.start("t1", &["--allow", "src/lib.rs"]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 1 }\n");
    commit_all(&repo, &wt, "allowed");
    let clean = repo.git(&wt, &["rev-parse", "HEAD"]);
    repo.write(&wt, "src/store/mod.rs", "// stolen\n");
    commit_all(&repo, &wt, "forbidden");
    // Detached on the clean commit: the worktree looks innocent.
    repo.git(&wt, &["checkout", "-q", "--detach", &clean]);
    let json = repo.task_root(&["merge", "t1", "--json"]).code(1).json();
    assert_refused_unchanged(&repo, &json, "worktree_not_on_branch", &before);
    // The branch moved by plumbing while the worktree stays on it at the old commit.
    repo.git(&wt, &["checkout", "-q", "task/t1"]);
    repo.git(&wt, &["reset", "-q", "--hard", &clean]);
    let forbidden = repo.git(&wt, &["rev-parse", "HEAD@{1}"]);
    repo.git(&wt, &["update-ref", "refs/heads/task/t1", &forbidden]);
    let json = repo.task_root(&["merge", "t1", "--json"]).code(1).json();
    assert_eq!(rev(&repo, "main"), before);
    assert!(
        json["kind"] == "uncommitted_work" || json["kind"] == "contract_violation",
        "{json}"
    );
    // Once the worktree is back on the tip, the tip itself is judged.
    repo.git(&wt, &["reset", "-q", "--hard", "task/t1"]);
    let json = repo.task_root(&["merge", "t1", "--json"]).code(1).json();
    assert_refused_unchanged(&repo, &json, "contract_violation", &before);
    assert_eq!(json["violations"][0]["file"], "src/store/mod.rs");
}

/// A branch tip with a violation is judged even when the worktree has been removed by hand.
#[test]
fn branch_tip_without_worktree_is_judged() {
    let repo = TestRepo::new();
    let before = rev(&repo, "main");
    let wt = repo.start("t1", &["--forbid", "src/store/**"]);
    repo.write(&wt, "src/store/mod.rs", "// stolen\n");
    commit_all(&repo, &wt, "forbidden");
    repo.git(
        repo.root(),
        &["worktree", "remove", "--force", wt.to_str().unwrap()],
    );
    let json = repo.task_root(&["merge", "t1", "--json"]).code(1).json();
    assert_refused_unchanged(&repo, &json, "contract_violation", &before);
}

/// Merging the base in brings no blame; restoring an older version of the base's newer work
/// (a forbidden path or an allowed one) is the task's own change and is judged.
#[test]
fn base_merged_in_is_not_blamed_but_reverting_it_is() {
    let repo = TestRepo::new();
    let wt = repo.start("t1", &["--allow", "src/lib.rs"]);
    // The base moves on: a forbidden file and a new doc.
    repo.write(repo.root(), "src/store/mod.rs", "pub fn store() { 2 }\n");
    repo.write(repo.root(), "docs/new.md", "new\n");
    commit_all(&repo, repo.root(), "base work");
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 1 }\n");
    commit_all(&repo, &wt, "task work");
    repo.git(&wt, &["merge", "-q", "--no-edit", "main"]);
    // Work that arrived from the base is not the task's: the merge lands.
    let before = rev(&repo, "main");
    let run = repo
        .task_root(&["merge", "t1", "--keep", "--json"])
        .ok()
        .json();
    assert_eq!(run["kind"], "merge", "{run}");
    assert_eq!(
        show(&repo, "main", "src/store/mod.rs"),
        "pub fn store() { 2 }"
    );
    assert_ne!(rev(&repo, "main"), before);

    // A second task merges the base, then quietly restores the old forbidden file.
    let wt2 = repo.start("t2", &["--allow", "src/lib.rs"]);
    repo.write(repo.root(), "src/store/mod.rs", "pub fn store() { 3 }\n");
    commit_all(&repo, repo.root(), "base work 2");
    repo.git(&wt2, &["merge", "-q", "--no-edit", "main"]);
    repo.git(&wt2, &["checkout", "main~1", "--", "src/store/mod.rs"]);
    repo.write(&wt2, "src/lib.rs", "pub fn lib() { 9 }\n");
    commit_all(&repo, &wt2, "revert the base's work");
    let before = rev(&repo, "main");
    let json = repo.task_root(&["merge", "t2", "--json"]).code(1).json();
    assert_refused_unchanged(&repo, &json, "contract_violation", &before);
    let files: Vec<&str> = json["violations"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v["file"].as_str())
        .collect();
    assert!(files.contains(&"src/store/mod.rs"), "{json}");
    // The repair never suggests restoring anything but the target's current content.
    assert!(
        !json["repair"].as_str().unwrap_or("").contains("main~1"),
        "{json}"
    );
    assert_eq!(
        show(&repo, "main", "src/store/mod.rs"),
        "pub fn store() { 3 }"
    );
}

/// Only what the landing changes on the target is the task's: a task that never synced is not
/// blamed for the base's newer work, whatever its base ref says.
#[test]
fn base_ref_moved_by_hand_changes_nothing() {
    let repo = TestRepo::new();
    let before = rev(&repo, "main");
    let wt = repo.start("t1", &["--forbid", "src/store/**"]);
    repo.write(&wt, "src/store/mod.rs", "// stolen\n");
    commit_all(&repo, &wt, "forbidden");
    // The agent points its base ref at its own tip: base..tip is empty.
    repo.git(&wt, &["update-ref", "refs/tasks/t1/base", "HEAD"]);
    // `check` agrees with the gate: it judges what would land, not base..tip.
    let json = repo.task_root(&["check", "t1", "--json"]).code(1).json();
    assert_eq!(json["violations"][0]["file"], "src/store/mod.rs", "{json}");
    let json = repo.task_root(&["merge", "t1", "--json"]).code(1).json();
    assert_refused_unchanged(&repo, &json, "contract_violation", &before);
    assert_eq!(json["violations"][0]["file"], "src/store/mod.rs");
}

/// A record rewritten with plumbing (a looser frozen contract) is `record_tampered`.
#[test]
fn rewritten_record_is_refused() {
    let repo = TestRepo::new();
    let before = rev(&repo, "main");
    let wt = repo.start("t1", &["--allow", "src/lib.rs"]);
    repo.write(&wt, "src/store/mod.rs", "// stolen\n");
    commit_all(&repo, &wt, "forbidden");
    // Forge a record event whose frozen contract allows everything.
    let record = rev(&repo, "refs/tasks/t1/record");
    let state = repo.git(&wt, &["show", &format!("{record}:task.toml")]);
    let dir = repo.base().join("forge");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("task.toml"), format!("{state}\n")).unwrap();
    std::fs::write(dir.join("contract.toml"), "version = 1\ntask = \"t1\"\n").unwrap();
    let state_blob = repo.git(
        &wt,
        &["hash-object", "-w", dir.join("task.toml").to_str().unwrap()],
    );
    let contract_blob = repo.git(
        &wt,
        &[
            "hash-object",
            "-w",
            dir.join("contract.toml").to_str().unwrap(),
        ],
    );
    let tree = crate::common::git_stdin(
        &repo,
        &["mktree"],
        &format!(
            "100644 blob {contract_blob}\tcontract.toml\n100644 blob {state_blob}\ttask.toml\n"
        ),
    );
    let forged = repo.git(
        &wt,
        &[
            "commit-tree",
            &tree,
            "-p",
            &record,
            "-m",
            "checkpoint\n\n{}",
        ],
    );
    repo.git(&wt, &["update-ref", "refs/tasks/t1/record", &forged]);
    let json = repo.task_root(&["merge", "t1", "--json"]).code(1).json();
    assert_refused_unchanged(&repo, &json, "record_tampered", &before);
    // A brand-new forged history is refused the same way.
    let root = repo.git(&wt, &["commit-tree", &tree, "-m", "started\n\n{}"]);
    repo.git(&wt, &["update-ref", "refs/tasks/t1/record", &root]);
    let json = repo.task_root(&["merge", "t1", "--json"]).code(1).json();
    assert_refused_unchanged(&repo, &json, "record_tampered", &before);
    let run = repo.task_root(&["merge", "t1"]).code(1);
    assert!(
        run.stderr.contains("git update-ref refs/tasks/t1/record"),
        "the hint says how to put back the record git-task wrote: {run}"
    );
}

/// `git replace` cannot make the base look like the task: objects are read as stored.
#[test]
fn replace_refs_are_ignored() {
    let repo = TestRepo::new();
    let before = rev(&repo, "main");
    let wt = repo.start("t1", &["--forbid", "src/store/**"]);
    repo.write(&wt, "src/store/mod.rs", "// stolen\n");
    commit_all(&repo, &wt, "forbidden");
    let task_tip = repo.git(&wt, &["rev-parse", "HEAD"]);
    // The base commit and the task's first commit now read as the task's tip.
    repo.git(&wt, &["replace", "-f", &before, &task_tip]);
    let first = repo.git(&wt, &["rev-parse", "HEAD~1"]);
    repo.git(&wt, &["replace", "-f", &first, &task_tip]);
    let json = repo.task_root(&["merge", "t1", "--json"]).code(1).json();
    assert_refused_unchanged(&repo, &json, "contract_violation", &before);
    assert_eq!(show(&repo, "main", "src/store/mod.rs"), "pub fn store() {}");
}

/// `--into` a branch of another line judges everything the landing changes there, including
/// the base's commits the task would carry along.
#[test]
fn into_another_line_judges_the_whole_landing() {
    let repo = TestRepo::new();
    let fork = rev(&repo, "main");
    repo.git(repo.root(), &["branch", "other", &fork]);
    // main gains a forbidden change after the fork; the task starts from main.
    repo.write(repo.root(), "src/store/mod.rs", "pub fn store() { main }\n");
    commit_all(&repo, repo.root(), "main only");
    let wt = repo.start("t1", &["--forbid", "src/store/**"]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 1 }\n");
    commit_all(&repo, &wt, "task work");
    let other = rev(&repo, "other");
    let json = repo
        .task_root(&["merge", "t1", "--into", "other", "--json"])
        .code(1)
        .json();
    assert_eq!(json["kind"], "contract_violation", "{json}");
    assert_eq!(json["violations"][0]["file"], "src/store/mod.rs");
    assert_eq!(rev(&repo, "other"), other);
    repo.fsck();
}

/// `--into` takes branches only: a tag, a commit, a revision expression is bad input.
#[test]
fn into_accepts_branches_only() {
    let repo = TestRepo::new();
    let wt = repo.start("t1", &[]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 1 }\n");
    commit_all(&repo, &wt, "task work");
    repo.git(repo.root(), &["tag", "v1"]);
    repo.start("t2", &[]);
    let main = rev(&repo, "main");
    let refs_before = crate::common::all_refs(&repo);
    for into in [
        "v1",
        "refs/tags/v1",
        &main,
        "main~0",
        "HEAD",
        "refs/remotes/x",
        "no-such",
        "task/t2",
    ] {
        let run = repo.task_root(&["merge", "t1", "--into", into]).code(2);
        assert!(run.stderr.contains("error:"), "{into}: {run}");
        assert_eq!(crate::common::all_refs(&repo), refs_before, "{into}");
    }
}

/// `--base` resolves revisions to one commit; a name that is both a tag and a branch is refused.
#[test]
fn base_revisions_and_ambiguous_names() {
    let repo = TestRepo::new();
    let first = rev(&repo, "main");
    repo.write(repo.root(), "README.md", "# two\n");
    commit_all(&repo, repo.root(), "second");
    // `main~1` is a commit: the task starts there, with no base branch.
    let json = repo
        .task_root(&["start", "a", "--base", "main~1", "--json"])
        .ok()
        .json();
    assert_eq!(rev(&repo, "refs/tasks/a/base"), first, "{json}");
    // A tag and a branch both called `rel`, on different commits.
    repo.git(repo.root(), &["tag", "rel", &first]);
    repo.git(repo.root(), &["branch", "rel", "main"]);
    let refs_before = crate::common::all_refs(&repo);
    let run = repo.task_root(&["start", "b", "--base", "rel"]).code(2);
    assert!(run.stderr.contains("ambiguous"), "{run}");
    assert!(run.stderr.contains("refs/heads/rel"), "{run}");
    assert_eq!(crate::common::all_refs(&repo), refs_before);
    // Spelled out, each works and the record keeps the full branch name.
    repo.task_root(&["start", "b", "--base", "refs/heads/rel"])
        .ok();
    let log = repo.task_root(&["status", "b", "--json"]).ok().json();
    assert!(log.to_string().contains("refs/heads/rel"), "{log}");
}

/// A task cannot delete or loosen the base's policy, and the policy frozen at start still counts
/// if the base's is weakened later.
#[test]
fn policy_cannot_be_dropped_by_a_task() {
    let repo = TestRepo::new();
    repo.write(
        repo.root(),
        ".task-policy.toml",
        "version = 1\nforbidden = [\"secrets/**\"]\n",
    );
    commit_all(&repo, repo.root(), "policy");
    let before = rev(&repo, "main");
    let wt = repo.start("t1", &[]);
    std::fs::remove_file(wt.join(".task-policy.toml")).unwrap();
    repo.write(&wt, "secrets/key", "k\n");
    commit_all(&repo, &wt, "drop the policy");
    let json = repo.task_root(&["merge", "t1", "--json"]).code(1).json();
    assert_refused_unchanged(&repo, &json, "contract_violation", &before);
    let reasons: Vec<(&str, &str)> = json["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["file"].as_str().unwrap(), v["reason"].as_str().unwrap()))
        .collect();
    assert!(reasons.contains(&("secrets/key", "forbidden")), "{json}");
    assert!(
        reasons.contains(&(".task-policy.toml", "protected")),
        "{json}"
    );

    // The base's policy is removed later by a person: the one frozen at start still counts.
    let wt2 = repo.start("t2", &[]);
    repo.write(&wt2, "secrets/key", "k\n");
    commit_all(&repo, &wt2, "secret");
    repo.git(repo.root(), &["rm", "-q", ".task-policy.toml"]);
    repo.git(repo.root(), &["commit", "-q", "-m", "no policy"]);
    let before = rev(&repo, "main");
    let json = repo.task_root(&["merge", "t2", "--json"]).code(1).json();
    assert_refused_unchanged(&repo, &json, "contract_violation", &before);
    assert_eq!(json["violations"][0]["file"], "secrets/key");
}

/// `--rebase` judges each replayed commit: a commit that adds a forbidden file and a later one
/// that deletes it would put the file into the target's history. Replayed one by one it is
/// refused; the commit and the one that undid it land only as their net result (issue 34), so
/// no commit the target reaches ever holds the file.
#[test]
fn rebase_judges_every_replayed_commit() {
    let repo = TestRepo::new();
    let before = rev(&repo, "main");
    let wt = repo.start("t1", &["--forbid", "secrets/**"]);
    repo.write(&wt, "secrets/key", "k\n");
    commit_all(&repo, &wt, "add secret");
    repo.write(&wt, "src/store/mod.rs", "pub fn store() { 1 }\n");
    commit_all(&repo, &wt, "store");
    // Never undone: refused, nothing lands.
    let json = repo
        .task_root(&["merge", "t1", "--rebase", "--json"])
        .code(1)
        .json();
    assert_refused_unchanged(&repo, &json, "contract_violation", &before);
    assert_eq!(json["violations"][0]["file"], "secrets/key");
    repo.git(&wt, &["rm", "-q", "secrets/key"]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 1 }\n");
    commit_all(&repo, &wt, "hide it");
    repo.task_root(&["merge", "t1", "--rebase", "--json"]).ok();
    let landed = repo.git(repo.root(), &["rev-list", &format!("{before}..main")]);
    assert!(!landed.is_empty());
    for commit in landed.lines() {
        let files = repo.git(repo.root(), &["ls-tree", "-r", "--name-only", commit]);
        assert!(!files.contains("secrets/key"), "{commit}: {files}");
    }
    let files = repo.git(repo.root(), &["ls-tree", "-r", "--name-only", "main"]);
    assert!(!files.contains("secrets/key"), "{files}");
    assert!(files.contains("src/lib.rs"), "{files}");
}

/// An evil merge commit in the task's history (a merge whose tree adds a forbidden change of its
/// own) cannot slip past `--rebase`, `--merge` or the squash.
#[test]
fn evil_merge_commit_does_not_land() {
    for mode in ["--rebase", "--merge", "--squash"] {
        let repo = TestRepo::new();
        let wt = repo.start("t1", &["--forbid", "src/store/**"]);
        repo.write(repo.root(), "docs/base.md", "base\n");
        commit_all(&repo, repo.root(), "base work");
        repo.write(&wt, "src/lib.rs", "pub fn lib() { 1 }\n");
        commit_all(&repo, &wt, "task work");
        // Merge the base, and amend the merge with a forbidden change.
        repo.git(&wt, &["merge", "-q", "--no-edit", "main"]);
        repo.write(&wt, "src/store/mod.rs", "// evil\n");
        repo.git(&wt, &["add", "-A"]);
        repo.git(
            &wt,
            &["commit", "-q", "--amend", "--no-edit", "--no-verify"],
        );
        let before = rev(&repo, "main");
        let run = repo.task_root(&["merge", "t1", mode, "--json"]);
        if mode == "--rebase" && run.code == 0 {
            // The merge commit is not replayed, so its change must not be on the target.
            assert_eq!(show(&repo, "main", "src/store/mod.rs"), "pub fn store() {}");
            assert_eq!(show(&repo, "main", "src/lib.rs"), "pub fn lib() { 1 }");
        } else {
            assert_eq!(run.code, 1, "{mode}: {run}");
            assert_refused_unchanged(&repo, &run.json(), "contract_violation", &before);
        }
    }
}

/// Checks run on the tree that would land, in a clean checkout: they see the base's newer
/// work, not the agent's ignored files; ignored files they need come from the main worktree.
#[test]
fn checks_run_on_the_landing_tree() {
    let repo = TestRepo::new();
    repo.write(repo.root(), ".gitignore", "deps/\n");
    repo.write(repo.root(), ".worktreeinclude", "deps/**\n");
    commit_all(&repo, repo.root(), "ignore deps");
    repo.write(repo.root(), "deps/tool", "from main\n");
    let wt = repo.start(
        "t1",
        &[
            "--check",
            "test -f docs/base.md && test \"$(cat deps/tool)\" = 'from main' && test ! -e .git",
        ],
    );
    // The agent plants its own copy of an ignored tool.
    repo.write(&wt, "deps/tool", "from the agent\n");
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 1 }\n");
    commit_all(&repo, &wt, "task work");
    // The base moves on after the start.
    repo.write(repo.root(), "docs/base.md", "base\n");
    commit_all(&repo, repo.root(), "base work");
    repo.task_root(&["merge", "t1", "--json"]).ok();
}

/// A failing check keeps the checkout it ran in and says where it is.
#[test]
fn failed_check_keeps_its_checkout() {
    let repo = TestRepo::new();
    let before = rev(&repo, "main");
    let wt = repo.start("t1", &["--check", "test -f never-there"]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 1 }\n");
    commit_all(&repo, &wt, "task work");
    let json = repo.task_root(&["merge", "t1", "--json"]).code(1).json();
    assert_eq!(json["kind"], "checks_failed");
    let dir = json["checkout"].as_str().expect("checkout path");
    assert!(Path::new(dir).join("src/lib.rs").is_file(), "{json}");
    std::fs::remove_dir_all(dir).unwrap();
    assert_eq!(rev(&repo, "main"), before);
}

/// `merge` run from inside the task's own worktree completes and says where to go.
#[test]
fn merge_from_inside_the_task_worktree_completes() {
    let repo = TestRepo::new();
    let wt = repo.start("t1", &[]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 1 }\n");
    commit_all(&repo, &wt, "task work");
    let run = repo.task(&wt.join("src"), &["merge"]).ok();
    assert!(run.stderr.contains("cd "), "{run}");
    assert!(!wt.exists(), "the worktree is removed");
    assert_eq!(show(&repo, "main", "src/lib.rs"), "pub fn lib() { 1 }");
    assert!(repo.refs("refs/heads/task/").is_empty());
    let wl = repo.git(repo.root(), &["worktree", "list", "--porcelain"]);
    assert!(!wl.contains("repo.tasks/t1"), "{wl}");
    repo.fsck();
}

/// Work written into the task worktree while the merge runs (here by a check) did not land:
/// the merge refuses rather than delete it with the worktree.
#[test]
fn work_made_during_the_merge_is_kept() {
    let repo = TestRepo::new();
    let before = rev(&repo, "main");
    let wt_path = repo.task_dir("t1");
    let late = wt_path.join("late.txt");
    let check = format!("echo late > '{}'", late.display());
    let wt = repo.start("t1", &["--check", &check]);
    assert_eq!(wt, wt_path);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 1 }\n");
    commit_all(&repo, &wt, "task work");
    let json = repo.task_root(&["merge", "t1", "--json"]).code(1).json();
    assert_refused_unchanged(&repo, &json, "uncommitted_work", &before);
    assert_eq!(std::fs::read_to_string(&late).unwrap(), "late\n");
}

/// The repair restores from the common ancestor of task and base, never the base's newer work.
#[test]
fn repair_never_hands_the_task_the_bases_newer_work() {
    let repo = TestRepo::new();
    let lines = |first: &str, last: &str| format!("{first}\n2\n3\n4\n5\n6\n7\n8\n{last}\n");
    repo.write(repo.root(), "src/store/mod.rs", &lines("1", "9"));
    commit_all(&repo, repo.root(), "store");
    let start = rev(&repo, "main");
    let wt = repo.start("t1", &["--forbid", "src/store/**"]);
    repo.write(&wt, "src/store/mod.rs", &lines("task", "9"));
    commit_all(&repo, &wt, "forbidden");
    repo.write(repo.root(), "src/store/mod.rs", &lines("1", "newer"));
    commit_all(&repo, repo.root(), "base work");
    let newer = rev(&repo, "main");
    for args in [
        &["check", "t1", "--json"][..],
        &["merge", "t1", "--json"][..],
    ] {
        let json = repo.task_root(args).code(1).json();
        let repair = json["repair"].as_str().unwrap_or_else(|| panic!("{json}"));
        assert!(repair.contains(&start), "{args:?}: {repair}");
        assert!(!repair.contains(&newer), "{args:?}: {repair}");
    }
    // Following the repair makes the merge land, and the base keeps its newer work.
    let source = format!("--source={start}");
    repo.git(
        &wt,
        &[
            "restore",
            &source,
            "--staged",
            "--worktree",
            "--",
            "src/store/mod.rs",
        ],
    );
    commit_all(&repo, &wt, "repair");
    repo.task_root(&["merge", "t1"]).ok();
    assert_eq!(
        show(&repo, "main", "src/store/mod.rs"),
        lines("1", "newer").trim_end()
    );
}

/// On a terminal the checks' output streams to stderr as they run (here under `script`, a pty).
#[test]
fn check_output_streams_on_a_terminal() {
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        if std::env::var_os("CI").is_some() {
            panic!("util-linux 'script' is needed for this test");
        }
        eprintln!("SKIPPED check_output_streams_on_a_terminal: no 'script' program");
        return;
    }
    let repo = TestRepo::new();
    let wt = repo.start("t1", &["--check", "echo streamed-check-output"]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 1 }\n");
    commit_all(&repo, &wt, "task work");
    let line = format!("{} merge t1", crate::common::bin().display());
    let mut cmd = repo.command("script", repo.root());
    cmd.args(["-qec", &line, "/dev/null"]);
    let out = cmd.output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("streamed-check-output"), "{text}");
    // Without a terminal the output is kept for --json and not printed.
    let wt2 = repo.start("t2", &["--check", "echo quiet-check-output"]);
    repo.write(&wt2, "README.md", "# two\n");
    commit_all(&repo, &wt2, "task work");
    let run = repo.task_root(&["merge", "t2"]).ok();
    assert!(!run.stderr.contains("quiet-check-output"), "{run}");
}

/// `start --reset` that freezes a new contract is not mistaken for a rewritten record.
#[test]
fn reset_with_a_new_contract_is_not_tampering() {
    let repo = TestRepo::new();
    let wt = repo.start("t1", &["--allow", "src/lib.rs", "--allow", "README.md"]);
    repo.task_root(&["start", "t1", "--reset", "--allow", "README.md"])
        .ok();
    repo.write(&wt, "README.md", "# changed\n");
    commit_all(&repo, &wt, "task work");
    let json = repo.task_root(&["merge", "t1", "--json"]).ok().json();
    assert_eq!(json["kind"], "merge", "{json}");
}

/// `merge` never overwrites an ignored file in the checked-out base: it refuses, nothing moves.
#[test]
fn merge_refuses_to_overwrite_an_ignored_file_in_the_base_worktree() {
    let repo = TestRepo::new();
    repo.write(repo.root(), ".gitignore", "*.out\n");
    commit_all(&repo, repo.root(), "ignore");
    repo.write(repo.root(), "x.out", "precious\n");
    let wt = repo.start("t1", &[]);
    repo.write(&wt, "x.out", "task\n");
    repo.git(&wt, &["add", "-f", "x.out"]);
    repo.git(&wt, &["commit", "-q", "--no-verify", "-m", "add ignored"]);
    let before = rev(&repo, "main");
    let json = repo.task_root(&["merge", "t1", "--json"]).code(1).json();
    assert_refused_unchanged(&repo, &json, "target_dirty", &before);
    assert_eq!(json["paths"], serde_json::json!(["x.out"]));
    assert_eq!(repo.read(repo.root(), "x.out"), "precious\n");
}
