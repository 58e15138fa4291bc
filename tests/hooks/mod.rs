//! The hooks through real git: `git commit`, `git switch` and `git worktree add` with the shims installed.

mod base_merge;
mod clients;
mod config_hooks;
mod fail_closed;
mod hold;
#[cfg(unix)]
mod jgit_gitui;
mod managers;
mod patch_guard;
mod refs;
mod staged;
mod survive;
pub(crate) mod tools;
mod uninstall;

use crate::common::{bin, Run, TestRepo};
use std::path::{Path, PathBuf};

/// Installs the hooks, starts task `t` with `args` and returns its worktree.
fn task_with_hooks(repo: &TestRepo, args: &[&str]) -> PathBuf {
    repo.task_root(&["hooks", "install"]).ok();
    repo.start("t", args)
}

fn commit(repo: &TestRepo, dir: &Path, args: &[&str]) -> Run {
    let mut full = vec!["commit", "-q"];
    full.extend_from_slice(args);
    repo.git_run(dir, &full)
}

/// Commits `.githooks/pre-commit` (executable) with `script`, and points `core.hooksPath` at
/// `.githooks` (a relative path, as teams that commit their hooks do).
#[cfg(unix)]
fn commit_githooks(repo: &TestRepo, script: &str) {
    use std::os::unix::fs::PermissionsExt;
    repo.write(repo.root(), ".githooks/pre-commit", script);
    std::fs::set_permissions(
        repo.root().join(".githooks/pre-commit"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    repo.git(repo.root(), &["add", "-A"]);
    repo.git(repo.root(), &["commit", "-q", "-m", "team hooks"]);
    repo.git(repo.root(), &["config", "core.hooksPath", ".githooks"]);
}

/// Puts `path` back as HEAD has it, in the index and on disk (`git restore`).
fn restore_from_head(repo: &TestRepo, dir: &Path, path: &str) {
    repo.git(
        dir,
        &[
            "restore",
            "--source=HEAD",
            "--staged",
            "--worktree",
            "--",
            path,
        ],
    );
}

fn head(repo: &TestRepo, dir: &Path) -> String {
    repo.git(dir, &["rev-parse", "HEAD"])
}

/// Asserts the commit was refused by the contract with `reason` on `file`, and nothing was committed.
#[track_caller]
fn assert_refused(repo: &TestRepo, wt: &Path, run: &Run, before: &str, file: &str, reason: &str) {
    assert_eq!(run.code, 1, "{run}");
    let line = run
        .stderr
        .lines()
        .find(|l| l.trim_start().starts_with(file) && l.contains(reason));
    assert!(line.is_some(), "no '{file}  {reason}' line in:\n{run}");
    assert!(run.stderr.contains("hint: "), "{run}");
    assert_eq!(head(repo, wt), before, "nothing may be committed");
}

fn events(repo: &TestRepo, id: &str) -> Vec<serde_json::Value> {
    let j = repo.task_root(&["log", id, "--json"]).ok().json();
    j["events"].as_array().expect("events").clone()
}

#[test]
fn forbidden_path_is_refused_and_recorded() {
    let repo = TestRepo::new();
    let wt = task_with_hooks(&repo, &["--forbid", "src/store/**"]);
    let before = head(&repo, &wt);
    repo.write(&wt, "src/store/mod.rs", "// edited\n");
    repo.git(&wt, &["add", "-A"]);
    let run = commit(&repo, &wt, &["-m", "edit store"]);
    assert_refused(&repo, &wt, &run, &before, "src/store/mod.rs", "forbidden");
    assert!(
        run.stderr.contains("src/store/**"),
        "the rule as written: {run}"
    );
    assert!(
        run.stderr
            .contains(" restore --source=HEAD --staged --worktree -- src/store/mod.rs"),
        "{run}"
    );
    let last = events(&repo, "t").pop().unwrap();
    assert_eq!(last["event"], "violation", "{last}");
    assert_eq!(
        last["details"]["violations"][0]["file"], "src/store/mod.rs",
        "{last}"
    );
    assert_eq!(
        last["details"]["violations"][0]["reason"], "forbidden",
        "{last}"
    );
    repo.fsck();
}

#[test]
fn path_outside_allowed_is_refused() {
    let repo = TestRepo::new();
    let wt = task_with_hooks(&repo, &["--allow", "src/**"]);
    let before = head(&repo, &wt);
    repo.write(&wt, "README.md", "changed\n");
    repo.git(&wt, &["add", "-A"]);
    let run = commit(&repo, &wt, &["-m", "readme"]);
    assert_refused(&repo, &wt, &run, &before, "README.md", "not_allowed");
}

#[test]
fn new_file_is_refused_when_new_files_are_off() {
    let repo = TestRepo::new();
    let wt = task_with_hooks(&repo, &["--no-new-files"]);
    let before = head(&repo, &wt);
    repo.write(&wt, "src/new.rs", "new\n");
    repo.git(&wt, &["add", "-A"]);
    let run = commit(&repo, &wt, &["-m", "new"]);
    assert_refused(
        &repo,
        &wt,
        &run,
        &before,
        "src/new.rs",
        "new_file_disallowed",
    );
    assert!(
        run.stderr
            .contains(" rm -r -q --cached --ignore-unmatch -- src/new.rs"),
        "{run}"
    );
}

#[test]
fn deletion_is_refused_when_deletions_are_off() {
    let repo = TestRepo::new();
    let wt = task_with_hooks(&repo, &["--no-deletions"]);
    let before = head(&repo, &wt);
    repo.git(&wt, &["rm", "-q", "src/lib.rs"]);
    let run = commit(&repo, &wt, &["-m", "delete"]);
    assert_refused(
        &repo,
        &wt,
        &run,
        &before,
        "src/lib.rs",
        "deletion_disallowed",
    );
}

#[test]
fn too_many_files_is_refused() {
    let repo = TestRepo::new();
    let contract = repo.base().join("contract.toml");
    std::fs::write(&contract, "version = 1\nmax_changed_files = 1\n").unwrap();
    let wt = task_with_hooks(&repo, &["--contract", contract.to_str().unwrap()]);
    let before = head(&repo, &wt);
    repo.write(&wt, "src/lib.rs", "one\n")
        .write(&wt, "README.md", "two\n");
    repo.git(&wt, &["add", "-A"]);
    let run = commit(&repo, &wt, &["-m", "two files"]);
    assert_refused(&repo, &wt, &run, &before, "*", "too_many_files");
    // One file is within the limit.
    repo.git(&wt, &["reset", "-q", "README.md"]);
    commit(&repo, &wt, &["-m", "one file"]).ok();
}

#[test]
fn loosened_or_deleted_contract_is_tampering() {
    let repo = TestRepo::new();
    let wt = task_with_hooks(&repo, &["--forbid", "src/store/**"]);
    let before = head(&repo, &wt);
    let original = repo.read(&wt, ".task-contract.toml");
    repo.write(
        &wt,
        ".task-contract.toml",
        &original.replace("\"src/store/**\"", ""),
    );
    repo.git(&wt, &["add", "-A"]);
    let run = commit(&repo, &wt, &["-m", "loosen"]);
    assert_refused(
        &repo,
        &wt,
        &run,
        &before,
        ".task-contract.toml",
        "contract_tampered",
    );

    repo.git(&wt, &["rm", "-q", "-f", ".task-contract.toml"]);
    let run = commit(&repo, &wt, &["-m", "delete the contract"]);
    assert_refused(
        &repo,
        &wt,
        &run,
        &before,
        ".task-contract.toml",
        "contract_tampered",
    );
    assert!(run.stderr.contains("was deleted"), "{run}");
}

#[test]
fn narrowing_the_contract_and_changes_inside_it_are_allowed() {
    let repo = TestRepo::new();
    let wt = task_with_hooks(&repo, &["--allow", "src/**", "--forbid", "src/store/**"]);
    let before = head(&repo, &wt);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { /* better */ }\n");
    repo.write(&wt, "src/api/new.rs", "pub fn api() {}\n");
    let narrowed = repo
        .read(&wt, ".task-contract.toml")
        .replace("\"src/**\"", "\"src/lib.rs\", \"src/api/**\"");
    repo.write(&wt, ".task-contract.toml", &narrowed);
    repo.git(&wt, &["add", "-A"]);
    let run = commit(&repo, &wt, &["-m", "inside"]).ok();
    assert!(
        run.stderr.is_empty(),
        "a clean commit prints nothing: {run}"
    );
    assert_ne!(head(&repo, &wt), before);
    assert_eq!(
        repo.git(&wt, &["show", "--name-only", "--format=", "HEAD"]),
        ".task-contract.toml\nsrc/api/new.rs\nsrc/lib.rs"
    );
    repo.fsck();
}

#[test]
fn commit_all_is_judged_through_its_temporary_index() {
    let repo = TestRepo::new();
    let wt = task_with_hooks(&repo, &["--forbid", "src/store/**"]);
    let before = head(&repo, &wt);
    // Nothing staged: only `-a` puts the forbidden change into the commit.
    repo.write(&wt, "src/store/mod.rs", "// edited\n");
    let run = commit(&repo, &wt, &["-a", "-m", "all"]);
    assert_refused(&repo, &wt, &run, &before, "src/store/mod.rs", "forbidden");
    assert_eq!(
        repo.git(&wt, &["diff", "--cached", "--name-only"]),
        "",
        "git rolled its index back"
    );
}

#[test]
fn commit_of_paths_judges_only_those_paths() {
    let repo = TestRepo::new();
    let wt = task_with_hooks(&repo, &["--forbid", "src/store/**"]);
    let before = head(&repo, &wt);
    repo.write(&wt, "src/store/mod.rs", "// edited\n");
    let run = commit(&repo, &wt, &["-m", "paths", "--", "src/store/mod.rs"]);
    assert_refused(&repo, &wt, &run, &before, "src/store/mod.rs", "forbidden");

    // A forbidden change is staged, but `-- src/lib.rs` commits only src/lib.rs: allowed.
    repo.git(&wt, &["add", "src/store/mod.rs"]);
    repo.write(&wt, "src/lib.rs", "pub fn lib2() {}\n");
    commit(&repo, &wt, &["-m", "only lib", "--", "src/lib.rs"]).ok();
    assert_eq!(
        repo.git(&wt, &["show", "--name-only", "--format=", "HEAD"]),
        "src/lib.rs"
    );
    // The plain commit of what is still staged is refused.
    let before = head(&repo, &wt);
    let run = commit(&repo, &wt, &["-m", "the rest"]);
    assert_refused(&repo, &wt, &run, &before, "src/store/mod.rs", "forbidden");
}

#[test]
fn rename_into_a_forbidden_path_is_refused() {
    let repo = TestRepo::new();
    let wt = task_with_hooks(&repo, &["--forbid", "src/store/**"]);
    let before = head(&repo, &wt);
    repo.git(&wt, &["mv", "src/lib.rs", "src/store/lib.rs"]);
    let run = commit(&repo, &wt, &["-m", "move"]);
    assert_refused(&repo, &wt, &run, &before, "src/store/lib.rs", "forbidden");
    assert!(
        !run.stderr
            .lines()
            .any(|l| l.trim_start().starts_with("src/lib.rs")),
        "the old path is a plain deletion: {run}"
    );
}

/// A GUI runs hooks with a minimal environment: no terminal, `PATH=/usr/bin:/bin`, git-task not on it.
fn minimal_git(repo: &TestRepo, dir: &Path, args: &[&str]) -> Run {
    // The git of the test's PATH (2.55 under .ci/run's second pass), by its absolute path.
    let mut cmd = std::process::Command::new(tools::git_program());
    cmd.current_dir(dir)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .args(["-c", "user.name=GUI", "-c", "user.email=gui@example.com"])
        .args(args)
        .stdin(std::process::Stdio::null());
    let out = cmd.output().expect("git runs");
    let _ = repo;
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into(),
        stderr: String::from_utf8_lossy(&out.stderr).into(),
    }
}

#[test]
fn minimal_environment_still_blocks_through_the_recorded_binary() {
    let repo = TestRepo::new();
    let wt = task_with_hooks(&repo, &["--forbid", "src/store/**"]);
    let which = std::process::Command::new("sh")
        .args(["-c", "command -v git-task"])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    assert!(
        !which.status.success(),
        "git-task must not be on the minimal PATH for this test"
    );
    let before = head(&repo, &wt);
    repo.write(&wt, "src/store/mod.rs", "// edited\n");
    minimal_git(&repo, &wt, &["add", "-A"]).ok();
    let run = minimal_git(&repo, &wt, &["commit", "-q", "-m", "from a GUI"]);
    assert_refused(&repo, &wt, &run, &before, "src/store/mod.rs", "forbidden");
    // And an allowed change goes through in the same environment.
    repo.git(&wt, &["reset", "-q", "--hard"]);
    repo.write(&wt, "src/lib.rs", "pub fn gui() {}\n");
    minimal_git(
        &repo,
        &wt,
        &["commit", "-q", "-a", "-m", "allowed from a GUI"],
    )
    .ok();
    assert_ne!(head(&repo, &wt), before);
}

/// Installs the hooks from a copy of the binary, then deletes the copy: the recorded path points nowhere.
fn install_from_vanished_binary(repo: &TestRepo) -> PathBuf {
    let dir = repo.base().join("gone");
    std::fs::create_dir_all(&dir).unwrap();
    let copy = dir.join("git-task");
    // A hard link opens no file for writing. A copy does, and a child that another test
    // thread forks meanwhile inherits that descriptor until it execs, so running the copy
    // can fail with "Text file busy" for a moment: retry then.
    if std::fs::hard_link(bin(), &copy).is_err() {
        std::fs::copy(bin(), &copy).unwrap();
    }
    let mut tries = 0;
    let out = loop {
        let mut cmd = repo.command(&copy, repo.root());
        cmd.args(["hooks", "install"]);
        match cmd.output() {
            Err(e) if e.raw_os_error() == Some(26) && tries < 50 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            other => break other.unwrap(),
        }
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::remove_file(&copy).unwrap();
    copy
}

#[test]
fn non_task_branch_commits_without_git_task() {
    let repo = TestRepo::new();
    let gone = install_from_vanished_binary(&repo);
    // The shim git runs: the hooks directory's, or (git >= 2.54) the one defined in config.
    let shim = match tools::git_runs_config_hooks() {
        true => ".git/git-task/config-hooks/pre-commit",
        false => ".git/hooks/pre-commit",
    };
    let hook = repo.read(repo.root(), shim);
    assert!(
        hook.contains(&format!("git_task_bin='{}'", gone.display())),
        "{hook}"
    );
    repo.write(repo.root(), "src/lib.rs", "pub fn main_work() {}\n");
    let run = minimal_git(&repo, repo.root(), &["commit", "-q", "-a", "-m", "on main"]).ok();
    assert!(run.stderr.is_empty(), "{run}");
    assert_eq!(
        repo.git(repo.root(), &["log", "-1", "--format=%s"]),
        "on main"
    );
}

#[test]
fn task_branch_without_git_task_refuses_and_says_how_to_fix() {
    let repo = TestRepo::new();
    let wt = repo.start("t", &[]);
    install_from_vanished_binary(&repo);
    let before = head(&repo, &wt);
    repo.write(&wt, "src/lib.rs", "pub fn x() {}\n");
    let run = minimal_git(&repo, &wt, &["commit", "-q", "-a", "-m", "blind"]);
    assert_eq!(run.code, 1, "{run}");
    assert!(run.stderr.contains("neither at"), "{run}");
    assert!(run.stderr.contains("git task hooks install"), "{run}");
    assert_eq!(head(&repo, &wt), before);
    // post-checkout only warns: the checkout itself succeeds. Leaving the task
    // branch (detached: a task worktree makes no other branch) does not even start it.
    let run = minimal_git(&repo, &wt, &["switch", "-q", "--detach"]).ok();
    assert!(run.stderr.is_empty(), "{run}");
    let run = minimal_git(&repo, &wt, &["switch", "-q", "task/t"]).ok();
    assert!(
        run.stderr.contains("warning: git-task is neither at"),
        "{run}"
    );
    assert_eq!(repo.git(&wt, &["branch", "--show-current"]), "task/t");
}

#[cfg(unix)]
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

#[cfg(unix)]
#[test]
fn foreign_hook_under_hooks_path_keeps_running_and_is_restored() {
    if tools::config_hooks_instead("foreign_hook_under_hooks_path_keeps_running_and_is_restored") {
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let repo = TestRepo::new();
    let hooks = repo.base().join("team-hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    let foreign = hooks.join("pre-commit");
    let log = repo.base().join("foreign.log");
    let text = format!(
        "#!/bin/sh\n# the team's own check\necho \"ran $# $(pwd)\" >> '{}'\n[ ! -e '{}' ]\n",
        log.display(),
        repo.base().join("fail-now").display()
    );
    std::fs::write(&foreign, &text).unwrap();
    std::fs::set_permissions(&foreign, std::fs::Permissions::from_mode(0o700)).unwrap();
    repo.git(
        repo.root(),
        &["config", "core.hooksPath", hooks.to_str().unwrap()],
    );

    let j = repo.task_root(&["hooks", "install", "--json"]).ok().json();
    assert_eq!(j["dir"], hooks.to_str().unwrap());
    assert_eq!(j["hooks"][0]["action"], "chained", "{j}");
    assert_eq!(j["hooks"][1]["action"], "written", "{j}");
    let chained = hooks.join("pre-commit.git-task-chained");
    assert_eq!(std::fs::read_to_string(&chained).unwrap(), text);
    let status = repo.task_root(&["hooks", "status", "--json"]).ok().json();
    assert_eq!(status["hooks"][0]["state"], "installed", "{status}");
    assert_eq!(
        status["hooks"][0]["chained"],
        chained.to_str().unwrap(),
        "{status}"
    );

    // The foreign hook runs on a plain branch...
    repo.write(repo.root(), "README.md", "main work\n");
    commit(&repo, repo.root(), &["-a", "-m", "main"]).ok();
    assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 1);
    // ...and on a task branch, before the contract check; its failure stops the commit.
    let wt = repo.start("t", &["--forbid", "src/store/**"]);
    repo.write(&wt, "src/lib.rs", "pub fn t() {}\n");
    std::fs::write(repo.base().join("fail-now"), "").unwrap();
    let before = head(&repo, &wt);
    let run = commit(&repo, &wt, &["-a", "-m", "blocked by the team hook"]);
    assert_eq!(run.code, 1, "{run}");
    assert_eq!(head(&repo, &wt), before);
    assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 2);
    std::fs::remove_file(repo.base().join("fail-now")).unwrap();
    commit(&repo, &wt, &["-a", "-m", "both hooks pass"]).ok();
    assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 3);

    // Uninstall puts back exactly what was there.
    let j = repo
        .task_root(&["hooks", "uninstall", "--json"])
        .ok()
        .json();
    assert_eq!(j["hooks"][0]["action"], "restored", "{j}");
    assert_eq!(j["hooks"][1]["action"], "removed", "{j}");
    assert_eq!(std::fs::read_to_string(&foreign).unwrap(), text);
    assert_eq!(mode(&foreign), 0o700);
    assert!(!chained.exists());
    assert!(!hooks.join("post-checkout").exists());
    let mut left: Vec<String> = std::fs::read_dir(&hooks)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["pre-commit"]);
    repo.fsck();
}

