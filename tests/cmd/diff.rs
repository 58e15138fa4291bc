//! `git task diff`: git's unified format, checked by `git apply` and against `git diff` itself.

use super::patch_support::{chmod_x, write_bytes};
use crate::common::TestRepo;

/// The diff of every kind of change applies in reverse to the task's worktree.
#[test]
fn diff_applies_in_reverse() {
    let repo = TestRepo::new();
    let root = repo.root().to_path_buf();
    write_bytes(&root, "data.bin", &[0, 1, 2, 3]);
    repo.write(&root, "tool.sh", "#!/bin/sh\n");
    repo.write(
        &root,
        "long.txt",
        &(1..40).map(|i| format!("line {i}\n")).collect::<String>(),
    );
    repo.git(&root, &["add", "-A"]);
    repo.git(&root, &["commit", "-q", "-m", "more"]);
    let wt = repo.start("df", &[]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() {}\npub fn more() {}\n");
    repo.write(
        &wt,
        "long.txt",
        &(1..40)
            .map(|i| {
                if i == 5 || i == 30 {
                    format!("changed {i}\n")
                } else {
                    format!("line {i}\n")
                }
            })
            .collect::<String>(),
    );
    write_bytes(&wt, "data.bin", &[0, 9, 9]);
    write_bytes(&wt, "new.bin", &[0, 1]);
    chmod_x(&wt, "tool.sh", true);
    std::fs::remove_file(wt.join("README.md")).unwrap();
    write_bytes(&wt, "no-eol.txt", b"no newline");
    repo.write(&wt, "empty.txt", "");
    repo.git(&wt, &["add", "src/lib.rs"]);

    let run = repo.task(&wt, &["diff"]).ok();
    let patch = run.stdout.clone();
    assert!(
        patch.contains("diff --git a/src/lib.rs b/src/lib.rs\n"),
        "{patch}"
    );
    assert!(patch.contains("--- /dev/null\n+++ b/no-eol.txt\n@@ -0,0 +1 @@\n+no newline\n\\ No newline at end of file\n"), "{patch}");
    assert!(patch.contains("deleted file mode 100644"), "{patch}");
    assert!(
        patch.contains("old mode 100644\nnew mode 100755\n"),
        "{patch}"
    );
    assert!(
        patch.contains("Binary files a/data.bin and b/data.bin differ"),
        "{patch}"
    );
    assert!(
        patch.contains("Binary files /dev/null and b/new.bin differ"),
        "{patch}"
    );
    assert!(!patch.contains(".task-contract.toml"), "{patch}");
    assert_eq!(
        patch.matches("@@ -").count(),
        5,
        "two hunks in long.txt:\n{patch}"
    );
    let file = repo.base().join("task.patch");
    std::fs::write(&file, &patch).unwrap();
    repo.git(&wt, &["apply", "--check", "-R", file.to_str().unwrap()]);
    // And it really reverses: applied in reverse, the worktree is back at the base (plus the contract file).
    repo.git(&wt, &["apply", "-R", file.to_str().unwrap()]);
    let left = repo.task(&wt, &["diff"]).ok();
    assert_eq!(left.stdout, "");

    let json = repo.task(&wt, &["diff", "--json"]).ok().json();
    assert_eq!(json["kind"], "diff");
    assert_eq!(json["task"], "df");
    assert_eq!(json["patch"], "");
}

/// For tracked changes the output is byte for byte what `git diff` prints: text hunks with
/// function context, a mode change, and changes of type (file to link and back).
#[test]
fn diff_matches_git_diff() {
    let repo = TestRepo::new();
    let root = repo.root().to_path_buf();
    repo.write(
        &root,
        "src/lib.rs",
        &(1..30)
            .map(|i| format!("fn f{i}() {{}}\n"))
            .collect::<String>(),
    );
    std::os::unix::fs::symlink("src/lib.rs", root.join("link")).unwrap();
    repo.git(&root, &["add", "-A"]);
    repo.git(&root, &["commit", "-q", "-m", "longer"]);
    repo.task_root(&["start", "--mode", "patch", "gd"]).ok();
    repo.write(
        &root,
        "src/lib.rs",
        &(1..30)
            .map(|i| {
                if i % 9 == 0 {
                    format!("fn g{i}() {{}}\n")
                } else {
                    format!("fn f{i}() {{}}\n")
                }
            })
            .collect::<String>(),
    );
    repo.write(&root, "README.md", "# demo\nmore\n");
    std::fs::remove_file(root.join("link")).unwrap();
    repo.write(&root, "link", "now a file\n");
    std::fs::remove_file(root.join("src/store/mod.rs")).unwrap();
    std::os::unix::fs::symlink("../lib.rs", root.join("src/store/mod.rs")).unwrap();
    chmod_x(&root, "src/lib.rs", true);
    let ours = repo.task_root(&["diff"]).ok().stdout;
    let git = repo.git(&root, &["diff", "HEAD"]) + "\n";
    assert_eq!(ours, git);
    let only = repo.task_root(&["diff", "--", "README.md"]).ok().stdout;
    assert_eq!(
        only,
        repo.git(&root, &["diff", "HEAD", "--", "README.md"]) + "\n"
    );
}

/// Paths are relative to the current directory inside the task's worktree, as in git.
#[test]
fn paths_are_relative_to_the_current_directory() {
    let repo = TestRepo::new();
    let wt = repo.start("sub", &[]);
    repo.write(&wt, "src/lib.rs", "edited\n");
    repo.write(&wt, "README.md", "edited\n");
    let src = wt.join("src");
    let run = repo.task(&src, &["diff", "--", "lib.rs"]).ok();
    assert!(
        run.stdout
            .starts_with("diff --git a/src/lib.rs b/src/lib.rs\n"),
        "{run}"
    );
    assert!(!run.stdout.contains("README.md"), "{run}");
    repo.task(&src, &["revert", "--path", "lib.rs"]).ok();
    assert_eq!(repo.read(&wt, "src/lib.rs"), "pub fn lib() {}\n");
    assert_eq!(repo.read(&wt, "README.md"), "edited\n");
    // From outside the worktree, paths are repository paths.
    let all = repo.task_root(&["diff", "sub", "--", "README.md"]).ok();
    assert!(
        all.stdout
            .starts_with("diff --git a/README.md b/README.md\n"),
        "{all}"
    );
}
