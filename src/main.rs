//! The `git-task` binary: everything lives in the library; this only hands over argv.

fn main() -> std::process::ExitCode {
    git_task::run(std::env::args_os())
}
