//! The contract beside real hook managers (husky v9, lefthook, pre-commit) and a
//! committed `.githooks`, each set up before and after `git task hooks install`:
//! both the manager's hook and the contract run in the main worktree and in every
//! task worktree, a failure of either blocks the commit, `git status` stays clean,
//! and `uninstall` puts everything back byte for byte.

use super::tools;
use crate::common::{Run, TestRepo};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

fn sh(repo: &TestRepo, dir: &Path, path: &OsString, script: &str) -> Run {
    super::tools::run_with_path(repo, "sh", dir, path, &["-c", script])
}

fn git(repo: &TestRepo, dir: &Path, path: &OsString, args: &[&str]) -> Run {
    super::tools::run_with_path(repo, "git", dir, path, args)
}

/// A hook body that logs `<tag> <cwd>` and fails while the file `fail` exists.
fn logging_hook(tag: &str, log: &Path, fail: &Path) -> String {
    format!(
        "echo \"{tag} $(pwd)\" >> '{}'\n[ ! -e '{}' ]\n",
        log.display(),
        fail.display()
    )
}

fn log_lines(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// What a commit in a task worktree must show: a violation is refused with the report and the
/// manager's hook ran there; a clean commit goes through and the manager ran again; the
/// manager's failure blocks a clean commit.
#[track_caller]
pub(super) fn both_run_in(
    repo: &TestRepo,
    wt: &Path,
    path: &OsString,
    tag: &str,
    log: &Path,
    fail: &Path,
) {
    let before = repo.git(wt, &["rev-parse", "HEAD"]);
    let ran = |n: usize| {
        let want = format!("{tag} {}", wt.display());
        let got = log_lines(log).iter().filter(|l| **l == want).count();
        assert_eq!(got, n, "'{want}' lines in {:?}", log_lines(log));
    };
    let already = log_lines(log)
        .iter()
        .filter(|l| **l == format!("{tag} {}", wt.display()))
        .count();
    repo.write(wt, "src/store/mod.rs", "// forbidden edit\n");
    git(repo, wt, path, &["add", "-A"]);
    let run = git(repo, wt, path, &["commit", "-q", "-m", "violation"]);
    assert_eq!(run.code, 1, "{run}");
    assert!(run.stderr.contains("src/store/mod.rs  forbidden"), "{run}");
    assert_eq!(repo.git(wt, &["rev-parse", "HEAD"]), before);
    ran(already + 1);
    super::restore_from_head(repo, wt, "src/store/mod.rs");
    repo.write(wt, "src/lib.rs", &format!("// {}\n", log_lines(log).len()));
    git(repo, wt, path, &["add", "-A"]);
    std::fs::write(fail, "").unwrap();
    let run = git(repo, wt, path, &["commit", "-q", "-m", "manager fails"]);
    assert_ne!(
        run.code, 0,
        "the manager's failure blocks the commit: {run}"
    );
    assert_eq!(repo.git(wt, &["rev-parse", "HEAD"]), before);
    std::fs::remove_file(fail).unwrap();
    let run = git(repo, wt, path, &["commit", "-q", "-m", "clean"]);
    assert_eq!(run.code, 0, "{run}");
    assert_ne!(repo.git(wt, &["rev-parse", "HEAD"]), before);
    ran(already + 3);
}

#[track_caller]
fn assert_clean(repo: &TestRepo, dirs: &[&Path]) {
    for dir in dirs {
        assert_eq!(
            repo.git(dir, &["status", "--porcelain", "--untracked-files=all"]),
            "",
            "git status in {}",
            dir.display()
        );
    }
}

/// Every file git-task may touch, with its bytes and mode: the config files, hooks
/// directories, git-task's own directories and marker, and the worktrees' hooks directories.
fn snapshot(repo: &TestRepo, worktrees: &[&Path]) -> BTreeMap<String, (Vec<u8>, u32)> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            let name = e.file_name();
            if name == "node_modules" || name == "objects" || name == "logs" {
                continue;
            }
            if e.file_type().unwrap().is_dir() {
                walk(&p, out);
            } else {
                out.push(p);
            }
        }
    }
    let git_dir = repo.root().join(".git");
    let keep_git = |rel: &str| {
        rel == "config"
            || rel.ends_with("config.worktree")
            || rel.starts_with("hooks/")
            || rel.starts_with("git-task/hooks")
            || (rel.starts_with("worktrees/")
                && (rel.contains("/hooks/") || rel.ends_with("git-task-hooks-copied")))
    };
    let mut files = Vec::new();
    walk(&git_dir, &mut files);
    let mut out = BTreeMap::new();
    for f in files {
        let rel = f
            .strip_prefix(&git_dir)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if keep_git(&rel) {
            out.insert(format!(".git/{rel}"), read_with_mode(&f));
        }
    }
    for wt in worktrees {
        let mut files = Vec::new();
        walk(&wt.join(".husky"), &mut files);
        walk(&wt.join(".githooks"), &mut files);
        for f in files {
            let rel = f.strip_prefix(wt).unwrap().to_string_lossy().into_owned();
            if rel == ".git" || rel.starts_with(".git/") {
                continue;
            }
            out.insert(format!("{}:{rel}", wt.display()), read_with_mode(&f));
        }
    }
    out
}

