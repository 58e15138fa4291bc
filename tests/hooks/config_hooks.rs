//! Hooks defined in config on git 2.54 and later (issue 32, items 1, 2, 8), driven with the
//! git `tests/tools/build-git.sh` builds (2.55): `hooks install` registers
//! `hook.git-task-<event>` in the repository's config and writes into the hooks directory git
//! reads only a pre-commit copy (for gitui and JGit, which read that directory and no config),
//! never into a directory of tracked files; under git that copy steps aside without starting
//! git-task (the config copy ran the check), so a commit runs the check once; the other shims
//! stay only where clients that read no config look and git does not (a linked worktree's
//! private `hooks/`, `.git/hooks` when `core.hooksPath` points elsewhere); the check runs once
//! per commit, in every worktree, whatever a hook manager or `core.hooksPath` does to the hooks
//! directory; `uninstall` leaves nothing.

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

/// The hooks directory git runs in `dir`'s worktree (`git rev-parse --git-path hooks`).
fn git_hooks_dir(g: &Git55, dir: &Path) -> PathBuf {
    let out = g.git(
        dir,
        &["rev-parse", "--path-format=absolute", "--git-path", "hooks"],
    );
    PathBuf::from(out.ok().stdout.trim())
}

/// Of git-task's, only the pre-commit copy (which steps aside under git) in the hooks directory
/// git runs in `dir`'s worktree.
#[track_caller]
fn only_a_pre_commit_where_git_reads(g: &Git55, dir: &Path) {
    let hooks = git_hooks_dir(g, dir);
    for e in std::fs::read_dir(&hooks).into_iter().flatten().flatten() {
        assert!(
            !is_ours(&e.path()) || e.file_name() == "pre-commit",
            "{} is git-task's",
            e.path().display()
        );
    }
}

/// Points the git-task binary the shim at `shim` records at a wrapper that notes each start of
/// it in `log`, then runs it.
fn spy_on_binary(shim: &Path, log: &Path) {
    let text = std::fs::read_to_string(shim).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("git_task_bin='"))
        .unwrap();
    let real = line
        .trim_start_matches("git_task_bin='")
        .trim_end_matches('\'');
    let wrapper = log.with_file_name(format!(
        "spy-{}",
        shim.parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
    ));
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\necho \"{} $*\" >> '{}'\nexec '{real}' \"$@\"\n",
            shim.display(),
            log.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let text = text.replacen(line, &format!("git_task_bin='{}'", wrapper.display()), 1);
    std::fs::write(shim, text).unwrap();
}

