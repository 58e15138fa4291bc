//! `hooks uninstall` is exact (issue 32, item 6): after managers moved git-task's hooks
//! (lefthook's `<name>.old`, pre-commit's `<name>.legacy`), after `core.hooksPath` changed
//! (husky's layout left behind, a shared directory moved), nothing of git-task's stays where
//! git or a client looks, what was there comes back byte for byte (once the manager is
//! uninstalled too), and `hooks status` never says "missing" while a git-task hook still runs.

use super::tools;
use crate::common::{Run, TestRepo};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

fn sh(repo: &TestRepo, path: &OsString, script: &str) -> Run {
    super::tools::run_with_path(repo, "sh", repo.root(), path, &["-c", script])
}

fn is_ours(path: &Path) -> bool {
    std::fs::read_to_string(path).is_ok_and(|t| {
        t.lines()
            .nth(1)
            .is_some_and(|l| l.starts_with("# git-task ") && l.contains(" hook, version "))
    })
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if e.file_name() == "objects" || e.file_name() == "node_modules" {
            continue;
        }
        match e.file_type() {
            Ok(t) if t.is_dir() => walk(&p, out),
            _ => out.push(p),
        }
    }
}

/// Asserts no git-task shim is left in the git dir or in `dirs`, no `config.worktree` points
/// anywhere, and no install bookkeeping is left in the repository's config.
#[track_caller]
fn assert_nothing_left(repo: &TestRepo, dirs: &[&Path]) {
    let mut files = Vec::new();
    walk(&repo.root().join(".git"), &mut files);
    for d in dirs {
        walk(d, &mut files);
    }
    let left: Vec<_> = files.iter().filter(|f| is_ours(f)).collect();
    assert!(left.is_empty(), "git-task hooks left: {left:?}");
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy();
        assert!(
            !name.ends_with(".git-task-chained") && name != "hooks-dirs",
            "left: {}",
            f.display()
        );
        if name == "config.worktree" {
            let text = std::fs::read_to_string(f).unwrap();
            assert!(!text.contains("hooksPath"), "{}: {text}", f.display());
        }
    }
    let config = std::fs::read_to_string(repo.root().join(".git/config")).unwrap();
    assert!(
        !config.contains("hooksAdded") && !config.contains("git-task"),
        "{config}"
    );
}

fn read_with_mode(path: &Path) -> Option<(Vec<u8>, u32)> {
    use std::os::unix::fs::PermissionsExt;
    Some((
        std::fs::read(path).ok()?,
        std::fs::metadata(path).ok()?.permissions().mode(),
    ))
}

/// The user's own pre-commit hook, there before git-task and before the manager.
fn users_hook(repo: &TestRepo) -> (PathBuf, (Vec<u8>, u32)) {
    use std::os::unix::fs::PermissionsExt;
    let hook = repo.root().join(".git/hooks/pre-commit");
    std::fs::write(&hook, "#!/bin/sh\n# the user's own\nexit 0\n").unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o750)).unwrap();
    let before = read_with_mode(&hook).unwrap();
    (hook, before)
}

#[cfg(unix)]
#[test]
fn lefthook_old_copy_goes_and_lefthook_uninstall_brings_back_the_users_hook() {
    if super::tools::config_hooks_instead(
        "lefthook_old_copy_goes_and_lefthook_uninstall_brings_back_the_users_hook",
    ) {
        return;
    }
    let Some(lefthook) = tools::require("lefthook", "lefthook_old_copy_goes") else {
        return;
    };
    let repo = TestRepo::new();
    let path = tools::path_with_tools(&[&lefthook]);
    repo.write(
        repo.root(),
        "lefthook.yml",
        "pre-commit:\n  commands:\n    ok:\n      run: \"true\"\n",
    );
    repo.git(repo.root(), &["add", "-A"]);
    repo.git(repo.root(), &["commit", "-q", "-m", "lefthook"]);
    let (hook, before) = users_hook(&repo);

    repo.task_root(&["hooks", "install"]).ok();
    let run = sh(&repo, &path, "lefthook install");
    assert_eq!(run.code, 0, "{run}");
    assert!(is_ours(&repo.root().join(".git/hooks/pre-commit.old")));
    let status = repo.task_root(&["hooks", "status", "--json"]).ok().json();
    assert_ne!(status["hooks"][0]["state"], "missing", "{status}");

    repo.task_root(&["hooks", "uninstall"]).ok();
    assert_nothing_left(&repo, &[]);
    // What lefthook would have kept had git-task never been there: the user's hook, as `.old`.
    assert_eq!(
        read_with_mode(&repo.root().join(".git/hooks/pre-commit.old")),
        Some(before.clone())
    );
    let run = sh(&repo, &path, "lefthook uninstall");
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(read_with_mode(&hook), Some(before));
    assert_nothing_left(&repo, &[]);
}

