//! `git task sync`: the base's new commits come into the task branch, in its worktree.

use crate::common::commit_all;
use crate::common::TestRepo;

/// New base commits are merged into the task branch; files, base ref and record follow.
#[test]
fn sync_brings_new_base_commits_into_the_task() {
    let repo = TestRepo::new();
    let wt = repo.start("t1", &[]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 1 }\n");
    commit_all(&repo, &wt, "Task edit");
    repo.write(repo.root(), "other.txt", "from main\n");
    commit_all(&repo, repo.root(), "Main moves");
    let main = repo.git(repo.root(), &["rev-parse", "main"]);

    let json = repo.task_root(&["sync", "t1", "--json"]).ok().json();
    assert_eq!(json["kind"], "sync");
    assert_eq!(json["merged"], true);
    assert_eq!(json["base"], main.as_str());
    assert_eq!(repo.read(&wt, "other.txt"), "from main\n");
    assert_eq!(repo.read(&wt, "src/lib.rs"), "pub fn lib() { 1 }\n");
    assert!(wt.join(".task-contract.toml").exists());
    assert_eq!(repo.porcelain(&wt), "");
    assert_eq!(
        repo.git(repo.root(), &["rev-parse", "refs/tasks/t1/base"]),
        main
    );
    let parents = repo.git(repo.root(), &["rev-list", "--parents", "-1", "task/t1"]);
    assert_eq!(parents.split(' ').count(), 3, "a merge commit: {parents}");
    let events = repo.git(repo.root(), &["log", "--format=%s", "refs/tasks/t1/record"]);
    assert_eq!(events.lines().next(), Some("synced"));
    // The task still judges clean against the new base: only its own change counts.
    let merged = repo.task_root(&["merge", "t1", "--json"]).ok().json();
    assert_eq!(merged["tasks"][0]["task"], "t1");
    assert_eq!(repo.read(repo.root(), "src/lib.rs"), "pub fn lib() { 1 }\n");
    repo.fsck();
}

/// Syncing when nothing is new is a no-op.
#[test]
fn sync_is_idempotent() {
    let repo = TestRepo::new();
    let wt = repo.start("t1", &[]);
    let tip = repo.git(repo.root(), &["rev-parse", "task/t1"]);
    let run = repo.task(&wt, &["sync"]).ok();
    assert!(run.stdout.contains("up to date"), "{run}");
    assert_eq!(repo.git(repo.root(), &["rev-parse", "task/t1"]), tip);
    let json = repo.task_root(&["sync", "t1", "--json"]).ok().json();
    assert_eq!(json["changed"], false);
}

/// A conflicting sync leaves git's conflict state with instructions; the base ref stays until it is resolved.
#[test]
fn sync_conflict_leaves_state_to_resolve() {
    let repo = TestRepo::new();
    let wt = repo.start("t1", &[]);
    let old_base = repo.git(repo.root(), &["rev-parse", "refs/tasks/t1/base"]);
    repo.write(&wt, "README.md", "# task\n");
    commit_all(&repo, &wt, "Task edit");
    repo.write(repo.root(), "README.md", "# main\n");
    commit_all(&repo, repo.root(), "Main edit");

    let run = repo.task_root(&["sync", "t1"]).code(1);
    assert!(run.stderr.contains("README.md"), "{run}");
    assert!(run.stderr.contains("git task commit t1"), "{run}");
    assert!(
        repo.porcelain(&wt).contains("UU README.md"),
        "{}",
        repo.porcelain(&wt)
    );
    assert_eq!(
        repo.git(repo.root(), &["rev-parse", "refs/tasks/t1/base"]),
        old_base
    );

    // Running it again before resolving says so.
    let again = repo.task_root(&["sync", "t1", "--json"]).code(1).json();
    assert_eq!(again["merging"], true);

    repo.write(&wt, "README.md", "# both\n");
    commit_all(&repo, &wt, "Resolve");
    let json = repo.task_root(&["sync", "t1", "--json"]).ok().json();
    assert_eq!(json["changed"], true);
    assert_eq!(
        repo.git(repo.root(), &["rev-parse", "refs/tasks/t1/base"]),
        repo.git(repo.root(), &["rev-parse", "main"])
    );
    repo.fsck();
}

