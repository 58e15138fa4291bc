//! The merge gate's own checkout (issue 33, SPEC §7.5): warm between runs, clean before each,
//! never fed from a task worktree, one per concurrent merge, kept after a failure until the
//! next run on it or `sweep`; nothing left under `$TMPDIR`.

use crate::common::TestRepo;
use crate::common::{commit_all, rev};
use std::path::{Path, PathBuf};

fn gate_dir(repo: &TestRepo) -> PathBuf {
    repo.root().join(".git/git-task/gate")
}

/// Starts `id` with `check`, makes one commit adding `file`, returns the worktree.
fn task_with(repo: &TestRepo, id: &str, check: &str, file: &str) -> PathBuf {
    let wt = repo.start(id, &["--check", check]);
    repo.write(&wt, file, &format!("// {id}\n"));
    commit_all(repo, &wt, &format!("Task {id}"));
    wt
}

/// Runs `git task ARGS` in the main worktree with `TMPDIR` set to `tmp`.
fn task_in_tmp(repo: &TestRepo, tmp: &Path, args: &[&str]) -> crate::common::Run {
    let out = repo
        .command(crate::common::bin(), repo.root())
        .env("TMPDIR", tmp)
        .args(args)
        .output()
        .unwrap();
    crate::common::Run::of(out)
}

/// The second run sees no untracked file and no changed tracked file of the first, keeps the
/// ignored build state (seeded from the main worktree), never sees what a task worktree holds,
/// and the checkout is private, not one of git's worktrees, and holds no `.git` while checks run.
#[test]
fn gate_checkout_is_clean_warm_and_never_fed_by_a_task() {
    let repo = TestRepo::new();
    repo.write(repo.root(), ".gitignore", "cache/\nplanted\n");
    repo.write(repo.root(), ".worktreeinclude", "cache/**\n");
    commit_all(&repo, repo.root(), "ignore the cache");
    repo.write(repo.root(), "cache/seed", "from main\n");
    let check = "test \"$(cat cache/seed)\" = 'from main' && test ! -e leftover.txt \
                 && test ! -e planted && test ! -e cache/from-task && test ! -e .git \
                 && test \"$(cat README.md)\" = '# demo' \
                 && touch leftover.txt && echo junk >> README.md && echo run >> cache/runs";
    let tmp = repo.base().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    for (i, id) in ["a", "b", "c"].iter().enumerate() {
        let wt = task_with(&repo, id, check, &format!("src/g{i}.rs"));
        // The agent plants ignored files in its own worktree.
        repo.write(&wt, "planted", "agent tool\n");
        repo.write(&wt, "cache/from-task", "agent cache\n");
        task_in_tmp(&repo, &tmp, &["merge", id]).ok();
    }
    let slot = gate_dir(&repo).join("0");
    // Warm: the ignored state stayed through the three runs.
    assert_eq!(repo.read(&slot, "cache/runs"), "run\nrun\nrun\n");
    assert!(
        !gate_dir(&repo).join("1").exists(),
        "one checkout was enough"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(gate_dir(&repo))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700);
    }
    let listed = repo.git(repo.root(), &["worktree", "list", "--porcelain"]);
    assert!(!listed.contains("git-task/gate"), "{listed}");
    assert_eq!(
        std::fs::read_dir(&tmp).unwrap().count(),
        0,
        "nothing under TMPDIR"
    );
    for i in 0..3 {
        assert_eq!(
            repo.git(repo.root(), &["show", &format!("main:src/g{i}.rs")])
                .lines()
                .count(),
            1
        );
    }
    repo.fsck();
}

