//! The `reference-transaction` hook through real git: in a task's worktree only the task's own
//! branch moves; the user's worktrees move what they like, and each move of a base is on file.

use crate::common::{Run, TestRepo};
use std::path::Path;

/// Every ref with its object: what must not change when a ref update is refused.
fn all_refs(repo: &TestRepo) -> String {
    repo.git(
        repo.root(),
        &["for-each-ref", "--format=%(objectname) %(refname)"],
    )
}

fn rev(repo: &TestRepo, rev: &str) -> String {
    repo.git(repo.root(), &["rev-parse", rev])
}

/// Asserts git refused `args` in `dir` with the hook's message, and no ref moved.
#[track_caller]
fn refused(repo: &TestRepo, dir: &Path, args: &[&str], refname: &str) {
    let before = all_refs(repo);
    let run = repo.git_run(dir, args);
    assert_ne!(run.code, 0, "git {args:?} was allowed:\n{run}");
    assert!(
        run.stderr
            .contains(&format!("refusing to update '{refname}'"))
            && run.stderr.contains("may move only its own branch"),
        "git {args:?} was not refused by the hook:\n{run}"
    );
    assert_eq!(all_refs(repo), before, "git {args:?} moved a ref");
}

/// Hooks installed, tasks t1 (with one commit) and t2 started, branches `feature` and
/// `release` beside `main`; returns t1's worktree.
fn setup(repo: &TestRepo) -> std::path::PathBuf {
    repo.git(repo.root(), &["branch", "feature"]);
    repo.git(repo.root(), &["branch", "release"]);
    repo.task_root(&["hooks", "install"]).ok();
    let wt = repo.start("t1", &[]);
    repo.start("t2", &[]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 1 }\n");
    repo.git(&wt, &["commit", "-q", "-am", "own work"]);
    wt
}

#[test]
fn a_task_worktree_moves_no_ref_but_its_own_branch() {
    let repo = TestRepo::new();
    let wt = setup(&repo);
    // t3's branch is checked out nowhere (its worktree went away with git): git would delete it.
    let wt3 = repo.start("t3", &[]);
    repo.git(
        repo.root(),
        &["worktree", "remove", "--force", wt3.to_str().unwrap()],
    );
    refused(
        &repo,
        &wt,
        &["update-ref", "refs/heads/main", "HEAD"],
        "refs/heads/main",
    );
    refused(
        &repo,
        &wt,
        &["branch", "-f", "feature", "HEAD"],
        "refs/heads/feature",
    );
    refused(
        &repo,
        &wt,
        &["branch", "-D", "task/t3"],
        "refs/heads/task/t3",
    );
    refused(
        &repo,
        &wt,
        &["update-ref", "-d", "refs/heads/task/t2"],
        "refs/heads/task/t2",
    );
    refused(&repo, &wt, &["branch", "new-one"], "refs/heads/new-one");
    refused(
        &repo,
        &wt,
        &["update-ref", "refs/tasks/t2/record", "HEAD"],
        "refs/tasks/t2/record",
    );
    refused(
        &repo,
        &wt,
        &["update-ref", "-d", "refs/tasks/t1/record"],
        "refs/tasks/t1/record",
    );
    refused(&repo, &wt, &["tag", "v1"], "refs/tags/v1");
    refused(
        &repo,
        &wt,
        &["update-ref", "refs/remotes/origin/main", "HEAD"],
        "refs/remotes/origin/main",
    );
    refused(
        &repo,
        &wt,
        &["replace", "-f", "HEAD", "HEAD~1"],
        &format!("refs/replace/{}", rev(&repo, "task/t1")),
    );
    // The notes ref only by a notes commit on its tip, never set to another commit.
    refused(
        &repo,
        &wt,
        &["update-ref", "refs/notes/tasks", "HEAD"],
        "refs/notes/tasks",
    );
    // Another worktree's HEAD.
    refused(
        &repo,
        &wt,
        &["update-ref", "--no-deref", "main-worktree/HEAD", "HEAD"],
        "main-worktree/HEAD",
    );
    repo.fsck();
}