/// Uncommitted work in the task worktree is never touched: sync refuses.
#[test]
fn sync_refuses_a_dirty_worktree() {
    let repo = TestRepo::new();
    let wt = repo.start("t1", &[]);
    repo.write(repo.root(), "other.txt", "from main\n");
    commit_all(&repo, repo.root(), "Main moves");
    repo.write(&wt, "src/lib.rs", "// wip\n");
    let tip = repo.git(repo.root(), &["rev-parse", "task/t1"]);
    let run = repo.task_root(&["sync", "t1"]).code(1);
    assert!(run.stderr.contains("uncommitted changes"), "{run}");
    assert_eq!(repo.read(&wt, "src/lib.rs"), "// wip\n");
    assert_eq!(repo.git(repo.root(), &["rev-parse", "task/t1"]), tip);
    assert!(!wt.join("other.txt").exists());
}

/// A conflicting sync's JSON carries the conflicting paths and the steps to finish or abort,
/// each a command that works: the steps to resolve end in a landed task, never in a loop
/// between `sync` and `merge`.
#[test]
fn sync_conflict_json_carries_the_paths_and_the_steps_that_finish_it() {
    let repo = TestRepo::new();
    let wt = repo.start("t1", &[]);
    repo.write(&wt, "README.md", "# task\n");
    commit_all(&repo, &wt, "Task edit");
    repo.write(repo.root(), "README.md", "# main\n");
    commit_all(&repo, repo.root(), "Main edit");

    let json = repo.task_root(&["sync", "t1", "--json"]).code(1).json();
    assert_eq!(json["kind"], "sync_conflict");
    assert_eq!(json["paths"], serde_json::json!(["README.md"]));
    let resolve: Vec<&str> = json["resolve"]
        .as_array()
        .unwrap_or_else(|| panic!("no resolve steps: {json}"))
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    assert!(
        resolve.iter().any(|s| s.contains("git task commit t1")),
        "{json}"
    );
    assert!(
        resolve.iter().any(|s| s.contains("git task merge t1")),
        "{json}"
    );
    assert!(
        json["abort"].as_str().unwrap().contains("merge --abort"),
        "{json}"
    );
    // The human form names the same steps.
    let human = repo.task_root(&["sync", "t1"]).code(1);
    assert!(human.stderr.contains("git task commit t1"), "{human}");

    // Following them: edit, `git task commit`, `git task merge` lands.
    repo.write(&wt, "README.md", "# both\n");
    repo.task(&wt, &["commit"]).ok();
    repo.task_root(&["merge", "t1"]).ok();
    assert_eq!(repo.read(repo.root(), "README.md"), "# both\n");

    // Aborting instead is what `abort` says.
    let wt = repo.start("t2", &[]);
    repo.write(&wt, "README.md", "# t2\n");
    commit_all(&repo, &wt, "t2 edit");
    repo.write(repo.root(), "README.md", "# main again\n");
    commit_all(&repo, repo.root(), "Main edit again");
    let json = repo.task_root(&["sync", "t2", "--json"]).code(1).json();
    let abort: Vec<String> = json["abort"]
        .as_str()
        .unwrap()
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    assert_eq!(abort[0], "git");
    let args: Vec<&str> = abort[1..].iter().map(String::as_str).collect();
    repo.git(repo.root(), &args);
    assert_eq!(repo.porcelain(&wt), "");
    assert_eq!(repo.read(&wt, "README.md"), "# t2\n");
}

/// The conflict markers a stopped sync leaves name the base branch, not a commit id (issue 34,
/// item 9): `>>>>>>> main`.
#[test]
fn sync_conflict_markers_name_the_base_branch() {
    let repo = TestRepo::new();
    let wt = repo.start("marks", &[]);
    repo.write(&wt, "README.md", "# task\n");
    commit_all(&repo, &wt, "task edit");
    repo.write(repo.root(), "README.md", "# main\n");
    commit_all(&repo, repo.root(), "main edit");
    let tip = repo.git(repo.root(), &["rev-parse", "main"]);
    repo.task_root(&["sync", "marks"]).code(1);
    let text = repo.read(&wt, "README.md");
    assert!(text.contains("\n>>>>>>> main\n"), "{text}");
    assert!(!text.contains(&tip), "{text}");
    // git's own state is as git left it: the merge of exactly that commit.
    assert_eq!(repo.git(&wt, &["rev-parse", "MERGE_HEAD"]), tip);
    assert_eq!(
        repo.git(&wt, &["diff", "--name-only", "--diff-filter=U"]),
        "README.md"
    );
}
