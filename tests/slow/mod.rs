//! The slow tests, in one place: each is `#[ignore]`d, so the README's `cargo test --locked`
//! skips it, and `.ci/run` runs them all in a step of their own:
//! `cargo test --locked --test cli slow:: -- --ignored`. A short version of each stays in the
//! normal run beside the command it guards (not of the kill -9 torture: its shortest run, each
//! command killed once, takes ~16 s); these sweep every value, kill many times or grow large.

mod hostile_records;
mod kills;
mod scale;
mod torture;
