//! `git task queue`: the local landing queue (issue 33). Every landing goes through the merge
//! gate; git is the oracle (the branch's log, `git fsck`, `git for-each-ref refs/tasks`). Check
//! runs are counted by a check that appends a line to a file outside the repository.

use crate::common::TestRepo;
use crate::common::{all_refs, commit_all, events, rev, task_command};
use std::path::{Path, PathBuf};

/// A repository with `n` ready tasks `t01`..: each adds `src/tNN.txt`, and every task's check
/// appends a line to `runs` (outside the repository) and fails when the file of task `bad` is
/// in the tree it runs on.
fn queue_repo(n: usize, bad: Option<usize>, sleep: &str) -> (TestRepo, PathBuf, Vec<String>) {
    let repo = TestRepo::new();
    let runs = repo.base().join("runs");
    let bad_file = match bad {
        Some(b) => format!("src/t{b:02}.txt"),
        None => "src/none.txt".to_owned(),
    };
    let check = format!(
        "echo run >> '{}'; {sleep} test ! -e {bad_file}",
        runs.display()
    );
    let mut ids = Vec::new();
    for i in 1..=n {
        let id = format!("t{i:02}");
        let wt = repo.start(&id, &["--allow", "src/**", "--check", &check]);
        repo.write(&wt, &format!("src/{id}.txt"), &format!("{id}\n"));
        commit_all(&repo, &wt, &format!("add {id}"));
        ids.push(id);
    }
    (repo, runs, ids)
}

