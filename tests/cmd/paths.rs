//! Path safety (SPEC §5): trees made by hand with git plumbing (`..`, `.git`, a name holding
//! `/`) are refused by the hook, `check` and `merge` with `unsafe_path`, and never written to
//! disk; protected files; symlinks that escape; hints that work and names that cannot drive
//! the terminal.

use crate::common::{all_refs, rev};
use crate::common::{Run, TestRepo};
use std::path::{Path, PathBuf};

/// One entry of a tree object: (mode, name bytes, object id).
type Entry = (String, Vec<u8>, String);

/// Reads the entries of `tree` with `git ls-tree -z` (names as raw bytes).
fn entries(repo: &TestRepo, dir: &Path, tree: &str) -> Vec<Entry> {
    let out = repo
        .command("git", dir)
        .args(["ls-tree", "-z", tree])
        .output()
        .unwrap();
    assert!(out.status.success());
    out.stdout
        .split(|b| *b == 0)
        .filter(|l| !l.is_empty())
        .map(|line| {
            let tab = line.iter().position(|b| *b == b'\t').unwrap();
            let meta = String::from_utf8(line[..tab].to_vec()).unwrap();
            let mut parts = meta.split(' ');
            // git writes tree modes without a leading zero (ls-tree pads them).
            let mode = parts.next().unwrap().trim_start_matches('0').to_owned();
            let _kind = parts.next();
            let id = parts.next().unwrap().to_owned();
            (mode, line[tab + 1..].to_vec(), id)
        })
        .collect()
}

