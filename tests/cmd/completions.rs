//! `git task completions bash|zsh|fish`: the scripts complete commands, flags and task ids in
//! real shells, for `git task …` (through git's own completion) and `git-task …`.
//!
//! bash is always there; zsh and fish are tested where installed (`.ci/run` installs them):
//! missing, their tests fail under `CI` and print a visible SKIP otherwise.

use crate::common::{Run, TestRepo};
use std::path::{Path, PathBuf};

/// git's own bash completion, as the git package installs it.
fn git_bash_completion() -> Option<PathBuf> {
    [
        "/usr/share/bash-completion/completions/git",
        "/usr/local/share/bash-completion/completions/git",
        "/etc/bash_completion.d/git",
    ]
    .into_iter()
    .map(PathBuf::from)
    .find(|p| p.exists())
}

/// Whether `program` runs; when it does not, SKIP visibly, or fail under `CI`.
fn have(program: &str) -> bool {
    let ok = std::process::Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "{program} is not installed (CI installs it in .ci/run)"
        );
        eprintln!("SKIP: {program} is not installed; its completion is not tested");
    }
    ok
}

/// Writes the script for `shell` under the test's home and returns its path.
fn script(repo: &TestRepo, shell: &str, name: &str) -> PathBuf {
    let run = repo.task_root(&["completions", shell]).ok();
    let dir = repo.base().join("completions");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, &run.stdout).unwrap();
    path
}

fn run_shell(repo: &TestRepo, dir: &Path, program: &str, args: &[&str]) -> Run {
    let out = repo
        .command(program, dir)
        .args(args)
        .output()
        .expect("the shell runs");
    Run::of(out)
}

/// The candidates, sorted (the shell sorts them for display).
fn lines(run: &Run) -> Vec<&str> {
    let mut lines: Vec<&str> = run.stdout.lines().collect();
    lines.sort();
    lines
}

/// Completes `line` (the cursor at its end) in bash with git's completion and ours loaded.
fn bash_complete(repo: &TestRepo, git_completion: &Path, ours: &Path, line: &str) -> Run {
    // Split as bash would; a trailing space means an empty word to complete.
    let program = format!(
        r#"source '{git}'
source '{ours}'
line='{line}'
read -r -a COMP_WORDS <<< "$line"
[[ $line == *' ' ]] && COMP_WORDS+=("")
COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))
COMP_LINE=$line
COMP_POINT=${{#line}}
func=$(complete -p "${{COMP_WORDS[0]}}" | sed -n 's/.*-F \([^ ]*\).*/\1/p')
"$func" "${{COMP_WORDS[0]}}" "${{COMP_WORDS[COMP_CWORD]}}" "${{COMP_WORDS[COMP_CWORD-1]}}"
printf '%s\n' "${{COMPREPLY[@]}}"
"#,
        git = git_completion.display(),
        ours = ours.display(),
    );
    run_shell(
        repo,
        repo.root(),
        "bash",
        &["--norc", "--noprofile", "-c", &program],
    )
    .ok()
}

#[test]
fn bash_completes_commands_flags_and_task_ids_under_git_and_alone() {
    let Some(git_completion) = git_bash_completion() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "git's bash completion is not installed"
        );
        eprintln!("SKIP: git's bash completion is not installed");
        return;
    };
    let repo = TestRepo::new();
    repo.start("auth-fix", &[]);
    repo.start("api-docs", &[]);
    repo.start("zeta", &[]);
    let ours = script(&repo, "bash", "git-task.bash");
    // Task ids, through git's completion calling _git_task.
    let run = bash_complete(&repo, &git_completion, &ours, "git task merge a");
    assert_eq!(lines(&run), ["api-docs", "auth-fix"], "{run}");
    let run = bash_complete(&repo, &git_completion, &ours, "git task status ");
    assert_eq!(lines(&run), ["api-docs", "auth-fix", "zeta"], "{run}");
    // After global flags too.
    let run = bash_complete(&repo, &git_completion, &ours, "git task --json log z");
    assert_eq!(lines(&run), ["zeta"], "{run}");
    // Commands and flags.
    let run = bash_complete(&repo, &git_completion, &ours, "git task che");
    assert_eq!(lines(&run), ["check", "checkpoint"], "{run}");
    let run = bash_complete(&repo, &git_completion, &ours, "git task merge --ke");
    assert_eq!(lines(&run), ["--keep"], "{run}");
    // Hidden commands are not offered.
    let run = bash_complete(&repo, &git_completion, &ours, "git task h");
    assert_eq!(lines(&run), ["harness", "hooks"], "{run}");
    // Commands with more positionals than the id (exec, release): the id is the first.
    let run = bash_complete(&repo, &git_completion, &ours, "git task release z");
    assert_eq!(lines(&run), ["zeta"], "{run}");
    let run = bash_complete(&repo, &git_completion, &ours, "git task exec ap");
    assert_eq!(lines(&run), ["api-docs"], "{run}");
    // `git-task` on its own.
    let run = bash_complete(&repo, &git_completion, &ours, "git-task drop au");
    assert_eq!(lines(&run), ["auth-fix"], "{run}");
}

