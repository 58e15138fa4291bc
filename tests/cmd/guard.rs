//! `git task guard claude|codex|gemini`: the agent harnesses' pre-write hooks, driven with the
//! recorded hook inputs of `tests/fixtures/guard/` (README there cites each protocol).
//!
//! The protocol every test holds the guard to: an edit the task may make prints nothing and
//! exits 0; one it may not make prints exactly the harness's documented deny document (exit 0)
//! whose reason names the rule; anything the guard cannot judge exits 2 with a reason on stderr
//! and nothing on stdout (never an allow).

use crate::common::*;
use crate::common::{Run, TestRepo};
use serde_json::Value;
use std::io::Write;
use std::path::Path;
use std::process::Stdio;

/// A repository with `src/api/a.rs`, `src/db/x.rs` and `docs/old.md` committed on `main`.
fn repo() -> TestRepo {
    let repo = TestRepo::new();
    repo.write(
        repo.root(),
        "src/api/a.rs",
        "use std::fmt;\npub fn handler() -> u32 {\n    1\n}\n",
    )
    .write(repo.root(), "src/db/x.rs", "pub fn db() {}\n")
    .write(repo.root(), "docs/old.md", "# old\n");
    commit_all(&repo, repo.root(), "files");
    repo
}

/// Replaces `@WORKTREE@` in every string of `v`.
fn substitute(v: &mut Value, wt: &str) {
    match v {
        Value::String(s) => *s = s.replace("@WORKTREE@", wt),
        Value::Array(a) => a.iter_mut().for_each(|x| substitute(x, wt)),
        Value::Object(o) => o.values_mut().for_each(|x| substitute(x, wt)),
        _ => {}
    }
}

/// A recorded hook input with `@WORKTREE@` made `wt` (substituted after parsing).
fn fixture(name: &str, wt: &Path) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/guard")
        .join(name);
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    substitute(&mut v, &wt.display().to_string());
    v
}

/// Runs `git task guard <harness>` from `dir` with `stdin`, as the harness does.
fn guard_run(repo: &TestRepo, dir: &Path, harness: &str, stdin: &str, env: &[(&str, &str)]) -> Run {
    let mut cmd = task_command(repo, dir, &["guard", harness]);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The guard may exit before reading everything (it never does today); ignore a broken pipe.
    let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    collect(child)
}

fn guard(repo: &TestRepo, dir: &Path, harness: &str, input: &Value) -> Run {
    guard_run(repo, dir, harness, &input.to_string(), &[])
}

/// Asserts the edit passes: exit 0, nothing on stdout (so the harness's own permission flow
/// decides; Claude Code would auto-approve on an explicit "allow").
#[track_caller]
fn passes(run: &Run) {
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(run.stdout, "", "{run}");
}

/// Asserts the harness's exact deny document and returns its reason.
#[track_caller]
fn denied(run: &Run, harness: &str) -> String {
    assert_eq!(
        run.code, 0,
        "a deny is exit 0 with the decision on stdout: {run}"
    );
    assert!(
        run.stdout.starts_with('{'),
        "nothing may precede the JSON: {run}"
    );
    let v: Value = serde_json::from_str(&run.stdout).expect("stdout is one JSON document");
    let obj = v.as_object().unwrap();
    match harness {
        "claude" | "codex" => {
            assert_eq!(obj.len(), 1, "{v}");
            let h = v["hookSpecificOutput"]
                .as_object()
                .expect("hookSpecificOutput");
            assert_eq!(h.len(), 3, "{v}");
            assert_eq!(h["hookEventName"], "PreToolUse");
            assert_eq!(h["permissionDecision"], "deny");
            h["permissionDecisionReason"].as_str().unwrap().to_owned()
        }
        "gemini" => {
            assert_eq!(obj.len(), 2, "{v}");
            assert_eq!(v["decision"], "deny");
            v["reason"].as_str().unwrap().to_owned()
        }
        _ => unreachable!(),
    }
}

