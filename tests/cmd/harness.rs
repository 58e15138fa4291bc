//! `git task harness claude create|remove`: Claude Code's WorktreeCreate/WorktreeRemove hook
//! protocol, driven with recorded hook inputs (`tests/fixtures/claude/`).

use crate::common::task_command;
use crate::common::{Run, TestRepo};
use serde_json::Value;
use std::io::Write;
use std::path::Path;
use std::process::Stdio;

/// A recorded hook input with this test's repository as `cwd` (and `worktree_path` if given).
fn input(fixture: &str, cwd: &Path, worktree: Option<&Path>) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/claude")
        .join(fixture);
    let mut value: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    value["cwd"] = Value::String(cwd.display().to_string());
    if let Some(w) = worktree {
        value["worktree_path"] = Value::String(w.display().to_string());
    }
    value.to_string()
}

/// Runs the hook as Claude Code does: the command, the JSON on stdin, from `dir`.
fn hook(repo: &TestRepo, dir: &Path, event: &str, stdin: &str) -> Run {
    let mut child = task_command(repo, dir, &["harness", "claude", event])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    crate::common::collect(child)
}

/// WorktreeCreate starts a task named after the worktree and prints nothing but its worktree's
/// absolute path on stdout; a second time it changes nothing and prints the same path.
#[test]
fn create_starts_a_task_and_prints_only_its_path() {
    let repo = TestRepo::new();
    let elsewhere = repo.base().join("home");
    let run = hook(
        &repo,
        &elsewhere,
        "create",
        &input("worktree-create.json", repo.root(), None),
    )
    .ok();
    let wt = repo.task_dir("feature-auth");
    assert_eq!(run.stdout, format!("{}\n", wt.display()), "{run}");
    assert_eq!(
        repo.git(&wt, &["rev-parse", "--abbrev-ref", "HEAD"]),
        "task/feature-auth"
    );
    assert_eq!(
        repo.refs("refs/tasks/feature-auth/record"),
        vec!["refs/tasks/feature-auth/record".to_owned()]
    );
    assert!(repo.worktrees().contains(&wt));
    let status = repo
        .task_root(&["status", "--json", "feature-auth"])
        .ok()
        .json();
    assert_eq!(status["status"], "active", "{status}");

    let events = |repo: &TestRepo| {
        repo.task_root(&["log", "--json", "feature-auth"])
            .ok()
            .json()["events"]
            .as_array()
            .unwrap()
            .len()
    };
    let before = events(&repo);
    let again = hook(
        &repo,
        &elsewhere,
        "create",
        &input("worktree-create.json", repo.root(), None),
    )
    .ok();
    assert_eq!(again.stdout, run.stdout);
    assert_eq!(events(&repo), before);
}

/// The documented spelling (`worktree_name`, `source_ref`) works too: the base is the ref, and
/// a name that is no task id is made one.
#[test]
fn create_takes_the_documented_fields_and_makes_an_id_of_the_name() {
    let repo = TestRepo::new();
    repo.git(repo.root(), &["switch", "-q", "-c", "other"]);
    let run = hook(
        &repo,
        repo.root(),
        "create",
        &input("worktree-create-documented.json", repo.root(), None),
    )
    .ok();
    let wt = repo.task_dir("feat-auth");
    assert_eq!(run.out(), wt.display().to_string());
    let status = repo.task_root(&["list", "--json"]).ok().json();
    assert_eq!(status["tasks"][0]["base"], "main", "{status}");

    let mut odd: Value =
        serde_json::from_str(&input("worktree-create.json", repo.root(), None)).unwrap();
    odd["name"] = Value::String("feat/auth login..lock".into());
    let run = hook(&repo, repo.root(), "create", &odd.to_string()).ok();
    let id = format!("feat-auth-login-{}", hash(&repo, "feat/auth login..lock"));
    assert_eq!(run.out(), repo.task_dir(&id).display().to_string());
}

/// The first 8 hex digits of `name`'s blob id, as git computes it.
fn hash(repo: &TestRepo, name: &str) -> String {
    let file = repo.base().join("name-to-hash");
    std::fs::write(&file, name).unwrap();
    repo.git(repo.root(), &["hash-object", "--", file.to_str().unwrap()])[..8].to_owned()
}

/// A name that had to be changed (other characters, over 64 characters, not ASCII) gets a short
/// stable hash suffix: names that differ never make one task, the same name always makes the
/// same one, and a name that is a task id as it is stays as it is.
#[test]
fn changed_names_get_a_stable_hash_suffix_and_never_collide() {
    let repo = TestRepo::new();
    let create = |name: &str| -> String {
        hook(&repo, repo.root(), "create", &named(&repo, name))
            .ok()
            .out()
            .to_owned()
    };
    let id_of = |path: &str| {
        Path::new(path)
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned()
    };
    let long_a = format!("{}-a", "x".repeat(70));
    let long_b = format!("{}-b", "x".repeat(70));
    let names = [
        "feat-auth",
        "feat/auth",
        "feat auth",
        "café",
        "cafè",
        "日本語",
        "中文",
        long_a.as_str(),
        long_b.as_str(),
    ];
    let mut ids = Vec::new();
    for name in names {
        let path = create(name);
        let id = id_of(&path);
        assert!(id.len() <= 64 && id.is_ascii(), "{name}: {id}");
        // The same name again: the same task, nothing new.
        assert_eq!(create(name), path, "{name}");
        ids.push(id);
    }
    assert_eq!(ids[0], "feat-auth");
    assert_eq!(ids[1], format!("feat-auth-{}", hash(&repo, "feat/auth")));
    assert_eq!(ids[2], format!("feat-auth-{}", hash(&repo, "feat auth")));
    assert_eq!(ids[5], format!("wt-{}", hash(&repo, "日本語")));
    assert!(
        ids[7].starts_with("xxxxxxxx") && ids[7].len() == 64,
        "{}",
        ids[7]
    );
    let mut distinct = ids.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), names.len(), "{ids:?}");
    // git agrees: one task branch per name.
    for id in &ids {
        assert_eq!(
            repo.refs(&format!("refs/heads/task/{id}")),
            vec![format!("refs/heads/task/{id}")]
        );
    }
}