fn read_with_mode(path: &Path) -> (Vec<u8>, u32) {
    use std::os::unix::fs::PermissionsExt;
    (
        std::fs::read(path).unwrap(),
        std::fs::metadata(path).unwrap().permissions().mode(),
    )
}

#[track_caller]
fn assert_same(
    before: &BTreeMap<String, (Vec<u8>, u32)>,
    after: &BTreeMap<String, (Vec<u8>, u32)>,
) {
    let names = |m: &BTreeMap<String, (Vec<u8>, u32)>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(names(before), names(after), "the same files");
    for (k, v) in before {
        assert!(
            after[k] == *v,
            "{k} differs after uninstall:\n{}\n---\n{}",
            String::from_utf8_lossy(&v.0),
            String::from_utf8_lossy(&after[k].0)
        );
    }
}

/// A repository with husky v9 set up the way `npm install` does (its `prepare` script), and
/// a committed `.husky/pre-commit` that logs and fails on demand.
pub(super) fn husky_repo(repo: &TestRepo, husky: &Path, log: &Path, fail: &Path) -> OsString {
    let path = tools::path_with_tools(&[husky]);
    let modules = tools::npm_dir().join("node_modules");
    let run = sh(
        repo,
        repo.root(),
        &path,
        &format!("cp -R '{}' node_modules", modules.display()),
    );
    assert_eq!(run.code, 0, "{run}");
    repo.write(
        repo.root(),
        "package.json",
        "{ \"name\": \"demo\", \"private\": true }\n",
    )
    .write(repo.root(), ".gitignore", "node_modules/\n");
    let run = sh(repo, repo.root(), &path, "node_modules/.bin/husky");
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(
        repo.git(repo.root(), &["config", "--local", "core.hooksPath"]),
        ".husky/_"
    );
    repo.write(
        repo.root(),
        ".husky/pre-commit",
        &logging_hook("husky", log, fail),
    );
    repo.git(repo.root(), &["add", "-A"]);
    let run = git(repo, repo.root(), &path, &["commit", "-q", "-m", "husky"]);
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(log_lines(log), [format!("husky {}", repo.root().display())]);
    // Another hook husky dispatches, which git-task does not handle itself.
    repo.write(
        repo.root(),
        ".husky/commit-msg",
        &format!("echo \"husky-msg $(pwd)\" >> '{}'\n", log.display()),
    );
    repo.git(repo.root(), &["add", "-A"]);
    let run = git(
        repo,
        repo.root(),
        &path,
        &["commit", "-q", "-m", "husky msg"],
    );
    assert_eq!(run.code, 0, "{run}");
    path
}