#[test]
fn a_push_into_the_repository_from_a_task_worktree_is_refused() {
    let repo = TestRepo::new();
    let wt = setup(&repo);
    // `push .` runs receive-pack in the task worktree's git dir.
    refused(
        &repo,
        &wt,
        &["push", "-q", ".", "HEAD:release"],
        "refs/heads/release",
    );
    // By the repository's path, receive-pack runs in the main git dir: the pusher is the task.
    let root = repo.root().display().to_string();
    refused(
        &repo,
        &wt,
        &["push", "-q", &root, "HEAD:refs/heads/release"],
        "refs/heads/release",
    );
    // From the main worktree, the user pushes where they like.
    let tip = rev(&repo, "task/t1");
    repo.git(
        repo.root(),
        &["push", "-q", ".", "task/t1:refs/heads/release"],
    );
    assert_eq!(rev(&repo, "release"), tip);
}

/// Detached, or switched to another branch, the worktree is still the task's.
#[test]
fn a_task_worktree_stays_the_tasks_off_its_branch() {
    let repo = TestRepo::new();
    let wt = setup(&repo);
    repo.git(&wt, &["checkout", "-q", "--detach"]);
    refused(
        &repo,
        &wt,
        &["update-ref", "refs/heads/main", "HEAD"],
        "refs/heads/main",
    );
    repo.git(&wt, &["checkout", "-q", "feature"]);
    refused(
        &repo,
        &wt,
        &["update-ref", "refs/heads/main", "HEAD"],
        "refs/heads/main",
    );
    repo.write(&wt, "docs/x.md", "x\n");
    repo.git(&wt, &["add", "-A"]);
    let run = repo.git_run(&wt, &["commit", "-q", "--no-verify", "-m", "on feature"]);
    assert_ne!(
        run.code, 0,
        "a commit on another branch was allowed:\n{run}"
    );
    assert_eq!(rev(&repo, "feature"), rev(&repo, "main"));
    repo.git(&wt, &["checkout", "-q", "-f", "task/t1"]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 2 }\n");
    repo.git(&wt, &["commit", "-q", "-am", "back on its branch"]);
}

#[test]
fn the_tasks_own_branch_moves_as_usual() {
    let repo = TestRepo::new();
    let wt = setup(&repo);
    let first = rev(&repo, "task/t1");
    // A checkpoint puts a note on a commit of the branch; amend and rebase carry it along
    // (notes.rewriteRef moves refs/notes/tasks from the task's worktree).
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 2 }\n");
    repo.git(&wt, &["commit", "-q", "-am", "two"]);
    repo.git(
        &wt,
        &["notes", "--ref=tasks", "add", "-m", "a note", "HEAD"],
    );
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 3 }\n");
    let run = repo.git_run(
        &wt,
        &["commit", "-q", "-a", "--amend", "-m", "two, amended"],
    );
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(
        repo.git(&wt, &["notes", "--ref=tasks", "show", "HEAD"]),
        "a note",
        "the note did not follow the amended commit"
    );
    repo.git(&wt, &["reset", "-q", "--hard", "HEAD~1"]);
    assert_eq!(rev(&repo, "task/t1"), first);
    // The base moves on (the user, in the main worktree); the task rebases onto it.
    repo.write(repo.root(), "docs/user.md", "user\n");
    repo.git(repo.root(), &["add", "-A"]);
    repo.git(repo.root(), &["commit", "-q", "-m", "user work"]);
    let run = repo.git_run(&wt, &["rebase", "-q", "main"]);
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(
        repo.git(repo.root(), &["merge-base", "task/t1", "main"]),
        rev(&repo, "main")
    );
    repo.git(&wt, &["stash", "list"]);
    repo.fsck();
}

