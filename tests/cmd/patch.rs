//! `git task start --mode patch` and the patch-mode round trip: start, random edits, revert.

use crate::common::patch::{chmod_x, files, picture, tracked, write_bytes, Entry, Rng};
use crate::common::TestRepo;
use crate::common::{assert_one_new_pack, pack_everything};
use std::path::Path;

/// Builds a committed tree with every kind of file, then a random dirty state on top of it.
fn dirty_repo(rng: &mut Rng) -> TestRepo {
    let repo = TestRepo::new();
    let root = repo.root().to_path_buf();
    repo.write(&root, ".gitignore", "*.log\nignored/\n");
    for (i, dir) in ["a", "a/b", "c", "d/e/f"].iter().enumerate() {
        for j in 0..3 {
            let lines = 3 + rng.below(12);
            repo.write(&root, &format!("{dir}/f{i}{j}.txt"), &rng.text(lines));
        }
    }
    write_bytes(&root, "bin/data.bin", &[0, 1, 2, 3, 255, 0, 7]);
    repo.write(&root, "run.sh", "#!/bin/sh\necho hi\n");
    chmod_x(&root, "run.sh", true);
    std::os::unix::fs::symlink("a/f000.txt", root.join("link")).unwrap();
    for name in ["gone.txt", "mv-src.txt", "staged-del.txt", "no-newline.txt"] {
        repo.write(&root, name, &format!("{name}\n{}", rng.text(4)));
    }
    write_bytes(&root, "no-newline.txt", b"no newline at the end");
    repo.git(&root, &["add", "-A"]);
    repo.git(&root, &["commit", "-q", "-m", "fixture"]);

    // The user's own uncommitted work, every kind of it.
    let files: Vec<String> = tracked(&repo, &root)
        .into_iter()
        .filter(|p| p.ends_with(".txt") && p.contains('/'))
        .collect();
    let staged = rng.pick(&files).unwrap().clone();
    repo.write(&root, &staged, &rng.text(5));
    repo.git(&root, &["add", "--", &staged]);
    let both = files[(files.iter().position(|f| *f == staged).unwrap() + 1) % files.len()].clone();
    repo.write(&root, &both, &rng.text(6));
    repo.git(&root, &["add", "--", &both]);
    repo.write(
        &root,
        &both,
        &format!("{}unstaged on top\n", repo.read(&root, &both)),
    );
    let unstaged =
        files[(files.iter().position(|f| *f == staged).unwrap() + 2) % files.len()].clone();
    repo.write(&root, &unstaged, &rng.text(7));
    std::fs::remove_file(root.join("gone.txt")).unwrap();
    repo.git(&root, &["rm", "-q", "staged-del.txt"]);
    repo.git(&root, &["mv", "mv-src.txt", "mv-dst.txt"]);
    repo.write(&root, "u/untracked.txt", &rng.text(3));
    repo.write(&root, "top-untracked.txt", &rng.text(2));
    repo.write(&root, "new-staged.txt", &rng.text(2));
    repo.git(&root, &["add", "new-staged.txt"]);
    repo.write(&root, "x.log", "ignored log\n");
    repo.write(&root, "ignored/deep/i.txt", "ignored file\n");
    chmod_x(&root, "c/f20.txt", true);
    write_bytes(&root, "bin/data.bin", &[0, 9, 9, 9]);
    repo.git(&root, &["add", "bin/data.bin"]);
    repo
}

