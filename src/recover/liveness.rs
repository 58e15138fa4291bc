//! Whether the process that provisions a task is still alive: how an interrupted
//! `start` is told from a running one (SPEC §2.7).

use crate::task::{now, Status, TaskState};

/// Returns the process id recorded for a task that is being provisioned, if that process is gone.
pub fn provisioning_is_abandoned(state: &TaskState) -> bool {
    if state.status != Status::Provisioning {
        return false;
    }
    if state.pid == std::process::id() {
        return false;
    }
    if cfg!(unix) {
        return process_is_gone(state.pid);
    }
    now() - state.created > 3600
}

/// Returns whether process `pid` has ended: `kill(pid, 0)` finds no such process (a
/// process of another user, or a zombie, is not gone; a number no process can have,
/// 0 or above `i32::MAX`, is). False when that cannot be told (off Unix).
pub fn process_is_gone(pid: u32) -> bool {
    #[cfg(unix)]
    {
        let Some(pid) = i32::try_from(pid)
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        else {
            return true;
        };
        rustix::process::test_kill_process(pid) == Err(rustix::io::Errno::SRCH)
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        false
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::task::TaskId;

    fn provisioning(pid: u32) -> TaskState {
        let mut s = TaskState::tampered(&TaskId::parse("t").unwrap());
        s.status = Status::Provisioning;
        s.pid = pid;
        s.created = now();
        s
    }

    /// A pid that was a process and is gone now.
    fn dead_pid() -> u32 {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    }

    #[test]
    fn only_a_provisioning_task_whose_process_is_gone_is_abandoned() {
        let dead = dead_pid();
        assert!(provisioning_is_abandoned(&provisioning(dead)));
        // This process, or one still running: a start in progress.
        assert!(!provisioning_is_abandoned(
            &provisioning(std::process::id())
        ));
        let mut alive = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        assert!(!provisioning_is_abandoned(&provisioning(alive.id())));
        alive.kill().unwrap();
        alive.wait().unwrap();
        // Any other status is never abandoned, whatever its pid.
        let mut active = provisioning(dead);
        active.status = Status::Active;
        assert!(!provisioning_is_abandoned(&active));
    }

    /// This process is alive; a child that was waited for is gone, and so is a pid no process can have.
    #[test]
    fn a_waited_for_child_is_gone_and_this_process_is_not() {
        assert!(!process_is_gone(std::process::id()));
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert!(process_is_gone(pid));
        assert!(process_is_gone(0));
        assert!(process_is_gone(4_000_000_000));
    }
}
