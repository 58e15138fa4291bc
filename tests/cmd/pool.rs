//! The warm pool: `pool fill | status | drain`, `start` taking an entry, `sweep` of what a
//! killed fill or claim left. git is the oracle: a pooled start must look like a cold one.

use crate::common::TestRepo;
use std::path::{Path, PathBuf};

fn pool_entries(repo: &TestRepo) -> Vec<serde_json::Value> {
    let status = repo.task_root(&["pool", "status", "--json"]).ok().json();
    status["entries"].as_array().cloned().unwrap_or_default()
}

/// The pool's entries once no background fill runs (a start that took an entry refills the
/// pool to the size last filled).
fn entries_once_filled(repo: &TestRepo) -> Vec<serde_json::Value> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let status = repo.task_root(&["pool", "status", "--json"]).ok().json();
        if status.get("filling").is_none() {
            break status["entries"].as_array().cloned().unwrap_or_default();
        }
        assert!(std::time::Instant::now() < deadline, "{status}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

fn fill(repo: &TestRepo, n: &str) {
    repo.task_root(&["pool", "fill", n, "--wait"]).ok();
}

/// The base moves on after the fill: a file changed, one added, one deleted.
fn move_main(repo: &TestRepo) {
    let root = repo.root();
    repo.write(root, "src/lib.rs", "pub fn lib() { /* changed */ }\n");
    repo.write(root, "src/added/new.rs", "pub fn added() {}\n");
    std::fs::remove_file(root.join("README.md")).unwrap();
    repo.git(root, &["add", "-A"]);
    repo.git(root, &["commit", "-q", "-m", "main moves on"]);
}

/// Lines of `git worktree list --porcelain` for the worktree at `path`.
fn worktree_block(repo: &TestRepo, path: &Path) -> String {
    let list = repo.git(repo.root(), &["worktree", "list", "--porcelain"]);
    list.split("\n\n")
        .find(|b| b.lines().next() == Some(&format!("worktree {}", path.display())))
        .unwrap_or_else(|| panic!("{} is not in\n{list}", path.display()))
        .to_owned()
}

/// The file names in a worktree's administrative directory (git's view of it), sorted.
fn admin_files(repo: &TestRepo, wt: &Path) -> Vec<String> {
    let git_dir = PathBuf::from(repo.git(wt, &["rev-parse", "--absolute-git-dir"]));
    let mut out: Vec<String> = walkdir(&git_dir)
        .into_iter()
        .map(|p| p.strip_prefix(&git_dir).unwrap().display().to_string())
        .collect();
    out.sort();
    out
}

fn walkdir(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.file_type().unwrap().is_dir() {
            out.extend(walkdir(&e.path()));
        } else {
            out.push(e.path());
        }
    }
    out
}

