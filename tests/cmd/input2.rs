//! Bad and odd input, as a new user, a script and an agent meet it: every refusal is a
//! git-style `error:` with a `hint:`, exit 2, nothing written; with `--json` the error is also
//! one JSON document on stdout (`schema/error.json`).

use crate::common::{all_refs, assert_nothing_written};
use crate::common::{Run, TestRepo};
use serde_json::Value;
use std::path::Path;

/// The errors of `doc` against the checked-in `schema/error.json`.
fn error_schema_errors(doc: &Value) -> Vec<String> {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/error.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    validator.iter_errors(doc).map(|e| e.to_string()).collect()
}

/// Asserts `run` failed with `code`, printed `error:` on stderr and, on stdout, exactly one
/// JSON error document with the same exit code, valid against `schema/error.json`.
#[track_caller]
fn json_error(run: &Run, code: i32) -> Value {
    assert_eq!(run.code, code, "{run}");
    assert!(run.stderr.starts_with("error: "), "{run}");
    let doc = run.json();
    assert_eq!(doc["kind"], "error", "{run}");
    assert_eq!(doc["exit_code"], code, "{run}");
    assert_eq!(doc["schema_version"], 1, "{run}");
    assert_eq!(error_schema_errors(&doc), Vec::<String>::new(), "{doc:#}");
    assert!(!doc["message"].as_str().unwrap().is_empty(), "{doc:#}");
    doc
}

#[test]
fn json_errors_are_one_json_document_on_stdout() {
    let repo = TestRepo::new();
    let root = repo.root();
    // Usage errors clap refuses before anything runs, wherever --json is.
    for args in [
        &["--json", "start", "../x"][..],
        &["start", "--json", "a b"],
        &["--json", "frobnicate"],
        &["--json", "pool", "fill", "abc"],
        &["--json"],
    ] {
        let doc = json_error(&repo.task(root, args), 2);
        assert_eq!(doc["error"], "input", "{args:?}");
    }
    // Errors of the commands themselves.
    for args in [
        &["--json", "status", "nosuch"][..],
        &["--json", "path", "nosuch"],
        &["--json", "start", "x", "--base", "nosuch"],
        &["--json", "start", "x", "--allow", "src/[x"],
        &["--json", "merge", "nosuch"],
        &["--json", "exec", "nosuch", "--", "true"],
        &["--json", "-C", "does-not-exist", "list"],
    ] {
        let doc = json_error(&repo.task(root, args), 2);
        assert!(
            doc["hints"].as_array().is_some_and(|h| !h.is_empty()),
            "{args:?}: {doc:#}"
        );
    }
    // `--json` after `--` belongs to the command exec runs: no JSON of git-task's own.
    let run = repo.task(root, &["exec", "nosuch", "--", "--json"]).code(2);
    assert_eq!(run.stdout, "", "{run}");
    // Outside any repository: exit 128, the error names `git init`.
    let outside = repo.base().join("home");
    let doc = json_error(&repo.task(&outside, &["--json", "list"]), 128);
    assert_eq!(doc["error"], "repo");
    assert!(
        doc["hints"][0].as_str().unwrap().contains("git init"),
        "{doc:#}"
    );
    assert_nothing_written(&repo);
}

#[test]
fn globs_that_can_match_no_path_are_refused_at_start_and_claim() {
    let repo = TestRepo::new();
    for glob in ["../src/**", "./src", "src//store", "src/./lib.rs", "src/.."] {
        let run = repo.task_root(&["start", "t", "--allow", glob]).code(2);
        assert!(run.stderr.contains(&format!("bad glob '{glob}'")), "{run}");
        assert!(run.stderr.contains("hint: "), "{run}");
        let run = repo.task_root(&["start", "t", "--forbid", glob]).code(2);
        assert!(run.stderr.contains("--forbid"), "{run}");
    }
    // The same in a contract file: its line and column.
    let file = repo.base().join("c.toml");
    std::fs::write(
        &file,
        "version = 1\nallowed = [\"src/**\",\n  \"../x/**\"]\n",
    )
    .unwrap();
    let run = repo
        .task_root(&["start", "t", "--contract", file.to_str().unwrap()])
        .code(2);
    assert!(
        run.stderr.contains("c.toml:3:3: bad glob '../x/**'"),
        "{run}"
    );
    assert_nothing_written(&repo);
    // A leading '/' anchors at the root, a trailing one names a directory: both fine.
    repo.task_root(&["start", "t", "--allow", "/src/", "--forbid", "/README.md"])
        .ok();
    let before = all_refs(&repo);
    let run = repo.task_root(&["claim", "t", "../src/**"]).code(2);
    assert!(run.stderr.contains("bad glob '../src/**'"), "{run}");
    assert_eq!(all_refs(&repo), before, "claim wrote");
}

