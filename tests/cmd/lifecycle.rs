//! The lifecycle core (issue 12): every discard saves first, commands run from inside a task's
//! own worktree finish or refuse whole, and input that cannot be honoured is refused.

use crate::common::TestRepo;
use crate::common::*;
use std::path::{Path, PathBuf};

/// Returns the commits reachable from every attempt ref of `id` (`git rev-list`).
fn saved_commits(repo: &TestRepo, id: &str) -> String {
    let attempts = repo.refs(&format!("refs/tasks/{id}/attempts"));
    if attempts.is_empty() {
        return String::new();
    }
    let mut args = vec!["rev-list"];
    args.extend(attempts.iter().map(String::as_str));
    repo.git(repo.root(), &args)
}

/// Returns the files of every attempt of `id`, as `git ls-tree -r --name-only` lines.
fn saved_files(repo: &TestRepo, id: &str) -> Vec<String> {
    let mut out = Vec::new();
    for a in repo.refs(&format!("refs/tasks/{id}/attempts")) {
        out.extend(
            repo.git(repo.root(), &["ls-tree", "-r", "--name-only", &a])
                .lines()
                .map(str::to_owned),
        );
    }
    out
}

fn commit_in(repo: &TestRepo, wt: &Path, file: &str, text: &str) -> String {
    repo.write(wt, file, text);
    repo.git(wt, &["add", "-A"]);
    repo.git(wt, &["commit", "-q", "-m", &format!("edit {file}")]);
    repo.git(wt, &["rev-parse", "HEAD"])
}

/// `merge --keep`, more commits in the kept worktree, then `remove`: the new commits are saved.
#[test]
fn remove_after_merge_keep_saves_the_commits_made_since() {
    let repo = TestRepo::new();
    let wt = repo.start("kept", &[]);
    commit_in(&repo, &wt, "src/lib.rs", "pub fn lib() { 1 }\n");
    repo.task_root(&["merge", "kept", "--keep", "--no-checks"])
        .ok();
    let later = commit_in(&repo, &wt, "src/lib.rs", "pub fn lib() { 2 }\n");

    let run = repo.task_root(&["remove", "kept"]).ok();
    assert!(
        saved_commits(&repo, "kept").contains(&later),
        "the commit made after the merge is saved: {run}"
    );
    assert!(run.stderr.contains("refs/tasks/kept/attempts/"), "{run}");
    repo.fsck();
}

/// `remove --force` on a worktree whose HEAD is detached saves its commits, not only its dirty files.
#[test]
fn remove_force_of_a_detached_head_saves_its_commits() {
    let repo = TestRepo::new();
    let wt = repo.start("det", &[]);
    let on_branch = commit_in(&repo, &wt, "src/lib.rs", "pub fn lib() { 3 }\n");
    repo.git(&wt, &["checkout", "-q", "--detach", "HEAD~1"]);
    let detached = commit_in(&repo, &wt, "src/other.rs", "// detached\n");
    repo.write(&wt, "README.md", "# dirty\n");

    let run = repo.task_root(&["remove", "--force", "det"]).ok();
    let saved = saved_commits(&repo, "det");
    assert!(
        saved.contains(&detached),
        "the detached commit is saved: {run}"
    );
    assert!(
        saved.contains(&on_branch),
        "the branch's commit is saved: {run}"
    );
    // One commit, the one shape: parent 1 HEAD, parent 2 the index, then the other tip no safe ref reaches.
    let attempts = repo.refs("refs/tasks/det/attempts");
    assert_eq!(attempts.len(), 1, "{attempts:?}");
    let parents = repo.git(
        repo.root(),
        &["rev-list", "--parents", "-n", "1", &attempts[0]],
    );
    let parents: Vec<&str> = parents.split(' ').skip(1).collect();
    assert_eq!(parents.len(), 3, "HEAD, the index, the branch: {parents:?}");
    assert_eq!(parents[0], detached);
    assert_eq!(
        rev(&repo, &format!("{}^{{tree}}", parents[1])),
        rev(&repo, &format!("{detached}^{{tree}}")),
        "parent 2 is the index (nothing staged)"
    );
    assert_eq!(parents[2], on_branch);
    assert_eq!(show(&repo, &attempts[0], "README.md"), "# dirty");
    assert!(saved_files(&repo, "det").contains(&"README.md".to_owned()));
    repo.fsck();
}

