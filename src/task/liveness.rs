//! Whether the process that provisions a task is still alive: how an interrupted
//! `start` is told from a running one (SPEC §2.7).

use super::{now, Status, TaskState};
use std::path::Path;

/// Returns the process id recorded for a task that is being provisioned, if that process is gone.
pub fn provisioning_is_abandoned(state: &TaskState) -> bool {
    if state.status != Status::Provisioning {
        return false;
    }
    if state.pid == std::process::id() {
        return false;
    }
    if Path::new("/proc/self").is_dir() {
        return process_is_gone(state.pid);
    }
    now() - state.created > 3600
}

/// Returns whether process `pid` has ended (false when that cannot be told, e.g. without `/proc`).
pub fn process_is_gone(pid: u32) -> bool {
    let proc_dir = Path::new("/proc");
    proc_dir.join("self").is_dir() && !proc_dir.join(pid.to_string()).exists()
}
