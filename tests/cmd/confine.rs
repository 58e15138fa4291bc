//! `git task exec --confine`: the kernel's write fence (Landlock), tested on this machine's
//! kernel. Where the kernel has no Landlock the tests fail when `CI` is set (the CI machine
//! must have it) and print `SKIP:` otherwise; they never pass silently.

use crate::common::wait_for;
use crate::common::{bin, TestRepo};
use std::path::{Path, PathBuf};

/// Whether this kernel can confine (`hooks status --json`); `SKIP:` or a failure if not.
#[track_caller]
fn kernel_confines(repo: &TestRepo) -> bool {
    let status = repo.task_root(&["hooks", "status", "--json"]).ok().json();
    if status["confine"]["available"] == true {
        return true;
    }
    let why = status["confine"]["detail"]
        .as_str()
        .unwrap_or("?")
        .to_owned();
    if std::env::var_os("CI").is_some() {
        panic!("this CI machine's kernel cannot confine: {why}");
    }
    eprintln!("SKIP: the kernel cannot confine ({why})");
    false
}

fn common(repo: &TestRepo) -> PathBuf {
    repo.root().join(".git")
}

/// A shell line that tries to open `path` for writing (appending nothing, so a write that
/// is wrongly allowed changes no file) and prints `WROTE <label>` or `DENIED <label>`.
fn probe(label: &str, path: &Path) -> String {
    format!(
        "if (printf '' >> '{}') 2>/dev/null; then echo 'WROTE {label}'; else echo 'DENIED {label}'; fi\n",
        path.display()
    )
}

/// Runs `script` under `exec <id> --confine[=mode]`.
fn confined(repo: &TestRepo, id: &str, mode: Option<&str>, script: &str) -> crate::common::Run {
    let flag = match mode {
        Some(m) => format!("--confine={m}"),
        None => "--confine".to_owned(),
    };
    repo.task_root(&["exec", id, &flag, "--", "sh", "-c", script])
}

#[track_caller]
fn assert_lines(out: &str, want: &[&str]) {
    for w in want {
        assert!(out.lines().any(|l| l == *w), "missing '{w}' in:\n{out}");
    }
}