#[cfg(unix)]
#[test]
fn husky_first_then_git_task_runs_both_in_every_worktree() {
    if super::tools::config_hooks_instead("husky_first_then_git_task_runs_both_in_every_worktree") {
        return;
    }
    let Some(husky) = tools::require("husky", "husky_first_then_git_task") else {
        return;
    };
    let repo = TestRepo::new();
    let (log, fail) = (repo.base().join("hooks.log"), repo.base().join("fail"));
    let path = husky_repo(&repo, &husky, &log, &fail);
    // A task worktree made before the install, and its warning.
    let run = repo
        .task_root(&["start", "early", "--forbid", "src/store/**"])
        .ok();
    assert!(run.stderr.contains("git task hooks install"), "{run}");
    let early = repo.task_dir("early");
    let before = snapshot(&repo, &[repo.root(), &early]);

    let j = repo.task_root(&["hooks", "install", "--json"]).ok().json();
    assert_eq!(j["layout"], "relative", "{j}");
    assert_eq!(j["worktree_config_changed"], true, "{j}");
    // husky's own files are not touched.
    assert_eq!(
        std::fs::read_to_string(repo.root().join(".husky/_/pre-commit")).unwrap(),
        "#!/usr/bin/env sh\n. \"$(dirname \"$0\")/h\""
    );
    let run = repo
        .task_root(&["start", "late", "--forbid", "src/store/**"])
        .ok();
    assert!(!enforcement_warning(&run.stderr), "{run}");
    let late = repo.task_dir("late");
    assert_clean(&repo, &[repo.root(), &early, &late]);
    let status = repo.task_root(&["hooks", "status", "--json"]).ok().json();
    for w in status["worktrees"].as_array().unwrap() {
        assert_eq!(w["enforcement"]["state"], "enforced", "{status}");
    }
    assert!(!repo.task_root(&["list"]).ok().stderr.contains("warning"));

    for wt in [&early, &late] {
        both_run_in(&repo, wt, &path, "husky", &log, &fail);
    }
    assert_clean(&repo, &[repo.root(), &early, &late]);
    // The main worktree: husky runs as before.
    repo.write(repo.root(), "README.md", "main\n");
    let run = git(&repo, repo.root(), &path, &["commit", "-q", "-am", "main"]);
    assert_eq!(run.code, 0, "{run}");
    let lines = log_lines(&log);
    assert_eq!(
        lines[lines.len() - 2..],
        [
            format!("husky {}", repo.root().display()),
            format!("husky-msg {}", repo.root().display())
        ]
    );
    // husky's other hooks run in the task worktrees too, from their checkouts.
    for wt in [&early, &late] {
        assert!(
            lines.contains(&format!("husky-msg {}", wt.display())),
            "{lines:?}"
        );
    }
    // The user's config is unchanged where they look.
    assert_eq!(
        repo.git(repo.root(), &["config", "--local", "core.hooksPath"]),
        ".husky/_"
    );

    repo.task_root(&["hooks", "uninstall"]).ok();
    assert_same(&before, &snapshot(&repo, &[repo.root(), &early]));
    assert_eq!(repo.git(&late, &["config", "core.hooksPath"]), ".husky/_");
    assert!(
        !late.join(".husky/_").exists(),
        "the copy made for the task worktree is gone"
    );
    assert_clean(&repo, &[repo.root(), &early, &late]);
    repo.fsck();
}

