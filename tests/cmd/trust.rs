//! Issue 30 item 3: the settings the user pinned (`<common dir>/git-task/trusted.toml`),
//! `git task trust`, and `config_changed` (SPEC §2 principle 8, §4, §11).

use crate::common::{all_refs, commit_all, rev, write_script};
use crate::common::{Run, TestRepo};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn snapshot_file(repo: &TestRepo) -> PathBuf {
    repo.root().join(".git/git-task/trusted.toml")
}

fn snapshot_text(repo: &TestRepo) -> String {
    std::fs::read_to_string(snapshot_file(repo)).unwrap()
}

/// `git config` as an agent in `dir` runs it.
#[track_caller]
fn agent_config(repo: &TestRepo, dir: &Path, args: &[&str]) {
    let mut all = vec!["-c", "core.hooksPath=/dev/null", "config"];
    all.extend_from_slice(args);
    repo.git(dir, &all);
}

/// A repository with `extensions.worktreeConfig` on and a task `t1` started (its worktree).
fn worktree_config_repo() -> (TestRepo, PathBuf) {
    let repo = TestRepo::new();
    repo.git(
        repo.root(),
        &["config", "extensions.worktreeConfig", "true"],
    );
    let wt = repo.start("t1", &[]);
    (repo, wt)
}

/// Writes `core.fsmonitor` into the worktree config file `file`, as an agent with the file
/// system can.
fn set_fsmonitor(file: &Path) {
    std::fs::write(file, "[core]\n\tfsmonitor = /bin/false\n").unwrap();
}

/// A merge of `t1` from its worktree `wt` is refused for the `core.fsmonitor` set since.
#[track_caller]
fn refused_for_fsmonitor(repo: &TestRepo, wt: &Path) {
    let run = repo.task(wt, &["merge", "t1", "--no-checks", "--json"]);
    config_changed(&run, "core.fsmonitor");
}

/// A command that compares every worktree's config (`sync`) is refused for the
/// `core.fsmonitor` set since in any of them.
#[track_caller]
fn refused_everywhere_for_fsmonitor(repo: &TestRepo) {
    let run = repo.task_root(&["sync", "t1", "--json"]);
    config_changed(&run, "core.fsmonitor");
}

/// Asserts exit 1 with JSON kind `config_changed` naming `key`; returns the document.
#[track_caller]
fn config_changed(run: &Run, key: &str) -> Value {
    assert_eq!(run.code, 1, "{run}");
    let j: Value = serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}:\n{run}"));
    assert_eq!(j["kind"], "config_changed", "{j}");
    let text = j.to_string();
    assert!(text.contains(key), "does not name {key}: {j}");
    assert!(text.contains("git task trust"), "{j}");
    j
}

/// The `warning:` lines of `run` that name `key`.
fn warnings_naming(run: &Run, key: &str) -> usize {
    run.stderr
        .lines()
        .filter(|l| l.starts_with("warning:") && l.contains(key))
        .count()
}

/// The errors of `doc` against `schema/trust.json`.
fn schema_errors(doc: &Value) -> Vec<String> {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/trust.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    validator.iter_errors(doc).map(|e| e.to_string()).collect()
}

/// The first `start` pins every pinned `task.*` key set in the config files (multi-valued ones
/// as lists) and the exec-capable git config; a later `start` leaves the file as it is.
#[test]
fn first_start_pins_the_settings_and_the_git_config_that_runs_commands() {
    let repo = TestRepo::new();
    repo.git(repo.root(), &["config", "task.setup", "true"]);
    repo.git(
        repo.root(),
        &["config", "task.harnessForbid", "src/store/**"],
    );
    repo.git(
        repo.root(),
        &["config", "--add", "task.harnessForbid", "secrets/**"],
    );
    repo.git(repo.root(), &["config", "filter.lfs.smudge", "cat"]);
    repo.git(repo.root(), &["config", "color.ui", "never"]);
    assert!(!snapshot_file(&repo).exists());
    repo.start("t1", &[]);
    let text = snapshot_text(&repo);
    assert!(text.contains("\"task.setup\" = [\"true\"]"), "{text}");
    assert!(
        text.contains("\"task.harnessForbid\" = [\n    \"src/store/**\",\n    \"secrets/**\",\n]")
            || text.contains("\"task.harnessForbid\" = [\"src/store/**\", \"secrets/**\"]"),
        "{text}"
    );
    assert!(text.contains("\"filter.lfs.smudge\" = [\"cat\"]"), "{text}");
    assert!(!text.contains("color.ui"), "{text}");
    assert!(
        !text.contains("task.branchPrefix"),
        "unset keys are absent: {text}"
    );

    repo.git(repo.root(), &["config", "task.setup", "false"]);
    repo.start("t2", &[]);
    assert_eq!(
        snapshot_text(&repo),
        text,
        "a later start rewrote the snapshot"
    );
}

