//! Enforcement that holds on git older than 2.54 whatever a hook manager does after
//! `hooks install` (issue 32, item 4): a linked worktree's `config.worktree` points its
//! `core.hooksPath` at git-task's own directory of that worktree (which a per-worktree value
//! wins over: husky, a committed `.githooks` and lefthook write the repository's config or its
//! shared hooks directory, never a worktree's), and the shims there run the hook the repository
//! would otherwise run first. So in either install order a violating commit in a task worktree
//! is refused with the report, from the git CLI, a gitg-like environment and dulwich; and
//! dulwich in the main worktree finds the shims in `.git/hooks` when `core.hooksPath` points
//! elsewhere (item 5).

use super::tools;
use crate::common::{Run, TestRepo};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

fn git(repo: &TestRepo, dir: &Path, path: &OsString, args: &[&str]) -> Run {
    tools::run_with_path(repo, "git", dir, path, args)
}

/// gitg's environment in a linked worktree (see `fail_closed.rs`).
const GITG: &[(&str, &str)] = &[
    ("GIT_DIR", "(null)"),
    ("GIT_INDEX_FILE", ""),
    ("GIT_PREFIX", "."),
];

fn run_as_gitg(repo: &TestRepo, wt: &Path) -> Run {
    let git_dir = PathBuf::from(repo.git(wt, &["rev-parse", "--absolute-git-dir"]));
    let mut cmd = repo.command(git_dir.join("hooks/pre-commit"), wt);
    for (k, v) in GITG {
        cmd.env(k, v);
    }
    Run::of(cmd.stdin(std::process::Stdio::null()).output().unwrap())
}

fn dulwich_commit(repo: &TestRepo, python: &Path, dir: &Path, message: &str) -> Run {
    let out = repo
        .command(python, dir)
        .env_remove("GIT_AUTHOR_DATE")
        .env_remove("GIT_COMMITTER_DATE")
        .args([
            "-c",
            "import sys\nfrom dulwich import porcelain\ntry:\n    porcelain.commit('.', message=sys.argv[1].encode())\nexcept Exception as e:\n    print('refused:', e, file=sys.stderr)\n    sys.exit(1)\n",
            message,
        ])
        .output()
        .unwrap();
    Run::of(out)
}

fn violations(repo: &TestRepo, id: &str) -> usize {
    super::events(repo, id)
        .iter()
        .filter(|e| e["event"] == "violation")
        .count()
}

#[track_caller]
fn refused_with_report(repo: &TestRepo, dir: &Path, run: &Run, before: &str) {
    super::assert_refused(repo, dir, run, before, "src/store/mod.rs", "forbidden");
}

/// A violating commit in task `id`'s worktree `wt` is refused with the report from the git CLI
/// (the check running once), from a gitg-like environment and as git gui runs the hook, and
/// from dulwich when `python` is given.
#[track_caller]
fn blocked_everywhere(
    repo: &TestRepo,
    id: &str,
    wt: &Path,
    path: &OsString,
    python: Option<&Path>,
) {
    let before = super::head(repo, wt);
    repo.write(wt, "src/store/mod.rs", "// forbidden edit\n");
    git(repo, wt, path, &["add", "-A"]);
    let seen = violations(repo, id);
    let run = git(repo, wt, path, &["commit", "-q", "-m", "violation"]);
    refused_with_report(repo, wt, &run, &before);
    assert_eq!(violations(repo, id), seen + 1, "the check ran once");
    refused_with_report(repo, wt, &run_as_gitg(repo, wt), &before);
    // git gui runs the hook it finds where `git rev-parse --git-path hooks` says; the git gui
    // of git 2.54 and later runs `git hook run` (git-gui.sh's githook_read), which runs the
    // hooks defined in config too.
    let gui = match tools::git_runs_config_hooks() {
        true => "git hook run --ignore-missing pre-commit",
        false => "h=$(git rev-parse --path-format=absolute --git-path hooks) && \"$h/pre-commit\"",
    };
    let run = tools::run_with_path(repo, "sh", wt, path, &["-c", gui]);
    refused_with_report(repo, wt, &run, &before);
    if let Some(python) = python {
        let run = dulwich_commit(repo, python, wt, "violation");
        refused_with_report(repo, wt, &run, &before);
    }
    super::restore_from_head(repo, wt, "src/store/mod.rs");
}

fn logging_hook(tag: &str, log: &Path) -> String {
    format!("#!/bin/sh\necho \"{tag} $(pwd)\" >> '{}'\n", log.display())
}

