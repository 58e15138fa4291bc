//! The warning `start`, `status` and `list` give when commits are not checked at commit time.

use super::Out;
use crate::hooks::Enforcement;

/// Warns on stderr when commits in a task's worktree (`one`), or in task worktrees at all, do
/// not run git-task's pre-commit hook ([`crate::hooks::enforcement`]), with the command that fixes it.
pub fn warn_unenforced(out: &Out, state: &Enforcement, one: bool) {
    let whose = if one {
        "this task's worktree"
    } else {
        "task worktrees"
    };
    match state {
        Enforcement::Enforced => {}
        Enforcement::NotInstalled => {
            out.warn(format_args!(
                "commits in {whose} do not run git-task's pre-commit hook: contracts are checked only at merge"
            ));
            out.hint("install the hooks: git task hooks install");
        }
        Enforcement::Overwritten { path } => {
            out.warn(format_args!(
                "another hook replaced git-task's at '{path}': commits in {whose} are not checked against contracts until merge"
            ));
            out.hint("run it behind git-task's check: git task hooks install");
        }
        Enforcement::Disabled => {
            out.warn(format_args!(
                "core.hooksPath is /dev/null, so git runs no hooks: commits in {whose} are not checked against contracts until merge"
            ));
            out.hint("turn hooks back on and install them: git config --unset core.hooksPath && git task hooks install");
        }
    }
}
