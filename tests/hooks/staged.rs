//! The staged-changes walk against git as the oracle: `git diff --cached --name-status --no-renames`.

use crate::common::TestRepo;
use git_task::testing::git::index::{cachetree, file, staged};
use git_task::testing::git::Repo;
use std::path::Path;

/// `git diff --cached` as (status letter, path) pairs, sorted by path (a type change counts as a modification).
fn oracle(repo: &TestRepo, dir: &Path) -> Vec<(char, String)> {
    let out = repo.git(dir, &["diff", "--cached", "--name-status", "--no-renames"]);
    let mut rows: Vec<(char, String)> = out
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| {
            let (status, path) = l.split_once('\t').unwrap();
            let status = match status.chars().next().unwrap() {
                'T' => 'M',
                c => c,
            };
            (status, path.to_owned())
        })
        .collect();
    rows.sort_by(|a, b| a.1.cmp(&b.1));
    rows
}

/// The walk's answer, with the cached-tree extension as the index has it and with it removed.
type Rows = Vec<(char, String)>;

fn ours(dir: &Path) -> (Rows, Rows) {
    let repo = Repo::discover(dir).unwrap();
    let head = repo
        .head_commit()
        .unwrap()
        .map(|c| git_task::testing::git::objects::commit_tree(&repo, c).unwrap());
    let index = file::open_index(&repo, &repo.index_path()).unwrap();
    let rows = |state: &gix::index::State| -> Vec<(char, String)> {
        staged::changes(&repo, state, head)
            .unwrap()
            .into_iter()
            .map(|c| (letter(c.kind), c.path))
            .collect()
    };
    let with = rows(&index);
    let mut without = index.clone();
    without.remove_tree();
    (with, rows(&without))
}

/// Compares with git as `git add` leaves the index (cached tree invalidated along staged paths), then
/// after `git write-tree` has made every cached tree valid again, as `git commit` does before its hook.
#[track_caller]
fn assert_matches_git(repo: &TestRepo, dir: &Path, what: &str) {
    let want = oracle(repo, dir);
    let (with, without) = ours(dir);
    assert_eq!(with, want, "{what}: with the cached tree");
    assert_eq!(without, want, "{what}: without the cached tree");
    assert_eq!(read_staged(dir), want, "{what}: read_staged");
    repo.git(dir, &["write-tree"]);
    // (An intent-to-add entry keeps its directories' cached trees invalid.)
    if has_cached_tree(dir) {
        assert_eq!(
            ours(dir).0,
            want,
            "{what}: with a fully valid cached tree that differs from HEAD"
        );
        assert!(root_tree_known(dir), "{what}: the fast path applies");
        assert_eq!(
            read_staged(dir),
            want,
            "{what}: read_staged from the cached root tree"
        );
    }
}

/// What the hook uses: the cached root tree when valid, else the walk.
fn read_staged(dir: &Path) -> Vec<(char, String)> {
    let repo = Repo::discover(dir).unwrap();
    let staged = git_task::testing::changes::read_staged(&repo).unwrap();
    staged
        .changes
        .into_iter()
        .map(|c| (letter(c.kind), c.path))
        .collect()
}

fn root_tree_known(dir: &Path) -> bool {
    cached_root(dir).is_some()
}

/// The root of the cached tree of the index of the repository at `dir`, as git-task reads it.
fn cached_root(dir: &Path) -> Option<String> {
    let repo = Repo::discover(dir).unwrap();
    cachetree::cached_root_tree(&repo.index_path(), gix::hash::Kind::Sha1)
        .unwrap()
        .map(|t| t.to_string())
}

fn letter(kind: git_task::testing::git::diff::ChangeKind) -> char {
    match kind {
        git_task::testing::git::diff::ChangeKind::Added => 'A',
        git_task::testing::git::diff::ChangeKind::Modified => 'M',
        git_task::testing::git::diff::ChangeKind::Deleted => 'D',
    }
}

fn has_cached_tree(dir: &Path) -> bool {
    let repo = Repo::discover(dir).unwrap();
    let index = file::open_index(&repo, &repo.index_path()).unwrap();
    index.tree().is_some_and(|t| t.num_entries.is_some())
}

