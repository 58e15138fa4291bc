//! `git task commit`: only eligible changes are committed; nothing eligible is exit 1.

use crate::common::TestRepo;
use crate::common::*;

/// Forbidden paths, `task.autoCommitExclude` directories and ignored files stay out of the commit.
#[test]
fn commit_takes_only_eligible_changes() {
    let repo = TestRepo::new();
    let wt = repo.start("cm", &["--forbid", "src/store/**"]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 2 }\n");
    repo.write(&wt, "docs/new.md", "new\n");
    repo.write(&wt, "src/store/mod.rs", "// forbidden\n");
    repo.write(&wt, "node_modules/pkg/index.js", "junk\n");
    repo.write(&wt, "build/out.txt", "artifact\n");
    repo.write(&wt, ".gitignore", "*.log\n");
    repo.write(&wt, "trace.log", "ignored\n");
    let run = repo
        .task(&wt, &["commit", "-m", "task work", "--json"])
        .ok();
    let json = run.json();
    assert_eq!(json["kind"], "commit");
    assert_eq!(json["committed"], true);
    assert_eq!(
        json["files"],
        serde_json::json!([".gitignore", "docs/new.md", "src/lib.rs"])
    );
    let skipped: Vec<(&str, &str)> = json["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["path"].as_str().unwrap(), s["reason"].as_str().unwrap()))
        .collect();
    assert_eq!(
        skipped,
        [
            ("build/out.txt", "excluded"),
            ("node_modules/pkg/index.js", "excluded"),
            ("src/store/mod.rs", "forbidden")
        ]
    );
    assert_eq!(json["commit"], repo.git(&wt, &["rev-parse", "HEAD"]));
    let committed = repo.git(&wt, &["show", "--format=", "--name-only", "HEAD"]);
    assert_eq!(committed, ".gitignore\ndocs/new.md\nsrc/lib.rs");
    assert!(repo
        .git(&wt, &["log", "-1", "--format=%B"])
        .contains("Task-Id: cm"));
    // The index matches the commit for what was committed; the rest is untouched and unstaged.
    assert_eq!(
        repo.porcelain(&wt),
        " M src/store/mod.rs\n?? build/out.txt\n?? node_modules/pkg/index.js"
    );
    repo.fsck();
}

/// Nothing eligible: exit 1 with a message, no commit.
#[test]
fn commit_with_nothing_eligible_exits_1() {
    let repo = TestRepo::new();
    let wt = repo.start("ne", &["--forbid", "src/store/**"]);
    let head = repo.git(&wt, &["rev-parse", "HEAD"]);
    let empty = repo.task(&wt, &["commit"]).code(1);
    assert!(empty.stderr.contains("nothing"), "{empty}");
    repo.write(&wt, "src/store/mod.rs", "// forbidden\n");
    repo.write(&wt, "target/debug/x", "excluded\n");
    let run = repo.task(&wt, &["commit", "--json"]).code(1);
    let json = run.json();
    assert_eq!(json["committed"], false);
    assert_eq!(json["violations"][0]["file"], "src/store/mod.rs");
    assert_eq!(repo.git(&wt, &["rev-parse", "HEAD"]), head);
}

/// In patch mode `commit` commits on the checked-out branch, judged against the task's contract.
#[test]
fn patch_commit_commits_on_the_current_branch() {
    let repo = TestRepo::new();
    let root = repo.root().to_path_buf();
    repo.task_root(&["start", "--mode", "patch", "pm", "--allow", "src/**"])
        .ok();
    repo.write(&root, "src/lib.rs", "pub fn lib() { 3 }\n");
    repo.write(&root, "README.md", "outside the allowed paths\n");
    let run = repo.task_root(&["commit", "--json"]).ok();
    assert_eq!(run.json()["files"], serde_json::json!(["src/lib.rs"]));
    assert_eq!(run.json()["branch"], "refs/heads/main");
    assert_eq!(repo.porcelain(&root), " M README.md");
}

/// `test-results/` and `coverage/` (test runners' output) are left out by default, like `target/`.
#[test]
fn commit_leaves_test_results_and_coverage_out_by_default() {
    let repo = TestRepo::new();
    let wt = repo.start("tr", &[]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 4 }\n");
    repo.write(&wt, "test-results/junit.xml", "<testsuites/>\n");
    repo.write(&wt, "coverage/lcov.info", "TN:\n");
    let json = repo.task(&wt, &["commit", "--json"]).ok().json();
    assert_eq!(json["files"], serde_json::json!(["src/lib.rs"]));
    let skipped: Vec<(&str, &str)> = json["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["rule"].as_str().unwrap(), s["reason"].as_str().unwrap()))
        .collect();
    assert_eq!(
        skipped,
        [("coverage/", "excluded"), ("test-results/", "excluded")]
    );
    assert_eq!(
        repo.git(&wt, &["show", "--format=", "--name-only", "HEAD"]),
        "src/lib.rs"
    );
    assert_eq!(
        repo.porcelain(&wt),
        "?? coverage/lcov.info\n?? test-results/junit.xml"
    );
}

/// A worktree parked on another branch or a detached HEAD: `commit` refuses (exit 1, kind
/// `worktree_not_on_branch`, a hint naming `git switch task/<id>`), and no branch moves.
#[test]
fn commit_refuses_a_worktree_not_on_the_task_branch() {
    let repo = TestRepo::new();
    let wt = repo.start("nb", &[]);
    let tip = repo.git(&wt, &["rev-parse", "task/nb"]);
    repo.git(&wt, &["switch", "-q", "-c", "other"]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 5 }\n");
    let run = repo.task(&wt, &["commit", "nb"]).code(1);
    assert!(
        run.stderr.contains("not on its branch 'task/nb'") && run.stderr.contains("on 'other'"),
        "{run}"
    );
    assert!(
        run.stderr.contains("git switch task/nb") || run.stderr.contains("switch task/nb"),
        "{run}"
    );
    assert!(!run.stderr.contains("Committed"), "{run}");
    let json = repo.task(&wt, &["commit", "nb", "--json"]).code(1).json();
    assert_eq!(json["kind"], "worktree_not_on_branch");
    assert!(
        json["hints"][0]
            .as_str()
            .unwrap()
            .contains("switch task/nb"),
        "{json}"
    );
    assert_eq!(repo.git(&wt, &["rev-parse", "other"]), tip);
    repo.git(&wt, &["switch", "-q", "--detach", "task/nb"]);
    let detached = repo.task(&wt, &["commit", "nb"]).code(1);
    assert!(detached.stderr.contains("detached at"), "{detached}");
    assert_eq!(repo.git(&wt, &["rev-parse", "HEAD"]), tip);
    assert_eq!(repo.git(&wt, &["rev-parse", "task/nb"]), tip);
    // Back on the branch, it commits.
    repo.git(&wt, &["switch", "-q", "task/nb"]);
    repo.task(&wt, &["commit", "nb"]).ok();
    assert_ne!(repo.git(&wt, &["rev-parse", "task/nb"]), tip);
}

/// A commit appends `committed`; nothing eligible (changes all left out) appends `blocked`,
/// which `status` shows; nothing changed at all appends nothing.
#[test]
fn commit_records_committed_and_blocked_events() {
    let repo = TestRepo::new();
    let wt = repo.start("ev", &["--forbid", "src/store/**"]);
    repo.task(&wt, &["commit"]).code(1);
    assert_eq!(events(&repo, "ev").last().unwrap(), "provisioned");
    repo.write(&wt, "src/store/mod.rs", "// forbidden\n");
    repo.task(&wt, &["commit"]).code(1);
    assert_eq!(events(&repo, "ev").last().unwrap(), "blocked");
    let log = repo.task_root(&["log", "ev", "--json"]).ok().json();
    let last = log["events"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["details"]["during"], "commit");
    assert_eq!(last["details"]["skipped"][0]["path"], "src/store/mod.rs");
    assert_eq!(last["details"]["skipped"][0]["reason"], "forbidden");
    let status = repo.task_root(&["status", "ev"]).ok();
    assert!(
        status
            .stdout
            .contains("blocked     commit: nothing eligible, 1 changed path left out"),
        "{status}"
    );
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 6 }\n");
    let json = repo.task(&wt, &["commit", "--json"]).ok().json();
    assert_eq!(events(&repo, "ev").last().unwrap(), "committed");
    let log = repo.task_root(&["log", "ev", "--json"]).ok().json();
    let last = log["events"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["details"]["commit"], json["commit"]);
    assert_eq!(last["details"]["branch"], "refs/heads/task/ev");
    assert_eq!(last["details"]["files"], serde_json::json!(["src/lib.rs"]));
    assert_eq!(
        last["details"]["skipped"],
        serde_json::json!(["src/store/mod.rs"])
    );
    repo.fsck();
}

/// A task allowed `src/**` whose sync conflicts on `src/lib.rs` while the base also brought
/// `other.txt`: returns the worktree, with git's conflict state left in it.
fn conflicted_sync(repo: &TestRepo) -> std::path::PathBuf {
    let wt = repo.start("t1", &["--allow", "src/**"]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 1 }\n");
    commit_all(repo, &wt, "Task edit");
    repo.write(repo.root(), "src/lib.rs", "pub fn lib() { 2 }\n");
    repo.write(repo.root(), "other.txt", "from main\n");
    commit_all(repo, repo.root(), "Main edit");
    repo.task_root(&["sync", "t1"]).code(1);
    assert!(wt.join(".git").exists());
    assert!(
        repo.porcelain(&wt).contains("UU src/lib.rs"),
        "{}",
        repo.porcelain(&wt)
    );
    wt
}

/// The git dir of a linked worktree.
fn git_dir_of(repo: &TestRepo, wt: &std::path::Path) -> std::path::PathBuf {
    std::path::PathBuf::from(repo.git(wt, &["rev-parse", "--absolute-git-dir"]))
}

/// During a conflicted `sync`, `git task commit` concludes the merge: a commit with the task
/// tip and the base tip as parents, holding the base's own changes (outside the task's
/// contract) and the resolution; git's merge state is gone, the new base is recorded, and the
/// task then merges: `sync` and `merge` never send the user back and forth.
#[test]
fn commit_concludes_a_conflicted_sync_with_two_parents() {
    let repo = TestRepo::new();
    let wt = conflicted_sync(&repo);
    let task_tip = repo.git(&wt, &["rev-parse", "HEAD"]);
    let main = repo.git(repo.root(), &["rev-parse", "main"]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 12 }\n");

    let json = repo.task(&wt, &["commit", "--json"]).ok().json();
    assert_eq!(json["committed"], true, "{json}");
    let commit = json["commit"].as_str().unwrap().to_owned();
    assert_eq!(repo.git(&wt, &["rev-parse", "task/t1"]), commit);
    let parents = repo.git(&wt, &["rev-list", "--parents", "-1", &commit]);
    assert_eq!(parents, format!("{commit} {task_tip} {main}"));
    assert_eq!(
        repo.git(&wt, &["show", &format!("{commit}:other.txt")]),
        "from main"
    );
    assert_eq!(
        repo.git(&wt, &["show", &format!("{commit}:src/lib.rs")]),
        "pub fn lib() { 12 }"
    );
    assert!(repo
        .git(&wt, &["log", "-1", "--format=%B", &commit])
        .contains("Task-Id: t1"));
    assert!(!git_dir_of(&repo, &wt).join("MERGE_HEAD").exists());
    assert_eq!(repo.porcelain(&wt), "");
    // The new base is recorded: the task's changes are its own again.
    assert_eq!(repo.git(&wt, &["rev-parse", "refs/tasks/t1/base"]), main);
    let changes = repo.task_root(&["changes", "t1", "--json"]).ok().stdout;
    assert!(!changes.contains("other.txt"), "{changes}");
    // Sync has nothing left to do, and the task lands.
    let sync = repo.task_root(&["sync", "t1", "--json"]).ok().json();
    assert_eq!(sync["changed"], false, "{sync}");
    let merged = repo.task_root(&["merge", "t1", "--json"]).ok().json();
    assert_eq!(merged["tasks"][0]["task"], "t1", "{merged}");
    assert_eq!(
        repo.read(repo.root(), "src/lib.rs"),
        "pub fn lib() { 12 }\n"
    );
    repo.fsck();
}

/// A conflict still marked in a file is never committed as the resolution: `commit` refuses
/// (exit 1), names the path, says how to finish (or to use `git commit`), and changes nothing.
#[test]
fn commit_refuses_to_conclude_a_merge_with_conflict_markers_left() {
    let repo = TestRepo::new();
    let wt = conflicted_sync(&repo);
    let task_tip = repo.git(&wt, &["rev-parse", "HEAD"]);
    let before = repo.porcelain(&wt);

    let run = repo.task(&wt, &["commit", "--json"]).code(1);
    let json = run.json();
    assert_eq!(json["kind"], "unresolved_conflicts", "{run}");
    assert!(
        json["message"].as_str().unwrap().contains("src/lib.rs"),
        "{run}"
    );
    let human = repo.task(&wt, &["commit"]).code(1);
    assert!(human.stderr.contains("src/lib.rs"), "{human}");
    assert!(human.stderr.contains("git commit"), "{human}");
    assert!(human.stderr.contains("merge --abort"), "{human}");
    assert_eq!(repo.git(&wt, &["rev-parse", "task/t1"]), task_tip);
    assert!(git_dir_of(&repo, &wt).join("MERGE_HEAD").exists());
    assert_eq!(repo.porcelain(&wt), before);
}

/// The MCP `commit` tool runs the same code: it concludes the merge too.
#[test]
fn the_mcp_commit_tool_concludes_a_conflicted_sync() {
    let repo = TestRepo::new();
    let wt = conflicted_sync(&repo);
    let main = repo.git(repo.root(), &["rev-parse", "main"]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 12 }\n");
    let mut mcp = super::mcp::Session::open(&repo, &wt);
    let (error, doc, result) = mcp.call("commit", serde_json::json!({"id": "t1"}));
    assert!(!error, "{result}");
    assert_eq!(doc["committed"], true, "{doc}");
    mcp.close();
    let tip = repo.git(&wt, &["rev-parse", "task/t1"]);
    let parents = repo.git(&wt, &["rev-list", "--parents", "-1", &tip]);
    assert!(parents.ends_with(&main), "{parents}");
    assert_eq!(parents.split(' ').count(), 3, "{parents}");
    assert!(!git_dir_of(&repo, &wt).join("MERGE_HEAD").exists());
}