/// A file whose name is not valid UTF-8 is dirty work: refused without --force, saved with it.
#[cfg(target_os = "linux")]
#[test]
fn remove_sees_and_saves_a_non_utf8_file_name() {
    use std::os::unix::ffi::OsStrExt;
    let repo = TestRepo::new();
    let wt = repo.start("bytes", &[]);
    let name = std::ffi::OsStr::from_bytes(b"caf\xe9.txt");
    std::fs::write(wt.join(name), "latin-1 name\n").unwrap();

    let before = all_refs(&repo);
    let run = repo.task_root(&["remove", "bytes"]);
    assert_eq!(run.code, 1, "refused as dirty: {run}");
    assert_eq!(all_refs(&repo), before, "nothing changed");
    assert!(wt.join(name).exists());

    repo.task_root(&["remove", "--force", "bytes"]).ok();
    let attempts = repo.refs("refs/tasks/bytes/attempts");
    assert_eq!(attempts.len(), 1, "{attempts:?}");
    let listed = repo
        .command("git", repo.root())
        .args(["ls-tree", "-r", "-z", "--name-only", &attempts[0]])
        .output()
        .unwrap()
        .stdout;
    assert!(
        listed.split(|b| *b == 0).any(|n| n == b"caf\xe9.txt"),
        "saved under its own bytes: {}",
        String::from_utf8_lossy(&listed)
    );
    repo.fsck();
}

/// A nested repository in the task worktree is refused without --force and moved aside with it.
#[test]
fn remove_moves_a_nested_repository_aside_instead_of_deleting_it() {
    let repo = TestRepo::new();
    let wt = repo.start("nest", &[]);
    let nested = wt.join("vendor/lib");
    std::fs::create_dir_all(&nested).unwrap();
    repo.git(&nested, &["init", "-q", "-b", "main"]);
    repo.write(&nested, "a.txt", "nested history\n");
    repo.git(&nested, &["add", "-A"]);
    repo.git(&nested, &["commit", "-q", "-m", "nested commit"]);
    let nested_head = repo.git(&nested, &["rev-parse", "HEAD"]);

    let before = all_refs(&repo);
    let run = repo.task_root(&["remove", "nest"]);
    assert_eq!(run.code, 1, "refused: {run}");
    assert!(run.stderr.contains("vendor/lib"), "{run}");
    assert_eq!(all_refs(&repo), before, "nothing changed");
    assert!(nested.join(".git").is_dir());

    let run = repo.task_root(&["remove", "--force", "nest"]).ok();
    let attic = repo.root().join(".git/git-task/attic/nest");
    assert!(run.stderr.contains(&attic.display().to_string()), "{run}");
    let moved: Vec<PathBuf> = walk_git_dirs(&attic);
    assert_eq!(moved.len(), 1, "{moved:?}\n{run}");
    let repo_dir = moved[0].parent().unwrap();
    assert_eq!(repo.git(repo_dir, &["rev-parse", "HEAD"]), nested_head);
    assert_eq!(repo.read(repo_dir, "a.txt"), "nested history\n");
    assert!(!wt.exists());
    assert_eq!(record_status(&repo, "nest"), "removed");
}

fn walk_git_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if e.file_name() == ".git" {
            out.push(p);
        } else if p.is_dir() {
            out.extend(walk_git_dirs(&p));
        }
    }
    out
}

/// `remove --force` says how many ignored files it deletes, and how large they are.
#[test]
fn remove_force_reports_the_ignored_files_it_deletes() {
    let repo = TestRepo::new();
    repo.write(repo.root(), ".gitignore", "*.log\ntarget/\n");
    repo.git(repo.root(), &["add", ".gitignore"]);
    repo.git(repo.root(), &["commit", "-q", "-m", "ignore"]);
    let wt = repo.start("ign", &[]);
    repo.write(&wt, "build.log", "0123456789");
    repo.write(&wt, "target/a.o", "01234");
    repo.write(&wt, "target/b.o", "01234");
    repo.write(&wt, "README.md", "# dirty\n");

    let run = repo.task_root(&["remove", "--force", "ign"]).ok();
    assert!(
        run.stderr.contains("3 ignored files") && run.stderr.contains("20 bytes"),
        "{run}"
    );
    assert!(!wt.exists());
}

