//! The kill -9 torture of `cmd::torture` at CI's size: each mutating command killed twice at
//! random instants on a repository of 300 files (the normal run kills each once, on 60).

#[test]
#[ignore = "slow: run by .ci/run (cargo test --locked --test cli slow:: -- --ignored)"]
fn every_mutating_command_survives_kill_9_anywhere() {
    crate::cmd::torture::torture(2, 300);
}