/// Asserts the guard blocked through its exit code alone: 2, a reason on stderr, nothing on stdout.
#[track_caller]
fn blocked(run: &Run) {
    assert_eq!(run.code, 2, "{run}");
    assert_eq!(
        run.stdout, "",
        "never an allow, never a JSON that could be one: {run}"
    );
    assert!(
        !run.stderr.trim().is_empty(),
        "Codex and Gemini block only with a reason: {run}"
    );
}

fn with_path(mut input: Value, field: &str, path: &str) -> Value {
    input["tool_input"][field] = Value::String(path.to_owned());
    input
}

fn at(wt: &Path, rel: &str) -> String {
    wt.join(rel).display().to_string()
}

/// Every Claude Code tool the matcher names, in contract: nothing printed, exit 0.
#[test]
fn claude_tools_inside_the_contract_pass_silently() {
    let repo = repo();
    let wt = repo.start("t", &["--allow", "src/api/**"]);
    for name in [
        "claude-edit.json",
        "claude-write.json",
        "claude-multiedit.json",
        "claude-notebookedit.json",
    ] {
        let run = guard(&repo, &wt, "claude", &fixture(name, &wt));
        passes(&run);
        assert_eq!(run.stderr, "", "{name}: {run}");
    }
    // The same session from the main worktree (Claude Code runs hooks in the project dir).
    passes(&guard(
        &repo,
        repo.root(),
        "claude",
        &fixture("claude-write.json", &wt),
    ));
}

/// A forbidden path: Claude Code's deny, naming the rule, what the task may change and where
/// to see its contract; the same tool input through every Claude tool.
#[test]
fn forbidden_path_is_denied_with_the_rule_and_the_scope() {
    let repo = repo();
    let wt = repo.start("t", &["--allow", "src/**", "--forbid", "src/db/**"]);
    for (name, field) in [
        ("claude-edit.json", "file_path"),
        ("claude-write.json", "file_path"),
        ("claude-multiedit.json", "file_path"),
        ("claude-notebookedit.json", "notebook_path"),
    ] {
        let input = with_path(fixture(name, &wt), field, &at(&wt, "src/db/x.rs"));
        let reason = denied(&guard(&repo, &wt, "claude", &input), "claude");
        assert!(
            reason.contains("'src/db/x.rs': forbidden (src/db/**)"),
            "{name}: {reason}"
        );
        assert!(reason.contains("It may only change: src/**"), "{reason}");
        assert!(
            reason.contains("it must never change: src/db/**"),
            "{reason}"
        );
        assert!(reason.contains("git task status t"), "{reason}");
    }
    // Nothing was written, nothing recorded: the guard only reads.
    assert_eq!(repo.porcelain(&wt), "");
}

#[test]
fn path_outside_allowed_is_not_allowed() {
    let repo = repo();
    let wt = repo.start("t", &["--allow", "src/api/**"]);
    let input = with_path(
        fixture("claude-edit.json", &wt),
        "file_path",
        &at(&wt, "README.md"),
    );
    let reason = denied(&guard(&repo, &wt, "claude", &input), "claude");
    assert!(
        reason.contains("'README.md': not_allowed (allowed = [\"src/api/**\"])"),
        "{reason}"
    );
}

/// `--no-new-files`: a file HEAD does not hold is new; one it holds may be edited.
#[test]
fn new_file_is_judged_from_head() {
    let repo = repo();
    let wt = repo.start("t", &["--allow", "src/api/**", "--no-new-files"]);
    let write = fixture("claude-write.json", &wt);
    passes(&guard(&repo, &wt, "claude", &write));
    let new = with_path(write.clone(), "file_path", &at(&wt, "src/api/new.rs"));
    let reason = denied(&guard(&repo, &wt, "claude", &new), "claude");
    assert!(
        reason.contains("'src/api/new.rs': new_file_disallowed (allow_new_files = false)"),
        "{reason}"
    );
    assert!(reason.contains("it may not add files"), "{reason}");
    // On disk but not committed is still new to the task (the commit hook says the same).
    repo.write(&wt, "src/api/new.rs", "x\n");
    denied(&guard(&repo, &wt, "claude", &new), "claude");
}

