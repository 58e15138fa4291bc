//! Issue 29 item 2, beyond records: the shared state an agent can write with git plumbing, the
//! claims ref and the landing queues, given hostile task ids and branch names.
//!
//! Must hold for every value: no command panics (exit 101); a queue that cannot be read is
//! `queue_damaged` (exit 128) naming its ref, with nothing written; a claims ref that cannot be
//! read binds nothing and `sweep` names it and writes it again; `git fsck` passes.

use crate::common::{all_refs, git_stdin, rev, Run, TestRepo};

/// Sets the ref `name` to a commit whose tree holds `file` with `text`, as an agent with git
/// plumbing could (no hook runs).
fn forge_ref(repo: &TestRepo, name: &str, file: &str, text: &str) {
    let blob = git_stdin(repo, &["hash-object", "-w", "--stdin"], text);
    let tree = git_stdin(repo, &["mktree"], &format!("100644 blob {blob}\t{file}\n"));
    let commit = repo.git(repo.root(), &["commit-tree", &tree, "-m", "forged"]);
    repo.git(
        repo.root(),
        &[
            "-c",
            "core.hooksPath=/dev/null",
            "update-ref",
            name,
            &commit,
        ],
    );
}

/// Asserts `run` did not crash: exit 0, 1, 2 or 128, no panic message.
#[track_caller]
fn no_crash(run: &Run, what: &str) {
    assert!(!run.stderr.contains("panicked"), "{what} panicked:\n{run}");
    assert!(
        [0, 1, 2, 128].contains(&run.code),
        "{what}: exit {}:\n{run}",
        run.code
    );
}

/// Task ids no claim or queue entry may hold (TOML literals), and a wrong type.
const BAD_IDS: &[&str] = &[
    r#""../x""#,
    r#""""#,
    r#""refs/heads/main""#,
    r#""a\u0000b""#,
    r#""a b""#,
    "5",
];

/// The commands that read the claims, each aimed at task t1 where it takes one.
const CLAIM_READERS: &[&[&str]] = &[
    &["list", "--json"],
    &["status", "t1", "--json"],
    &["check", "t1", "--json"],
    &["overlaps", "--json"],
];

/// Then those that write them (and write the ref over).
const CLAIM_WRITERS: &[&[&str]] = &[
    &["claim", "t1", "src/**", "--json"],
    &["release", "t1", "--json"],
    &["merge", "t1", "--no-checks", "--json"],
];

/// A claims ref whose `claims.toml` names a bad task id binds no one and crashes nothing, with
/// or without git-task's own copy of the claims; `sweep` names the ref and writes it again from
/// that copy.
#[test]
fn a_claim_with_a_bad_task_id_crashes_nothing_and_sweep_names_the_ref() {
    for with_copy in [false, true] {
        for id in BAD_IDS {
            let what = format!("claim by {id} (git-task's copy: {with_copy})");
            let repo = TestRepo::new();
            let wt = repo.start("t1", &["--allow", "src/**"]);
            repo.start("t2", &["--allow", "docs/**"]);
            if with_copy {
                repo.task_root(&["claim", "t2", "docs/**"]).ok();
            }
            let toml = format!("[[claim]]\ntask = {id}\nglobs = [\"src/**\"]\ncreated = 1\n");
            forge_ref(&repo, "refs/tasks/_claims", "claims.toml", &toml);
            // The forged claim binds no one: t1 commits under src/.
            repo.write(&wt, "src/lib.rs", "pub fn lib() { 1 }\n");
            repo.git(&wt, &["commit", "-qam", "work"]);

            for args in CLAIM_READERS {
                let run = repo.task_root(args);
                no_crash(&run, &format!("{args:?} with {what}"));
            }
            let dry = repo.task_root(&["sweep", "--dry-run", "--json"]).ok();
            assert!(
                dry.stdout.contains("claims_ref_changed")
                    && dry.stdout.contains("refs/tasks/_claims"),
                "{what}: sweep does not name the claims ref:\n{dry}"
            );
            repo.task_root(&["sweep", "--json"]).ok();
            let stored = repo.git(repo.root(), &["show", "refs/tasks/_claims:claims.toml"]);
            assert!(!stored.contains("src/**"), "{what}: {stored}");
            forge_ref(&repo, "refs/tasks/_claims", "claims.toml", &toml);
            for args in CLAIM_WRITERS {
                let run = repo.task_root(args);
                no_crash(&run, &format!("{args:?} with {what}"));
            }
            repo.task_root(&["sweep", "--json"]).ok();
            let again = repo.task_root(&["sweep", "--dry-run", "--json"]).ok();
            assert!(
                !again.stdout.contains("claims_ref_changed"),
                "{what}:\n{again}"
            );
            repo.fsck();
        }
    }
}