#[cfg(unix)]
#[test]
fn install_registers_config_hooks_and_only_a_pre_commit_copy_where_git_reads_hooks() {
    let Some(g) = Git55::new("install_registers_config_hooks") else {
        return;
    };
    let root = g.root();
    let config_before = std::fs::read(root.join(".git/config")).unwrap();
    g.task(&root, &["hooks", "install"]).ok();
    for name in ["pre-commit", "post-checkout", "reference-transaction"] {
        // git reads .git/hooks here: only the pre-commit copy for gitui and JGit (which read
        // that directory and no config) goes there; it steps aside under git.
        assert_eq!(
            root.join(".git/hooks").join(name).exists(),
            name == "pre-commit",
            "{name}"
        );
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
    // What status lists is what runs: the config hooks' shims, none "missing".
    let status = g.task(&root, &["hooks", "status", "--json"]).ok().json();
    assert_eq!(status["mechanism"], "config", "{status}");
    for h in status["hooks"].as_array().unwrap() {
        assert_eq!(h["state"], "installed", "{status}");
        assert!(
            h["path"]
                .as_str()
                .unwrap()
                .contains("git-task/config-hooks"),
            "{status}"
        );
    }
    // And the copy for the clients that read no config hooks.
    let copy = root.join(".git/hooks/pre-commit");
    assert_eq!(
        status["client_copies"],
        serde_json::json!([copy.display().to_string()]),
        "{status}"
    );
    let human = g.task(&root, &["hooks", "status"]).ok();
    assert!(human.stdout.contains("mechanism        config"), "{human}");
    assert!(
        human
            .stdout
            .contains(&format!("client copy      {}", copy.display())),
        "{human}"
    );
    assert!(!human.stdout.contains("missing"), "{human}");

    // A task worktree: blocked, once; its private hooks/ holds shims for dulwich and gitui
    // only, which git does not read there (no per-worktree core.hooksPath).
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
    assert!(!private.join("config.worktree").exists());
    assert_eq!(
        g.git(&root, &["config", "extensions.worktreeConfig"]).code,
        1
    );
    only_a_pre_commit_where_git_reads(&g, &wt);
    only_a_pre_commit_where_git_reads(&g, &root);
    assert!(is_ours(&root.join(".git/hooks/pre-commit")));
    g.refuses_once(&wt, "t");
    // git forks each of git-task's config hooks once per event it runs (reference-transaction:
    // preparing, prepared, committed), and the pre-commit copy in its hooks directory, which
    // steps aside without starting git-task: the binary judges the commit once.
    let starts = g.repo.base().join("starts");
    spy_on_binary(&root.join(".git/hooks/pre-commit"), &starts);
    spy_on_binary(&root.join(".git/git-task/config-hooks/pre-commit"), &starts);
    g.refuses_once(&wt, "t");
    let started = std::fs::read_to_string(&starts).unwrap();
    assert_eq!(started.lines().count(), 1, "{started}");
    assert!(
        started.starts_with(&format!(
            "{} hook pre-commit",
            root.join(".git/git-task/config-hooks/pre-commit").display()
        )),
        "{started}"
    );
    let trace = g.repo.base().join("trace");
    g.repo.write(&wt, "src/lib.rs", "// allowed\n");
    let out = g
        .repo
        .command("git", &wt)
        .env("PATH", &g.path)
        .env("GIT_TRACE", &trace)
        .args(["commit", "-q", "-am", "allowed"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let trace = std::fs::read_to_string(&trace).unwrap();
    let hooks: Vec<&str> = trace
        .lines()
        .filter(|l| l.contains("run_command:") && !l.contains("run_command: git "))
        .collect();
    let pre_commit: Vec<_> = hooks.iter().filter(|l| l.contains("/pre-commit")).collect();
    assert_eq!(pre_commit.len(), 2, "{trace}");
    assert!(pre_commit[0].contains("/git-task/config-hooks/"), "{trace}");
    assert!(pre_commit[1].contains("/.git/hooks/pre-commit"), "{trace}");
    assert!(
        hooks.iter().any(|l| l.contains("/reference-transaction")),
        "{trace}"
    );
    for l in &hooks {
        assert!(
            l.contains("/git-task/config-hooks/") || l.contains("/.git/hooks/pre-commit"),
            "{l}\n{trace}"
        );
    }
    // The allowed commit started git-task once more (the config copy), never the copy.
    let started = std::fs::read_to_string(&starts).unwrap();
    assert_eq!(started.lines().count(), 2, "{started}");
    assert!(!started.contains("/.git/hooks/"), "{started}");
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
    // gitui and JGit, which read that directory and no config hooks, lost their copy: status
    // says so, and install puts it back (chaining the manager's hook).
    let copy = root.join(".git/hooks/pre-commit").display().to_string();
    let status = g.task(&root, &["hooks", "status", "--json"]).ok().json();
    assert_eq!(
        status["client_copies_missing"],
        serde_json::json!([copy]),
        "{status}"
    );
    let human = g.task(&root, &["hooks", "status"]).ok();
    assert!(
        human
            .stdout
            .contains(&format!("client copy      MISSING at {copy}")),
        "{human}"
    );
    g.task(&root, &["hooks", "install"]).ok();
    let status = g.task(&root, &["hooks", "status", "--json"]).ok().json();
    assert_eq!(
        status["client_copies"],
        serde_json::json!([copy]),
        "{status}"
    );
    assert!(status.get("client_copies_missing").is_none(), "{status}");
    assert_eq!(
        std::fs::read_to_string(root.join(".git/hooks/pre-commit.git-task-chained")).unwrap(),
        "#!/bin/sh\nexit 0\n"
    );
    g.refuses_once(&wt, "t");
    // A relative core.hooksPath (husky, a committed .githooks), then hooks turned off.
    // git runs the check whatever they are; gitui, which reads a relative one (in a worktree
    // not pointed at git-task's directory: `hooks install` points them) or /dev/null and no
    // config hooks, does not: said, not hidden.
    for value in [".husky/_", "/dev/null"] {
        g.git(&root, &["config", "core.hooksPath", value]).ok();
        g.task(&root, &["trust", "--yes"]).ok();
        g.refuses_once(&wt, "t");
        let status = g.task(&root, &["status", "t"]).ok();
        assert!(
            status.stderr.contains(
                "warning: commits made with gitui in this task's worktree and the main worktree are not checked"
            ),
            "{status}"
        );
        assert!(
            status
                .stderr
                .contains(&format!("they read hooks from '{value}' only")),
            "{status}"
        );
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
fn an_install_made_by_an_older_git_gains_config_hooks_and_keeps_the_users_hook_chained() {
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
    // git 2.55 runs the config hooks, then the hooks directory's: there the pre-commit copy
    // (for gitui and JGit) still chains the user's hook, which it runs before stepping aside;
    // the older install's other copies are gone.
    assert!(is_ours(&hook));
    assert_eq!(
        std::fs::read_to_string(root.join(".git/hooks/pre-commit.git-task-chained")).unwrap(),
        body
    );
    for name in ["post-checkout", "reference-transaction"] {
        assert!(!root.join(".git/hooks").join(name).exists(), "{name}");
    }
    g.task(&root, &["start", "t", "--forbid", "src/store/**"])
        .ok();
    let wt = g.repo.task_dir("t");
    only_a_pre_commit_where_git_reads(&g, &wt);
    g.refuses_once(&wt, "t");
    // The user's hook ran once for that commit.
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
    let wt = g.repo.task_dir("t");
    g.refuses_once(&wt, "t");
    // The older git reads no config hooks: its install put the hooks-directory layout back,
    // which judges its own commits (git 2.55's above ran the check once all the same).
    let old_git = g.repo.git_run(&wt, &["version"]);
    if !old_git.stdout.contains("version 2.5") {
        g.repo.task_root(&["hooks", "install"]).ok();
        g.refuses_once(&wt, "t");
        g.repo.write(&wt, "src/store/mod.rs", "// forbidden\n");
        g.repo.git(&wt, &["add", "-A"]);
        let run = g.repo.git_run(&wt, &["commit", "-q", "-m", "older git"]);
        assert_eq!(run.code, 1, "{run}");
        assert!(run.stderr.contains("src/store/mod.rs  forbidden"), "{run}");
        super::restore_from_head(&g.repo, &wt, "src/store/mod.rs");
    }
    // And an uninstall by the older git removes them.
    g.repo.task_root(&["hooks", "uninstall"]).ok();
    assert_eq!(g.git(&root, &["hook", "list", "pre-commit"]).code, 1);
}

/// A user's hook in an absolute `core.hooksPath`: the pre-commit copy chains it there (run once
/// per commit), `uninstall` puts it back byte for byte, with its mode; an absolute
/// `core.hooksPath` naming a directory of tracked files gets nothing (`.git/hooks` has the
/// copy, for JGit and dulwich).
#[cfg(unix)]
#[test]
fn the_pre_commit_copy_chains_in_an_absolute_hooks_path_and_never_enters_a_tracked_one() {
    let Some(g) = Git55::new("the_pre_commit_copy_chains_in_an_absolute_hooks_path") else {
        return;
    };
    use std::os::unix::fs::PermissionsExt;
    let root = g.root();
    let team = g.repo.base().join("team-hooks");
    std::fs::create_dir_all(&team).unwrap();
    let hook = team.join("pre-commit");
    let log = g.repo.base().join("team.log");
    let body = format!("#!/bin/sh\necho ran >> '{}'\n", log.display());
    std::fs::write(&hook, &body).unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o750)).unwrap();
    g.git(&root, &["config", "core.hooksPath", team.to_str().unwrap()])
        .ok();
    g.task(&root, &["hooks", "install"]).ok();
    assert!(is_ours(&hook));
    assert_eq!(
        std::fs::read_to_string(team.join("pre-commit.git-task-chained")).unwrap(),
        body
    );
    let mut names: Vec<_> = std::fs::read_dir(&team)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["pre-commit", "pre-commit.git-task-chained"]);
    let status = g.task(&root, &["hooks", "status", "--json"]).ok().json();
    assert_eq!(
        status["client_copies"],
        serde_json::json!([hook.display().to_string()]),
        "{status}"
    );
    g.task(&root, &["start", "t", "--forbid", "src/store/**"])
        .ok();
    let wt = g.repo.task_dir("t");
    g.refuses_once(&wt, "t");
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "ran\n");
    g.task(&root, &["hooks", "uninstall"]).ok();
    assert_eq!(std::fs::read_to_string(&hook).unwrap(), body);
    let mode = std::fs::metadata(&hook).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o750);
    assert_eq!(std::fs::read_dir(&team).unwrap().count(), 1);

    // A committed .githooks, named by its absolute path: never written to.
    super::commit_githooks(&g.repo, "#!/bin/sh\nexit 0\n");
    let tracked = root.join(".githooks");
    g.git(
        &root,
        &["config", "core.hooksPath", tracked.to_str().unwrap()],
    )
    .ok();
    g.task(&root, &["hooks", "install"]).ok();
    assert_eq!(
        std::fs::read_to_string(tracked.join("pre-commit")).unwrap(),
        "#!/bin/sh\nexit 0\n"
    );
    assert_eq!(std::fs::read_dir(&tracked).unwrap().count(), 1);
    assert_eq!(g.git(&root, &["status", "--porcelain"]).ok().stdout, "");
    assert!(is_ours(&root.join(".git/hooks/pre-commit")));
    // gitui reads that directory and no config hooks: its commits go unchecked, and nothing
    // git-task can write changes that. Said, with what does help.
    let status = g.task(&root, &["status", "t"]).ok();
    assert!(
        status
            .stderr
            .contains("warning: commits made with gitui in this task's worktree and the main worktree are not checked"),
        "{status}"
    );
    assert!(
        status.stderr.contains(
            "hint: the repository tracks that directory and git-task writes nothing there"
        ),
        "{status}"
    );
    let human = g.task(&root, &["hooks", "status"]).ok();
    assert!(
        human.stdout.contains("which the repository tracks"),
        "{human}"
    );
    g.task(&root, &["hooks", "uninstall"]).ok();
    assert!(!root.join(".git/hooks/pre-commit").exists());
}