/// The contract of a harness-made task: `task.harnessAllow`/`task.harnessForbid` when set, else
/// the `.task-contract.toml` committed at the root, else none.
#[test]
fn create_takes_the_contract_from_the_settings_or_the_committed_file() {
    let repo = TestRepo::new();
    let contract = |id: &str| repo.read(&repo.task_dir(id), ".task-contract.toml");

    hook(&repo, repo.root(), "create", &named(&repo, "plain")).ok();
    assert!(
        contract("plain").contains("allowed = []"),
        "{}",
        contract("plain")
    );

    repo.write(
        repo.root(),
        ".task-contract.toml",
        "version = 1\nallowed = [\"src/store/**\"]\n",
    );
    repo.git(repo.root(), &["add", ".task-contract.toml"]);
    repo.git(repo.root(), &["commit", "-q", "-m", "contract defaults"]);
    hook(&repo, repo.root(), "create", &named(&repo, "fromfile")).ok();
    assert!(
        contract("fromfile").contains("src/store/**"),
        "{}",
        contract("fromfile")
    );

    repo.git(repo.root(), &["config", "task.harnessAllow", "src/**"]);
    repo.git(
        repo.root(),
        &["config", "--add", "task.harnessForbid", "src/store/**"],
    );
    // Set after the first start pinned the settings: trusted to be used.
    repo.task_root(&["trust", "--yes"]).ok();
    hook(&repo, repo.root(), "create", &named(&repo, "fromconfig")).ok();
    let text = contract("fromconfig");
    assert!(text.contains("allowed = [\"src/**\"]"), "{text}");
    assert!(text.contains("forbidden = [\"src/store/**\"]"), "{text}");
}

fn named(repo: &TestRepo, name: &str) -> String {
    let mut v: Value =
        serde_json::from_str(&input("worktree-create.json", repo.root(), None)).unwrap();
    v["name"] = Value::String(name.into());
    v.to_string()
}

/// WorktreeRemove removes the task whose worktree it names, saving its uncommitted work as an
/// attempt first.
#[test]
fn remove_removes_the_task_and_saves_its_work() {
    let repo = TestRepo::new();
    let wt = repo.start("feature-auth", &[]);
    repo.write(&wt, "src/lib.rs", "pub fn unsaved() {}\n");
    let run = hook(
        &repo,
        repo.root(),
        "remove",
        &input("worktree-remove.json", repo.root(), Some(&wt)),
    )
    .ok();
    assert_eq!(run.stdout, "", "{run}");
    assert!(!repo.worktrees().contains(&wt), "{run}");
    assert!(repo.refs("refs/heads/task/").is_empty());
    let attempts = repo.refs("refs/tasks/feature-auth/attempts/");
    assert_eq!(attempts.len(), 1, "{run}");
    assert_eq!(
        repo.git(
            repo.root(),
            &["show", &format!("{}:src/lib.rs", attempts[0])]
        ),
        "pub fn unsaved() {}"
    );
}

/// Wrong input is refused (exit 2) with nothing written: another event's input, a worktree no
/// task has, input that is not JSON.
#[test]
fn wrong_input_is_refused() {
    let repo = TestRepo::new();
    repo.start("other", &[]);
    let before = repo.refs("refs/");
    let wt = repo.task_dir("feature-auth");
    let remove_input = input("worktree-remove.json", repo.root(), Some(&wt));
    let run = hook(&repo, repo.root(), "create", &remove_input).code(2);
    assert!(
        run.stderr.contains("Claude Code sent WorktreeRemove"),
        "{run}"
    );
    let stray = repo.base().join("stray");
    let run = hook(
        &repo,
        repo.root(),
        "remove",
        &input("worktree-remove.json", repo.root(), Some(&stray)),
    )
    .code(2);
    assert!(run.stderr.contains("no task has its worktree"), "{run}");
    let run = hook(&repo, repo.root(), "create", "not json").code(2);
    assert!(run.stderr.contains("hook input"), "{run}");
    assert_eq!(repo.refs("refs/"), before);
}

/// WorktreeCreate never hands Claude Code a worktree outside the tasks directory: a task of that
/// name started elsewhere (`--path`) is refused (exit 2), nothing on stdout.
#[test]
fn create_refuses_a_worktree_outside_the_tasks_directory() {
    let repo = TestRepo::new();
    let elsewhere = repo.base().join("elsewhere");
    repo.task_root(&[
        "start",
        "feature-auth",
        "--path",
        elsewhere.to_str().unwrap(),
    ])
    .ok();
    let run = hook(
        &repo,
        repo.root(),
        "create",
        &input("worktree-create.json", repo.root(), None),
    )
    .code(2);
    assert!(run.stdout.is_empty(), "{run}");
    assert!(run.stderr.contains("outside the tasks directory"), "{run}");
}
