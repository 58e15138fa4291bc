//! Clients that read no hooks defined in config, driven for real (issue 32, item 1):
//!
//! - **JGit**: Debian's `jgit-cli` 4.11.9 (`jgit commit`), through the launcher
//!   `tests/tools/install-hook-tools.sh` writes (Debian's `/usr/bin/jgit` leaves jars off its
//!   class path). JGit 4.11 runs `<git-dir>/hooks/` only (no `core.hooksPath`), and cannot open a
//!   linked worktree (it takes the `.git` file's directory for a bare repository): it commits
//!   only in the main worktree, where a patch-mode task's contract binds.
//! - **gitui**: NOT the gitui binary (its terminal UI is not driven here; building it takes far
//!   longer than CI can spend), but `tests/tools/gitui-hooks`, a small program that runs gitui
//!   0.28.1's commit path with the very crates gitui links at the versions its `Cargo.lock`
//!   pins: `git2-hooks` 0.7.0 for `prepare-commit-msg`, `pre-commit`, `commit-msg` and
//!   `post-commit`, and libgit2 (`git2` 0.20.4) to open the repository and commit, as
//!   asyncgit does. git2-hooks runs `core.hooksPath` when libgit2's config has it (libgit2 reads
//!   a worktree's `config.worktree`, as git does), else `<git-dir>/hooks/`. The real gitui
//!   0.28.1, driven under tmux with `tests/tools/gitui-tmux.sh`, gave the same outcome as this
//!   stand-in in every case below (checked by hand; `cargo install gitui --locked` takes about
//!   480 s of CPU, too long for CI).
//!
//! Each case runs under the git on `PATH` (the machine's 2.47; 2.55 in `.ci/run`'s second
//! pass) and under git 2.55's hooks defined in config (`tests/tools/build-git.sh`), with
//! `core.hooksPath` unset, absolute, and relative (a committed `.githooks`). A missing tool
//! fails the test under `CI` and prints `SKIP:` otherwise.

use super::tools;
use crate::common::{Run, TestRepo};
use std::ffi::OsString;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Fails under `CI`, else prints a `SKIP:` line past the test harness's capture.
fn missing(what: &str, test: &str) {
    let msg = format!(
        "{test}: {what} is not installed; run tests/tools/install-hook-tools.sh (it installs into {})",
        tools::prefix().display()
    );
    if std::env::var_os("CI").is_some() {
        panic!("{msg}");
    }
    let _ = writeln!(std::io::stderr(), "SKIP: {msg}");
}

/// The JGit launcher the install script writes (`<prefix>/bin/jgit`).
fn jgit(test: &str) -> Option<PathBuf> {
    let path = tools::prefix().join("bin/jgit");
    if path.is_file() {
        return Some(path);
    }
    missing("JGit (Debian's jgit-cli)", test);
    None
}

/// gitui's commit path (`<prefix>/bin/gitui-hooks`, built from `tests/tools/gitui-hooks`).
fn gitui_hooks(test: &str) -> Option<PathBuf> {
    let path = tools::prefix().join("bin/gitui-hooks");
    if path.is_file() {
        return Some(path);
    }
    missing("gitui's commit path (tests/tools/gitui-hooks)", test);
    None
}

/// The git every command of a case runs under: `PATH` for git, git-task and its hooks.
struct Git {
    label: String,
    path: OsString,
    /// The git reads hooks defined in config (2.54 or later): `hooks install` uses them.
    config_hooks: bool,
}

fn version_at_least_2_54(path: &OsString) -> (String, bool) {
    let out = std::process::Command::new("git")
        .env("PATH", path)
        .arg("--version")
        .output()
        .expect("git runs");
    let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let v = text.strip_prefix("git version ").unwrap_or_default();
    let mut parts = v.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let at_least = (parts.next().unwrap_or(0), parts.next().unwrap_or(0)) >= (2, 54);
    (text, at_least)
}

