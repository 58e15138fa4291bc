//! `git task log`: the event log.

use crate::common::TestRepo;
use crate::common::*;

#[test]
fn log_lists_events_oldest_first() {
    let repo = TestRepo::new();
    repo.start("lg", &[]);
    repo.task_root(&["drop", "lg", "-m", "gave up"]).ok();
    let j = repo.task_root(&["log", "lg", "--json"]).ok().json();
    assert_eq!(j["kind"], "log");
    assert_eq!(j["task"], "lg");
    let events = j["events"].as_array().unwrap();
    let names: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["started", "provisioned", "dropped"]);
    // Each event names its record commit, as git sees it.
    let commits: Vec<String> = events
        .iter()
        .map(|e| e["commit"].as_str().unwrap().to_owned())
        .collect();
    let git_log = repo.git(
        repo.root(),
        &["log", "--reverse", "--format=%H", "refs/tasks/lg/record"],
    );
    assert_eq!(commits, git_log.lines().collect::<Vec<_>>());
    assert_eq!(events[2]["details"]["message"], "gave up");
    assert_eq!(events[0]["details"]["base"], rev(&repo, "main").as_str());

    let human = repo.task_root(&["log", "lg"]).ok();
    let lines: Vec<&str> = human.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{human}");
    assert!(
        lines[0].contains("started")
            && lines[1].contains("provisioned")
            && lines[2].contains("dropped"),
        "{human}"
    );
    assert!(lines[2].contains("message=gave up"), "{human}");
}

#[test]
fn log_of_an_unknown_task_is_bad_input() {
    let repo = TestRepo::new();
    let run = repo.task_root(&["log", "nope"]).code(2);
    assert!(run.stderr.contains("hint: "), "{run}");
}

/// Every event kind and shape as git-task wrote it at 7ef3388, before the typed event
/// (`name<TAB>body without state`; most lines come from real records).
const OLD_EVENTS: &str = include_str!("../fixtures/events-7ef3388.tsv");

/// A record written by an older (or newer) git-task reads: `log` shows every event exactly as
/// stored, `list` and `status` work from it.
#[test]
fn old_records_read_in_log_list_and_status() {
    let repo = TestRepo::new();
    repo.start("old", &[]);
    let record = "refs/tasks/old/record";
    let tip = rev(&repo, record);
    let message = repo.git(repo.root(), &["log", "-1", "--format=%B", &tip]);
    let body: serde_json::Value =
        serde_json::from_str(message.split_once("\n\n").unwrap().1).unwrap();
    let state = body["state"].clone();
    let tree = rev(&repo, &format!("{tip}^{{tree}}"));
    // One event a newer version might write.
    let future = "frobnicated\t{\"event\":\"frobnicated\",\"how\":{\"deep\":[1,2]},\"task\":\"old\",\"time\":1795481700}";
    let mut written = Vec::new();
    let mut parent = tip.clone();
    for line in OLD_EVENTS.lines().chain([future]) {
        let (name, json) = line.split_once('\t').unwrap();
        let stored: serde_json::Value = serde_json::from_str(json).unwrap();
        let mut full = stored.clone();
        full["state"] = state.clone();
        let message = format!("{name}\n\n{full}\n");
        parent = git_stdin(&repo, &["commit-tree", &tree, "-p", &parent], &message);
        written.push((name.to_owned(), stored));
    }
    repo.git(repo.root(), &["update-ref", record, &parent, &tip]);
    // Written outside this git-task (as older versions did): adopted by the user first.
    crate::common::trust_records(&repo, &["old"]);

    let log = repo.task_root(&["log", "old", "--json"]).ok().json();
    let events = log["events"].as_array().unwrap();
    assert_eq!(events.len(), 2 + written.len(), "{log}");
    for (event, (name, stored)) in events[2..].iter().zip(&written) {
        assert_eq!(event["event"], name.as_str(), "{event}");
        assert_eq!(&event["details"], stored, "{name} does not read as stored");
    }
    let human = repo.task_root(&["log", "old"]).ok();
    assert_eq!(human.stdout.lines().count(), events.len(), "{human}");
    assert!(
        human.stdout.lines().last().unwrap().contains("frobnicated"),
        "{human}"
    );

    let list = repo.task_root(&["list", "--json"]).ok().json();
    assert!(list.to_string().contains("\"old\""), "{list}");
    let status = repo.task_root(&["status", "old", "--json"]).ok().json();
    assert_eq!(status["status"], "active", "{status}");
    let human = repo.task_root(&["status", "old"]).ok();
    assert!(human.stdout.contains(" frobnicated\n"), "{human}");
}

/// `check --run`, the merge gate and a patch-mode accept record `checks` with one shape, and
/// both kinds of `merged` carry the same summary of them.
#[test]
fn checks_events_have_one_shape_whoever_ran_them() {
    let repo = TestRepo::new();
    let wt = repo.start("w", &["--check", "true"]);
    repo.write(&wt, "src/w.rs", "pub fn w() {}\n");
    repo.git(&wt, &["add", "-A"]);
    repo.git(&wt, &["commit", "-q", "-m", "w"]);
    repo.task(&wt, &["check", "--run"]).ok();
    repo.task_root(&["merge", "w"]).ok();
    repo.task_root(&["start", "--mode", "patch", "p", "--check", "true"])
        .ok();
    repo.write(repo.root(), "src/p.rs", "pub fn p() {}\n");
    repo.task_root(&["merge", "p"]).ok();

    let details = |id: &str, name: &str| -> Vec<serde_json::Value> {
        let log = repo.task_root(&["log", id, "--json"]).ok().json();
        log["events"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["event"] == name)
            .map(|e| e["details"].clone())
            .collect()
    };
    let keys = |v: &serde_json::Value| -> Vec<String> {
        let mut keys: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        keys.sort();
        keys
    };
    let mut checks = details("w", "checks");
    checks.extend(details("p", "checks"));
    assert_eq!(checks.len(), 3, "{checks:?}");
    let purposes: Vec<&str> = checks.iter().map(|c| c["for"].as_str().unwrap()).collect();
    assert_eq!(purposes, ["check", "merge", "merge"]);
    for c in &checks {
        assert_eq!(
            keys(c),
            ["commands", "event", "for", "passed", "skipped", "task", "time"],
            "{c}"
        );
        assert_eq!((&c["passed"], &c["skipped"]), (&true.into(), &false.into()));
        assert_eq!(
            keys(&c["commands"][0]),
            ["code", "command", "millis", "timed_out"],
            "{c}"
        );
    }
    let mut merged = details("w", "merged");
    merged.extend(details("p", "merged"));
    assert_eq!(merged.len(), 2, "{merged:?}");
    for m in &merged {
        assert_eq!(keys(&m["checks"]), ["commands", "passed", "skipped"], "{m}");
        assert_eq!(m["checks"]["commands"][0]["command"], "true", "{m}");
    }
}