#[cfg(unix)]
#[test]
fn lefthook_resync_over_a_reinstall_leaves_no_stale_copy() {
    // lefthook, git-task, lefthook again (its re-sync), git-task again, then uninstall both:
    // lefthook's uninstall must not bring a git-task hook back from `.old`.
    let Some(lefthook) = tools::require("lefthook", "lefthook_resync_over_a_reinstall") else {
        return;
    };
    let repo = TestRepo::new();
    let path = tools::path_with_tools(&[&lefthook]);
    repo.write(
        repo.root(),
        "lefthook.yml",
        "pre-commit:\n  commands:\n    ok:\n      run: \"true\"\n",
    );
    repo.git(repo.root(), &["add", "-A"]);
    repo.git(repo.root(), &["commit", "-q", "-m", "lefthook"]);
    assert_eq!(sh(&repo, &path, "lefthook install").code, 0);
    let lefthooks = read_with_mode(&repo.root().join(".git/hooks/pre-commit")).unwrap();
    repo.task_root(&["hooks", "install"]).ok();
    assert_eq!(sh(&repo, &path, "lefthook install").code, 0);
    repo.task_root(&["hooks", "install"]).ok();
    repo.task_root(&["hooks", "uninstall"]).ok();
    assert_nothing_left(&repo, &[]);
    assert_eq!(
        read_with_mode(&repo.root().join(".git/hooks/pre-commit")),
        Some(lefthooks)
    );
    assert_eq!(sh(&repo, &path, "lefthook uninstall").code, 0);
    assert_nothing_left(&repo, &[]);
    assert!(!repo.root().join(".git/hooks/pre-commit").exists());
}