#[test]
fn a_confined_shell_commits_on_its_branch_and_writes_nothing_else() {
    let repo = TestRepo::new();
    if !kernel_confines(&repo) {
        return;
    }
    repo.task_root(&["hooks", "install"]).ok();
    repo.start("fa", &[]);
    let other = repo.start("fb", &[]);
    let c = common(&repo);
    let scratch = c.join("git-task/scratch/fa");
    let main_before = repo.git(repo.root(), &["rev-parse", "main"]);
    let tip_before = repo.git(repo.root(), &["rev-parse", "task/fa"]);
    let mut script = String::new();
    script += "echo 'pub fn changed() {}' >> src/lib.rs\n";
    script += "git commit -q -am inside && echo COMMITTED\n";
    script += "echo t > \"$TMPDIR/t\" && echo 'WROTE tmpdir'\n";
    script += &format!(
        "echo s > '{}/s' && echo 'WROTE scratch'\n",
        scratch.display()
    );
    script += "git config x.y z 2>/dev/null || echo 'FAILED config'\n";
    script += "git update-ref refs/heads/main HEAD 2>/dev/null || echo 'FAILED update-ref'\n";
    script += "git update-ref refs/tasks/fb/record HEAD 2>/dev/null || echo 'FAILED record'\n";
    for (label, path) in [
        ("config", c.join("config")),
        ("packed-refs", c.join("packed-refs")),
        ("main", c.join("refs/heads/main")),
        ("record", c.join("refs/tasks/fa/record")),
        ("new-task-ref", c.join("refs/tasks/new")),
        ("hooks", c.join("hooks/pre-commit")),
        ("new-hook", c.join("hooks/post-merge")),
        ("git-task", c.join("git-task/x")),
        ("objects", c.join("objects/info/alternates")),
        ("other-worktree", other.join("README.md")),
        ("other-admin", c.join("worktrees/fb/HEAD")),
        ("main-worktree", repo.root().join("README.md")),
        ("main-index", c.join("index")),
        ("outside", repo.base().join("outside")),
    ] {
        script += &probe(label, &path);
    }
    // A child of a child is confined as well.
    script += &format!(
        "sh -c \"sh -c '{}'\"\n",
        probe("grandchild", &repo.root().join("README.md")).replace('\'', "'\\''")
    );
    let run = confined(&repo, "fa", None, &script).ok();
    assert_lines(
        &run.stdout,
        &[
            "COMMITTED",
            "WROTE tmpdir",
            "WROTE scratch",
            "FAILED config",
            "FAILED update-ref",
            "FAILED record",
            "DENIED config",
            "DENIED packed-refs",
            "DENIED main",
            "DENIED record",
            "DENIED new-task-ref",
            "DENIED hooks",
            "DENIED new-hook",
            "DENIED git-task",
            "DENIED objects",
            "DENIED other-worktree",
            "DENIED other-admin",
            "DENIED main-worktree",
            "DENIED main-index",
            "DENIED outside",
            "DENIED grandchild",
        ],
    );
    assert!(!run.stdout.contains("WROTE config"), "{run}");
    // git is the oracle: the branch moved, nothing else did.
    let tip = repo.git(repo.root(), &["rev-parse", "task/fa"]);
    assert_ne!(tip, tip_before);
    assert_eq!(
        repo.git(repo.root(), &["log", "-1", "--format=%s", "task/fa"]),
        "inside"
    );
    assert_eq!(repo.git(repo.root(), &["rev-parse", "main"]), main_before);
    assert!(repo.git_run(repo.root(), &["config", "x.y"]).code != 0);
    // The session's objects were written to its private store, read by everyone through
    // the shared store's alternates.
    let alternates = std::fs::read_to_string(c.join("objects/info/alternates")).unwrap();
    assert!(
        alternates.contains("git-task/scratch/fa/objects"),
        "{alternates}"
    );
    repo.fsck();
}

#[test]
fn strict_leaves_out_what_the_contract_forbids() {
    let repo = TestRepo::new();
    if !kernel_confines(&repo) {
        return;
    }
    let wt = repo.start("st", &["--allow", "src/**", "--forbid", "src/store/**"]);
    let mut script = String::new();
    for (label, rel) in [
        ("allowed", "src/lib.rs"),
        ("forbidden", "src/store/mod.rs"),
        ("forbidden-new", "src/store/new.rs"),
        ("outside-hull", "README.md"),
        ("build", "target/out"),
    ] {
        script += &probe(label, &wt.join(rel));
    }
    let run = confined(&repo, "st", Some("strict"), &script).ok();
    assert_lines(
        &run.stdout,
        &[
            "WROTE allowed",
            "DENIED forbidden",
            "DENIED forbidden-new",
            "DENIED outside-hull",
            "WROTE build",
        ],
    );
    // It says what the fence could not express.
    assert!(run.stderr.contains("src/store"), "{run}");
    // Without strict the whole worktree is writable.
    let run = confined(&repo, "st", None, &probe("readme", &wt.join("README.md"))).ok();
    assert_lines(&run.stdout, &["WROTE readme"]);
}

#[test]
fn the_exit_code_and_signals_reach_the_command() {
    let repo = TestRepo::new();
    if !kernel_confines(&repo) {
        return;
    }
    let wt = repo.start("sig", &[]);
    confined(&repo, "sig", None, "exit 42").code(42);
    // git-task becomes the command: a signal sent to its pid reaches the command's trap.
    let ready = wt.join("ready");
    let mut cmd = repo.command(bin(), repo.root());
    cmd.args([
        "exec",
        "sig",
        "--confine",
        "--",
        "sh",
        "-c",
        "trap 'exit 7' TERM; echo > ready; while :; do sleep 0.05; done",
    ]);
    let mut child = cmd.spawn().unwrap();
    wait_for(&ready);
    let kill = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(7));
}