/// Applies random edits as a task would; never touches ignored paths or `.gitignore`.
fn random_edits(repo: &TestRepo, rng: &mut Rng, allow_commit: bool) {
    let root = repo.root().to_path_buf();
    let editable = |root: &Path| -> Vec<String> {
        files(root)
            .into_keys()
            .filter(|p| !p.ends_with(".log") && !p.starts_with("ignored/") && p != ".gitignore")
            .collect()
    };
    let mut committed = false;
    let steps = 6 + rng.below(10);
    for step in 0..steps {
        let existing = editable(&root);
        match rng.below(13) {
            9 => {
                let target = rng
                    .pick(&existing)
                    .cloned()
                    .unwrap_or_else(|| "nowhere".into());
                std::os::unix::fs::symlink(target, root.join(format!("lnk-{step}"))).unwrap();
            }
            10 => {
                // A file becomes a directory.
                if let Some(p) = rng.pick(&existing) {
                    std::fs::remove_file(root.join(p)).unwrap();
                    repo.write(&root, &format!("{p}/inner.txt"), "was a file\n");
                }
            }
            11 => {
                let candidates = tracked(repo, &root);
                if let Some(p) = rng.pick(&candidates) {
                    repo.git(&root, &["rm", "-q", "-f", "--cached", "--", p]);
                }
            }
            12 => {
                let candidates = tracked(repo, &root);
                if let Some(p) = rng.pick(&candidates) {
                    if p != ".gitignore"
                        && repo.git_run(&root, &["diff", "--quiet", "--", p]).code == 0
                    {
                        repo.git(&root, &["mv", "--", p, &format!("moved-{step}.txt")]);
                    }
                }
            }
            0 | 1 => {
                if let Some(p) = rng.pick(&existing) {
                    write_bytes(&root, p, rng.text(4).as_bytes());
                }
            }
            2 => {
                if let Some(p) = rng.pick(&existing) {
                    std::fs::remove_file(root.join(p)).unwrap();
                }
            }
            3 => {
                let dir = ["", "a/", "t/", "z/q/", "d/e/"][rng.below(5)];
                repo.write(&root, &format!("{dir}task-new-{step}.txt"), &rng.text(3));
            }
            4 => {
                if let Some(p) = rng.pick(&existing) {
                    if std::fs::symlink_metadata(root.join(p)).unwrap().is_file() {
                        chmod_x(&root, p, rng.chance(50));
                    }
                }
            }
            5 => {
                if let Some(p) = rng.pick(&existing) {
                    write_bytes(&root, p, &[0, (step % 250) as u8, 1, 2]);
                }
            }
            6 => {
                repo.git(&root, &["add", "-A"]);
            }
            7 if allow_commit && !committed => {
                repo.git(&root, &["add", "-A"]);
                repo.git(
                    &root,
                    &["commit", "-q", "--allow-empty", "-m", "task commit"],
                );
                committed = true;
            }
            _ => {
                if let Some(p) = rng.pick(&existing) {
                    let mut bytes = std::fs::read(root.join(p)).unwrap_or_default();
                    bytes.extend_from_slice(b"appended by the task\n");
                    write_bytes(&root, p, &bytes);
                }
            }
        }
    }
    if allow_commit && !committed {
        // The task commits at least once: revert must move HEAD back.
        repo.write(&root, "committed-by-task.txt", "c\n");
        repo.git(&root, &["add", "-A"]);
        repo.git(&root, &["commit", "-q", "-m", "task commit"]);
        write_bytes(&root, "after-commit.txt", b"more\n");
    }
}