#[test]
fn an_empty_check_command_is_refused() {
    let repo = TestRepo::new();
    for check in ["", "  "] {
        let run = repo.task_root(&["start", "t", "--check", check]).code(2);
        assert!(run.stderr.contains("empty command"), "{run}");
        assert!(run.stderr.contains("hint: "), "{run}");
    }
    let file = repo.base().join("c.toml");
    std::fs::write(
        &file,
        "version = 1\n\n[checks]\ncommands = [\"cargo test\", \"\"]\n",
    )
    .unwrap();
    let run = repo
        .task_root(&["start", "t", "--contract", file.to_str().unwrap()])
        .code(2);
    assert!(
        run.stderr
            .contains("c.toml:4:1: a check command cannot be empty"),
        "{run}"
    );
    assert_nothing_written(&repo);
}

#[test]
fn a_contract_file_that_is_not_utf8_or_is_huge_is_refused_with_where() {
    let repo = TestRepo::new();
    let file = repo.base().join("c.toml");
    std::fs::write(&file, b"version = 1\nallowed = [\"s\xffx\"]\n").unwrap();
    let run = repo
        .task_root(&["start", "t", "--contract", file.to_str().unwrap()])
        .code(2);
    assert!(run.stderr.contains("c.toml:2:14: not UTF-8"), "{run}");
    assert!(run.stderr.contains("hint: "), "{run}");
    // A big file (a log, a binary, /dev/zero) is not read to its end.
    let mut big = b"version = 1\n".to_vec();
    big.resize(3 << 20, b'#');
    std::fs::write(&file, &big).unwrap();
    let run = repo
        .task_root(&["start", "t", "--contract", file.to_str().unwrap()])
        .code(2);
    assert!(run.stderr.contains("is larger than"), "{run}");
    #[cfg(unix)]
    {
        let run = repo
            .task_root(&["start", "t", "--contract", "/dev/zero"])
            .code(2);
        assert!(run.stderr.contains("is larger than"), "{run}");
    }
    assert_nothing_written(&repo);
}

#[test]
fn bad_task_config_values_are_refused_naming_the_key() {
    let repo = TestRepo::new();
    for (key, value) in [
        ("task.poolSize", "-1"),
        ("task.poolSize", "lots"),
        ("task.poolSize", "65"),
        ("task.keepOnMerge", "maybe"),
        ("task.onViolation", "Revert"),
        ("task.harnessAllow", "src/[x"),
        ("task.harnessForbid", "../secrets/**"),
        ("task.branchPrefix", "bad..name/"),
        ("task.branchPrefix", "with space"),
        ("task.branchPrefix", "-dash/"),
    ] {
        repo.git(repo.root(), &["config", key, value]);
        for args in [
            &["list"][..],
            &["start", "t"],
            &["--json", "pool", "status"],
        ] {
            let run = repo.task_root(args).code(2);
            assert!(
                run.stderr
                    .starts_with(&format!("error: bad value '{value}' for '{key}'")),
                "{key}={value} {args:?}: {run}"
            );
            // The hints are commands that work as pasted.
            let hints: Vec<&str> = run
                .stderr
                .lines()
                .filter_map(|l| l.strip_prefix("hint: "))
                .collect();
            assert!(hints.len() >= 2, "{run}");
            let show = hints[0].split_once(": ").unwrap().1;
            let argv: Vec<&str> = show.split_whitespace().skip(1).collect();
            let shown = repo.git(repo.root(), &argv);
            assert!(shown.contains(value), "{show}: {shown}");
        }
        assert_nothing_written(&repo);
        repo.git(repo.root(), &["config", "--unset-all", key]);
    }
    // Good values are taken.
    repo.git(repo.root(), &["config", "task.keepOnMerge", "yes"]);
    repo.git(repo.root(), &["config", "task.onViolation", "revert"]);
    repo.git(repo.root(), &["config", "task.poolSize", "0"]);
    repo.task_root(&["list"]).ok();
}

