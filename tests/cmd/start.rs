//! `git task start`: worktree, branch, contract commit, record; idempotency, bad input, concurrency, setup, hooks.

use crate::common::TestRepo;
use crate::common::*;
use std::path::PathBuf;

/// A new task gets a branch with the contract as its first commit, a linked worktree, a record and a base ref.
#[test]
fn start_creates_branch_worktree_record_and_contract() {
    let repo = TestRepo::new();
    let main_tip = rev(&repo, "main");
    let wt = repo.start("t1", &[]);

    assert_eq!(wt, repo.task_dir("t1"));
    assert!(repo.worktrees().contains(&wt), "{:?}", repo.worktrees());
    assert_eq!(
        repo.refs("refs/tasks"),
        ["refs/tasks/t1/base", "refs/tasks/t1/record"]
            .map(String::from)
            .to_vec()
    );
    assert!(repo
        .refs("refs/heads")
        .contains(&"refs/heads/task/t1".to_owned()));
    assert_eq!(
        repo.git(&wt, &["rev-parse", "--abbrev-ref", "HEAD"]),
        "task/t1"
    );
    assert_eq!(
        rev(&repo, "task/t1^"),
        main_tip,
        "the contract commit sits on the base"
    );
    assert_eq!(rev(&repo, "refs/tasks/t1/base"), main_tip);
    assert_eq!(
        repo.git(repo.root(), &["diff", "--name-only", "main", "task/t1"]),
        ".task-contract.toml"
    );
    let contract = show(&repo, "task/t1", ".task-contract.toml");
    assert!(contract.contains("version = 1"), "{contract}");
    assert!(contract.contains("task = \"t1\""), "{contract}");
    assert_eq!(
        show(&repo, "refs/tasks/t1/record", "contract.toml"),
        contract,
        "the frozen copy is the committed file"
    );
    assert_eq!(events(&repo, "t1"), ["started", "provisioned"]);
    assert_eq!(record_status(&repo, "t1"), "active");
    assert_eq!(repo.read(&wt, "src/lib.rs"), "pub fn lib() {}\n");
    assert_eq!(repo.porcelain(&wt), "", "the new worktree is clean");
    assert_eq!(
        repo.porcelain(repo.root()),
        "",
        "the main worktree is untouched"
    );
    assert_eq!(
        repo.git(repo.root(), &["rev-parse", "--abbrev-ref", "HEAD"]),
        "main"
    );
    repo.fsck();
}

/// The record's event messages are the event name, a blank line, then a JSON object.
#[test]
fn record_events_are_name_then_json() {
    let repo = TestRepo::new();
    repo.start("t1", &[]);
    let msg = repo.git(
        repo.root(),
        &["log", "-1", "--format=%B", "refs/tasks/t1/record~1"],
    );
    let (name, body) = msg.split_once("\n\n").expect("name, blank line, body");
    assert_eq!(name, "started");
    let json: serde_json::Value = serde_json::from_str(body.trim()).expect("the body is JSON");
    assert_eq!(json["event"], "started");
    assert_eq!(json["task"], "t1");
}

#[test]
fn start_json_shape() {
    let repo = TestRepo::new();
    let main_tip = rev(&repo, "main");
    let run = repo.task_root(&["start", "j1", "--json"]).ok();
    let j = run.json();
    assert_eq!(j["kind"], "start");
    assert_eq!(j["task"], "j1");
    assert_eq!(j["created"], true);
    assert_eq!(j["reset"], false);
    assert_eq!(j["mode"], "worktree");
    assert_eq!(j["status"], "active");
    assert_eq!(j["branch"], "task/j1");
    assert_eq!(j["base"], main_tip.as_str());
    assert_eq!(j["base_branch"], "main");
    assert_eq!(j["record"], "refs/tasks/j1/record");
    assert_eq!(
        PathBuf::from(j["worktree"].as_str().unwrap()),
        repo.task_dir("j1")
    );
    assert_eq!(run.stdout.lines().count(), 1, "one JSON document: {run}");
}

/// SPEC §2.7: repeating a finished start is a no-op that reports the same task.
#[test]
fn repeat_start_is_a_no_op_reporting_the_same_task() {
    let repo = TestRepo::new();
    let first = repo.task_root(&["start", "t1", "--json"]).ok().json();
    let before = all_refs(&repo);
    let second = repo.task_root(&["start", "t1", "--json"]).ok().json();
    assert_eq!(all_refs(&repo), before, "no ref changed");
    assert_eq!(second["created"], false);
    assert_eq!(second["task"], first["task"]);
    assert_eq!(second["worktree"], first["worktree"]);
    assert_eq!(second["base"], first["base"]);
    let human = repo.task_root(&["start", "t1"]).ok();
    assert_eq!(PathBuf::from(human.out()), repo.task_dir("t1"));
    assert!(human.stderr.contains("already exists"), "{human}");
    assert_eq!(all_refs(&repo), before);
    assert_eq!(events(&repo, "t1"), ["started", "provisioned"]);
}

/// SPEC §3: every bad id exits 2 with a clear message and a hint, and writes nothing.
#[test]
fn hostile_ids_exit_2_and_write_nothing() {
    let repo = TestRepo::new();
    let long = "x".repeat(65);
    let hostile = [
        "",
        "-x",
        ".hidden",
        "_x",
        "a..b",
        "x.lock",
        "x.",
        "a/b",
        "../evil",
        "/abs",
        "a b",
        "a\nb",
        "a\tb",
        "a~1",
        "a^",
        "a:b",
        "a?",
        "a*",
        "a[",
        "a\\b",
        "@",
        "a@{1}",
        "é",
        "HEAD:x",
        long.as_str(),
    ];
    for id in hostile {
        let run = repo.task_root(&["start", "--", id]);
        assert_eq!(run.code, 2, "id {id:?}: {run}");
        assert!(run.stderr.starts_with("error: "), "id {id:?}: {run}");
        assert!(run.stderr.contains("hint: "), "id {id:?}: {run}");
        assert!(run.stdout.is_empty(), "id {id:?}: {run}");
        assert!(
            run.stderr
                .lines()
                .all(|l| l.starts_with("error: ") || l.starts_with("hint: ")),
            "id {id:?}: every line is an error or a hint, control characters escaped: {run}"
        );
    }
    for args in [
        ["status", "a/b"],
        ["path", "../x"],
        ["remove", "a..b"],
        ["drop", "x.lock"],
        ["log", "-x"],
        ["scratch", "a b"],
    ] {
        let run = repo.task_root(&[args[0], "--", args[1]]);
        assert_eq!(run.code, 2, "{args:?}: {run}");
        assert!(run.stderr.starts_with("error: "), "{args:?}: {run}");
    }
    assert_nothing_written(&repo);
    repo.fsck();
}