/// Writes a tree object from `entries` as git would order them, without git's checks.
fn hand_tree(repo: &TestRepo, dir: &Path, mut list: Vec<Entry>) -> String {
    let key = |e: &Entry| {
        let mut k = e.1.clone();
        if e.0 == "40000" {
            k.push(b'/');
        }
        k
    };
    list.sort_by_key(key);
    let mut bytes = Vec::new();
    for (mode, name, id) in &list {
        bytes.extend_from_slice(mode.as_bytes());
        bytes.push(b' ');
        bytes.extend_from_slice(name);
        bytes.push(0);
        for i in (0..id.len()).step_by(2) {
            bytes.push(u8::from_str_radix(&id[i..i + 2], 16).unwrap());
        }
    }
    use std::io::Write;
    let mut child = repo
        .command("git", dir)
        .args(["hash-object", "-t", "tree", "--literally", "-w", "--stdin"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&bytes).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// Returns `tree` with one more entry `name` holding a blob `evil.txt` (a subtree), or a blob.
fn with_evil_entry(repo: &TestRepo, dir: &Path, tree: &str, name: &[u8], as_dir: bool) -> String {
    let blob = crate::common::git_stdin(repo, &["hash-object", "-w", "--stdin"], "owned\n");
    let mut list = entries(repo, dir, tree);
    if as_dir {
        let sub = hand_tree(
            repo,
            dir,
            vec![("100644".into(), b"evil.txt".to_vec(), blob)],
        );
        list.push(("40000".into(), name.to_vec(), sub));
    } else {
        list.push(("100644".into(), name.to_vec(), blob));
    }
    hand_tree(repo, dir, list)
}

/// Commits `tree` on top of HEAD of `dir` with `commit-tree` and moves its branch with `update-ref`
/// (what an agent can do without any hook running); returns the new commit.
fn smuggle(repo: &TestRepo, dir: &Path, tree: &str) -> String {
    let head = repo.git(dir, &["rev-parse", "HEAD"]);
    let commit = repo.git(
        dir,
        &["commit-tree", tree, "-p", &head, "-m", "innocent change"],
    );
    repo.git(dir, &["update-ref", "HEAD", &commit]);
    commit
}

/// Asserts `git fsck` finds nothing wrong but the hand-made trees themselves (which it names).
#[track_caller]
fn fsck_clean_but_hand_made(repo: &TestRepo) {
    let run = repo.git_run(repo.root(), &["fsck", "--no-progress"]);
    let bad: Vec<&str> = run
        .stdout
        .lines()
        .chain(run.stderr.lines())
        .filter(|l| {
            !(l.contains("hasDot")
                || l.contains("fullPathname")
                || l.contains("emptyName")
                || l.starts_with("dangling"))
        })
        .collect();
    assert!(bad.is_empty(), "git fsck:\n{run}");
}

/// Asserts nothing was written next to the task worktree (where `..` would land).
#[track_caller]
fn nothing_outside(repo: &TestRepo) {
    for p in [
        repo.base().join("repo.tasks").join("evil.txt"),
        repo.base().join("evil.txt"),
        repo.root().join(".git").join("evil.txt"),
    ] {
        assert!(!p.exists(), "{} was written", p.display());
    }
}

#[track_caller]
fn refused_unsafe(run: &Run) {
    assert_eq!(run.code, 1, "{run}");
    assert!(
        run.out().contains("unsafe_path") || run.stderr.contains("unsafe_path"),
        "{run}"
    );
}

/// A `..` entry committed with `commit-tree` + `update-ref`: check, merge and the hook refuse
/// it, the target branch does not move, and nothing is written outside the worktree.
#[test]
fn dotdot_entry_smuggled_with_plumbing_is_refused_everywhere() {
    let repo = TestRepo::new();
    repo.task_root(&["hooks", "install"]).ok();
    let wt = repo.start("t", &[]);
    let tree = repo.git(&wt, &["rev-parse", "HEAD^{tree}"]);
    let evil = with_evil_entry(&repo, &wt, &tree, b"..", true);
    smuggle(&repo, &wt, &evil);
    let main_before = rev(&repo, "main");

    refused_unsafe(&repo.task(&wt, &["check"]));
    let json = repo.task(&wt, &["check", "--json"]);
    assert_eq!(json.code, 1, "{json}");
    let v = json.json();
    assert!(
        v["violations"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["reason"] == "unsafe_path" && x["file"] == "../evil.txt"),
        "{json}"
    );

    // A commit through the hook: HEAD holds `..`, the index cannot.
    repo.write(&wt, "src/lib.rs", "pub fn lib() { /* more */ }\n");
    repo.git(&wt, &["add", "src/lib.rs"]);
    let commit = repo.git_run(&wt, &["commit", "-q", "-m", "more"]);
    assert_eq!(commit.code, 1, "{commit}");
    assert!(commit.stderr.contains("unsafe_path"), "{commit}");
    repo.git(&wt, &["reset", "-q", "--", "src/lib.rs"]);
    repo.git(&wt, &["checkout", "-q", "--", "src/lib.rs"]);

    // The worktree cannot hold `..`, so it differs from its branch: the gate refuses either way.
    let merge = repo.task_root(&["merge", "t", "--no-checks"]);
    assert_eq!(merge.code, 1, "{merge}");
    assert_eq!(rev(&repo, "main"), main_before, "the target must not move");

    // With the worktree gone, the gate judges the branch tip alone: `unsafe_path`.
    repo.git(
        repo.root(),
        &["worktree", "remove", "--force", &wt.to_string_lossy()],
    );
    let merge = repo.task_root(&["merge", "t", "--no-checks"]);
    refused_unsafe(&merge);
    assert_eq!(rev(&repo, "main"), main_before, "the target must not move");
    nothing_outside(&repo);
    fsck_clean_but_hand_made(&repo);
}

/// `.git`, `.GIT`, `git~1`, `.git ` and a name holding `/` are all unsafe, at any depth.
#[test]
fn git_dir_spellings_and_slash_names_are_unsafe() {
    for (name, as_dir) in [
        (&b".git"[..], true),
        (b".GIT", true),
        (b"git~1", true),
        (b".git. ", true),
        (b"a/b", false),
        (b".g\xe2\x80\x8cit", true),
    ] {
        let repo = TestRepo::new();
        let wt = repo.start("t", &[]);
        let src = repo.git(&wt, &["rev-parse", "HEAD:src"]);
        let sub = with_evil_entry(&repo, &wt, &src, name, as_dir);
        let mut top = entries(&repo, &wt, "HEAD^{tree}");
        top.retain(|e| e.1 != b"src");
        top.push(("40000".into(), b"src".to_vec(), sub));
        let tree = hand_tree(&repo, &wt, top);
        smuggle(&repo, &wt, &tree);
        let main_before = rev(&repo, "main");
        let check = repo.task(&wt, &["check", "--json"]);
        assert_eq!(check.code, 1, "{name:?}: {check}");
        assert!(check.stdout.contains("unsafe_path"), "{name:?}: {check}");
        let merge = repo.task_root(&["merge", "t", "--no-checks"]);
        assert_ne!(merge.code, 0, "{name:?}: {merge}");
        assert_eq!(rev(&repo, "main"), main_before);
        repo.git(
            repo.root(),
            &["worktree", "remove", "--force", &wt.to_string_lossy()],
        );
        let merge = repo.task_root(&["merge", "t", "--no-checks"]);
        assert_eq!(merge.code, 1, "{name:?}: {merge}");
        assert!(merge.stderr.contains("unsafe_path"), "{name:?}: {merge}");
        assert_eq!(rev(&repo, "main"), main_before);
    }
}

/// `start --base` a commit whose tree holds `..`: refused before anything is made or written.
#[test]
fn start_from_a_base_with_a_dotdot_entry_writes_nothing() {
    let repo = TestRepo::new();
    let tree = repo.git(repo.root(), &["rev-parse", "HEAD^{tree}"]);
    let evil = with_evil_entry(&repo, repo.root(), &tree, b"..", true);
    let commit = repo.git(
        repo.root(),
        &["commit-tree", &evil, "-p", "HEAD", "-m", "evil base"],
    );
    let before = all_refs(&repo);
    let run = repo.task_root(&["start", "t", "--base", &commit]);
    refused_unsafe(&run);
    assert_eq!(all_refs(&repo), before, "no ref may be written");
    assert!(!repo.task_dir("t").exists());
    nothing_outside(&repo);
    fsck_clean_but_hand_made(&repo);
}

/// After a pool fill remembered the base's trees as safe, a base that moved on to a tree with
/// `..` deep inside an unchanged-looking directory is still refused: only trees the fill
/// walked are skipped, and a changed subtree is a new tree.
#[test]
fn start_after_a_pool_fill_still_refuses_a_new_dotdot_entry() {
    let repo = TestRepo::new();
    repo.task_root(&["pool", "fill", "1", "--wait"]).ok();
    let store = repo.git(repo.root(), &["rev-parse", "HEAD:src/store"]);
    let evil_store = with_evil_entry(&repo, repo.root(), &store, b"..", true);
    let src = repo.git(repo.root(), &["rev-parse", "HEAD:src"]);
    let mut list = entries(&repo, repo.root(), &src);
    for e in list.iter_mut().filter(|e| e.1 == b"store") {
        e.2 = evil_store.clone();
    }
    let evil_src = hand_tree(&repo, repo.root(), list);
    let root = repo.git(repo.root(), &["rev-parse", "HEAD^{tree}"]);
    let mut list = entries(&repo, repo.root(), &root);
    for e in list.iter_mut().filter(|e| e.1 == b"src") {
        e.2 = evil_src.clone();
    }
    let evil_root = hand_tree(&repo, repo.root(), list);
    let commit = repo.git(
        repo.root(),
        &["commit-tree", &evil_root, "-p", "HEAD", "-m", "evil base"],
    );
    let before = all_refs(&repo);
    let run = repo.task_root(&["start", "t", "--base", &commit]);
    refused_unsafe(&run);
    assert_eq!(all_refs(&repo), before, "no ref may be written");
    assert!(!repo.task_dir("t").exists());
    nothing_outside(&repo);
}

/// `revert --to N` and `reset` to a checkpoint or base holding `..` write nothing outside the worktree.
#[test]
fn revert_to_a_checkpoint_with_a_dotdot_entry_writes_nothing() {
    let repo = TestRepo::new();
    let wt = repo.start("t", &[]);
    repo.write(&wt, "one.txt", "one\n");
    repo.task(&wt, &["checkpoint"]).ok();
    repo.write(&wt, "two.txt", "two\n");
    // The agent rewrites checkpoint 1 to a commit whose tree holds `..`.
    let cp = "refs/tasks/t/checkpoints/1";
    let cp_commit = repo.git(&wt, &["rev-parse", cp]);
    let cp_tree = repo.git(&wt, &["rev-parse", &format!("{cp}^{{tree}}")]);
    let evil = with_evil_entry(&repo, &wt, &cp_tree, b"..", true);
    let parents = repo.git(&wt, &["log", "-1", "--format=%P", cp]);
    let mut args = vec!["commit-tree".to_owned(), evil.clone()];
    for p in parents.split_whitespace() {
        args.push("-p".into());
        args.push(p.into());
    }
    args.extend(["-m".into(), "checkpoint 1".into()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let forged = repo.git(&wt, &args);
    repo.git(&wt, &["update-ref", cp, &forged, &cp_commit]);

    let run = repo.task(&wt, &["revert", "--to", "1"]);
    refused_unsafe(&run);
    nothing_outside(&repo);
    assert_eq!(repo.read(&wt, "two.txt"), "two\n", "nothing discarded");

    // The base ref moved by hand to a commit holding `..` changes nothing: reset and revert count
    // from the record's base (reset puts the ref back), and nothing is written outside.
    let base_tree = repo.git(&wt, &["rev-parse", "refs/tasks/t/base^{tree}"]);
    let evil_base = with_evil_entry(&repo, &wt, &base_tree, b"..", true);
    let evil_commit = repo.git(
        &wt,
        &[
            "commit-tree",
            &evil_base,
            "-p",
            "refs/tasks/t/base",
            "-m",
            "b",
        ],
    );
    repo.git(&wt, &["update-ref", "refs/tasks/t/base", &evil_commit]);
    let reset = repo.task(&wt, &["reset", "t"]);
    assert_eq!(reset.code, 0, "{reset}");
    assert_ne!(rev(&repo, "refs/tasks/t/base"), evil_commit.trim());
    nothing_outside(&repo);
    repo.git(&wt, &["update-ref", "refs/tasks/t/base", &evil_commit]);
    repo.write(&wt, "two.txt", "changed\n");
    let revert = repo.task(&wt, &["revert"]);
    assert_eq!(revert.code, 0, "{revert}");
    assert_eq!(
        repo.git(&wt, &["status", "--porcelain"]),
        "",
        "reverted to the record's base"
    );
    nothing_outside(&repo);
    fsck_clean_but_hand_made(&repo);
}

fn hooked_task(repo: &TestRepo, args: &[&str]) -> PathBuf {
    repo.task_root(&["hooks", "install"]).ok();
    repo.start("t", args)
}

#[track_caller]
fn refused_with(run: &Run, file: &str, reason: &str) {
    assert_eq!(run.code, 1, "{run}");
    assert!(
        run.stdout
            .lines()
            .chain(run.stderr.lines())
            .any(|l| l.trim_start().starts_with(file) && l.contains(reason)),
        "no '{file}  {reason}' line:\n{run}"
    );
}

/// A task never adds, changes or deletes a policy file, nor a contract file below the root.
#[test]
fn protected_files_are_refused() {
    let repo = TestRepo::new();
    repo.write(
        repo.root(),
        ".task-policy.toml",
        "version = 1\nforbidden = [\"secret/**\"]\n",
    );
    repo.write(repo.root(), "sub/.task-policy.toml", "version = 1\n");
    repo.git(repo.root(), &["add", "-A"]);
    repo.git(repo.root(), &["commit", "-q", "-m", "policy"]);
    let wt = hooked_task(&repo, &[]);

    repo.git(&wt, &["rm", "-q", ".task-policy.toml"]);
    let run = repo.git_run(&wt, &["commit", "-q", "-m", "loosen"]);
    refused_with(&run, ".task-policy.toml", "protected");
    repo.git(&wt, &["reset", "-q", "--hard"]);

    repo.write(&wt, "sub/.task-policy.toml", "version = 1\nallowed = []\n");
    repo.git(&wt, &["add", "-A"]);
    let run = repo.git_run(&wt, &["commit", "-q", "-m", "edit"]);
    refused_with(&run, "sub/.task-policy.toml", "protected");
    repo.git(&wt, &["reset", "-q", "--hard"]);

    repo.write(&wt, "src/.task-contract.toml", "version = 1\n");
    repo.git(&wt, &["add", "-A"]);
    let run = repo.git_run(&wt, &["commit", "-q", "-m", "nested"]);
    refused_with(&run, "src/.task-contract.toml", "protected");

    // Committed without the hook, the merge refuses it too.
    repo.git(&wt, &["commit", "-q", "--no-verify", "-m", "nested"]);
    let main = rev(&repo, "main");
    let merge = repo.task_root(&["merge", "t", "--no-checks"]);
    refused_with(&merge, "src/.task-contract.toml", "protected");
    assert_eq!(rev(&repo, "main"), main);
}

/// Symlinks to a forbidden directory, to an absolute path, out of the repository, or to a
/// directory above a forbidden one are `symlink_escape`; a link inside the allowed area is fine.
#[test]
fn symlinks_that_escape_are_refused() {
    let repo = TestRepo::new();
    repo.write(repo.root(), "secret/key", "k\n");
    repo.git(repo.root(), &["add", "-A"]);
    repo.git(repo.root(), &["commit", "-q", "-m", "secret"]);
    let wt = hooked_task(&repo, &["--forbid", "secret/**"]);
    for (link, target) in [
        ("src/d", "../secret"),
        ("src/abs", "/etc"),
        ("src/out", "../../outside"),
        ("src/top", ".."),
        ("src/k", "../secret/key"),
    ] {
        std::os::unix::fs::symlink(target, wt.join(link)).unwrap();
        repo.git(&wt, &["add", "-A"]);
        let run = repo.git_run(&wt, &["commit", "-q", "-m", "link"]);
        refused_with(&run, link, "symlink_escape");
        repo.git(&wt, &["reset", "-q", "--hard"]);
        let _ = std::fs::remove_file(wt.join(link));
    }
    std::os::unix::fs::symlink("lib.rs", wt.join("src/alias.rs")).unwrap();
    repo.git(&wt, &["add", "-A"]);
    repo.git(&wt, &["commit", "-q", "-m", "fine link"]);

    // Committed with --no-verify: check and merge refuse it.
    std::os::unix::fs::symlink("../secret", wt.join("src/d")).unwrap();
    repo.git(&wt, &["add", "-A"]);
    repo.git(&wt, &["commit", "-q", "--no-verify", "-m", "link"]);
    let check = repo.task(&wt, &["check"]);
    refused_with(&check, "src/d", "symlink_escape");
    let main = rev(&repo, "main");
    let merge = repo.task_root(&["merge", "t", "--no-checks"]);
    refused_with(&merge, "src/d", "symlink_escape");
    assert_eq!(rev(&repo, "main"), main);
}

/// A link into a directory outside `allowed` escapes too.
#[test]
fn symlink_to_a_directory_outside_allowed_escapes() {
    let repo = TestRepo::new();
    let wt = hooked_task(&repo, &["--allow", "src/**"]);
    std::os::unix::fs::symlink("..", wt.join("src/up")).unwrap();
    repo.git(&wt, &["add", "-A"]);
    let run = repo.git_run(&wt, &["commit", "-q", "-m", "up"]);
    refused_with(&run, "src/up", "symlink_escape");
}

/// A file name carrying a terminal escape is shown escaped, and the printed repair command,
/// run from a subdirectory, puts the file back.
#[test]
fn control_characters_are_escaped_and_repair_commands_work_from_a_subdirectory() {
    let repo = TestRepo::new();
    let name = "src/store/\x1b[31mred.rs";
    repo.write(repo.root(), name, "original\n");
    repo.git(repo.root(), &["add", "-A"]);
    repo.git(repo.root(), &["commit", "-q", "-m", "red"]);
    let wt = hooked_task(&repo, &["--forbid", "src/store/**"]);
    repo.write(&wt, name, "changed\n");
    repo.write(&wt, "src/store/mod.rs", "changed\n");
    repo.git(&wt, &["add", "-A"]);
    let sub = wt.join("src");
    let run = repo.git_run(&sub, &["commit", "-q", "-m", "edit"]);
    assert_eq!(run.code, 1, "{run}");
    assert!(!run.stderr.contains('\x1b'), "raw escape printed:\n{run}");
    assert!(run.stderr.contains("\\x1b[31mred.rs"), "{run}");

    let check = repo.task(&sub, &["check"]);
    assert_eq!(check.code, 1, "{check}");
    assert!(
        !check.stderr.contains('\x1b') && !check.stdout.contains('\x1b'),
        "{check}"
    );
    let command = check
        .stdout
        .lines()
        .chain(check.stderr.lines())
        .filter_map(|l| l.strip_prefix("hint:"))
        .map(str::trim)
        .find(|l| l.starts_with("git ") && l.contains(" restore "))
        .unwrap_or_else(|| panic!("no restore command:\n{check}"))
        .to_owned();
    assert!(command.starts_with("git -C "), "{command}");
    let shell = repo
        .command("bash", &sub)
        .args(["-c", &command])
        .output()
        .unwrap();
    assert!(
        shell.status.success(),
        "{command}: {}",
        String::from_utf8_lossy(&shell.stderr)
    );
    assert_eq!(repo.read(&wt, name), "original\n");
    assert_eq!(repo.read(&wt, "src/store/mod.rs"), "pub fn store() {}\n");
    assert_eq!(repo.porcelain(&wt), "");
}

/// The tamper hint names the frozen allowed paths, not the branch file's `**`.
#[test]
fn tamper_hint_names_the_frozen_allowed_paths() {
    let repo = TestRepo::new();
    let wt = hooked_task(&repo, &["--allow", "src/**"]);
    let text = repo.read(&wt, ".task-contract.toml");
    let loose = text.replace("\"src/**\"", "\"**\"");
    assert_ne!(text, loose, "{text}");
    repo.write(&wt, ".task-contract.toml", &loose);
    repo.write(&wt, "src/lib.rs", "// x\n");
    repo.git(&wt, &["add", "-A"]);
    let run = repo.git_run(&wt.join("src"), &["commit", "-q", "-m", "loosen"]);
    refused_with(&run, ".task-contract.toml", "contract_tampered");
    assert!(run.stderr.contains("may only change: src/**"), "{run}");
    assert!(!run.stderr.contains("may only change: **"), "{run}");
    // The restore command works from the subdirectory.
    let command = run
        .stderr
        .lines()
        .filter_map(|l| l.strip_prefix("hint: Restore the contract with:"))
        .map(str::trim)
        .next()
        .unwrap_or_else(|| panic!("{run}"))
        .to_owned();
    let shell = repo
        .command("sh", &wt.join("src"))
        .args(["-c", &command])
        .output()
        .unwrap();
    assert!(shell.status.success(), "{command}");
    assert_eq!(repo.read(&wt, ".task-contract.toml"), text);
}

/// Error, warning and hint text never carries a raw control character, whatever the file names.
#[test]
fn error_messages_escape_file_names() {
    let repo = TestRepo::new();
    let wt = repo.start("t", &[]);
    repo.write(&wt, "\x1b]0;owned\x07title.txt", "x\n");
    let run = repo.task_root(&["remove", "t"]);
    assert_eq!(run.code, 1, "{run}");
    assert!(
        !run.stderr.contains('\x1b') && !run.stderr.contains('\x07'),
        "{run}"
    );
    assert!(run.stderr.contains("\\x1b]0;owned\\x07title.txt"), "{run}");
}

/// The hook's auto-revert never writes or deletes through a symlinked directory: a path staged
/// by hand below a link to a directory outside the worktree is left alone there.
#[test]
fn auto_revert_does_not_follow_a_symlinked_parent() {
    let repo = TestRepo::new();
    repo.git(repo.root(), &["config", "task.onViolation", "revert"]);
    let wt = hooked_task(&repo, &["--forbid", "src/d/**"]);
    let outside = repo.base().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("x"), "precious\n").unwrap();
    let blob = crate::common::git_stdin(&repo, &["hash-object", "-w", "--stdin"], "x\n");
    repo.git(
        &wt,
        &[
            "update-index",
            "--add",
            "--cacheinfo",
            &format!("100644,{blob},src/d/x"),
        ],
    );
    std::os::unix::fs::symlink(&outside, wt.join("src/d")).unwrap();
    let run = repo.git_run(&wt, &["commit", "-q", "-m", "sneaky"]);
    assert_ne!(run.code, 0, "{run}");
    assert_eq!(
        std::fs::read_to_string(outside.join("x")).unwrap(),
        "precious\n",
        "{run}"
    );
}