/// Everything git and git-task say about task `id`, with its id and path replaced by `ID`/`PATH`.
fn view(repo: &TestRepo, id: &str) -> String {
    let wt = repo.task_dir(id);
    let mut out = String::new();
    out += &worktree_block(repo, &wt);
    out += "\n--status\n";
    out += &repo.git(
        &wt,
        &[
            "status",
            "--porcelain=v2",
            "--branch",
            "--untracked-files=all",
            "--ignored",
        ],
    );
    out += "\n--refs\n";
    out += &repo.git(
        repo.root(),
        &[
            "for-each-ref",
            "--format=%(refname) %(objecttype) %(*objecttype)",
            &format!("refs/heads/task/{id}"),
            &format!("refs/tasks/{id}/"),
        ],
    );
    out += "\n--tree\n";
    out += &repo
        .git(&wt, &["ls-files", "-s", "--debug"])
        .lines()
        .filter(|l| {
            !l.trim_start().starts_with("ctime")
                && !l.trim_start().starts_with("mtime")
                && !l.trim_start().starts_with("dev")
                && !l.trim_start().starts_with("uid")
                && !l.trim_start().starts_with("size")
        })
        .collect::<Vec<_>>()
        .join("\n");
    out += "\n--head\n";
    out += &repo.git(&wt, &["symbolic-ref", "HEAD"]);
    out += "\n--reflog\n";
    out += &repo.git(&wt, &["reflog", "--format=%gs", "HEAD"]);
    out += "\n--admin\n";
    out += &admin_files(repo, &wt).join("\n");
    out += "\n--gitfile\n";
    out += &std::fs::read_to_string(wt.join(".git")).unwrap();
    let status = repo.task_root(&["status", id, "--json"]).ok().json();
    out += "\n--task\n";
    for key in ["mode", "status", "base", "dirty", "changes", "contract"] {
        out += &format!("{key}: {}\n", status[key]);
    }
    let list = repo.task_root(&["list", "--json"]).ok().json();
    let row = list["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == id)
        .cloned()
        .unwrap();
    out += &format!(
        "list dirty {} changed {}\n",
        row["dirty"], row["changed_files"]
    );
    out += &repo.git(
        repo.root(),
        &["log", "-1", "--format=%T %P", &format!("task/{id}")],
    );
    // The contract names the task, so its blob, the commit's tree and the commit differ by id.
    for (rev, mask) in [
        (format!("task/{id}"), "COMMIT"),
        (format!("task/{id}^{{tree}}"), "TREE"),
        (format!("task/{id}:.task-contract.toml"), "CONTRACT"),
    ] {
        out = out.replace(&repo.git(repo.root(), &["rev-parse", &rev]), mask);
    }
    out.replace(&wt.display().to_string(), "PATH")
        .replace(&format!("task/{id}"), "task/ID")
        .replace(&format!("tasks/{id}/"), "tasks/ID/")
        .replace(&format!("worktrees/{id}"), "worktrees/ID")
        .replace(&format!("task \"{id}\""), "task \"ID\"")
}

/// A start that takes a pool entry filled before the base moved on leaves what a
/// cold start leaves: the same `git worktree list` entry, status, refs, index, HEAD
/// and reflog, administrative files, `.git` file, record and `list` row; the hooks
/// guard it the same way.
#[test]
fn pooled_start_is_indistinguishable_from_a_cold_start() {
    let repo = TestRepo::new();
    repo.task_root(&["hooks", "install"]).ok();
    fill(&repo, "1");
    let entries = pool_entries(&repo);
    assert_eq!(entries.len(), 1, "{entries:?}");
    let entry_path = PathBuf::from(entries[0]["path"].as_str().unwrap());
    assert!(entry_path.join("src/lib.rs").exists());
    move_main(&repo);
    let pooled = repo.start("pooled", &["--allow", "src/**"]);
    assert_eq!(pooled, repo.task_dir("pooled"));
    // The start refills the pool in the background (to the 1 of `pool fill 1`): the entry taken
    // is not among the entries, whatever the refill made since.
    let taken = entry_path.display().to_string();
    let entries = entries_once_filled(&repo);
    assert!(
        entries.iter().all(|e| e["path"].as_str() != Some(&taken)),
        "the entry was taken: {entries:?}"
    );
    assert!(
        !entry_path.exists(),
        "the entry's directory became the task's"
    );
    // Drained (which forgets the size), the next start is a cold one.
    repo.task_root(&["pool", "drain"]).ok();
    assert!(pool_entries(&repo).is_empty());
    let cold = repo.start("cold", &["--allow", "src/**"]);
    let (a, b) = (view(&repo, "pooled"), view(&repo, "cold"));
    assert_eq!(
        a.replace("pooled", "ID"),
        b.replace("cold", "ID"),
        "pooled start differs from a cold one"
    );
    assert!(
        a.contains("src/added/new.rs") && !a.contains("README.md"),
        "{a}"
    );
    // The hooks guard both the same way.
    for (id, wt) in [("pooled", &pooled), ("cold", &cold)] {
        repo.write(wt, "README.md", "not allowed\n");
        repo.git(wt, &["add", "README.md"]);
        let run = repo.git_run(wt, &["commit", "-q", "-m", "outside"]);
        assert_ne!(run.code, 0, "{id}: the pre-commit hook refuses\n{run}");
    }
    repo.fsck();
}

/// Two starts racing for one entry: both tasks are made, the entry is taken once.
#[test]
fn parallel_starts_take_an_entry_once() {
    let repo = TestRepo::new();
    fill(&repo, "1");
    let spawn = |id: &str| {
        let mut cmd = repo.command(crate::common::bin(), repo.root());
        cmd.args(["start", id]);
        cmd.stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn("a"), spawn("b"));
    for child in [a, b] {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{out:?}");
    }
    for id in ["a", "b"] {
        let wt = repo.task_dir(id);
        assert_eq!(repo.porcelain(&wt), "", "{id}");
        assert_eq!(
            repo.git(&wt, &["symbolic-ref", "HEAD"]),
            format!("refs/heads/task/{id}")
        );
    }
    // The start that took the entry refills the pool (to the 1 of `pool fill 1`): wait for it.
    let entries = entries_once_filled(&repo);
    assert!(entries.len() <= 1, "{entries:?}");
    // One worktree each, besides the main one and the pool's.
    let worktrees = repo.worktrees();
    assert_eq!(worktrees.len(), 3 + entries.len(), "{worktrees:?}");
    repo.fsck();
}

/// An entry someone changed is not handed out: the start checks out afresh and the entry goes.
#[test]
fn a_dirty_entry_is_discarded() {
    let repo = TestRepo::new();
    fill(&repo, "1");
    let entry = PathBuf::from(pool_entries(&repo)[0]["path"].as_str().unwrap().to_owned());
    repo.write(&entry, "stray.txt", "not from the base\n");
    repo.write(&entry, "src/lib.rs", "edited\n");
    let wt = repo.start("t", &[]);
    assert!(!wt.join("stray.txt").exists());
    assert_eq!(repo.read(&wt, "src/lib.rs"), "pub fn lib() {}\n");
    assert_eq!(repo.porcelain(&wt), "");
    assert!(pool_entries(&repo).is_empty());
    // The discarded entry is deleted in the background; sweep finishes whatever is left.
    repo.task_root(&["sweep"]).ok();
    assert_eq!(repo.worktrees().len(), 2);
    repo.fsck();
}

/// `list` hides the pool, `list --all` shows it; `drain` empties it; a healthy entry survives `sweep`.
#[test]
fn list_hides_the_pool_and_drain_empties_it() {
    let repo = TestRepo::new();
    fill(&repo, "2");
    assert_eq!(pool_entries(&repo).len(), 2);
    let list = repo.task_root(&["list", "--json"]).ok().json();
    assert!(list.get("pool").is_none(), "{list}");
    assert_eq!(list["tasks"].as_array().unwrap().len(), 0);
    let all = repo.task_root(&["list", "--all", "--json"]).ok().json();
    assert_eq!(all["pool"].as_array().unwrap().len(), 2, "{all}");
    let sweep = repo.task_root(&["sweep", "--json"]).ok().json();
    assert_eq!(sweep["repairs"].as_array().unwrap().len(), 0, "{sweep}");
    assert_eq!(pool_entries(&repo).len(), 2);
    fill(&repo, "2");
    assert_eq!(
        pool_entries(&repo).len(),
        2,
        "a full pool is not filled further"
    );
    repo.task_root(&["pool", "drain"]).ok();
    assert!(pool_entries(&repo).is_empty());
    repo.task_root(&["sweep"]).ok();
    assert_eq!(repo.worktrees().len(), 1);
    assert!(repo.refs("refs/task-pool/").is_empty());
    repo.fsck();
}

/// What a killed fill or claim leaves (a pool directory without its ref, a ref without its
/// directory) is found and deleted by `sweep`.
#[test]
fn sweep_deletes_abandoned_and_damaged_entries() {
    let repo = TestRepo::new();
    fill(&repo, "2");
    let entries = pool_entries(&repo);
    // A claim that died right after it deleted the ref.
    let first = PathBuf::from(entries[0]["path"].as_str().unwrap());
    let first_ref = format!(
        "refs/task-pool/main/{}",
        entries[0]["name"].as_str().unwrap()
    );
    repo.git(repo.root(), &["update-ref", "-d", &first_ref]);
    // A directory that vanished under its ref.
    let second = PathBuf::from(entries[1]["path"].as_str().unwrap());
    std::fs::remove_dir_all(&second).unwrap();
    let dry = repo
        .task_root(&["sweep", "--dry-run", "--json"])
        .ok()
        .json();
    let problems: Vec<_> = dry["repairs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["problem"].as_str().unwrap().to_owned())
        .collect();
    assert!(
        problems.contains(&"abandoned_pool_entry".to_owned()),
        "{dry}"
    );
    assert!(problems.contains(&"damaged_pool_entry".to_owned()), "{dry}");
    assert!(first.exists(), "a dry run deletes nothing");
    repo.task_root(&["sweep"]).ok();
    assert!(!first.exists());
    assert!(pool_entries(&repo).is_empty());
    assert!(repo.refs("refs/task-pool/").is_empty());
    assert_eq!(repo.worktrees().len(), 1, "{:?}", repo.worktrees());
    let again = repo.task_root(&["sweep", "--json"]).ok().json();
    assert_eq!(again["repairs"].as_array().unwrap().len(), 0, "{again}");
    repo.fsck();
}

/// `task.poolSize` keeps the pool filled: a start that takes an entry refills it in the background.
#[test]
fn pool_size_refills_after_a_start() {
    let repo = TestRepo::new();
    repo.git(repo.root(), &["config", "task.poolSize", "1"]);
    fill(&repo, "1");
    let first = pool_entries(&repo)[0]["name"].as_str().unwrap().to_owned();
    repo.start("t", &[]);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let status = repo.task_root(&["pool", "status", "--json"]).ok().json();
        let entries = status["entries"].as_array().cloned().unwrap_or_default();
        if entries.len() == 1 && status.get("filling").is_none() {
            assert_ne!(entries[0]["name"].as_str().unwrap(), first);
            break;
        }
        assert!(std::time::Instant::now() < deadline, "no refill: {status}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    repo.fsck();
}

/// `pool fill --base` must name a local branch.
#[test]
fn pool_fill_needs_a_branch() {
    let repo = TestRepo::new();
    let run = repo.task_root(&["pool", "fill", "1", "--base", "nope", "--wait"]);
    assert_eq!(run.code, 2, "{run}");
    assert!(run.stderr.contains("error:"), "{run}");
    assert!(repo.refs("refs/task-pool/").is_empty());
}

/// A pool holds at most 64 entries: `pool fill N` beyond that, and a `task.poolSize` beyond
/// it, are refused with exit 2 before anything is made (each entry is a whole checkout).
#[test]
fn a_pool_larger_than_64_is_refused() {
    let repo = TestRepo::new();
    for wait in [true, false] {
        let mut args = vec!["pool", "fill", "65"];
        if wait {
            args.push("--wait");
        }
        let run = repo.task_root(&args);
        assert_eq!(run.code, 2, "{run}");
        assert!(
            run.stderr.contains("error: a pool holds at most 64"),
            "{run}"
        );
        assert!(run.stderr.contains("hint: "), "{run}");
    }
    repo.git(repo.root(), &["config", "task.poolSize", "100000"]);
    let run = repo.task_root(&["start", "t1", "--allow", "src/**"]);
    assert_eq!(run.code, 2, "{run}");
    assert!(run.stderr.contains("task.poolSize"), "{run}");
    assert!(repo.refs("refs/task-pool/").is_empty());
    assert!(repo.refs("refs/heads/task/").is_empty());
    repo.git(repo.root(), &["config", "task.poolSize", "64"]);
    let run = repo.task_root(&["pool", "fill", "2", "--wait"]);
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(pool_entries(&repo).len(), 2);
}

/// The worktree a pooled start hands out is remembered as clean, as a fresh checkout is: the
/// first quick look needs no full status, and a change made afterwards is still seen.
#[test]
fn a_pooled_worktree_is_known_clean_from_stat_data() {
    use git_task::testing::git::status::dirty::{quick_check, DotGit, Place, Quick};
    let repo = TestRepo::new();
    let excludes = repo.base().join("excludes");
    repo.git(
        repo.root(),
        &["config", "core.excludesFile", excludes.to_str().unwrap()],
    );
    fill(&repo, "1");
    let entry = pool_entries(&repo)[0]["path"].clone();
    move_main(&repo);
    let wt = repo.start("p", &[]);
    // The start refills the pool in the background: the entry it took is gone from it.
    let now = entries_once_filled(&repo);
    assert!(
        !now.iter().any(|e| e["path"] == entry),
        "the entry was taken"
    );
    let git_repo = git_task::testing::git::Repo::discover(&wt).unwrap();
    let head = git_repo.head_commit().unwrap().unwrap();
    let look = || {
        let dot_git = DotGit::read(&wt);
        let place = Place {
            path: &wt,
            git_dir: dot_git.git_dir(),
            anchors: &Default::default(),
        };
        quick_check(
            place,
            head,
            git_repo.ignore_files(),
            None,
            || None,
            |_| None,
        )
    };
    assert!(matches!(look(), Quick::Clean(_)), "the memo is used");
    repo.write(&wt, "src/added/other.rs", "new\n");
    assert!(matches!(look(), Quick::NeedsFull(_)), "a new file is seen");
    std::fs::remove_file(wt.join("src/added/other.rs")).unwrap();
    repo.write(&wt, "src/lib.rs", "// changed, and longer than before\n");
    assert!(matches!(look(), Quick::Dirty), "a changed file is seen");
}

/// Without `task.poolSize`, a pool made with `pool fill N` is refilled to N by the start that
/// takes an entry from it (issue 34, item 9); after `pool drain` a start refills nothing.
#[test]
fn a_pooled_start_refills_the_pool_it_took_from() {
    let repo = TestRepo::new();
    fill(&repo, "2");
    let before: Vec<String> = pool_entries(&repo)
        .iter()
        .map(|e| e["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(before.len(), 2);
    repo.start("t", &[]);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let status = repo.task_root(&["pool", "status", "--json"]).ok().json();
        let entries = status["entries"].as_array().cloned().unwrap_or_default();
        let fresh = entries
            .iter()
            .filter(|e| !before.iter().any(|b| b == e["name"].as_str().unwrap()))
            .count();
        if entries.len() == 2 && fresh == 1 && status.get("filling").is_none() {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "no refill: {status}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // Drained: the pool is given up, and a start no longer refills it.
    repo.task_root(&["pool", "drain"]).ok();
    repo.start("u", &[]);
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let status = repo.task_root(&["pool", "status", "--json"]).ok().json();
    assert!(
        status["entries"].as_array().unwrap().is_empty() && status.get("filling").is_none(),
        "{status}"
    );
    repo.fsck();
}