#[test]
fn staged_changes_match_git_diff_cached() {
    let repo = TestRepo::new();
    let root = repo.root().to_path_buf();
    for i in 0..30 {
        repo.write(
            &root,
            &format!("deep/a{}/b{}/f{i}.txt", i % 3, i % 5),
            &format!("{i}\n"),
        );
    }
    repo.write(&root, "foo.c", "c\n")
        .write(&root, "foo/x", "x\n")
        .write(&root, "foo-bar", "-\n");
    repo.git(&root, &["add", "-A"]);
    repo.git(&root, &["commit", "-q", "-m", "more"]);
    assert!(
        has_cached_tree(&root),
        "a commit leaves a valid cached tree"
    );
    assert_matches_git(&repo, &root, "nothing staged");

    repo.write(&root, "deep/a1/b1/f1.txt", "changed\n");
    repo.git(&root, &["add", "-A"]);
    assert_matches_git(&repo, &root, "one deep modification");

    repo.write(&root, "new/dir/file.rs", "new\n");
    repo.git(&root, &["rm", "-r", "-q", "deep/a2"]);
    repo.git(&root, &["add", "-A"]);
    assert_matches_git(&repo, &root, "a new directory and a removed one");

    // A file becomes a directory and a directory becomes a file.
    repo.git(&root, &["rm", "-q", "foo.c"]);
    repo.write(&root, "foo.c/inner", "now a dir\n");
    repo.git(&root, &["rm", "-r", "-q", "foo"]);
    repo.write(&root, "foo", "now a file\n");
    repo.git(&root, &["add", "-A"]);
    assert_matches_git(&repo, &root, "file <-> directory");

    // Mode change, symlink, rename, intent-to-add.
    repo.git(&root, &["update-index", "--chmod=+x", "README.md"]);
    #[cfg(unix)]
    std::os::unix::fs::symlink("src/store", root.join("link")).unwrap();
    repo.git(&root, &["mv", "src/lib.rs", "src/store/lib.rs"]);
    repo.write(&root, "later.txt", "i-t-a\n");
    repo.git(&root, &["add", "link"]);
    repo.git(&root, &["add", "-N", "later.txt"]);
    assert_matches_git(&repo, &root, "mode, symlink, rename, intent-to-add");

    repo.git(&root, &["commit", "-q", "-m", "all of it"]);
    assert_matches_git(&repo, &root, "after the commit");
    repo.git(&root, &["rm", "-r", "-q", "--cached", "."]);
    assert_matches_git(&repo, &root, "everything unstaged");
}

#[test]
fn unborn_branch_stages_everything_as_added() {
    let repo = TestRepo::empty();
    let root = repo.root().to_path_buf();
    repo.write(&root, "a/b.txt", "b\n")
        .write(&root, "c.txt", "c\n");
    repo.git(&root, &["add", "-A"]);
    assert_matches_git(&repo, &root, "unborn");
}

#[test]
fn a_submodule_change_is_a_change_of_its_path() {
    let repo = TestRepo::new();
    let root = repo.root().to_path_buf();
    let head = repo.git(&root, &["rev-parse", "HEAD"]);
    repo.git(
        &root,
        &[
            "update-index",
            "--add",
            "--cacheinfo",
            &format!("160000,{head},vendor/sub"),
        ],
    );
    assert_matches_git(&repo, &root, "gitlink added");
    repo.git(&root, &["commit", "-q", "-m", "gitlink"]);
    repo.git(
        &root,
        &[
            "update-index",
            "--cacheinfo",
            &format!(
                "160000,{},vendor/sub",
                repo.git(&root, &["rev-parse", "HEAD~1"])
            ),
        ],
    );
    assert_matches_git(&repo, &root, "gitlink moved");
}

#[test]
fn check_staged_reads_the_index_git_hands_over() {
    let repo = TestRepo::new();
    let wt = repo.start("t", &["--forbid", "src/store/**"]);
    // The worktree's own index is clean; a temporary index holds a forbidden change.
    repo.write(&wt, "src/store/mod.rs", "// edited\n");
    let tmp_index = repo.base().join("tmp-index");
    let mut cmd = repo.command("git", &wt);
    cmd.env("GIT_INDEX_FILE", &tmp_index)
        .args(["read-tree", "HEAD"]);
    assert!(cmd.status().unwrap().success());
    let mut cmd = repo.command("git", &wt);
    cmd.env("GIT_INDEX_FILE", &tmp_index)
        .args(["add", "src/store/mod.rs"]);
    assert!(cmd.status().unwrap().success());

    let j = repo.task(&wt, &["check", "--staged", "--json"]).ok().json();
    assert_eq!(j["kind"], "contract_ok", "{j}");
    let mut cmd = repo.command(crate::common::bin(), &wt);
    cmd.env("GIT_INDEX_FILE", &tmp_index)
        .args(["check", "--staged", "--json"]);
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["violations"][0]["file"], "src/store/mod.rs", "{j}");
}

