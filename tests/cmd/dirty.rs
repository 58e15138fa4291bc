//! The DIRTY column of `list`: tracked changes, staged or not, found without a full status.

use crate::common::TestRepo;

fn dirty(repo: &TestRepo, id: &str) -> serde_json::Value {
    let list = repo.task_root(&["list", "--json"]).ok().json();
    let task = list["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == id)
        .cloned()
        .unwrap();
    task["dirty"].clone()
}

/// A fresh task is clean; an edit of the same size in the same second is still seen; undoing it is clean again.
#[test]
fn list_sees_unstaged_edits_even_when_racy() {
    let repo = TestRepo::new();
    let wt = repo.start("t", &[]);
    assert_eq!(dirty(&repo, "t"), false);
    assert_eq!(
        dirty(&repo, "t"),
        false,
        "a second look (from the clean memo) agrees"
    );
    let before = repo.read(&wt, "src/lib.rs");
    let same_size: String = before.chars().rev().collect();
    assert_eq!(same_size.len(), before.len());
    repo.write(&wt, "src/lib.rs", &same_size);
    assert_eq!(dirty(&repo, "t"), true);
    repo.write(&wt, "src/lib.rs", &before);
    assert_eq!(dirty(&repo, "t"), false);
}

/// Staged changes, deletions and untracked files count; ignored files do not; `status` agrees.
#[test]
fn list_counts_staged_deleted_and_untracked_files() {
    let repo = TestRepo::new();
    let wt = repo.start("t", &[]);
    assert_eq!(dirty(&repo, "t"), false);
    repo.write(&wt, "src/store/new.rs", "untracked\n");
    assert_eq!(
        dirty(&repo, "t"),
        true,
        "a new file in a tracked directory is seen after a clean look"
    );
    let status = repo.task_root(&["status", "t", "--json"]).ok().json();
    assert_eq!(status["dirty"], true);
    std::fs::remove_file(wt.join("src/store/new.rs")).unwrap();
    assert_eq!(dirty(&repo, "t"), false);
    repo.write(&wt, "deep/er/new.txt", "untracked\n");
    assert_eq!(dirty(&repo, "t"), true, "a new untracked directory is seen");
    std::fs::remove_dir_all(wt.join("deep")).unwrap();
    assert_eq!(dirty(&repo, "t"), false);
    let exclude = repo.git(
        &wt,
        &[
            "rev-parse",
            "--path-format=absolute",
            "--git-path",
            "info/exclude",
        ],
    );
    std::fs::write(exclude, "*.tmp\n").unwrap();
    repo.write(&wt, "src/scratch.tmp", "ignored\n");
    assert_eq!(dirty(&repo, "t"), false, "ignored files are not changes");
    repo.write(&wt, "new.txt", "untracked\n");
    repo.git(&wt, &["add", "new.txt"]);
    assert_eq!(dirty(&repo, "t"), true, "a staged new file is a change");
    repo.git(&wt, &["rm", "-q", "--cached", "new.txt"]);
    std::fs::remove_file(wt.join("new.txt")).unwrap();
    assert_eq!(dirty(&repo, "t"), false);
    std::fs::remove_file(wt.join("README.md")).unwrap();
    assert_eq!(dirty(&repo, "t"), true, "a deleted file is a change");
    repo.git(&wt, &["checkout", "--", "README.md"]);
    repo.git(&wt, &["commit", "-q", "--allow-empty", "-m", "moves HEAD"]);
    assert_eq!(
        dirty(&repo, "t"),
        false,
        "a new HEAD with a matching index is clean"
    );
}

/// The clean memo depends on `core.excludesFile`, whose default is under `HOME`: this test
/// process and the git-task it runs have different ones, unless the repository sets it.
fn same_ignore_files_here_and_in_git_task(repo: &TestRepo) {
    let file = repo.base().join("excludes");
    repo.git(
        repo.root(),
        &["config", "core.excludesFile", file.to_str().unwrap()],
    );
}

/// The quick look at the worktree `wt`, whose HEAD is `head` (with tree `tree`, if known).
fn quick_look(
    wt: &std::path::Path,
    repo: &git_task::testing::git::Repo,
    head: git_task::testing::git::ObjectId,
    tree: Option<git_task::testing::git::ObjectId>,
) -> git_task::testing::git::status::dirty::Quick {
    use git_task::testing::git::status::dirty::{quick_check, DotGit, Place};
    let dot_git = DotGit::read(wt);
    let place = Place {
        path: wt,
        git_dir: dot_git.git_dir(),
        anchors: &Default::default(),
    };
    quick_check(place, head, repo.ignore_files(), None, || tree, |_| None)
}

/// `start` remembers its fresh checkout as clean, so the first look needs no full status;
/// a change made afterwards is still seen.
#[test]
fn a_fresh_worktree_is_known_clean_from_stat_data() {
    use git_task::testing::git::status::dirty::Quick;
    let repo = TestRepo::new();
    same_ignore_files_here_and_in_git_task(&repo);
    let wt = repo.start("fresh", &[]);
    let git_repo = git_task::testing::git::Repo::discover(&wt).unwrap();
    let head = git_repo.head_commit().unwrap().unwrap();
    let look = || quick_look(&wt, &git_repo, head, None);
    assert!(
        matches!(look(), Quick::Clean(_)),
        "the memo written by start is used"
    );
    repo.write(&wt, "src/store/new.rs", "new\n");
    assert!(
        matches!(look(), Quick::NeedsFull(_)),
        "a new file changes its directory"
    );
    std::fs::remove_file(wt.join("src/store/new.rs")).unwrap();
    repo.write(&wt, "README.md", "# changed, longer than before\n");
    assert!(matches!(look(), Quick::Dirty), "a changed file is seen");
    assert_eq!(dirty(&repo, "fresh"), true);
}

/// After a commit (a new index and HEAD) the look still needs no full status while no
/// directory changed; a file that stops being tracked while it stays on disk is untracked, and seen.
#[test]
fn a_commit_keeps_the_quick_look_and_an_untracked_file_is_seen() {
    use git_task::testing::git::status::dirty::Quick;
    let repo = TestRepo::new();
    same_ignore_files_here_and_in_git_task(&repo);
    let wt = repo.start("c", &[]);
    let before = repo.read(&wt, "src/lib.rs");
    repo.write(&wt, "src/lib.rs", &format!("{before}// more\n"));
    repo.git(&wt, &["commit", "-q", "-am", "edit in place"]);
    let git_repo = git_task::testing::git::Repo::discover(&wt).unwrap();
    let head = git_repo.head_commit().unwrap().unwrap();
    let tree = git_task::testing::git::objects::commit_tree(&git_repo, head).unwrap();
    let look = || quick_look(&wt, &git_repo, head, Some(tree));
    assert!(
        matches!(look(), Quick::Clean(_)),
        "an in-place edit, committed, needs no full status"
    );
    repo.git(&wt, &["rm", "-q", "--cached", "README.md"]);
    repo.git(&wt, &["commit", "-q", "-m", "untrack README"]);
    let git_repo = git_task::testing::git::Repo::discover(&wt).unwrap();
    let head = git_repo.head_commit().unwrap().unwrap();
    let tree = git_task::testing::git::objects::commit_tree(&git_repo, head).unwrap();
    assert!(matches!(
        quick_look(&wt, &git_repo, head, Some(tree)),
        Quick::NeedsFull(_)
    ));
    assert_eq!(dirty(&repo, "c"), true, "README.md is untracked now");
}

/// Once a look found the worktree clean, the next look answers from the stat data of the
/// paths it remembered, without reading the index: every kind of change must still be
/// seen there, and `git status` is the oracle.
#[test]
fn every_change_after_a_clean_look_is_seen() {
    type Change = fn(&TestRepo, &std::path::Path);
    let changes: &[(&str, Change)] = &[
        ("same-size edit", |r, wt| {
            let text = r.read(wt, "src/store/mod.rs");
            r.write(
                wt,
                "src/store/mod.rs",
                &text.chars().rev().collect::<String>(),
            );
        }),
        ("deletion", |_, wt| {
            std::fs::remove_file(wt.join("src/lib.rs")).unwrap()
        }),
        ("untracked file deep down", |r, wt| {
            r.write(wt, "src/store/new.rs", "new\n");
        }),
        ("untracked directory at the top", |r, wt| {
            r.write(wt, "newdir/a.txt", "a\n");
        }),
        ("executable bit", |_, wt| {
            use std::os::unix::fs::PermissionsExt;
            let f = wt.join("src/lib.rs");
            std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o755)).unwrap();
        }),
        ("file replaced by a symlink", |_, wt| {
            let f = wt.join("src/lib.rs");
            std::fs::remove_file(&f).unwrap();
            std::os::unix::fs::symlink("store/mod.rs", &f).unwrap();
        }),
        (
            "directory replaced by a symlink to its moved copy",
            |_, wt| {
                // Every file is still there through the link, with the same stat data.
                std::fs::rename(wt.join("src/store"), wt.join("moved")).unwrap();
                std::os::unix::fs::symlink("../moved", wt.join("src/store")).unwrap();
            },
        ),
        ("staged change", |r, wt| {
            r.write(wt, "README.md", "# staged\n");
            r.git(wt, &["add", "README.md"]);
        }),
        // `deep` and `deep/er` hold only directories.
        (
            "untracked file in a directory holding only a directory",
            |r, wt| {
                r.write(wt, "deep/new.txt", "new\n");
            },
        ),
        ("untracked file one level lower", |r, wt| {
            r.write(wt, "deep/er/new.txt", "new\n");
        }),
        (
            "such a directory replaced by a symlink, mtimes put back",
            |_, wt| {
                let (deep, root) = (wt.join("deep"), wt.to_path_buf());
                let mtime = |p: &std::path::Path| std::fs::metadata(p).unwrap().modified().unwrap();
                let (deep_mtime, root_mtime) = (mtime(&deep), mtime(&root));
                std::fs::rename(wt.join("deep/er"), wt.join("moved")).unwrap();
                std::os::unix::fs::symlink("../moved", wt.join("deep/er")).unwrap();
                for (dir, t) in [(deep, deep_mtime), (root, root_mtime)] {
                    std::fs::File::open(dir).unwrap().set_modified(t).unwrap();
                }
            },
        ),
    ];
    let repo = TestRepo::new();
    repo.write(repo.root(), "deep/er/still/file.txt", "deep\n");
    repo.git(repo.root(), &["add", "deep"]);
    repo.git(repo.root(), &["commit", "-q", "-m", "deep"]);
    for (n, (what, change)) in changes.iter().enumerate() {
        let id = format!("c{n}");
        let wt = repo.start(&id, &[]);
        assert_eq!(dirty(&repo, &id), false, "{what}: fresh");
        assert_eq!(dirty(&repo, &id), false, "{what}: remembered");
        change(&repo, &wt);
        assert!(
            !repo.git(&wt, &["status", "--porcelain"]).is_empty(),
            "{what}: git sees a change"
        );
        assert_eq!(dirty(&repo, &id), true, "{what}: list sees it");
    }
}

