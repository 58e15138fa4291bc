//! Hooks defined in config on git 2.54 and later (issue 32, items 1, 2, 8), driven with the
//! git `tests/tools/build-git.sh` builds (2.55): `hooks install` registers
//! `hook.git-task-<event>` in the repository's config beside the hooks-directory layout (kept
//! for older gits and clients that read no config, whose copies step aside when git ran the
//! config one); the check runs once per commit, in every worktree, whatever a hook manager or
//! `core.hooksPath` does to the hooks directory; `uninstall` leaves nothing.

use super::tools;
use crate::common::{Run, TestRepo};
use std::path::{Path, PathBuf};

/// A repository whose commands (git, git-task, the hooks) all run under git 2.55.
struct Git55 {
    repo: TestRepo,
    path: std::ffi::OsString,
}

impl Git55 {
    fn new(test: &str) -> Option<Self> {
        let bin = tools::git_with_config_hooks(test)?;
        let path = tools::path_with_first(&bin, &std::env::var_os("PATH").unwrap_or_default());
        Some(Git55 {
            repo: TestRepo::new(),
            path,
        })
    }

    fn run(&self, program: &str, dir: &Path, args: &[&str]) -> Run {
        let out = self
            .repo
            .command(program, dir)
            .env("PATH", &self.path)
            .args(args)
            .output()
            .unwrap();
        Run::of(out)
    }

    fn git(&self, dir: &Path, args: &[&str]) -> Run {
        self.run("git", dir, args)
    }

    fn task(&self, dir: &Path, args: &[&str]) -> Run {
        let out = self
            .repo
            .command(crate::common::bin(), dir)
            .env("PATH", &self.path)
            .args(args)
            .output()
            .unwrap();
        Run::of(out)
    }

    fn root(&self) -> PathBuf {
        self.repo.root().to_path_buf()
    }

    fn violations(&self, id: &str) -> usize {
        let j = self.task(&self.root(), &["log", id, "--json"]).ok().json();
        j["events"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["event"] == "violation")
            .count()
    }

    /// A forbidden commit in `wt` is refused with the report, and the check ran once.
    #[track_caller]
    fn refuses_once(&self, wt: &Path, id: &str) {
        let before = self.git(wt, &["rev-parse", "HEAD"]).ok().stdout;
        let events = self.violations(id);
        self.repo.write(wt, "src/store/mod.rs", "// forbidden\n");
        self.git(wt, &["add", "-A"]).ok();
        let run = self.git(wt, &["commit", "-q", "-m", "violation"]);
        assert_eq!(run.code, 1, "{run}");
        assert!(run.stderr.contains("src/store/mod.rs  forbidden"), "{run}");
        assert_eq!(self.git(wt, &["rev-parse", "HEAD"]).ok().stdout, before);
        assert_eq!(self.violations(id), events + 1, "the check ran once");
        super::restore_from_head(&self.repo, wt, "src/store/mod.rs");
    }
}

fn is_ours(path: &Path) -> bool {
    std::fs::read_to_string(path).is_ok_and(|t| {
        t.lines()
            .nth(1)
            .is_some_and(|l| l.starts_with("# git-task "))
    })
}