fn check_runs(runs: &Path) -> usize {
    std::fs::read_to_string(runs)
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

/// The `Task-Id` trailers of the commits on `main` since the first, oldest first.
fn landed_order(repo: &TestRepo) -> Vec<String> {
    repo.git(
        repo.root(),
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

/// Asserts `doc`, printed by `git task queue ... --json`, matches `schema/queue.json`.
#[track_caller]
fn valid(doc: serde_json::Value) -> serde_json::Value {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("schema/queue.json");
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&doc)
        .map(|e| format!("{e} (at '{}')", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{}\n{doc:#}", errors.join("\n"));
    doc
}

fn add(repo: &TestRepo, ids: &[String]) {
    let mut args = vec!["queue", "add"];
    args.extend(ids.iter().map(String::as_str));
    repo.task_root(&args).ok();
}

fn count(events: &[String], name: &str) -> usize {
    events.iter().filter(|e| *e == name).count()
}

/// Sixteen ready tasks with a check land in order with one check run; each record says
/// `queued` then `landed`; the queue is empty and the repository is sound.
#[test]
fn sixteen_good_tasks_land_in_order_with_one_check_run() {
    let (repo, runs, ids) = queue_repo(16, None, "");
    add(&repo, &ids);
    let status = valid(repo.task_root(&["queue", "status", "--json"]).ok().json());
    assert_eq!(status["queues"][0]["into"], "refs/heads/main");
    assert_eq!(status["queues"][0]["queued"].as_array().unwrap().len(), 16);

    let json = valid(repo.task_root(&["queue", "run", "--json"]).ok().json());
    let q = &json["queues"][0];
    assert_eq!(q["landed"].as_array().unwrap().len(), 16, "{json}");
    assert_eq!(q["ejected"], serde_json::json!([]));
    assert!(q["check_runs"].as_u64().unwrap() <= 2, "{json}");
    assert!(check_runs(&runs) <= 2, "{} check runs", check_runs(&runs));
    assert_eq!(landed_order(&repo), ids);
    for id in &ids {
        let e = events(&repo, id);
        assert_eq!(count(&e, "queued"), 1, "{id}: {e:?}");
        assert_eq!(count(&e, "landed"), 1, "{id}: {e:?}");
        assert_eq!(count(&e, "merged"), 1, "{id}: {e:?}");
    }
    assert_eq!(repo.refs("refs/heads"), vec!["refs/heads/main"]);
    let status = repo.task_root(&["queue", "status", "--json"]).ok().json();
    assert_eq!(status["queues"][0]["queued"], serde_json::json!([]));
    assert_eq!(status["queues"][0]["landed"].as_array().unwrap().len(), 16);
    repo.fsck();
    assert_eq!(repo.porcelain(repo.root()), "");
}

/// One bad task among sixteen: the fifteen others land in order, the bad one is ejected with
/// its check output and a `queue_ejected` event, in at most ten check runs; no batch whose
/// checks failed landed (the bad file never reaches `main`).
#[test]
fn one_bad_task_is_ejected_and_the_others_land() {
    let (repo, runs, ids) = queue_repo(16, Some(7), "");
    add(&repo, &ids);
    let run = repo.task_root(&["queue", "run", "--json"]).code(1);
    let json = valid(run.json());
    let q = &json["queues"][0];
    assert_eq!(q["landed"].as_array().unwrap().len(), 15, "{json}");
    assert_eq!(q["ejected"][0]["task"], "t07");
    assert_eq!(q["ejected"][0]["kind"], "checks_failed");
    assert_eq!(q["ejected"][0]["checks"]["passed"], false);
    assert!(check_runs(&runs) <= 10, "{} check runs", check_runs(&runs));
    assert_eq!(
        q["check_runs"].as_u64().unwrap() as usize,
        check_runs(&runs)
    );
    let good: Vec<String> = ids.iter().filter(|i| *i != "t07").cloned().collect();
    assert_eq!(landed_order(&repo), good);
    let files = repo.git(repo.root(), &["ls-tree", "-r", "--name-only", "main"]);
    assert!(!files.contains("t07"), "{files}");
    // The culprit is still a live task, with its branch, and says why it left the queue.
    assert_eq!(
        repo.refs("refs/heads"),
        vec!["refs/heads/main", "refs/heads/task/t07"]
    );
    let e = events(&repo, "t07");
    assert_eq!(e.last().map(String::as_str), Some("queue_ejected"), "{e:?}");
    let log = repo.task_root(&["log", "t07", "--json"]).ok().json();
    let last = log["events"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["event"], "queue_ejected", "{log}");
    assert_eq!(last["details"]["kind"], "checks_failed", "{log}");
    assert_eq!(last["details"]["checks"]["passed"], false, "{log}");
    let status = valid(repo.task_root(&["queue", "status", "--json"]).ok().json());
    assert_eq!(status["queues"][0]["queued"], serde_json::json!([]));
    assert_eq!(status["queues"][0]["ejected"][0]["task"], "t07");
    // Human form: the check's failure and how to queue it again.
    let (repo2, _, ids2) = queue_repo(2, Some(2), "");
    add(&repo2, &ids2);
    let run = repo2.task_root(&["queue", "run"]).code(1);
    assert!(run.stderr.contains("ejected 't02'"), "{run}");
    assert!(run.stderr.contains("git task queue add t02"), "{run}");
    repo.fsck();
}

/// After a runner was killed, `sweep` then `queue run` finish the queue of `queue_repo(8,
/// Some(3), ..)`: every good task lands once, in order, the bad one is ejected once, nothing
/// is left half made (git is the oracle).
#[track_caller]
fn assert_resumed(repo: &TestRepo, ids: &[String], what: &str) {
    repo.task_root(&["sweep"]).ok();
    let run = repo.task_root(&["queue", "run", "--json"]);
    assert!(run.code == 0 || run.code == 1, "{what}: {run}");
    let json = run.json();
    assert_eq!(
        json["queues"][0]["remaining"],
        serde_json::json!([]),
        "{what}: {json}"
    );
    let good: Vec<String> = ids.iter().filter(|i| *i != "t03").cloned().collect();
    assert_eq!(landed_order(repo), good, "{what}");
    for id in &good {
        let e = events(repo, id);
        assert_eq!(count(&e, "landed"), 1, "{what}: {id}: {e:?}");
        assert_eq!(count(&e, "merged"), 1, "{what}: {id}: {e:?}");
    }
    let e = events(repo, "t03");
    assert_eq!(count(&e, "queue_ejected"), 1, "{what}: {e:?}");
    assert_eq!(count(&e, "merged"), 0, "{what}: {e:?}");
    let refs = repo.refs("refs/tasks");
    assert!(
        refs.contains(&"refs/tasks/_queue/main".to_owned()),
        "{what}: {refs:?}"
    );
    assert_eq!(
        repo.refs("refs/heads"),
        vec!["refs/heads/main", "refs/heads/task/t03"],
        "{what}"
    );
    assert_eq!(repo.worktrees().len(), 2, "{what}");
    repo.fsck();
    assert_eq!(repo.porcelain(repo.root()), "", "{what}");
    let status = repo.task_root(&["queue", "status", "--json"]).ok().json();
    assert_eq!(
        status["queues"][0]["queued"],
        serde_json::json!([]),
        "{what}"
    );
}

/// Starts `queue run` in the background and kills it (SIGKILL) when `when` says so.
fn run_and_kill(repo: &TestRepo, when: &mut dyn FnMut() -> bool) {
    let mut child = task_command(repo, repo.root(), &["queue", "run"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while !when() {
        assert!(start.elapsed().as_secs() < 120, "the kill never came");
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// The runner killed (SIGKILL) during its first, second or third check run (what it knows of
/// the failing batch is in its journal then): `sweep` and the next `queue run` finish.
#[test]
fn runner_killed_during_a_check_run_is_resumed_by_the_next_run() {
    for kill_at in 1..=3 {
        let (repo, runs, ids) = queue_repo(8, Some(3), "sleep 0.3;");
        add(&repo, &ids);
        run_and_kill(&repo, &mut || check_runs(&runs) >= kill_at);
        // The check the runner started may still be running: let it end.
        std::thread::sleep(std::time::Duration::from_millis(400));
        assert_resumed(&repo, &ids, &format!("killed in check run {kill_at}"));
        // Unkilled it takes 5 runs (8 fail, 4 fail, 2 land, t03 fails, 5 land): only the
        // run killed is made again; what was known of the failing batch came from the journal.
        assert!(check_runs(&runs) <= 6, "{} check runs", check_runs(&runs));
    }
}

/// The runner killed at instants spread over its whole run (between a landing and its
/// `landed` event, in an ejection, ...): `sweep` and the next `queue run` finish. Two instants
/// here; `slow::kills` kills at six.
#[test]
fn runner_killed_at_any_instant_is_resumed_by_the_next_run() {
    runner_killed_at_tenths_is_resumed(&[3, 7]);
}

/// [`runner_killed_at_any_instant_is_resumed_by_the_next_run`], killed at each of `tenths` of
/// the unkilled run's time.
pub(crate) fn runner_killed_at_tenths_is_resumed(tenths: &[u32]) {
    let (repo, _, ids) = queue_repo(8, Some(3), "");
    add(&repo, &ids);
    let start = std::time::Instant::now();
    repo.task_root(&["queue", "run"]).code(1);
    let whole = start.elapsed();
    for &tenth in tenths {
        let (repo, _, ids) = queue_repo(8, Some(3), "");
        add(&repo, &ids);
        let at = whole * tenth / 10;
        let start = std::time::Instant::now();
        run_and_kill(&repo, &mut || start.elapsed() >= at);
        assert_resumed(&repo, &ids, &format!("killed at {at:?} of {whole:?}"));
    }
}

/// Adding a queued task again changes nothing: the queue ref does not move and the record
/// says `queued` once.
#[test]
fn add_is_idempotent() {
    let (repo, _, ids) = queue_repo(2, None, "");
    add(&repo, &ids[..1]);
    let tip = rev(&repo, "refs/tasks/_queue/main");
    let json = valid(
        repo.task_root(&["queue", "add", "t01", "--json"])
            .ok()
            .json(),
    );
    assert_eq!(json["added"], serde_json::json!([]));
    assert_eq!(json["already"], serde_json::json!(["t01"]));
    assert_eq!(rev(&repo, "refs/tasks/_queue/main"), tip);
    // Adding it with another keeps its place.
    let json = repo
        .task_root(&["queue", "add", "t02", "t01", "--json"])
        .ok()
        .json();
    assert_eq!(json["added"], serde_json::json!(["t02"]));
    let order: Vec<&str> = json["queued"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["task"].as_str().unwrap())
        .collect();
    assert_eq!(order, ["t01", "t02"]);
    assert_eq!(count(&events(&repo, "t01"), "queued"), 1);
    repo.fsck();
}

/// `queue remove` takes a task out (an `unqueued` event); the run lands only what is left.
#[test]
fn remove_takes_a_task_out() {
    let (repo, _, ids) = queue_repo(2, None, "");
    add(&repo, &ids);
    let json = valid(
        repo.task_root(&["queue", "remove", "t01", "--json"])
            .ok()
            .json(),
    );
    assert_eq!(json["from"], "refs/heads/main");
    assert_eq!(
        events(&repo, "t01").last().map(String::as_str),
        Some("unqueued")
    );
    // Removing it again: it is in no queue, nothing changes.
    let tip = rev(&repo, "refs/tasks/_queue/main");
    let json = repo
        .task_root(&["queue", "remove", "t01", "--json"])
        .ok()
        .json();
    assert_eq!(json["from"], serde_json::Value::Null);
    assert_eq!(rev(&repo, "refs/tasks/_queue/main"), tip);
    repo.task_root(&["queue", "run"]).ok();
    assert_eq!(landed_order(&repo), ["t02"]);
    assert_eq!(
        repo.refs("refs/heads"),
        vec!["refs/heads/main", "refs/heads/task/t01"]
    );
}

/// Bad input exits 2 and writes nothing: an unknown task, a bad or missing branch, a tag,
/// a bad id, a batch of zero.
#[test]
fn bad_input_exits_2_and_writes_nothing() {
    let (repo, _, _) = queue_repo(1, None, "");
    repo.git(repo.root(), &["tag", "v1"]);
    let before = all_refs(&repo);
    for args in [
        &["queue", "add", "nosuch"][..],
        &["queue", "add", "t01", "nosuch"],
        &["queue", "add", "t01", "--into", "nobranch"],
        &["queue", "add", "t01", "--into", "refs/tags/v1"],
        &["queue", "add", "t01", "--into", "bad..name"],
        &["queue", "add", "t01", "--into", "task/t01"],
        &["queue", "add", "../x"],
        &["queue", "add", "t01", "t01"],
        &["queue", "add"],
        &["queue", "remove", "nosuch"],
        &["queue", "status", "--into", "nobranch"],
        &["queue", "run", "--into", "nobranch"],
        &["queue", "run", "--batch", "0"],
        &["queue", "run", "--jobs", "0"],
    ] {
        let run = repo.task_root(args).code(2);
        assert!(run.stderr.contains("error:"), "{args:?}: {run}");
        assert_eq!(all_refs(&repo), before, "{args:?} wrote a ref");
    }
    assert!(!repo
        .root()
        .join(".git/git-task/queue")
        .join("main.journal")
        .exists());
}

/// A task that cannot land for a reason of its own (a conflict with the branch) is ejected
/// without a check run, with a `queue_ejected` event; the others land with one run.
#[test]
fn a_conflicting_task_is_ejected_without_a_check_run() {
    let (repo, runs, ids) = queue_repo(3, None, "");
    let wt = crate::common::path_of(&repo, "t02");
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 2 }\n");
    commit_all(&repo, &wt, "t02 changes lib");
    repo.write(repo.root(), "src/lib.rs", "pub fn lib() { 1 }\n");
    commit_all(&repo, repo.root(), "main changes lib");
    add(&repo, &ids);
    let json = repo.task_root(&["queue", "run", "--json"]).code(1).json();
    let q = &json["queues"][0];
    assert_eq!(q["ejected"][0]["task"], "t02", "{json}");
    assert_eq!(q["ejected"][0]["kind"], "merge_conflict", "{json}");
    assert_eq!(landed_order(&repo), ["t01", "t03"]);
    assert_eq!(check_runs(&runs), 1);
    assert_eq!(
        events(&repo, "t02").last().map(String::as_str),
        Some("queue_ejected")
    );
    repo.fsck();
}

/// `--jobs 3`: a failing batch's prefixes are checked at once, never more than three runs at a
/// time (and more than one: the flag is used); the longest prefix that passed lands without
/// its checks running again; the good tasks land in order and the bad one is ejected.
#[test]
fn jobs_check_prefixes_at_once_and_at_most_j() {
    let repo = TestRepo::new();
    let runs = repo.base().join("runs");
    let slots = repo.base().join("slots");
    let at_once = repo.base().join("at-once");
    let check = format!(
        "mkdir -p '{s}'; touch '{s}/'$$; ls '{s}' | wc -l >> '{a}'; echo run >> '{r}'; sleep 1; rm '{s}/'$$; test ! -e src/t03.txt",
        s = slots.display(),
        a = at_once.display(),
        r = runs.display()
    );
    let mut ids = Vec::new();
    for i in 1..=8 {
        let id = format!("t{i:02}");
        let wt = repo.start(&id, &["--allow", "src/**", "--check", &check]);
        repo.write(&wt, &format!("src/{id}.txt"), &format!("{id}\n"));
        commit_all(&repo, &wt, &format!("add {id}"));
        ids.push(id);
    }
    add(&repo, &ids);
    let json = valid(
        repo.task_root(&["queue", "run", "--jobs", "3", "--json"])
            .code(1)
            .json(),
    );
    let q = &json["queues"][0];
    assert_eq!(q["ejected"][0]["task"], "t03", "{json}");
    let good: Vec<String> = ids.iter().filter(|i| *i != "t03").cloned().collect();
    assert_eq!(landed_order(&repo), good);
    assert_eq!(
        q["check_runs"].as_u64().unwrap() as usize,
        check_runs(&runs)
    );
    assert!(check_runs(&runs) <= 10, "{} check runs", check_runs(&runs));
    let most = std::fs::read_to_string(&at_once)
        .unwrap()
        .lines()
        .map(|l| l.trim().parse::<usize>().unwrap())
        .max()
        .unwrap();
    assert!((2..=3).contains(&most), "{most} check runs at once");
    repo.fsck();
}

/// `queue run --follow` keeps running: tasks queued after it started land too.
#[test]
fn follow_lands_what_is_added_later() {
    let (repo, _, ids) = queue_repo(2, None, "");
    add(&repo, &ids[..1]);
    let mut child = task_command(&repo, repo.root(), &["queue", "run", "--follow"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let wait_landed = |n: usize| {
        let start = std::time::Instant::now();
        while landed_order(&repo).len() < n {
            assert!(start.elapsed().as_secs() < 120, "nothing landed");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    };
    wait_landed(1);
    // A second runner of the same queue does nothing and says who runs it.
    let json = valid(repo.task_root(&["queue", "run", "--json"]).ok().json());
    assert_eq!(json["queues"][0]["busy"], child.id().to_string(), "{json}");
    let status = valid(repo.task_root(&["queue", "status", "--json"]).ok().json());
    assert_eq!(status["queues"][0]["runner"], child.id().to_string());
    add(&repo, &ids[1..]);
    wait_landed(2);
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(landed_order(&repo), ids);
    repo.fsck();
}

/// The MCP tool `queue`: add, status, run (an ejection is a tool error whose content is the
/// report), remove; bad arguments are refused before anything runs.
#[test]
fn mcp_tool_adds_runs_and_removes() {
    let (repo, _, ids) = queue_repo(3, Some(2), "");
    let mut s = super::mcp::Session::open(&repo, repo.root());
    let (error, doc, _) = s.call("queue", serde_json::json!({"action": "add", "ids": ids}));
    assert!(!error, "{doc}");
    assert_eq!(doc["kind"], "queue_add");
    let (error, doc, _) = s.call(
        "queue",
        serde_json::json!({"action": "remove", "ids": ["t03"]}),
    );
    assert!(!error, "{doc}");
    assert_eq!(doc["from"], "refs/heads/main");
    let (error, doc, _) = s.call("queue", serde_json::json!({"action": "status"}));
    assert!(!error, "{doc}");
    assert_eq!(doc["queues"][0]["queued"].as_array().unwrap().len(), 2);
    let (error, doc, _) = s.call("queue", serde_json::json!({"action": "run", "batch": 8}));
    assert!(error, "{doc}");
    assert_eq!(doc["kind"], "queue_run");
    assert_eq!(doc["queues"][0]["ejected"][0]["task"], "t02");
    assert_eq!(landed_order(&repo), ["t01"]);
    let (error, _, _) = s.call("queue", serde_json::json!({"action": "add"}));
    assert!(error);
    let (error, _, _) = s.call(
        "queue",
        serde_json::json!({"action": "remove", "ids": ["t01", "t02"]}),
    );
    assert!(error);
    let (error, _, _) = s.call(
        "queue",
        serde_json::json!({"action": "add", "ids": ["--into=x"]}),
    );
    assert!(error);
    let (error, _, _) = s.call("queue", serde_json::json!({"action": "launch"}));
    assert!(error);
    assert_eq!(s.close(), 0);
}

/// Local changes in the way where the branch is checked out stop the run (exit 1): nothing
/// lands, nothing is ejected, the queue stays; once they are gone the run lands it.
#[test]
fn changes_in_the_way_stop_the_run_and_keep_the_queue() {
    let (repo, _, ids) = queue_repo(2, None, "");
    add(&repo, &ids);
    let before = rev(&repo, "main");
    repo.write(repo.root(), "src/t02.txt", "mine\n");
    let run = repo.task_root(&["queue", "run"]).code(1);
    assert!(run.stderr.contains("local changes"), "{run}");
    assert_eq!(rev(&repo, "main"), before);
    let status = repo.task_root(&["queue", "status", "--json"]).ok().json();
    assert_eq!(status["queues"][0]["queued"].as_array().unwrap().len(), 2);
    assert_eq!(status["queues"][0]["ejected"], serde_json::json!([]));
    std::fs::remove_file(repo.root().join("src/t02.txt")).unwrap();
    repo.task_root(&["queue", "run"]).ok();
    assert_eq!(landed_order(&repo), ids);
    repo.fsck();
}

/// A queue ref git-task did not write (a blob) is refused as `queue_damaged` (exit 128) by
/// every queue command, nothing written; deleting it starts the queue again.
#[test]
fn a_damaged_queue_ref_is_refused() {
    let (repo, _, ids) = queue_repo(1, None, "");
    let blob = crate::common::git_stdin(&repo, &["hash-object", "-w", "--stdin"], "junk\n");
    repo.git(
        repo.root(),
        &["update-ref", "refs/tasks/_queue/main", &blob],
    );
    let before = all_refs(&repo);
    for args in [
        &["queue", "status", "--json"][..],
        &["queue", "add", "t01", "--json"],
        &["queue", "run", "--json"],
    ] {
        let run = repo.task_root(args).code(128);
        assert_eq!(run.json()["kind"], "queue_damaged", "{args:?}: {run}");
        assert_eq!(all_refs(&repo), before, "{args:?}");
    }
    let run = repo.task_root(&["queue", "status"]).code(128);
    assert!(
        run.stderr
            .contains("git update-ref -d refs/tasks/_queue/main"),
        "{run}"
    );
    repo.git(repo.root(), &["update-ref", "-d", "refs/tasks/_queue/main"]);
    add(&repo, &ids);
    repo.task_root(&["queue", "run"]).ok();
    assert_eq!(landed_order(&repo), ids);
}

/// `queue add --run` starts a background runner: the queue lands unattended, the culprit is
/// ejected, and the runner exits once nothing in the queue is ready.
#[test]
fn add_run_lands_in_the_background_and_the_runner_exits() {
    let (repo, runs, ids) = queue_repo(4, Some(2), "");
    let json = valid(
        repo.task_root(&["queue", "add", "--run", "--json", &ids[0], &ids[1]])
            .ok()
            .json(),
    );
    assert_eq!(json["runner_started"], true, "{json}");
    // Added while that runner works (or after it left): a second --run lands them too.
    repo.task_root(&["queue", "add", "--run", &ids[2], &ids[3]])
        .ok();
    let start = std::time::Instant::now();
    loop {
        let status = repo.task_root(&["queue", "status", "--json"]).ok().json();
        let q = &status["queues"][0];
        if q["queued"] == serde_json::json!([]) && q["runner"].is_null() {
            assert_eq!(q["ejected"][0]["task"], "t02", "{status}");
            break;
        }
        assert!(start.elapsed().as_secs() < 120, "never landed: {status}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(landed_order(&repo), ["t01", "t03", "t04"]);
    assert!(check_runs(&runs) <= 10);
    repo.fsck();
}

/// A task dropped or removed while it waits is ejected, not landed; a dropped task cannot be
/// queued (bad input, nothing written).
#[test]
fn dropped_or_removed_tasks_are_ejected_not_landed() {
    let (repo, _, ids) = queue_repo(3, None, "");
    add(&repo, &ids);
    repo.task_root(&["drop", "t01"]).ok();
    repo.task_root(&["remove", "t02", "--force"]).ok();
    let json = valid(repo.task_root(&["queue", "run", "--json"]).code(1).json());
    let kinds: Vec<(&str, &str)> = json["queues"][0]["ejected"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["task"].as_str().unwrap(), e["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(kinds, [("t01", "dropped"), ("t02", "removed")], "{json}");
    assert_eq!(landed_order(&repo), ["t03"]);
    let before = all_refs(&repo);
    let run = repo.task_root(&["queue", "add", "t01"]).code(2);
    assert!(run.stderr.contains("dropped"), "{run}");
    assert_eq!(all_refs(&repo), before);
    repo.fsck();
}
