//! Patch mode (SPEC §9): the task's changes are the difference between the snapshot's state and
//! the current one. The user's own uncommitted edits made before `start --mode patch`, left as
//! they were, are not the task's: `check`, `merge` (accept), the pre-commit hook, `status` and
//! `list` agree on that. And a patch-mode `revert` never moves HEAD back past commits that are
//! not the task's own.

use crate::common::all_refs;
use crate::common::TestRepo;
use std::path::PathBuf;

/// A repository with `forbidden/x` and `src/a` committed, hooks installed, the user's own
/// uncommitted edit of `forbidden/x` (staged when `staged`), then a patch-mode task `p` that may
/// change `src/**` only.
fn user_edit_then_start(staged: bool) -> (TestRepo, PathBuf) {
    let repo = TestRepo::new();
    let root = repo.root().to_path_buf();
    repo.write(&root, "forbidden/x", "x v0\n");
    repo.write(&root, "src/a", "a v0\n");
    repo.git(&root, &["add", "-A"]);
    repo.git(&root, &["commit", "-q", "-m", "more files"]);
    repo.task_root(&["hooks", "install"]).ok();
    repo.write(&root, "forbidden/x", "x edited by the user\n");
    if staged {
        repo.git(&root, &["add", "forbidden/x"]);
    }
    repo.task_root(&["start", "--mode", "patch", "p", "--allow", "src/**"])
        .ok();
    (repo, root)
}

fn check_json(repo: &TestRepo, code: i32) -> serde_json::Value {
    repo.task_root(&["check", "p", "--json"]).code(code).json()
}

