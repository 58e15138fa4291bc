//! Helpers over a [`TestRepo`]: whole-repository assertions through git, records and branches
//! crafted with git plumbing, child processes.

use super::{bin, Run, TestRepo};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Every ref with the object it points to: a fingerprint of what git-task wrote.
pub fn all_refs(repo: &TestRepo) -> String {
    repo.git(
        repo.root(),
        &["for-each-ref", "--format=%(objectname) %(refname)"],
    )
}

/// Asserts that nothing of a task exists: no task refs, no branch but `main`, no extra worktree, no task directory.
#[track_caller]
pub fn assert_nothing_written(repo: &TestRepo) {
    assert_eq!(
        repo.refs("refs/tasks"),
        Vec::<String>::new(),
        "task refs were written"
    );
    assert_eq!(
        repo.refs("refs/heads"),
        vec!["refs/heads/main".to_owned()],
        "branches were written"
    );
    assert_eq!(
        repo.worktrees(),
        vec![repo.root().to_path_buf()],
        "worktrees were added"
    );
    let tasks = repo.base().join("repo.tasks");
    let entries: Vec<_> = std::fs::read_dir(&tasks)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(entries.is_empty(), "directories were made: {entries:?}");
}

/// Commits everything in `dir` with `msg`, hooks skipped (`git add -A` + `git commit --no-verify`).
pub fn commit_all(repo: &TestRepo, dir: &Path, msg: &str) {
    repo.git(dir, &["add", "-A"]);
    repo.git(dir, &["commit", "-q", "--no-verify", "-m", msg]);
}