/// A queue whose `queue.toml` holds a bad task id (waiting, landed or ejected) cannot be read:
/// every queue command refuses it as `queue_damaged` naming the ref, writes nothing, and the
/// other commands go on.
#[test]
fn a_queue_with_a_bad_task_id_is_refused_naming_its_ref() {
    for id in BAD_IDS {
        for list in ["queued", "landed", "ejected"] {
            let what = format!("{list} {id}");
            let repo = TestRepo::new();
            repo.start("t1", &[]);
            let toml = format!("[[{list}]]\ntask = {id}\ntime = 1\n");
            forge_ref(&repo, "refs/tasks/_queue/main", "queue.toml", &toml);
            let before = all_refs(&repo);
            for args in [
                &["queue", "status", "--json"][..],
                &["queue", "status", "--into", "main", "--json"],
                &["queue", "add", "t1", "--json"],
                &["queue", "remove", "t1", "--json"],
                &["queue", "run", "--json"],
            ] {
                let run = repo.task_root(args);
                no_crash(&run, &format!("{args:?} with {what}"));
                assert_eq!(run.code, 128, "{args:?} with {what}:\n{run}");
                assert_eq!(run.json()["kind"], "queue_damaged", "{args:?}: {run}");
                assert!(
                    run.stderr.contains("refs/tasks/_queue/main"),
                    "{args:?} with {what}: the error does not name the ref:\n{run}"
                );
                assert_eq!(all_refs(&repo), before, "{args:?} with {what}");
            }
            for args in [&["list", "--json"][..], &["status", "t1", "--json"]] {
                repo.task_root(args).ok();
            }
            repo.fsck();
        }
    }
}

/// A queue ref whose name is no branch's (`_queue/HEAD`, `_queue/refs/heads/main`, `_queue/-x`)
/// is refused as `queue_damaged` naming it by the commands that look at every queue; the queue
/// of `main` still works when named.
#[test]
fn a_queue_ref_naming_no_branch_is_refused_naming_it() {
    for name in ["HEAD", "refs/heads/main", "-x"] {
        let bad = format!("refs/tasks/_queue/{name}");
        let repo = TestRepo::new();
        repo.start("t1", &[]);
        forge_ref(&repo, &bad, "queue.toml", "");
        let before = all_refs(&repo);
        for args in [
            &["queue", "status", "--json"][..],
            &["queue", "add", "t1", "--json"],
            &["queue", "remove", "t1", "--json"],
            &["queue", "run", "--json"],
        ] {
            let run = repo.task_root(args);
            no_crash(&run, &format!("{args:?} with {bad}"));
            assert_eq!(run.code, 128, "{args:?} with {bad}:\n{run}");
            assert_eq!(run.json()["kind"], "queue_damaged", "{args:?}: {run}");
            assert!(
                run.stderr.contains(&bad),
                "{args:?}: the error does not name {bad}:\n{run}"
            );
            assert_eq!(all_refs(&repo), before, "{args:?} with {bad}");
        }
        let status = repo
            .task_root(&["queue", "status", "--into", "main", "--json"])
            .ok();
        assert_eq!(status.json()["queues"][0]["into"], "refs/heads/main");
        repo.git(repo.root(), &["update-ref", "-d", &bad]);
        repo.task_root(&["queue", "status", "--json"]).ok();
        repo.fsck();
    }
}

/// A queue entry naming a valid id that is no task's (`main`) is ejected as `missing` by the
/// runner; a runner's journal with bad ids in it is ignored.
#[test]
fn a_queued_id_that_is_no_task_is_ejected_and_a_bad_journal_ignored() {
    let repo = TestRepo::new();
    let wt = repo.start("t1", &[]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 1 }\n");
    repo.git(&wt, &["commit", "-qam", "work"]);
    repo.task_root(&["queue", "add", "t1"]).ok();
    let genuine = repo.git(repo.root(), &["show", "refs/tasks/_queue/main:queue.toml"]);
    let forged = format!("{genuine}\n[[queued]]\ntask = \"main\"\ntime = 1\n");
    let tip = rev(&repo, "refs/tasks/_queue/main");
    let blob = git_stdin(&repo, &["hash-object", "-w", "--stdin"], &forged);
    let tree = git_stdin(
        &repo,
        &["mktree"],
        &format!("100644 blob {blob}\tqueue.toml\n"),
    );
    let commit = repo.git(
        repo.root(),
        &["commit-tree", &tree, "-p", &tip, "-m", "forged"],
    );
    repo.git(
        repo.root(),
        &[
            "-c",
            "core.hooksPath=/dev/null",
            "update-ref",
            "refs/tasks/_queue/main",
            &commit,
        ],
    );
    let journal = repo.root().join(".git/git-task/queue/main.journal");
    std::fs::create_dir_all(journal.parent().unwrap()).unwrap();
    std::fs::write(
        &journal,
        r#"{"pid":1,"trying":["../x"],"failing":{"tasks":["../x","a b"],"tip":"0","checks":null,"checkout":null}}"#,
    )
    .unwrap();

    let status = repo.task_root(&["queue", "status", "--json"]).ok().json();
    let waiting = &status["queues"][0]["queued"];
    assert_eq!(waiting[1]["task"], "main", "{status}");
    assert_eq!(waiting[1]["status"], "missing", "{status}");

    let run = repo.task_root(&["queue", "run", "--json"]);
    no_crash(&run, "queue run");
    let report = &run.json()["queues"][0];
    assert_eq!(report["landed"][0]["task"], "t1", "{run}");
    assert_eq!(report["ejected"][0]["task"], "main", "{run}");
    assert_eq!(report["ejected"][0]["kind"], "missing", "{run}");
    repo.fsck();
}