fn logged(log: &Path, tag: &str, dir: &Path) -> usize {
    let want = format!("{tag} {}", dir.display());
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter(|l| *l == want)
        .count()
}

/// Nothing of git-task is left where git or a client looks: no shim, no per-worktree
/// `core.hooksPath`, no `extensions.worktreeConfig` it turned on, no `hook.git-task-*`.
#[track_caller]
fn nothing_left(repo: &TestRepo, worktrees: &[&Path]) {
    let config = repo
        .git_run(repo.root(), &["config", "--local", "--list"])
        .stdout;
    for key in ["extensions.worktreeconfig", "task.hooks", "hook.git-task"] {
        assert!(!config.contains(key), "{key} in:\n{config}");
    }
    let mut dirs = vec![repo.root().join(".git/hooks")];
    for wt in worktrees {
        let git_dir = PathBuf::from(repo.git(wt, &["rev-parse", "--absolute-git-dir"]));
        assert!(!git_dir.join("config.worktree").exists(), "{git_dir:?}");
        dirs.push(git_dir.join("hooks"));
    }
    for dir in dirs {
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let text = std::fs::read_to_string(e.path()).unwrap_or_default();
            assert!(
                !text.contains("# git-task "),
                "{} is git-task's",
                e.path().display()
            );
        }
    }
    assert!(!repo.root().join(".git/git-task/hooks").exists());
    assert!(!repo.root().join(".git/git-task/config-hooks").exists());
}

#[cfg(unix)]
#[test]
fn a_committed_githooks_after_git_task_never_turns_the_check_off() {
    let repo = TestRepo::new();
    let log = repo.base().join("hooks.log");
    let path = tools::path_with_tools(&[]);
    repo.task_root(&["hooks", "install"]).ok();
    let early = repo.start("early", &["--forbid", "src/store/**"]);
    super::commit_githooks(&repo, &logging_hook("team", &log));
    // A changed core.hooksPath is the user's to trust before start runs hooks from it.
    repo.task_root(&["trust", "--yes"]).ok();
    let late = repo.start("late", &["--forbid", "src/store/**"]);
    for (id, wt) in [("early", &early), ("late", &late)] {
        blocked_everywhere(&repo, id, wt, &path, None);
        let j = repo.task_root(&["hooks", "status", "--json"]).ok().json();
        let w = j["worktrees"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["path"] == wt.display().to_string())
            .cloned()
            .unwrap();
        // On a git that runs hooks defined in config, the worktree started before the change
        // is not pointed at git-task's directory: gitui, which reads `.githooks` there and no
        // config hooks, runs no check until `hooks install` runs again (said, and done below).
        let want = match id == "early" && tools::git_runs_config_hooks() {
            true => serde_json::json!({
                "state": "clients_unchecked",
                "clients": ["gitui"],
                "dirs": [".githooks"],
            }),
            false => serde_json::json!({"state": "enforced"}),
        };
        assert_eq!(w["enforcement"], want, "{j}");
    }
    // The worktree started after the change runs the team's hook from its own checkout too.
    let team = logged(&log, "team", &late);
    repo.write(&late, "src/lib.rs", "// late\n");
    let run = git(&repo, &late, &path, &["commit", "-q", "-am", "ok"]);
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(logged(&log, "team", &late), team + 1);
    // The earlier one (whose checkout has the team's hook once it merges main) runs it after
    // an install.
    repo.git(&early, &["merge", "-q", "--no-edit", "main"]);
    repo.task_root(&["hooks", "install"]).ok();
    let j = repo.task_root(&["hooks", "status", "--json"]).ok().json();
    for w in j["worktrees"].as_array().unwrap() {
        assert_eq!(w["enforcement"]["state"], "enforced", "{j}");
    }
    let team = logged(&log, "team", &early);
    repo.write(&early, "src/lib.rs", "// early\n");
    let run = git(&repo, &early, &path, &["commit", "-q", "-am", "ok"]);
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(logged(&log, "team", &early), team + 1);
    repo.task_root(&["hooks", "uninstall"]).ok();
    nothing_left(&repo, &[&early, &late]);
    assert_eq!(repo.git(&early, &["config", "core.hooksPath"]), ".githooks");
    repo.fsck();
}

