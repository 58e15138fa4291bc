//! Several machines sharing one remote: `push`, `fetch`, `list --remote`, `adopt`,
//! `merge --remote` (SPEC §6), with clones standing for machines and git as the oracle.

use crate::common::commit_all;
use crate::common::{Run, TestRepo};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// A bare repository `remote.git` beside the main worktree, holding `main`; the main
/// worktree is machine one, with `origin` pointing at `url` (a path, or a daemon's URL).
pub(super) fn bare_remote(repo: &TestRepo) -> PathBuf {
    let bare = repo.base().join("remote.git");
    repo.git(
        &repo.base(),
        &["init", "-q", "--bare", "-b", "main", "remote.git"],
    );
    bare
}

/// Points machine one's `origin` at `url` and publishes its `main` there.
pub(super) fn publish(repo: &TestRepo, url: &str) {
    repo.git(repo.root(), &["remote", "add", "origin", url]);
    repo.git(repo.root(), &["push", "-q", "origin", "main"]);
}

/// Clones `url` as another machine, `<base>/<name>`.
pub(super) fn machine(repo: &TestRepo, url: &str, name: &str) -> PathBuf {
    repo.git(&repo.base(), &["clone", "-q", url, name]);
    repo.base().join(name)
}

/// `git <args>` in the bare remote.
fn in_remote(repo: &TestRepo, args: &[&str]) -> String {
    repo.git(&repo.base().join("remote.git"), args)
}

/// The event names of a task's record on the remote, oldest first.
fn remote_events(repo: &TestRepo, id: &str) -> Vec<String> {
    let record = format!("refs/tasks/{id}/record");
    let run = repo.git_run(
        &repo.base().join("remote.git"),
        &[
            "log",
            "--first-parent",
            "--reverse",
            "--format=%s",
            &record,
            "--",
        ],
    );
    run.stdout.lines().map(str::to_owned).collect()
}

/// The event names of a task's record in machine `dir`, oldest first (first parents).
fn events_in(repo: &TestRepo, dir: &Path, id: &str) -> Vec<String> {
    let record = format!("refs/tasks/{id}/record");
    repo.git(
        dir,
        &["log", "--first-parent", "--reverse", "--format=%s", &record],
    )
    .lines()
    .map(str::to_owned)
    .collect()
}

/// The `Task-Id` trailers of the remote's `main`, oldest first.
fn landed_on_remote(repo: &TestRepo) -> Vec<String> {
    in_remote(
        repo,
        &[
            "log",
            "--reverse",
            "--format=%(trailers:key=Task-Id,valueonly)",
            "main",
        ],
    )
    .lines()
    .map(str::trim)
    .filter(|l| !l.is_empty())
    .map(str::to_owned)
    .collect()
}

/// Asserts `git fsck` is clean in `dir`.
#[track_caller]
fn fsck(repo: &TestRepo, dir: &Path) {
    let run = repo.git_run(dir, &["fsck", "--no-progress", "--strict"]);
    assert_eq!(run.code, 0, "git fsck in {}:\n{run}", dir.display());
    assert!(
        !run.stdout.contains("error") && !run.stderr.contains("error"),
        "git fsck in {}:\n{run}",
        dir.display()
    );
}

/// Starts task `id` in machine `dir` allowing `<id>/**`, commits `<id>/work.txt`, returns its worktree.
fn task_with_work(repo: &TestRepo, dir: &Path, id: &str, extra: &[&str]) -> PathBuf {
    let allow = format!("{id}/**");
    let mut args = vec!["start", id, "--allow", &allow];
    args.extend_from_slice(extra);
    let wt = PathBuf::from(repo.task(dir, &args).ok().out());
    repo.write(&wt, &format!("{id}/work.txt"), &format!("work of {id}\n"));
    commit_all(repo, &wt, &format!("work on {id}"));
    wt
}