#[cfg(unix)]
#[test]
fn a_chained_shell_hook_still_sees_its_own_name() {
    use std::os::unix::fs::PermissionsExt;
    // Hooks that dispatch on their file name (husky v4's husky.sh, multiplexers) keep working.
    let repo = TestRepo::new();
    let log = repo.base().join("names.log");
    let hook = repo.root().join(".git/hooks/pre-commit");
    std::fs::write(
        &hook,
        format!(
            "#!/bin/sh\necho \"$(basename \"$0\") $#\" >> '{}'\n",
            log.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    repo.task_root(&["hooks", "install"]).ok();
    repo.write(repo.root(), "README.md", "x\n");
    commit(&repo, repo.root(), &["-am", "x"]).ok();
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "pre-commit 0\n");
}

#[cfg(unix)]
#[test]
fn install_writes_the_shipped_shims_and_is_idempotent() {
    if tools::config_hooks_instead("install_writes_the_shipped_shims_and_is_idempotent") {
        return;
    }
    let repo = TestRepo::new();
    let first = repo.task_root(&["hooks", "install", "--json"]).ok().json();
    assert_eq!(first["kind"], "hooks_install");
    assert_eq!(first["notes_rewrite_ref_changed"], true);
    let binary = bin().canonicalize().unwrap();
    assert_eq!(first["binary"], binary.to_str().unwrap());
    let hooks = repo.root().join(".git/hooks");
    for name in ["pre-commit", "post-checkout"] {
        let shipped = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("hooks")
                .join(name),
        )
        .unwrap();
        // Only the binary line differs (the prefix is the default `task/`).
        let want = shipped.replacen(
            "git_task_bin=''",
            &format!("git_task_bin='{}'", binary.display()),
            1,
        );
        assert_eq!(
            std::fs::read_to_string(hooks.join(name)).unwrap(),
            want,
            "{name}"
        );
        assert_eq!(mode(&hooks.join(name)), 0o755);
    }
    assert_eq!(
        repo.git(repo.root(), &["config", "--get-all", "notes.rewriteRef"]),
        "refs/notes/tasks"
    );
    let stamp = std::fs::metadata(hooks.join("pre-commit"))
        .unwrap()
        .modified()
        .unwrap();
    let second = repo.task_root(&["hooks", "install", "--json"]).ok().json();
    assert_eq!(second["hooks"][0]["action"], "unchanged");
    assert_eq!(second["hooks"][1]["action"], "unchanged");
    assert_eq!(second["notes_rewrite_ref_changed"], false);
    assert_eq!(
        std::fs::metadata(hooks.join("pre-commit"))
            .unwrap()
            .modified()
            .unwrap(),
        stamp
    );
    let status = repo.task_root(&["hooks", "status"]).ok();
    assert!(
        status.stdout.contains("pre-commit       installed"),
        "{status}"
    );

    // An edited shim is only replaced with --force.
    let edited = std::fs::read_to_string(hooks.join("pre-commit"))
        .unwrap()
        .replace("exit 0 ;;", "exit 0 ;; # mine");
    std::fs::write(hooks.join("pre-commit"), &edited).unwrap();
    let status = repo.task_root(&["hooks", "status", "--json"]).ok().json();
    assert_eq!(status["hooks"][0]["state"], "modified", "{status}");
    repo.task_root(&["hooks", "install"]).code(2);
    assert_eq!(
        std::fs::read_to_string(hooks.join("pre-commit")).unwrap(),
        edited
    );
    repo.task_root(&["hooks", "install", "--force"]).ok();
    assert_eq!(
        repo.task_root(&["hooks", "status", "--json"]).ok().json()["hooks"][0]["state"],
        "installed"
    );

    // Uninstall removes the hooks and the config it added, and nothing else.
    repo.task_root(&["hooks", "uninstall"]).ok();
    assert!(!hooks.join("pre-commit").exists() && !hooks.join("post-checkout").exists());
    assert_eq!(
        repo.git_run(repo.root(), &["config", "--get-all", "notes.rewriteRef"])
            .code,
        1
    );
    assert_eq!(
        repo.git_run(
            repo.root(),
            &["config", "--get", "task.hooksAddedRewriteRef"]
        )
        .code,
        1
    );
    let again = repo
        .task_root(&["hooks", "uninstall", "--json"])
        .ok()
        .json();
    assert_eq!(again["hooks"][0]["action"], "absent");
}