/// Runs `command` with `sh -c` in `dir`, as a user pasting it would.
fn sh(repo: &TestRepo, dir: &Path, command: &str) -> Run {
    let out = repo
        .command("sh", dir)
        .args(["-c", command])
        .output()
        .unwrap();
    Run::of(out)
}

/// The commands of a report's `hint:` lines that are indented: the repair commands.
fn repair_commands(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter_map(|l| l.strip_prefix("hint:   "))
        .map(|l| l.split("   #").next().unwrap().trim().to_owned())
        .collect()
}

#[test]
fn repair_commands_work_as_pasted_for_new_files_not_yet_staged() {
    let repo = TestRepo::new();
    let wt = repo.base().join("my tasks").join("t");
    repo.task_root(&[
        "start",
        "t",
        "--allow",
        "src/store/**",
        "--path",
        wt.to_str().unwrap(),
    ])
    .ok();
    let sub = wt.join("src/store");
    repo.write(&wt, "src/lib.rs", "changed\n");
    repo.write(&wt, "src/new.rs", "new\n");
    repo.write(&wt, "src/staged.rs", "new\n");
    repo.git(&wt, &["add", "src/staged.rs"]);
    let run = repo.task(&sub, &["check"]).code(1);
    let commands = repair_commands(&format!("{}{}", run.stdout, run.stderr));
    assert_eq!(commands.len(), 2, "{run}");
    for command in &commands {
        let pasted = sh(&repo, &sub, command);
        assert_eq!(pasted.code, 0, "{command}: {pasted}");
    }
    assert_eq!(repo.read(&wt, "src/lib.rs"), "pub fn lib() {}\n");
    assert_eq!(
        repo.porcelain(&wt),
        "?? src/new.rs\n?? src/staged.rs",
        "only the new files are left, untracked"
    );
}

/// The command a `hint:` line ends with, after its last `: `.
fn hinted_command(stderr: &str, starts: &str) -> String {
    let line = stderr
        .lines()
        .filter_map(|l| l.strip_prefix("hint: "))
        .find(|l| l.contains(starts))
        .unwrap_or_else(|| panic!("no hint with '{starts}':\n{stderr}"));
    line[line.find(starts).unwrap()..].to_owned()
}

#[test]
fn the_hint_to_start_over_with_another_contract_is_the_command_to_paste() {
    let repo = TestRepo::new();
    repo.task_root(&["start", "t", "--allow", "src/**"]).ok();
    let run = repo
        .task_root(&[
            "start",
            "t",
            "--allow",
            "src/store/**",
            "--forbid",
            "it's here/**",
            "--no-deletions",
        ])
        .code(2);
    let command = hinted_command(&run.stderr, "git task start t --reset");
    assert!(!command.contains('<'), "a placeholder: {command}");
    sh(&repo, repo.root(), &command).ok();
    let status = repo.task_root(&["--json", "status", "t"]).ok().json();
    assert_eq!(
        status["contract"]["allowed"],
        serde_json::json!(["src/store/**"])
    );
    assert_eq!(
        status["contract"]["forbidden"],
        serde_json::json!(["it's here/**"])
    );
}

#[test]
fn a_patch_file_that_cannot_be_written_is_refused_before_anything_is_saved() {
    let repo = TestRepo::new();
    let wt = repo.start("t", &[]);
    repo.write(&wt, "src/lib.rs", "changed\n");
    let before = all_refs(&repo);
    for file in ["no/such/dir/attempt.patch", "."] {
        let run = repo
            .task(&wt, &["revert", "t", "--patch-file", file])
            .code(2);
        assert!(run.stderr.contains("cannot write the patch file"), "{run}");
        assert!(run.stderr.contains("hint: "), "{run}");
        assert_eq!(all_refs(&repo), before, "an attempt was saved");
        assert_eq!(repo.read(&wt, "src/lib.rs"), "changed\n");
    }
    repo.task(&wt, &["revert", "t", "--patch-file", "attempt.patch"])
        .ok();
    assert!(repo.read(&wt, "attempt.patch").contains("+changed"));
}