/// The git on `PATH`, and git 2.55 when that one is older than 2.54.
fn gits(test: &str) -> Vec<Git> {
    let path = tools::path_with_first(
        crate::common::bin().parent().unwrap(),
        &std::env::var_os("PATH").unwrap_or_default(),
    );
    let (label, config_hooks) = version_at_least_2_54(&path);
    let mut gits = vec![Git {
        label,
        path: path.clone(),
        config_hooks,
    }];
    if !config_hooks {
        if let Some(bin) = tools::git_with_config_hooks(test) {
            let path = tools::path_with_first(&bin, &path);
            let (label, config_hooks) = version_at_least_2_54(&path);
            assert!(config_hooks, "{label}");
            gits.push(Git {
                label,
                path,
                config_hooks,
            });
        }
    }
    gits
}

/// Where `core.hooksPath` points before `hooks install`.
#[derive(Clone, Copy, Debug)]
enum HooksPath {
    Unset,
    /// An absolute directory outside the repository.
    Absolute,
    /// A committed `.githooks` (relative), whose `pre-commit` prints "team hook".
    Committed,
}

const LAYOUTS: [HooksPath; 3] = [HooksPath::Unset, HooksPath::Absolute, HooksPath::Committed];

/// A repository set up under one git and one `core.hooksPath` layout.
struct Case {
    repo: TestRepo,
    git: Git,
    layout: HooksPath,
}

impl Case {
    fn new(git: Git, layout: HooksPath) -> Case {
        let repo = TestRepo::new();
        match layout {
            HooksPath::Unset => {}
            HooksPath::Absolute => {
                let dir = repo.base().join("team-hooks");
                std::fs::create_dir_all(&dir).unwrap();
                repo.git(
                    repo.root(),
                    &["config", "core.hooksPath", dir.to_str().unwrap()],
                );
            }
            HooksPath::Committed => {
                super::commit_githooks(&repo, "#!/bin/sh\necho 'team hook' >&2\n");
            }
        }
        Case { repo, git, layout }
    }

    fn run(&self, program: impl AsRef<std::ffi::OsStr>, dir: &Path, args: &[&str]) -> Run {
        let out = self
            .repo
            .command(program, dir)
            .env("PATH", &self.git.path)
            .args(args)
            .output()
            .unwrap();
        Run::of(out)
    }

    fn git(&self, dir: &Path, args: &[&str]) -> String {
        let run = self.run("git", dir, args);
        assert_eq!(run.code, 0, "{self:?}: git {args:?}\n{run}");
        run.stdout.trim_end().to_string()
    }

    fn task(&self, dir: &Path, args: &[&str]) -> Run {
        self.run(crate::common::bin(), dir, args)
    }

    fn root(&self) -> PathBuf {
        self.repo.root().to_path_buf()
    }

    /// `hooks install`, and the mechanism it chose is the one this git calls for.
    fn install(&self) {
        self.task(&self.root(), &["hooks", "install"]).ok();
        let j = self
            .task(&self.root(), &["hooks", "status", "--json"])
            .ok()
            .json();
        let want = if self.git.config_hooks {
            "config"
        } else {
            "hooks_dir"
        };
        assert_eq!(j["mechanism"], want, "{self:?}: {j}");
    }

    fn start(&self, id: &str, args: &[&str]) -> PathBuf {
        let mut full = vec!["start", id, "--forbid", "src/store/**"];
        full.extend_from_slice(args);
        PathBuf::from(self.task(&self.root(), &full).ok().out())
    }