#[cfg(unix)]
#[test]
fn git_task_first_then_husky_keeps_the_check_in_task_worktrees_then_both_run() {
    let Some(husky) = tools::require("husky", "git_task_first_then_husky") else {
        return;
    };
    let repo = TestRepo::new();
    let (log, fail) = (repo.base().join("hooks.log"), repo.base().join("fail"));
    repo.task_root(&["hooks", "install"]).ok();
    let path = husky_repo(&repo, &husky, &log, &fail);
    // husky changed core.hooksPath: start refuses until the user trusts that (config_changed).
    let run = repo
        .task_root(&["start", "t", "--forbid", "src/store/**"])
        .code(1);
    assert!(run.stderr.contains("core.hooksPath"), "{run}");
    // Every other command says the check is off, and how to turn it back on.
    let run = repo.task_root(&["overlaps"]).ok();
    assert!(
        run.stderr.contains("do not run git-task's pre-commit hook")
            && run.stderr.contains("git task hooks install"),
        "{run}"
    );
    repo.task_root(&["trust", "--yes"]).ok();
    // A task worktree started now points its own core.hooksPath at git-task's directory,
    // which runs husky's hook first: the contract is checked there, and both run.
    let run = repo
        .task_root(&["start", "t", "--forbid", "src/store/**"])
        .ok();
    // Its own worktree is checked; the main worktree runs husky's hooks alone, which start,
    // status and list all say.
    only_the_main_worktree_unchecked(&run.stderr);
    let wt = repo.task_dir("t");
    let status = repo.task_root(&["status", "t"]).ok();
    only_the_main_worktree_unchecked(&status.stderr);
    let j = repo.task_root(&["hooks", "status", "--json"]).ok().json();
    assert_eq!(j["worktrees"][0]["enforcement"]["state"], "enforced", "{j}");
    both_run_in(&repo, &wt, &path, "husky", &log, &fail);
    // The main worktree runs husky's hooks alone until the next install: list says so.
    let list = repo.task_root(&["list"]).ok();
    assert!(list.stderr.contains("git task hooks install"), "{list}");

    repo.task_root(&["hooks", "install"]).ok();
    assert!(!repo
        .task_root(&["status", "t"])
        .ok()
        .stderr
        .contains("warning"));
    both_run_in(&repo, &wt, &path, "husky", &log, &fail);
    // husky installing again (every `npm install`) leaves git-task's hooks alone.
    let run = sh(&repo, repo.root(), &path, "node_modules/.bin/husky");
    assert_eq!(run.code, 0, "{run}");
    both_run_in(&repo, &wt, &path, "husky", &log, &fail);
    assert_clean(&repo, &[repo.root(), &wt]);
}

/// lefthook writes its hooks into `.git/hooks` (shared by every worktree).
fn lefthook_install(repo: &TestRepo, path: &OsString) -> Run {
    sh(repo, repo.root(), path, "lefthook install")
}

#[cfg(unix)]
#[test]
fn lefthook_before_and_after_git_task() {
    let Some(lefthook) = tools::require("lefthook", "lefthook_before_and_after_git_task") else {
        return;
    };
    let repo = TestRepo::new();
    let (log, fail) = (repo.base().join("hooks.log"), repo.base().join("fail"));
    let path = tools::path_with_tools(&[&lefthook]);
    let hook = logging_hook("lefthook", &log, &fail).replace('\n', "; ");
    repo.write(
        repo.root(),
        "lefthook.yml",
        &format!(
            "pre-commit:\n  commands:\n    log:\n      run: {}\n",
            serde_json::to_string(&hook).unwrap()
        ),
    );
    repo.git(repo.root(), &["add", "-A"]);
    repo.git(repo.root(), &["commit", "-q", "-m", "lefthook"]);
    let run = lefthook_install(&repo, &path);
    assert_eq!(run.code, 0, "{run}");
    let lefthook_hook = std::fs::read(repo.root().join(".git/hooks/pre-commit")).unwrap();

    // Before: git-task chains lefthook's hook.
    let j = repo.task_root(&["hooks", "install", "--json"]).ok().json();
    assert_eq!(j["hooks"][0]["action"], "chained", "{j}");
    let wt = repo.start("t", &["--forbid", "src/store/**"]);
    both_run_in(&repo, &wt, &path, "lefthook", &log, &fail);
    repo.write(repo.root(), "README.md", "main\n");
    let run = git(&repo, repo.root(), &path, &["commit", "-q", "-am", "main"]);
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(
        log_lines(&log).last().unwrap(),
        &format!("lefthook {}", repo.root().display())
    );

    // After: lefthook puts its hook back in the shared directory and git-task's aside, where
    // nothing runs it: the main worktree runs lefthook's alone, said loudly. Task worktrees
    // run their own directory, which runs lefthook's new hook, then the check.
    let run = lefthook_install(&repo, &path);
    assert_eq!(run.code, 0, "{run}");
    let j = repo.task_root(&["hooks", "status", "--json"]).ok().json();
    assert_eq!(j["hooks"][0]["state"], "overwritten", "{j}");
    assert_eq!(j["worktrees"][0]["enforcement"]["state"], "enforced", "{j}");
    let human = repo.task_root(&["hooks", "status"]).ok();
    assert!(human.stdout.contains("OVERWRITTEN"), "{human}");
    let run = repo.task_root(&["list"]).ok();
    assert!(run.stderr.contains("replaced git-task's"), "{run}");
    assert!(run.stderr.contains("git task hooks install"), "{run}");
    for run in [
        repo.task_root(&["status", "t"]).ok(),
        repo.task_root(&["start", "u"]).ok(),
    ] {
        only_the_main_worktree_unchecked(&run.stderr);
    }
    both_run_in(&repo, &wt, &path, "lefthook", &log, &fail);
    // Installing again chains lefthook's hook once more; both run.
    repo.task_root(&["hooks", "install"]).ok();
    assert!(!repo.task_root(&["list"]).ok().stderr.contains("warning"));
    both_run_in(&repo, &wt, &path, "lefthook", &log, &fail);
    assert_clean(&repo, &[repo.root(), &wt]);
    repo.task_root(&["hooks", "uninstall"]).ok();
    assert_eq!(
        std::fs::read(repo.root().join(".git/hooks/pre-commit")).unwrap(),
        lefthook_hook
    );
}

