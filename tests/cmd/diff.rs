//! `git task diff`: git's unified format, checked by `git apply` and against `git diff` itself.

use crate::common::patch::{chmod_x, write_bytes};
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

/// Text of `lines` lines, line `i` changed where `changed(i)` says so.
fn text(lines: usize, changed: impl Fn(usize) -> bool) -> String {
    (1..=lines)
        .map(|i| {
            if changed(i) {
                format!("changed line {i} of the file\n")
            } else {
                format!("line {i} of the file\n")
            }
        })
        .collect()
}

/// The repository the rename and stat tests share: renames exact and edited, a long path, an
/// executable bit, a binary file; returns (repo, worktree, base commit).
fn renaming_task() -> (TestRepo, std::path::PathBuf, String) {
    let repo = TestRepo::new();
    let root = repo.root().to_path_buf();
    repo.write(&root, "src/engine.rs", &text(40, |_| false));
    repo.write(&root, "docs/guide.md", &text(12, |_| false));
    repo.write(&root, "notes/todo.txt", "a\nb\nc\n");
    repo.write(&root, "tool.sh", "#!/bin/sh\n");
    write_bytes(&root, "data.bin", &[0, 1, 2, 3]);
    repo.git(&root, &["add", "-A"]);
    repo.git(&root, &["commit", "-q", "-m", "files"]);
    let base = repo.git(&root, &["rev-parse", "HEAD"]);
    let wt = repo.start("mv", &[]);
    // Edited after the move (83% alike by git's measure), moved as is, moved into a deep directory.
    repo.git(&wt, &["mv", "src/engine.rs", "src/motor.rs"]);
    repo.write(&wt, "src/motor.rs", &text(40, |i| i % 7 == 0));
    std::fs::create_dir_all(wt.join("docs/manual")).unwrap();
    repo.git(&wt, &["mv", "docs/guide.md", "docs/manual/guide.md"]);
    std::fs::create_dir_all(wt.join("a/very/long/directory/name/that/goes/on/and/on")).unwrap();
    repo.git(
        &wt,
        &[
            "mv",
            "notes/todo.txt",
            "a/very/long/directory/name/that/goes/on/and/on/todo-list-renamed.txt",
        ],
    );
    repo.write(&wt, "src/lib.rs", &text(100, |_| false));
    chmod_x(&wt, "tool.sh", true);
    write_bytes(&wt, "data.bin", &[0, 9, 9]);
    std::fs::remove_file(wt.join("README.md")).unwrap();
    repo.write(&wt, "new.txt", "fresh\n");
    (repo, wt, base)
}

/// Our patch with binary changes' full object ids (which `git apply` needs) cut as git cuts them.
fn abbreviated(patch: &str) -> String {
    patch
        .lines()
        .map(|l| match l.strip_prefix("index ") {
            Some(ids) if ids.len() >= 82 && ids.as_bytes()[40] == b'.' => {
                format!("index {}..{}{}", &ids[..7], &ids[42..49], &ids[82..])
            }
            _ => l.to_owned(),
        })
        .map(|l| l + "\n")
        .collect()
}

/// `git diff <base>` of the worktree, as git prints it, the contract file left out.
fn git_diff(repo: &TestRepo, wt: &std::path::Path, base: &str, flags: &[&str]) -> String {
    repo.git(wt, &["add", "-A"]);
    let mut args = vec!["diff"];
    args.extend_from_slice(flags);
    args.extend_from_slice(&[base, "--", ".", ":!.task-contract.toml"]);
    let out = repo.git(wt, &args);
    if out.is_empty() {
        out
    } else {
        out + "\n"
    }
}