/// A failed check keeps its gate checkout, named in the hint, until the next run on it; sweep
/// deletes what is left; nothing goes to `$TMPDIR`.
#[test]
fn failed_gate_checkout_stays_until_sweep() {
    let repo = TestRepo::new();
    let tmp = repo.base().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    task_with(
        &repo,
        "bad",
        "echo evidence > evidence.txt; false",
        "src/bad.rs",
    );
    let run = task_in_tmp(&repo, &tmp, &["merge", "bad"]).code(1);
    let slot = gate_dir(&repo).join("0");
    assert!(
        run.stderr.contains(&slot.display().to_string()),
        "the hint names the checkout: {run}"
    );
    assert_eq!(repo.read(&slot, "evidence.txt"), "evidence\n");
    assert_eq!(repo.read(&slot, "src/bad.rs"), "// bad\n");
    assert_eq!(
        std::fs::read_dir(&tmp).unwrap().count(),
        0,
        "nothing under TMPDIR"
    );
    let json = repo.task_root(&["sweep", "--json"]).ok().json();
    assert!(json.to_string().contains("gate"), "{json}");
    assert!(!slot.exists(), "sweep deleted the failed checkout");
    assert!(!gate_dir(&repo).join("0.git").exists());
    // The next merge makes a new one and lands.
    task_with(&repo, "good", "test ! -e evidence.txt", "src/good.rs");
    repo.task_root(&["merge", "good"]).ok();
    assert_eq!(
        repo.git(repo.root(), &["show", "main:src/good.rs"]),
        "// good"
    );
    repo.fsck();
}

/// A failed checkout is cleaned by the next run on it, and by `remove` of its task.
#[test]
fn failed_gate_checkout_is_cleaned_by_the_next_run_and_by_remove() {
    let repo = TestRepo::new();
    task_with(
        &repo,
        "bad",
        "echo evidence > evidence.txt; false",
        "src/bad.rs",
    );
    repo.task_root(&["merge", "bad"]).code(1);
    let slot = gate_dir(&repo).join("0");
    assert!(slot.join("evidence.txt").exists());
    task_with(
        &repo,
        "good",
        "test ! -e evidence.txt && test ! -e src/bad.rs",
        "src/good.rs",
    );
    repo.task_root(&["merge", "good"]).ok();
    repo.task_root(&["merge", "bad"]).code(1);
    assert!(slot.join("evidence.txt").exists());
    repo.task_root(&["remove", "--force", "bad"]).ok();
    assert!(
        !slot.exists(),
        "remove deleted the checkout its checks failed in"
    );
}

/// Two merges at once (into two branches: merges into one branch take turns) never share a
/// gate checkout.
#[test]
fn concurrent_merges_never_share_a_gate_checkout() {
    let repo = TestRepo::new();
    repo.git(repo.root(), &["branch", "other"]);
    let out = repo.base().join("pwds");
    let check = format!(
        "test ! -e mine || exit 1; touch mine; pwd >> '{0}'; i=0; \
         while [ \"$(wc -l < '{0}')\" -lt 2 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done; rm mine",
        out.display()
    );
    task_with(&repo, "x", &check, "src/x.rs");
    let wt = repo.start("y", &["--base", "other", "--check", &check]);
    repo.write(&wt, "src/y.rs", "// y\n");
    commit_all(&repo, &wt, "Task y");
    let runs: Vec<_> = std::thread::scope(|s| {
        let a = s.spawn(|| repo.task_root(&["merge", "x"]));
        let b = s.spawn(|| repo.task_root(&["merge", "y"]));
        vec![a.join().unwrap(), b.join().unwrap()]
    });
    for run in runs {
        run.ok();
    }
    let text = std::fs::read_to_string(&out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert_ne!(lines[0], lines[1], "one checkout for two merges: {text}");
    assert_eq!(repo.git(repo.root(), &["show", "main:src/x.rs"]), "// x");
    assert_eq!(repo.git(repo.root(), &["show", "other:src/y.rs"]), "// y");
    let _ = rev(&repo, "main");
    repo.fsck();
}

/// A merge killed (SIGKILL) at any moment of its gate run leaves a gate checkout the next merge
/// can use: it lands, and its check sees neither the killed run's untracked file nor a tracked
/// file the killed run changed.
#[test]
fn gate_checkout_survives_kill_9_at_any_moment() {
    let repo = TestRepo::new();
    let check = "test ! -e leftover.txt && test \"$(cat README.md)\" = '# demo' \
                 && touch leftover.txt && echo junk >> README.md && sleep 0.3";
    for round in 0..6u64 {
        let id = format!("k{round}");
        task_with(&repo, &id, check, &format!("src/k{round}.rs"));
        let mut child = repo
            .command(crate::common::bin(), repo.root())
            .args(["merge", &id])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(40 + round * 60));
        let _ = child.kill();
        let _ = child.wait();
        repo.task_root(&["sweep"]);
        // Landed by the killed merge, or now.
        let run = repo.task_root(&["merge", &id]);
        assert_eq!(run.code, 0, "round {round}: {run}");
        assert_eq!(
            repo.git(repo.root(), &["show", &format!("main:src/k{round}.rs")]),
            format!("// {id}")
        );
    }
    repo.fsck();
}

