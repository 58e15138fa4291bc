//! The one integration-test binary: real `git-task` against real repositories made by real `git`.

mod common;

mod cmd;

mod guards;
mod hooks;
mod layers;
mod slow;
