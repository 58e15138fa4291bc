//! `git task log --follow`: a live event stream, ended cleanly by Ctrl-C or a reader that leaves.

use crate::common::{bin, TestRepo};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

/// A running `git task log --follow`, its stdout lines arriving on a channel.
struct Follow {
    child: Child,
    lines: Receiver<String>,
}

impl Follow {
    fn spawn(repo: &TestRepo, args: &[&str]) -> Follow {
        let mut cmd = repo.command(bin(), repo.root());
        cmd.args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Follow { child, lines }
    }

    /// The next line, waiting up to 20 s.
    #[track_caller]
    fn next(&self) -> String {
        self.lines
            .recv_timeout(Duration::from_secs(20))
            .expect("a line from log --follow")
    }

    #[track_caller]
    fn next_json(&self) -> Value {
        let line = self.next();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
    }

    /// Sends SIGINT and returns the exit code and stderr.
    fn interrupt(mut self) -> (Option<i32>, String) {
        let pid = self.child.id().to_string();
        let killed = std::process::Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .unwrap();
        assert!(killed.success());
        let out = wait_timeout(&mut self.child, Duration::from_secs(20));
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut self.child.stderr.take().unwrap(), &mut stderr).unwrap();
        (out, stderr)
    }
}

impl Drop for Follow {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits for `child` up to `limit`; `None` as the code when it was killed by a signal.
fn wait_timeout(child: &mut Child, limit: Duration) -> Option<i32> {
    let start = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        assert!(start.elapsed() < limit, "log --follow did not end");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn follow_prints_the_events_there_are_then_each_one_appended_by_another_process() {
    let repo = TestRepo::new();
    let wt = repo.start("a", &[]);
    let follow = Follow::spawn(&repo, &["--json", "log", "--follow", "a"]);
    let first = follow.next_json();
    assert_eq!(first["schema_version"], 1);
    assert_eq!(first["kind"], "event");
    assert_eq!(first["task"], "a");
    assert_eq!(first["event"], "started");
    assert_eq!(follow.next_json()["event"], "provisioned");
    // Another process appends an event.
    repo.write(&wt, "src/lib.rs", "changed\n");
    repo.task(&wt, &["checkpoint", "-m", "one"]).ok();
    let line = follow.next_json();
    assert_eq!(line["event"], "checkpoint", "{line}");
    assert_eq!(line["details"]["number"], 1);
    let record = repo.git(repo.root(), &["rev-parse", "refs/tasks/a/record"]);
    assert_eq!(line["commit"], record);
    repo.task_root(&["drop", "a"]).ok();
    assert_eq!(follow.next_json()["event"], "dropped");
    let (code, stderr) = follow.interrupt();
    assert_eq!(code, Some(0), "stderr: {stderr}");
    assert_eq!(stderr, "");
}

#[test]
fn follow_all_sees_every_task_those_started_later_too() {
    let repo = TestRepo::new();
    repo.start("a", &[]);
    let follow = Follow::spawn(&repo, &["--json", "log", "--follow", "--all"]);
    assert_eq!(follow.next_json()["task"], "a");
    assert_eq!(follow.next_json()["task"], "a");
    repo.start("b", &[]);
    let line = follow.next_json();
    assert_eq!(
        (line["task"].as_str(), line["event"].as_str()),
        (Some("b"), Some("started"))
    );
    assert_eq!(follow.next_json()["event"], "provisioned");
    let (code, stderr) = follow.interrupt();
    assert_eq!(code, Some(0), "stderr: {stderr}");
    assert_eq!(stderr, "");
}

#[test]
fn follow_in_human_form_prints_log_lines_with_the_task_under_all() {
    let repo = TestRepo::new();
    repo.start("a", &[]);
    let one = Follow::spawn(&repo, &["log", "--follow", "a"]);
    let line = one.next();
    assert!(line.contains(" started "), "{line}");
    assert!(!line.starts_with("a "), "{line}");
    let all = Follow::spawn(&repo, &["log", "--follow", "--all"]);
    let line = all.next();
    assert!(
        line.starts_with("a ") && line.contains(" started "),
        "{line}"
    );
}

#[test]
fn follow_ends_cleanly_when_the_reader_goes_away() {
    let repo = TestRepo::new();
    repo.start("a", &[]);
    let script = format!(
        "set -o pipefail; '{}' --json log --follow a | head -1; echo \"status ${{PIPESTATUS[*]}}\"",
        bin().display()
    );
    let mut cmd = repo.command("bash", repo.root());
    cmd.args(["-c", &script])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    // Idle after the first lines: it must notice that `head` left without writing again.
    let code = wait_timeout(&mut child, Duration::from_secs(20));
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(code, Some(0), "{stdout}");
    let mut lines = stdout.lines();
    let first: Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert_eq!(first["event"], "started");
    assert_eq!(lines.next(), Some("status 0 0"), "{stdout}");
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

#[test]
fn follow_ends_when_its_reader_leaves_while_it_is_idle() {
    let repo = TestRepo::new();
    repo.start("a", &[]);
    let mut cmd = repo.command(bin(), repo.root());
    cmd.args(["--json", "log", "--follow", "a"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    for want in ["started", "provisioned"] {
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        let event: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(event["event"], want);
    }
    // Nothing more to print: it is waiting. The reader goes away.
    std::thread::sleep(Duration::from_millis(500));
    drop(stdout);
    let code = wait_timeout(&mut child, Duration::from_secs(10));
    assert_eq!(code, Some(0));
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(stderr, "");
}

#[test]
fn follow_all_takes_no_id_and_all_needs_follow() {
    let repo = TestRepo::new();
    repo.start("a", &[]);
    repo.task_root(&["log", "--all"]).code(2);
    repo.task_root(&["log", "--follow", "--all", "a"]).code(2);
}

/// A start whose setup fails leaves no task (everything is rolled back, record included), but
/// `log --follow --all` streams its `setup_failed` event, live and to a later follower, with
/// the command, its exit code and the end of its output.
#[test]
fn follow_all_streams_a_failed_setup() {
    let repo = TestRepo::new();
    let follow = Follow::spawn(&repo, &["--json", "log", "--follow", "--all"]);
    repo.task_root(&["start", "sf", "--setup", "echo broke-it; exit 3"])
        .code(1);
    let failed = loop {
        let line = follow.next_json();
        assert_eq!(line["task"], "sf", "{line}");
        if line["event"] == "setup_failed" {
            break line;
        }
    };
    let details = &failed["details"];
    assert_eq!(details["command"], "echo broke-it; exit 3", "{failed}");
    assert_eq!(details["code"], 3, "{failed}");
    assert_eq!(details["timed_out"], false, "{failed}");
    assert!(
        details["output"].as_str().unwrap().contains("broke-it"),
        "{failed}"
    );
    let (code, stderr) = follow.interrupt();
    assert_eq!(code, Some(0), "stderr: {stderr}");
    // Nothing of the task is left, and a follower started later still sees what happened.
    assert!(repo.refs("refs/tasks").is_empty());
    let later = Follow::spawn(&repo, &["log", "--follow", "--all"]);
    let line = later.next();
    assert!(
        line.starts_with("sf ") && line.contains("setup_failed") && line.contains("code=3"),
        "{line}"
    );
    later.interrupt();
}