#[test]
fn a_task_pushed_from_one_machine_is_adopted_and_merged_on_the_remote_by_another() {
    let repo = TestRepo::new();
    let bare = bare_remote(&repo);
    publish(&repo, bare.to_str().unwrap());
    let one = repo.root().to_path_buf();
    let two = machine(&repo, bare.to_str().unwrap(), "two");
    task_with_work(&repo, &one, "t1", &["--check", "test -f t1/work.txt"]);

    let pushed = repo.task(&one, &["push", "t1", "--json"]).ok().json();
    assert_eq!(pushed["kind"], "push");
    for name in [
        "refs/heads/task/t1",
        "refs/tasks/t1/record",
        "refs/tasks/t1/base",
    ] {
        assert_eq!(
            in_remote(&repo, &["rev-parse", name]),
            repo.git(&one, &["rev-parse", name]),
            "{name} on the remote"
        );
    }

    // Machine two sees it without it touching anything local, then adopts it.
    let fetched = repo.task(&two, &["fetch", "--json"]).ok().json();
    assert_eq!(fetched["tasks"][0]["id"], "t1");
    assert_eq!(fetched["tasks"][0]["here"], "none");
    assert!(repo.git(&two, &["for-each-ref", "refs/tasks"]).is_empty());
    let listed = repo
        .task(&two, &["list", "--remote", "origin", "--json"])
        .ok()
        .json();
    assert_eq!(listed["tasks"][0]["status"], "active");
    let adopted = repo.task(&two, &["adopt", "t1", "--json"]).ok().json();
    let wt2 = repo.base().join("two.tasks").join("t1");
    assert_eq!(adopted["worktree"], wt2.display().to_string());
    assert_eq!(
        repo.task(&two, &["path", "t1"]).ok().out(),
        wt2.display().to_string()
    );
    assert_eq!(repo.read(&wt2, "t1/work.txt"), "work of t1\n");
    let exec = repo
        .task(
            &two,
            &["exec", "t1", "--", "sh", "-c", "echo $GIT_TASK_ID; pwd"],
        )
        .ok();
    assert_eq!(exec.out(), format!("t1\n{}", wt2.display()));
    // Adopting again is a no-op.
    let again = repo.task(&two, &["adopt", "t1", "--json"]).ok().json();
    assert_eq!(again["already"], true);

    // The hooks judge the adopted task's commits by its frozen contract, as for a local task.
    repo.task(&two, &["hooks", "install"]).ok();
    repo.write(&wt2, "outside.txt", "not allowed\n");
    repo.git(&wt2, &["add", "outside.txt"]);
    let blocked = repo.git_run(&wt2, &["commit", "-q", "-m", "outside"]);
    assert_eq!(blocked.code, 1, "{blocked}");
    assert!(blocked.stderr.contains("outside.txt"), "{blocked}");
    repo.git(&wt2, &["rm", "-q", "--cached", "outside.txt"]);
    std::fs::remove_file(wt2.join("outside.txt")).unwrap();

    // More work on machine two, then the merge lands on the remote, not on two's own main.
    repo.write(&wt2, "t1/more.txt", "more\n");
    commit_all(&repo, &wt2, "more on t1");
    let two_main = repo.git(&two, &["rev-parse", "main"]);
    let merged = repo
        .task(&two, &["merge", "t1", "--remote", "origin", "--json"])
        .ok()
        .json();
    assert_eq!(merged["kind"], "merge");
    assert_eq!(merged["remote"], "origin");
    let landed = merged["tasks"][0]["commit"].as_str().unwrap().to_owned();
    assert_eq!(in_remote(&repo, &["rev-parse", "main"]), landed);
    assert_eq!(in_remote(&repo, &["show", "main:t1/more.txt"]), "more");
    assert_eq!(repo.git(&two, &["rev-parse", "main"]), two_main);
    assert_eq!(landed_on_remote(&repo), vec!["t1"]);
    let events = remote_events(&repo, "t1");
    assert_eq!(events[events.len() - 2..], ["checks", "merged"]);
    assert!(in_remote(&repo, &["notes", "--ref=tasks", "show", &landed]).contains("t1"));
    // The task branch went on both sides; the worktree on two too.
    assert!(in_remote(&repo, &["for-each-ref", "refs/heads/task"]).is_empty());
    assert!(repo
        .git(&two, &["for-each-ref", "refs/heads/task"])
        .is_empty());
    assert!(!wt2.exists());

    // Machine one sees the merge after a fetch.
    let listed = repo.task(&one, &["fetch", "--json"]).ok().json();
    assert_eq!(listed["tasks"][0]["state"]["status"], "merged");
    assert_eq!(listed["tasks"][0]["here"], "behind");
    for dir in [&one, &two, &bare] {
        fsck(&repo, dir);
    }
}

/// Adopting freezes the contract as fetched: a record changed by hand on the adopting machine
/// afterwards (a looser contract) is refused by the gate, as for a task started there.
#[test]
fn an_adopted_record_changed_by_hand_is_refused_as_tampered() {
    let repo = TestRepo::new();
    let bare = bare_remote(&repo);
    publish(&repo, bare.to_str().unwrap());
    let one = repo.root().to_path_buf();
    let two = machine(&repo, bare.to_str().unwrap(), "two");
    task_with_work(&repo, &one, "t1", &[]);
    repo.task(&one, &["push", "t1"]).ok();
    repo.task(&two, &["adopt", "t1"]).ok();
    let wt2 = repo.base().join("two.tasks").join("t1");
    repo.write(&wt2, "outside.txt", "not allowed\n");
    commit_all(&repo, &wt2, "outside");
    // An agent on machine two loosens the frozen contract with git plumbing.
    let script = r#"set -e
tip=$(git rev-parse refs/tasks/t1/record)
blob=$(printf 'version = 1\ntask = "t1"\n' | git hash-object -w --stdin)
tree=$(git ls-tree "$tip" | sed "s/[0-9a-f]\{40\}\tcontract.toml/$blob\tcontract.toml/" | git mktree)
new=$(git commit-tree -p "$tip" -m "checkpoint" "$tree")
git update-ref refs/tasks/t1/record "$new" "$tip"
"#;
    let mut sh = repo.command("sh", &two);
    sh.args(["-c", script]);
    assert!(sh.status().unwrap().success());
    let refused = repo
        .task(&two, &["merge", "t1", "--remote", "origin", "--json"])
        .code(1)
        .json();
    assert_eq!(refused["kind"], "record_tampered", "{refused}");
    assert!(landed_on_remote(&repo).is_empty());
}

/// An `adopt` killed while it made the worktree leaves a half-made checkout and its journal
/// entry; the next `adopt` removes it first (crash recovery) and makes the worktree again.
#[test]
fn an_adopt_killed_while_making_the_worktree_is_undone_and_done_again() {
    let repo = TestRepo::new();
    let bare = bare_remote(&repo);
    publish(&repo, bare.to_str().unwrap());
    let one = repo.root().to_path_buf();
    let two = machine(&repo, bare.to_str().unwrap(), "two");
    task_with_work(&repo, &one, "t1", &[]);
    repo.task(&one, &["push", "t1"]).ok();
    // What the killed adopt had done: the refs (the record's new tip noted as pending in the
    // ledger first, as every record write does), and part of a worktree on the task branch.
    let record = in_remote(&repo, &["rev-parse", "refs/tasks/t1/record"]);
    repo.write(
        &two,
        &format!(".git/git-task/ledger/records/t1.pending-{record}"),
        "",
    );
    repo.git(
        &two,
        &[
            "fetch",
            "-q",
            "origin",
            "refs/tasks/t1/record:refs/tasks/t1/record",
        ],
    );
    repo.git(&two, &["fetch", "-q", "origin", "task/t1:task/t1"]);
    let wt = repo.base().join("two.tasks").join("t1");
    repo.git(
        &two,
        &["worktree", "add", "-q", wt.to_str().unwrap(), "task/t1"],
    );
    std::fs::remove_file(wt.join("t1/work.txt")).unwrap();
    let dead = 4_000_000_001u32;
    let journal = serde_json::json!({
        "pid": dead, "created": 1, "step": "provision", "task": "t1", "worktree": wt,
    });
    repo.write(
        &two,
        &format!(".git/git-task/journal/{dead}.0.json"),
        &journal.to_string(),
    );

    let adopted = repo.task(&two, &["adopt", "t1", "--json"]).ok().json();
    assert_eq!(adopted["already"], false, "{adopted}");
    assert_eq!(repo.read(&wt, "t1/work.txt"), "work of t1\n");
    assert!(repo.porcelain(&wt).is_empty());
    assert_eq!(events_in(&repo, &two, "t1").last().unwrap(), "provisioned");
    assert!(!two
        .join(format!(".git/git-task/journal/{dead}.0.json"))
        .exists());
    fsck(&repo, &two);
}