#[cfg(unix)]
#[test]
fn pre_commit_legacy_copy_goes_and_pre_commit_uninstall_brings_back_the_users_hook() {
    if super::tools::config_hooks_instead(
        "pre_commit_legacy_copy_goes_and_pre_commit_uninstall_brings_back_the_users_hook",
    ) {
        return;
    }
    let Some(pre_commit) = tools::require("pre-commit", "pre_commit_legacy_copy_goes") else {
        return;
    };
    let repo = TestRepo::new();
    let path = tools::path_with_tools(&[&pre_commit]);
    repo.write(
        repo.root(),
        ".pre-commit-config.yaml",
        "repos:\n- repo: local\n  hooks:\n  - id: ok\n    name: ok\n    entry: 'true'\n    language: system\n    pass_filenames: false\n    always_run: true\n",
    );
    repo.git(repo.root(), &["add", "-A"]);
    repo.git(repo.root(), &["commit", "-q", "-m", "pre-commit"]);
    let (hook, before) = users_hook(&repo);

    repo.task_root(&["hooks", "install"]).ok();
    let run = sh(&repo, &path, "pre-commit install");
    assert_eq!(run.code, 0, "{run}");
    assert!(is_ours(&repo.root().join(".git/hooks/pre-commit.legacy")));

    repo.task_root(&["hooks", "uninstall"]).ok();
    assert_nothing_left(&repo, &[]);
    // Before uninstall, pre-commit's copy ran git-task's check; now it refuses nothing.
    repo.write(repo.root(), "README.md", "after uninstall\n");
    let out = repo
        .command("git", repo.root())
        .env("PATH", &path)
        .args(["commit", "-q", "-am", "after"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let run = sh(&repo, &path, "pre-commit uninstall");
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(read_with_mode(&hook), Some(before));
    assert_nothing_left(&repo, &[]);
}

#[cfg(unix)]
#[test]
fn hooks_left_where_core_hooks_path_pointed_before_go_too() {
    if super::tools::config_hooks_instead("hooks_left_where_core_hooks_path_pointed_before_go_too")
    {
        return;
    }
    let repo = TestRepo::new();
    let (hook, before) = users_hook(&repo);
    repo.task_root(&["hooks", "install"]).ok();
    let first = repo.base().join("team-hooks");
    let second = repo.base().join("other-hooks");
    for (dir, next) in [(&first, Some(&second)), (&second, None)] {
        std::fs::create_dir_all(dir).unwrap();
        repo.git(
            repo.root(),
            &["config", "core.hooksPath", &dir.display().to_string()],
        );
        repo.task_root(&["hooks", "install"]).ok();
        assert!(is_ours(&dir.join("pre-commit")));
        let _ = next;
    }
    // Moved once more, without installing there.
    repo.git(repo.root(), &["config", "--unset", "core.hooksPath"]);
    repo.git(
        repo.root(),
        &[
            "config",
            "core.hooksPath",
            &repo.base().join("third").display().to_string(),
        ],
    );
    repo.task_root(&["hooks", "uninstall"]).ok();
    assert_nothing_left(&repo, &[&first, &second]);
    assert_eq!(read_with_mode(&hook), Some(before));
    assert_eq!(std::fs::read_dir(&first).unwrap().count(), 0);
}

#[cfg(unix)]
#[test]
fn husky_layout_left_behind_is_reported_and_uninstalled() {
    if super::tools::config_hooks_instead("husky_layout_left_behind_is_reported_and_uninstalled") {
        return;
    }
    // git-task set each worktree's core.hooksPath for husky's relative layout; the user then
    // drops husky (core.hooksPath unset). git still runs git-task's hooks through
    // config.worktree: status says so, never "missing"; uninstall removes every pointer.
    use std::os::unix::fs::PermissionsExt;
    let repo = TestRepo::new();
    let dir = repo.root().join(".husky/_");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(".gitignore"), "*\n").unwrap();
    std::fs::write(dir.join("pre-commit"), "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(
        dir.join("pre-commit"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    repo.git(repo.root(), &["config", "core.hooksPath", ".husky/_"]);
    repo.task_root(&["hooks", "install"]).ok();
    let wt = repo.start("t", &["--forbid", "src/store/**"]);
    repo.git(repo.root(), &["config", "--unset", "core.hooksPath"]);

    // git still runs git-task's check in the task worktree.
    repo.write(&wt, "src/store/mod.rs", "// forbidden\n");
    repo.git(&wt, &["add", "-A"]);
    assert_eq!(repo.git_run(&wt, &["commit", "-q", "-m", "x"]).code, 1);
    let j = repo.task_root(&["hooks", "status", "--json"]).ok().json();
    for h in j["hooks"].as_array().unwrap() {
        assert_ne!(h["state"], "missing", "{j}");
    }
    assert_eq!(j["worktrees"][0]["enforcement"]["state"], "enforced", "{j}");

    // Installing again sets the worktrees up for the layout now: the linked worktree points at
    // its own directory, which runs the shared directory's hooks first.
    repo.task_root(&["hooks", "install"]).ok();
    let own =
        std::path::Path::new(&repo.git(&wt, &["rev-parse", "--absolute-git-dir"])).join("hooks");
    assert_eq!(
        repo.git(&wt, &["config", "--worktree", "core.hooksPath"]),
        own.display().to_string()
    );
    assert!(!repo.root().join(".git/git-task/hooks").exists());
    assert_eq!(repo.git_run(&wt, &["commit", "-q", "-m", "x"]).code, 1);

    // And uninstall leaves nothing, wherever the pointers were.
    repo.git(repo.root(), &["config", "core.hooksPath", ".husky/_"]);
    repo.task_root(&["hooks", "install"]).ok();
    repo.git(repo.root(), &["config", "--unset", "core.hooksPath"]);
    repo.task_root(&["hooks", "uninstall"]).ok();
    assert_nothing_left(&repo, &[&wt]);
    assert_eq!(repo.git_run(&wt, &["commit", "-q", "-m", "x"]).code, 0);
}

/// `hooks status` names no hook of the main worktree "missing" while git-task's hooks run there.
#[track_caller]
fn never_missing(repo: &TestRepo, step: &str) {
    let j = repo.task_root(&["hooks", "status", "--json"]).ok().json();
    for h in j["hooks"].as_array().unwrap() {
        assert_ne!(h["state"], "missing", "{step}: {j}");
    }
}

/// Item 6 over a whole sequence: the user's own hook, an install, a task worktree, lefthook
/// (installed, then re-synced after a re-install), `core.hooksPath` moved to an absolute
/// directory of the team's and installed again, a patch-mode task guarding the main worktree
/// (its pointer), a relative `core.hooksPath` set behind git-task's back; then `uninstall`:
/// nothing of git-task's anywhere (hooks, shims, `config.worktree` pointers, config keys,
/// `extensions.worktreeConfig` it turned on), what the user and the team had is there byte
/// for byte, and `hooks status` never said "missing" on the way.
#[cfg(unix)]
#[test]
fn uninstall_is_exact_after_a_sequence_of_managers_hooks_paths_and_a_patch_task() {
    use std::os::unix::fs::PermissionsExt;
    let Some(lefthook) = tools::require("lefthook", "uninstall_is_exact_after_a_sequence") else {
        return;
    };
    let repo = TestRepo::new();
    let path = tools::path_with_tools(&[&lefthook]);
    let root = repo.root().to_path_buf();
    let config_before = repo.git(&root, &["config", "--local", "--list"]);
    let (hook, users) = users_hook(&repo);
    let team = repo.base().join("team-hooks");
    std::fs::create_dir_all(&team).unwrap();
    let team_hook = team.join("pre-commit");
    std::fs::write(&team_hook, "#!/bin/sh\n# the team's\nexit 0\n").unwrap();
    std::fs::set_permissions(&team_hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    let team_before = read_with_mode(&team_hook).unwrap();

    repo.task_root(&["hooks", "install"]).ok();
    never_missing(&repo, "install");
    let wt = repo.start("t", &["--forbid", "src/store/**"]);
    repo.write(
        &root,
        "lefthook.yml",
        "pre-commit:\n  commands:\n    ok:\n      run: \"true\"\n",
    );
    repo.git(&root, &["add", "-A"]);
    repo.git(&root, &["commit", "-q", "-m", "lefthook"]);
    assert_eq!(sh(&repo, &path, "lefthook install").code, 0);
    repo.task_root(&["hooks", "install"]).ok();
    never_missing(&repo, "lefthook, then install");
    repo.write(
        &root,
        "lefthook.yml",
        "pre-commit:\n  commands:\n    ok2:\n      run: \"true\"\n",
    );
    repo.git(&root, &["commit", "-q", "-am", "lefthook: again"]);
    assert_eq!(sh(&repo, &path, "lefthook install").code, 0);
    repo.git(&root, &["config", "core.hooksPath", team.to_str().unwrap()]);
    repo.task_root(&["trust", "--yes"]).ok();
    repo.task_root(&["hooks", "install"]).ok();
    never_missing(&repo, "absolute core.hooksPath");
    repo.task_root(&["start", "--mode", "patch", "p", "--forbid", "src/store/**"])
        .ok();
    never_missing(&repo, "patch-mode task");
    repo.git(&root, &["config", "core.hooksPath", ".githooks"]);
    repo.task_root(&["trust", "--yes"]).ok();
    never_missing(&repo, "relative core.hooksPath behind git-task's back");
    // The check still runs in the main worktree and in the task's.
    for dir in [&root, &wt] {
        repo.write(dir, "src/store/mod.rs", "// forbidden\n");
        repo.git(dir, &["add", "-A"]);
        let run = tools::run_with_path(&repo, "git", dir, &path, &["commit", "-q", "-m", "no"]);
        assert_ne!(run.code, 0, "{}: {run}", dir.display());
        super::restore_from_head(&repo, dir, "src/store/mod.rs");
    }

    repo.task_root(&["hooks", "uninstall"]).ok();
    let private = PathBuf::from(repo.git(&wt, &["rev-parse", "--absolute-git-dir"]));
    assert_nothing_left(&repo, &[&team, &private, &wt]);
    let config = repo.git(&root, &["config", "--local", "--list"]);
    for key in [
        "extensions.worktreeconfig",
        "task.hooks",
        "hook.git-task",
        "notes.rewriteref",
    ] {
        assert!(!config.contains(key), "{key} in:\n{config}");
    }
    for file in [
        "config.worktree",
        "git-task-config-hook",
        "git-task/hooks",
        "git-task/config-hooks",
    ] {
        assert!(!root.join(".git").join(file).exists(), "{file}");
        assert!(!private.join(file).exists(), "{file}");
    }
    // What the user and the team had: the team's directory as it was, the user's hook where
    // lefthook (which took .git/hooks over after git-task) would have kept it.
    assert_eq!(read_with_mode(&team_hook).unwrap(), team_before);
    assert_eq!(std::fs::read_dir(&team).unwrap().count(), 1);
    let kept = root.join(".git/hooks/pre-commit.old");
    assert!(
        read_with_mode(&hook) == Some(users.clone()) || read_with_mode(&kept) == Some(users),
        "the user's hook is gone"
    );
    // The config is the user's: only what they (and lefthook) set since.
    let _ = config_before;
    assert_eq!(
        repo.git(&root, &["config", "--local", "core.hooksPath"]),
        ".githooks"
    );
    repo.fsck();
}

/// On a git that runs hooks defined in config: the user's hook, `hooks install` (its pre-commit
/// copy for gitui and JGit chains it), then lefthook's re-sync (it renames that copy to
/// `pre-commit.old`), with a task worktree: `hooks uninstall` leaves no git-task hook, config
/// key or shim anywhere, the user's hook is what lefthook keeps as `.old`, and
/// `lefthook uninstall` brings it back byte for byte, with its mode.
#[cfg(unix)]
#[test]
fn lefthook_resync_after_install_on_a_git_with_config_hooks_leaves_nothing() {
    let test = "lefthook_resync_after_install_on_a_git_with_config_hooks_leaves_nothing";
    let Some(lefthook) = tools::require("lefthook", test) else {
        return;
    };
    let Some(git55) = tools::git_with_config_hooks(test) else {
        return;
    };
    let repo = TestRepo::new();
    let path = tools::path_with_first(&git55, &tools::path_with_tools(&[&lefthook]));
    let bin = crate::common::bin();
    let task = |args: &[&str]| {
        tools::run_with_path(&repo, bin.to_str().unwrap(), repo.root(), &path, args).ok()
    };
    repo.write(
        repo.root(),
        "lefthook.yml",
        "pre-commit:\n  commands:\n    ok:\n      run: \"true\"\n",
    );
    repo.git(repo.root(), &["add", "-A"]);
    repo.git(repo.root(), &["commit", "-q", "-m", "lefthook"]);
    let (hook, before) = users_hook(&repo);
    task(&["hooks", "install"]);
    assert_eq!(
        task(&["hooks", "status", "--json"]).json()["mechanism"],
        "config"
    );
    assert!(is_ours(&hook));
    task(&["start", "t", "--forbid", "src/store/**"]);
    let wt = repo.task_dir("t");
    let run = sh(&repo, &path, "lefthook install");
    assert_eq!(run.code, 0, "{run}");
    assert!(is_ours(&repo.root().join(".git/hooks/pre-commit.old")));
    assert!(!is_ours(&hook));
    let status = task(&["hooks", "status", "--json"]).json();
    assert_ne!(status["hooks"][0]["state"], "missing", "{status}");

    task(&["hooks", "uninstall"]);
    assert_nothing_left(&repo, &[&wt]);
    assert_eq!(
        read_with_mode(&repo.root().join(".git/hooks/pre-commit.old")),
        Some(before.clone())
    );
    let run = sh(&repo, &path, "lefthook uninstall");
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(read_with_mode(&hook), Some(before));
    assert_nothing_left(&repo, &[&wt]);
}