/// The `repairs[].problem` fields of a `sweep --json` report.
pub fn problems(j: &serde_json::Value) -> Vec<String> {
    j["repairs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["problem"].as_str().unwrap().to_owned())
        .collect()
}

/// Returns `git rev-parse <rev>` in the main worktree.
pub fn rev(repo: &TestRepo, rev: &str) -> String {
    repo.git(repo.root(), &["rev-parse", rev])
}

/// Returns `git show <rev>:<path>` in the main worktree.
pub fn show(repo: &TestRepo, rev: &str, path: &str) -> String {
    repo.git(repo.root(), &["show", &format!("{rev}:{path}")])
}

/// Returns the event names of a task's record, oldest first (`git log` of the record ref).
pub fn events(repo: &TestRepo, id: &str) -> Vec<String> {
    let out = repo.git(
        repo.root(),
        &[
            "log",
            "--reverse",
            "--format=%s",
            &format!("refs/tasks/{id}/record"),
        ],
    );
    out.lines().map(str::to_owned).collect()
}

/// Returns the `status = "..."` value of a task's `task.toml` in its record.
pub fn record_status(repo: &TestRepo, id: &str) -> String {
    let toml = show(repo, &format!("refs/tasks/{id}/record"), "task.toml");
    toml.lines()
        .find_map(|l| l.strip_prefix("status = "))
        .map(|v| v.trim_matches('"').to_owned())
        .unwrap_or_else(|| panic!("no status in task.toml:\n{toml}"))
}

/// Builds (without running) `git-task args..` in `dir` with the fixture's environment.
pub fn task_command(repo: &TestRepo, dir: &Path, args: &[&str]) -> std::process::Command {
    let mut cmd = repo.command(bin(), dir);
    cmd.args(args);
    cmd
}

/// Captures a finished child.
pub fn collect(child: std::process::Child) -> Run {
    let out = child.wait_with_output().expect("the child runs");
    Run::of(out)
}

/// Waits (polling, with a generous limit that only guards against a hang) until `path` exists.
#[track_caller]
pub fn wait_for(path: &Path) {
    let start = Instant::now();
    while !path.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(300),
            "'{}' never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Makes an executable script at `path`.
pub fn write_script(path: &Path, body: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, body).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

/// The worktree path printed by `git task path <id>`.
pub fn path_of(repo: &TestRepo, id: &str) -> PathBuf {
    PathBuf::from(repo.task_root(&["path", id]).ok().out())
}

/// Runs `git args..` in the main worktree with `input` on stdin; returns trimmed stdout.
pub fn git_stdin(repo: &TestRepo, args: &[&str], input: &str) -> String {
    use std::io::Write;
    let mut child = repo
        .git_command(repo.root())
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "git {args:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// Builds with git plumbing what a `start` killed right after claiming `id` leaves:
/// a record still `provisioning` with a pid that cannot be alive, its base ref and branch, no worktree.
pub fn craft_abandoned_start(repo: &TestRepo, id: &str) {
    let main = rev(repo, "main");
    let state = format!(
        "id = \"{id}\"\nmode = \"worktree\"\nstatus = \"provisioning\"\nbranch = \"refs/heads/task/{id}\"\n\
         base_branch = \"refs/heads/main\"\nbase_commit = \"{main}\"\nworktree = \"{}\"\ncreated = 1\npid = 4000000000\n",
        repo.task_dir(id).display()
    );
    let state_blob = git_stdin(repo, &["hash-object", "-w", "--stdin"], &state);
    let contract_blob = git_stdin(repo, &["hash-object", "-w", "--stdin"], "version = 1\n");
    let tree = git_stdin(
        repo,
        &["mktree"],
        &format!(
            "100644 blob {contract_blob}\tcontract.toml\n100644 blob {state_blob}\ttask.toml\n"
        ),
    );
    let commit = repo.git(repo.root(), &["commit-tree", &tree, "-m", "started"]);
    repo.git(
        repo.root(),
        &["update-ref", &format!("refs/tasks/{id}/record"), &commit],
    );
    repo.git(
        repo.root(),
        &["update-ref", &format!("refs/tasks/{id}/base"), &main],
    );
    repo.git(repo.root(), &["branch", &format!("task/{id}"), "main"]);
    // A record git-task did not write verifies only once the user adopts it (as for records
    // an older git-task left): the crafted start stands for one.
    trust_records(repo, &[id]);
}

/// `git task trust --records --yes [ids]`: the user adopts records made outside this git-task.
pub fn trust_records(repo: &TestRepo, ids: &[&str]) {
    let mut args = vec!["trust", "--records", "--yes"];
    args.extend_from_slice(ids);
    repo.task_root(&args).ok();
}

/// Makes branch `task/<id>` the way git-task does (a first commit adding `.task-contract.toml`,
/// as a `start` killed at the wrong moment could leave it), checked out in a worktree at `dir`, with no record.
pub fn task_branch_without_record(repo: &TestRepo, id: &str, dir: &Path) {
    let branch = format!("task/{id}");
    repo.git(
        repo.root(),
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            &branch,
            dir.to_str().unwrap(),
        ],
    );
    repo.write(dir, ".task-contract.toml", "version = 1\n");
    repo.git(dir, &["add", ".task-contract.toml"]);
    repo.git(dir, &["commit", "-q", "-m", "contract"]);
}

/// Like [`task_branch_without_record`], but only the branch is left (its worktree is removed).
pub fn lone_task_branch(repo: &TestRepo, id: &str) {
    let dir = repo.base().join(format!("tmp-{id}"));
    task_branch_without_record(repo, id, &dir);
    repo.git(repo.root(), &["worktree", "remove", dir.to_str().unwrap()]);
}

/// The pack files under `.git/objects/pack` (by name) and whether any `.keep` is there.
pub fn packs(root: &std::path::Path) -> (std::collections::BTreeSet<String>, bool) {
    let mut packs = std::collections::BTreeSet::new();
    let mut keep = false;
    for e in std::fs::read_dir(root.join(".git/objects/pack")).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        keep |= name.ends_with(".keep");
        if let Some(stem) = name.strip_suffix(".pack") {
            packs.insert(stem.to_owned());
        }
    }
    (packs, keep)
}

/// Whether `id` is stored as a loose object.
pub fn loose(root: &std::path::Path, id: &str) -> bool {
    root.join(".git/objects")
        .join(&id[..2])
        .join(&id[2..])
        .exists()
}

/// Packs everything loose (`repack -a -d`, `prune-packed`) and returns the pack names, so that
/// what a command writes next can be told apart.
pub fn pack_everything(repo: &TestRepo) -> std::collections::BTreeSet<String> {
    repo.git(repo.root(), &["repack", "-a", "-d", "-q"]);
    repo.git(repo.root(), &["prune-packed"]);
    packs(repo.root()).0
}

/// Asserts that exactly one pack was added since `before`, that no `.keep` is left and that
/// each of `revs` is in it and not also loose; returns the new pack's index path.
#[track_caller]
pub fn assert_one_new_pack(
    repo: &TestRepo,
    before: &std::collections::BTreeSet<String>,
    revs: &[String],
) -> std::path::PathBuf {
    let root = repo.root();
    let (after, keep) = packs(root);
    assert!(!keep, "a .keep is left in .git/objects/pack");
    let new: Vec<&String> = after.difference(before).collect();
    assert_eq!(new.len(), 1, "one new pack: {before:?} -> {after:?}");
    let idx = root.join(format!(".git/objects/pack/{}.idx", new[0]));
    let listed = repo.git(root, &["verify-pack", "-v", idx.to_str().unwrap()]);
    for r in revs {
        let id = repo.git(root, &["rev-parse", r]);
        let id = id.trim();
        assert!(
            listed.contains(id),
            "{r} ({id}) is not in the new pack:\n{listed}"
        );
        assert!(!loose(root, id), "{r} ({id}) is also loose");
    }
    idx
}

/// Notes `aside` under `<common>/git-task/asides/` as `remove` does before it moves a worktree
/// aside: what a removal killed after that leaves for `sweep`.
pub fn note_aside(repo: &TestRepo, aside: &Path) {
    let notes = repo.root().join(".git/git-task/asides");
    std::fs::create_dir_all(&notes).unwrap();
    std::fs::write(
        notes.join(aside.file_name().unwrap()),
        aside.to_str().unwrap(),
    )
    .unwrap();
}