#[test]
fn merge_remote_judges_the_remote_tip_not_the_local_one() {
    let repo = TestRepo::new();
    let bare = bare_remote(&repo);
    publish(&repo, bare.to_str().unwrap());
    let one = repo.root().to_path_buf();
    let two = machine(&repo, bare.to_str().unwrap(), "two");
    task_with_work(&repo, &one, "a", &[]);
    task_with_work(&repo, &two, "b", &[]);
    task_with_work(&repo, &two, "c", &[]);

    repo.task(&one, &["merge", "a", "--remote", "origin"]).ok();
    // Two's own main is stale: b lands on top of a, as fetched.
    repo.task(&two, &["merge", "b", "--remote", "origin"]).ok();
    assert_eq!(landed_on_remote(&repo), vec!["a", "b"]);
    assert_eq!(in_remote(&repo, &["show", "main:a/work.txt"]), "work of a");

    // A policy that only the remote's main holds forbids what c changes: refused, nothing moves.
    repo.write(
        &one,
        ".task-policy.toml",
        "version = 1\nforbidden = [\"c/**\"]\n",
    );
    repo.git(&one, &["pull", "-q", "--no-rebase", "origin", "main"]);
    repo.git(&one, &["add", ".task-policy.toml"]);
    repo.git(&one, &["commit", "-q", "-m", "policy"]);
    repo.git(&one, &["push", "-q", "origin", "main"]);
    let before = in_remote(&repo, &["rev-parse", "main"]);
    let refused = repo
        .task(&two, &["merge", "c", "--remote", "origin", "--json"])
        .code(1)
        .json();
    assert_eq!(refused["kind"], "contract_violation", "{refused}");
    assert_eq!(refused["violations"][0]["reason"], "forbidden");
    assert_eq!(in_remote(&repo, &["rev-parse", "main"]), before);
    assert!(remote_events(&repo, "c").is_empty());
    for dir in [&one, &two, &bare] {
        fsck(&repo, dir);
    }
}

