//! The kill -9 torture of `cmd::torture`: each mutating command killed once at a random
//! instant on a repository of 60 files (~16 s on 2 cores, so not in the normal run), and twice
//! on 300.

#[test]
#[ignore = "slow: run by .ci/run (cargo test --locked --test cli slow:: -- --ignored)"]
fn every_mutating_command_survives_a_kill_9() {
    crate::cmd::torture::torture(1, 60);
}

#[test]
#[ignore = "slow: run by .ci/run (cargo test --locked --test cli slow:: -- --ignored)"]
fn every_mutating_command_survives_kill_9_anywhere() {
    crate::cmd::torture::torture(2, 300);
}