/// A pinned key changed with `git config` after the snapshot: the trusted value is used, and
/// each command warns once per key, naming it and `git task trust`; `list` too.
#[test]
fn a_changed_setting_is_ignored_with_one_warning_per_key() {
    let repo = TestRepo::new();
    repo.start("t1", &[]);
    repo.git(repo.root(), &["config", "task.branchPrefix", "agent/"]);
    repo.git(repo.root(), &["config", "task.onViolation", "revert"]);

    let run = repo.task_root(&["start", "t2"]).ok();
    assert_eq!(repo.refs("refs/heads/agent/"), Vec::<String>::new());
    assert!(repo
        .refs("refs/heads/task/")
        .contains(&"refs/heads/task/t2".to_owned()));
    assert_eq!(warnings_naming(&run, "task.branchPrefix"), 1, "{run}");
    assert_eq!(warnings_naming(&run, "task.onViolation"), 1, "{run}");
    assert!(run.stderr.contains("git task trust"), "{run}");
    assert!(
        run.stderr.contains("'agent/'"),
        "the config value is shown: {run}"
    );

    let run = repo.task_root(&["list", "--json"]).ok();
    assert_eq!(warnings_naming(&run, "task.branchPrefix"), 1, "{run}");
    // A bad value an agent wrote is ignored too, not an error of every command.
    repo.git(repo.root(), &["config", "task.poolSize", "lots"]);
    let run = repo.task_root(&["list"]).ok();
    assert_eq!(warnings_naming(&run, "task.poolSize"), 1, "{run}");
}

/// `git -c task.x=y task ...` is the caller's own choice for one command: it applies and is
/// not warned about, and is never pinned.
#[test]
fn git_c_values_apply_to_their_command_and_are_not_pinned() {
    let repo = TestRepo::new();
    let run = repo.git_run(
        repo.root(),
        &["-c", "task.branchPrefix=work/", "task", "start", "x"],
    );
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(repo.refs("refs/heads/work/"), ["refs/heads/work/x"]);
    assert!(!snapshot_text(&repo).contains("task.branchPrefix"));
    assert_eq!(warnings_naming(&run, "task."), 0, "{run}");
    repo.start("y", &[]);
    assert!(repo
        .refs("refs/heads/task/")
        .contains(&"refs/heads/task/y".to_owned()));
}