#[test]
fn a_rewrite_ref_set_by_the_user_is_kept_on_uninstall() {
    let repo = TestRepo::new();
    repo.git(
        repo.root(),
        &["config", "notes.rewriteRef", "refs/notes/tasks"],
    );
    let j = repo.task_root(&["hooks", "install", "--json"]).ok().json();
    assert_eq!(j["notes_rewrite_ref_changed"], false);
    repo.task_root(&["hooks", "uninstall"]).ok();
    assert_eq!(
        repo.git(repo.root(), &["config", "--get-all", "notes.rewriteRef"]),
        "refs/notes/tasks"
    );
}

fn mark(repo: &TestRepo, worktree_name: &str) -> Option<String> {
    std::fs::read_to_string(
        repo.root()
            .join(".git/worktrees")
            .join(worktree_name)
            .join("git-task-active"),
    )
    .ok()
}

/// The post-checkout message `start` triggers names the new worktree: read in the user's own
/// terminal, it must not say that their worktree changed.
#[test]
fn the_message_start_triggers_names_the_new_worktree() {
    let repo = TestRepo::new();
    repo.task_root(&["hooks", "install"]).ok();
    let run = repo.task_root(&["start", "t"]).ok();
    let wt = repo.task_dir("t");
    assert!(
        run.stderr.contains(&format!(
            "task 't' is active in the worktree '{}'",
            wt.display()
        )),
        "{run}"
    );
    assert!(!run.stderr.contains("this worktree"), "{run}");
}