#[test]
fn the_sessions_objects_land_in_the_shared_store() {
    let repo = TestRepo::new();
    if !kernel_confines(&repo) {
        return;
    }
    repo.start("ob", &[]);
    let c = common(&repo);
    confined(
        &repo,
        "ob",
        None,
        "echo 'pub fn more() {}' >> src/lib.rs && git commit -q -am 'confined work'",
    )
    .ok();
    let private = c.join("git-task/scratch/ob/objects");
    let tip = repo.git(repo.root(), &["rev-parse", "task/ob"]);
    let loose = private.join(&tip[..2]).join(&tip[2..]);
    assert!(loose.is_file(), "the commit is in the private store");
    repo.task_root(&["merge", "ob", "--no-checks"]).ok();
    assert!(!private.exists(), "the private store is gone");
    let alternates = std::fs::read_to_string(c.join("objects/info/alternates")).unwrap_or_default();
    assert!(!alternates.contains("scratch"), "{alternates}");
    // The commit and everything it holds is in the shared store itself.
    repo.git(repo.root(), &["cat-file", "-e", &format!("{tip}^{{tree}}")]);
    assert!(repo.read(repo.root(), "src/lib.rs").contains("more"));
    repo.fsck();
}

#[test]
fn sweep_settles_a_finished_session_and_a_forged_object_is_left_out() {
    let repo = TestRepo::new();
    if !kernel_confines(&repo) {
        return;
    }
    repo.start("sw", &[]);
    let c = common(&repo);
    confined(
        &repo,
        "sw",
        None,
        "echo 'pub fn swept() {}' >> src/lib.rs && git commit -q -am swept",
    )
    .ok();
    let private = c.join("git-task/scratch/sw/objects");
    // A forgery: the blob of README.md on main, under the name of another object.
    let real = repo.git(repo.root(), &["rev-parse", "main:README.md"]);
    let fake = "1234567890123456789012345678901234567890";
    let src = c.join("objects").join(&real[..2]).join(&real[2..]);
    std::fs::create_dir_all(private.join("12")).unwrap();
    std::fs::copy(&src, private.join("12").join(&fake[2..])).unwrap();
    let tip = repo.git(repo.root(), &["rev-parse", "task/sw"]);
    repo.task_root(&["sweep"]).ok();
    assert!(!private.exists(), "the store was settled");
    let alternates = std::fs::read_to_string(c.join("objects/info/alternates")).unwrap_or_default();
    assert!(
        alternates.trim().is_empty(),
        "no alternates line left: {alternates}"
    );
    repo.git(repo.root(), &["cat-file", "-e", &tip]);
    assert!(
        repo.git_run(repo.root(), &["cat-file", "-e", fake]).code != 0,
        "the forged object was not trusted by name"
    );
    repo.fsck();
}

#[test]
fn the_next_session_settles_the_previous_one() {
    let repo = TestRepo::new();
    if !kernel_confines(&repo) {
        return;
    }
    repo.start("nx", &[]);
    let c = common(&repo);
    confined(
        &repo,
        "nx",
        None,
        "echo 'pub fn one() {}' >> src/lib.rs && git commit -q -am one",
    )
    .ok();
    let first = repo.git(repo.root(), &["rev-parse", "task/nx"]);
    // The next session starts from a fresh store: the first one's commit is shared now.
    let private = c.join("git-task/scratch/nx/objects");
    let run = confined(
        &repo,
        "nx",
        None,
        &format!(
            "test -e '{}' && echo STILL || echo MOVED",
            private.join(&first[..2]).join(&first[2..]).display()
        ),
    )
    .ok();
    assert_lines(&run.stdout, &["MOVED"]);
    let lines = std::fs::read_to_string(c.join("objects/info/alternates")).unwrap();
    assert_eq!(
        lines.lines().count(),
        1,
        "one line, not one per session: {lines}"
    );
    repo.task_root(&["remove", "nx", "--force"]).ok();
    assert!(!private.exists());
    let alternates = std::fs::read_to_string(c.join("objects/info/alternates")).unwrap_or_default();
    assert!(alternates.trim().is_empty(), "{alternates}");
    repo.fsck();
}