/// `.task-policy.toml` anywhere and a `.task-contract.toml` below the root are protected; the
/// task's own root contract file is the commit hook's to judge.
#[test]
fn protected_files_are_denied_and_the_root_contract_file_is_not() {
    let repo = repo();
    let wt = repo.start("t", &[]);
    let write = fixture("claude-write.json", &wt);
    for rel in [
        ".task-policy.toml",
        "src/.task-policy.toml",
        "src/.task-contract.toml",
    ] {
        let input = with_path(write.clone(), "file_path", &at(&wt, rel));
        let reason = denied(&guard(&repo, &wt, "claude", &input), "claude");
        assert!(reason.contains(&format!("'{rel}': protected")), "{reason}");
    }
    let own = with_path(write, "file_path", &at(&wt, ".task-contract.toml"));
    passes(&guard(&repo, &wt, "claude", &own));
}

#[test]
fn a_path_another_task_claims_is_claimed_by() {
    let repo = repo();
    let wt = repo.start("a", &[]);
    repo.start("b", &["--allow", "src/db/**"]);
    repo.task_root(&["claim", "b", "src/db/**"]).ok();
    let input = with_path(
        fixture("claude-edit.json", &wt),
        "file_path",
        &at(&wt, "src/db/x.rs"),
    );
    let reason = denied(&guard(&repo, &wt, "claude", &input), "claude");
    assert!(reason.contains("'src/db/x.rs': claimed_by"), "{reason}");
    assert!(reason.contains("task 'b'"), "{reason}");
}

/// A path that climbs with `..` is never judged allowed, even where it lands inside the
/// contract; `.git` in any spelling is refused too.
#[test]
fn unsafe_paths_are_denied() {
    let repo = repo();
    let wt = repo.start("t", &["--allow", "src/**"]);
    let write = fixture("claude-write.json", &wt);
    let climbing = with_path(
        write.clone(),
        "file_path",
        &format!("{}/src/db/../api/a.rs", wt.display()),
    );
    let reason = denied(&guard(&repo, &wt, "claude", &climbing), "claude");
    assert!(reason.contains("'src/api/a.rs': unsafe_path"), "{reason}");
    for rel in [".git/config", ".GIT/hooks/pre-commit", "src/.git/x"] {
        let input = with_path(write.clone(), "file_path", &at(&wt, rel));
        let reason = denied(&guard(&repo, &wt, "claude", &input), "claude");
        assert!(reason.contains("unsafe_path"), "{rel}: {reason}");
    }
    // Codex: a relative patch path with `..`.
    let mut codex = fixture("codex-pretooluse-apply_patch.json", &wt);
    codex["tool_input"]["command"] = Value::String(
        "*** Begin Patch\n*** Update File: src/api/../api/a.rs\n@@\n-1\n+2\n*** End Patch\n".into(),
    );
    let reason = denied(&guard(&repo, &wt, "codex", &codex), "codex");
    assert!(reason.contains("unsafe_path"), "{reason}");
}