/// `--stat` prints what `git diff --stat` prints for the same trees: per-file lines with the
/// scaled graph, a long name cut with `...`, `Bin` sizes, a mode change as 0, and the summary;
/// with `-M`, renames as `{old => new}`; `--json` carries the same numbers.
#[test]
fn stat_matches_git_diff_stat() {
    let (repo, wt, base) = renaming_task();
    let ours = repo.task(&wt, &["diff", "--stat"]).ok().stdout;
    assert_eq!(
        ours,
        git_diff(&repo, &wt, &base, &["--no-renames", "--stat"])
    );
    let ours = repo.task(&wt, &["diff", "--stat", "-M"]).ok().stdout;
    assert_eq!(ours, git_diff(&repo, &wt, &base, &["-M", "--stat"]));
    assert!(ours.contains("src/{engine.rs => motor.rs}"), "{ours}");
    assert!(ours.contains(" | Bin 4 -> 3 bytes\n"), "{ours}");
    assert!(ours.contains(" ..."), "a long name is cut:\n{ours}");
    // A narrower terminal, as git would draw it there.
    let narrow = |cmd: &mut std::process::Command| {
        cmd.env("COLUMNS", "50");
    };
    let mut ours = repo.command(crate::common::bin(), &wt);
    ours.args(["diff", "--stat", "-M"]);
    narrow(&mut ours);
    let ours = String::from_utf8(ours.output().unwrap().stdout).unwrap();
    let mut git = repo.command("git", &wt);
    git.args([
        "diff",
        "-M",
        "--stat",
        &base,
        "--",
        ".",
        ":!.task-contract.toml",
    ]);
    narrow(&mut git);
    let git = String::from_utf8(git.output().unwrap().stdout).unwrap();
    assert_eq!(ours, git);
    // Paths limit the stat as they limit the patch.
    let only = repo.task(&wt, &["diff", "--stat", "--", "src"]).ok().stdout;
    let mut args = vec!["diff", "--no-renames", "--stat", base.as_str(), "--", "src"];
    let want = repo.git(&wt, &args) + "\n";
    assert_eq!(only, want);
    args.clear();

    let json = repo
        .task(&wt, &["diff", "--stat", "-M", "--json"])
        .ok()
        .json();
    assert_eq!(json["patch"], "");
    let stat = &json["stat"];
    assert_eq!(stat["files_changed"], 8, "{json}");
    let motor = stat["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "src/motor.rs")
        .unwrap();
    assert_eq!(motor["old_path"], "src/engine.rs");
    assert_eq!(
        (motor["insertions"].as_u64(), motor["deletions"].as_u64()),
        (Some(5), Some(5))
    );
    let bin = stat["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "data.bin")
        .unwrap();
    assert_eq!(bin["binary"], true);
    assert_eq!(bin["bytes"], serde_json::json!([4, 3]));
    // No change: no stat at all, as git.
    let clean = repo.start("clean", &[]);
    assert_eq!(repo.task(&clean, &["diff", "--stat"]).ok().stdout, "");
}

/// `-M` pairs renames as `git diff -M` does, byte for byte: `similarity index`, `rename from/to`,
/// a pure move with no hunks; a threshold (`--find-renames=N`) leaves a weaker pair as a deletion
/// and an addition; the patch still applies in reverse.
#[test]
fn renames_match_git_diff_m() {
    let (repo, wt, base) = renaming_task();
    let ours = repo.task(&wt, &["diff", "-M"]).ok().stdout;
    assert_eq!(abbreviated(&ours), git_diff(&repo, &wt, &base, &["-M"]));
    assert!(
        ours.contains("diff --git a/src/engine.rs b/src/motor.rs\nsimilarity index 83%\nrename from src/engine.rs\nrename to src/motor.rs\n"),
        "{ours}"
    );
    assert!(
        ours.contains(
            "similarity index 100%\nrename from docs/guide.md\nrename to docs/manual/guide.md\n"
        ),
        "{ours}"
    );
    let strict = repo.task(&wt, &["diff", "--find-renames=90%"]).ok().stdout;
    assert_eq!(
        abbreviated(&strict),
        git_diff(&repo, &wt, &base, &["-M90%"])
    );
    assert!(strict.contains("deleted file mode 100644\n"), "{strict}");
    assert!(!strict.contains("rename from src/engine.rs"), "{strict}");
    assert_eq!(
        repo.task(&wt, &["diff", "-M=9"]).ok().stdout,
        strict,
        "digits alone are a fraction, as in git"
    );
    // Without -M, no renames (as `git diff --no-renames`).
    let plain = repo.task(&wt, &["diff"]).ok().stdout;
    assert_eq!(
        abbreviated(&plain),
        git_diff(&repo, &wt, &base, &["--no-renames"])
    );
    // The rename patch takes the worktree back to the base.
    let file = repo.base().join("renames.patch");
    std::fs::write(&file, &ours).unwrap();
    repo.git(&wt, &["apply", "--index", "-R", file.to_str().unwrap()]);
    assert_eq!(repo.task(&wt, &["diff", "-M"]).ok().stdout, "");
    // A bad threshold is bad input.
    repo.task(&wt, &["diff", "--find-renames=lots"]).code(2);
}

/// A merged task's diff and changes show what landed on the target, read only (the worktree and
/// branch are gone); a removed task is refused with a hint.
#[test]
fn a_merged_task_shows_what_landed() {
    let (repo, wt, _) = renaming_task();
    repo.task(&wt, &["commit", "-m", "work"]).ok();
    repo.task_root(&["merge", "mv"]).ok();
    let landed = repo.git(repo.root(), &["rev-parse", "HEAD"]);
    let ours = repo.task_root(&["diff", "mv", "-M"]).ok();
    assert_eq!(
        abbreviated(&ours.stdout),
        repo.git(repo.root(), &["diff", "-M", "HEAD~1", "HEAD"]) + "\n"
    );
    assert!(ours.stderr.contains("merged"), "{ours}");
    let stat = repo.task_root(&["diff", "mv", "--stat"]).ok().stdout;
    assert_eq!(
        stat,
        repo.git(
            repo.root(),
            &["diff", "--no-renames", "--stat", "HEAD~1", "HEAD"]
        ) + "\n"
    );
    let json = repo.task_root(&["diff", "mv", "--json"]).ok().json();
    assert_eq!(json["landed_on"], "refs/heads/main");
    let changes = repo.task_root(&["changes", "mv", "--json"]).ok().json();
    let files = changes["files"].as_array().unwrap();
    let motor = files.iter().find(|f| f["path"] == "src/motor.rs").unwrap();
    assert_eq!(motor["status"], "renamed");
    assert!(files.iter().all(|f| f["path"] != ".task-contract.toml"));
    assert_eq!(files.len(), 8, "{changes}");
    // Read only: nothing moved.
    assert_eq!(repo.git(repo.root(), &["rev-parse", "HEAD"]), landed);
    repo.fsck();

    repo.task_root(&["remove", "mv"]).ok();
    let refused = repo.task_root(&["diff", "mv"]).code(2);
    assert!(refused.stderr.contains("is removed"), "{refused}");
    assert!(refused.stderr.contains("hint: "), "{refused}");
    // A task removed with its work saved: the hint names the attempt that holds it.
    let wt = repo.start("gone", &[]);
    repo.write(&wt, "README.md", "# unfinished\n");
    repo.task_root(&["remove", "gone", "--force"]).ok();
    for cmd in ["diff", "changes"] {
        let refused = repo.task_root(&[cmd, "gone"]).code(2);
        assert!(refused.stderr.contains("nothing to show"), "{refused}");
        assert!(
            refused
                .stderr
                .contains("git show --stat refs/tasks/gone/attempts/1"),
            "{refused}"
        );
    }
}