    fn head(&self, dir: &Path) -> String {
        self.git(dir, &["rev-parse", "HEAD"])
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

    /// Stages a forbidden change in `dir`.
    fn stage_violation(&self, dir: &Path) {
        self.repo
            .write(dir, "src/store/mod.rs", "// forbidden edit\n");
        self.git(dir, &["add", "-A"]);
    }

    /// Puts the forbidden path back and stages an allowed change.
    fn stage_clean(&self, dir: &Path, text: &str) {
        self.git(
            dir,
            &[
                "restore",
                "--source=HEAD",
                "--staged",
                "--worktree",
                "--",
                "src/store/mod.rs",
            ],
        );
        self.repo.write(dir, "src/lib.rs", text);
        self.git(dir, &["add", "-A"]);
    }

    /// `commit` (the client's) of a forbidden change in `dir` is refused with the report in
    /// `shown` (what the client shows the user), once, recorded on task `id`; then a clean
    /// commit goes through on top of the same HEAD.
    /// [`Case::refused_then_clean`] through gitui's commit path (git2-hooks), which shows the
    /// hook's output under its own header.
    #[track_caller]
    fn gitui_refuses(&self, gitui: &Path, dir: &Path, id: &str) {
        self.refused_then_clean(
            dir,
            id,
            |m| gitui_commit(self, gitui, dir, m),
            |run| run.stderr.clone(),
            "pre-commit hook error:",
        );
    }

    /// [`Case::refused_then_clean`] through the git CLI.
    #[track_caller]
    fn git_refuses(&self, dir: &Path, id: &str) {
        self.refused_then_clean(
            dir,
            id,
            |m| self.run("git", dir, &["commit", "-q", "-m", m]),
            |run| run.stderr.clone(),
            &format!("error: task '{id}'"),
        );
    }

    /// [`Case::refused_then_clean`] through JGit, which prints the hook's output in its
    /// AbortedByHookException.
    #[track_caller]
    fn jgit_refuses(&self, jgit: &Path, dir: &Path, id: &str) {
        self.refused_then_clean(
            dir,
            id,
            |m| self.run(jgit, dir, &["commit", "-m", m]),
            |run| format!("{}{}", run.stdout, run.stderr),
            "Rejected by \"pre-commit\" hook.",
        );
    }

    #[track_caller]
    fn refused_then_clean(
        &self,
        dir: &Path,
        id: &str,
        commit: impl Fn(&str) -> Run,
        shown: impl Fn(&Run) -> String,
        header: &str,
    ) {
        let before = self.head(dir);
        let events = self.violations(id);
        self.stage_violation(dir);
        let run = commit("violation");
        assert_ne!(
            run.code, 0,
            "{self:?}: the forbidden commit went through, the client ran no check: {run}"
        );
        let text = shown(&run);
        assert!(text.contains(header), "{self:?}: {run}");
        assert!(
            text.contains("src/store/mod.rs  forbidden  src/store/**"),
            "{self:?}: the report is shown: {run}"
        );
        assert!(
            text.contains(&format!("error: task '{id}': 1 contract violation")),
            "{self:?}: {run}"
        );
        assert_eq!(self.head(dir), before, "{self:?}: nothing committed");
        assert_eq!(
            self.violations(id),
            events + 1,
            "{self:?}: the check ran once"
        );
        self.stage_clean(
            dir,
            &format!("// clean commit of {id} after {events} violations\n"),
        );
        let run = commit("clean");
        assert_eq!(run.code, 0, "{self:?}: {run}");
        assert_eq!(
            self.git(dir, &["rev-parse", "HEAD^"]),
            before,
            "{self:?}: {run}"
        );
        assert_eq!(self.git(dir, &["log", "-1", "--format=%s"]), "clean");
        assert_eq!(
            self.git(dir, &["show", "--name-only", "--format=", "HEAD"]),
            "src/lib.rs"
        );
        assert_eq!(self.git(dir, &["status", "--porcelain"]), "");
    }
}

impl std::fmt::Debug for Case {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "[{}, core.hooksPath {:?}]", self.git.label, self.layout)
    }
}

/// Runs `each` on a fresh case for every git and layout.
fn for_each_case(test: &str, each: impl Fn(&Case)) {
    for layout in LAYOUTS {
        for git in gits(test) {
            each(&Case::new(git, layout));
        }
    }
}

// ---- gitui ----