#[test]
fn revision_hints_name_no_branch_that_may_not_exist() {
    let repo = TestRepo::empty();
    repo.write(repo.root(), "a", "a\n");
    repo.git(repo.root(), &["checkout", "-q", "-b", "trunk"]);
    // An unborn branch: a pool needs a first commit, as start does.
    let run = repo.task_root(&["pool", "fill", "--wait"]).code(2);
    assert!(
        run.stderr
            .starts_with("error: branch 'trunk' has no commits yet"),
        "{run}"
    );
    repo.git(repo.root(), &["add", "-A"]);
    repo.git(repo.root(), &["commit", "-q", "-m", "first"]);
    for args in [
        &["start", "t", "--base", "nosuch"][..],
        &["start", "t", "--base", "HEAD~3"],
    ] {
        let run = repo.task_root(args).code(2);
        assert!(!run.stderr.contains("main"), "{args:?}: {run}");
        assert!(run.stderr.contains("git branch"), "{run}");
    }
    repo.start("t", &[]);
    let run = repo.task_root(&["reset", "t", "--onto", "nosuch"]).code(2);
    assert!(!run.stderr.contains("--base"), "{run}");
}

#[test]
fn a_start_that_fails_leaves_no_digest_behind() {
    let repo = TestRepo::new();
    let run = repo
        .task_root(&["start", "t", "--allow", "src/store/**", "--setup", "exit 3"])
        .code(1);
    assert!(
        run.stderr.contains("exit 3") || run.stdout.contains("exit 3"),
        "{run}"
    );
    assert_nothing_written(&repo);
    let git_task = repo.root().join(".git/git-task");
    let frozen = git_task.join("frozen/t");
    assert!(!frozen.exists(), "left behind: {frozen:?}");
    // The same id starts again, with a wider contract (the failed start's binds nothing), and
    // merges: nothing stale is taken for the truth.
    let wt = repo.start("t", &[]);
    repo.write(&wt, "src/lib.rs", "changed\n");
    repo.task(&wt, &["commit", "-m", "work"]).ok();
    repo.task_root(&["merge", "t", "--no-checks"]).ok();
}

#[test]
fn patch_mode_refusals_hint_the_start_to_run() {
    let repo = TestRepo::new();
    let run = repo
        .task_root(&["start", "p", "--mode", "patch", "--path", "../x"])
        .code(2);
    assert!(
        run.stderr.contains("own worktree: git task start p\n"),
        "{run}"
    );
    repo.task_root(&["start", "p", "--mode", "patch"]).ok();
    let run = repo.task_root(&["start", "q", "--mode", "patch"]).code(2);
    let command = hinted_command(&run.stderr, "git task start q");
    assert_eq!(command, "git task start q");
    sh(&repo, repo.root(), &command).ok();
    assert!(repo.task_dir("q").is_dir());
}

