//! gitui's commit, without its terminal UI: a test tool for git-task's hook tests.
//!
//! gitui 0.28.1 (the release on crates.io) runs hooks through the crate `git2-hooks` 0.7.0 and
//! commits through libgit2 (`git2` 0.20.4); both are what this program links, at the versions
//! gitui's own `Cargo.lock` pins. It repeats gitui's commit path step by step
//! (`src/popups/commit.rs`: `open` then `commit_with_msg`, and the `asyncgit::sync` functions
//! they call):
//!
//! 1. the repository is opened as asyncgit's `repo()` opens it: `Repository::open_ext(".",
//!    FROM_ENV, [])` from the directory gitui was started in;
//! 2. opening the commit popup runs `prepare-commit-msg` (its refusal is only logged);
//! 3. `pre-commit`: a failure aborts the commit and gitui shows "pre-commit hook error:" and
//!    the hook's output (stdout, then stderr);
//! 4. the message is prettified with `core.commentChar`, then `commit-msg` may refuse it;
//! 5. the commit: the index written as a tree, HEAD as the parent, `repo.commit(Some("HEAD"))`;
//! 6. `post-commit` (its failure is shown, the commit stays).
//!
//! Usage, in the worktree: `gitui-hooks MESSAGE`. Prints what gitui would show in its
//! error popup to stderr and exits 1 when a hook aborts the commit; prints the new commit's id
//! and exits 0 otherwise. Not used: commit signing (gitui signs only with `commit.gpgsign`).
//! `gitui-hooks --hooks-path` prints the `core.hooksPath` git2-hooks sees (empty when unset:
//! it then runs `<git-dir>/hooks/`, a linked worktree's private git dir).

use git2::{Repository, RepositoryOpenFlags, Signature};
use git2_hooks::{HookResult, PrepareCommitMsgSource};
use std::path::Path;
use std::process::ExitCode;

/// asyncgit's `HookResult::from(git2_hooks::HookResult)`: the text gitui shows for a failure.
fn not_ok(result: HookResult) -> Option<String> {
    match result {
        HookResult::NoHookFound => None,
        HookResult::Run(r) if r.is_successful() => None,
        HookResult::Run(r) => Some(if r.stderr.is_empty() {
            r.stdout
        } else if r.stdout.is_empty() {
            r.stderr
        } else {
            format!("{}\n{}", r.stdout, r.stderr)
        }),
    }
}

/// asyncgit's `sync::repository::repo` for `RepoPath::Path(".")` (gitui's default).
fn repo() -> Result<Repository, git2::Error> {
    Repository::open_ext(".", RepositoryOpenFlags::FROM_ENV, Vec::<&Path>::new())
}

fn run(message: &str) -> Result<Option<String>, Box<dyn std::error::Error>> {
    // Opening the popup: prepare-commit-msg, whose refusal gitui only logs.
    let mut msg = message.to_string();
    if let Some(e) = not_ok(git2_hooks::hooks_prepare_commit_msg(
        &repo()?,
        None,
        PrepareCommitMsgSource::Message,
        &mut msg,
    )?) {
        eprintln!("(logged by gitui) prepare-commit-msg hook rejection: {e}");
    }

    if let Some(e) = not_ok(git2_hooks::hooks_pre_commit(&repo()?, None)?) {
        return Ok(Some(format!("pre-commit hook error:\n{e}")));
    }

    let comment_char = repo()?
        .config()?
        .get_string("core.commentChar")
        .ok()
        .and_then(|s| s.chars().next())
        .unwrap_or('#') as u8;
    let mut msg = git2::message_prettify(msg, Some(comment_char))?;

    if let Some(e) = not_ok(git2_hooks::hooks_commit_msg(&repo()?, None, &mut msg)?) {
        return Ok(Some(format!("commit-msg hook error:\n{e}")));
    }

    // asyncgit::sync::commit (unsigned).
    let repo = repo()?;
    let signature = repo.signature().or_else(|_| {
        let email = repo.config()?.get_string("user.email")?;
        Signature::now("unknown", &email)
    })?;
    let mut index = repo.index()?;
    let tree = repo.find_tree(index.write_tree()?)?;
    let parents = match repo.head().ok().and_then(|h| h.target()) {
        Some(id) => vec![repo.find_commit(id)?],
        None => Vec::new(),
    };
    let parents: Vec<_> = parents.iter().collect();
    let id = repo.commit(Some("HEAD"), &signature, &signature, &msg, &tree, &parents)?;
    println!("{id}");

    if let Some(e) = not_ok(git2_hooks::hooks_post_commit(&repo, None)?) {
        eprintln!("post-commit hook error:\n{e}");
    }
    Ok(None)
}

fn main() -> ExitCode {
    let Some(message) = std::env::args().nth(1) else {
        eprintln!("usage: gitui-hooks MESSAGE | gitui-hooks --hooks-path");
        return ExitCode::from(2);
    };
    if message == "--hooks-path" {
        // What git2-hooks reads for `core.hooksPath` (libgit2's view of the config), or nothing.
        return match repo().and_then(|r| r.config()) {
            Ok(config) => {
                println!(
                    "{}",
                    config.get_string("core.hooksPath").unwrap_or_default()
                );
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::from(2)
            }
        };
    }
    match run(&message) {
        Ok(None) => ExitCode::SUCCESS,
        Ok(Some(popup)) => {
            eprintln!("{popup}");
            ExitCode::from(1)
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