#[cfg(unix)]
#[test]
fn husky_after_git_task_never_turns_the_check_off_in_any_client() {
    let Some(husky) = tools::require("husky", "husky_after_git_task_never_turns") else {
        return;
    };
    let python = tools::python_with_dulwich("husky_after_git_task_never_turns");
    let repo = TestRepo::new();
    let (log, fail) = (repo.base().join("hooks.log"), repo.base().join("fail"));
    repo.task_root(&["hooks", "install"]).ok();
    let early = repo.start("early", &["--forbid", "src/store/**"]);
    let path = super::managers::husky_repo(&repo, &husky, &log, &fail);
    repo.task_root(&["trust", "--yes"]).ok();
    let late = repo.start("late", &["--forbid", "src/store/**"]);
    for (id, wt) in [("early", &early), ("late", &late)] {
        blocked_everywhere(&repo, id, wt, &path, python.as_deref());
    }
    // husky installing again (every `npm install`), in the main worktree or in a task's,
    // changes nothing of that: it sets the repository's core.hooksPath, never a worktree's.
    let run = tools::run_with_path(
        &repo,
        "sh",
        repo.root(),
        &path,
        &["-c", "node_modules/.bin/husky"],
    );
    assert_eq!(run.code, 0, "{run}");
    let run = tools::run_with_path(&repo, "husky", &early, &path, &[]);
    assert_eq!(run.code, 0, "{run}");
    blocked_everywhere(&repo, "early", &early, &path, None);
    // husky's hooks run in the task worktree started after it (whose checkout has them),
    // before the check; after an install, in the earlier one too once it has them.
    super::managers::both_run_in(&repo, &late, &path, "husky", &log, &fail);
    repo.git(&early, &["merge", "-q", "--no-edit", "main"]);
    repo.task_root(&["hooks", "install"]).ok();
    for wt in [&early, &late] {
        super::managers::both_run_in(&repo, wt, &path, "husky", &log, &fail);
    }
    repo.task_root(&["hooks", "uninstall"]).ok();
    nothing_left(&repo, &[&early, &late]);
    assert_eq!(repo.git(&late, &["config", "core.hooksPath"]), ".husky/_");
    repo.fsck();
}

#[cfg(unix)]
#[test]
fn lefthook_after_git_task_never_turns_the_check_off() {
    let Some(lefthook) = tools::require("lefthook", "lefthook_after_git_task_never_turns") else {
        return;
    };
    let python = tools::python_with_dulwich("lefthook_after_git_task_never_turns");
    let repo = TestRepo::new();
    let log = repo.base().join("hooks.log");
    let path = tools::path_with_tools(&[&lefthook]);
    repo.write(
        repo.root(),
        "lefthook.yml",
        &format!(
            "pre-commit:\n  commands:\n    log:\n      run: echo \"lefthook $(pwd)\" >> '{}'\n",
            log.display()
        ),
    );
    repo.git(repo.root(), &["add", "-A"]);
    repo.git(repo.root(), &["commit", "-q", "-m", "lefthook"]);
    repo.task_root(&["hooks", "install"]).ok();
    let wt = repo.start("t", &["--forbid", "src/store/**"]);
    let run = tools::run_with_path(&repo, "sh", repo.root(), &path, &["-c", "lefthook install"]);
    assert_eq!(run.code, 0, "{run}");
    blocked_everywhere(&repo, "t", &wt, &path, python.as_deref());
    // lefthook's hook runs in the task worktree too.
    repo.write(&wt, "src/lib.rs", "// allowed\n");
    assert_eq!(
        git(&repo, &wt, &path, &["commit", "-q", "-am", "ok"]).code,
        0
    );
    assert!(logged(&log, "lefthook", &wt) >= 1);
    repo.task_root(&["hooks", "uninstall"]).ok();
    nothing_left(&repo, &[&wt]);
}

/// dulwich reads neither config hooks nor `core.hooksPath`: in the main worktree it runs
/// `.git/hooks/pre-commit`, where the shims stay when `core.hooksPath` points elsewhere;
/// git, which never looks there then, still runs the check once.
#[cfg(unix)]
#[test]
fn dulwich_in_the_main_worktree_of_a_patch_task_is_judged_with_a_hooks_path_set() {
    let Some(python) = tools::python_with_dulwich("dulwich_in_the_main_worktree") else {
        return;
    };
    for hooks_path in [".githooks", "absolute"] {
        let repo = TestRepo::new();
        let log = repo.base().join("hooks.log");
        super::commit_githooks(&repo, &logging_hook("team", &log));
        if hooks_path == "absolute" {
            let abs = repo.root().join(".githooks").display().to_string();
            repo.git(repo.root(), &["config", "core.hooksPath", &abs]);
        }
        repo.task_root(&["hooks", "install"]).ok();
        repo.task_root(&["start", "--mode", "patch", "p", "--forbid", "src/store/**"])
            .ok();
        let root = repo.root().to_path_buf();
        let before = super::head(&repo, &root);
        repo.write(&root, "src/store/mod.rs", "// forbidden\n");
        repo.git(&root, &["add", "-A"]);
        let run = dulwich_commit(&repo, &python, &root, "violation");
        refused_with_report(&repo, &root, &run, &before);
        let seen = violations(&repo, "p");
        let team = logged(&log, "team", &root);
        let run = repo.git_run(&root, &["commit", "-q", "-m", "violation"]);
        refused_with_report(&repo, &root, &run, &before);
        assert_eq!(
            violations(&repo, "p"),
            seen + 1,
            "{hooks_path}: once under git"
        );
        assert_eq!(logged(&log, "team", &root), team + 1, "{hooks_path}");
        super::restore_from_head(&repo, &root, "src/store/mod.rs");
        repo.task_root(&["drop", "p"]).ok();
        repo.task_root(&["hooks", "uninstall"]).ok();
        nothing_left(&repo, &[]);
    }
}