/// What gitui shows in its error popup for the commit in `dir`.
fn gitui_commit(case: &Case, gitui: &Path, dir: &Path, message: &str) -> Run {
    case.run(gitui, dir, &[message])
}

#[test]
fn gitui_commits_in_task_worktrees_are_judged() {
    let test = "gitui_commits_in_task_worktrees_are_judged";
    let Some(gitui) = gitui_hooks(test) else {
        return;
    };
    for_each_case(test, |case| {
        // One task started before the hooks were installed, one after.
        let early = case.start("early", &[]);
        case.install();
        let late = case.start("late", &[]);
        for (id, wt) in [("early", &early), ("late", &late)] {
            // libgit2 sees the hooks directory git uses in this worktree (it reads
            // `config.worktree`), so git2-hooks runs git-task's script there.
            let seen = case.run(&gitui, wt, &["--hooks-path"]).ok();
            let git_sees = case.run("git", wt, &["config", "core.hooksPath"]);
            assert_eq!(seen.out(), git_sees.out(), "{case:?}");
            case.gitui_refuses(&gitui, wt, id);
            if let HooksPath::Committed = case.layout {
                let before = case.head(wt);
                case.stage_violation(wt);
                let run = gitui_commit(case, &gitui, wt, "violation");
                assert!(run.stderr.contains("team hook"), "{case:?}: chained: {run}");
                assert_eq!(case.head(wt), before);
                case.stage_clean(wt, "// again\n");
            }
        }
        case.repo.fsck();
    });
}

#[test]
fn gitui_commits_in_a_patch_mode_main_worktree_are_judged() {
    let test = "gitui_commits_in_a_patch_mode_main_worktree_are_judged";
    let Some(gitui) = gitui_hooks(test) else {
        return;
    };
    for_each_case(test, |case| {
        case.install();
        let root = case.root();
        case.task(
            &root,
            &["start", "--mode", "patch", "p", "--forbid", "src/store/**"],
        )
        .ok();
        case.gitui_refuses(&gitui, &root, "p");
        case.repo.fsck();
    });
}

// ---- JGit ----

#[test]
fn jgit_commits_in_a_patch_mode_main_worktree_are_judged() {
    let test = "jgit_commits_in_a_patch_mode_main_worktree_are_judged";
    let Some(jgit) = jgit(test) else {
        return;
    };
    for_each_case(test, |case| {
        case.install();
        let root = case.root();
        case.task(
            &root,
            &["start", "--mode", "patch", "p", "--forbid", "src/store/**"],
        )
        .ok();
        // JGit prints the hook's output in its AbortedByHookException.
        case.jgit_refuses(&jgit, &root, "p");
        case.repo.fsck();
    });
}

/// JGit 4.11 reads a linked worktree's `.git` file but not its `commondir`: it takes the
/// worktree's private git dir for a bare repository and commits nothing there, so no task
/// commit can be made with it (and no hook runs).
#[test]
fn jgit_cannot_commit_in_a_linked_task_worktree() {
    let test = "jgit_cannot_commit_in_a_linked_task_worktree";
    let Some(jgit) = jgit(test) else {
        return;
    };
    for_each_case(test, |case| {
        case.install();
        let wt = case.start("t", &[]);
        let before = case.head(&wt);
        case.stage_violation(&wt);
        let run = case.run(&jgit, &wt, &["commit", "-m", "violation"]);
        assert_ne!(run.code, 0, "{case:?}: {run}");
        assert!(
            run.stderr
                .contains("Cannot commit on a repo with state: BARE"),
            "{case:?}: {run}"
        );
        assert_eq!(case.head(&wt), before, "{case:?}");
        assert_eq!(case.violations("t"), 0, "{case:?}: no hook ran");
        // Not even a clean commit.
        case.stage_clean(&wt, "// clean\n");
        let run = case.run(&jgit, &wt, &["commit", "-m", "clean"]);
        assert_ne!(run.code, 0, "{case:?}: {run}");
        assert_eq!(case.head(&wt), before, "{case:?}");
    });
}