/// Every git-task hook file under `dir` (its shims and copies; not the objects).
fn ours_under(dir: &Path, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if e.file_name() == "objects" {
            continue;
        }
        if p.is_dir() {
            ours_under(&p, out);
        } else if is_ours(&p)
            && !std::fs::read_to_string(&p)
                .unwrap()
                .contains("pass-through hook")
        {
            out.push(p.display().to_string());
        }
    }
}

/// `hooks install --json` (and its human output) names every file it wrote: the config hooks'
/// shims (`hooks`), the linked worktrees' (`worktrees[].hooks`), and the copies for the
/// clients that read hooks directories and no config (`client_copies`: the pre-commit copy
/// where git reads hooks, for gitui and JGit; a relative layout's main worktree directory, for
/// gitui; `.git/hooks` when `core.hooksPath` points elsewhere, for dulwich and JGit), each with
/// what it did and who reads it; a second install says each is unchanged.
#[test]
fn install_lists_every_copy_it_writes_where_clients_read_hooks() {
    let test = "install_lists_every_copy_it_writes_where_clients_read_hooks";
    for layout in ["unset", "absolute", "relative"] {
        let Some(g) = Git55::new(test) else {
            return;
        };
        let root = g.root();
        match layout {
            "absolute" => {
                let team = g.repo.base().join("team-hooks");
                std::fs::create_dir_all(&team).unwrap();
                g.git(&root, &["config", "core.hooksPath", team.to_str().unwrap()])
                    .ok();
            }
            "relative" => super::commit_githooks(&g.repo, "#!/bin/sh\nexit 0\n"),
            _ => {}
        }
        g.task(&root, &["start", "t", "--forbid", "src/store/**"])
            .ok();
        let j = g.task(&root, &["hooks", "install", "--json"]).ok().json();
        let copies = j["client_copies"].as_array().cloned().unwrap_or_default();
        assert!(!copies.is_empty(), "{layout}: {j}");
        for c in &copies {
            assert_eq!(c["action"], "written", "{layout}: {j}");
            assert!(is_ours(Path::new(c["path"].as_str().unwrap())), "{j}");
            assert!(!c["clients"].as_array().unwrap().is_empty(), "{j}");
        }
        let pre_commit_copy = |dir: &Path| {
            copies
                .iter()
                .any(|c| c["path"] == dir.join("pre-commit").display().to_string())
        };
        // Where gitui reads in the main worktree.
        let gitui_reads = match layout {
            "unset" => root.join(".git/hooks"),
            "absolute" => g.repo.base().join("team-hooks"),
            _ => root.join(".git/git-task/hooks"),
        };
        assert!(pre_commit_copy(&gitui_reads), "{layout}: {j}");
        // JGit and dulwich read .git/hooks whatever core.hooksPath says.
        assert!(pre_commit_copy(&root.join(".git/hooks")), "{layout}: {j}");
        // Nothing written goes unlisted.
        let mut listed: Vec<String> = copies
            .iter()
            .chain(j["hooks"].as_array().unwrap())
            .chain(
                j["worktrees"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .flat_map(|w| w["hooks"].as_array().unwrap()),
            )
            .map(|h| h["path"].as_str().unwrap().to_owned())
            .collect();
        listed.sort();
        let mut written = Vec::new();
        ours_under(&root.join(".git"), &mut written);
        ours_under(&g.repo.base().join("team-hooks"), &mut written);
        for w in &written {
            assert!(listed.contains(w), "{layout}: {w} unlisted: {j}");
        }
        let human = g.task(&root, &["hooks", "install"]).ok();
        for c in &copies {
            let path = c["path"].as_str().unwrap();
            let line = human
                .stdout
                .lines()
                .find(|l| l.contains(path))
                .unwrap_or_else(|| panic!("{layout}: {path} not in {human}"));
            assert!(line.contains("already installed"), "{human}");
            assert!(line.contains("copy for "), "{human}");
        }
        let again = g.task(&root, &["hooks", "install", "--json"]).ok().json();
        for c in again["client_copies"].as_array().unwrap() {
            assert_eq!(c["action"], "unchanged", "{layout}: {again}");
        }
    }
}

/// A task's commit through git's config hook says when gitui, which reads only the hooks
/// directory, would commit there unchecked (a relative core.hooksPath set since the install,
/// as husky's): not only git-task's own commands say it. After `hooks install`, nothing.
#[cfg(unix)]
#[test]
fn a_commit_says_when_clients_that_read_no_config_are_unchecked_there() {
    let Some(g) = Git55::new("a_commit_says_when_clients_are_unchecked") else {
        return;
    };
    let root = g.root();
    g.task(&root, &["hooks", "install"]).ok();
    g.task(&root, &["start", "t"]).ok();
    let wt = g.repo.task_dir("t");
    let commit = |text: &str| {
        g.repo.write(&wt, "notes.txt", text);
        g.git(&wt, &["add", "notes.txt"]).ok();
        g.git(&wt, &["commit", "-q", "-m", text]).ok()
    };
    let quiet = commit("one\n");
    assert!(!quiet.stderr.contains("warning:"), "{quiet}");
    g.git(&root, &["config", "core.hooksPath", ".husky/_"]).ok();
    g.task(&root, &["trust", "--yes"]).ok();
    let run = commit("two\n");
    assert!(
        run.stderr
            .contains("warning: commits made with gitui in this worktree are not checked"),
        "{run}"
    );
    assert!(
        run.stderr
            .contains("hint: put git-task's pre-commit copy back: git task hooks install"),
        "{run}"
    );
    g.task(&root, &["hooks", "install"]).ok();
    let quiet = commit("three\n");
    assert!(!quiet.stderr.contains("warning:"), "{quiet}");
}