#[test]
fn the_harness_hint_for_a_foreign_worktree_removes_it_when_pasted() {
    let repo = TestRepo::new();
    let wt = repo.base().join("their tree");
    repo.git(
        repo.root(),
        &["worktree", "add", "-q", "--detach", wt.to_str().unwrap()],
    );
    let input = serde_json::json!({
        "hook_event_name": "WorktreeRemove",
        "cwd": repo.root(),
        "worktree_path": wt,
    });
    let mut child =
        crate::common::task_command(&repo, repo.root(), &["harness", "claude", "remove"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let run = crate::common::collect(child).code(2);
    let command = hinted_command(&run.stderr, "git worktree remove");
    sh(&repo, repo.root(), &command).ok();
    assert!(!wt.exists());
}

#[test]
fn the_hint_for_a_worktree_dir_inside_the_repository_sets_one_outside() {
    let repo = TestRepo::new();
    repo.git(repo.root(), &["config", "task.worktreeDir", "tasks"]);
    let run = repo.task_root(&["start", "t"]).code(2);
    let command = hinted_command(&run.stderr, "git config task.worktreeDir");
    assert!(!command.contains('<'), "a placeholder: {command}");
    sh(&repo, &repo.root().join("src"), &command).ok();
    repo.task_root(&["start", "t"]).ok();
    assert!(repo.task_dir("t").is_dir());
}

#[test]
fn the_hint_after_a_merge_that_makes_tasks_conflict_names_them() {
    let repo = TestRepo::new();
    let a = repo.start("a", &[]);
    let b = repo.start("b", &[]);
    repo.write(&a, "README.md", "from a\n");
    repo.task(&a, &["commit", "-m", "a"]).ok();
    repo.write(&b, "README.md", "from b\n");
    repo.task(&b, &["commit", "-m", "b"]).ok();
    let run = repo.task_root(&["merge", "a", "--no-checks"]).ok();
    let command = hinted_command(&run.stderr, "git task sync");
    assert_eq!(command, "git task sync b", "{run}");
}

#[test]
fn the_hint_after_on_violation_revert_gets_the_files_back_when_pasted() {
    let repo = TestRepo::new();
    let wt = repo.start("t", &["--forbid", "src/store/**"]);
    repo.task_root(&["hooks", "install"]).ok();
    repo.git(repo.root(), &["config", "task.onViolation", "revert"]);
    repo.task_root(&["trust", "--yes"]).ok();
    repo.write(&wt, "src/store/mod.rs", "// my edit\n");
    repo.write(&wt, "src/store/new file.rs", "// new\n");
    repo.git(&wt, &["add", "-A"]);
    let sub = wt.join("src/store");
    let run = repo.git_run(&sub, &["commit", "-q", "-m", "x"]).code(1);
    assert_eq!(repo.read(&wt, "src/store/mod.rs"), "pub fn store() {}\n");
    let command = hinted_command(&run.stderr, "get them back with: ")
        .trim_start_matches("get them back with: ")
        .to_owned();
    assert!(!command.contains('<'), "a placeholder: {command}");
    let pasted = sh(&repo, &sub, &command).ok();
    assert_eq!(
        repo.read(&wt, "src/store/mod.rs"),
        "// my edit\n",
        "{command}\n{pasted}\n{run}"
    );
    assert_eq!(repo.read(&wt, "src/store/new file.rs"), "// new\n");
}

#[test]
fn merge_hints_for_a_missing_target_are_commands_that_work() {
    let repo = TestRepo::new();
    // Started from a commit: the hint names the branch checked out here.
    let wt = repo.start("c", &["--base", "HEAD"]);
    repo.write(&wt, "src/lib.rs", "from c\n");
    repo.task(&wt, &["commit", "-m", "c"]).ok();
    let run = repo.task_root(&["merge", "c", "--no-checks"]).code(2);
    let command = hinted_command(&run.stderr, "git task merge c --into");
    assert_eq!(command, "git task merge c --into main");
    sh(&repo, repo.root(), &format!("{command} --no-checks")).ok();
    // Its base branch deleted: the hint makes it again where the task started.
    repo.git(repo.root(), &["branch", "feature"]);
    repo.git(repo.root(), &["switch", "-q", "feature"]);
    let wt = repo.start("f", &[]);
    repo.git(repo.root(), &["switch", "-q", "main"]);
    repo.write(&wt, "README.md", "from f\n");
    repo.task(&wt, &["commit", "-m", "f"]).ok();
    repo.git(repo.root(), &["branch", "-D", "feature"]);
    let run = repo.task_root(&["merge", "f", "--no-checks"]).code(2);
    let command = hinted_command(&run.stderr, "git branch feature");
    assert!(!command.contains('<'), "a placeholder: {command}");
    sh(&repo, repo.root(), &command).ok();
    repo.task_root(&["merge", "f", "--no-checks"]).ok();
}

#[test]
fn a_start_on_a_base_whose_policy_is_malformed_is_refused() {
    let repo = TestRepo::new();
    for (policy, want) in [
        (
            "version = 1\nforbidden = [\"src/[\"]\n",
            ".task-policy.toml:2:",
        ),
        (
            "version = 1\nforbiden = [\"src/**\"]\n",
            ".task-policy.toml:2:1: unknown field",
        ),
        (
            "version = 1\nforbidden = [\"s\u{0}\"\n",
            ".task-policy.toml:",
        ),
    ] {
        repo.write(repo.root(), ".task-policy.toml", policy);
        crate::common::commit_all(&repo, repo.root(), "policy");
        for args in [&["start", "t"][..], &["start", "t", "--mode", "patch"]] {
            let run = repo.task_root(args).code(2);
            assert!(run.stderr.starts_with(&format!("error: {want}")), "{run}");
            assert!(run.stderr.contains("(on 'main')"), "{run}");
            assert!(run.stderr.contains("hint: "), "{run}");
            assert_nothing_written(&repo);
        }
    }
    std::fs::write(
        repo.root().join(".task-policy.toml"),
        b"version = 1\n#\xff\n",
    )
    .unwrap();
    crate::common::commit_all(&repo, repo.root(), "policy");
    let run = repo.task_root(&["start", "t"]).code(2);
    assert!(run.stderr.contains("is not UTF-8"), "{run}");
    assert_nothing_written(&repo);
    assert!(!repo.root().join(".git/git-task/frozen").exists());
}

#[test]
fn a_committed_contract_file_that_is_huge_is_not_a_valid_contract() {
    let repo = TestRepo::new();
    let wt = repo.start("t", &["--allow", "src/**"]);
    // Narrower than the frozen contract, but padded to 2 MiB: every hook run would parse it.
    let mut text = String::from("version = 1\nallowed = [\"src/store/**\"]\n");
    while text.len() < 2 << 20 {
        text.push_str("# padding padding padding padding padding padding padding padding\n");
    }
    repo.write(&wt, ".task-contract.toml", &text);
    repo.write(&wt, "src/store/mod.rs", "changed\n");
    crate::common::commit_all(&repo, &wt, "huge contract");
    let run = repo.task(&wt, &["--json", "check"]).code(1);
    let doc = run.json();
    assert_eq!(doc["kind"], "contract_violation", "{run}");
    assert_eq!(doc["violations"][0]["reason"], "contract_tampered", "{run}");
    assert!(
        doc["violations"][0]["rule"]
            .as_str()
            .unwrap()
            .contains("larger than"),
        "{run}"
    );
}

#[test]
fn the_hint_for_a_vanished_worktree_brings_it_back_with_its_commits() {
    let repo = TestRepo::new();
    let wt = repo.start("t", &["--path", "../my tasks/t"]);
    repo.write(&wt, "src/lib.rs", "one\n");
    repo.task(&wt, &["commit", "-m", "one"]).ok();
    std::fs::remove_dir_all(&wt).unwrap();
    let elsewhere = repo.base().join("home");
    let run = repo
        .task(
            &elsewhere,
            &["-C", repo.root().to_str().unwrap(), "commit", "t"],
        )
        .code(2);
    let command = hinted_command(&run.stderr, "git -C");
    sh(&repo, &elsewhere, &command).ok();
    assert_eq!(repo.read(&wt, "src/lib.rs"), "one\n");
    repo.write(&wt, "src/lib.rs", "two\n");
    repo.task(&wt, &["commit", "-m", "two"]).ok();
    assert_eq!(crate::common::record_status(&repo, "t"), "active");
}

#[test]
fn the_hint_to_rerun_a_failed_setup_quotes_it() {
    let repo = TestRepo::new();
    let wt = repo.start("t", &[]);
    let setup = r#"echo "it's" >> ran.txt; test -f ok"#;
    repo.write(&wt, "src/lib.rs", "work to save\n");
    let run = repo
        .task_root(&["start", "t", "--reset", "--setup", setup])
        .code(1);
    let command = hinted_command(&run.stderr, "git task exec t --");
    repo.write(&wt, "ok", "");
    sh(&repo, repo.root(), &command).ok();
    assert_eq!(repo.read(&wt, "ran.txt"), "it's\nit's\n");
}
