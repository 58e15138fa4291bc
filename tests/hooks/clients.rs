//! Clients other than the git CLI: dulwich (which, like gitui, runs the hooks in a linked
//! worktree's private git dir and ignores `core.hooksPath`), and clients that run git on a
//! pseudo-terminal (magit: `git -c color.ui=false`, `TERM=dumb`).

use super::tools;
use crate::common::{Run, TestRepo};
use std::path::Path;

/// Commits the staged changes of `wt` through dulwich.
fn dulwich_commit(repo: &TestRepo, python: &Path, wt: &Path, message: &str) -> Run {
    let out = repo
        .command(python, wt)
        // dulwich reads only its own date format from these.
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

fn dulwich_is_judged(repo: &TestRepo, python: &Path, wt: &Path) {
    let before = repo.git(wt, &["rev-parse", "HEAD"]);
    repo.write(wt, "src/store/mod.rs", "// forbidden edit\n");
    repo.git(wt, &["add", "-A"]);
    let run = dulwich_commit(repo, python, wt, "violation");
    assert_eq!(run.code, 1, "{run}");
    assert!(run.stderr.contains("src/store/mod.rs  forbidden"), "{run}");
    assert_eq!(repo.git(wt, &["rev-parse", "HEAD"]), before);
    super::restore_from_head(repo, wt, "src/store/mod.rs");
    repo.write(wt, "src/lib.rs", "// allowed\n");
    repo.git(wt, &["add", "-A"]);
    let run = dulwich_commit(repo, python, wt, "clean");
    assert_eq!(run.code, 0, "{run}");
    assert_ne!(repo.git(wt, &["rev-parse", "HEAD"]), before);
}

#[cfg(unix)]
#[test]
fn dulwich_commits_in_task_worktrees_are_judged() {
    let Some(python) = tools::python_with_dulwich("dulwich_commits_in_task_worktrees_are_judged")
    else {
        return;
    };
    let repo = TestRepo::new();
    let early = repo.start("early", &["--forbid", "src/store/**"]);
    repo.task_root(&["hooks", "install"]).ok();
    let late = repo.start("late", &["--forbid", "src/store/**"]);
    for wt in [&early, &late] {
        dulwich_is_judged(&repo, &python, wt);
        assert!(repo
            .git(wt, &["rev-parse", "--git-dir"])
            .contains("/worktrees/"));
    }
    let j = repo.task_root(&["hooks", "status", "--json"]).ok().json();
    for w in j["worktrees"].as_array().unwrap() {
        assert_eq!(w["hooks"][0]["state"], "installed", "{j}");
    }
    // Under git the contract runs once per commit: one violation event for one refused commit.
    let violations = |repo: &TestRepo| {
        let j = repo.task_root(&["log", "late", "--json"]).ok().json();
        j["events"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["event"] == "violation")
            .count()
    };
    let before = violations(&repo);
    repo.write(&late, "src/store/mod.rs", "// by git\n");
    assert_eq!(
        repo.git_run(&late, &["commit", "-q", "-am", "by git"]).code,
        1
    );
    assert_eq!(violations(&repo), before + 1);
    repo.git(&late, &["reset", "-q", "--hard"]);
    // uninstall clears the private directories too.
    repo.task_root(&["hooks", "uninstall"]).ok();
    for wt in [&early, &late] {
        let git_dir = repo.git(wt, &["rev-parse", "--absolute-git-dir"]);
        assert!(!Path::new(&git_dir).join("hooks").exists(), "{git_dir}");
    }
}

#[cfg(unix)]
#[test]
fn dulwich_with_a_relative_hooks_path_runs_both_and_git_runs_each_hook_once() {
    let Some(python) = tools::python_with_dulwich("dulwich_with_a_relative_hooks_path") else {
        return;
    };
    let repo = TestRepo::new();
    let log = repo.base().join("hooks.log");
    super::commit_githooks(
        &repo,
        &format!("#!/bin/sh\necho \"team $(pwd)\" >> '{}'\n", log.display()),
    );
    repo.task_root(&["hooks", "install"]).ok();
    let wt = repo.start("t", &["--forbid", "src/store/**"]);
    dulwich_is_judged(&repo, &python, &wt);
    let lines = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        lines.lines().count(),
        2,
        "the team hook ran under dulwich too: {lines}"
    );
    // Under git the hook in the private git dir is the one git runs, once.
    repo.write(&wt, "src/lib.rs", "// by git\n");
    repo.git(&wt, &["commit", "-q", "-am", "by git"]);
    let lines = std::fs::read_to_string(&log).unwrap();
    assert_eq!(lines.lines().count(), 3, "{lines}");
}