#[test]
fn every_index_version_is_read() {
    let repo = TestRepo::new();
    let root = repo.root().to_path_buf();
    for version in ["2", "3", "4"] {
        repo.git(&root, &["update-index", "--index-version", version]);
        repo.write(&root, &format!("v{version}/a.txt"), version);
        repo.git(&root, &["add", "-A"]);
        if version == "3" {
            // An extended flag makes the entry two bytes longer.
            repo.write(&root, "ita.txt", "x\n");
            repo.git(&root, &["add", "-N", "ita.txt"]);
        }
        assert_matches_git(&repo, &root, &format!("index version {version}"));
        if version == "3" {
            repo.git(&root, &["rm", "-q", "--cached", "ita.txt"]);
        }
        repo.git(&root, &["commit", "-q", "-m", version]);
        assert!(
            root_tree_known(&root),
            "version {version}: a commit leaves a valid cached root"
        );
        assert_matches_git(&repo, &root, &format!("index version {version}, committed"));
    }
}

#[test]
fn the_cached_root_tree_is_what_git_would_commit() {
    let repo = TestRepo::new();
    let root = repo.root().to_path_buf();
    let blob = {
        let mut cmd = repo.command("git", &root);
        cmd.args(["hash-object", "-w", "--stdin"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        use std::io::Write;
        child.stdin.take().unwrap().write_all(b"long\n").unwrap();
        String::from_utf8(child.wait_with_output().unwrap().stdout)
            .unwrap()
            .trim()
            .to_owned()
    };
    // A path longer than the 12-bit length field (only in the index: too long for the file system).
    let long = format!("x/{}/f", vec!["d".repeat(199); 21].join("/"));
    repo.git(
        &root,
        &[
            "update-index",
            "--add",
            "--cacheinfo",
            &format!("100644,{blob},{long}"),
        ],
    );
    for version in ["2", "3", "4"] {
        repo.git(&root, &["update-index", "--index-version", version]);
        repo.write(&root, &format!("v{version}.txt"), version);
        repo.git(&root, &["add", "-A"]);
        assert!(
            !root_tree_known(&root),
            "version {version}: staging invalidates the root"
        );
        let tree = repo.git(&root, &["write-tree"]);
        assert_eq!(cached_root(&root), Some(tree), "version {version}");
    }
}

/// An index of several hundred kilobytes is read in chunks: entries, long paths among them
/// and the extensions are found across chunk boundaries, in every index version.
#[test]
fn the_cached_root_tree_is_found_in_a_big_index() {
    let repo = TestRepo::new();
    let root = repo.root().to_path_buf();
    let blob = repo.git(&root, &["rev-parse", "HEAD:src/lib.rs"]);
    let blob = blob.trim();
    let mut info = String::new();
    for i in 0..6000 {
        info.push_str(&format!(
            "100644 {blob}\tbulk/d{:02}/file-{i:05}.rs\n",
            i % 97
        ));
        if i % 50 == 0 {
            // Longer than the 12-bit length field: it ends at its NUL.
            let long = format!("long/{i:05}/{}", vec!["p".repeat(199); 21].join("/"));
            info.push_str(&format!("100644 {blob}\t{long}\n"));
        }
    }
    // Entries with extended flags (skip-worktree) have a two bytes longer header, which
    // changes their padded length for some path lengths: every length modulo 8 is there.
    let extended: Vec<String> = (0..64)
        .map(|i| format!("ext/{i:02}-{}", "e".repeat(i % 8)))
        .collect();
    for path in &extended {
        info.push_str(&format!("100644 {blob}\t{path}\n"));
    }
    let mut cmd = repo.command("git", &root);
    cmd.args(["update-index", "--index-info"])
        .stdin(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(info.as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success());
    let skipped: Vec<String> = (0..6000)
        .step_by(7)
        .map(|i| format!("bulk/d{:02}/file-{i:05}.rs", i % 97))
        .chain(extended)
        .collect();
    let mut args = vec!["update-index", "--skip-worktree"];
    args.extend(skipped.iter().map(String::as_str));
    repo.git(&root, &args);
    for version in ["2", "3", "4"] {
        repo.git(&root, &["update-index", "--index-version", version]);
        let tree = repo.git(&root, &["write-tree"]);
        let size = std::fs::metadata(root.join(".git/index")).unwrap().len();
        assert!(
            size > 3 << 18,
            "version {version}: {size} bytes is several chunks"
        );
        assert_eq!(cached_root(&root), Some(tree), "version {version}");
    }
}