/// A worktree too big to keep its paths in the memo, checked on several threads:
/// clean is clean, and one change anywhere is seen. 5,400 files (more than the memo keeps,
/// 4,096, and than one thread takes, 2,048); `slow::scale` checks 18,000.
#[test]
fn a_big_worktree_is_checked_in_parts() {
    big_worktree_is_checked_in_parts(12);
}

/// [`a_big_worktree_is_checked_in_parts`] with `dirs` directories of 450 files.
pub(crate) fn big_worktree_is_checked_in_parts(dirs: usize) {
    let repo = TestRepo::new();
    for d in 0..dirs {
        for f in 0..450 {
            let path = repo.root().join(format!("big/d{d:02}/f{f:03}.txt"));
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, format!("{d} {f}\n")).unwrap();
        }
    }
    repo.git(repo.root(), &["add", "-A"]);
    repo.git(repo.root(), &["commit", "-q", "-m", "big"]);
    let wt = repo.start("big", &[]);
    assert_eq!(dirty(&repo, "big"), false);
    assert_eq!(dirty(&repo, "big"), false);
    let d = dirs - 1;
    let last = format!("big/d{d:02}/f449.txt");
    repo.write(
        &wt,
        &last,
        format!("{d} 449\n")
            .chars()
            .rev()
            .collect::<String>()
            .as_str(),
    );
    assert_eq!(dirty(&repo, "big"), true, "an edit in the last part");
    repo.write(&wt, &last, &format!("{d} 449\n"));
    repo.git(&wt, &["status", "--porcelain"]);
    assert_eq!(dirty(&repo, "big"), false, "undone");
    repo.write(&wt, "big/d00/new.txt", "new\n");
    assert_eq!(
        dirty(&repo, "big"),
        true,
        "an untracked file in the first part"
    );
}