/// Runs `git args` in `dir` on a pseudo-terminal (as magit does) and returns what it printed.
fn on_pty(repo: &TestRepo, dir: &Path, env: &[(&str, &str)], args: &[&str]) -> Run {
    let script = "import os, pty, sys\npid, fd = pty.fork()\nif pid == 0:\n    os.execvp('git', ['git'] + sys.argv[1:])\nout = b''\nwhile True:\n    try:\n        chunk = os.read(fd, 4096)\n    except OSError:\n        break\n    if not chunk:\n        break\n    out += chunk\n_, status = os.waitpid(pid, 0)\nsys.stdout.write(out.decode('utf-8', 'replace'))\nsys.exit(os.waitstatus_to_exitcode(status))\n";
    let mut cmd = repo.command("python3", dir);
    cmd.env_remove("NO_COLOR").env("TERM", "xterm-256color");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.arg("-c").arg(script).args(args).output().unwrap();
    Run::of(out)
}

/// Removes SGR sequences (`ESC [ ... m`).
fn strip_ansi(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for c in chars.by_ref() {
                if c == 'm' {
                    break;
                }
            }
        } else if c != '\r' {
            out.push(c);
        }
    }
    out
}

#[cfg(unix)]
#[test]
fn hook_report_on_a_pty_has_no_colour_when_git_or_the_terminal_says_so() {
    let repo = TestRepo::new();
    repo.task_root(&["hooks", "install"]).ok();
    let wt = repo.start("t", &["--forbid", "src/store/**"]);
    repo.write(&wt, "src/store/mod.rs", "// forbidden edit\n");
    repo.git(&wt, &["add", "-A"]);
    let commit = ["commit", "-q", "-m", "violation"];
    let refused = |run: &Run| {
        assert_eq!(run.code, 1, "{run}");
        let plain = strip_ansi(&run.stdout);
        assert!(plain.contains("src/store/mod.rs  forbidden"), "{run}");
        assert!(
            plain.contains("\nerror: task 't'") || plain.starts_with("error: task 't'"),
            "{run}"
        );
    };
    // On a terminal the report is coloured...
    let run = on_pty(&repo, &wt, &[], &commit);
    refused(&run);
    assert!(run.stdout.contains("\x1b["), "{run}");
    // ...unless git or the environment says no colour.
    let magit: Vec<&str> = ["-c", "color.ui=false"]
        .iter()
        .chain(&commit)
        .copied()
        .collect();
    for (env, args) in [
        (vec![], magit.clone()),
        (vec![("TERM", "dumb")], magit.clone()),
        (vec![("TERM", "dumb")], commit.to_vec()),
        (vec![("NO_COLOR", "1")], commit.to_vec()),
        (
            vec![
                ("GIT_CONFIG_COUNT", "1"),
                ("GIT_CONFIG_KEY_0", "color.ui"),
                ("GIT_CONFIG_VALUE_0", "never"),
            ],
            commit.to_vec(),
        ),
    ] {
        let run = on_pty(&repo, &wt, &env, &args);
        refused(&run);
        assert!(!run.stdout.contains('\x1b'), "{env:?} {args:?}: {run:?}");
    }
    repo.git(repo.root(), &["config", "color.ui", "never"]);
    let run = on_pty(&repo, &wt, &[], &commit);
    refused(&run);
    assert!(!run.stdout.contains('\x1b'), "{run:?}");
    // A plain pipe never gets colour.
    let run = repo.git_run(&wt, &commit);
    assert_eq!(run.code, 1, "{run}");
    assert!(!run.stderr.contains('\x1b'), "{run:?}");
}

#[test]
fn git_c_settings_reach_every_command() {
    let repo = TestRepo::new();
    // `git -c task.branchPrefix=work/ task start` names the branch with that prefix.
    let run = repo.git_run(
        repo.root(),
        &["-c", "task.branchPrefix=work/", "task", "start", "x"],
    );
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(repo.refs("refs/heads/work/"), ["refs/heads/work/x"]);
    assert!(repo.refs("refs/heads/task/").is_empty());
    // And the new-style quoting of a value with spaces and a quote.
    let run = repo.git_run(
        repo.root(),
        &[
            "-c",
            "task.worktreeDir=../it's here",
            "task",
            "start",
            "y",
            "--json",
        ],
    );
    assert_eq!(run.code, 0, "{run}");
    assert!(repo.base().join("it's here/y").is_dir(), "{run}");
}
