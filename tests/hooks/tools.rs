//! Finding the real hook managers and clients the tests drive.
//!
//! `tests/tools/install-hook-tools.sh` installs them under `target/hook-tools/`
//! (or `HOOK_TOOLS`); a tool on `PATH` does too. A test whose tool is absent
//! fails when `CI` is set, and otherwise says so on stderr ("SKIP: ...") and
//! returns early: never a silent pass.

use std::path::{Path, PathBuf};

/// Where the install script puts the tools.
pub fn prefix() -> PathBuf {
    std::env::var_os("HOOK_TOOLS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/hook-tools"))
}

/// The npm prefix holding husky and lefthook (`node_modules/`), to copy into test repositories.
pub fn npm_dir() -> PathBuf {
    prefix().join("npm")
}

/// The `bin` directory of the tools' Python virtual environment.
pub fn venv_bin() -> PathBuf {
    prefix().join("venv/bin")
}

fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Returns the tool `name` from the install prefix or `PATH`; when it is missing, fails under
/// `CI` and prints a visible skip notice otherwise (the caller then returns).
pub fn require(name: &str, test: &str) -> Option<PathBuf> {
    let found = [
        npm_dir().join("node_modules/.bin").join(name),
        venv_bin().join(name),
    ]
    .into_iter()
    .find(|p| p.is_file())
    .or_else(|| on_path(name));
    if found.is_none() {
        missing(name, test);
    }
    found
}

/// Returns a Python interpreter that can `import dulwich`.
pub fn python_with_dulwich(test: &str) -> Option<PathBuf> {
    let candidates = [venv_bin().join("python"), PathBuf::from("python3")];
    let found = candidates.into_iter().find(|py| {
        std::process::Command::new(py)
            .args(["-c", "import dulwich"])
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if found.is_none() {
        missing("dulwich (Python)", test);
    }
    found
}

fn missing(name: &str, test: &str) {
    let msg = format!(
        "{test}: {name} is not installed; run tests/tools/install-hook-tools.sh (it installs into {})",
        prefix().display()
    );
    if std::env::var_os("CI").is_some() {
        panic!("{msg}");
    }
    eprintln!("SKIP: {msg}");
}

/// `PATH` for hooks that need the tools: their directories, then the test's own.
pub fn path_with_tools(tools: &[&Path]) -> std::ffi::OsString {
    let mut dirs: Vec<PathBuf> = tools
        .iter()
        .filter_map(|t| t.parent().map(Path::to_path_buf))
        .collect();
    dirs.push(crate::common::bin().parent().unwrap().to_path_buf());
    if let Some(path) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&path));
    }
    std::env::join_paths(dirs).unwrap()
}

/// The `bin` directory of a git that runs hooks defined in config (2.54 or later):
/// `GIT_TASK_TEST_GIT` (a `git` program or its directory), else what
/// `tests/tools/build-git.sh` builds into `target/git-2.55/`; when there is none, fails under
/// `CI` and prints a visible skip notice otherwise (the caller then returns).
pub fn git_with_config_hooks(test: &str) -> Option<PathBuf> {
    let candidates = [
        std::env::var_os("GIT_TASK_TEST_GIT").map(PathBuf::from),
        Some(Path::new(env!("CARGO_MANIFEST_DIR")).join("target/git-2.55/bin")),
    ];
    let found = candidates.into_iter().flatten().find_map(|p| {
        let dir = if p.is_dir() {
            p
        } else {
            p.parent()?.to_path_buf()
        };
        let out = std::process::Command::new(dir.join("git"))
            .arg("--version")
            .output()
            .ok()?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let v = text.trim().strip_prefix("git version ")?;
        let mut parts = v.split('.');
        let major: u32 = parts.next()?.parse().ok()?;
        let minor: u32 = parts.next()?.parse().ok()?;
        ((major, minor) >= (2, 54)).then_some(dir)
    });
    if found.is_none() {
        let msg = format!(
            "{test}: no git 2.54 or later; run tests/tools/build-git.sh (it builds git 2.55 into target/git-2.55/) or set GIT_TASK_TEST_GIT"
        );
        if std::env::var_os("CI").is_some() {
            panic!("{msg}");
        }
        eprintln!("SKIP: {msg}");
    }
    found
}

/// `PATH` with `dir` first, then the test's own.
pub fn path_with_first(dir: &Path, rest: &std::ffi::OsStr) -> std::ffi::OsString {
    let mut dirs = vec![
        dir.to_path_buf(),
        crate::common::bin().parent().unwrap().to_path_buf(),
    ];
    dirs.extend(std::env::split_paths(rest));
    std::env::join_paths(dirs).unwrap()
}

/// Runs `program args` in `dir` with `path` as `PATH` (so that hooks find the managers'
/// programs), as a hook manager's user would.
pub fn run_with_path(
    repo: &crate::common::TestRepo,
    program: &str,
    dir: &Path,
    path: &std::ffi::OsString,
    args: &[&str],
) -> crate::common::Run {
    let out = repo
        .command(program, dir)
        .env("PATH", path)
        .args(args)
        .output()
        .unwrap();
    crate::common::Run::of(out)
}

/// Whether the `git` on the test's `PATH` runs hooks defined in config (2.54 or later).
pub fn git_runs_config_hooks() -> bool {
    let out = std::process::Command::new("git")
        .arg("--version")
        .output()
        .expect("git runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut parts = text
        .trim()
        .trim_start_matches("git version ")
        .split(|c: char| !c.is_ascii_digit());
    let major: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    let minor: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    (major, minor) >= (2, 54)
}

/// For a test of the hooks-directory layout (what `hooks install` writes for git older than
/// 2.54): under a git that runs hooks defined in config, `install` writes no hook where git
/// reads them (`config_hooks.rs` covers that), so there is no such layout to check; says so
/// and returns `true` (the caller then returns).
pub fn config_hooks_instead(test: &str) -> bool {
    let yes = git_runs_config_hooks();
    if yes {
        eprintln!(
            "{test}: tests the hooks-directory layout of git < 2.54; the git on PATH defines hooks in config (see config_hooks.rs)"
        );
    }
    yes
}

/// The absolute path of the `git` on the test's `PATH` (to run it under a minimal `PATH`).
pub fn git_program() -> PathBuf {
    on_path("git").expect("git on PATH")
}