/// A file that was ignored at the last clean look is untracked once no rule ignores it
/// any more, though nothing in the worktree changed: after a committed `.gitignore`
/// change, an `info/exclude` edit, or a `core.excludesFile` edit. `git status` is the oracle.
#[test]
fn a_file_no_longer_ignored_is_seen() {
    let repo = TestRepo::new();
    let global = repo.base().join("global-ignore");
    std::fs::write(&global, "*.bak\n").unwrap();
    repo.git(
        repo.root(),
        &["config", "core.excludesFile", global.to_str().unwrap()],
    );
    let exclude = repo.root().join(".git/info/exclude");
    std::fs::create_dir_all(exclude.parent().unwrap()).unwrap();
    std::fs::write(&exclude, "*.tmp\n").unwrap();
    type Unignore = fn(&TestRepo, &std::path::Path, &std::path::Path, &std::path::Path);
    let cases: &[(&str, &str, Unignore)] = &[
        ("committed .gitignore", "x.log", |r, wt, _, _| {
            r.write(wt, ".gitignore", "# nothing ignored\n");
            r.git(wt, &["commit", "-q", "-am", "stop ignoring logs"]);
        }),
        ("info/exclude", "x.tmp", |_, _, exclude, _| {
            std::fs::write(exclude, "# nothing\n").unwrap();
        }),
    ];
    for (n, (what, file, unignore)) in cases.iter().enumerate() {
        let id = format!("i{n}");
        let wt = repo.start(&id, &[]);
        repo.write(&wt, ".gitignore", "*.log\n");
        repo.git(&wt, &["add", ".gitignore"]);
        repo.git(&wt, &["commit", "-q", "-m", "ignore logs"]);
        repo.write(&wt, file, "ignored for now\n");
        assert_eq!(repo.git(&wt, &["status", "--porcelain"]), "", "{what}");
        assert_eq!(dirty(&repo, &id), false, "{what}: ignored");
        assert_eq!(dirty(&repo, &id), false, "{what}: remembered");
        unignore(&repo, &wt, &exclude, &global);
        assert!(
            repo.git(&wt, &["status", "--porcelain"]).contains(file),
            "{what}: git sees {file} now"
        );
        assert_eq!(dirty(&repo, &id), true, "{what}: list sees {file}");
        repo.task_root(&["remove", &id]).code(1);
        assert!(
            wt.join(file).exists(),
            "{what}: remove refuses to lose {file}"
        );
    }
}