#[test]
fn post_checkout_marks_and_clears_on_branch_switches() {
    let repo = TestRepo::new();
    let wt = task_with_hooks(&repo, &["--forbid", "src/store/**"]);
    assert_eq!(
        mark(&repo, "t").as_deref(),
        Some("t\nbranch refs/heads/task/t\n"),
        "start runs post-checkout"
    );

    // Off the task branch (detached: the reference-transaction hook lets a task worktree
    // make no other branch).
    let run = repo.git_run(&wt, &["switch", "--detach"]).ok();
    assert!(run.stderr.contains("task 't' is no longer active"), "{run}");
    assert_eq!(mark(&repo, "t"), None);
    // Off the branch the task's contract does not apply.
    repo.write(&wt, "src/store/mod.rs", "// fine here\n");
    commit(&repo, &wt, &["-a", "-m", "side work"]).ok();

    let run = repo.git_run(&wt, &["switch", "task/t"]).ok();
    assert!(
        run.stderr.contains("task 't' is active in the worktree '"),
        "{run}"
    );
    assert!(
        run.stderr.contains("forbidden  src/store/**"),
        "the contract is shown: {run}"
    );
    assert_eq!(
        mark(&repo, "t").as_deref(),
        Some("t\nbranch refs/heads/task/t\n")
    );
    // A file checkout changes nothing.
    let run = repo.git_run(&wt, &["checkout", "--", "src/lib.rs"]).ok();
    assert!(run.stderr.is_empty(), "{run}");
}