fn status_paths(repo: &TestRepo) -> Vec<String> {
    let json = repo.task_root(&["status", "p", "--json"]).ok().json();
    let mut paths: Vec<String> = json["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_owned())
        .collect();
    paths.sort();
    paths
}

fn list_changed(repo: &TestRepo) -> u64 {
    let json = repo.task_root(&["list", "--json"]).ok().json();
    json["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == "p")
        .expect("p is listed")["changed_files"]
        .as_u64()
        .unwrap()
}

fn violation_files(json: &serde_json::Value) -> Vec<String> {
    json["violations"]
        .as_array()
        .map(|v| {
            v.iter()
                .map(|x| x["file"].as_str().unwrap_or_default().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// The user's pre-start edit (unstaged) is not the task's: check, status, list, the hook and the
/// accept all see only `src/a`.
#[test]
fn pre_start_edit_is_not_the_tasks() {
    pre_start_edit_is_not_the_tasks_with(false);
}

/// The same with the user's pre-start edit staged.
#[test]
fn pre_start_staged_edit_is_not_the_tasks() {
    pre_start_edit_is_not_the_tasks_with(true);
}

fn pre_start_edit_is_not_the_tasks_with(staged: bool) {
    let (repo, root) = user_edit_then_start(staged);
    repo.write(&root, "src/a", "a edited by the agent\n");
    let json = check_json(&repo, 0);
    assert_eq!(json["checked"], 1, "{json}");
    assert_eq!(status_paths(&repo), vec!["src/a".to_owned()]);
    assert_eq!(list_changed(&repo), 1);
    // The agent commits its file through the hook.
    repo.git(&root, &["add", "src/a"]);
    let commit = repo.git_run(&root, &["commit", "-q", "-m", "agent work"]);
    assert_eq!(commit.code, 0, "{commit}");
    check_json(&repo, 0);
    assert_eq!(status_paths(&repo), vec!["src/a".to_owned()]);
    assert_eq!(list_changed(&repo), 1);
    // Committing the user's own edit as it was is not the task's change either (when staged
    // before the start, it went into the commit above).
    if !staged {
        repo.git(&root, &["add", "forbidden/x"]);
        let user = repo.git_run(&root, &["commit", "-q", "-m", "the user's edit"]);
        assert_eq!(user.code, 0, "{user}");
    }
    assert_eq!(
        repo.git(&root, &["show", "HEAD:forbidden/x"]),
        "x edited by the user"
    );
    check_json(&repo, 0);
    assert_eq!(list_changed(&repo), 1);
    // The accept passes and leaves everything in place.
    let accepted = repo.task_root(&["merge", "p", "--json"]).ok().json();
    assert_eq!(accepted["kind"], "accept");
    assert_eq!(repo.read(&root, "forbidden/x"), "x edited by the user\n");
    assert_eq!(repo.read(&root, "src/a"), "a edited by the agent\n");
    repo.fsck();
}

/// The agent editing the pre-start-edited file further is the task's change: check, status,
/// list, the hook and the accept all refuse it.
#[test]
fn further_edit_of_a_pre_start_edit_is_judged() {
    for staged in [false, true] {
        let (repo, root) = user_edit_then_start(staged);
        repo.write(&root, "src/a", "a edited by the agent\n");
        repo.write(&root, "forbidden/x", "x edited by the agent\n");
        let json = check_json(&repo, 1);
        assert_eq!(violation_files(&json), vec!["forbidden/x".to_owned()]);
        assert_eq!(
            status_paths(&repo),
            vec!["forbidden/x".to_owned(), "src/a".to_owned()]
        );
        assert_eq!(list_changed(&repo), 2);
        repo.git(&root, &["add", "forbidden/x", "src/a"]);
        let commit = repo.git_run(&root, &["commit", "-q", "-m", "agent work"]);
        assert_eq!(commit.code, 1, "{commit}");
        assert!(commit.stderr.contains("forbidden/x"), "{commit}");
        let refused = repo.task_root(&["merge", "p"]).code(1);
        assert!(refused.stderr.contains("forbidden/x"), "{refused}");
        assert_eq!(repo.refs("refs/tasks/p/snapshot").len(), 1);
    }
}

/// The agent restoring the pre-start-edited file to HEAD's content undoes the user's work: the
/// task's change, judged everywhere (its content differs from the snapshot's).
#[test]
fn undoing_a_pre_start_edit_is_judged() {
    let (repo, root) = user_edit_then_start(false);
    repo.git(&root, &["checkout", "--", "forbidden/x"]);
    let json = check_json(&repo, 1);
    assert_eq!(violation_files(&json), vec!["forbidden/x".to_owned()]);
    assert_eq!(list_changed(&repo), 1);
    repo.task_root(&["merge", "p"]).code(1);
}

/// A commit that restores a path the branch changed since the start to its old content is
/// judged by the hook (the snapshot's content only exempts the user's own pre-start edits).
#[test]
fn hook_judges_a_restore_of_the_snapshot_head_content() {
    let (repo, root) = user_edit_then_start(false);
    // A commit made since the start changes forbidden/y (the task's, made without the hook).
    repo.write(&root, "forbidden/y", "y new\n");
    repo.git(&root, &["add", "forbidden/y"]);
    repo.git(&root, &["commit", "-q", "--no-verify", "-m", "sneak"]);
    // Deleting it again stages the snapshot HEAD's state (no such file): still judged.
    repo.git(&root, &["rm", "-q", "forbidden/y"]);
    let commit = repo.git_run(&root, &["commit", "-q", "-m", "undo"]);
    assert_eq!(commit.code, 1, "{commit}");
    assert!(commit.stderr.contains("forbidden/y"), "{commit}");
}

/// A patch-mode task in the main worktree; another task merged into `main` meanwhile (the gate
/// moves the checked-out branch): `revert` keeps that merge, restores only the task's paths and
/// saves an attempt first.
#[test]
fn patch_revert_keeps_another_tasks_merge() {
    let repo = TestRepo::new();
    let root = repo.root().to_path_buf();
    repo.write(&root, "src/a", "a v0\n");
    repo.git(&root, &["add", "-A"]);
    repo.git(&root, &["commit", "-q", "-m", "src/a"]);
    let other = repo.start("other", &[]);
    repo.task_root(&["start", "--mode", "patch", "p"]).ok();
    let snap_head = repo.git(&root, &["rev-parse", "HEAD"]);
    // The task commits its own work in the main worktree.
    repo.write(&root, "src/a", "a by p\n");
    repo.git(&root, &["commit", "-q", "-am", "p's commit"]);
    // Another task lands on main meanwhile.
    repo.write(&other, "docs/other.md", "other's work\n");
    repo.git(&other, &["add", "-A"]);
    repo.git(&other, &["commit", "-q", "-m", "other's work"]);
    repo.task_root(&["merge", "other", "--no-checks"]).ok();
    let merged = repo.git(&root, &["rev-parse", "HEAD"]);
    assert_ne!(merged, snap_head);
    assert_eq!(repo.read(&root, "docs/other.md"), "other's work\n");
    // And more uncommitted work of the task.
    repo.write(&root, "src/new", "new by p\n");

    let run = repo.task_root(&["revert", "p", "--json"]).ok();
    let head = repo.git(&root, &["rev-parse", "HEAD"]);
    // The other task's merge is still on main, whatever happened.
    assert_eq!(
        repo.git_run(&root, &["merge-base", "--is-ancestor", &merged, "HEAD"])
            .code,
        0,
        "HEAD {head} lost the merge {merged}"
    );
    assert_eq!(repo.read(&root, "docs/other.md"), "other's work\n");
    {
        // Only the task's paths went back; an attempt holds what was discarded.
        assert_eq!(head, merged);
        assert_eq!(repo.read(&root, "src/a"), "a v0\n");
        assert!(!root.join("src/new").exists());
        let json = run.json();
        let attempt = json["attempt"]["ref"].as_str().unwrap().to_owned();
        assert_eq!(
            repo.git(&root, &["show", &format!("{attempt}:src/a")]),
            "a by p"
        );
        assert_eq!(
            repo.git(&root, &["show", &format!("{attempt}:src/new")]),
            "new by p"
        );
        // git agrees: the undo of p's commit is staged, docs/other.md untouched.
        let porcelain = repo.porcelain(&root);
        assert!(porcelain.contains("M  src/a"), "{porcelain}");
        assert!(!porcelain.contains("docs/other.md"), "{porcelain}");
    }
    // Reverting again finds nothing of the task's left.
    let again = repo.task_root(&["revert", "p", "--json"]).ok().json();
    assert!(again["attempt"].is_null(), "{again}");
    assert_eq!(repo.git(&root, &["rev-parse", "HEAD"]), merged);
    repo.fsck();
}

/// Builds: patch task `p` in the main worktree commits `src/a`, then task `other` (which also
/// changed `src/a` when `clash`) is merged into `main` meanwhile.
fn task_commit_then_other_merge(clash: bool) -> (TestRepo, PathBuf, String) {
    let repo = TestRepo::new();
    let root = repo.root().to_path_buf();
    repo.write(&root, "src/a", "a v0\nline 2\nline 3\nline 4\n");
    repo.git(&root, &["add", "-A"]);
    repo.git(&root, &["commit", "-q", "-m", "src/a"]);
    let other = repo.start("other", &[]);
    repo.task_root(&["start", "--mode", "patch", "p"]).ok();
    repo.write(&root, "src/a", "a by p\nline 2\nline 3\nline 4\n");
    repo.git(&root, &["commit", "-q", "-am", "p's commit"]);
    if clash {
        repo.write(&other, "src/a", "a v0\nline 2\nline 3\nline 4 by other\n");
    }
    repo.write(&other, "docs/other.md", "other's work\n");
    repo.git(&other, &["add", "-A"]);
    repo.git(&other, &["commit", "-q", "-m", "other's work"]);
    repo.task_root(&["merge", "other", "--no-checks"]).ok();
    let merged = repo.git(&root, &["rev-parse", "HEAD"]);
    (repo, root, merged)
}

/// When the task and another task's merge both changed a file, nothing can be put back without
/// undoing the other's work: `revert` refuses (exit 1, a hint), changes nothing, saves nothing;
/// `revert --path` of the task's other files still works.
#[test]
fn patch_revert_refuses_a_path_both_changed() {
    let (repo, root, merged) = task_commit_then_other_merge(true);
    repo.write(&root, "src/b", "new by p\n");
    let before = (
        all_refs(&repo),
        repo.porcelain(&root),
        repo.read(&root, "src/a"),
    );
    let run = repo.task_root(&["revert", "p"]).code(1);
    assert!(
        run.stderr.contains("src/a") && run.stderr.contains("hint:"),
        "{run}"
    );
    assert_eq!(
        (
            all_refs(&repo),
            repo.porcelain(&root),
            repo.read(&root, "src/a")
        ),
        before
    );
    repo.task_root(&["revert", "p", "--path", "src/b"]).ok();
    assert!(!root.join("src/b").exists());
    assert_eq!(repo.git(&root, &["rev-parse", "HEAD"]), merged);
    assert_eq!(repo.refs("refs/tasks/p/attempts/").len(), 1);
    // Reverting a path only the other task changed is not the task's to undo: nothing to do.
    let docs = repo
        .task_root(&["revert", "p", "--path", "docs/other.md", "--json"])
        .ok()
        .json();
    assert!(docs["attempt"].is_null(), "{docs}");
    assert_eq!(repo.read(&root, "docs/other.md"), "other's work\n");
    repo.fsck();
}

/// `reset` of a patch-mode task moves HEAD back too: with another task's merge on the branch
/// since the start, it refuses with a hint and changes nothing.
#[test]
fn patch_reset_refuses_to_drop_another_tasks_merge() {
    let (repo, root, merged) = task_commit_then_other_merge(true);
    let before = (all_refs(&repo), repo.porcelain(&root));
    let run = repo.task_root(&["reset", "p"]).code(2);
    assert!(run.stderr.contains("hint:"), "{run}");
    assert_eq!((all_refs(&repo), repo.porcelain(&root)), before);
    assert_eq!(repo.git(&root, &["rev-parse", "HEAD"]), merged);
}

/// With only the task's own commits since the snapshot, `revert` restores HEAD, index and files
/// exactly to the snapshot (the round trip of SPEC §9).
#[test]
fn patch_revert_moves_head_back_over_own_commits() {
    let repo = TestRepo::new();
    let root = repo.root().to_path_buf();
    repo.write(&root, "README.md", "user's edit\n");
    repo.task_root(&["start", "--mode", "patch", "p"]).ok();
    let snap_head = repo.git(&root, &["rev-parse", "HEAD"]);
    repo.write(&root, "src/lib.rs", "pub fn p() {}\n");
    repo.git(&root, &["commit", "-q", "-am", "p one"]);
    repo.write(&root, "src/lib.rs", "pub fn p2() {}\n");
    repo.git(&root, &["commit", "-q", "-am", "p two", "--amend"]);
    repo.task_root(&["revert", "p"]).ok();
    assert_eq!(repo.git(&root, &["rev-parse", "HEAD"]), snap_head);
    assert_eq!(repo.read(&root, "README.md"), "user's edit\n");
    assert_eq!(repo.read(&root, "src/lib.rs"), "pub fn lib() {}\n");
    assert_eq!(repo.porcelain(&root), " M README.md");
    assert_eq!(repo.refs("refs/tasks/p/attempts/").len(), 1);
}

/// A commit that reached the branch from elsewhere (not made in this worktree) is not the task's:
/// HEAD stays, the task's own files go back to the snapshot, and a file that commit changed and
/// the task edited further goes back to HEAD's content (the other commit's work is kept).
#[test]
fn patch_revert_keeps_a_commit_from_elsewhere() {
    let repo = TestRepo::new();
    let root = repo.root().to_path_buf();
    repo.task_root(&["start", "--mode", "patch", "p"]).ok();
    repo.write(&root, "src/lib.rs", "pub fn p() {}\n");
    // Someone moves main to a commit made elsewhere (as a push or fetch into it would).
    let tip = repo.git(&root, &["rev-parse", "HEAD"]);
    let blob = crate::common::git_stdin(
        &repo,
        &["hash-object", "-w", "--stdin"],
        "# from elsewhere\n",
    );
    let listing = repo.git(&root, &["ls-tree", "HEAD"]);
    let readme = listing
        .lines()
        .map(|l| {
            if l.ends_with("\tREADME.md") {
                format!("100644 blob {blob}\tREADME.md")
            } else {
                l.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let tree = crate::common::git_stdin(&repo, &["mktree"], &format!("{readme}\n"));
    let foreign = crate::common::git_stdin(
        &repo,
        &["commit-tree", &tree, "-p", &tip],
        "from elsewhere\n",
    );
    repo.git(
        &root,
        &[
            "update-ref",
            "-m",
            "push",
            "refs/heads/main",
            &foreign,
            &tip,
        ],
    );
    // The worktree follows by hand; then the task edits README.md further.
    repo.git(&root, &["checkout", "HEAD", "--", "README.md"]);
    repo.write(&root, "README.md", "# from elsewhere, edited by p\n");

    let run = repo.task_root(&["revert", "p", "--json"]).ok();
    assert_eq!(repo.git(&root, &["rev-parse", "HEAD"]), foreign, "{run}");
    let json = run.json();
    assert_eq!(json["kept_commits"][0], foreign.as_str(), "{run}");
    // Saved first: the attempt holds what was put back.
    let attempt = json["attempt"]["ref"].as_str().unwrap().to_owned();
    assert_eq!(
        repo.git(&root, &["show", &format!("{attempt}:README.md")]),
        "# from elsewhere, edited by p"
    );
    assert_eq!(
        repo.git(&root, &["show", &format!("{attempt}:src/lib.rs")]),
        "pub fn p() {}"
    );
    assert_eq!(repo.read(&root, "src/lib.rs"), "pub fn lib() {}\n");
    assert_eq!(repo.read(&root, "README.md"), "# from elsewhere\n");
    assert_eq!(repo.porcelain(&root), "");
    let human = repo.task_root(&["revert", "p"]).ok();
    assert!(human.stderr.contains("Nothing to revert"), "{human}");
    repo.fsck();
}

/// `revert --path` naming something outside the worktree is bad input: exit 2, nothing changed.
#[test]
fn revert_path_outside_the_worktree_is_refused() {
    let repo = TestRepo::new();
    let root = repo.root().to_path_buf();
    repo.task_root(&["start", "--mode", "patch", "p"]).ok();
    repo.write(&root, "src/lib.rs", "pub fn p() {}\n");
    repo.write(&repo.base(), "x", "outside\n");
    let before = (all_refs(&repo), repo.porcelain(&root));
    let elsewhere = repo.base().join("x").display().to_string();
    for bad in ["../x", "src/../../x", elsewhere.as_str()] {
        let run = repo.task_root(&["revert", "p", "--path", bad]).code(2);
        assert!(run.stderr.contains("error:"), "{run}");
        assert_eq!((all_refs(&repo), repo.porcelain(&root)), before, "{bad}");
    }
    let wt = repo.start("w", &[]);
    repo.write(&wt, "src/lib.rs", "pub fn w() {}\n");
    let before = (all_refs(&repo), repo.porcelain(&wt));
    for bad in ["../x", "/etc/passwd"] {
        let run = repo.task(&wt, &["revert", "--path", bad]).code(2);
        assert!(run.stderr.contains("error:"), "{run}");
        assert_eq!((all_refs(&repo), repo.porcelain(&wt)), before, "{bad}");
    }
    // An absolute path inside the worktree still works.
    let inside = wt.join("src/lib.rs").display().to_string();
    repo.task(&wt, &["revert", "--path", &inside]).ok();
    assert_eq!(repo.read(&wt, "src/lib.rs"), "pub fn lib() {}\n");
    assert_eq!(repo.read(&repo.base(), "x"), "outside\n");
}

/// Another task merged meanwhile into the branch checked out in the patch task's worktree: the
/// snapshot follows the landing, so its files are not the task's: check, status, list and the
/// accept see only the task's own work, and the hook lets the task commit on top.
#[test]
fn another_tasks_merge_is_not_the_patch_tasks() {
    let repo = TestRepo::new();
    let root = repo.root().to_path_buf();
    repo.task_root(&["hooks", "install"]).ok();
    let other = repo.start("other", &[]);
    repo.write(&root, "README.md", "the user's own edit\n");
    repo.task_root(&["start", "--mode", "patch", "p", "--allow", "src/**"])
        .ok();
    repo.write(&root, "src/lib.rs", "pub fn p() {}\n");
    repo.git(
        &root,
        &["commit", "-q", "-m", "p's commit", "--", "src/lib.rs"],
    );
    repo.write(&other, "docs/other.md", "other's work\n");
    repo.git(&other, &["add", "-A"]);
    repo.git(&other, &["commit", "-q", "-m", "other's work"]);
    repo.task_root(&["merge", "other", "--no-checks"]).ok();
    let merged = repo.git(&root, &["rev-parse", "HEAD"]);
    assert_eq!(repo.read(&root, "docs/other.md"), "other's work\n");
    assert_eq!(
        repo.git(&root, &["rev-parse", "refs/tasks/p/snapshot^1"]),
        merged
    );
    let json = check_json(&repo, 0);
    assert_eq!(json["checked"], 1, "{json}");
    assert_eq!(status_paths(&repo), vec!["src/lib.rs".to_owned()]);
    assert_eq!(list_changed(&repo), 1);
    repo.write(&root, "src/more.rs", "// more\n");
    repo.git(&root, &["add", "src/more.rs"]);
    let commit = repo.git_run(&root, &["commit", "-q", "-m", "more"]);
    assert_eq!(commit.code, 0, "{commit}");
    // A further edit of the landed file is the task's.
    repo.write(&root, "docs/other.md", "changed by p\n");
    let json = check_json(&repo, 1);
    assert_eq!(violation_files(&json), vec!["docs/other.md".to_owned()]);
    repo.git(&root, &["checkout", "--", "docs/other.md"]);
    let accepted = repo.task_root(&["merge", "p", "--json"]).ok().json();
    assert_eq!(accepted["kind"], "accept");
    assert_eq!(repo.read(&root, "README.md"), "the user's own edit\n");
    repo.fsck();
}

/// When the landing touches a file the task's own commit changed, the snapshot cannot follow:
/// it stays, and the landing counts as the task's changes (a refusal, never a hole).
#[test]
fn a_landing_on_the_tasks_own_file_is_not_followed() {
    let (repo, root, merged) = task_commit_then_other_merge(true);
    assert_ne!(
        repo.git(&root, &["rev-parse", "refs/tasks/p/snapshot^1"]),
        merged
    );
    let json = repo.task_root(&["check", "p", "--json"]).ok().json();
    assert_eq!(json["checked"], 2, "{json}");
}

/// `git task commit` in patch mode commits the task's work and leaves the user's own pre-start
/// edit uncommitted, as it was.
#[test]
fn task_commit_leaves_the_pre_start_edit() {
    let (repo, root) = user_edit_then_start(false);
    repo.write(&root, "src/a", "a edited by the agent\n");
    let json = repo.task_root(&["commit", "p", "--json"]).ok().json();
    assert_eq!(json["files"], serde_json::json!(["src/a"]), "{json}");
    assert_eq!(json["skipped"][0]["path"], "forbidden/x", "{json}");
    assert_eq!(json["skipped"][0]["reason"], "before_start", "{json}");
    assert_eq!(
        repo.git(&root, &["show", "HEAD:src/a"]),
        "a edited by the agent"
    );
    assert_eq!(repo.porcelain(&root), " M forbidden/x");
    check_json(&repo, 0);
}

/// HEAD on another branch than the one the task started on: `revert` refuses (exit 2, a hint)
/// and changes nothing, even when that branch has commits that are not the task's.
#[test]
fn patch_revert_refuses_off_the_tasks_branch() {
    let repo = TestRepo::new();
    let root = repo.root().to_path_buf();
    repo.task_root(&["start", "--mode", "patch", "p"]).ok();
    repo.git(&root, &["switch", "-q", "-c", "side"]);
    repo.write(&root, "src/lib.rs", "pub fn side() {}\n");
    repo.git(&root, &["commit", "-q", "-am", "on side"]);
    repo.write(&root, "src/lib.rs", "pub fn side2() {}\n");
    let before = (all_refs(&repo), repo.porcelain(&root));
    let run = repo.task_root(&["revert", "p"]).code(2);
    assert!(
        run.stderr.contains("'side'") && run.stderr.contains("hint:"),
        "{run}"
    );
    assert_eq!((all_refs(&repo), repo.porcelain(&root)), before);
}

/// A commit made with `git task commit` is the task's own too: `revert` takes HEAD back over it.
#[test]
fn patch_revert_moves_head_back_over_a_task_commit() {
    let repo = TestRepo::new();
    let root = repo.root().to_path_buf();
    repo.task_root(&["start", "--mode", "patch", "p"]).ok();
    let snap_head = repo.git(&root, &["rev-parse", "HEAD"]);
    repo.write(&root, "src/lib.rs", "pub fn p() {}\n");
    repo.task_root(&["commit", "p", "-m", "by git task commit"])
        .ok();
    assert_ne!(repo.git(&root, &["rev-parse", "HEAD"]), snap_head);
    let json = repo.task_root(&["revert", "p", "--json"]).ok().json();
    assert_eq!(json["moved_head"], true, "{json}");
    assert_eq!(repo.git(&root, &["rev-parse", "HEAD"]), snap_head);
    assert_eq!(repo.porcelain(&root), "");
}