/// JGit runs `pre-commit` for `commit -a` before it stages the changes: the hook sees an index
/// without them and lets the commit through. The commit is judged afterwards: `git task check`
/// reports the violation.
#[test]
fn jgit_commit_all_is_judged_only_after_the_fact() {
    let test = "jgit_commit_all_is_judged_only_after_the_fact";
    let Some(jgit) = jgit(test) else {
        return;
    };
    for git in gits(test) {
        let case = Case::new(git, HooksPath::Unset);
        case.install();
        let root = case.root();
        case.task(
            &root,
            &["start", "--mode", "patch", "p", "--forbid", "src/store/**"],
        )
        .ok();
        let before = case.head(&root);
        case.repo
            .write(&root, "src/store/mod.rs", "// forbidden, unstaged\n");
        let run = case.run(&jgit, &root, &["commit", "-a", "-m", "all"]);
        assert_eq!(run.code, 0, "{case:?}: {run}");
        assert_eq!(case.git(&root, &["rev-parse", "HEAD^"]), before);
        assert_eq!(
            case.git(&root, &["show", "--name-only", "--format=", "HEAD"]),
            "src/store/mod.rs",
            "{case:?}: JGit committed the forbidden change"
        );
        let check = case.task(&root, &["check", "p"]);
        assert_eq!(check.code, 1, "{case:?}: {check}");
        assert!(
            check.stdout.contains("src/store/mod.rs  forbidden"),
            "{case:?}: {check}"
        );
    }
}

/// On a git that runs hooks defined in config, a relative `core.hooksPath` set after
/// `hooks install` (a committed `.githooks`, husky) is what gitui reads from then on: a task
/// started since is pointed at its own directory by `start` and judged; one started before
/// runs no check under gitui (git itself runs the config hooks) until `hooks install` runs
/// again, which points it too.
#[test]
fn gitui_after_a_relative_hooks_path_set_since_the_install() {
    let test = "gitui_after_a_relative_hooks_path_set_since_the_install";
    let Some(gitui) = gitui_hooks(test) else {
        return;
    };
    for git in gits(test).into_iter().filter(|g| g.config_hooks) {
        let case = Case::new(git, HooksPath::Unset);
        case.install();
        let early = case.start("early", &[]);
        super::commit_githooks(&case.repo, "#!/bin/sh\necho 'team hook' >&2\n");
        case.task(&case.root(), &["trust", "--yes"]).ok();
        // Said by list, start and status: gitui (which reads .githooks now), not JGit (which
        // reads .git/hooks, where the copy still is).
        let root = case.root();
        warns_clients_unchecked(
            "gitui",
            &case.task(&root, &["list"]).ok(),
            "the worktree of task 'early' and the main worktree",
        );
        let run = case
            .task(&root, &["start", "late", "--forbid", "src/store/**"])
            .ok();
        warns_clients_unchecked("gitui", &run, "the main worktree");
        let late = PathBuf::from(run.out());
        warns_clients_unchecked(
            "gitui",
            &case.task(&root, &["status", "early"]).ok(),
            "this task's worktree and the main worktree",
        );
        warns_clients_unchecked(
            "gitui",
            &case.task(&root, &["status", "late"]).ok(),
            "the main worktree",
        );
        // hooks status: where the copies belong (the worktrees not pointed there).
        let status = case.task(&root, &["hooks", "status", "--json"]).ok().json();
        let early_git_dir = case.git(&early, &["rev-parse", "--absolute-git-dir"]);
        assert_eq!(
            status["client_copies_missing"],
            serde_json::json!([
                root.join(".git/git-task/hooks/pre-commit")
                    .display()
                    .to_string(),
                Path::new(&early_git_dir)
                    .join("hooks/pre-commit")
                    .display()
                    .to_string(),
            ]),
            "{case:?}: {status}"
        );
        case.gitui_refuses(&gitui, &late, "late");
        // The task started before: gitui finds nothing where core.hooksPath now points.
        let before = case.head(&early);
        case.stage_violation(&early);
        let run = gitui_commit(&case, &gitui, &early, "unchecked");
        assert_eq!(run.code, 0, "{case:?}: {run}");
        assert_eq!(case.violations("early"), 0, "{case:?}");
        case.git(&early, &["reset", "-q", "--hard", &before]);
        // hooks install again: judged, and nothing to say.
        case.install();
        for args in [&["list"][..], &["status", "early"], &["overlaps"]] {
            no_warning(&case.task(&root, args).ok());
        }
        let status = case.task(&root, &["hooks", "status", "--json"]).ok().json();
        assert!(status.get("client_copies_missing").is_none(), "{status}");
        case.gitui_refuses(&gitui, &early, "early");
        case.repo.fsck();
    }
}

