//! `start --copy-ignored`, `.worktreeinclude` and `start --sparse`.

use crate::common::TestRepo;

fn with_ignored() -> TestRepo {
    let repo = TestRepo::new();
    repo.write(repo.root(), ".gitignore", "node_modules/\ntarget/\n*.log\n");
    repo.git(repo.root(), &["add", ".gitignore"]);
    repo.git(repo.root(), &["commit", "-q", "-m", "ignore"]);
    repo.write(
        repo.root(),
        "node_modules/dep/index.js",
        "module.exports = 1;\n",
    );
    repo.write(repo.root(), "target/debug/app", "binary\n");
    repo.write(repo.root(), "debug.log", "log\n");
    repo
}

/// `--copy-ignored` copies every ignored file, and the copies stay ignored in the task worktree.
#[test]
fn copy_ignored_copies_every_ignored_file() {
    let repo = with_ignored();
    let wt = repo.start("deps", &["--copy-ignored"]);
    assert_eq!(
        repo.read(&wt, "node_modules/dep/index.js"),
        "module.exports = 1;\n"
    );
    assert_eq!(repo.read(&wt, "target/debug/app"), "binary\n");
    assert_eq!(repo.read(&wt, "debug.log"), "log\n");
    assert_eq!(
        repo.porcelain(&wt),
        "",
        "copied files are ignored there too"
    );
    assert_eq!(
        repo.porcelain(repo.root()),
        "",
        "the main worktree is untouched"
    );
}

/// Without the flag nothing ignored is copied, unless a committed `.worktreeinclude` names it.
#[test]
fn worktreeinclude_selects_what_is_copied() {
    let repo = with_ignored();
    let plain = repo.start("plain", &[]);
    assert!(!plain.join("node_modules").exists());
    repo.write(
        repo.root(),
        ".worktreeinclude",
        "# dependencies\nnode_modules\n",
    );
    repo.git(repo.root(), &["add", ".worktreeinclude"]);
    repo.git(repo.root(), &["commit", "-q", "-m", "include"]);
    let wt = repo.start("included", &[]);
    assert_eq!(
        repo.read(&wt, "node_modules/dep/index.js"),
        "module.exports = 1;\n"
    );
    assert!(
        !wt.join("target").exists(),
        "target/ is not named in .worktreeinclude"
    );
    assert!(!wt.join("debug.log").exists());
    let log = repo.task_root(&["log", "included", "--json"]).ok().json();
    let provisioned = log["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["event"] == "provisioned")
        .unwrap();
    assert_eq!(provisioned["details"]["copied_ignored"]["files"], 1);
}

/// `--sparse` checks out only the allowed paths and the contract, and git agrees.
#[test]
fn sparse_checks_out_only_allowed_paths() {
    let repo = TestRepo::new();
    repo.git(repo.root(), &["config", "task.sparseAlways", "README.md"]);
    let wt = repo.start("narrow", &["--sparse", "--allow", "src/store/**"]);
    assert!(wt.join("src/store/mod.rs").exists());
    assert!(wt.join(".task-contract.toml").exists());
    assert!(
        wt.join("README.md").exists(),
        "task.sparseAlways is checked out too"
    );
    assert!(
        !wt.join("src/lib.rs").exists(),
        "paths outside the contract are not checked out"
    );
    assert_eq!(repo.porcelain(&wt), "", "git sees a clean sparse worktree");
    let list = repo.git(&wt, &["sparse-checkout", "list"]);
    assert!(list.lines().any(|l| l == "/src/store/**"), "{list}");
    let skipped = repo.git(&wt, &["ls-files", "-t", "src/lib.rs"]);
    assert_eq!(skipped, "S src/lib.rs");
    assert!(
        repo.root().join("src/lib.rs").exists(),
        "the main worktree stays full"
    );
    assert_eq!(
        repo.git(repo.root(), &["ls-files", "-t", "src/lib.rs"]),
        "H src/lib.rs"
    );
    repo.fsck();
}

/// `--sparse` without allowed paths is bad input and makes nothing.
#[test]
fn sparse_needs_allowed_paths() {
    let repo = TestRepo::new();
    let run = repo.task_root(&["start", "wide", "--sparse"]).code(2);
    assert!(
        run.stderr
            .contains("--sparse needs a contract with allowed paths"),
        "{run}"
    );
    assert!(repo.refs("refs/tasks/").is_empty());
    assert!(!repo.task_dir("wide").exists());
}
