//! `git task log`: the event log.

use super::support::*;
use crate::common::TestRepo;

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
