//! `git task list`: one row per task, human and JSON.

use crate::common::TestRepo;
use crate::common::*;
use std::path::PathBuf;

/// Each listed task's id and status, in order.
fn ids_and_statuses(list: &serde_json::Value) -> Vec<(&str, &str)> {
    list["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["id"].as_str().unwrap(), t["status"].as_str().unwrap()))
        .collect()
}

#[test]
fn list_of_no_tasks() {
    let repo = TestRepo::new();
    let run = repo.task_root(&["list"]).ok();
    assert_eq!(run.stdout, "", "{run}");
    assert!(run.stderr.contains("No tasks"), "{run}");
    let j = repo.task_root(&["list", "--json"]).ok().json();
    assert_eq!(
        j,
        serde_json::json!({"schema_version": 1, "kind": "list", "tasks": []})
    );
}

#[test]
fn list_shows_each_task_with_its_state() {
    let repo = TestRepo::new();
    let wt = repo.start("l1", &[]);
    repo.start("l2", &[]);
    repo.write(&wt, "src/new.rs", "// new\n");
    repo.git(&wt, &["add", "src/new.rs"]);
    repo.git(&wt, &["commit", "-q", "-m", "new"]);
    repo.write(&wt, "scratch.txt", "dirty\n");

    let j = repo.task_root(&["list", "--json"]).ok().json();
    assert_eq!(j["kind"], "list");
    let tasks = j["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 2);
    let l1 = &tasks[0];
    assert_eq!(l1["id"], "l1");
    assert_eq!(l1["mode"], "worktree");
    assert_eq!(l1["status"], "active");
    assert_eq!(l1["branch"], "task/l1");
    assert_eq!(l1["base"], "main");
    assert_eq!(l1["base_commit"], rev(&repo, "main").as_str());
    assert_eq!(l1["head"], rev(&repo, "task/l1").as_str());
    assert_eq!(l1["ahead"], 1, "the contract commit is not counted");
    assert_eq!(l1["behind"], 0);
    assert_eq!(l1["changed_files"], 1);
    assert_eq!(l1["dirty"], true);
    assert_eq!(PathBuf::from(l1["path"].as_str().unwrap()), wt);
    let l2 = &tasks[1];
    assert_eq!(l2["id"], "l2");
    assert_eq!(l2["ahead"], 0);
    assert_eq!(l2["changed_files"], 0);
    assert_eq!(l2["dirty"], false);

    // The base moves on: the task is behind.
    repo.write(repo.root(), "more.txt", "more\n");
    repo.git(repo.root(), &["add", "more.txt"]);
    repo.git(repo.root(), &["commit", "-q", "-m", "more"]);
    let j = repo.task_root(&["list", "--json"]).ok().json();
    assert_eq!(j["tasks"][1]["behind"], 1);

    let human = repo.task_root(&["list"]).ok();
    let lines: Vec<&str> = human.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{human}");
    assert!(
        lines[0].starts_with("ID") && lines[0].contains("STATUS") && lines[0].contains("PATH"),
        "{human}"
    );
    assert!(
        lines[1].starts_with("l1 ")
            && lines[1].contains("task/l1")
            && lines[1].contains("active")
            && lines[1].contains("+1/-1"),
        "{human}"
    );
    assert!(lines[1].contains(wt.to_str().unwrap()), "{human}");
}

#[test]
fn list_hides_removed_tasks_unless_all() {
    let repo = TestRepo::new();
    repo.start("gone", &[]);
    repo.start("kept", &[]);
    repo.task_root(&["remove", "gone"]).ok();
    let j = repo.task_root(&["list", "--json"]).ok().json();
    let ids: Vec<&str> = j["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["kept"]);
    let j = repo.task_root(&["list", "--all", "--json"]).ok().json();
    assert_eq!(
        ids_and_statuses(&j),
        [("gone", "removed"), ("kept", "active")]
    );
}

#[test]
fn list_works_from_any_worktree() {
    let repo = TestRepo::new();
    let wt = repo.start("anywhere", &[]);
    let from_task = repo.task(&wt.join("src"), &["list", "--json"]).ok().json();
    let from_main = repo.task_root(&["list", "--json"]).ok().json();
    assert_eq!(from_task, from_main);
    // Through git itself, as users call it.
    let via_git = repo.git(repo.root(), &["task", "list", "--json"]);
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&via_git).unwrap(),
        from_main
    );
}

/// `list` keeps the states it read by record commit: a task whose record moved is read
/// again, a task that is gone leaves the cache, and a damaged cache is only read around.
#[test]
fn list_never_shows_a_stale_cached_state() {
    let repo = TestRepo::new();
    repo.start("a", &[]);
    repo.start("b", &[]);
    let status = |id: &str| -> String {
        let list = repo.task_root(&["list", "--all", "--json"]).ok().json();
        list["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["id"] == id)
            .map(|t| t["status"].as_str().unwrap().to_owned())
            .unwrap_or_default()
    };
    assert_eq!(status("a"), "active");
    let cache = repo.root().join(".git/git-task/states");
    assert_eq!(std::fs::read_to_string(&cache).unwrap().lines().count(), 2);
    repo.task_root(&["drop", "a"]).ok();
    assert_eq!(status("a"), "dropped");
    repo.task_root(&["remove", "--force", "b"]).ok();
    assert_eq!(status("b"), "removed");
    let text = std::fs::read_to_string(&cache).unwrap();
    let tips: Vec<&str> = text.lines().map(|l| &l[..40]).collect();
    let mut want = vec![
        repo.git(repo.root(), &["rev-parse", "refs/tasks/a/record"]),
        repo.git(repo.root(), &["rev-parse", "refs/tasks/b/record"]),
    ];
    want.iter_mut().for_each(|t| *t = t.trim().to_owned());
    assert_eq!(tips, want, "exactly the current record tips");
    std::fs::write(&cache, format!("{} {{not json\ngarbage\n", want[0])).unwrap();
    assert_eq!(status("a"), "dropped");
    assert_eq!(status("b"), "removed");
}

/// Task refs packed by `git pack-refs` (or `git gc`) are found like loose ones, and a
/// directory under refs/tasks without a record is no task.
#[test]
fn list_finds_packed_and_loose_task_refs() {
    let repo = TestRepo::new();
    repo.start("packed", &[]);
    repo.task_root(&["drop", "packed"]).ok();
    repo.git(repo.root(), &["pack-refs", "--all"]);
    assert!(
        !repo.root().join(".git/refs/tasks/packed/record").exists(),
        "git packed the record ref"
    );
    repo.start("loose", &[]);
    std::fs::create_dir_all(repo.root().join(".git/refs/tasks/not-a-task")).unwrap();
    let list = repo.task_root(&["list", "--json"]).ok().json();
    assert_eq!(
        ids_and_statuses(&list),
        [("loose", "active"), ("packed", "dropped")]
    );
}

/// `list` reads refs the way git does: a loose ref wins over its packed copy, a ref only in
/// packed-refs is found, and a symbolic base branch is followed to its target.
#[test]
fn list_reads_refs_as_git_does() {
    let repo = TestRepo::new();
    let a = repo.start("a", &[]);
    repo.start("b", &[]);
    repo.git(
        repo.root(),
        &["symbolic-ref", "refs/heads/trunk", "refs/heads/main"],
    );
    repo.start("c", &["--base", "trunk"]);
    repo.git(repo.root(), &["pack-refs", "--all"]);
    assert!(
        !repo.root().join(".git/refs/heads/task/a").exists(),
        "git packed the branch"
    );
    // A commit after packing writes a loose ref newer than the packed one.
    repo.write(&a, "src/a.rs", "// a\n");
    repo.git(&a, &["add", "src/a.rs"]);
    repo.git(&a, &["commit", "-q", "-m", "a"]);
    assert!(repo.root().join(".git/refs/heads/task/a").exists());
    // The base moves on through the symbolic name.
    repo.write(repo.root(), "more.txt", "more\n");
    repo.git(repo.root(), &["add", "more.txt"]);
    repo.git(repo.root(), &["commit", "-q", "-m", "more"]);

    let j = repo.task_root(&["list", "--json"]).ok().json();
    let tasks = j["tasks"].as_array().unwrap();
    let ids: Vec<&str> = tasks.iter().map(|t| t["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["a", "b", "c"]);
    for t in tasks {
        let branch = t["branch"].as_str().unwrap();
        assert_eq!(t["head"], rev(&repo, branch).as_str(), "{t}");
        assert_eq!(t["behind"], 1, "{t}");
    }
    assert_eq!(tasks[0]["ahead"], 1, "the loose ref's commit is counted");
    assert_eq!(
        tasks[2]["base_tip"],
        rev(&repo, "main").as_str(),
        "trunk is followed to main"
    );
}

/// `list`'s cheap ref reader answers as git does for loose, packed, symbolic, per-worktree
/// and missing refs, and for a loose ref that shadows a packed one.
#[test]
fn the_cheap_ref_reader_agrees_with_git() {
    let repo = crate::common::TestRepo::new();
    let root = repo.root();
    let head = repo.git(root, &["rev-parse", "HEAD"]);
    repo.git(root, &["commit", "-q", "--allow-empty", "-m", "second"]);
    let second = repo.git(root, &["rev-parse", "HEAD"]);
    repo.git(root, &["update-ref", "refs/tasks/p/record", &head]);
    repo.git(root, &["update-ref", "refs/heads/shadowed", &head]);
    repo.git(root, &["pack-refs", "--all"]);
    repo.git(root, &["update-ref", "refs/heads/shadowed", &second]);
    repo.git(root, &["update-ref", "refs/tasks/l/record", &second]);
    repo.git(
        root,
        &["symbolic-ref", "refs/heads/alias", "refs/heads/shadowed"],
    );
    repo.git(root, &["update-ref", "refs/worktree/mine", &head]);
    let git_repo = git_task::testing::git::Repo::discover(root).unwrap();
    let reader = git_task::testing::git::refs::read::RefReader::new(&git_repo);
    for name in [
        "refs/tasks/p/record",
        "refs/tasks/l/record",
        "refs/heads/shadowed",
        "refs/heads/alias",
        "refs/worktree/mine",
        "refs/heads/main",
        "refs/tasks/missing/record",
    ] {
        let want = repo
            .git_run(root, &["rev-parse", "-q", "--verify", name])
            .stdout
            .trim()
            .to_owned();
        let ours = reader.target(name).unwrap().map(|id| id.to_string());
        assert_eq!(ours.unwrap_or_default(), want, "{name}");
    }
}

/// The counts come from the record's base, as at the gate: a base ref moved by hand (here to the
/// task's own tip, which would make every count zero) changes nothing in `list`, `status` or
/// `changes`.
#[test]
fn a_base_ref_moved_by_hand_changes_no_count() {
    let repo = TestRepo::new();
    let wt = repo.start("b1", &[]);
    repo.write(&wt, "src/one.rs", "// one\n");
    repo.write(&wt, "src/two.rs", "// two\n");
    repo.git(&wt, &["add", "-A"]);
    repo.git(&wt, &["commit", "-q", "-m", "two files"]);
    let counts = |repo: &TestRepo| {
        let list = repo.task_root(&["list", "--json"]).ok().json();
        let status = repo.task_root(&["status", "b1", "--json"]).ok().json();
        let changes = repo.task_root(&["changes", "b1", "--json"]).ok().json();
        (
            list["tasks"][0]["changed_files"].clone(),
            list["tasks"][0]["ahead"].clone(),
            status["changed_files"].clone(),
            status["files"].as_array().map(Vec::len),
            changes.to_string().contains("src/two.rs"),
        )
    };
    let before = counts(&repo);
    assert_eq!(before.0, 2, "{before:?}");
    repo.git(&wt, &["update-ref", "refs/tasks/b1/base", "HEAD"]);
    assert_eq!(counts(&repo), before);
}

/// `list` remembers loose refs by their files' stat data (`git-task/refs`) once they are a few
/// seconds old; a ref moved since, by git or by rewriting its file in place, is read again.
#[test]
fn list_reads_a_ref_again_once_it_moved() {
    let repo = TestRepo::new();
    let wt = repo.start("r1", &[]);
    repo.write(&wt, "src/a.rs", "// a\n");
    repo.git(&wt, &["add", "-A"]);
    repo.git(&wt, &["commit", "-q", "-m", "a"]);
    std::thread::sleep(std::time::Duration::from_millis(2200));
    let ahead = |repo: &TestRepo| {
        let j = repo.task_root(&["list", "--all", "--json"]).ok().json();
        (
            j["tasks"][0]["ahead"].clone(),
            j["tasks"][0]["status"].clone(),
        )
    };
    assert_eq!(ahead(&repo), (1.into(), "active".into()));
    let common = repo.git(repo.root(), &["rev-parse", "--git-common-dir"]);
    let common = repo.root().join(common.trim());
    let known = std::fs::read_to_string(common.join("git-task/refs")).unwrap();
    assert!(known.contains(" refs/heads/task/r1\n"), "{known}");
    assert!(known.contains(" refs/tasks/r1/record\n"), "{known}");
    let inode = || {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(common.join("git-task/refs"))
            .unwrap()
            .ino()
    };
    let written = inode();
    assert_eq!(
        ahead(&repo),
        (1.into(), "active".into()),
        "from the stat data"
    );
    assert_eq!(
        inode(),
        written,
        "nothing new: the file is not written again"
    );
    // Moved by git.
    repo.write(&wt, "src/b.rs", "// b\n");
    repo.git(&wt, &["add", "-A"]);
    repo.git(&wt, &["commit", "-q", "-m", "b"]);
    assert_eq!(ahead(&repo), (2.into(), "active".into()));
    // Rewritten in place, same size, same inode.
    std::thread::sleep(std::time::Duration::from_millis(2200));
    assert_eq!(ahead(&repo), (2.into(), "active".into()));
    let parent = repo.git(&wt, &["rev-parse", "HEAD~1"]);
    std::fs::write(common.join("refs/heads/task/r1"), parent).unwrap();
    assert_eq!(ahead(&repo), (1.into(), "active".into()));
    // The record moved.
    repo.task_root(&["drop", "r1"]).ok();
    assert_eq!(ahead(&repo).1, "dropped");
}