#[test]
fn the_longest_valid_id_works() {
    let repo = TestRepo::new();
    let id = format!("a{}", "b".repeat(63));
    repo.start(&id, &[]);
    assert!(repo
        .refs("refs/tasks")
        .contains(&format!("refs/tasks/{id}/record")));
}

#[test]
fn start_without_id_generates_a_two_word_name() {
    let repo = TestRepo::new();
    let j = repo.task_root(&["start", "--json"]).ok().json();
    let id = j["task"].as_str().unwrap().to_owned();
    let words: Vec<&str> = id.split('-').collect();
    assert_eq!(words.len(), 2, "{id}");
    assert!(
        words
            .iter()
            .all(|w| !w.is_empty() && w.chars().all(|c| c.is_ascii_lowercase())),
        "{id}"
    );
    assert!(repo
        .refs("refs/tasks")
        .contains(&format!("refs/tasks/{id}/record")));
    let other = repo.task_root(&["start", "--json"]).ok().json();
    assert_ne!(
        other["task"], j["task"],
        "generated names are unique in the repository"
    );
}

#[test]
fn contract_flags_are_committed_and_frozen() {
    let repo = TestRepo::new();
    repo.start(
        "c1",
        &[
            "--allow",
            "src/**",
            "--allow",
            "README.md",
            "--forbid",
            "src/store/**",
            "--no-new-files",
            "--no-deletions",
            "--check",
            "cargo test",
        ],
    );
    let text = show(&repo, "task/c1", ".task-contract.toml");
    for want in [
        "src/**",
        "README.md",
        "src/store/**",
        "allow_new_files = false",
        "allow_deletions = false",
        "cargo test",
    ] {
        assert!(text.contains(want), "missing {want:?} in:\n{text}");
    }
    assert_eq!(show(&repo, "refs/tasks/c1/record", "contract.toml"), text);
    let status = repo.task_root(&["status", "c1", "--json"]).ok().json();
    assert_eq!(
        status["contract"]["allowed"],
        serde_json::json!(["src/**", "README.md"])
    );
    assert_eq!(
        status["contract"]["forbidden"],
        serde_json::json!(["src/store/**"])
    );
    assert_eq!(status["contract"]["allow_new_files"], false);
}

#[test]
fn contract_file_is_copied_as_is() {
    let repo = TestRepo::new();
    let file = repo.base().join("my-contract.toml");
    let text = "version = 1\nallowed = [\"src/**\"]\nforbidden = [\"*.lock\"]\nmax_changed_files = 3\n\n[checks]\ncommands = [\"true\"]\ntimeout_s = 5\n";
    std::fs::write(&file, text).unwrap();
    repo.start("cf", &["--contract", file.to_str().unwrap()]);
    assert_eq!(
        show(&repo, "task/cf", ".task-contract.toml"),
        text.trim_end()
    );
    assert_eq!(
        show(&repo, "refs/tasks/cf/record", "contract.toml"),
        text.trim_end()
    );
}

/// SPEC §5: unknown keys, wrong types, bad globs, an unsupported version: exit 2 naming file, line and column.
#[test]
fn contract_file_errors_name_file_line_and_column() {
    let repo = TestRepo::new();
    let cases = [
        (
            "unknown-key.toml",
            "version = 1\nallowed = [\"src/**\"]\nallowd = [\"x\"]\n",
            "3:1",
            "unknown field `allowd`",
        ),
        (
            "wrong-type.toml",
            "version = 1\nallow_new_files = \"yes\"\n",
            "2:19",
            "expected a boolean",
        ),
        (
            "wrong-type-list.toml",
            "version = 1\nforbidden = \"src\"\n",
            "2:13",
            "invalid type",
        ),
        (
            "bad-glob.toml",
            "version = 1\nforbidden = [\n  \"ok/**\",\n  \"src/[z\",\n]\n",
            "4:3",
            "bad glob 'src/[z'",
        ),
        (
            "version-2.toml",
            "# comment\nversion = 2\n",
            "2:1",
            "unsupported version 2",
        ),
        (
            "checks-key.toml",
            "version = 1\n[checks]\ncommand = [\"x\"]\n",
            "3:1",
            "unknown field `command`",
        ),
        (
            "not-toml.toml",
            "version = 1\nallowed = [\n",
            "",
            "contract",
        ),
    ];
    for (name, text, line_col, what) in cases {
        let file = repo.base().join(name);
        std::fs::write(&file, text).unwrap();
        let run = repo.task_root(&["start", "c", "--contract", file.to_str().unwrap()]);
        assert_eq!(run.code, 2, "{name}: {run}");
        let first = run.stderr.lines().next().unwrap_or_default();
        if !line_col.is_empty() {
            let want = format!("error: {}:{line_col}: ", file.display());
            assert!(
                first.starts_with(&want),
                "{name}: want {want:?}, got:\n{run}"
            );
            assert!(first.contains(what), "{name}: want {what:?} in:\n{run}");
        } else {
            assert!(
                first.starts_with(&format!("error: {}:", file.display())),
                "{name}: {run}"
            );
        }
        assert!(run.stderr.contains("hint: "), "{name}: {run}");
        assert!(run.stdout.is_empty(), "{name}: {run}");
    }
    let missing = repo
        .task_root(&["start", "c", "--contract", "no-such-file.toml"])
        .code(2);
    assert!(
        missing.stderr.contains("no-such-file.toml") && missing.stderr.contains("hint: "),
        "{missing}"
    );
    assert_nothing_written(&repo);
}

#[test]
fn bad_glob_on_the_command_line_exits_2() {
    let repo = TestRepo::new();
    let run = repo
        .task_root(&["start", "g", "--forbid", "src/[z"])
        .code(2);
    assert!(
        run.stderr.contains("'src/[z'") && run.stderr.contains("--forbid"),
        "{run}"
    );
    assert!(run.stderr.contains("hint: "), "{run}");
    let run = repo.task_root(&["start", "g", "--allow", ""]).code(2);
    assert!(run.stderr.starts_with("error: "), "{run}");
    assert_nothing_written(&repo);
}

#[test]
fn contract_file_for_another_task_is_refused() {
    let repo = TestRepo::new();
    let file = repo.base().join("other.toml");
    std::fs::write(&file, "version = 1\ntask = \"other\"\n").unwrap();
    let run = repo
        .task_root(&["start", "mine", "--contract", file.to_str().unwrap()])
        .code(2);
    assert!(
        run.stderr.contains("'other'") && run.stderr.contains("hint: "),
        "{run}"
    );
    assert_nothing_written(&repo);
}