/// A path inside the worktree that leads out of it through a symlink is `symlink_escape`;
/// one that leads to a forbidden path inside it is judged where it lands.
#[cfg(unix)]
#[test]
fn symlinked_paths_are_judged_where_they_land() {
    let repo = repo();
    let wt = repo.start(
        "t",
        &[
            "--allow",
            "src/api/**",
            "--allow",
            "src/db/**",
            "--forbid",
            "src/db/**",
        ],
    );
    std::os::unix::fs::symlink(repo.root().join("src"), wt.join("src/api/main")).unwrap();
    std::os::unix::fs::symlink("../db", wt.join("src/api/db")).unwrap();
    let write = fixture("claude-write.json", &wt);

    let out = with_path(write.clone(), "file_path", &at(&wt, "src/api/main/lib.rs"));
    let reason = denied(&guard(&repo, &wt, "claude", &out), "claude");
    assert!(reason.contains("symlink_escape"), "{reason}");
    assert!(
        reason.contains(&repo.root().join("src/lib.rs").display().to_string()),
        "{reason}"
    );

    let inside = with_path(write.clone(), "file_path", &at(&wt, "src/api/db/x.rs"));
    let reason = denied(&guard(&repo, &wt, "claude", &inside), "claude");
    assert!(reason.contains("'src/db/x.rs': forbidden"), "{reason}");
    assert!(reason.contains("through a symlink"), "{reason}");

    // Writing to an existing symlink writes its target: judged there.
    std::os::unix::fs::symlink("../db/x.rs", wt.join("src/api/x.rs")).unwrap();
    let file = with_path(write, "file_path", &at(&wt, "src/api/x.rs"));
    let reason = denied(&guard(&repo, &wt, "claude", &file), "claude");
    assert!(reason.contains("'src/db/x.rs': forbidden"), "{reason}");
}

/// A task's worktree whose HEAD was detached (or moved to another branch) is still the task's.
#[test]
fn a_detached_task_worktree_is_still_fenced() {
    let repo = repo();
    let wt = repo.start("t", &["--allow", "src/api/**"]);
    repo.git(&wt, &["checkout", "-q", "--detach"]);
    let input = with_path(
        fixture("claude-write.json", &wt),
        "file_path",
        &at(&wt, "README.md"),
    );
    let reason = denied(&guard(&repo, &wt, "claude", &input), "claude");
    assert!(reason.contains("'README.md': not_allowed"), "{reason}");
    passes(&guard(
        &repo,
        &wt,
        "claude",
        &fixture("claude-write.json", &wt),
    ));
}

/// A `.git` file planted in a subdirectory, naming another task's git dir, does not make the
/// subdirectory that task's worktree: every edit there is refused.
#[test]
fn a_planted_git_file_does_not_borrow_another_tasks_contract() {
    let repo = repo();
    let wt = repo.start("t", &["--allow", "src/api/**"]);
    repo.start("o", &[]);
    let admin = repo.root().join(".git/worktrees/o");
    assert!(admin.is_dir());
    repo.write(&wt, "docs/.git", &format!("gitdir: {}\n", admin.display()));
    let mut input = with_path(
        fixture("claude-write.json", &wt),
        "file_path",
        &at(&wt, "docs/new.md"),
    );
    // From the main worktree, so that the session's own task does not refuse it first.
    input["cwd"] = Value::String(repo.root().display().to_string());
    let reason = denied(&guard(&repo, repo.root(), "claude", &input), "claude");
    assert!(reason.contains("but the task's worktree is"), "{reason}");
}

/// Gemini CLI sends the path as the model wrote it, possibly relative to `cwd`.
#[test]
fn gemini_relative_and_absolute_paths_and_its_deny_shape() {
    let repo = repo();
    let wt = repo.start("t", &["--allow", "src/api/**"]);
    let relative = fixture("gemini-beforetool-replace-relative.json", &wt);
    assert_eq!(relative["tool_input"]["file_path"], "src/api/a.rs");
    passes(&guard(&repo, &wt, "gemini", &relative));
    passes(&guard(
        &repo,
        &wt,
        "gemini",
        &fixture("gemini-beforetool-write_file.json", &wt),
    ));
    let reason = denied(
        &guard(
            &repo,
            &wt,
            "gemini",
            &with_path(relative.clone(), "file_path", "README.md"),
        ),
        "gemini",
    );
    assert!(reason.contains("'README.md': not_allowed"), "{reason}");
    // Relative to a `cwd` below the top of the worktree.
    let mut deeper = with_path(relative, "file_path", "a.rs");
    deeper["cwd"] = Value::String(at(&wt, "src/api"));
    passes(&guard(&repo, &wt, "gemini", &deeper));
    deeper["tool_input"]["file_path"] = Value::String("../db/x.rs".into());
    denied(&guard(&repo, &wt, "gemini", &deeper), "gemini");
}

