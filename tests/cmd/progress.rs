//! Progress on stderr when it is a terminal (a pty made by util-linux `script`): the checkout of
//! a big tree in `start`, and each check of `check --run` while it runs. Off a terminal there is
//! none (the snapshots show stderr without it).

use crate::common::{bin, Run, TestRepo};

/// Runs `git-task ARGS` in the main worktree on a pseudo-terminal; stdout and stderr merged.
fn on_a_terminal(repo: &TestRepo, args: &str) -> Option<Run> {
    let have = std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !have {
        assert!(
            std::env::var_os("CI").is_none(),
            "util-linux 'script' is not installed"
        );
        eprintln!("SKIP: util-linux 'script' is not installed; progress is not tested");
        return None;
    }
    let command = format!("'{}' {args}", bin().display());
    let out = repo
        .command("script", repo.root())
        .args(["-qec", &command, "/dev/null"])
        .output()
        .unwrap();
    Some(Run::of(out))
}

#[test]
fn check_run_shows_each_check_running_on_a_terminal() {
    let repo = TestRepo::new();
    repo.start("a", &["--check", "sleep 2.5"]);
    let Some(run) = on_a_terminal(&repo, "check a --run") else {
        return;
    };
    let run = run.ok();
    assert!(
        run.stdout.contains("\rrunning check 'sleep 2.5' (1s)")
            && run.stdout.contains("\rrunning check 'sleep 2.5' (2s)"),
        "{run:?}"
    );
    assert!(
        run.stdout.contains("running check 'sleep 2.5' (2.") && run.stdout.contains("s): ok\r\n"),
        "{run:?}"
    );
    // Off a terminal: the note, no redrawn line.
    let run = repo.task_root(&["check", "a", "--run"]).ok();
    assert!(run.stderr.contains("running check 'sleep 2.5'\n"), "{run}");
    assert!(!run.stderr.contains('\r'), "{run}");
}

#[test]
fn start_shows_the_checkout_of_a_big_tree_on_a_terminal() {
    let repo = TestRepo::new();
    // 8,000 files (one blob) committed with plumbing: quick to make, slow enough to check out.
    let root = repo.root().to_path_buf();
    let blob = crate::common::git_stdin(&repo, &["hash-object", "-w", "--stdin"], "x\n");
    let mut list = String::new();
    for i in 0..8_000 {
        list.push_str(&format!(
            "100644 {} 0\tbig/d{}/f{i}.txt\n",
            blob.trim(),
            i % 100
        ));
    }
    crate::common::git_stdin(&repo, &["update-index", "--index-info"], &list);
    repo.git(&root, &["commit", "-qm", "big"]);
    repo.git(&root, &["checkout", "-q", "--", "."]);
    let Some(run) = on_a_terminal(&repo, "start big") else {
        return;
    };
    let run = run.ok();
    assert!(run.stdout.contains("\rChecking out files: "), "{run:?}");
    // Ends with every file written, and a newline.
    let last = regex::Regex::new(r"\rChecking out files: (\d+)/(\d+)\r\n").unwrap();
    let caps = last.captures(&run.stdout).expect("a last progress line");
    assert_eq!(caps[1], caps[2], "{run:?}");
    assert!(caps[2].parse::<u32>().unwrap() > 8_000, "{run:?}");
    // Off a terminal: none.
    let run = repo.task_root(&["start", "big2"]).ok();
    assert!(!run.stderr.contains("Checking out"), "{run}");
}

/// A merge that finds its target's lock held waits for its turn, saying on a terminal whom it
/// waits for (pid and command), and lands once the lock is let go (issue 33).
#[test]
fn merge_waiting_for_the_lock_says_who_holds_it_on_a_terminal() {
    let repo = TestRepo::new();
    let wt = repo.start("w", &[]);
    repo.write(&wt, "src/waited.rs", "// w\n");
    crate::common::commit_all(&repo, &wt, "Task w");
    let locks = repo.root().join(".git/git-task/locks");
    std::fs::create_dir_all(&locks).unwrap();
    let lock = locks.join("merge-refs%heads%main.lock");
    let me = std::process::id();
    std::fs::write(&lock, format!("{me}\ngit-task merge other\n")).unwrap();
    let letgo = {
        let lock = lock.clone();
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(2500));
            std::fs::remove_file(lock).unwrap();
        })
    };
    let Some(run) = on_a_terminal(&repo, "merge w") else {
        letgo.join().unwrap();
        return;
    };
    letgo.join().unwrap();
    let run = run.ok();
    assert!(
        run.stdout.contains(&format!(
            "\rWaiting for the merge into 'main' by pid {me} (git-task merge other): 1 s"
        )),
        "{run:?}"
    );
    assert!(run.stdout.contains("; merging now"), "{run:?}");
    assert_eq!(
        repo.git(repo.root(), &["show", "main:src/waited.rs"]),
        "// w"
    );
}