/// The user's own ignore file (`core.excludesFile`, or git's default in the config home) never
/// hides untracked work from git-task: "is there work to lose?" counts only the repository's
/// `.gitignore` files and `info/exclude` (SPEC §2 principle 8: an agent can set the config).
#[test]
fn the_user_ignore_file_in_the_config_home_never_hides_work() {
    let repo = TestRepo::new();
    let wt = repo.start("t", &[]);
    repo.write(&wt, "debug.log", "noise\n");
    let config_home = repo.base().join("xdg");
    std::fs::create_dir_all(config_home.join("git")).unwrap();
    std::fs::write(config_home.join("git/ignore"), "*.log\n").unwrap();
    let mut git = repo.command("git", &wt);
    git.env("XDG_CONFIG_HOME", &config_home);
    let out = git.args(["status", "--porcelain"]).output().unwrap();
    assert_eq!(
        String::from_utf8(out.stdout).unwrap().trim(),
        "",
        "git ignores it"
    );
    let mut cmd = repo.command(crate::common::bin(), repo.root());
    cmd.env("XDG_CONFIG_HOME", &config_home);
    let out = cmd.args(["list", "--json"]).output().unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["tasks"][0]["dirty"], true, "{v}");
}

/// An edit that keeps the size and the mtime (as an edit within the file system's timestamp
/// granularity does; here the mtime is put back exactly) is still dirty, both on the first
/// look and once the clean look was remembered; `git status` agrees. The file's mtime is
/// well before the index's, so nothing is racily clean: only the ctime tells.
#[test]
fn same_size_same_mtime_edit_is_dirty() {
    let repo = TestRepo::new();
    for remembered in [false, true] {
        let id = format!("m{}", remembered as u8);
        let wt = repo.start(&id, &[]);
        let file = wt.join("src/store/mod.rs");
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        let set_mtime = |t| {
            std::fs::File::options()
                .write(true)
                .open(&file)
                .unwrap()
                .set_modified(t)
                .unwrap()
        };
        set_mtime(old);
        // git refreshes the index with the old mtime (and writes it a second later: not racy).
        std::thread::sleep(std::time::Duration::from_millis(1100));
        repo.git(&wt, &["update-index", "--refresh"]);
        assert_eq!(repo.porcelain(&wt), "");
        if remembered {
            assert_eq!(dirty(&repo, &id), false);
            assert_eq!(dirty(&repo, &id), false);
        }
        let text = repo.read(&wt, "src/store/mod.rs");
        let edited: String = text.chars().rev().collect();
        assert_eq!(edited.len(), text.len());
        repo.write(&wt, "src/store/mod.rs", &edited);
        set_mtime(old);
        assert_eq!(std::fs::metadata(&file).unwrap().modified().unwrap(), old);
        assert_eq!(dirty(&repo, &id), true, "remembered: {remembered}");
        assert_eq!(dirty(&repo, &id), true, "again, remembered: {remembered}");
        assert!(!repo.porcelain(&wt).is_empty(), "git sees the edit");
    }
}