/// Codex CLI: every path of the patch, relative to `cwd`; a move deletes its source.
#[test]
fn codex_patch_paths_are_each_judged() {
    let repo = repo();
    let wt = repo.start("t", &["--allow", "src/api/**"]);
    passes(&guard(
        &repo,
        &wt,
        "codex",
        &fixture("codex-pretooluse-apply_patch.json", &wt),
    ));
    let multi = fixture("codex-pretooluse-apply_patch-multi.json", &wt);
    let reason = denied(&guard(&repo, &wt, "codex", &multi), "codex");
    assert!(reason.contains("'src/core/a.rs': not_allowed"), "{reason}");
    assert!(reason.contains("'docs/old.md': not_allowed"), "{reason}");
    assert!(!reason.contains("'src/api/b.rs'"), "{reason}");

    // Deletions: the delete and the move's source are deletions of files HEAD holds.
    let wt2 = repo.start(
        "d",
        &["--allow", "src/**", "--allow", "docs/**", "--no-deletions"],
    );
    let multi = fixture("codex-pretooluse-apply_patch-multi.json", &wt2);
    let reason = denied(&guard(&repo, &wt2, "codex", &multi), "codex");
    assert!(
        reason.contains("'docs/old.md': deletion_disallowed"),
        "{reason}"
    );
    assert!(
        reason.contains("'src/api/a.rs': deletion_disallowed"),
        "{reason}"
    );
    assert!(!reason.contains("'src/core/a.rs'"), "{reason}");

    // The task's own contract file may be edited (the commit hook judges it), not deleted.
    let mut contract = fixture("codex-pretooluse-apply_patch.json", &wt);
    contract["tool_input"]["command"] = Value::String(
        "*** Begin Patch\n*** Update File: .task-contract.toml\n@@\n-a\n+b\n*** End Patch\n".into(),
    );
    passes(&guard(&repo, &wt, "codex", &contract));
    contract["tool_input"]["command"] = Value::String(
        "*** Begin Patch\n*** Delete File: .task-contract.toml\n*** End Patch\n".into(),
    );
    let reason = denied(&guard(&repo, &wt, "codex", &contract), "codex");
    assert!(
        reason.contains("'.task-contract.toml': contract_tampered"),
        "{reason}"
    );
}