/// `git task trust` without --yes and without a terminal shows each difference (trusted ->
/// now) and exits 1 writing nothing; `--yes` pins the config as it is; `--json` matches
/// schema/trust.json both times.
#[test]
fn trust_shows_then_accepts_with_yes() {
    let repo = TestRepo::new();
    let wt = repo.start("t1", &[]);
    let before = snapshot_text(&repo);
    agent_config(&repo, &wt, &["task.keepOnMerge", "true"]);
    agent_config(&repo, &wt, &["core.fsmonitor", "/bin/false"]);

    let run = repo.task_root(&["trust"]);
    assert_eq!(run.code, 1, "{run}");
    assert!(
        run.stdout.contains("task.keepOnMerge: unset -> 'true'"),
        "{run}"
    );
    assert!(
        run.stdout.contains("core.fsmonitor: unset -> '/bin/false'"),
        "{run}"
    );
    assert!(run.stderr.contains("git task trust --yes"), "{run}");
    assert_eq!(snapshot_text(&repo), before, "trust without --yes wrote");

    let run = repo.task_root(&["trust", "--json"]);
    assert_eq!(run.code, 1, "{run}");
    let j = run.json();
    assert_eq!(schema_errors(&j), Vec::<String>::new(), "{j:#}");
    assert_eq!(j["accepted"], false);
    let keys: Vec<&str> = j["differences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["task.keepOnMerge", "core.fsmonitor"], "{j}");
    assert_eq!(snapshot_text(&repo), before);

    let run = repo.task_root(&["trust", "--yes", "--json"]).ok();
    let j = run.json();
    assert_eq!(schema_errors(&j), Vec::<String>::new(), "{j:#}");
    assert_eq!(j["accepted"], true);
    let text = snapshot_text(&repo);
    assert!(text.contains("\"task.keepOnMerge\" = [\"true\"]"), "{text}");
    assert!(
        text.contains("\"core.fsmonitor\" = [\"/bin/false\"]"),
        "{text}"
    );

    // Nothing differs now: trust says so (exit 0), and nothing warns.
    let run = repo.task_root(&["trust"]).ok();
    assert!(run.stdout.contains("trusted"), "{run}");
    let run = repo.task_root(&["list"]).ok();
    assert!(!run.stderr.contains("git task trust"), "{run}");
}

/// An exec-capable key set after the snapshot: the commands that run git refuse with
/// `config_changed`, naming the key with its value then and now, and write nothing; those that
/// only read still work; after `trust --yes` they work again.
#[test]
fn config_changed_refuses_before_anything_and_trust_yes_lifts_it() {
    let repo = TestRepo::new();
    let wt = repo.start("t1", &[]);
    repo.write(&wt, "docs/a.md", "a\n");
    commit_all(&repo, &wt, "work");
    let marker = repo.base().join("clean-ran");
    let script = repo.base().join("agent/clean");
    write_script(
        &script,
        &format!("#!/bin/sh\ntouch '{}'\ncat\n", marker.display()),
    );
    agent_config(&repo, &wt, &["filter.x.clean", script.to_str().unwrap()]);
    let refs = all_refs(&repo);

    for args in [
        vec!["start", "t2", "--json"],
        vec!["merge", "t1", "--no-checks", "--json"],
        vec!["sync", "t1", "--json"],
        vec!["reset", "t1", "--json"],
        vec!["revert", "t1", "--json"],
        vec!["check", "t1", "--run", "--json"],
        vec!["pool", "fill", "--wait", "--json"],
    ] {
        let run = repo.task_root(&args);
        let j = config_changed(&run, "filter.x.clean");
        assert!(
            j["error"].to_string().contains("unset ->")
                || j.to_string()
                    .contains(&format!("filter.x.clean: unset -> '{}'", script.display())),
            "{args:?}: {j}"
        );
        assert_eq!(all_refs(&repo), refs, "{args:?} changed refs");
    }
    assert!(!repo.task_dir("t2").exists());
    assert!(!marker.exists());
    // Commands that read no worktree's files through git's filters are not refused; those that
    // do are (a filter driver is what changed).
    repo.task_root(&["list"]).ok();
    repo.task_root(&["log", "t1"]).ok();
    config_changed(
        &repo.task_root(&["status", "t1", "--json"]),
        "filter.x.clean",
    );

    repo.task_root(&["trust", "--yes"]).ok();
    repo.task_root(&["merge", "t1", "--no-checks"]).ok();
    assert_eq!(repo.read(repo.root(), "docs/a.md"), "a\n");
}

/// A filter (LFS) configured when the settings were pinned keeps working: nothing refuses.
#[test]
fn a_filter_present_when_pinned_keeps_working() {
    let repo = TestRepo::new();
    repo.git(repo.root(), &["config", "filter.lfs.clean", "cat"]);
    repo.git(repo.root(), &["config", "filter.lfs.smudge", "cat"]);
    repo.git(repo.root(), &["config", "filter.lfs.required", "true"]);
    let wt = repo.start("t1", &["--check", "true"]);
    repo.write(&wt, "docs/a.md", "a\n");
    commit_all(&repo, &wt, "work");
    repo.task_root(&["check", "t1", "--run"]).ok();
    repo.task_root(&["sync", "t1"]).ok();
    repo.task_root(&["merge", "t1"]).ok();
    repo.start("t2", &[]);
}

/// git-task's own per-worktree `core.hooksPath` (a relative hooks path, as husky sets) is not
/// a change: starting, syncing and merging work after `hooks install`.
#[test]
fn git_tasks_own_hooks_path_is_not_a_change() {
    let repo = TestRepo::new();
    repo.write(repo.root(), ".githooks/README", "team hooks\n");
    commit_all(&repo, repo.root(), "hooks dir");
    repo.git(repo.root(), &["config", "core.hooksPath", ".githooks"]);
    repo.task_root(&["hooks", "install"]).ok();
    let wt = repo.start("t1", &[]);
    assert!(
        std::fs::read_to_string(repo.root().join(".git/worktrees/t1/config.worktree"))
            .is_ok_and(|t| t.contains("hooksPath")),
        "the test needs git-task's own per-worktree hooksPath"
    );
    repo.write(&wt, "docs/a.md", "a\n");
    commit_all(&repo, &wt, "work");
    repo.start("t2", &[]);
    repo.task_root(&["sync", "t1"]).ok();
    repo.task_root(&["merge", "t1", "--no-checks"]).ok();
}

/// An exec-capable key an agent sets in its own worktree's `config.worktree` is a change too,
/// named with the file it is in.
#[test]
fn a_key_in_a_task_worktrees_config_is_a_change() {
    let (repo, wt) = worktree_config_repo();
    agent_config(&repo, &wt, &["--worktree", "core.fsmonitor", "/bin/false"]);
    let run = repo.task_root(&["sync", "t1", "--json"]);
    let j = config_changed(&run, "core.fsmonitor");
    assert!(
        j.to_string().contains("worktrees/t1/config.worktree"),
        "{j}"
    );
    // From inside that worktree too.
    refused_for_fsmonitor(&repo, &wt);
}

/// `merge` of named tasks compares the config of the worktrees it acts in (the one it runs in,
/// the main one, those tasks'): a key an agent set in another task's worktree cannot make it
/// run anything, and does not stop it. Every other command still compares every worktree's,
/// and the named task's own worktree counts wherever the merge is run from.
#[test]
fn merge_compares_the_config_of_the_worktrees_it_acts_in() {
    let (repo, wt) = worktree_config_repo();
    let t2 = repo.start("t2", &[]);
    repo.write(&t2, "t2.txt", "t2\n");
    commit_all(&repo, &t2, "t2 work");
    repo.write(&wt, "t1.txt", "t1\n");
    commit_all(&repo, &wt, "t1 work");
    agent_config(&repo, &wt, &["--worktree", "core.fsmonitor", "/bin/false"]);
    // Run from t1's worktree, t2's merge opens it: refused.
    let run = repo.task(&wt, &["merge", "t2", "--no-checks", "--json"]);
    config_changed(&run, "core.fsmonitor");
    // From the main worktree it does not: t2 lands.
    let main = rev(&repo, "main");
    repo.task_root(&["merge", "t2", "--no-checks"]).ok();
    assert_ne!(rev(&repo, "main"), main);
    refused_everywhere_for_fsmonitor(&repo);
    let main = rev(&repo, "main");
    let run = repo.task_root(&["merge", "t1", "--no-checks", "--json"]);
    config_changed(&run, "core.fsmonitor");
    assert_eq!(rev(&repo, "main"), main, "nothing landed");
}

/// `start` compares the config of the worktree it runs in and of the pool entry it would take,
/// not every task's: a key an agent set in another task's worktree does not stop it (every
/// other command still refuses), one set in a pool entry does, before the entry is taken.
#[test]
fn start_compares_the_worktree_it_runs_in_and_the_pool_entry_it_takes() {
    let (repo, wt) = worktree_config_repo();
    agent_config(&repo, &wt, &["--worktree", "core.fsmonitor", "/bin/false"]);
    repo.start("t2", &[]);
    refused_everywhere_for_fsmonitor(&repo);
    // From t1's worktree, start runs there: refused.
    let run = repo.task(&wt, &["start", "t3", "--json"]);
    config_changed(&run, "core.fsmonitor");
    assert!(repo.refs("refs/tasks/t3/").is_empty(), "{run}");
    agent_config(&repo, &wt, &["--worktree", "--unset", "core.fsmonitor"]);
    repo.task_root(&["pool", "fill", "1", "--wait"]).ok();
    let pool = repo.refs("refs/task-pool/");
    assert_eq!(pool.len(), 1, "{pool:?}");
    let status = repo.task_root(&["pool", "status", "--json"]).ok().json();
    let entry = PathBuf::from(status["entries"][0]["path"].as_str().unwrap());
    agent_config(
        &repo,
        &entry,
        &["--worktree", "core.fsmonitor", "/bin/false"],
    );
    let run = repo.task_root(&["start", "t4", "--json"]);
    config_changed(&run, "core.fsmonitor");
    assert_eq!(
        repo.refs("refs/task-pool/"),
        pool,
        "the entry was not taken"
    );
}

/// A repository like [`worktree_config_repo`] where `t1` committed a `.gitattributes` naming
/// the filter `evil` for every path; returns the marker file the agent's driver would touch.
fn evil_filter_repo() -> (TestRepo, PathBuf, PathBuf) {
    let (repo, wt) = worktree_config_repo();
    let marker = repo.root().with_file_name("filter-ran");
    repo.write(&wt, ".gitattributes", "* filter=evil\n");
    commit_all(&repo, &wt, "attributes");
    (repo, wt, marker)
}

/// Asserts that `git task ARGS --json` in the main worktree is refused (`config_changed`) and
/// that the agent's filter driver did not run.
#[track_caller]
fn refused_before_the_filter(repo: &TestRepo, args: &[&str], marker: &Path) {
    let mut all = args.to_vec();
    all.push("--json");
    let run = repo.task_root(&all);
    assert_eq!(run.code, 1, "{args:?}: {run}");
    assert!(!marker.exists(), "{args:?} ran the agent's filter: {run}");
    let j: Value = serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {run}"));
    assert_eq!(j["kind"], "config_changed", "{args:?}: {j}");
}

/// A filter driver an agent names in its own worktree's config (with `git config --worktree`
/// and a `.gitattributes`) runs whenever that worktree's changed files are read through git's
/// filters: `diff`, `changes`, `check`, `status`, `commit`, `checkpoint` and the discards that
/// save first refuse instead, and the driver never runs.
#[test]
fn commands_that_read_a_worktrees_files_compare_its_config() {
    let (repo, wt, marker) = evil_filter_repo();
    agent_config(
        &repo,
        &wt,
        &[
            "--worktree",
            "filter.evil.clean",
            &format!("touch {}; cat", marker.display()),
        ],
    );
    repo.write(&wt, "README.md", "changed by the agent, not committed\n");
    let _ = std::fs::remove_file(&marker);
    for args in [
        &["diff", "t1"][..],
        &["changes", "t1"],
        &["check", "t1"],
        &["status", "t1"],
        &["checkpoint", "t1"],
        &["commit", "t1", "-m", "x"],
        &["remove", "t1", "--force"],
    ] {
        refused_before_the_filter(&repo, args, &marker);
    }
    assert!(wt.join("README.md").exists(), "nothing was removed");
}

/// A task worktree's `.git` file pointed at a git directory of the agent's making (naming the
/// real common directory, with a filter in its `config.worktree`): git and gix read that
/// directory's config there, so it is compared too, and `diff` and `merge` refuse before the
/// filter can run.
#[test]
fn a_git_dir_of_the_agents_making_is_compared_too() {
    let (repo, wt, marker) = evil_filter_repo();
    let fake = repo.root().with_file_name("fake-git-dir");
    let real = repo.root().join(".git/worktrees/t1");
    std::fs::create_dir_all(&fake).unwrap();
    for f in ["HEAD", "index", "gitdir"] {
        std::fs::copy(real.join(f), fake.join(f)).unwrap();
    }
    std::fs::write(
        fake.join("commondir"),
        format!("{}\n", repo.root().join(".git").display()),
    )
    .unwrap();
    std::fs::write(
        fake.join("config.worktree"),
        format!(
            "[filter \"evil\"]\n\tclean = touch {}; cat\n",
            marker.display()
        ),
    )
    .unwrap();
    std::fs::write(wt.join(".git"), format!("gitdir: {}\n", fake.display())).unwrap();
    repo.write(&wt, "README.md", "changed by the agent, not committed\n");
    let _ = std::fs::remove_file(&marker);
    let refused = || {
        for args in [&["diff", "t1"][..], &["merge", "t1", "--no-checks"]] {
            refused_before_the_filter(&repo, args, &marker);
        }
    };
    refused();
    // Its `commondir` naming a common directory of the agent's making, whose config holds it.
    std::fs::remove_file(fake.join("config.worktree")).unwrap();
    let common = repo.root().with_file_name("fake-common");
    std::fs::create_dir_all(&common).unwrap();
    std::fs::write(
        common.join("config"),
        format!(
            "[filter \"evil\"]\n\tclean = touch {}; cat\n",
            marker.display()
        ),
    )
    .unwrap();
    std::fs::write(fake.join("commondir"), format!("{}\n", common.display())).unwrap();
    refused();
}

/// A merge into a branch checked out in a linked worktree writes and runs git there: that
/// worktree's config counts, and a key set there since it was trusted stops the merge before
/// anything moves.
#[test]
fn a_merge_into_a_branch_checked_out_elsewhere_compares_that_worktrees_config() {
    let (repo, _wt) = worktree_config_repo();
    repo.git(repo.root(), &["branch", "dev"]);
    let side = repo.root().with_file_name(format!(
        "{}-side",
        repo.root().file_name().unwrap().to_string_lossy()
    ));
    repo.git(
        repo.root(),
        &["worktree", "add", "-q", side.to_str().unwrap(), "dev"],
    );
    let t3 = repo.start("t3", &["--base", "dev"]);
    repo.write(&t3, "t3.txt", "t3\n");
    commit_all(&repo, &t3, "t3 work");
    agent_config(
        &repo,
        &side,
        &["--worktree", "core.fsmonitor", "/bin/false"],
    );
    let dev = rev(&repo, "dev");
    let run = repo.task_root(&["merge", "t3", "--no-checks", "--json"]);
    config_changed(&run, "core.fsmonitor");
    assert_eq!(rev(&repo, "dev"), dev, "nothing landed");
    assert!(!side.join("t3.txt").exists());
}

/// The check remembers a worktree's `config.worktree` that holds nothing to compare by its stat
/// data (a thousand worktrees are `stat`ed, not parsed), and still sees an exec-capable key
/// written into it in place, at the same size, with its modification time put back.
#[test]
fn a_remembered_worktree_config_rewritten_in_place_is_read_again() {
    let (repo, wt) = worktree_config_repo();
    let file = repo.root().join(".git/worktrees/t1/config.worktree");
    let quiet = "[user]\n\tname = xxxxxxxxxxxxxxxxxx\n";
    let loud = "[core]\n\tfsmonitor = /bin/false /x\n";
    assert_eq!(quiet.len(), loud.len(), "the test needs the same size");
    std::fs::write(&file, quiet).unwrap();
    // Old enough to be remembered (a file is, two seconds after its last change).
    std::thread::sleep(std::time::Duration::from_millis(2100));
    repo.task_root(&["sync", "t1"]).ok();
    let memo = std::fs::read_to_string(repo.root().join(".git/git-task/trusted-memo")).unwrap();
    assert!(memo.contains("worktrees/t1/config.worktree"), "{memo}");
    let mtime = std::fs::metadata(&file).unwrap().modified().unwrap();
    let mut f = std::fs::OpenOptions::new().write(true).open(&file).unwrap();
    std::io::Write::write_all(&mut f, loud.as_bytes()).unwrap();
    f.set_modified(mtime).unwrap();
    drop(f);
    assert_eq!(std::fs::metadata(&file).unwrap().modified().unwrap(), mtime);
    refused_for_fsmonitor(&repo, &wt);
}

/// git reads a worktree's `config.worktree` only with `extensions.worktreeConfig` on: a key
/// there is nothing git would run until that is turned on, and then it is a change.
#[test]
fn a_worktree_config_counts_once_git_reads_it() {
    let repo = TestRepo::new();
    let wt = repo.start("t1", &[]);
    set_fsmonitor(&repo.root().join(".git/worktrees/t1/config.worktree"));
    repo.task_root(&["sync", "t1"]).ok();
    agent_config(&repo, &wt, &["extensions.worktreeConfig", "true"]);
    refused_for_fsmonitor(&repo, &wt);
}

/// A worktree directory whose name holds a line break never reaches the memo, where it could
/// forge a line that says another file holds nothing; its file is read every time.
#[test]
fn a_worktree_dir_named_with_a_line_break_is_never_remembered() {
    let (repo, wt) = worktree_config_repo();
    let odd = repo.root().join(".git/worktrees/x\n1 y");
    std::fs::create_dir_all(&odd).unwrap();
    std::fs::write(odd.join("config.worktree"), "[user]\n\tname = x\n").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2100));
    repo.task_root(&["sync", "t1"]).ok();
    let memo =
        std::fs::read_to_string(repo.root().join(".git/git-task/trusted-memo")).unwrap_or_default();
    assert!(!memo.contains("worktrees/x"), "{memo}");
    assert!(!memo.contains("1 y/config.worktree"), "{memo}");
    set_fsmonitor(&odd.join("config.worktree"));
    refused_everywhere_for_fsmonitor(&repo);
    // `merge` looks only at the worktrees it acts in: that one is none of them.
    repo.task(&wt, &["merge", "t1", "--no-checks"]).ok();
}