/// What `start`, `list`, `status` (and every other command) say when gitui and JGit run no
/// check in `whose` while git does (hooks defined in config).
#[track_caller]
fn warns_clients_unchecked(clients: &str, run: &Run, whose: &str) {
    warns_clients_unchecked_with(clients, run, whose, "put git-task's pre-commit copy back");
}

/// [`warns_clients_unchecked`], the hint starting with `hint`.
#[track_caller]
fn warns_clients_unchecked_with(clients: &str, run: &Run, whose: &str, hint: &str) {
    let line = run
        .stderr
        .lines()
        .find(|l| l.contains("gitui"))
        .unwrap_or_else(|| panic!("no warning about gitui: {run}"));
    assert!(line.starts_with("warning: "), "{run}");
    assert!(
        line.contains(&format!(
            "commits made with {clients} in {whose} are not checked against contracts"
        )),
        "{run}"
    );
    assert!(
        line.contains("the git CLI still runs the check (hooks defined in config)"),
        "{run}"
    );
    assert!(
        run.stderr.contains(&format!("hint: {hint}"))
            && run.stderr.contains("git task hooks install"),
        "{run}"
    );
}

fn is_ours(path: &Path) -> bool {
    std::fs::read_to_string(path).is_ok_and(|t| {
        t.lines()
            .nth(1)
            .is_some_and(|l| l.starts_with("# git-task "))
    })
}

/// Nothing said about commits going unchecked (other warnings, a base moved by the commits
/// the clients made, may be).
#[track_caller]
fn no_warning(run: &Run) {
    assert!(!run.stderr.contains("not checked"), "{run}");
    assert!(!run.stderr.contains("gitui"), "{run}");
}