/// Outside every task worktree while the session works in one: denied. Outside while the
/// session is not in a task: not git-task's business. In another task's worktree: denied.
#[test]
fn paths_outside_the_sessions_worktree() {
    let repo = repo();
    let wt = repo.start("t", &[]);
    let other = repo.start("o", &[]);
    let write = fixture("claude-write.json", &wt);

    let main_file = with_path(write.clone(), "file_path", &at(repo.root(), "src/lib.rs"));
    let reason = denied(&guard(&repo, &wt, "claude", &main_file), "claude");
    assert!(
        reason.contains("outside the worktree of task 't'"),
        "{reason}"
    );
    assert!(reason.contains(&wt.display().to_string()), "{reason}");
    assert!(
        reason.contains(&format!(
            "the task's copy of that file is {}",
            at(&wt, "src/lib.rs")
        )),
        "{reason}"
    );

    let anywhere = with_path(
        write.clone(),
        "file_path",
        &repo.base().join("home/notes.txt").display().to_string(),
    );
    let reason = denied(&guard(&repo, &wt, "claude", &anywhere), "claude");
    // The reason says where temporary files may go: the task's scratch directory.
    let scratch = repo.task_root(&["scratch", "t"]).ok().out().to_owned();
    assert!(reason.contains(&scratch), "{reason}");
    let in_scratch = with_path(
        write.clone(),
        "file_path",
        &format!("{scratch}/tmp/notes.txt"),
    );
    passes(&guard(&repo, &wt, "claude", &in_scratch));
    // Not another task's scratch directory.
    let theirs_scratch = repo.task_root(&["scratch", "o"]).ok().out().to_owned();
    let other_scratch = with_path(write.clone(), "file_path", &format!("{theirs_scratch}/x"));
    denied(&guard(&repo, &wt, "claude", &other_scratch), "claude");

    let theirs = with_path(write.clone(), "file_path", &at(&other, "src/lib.rs"));
    let reason = denied(&guard(&repo, &wt, "claude", &theirs), "claude");
    assert!(reason.contains("task 'o'"), "{reason}");

    // A session in the main worktree (no patch-mode task) editing the main worktree, or
    // outside any repository: not ours.
    let mut from_main = main_file.clone();
    from_main["cwd"] = Value::String(repo.root().display().to_string());
    passes(&guard(&repo, repo.root(), "claude", &from_main));
    let mut nowhere = anywhere;
    nowhere["cwd"] = Value::String(repo.base().join("home").display().to_string());
    passes(&guard(&repo, &repo.base().join("home"), "claude", &nowhere));
    // But from the main worktree into a task's worktree: that task's contract holds.
    let mut into_task = with_path(write, "file_path", &at(&wt, ".task-policy.toml"));
    into_task["cwd"] = Value::String(repo.root().display().to_string());
    denied(&guard(&repo, repo.root(), "claude", &into_task), "claude");
}

/// The patch-mode task active in the main worktree fences edits there.
#[test]
fn patch_mode_task_in_the_main_worktree() {
    let repo = repo();
    repo.task_root(&["start", "p", "--mode", "patch", "--allow", "src/api/**"])
        .ok();
    let root = repo.root().to_path_buf();
    passes(&guard(
        &repo,
        &root,
        "claude",
        &fixture("claude-edit.json", &root),
    ));
    let input = with_path(
        fixture("claude-edit.json", &root),
        "file_path",
        &at(&root, "README.md"),
    );
    let reason = denied(&guard(&repo, &root, "claude", &input), "claude");
    assert!(reason.contains("'README.md': not_allowed"), "{reason}");
    assert!(reason.contains("git task status p"), "{reason}");
}

/// Anything the guard cannot read blocks through exit 2 and never prints an allow.
#[test]
fn malformed_input_blocks_with_exit_2() {
    let repo = repo();
    let wt = repo.start("t", &[]);
    let write = fixture("claude-write.json", &wt);
    let mut cases: Vec<(&str, String)> = vec![
        ("claude", "not json".into()),
        ("claude", "".into()),
        ("claude", "[1,2]".into()),
        ("claude", "{\"tool_name\":\"Write\"".into()),
        ("gemini", "{".into()),
        ("codex", "null".into()),
    ];
    let mut no_input = write.clone();
    no_input.as_object_mut().unwrap().remove("tool_input");
    cases.push(("claude", no_input.to_string()));
    let mut no_path = write.clone();
    no_path["tool_input"]
        .as_object_mut()
        .unwrap()
        .remove("file_path");
    cases.push(("claude", no_path.to_string()));
    let mut bash = write.clone();
    bash["tool_name"] = Value::String("Bash".into());
    cases.push(("claude", bash.to_string()));
    // A Claude input given to the Gemini guard: another event, another tool.
    cases.push(("gemini", write.to_string()));
    let mut relative_no_cwd = with_path(write.clone(), "file_path", "src/api/a.rs");
    relative_no_cwd.as_object_mut().unwrap().remove("cwd");
    cases.push(("claude", relative_no_cwd.to_string()));
    let mut bad_patch = fixture("codex-pretooluse-apply_patch.json", &wt);
    bad_patch["tool_input"]["command"] = Value::String("*** Update File: src/api/a.rs\n".into());
    cases.push(("codex", bad_patch.to_string()));
    let mut no_patch = fixture("codex-pretooluse-apply_patch.json", &wt);
    no_patch["tool_input"] = serde_json::json!({});
    cases.push(("codex", no_patch.to_string()));
    for (harness, stdin) in &cases {
        let run = guard_run(&repo, &wt, harness, stdin, &[]);
        blocked(&run);
    }
    // A panic blocks too (Rust's own panic exit code, 101, would let the edit through).
    let run = guard_run(
        &repo,
        &wt,
        "claude",
        &write.to_string(),
        &[("GIT_TASK_GUARD_TEST_PANIC", "1")],
    );
    blocked(&run);
    assert!(run.stderr.contains("internal error"), "{run}");
    // An unknown harness is a usage error: exit 2 as well.
    blocked(&guard_run(&repo, &wt, "cursor", &write.to_string(), &[]));
}