#[cfg(unix)]
#[test]
fn install_registers_config_hooks_beside_the_hooks_directory() {
    let Some(g) = Git55::new("install_registers_config_hooks") else {
        return;
    };
    let root = g.root();
    let config_before = std::fs::read(root.join(".git/config")).unwrap();
    g.task(&root, &["hooks", "install"]).ok();
    for name in ["pre-commit", "post-checkout", "reference-transaction"] {
        // The copy for older gits and clients that read no config.
        assert!(is_ours(&root.join(".git/hooks").join(name)), "{name}");
        let key = format!("hook.git-task-{name}.event");
        assert_eq!(
            g.git(&root, &["config", "--local", &key])
                .ok()
                .stdout
                .trim(),
            name
        );
        let list = g.git(&root, &["hook", "list", name]).ok();
        assert!(list.stdout.contains(&format!("git-task-{name}")), "{list}");
    }
    // Never in the user's global config.
    assert_eq!(
        g.git(&root, &["config", "--global", "--get-regexp", "^hook\\."])
            .code,
        1
    );
    let status = g.task(&root, &["hooks", "status", "--json"]).ok().json();
    assert_eq!(status["mechanism"], "config", "{status}");
    let human = g.task(&root, &["hooks", "status"]).ok();
    assert!(human.stdout.contains("mechanism        config"), "{human}");

    // A task worktree: blocked, once; its private hooks/ holds shims for dulwich and gitui only.
    let wt = {
        g.task(&root, &["start", "t", "--forbid", "src/store/**"])
            .ok();
        g.repo.task_dir("t")
    };
    let private = PathBuf::from(
        g.git(&wt, &["rev-parse", "--absolute-git-dir"])
            .ok()
            .stdout
            .trim(),
    );
    assert!(is_ours(&private.join("hooks/pre-commit")));
    g.refuses_once(&wt, "t");
    // The machine's older git (a GUI's, an IDE's) reads no config hooks: the hooks
    // directory's copy judges its commits.
    let old_git = g.repo.git_run(&wt, &["version"]);
    if !old_git.stdout.contains("version 2.5") {
        g.repo.write(&wt, "src/store/mod.rs", "// forbidden\n");
        g.repo.git(&wt, &["add", "-A"]);
        let run = g.repo.git_run(&wt, &["commit", "-q", "-m", "older git"]);
        assert_eq!(run.code, 1, "{run}");
        assert!(run.stderr.contains("src/store/mod.rs  forbidden"), "{run}");
        super::restore_from_head(&g.repo, &wt, "src/store/mod.rs");
    }
    // The main worktree's commits go through (no task there).
    g.repo.write(&root, "README.md", "main\n");
    g.git(&root, &["commit", "-q", "-am", "main"]).ok();

    // Uninstall leaves the config as it was, and nothing of git-task's.
    g.task(&root, &["hooks", "uninstall"]).ok();
    assert_eq!(
        std::fs::read(root.join(".git/config")).unwrap(),
        config_before
    );
    assert!(!root.join(".git/git-task/config-hooks").exists());
    assert!(!is_ours(&private.join("hooks/pre-commit")));
    assert!(!is_ours(&root.join(".git/hooks/pre-commit")));
    assert!(!private.join("git-task-config-hook").exists());
    assert_eq!(g.git(&root, &["hook", "list", "pre-commit"]).code, 1);
}