/// `remove` run from inside the task's own worktree finishes whole and says where to go.
#[test]
fn remove_from_inside_the_worktree_finishes_and_says_where_to_cd() {
    let repo = TestRepo::new();
    let wt = repo.start("inside", &[]);
    std::fs::create_dir_all(wt.join("src/deep")).unwrap();
    let run = repo.task(&wt.join("src"), &["remove", "inside"]).ok();
    assert!(!wt.exists(), "{run}");
    assert!(repo.refs("refs/heads/task").is_empty(), "{run}");
    assert_eq!(record_status(&repo, "inside"), "removed");
    assert!(
        run.stderr
            .contains(&format!("cd {}", repo.root().display())),
        "{run}"
    );
    assert_eq!(repo.worktrees(), vec![repo.root().to_path_buf()]);
    repo.fsck();
}

/// `start --reset` run from inside the task's own worktree finishes whole.
#[test]
fn start_reset_from_inside_the_worktree_finishes() {
    let repo = TestRepo::new();
    let wt = repo.start("again", &[]);
    let c = commit_in(&repo, &wt, "src/lib.rs", "pub fn lib() { 4 }\n");
    let run = repo.task(&wt, &["start", "again", "--reset"]).ok();
    assert!(saved_commits(&repo, "again").contains(&c), "{run}");
    assert_eq!(record_status(&repo, "again"), "active");
    assert_eq!(repo.read(&wt, "src/lib.rs"), "pub fn lib() {}\n");
    assert_eq!(repo.porcelain(&wt), "");
    assert!(repo.worktrees().contains(&wt));
    repo.fsck();
}

/// `reset` from a directory of the worktree that the reset deletes finishes and says where to go.
#[test]
fn reset_from_a_directory_it_deletes_finishes() {
    let repo = TestRepo::new();
    let wt = repo.start("gone", &[]);
    commit_in(&repo, &wt, "newdir/x.txt", "x\n");
    let run = repo.task(&wt.join("newdir"), &["reset"]).ok();
    assert!(!wt.join("newdir").exists(), "{run}");
    assert!(
        run.stderr.contains(&format!("cd {}", wt.display())),
        "{run}"
    );
    assert_eq!(repo.porcelain(&wt), "");
}

/// `start` of an existing task with another contract is refused; the same contract is a no-op.
#[test]
fn start_of_an_existing_task_with_another_contract_is_refused() {
    let repo = TestRepo::new();
    repo.start("fence", &["--allow", "src/**"]);
    let before = all_refs(&repo);
    let run = repo.task_root(&["start", "fence", "--allow", "**"]).code(2);
    assert!(run.stderr.contains("--reset"), "{run}");
    assert_eq!(all_refs(&repo), before);
    repo.task_root(&["start", "fence", "--allow", "src/**"])
        .ok();
    repo.task_root(&["start", "fence"]).ok();
    assert_eq!(all_refs(&repo), before);

    // --reset replaces the contract with a narrower one (a wider one: see gate_attacks2).
    repo.task_root(&["start", "fence", "--allow", "src/api/**", "--reset"])
        .ok();
    let frozen = show(&repo, "refs/tasks/fence/record", "contract.toml");
    assert!(frozen.contains("src/api/**"), "{frozen}");
    let branch_file = show(&repo, "task/fence", ".task-contract.toml");
    assert!(branch_file.contains("src/api/**"), "{branch_file}");
}

/// `start` of a merged task's id never prints a path that does not exist.
#[test]
fn start_of_a_merged_id_prints_no_missing_path() {
    let repo = TestRepo::new();
    let wt = repo.start("done", &[]);
    commit_in(&repo, &wt, "src/lib.rs", "pub fn lib() { 5 }\n");
    repo.task_root(&["merge", "done", "--no-checks"]).ok();
    let run = repo.task_root(&["start", "done"]).ok();
    assert!(Path::new(run.out()).is_dir(), "{run}");
    assert_eq!(record_status(&repo, "done"), "active");
    let log = repo.task_root(&["log", "done"]).ok();
    assert!(
        log.stdout.contains("merged"),
        "the old life stays readable: {log}"
    );
    repo.fsck();
}

/// `--path` inside the main worktree or inside `.git` is refused before anything is written.
#[test]
fn start_refuses_a_path_inside_the_main_worktree_or_git_dir() {
    let repo = TestRepo::new();
    for path in [
        repo.root().join("sub/wt"),
        repo.root().join(".git/wt"),
        repo.root().to_path_buf(),
    ] {
        let run = repo
            .task_root(&["start", "p", "--path", path.to_str().unwrap()])
            .code(2);
        assert!(run.stderr.starts_with("error: "), "{run}");
        assert_nothing_written(&repo);
    }
    repo.git(repo.root(), &["config", "task.worktreeDir", "inner"]);
    let run = repo.task_root(&["start", "p"]).code(2);
    assert!(run.stderr.contains("task.worktreeDir"), "{run}");
    assert_nothing_written(&repo);
}