/// On a git that runs hooks defined in config, lefthook re-syncing after `hooks install` moves
/// the pre-commit copy gitui and JGit read in the main worktree (`.git/hooks`) aside: git still
/// runs the check there, gitui and JGit do not. `start`, `list`, `status` and every other
/// command say exactly that (the main worktree only: a task worktree's gitui reads its private
/// `hooks/`, which lefthook leaves alone), and `hooks install` puts the copy back: the warning
/// goes and gitui and JGit are judged again.
#[test]
fn gitui_and_jgit_after_lefthook_resyncs_are_warned_about_then_restored() {
    let test = "gitui_and_jgit_after_lefthook_resyncs_are_warned_about_then_restored";
    let (Some(gitui), Some(jgit), Some(lefthook)) = (
        gitui_hooks(test),
        jgit(test),
        tools::require("lefthook", test),
    ) else {
        return;
    };
    for mut git in gits(test).into_iter().filter(|g| g.config_hooks) {
        git.path = tools::path_with_first(lefthook.parent().unwrap(), &git.path);
        let case = Case::new(git, HooksPath::Unset);
        let root = case.root();
        case.repo.write(
            &root,
            "lefthook.yml",
            "pre-commit:\n  commands:\n    ok:\n      run: \"true\"\n",
        );
        case.git(&root, &["add", "-A"]);
        case.git(&root, &["commit", "-q", "-m", "lefthook"]);
        case.run(&lefthook, &root, &["install"]).ok();
        case.install();
        let wt = case.start("t", &[]);
        case.task(
            &root,
            &["start", "--mode", "patch", "p", "--forbid", "src/store/**"],
        )
        .ok();
        no_warning(&case.task(&root, &["list"]).ok());
        // The team edits lefthook.yml; lefthook re-syncs.
        case.repo.write(
            &root,
            "lefthook.yml",
            "pre-commit:\n  commands:\n    ok:\n      run: \"true\"\n    again:\n      run: \"true\"\n",
        );
        case.git(&root, &["commit", "-q", "-am", "lefthook: again"]);
        case.run(&lefthook, &root, &["install"]).ok();
        let copy = root.join(".git/hooks/pre-commit");
        assert!(!is_ours(&copy), "{case:?}: lefthook's now");
        let main = "the main worktree (patch-mode task 'p')";
        const GJ: &str = "gitui and JGit";
        warns_clients_unchecked(GJ, &case.task(&root, &["list"]).ok(), main);
        warns_clients_unchecked(
            GJ,
            &case.task(&root, &["status", "p"]).ok(),
            "this task's worktree",
        );
        warns_clients_unchecked(
            GJ,
            &case.task(&root, &["status", "t"]).ok(),
            "the main worktree",
        );
        warns_clients_unchecked(
            GJ,
            &case.task(&root, &["start", "u"]).ok(),
            "the main worktree",
        );
        warns_clients_unchecked(
            GJ,
            &case.task(&root, &["overlaps"]).ok(),
            "the main worktree",
        );
        let status = case.task(&root, &["hooks", "status", "--json"]).ok().json();
        assert_eq!(
            status["client_copies_missing"],
            serde_json::json!([copy.display().to_string()]),
            "{case:?}: {status}"
        );
        // True: gitui and JGit commit a violation in the main worktree unchecked...
        for (client, args) in [
            (&gitui, vec!["unchecked"]),
            (&jgit, vec!["commit", "-m", "unchecked"]),
        ] {
            let before = case.head(&root);
            case.stage_violation(&root);
            let run = case.run(client, &root, &args);
            assert_eq!(run.code, 0, "{case:?}: {run}");
            assert_eq!(case.violations("p"), 0, "{case:?}");
            case.git(&root, &["reset", "-q", "--hard", &before]);
        }
        // ...while the git CLI refuses it, and gitui in the task worktree is judged.
        case.git_refuses(&root, "p");
        case.gitui_refuses(&gitui, &wt, "t");
        // hooks install puts the copy back (lefthook's hook chained): nothing to say, and
        // gitui and JGit are judged again in the main worktree.
        case.install();
        assert!(is_ours(&copy), "{case:?}");
        for args in [&["list"][..], &["status", "p"], &["start", "v"]] {
            no_warning(&case.task(&root, args).ok());
        }
        // (exit 1: t and p changed the same file)
        no_warning(&case.task(&root, &["overlaps"]));
        case.gitui_refuses(&gitui, &root, "p");
        case.jgit_refuses(&jgit, &root, "p");
        case.repo.fsck();
    }
}