#[test]
fn worktree_add_of_a_task_branch_marks_it_active_there() {
    let repo = TestRepo::new();
    let wt = task_with_hooks(&repo, &[]);
    repo.git(repo.root(), &["worktree", "remove", wt.to_str().unwrap()]);
    let other = repo.base().join("elsewhere");
    let run = repo
        .git_run(
            repo.root(),
            &["worktree", "add", other.to_str().unwrap(), "task/t"],
        )
        .ok();
    assert!(
        run.stderr.contains("task 't' is active in the worktree '"),
        "{run}"
    );
    assert_eq!(
        mark(&repo, "elsewhere").as_deref(),
        Some("t\nbranch refs/heads/task/t\n")
    );
    let j = repo.task(&other, &["check", "--json"]).ok().json();
    assert_eq!(
        j["task"], "t",
        "the active task is found from the new worktree: {j}"
    );
}

#[test]
fn checking_out_a_finished_task_warns() {
    let repo = TestRepo::new();
    let wt = task_with_hooks(&repo, &[]);
    repo.git(repo.root(), &["worktree", "remove", wt.to_str().unwrap()]);
    repo.task_root(&["remove", "t"]).ok();
    repo.git(repo.root(), &["branch", "task/t", "main"]);
    let run = repo.git_run(repo.root(), &["switch", "task/t"]).ok();
    assert!(run.stderr.contains("warning: task 't' is removed"), "{run}");
    assert!(!repo.root().join(".git/git-task-active").exists());
}