#[test]
fn complete_offers_no_ids_outside_a_repository_and_the_script_needs_none() {
    let repo = TestRepo::new();
    let outside = repo.base().join("home");
    let run = repo.task(&outside, &["completions", "bash"]).ok();
    assert!(run.stdout.contains("_git_task()"), "{run}");
    let run = repo
        .task(&outside, &["__complete", "2", "--", "merge", ""])
        .ok();
    assert_eq!(run.stdout, "", "{run}");
    repo.task(&outside, &["completions", "tcsh"]).code(2);
}

#[test]
fn zsh_completes_task_ids_for_git_task_and_git_dash_task() {
    if !have("zsh") {
        return;
    }
    let repo = TestRepo::new();
    repo.start("auth-fix", &[]);
    repo.start("api-docs", &[]);
    let ours = script(&repo, "zsh", "_git-task");
    // Load the function and call it as zsh's completion system would, with compadd stubbed
    // to print what it is given.
    let program = format!(
        r#"compdef() {{ : }}
source '{ours}'
compadd() {{ [[ $1 == -a ]] && print -l -- ${{(P)2}} }}
words=(task merge a); CURRENT=3; _git-task
print -- ++
words=(git-task status ''); CURRENT=3; _git-task
"#,
        ours = ours.display()
    );
    let run = run_shell(&repo, repo.root(), "zsh", &["-f", "-c", &program]).ok();
    assert_eq!(
        run.stdout.lines().collect::<Vec<_>>(),
        ["api-docs", "auth-fix", "++", "api-docs", "auth-fix"],
        "{run}"
    );
}

#[test]
fn fish_completes_task_ids() {
    if !have("fish") {
        return;
    }
    let repo = TestRepo::new();
    repo.start("auth-fix", &[]);
    repo.start("api-docs", &[]);
    let ours = script(&repo, "fish", "git-task.fish");
    let program = format!(
        "source '{}'; complete -C 'git-task merge a'; echo ++; complete -C 'git-task chec'",
        ours.display()
    );
    let run = run_shell(&repo, repo.root(), "fish", &["--no-config", "-c", &program]).ok();
    let got: Vec<&str> = run
        .stdout
        .lines()
        .map(|l| l.split('\t').next().unwrap())
        .collect();
    assert_eq!(
        got,
        ["api-docs", "auth-fix", "++", "check", "checkpoint"],
        "{run}"
    );
}

#[test]
fn install_sh_installs_and_uninstalls_the_completions() {
    let tmp = crate::common::temp_dir();
    let prefix = tmp.path().join("prefix");
    let run = |args: &[&str]| {
        let out = std::process::Command::new("sh")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("install.sh"))
            .args(args)
            .current_dir(tmp.path())
            .env("PREFIX", &prefix)
            .env("GIT_TASK_BIN", crate::common::bin())
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    };
    run(&[]);
    let files = [
        ("bash", "share/bash-completion/completions/git-task"),
        ("zsh", "share/zsh/site-functions/_git-task"),
        ("fish", "share/fish/vendor_completions.d/git-task.fish"),
    ];
    for (shell, file) in files {
        let repo_independent = std::process::Command::new(crate::common::bin())
            .args(["completions", shell])
            .output()
            .unwrap();
        let installed = std::fs::read(prefix.join(file)).unwrap();
        assert_eq!(installed, repo_independent.stdout, "{file}");
    }
    run(&["--uninstall"]);
    for (_, file) in files {
        assert!(!prefix.join(file).exists(), "{file}");
    }
}