#[cfg(unix)]
#[test]
fn config_hooks_survive_managers_and_a_disabled_hooks_path() {
    let Some(g) = Git55::new("config_hooks_survive_managers") else {
        return;
    };
    let root = g.root();
    g.task(&root, &["hooks", "install"]).ok();
    g.task(&root, &["start", "t", "--forbid", "src/store/**"])
        .ok();
    let wt = g.repo.task_dir("t");
    g.refuses_once(&wt, "t");

    // A manager writes its own hook where git looks (as lefthook does, again and again).
    std::fs::write(root.join(".git/hooks/pre-commit"), "#!/bin/sh\nexit 0\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        root.join(".git/hooks/pre-commit"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    g.refuses_once(&wt, "t");
    // A relative core.hooksPath (husky, a committed .githooks), then hooks turned off.
    for value in [".husky/_", "/dev/null"] {
        g.git(&root, &["config", "core.hooksPath", value]).ok();
        g.task(&root, &["trust", "--yes"]).ok();
        g.refuses_once(&wt, "t");
        let status = g.task(&root, &["status", "t"]).ok();
        assert!(!status.stderr.contains("warning"), "{status}");
    }
    // A real lefthook, when it is installed.
    if let Some(lefthook) = tools::require("lefthook", "config_hooks_survive_managers") {
        g.git(&root, &["config", "--unset", "core.hooksPath"]).ok();
        g.repo.write(
            &root,
            "lefthook.yml",
            "pre-commit:\n  commands:\n    ok:\n      run: \"true\"\n",
        );
        let path = tools::path_with_first(lefthook.parent().unwrap(), &g.path);
        let out = g
            .repo
            .command("sh", &root)
            .env("PATH", &path)
            .args(["-c", "lefthook install -f"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        g.refuses_once(&wt, "t");
    }
}

#[cfg(unix)]
#[test]
fn an_install_made_by_an_older_git_gains_config_hooks_and_keeps_chaining() {
    let Some(g) = Git55::new("an_install_made_by_an_older_git") else {
        return;
    };
    let root = g.root();
    // The user's own hook, chained by an install made with the machine's git.
    use std::os::unix::fs::PermissionsExt;
    let hook = root.join(".git/hooks/pre-commit");
    let log = g.repo.base().join("users-hook.log");
    let body = format!("#!/bin/sh\necho ran >> '{}'\n", log.display());
    std::fs::write(&hook, &body).unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    g.repo.task_root(&["hooks", "install"]).ok();
    g.task(&root, &["hooks", "install"]).ok();
    g.task(&root, &["start", "t", "--forbid", "src/store/**"])
        .ok();
    let wt = g.repo.task_dir("t");
    g.refuses_once(&wt, "t");
    // The user's hook ran once for that commit, through the hooks directory's copy.
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "ran\n");
    g.task(&root, &["hooks", "uninstall"]).ok();
    assert_eq!(std::fs::read_to_string(&hook).unwrap(), body);
}

#[cfg(unix)]
#[test]
fn the_hook_path_never_asks_git_for_its_version() {
    let Some(g) = Git55::new("the_hook_path_never_asks_git_for_its_version") else {
        return;
    };
    let root = g.root();
    g.task(&root, &["hooks", "install"]).ok();
    g.task(&root, &["start", "t", "--forbid", "src/store/**"])
        .ok();
    let wt = g.repo.task_dir("t");
    // A `git` first on PATH that notes how it is called, then runs git 2.55.
    let spy = g.repo.base().join("spy");
    std::fs::create_dir_all(&spy).unwrap();
    let log = g.repo.base().join("git-calls");
    let real = tools::git_with_config_hooks("spy").unwrap().join("git");
    std::fs::write(
        spy.join("git"),
        format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\nexec '{}' \"$@\"\n",
            log.display(),
            real.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(spy.join("git"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = tools::path_with_first(&spy, &g.path);
    let commit = |args: &[&str]| {
        g.repo
            .command("git", &wt)
            .env("PATH", &path)
            .args(args)
            .output()
            .unwrap()
    };
    g.repo.write(&wt, "src/store/mod.rs", "// forbidden\n");
    commit(&["add", "-A"]);
    let out = commit(&["commit", "-q", "-m", "violation"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let calls = std::fs::read_to_string(&log).unwrap();
    assert!(!calls.contains("--version"), "{calls}");
}

#[cfg(unix)]
#[test]
fn an_install_by_an_older_git_keeps_the_config_hooks() {
    let Some(g) = Git55::new("an_install_by_an_older_git_keeps_the_config_hooks") else {
        return;
    };
    let root = g.root();
    g.task(&root, &["hooks", "install"]).ok();
    // The machine's git (older) installs again: the registrations stay, up to date.
    g.repo.task_root(&["hooks", "install"]).ok();
    let list = g.git(&root, &["hook", "list", "pre-commit"]).ok();
    assert!(list.stdout.contains("git-task-pre-commit"), "{list}");
    let status = g.task(&root, &["hooks", "status", "--json"]).ok().json();
    assert_eq!(status["mechanism"], "config", "{status}");
    g.task(&root, &["start", "t", "--forbid", "src/store/**"])
        .ok();
    g.refuses_once(&g.repo.task_dir("t"), "t");
    // And an uninstall by the older git removes them.
    g.repo.task_root(&["hooks", "uninstall"]).ok();
    assert_eq!(g.git(&root, &["hook", "list", "pre-commit"]).code, 1);
}