/// Merges into different branches at the same moment all land, and every one's note is kept:
/// they take no common lock, and all of them add their note to `refs/notes/tasks` (issue 33's
/// bug: one of them exited 128 when another moved the notes ref first).
#[test]
fn concurrent_merges_into_different_branches_all_land_with_their_notes() {
    const N: usize = 6;
    let repo = TestRepo::new();
    let ready = repo.base().join("ready");
    std::fs::create_dir_all(&ready).unwrap();
    for i in 0..N {
        let branch = format!("b{i}");
        repo.git(repo.root(), &["branch", &branch]);
        // Every check waits until all are running: the landings then happen together.
        let check = format!(
            "touch '{dir}/{i}'; n=0; while [ \"$(ls '{dir}' | wc -l)\" -lt {N} ] && [ $n -lt 1000 ]; \
             do sleep 0.01; n=$((n+1)); done",
            dir = ready.display()
        );
        let id = format!("c{i}");
        let wt = repo.start(&id, &["--base", &branch, "--check", &check]);
        repo.write(&wt, &format!("src/c{i}.rs"), &format!("// {id}\n"));
        commit_all(&repo, &wt, &format!("Task {id}"));
    }
    let runs: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..N)
            .map(|i| {
                let repo = &repo;
                s.spawn(move || repo.task_root(&["merge", &format!("c{i}")]))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for run in runs {
        run.ok();
    }
    for i in 0..N {
        let branch = format!("b{i}");
        assert_eq!(
            repo.git(repo.root(), &["show", &format!("{branch}:src/c{i}.rs")]),
            format!("// c{i}")
        );
        let note = repo.git(repo.root(), &["notes", "--ref=tasks", "show", &branch]);
        assert!(note.contains(&format!("c{i}")), "the note of c{i}: {note}");
    }
    repo.fsck();
}

/// After a run that passed, the checkout is settled in the background (`gate/<n>.settled`):
/// what the check left is gone before the next merge takes the checkout, and a file created in
/// it after the settle is still seen and removed (the settled look no longer holds).
#[test]
fn gate_checkout_is_settled_after_a_pass_and_a_later_file_is_still_removed() {
    let repo = TestRepo::new();
    let check = "test ! -e src/leftover.rs && test ! -e src/planted.rs && test ! -e planted \
                 && test \"$(cat README.md)\" = '# demo' \
                 && touch src/leftover.rs && echo junk >> README.md";
    task_with(&repo, "a", check, "src/a.rs");
    repo.task_root(&["merge", "a"]).ok();
    let slot = gate_dir(&repo).join("0");
    let settled = slot.with_extension("settled");
    for _ in 0..400 {
        if settled.exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    assert!(settled.exists(), "the settle wrote its marker");
    // The settle put back what the check changed.
    assert!(!slot.join("src/leftover.rs").exists());
    assert_eq!(repo.read(&slot, "README.md").trim_end(), "# demo");
    // Written into the checkout after the settle: the next run must not see them.
    repo.write(&slot, "src/planted.rs", "// planted\n");
    repo.write(&slot, "planted", "planted\n");
    task_with(&repo, "b", check, "src/b.rs");
    repo.task_root(&["merge", "b"]).ok();
    assert_eq!(repo.git(repo.root(), &["show", "main:src/b.rs"]), "// b");
    assert!(
        !gate_dir(&repo).join("1").exists(),
        "the settled checkout was used again"
    );
    repo.fsck();
}

/// A merge killed while it moved the gate checkout leaves the checkout's `index.lock` (the
/// two-way move holds it in process): the next merge with checks, which holds the slot's own
/// lock, takes it for a leftover and lands, rather than failing on it forever.
#[test]
fn a_lock_a_killed_run_left_in_the_gate_checkout_is_cleared_by_the_next() {
    let repo = TestRepo::new();
    task_with(&repo, "t1", "true", "src/t1.rs");
    task_with(&repo, "t2", "true", "src/t2.rs");
    repo.task_root(&["merge", "t1"]).ok();
    let lock = gate_dir(&repo).join("0.git/index.lock");
    assert!(
        lock.parent().unwrap().is_dir(),
        "the gate checkout's admin dir"
    );
    std::fs::write(&lock, "").unwrap();
    // As old as a lock a killed process left: past the wait for a git still finishing.
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    std::fs::File::options()
        .write(true)
        .open(&lock)
        .unwrap()
        .set_modified(old)
        .unwrap();
    repo.task_root(&["merge", "t2"]).ok();
    assert_eq!(rev(&repo, "main:src/t2.rs").len(), 40);
    assert!(!lock.exists());
}

/// Waits for the settle after a run that passed to write `gate/0.settled`; returns the checkout.
fn settled_slot(repo: &TestRepo) -> PathBuf {
    let slot = gate_dir(repo).join("0");
    let settled = slot.with_extension("settled");
    for _ in 0..400 {
        if settled.exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    assert!(settled.exists(), "the settle wrote its marker");
    slot
}

/// SHA-1 of `bytes` (git's index checksum), from coreutils.
fn sha1(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut child = std::process::Command::new("sha1sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("sha1sum runs");
    child.stdin.take().unwrap().write_all(bytes).unwrap();
    let out = child.wait_with_output().unwrap();
    let hex = String::from_utf8(out.stdout).unwrap();
    hex_bytes(&hex[..40])
}

fn hex_bytes(hex: &str) -> Vec<u8> {
    (0..hex.len() / 2)
        .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

/// Something that can write the gate's index between runs (a check's process knows where it
/// is: beside the checkout) rewrites a tracked file and makes the index vouch for it: the
/// entry keeps the landing's blob id, with the rewritten file's stat data, so `git reset
/// --hard` alone would keep the file. The next run must still see the landing's file.
#[test]
fn a_gate_index_rewritten_between_runs_is_not_trusted() {
    let repo = TestRepo::new();
    let check = "test \"$(cat README.md)\" = '# demo'";
    task_with(&repo, "a", check, "src/a.rs");
    repo.task_root(&["merge", "a"]).ok();
    let slot = settled_slot(&repo);
    let index = slot.with_extension("git").join("index");
    // As long as '# demo\n': the index keeps its size.
    repo.write(&slot, "README.md", "# evil\n");
    // Older than the index git writes next, so that its stat data is not racy.
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(10);
    std::fs::File::options()
        .write(true)
        .open(slot.join("README.md"))
        .unwrap()
        .set_modified(old)
        .unwrap();
    let git_dir = repo.root().join(".git");
    let mut cmd = repo.command("git", &slot);
    cmd.env("GIT_INDEX_FILE", &index)
        .arg(format!("--git-dir={}", git_dir.display()))
        .arg(format!("--work-tree={}", slot.display()))
        .args(["update-index", "README.md"]);
    assert!(cmd.status().unwrap().success());
    let evil = repo.git(
        repo.root(),
        &["hash-object", &slot.join("README.md").to_string_lossy()],
    );
    let demo = rev(&repo, "main:README.md");
    let mut bytes = std::fs::read(&index).unwrap();
    bytes.truncate(bytes.len() - 20);
    let (evil, demo) = (hex_bytes(&evil), hex_bytes(&demo));
    let at = bytes
        .windows(20)
        .position(|w| w == evil.as_slice())
        .expect("the rewritten file's entry");
    bytes[at..at + 20].copy_from_slice(&demo);
    let sum = sha1(&bytes);
    bytes.extend_from_slice(&sum);
    std::fs::write(&index, bytes).unwrap();
    // git itself now sees nothing: the index matches HEAD's tree and vouches for the file.
    for args in [
        &["diff", "--quiet"][..],
        &["diff", "--cached", "--quiet", "HEAD"][..],
    ] {
        let mut cmd = repo.command("git", &slot);
        cmd.env("GIT_INDEX_FILE", &index)
            .arg(format!("--git-dir={}", git_dir.display()))
            .arg(format!("--work-tree={}", slot.display()))
            .args(args);
        assert!(cmd.status().unwrap().success(), "git {args:?}");
    }
    task_with(&repo, "b", check, "src/b.rs");
    repo.task_root(&["merge", "b"]).ok();
    assert_eq!(repo.git(repo.root(), &["show", "main:src/b.rs"]), "// b");
    repo.fsck();
}

/// A landing that changes a `.gitignore` so that a file an earlier check left is no longer
/// ignored: the file is untracked now, and the next run must not see it (the checkout is
/// cleaned under the new rules, not moved path by path).
#[test]
fn a_file_a_gitignore_change_unignores_is_removed_before_the_run() {
    let repo = TestRepo::new();
    repo.write(repo.root(), ".gitignore", "build/\n");
    commit_all(&repo, repo.root(), "ignore build");
    task_with(
        &repo,
        "a",
        "mkdir -p build && echo out > build/out",
        "src/a.rs",
    );
    repo.task_root(&["merge", "a"]).ok();
    let slot = settled_slot(&repo);
    assert!(slot.join("build/out").exists(), "ignored: kept warm");
    let wt = repo.start("b", &["--check", "test ! -e build/out"]);
    repo.write(&wt, ".gitignore", "other/\n");
    repo.write(&wt, "src/b.rs", "// b\n");
    commit_all(&repo, &wt, "Task b");
    repo.task_root(&["merge", "b"]).ok();
    assert_eq!(
        repo.git(repo.root(), &["show", "main:.gitignore"]),
        "other/"
    );
    repo.fsck();
}

/// The same through `info/exclude`, outside the tree: edited after the settle, it makes a file
/// an earlier check left untracked, and the settled look no longer holds.
#[test]
fn a_file_an_exclude_edit_unignores_is_removed_before_the_run() {
    let repo = TestRepo::new();
    let exclude = repo.root().join(".git/info/exclude");
    std::fs::create_dir_all(exclude.parent().unwrap()).unwrap();
    std::fs::write(&exclude, "build/\n").unwrap();
    task_with(
        &repo,
        "a",
        "mkdir -p build && echo out > build/out",
        "src/a.rs",
    );
    repo.task_root(&["merge", "a"]).ok();
    let slot = settled_slot(&repo);
    assert!(slot.join("build/out").exists(), "ignored: kept warm");
    std::fs::write(&exclude, "other/\n").unwrap();
    task_with(&repo, "b", "test ! -e build/out", "src/b.rs");
    repo.task_root(&["merge", "b"]).ok();
    repo.fsck();
}

/// The gate checkout's own config (`gate/<n>.git/config.worktree`, which git and gix read there
/// once `extensions.worktreeConfig` is on) is the agent's to write like any worktree's: a
/// filter set there since the settings were trusted is a change, and the next merge with
/// checks refuses before bringing the checkout to the landing, so the filter never runs.
#[test]
fn a_filter_in_the_gate_checkouts_config_is_a_change() {
    let repo = TestRepo::new();
    repo.git(
        repo.root(),
        &["config", "extensions.worktreeConfig", "true"],
    );
    repo.write(repo.root(), ".gitattributes", "*.txt filter=evil\n");
    commit_all(&repo, repo.root(), "attributes");
    task_with(&repo, "t0", "true", "a.txt");
    repo.task_root(&["merge", "t0"]).ok();
    task_with(&repo, "t1", "true", "b.txt");
    let slot = settled_slot(&repo);
    let marker = repo.root().with_file_name("filter-ran");
    let config = slot.with_extension("git").join("config.worktree");
    repo.git(
        repo.root(),
        &[
            "config",
            "--file",
            config.to_str().unwrap(),
            "filter.evil.smudge",
            &format!("sh -c 'touch {}; cat'", marker.display()),
        ],
    );
    let main = rev(&repo, "main");
    let run = repo.task_root(&["merge", "t1", "--json"]);
    assert_eq!(run.code, 1, "{run}");
    let j = run.json();
    assert_eq!(j["kind"], "config_changed", "{j}");
    assert!(j.to_string().contains("filter.evil.smudge"), "{j}");
    assert_eq!(rev(&repo, "main"), main, "nothing landed");
    assert!(!marker.exists(), "the agent's filter ran");
}
