//! Every field of a record given every hostile value (the sweep behind
//! `cmd::hostile_records::hostile_fields_fail_naming_the_record`, which tries one of each).

use crate::cmd::hostile_records::{bad_values, every_command_survives};
use crate::common::TestRepo;
use serde_json::json;

#[test]
#[ignore = "slow: run by .ci/run (cargo test --locked --test cli slow:: -- --ignored)"]
fn hostile_id_fails_naming_the_record() {
    let bad = bad_values(&[
        json!("../x"),
        json!(""),
        json!("a b"),
        json!("refs/heads/t1"),
        json!("t1.lock"),
    ]);
    every_command_survives("id", &bad, true);
    // Another task's id: a record that is not t1's.
    every_command_survives("id", &[json!("t2")], true);
}

#[test]
#[ignore = "slow: run by .ci/run (cargo test --locked --test cli slow:: -- --ignored)"]
fn hostile_branch_fails_naming_the_record() {
    let bad = bad_values(&[
        json!("refs/heads/task/../x"),
        json!("refs/heads/"),
        json!("task/t1"),
        json!("refs/heads/refs/heads/task/t1"),
        json!("refs/heads/HEAD"),
        json!("refs/heads/-x"),
        json!("refs/tags/v1"),
        json!("refs/tasks/t1/record"),
    ]);
    every_command_survives("branch", &bad, true);
    // Valid names, not this task's branch.
    every_command_survives(
        "branch",
        &[
            json!("refs/heads/main"),
            json!("refs/heads/task/t2"),
            json!("HEAD"),
        ],
        false,
    );
}

#[test]
#[ignore = "slow: run by .ci/run (cargo test --locked --test cli slow:: -- --ignored)"]
fn hostile_base_branch_fails_naming_the_record() {
    let bad = bad_values(&[
        json!("refs/heads/ma in"),
        json!("main"),
        json!("refs/heads/"),
        json!("refs/heads/refs/heads/main"),
        json!("HEAD"),
        json!("refs/remotes/origin/main"),
    ]);
    every_command_survives("base_branch", &bad, true);
    every_command_survives(
        "base_branch",
        &[json!("refs/heads/task/t2"), json!("refs/heads/gone")],
        false,
    );
}

#[test]
#[ignore = "slow: run by .ci/run (cargo test --locked --test cli slow:: -- --ignored)"]
fn hostile_worktree_fails_naming_the_record() {
    let bad = bad_values(&[json!(""), json!("relative/dir"), json!("../..")]);
    every_command_survives("worktree", &bad, true);
    let repo = TestRepo::new();
    every_command_survives(
        "worktree",
        &[
            json!("/nonexistent/\u{1}"),
            json!(repo.root().join("src").display().to_string()),
        ],
        false,
    );
}

#[test]
#[ignore = "slow: run by .ci/run (cargo test --locked --test cli slow:: -- --ignored)"]
fn hostile_commits_fail_naming_the_record() {
    for key in ["base_commit", "contract_commit"] {
        let bad = bad_values(&[json!("zz"), json!(""), json!("HEAD"), json!("main~1")]);
        every_command_survives(key, &bad, true);
        every_command_survives(key, &[json!("0".repeat(40))], false);
    }
}

#[test]
#[ignore = "slow: run by .ci/run (cargo test --locked --test cli slow:: -- --ignored)"]
fn hostile_numbers_mode_status_and_keys_fail_naming_the_record() {
    every_command_survives("created", &[json!(u64::MAX), json!(1.5), json!("x")], true);
    every_command_survives("created", &[json!(-1), json!(i64::MAX)], false);
    every_command_survives(
        "pid",
        &[json!(-1), json!(u64::MAX), json!(1.5), json!("x")],
        true,
    );
    every_command_survives(
        "mode",
        &[json!("x"), json!(""), json!(5), json!("a\u{0}")],
        true,
    );
    every_command_survives("mode", &[json!("patch")], false);
    every_command_survives("status", &[json!("x"), json!("tampered"), json!(5)], true);
    every_command_survives(
        "status",
        &[json!("provisioning"), json!("removed"), json!("merged")],
        false,
    );
    every_command_survives("setup", &[json!(5), json!(["x"])], true);
    every_command_survives("evil", &[json!(1)], true);
}