#[test]
fn revert_on_violation_saves_an_attempt_and_restores_the_paths() {
    let repo = TestRepo::new();
    let wt = task_with_hooks(&repo, &["--forbid", "src/store/**"]);
    repo.git(repo.root(), &["config", "task.onViolation", "revert"]);
    // Set after the first start pinned the settings: trusted to be used.
    repo.task_root(&["trust", "--yes"]).ok();
    let before = head(&repo, &wt);
    repo.write(&wt, "src/store/mod.rs", "// staged edit\n");
    repo.write(&wt, "src/store/new.rs", "// new forbidden file\n");
    repo.write(&wt, "src/lib.rs", "pub fn kept() {}\n");
    repo.git(&wt, &["add", "-A"]);
    repo.write(&wt, "src/store/mod.rs", "// unstaged edit on top\n");
    let run = commit(&repo, &wt, &["-m", "revert me"]);
    assert_refused(&repo, &wt, &run, &before, "src/store/mod.rs", "forbidden");
    assert!(run.stderr.contains("refs/tasks/t/attempts/1"), "{run}");
    assert_eq!(
        repo.refs("refs/tasks/t/attempts/"),
        ["refs/tasks/t/attempts/1"]
    );
    // The attempt holds the files as they were on disk, and the staged state as its second parent.
    let attempt = "refs/tasks/t/attempts/1";
    assert_eq!(
        repo.git(&wt, &["show", &format!("{attempt}:src/store/mod.rs")]),
        "// unstaged edit on top"
    );
    assert_eq!(
        repo.git(&wt, &["show", &format!("{attempt}:src/store/new.rs")]),
        "// new forbidden file"
    );
    assert_eq!(
        repo.git(&wt, &["show", &format!("{attempt}^2:src/store/mod.rs")]),
        "// staged edit"
    );
    // The offending paths are back to HEAD; the allowed change stays staged.
    assert_eq!(repo.read(&wt, "src/store/mod.rs"), "pub fn store() {}\n");
    assert!(!wt.join("src/store/new.rs").exists());
    assert_eq!(repo.porcelain(&wt), "M  src/lib.rs");
    commit(&repo, &wt, &["-m", "allowed part"]).ok();
    repo.fsck();
}