/// A worktree directory whose name is not UTF-8 still has its `config.worktree` compared.
#[test]
fn a_key_under_a_worktree_dir_named_in_bytes_is_a_change() {
    use std::os::unix::ffi::OsStrExt;
    let (repo, wt) = worktree_config_repo();
    let odd = repo
        .root()
        .join(".git/worktrees")
        .join(std::ffi::OsStr::from_bytes(b"x\xff"));
    std::fs::create_dir_all(&odd).unwrap();
    set_fsmonitor(&odd.join("config.worktree"));
    refused_everywhere_for_fsmonitor(&repo);
    let _ = wt;
}

/// A hook defined in config (git >= 2.54 runs it on every commit) is the agent's command, and
/// turning off git-task's own config hook is a change too; git-task's own hook sections, as
/// `hooks install` writes them, are not.
#[test]
fn hooks_defined_in_config_are_commands() {
    let repo = TestRepo::new();
    let wt = repo.start("t1", &[]);
    // git-task's own sections are not a change.
    repo.git(
        repo.root(),
        &["config", "hook.git-task-pre-commit.command", "exec /x/shim"],
    );
    repo.task_root(&["sync", "t1", "--json"]).ok();
    agent_config(&repo, &wt, &["hook.evil.command", "touch /tmp/never"]);
    config_changed(
        &repo.task_root(&["sync", "t1", "--json"]),
        "hook.evil.command",
    );
    repo.task_root(&["trust", "--yes"]).ok();
    agent_config(&repo, &wt, &["hook.git-task-pre-commit.enabled", "false"]);
    config_changed(
        &repo.task_root(&["sync", "t1", "--json"]),
        "hook.git-task-pre-commit.enabled",
    );
}

