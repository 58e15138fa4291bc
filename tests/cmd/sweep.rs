//! `git task sweep`: repairs each kind of half-made state, built by hand or by killing `start`.

use crate::common::problems;
use crate::common::TestRepo;
use crate::common::*;
use std::process::Stdio;

#[test]
fn sweep_of_a_healthy_repository_does_nothing() {
    let repo = TestRepo::new();
    repo.start("ok", &[]);
    let before = all_refs(&repo);
    let j = repo.task_root(&["sweep", "--json"]).ok().json();
    assert_eq!(
        j,
        serde_json::json!({"schema_version": 1, "kind": "sweep", "dry_run": false, "repairs": [], "tampered": []})
    );
    let run = repo.task_root(&["sweep"]).ok();
    assert!(run.stderr.contains("Nothing to repair"), "{run}");
    assert_eq!(all_refs(&repo), before);
    assert!(repo.worktrees().contains(&repo.task_dir("ok")));
}

/// Starts `id` with a setup that waits forever, then kills `git-task` with SIGKILL mid-start.
fn kill_start_midway(repo: &TestRepo, id: &str) {
    let ready = repo.base().join(format!("{id}.ready"));
    let pidfile = repo.base().join(format!("{id}.pid"));
    let setup = format!(
        "echo $$ > '{}'; touch '{}'; exec sleep 600",
        pidfile.display(),
        ready.display()
    );
    let mut child = task_command(repo, repo.root(), &["start", id, "--setup", &setup])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(&ready);
    child.kill().unwrap(); // SIGKILL: no clean-up runs
    child.wait().unwrap();
    // The setup's `sleep` outlives its parent; end it by its pid.
    let pid = std::fs::read_to_string(&pidfile).unwrap();
    let _ = std::process::Command::new("kill").arg(pid.trim()).status();
}

/// SPEC §2.7: after `kill -9` during start, sweep leaves no half-made task.
#[test]
fn sweep_rolls_back_a_start_that_was_killed() {
    let repo = TestRepo::new();
    kill_start_midway(&repo, "killed");
    let wt = repo.task_dir("killed");
    assert!(wt.exists(), "the worktree was made before the kill");
    assert_eq!(record_status(&repo, "killed"), "provisioning");
    assert!(repo
        .refs("refs/heads/task")
        .contains(&"refs/heads/task/killed".to_owned()));

    let before = all_refs(&repo);
    let dry = repo
        .task_root(&["sweep", "--dry-run", "--json"])
        .ok()
        .json();
    assert_eq!(dry["dry_run"], true);
    assert_eq!(problems(&dry), ["unfinished_start"]);
    assert_eq!(all_refs(&repo), before, "--dry-run changes nothing");
    assert!(wt.exists());

    let j = repo.task_root(&["sweep", "--json"]).ok().json();
    assert_eq!(problems(&j), ["unfinished_start"]);
    assert_eq!(j["repairs"][0]["task"], "killed");
    assert!(!wt.exists());
    assert_eq!(repo.worktrees(), vec![repo.root().to_path_buf()]);
    assert!(
        repo.refs("refs/heads/task").is_empty(),
        "no branch without its worktree"
    );
    assert!(
        repo.refs("refs/tasks/killed/record").is_empty(),
        "no record without its branch"
    );
    assert!(repo.refs("refs/tasks/killed/base").is_empty());
    assert_eq!(repo.porcelain(repo.root()), "");
    repo.fsck();
    let again = repo.task_root(&["sweep", "--json"]).ok().json();
    assert_eq!(
        problems(&again),
        Vec::<String>::new(),
        "sweep is idempotent"
    );
}

/// The next start of the same id repairs the killed start itself and makes the task.
#[test]
fn start_after_a_killed_start_rolls_back_and_starts_over() {
    let repo = TestRepo::new();
    kill_start_midway(&repo, "retry");
    let j = repo.task_root(&["start", "retry", "--json"]).ok().json();
    assert_eq!(j["created"], true);
    assert_eq!(events(&repo, "retry"), ["started", "provisioned"]);
    assert_eq!(
        repo.worktrees(),
        vec![repo.root().to_path_buf(), repo.task_dir("retry")]
    );
    repo.fsck();
}