#[test]
fn judging_is_the_same_from_a_subdirectory() {
    let repo = TestRepo::new();
    let wt = task_with_hooks(&repo, &["--forbid", "src/store/**"]);
    let before = head(&repo, &wt);
    repo.write(&wt, "src/store/mod.rs", "// edited\n");
    let run = commit(&repo, &wt.join("src/store"), &["-a", "-m", "from below"]);
    assert_refused(&repo, &wt, &run, &before, "src/store/mod.rs", "forbidden");
}

#[test]
fn a_checkout_mark_counts_only_while_its_branch_is_checked_out() {
    let repo = TestRepo::new();
    let wt = task_with_hooks(&repo, &["--forbid", "src/store/**"]);
    // A mark left behind for a branch that is no longer checked out here (post-checkout did not run).
    std::fs::write(
        repo.root().join(".git/git-task-active"),
        "t\nbranch refs/heads/task/t\n",
    )
    .unwrap();
    repo.write(repo.root(), "src/store/mod.rs", "// main may do this\n");
    commit(&repo, repo.root(), &["-a", "-m", "main work"]).ok();
    assert_eq!(
        repo.git(repo.root(), &["log", "-1", "--format=%s"]),
        "main work"
    );
    // While it is checked out, the mark and the branch agree and the contract applies.
    repo.write(&wt, "src/store/mod.rs", "// not here\n");
    let before = head(&repo, &wt);
    let run = commit(&repo, &wt, &["-a", "-m", "task work"]);
    assert_refused(&repo, &wt, &run, &before, "src/store/mod.rs", "forbidden");
}

