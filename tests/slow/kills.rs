//! The kill loops at CI's length: those of `cmd::lifecycle2` 12 kills each (the normal run
//! kills 3 times; `GIT_TASK_KILLS` sets another count, as `bench/torture.sh` does), the queue
//! runner killed at six instants of its run (the normal run, at two).

use crate::cmd::lifecycle2;

#[test]
#[ignore = "slow: run by .ci/run (cargo test --locked --test cli slow:: -- --ignored)"]
fn reset_of_a_detached_worktree_survives_12_kills() {
    lifecycle2::reset_of_a_detached_worktree_survives_kill_9_anywhere_rounds(12);
}

#[test]
#[ignore = "slow: run by .ci/run (cargo test --locked --test cli slow:: -- --ignored)"]
fn pool_discards_of_a_used_entry_survive_12_kills() {
    lifecycle2::pool_discards_of_a_used_entry_survive_kill_9_anywhere_rounds(12);
}

#[test]
#[ignore = "slow: run by .ci/run (cargo test --locked --test cli slow:: -- --ignored)"]
fn adopt_and_merge_remote_survive_12_kills() {
    lifecycle2::adopt_and_merge_remote_survive_kill_9_anywhere_rounds(12);
}

#[test]
#[ignore = "slow: run by .ci/run (cargo test --locked --test cli slow:: -- --ignored)"]
fn claim_release_and_drop_survive_12_kills() {
    lifecycle2::claim_release_and_drop_survive_kill_9_anywhere_rounds(12);
}

#[test]
#[ignore = "slow: run by .ci/run (cargo test --locked --test cli slow:: -- --ignored)"]
fn queue_runner_killed_at_six_instants_is_resumed() {
    crate::cmd::queue::runner_killed_at_tenths_is_resumed(&[1, 3, 5, 6, 7, 9]);
}