/// A worktree on a task branch whose record is gone: every edit there is denied, with a hint.
#[test]
fn a_missing_task_is_denied_with_a_hint() {
    let repo = repo();
    let wt = repo.start("t", &[]);
    repo.git(repo.root(), &["update-ref", "-d", "refs/tasks/t/record"]);
    let reason = denied(
        &guard(&repo, &wt, "claude", &fixture("claude-write.json", &wt)),
        "claude",
    );
    assert!(reason.contains("task 't'"), "{reason}");
    assert!(reason.contains("hint: "), "{reason}");
}

/// A record whose frozen contract was rewritten after start is not trusted: denied, with why.
#[test]
fn a_tampered_record_is_denied_with_the_reason() {
    let repo = repo();
    let wt = repo.start("t", &["--allow", "src/api/**"]);
    let tip = rev(&repo, "refs/tasks/t/record");
    let state = show(&repo, &tip, "task.toml");
    let state_blob = git_stdin(
        &repo,
        &["hash-object", "-w", "--stdin"],
        &format!("{state}\n"),
    );
    let loose = git_stdin(
        &repo,
        &["hash-object", "-w", "--stdin"],
        "version = 1\nallowed = [\"**\"]\n",
    );
    let tree = git_stdin(
        &repo,
        &["mktree"],
        &format!("100644 blob {loose}\tcontract.toml\n100644 blob {state_blob}\ttask.toml\n"),
    );
    let forged = repo.git(
        repo.root(),
        &["commit-tree", &tree, "-p", &tip, "-m", "checkpoint"],
    );
    repo.git(repo.root(), &["update-ref", "refs/tasks/t/record", &forged]);
    let input = with_path(
        fixture("claude-write.json", &wt),
        "file_path",
        &at(&wt, "README.md"),
    );
    let reason = denied(&guard(&repo, &wt, "claude", &input), "claude");
    assert!(reason.contains("record_tampered"), "{reason}");
}

/// `git task guard --help` and `git task harness claude --help` print the settings of every
/// harness beside the WorktreeCreate hooks, and the fenced recipe.
#[test]
fn help_prints_the_settings_snippets() {
    let repo = repo();
    for args in [&["guard", "--help"][..], &["harness", "claude", "--help"]] {
        let out = repo.task_root(args).ok().stdout;
        for needle in [
            "\"matcher\": \"Edit|Write|MultiEdit|NotebookEdit\"",
            "git task guard claude",
            "\"onFailure\": \"block\"",
            "git task guard codex",
            "git task guard gemini",
            "WorktreeCreate",
            "git task exec <id> --confine -- claude",
        ] {
            assert!(out.contains(needle), "{args:?} lacks {needle}:\n{out}");
        }
    }
}