#[test]
fn concluding_a_merge_judges_only_what_the_task_wrote() {
    let repo = TestRepo::new();
    let wt = task_with_hooks(&repo, &["--forbid", "src/store/**"]);
    // The base moves on, touching a path the task may not touch and one the task also changed.
    repo.write(
        repo.root(),
        "src/store/mod.rs",
        "pub fn store() { /* main */ }\n",
    );
    repo.write(repo.root(), "README.md", "# main\n");
    commit(&repo, repo.root(), &["-a", "-m", "main moves"]).ok();
    repo.write(&wt, "README.md", "# task\n");
    commit(&repo, &wt, &["-a", "-m", "task work"]).ok();
    let run = repo.git_run(&wt, &["merge", "-q", "main"]);
    assert_ne!(run.code, 0, "README.md conflicts: {run}");
    repo.write(&wt, "README.md", "# task and main\n");
    repo.git(&wt, &["add", "README.md"]);
    // A forbidden edit slipped into the resolution is still refused...
    repo.write(&wt, "src/store/mod.rs", "// sneaked in\n");
    repo.git(&wt, &["add", "src/store/mod.rs"]);
    let before = head(&repo, &wt);
    let refused = commit(&repo, &wt, &["--no-edit"]);
    assert_refused(
        &repo,
        &wt,
        &refused,
        &before,
        "src/store/mod.rs",
        "forbidden",
    );
    // ...but main's own change to it, taken as it is, is not the task's doing.
    repo.git(&wt, &["checkout", "main", "--", "src/store/mod.rs"]);
    commit(&repo, &wt, &["--no-edit"]).ok();
    assert_eq!(
        repo.git(&wt, &["rev-list", "--count", "--merges", "HEAD"]),
        "1"
    );
}

/// The revert writes files as git's checkout does: an executable keeps its bit and gets the mode
/// git gives it, a symlink is a symlink again; `git status` then sees nothing at those paths.
#[cfg(unix)]
#[test]
fn revert_restores_executables_and_links_as_git_checks_them_out() {
    use std::os::unix::fs::PermissionsExt;
    let repo = TestRepo::new();
    let root = repo.root().to_path_buf();
    repo.write(&root, "src/store/run.sh", "#!/bin/sh\necho hi\n");
    std::fs::set_permissions(
        root.join("src/store/run.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    std::os::unix::fs::symlink("mod.rs", root.join("src/store/link")).unwrap();
    repo.git(&root, &["add", "-A"]);
    repo.git(&root, &["commit", "-q", "-m", "an executable and a link"]);
    let wt = task_with_hooks(&repo, &["--forbid", "src/store/**"]);
    repo.git(repo.root(), &["config", "task.onViolation", "revert"]);
    // Set after the first start pinned the settings: trusted to be used.
    repo.task_root(&["trust", "--yes"]).ok();
    let before = head(&repo, &wt);
    repo.write(&wt, "src/store/run.sh", "#!/bin/sh\necho changed\n");
    std::fs::set_permissions(
        wt.join("src/store/run.sh"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    std::fs::remove_file(wt.join("src/store/link")).unwrap();
    repo.write(&wt, "src/store/link", "now a file\n");
    repo.git(&wt, &["add", "-A"]);
    let run = commit(&repo, &wt, &["-m", "revert me"]);
    assert_refused(&repo, &wt, &run, &before, "src/store/link", "forbidden");
    assert_eq!(
        repo.porcelain(&wt),
        "",
        "git sees HEAD's content and modes again"
    );
    let mode = |p: &Path| std::fs::symlink_metadata(p).unwrap().permissions().mode() & 0o777;
    // git's own checkout of the same file is the oracle for the mode.
    let oracle = repo.base().join("oracle");
    repo.git(
        &root,
        &[
            "checkout-index",
            &format!("--prefix={}/", oracle.display()),
            "src/store/run.sh",
        ],
    );
    assert_eq!(
        mode(&wt.join("src/store/run.sh")),
        mode(&oracle.join("src/store/run.sh"))
    );
    assert_eq!(
        std::fs::read_link(wt.join("src/store/link")).unwrap(),
        Path::new("mod.rs")
    );
}