/// Returns the directories `remove` moved aside in the tasks folder (`.<id>.removing-*`).
fn moved_aside(repo: &TestRepo) -> Vec<PathBuf> {
    std::fs::read_dir(repo.base().join("repo.tasks"))
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.to_string_lossy().contains(".removing-"))
                .collect()
        })
        .unwrap_or_default()
}

/// The background delete after `remove` survives the end of the terminal's process group.
#[cfg(unix)]
#[test]
fn background_delete_survives_the_terminal_closing() {
    use std::os::unix::process::CommandExt;
    let repo = TestRepo::new();
    repo.write(repo.root(), ".gitignore", "cache/\n");
    repo.git(repo.root(), &["add", ".gitignore"]);
    repo.git(repo.root(), &["commit", "-q", "-m", "ignore"]);
    let wt = repo.start("bg", &[]);
    for d in 0..40 {
        for f in 0..100 {
            repo.write(&wt, &format!("cache/{d}/{f}.bin"), "x");
        }
    }
    // A terminal's job: its own process group, which the terminal's end kills whole.
    let mut cmd = task_command(&repo, repo.root(), &["remove", "bg"]);
    cmd.process_group(0)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = cmd.spawn().unwrap();
    let pgid = child.id();
    let run = collect(child).ok();
    let _ = std::process::Command::new("kill")
        .args(["-KILL", "--", &format!("-{pgid}")])
        .status();
    let start = std::time::Instant::now();
    while !moved_aside(&repo).is_empty() {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(60),
            "the moved-aside copy is left: {:?}\n{run}",
            moved_aside(&repo)
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(!wt.exists());
}

/// A directory `remove` cannot delete is a warning; the task is still removed consistently.
#[test]
fn remove_warns_about_a_directory_it_could_not_delete() {
    let repo = TestRepo::new();
    repo.start("scr", &[]);
    let scratch = repo.root().join(".git/git-task/scratch/scr");
    std::fs::create_dir_all(scratch.parent().unwrap()).unwrap();
    // Not a directory: deleting it as one fails.
    std::fs::write(&scratch, "in the way\n").unwrap();
    let run = repo.task_root(&["remove", "scr"]).ok();
    assert!(run.stderr.contains("warning: "), "{run}");
    assert!(run.stderr.contains(&scratch.display().to_string()), "{run}");
    assert_eq!(record_status(&repo, "scr"), "removed");
    assert!(repo.refs("refs/heads/task").is_empty());
}

/// No module of `src/lifecycle/` imports a sibling that imports it back.
#[test]
fn lifecycle_modules_import_no_sibling_that_imports_them_back() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lifecycle");
    let mut imports = std::collections::BTreeMap::new();
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter_map(|e| {
            e.file_name()
                .to_str()?
                .strip_suffix(".rs")
                .map(str::to_owned)
        })
        .filter(|n| n != "mod")
        .collect();
    for n in &names {
        let text = std::fs::read_to_string(dir.join(format!("{n}.rs"))).unwrap();
        let used: Vec<String> = names
            .iter()
            .filter(|m| *m != n)
            .filter(|m| {
                text.contains(&format!("super::{m}::"))
                    || text.contains(&format!("crate::lifecycle::{m}::"))
                    || text.contains(&format!("super::{m}}}"))
                    || text.contains(&format!("super::{m},"))
            })
            .cloned()
            .collect();
        imports.insert(n.clone(), used);
    }
    for (a, used) in &imports {
        for b in used {
            assert!(
                !imports[b].contains(a),
                "src/lifecycle/{a}.rs and src/lifecycle/{b}.rs import each other"
            );
        }
    }
}