/// SPEC principle 7: distinct ids started at the same time all succeed.
#[test]
fn parallel_starts_of_distinct_ids_all_succeed() {
    let repo = TestRepo::new();
    let ids: Vec<String> = (1..=6).map(|n| format!("par{n}")).collect();
    let children: Vec<_> = ids
        .iter()
        .map(|id| {
            task_command(&repo, repo.root(), &["start", id, "--json"])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let runs: Vec<_> = children.into_iter().map(collect).collect();
    for (id, run) in ids.iter().zip(&runs) {
        assert_eq!(run.code, 0, "{id}: {run}");
        assert_eq!(run.json()["created"], true, "{id}: {run}");
    }
    let worktrees = repo.worktrees();
    assert_eq!(worktrees.len(), 7, "{worktrees:?}");
    for id in &ids {
        assert!(worktrees.contains(&repo.task_dir(id)), "{id}");
        assert_eq!(events(&repo, id), ["started", "provisioned"]);
        assert_eq!(repo.porcelain(&repo.task_dir(id)), "");
    }
    assert_eq!(repo.refs("refs/tasks").len(), 12);
    repo.fsck();
}

/// SPEC principle 7: one id started by several processes at once makes exactly one task.
#[test]
fn parallel_starts_of_one_id_make_exactly_one_task() {
    let repo = TestRepo::new();
    let children: Vec<_> = (0..6)
        .map(|_| {
            task_command(&repo, repo.root(), &["start", "same", "--json"])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let runs: Vec<_> = children.into_iter().map(collect).collect();
    let mut created = 0;
    for run in &runs {
        if run.code == 0 {
            let j = run.json();
            assert_eq!(j["task"], "same", "{run}");
            assert_eq!(
                PathBuf::from(j["worktree"].as_str().unwrap()),
                repo.task_dir("same"),
                "{run}"
            );
            if j["created"] == true {
                created += 1;
            }
        } else {
            // Failing cleanly: an error with a hint, no partial answer (with --json, the
            // error itself is the one document on stdout).
            assert!(
                run.stderr.starts_with("error: ") && run.stderr.contains("hint: "),
                "{run}"
            );
            assert_eq!(run.json()["kind"], "error", "{run}");
        }
    }
    assert_eq!(
        created, 1,
        "exactly one process creates the task: {runs:#?}"
    );
    assert_eq!(
        repo.refs("refs/tasks"),
        ["refs/tasks/same/base", "refs/tasks/same/record"]
            .map(String::from)
            .to_vec()
    );
    assert_eq!(
        repo.refs("refs/heads/task"),
        vec!["refs/heads/task/same".to_owned()]
    );
    assert_eq!(
        repo.worktrees(),
        vec![repo.root().to_path_buf(), repo.task_dir("same")]
    );
    assert_eq!(events(&repo, "same"), ["started", "provisioned"]);
    assert_eq!(record_status(&repo, "same"), "active");
    repo.fsck();
}

/// A failing `--setup` removes everything the start made and exits 1 showing its output.
#[test]
fn failing_setup_removes_everything_and_exits_1() {
    let repo = TestRepo::new();
    let run = repo
        .task_root(&[
            "start",
            "s1",
            "--setup",
            "echo from-setup-stdout; echo from-setup-stderr >&2; exit 3",
        ])
        .code(1);
    assert!(run.stderr.contains("from-setup-stdout"), "{run}");
    assert!(run.stderr.contains("from-setup-stderr"), "{run}");
    assert!(
        run.stderr.contains("error: ") && run.stderr.contains("exit 3"),
        "{run}"
    );
    assert!(!repo.task_dir("s1").exists());
    assert_nothing_written(&repo);
    assert_eq!(repo.porcelain(repo.root()), "");
    repo.fsck();

    let json = repo
        .task_root(&["start", "s1", "--json", "--setup", "echo out; exit 4"])
        .code(1);
    let j = json.json();
    assert_eq!(j["kind"], "setup_failed");
    assert_eq!(j["code"], 4);
    assert!(j["output"].as_str().unwrap().contains("out"), "{json}");
    assert_nothing_written(&repo);
}

#[test]
fn setup_runs_in_the_new_worktree_with_the_task_environment() {
    let repo = TestRepo::new();
    let wt = repo.start(
        "s2",
        &["--setup", "echo \"$GIT_TASK_ID $PWD\" > setup-marker"],
    );
    assert_eq!(
        repo.read(&wt, "setup-marker").trim(),
        format!("s2 {}", wt.display())
    );
    assert_eq!(events(&repo, "s2"), ["started", "provisioned"]);
}

#[test]
fn task_setup_config_is_the_default_setup() {
    let repo = TestRepo::new();
    repo.git(repo.root(), &["config", "task.setup", "touch from-config"]);
    let wt = repo.start("s3", &[]);
    assert!(wt.join("from-config").exists());
    let wt = repo.start("s4", &["--setup", "touch from-flag"]);
    assert!(
        wt.join("from-flag").exists() && !wt.join("from-config").exists(),
        "--setup wins over task.setup"
    );
}

#[test]
fn detached_head_without_base_is_an_error_with_a_hint() {
    let repo = TestRepo::new();
    repo.git(repo.root(), &["checkout", "-q", "--detach"]);
    let run = repo.task_root(&["start", "d1"]).code(2);
    assert!(
        run.stderr.starts_with("error: ") && run.stderr.contains("detached"),
        "{run}"
    );
    assert!(
        run.stderr.contains("hint: ") && run.stderr.contains("--base"),
        "{run}"
    );
    assert_nothing_written(&repo);
    // With --base it works from a detached HEAD.
    let wt = repo.start("d1", &["--base", "main"]);
    assert_eq!(rev(&repo, "task/d1^"), rev(&repo, "main"));
    assert!(wt.exists());
}

#[test]
fn unknown_base_is_bad_input() {
    let repo = TestRepo::new();
    let run = repo
        .task_root(&["start", "b0", "--base", "no-such-branch"])
        .code(2);
    assert!(
        run.stderr.contains("no-such-branch") && run.stderr.contains("hint: "),
        "{run}"
    );
    assert_nothing_written(&repo);
}

#[test]
fn base_can_be_another_branch() {
    let repo = TestRepo::new();
    repo.git(repo.root(), &["switch", "-q", "-c", "feature"]);
    repo.write(repo.root(), "feature.txt", "f\n");
    repo.git(repo.root(), &["add", "feature.txt"]);
    repo.git(repo.root(), &["commit", "-q", "-m", "feature"]);
    repo.git(repo.root(), &["switch", "-q", "main"]);
    let j = repo
        .task_root(&["start", "b1", "--base", "feature", "--json"])
        .ok()
        .json();
    assert_eq!(j["base_branch"], "feature");
    assert_eq!(j["base"], rev(&repo, "feature").as_str());
    assert_eq!(rev(&repo, "task/b1^"), rev(&repo, "feature"));
    assert!(repo.task_dir("b1").join("feature.txt").exists());
    assert_eq!(
        repo.git(repo.root(), &["rev-parse", "--abbrev-ref", "HEAD"]),
        "main",
        "the main worktree stays on main"
    );
    assert!(!repo.root().join("feature.txt").exists());
}

#[test]
fn base_defaults_to_the_current_branch() {
    let repo = TestRepo::new();
    repo.git(repo.root(), &["switch", "-q", "-c", "dev"]);
    repo.write(repo.root(), "dev.txt", "d\n");
    repo.git(repo.root(), &["add", "dev.txt"]);
    repo.git(repo.root(), &["commit", "-q", "-m", "dev"]);
    let j = repo.task_root(&["start", "b2", "--json"]).ok().json();
    assert_eq!(j["base_branch"], "dev");
    assert_eq!(rev(&repo, "task/b2^"), rev(&repo, "dev"));
}

#[test]
fn path_option_places_the_worktree() {
    let repo = TestRepo::new();
    let wt = repo.start("p1", &["--path", "../elsewhere/p1-here"]);
    let want = repo.base().join("elsewhere/p1-here");
    assert_eq!(wt, want);
    assert!(repo.worktrees().contains(&want));
    assert!(want.join("README.md").exists());
    assert!(!repo.task_dir("p1").exists());
    assert_eq!(path_of(&repo, "p1"), want);
}

#[test]
fn path_that_is_not_empty_is_refused() {
    let repo = TestRepo::new();
    repo.write(&repo.base(), "full/file.txt", "x\n");
    let run = repo
        .task_root(&["start", "p2", "--path", "../full"])
        .code(2);
    assert!(
        run.stderr.contains("not empty") && run.stderr.contains("hint: "),
        "{run}"
    );
    assert_eq!(repo.read(&repo.base(), "full/file.txt"), "x\n");
    assert_nothing_written(&repo);
}

/// A place inside another task's worktree is refused, also when reached through a symbolic
/// link, and found without looking at every worktree; a place inside a worktree of another
/// repository (a home directory under git) is not this repository's business.
#[test]
fn path_inside_another_worktree_is_refused() {
    let repo = TestRepo::new();
    let other = repo.start("o1", &[]);
    let run = repo
        .task_root(&[
            "start",
            "in1",
            "--path",
            &format!("{}/deep/in1", other.display()),
        ])
        .code(2);
    assert!(
        run.stderr.contains("lies inside another worktree") && run.stderr.contains("hint: "),
        "{run}"
    );
    std::os::unix::fs::symlink(&other, repo.base().join("link")).unwrap();
    let run = repo
        .task_root(&["start", "in2", "--path", "../link/sub/in2"])
        .code(2);
    assert!(run.stderr.contains("lies inside another worktree"), "{run}");
    assert!(!other.join("deep").exists() && !other.join("sub").exists());
    // A worktree of an unrelated repository around the place is fine.
    let home = repo.base().join("home");
    repo.git(&repo.base(), &["init", "-q", "home"]);
    let wt = repo.start("in3", &["--path", "../home/trees/in3"]);
    assert_eq!(wt, home.join("trees/in3"));
}

#[test]
fn branch_prefix_and_worktree_dir_come_from_config() {
    let repo = TestRepo::new();
    repo.git(repo.root(), &["config", "task.branchPrefix", "agents/"]);
    repo.git(repo.root(), &["config", "task.worktreeDir", "../trees"]);
    let j = repo.task_root(&["start", "cfg", "--json"]).ok().json();
    assert_eq!(j["branch"], "agents/cfg");
    let wt = repo.base().join("trees/cfg");
    assert_eq!(PathBuf::from(j["worktree"].as_str().unwrap()), wt);
    assert!(repo
        .refs("refs/heads")
        .contains(&"refs/heads/agents/cfg".to_owned()));
    assert!(repo.refs("refs/heads/task").is_empty());
    assert!(repo.worktrees().contains(&wt));
    assert_eq!(
        repo.git(&wt, &["rev-parse", "--abbrev-ref", "HEAD"]),
        "agents/cfg"
    );
    let list = repo.task_root(&["list", "--json"]).ok().json();
    assert_eq!(list["tasks"][0]["branch"], "agents/cfg");
    // The active task of the worktree is found through the configured prefix.
    assert_eq!(
        repo.task(&wt, &["status", "--json"]).ok().json()["task"],
        "cfg"
    );
    repo.task_root(&["remove", "cfg"]).ok();
    assert!(repo.refs("refs/heads/agents").is_empty());
    assert!(!wt.exists());
}

/// gix runs no hooks: start runs post-checkout in the new worktree as `git worktree add` would.
#[test]
fn post_checkout_hook_runs_in_the_new_worktree() {
    let repo = TestRepo::new();
    write_script(
        &repo.root().join(".git/hooks/post-checkout"),
        "#!/bin/sh\necho \"$1 $2 $3\" > hook-marker\n",
    );
    let wt = repo.start("h1", &[]);
    let marker = repo.read(&wt, "hook-marker");
    let tip = rev(&repo, "task/h1");
    assert_eq!(marker.trim(), format!("{} {tip} 1", "0".repeat(40)));
    assert!(
        !repo.root().join("hook-marker").exists(),
        "the hook ran in the new worktree, not the main one"
    );
}

#[test]
fn post_checkout_hook_from_core_hooks_path() {
    let repo = TestRepo::new();
    let hooks = repo.base().join("my-hooks");
    write_script(
        &hooks.join("post-checkout"),
        "#!/bin/sh\npwd > hook-marker\n",
    );
    repo.git(
        repo.root(),
        &["config", "core.hooksPath", hooks.to_str().unwrap()],
    );
    let wt = repo.start("h2", &[]);
    assert_eq!(PathBuf::from(repo.read(&wt, "hook-marker").trim()), wt);
}

#[test]
fn start_works_from_a_subdirectory_and_from_another_worktree() {
    let repo = TestRepo::new();
    let run = repo
        .task(&repo.root().join("src/store"), &["start", "sub"])
        .ok();
    assert_eq!(PathBuf::from(run.out()), repo.task_dir("sub"));
    let other = repo
        .task(&repo.task_dir("sub"), &["start", "nested", "--json"])
        .ok()
        .json();
    assert_eq!(
        PathBuf::from(other["worktree"].as_str().unwrap()),
        repo.task_dir("nested"),
        "worktrees go beside the main worktree"
    );
    assert_eq!(
        other["base_branch"], "task/sub",
        "the base is the branch checked out where start runs"
    );
}

#[test]
fn dash_c_runs_as_if_started_in_dir() {
    let repo = TestRepo::new();
    let run = repo
        .task(
            &repo.base(),
            &["-C", "repo", "start", "cdir", "--path", "../cdir-wt"],
        )
        .ok();
    assert_eq!(
        PathBuf::from(run.out()),
        repo.base().join("cdir-wt"),
        "relative paths are relative to -C DIR"
    );
}

/// `--reset` saves the work (commits, modified and untracked files) as an attempt and starts over from the base.
#[test]
fn reset_saves_work_and_returns_to_base() {
    let repo = TestRepo::new();
    let wt = repo.start("r1", &[]);
    let first_tip = rev(&repo, "task/r1");
    repo.write(&wt, "committed.txt", "committed\n");
    repo.git(&wt, &["add", "committed.txt"]);
    repo.git(&wt, &["commit", "-q", "-m", "work"]);
    let work_tip = rev(&repo, "task/r1");
    repo.write(&wt, "README.md", "# changed\n");
    repo.write(&wt, "untracked/new.txt", "new\n");
    let main_before = repo.porcelain(repo.root());

    let run = repo.task_root(&["start", "r1", "--reset", "--json"]).ok();
    let j = run.json();
    assert_eq!(j["kind"], "start");
    assert_eq!(j["reset"], true);
    assert_eq!(j["created"], false);
    let attempts = j["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 1, "{run}");
    let attempt = attempts[0]["ref"].as_str().unwrap().to_owned();
    assert_eq!(attempt, "refs/tasks/r1/attempts/1");
    assert_eq!(show(&repo, &attempt, "untracked/new.txt"), "new");
    assert_eq!(show(&repo, &attempt, "README.md"), "# changed");
    assert_eq!(show(&repo, &attempt, "committed.txt"), "committed");
    assert_eq!(
        rev(&repo, &format!("{attempt}^")),
        work_tip,
        "the attempt sits on the task's last commit"
    );

    assert_eq!(repo.porcelain(&wt), "", "the worktree is clean");
    assert!(!wt.join("committed.txt").exists() && !wt.join("untracked").exists());
    assert_eq!(repo.read(&wt, "README.md"), "# demo\n");
    assert_eq!(
        rev(&repo, "task/r1^"),
        rev(&repo, "main"),
        "the branch is one contract commit on the base"
    );
    assert_eq!(repo.git(&wt, &["rev-parse", "HEAD"]), rev(&repo, "task/r1"));
    assert_eq!(
        show(&repo, "task/r1", ".task-contract.toml"),
        show(&repo, &first_tip, ".task-contract.toml")
    );
    assert!(repo.worktrees().contains(&wt));
    assert_eq!(events(&repo, "r1"), ["started", "provisioned", "reset"]);
    assert_eq!(record_status(&repo, "r1"), "active");
    assert_eq!(repo.porcelain(repo.root()), main_before);
    repo.fsck();
}

#[test]
fn reset_keeps_committed_work_of_a_clean_worktree_and_runs_post_checkout() {
    let repo = TestRepo::new();
    let wt = repo.start("r2", &[]);
    repo.write(&wt, "c.txt", "c\n");
    repo.git(&wt, &["add", "c.txt"]);
    repo.git(&wt, &["commit", "-q", "-m", "c"]);
    write_script(
        &repo.root().join(".git/hooks/post-checkout"),
        "#!/bin/sh\necho ran > ../r2-hook-marker\n",
    );
    let run = repo.task_root(&["start", "r2", "--reset"]).ok();
    assert!(
        run.stderr.contains("refs/tasks/r2/attempts/1"),
        "the attempt ref is printed: {run}"
    );
    assert_eq!(show(&repo, "refs/tasks/r2/attempts/1", "c.txt"), "c");
    assert!(!wt.join("c.txt").exists());
    assert!(repo.base().join("repo.tasks/r2-hook-marker").exists());
    repo.fsck();
}

#[test]
fn reset_of_an_untouched_task_saves_nothing() {
    let repo = TestRepo::new();
    repo.start("r3", &[]);
    let j = repo
        .task_root(&["start", "r3", "--reset", "--json"])
        .ok()
        .json();
    assert_eq!(j["attempts"], serde_json::json!([]));
    assert!(repo.refs("refs/tasks/r3/attempts").is_empty());
    assert_eq!(events(&repo, "r3"), ["started", "provisioned", "reset"]);
}

#[test]
fn reset_with_base_moves_the_task_onto_it() {
    let repo = TestRepo::new();
    repo.start("r4", &[]);
    repo.write(repo.root(), "later.txt", "later\n");
    repo.git(repo.root(), &["add", "later.txt"]);
    repo.git(repo.root(), &["commit", "-q", "-m", "later"]);
    let j = repo
        .task_root(&["start", "r4", "--reset", "--base", "main", "--json"])
        .ok()
        .json();
    assert_eq!(j["base"], rev(&repo, "main").as_str());
    assert_eq!(rev(&repo, "refs/tasks/r4/base"), rev(&repo, "main"));
    assert_eq!(rev(&repo, "task/r4^"), rev(&repo, "main"));
    assert!(repo.task_dir("r4").join("later.txt").exists());
}

#[test]
fn reset_of_a_new_id_just_starts_it() {
    let repo = TestRepo::new();
    let j = repo
        .task_root(&["start", "r5", "--reset", "--json"])
        .ok()
        .json();
    assert_eq!(j["created"], true);
    assert_eq!(j["reset"], false);
}

/// A setup that leaves a background process holding its output open does not hang start.
#[test]
fn setup_leaving_a_background_process_does_not_hang_start() {
    let repo = TestRepo::new();
    let pidfile = repo.base().join("daemon.pid");
    let setup = format!("sleep 600 & echo $! > '{}'; echo set-up", pidfile.display());
    let wt = repo.start("daemon", &["--setup", &setup]);
    assert!(wt.exists());
    assert_eq!(events(&repo, "daemon"), ["started", "provisioned"]);
    let pid = std::fs::read_to_string(&pidfile).unwrap();
    let _ = std::process::Command::new("kill").arg(pid.trim()).status();
}

#[test]
fn start_in_a_repository_without_commits_is_bad_input() {
    let repo = TestRepo::empty();
    let run = repo.task_root(&["start", "first"]).code(2);
    assert!(
        run.stderr.contains("no commits") && run.stderr.contains("hint: "),
        "{run}"
    );
    assert!(repo.refs("refs/tasks").is_empty());
}

#[test]
fn reset_brings_back_a_deleted_worktree() {
    let repo = TestRepo::new();
    let wt = repo.start("lost", &[]);
    repo.write(&wt, "c.txt", "c\n");
    repo.git(&wt, &["add", "c.txt"]);
    repo.git(&wt, &["commit", "-q", "-m", "c"]);
    std::fs::remove_dir_all(&wt).unwrap();
    let run = repo.task_root(&["start", "lost"]).ok();
    assert!(
        run.stderr.contains("missing") && run.stderr.contains("--reset"),
        "{run}"
    );
    repo.task_root(&["start", "lost", "--reset"]).ok();
    assert!(wt.join("README.md").exists());
    assert_eq!(repo.porcelain(&wt), "");
    assert_eq!(show(&repo, "refs/tasks/lost/attempts/1", "c.txt"), "c");
    assert_eq!(
        repo.git(repo.root(), &["worktree", "list", "--porcelain"])
            .matches("worktree ")
            .count(),
        2
    );
    repo.fsck();
}

#[test]
fn reset_of_a_dropped_task_makes_it_active_again() {
    let repo = TestRepo::new();
    repo.start("dr", &[]);
    repo.task_root(&["drop", "dr"]).ok();
    let j = repo
        .task_root(&["start", "dr", "--reset", "--json"])
        .ok()
        .json();
    assert_eq!(j["status"], "active");
    assert_eq!(record_status(&repo, "dr"), "active");
    assert_eq!(
        events(&repo, "dr"),
        ["started", "provisioned", "dropped", "reset"]
    );
}

/// The new worktree's index records every directory's tree id, as git's own checkout does
/// (`git read-tree HEAD` as the oracle), also in a sparse worktree; git commits on it as usual.
#[test]
fn the_worktree_index_has_the_cache_tree_git_would_write() {
    let repo = TestRepo::new();
    for f in ["a/b/deep.txt", "a-b/dash.txt", "ab/x.txt", "c/d/e/f.txt"] {
        repo.write(repo.root(), f, &format!("{f}\n"));
    }
    repo.git(repo.root(), &["add", "-A"]);
    repo.git(repo.root(), &["commit", "-q", "-m", "dirs"]);
    for (id, extra) in [
        ("full", &[][..]),
        ("thin", &["--sparse", "--allow", "src/**"][..]),
    ] {
        let wt = repo.start(id, extra);
        let git_dir = PathBuf::from(repo.git(&wt, &["rev-parse", "--absolute-git-dir"]).trim());
        let oracle = git_dir.join("oracle-index");
        let out = repo
            .command("git", &wt)
            .env("GIT_INDEX_FILE", &oracle)
            .args(["read-tree", "HEAD"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let tree = |path: &std::path::Path| {
            let index =
                gix::index::File::at(path, gix::hash::Kind::Sha1, false, Default::default())
                    .unwrap();
            (index.tree().cloned(), index.entries().len())
        };
        let (ours, entries) = tree(&git_dir.join("index"));
        assert!(ours.is_some(), "{id}: the index has a cache tree");
        assert_eq!(ours, tree(&oracle).0, "{id}");
        assert_eq!(ours.unwrap().num_entries, Some(entries as u32), "{id}");
        std::fs::remove_file(&oracle).unwrap();
        assert_eq!(repo.git(&wt, &["status", "--porcelain"]), "", "{id}");
        repo.write(&wt, "src/lib.rs", "pub fn changed() {}\n");
        repo.git(&wt, &["commit", "-q", "-am", "change"]);
        assert_eq!(
            repo.git(&wt, &["diff", "--name-only", "HEAD~1", "HEAD"])
                .trim(),
            "src/lib.rs",
            "{id}"
        );
    }
    repo.fsck();
}

/// `task.worktreeDir` and `core.hooksPath` starting with `~/` are below the home directory, as git expands them.
#[test]
fn a_worktree_dir_and_hooks_path_under_home_are_expanded() {
    let repo = TestRepo::new();
    let home = repo.base().join("home");
    repo.git(repo.root(), &["config", "task.worktreeDir", "~/trees"]);
    let j = repo.task_root(&["start", "tilde", "--json"]).ok().json();
    assert_eq!(
        PathBuf::from(j["worktree"].as_str().unwrap()),
        home.join("trees/tilde")
    );
    repo.git(repo.root(), &["config", "core.hooksPath", "~/hooks"]);
    repo.task_root(&["hooks", "install"]).ok();
    assert!(home.join("hooks/pre-commit").is_file());
    // git looks for hooks there too (a task worktree, through its own directory, whose hooks
    // run that one's first).
    let hooks = repo.git(repo.root(), &["rev-parse", "--git-path", "hooks"]);
    assert_eq!(PathBuf::from(hooks), home.join("hooks"));
    let wt = home.join("trees/tilde");
    let own = repo.git(&wt, &["rev-parse", "--git-path", "hooks"]);
    let own = std::fs::read_to_string(PathBuf::from(own).join("pre-commit")).unwrap();
    assert!(
        own.contains(&format!(
            "git_task_chain='{}'",
            home.join("hooks").display()
        )),
        "{own}"
    );
}

/// The in-process listing of linked worktrees (git's administrative files read directly, for
/// `list`'s speed) and the `.git` file of each worktree agree with git: the same worktrees and
/// branches as `git worktree list --porcelain`, the same git dir as `git rev-parse --git-dir`.
#[test]
fn the_worktree_listing_and_dot_git_files_agree_with_git() {
    let repo = TestRepo::new();
    let a = repo.start("a", &[]);
    repo.start("b", &[]);
    // A worktree added by git itself, with a relative path and a detached HEAD.
    repo.git(
        repo.root(),
        &["worktree", "add", "-q", "--detach", "../plain"],
    );
    let git_repo = git_task::testing::git::Repo::discover(repo.root()).unwrap();
    let ours: Vec<(PathBuf, Option<String>)> = git_task::testing::git::worktree::list(&git_repo)
        .unwrap()
        .into_iter()
        .map(|l| (l.path.canonicalize().unwrap(), l.branch))
        .collect();
    let porcelain = repo.git(repo.root(), &["worktree", "list", "--porcelain"]);
    let mut git: Vec<(PathBuf, Option<String>)> = Vec::new();
    for block in porcelain.split("\n\n").skip(1) {
        let path = block
            .lines()
            .find_map(|l| l.strip_prefix("worktree "))
            .unwrap();
        let branch = block
            .lines()
            .find_map(|l| l.strip_prefix("branch "))
            .map(str::to_owned);
        git.push((PathBuf::from(path).canonicalize().unwrap(), branch));
    }
    let mut ours_sorted = ours.clone();
    ours_sorted.sort();
    git.sort();
    assert_eq!(ours_sorted, git);
    for dir in [
        a.clone(),
        repo.base().join("plain"),
        repo.root().to_path_buf(),
    ] {
        let want = PathBuf::from(repo.git(&dir, &["rev-parse", "--absolute-git-dir"]));
        let dot_git = git_task::testing::git::status::dirty::DotGit::read(&dir);
        assert_eq!(
            dot_git.git_dir().map(|p| p.canonicalize().unwrap()),
            Some(want.canonicalize().unwrap()),
            "{}",
            dir.display()
        );
    }
}

/// Overlap warnings collapse into one line naming every task, pointing at `overlaps`; `-q`
/// silences warnings (the worktree path is still printed).
#[test]
fn start_overlap_warnings_are_one_line_and_quiet_silences_them() {
    let repo = TestRepo::new();
    repo.start("a", &["--allow", "src/**"]);
    repo.start("b", &["--allow", "src/**"]);
    repo.start("c", &["--allow", "src/lib.rs"]);
    let run = repo.task_root(&["start", "d", "--allow", "src/**"]).ok();
    let warnings: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("warning:") && !l.contains("pre-commit hook"))
        .collect();
    assert_eq!(
        warnings,
        ["warning: 3 tasks may change the same paths: 'a', 'b', 'c'; details: git task overlaps"],
        "{run}"
    );
    assert!(!run.stderr.contains("hint: see what collides"), "{run}");
    let json = repo
        .task_root(&["start", "e", "--allow", "src/**", "--json"])
        .ok()
        .json();
    assert_eq!(json["overlaps"].as_array().unwrap().len(), 4);
    let quiet = repo
        .task_root(&["-q", "start", "f", "--allow", "src/**"])
        .ok();
    assert_eq!(quiet.stderr, "", "{quiet}");
    assert_eq!(PathBuf::from(quiet.out()), repo.task_dir("f"));
}

/// An allowed glob that matches no file on the base is warned about (a typo?); the task still
/// starts, and a glob that matches something is not named.
#[test]
fn start_warns_of_an_allowed_glob_that_matches_nothing() {
    let repo = TestRepo::new();
    let run = repo
        .task_root(&["start", "g", "--allow", "src/**", "--allow", "scr/lib.rs"])
        .ok();
    let warnings: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("warning:") && !l.contains("pre-commit hook"))
        .collect();
    assert_eq!(warnings.len(), 1, "{run}");
    assert!(
        warnings[0].contains("allowed glob 'scr/lib.rs' matches no file on the base"),
        "{run}"
    );
    let json = repo
        .task_root(&[
            "start",
            "h",
            "--allow",
            "docs/new/**",
            "--allow",
            "README.md",
            "--json",
        ])
        .ok()
        .json();
    assert_eq!(
        json["unmatched_allowed"],
        serde_json::json!(["docs/new/**"])
    );
    assert!(repo.task_dir("h").exists());
}

/// A setup that runs past `--setup-timeout` (or `task.setupTimeout`) is killed with its whole
/// process group, everything the start made is removed, and the error says what to raise.
#[test]
fn setup_past_its_timeout_is_killed_and_the_start_undone() {
    let repo = TestRepo::new();
    let marker = repo.base().join("late-child");
    // A child in the background would write the marker after the timeout, unless killed.
    let setup = format!(
        "(sleep 3; touch '{}') & echo slow-setup; sleep 30",
        marker.display()
    );
    let started = std::time::Instant::now();
    let run = repo
        .task_root(&["start", "slow", "--setup", &setup, "--setup-timeout", "1"])
        .code(1);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "{run}"
    );
    assert!(run.stderr.contains("slow-setup"), "{run}");
    assert!(
        run.stderr
            .contains("ran past its timeout of 1s and was killed"),
        "{run}"
    );
    assert!(
        run.stderr.contains("--setup-timeout 2") && run.stderr.contains("task.setupTimeout"),
        "{run}"
    );
    assert_nothing_written(&repo);
    assert_eq!(repo.porcelain(repo.root()), "");
    // The pinned setting gives the default; JSON says it timed out.
    repo.git(repo.root(), &["config", "task.setupTimeout", "1"]);
    repo.task_root(&["trust", "--yes"]).ok();
    let json = repo
        .task_root(&["start", "slow", "--json", "--setup", "sleep 30"])
        .code(1)
        .json();
    assert_eq!(json["kind"], "setup_failed");
    assert_eq!(json["timed_out"], true);
    assert_eq!(json["timeout"], 1);
    assert_eq!(json["code"], serde_json::Value::Null);
    assert_nothing_written(&repo);
    std::thread::sleep(std::time::Duration::from_secs(3));
    assert!(
        !marker.exists(),
        "the setup's background child outlived the timeout"
    );
    // A bad value is refused.
    repo.git(repo.root(), &["config", "task.setupTimeout", "soon"]);
    let bad = repo.task_root(&["trust", "--yes"]).code(2);
    assert!(bad.stderr.contains("task.setupTimeout"), "{bad}");
    assert_nothing_written(&repo);
}

/// The `allowed` globs of a task's frozen contract, as `status` reports them.
fn allowed(repo: &TestRepo, id: &str) -> Vec<String> {
    let j = repo.task_root(&["status", id, "--json"]).ok().json();
    j["contract"]["allowed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g.as_str().unwrap().to_owned())
        .collect()
}

/// A contract slip is recoverable (issue 34.4): while the task has no commits of its own,
/// `start --reset` replaces the contract with any contract, looser included (a new frozen
/// digest: the gate then judges by it, no `record_tampered`; the `reset` event says
/// `contract_replaced`). Once it has commits, a looser one is refused, nothing written, with a
/// hint that says why and names `--discard-commits`, which saves the commits first and then
/// replaces the contract.
#[test]
fn a_contract_slip_is_recoverable_by_reset() {
    let repo = TestRepo::new();
    let wt = repo.start("slip", &["--allow", "src/store/**"]);
    // Looser, no commits yet: replaced.
    repo.task(&wt, &["start", "slip", "--reset", "--allow", "src/**"])
        .ok();
    assert_eq!(allowed(&repo, "slip"), ["src/**"]);
    let log = repo.task_root(&["log", "slip", "--json"]).ok().json();
    let last = log["events"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["event"], "reset", "{log}");
    assert_eq!(last["details"]["contract_replaced"], true, "{log}");
    assert!(repo
        .git(&wt, &["show", "HEAD:.task-contract.toml"])
        .contains("\"src/**\""));

    // With a commit of its own, a looser contract is refused and nothing moves.
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 1 }\n");
    commit_all(&repo, &wt, "work");
    let refs = repo.git(
        repo.root(),
        &["for-each-ref", "--format=%(refname) %(objectname)"],
    );
    let run = repo
        .task(&wt, &["start", "slip", "--reset", "--allow", "**"])
        .code(1);
    assert!(run.stderr.contains("cannot loosen its contract"), "{run}");
    assert!(run.stderr.contains("1 commit of its own"), "{run}");
    assert!(run.stderr.contains("--discard-commits"), "{run}");
    assert_eq!(
        repo.git(
            repo.root(),
            &["for-each-ref", "--format=%(refname) %(objectname)"]
        ),
        refs
    );
    let work = rev(&repo, "task/slip");
    // The recovery the hint names: the commit is saved as an attempt, then the contract replaced.
    repo.task(
        &wt,
        &[
            "start",
            "slip",
            "--reset",
            "--discard-commits",
            "--allow",
            "**",
        ],
    )
    .ok();
    assert_eq!(allowed(&repo, "slip"), ["**"]);
    assert_eq!(
        show(&repo, "refs/tasks/slip/attempts/1", "src/lib.rs"),
        "pub fn lib() { 1 }"
    );
    repo.git(
        repo.root(),
        &[
            "merge-base",
            "--is-ancestor",
            &work,
            "refs/tasks/slip/attempts/1",
        ],
    );
    assert_eq!(
        repo.git(repo.root(), &["rev-list", "--count", "main..task/slip"]),
        "1",
        "only the contract commit is left"
    );
    // The gate judges by the replaced contract: a change outside the first one lands.
    repo.write(&wt, "README.md", "# wider\n");
    commit_all(&repo, &wt, "readme");
    repo.task_root(&["merge", "slip", "--no-checks"]).ok();
    assert_eq!(show(&repo, "main", "README.md"), "# wider");
    repo.fsck();
}

/// A removed task that did no work (no commit, checkpoint or saved attempt) starts again with
/// any contract as a new generation; its earlier life stays readable in `log`.
#[test]
fn a_removed_task_without_work_comes_back_with_another_contract() {
    let repo = TestRepo::new();
    repo.start("gen", &["--allow", "docs/**"]);
    repo.task_root(&["remove", "gen"]).ok();
    let wt = repo.start("gen", &["--allow", "src/**", "--allow", "README.md"]);
    assert_eq!(allowed(&repo, "gen"), ["src/**", "README.md"]);
    let events = events(&repo, "gen");
    assert_eq!(
        events.iter().filter(|e| e.as_str() == "started").count(),
        2,
        "both lives are in the record: {events:?}"
    );
    assert!(events.contains(&"removed".to_owned()), "{events:?}");
    repo.write(&wt, "README.md", "# gen 2\n");
    commit_all(&repo, &wt, "gen 2");
    repo.task_root(&["merge", "gen", "--no-checks"]).ok();
    assert_eq!(show(&repo, "main", "README.md"), "# gen 2");
}

/// A dropped task started with another contract says both ways out: `--reset` on its record
/// (it becomes active, the contract replaced), or remove it and start a new generation; both work.
#[test]
fn a_dropped_task_starts_again_with_another_contract() {
    let repo = TestRepo::new();
    repo.start("dr", &["--allow", "docs/**"]);
    repo.task_root(&["drop", "dr"]).ok();
    let run = repo
        .task_root(&["start", "dr", "--allow", "src/**"])
        .code(2);
    assert!(
        run.stderr
            .contains("git task start dr --reset --allow 'src/**'")
            || run
                .stderr
                .contains("git task start dr --reset --allow src/**"),
        "{run}"
    );
    assert!(
        run.stderr
            .contains("git task remove dr && git task start dr --allow"),
        "{run}"
    );
    // The new generation, as the hint says.
    repo.task_root(&["remove", "dr"]).ok();
    repo.start("dr", &["--allow", "src/**"]);
    assert_eq!(allowed(&repo, "dr"), ["src/**"]);
    // And on the record: a dropped task reset with a looser contract is active again.
    repo.start("dr2", &["--allow", "docs/**"]);
    repo.task_root(&["drop", "dr2"]).ok();
    repo.task_root(&["start", "dr2", "--reset", "--allow", "**"])
        .ok();
    assert_eq!(allowed(&repo, "dr2"), ["**"]);
    assert_eq!(record_status(&repo, "dr2"), "active");
}

// ---- issue 33: the worktree is made without opening every other worktree as a repository

/// The new worktree is on its branch exactly as `git worktree add` leaves one, and a branch
/// checked out in another worktree is still refused when a worktree is made again for it.
#[test]
fn the_task_worktree_is_attached_to_its_branch_and_a_checked_out_branch_is_refused() {
    let repo = TestRepo::new();
    let wt = repo.start("x", &["--allow", "src/**"]);
    assert_eq!(
        repo.git(&wt, &["symbolic-ref", "HEAD"]).trim(),
        "refs/heads/task/x"
    );
    let list = repo.git(repo.root(), &["worktree", "list", "--porcelain"]);
    assert!(list.contains("branch refs/heads/task/x"), "{list}");
    assert_eq!(repo.porcelain(&wt), "", "nothing to commit");
    repo.write(&wt, "src/new.rs", "x\n");
    repo.git(&wt, &["add", "src/new.rs"]);
    repo.git(&wt, &["commit", "-q", "-m", "work", "--no-verify"]);
    assert_eq!(
        repo.git(&wt, &["rev-parse", "task/x"]),
        repo.git(&wt, &["rev-parse", "HEAD"]),
        "a commit moves the branch"
    );
    repo.fsck();
    // Its worktree goes, and the main worktree takes its branch: making the worktree again
    // would put the branch in two worktrees.
    std::fs::remove_dir_all(&wt).unwrap();
    repo.git(repo.root(), &["worktree", "prune"]);
    repo.git(repo.root(), &["checkout", "-q", "task/x"]);
    let r = repo.task_root(&["start", "x", "--reset"]);
    assert_ne!(r.code, 0, "{} {}", r.stdout, r.stderr);
    assert!(
        r.stderr
            .contains("branch 'task/x' is already checked out in the main worktree"),
        "{}",
        r.stderr
    );
    assert!(!wt.exists(), "no second worktree on task/x");
    let list = repo.git(repo.root(), &["worktree", "list", "--porcelain"]);
    assert_eq!(
        list.matches("branch refs/heads/task/x").count(),
        1,
        "{list}"
    );
}