/// The main worktree's `config.worktree` value of `core.hooksPath`, if any.
fn main_pointer(repo: &TestRepo) -> Option<String> {
    let file = repo.root().join(".git/config.worktree");
    let run = repo.git_run(
        repo.root(),
        &["config", "--file", file.to_str().unwrap(), "core.hooksPath"],
    );
    (run.code == 0).then(|| run.stdout.trim().to_owned())
}

/// A patch-mode task guards the main worktree like a task worktree: installed before or after
/// git-task (husky setting `core.hooksPath`, lefthook rewriting `.git/hooks`), a manager never
/// turns the check off there (on git older than 2.54 the main worktree's `config.worktree`
/// points `core.hooksPath` at git-task's own directory while the task guards it, and the shims
/// there run the hook the repository's own config names now, once); dropping or removing the
/// task takes the pointer away (the manager's hook alone runs, once), and `uninstall` leaves
/// nothing.
#[cfg(unix)]
#[test]
fn a_patch_task_in_the_main_worktree_outlives_a_manager_in_either_order() {
    let test = "a_patch_task_in_the_main_worktree_outlives_a_manager";
    let (Some(husky), Some(lefthook)) = (
        tools::require("husky", test),
        tools::require("lefthook", test),
    ) else {
        return;
    };
    let config_hooks = tools::git_runs_config_hooks();
    for (manager, first) in [
        ("husky", true),
        ("husky", false),
        ("lefthook", true),
        ("lefthook", false),
    ] {
        let repo = TestRepo::new();
        let root = repo.root().to_path_buf();
        let (log, fail) = (repo.base().join("hooks.log"), repo.base().join("fail"));
        let set_up = |repo: &TestRepo| -> OsString {
            if manager == "husky" {
                return super::managers::husky_repo(repo, &husky, &log, &fail);
            }
            let path = tools::path_with_tools(&[&lefthook]);
            repo.write(
                repo.root(),
                "lefthook.yml",
                &format!(
                    "pre-commit:\n  commands:\n    log:\n      run: echo \"lefthook $(pwd)\" >> '{}' && [ ! -e '{}' ]\n",
                    log.display(),
                    fail.display()
                ),
            );
            repo.git(repo.root(), &["add", "-A"]);
            repo.git(repo.root(), &["commit", "-q", "-m", "lefthook"]);
            let run =
                tools::run_with_path(repo, "sh", repo.root(), &path, &["-c", "lefthook install"]);
            assert_eq!(run.code, 0, "{run}");
            path
        };
        let mut path = tools::path_with_tools(&[]);
        if first {
            path = set_up(&repo);
        }
        repo.task_root(&["hooks", "install"]).ok();
        repo.task_root(&["start", "--mode", "patch", "p", "--forbid", "src/store/**"])
            .ok();
        if !first {
            path = set_up(&repo);
            let list = repo.task_root(&["list"]).ok();
            if manager == "lefthook" && !config_hooks {
                // lefthook run in the main worktree writes its hooks where its core.hooksPath
                // points, git-task's directory, over git-task's: a commit is refused loudly,
                // every command says so, and `hooks install` puts lefthook's hook behind the
                // check.
                assert!(
                    list.stderr
                        .contains("commits in the main worktree (patch-mode task 'p')"),
                    "{list}"
                );
                assert!(list.stderr.contains("git task hooks install"), "{list}");
                let before = super::head(&repo, &root);
                repo.write(&root, "src/store/mod.rs", "// forbidden\n");
                git(&repo, &root, &path, &["add", "-A"]);
                let run = git(&repo, &root, &path, &["commit", "-q", "-m", "violation"]);
                assert_ne!(run.code, 0, "{run}");
                assert!(run.stderr.contains("git task hooks install"), "{run}");
                assert_eq!(super::head(&repo, &root), before);
                super::restore_from_head(&repo, &root, "src/store/mod.rs");
                repo.task_root(&["hooks", "install"]).ok();
            } else if config_hooks {
                // git runs the check (hooks defined in config); gitui (and JGit, when lefthook
                // moved the copy in .git/hooks) no longer find git-task's pre-commit copy where
                // they read hooks: every command says so, and `hooks install` puts it back.
                let clients = match manager {
                    "husky" => "gitui",
                    _ => "gitui and JGit",
                };
                assert!(
                    list.stderr.contains(&format!(
                        "commits made with {clients} in the main worktree (patch-mode task 'p') are not checked"
                    )),
                    "{manager}: {list}"
                );
                assert!(
                    list.stderr.contains("the git CLI still runs the check"),
                    "{list}"
                );
                assert!(list.stderr.contains("git task hooks install"), "{list}");
                repo.task_root(&["hooks", "install"]).ok();
                let list = repo.task_root(&["list"]).ok();
                assert!(!list.stderr.contains("warning"), "{manager}: {list}");
            } else {
                // Every command says the check holds: no warning about this worktree.
                assert!(!list.stderr.contains("warning"), "{manager}: {list}");
            }
        }
        let tag = format!("{manager} first={first}");
        // Hooks defined in config need no pointer, except under the relative core.hooksPath
        // husky set (before the install, or before it ran again): gitui reads it (and no config
        // hooks).
        if config_hooks && manager == "lefthook" {
            assert_eq!(main_pointer(&repo), None, "{tag}");
        } else {
            assert_eq!(
                main_pointer(&repo).as_deref(),
                Some(root.join(".git/git-task/hooks").to_str().unwrap()),
                "{tag}"
            );
        }
        let status = repo.task_root(&["status", "p"]).ok();
        assert!(!status.stderr.contains("warning"), "{tag}: {status}");
        // Refused with the report, the manager's hook ran once; a clean commit goes through.
        super::managers::both_run_in(&repo, &root, &path, manager, &log, &fail);
        if !config_hooks && manager == "husky" && !first {
            // As gitg runs the hook git-task's pointer names (GIT_DIR=(null)): the manager's
            // hook is found all the same, and the check refuses (lefthook itself fails under
            // that environment, which stops the commit before the check).
            let before = super::head(&repo, &root);
            repo.write(&root, "src/store/mod.rs", "// forbidden by gitg\n");
            repo.git(&root, &["add", "-A"]);
            let ran = logged(&log, manager, &root);
            let mut cmd = repo.command(root.join(".git/git-task/hooks/pre-commit"), &root);
            cmd.env("PATH", &path);
            for (k, v) in GITG {
                cmd.env(k, v);
            }
            let run = Run::of(cmd.stdin(std::process::Stdio::null()).output().unwrap());
            refused_with_report(&repo, &root, &run, &before);
            assert_eq!(logged(&log, manager, &root), ran + 1, "{tag}: {run}");
            super::restore_from_head(&repo, &root, "src/store/mod.rs");
        }
        let seen = |log: &Path| logged(log, manager, &root);
        if first {
            repo.task_root(&["drop", "p"]).ok();
        } else {
            repo.task_root(&["remove", "p"]).ok();
        }
        // The guard's pointer goes; the one a relative core.hooksPath at install time needs
        // (husky first; husky at all where the install ran again under it) stays, as every
        // worktree's does.
        let stays = manager == "husky" && (first || config_hooks);
        assert_eq!(
            main_pointer(&repo).is_some(),
            stays,
            "{tag}: the guard is lifted"
        );
        // The user's own commit: free, and the manager's hook runs once.
        let before = seen(&log);
        repo.write(&root, "src/store/mod.rs", "// the user's\n");
        git(&repo, &root, &path, &["add", "-A"]);
        let run = git(&repo, &root, &path, &["commit", "-q", "-m", "mine"]);
        assert_eq!(run.code, 0, "{tag}: {run}");
        assert_eq!(seen(&log), before + 1, "{tag}");
        repo.task_root(&["hooks", "uninstall"]).ok();
        nothing_left(&repo, &[]);
        repo.write(&root, "src/store/mod.rs", "// after\n");
        let run = git(&repo, &root, &path, &["commit", "-q", "-am", "after"]);
        assert_eq!(run.code, 0, "{tag}: {run}");
        assert_eq!(seen(&log), before + 2, "{tag}");
        repo.fsck();
    }
}