/// `reset` saves a file whose name is not UTF-8 and leaves the worktree matching its branch.
#[cfg(target_os = "linux")]
#[test]
fn reset_saves_and_clears_a_non_utf8_file_name() {
    use std::os::unix::ffi::OsStrExt;
    let repo = TestRepo::new();
    let wt = repo.start("rbytes", &[]);
    let name = std::ffi::OsStr::from_bytes(b"na\xefve.txt");
    std::fs::write(wt.join(name), "latin-1 name\n").unwrap();
    let run = repo.task_root(&["reset", "rbytes"]).ok();
    let attempts = repo.refs("refs/tasks/rbytes/attempts");
    assert_eq!(attempts.len(), 1, "{run}");
    let listed = repo
        .command("git", repo.root())
        .args(["ls-tree", "-r", "-z", "--name-only", &attempts[0]])
        .output()
        .unwrap()
        .stdout;
    assert!(listed.split(|b| *b == 0).any(|n| n == b"na\xefve.txt"));
    assert!(!wt.join(name).exists(), "{run}");
    assert_eq!(repo.porcelain(&wt), "");
}

/// `start` of an existing task with another `--path` is refused instead of printing the old place.
#[test]
fn start_of_an_existing_task_with_another_path_is_refused() {
    let repo = TestRepo::new();
    let wt = repo.start("here", &[]);
    let elsewhere = repo.base().join("elsewhere");
    let run = repo
        .task_root(&["start", "here", "--path", elsewhere.to_str().unwrap()])
        .code(2);
    assert!(run.stderr.contains(&wt.display().to_string()), "{run}");
    assert!(!elsewhere.exists());
    repo.task_root(&["start", "here", "--path", wt.to_str().unwrap()])
        .ok();
}

/// `start --reset` keeps a repository nested in the worktree: it is neither deleted nor lost.
#[test]
fn start_reset_keeps_a_nested_repository() {
    let repo = TestRepo::new();
    let wt = repo.start("keepnest", &[]);
    commit_in(&repo, &wt, "src/lib.rs", "pub fn lib() { 6 }\n");
    let nested = wt.join("vendor/dep");
    std::fs::create_dir_all(&nested).unwrap();
    repo.git(&nested, &["init", "-q", "-b", "main"]);
    repo.write(&nested, "d.txt", "dep\n");
    repo.git(&nested, &["add", "-A"]);
    repo.git(&nested, &["commit", "-q", "-m", "dep"]);
    let head = repo.git(&nested, &["rev-parse", "HEAD"]);
    let run = repo.task_root(&["start", "keepnest", "--reset"]).ok();
    assert_eq!(repo.git(&nested, &["rev-parse", "HEAD"]), head, "{run}");
    assert_eq!(repo.read(&wt, "src/lib.rs"), "pub fn lib() {}\n");
    assert_eq!(repo.refs("refs/tasks/keepnest/attempts").len(), 1, "{run}");
}

/// A merged task whose kept worktree was deleted by hand is refused, not printed as a missing path.
#[test]
fn start_of_a_merged_id_whose_kept_worktree_is_gone_is_refused() {
    let repo = TestRepo::new();
    let wt = repo.start("kept2", &[]);
    commit_in(&repo, &wt, "src/lib.rs", "pub fn lib() { 7 }\n");
    repo.task_root(&["merge", "kept2", "--keep", "--no-checks"])
        .ok();
    std::fs::remove_dir_all(&wt).unwrap();
    let run = repo.task_root(&["start", "kept2"]).code(2);
    assert!(run.stdout.is_empty(), "{run}");
    assert!(run.stderr.contains("git task remove kept2"), "{run}");
    repo.task_root(&["remove", "kept2"]).ok();
    let run = repo.task_root(&["start", "kept2"]).ok();
    assert!(Path::new(run.out()).is_dir(), "{run}");
}

/// `sweep` leaves alone a moved-aside worktree whose background delete is still running
/// (it holds the directory's lock), and finishes one whose delete died.
#[cfg(unix)]
#[test]
fn sweep_leaves_a_delete_in_progress_alone() {
    let repo = TestRepo::new();
    repo.start("other", &[]);
    let aside = repo.base().join("repo.tasks/.gone.removing-4000000000-1");
    repo.write(&aside, "f.txt", "x");
    crate::common::note_aside(&repo, &aside);
    let dir = std::fs::File::open(&aside).unwrap();
    rustix::fs::flock(&dir, rustix::fs::FlockOperation::LockExclusive).unwrap();
    let j = repo.task_root(&["sweep", "--json"]).ok().json();
    assert_eq!(j["repairs"], serde_json::json!([]), "{j}");
    assert!(aside.exists());
    drop(dir);
    let j = repo.task_root(&["sweep", "--json"]).ok().json();
    assert_eq!(j["repairs"][0]["problem"], "interrupted_removal", "{j}");
    assert!(!aside.exists());
}