#[test]
fn hooks_status_says_whether_the_kernel_confines() {
    let repo = TestRepo::new();
    let run = repo.task_root(&["hooks", "status"]).ok();
    assert!(run.stdout.contains("exec --confine"), "{run}");
    let json = repo.task_root(&["hooks", "status", "--json"]).ok().json();
    assert!(json["confine"]["available"].is_boolean(), "{json}");
    if json["confine"]["available"] == true {
        assert!(json["confine"]["abi"].as_u64().unwrap() >= 3, "{json}");
    }
}

#[test]
fn a_patch_mode_task_cannot_be_confined() {
    let repo = TestRepo::new();
    if !kernel_confines(&repo) {
        return;
    }
    repo.task_root(&["start", "pm", "--mode", "patch"]).ok();
    let run = repo
        .task_root(&["exec", "pm", "--confine", "--", "true"])
        .code(2);
    assert!(run.stderr.contains("patch-mode"), "{run}");
}

/// The seccomp filter refuses terminal input injection before the kernel even looks at the
/// descriptor: `ioctl(0, TIOCSTI)` on a non-terminal fails with EPERM inside the fence, with
/// ENOTTY outside it.
#[test]
fn terminal_input_injection_is_refused() {
    let repo = TestRepo::new();
    if !kernel_confines(&repo) {
        return;
    }
    repo.start("ti", &[]);
    let script = "import errno, fcntl, termios\n\
                  try:\n    fcntl.ioctl(0, termios.TIOCSTI, b'x')\n    print('INJECTED')\n\
                  except OSError as e:\n    print(errno.errorcode[e.errno])\n";
    let inside = repo
        .task_root(&["exec", "ti", "--confine", "--", "python3", "-c", script])
        .ok();
    assert_eq!(inside.out(), "EPERM", "{inside}");
    let outside = repo
        .task_root(&["exec", "ti", "--", "python3", "-c", script])
        .ok();
    assert_eq!(outside.out(), "ENOTTY", "{outside}");
}

/// A private store deleted by hand leaves an alternates line every git command complains
/// about; `sweep` drops it.
#[test]
fn sweep_drops_the_line_of_a_store_deleted_by_hand() {
    let repo = TestRepo::new();
    if !kernel_confines(&repo) {
        return;
    }
    repo.start("gone", &[]);
    confined(&repo, "gone", None, "true").ok();
    let c = common(&repo);
    std::fs::remove_dir_all(c.join("git-task/scratch/gone/objects")).unwrap();
    assert!(repo
        .git_run(repo.root(), &["status"])
        .stderr
        .contains("alternates"));
    repo.task_root(&["sweep"]).ok();
    let alternates = std::fs::read_to_string(c.join("objects/info/alternates")).unwrap_or_default();
    assert!(alternates.trim().is_empty(), "{alternates}");
    let status = repo.git_run(repo.root(), &["status"]).ok();
    assert!(status.stderr.is_empty(), "{status}");
}

/// `task.confineWritable` names more writable paths (`~` expanded); others stay fenced.
#[test]
fn confine_writable_paths_are_writable_and_only_they() {
    let repo = TestRepo::new();
    if !kernel_confines(&repo) {
        return;
    }
    let home = repo.base().join("home");
    std::fs::create_dir_all(home.join(".agent-state")).unwrap();
    std::fs::create_dir_all(home.join(".other")).unwrap();
    repo.git(
        repo.root(),
        &["config", "task.confineWritable", "~/.agent-state"],
    );
    repo.start("cw", &[]);
    let script =
        probe("state", &home.join(".agent-state/x")) + &probe("other", &home.join(".other/x"));
    let run = confined(&repo, "cw", None, &script).ok();
    assert_lines(&run.stdout, &["WROTE state", "DENIED other"]);
}
