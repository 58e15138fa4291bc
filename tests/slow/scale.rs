//! Sizes the normal run keeps small: a worktree of 18,000 files checked in parts (the normal
//! run checks 5,400, `cmd::dirty::a_big_worktree_is_checked_in_parts`).

#[test]
#[ignore = "slow: run by .ci/run (cargo test --locked --test cli slow:: -- --ignored)"]
fn a_worktree_of_18000_files_is_checked_in_parts() {
    crate::cmd::dirty::big_worktree_is_checked_in_parts(40);
}