/// The round trip: a random dirty state, a patch task, random edits, `revert`: HEAD, index,
/// `git diff`, `git diff --cached` and every file's bytes and mode are as before, ignored files
/// untouched, and the attempt holds the random edits.
#[test]
fn patch_round_trip_restores_everything() {
    // More seeds on demand: GIT_TASK_ROUND_TRIP_SEEDS=200 cargo test patch_round_trip
    let extra: u64 = std::env::var("GIT_TASK_ROUND_TRIP_SEEDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let seeds: Vec<u64> = [1_u64, 7, 42, 1234]
        .into_iter()
        .chain(10_000..10_000 + extra)
        .collect();
    for seed in seeds {
        let mut rng = Rng::new(seed);
        let repo = dirty_repo(&mut rng);
        let root = repo.root().to_path_buf();
        let before = picture(&repo, &root);
        repo.task_root(&["start", "--mode", "patch", "rt"]).ok();
        assert_eq!(
            picture(&repo, &root),
            before,
            "seed {seed}: start changed the worktree"
        );

        random_edits(&repo, &mut rng, seed % 2 == 1);
        let edited: Vec<(String, Entry)> = files(&root)
            .into_iter()
            .filter(|(p, _)| !p.ends_with(".log") && !p.starts_with("ignored/"))
            .collect();
        let task_head = repo.git(&root, &["rev-parse", "HEAD"]);

        let run = repo.task_root(&["revert", "--json"]).ok();
        let json = run.json();
        let attempt = json["attempt"]["ref"]
            .as_str()
            .unwrap_or_else(|| panic!("seed {seed}: no attempt: {run}"))
            .to_owned();
        assert!(attempt.starts_with("refs/tasks/rt/attempts/"), "{run}");

        let after = picture(&repo, &root);
        assert_eq!(
            after, before,
            "seed {seed}: revert did not restore the state"
        );

        // The attempt holds exactly the edited files, bytes and modes.
        let listed = repo.git(&root, &["ls-tree", "-r", &attempt]);
        let mut names = Vec::new();
        for line in listed.lines() {
            let (meta, path) = line.split_once('\t').unwrap();
            let mode = meta.split(' ').next().unwrap();
            names.push(path.to_owned());
            let (_, entry) = edited
                .iter()
                .find(|(p, _)| p == path)
                .unwrap_or_else(|| panic!("seed {seed}: extra {path}"));
            match entry {
                Entry::File(bytes, perm) => {
                    let blob = std::process::Command::new("git")
                        .current_dir(&root)
                        .args(["cat-file", "blob", &format!("{attempt}:{path}")])
                        .output()
                        .unwrap()
                        .stdout;
                    assert_eq!(&blob, bytes, "seed {seed}: {path}");
                    assert_eq!(
                        mode == "100755",
                        perm & 0o111 != 0,
                        "seed {seed}: mode of {path}"
                    );
                }
                Entry::Link(target) => {
                    assert_eq!(mode, "120000");
                    assert_eq!(
                        &repo.git(&root, &["cat-file", "blob", &format!("{attempt}:{path}")]),
                        target
                    );
                }
            }
        }
        let expected: Vec<String> = edited.iter().map(|(p, _)| p.clone()).collect();
        assert_eq!(names, expected, "seed {seed}: attempt file list");
        // Commits the task made stay reachable from the attempt.
        repo.git(
            &root,
            &["merge-base", "--is-ancestor", &task_head, &attempt],
        );
        repo.fsck();
    }
}

/// A second patch-mode task in the same worktree is refused, naming the active one.
#[test]
fn second_patch_task_is_refused() {
    let repo = TestRepo::new();
    repo.task_root(&["start", "--mode", "patch", "one"]).ok();
    let run = repo.task_root(&["start", "--mode", "patch", "two"]).code(2);
    assert!(run.stderr.contains("'one'"), "{run}");
    assert!(run.stderr.contains("hint:"), "{run}");
    assert!(repo.refs("refs/tasks/two/").is_empty());
    // Starting the same one again is a no-op.
    let again = repo
        .task_root(&["start", "--mode", "patch", "one", "--json"])
        .ok();
    assert_eq!(again.json()["created"], false);
    // Once the first is dropped, another may start.
    repo.task_root(&["drop", "one"]).ok();
    repo.task_root(&["start", "--mode", "patch", "two"]).ok();
    assert_eq!(repo.read(repo.root(), ".git/git-task-active").trim(), "two");
}

/// The snapshot is stash-like: W (files, untracked included) with parents HEAD, the index and the untracked files.
#[test]
fn snapshot_captures_head_index_and_untracked() {
    let repo = TestRepo::new();
    let root = repo.root().to_path_buf();
    repo.write(&root, "README.md", "staged\n");
    repo.git(&root, &["add", "README.md"]);
    repo.write(&root, "README.md", "unstaged\n");
    repo.write(&root, "new.txt", "untracked\n");
    let before = picture(&repo, &root);
    let run = repo
        .task_root(&["start", "--mode", "patch", "snap", "--json"])
        .ok();
    let json = run.json();
    assert_eq!(json["mode"], "patch");
    assert_eq!(json["worktree"], root.display().to_string());
    assert_eq!(picture(&repo, &root), before);
    let head = repo.git(&root, &["rev-parse", "HEAD"]);
    let snap = "refs/tasks/snap/snapshot";
    assert_eq!(repo.git(&root, &["rev-parse", &format!("{snap}^1")]), head);
    assert_eq!(
        repo.git(&root, &["rev-parse", &format!("{snap}^2^{{tree}}")]),
        repo.git(&root, &["write-tree"])
    );
    assert_eq!(
        repo.git(&root, &["show", &format!("{snap}:README.md")]),
        "unstaged"
    );
    assert_eq!(
        repo.git(&root, &["show", &format!("{snap}:new.txt")]),
        "untracked"
    );
    assert_eq!(
        repo.git(
            &root,
            &["ls-tree", "-r", "--name-only", &format!("{snap}^3")]
        ),
        "new.txt"
    );
    assert!(repo.refs("refs/heads/").iter().all(|b| !b.contains("snap")));
    let log = repo.task_root(&["log", "snap", "--json"]).ok().stdout;
    assert!(
        log.contains("started") && log.contains("provisioned"),
        "{log}"
    );
    repo.fsck();
}

/// Accepting a patch-mode task (what `merge` calls) keeps the work, drops the snapshot and the mark.
#[test]
fn accepting_a_patch_task_keeps_the_work() {
    let repo = TestRepo::new();
    let root = repo.root().to_path_buf();
    repo.task_root(&[
        "start",
        "--mode",
        "patch",
        "acc",
        "--forbid",
        "src/store/**",
    ])
    .ok();
    repo.write(&root, "src/lib.rs", "pub fn changed() {}\n");
    let before = picture(&repo, &root);

    let git_repo = git_task::testing::git::Repo::discover(&root).unwrap();
    let id = git_task::testing::task::TaskId::parse("acc").unwrap();
    let record = git_task::testing::record::load_existing(&git_repo, &id).unwrap();
    match git_task::testing::patch::accept(&git_repo, &record, true).unwrap() {
        git_task::testing::patch::Accepted::Done { record, .. } => {
            assert_eq!(record.state.status, git_task::testing::task::Status::Merged)
        }
        _ => panic!("not accepted"),
    }
    assert_eq!(picture(&repo, &root), before);
    assert!(repo.refs("refs/tasks/acc/snapshot").is_empty());
    assert!(!root.join(".git/git-task-active").exists());
    // A new patch task may start now.
    repo.task_root(&["start", "--mode", "patch", "next"]).ok();
}

/// A violation blocks acceptance and changes nothing.
#[test]
fn accepting_refuses_a_violation() {
    let repo = TestRepo::new();
    let root = repo.root().to_path_buf();
    repo.task_root(&[
        "start",
        "--mode",
        "patch",
        "bad",
        "--forbid",
        "src/store/**",
    ])
    .ok();
    repo.write(&root, "src/store/mod.rs", "// touched\n");
    let git_repo = git_task::testing::git::Repo::discover(&root).unwrap();
    let id = git_task::testing::task::TaskId::parse("bad").unwrap();
    let record = git_task::testing::record::load_existing(&git_repo, &id).unwrap();
    assert!(matches!(
        git_task::testing::patch::accept(&git_repo, &record, true).unwrap(),
        git_task::testing::patch::Accepted::Violation(_)
    ));
    assert_eq!(repo.refs("refs/tasks/bad/snapshot").len(), 1);
}

/// While a patch-mode task is active, the pre-commit hook judges commits in that worktree
/// against its contract.
#[test]
fn hook_judges_commits_during_a_patch_task() {
    let repo = TestRepo::new();
    let root = repo.root().to_path_buf();
    repo.task_root(&["hooks", "install"]).ok();
    repo.task_root(&["start", "--mode", "patch", "hk", "--forbid", "src/store/**"])
        .ok();
    repo.write(&root, "src/store/mod.rs", "// forbidden\n");
    repo.git(&root, &["add", "src/store/mod.rs"]);
    let refused = repo.git_run(&root, &["commit", "-q", "-m", "touch store"]);
    assert_eq!(refused.code, 1, "{refused}");
    assert!(refused.stderr.contains("src/store/mod.rs"), "{refused}");
    repo.git(&root, &["reset", "-q", "--", "src/store/mod.rs"]);
    repo.write(&root, "src/lib.rs", "pub fn lib() { 1 }\n");
    repo.git(&root, &["add", "src/lib.rs"]);
    let allowed = repo.git_run(&root, &["commit", "-q", "-m", "allowed"]);
    assert_eq!(allowed.code, 0, "{allowed}");
}

/// A failing frozen check blocks acceptance: the snapshot and the mark stay, a `checks` event is recorded.
#[test]
fn accepting_runs_the_frozen_checks() {
    let repo = TestRepo::new();
    let root = repo.root().to_path_buf();
    repo.task_root(&[
        "start",
        "--mode",
        "patch",
        "chk",
        "--check",
        "test -f must-exist.txt",
    ])
    .ok();
    let git_repo = git_task::testing::git::Repo::discover(&root).unwrap();
    let id = git_task::testing::task::TaskId::parse("chk").unwrap();
    let record = git_task::testing::record::load_existing(&git_repo, &id).unwrap();
    match git_task::testing::patch::accept(&git_repo, &record, true).unwrap() {
        git_task::testing::patch::Accepted::ChecksFailed(outcomes) => assert_eq!(outcomes.len(), 1),
        _ => panic!("the failing check did not block"),
    }
    assert_eq!(repo.refs("refs/tasks/chk/snapshot").len(), 1);
    repo.write(&root, "must-exist.txt", "now it does\n");
    let record = git_task::testing::record::load_existing(&git_repo, &id).unwrap();
    assert!(matches!(
        git_task::testing::patch::accept(&git_repo, &record, true).unwrap(),
        git_task::testing::patch::Accepted::Done { .. }
    ));
    let log = repo.task_root(&["log", "chk", "--json"]).ok().stdout;
    assert!(
        log.contains("\"checks\"") && log.contains("\"merged\""),
        "{log}"
    );
    // Accepting again is a no-op.
    let record = git_task::testing::record::load_existing(&git_repo, &id).unwrap();
    assert!(matches!(
        git_task::testing::patch::accept(&git_repo, &record, true).unwrap(),
        git_task::testing::patch::Accepted::Already(_)
    ));
}

/// `git task merge` on a patch-mode task accepts it in place: exit 0, work kept, snapshot gone;
/// a violation exits 1 with the report and changes nothing; patch tasks are accepted alone.
#[test]
fn merge_command_accepts_a_patch_task() {
    let repo = TestRepo::new();
    let root = repo.root().to_path_buf();
    repo.task_root(&["start", "--mode", "patch", "pm", "--forbid", "src/store/**"])
        .ok();
    repo.write(&root, "src/store/mod.rs", "// forbidden\n");
    let refused = repo.task_root(&["merge", "pm"]).code(1);
    assert!(
        refused.stderr.contains("src/store/mod.rs") && refused.stderr.contains("forbidden"),
        "{refused}"
    );
    assert_eq!(repo.refs("refs/tasks/pm/snapshot").len(), 1);
    repo.git(&root, &["checkout", "--", "src/store/mod.rs"]);
    repo.write(&root, "src/lib.rs", "pub fn accepted() {}\n");
    let other = repo.task_root(&["merge", "pm", "--rebase"]).code(2);
    assert!(other.stderr.contains("patch mode"), "{other}");
    let json = repo.task_root(&["merge", "pm", "--json"]).ok().json();
    assert_eq!(json["kind"], "accept");
    assert_eq!(json["already"], false);
    assert_eq!(repo.read(&root, "src/lib.rs"), "pub fn accepted() {}\n");
    assert!(repo.refs("refs/tasks/pm/snapshot").is_empty());
    let again = repo.task_root(&["merge", "pm", "--json"]).ok().json();
    assert_eq!(again["already"], true);
    repo.fsck();
}

/// The snapshot's trees are what git's temporary-index snapshot makes (`git add -A` into a copy
/// of the index, then `git write-tree`), with git as the oracle: staged, unstaged, deleted,
/// intent-to-add, executable, symlinked and untracked files, and every kind of ignore rule
/// (`.gitignore` at any depth, `info/exclude`, `core.excludesFile`).
///
/// Run at the top of the worktree, the status walks paths relative to it; from a
/// subdirectory, absolute ones: both must see the same.
#[test]
fn snapshot_trees_match_a_temporary_index_snapshot() {
    snapshot_matches_git_from(".");
}

#[test]
fn snapshot_trees_match_a_temporary_index_snapshot_from_a_subdirectory() {
    snapshot_matches_git_from("deep/other");
}

fn snapshot_matches_git_from(cwd: &str) {
    let repo = TestRepo::new();
    let root = repo.root().to_path_buf();
    repo.write(&root, ".gitignore", "*.log\n");
    repo.write(&root, "deep/dir/.gitignore", "local-only\n");
    repo.write(&root, "deep/dir/kept.txt", "kept\n");
    repo.write(&root, "deep/other/file.txt", "other\n");
    repo.write(&root, "gone.txt", "gone\n");
    repo.git(&root, &["add", "-A"]);
    repo.git(&root, &["commit", "-q", "-m", "more files"]);

    let excludes = root.parent().unwrap().join("global-excludes");
    std::fs::write(&excludes, "*.globally-ignored\n").unwrap();
    repo.git(
        &root,
        &["config", "core.excludesFile", excludes.to_str().unwrap()],
    );
    repo.write(&root, ".git/info/exclude", "excluded-here/\n");
    repo.write(&root, "src/lib.rs", "pub fn staged() {}\n");
    repo.git(&root, &["add", "src/lib.rs"]);
    repo.write(&root, "src/lib.rs", "pub fn staged_then_edited() {}\n");
    repo.write(&root, "deep/other/file.txt", "unstaged\n");
    std::fs::remove_file(root.join("gone.txt")).unwrap();
    repo.write(&root, "ita.txt", "intent to add\n");
    repo.git(&root, &["add", "-N", "ita.txt"]);
    repo.write(&root, "deep/dir/new.txt", "untracked\n");
    repo.write(
        &root,
        "deep/dir/local-only",
        "ignored by a nested .gitignore\n",
    );
    repo.write(&root, "x.log", "ignored\n");
    repo.write(&root, "a.globally-ignored", "ignored\n");
    repo.write(&root, "excluded-here/f.txt", "ignored\n");
    repo.write(&root, "tool.sh", "#!/bin/sh\n");
    chmod_x(&root, "tool.sh", true);
    std::os::unix::fs::symlink("deep/dir/kept.txt", root.join("link")).unwrap();

    let index_tree = repo.git(&root, &["write-tree"]);
    let tmp_index = root.join(".git/oracle-index");
    std::fs::copy(root.join(".git/index"), &tmp_index).unwrap();
    let oracle = |args: &[&str]| -> String {
        let out = repo
            .command("git", &root)
            .env("GIT_INDEX_FILE", &tmp_index)
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    };
    // git-task counts only the repository's ignore files (a `core.excludesFile` is config an
    // agent can set): the oracle does the same, so `a.globally-ignored` is in the snapshot.
    oracle(&["-c", "core.excludesFile=/dev/null", "add", "-A"]);
    let worktree_tree = oracle(&["write-tree"]);
    std::fs::remove_file(&tmp_index).unwrap();

    let before = picture(&repo, &root);
    repo.task(&root.join(cwd), &["start", "--mode", "patch", "oracle"])
        .ok();
    assert_eq!(picture(&repo, &root), before, "start changed the worktree");
    let snap = "refs/tasks/oracle/snapshot";
    assert_eq!(
        repo.git(&root, &["rev-parse", &format!("{snap}^{{tree}}")]),
        worktree_tree
    );
    assert_eq!(
        repo.git(&root, &["rev-parse", &format!("{snap}^2^{{tree}}")]),
        index_tree
    );
    repo.fsck();
}

/// A snapshot's many new objects (the dirty files' blobs, the trees over them, the commits)
/// are written as one pack, not as a file each: git reads every one of them (`fsck --strict`,
/// `verify-pack`), none is also loose, and no `.keep` is left once the refs name them.
#[test]
fn a_patch_start_writes_its_snapshot_as_one_pack() {
    let repo = TestRepo::new();
    let root = repo.root().to_path_buf();
    for i in 0..20 {
        repo.write(&root, &format!("d{i}/e/f.txt"), "base\n");
    }
    repo.git(&root, &["add", "-A"]);
    repo.git(&root, &["commit", "-q", "-m", "base"]);
    let before = pack_everything(&repo);
    for i in 0..20 {
        repo.write(&root, &format!("d{i}/e/f.txt"), &format!("edit {i}\n"));
    }
    repo.write(&root, "new/u.txt", "untracked\n");
    repo.task_root(&["start", "--mode", "patch", "p1"]).ok();

    let snap = "refs/tasks/p1/snapshot";
    let revs: Vec<String> = [
        "",
        "^{tree}",
        ":d0",
        ":d0/e",
        ":d0/e/f.txt",
        ":d19/e/f.txt",
        ":new/u.txt",
        "^2",
        "^3",
    ]
    .iter()
    .map(|r| format!("{snap}{r}"))
    .collect();
    let idx = assert_one_new_pack(&repo, &before, &revs);
    for file in [idx.clone(), idx.with_extension("pack")] {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(
            mode & 0o777,
            0o444,
            "{} is not read-only as git leaves packs",
            file.display()
        );
    }
    assert_eq!(
        repo.git(&root, &["cat-file", "-p", &format!("{snap}:d7/e/f.txt")]),
        "edit 7"
    );
    repo.fsck();
    // The work is still the user's, and the task's snapshot holds it.
    repo.task_root(&["revert", "p1"]).ok();
    assert_eq!(repo.read(&root, "d7/e/f.txt"), "edit 7\n");
    repo.fsck();
}