#[test]
fn merge_remote_gives_up_with_remote_moved_when_the_target_never_holds_still() {
    let repo = TestRepo::new();
    let bare = bare_remote(&repo);
    publish(&repo, bare.to_str().unwrap());
    let one = repo.root().to_path_buf();
    let wt = task_with_work(&repo, &one, "t1", &[]);
    repo.task(&one, &["push", "t1"]).ok();
    // Every push finds main moved by someone else just before its own update.
    let hook = bare.join("hooks").join("update");
    std::fs::write(
        &hook,
        "#!/bin/sh\nif [ \"$1\" = refs/heads/main ]; then\n  git update-ref refs/heads/main \"$(git commit-tree -p refs/heads/main -m moved 'refs/heads/main^{tree}')\"\nfi\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    let record = in_remote(&repo, &["rev-parse", "refs/tasks/t1/record"]);
    let local_record = repo.git(&one, &["rev-parse", "refs/tasks/t1/record"]);

    let refused = repo
        .task(&one, &["merge", "t1", "--remote", "origin", "--json"])
        .code(1)
        .json();
    assert_eq!(refused["kind"], "remote_moved", "{refused}");
    assert_eq!(refused["into"], "refs/heads/main");
    // Nothing of the task landed: not its commit, not its record; here it stays as it was.
    assert!(landed_on_remote(&repo).is_empty());
    assert_eq!(
        in_remote(&repo, &["rev-parse", "refs/tasks/t1/record"]),
        record
    );
    assert_eq!(
        repo.git(&one, &["rev-parse", "refs/tasks/t1/record"]),
        local_record
    );
    assert!(wt.exists());
    let human = repo
        .task(&one, &["merge", "t1", "--remote", "origin"])
        .code(1);
    assert!(
        human.stderr.contains("error: 'main' on 'origin' moved"),
        "{human}"
    );
}

#[test]
fn push_merges_notes_and_replays_events_both_machines_appended() {
    let repo = TestRepo::new();
    let bare = bare_remote(&repo);
    publish(&repo, bare.to_str().unwrap());
    let one = repo.root().to_path_buf();
    let two = machine(&repo, bare.to_str().unwrap(), "two");
    let wt1 = task_with_work(&repo, &one, "t1", &["--check", "true"]);
    repo.task(&one, &["push", "t1"]).ok();
    repo.task(&two, &["adopt", "t1"]).ok();
    let wt2 = repo.base().join("two.tasks").join("t1");

    // Both machines append an event to t1 and write a note (a checkpoint on each side's own task).
    repo.task(&one, &["check", "t1", "--run"]).ok();
    repo.task(&two, &["check", "t1", "--run"]).ok();
    task_with_work(&repo, &one, "n1", &[]);
    task_with_work(&repo, &two, "n2", &[]);
    let cp1 = repo.task(&one, &["checkpoint", "n1", "--json"]).ok().json();
    let cp2 = repo.task(&two, &["checkpoint", "n2", "--json"]).ok().json();
    let one_events = crate::common::events(&repo, "t1");

    repo.task(&one, &["push"]).ok();
    let pushed = repo.task(&two, &["push", "--json"]).ok().json();
    let t1 = pushed["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["task"] == "t1")
        .unwrap();
    assert_eq!(t1["record"], "replayed", "{pushed}");
    // The remote's record holds machine one's events, then machine two's: nothing lost.
    let events = remote_events(&repo, "t1");
    assert_eq!(events[..one_events.len()], one_events[..]);
    assert_eq!(events[one_events.len()..], ["provisioned", "checks"]);
    // Both machines' notes are on the remote.
    for cp in [&cp1, &cp2] {
        let commit = cp["commit"].as_str().unwrap();
        assert!(
            !in_remote(&repo, &["notes", "--ref=tasks", "show", commit]).is_empty(),
            "note of {commit}"
        );
    }
    // Git's view stays whole, and the worktrees are untouched.
    assert!(repo.porcelain(&wt1).is_empty() && repo.porcelain(&wt2).is_empty());
    for dir in [&one, &two, &bare] {
        fsck(&repo, dir);
    }
}

#[test]
fn a_task_merged_by_one_machine_is_already_merged_for_the_other_and_both_histories_stay() {
    let repo = TestRepo::new();
    let bare = bare_remote(&repo);
    publish(&repo, bare.to_str().unwrap());
    let one = repo.root().to_path_buf();
    let two = machine(&repo, bare.to_str().unwrap(), "two");
    task_with_work(&repo, &one, "t1", &[]);
    repo.task(&one, &["push", "t1"]).ok();
    // Two adopts it (its own `provisioned` event), then one merges it first.
    repo.task(&two, &["adopt", "t1"]).ok();
    let two_events = events_in(&repo, &two, "t1");
    repo.task(&one, &["merge", "t1", "--remote", "origin"]).ok();
    let landed = landed_on_remote(&repo);

    let again = repo
        .task(&two, &["merge", "t1", "--remote", "origin", "--json"])
        .ok()
        .json();
    assert_eq!(again["tasks"][0]["already_merged"], true, "{again}");
    assert_eq!(landed_on_remote(&repo), landed);
    let remote = remote_events(&repo, "t1");
    assert_eq!(remote.iter().filter(|e| *e == "merged").count(), 1);
    // Two's record keeps the remote's history and then its own event, in the merged state.
    let here = events_in(&repo, &two, "t1");
    let (theirs, mine) = here.split_at(remote.len());
    assert_eq!(theirs, &remote[..]);
    assert_eq!(mine, &two_events[two_events.len() - 1..]);
    let status = repo.task(&two, &["status", "t1", "--json"]).ok().json();
    assert_eq!(status["status"], "merged", "{status}");
    // Pushing it again adds two's event to the remote's record: nothing is lost anywhere.
    repo.task(&two, &["push", "t1"]).ok();
    assert_eq!(remote_events(&repo, "t1"), here);
    for dir in [&one, &two, &bare] {
        fsck(&repo, dir);
    }
}

/// A task branch both machines committed to is never forced over: the second push leaves it
/// out, names it, exits 1, and what the first pushed stays on the remote.
#[test]
fn a_branch_both_machines_changed_is_not_pushed_over() {
    let repo = TestRepo::new();
    let bare = bare_remote(&repo);
    publish(&repo, bare.to_str().unwrap());
    let one = repo.root().to_path_buf();
    let two = machine(&repo, bare.to_str().unwrap(), "two");
    let wt1 = task_with_work(&repo, &one, "t1", &[]);
    repo.task(&one, &["push", "t1"]).ok();
    repo.task(&two, &["adopt", "t1"]).ok();
    let wt2 = repo.base().join("two.tasks").join("t1");
    repo.write(&wt1, "t1/one.txt", "one\n");
    commit_all(&repo, &wt1, "one's work");
    repo.write(&wt2, "t1/two.txt", "two\n");
    commit_all(&repo, &wt2, "two's work");
    repo.task(&two, &["push", "t1"]).ok();
    let pushed_by_two = in_remote(&repo, &["rev-parse", "task/t1"]);

    let refused = repo.task(&one, &["push", "t1", "--json"]).code(1).json();
    let t1 = &refused["tasks"][0];
    assert_eq!(t1["refused"][0][0], "refs/heads/task/t1", "{refused}");
    assert_eq!(in_remote(&repo, &["rev-parse", "task/t1"]), pushed_by_two);
    // The record was still reconciled: two's `provisioned` event came here.
    assert_eq!(t1["record"], "fast_forwarded", "{refused}");
    assert_eq!(
        events_in(&repo, &one, "t1"),
        remote_events(&repo, "t1"),
        "the records agree"
    );
    let human = repo.task(&one, &["push", "t1"]).code(1);
    assert!(
        human.stderr.contains("not pushed: refs/heads/task/t1"),
        "{human}"
    );
    assert!(human.stderr.contains("hint: fetch first"), "{human}");
}

/// `git daemon` serving `<base>` on a free loopback port, with pushes enabled; stopped on drop.
struct Daemon {
    child: Child,
    port: u16,
}

impl Daemon {
    fn start(repo: &TestRepo) -> Daemon {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let base = repo.base();
        let mut cmd = repo.command("git", &base);
        cmd.args([
            "daemon",
            "--reuseaddr",
            "--export-all",
            "--enable=receive-pack",
            "--listen=127.0.0.1",
            &format!("--port={port}"),
            &format!("--base-path={}", base.display()),
        ])
        .arg(&base)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
        let child = cmd.spawn().expect("git daemon starts");
        let daemon = Daemon { child, port };
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "git daemon did not listen");
            std::thread::sleep(Duration::from_millis(20));
        }
        daemon
    }

    fn url(&self) -> String {
        format!("git://127.0.0.1:{}/remote.git", self.port)
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn three_machines_merge_into_the_remote_main_at_once_over_git_daemon() {
    let started = Instant::now();
    let repo = TestRepo::new();
    let bare = bare_remote(&repo);
    let daemon = Daemon::start(&repo);
    publish(&repo, &daemon.url());
    let machines = [
        repo.root().to_path_buf(),
        machine(&repo, &daemon.url(), "two"),
        machine(&repo, &daemon.url(), "three"),
    ];
    let mut jobs = Vec::new();
    for (m, dir) in machines.iter().enumerate() {
        for t in 0..2 {
            let id = format!("m{m}-t{t}");
            task_with_work(&repo, dir, &id, &[]);
            jobs.push((dir.clone(), id));
        }
    }
    // Machine three pushes its tasks first, so the remote already holds records to lease on;
    // machine one's first task is adopted by machine two, and both merge it at once.
    repo.task(&machines[2], &["push"]).ok();
    repo.task(&machines[0], &["push", "m0-t0"]).ok();
    repo.task(&machines[1], &["adopt", "m0-t0"]).ok();
    jobs.push((machines[1].clone(), "m0-t0".to_owned()));

    // All seven merges at the same time, each into the remote's main.
    let runs: Vec<(String, Run)> = std::thread::scope(|s| {
        let handles: Vec<_> = jobs
            .iter()
            .map(|(dir, id)| {
                let repo = &repo;
                s.spawn(move || {
                    let run = repo.task(dir, &["merge", id, "--remote", "origin", "--json"]);
                    (id.clone(), run)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut landed = Vec::new();
    let mut commits = std::collections::HashMap::new();
    for (id, run) in &runs {
        let json = run.json();
        let task = &json["tasks"][0];
        match (run.code, json["kind"].as_str()) {
            (0, Some("merge")) if task["already_merged"] == false => {
                landed.push(id.clone());
                commits.insert(id.clone(), task["commit"].as_str().unwrap().to_owned());
            }
            // The other machine landed this very task first.
            (0, Some("merge")) => assert_eq!(id, "m0-t0", "{run}"),
            (1, Some("remote_moved")) => {}
            _ => panic!("merge of {id} neither landed nor was told remote_moved:\n{run}"),
        }
    }
    assert!(!landed.is_empty(), "nothing landed");

    // The remote's main holds exactly the landed tasks, each once, with its record and note.
    let mut on_main = landed_on_remote(&repo);
    on_main.sort();
    landed.sort();
    assert_eq!(on_main, landed);
    let mut once = landed.clone();
    once.dedup();
    assert_eq!(once, landed, "a task landed twice");
    for (id, _) in &runs {
        let events = remote_events(&repo, id);
        let merged = events.iter().filter(|e| *e == "merged").count();
        assert_eq!(merged, usize::from(landed.contains(id)), "{id}: {events:?}");
        if let Some(commit) = commits.get(id) {
            let note = in_remote(&repo, &["notes", "--ref=tasks", "show", commit]);
            assert!(note.contains(id.as_str()), "note of {id}: {note}");
        }
    }
    // Each landed task's work is in the remote's tree.
    for id in &landed {
        assert_eq!(
            in_remote(&repo, &["show", &format!("main:{id}/work.txt")]),
            format!("work of {id}")
        );
    }
    drop(daemon);
    for dir in machines.iter().chain([&bare]) {
        fsck(&repo, dir);
    }
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "took {:?}",
        started.elapsed()
    );
}

/// Pushes to the remote a record of `id` with one more event whose `task.toml` has `key`
/// set to `value` (TOML), made with plumbing from `dir`, as anyone who can push there can.
fn forge_remote_record(repo: &TestRepo, dir: &Path, id: &str, key: &str, value: &str) {
    let record = format!("refs/tasks/{id}/record");
    let tip = repo.git(dir, &["rev-parse", &record]);
    let state = repo.git(dir, &["show", &format!("{tip}:task.toml")]);
    let line = format!("{key} = {value}\n");
    let mut state: String = state
        .lines()
        .map(|l| match l.starts_with(&format!("{key} = ")) {
            true => line.clone(),
            false => format!("{l}\n"),
        })
        .collect();
    if !state.contains(&line) {
        state.push_str(&line);
    }
    let hash = |args: &[&str], input: &str| {
        let mut child = repo
            .command("git", dir)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    };
    let blob = hash(&["hash-object", "-w", "--stdin"], &state);
    let entries: String = repo
        .git(dir, &["ls-tree", &tip])
        .lines()
        .map(|l| match l.ends_with("\ttask.toml") {
            true => format!("100644 blob {blob}\ttask.toml\n"),
            false => format!("{l}\n"),
        })
        .collect();
    let tree = hash(&["mktree"], &entries);
    let forged = repo.git(
        dir,
        &[
            "commit-tree",
            &tree,
            "-p",
            &tip,
            "-m",
            "checkpoint",
            "-m",
            "{}",
        ],
    );
    repo.git(
        dir,
        &["push", "-q", "origin", &format!("{forged}:{record}")],
    );
}

/// A remote record is untrusted input: a worktree path in it never becomes this machine's
/// (this machine's is kept beside the refs), and a `merged` it cannot prove (no landing on the
/// remote's target) never ends the live task here: `push` reports it (`record: refused`) and
/// the record here stays as it was.
#[test]
fn a_remote_record_never_moves_this_machines_worktree_nor_ends_its_task() {
    let repo = TestRepo::new();
    let bare = bare_remote(&repo);
    publish(&repo, bare.to_str().unwrap());
    let one = repo.root().to_path_buf();
    let wt = task_with_work(&repo, &one, "t1", &[]);
    repo.task(&one, &["push", "t1"]).ok();
    let main_worktree = format!("\"{}\"", one.display());
    forge_remote_record(&repo, &one, "t1", "worktree", &main_worktree);
    let pushed = repo.task(&one, &["push", "t1", "--json"]).ok().json();
    assert_eq!(pushed["tasks"][0]["record"], "fast_forwarded", "{pushed}");
    assert_eq!(
        repo.task(&one, &["path", "t1"]).ok().out(),
        wt.display().to_string()
    );
    // The path is this machine's, kept beside the refs: no event moves it back.
    assert!(!events_in(&repo, &one, "t1").contains(&"moved".to_owned()));

    let before = repo.git(&one, &["rev-parse", "refs/tasks/t1/record"]);
    forge_remote_record(&repo, &one, "t1", "status", "\"merged\"");
    let run = repo.task(&one, &["push", "t1", "--json"]);
    let pushed = run.json();
    assert_eq!(pushed["tasks"][0]["record"], "refused", "{pushed}");
    let warning = pushed["tasks"][0]["warning"].as_str().unwrap();
    assert!(warning.contains("live here"), "{warning}");
    assert_eq!(
        repo.git(&one, &["rev-parse", "refs/tasks/t1/record"]),
        before
    );
    let status = repo.task(&one, &["status", "t1", "--json"]).ok().json();
    assert_eq!(status["status"], "active", "{status}");
    assert!(wt.join("t1/work.txt").exists());
    fsck(&repo, &one);
}

/// A remote record that is no commit (a blob pushed there) for a task this machine has fails
/// neither `fetch` nor `push`: `fetch` skips it with why, `push` takes nothing from it and
/// sends none of the refs it cannot compare (exit 1, named), and the record here is unchanged.
#[test]
fn a_junk_remote_record_of_a_task_here_fails_neither_fetch_nor_push() {
    let repo = TestRepo::new();
    let bare = bare_remote(&repo);
    publish(&repo, bare.to_str().unwrap());
    let one = repo.root().to_path_buf();
    task_with_work(&repo, &one, "t1", &[]);
    repo.task(&one, &["push", "t1"]).ok();
    let before = repo.git(&one, &["rev-parse", "refs/tasks/t1/record"]);
    let blob = in_remote(&repo, &["hash-object", "-w", "/dev/null"]);
    in_remote(&repo, &["update-ref", "refs/tasks/t1/record", &blob]);

    let fetched = repo.task(&one, &["fetch", "--json"]).ok().json();
    assert_eq!(fetched["skipped"][0]["task"], "t1", "{fetched}");
    let run = repo.task(&one, &["push", "t1", "--json"]);
    assert_eq!(run.code, 1, "{run}");
    let pushed = run.json();
    assert_eq!(pushed["tasks"][0]["record"], "refused", "{pushed}");
    assert_eq!(
        repo.git(&one, &["rev-parse", "refs/tasks/t1/record"]),
        before
    );
    assert_eq!(
        in_remote(&repo, &["rev-parse", "refs/tasks/t1/record"]),
        blob
    );
    fsck(&repo, &one);
}

/// A setup command is never taken from a remote record: `adopt` runs this machine's
/// (`task.setup`), never the one a forged record names, and `push` refuses to take a record
/// that changes it (the record here unchanged).
#[test]
fn a_setup_command_in_a_remote_record_never_runs() {
    let repo = TestRepo::new();
    let bare = bare_remote(&repo);
    publish(&repo, bare.to_str().unwrap());
    let one = repo.root().to_path_buf();
    let two = machine(&repo, bare.to_str().unwrap(), "two");
    task_with_work(&repo, &one, "t1", &[]);
    repo.task(&one, &["push", "t1"]).ok();
    let marker = repo.base().join("ran");
    let evil = format!("\"touch '{}'\"", marker.display());
    forge_remote_record(&repo, &one, "t1", "setup", &evil);

    let before = repo.git(&one, &["rev-parse", "refs/tasks/t1/record"]);
    let pushed = repo.task(&one, &["push", "t1", "--json"]).ok().json();
    assert_eq!(pushed["tasks"][0]["record"], "refused", "{pushed}");
    assert_eq!(
        repo.git(&one, &["rev-parse", "refs/tasks/t1/record"]),
        before
    );

    repo.task(&two, &["adopt", "t1"]).ok();
    assert!(
        !marker.exists(),
        "adopt ran the remote record's setup command"
    );
}

/// A task's worktree path is per machine: after the other machine adopted it and pushed, this
/// machine's `path`, `list`, `status` and `exec` still name its own worktree (never the other
/// one, which on this shared disk exists too), no `moved` event goes back and forth between
/// them, pushes settle (a second round sends nothing), and `sweep` proposes no event.
#[test]
fn a_worktree_path_never_travels_between_machines() {
    let repo = TestRepo::new();
    let bare = bare_remote(&repo);
    publish(&repo, bare.to_str().unwrap());
    let one = repo.root().to_path_buf();
    let two = machine(&repo, bare.to_str().unwrap(), "two");
    let wt1 = task_with_work(&repo, &one, "t1", &[]);
    repo.task(&one, &["push", "t1"]).ok();
    repo.task(&two, &["adopt", "t1"]).ok();
    let wt2 = repo.base().join("two.tasks").join("t1");
    repo.write(&wt2, "t1/more.txt", "more\n");
    commit_all(&repo, &wt2, "more on t1");
    repo.task(&two, &["push", "t1"]).ok();
    repo.task(&one, &["fetch"]).ok();
    repo.task(&one, &["push", "t1"]).ok();

    for (dir, wt) in [(&one, &wt1), (&two, &wt2)] {
        let want = wt.display().to_string();
        assert_eq!(repo.task(dir, &["path", "t1"]).ok().out(), want);
        let list = repo.task(dir, &["list", "--json"]).ok().json();
        assert_eq!(list["tasks"][0]["path"], want.as_str(), "{list}");
        let status = repo.task(dir, &["status", "t1", "--json"]).ok().json();
        assert_eq!(status["worktree"], want.as_str(), "{status}");
        let exec = repo.task(dir, &["exec", "t1", "--", "pwd"]).ok();
        assert_eq!(exec.out(), want);
        let swept = repo
            .task(dir, &["sweep", "--dry-run", "--json"])
            .ok()
            .json();
        assert_eq!(swept["repairs"], serde_json::json!([]), "{swept}");
    }
    // Both machines push again, twice: the records settle, nothing is moved.
    for _ in 0..2 {
        repo.task(&two, &["push", "t1"]).ok();
        repo.task(&one, &["push", "t1"]).ok();
    }
    let settled = remote_events(&repo, "t1");
    let again = repo.task(&two, &["push", "t1", "--json"]).ok().json();
    assert_eq!(
        again["tasks"][0]["pushed"],
        serde_json::json!([]),
        "{again}"
    );
    assert_eq!(remote_events(&repo, "t1"), settled);
    for dir in [&one, &two] {
        assert!(
            !events_in(&repo, dir, "t1").contains(&"moved".to_owned()),
            "{:?}",
            events_in(&repo, dir, "t1")
        );
    }
    assert_eq!(
        repo.task(&one, &["path", "t1"]).ok().out(),
        wt1.display().to_string()
    );
    for dir in [&one, &two, &bare] {
        fsck(&repo, dir);
    }
}

/// A task merged on another machine leaves no invisible work here: this machine's commits that
/// did not land and its uncommitted work are saved as attempts, then its worktree and branch
/// go; `fetch` says so, and the record here says merged. `merge --remote` of a task the other
/// machine merged does the same.
#[test]
fn a_task_merged_elsewhere_saves_the_work_here_and_removes_the_worktree() {
    let repo = TestRepo::new();
    let bare = bare_remote(&repo);
    publish(&repo, bare.to_str().unwrap());
    let one = repo.root().to_path_buf();
    let two = machine(&repo, bare.to_str().unwrap(), "two");
    for id in ["t1", "t2"] {
        task_with_work(&repo, &one, id, &[]);
        repo.task(&one, &["push", id]).ok();
        repo.task(&two, &["adopt", id]).ok();
    }
    let wt2 = |id: &str| repo.base().join("two.tasks").join(id);
    // Machine two goes on: a commit it never pushed, and uncommitted work.
    for id in ["t1", "t2"] {
        repo.write(&wt2(id), &format!("{id}/local.txt"), "not pushed\n");
        commit_all(&repo, &wt2(id), "local only");
        repo.write(&wt2(id), &format!("{id}/wip.txt"), "uncommitted\n");
    }
    let local_tip = repo.git(&two, &["rev-parse", "task/t1"]);
    repo.task(&one, &["merge", "t1", "t2", "--remote", "origin"])
        .ok();

    let fetched = repo.task(&two, &["fetch", "--json"]).ok().json();
    let merged: Vec<&str> = fetched["merged_elsewhere"]
        .as_array()
        .unwrap_or_else(|| panic!("no merged_elsewhere: {fetched}"))
        .iter()
        .map(|m| m["task"].as_str().unwrap())
        .collect();
    assert!(
        merged.contains(&"t1") && merged.contains(&"t2"),
        "{fetched}"
    );
    for (id, attempts) in [("t1", 2), ("t2", 2)] {
        assert!(!wt2(id).exists(), "{id}'s worktree is still there");
        assert!(repo
            .git(&two, &["for-each-ref", &format!("refs/heads/task/{id}")])
            .is_empty());
        let saved = repo.git(
            &two,
            &[
                "for-each-ref",
                "--format=%(refname)",
                &format!("refs/tasks/{id}/attempts/"),
            ],
        );
        assert_eq!(saved.lines().count(), attempts, "{id}: {saved}");
        let status = repo.task(&two, &["status", id, "--json"]).ok().json();
        assert_eq!(status["status"], "merged", "{status}");
    }
    // The work is in the attempts: the commit that never landed and the uncommitted file.
    let saved: Vec<String> = repo
        .git(
            &two,
            &[
                "for-each-ref",
                "--format=%(objectname)",
                "refs/tasks/t1/attempts/",
            ],
        )
        .lines()
        .map(str::to_owned)
        .collect();
    assert!(
        saved.iter().any(|a| repo
            .git_run(&two, &["merge-base", "--is-ancestor", &local_tip, a])
            .code
            == 0),
        "{saved:?}"
    );
    assert!(
        saved.iter().any(|a| repo
            .git_run(&two, &["cat-file", "-e", &format!("{a}:t1/wip.txt")])
            .code
            == 0),
        "{saved:?}"
    );
    for dir in [&one, &two, &bare] {
        fsck(&repo, dir);
    }
    assert!(repo.git(&two, &["worktree", "list"]).lines().count() == 1);
}

/// `merge --remote` of a task another machine already merged saves this machine's work first
/// and removes its worktree and branch, rather than leaving them behind a merged record.
#[test]
fn merge_remote_of_a_task_merged_elsewhere_cleans_up_here() {
    let repo = TestRepo::new();
    let bare = bare_remote(&repo);
    publish(&repo, bare.to_str().unwrap());
    let one = repo.root().to_path_buf();
    let two = machine(&repo, bare.to_str().unwrap(), "two");
    task_with_work(&repo, &one, "t1", &[]);
    repo.task(&one, &["push", "t1"]).ok();
    repo.task(&two, &["adopt", "t1"]).ok();
    let wt2 = repo.base().join("two.tasks").join("t1");
    repo.write(&wt2, "t1/wip.txt", "uncommitted\n");
    repo.task(&one, &["merge", "t1", "--remote", "origin"]).ok();

    let again = repo
        .task(&two, &["merge", "t1", "--remote", "origin", "--json"])
        .ok()
        .json();
    assert_eq!(again["tasks"][0]["already_merged"], true, "{again}");
    assert!(
        again["warnings"][0]
            .as_str()
            .is_some_and(|w| w.contains("merged on another machine") && w.contains("attempts/")),
        "{again}"
    );
    assert!(!wt2.exists());
    assert!(repo
        .git(&two, &["for-each-ref", "refs/heads/task"])
        .is_empty());
    let saved = repo.git(
        &two,
        &[
            "for-each-ref",
            "--format=%(objectname)",
            "refs/tasks/t1/attempts/",
        ],
    );
    let attempt = saved
        .lines()
        .next()
        .unwrap_or_else(|| panic!("no attempt saved"));
    assert_eq!(
        repo.git(&two, &["show", &format!("{attempt}:t1/wip.txt")]),
        "uncommitted"
    );
    fsck(&repo, &two);
}

/// `sweep` does the same from the records fetched last (no network): a task another machine
/// merged has this machine's work saved and its worktree and branch removed (`--dry-run` only
/// plans it), and `list` then shows it merged instead of a live task whose worktree is stale.
#[test]
fn sweep_settles_a_task_merged_elsewhere_and_list_shows_it() {
    let repo = TestRepo::new();
    let bare = bare_remote(&repo);
    publish(&repo, bare.to_str().unwrap());
    let one = repo.root().to_path_buf();
    let two = machine(&repo, bare.to_str().unwrap(), "two");
    task_with_work(&repo, &one, "t1", &[]);
    repo.task(&one, &["push", "t1"]).ok();
    repo.task(&two, &["adopt", "t1"]).ok();
    let wt2 = repo.base().join("two.tasks").join("t1");
    repo.write(&wt2, "t1/wip.txt", "uncommitted\n");
    repo.task(&one, &["merge", "t1", "--remote", "origin"]).ok();
    // The records come in with git itself, as `git task fetch` brings them.
    repo.git(
        &two,
        &[
            "fetch",
            "-q",
            "origin",
            "+refs/heads/*:refs/remotes/origin/*",
            "+refs/tasks/*:refs/remotes/origin/tasks/*",
        ],
    );
    let planned = repo
        .task(&two, &["sweep", "--dry-run", "--json"])
        .ok()
        .json();
    let problems: Vec<&str> = planned["repairs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["problem"].as_str().unwrap())
        .collect();
    assert_eq!(problems, ["merged_elsewhere"], "{planned}");
    assert!(wt2.exists());

    let swept = repo.task(&two, &["sweep", "--json"]).ok().json();
    assert_eq!(
        swept["repairs"][0]["problem"], "merged_elsewhere",
        "{swept}"
    );
    let attempt = swept["repairs"][0]["attempts"][0]["commit"]
        .as_str()
        .unwrap_or_else(|| panic!("nothing saved: {swept}"))
        .to_owned();
    assert_eq!(
        repo.git(&two, &["show", &format!("{attempt}:t1/wip.txt")]),
        "uncommitted"
    );
    assert!(!wt2.exists());
    assert!(repo
        .git(&two, &["for-each-ref", "refs/heads/task"])
        .is_empty());
    let list = repo.task(&two, &["list", "--json"]).ok().json();
    assert_eq!(list["tasks"], serde_json::json!([]), "{list}");
    let all = repo.task(&two, &["list", "--all", "--json"]).ok().json();
    assert_eq!(all["tasks"][0]["status"], "merged", "{all}");
    // Nothing more to do.
    let again = repo.task(&two, &["sweep", "--json"]).ok().json();
    assert_eq!(again["repairs"], serde_json::json!([]), "{again}");
    fsck(&repo, &two);
}

/// `list --remote R` shows what `fetch R` fetched (issue 34, item 9): the tasks it hides
/// (merged, removed) are counted with the option that shows them, and a remote
/// record `fetch` skipped is named with the same words; `--all` lists every task `fetch` did.
#[test]
fn list_remote_agrees_with_fetch() {
    let repo = TestRepo::new();
    let bare = bare_remote(&repo);
    publish(&repo, bare.to_str().unwrap());
    let one = repo.root().to_path_buf();
    let two = machine(&repo, bare.to_str().unwrap(), "two");
    task_with_work(&repo, &one, "live", &[]);
    task_with_work(&repo, &one, "gone", &[]);
    repo.task(&one, &["drop", "gone"]).ok();
    repo.task(&one, &["remove", "gone"]).ok();
    repo.task(&one, &["push"]).ok();
    // A junk record on the remote: fetch skips it.
    let blob = in_remote(&repo, &["hash-object", "-w", "/dev/null"]);
    in_remote(&repo, &["update-ref", "refs/tasks/junk/record", &blob]);

    let fetched = repo.task(&two, &["fetch", "--json"]).ok().json();
    let fetched_ids: Vec<&str> = fetched["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert_eq!(fetched_ids, ["gone", "live"], "{fetched}");
    assert_eq!(fetched["skipped"][0]["task"], "junk", "{fetched}");
    let skipped = fetched["skipped"][0]["why"].as_str().unwrap().to_owned();

    let all = repo
        .task(&two, &["list", "--remote", "origin", "--all", "--json"])
        .ok()
        .json();
    let all_ids: Vec<&str> = all["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert_eq!(all_ids, fetched_ids, "{all}");
    assert_eq!(all["skipped"], fetched["skipped"], "{all}");

    let human = repo.task(&two, &["list", "--remote", "origin"]).ok();
    assert!(human.stdout.contains("live"), "{human}");
    assert!(!human.stdout.contains("gone"), "{human}");
    assert!(
        human.stderr.contains("1 more task on origin is not live")
            && human.stderr.contains("git task list --remote origin --all"),
        "{human}"
    );
    assert!(
        human.stderr.contains("skipped the remote's task 'junk'")
            && human.stderr.contains(&skipped),
        "{human}"
    );
}

/// A push that sends nothing says so, without a count of refs (issue 34, item 9).
#[test]
fn a_push_that_sends_nothing_says_so() {
    let repo = TestRepo::new();
    let bare = bare_remote(&repo);
    publish(&repo, bare.to_str().unwrap());
    let one = repo.root().to_path_buf();
    let two = machine(&repo, bare.to_str().unwrap(), "two");
    let wt1 = task_with_work(&repo, &one, "t1", &[]);
    repo.task(&one, &["push", "t1"]).ok();
    // Everything is there already.
    let again = repo.task(&one, &["push", "t1"]).ok();
    assert!(
        again.stdout.contains("Task 't1' is up to date on origin"),
        "{again}"
    );
    assert!(!again.stdout.contains("0 refs"), "{again}");
    // Only a ref the remote holds differently: nothing is sent, and it says so.
    repo.task(&two, &["adopt", "t1"]).ok();
    let wt2 = repo.base().join("two.tasks").join("t1");
    repo.write(&wt2, "t1/two.txt", "two\n");
    commit_all(&repo, &wt2, "two's work");
    repo.task(&two, &["push", "t1"]).ok();
    repo.write(&wt1, "t1/one.txt", "one\n");
    commit_all(&repo, &wt1, "one's work");
    let refused = repo.task(&one, &["push", "t1", "--json"]).code(1).json();
    let sent: Vec<&str> = refused["tasks"][0]["pushed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    let human = repo.task(&one, &["push", "t1"]).code(1);
    assert!(!human.stdout.contains(" 0 refs"), "{human}");
    if sent.is_empty() {
        assert!(
            human.stdout.contains("Sent nothing of task 't1' to origin"),
            "{human}"
        );
    }
}