/// The JSON of `git task audit main`.
fn audit(repo: &TestRepo) -> serde_json::Value {
    repo.task_root(&["audit", "main", "--json"]).ok().json()
}

#[test]
fn the_user_moves_the_base_and_the_hook_notes_it_as_the_main_worktree() {
    let repo = TestRepo::new();
    setup(&repo);
    repo.write(repo.root(), "docs/user.md", "user\n");
    repo.git(repo.root(), &["add", "-A"]);
    repo.git(repo.root(), &["commit", "-q", "-m", "user work"]);
    let after_commit = rev(&repo, "main");
    repo.git(repo.root(), &["update-ref", "refs/heads/main", "HEAD~1"]);
    let moves = audit(&repo)["moves"].as_array().unwrap().clone();
    let root = repo.root().display().to_string();
    let last_two: Vec<(String, String)> = moves[moves.len() - 2..]
        .iter()
        .map(|m| {
            (
                m["new"].as_str().unwrap().to_owned(),
                m["who"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        last_two,
        vec![
            (after_commit, format!("worktree {root}")),
            (rev(&repo, "main"), format!("worktree {root}")),
        ],
        "{moves:?}"
    );
    assert!(moves.iter().all(|m| m["by"] != "unattributed"), "{moves:?}");
    assert!(moves.iter().any(|m| m["main_worktree"] == true));
    // Nothing to report: every move was seen.
    let run = repo.task_root(&["list"]).ok();
    assert!(!run.stderr.contains("base_moved_unattributed"), "{run}");
}

/// Points the installed `reference-transaction` shim at a wrapper that logs each call, so a
/// test sees when git-task is started.
#[cfg(unix)]
fn log_calls(repo: &TestRepo) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let log = repo.base().join("calls.log");
    let wrapper = repo.base().join("git-task-wrapper");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\necho \"$*\" >>'{}'\nexec '{}' \"$@\"\n",
            log.display(),
            crate::common::bin().display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    // The shared directory's, and each linked worktree's own (which git runs there).
    let mut hooks = vec![repo.root().join(".git/hooks/reference-transaction")];
    for e in std::fs::read_dir(repo.root().join(".git/worktrees"))
        .into_iter()
        .flatten()
        .flatten()
    {
        hooks.push(e.path().join("hooks/reference-transaction"));
    }
    for hook in hooks.into_iter().filter(|h| h.exists()) {
        edit_bin(&hook, &wrapper);
    }
    log
}

#[cfg(unix)]
fn edit_bin(hook: &std::path::Path, wrapper: &std::path::Path) {
    let text = std::fs::read_to_string(hook).unwrap();
    let edited: String = text
        .lines()
        .map(|l| {
            if l.starts_with("git_task_bin=") {
                format!("git_task_bin='{}'", wrapper.display())
            } else {
                l.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n";
    std::fs::write(hook, edited).unwrap();
}

#[cfg(unix)]
#[test]
fn a_commit_on_a_task_branch_or_an_unwatched_branch_starts_no_git_task() {
    let repo = TestRepo::new();
    let wt = setup(&repo);
    let log = log_calls(&repo);
    let calls = || std::fs::read_to_string(&log).unwrap_or_default();
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 2 }\n");
    repo.git(&wt, &["commit", "-q", "--no-verify", "-am", "more"]);
    repo.git(&wt, &["reset", "-q", "--hard", "HEAD~1"]);
    repo.git(repo.root(), &["checkout", "-q", "feature"]);
    repo.write(repo.root(), "docs/f.md", "f\n");
    repo.git(repo.root(), &["add", "-A"]);
    repo.git(repo.root(), &["commit", "-q", "-m", "on feature"]);
    assert_eq!(calls(), "", "git-task was started");
    // A move of the watched base is noted: git-task runs, once, in the committed state.
    repo.git(repo.root(), &["checkout", "-q", "main"]);
    repo.git(repo.root(), &["merge", "-q", "--ff-only", "feature"]);
    assert_eq!(calls(), "hook reference-transaction committed\n");
    // From a task's worktree, a foreign ref: git-task judges it.
    let run: Run = repo.git_run(&wt, &["update-ref", "refs/heads/feature", "HEAD"]);
    assert_ne!(run.code, 0);
    assert!(
        calls().ends_with("hook reference-transaction prepared\n"),
        "{}",
        calls()
    );
}

#[cfg(unix)]
#[test]
fn uninstall_puts_back_a_foreign_reference_transaction_hook_byte_for_byte() {
    if super::tools::config_hooks_instead(
        "uninstall_puts_back_a_foreign_reference_transaction_hook_byte_for_byte",
    ) {
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let repo = TestRepo::new();
    let hook = repo.root().join(".git/hooks/reference-transaction");
    let seen = repo.base().join("seen.log");
    let foreign = format!(
        "#!/bin/sh\n# the team's own hook\ncat >>'{}'\necho \"$1\" >>'{}'\n",
        seen.display(),
        seen.display()
    );
    std::fs::write(&hook, &foreign).unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o751)).unwrap();
    repo.task_root(&["hooks", "install"]).ok();
    assert!(std::fs::read_to_string(&hook)
        .unwrap()
        .contains("git-task reference-transaction hook"));
    // Installed, the foreign hook still runs first, with git's input.
    let wt = repo.start("t1", &[]);
    std::fs::remove_file(&seen).ok();
    refused(
        &repo,
        &wt,
        &["update-ref", "refs/heads/main", "HEAD"],
        "refs/heads/main",
    );
    let seen_text = std::fs::read_to_string(&seen).unwrap();
    assert!(
        seen_text.contains(" refs/heads/main\nprepared\n"),
        "{seen_text}"
    );
    let status = repo.task_root(&["hooks", "status", "--json"]).ok().json();
    assert!(
        status["hooks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h["name"] == "reference-transaction" && h["state"] == "installed"),
        "{status}"
    );
    repo.task_root(&["hooks", "uninstall"]).ok();
    assert_eq!(std::fs::read_to_string(&hook).unwrap(), foreign);
    assert_eq!(
        std::fs::metadata(&hook).unwrap().permissions().mode() & 0o777,
        0o751
    );
    assert!(!repo
        .root()
        .join(".git/hooks/reference-transaction.git-task-chained")
        .exists());
    let gitdir = repo.git(&wt, &["rev-parse", "--absolute-git-dir"]);
    assert!(
        !Path::new(&gitdir).join("git-task-branch").exists()
            && !Path::new(&gitdir)
                .join("hooks/reference-transaction")
                .exists(),
        "uninstall left git-task's files in the task worktree's git dir"
    );
    // Uninstalled, nothing refuses.
    repo.git(&wt, &["update-ref", "refs/heads/feature", "HEAD"]);
}

/// `git pack-refs` (and `git gc`, automatic maintenance) rewrites every ref as it is: from a
/// task's worktree it is no move, and the ledger notes nothing.
#[test]
fn packing_refs_moves_nothing_and_is_let_through() {
    let repo = TestRepo::new();
    let wt = setup(&repo);
    let before = all_refs(&repo);
    let moves = audit(&repo)["moves"].as_array().unwrap().len();
    repo.git(&wt, &["pack-refs", "--all"]);
    repo.git(&wt, &["gc", "-q"]);
    repo.git(repo.root(), &["pack-refs", "--all"]);
    assert_eq!(all_refs(&repo), before);
    assert_eq!(audit(&repo)["moves"].as_array().unwrap().len(), moves);
    // Packed, the refs are still guarded.
    refused(
        &repo,
        &wt,
        &["update-ref", "-d", "refs/heads/main"],
        "refs/heads/main",
    );
    repo.fsck();
}