#[cfg(unix)]
#[test]
fn pre_commit_framework_before_and_after_git_task() {
    if super::tools::config_hooks_instead("pre_commit_framework_before_and_after_git_task") {
        return;
    }
    let Some(pre_commit) = tools::require(
        "pre-commit",
        "pre_commit_framework_before_and_after_git_task",
    ) else {
        return;
    };
    let repo = TestRepo::new();
    let (log, fail) = (repo.base().join("hooks.log"), repo.base().join("fail"));
    let path = tools::path_with_tools(&[&pre_commit]);
    let entry = logging_hook("pre-commit", &log, &fail).replace('\n', "; ");
    repo.write(
        repo.root(),
        ".pre-commit-config.yaml",
        &format!(
            "repos:\n- repo: local\n  hooks:\n  - id: log\n    name: log\n    entry: sh -c {}\n    language: system\n    pass_filenames: false\n    always_run: true\n",
            serde_json::to_string(&entry).unwrap()
        ),
    );
    repo.git(repo.root(), &["add", "-A"]);
    repo.git(repo.root(), &["commit", "-q", "-m", "pre-commit"]);
    let install = |repo: &TestRepo| {
        let run = sh(repo, repo.root(), &path, "pre-commit install");
        assert_eq!(run.code, 0, "{run}");
    };
    install(&repo);

    // Before: git-task chains pre-commit's hook.
    let j = repo.task_root(&["hooks", "install", "--json"]).ok().json();
    assert_eq!(j["hooks"][0]["action"], "chained", "{j}");
    let wt = repo.start("t", &["--forbid", "src/store/**"]);
    both_run_in(&repo, &wt, &path, "pre-commit", &log, &fail);

    // After: pre-commit keeps git-task's hook as its legacy hook and runs it first.
    install(&repo);
    let j = repo.task_root(&["hooks", "status", "--json"]).ok().json();
    assert_eq!(j["hooks"][0]["state"], "chained_by_manager", "{j}");
    assert!(!repo.task_root(&["list"]).ok().stderr.contains("warning"));
    both_run_in(&repo, &wt, &path, "pre-commit", &log, &fail);
    // Installing git-task again does not stack a second check on top.
    let j = repo.task_root(&["hooks", "install", "--json"]).ok().json();
    assert_eq!(j["hooks"][0]["action"], "unchanged", "{j}");
    both_run_in(&repo, &wt, &path, "pre-commit", &log, &fail);
    assert_clean(&repo, &[repo.root(), &wt]);
}