#[test]
fn sweep_deletes_a_task_branch_without_a_record_after_saving_it() {
    let repo = TestRepo::new();
    lone_task_branch(&repo, "lonely");
    let tip = rev(&repo, "task/lonely");
    let j = repo.task_root(&["sweep", "--json"]).ok().json();
    assert_eq!(problems(&j), ["branch_without_record"]);
    assert!(repo.refs("refs/heads/task").is_empty());
    let attempt = j["repairs"][0]["attempts"][0]["ref"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(attempt, "refs/tasks/lonely/attempts/1");
    assert_eq!(
        rev(&repo, &format!("{attempt}^")),
        tip,
        "the branch's commits are kept under the attempt"
    );
    repo.fsck();
}

#[test]
fn sweep_removes_a_task_worktree_without_a_record_after_saving_its_work() {
    let repo = TestRepo::new();
    let stray = repo.task_dir("stray");
    task_branch_without_record(&repo, "stray", &stray);
    repo.write(&stray, "notes.txt", "unsaved\n");
    let j = repo.task_root(&["sweep", "--json"]).ok().json();
    assert_eq!(problems(&j), ["branch_without_record"]);
    assert!(!stray.exists());
    assert_eq!(repo.worktrees(), vec![repo.root().to_path_buf()]);
    assert!(repo.refs("refs/heads/task").is_empty());
    let saved: Vec<String> = j["repairs"][0]["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["ref"].as_str().unwrap().to_owned())
        .collect();
    assert!(
        saved
            .iter()
            .any(|a| show(&repo, a, "notes.txt") == "unsaved"),
        "{saved:?}"
    );
    repo.fsck();
}

#[test]
fn sweep_leaves_a_directory_it_did_not_make_alone() {
    let repo = TestRepo::new();
    repo.start("real", &[]);
    let junk = repo.task_dir("junk");
    repo.write(&junk, "left/behind.txt", "the user's own\n");
    let j = repo.task_root(&["sweep", "--json"]).ok().json();
    assert_eq!(problems(&j), Vec::<String>::new());
    assert_eq!(repo.read(&junk, "left/behind.txt"), "the user's own\n");
    assert!(
        repo.task_dir("real").exists(),
        "real task worktrees are left alone"
    );
    repo.fsck();
}

#[test]
fn sweep_cleans_up_a_task_whose_worktree_was_deleted() {
    let repo = TestRepo::new();
    let wt = repo.start("rmrf", &[]);
    repo.write(&wt, "c.txt", "c\n");
    repo.git(&wt, &["add", "c.txt"]);
    repo.git(&wt, &["commit", "-q", "-m", "c"]);
    std::fs::remove_dir_all(&wt).unwrap();
    let j = repo.task_root(&["sweep", "--json"]).ok().json();
    assert_eq!(problems(&j), ["worktree_vanished"]);
    let listed = repo.git(repo.root(), &["worktree", "list", "--porcelain"]);
    assert!(
        !listed.contains("rmrf"),
        "the stale worktree entry is pruned:\n{listed}"
    );
    assert!(repo.refs("refs/heads/task").is_empty());
    assert_eq!(record_status(&repo, "rmrf"), "removed");
    let attempt = j["repairs"][0]["attempts"][0]["ref"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        show(&repo, &attempt, "c.txt"),
        "c",
        "committed work is kept"
    );
    repo.fsck();
}

#[test]
fn sweep_deletes_stale_lock_files() {
    let repo = TestRepo::new();
    repo.start("locked", &[]);
    let lock = repo.root().join(".git/refs/tasks/locked/record.lock");
    std::fs::write(&lock, "").unwrap();
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3 * 3600);
    std::fs::File::options()
        .write(true)
        .open(&lock)
        .unwrap()
        .set_modified(old)
        .unwrap();
    let j = repo.task_root(&["sweep", "--json"]).ok().json();
    assert_eq!(problems(&j), ["stale_lock"]);
    assert!(!lock.exists());
    // With the lock gone, the task can change again.
    repo.task_root(&["drop", "locked"]).ok();
}

/// A pack's `.keep` that a killed git-task left (marked with its pid, which is gone) is
/// deleted, so `git gc` can repack that pack; a `.keep` of anyone else is left alone: an
/// empty one (a user's `touch`), one of `git fetch`, one of a git-task still running.
#[test]
fn sweep_deletes_the_pack_keep_of_a_killed_command_only() {
    let repo = TestRepo::new();
    let pack = repo.root().join(".git/objects/pack");
    std::fs::create_dir_all(&pack).unwrap();
    let mut dead = std::process::Command::new("true").spawn().unwrap();
    let dead_pid = dead.id();
    dead.wait().unwrap();
    let mut alive = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let keeps = [
        ("pack-1.keep", format!("git-task {dead_pid}\n")),
        ("pack-2.keep", String::new()),
        ("pack-3.keep", format!("fetch-pack {dead_pid} on host\n")),
        ("pack-4.keep", format!("git-task {}\n", alive.id())),
    ];
    for (name, text) in &keeps {
        std::fs::write(pack.join(name), text).unwrap();
    }
    let dry = repo.task_root(&["sweep", "-n", "--json"]).ok().json();
    assert_eq!(problems(&dry), ["stale_pack_keep"]);
    assert!(pack.join("pack-1.keep").exists());
    let j = repo.task_root(&["sweep", "--json"]).ok().json();
    alive.kill().unwrap();
    alive.wait().unwrap();
    assert_eq!(problems(&j), ["stale_pack_keep"]);
    assert!(!pack.join("pack-1.keep").exists());
    for (name, text) in &keeps[1..] {
        assert_eq!(&std::fs::read_to_string(pack.join(name)).unwrap(), text);
    }
}

#[test]
fn sweep_dry_run_reports_without_changing_anything() {
    let repo = TestRepo::new();
    lone_task_branch(&repo, "lonely");
    repo.write(&repo.task_dir("junk"), "f.txt", "f\n");
    let before = all_refs(&repo);
    let run = repo.task_root(&["sweep", "-n"]).ok();
    assert!(run.stdout.contains("would repair"), "{run}");
    assert_eq!(all_refs(&repo), before);
    assert!(repo.task_dir("junk").join("f.txt").exists());
}

/// SPEC §2.7: the next mutating command (not only sweep) rolls back a killed start, cheaply.
#[test]
fn next_mutating_command_rolls_back_a_killed_start() {
    let repo = TestRepo::new();
    kill_start_midway(&repo, "dead1");
    repo.start("other", &[]);
    assert!(
        repo.refs("refs/tasks/dead1").is_empty(),
        "start of another id repaired it"
    );
    assert!(!repo.task_dir("dead1").exists());
    assert!(!repo
        .refs("refs/heads/task")
        .contains(&"refs/heads/task/dead1".to_owned()));

    kill_start_midway(&repo, "dead2");
    repo.task_root(&["remove", "never-was"]).ok();
    assert!(
        repo.refs("refs/tasks/dead2").is_empty(),
        "remove repaired it"
    );

    kill_start_midway(&repo, "dead3");
    repo.task_root(&["drop", "other"]).ok();
    assert!(repo.refs("refs/tasks/dead3").is_empty(), "drop repaired it");
    assert_eq!(
        repo.worktrees(),
        vec![repo.root().to_path_buf(), repo.task_dir("other")]
    );
    assert_eq!(
        repo.refs("refs/heads/task"),
        vec!["refs/heads/task/other".to_owned()]
    );
    repo.fsck();
}

/// A record left `provisioning` by a dead process, with its branch but no worktree, built with git plumbing.
#[test]
fn sweep_rolls_back_a_provisioning_record_without_a_worktree() {
    let repo = TestRepo::new();
    craft_abandoned_start(&repo, "ghost");
    assert_eq!(
        repo.task_root(&["list", "--json"]).ok().json()["tasks"][0]["status"],
        "provisioning"
    );

    let j = repo.task_root(&["sweep", "--json"]).ok().json();
    assert_eq!(problems(&j), ["unfinished_start"]);
    assert!(repo.refs("refs/tasks").is_empty());
    assert!(repo.refs("refs/heads/task").is_empty());
    assert_eq!(repo.worktrees(), vec![repo.root().to_path_buf()]);
    repo.fsck();
}

/// Ctrl-C during start removes what it made.
#[test]
fn interrupted_start_removes_what_it_made() {
    let repo = TestRepo::new();
    let ready = repo.base().join("int.ready");
    let setup = format!("touch '{}'; sleep 600", ready.display());
    let child = task_command(&repo, repo.root(), &["start", "int", "--setup", &setup])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for(&ready);
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let run = collect(child);
    assert_ne!(run.code, 0, "{run}");
    assert!(
        run.stderr.contains("error: ") && run.stderr.contains("interrupted"),
        "{run}"
    );
    assert!(!repo.task_dir("int").exists());
    assert_nothing_written(&repo);
    repo.fsck();
}

#[test]
fn sweep_deletes_leftovers_of_an_interrupted_removal() {
    let repo = TestRepo::new();
    let aside = repo.base().join("repo.tasks/.gone.removing-123-456");
    repo.write(&aside, "big/file.txt", "x\n");
    crate::common::note_aside(&repo, &aside);
    let j = repo.task_root(&["sweep", "--json"]).ok().json();
    assert_eq!(problems(&j), ["interrupted_removal"]);
    assert!(!aside.exists());
}

/// `task.worktreeDir` may be shared: another repository, another repository's worktree,
/// or a directory not named like a task is left alone.
#[test]
fn sweep_leaves_directories_of_other_repositories_alone() {
    let repo = TestRepo::new();
    let tasks = repo.base().join("repo.tasks");
    let other = TestRepo::new();
    // Another repository inside the worktree dir.
    repo.git(
        repo.root(),
        &["init", "-q", tasks.join("other-repo").to_str().unwrap()],
    );
    // A worktree of another repository inside it.
    let foreign = tasks.join("foreign-wt");
    other.git(
        other.root(),
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "side",
            foreign.to_str().unwrap(),
        ],
    );
    // A directory that cannot be a task.
    repo.write(&tasks.join("not a task"), "keep.txt", "keep\n");
    let j = repo.task_root(&["sweep", "--json"]).ok().json();
    assert_eq!(j["repairs"], serde_json::json!([]), "{j}");
    assert!(tasks.join("other-repo/.git").is_dir());
    assert!(foreign.join("README.md").exists());
    assert!(tasks.join("not a task/keep.txt").exists());
    other.git(&foreign, &["status"]);
}