/// `core.hooksPath=/dev/null` set after `hooks install` on a git that runs hooks defined in
/// config: git still runs the check; gitui, which runs what `core.hooksPath` names and no config
/// hooks, runs nothing. Every command says so, with what turns it back on; done, gitui is
/// judged again and nothing is said.
#[test]
fn gitui_under_a_dev_null_hooks_path_is_warned_about() {
    let test = "gitui_under_a_dev_null_hooks_path_is_warned_about";
    let Some(gitui) = gitui_hooks(test) else {
        return;
    };
    for git in gits(test).into_iter().filter(|g| g.config_hooks) {
        let case = Case::new(git, HooksPath::Unset);
        let root = case.root();
        case.install();
        let wt = case.start("t", &[]);
        case.git(&root, &["config", "core.hooksPath", "/dev/null"]);
        case.task(&root, &["trust", "--yes"]).ok();
        for run in [
            case.task(&root, &["list"]).ok(),
            case.task(&root, &["status", "t"]).ok(),
        ] {
            assert!(
                run.stderr.contains("they read hooks from '/dev/null' only"),
                "{run}"
            );
            assert!(
                run.stderr.contains(
                    "hint: let them run hooks again: git config --unset core.hooksPath && git task hooks install"
                ),
                "{run}"
            );
        }
        warns_clients_unchecked_with(
            "gitui",
            &case.task(&root, &["list"]).ok(),
            "the worktree of task 't' and the main worktree",
            "let them run hooks again: git config --unset core.hooksPath",
        );
        // True: gitui commits a violation unchecked; git refuses it.
        let before = case.head(&wt);
        case.stage_violation(&wt);
        let run = gitui_commit(&case, &gitui, &wt, "unchecked");
        assert_eq!(run.code, 0, "{case:?}: {run}");
        assert_eq!(case.violations("t"), 0, "{case:?}");
        case.git(&wt, &["reset", "-q", "--hard", &before]);
        case.git_refuses(&wt, "t");
        case.git(&root, &["config", "--unset", "core.hooksPath"]);
        case.task(&root, &["trust", "--yes"]).ok();
        case.install();
        no_warning(&case.task(&root, &["list"]).ok());
        case.gitui_refuses(&gitui, &wt, "t");
    }
}

/// husky installed after `hooks install` on a git that runs hooks defined in config (it sets
/// `core.hooksPath=.husky/_`, relative): a task worktree started before is not pointed at
/// git-task's directory, so gitui (which reads `.husky/_` there and no config hooks) commits in
/// it unchecked while git refuses; `list` and `status` say exactly that, `hooks install` points
/// it (gitui judged, nothing said), and husky installing again (`npm install`) changes nothing.
#[cfg(unix)]
#[test]
fn gitui_after_husky_installs_since_the_install_is_warned_about_then_judged() {
    let test = "gitui_after_husky_installs_since_the_install_is_warned_about_then_judged";
    let (Some(gitui), Some(husky)) = (gitui_hooks(test), tools::require("husky", test)) else {
        return;
    };
    for git in gits(test).into_iter().filter(|g| g.config_hooks) {
        let case = Case::new(git, HooksPath::Unset);
        let root = case.root();
        case.install();
        let early = case.start("early", &[]);
        let (log, fail) = (
            case.repo.base().join("hooks.log"),
            case.repo.base().join("fail"),
        );
        let husky_path = super::managers::husky_repo(&case.repo, &husky, &log, &fail);
        case.task(&root, &["trust", "--yes"]).ok();
        warns_clients_unchecked(
            "gitui",
            &case.task(&root, &["list"]).ok(),
            "the worktree of task 'early' and the main worktree",
        );
        warns_clients_unchecked(
            "gitui",
            &case.task(&root, &["status", "early"]).ok(),
            "this task's worktree and the main worktree",
        );
        // True: gitui commits a violation there unchecked; git refuses it.
        let before = case.head(&early);
        case.stage_violation(&early);
        let run = gitui_commit(&case, &gitui, &early, "unchecked");
        assert_eq!(run.code, 0, "{case:?}: {run}");
        assert_eq!(case.violations("early"), 0, "{case:?}");
        case.git(&early, &["reset", "-q", "--hard", &before]);
        case.git_refuses(&early, "early");
        // hooks install points it: judged under gitui, nothing said; husky again: the same.
        case.install();
        for round in ["install", "husky again"] {
            if round == "husky again" {
                let run = tools::run_with_path(
                    &case.repo,
                    "sh",
                    &root,
                    &husky_path,
                    &["-c", "node_modules/.bin/husky"],
                );
                assert_eq!(run.code, 0, "{run}");
            }
            for args in [&["list"][..], &["status", "early"]] {
                no_warning(&case.task(&root, args).ok());
            }
            case.gitui_refuses(&gitui, &early, "early");
        }
        case.repo.fsck();
    }
}