/// `hooks install` pins when nothing is pinned yet, and never re-pins what an agent set since.
#[test]
fn hooks_install_pins_only_when_nothing_is_pinned() {
    let repo = TestRepo::new();
    repo.git(repo.root(), &["config", "task.setup", "true"]);
    repo.task_root(&["hooks", "install"]).ok();
    let pinned = snapshot_text(&repo);
    assert!(pinned.contains("task.setup"), "{pinned}");
    let wt = repo.start("t1", &[]);
    agent_config(&repo, &wt, &["task.setup", "touch pwned"]);
    repo.task_root(&["hooks", "install"]).ok();
    assert_eq!(snapshot_text(&repo), pinned);
}

/// A snapshot that is not one git-task wrote is an error naming the file, never a silent
/// fallback to the config an agent can write.
#[test]
fn an_unreadable_snapshot_is_an_error() {
    let repo = TestRepo::new();
    repo.start("t1", &[]);
    std::fs::write(snapshot_file(&repo), "this is = not [ toml").unwrap();
    let run = repo.task_root(&["list"]);
    assert_eq!(run.code, 128, "{run}");
    assert!(run.stderr.contains("trusted.toml"), "{run}");
    assert!(run.stderr.contains("git task trust"), "{run}");
}

/// `trust --records` lists the records the ledger does not know and exits 1; with --yes it
/// adopts them (their ids and tips are printed), after which they verify.
#[test]
fn trust_records_lists_then_adopts() {
    let repo = TestRepo::new();
    repo.start("t1", &[]);
    let entry = repo.root().join(".git/git-task/ledger/records/t1");
    if !entry.exists() {
        eprintln!("the ledger is not written by start yet; skipping");
        return;
    }
    std::fs::remove_file(&entry).unwrap();
    let tip = rev(&repo, "refs/tasks/t1/record");
    let run = repo.task_root(&["trust", "--records", "--json"]);
    assert_eq!(run.code, 1, "{run}");
    let j = run.json();
    assert_eq!(schema_errors(&j), Vec::<String>::new(), "{j:#}");
    assert_eq!(j["records"][0]["task"], "t1", "{j}");
    assert!(!entry.exists(), "listing adopted");
    let run = repo.task_root(&["trust", "--records", "--yes", "t1"]).ok();
    assert!(run.stdout.contains(&tip), "{run}");
    assert_eq!(std::fs::read_to_string(&entry).unwrap().trim(), tip);
    repo.task_root(&["status", "t1"]).ok();
}