/// A branch of the user's that merely matches the prefix is not a task: sweep leaves it alone.
#[test]
fn sweep_leaves_the_users_own_prefixed_branches_alone() {
    let repo = TestRepo::new();
    repo.git(repo.root(), &["branch", "task/mine"]);
    let before = all_refs(&repo);
    let j = repo.task_root(&["sweep", "--json"]).ok().json();
    assert_eq!(j["repairs"], serde_json::json!([]));
    assert_eq!(all_refs(&repo), before);
}

/// A start seen half-way by another process that is descheduled until the start has finished
/// and exited must not be rolled back: the record is read again once the process is found gone.
#[test]
fn a_start_that_finished_meanwhile_is_not_rolled_back() {
    let repo = crate::common::TestRepo::new();
    let wt = repo.start("done", &[]);
    let git_repo = git_task::testing::git::Repo::discover(repo.root()).unwrap();
    let settings = git_task::testing::config::Settings::load(&git_repo).unwrap();
    let id = git_task::testing::task::TaskId::parse("done").unwrap();
    let now = git_task::testing::record::load_existing(&git_repo, &id).unwrap();
    // What a reader saw while the start was provisioning: its `started` event, by a process now gone.
    let started = git_task::testing::git::objects::commit_parents(&git_repo, now.tip).unwrap()[0];
    let mut seen = git_task::testing::record::read_at(&git_repo, started).unwrap();
    assert_eq!(
        seen.state.status,
        git_task::testing::task::Status::Provisioning
    );
    let gone = std::process::Command::new("true").spawn().unwrap();
    seen.state.pid = gone.id();
    let mut gone = gone;
    gone.wait().unwrap();
    assert!(git_task::testing::recover::liveness::provisioning_is_abandoned(&seen.state));

    let rolled =
        git_task::testing::recover::abandoned::roll_back_abandoned(&git_repo, &settings, &seen)
            .unwrap();
    assert!(rolled.is_none(), "a finished start was rolled back");
    assert!(wt.join("README.md").exists());
    assert_eq!(
        repo.refs("refs/tasks/done/"),
        ["refs/tasks/done/base", "refs/tasks/done/record"]
    );
    repo.fsck();
}

/// A transaction killed between its pending note and its ref move leaves a pending file in the
/// ledger: `sweep` settles it (a pending tip the record reached becomes the ledger's tip; one it
/// never reached is dropped), and the record still verifies.
#[test]
fn sweep_settles_pending_ledger_entries() {
    let repo = TestRepo::new();
    repo.start("led", &[]);
    let dir = repo.root().join(".git/git-task/ledger/records");
    let tip = rev(&repo, "refs/tasks/led/record");
    let base = rev(&repo, "HEAD");
    // One pending tip the record is at (the ledger's own file rolled back to a stale value),
    // one it never reached.
    std::fs::write(dir.join(format!("led.pending-{tip}")), "").unwrap();
    std::fs::write(dir.join(format!("led.pending-{base}")), "").unwrap();
    std::fs::write(dir.join("led"), format!("{base}\n")).unwrap();
    repo.task_root(&["sweep"]).ok();
    let left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".pending-"))
        .collect();
    assert!(left.is_empty(), "pending files left: {left:?}");
    assert_eq!(
        std::fs::read_to_string(dir.join("led")).unwrap().trim(),
        tip
    );
    repo.task_root(&["status", "led"]).ok();
}