/// The private git dir's memo file of `wt`, where the quick look remembers a clean worktree.
fn memo_file(repo: &TestRepo, wt: &std::path::Path) -> std::path::PathBuf {
    let git_dir = repo.git(wt, &["rev-parse", "--absolute-git-dir"]);
    std::path::PathBuf::from(git_dir.trim()).join("git-task-clean")
}

/// `list` keeps what it knew of every worktree (its `.git` and clean memo) in one file, and
/// answers from it without the memo file; an edit made since is still seen.
#[test]
fn list_answers_from_its_own_copy_of_the_memos() {
    let repo = TestRepo::new();
    let wt = repo.start("k", &[]);
    assert_eq!(dirty(&repo, "k"), false);
    let common = repo.git(repo.root(), &["rev-parse", "--git-common-dir"]);
    let copy = repo.root().join(common.trim()).join("git-task/clean");
    let text = std::fs::read_to_string(&copy).unwrap();
    assert!(text.contains(wt.to_str().unwrap()), "{text}");
    // Without the memo file, the answer comes from the copy: no full status, so no new memo file.
    std::fs::remove_file(memo_file(&repo, &wt)).unwrap();
    assert_eq!(dirty(&repo, "k"), false);
    assert!(!memo_file(&repo, &wt).exists(), "answered from the copy");
    let text = repo.read(&wt, "src/lib.rs");
    repo.write(&wt, "src/lib.rs", &text.chars().rev().collect::<String>());
    assert_eq!(dirty(&repo, "k"), true);
    repo.write(&wt, "src/lib.rs", &text);
    assert_eq!(dirty(&repo, "k"), false);
    // A damaged copy only costs speed.
    std::fs::write(&copy, "W \tgarbage\nT x\n\t\t\t\n").unwrap();
    assert_eq!(dirty(&repo, "k"), false);
    repo.write(&wt, "src/new.rs", "new\n");
    assert_eq!(dirty(&repo, "k"), true);
}

/// A worktree whose `.git` file now names another private git dir is judged by that one, as
/// git does, not by the one the copy remembers.
#[test]
fn a_rewritten_dot_git_is_read_again() {
    let repo = TestRepo::new();
    let one = repo.start("one", &[]);
    let two = repo.start("two", &[]);
    repo.write(&two, "src/lib.rs", "// two's own\n");
    repo.git(&two, &["commit", "-q", "-am", "two"]);
    assert_eq!(dirty(&repo, "one"), false);
    assert_eq!(dirty(&repo, "one"), false);
    std::fs::copy(two.join(".git"), one.join(".git")).unwrap();
    assert!(
        !repo.porcelain(&one).is_empty(),
        "git judges one by two's index"
    );
    assert_eq!(dirty(&repo, "one"), true);
}