#[cfg(unix)]
#[test]
fn committed_githooks_are_never_modified_and_run_from_each_checkout() {
    if super::tools::config_hooks_instead(
        "committed_githooks_are_never_modified_and_run_from_each_checkout",
    ) {
        return;
    }
    let repo = TestRepo::new();
    let (log, fail) = (repo.base().join("hooks.log"), repo.base().join("fail"));
    super::commit_githooks(
        &repo,
        &format!("#!/bin/sh\n{}", logging_hook("githooks", &log, &fail)),
    );
    let early = repo.start("early", &["--forbid", "src/store/**"]);
    let before = snapshot(&repo, &[repo.root(), &early]);

    let j = repo.task_root(&["hooks", "install", "--json"]).ok().json();
    assert_eq!(j["layout"], "relative", "{j}");
    let late = repo.start("late", &["--forbid", "src/store/**"]);
    assert_clean(&repo, &[repo.root(), &early, &late]);
    let path = tools::path_with_tools(&[]);
    for wt in [&early, &late] {
        both_run_in(&repo, wt, &path, "githooks", &log, &fail);
    }
    // A task's own version of the team hook is the one that runs in its worktree.
    repo.write(
        &late,
        ".githooks/pre-commit",
        &format!(
            "#!/bin/sh\necho \"task-version $(pwd)\" >> '{}'\n",
            log.display()
        ),
    );
    repo.git(
        &late,
        &["commit", "-q", "-am", "the task changes the team hook"],
    );
    repo.write(&late, "src/lib.rs", "// again\n");
    repo.git(&late, &["commit", "-q", "-am", "again"]);
    assert_eq!(
        log_lines(&log).last().unwrap(),
        &format!("task-version {}", late.display())
    );
    assert_clean(&repo, &[repo.root(), &early, &late]);

    repo.task_root(&["hooks", "uninstall"]).ok();
    assert_same(&before, &snapshot(&repo, &[repo.root(), &early]));
    repo.fsck();
}

#[cfg(unix)]
#[test]
fn start_and_status_say_when_nothing_enforces_the_contract() {
    let repo = TestRepo::new();
    let run = repo.task_root(&["start", "t"]).ok();
    assert!(
        run.stderr.contains(
            "warning: commits in this task's worktree do not run git-task's pre-commit hook"
        ),
        "{run}"
    );
    assert!(
        run.stderr
            .contains("hint: install the hooks: git task hooks install"),
        "{run}"
    );
    assert!(repo
        .task_root(&["status", "t"])
        .ok()
        .stderr
        .contains("git task hooks install"));
    assert!(repo
        .task_root(&["list"])
        .ok()
        .stderr
        .contains("git task hooks install"));
    // --json keeps stdout clean; the warning is on stderr.
    repo.task_root(&["list", "--json"]).ok().json();

    repo.task_root(&["hooks", "install"]).ok();
    for run in [
        repo.task_root(&["status", "t"]).ok(),
        repo.task_root(&["list"]).ok(),
        repo.task_root(&["start", "u"]).ok(),
    ] {
        assert!(!enforcement_warning(&run.stderr), "{run}");
    }

    repo.git(repo.root(), &["config", "core.hooksPath", "/dev/null"]);
    // A changed core.hooksPath makes start refuse until the user trusts it (config_changed).
    repo.task_root(&["start", "v"]).code(1);
    repo.task_root(&["trust", "--yes"]).ok();
    // A task worktree made before runs git-task's directory through its own config.worktree,
    // which /dev/null in the repository's config does not override.
    let run = repo.task_root(&["status", "t"]).ok();
    only_the_main_worktree_unchecked(&run.stderr);
    let run = repo.task_root(&["start", "v"]).ok();
    assert!(run.stderr.contains("core.hooksPath is /dev/null"), "{run}");
    assert!(
        run.stderr.contains("git config --unset core.hooksPath"),
        "{run}"
    );
}

/// The enforcement warnings in `stderr` name the main worktree, and only it (with the command
/// that restores the check there).
#[track_caller]
fn only_the_main_worktree_unchecked(stderr: &str) {
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("warning:") && l.contains("commits in"))
        .collect();
    assert!(!lines.is_empty(), "{stderr}");
    for l in lines {
        assert!(l.contains("commits in the main worktree "), "{stderr}");
    }
    assert!(stderr.contains("git task hooks install"), "{stderr}");
}

/// Whether `stderr` has a warning other than `start`'s overlap forecast (tasks whose contracts
/// allow the same paths, which is not about enforcement).
fn enforcement_warning(stderr: &str) -> bool {
    stderr
        .lines()
        .any(|l| l.starts_with("warning:") && !l.contains("change the same paths"))
}
