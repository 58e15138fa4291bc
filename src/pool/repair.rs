//! What killed fills and claims leave, found and deleted by `sweep` (module docs of `pool`).

use super::{admin_of, claim, discard_dir, entries};
use crate::error::Result;
use crate::git::{worktree, Repo};
use std::path::Path;

/// One repair of the pool made (or, dry, planned) by `sweep`.
pub struct Repaired {
    /// `abandoned_pool_entry` or `damaged_pool_entry`.
    pub problem: &'static str,
    /// What was (or would be) done.
    pub action: String,
}

/// The action of a repair that discarded a pool directory, saying where its changes were saved.
fn discarded(action: String, result: Result<Option<String>>) -> String {
    match result {
        Ok(None) => action,
        Ok(Some(saved)) => format!("{action}, its changes saved as {saved}"),
        Err(e) => format!("kept it: {e}"),
    }
}

/// The pid in a pool directory's name (`.pool-<pid>-<nanos>`).
fn pool_dir_pid(name: &str) -> Option<u32> {
    name.strip_prefix(".pool-")?.split('-').next()?.parse().ok()
}

/// Finds (and unless `dry_run`, repairs) what killed fills and claims left (module docs).
pub fn repair(repo: &Repo, worktree_dir: &Path, dry_run: bool) -> Result<Vec<Repaired>> {
    let mut out = Vec::new();
    let entries = entries(repo, worktree_dir)?;
    // Refs whose worktree is missing or damaged.
    for entry in &entries {
        let healthy = admin_of(&entry.path).is_some_and(|admin| {
            std::fs::read_to_string(admin.join("HEAD")).is_ok_and(|h| h.trim() == entry.commit)
        });
        if healthy {
            continue;
        }
        let mut action = format!("deleted pool entry '{}'", entry.name);
        if !dry_run && claim(repo, entry)? {
            action = discarded(action, discard_dir(repo, &entry.path, true));
        }
        out.push(Repaired {
            problem: "damaged_pool_entry",
            action,
        });
    }
    // Pool directories with no ref whose filler is gone. While a start runs, an entry it
    // claimed has no ref either: those wait for a sweep with no start running.
    let starting = crate::recover::abandoned::live_starts(repo);
    let held: std::collections::HashSet<String> =
        entries.iter().map(|e| format!(".{}", e.name)).collect();
    if let Ok(dir) = std::fs::read_dir(worktree_dir) {
        for item in dir.flatten() {
            let name = item.file_name().to_string_lossy().into_owned();
            let Some(pid) = pool_dir_pid(&name) else {
                continue;
            };
            if name.contains(".removing-") || held.contains(&name) || starting {
                continue;
            }
            if pid != std::process::id() && !crate::recover::liveness::process_is_gone(pid) {
                continue;
            }
            let mut action = format!(
                "deleted '{}', left by an interrupted pool fill or claim",
                item.path().display()
            );
            if !dry_run {
                action = discarded(action, discard_dir(repo, &item.path(), true));
            }
            out.push(Repaired {
                problem: "abandoned_pool_entry",
                action,
            });
        }
    }
    // Administrative entries of pool worktrees whose directory is gone.
    for linked in worktree::list(repo)? {
        let is_pool = linked
            .path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| pool_dir_pid(n).is_some());
        if is_pool
            && linked.branch.is_none()
            && !linked.path.exists()
            && linked.lock_reason().is_none()
        {
            out.push(Repaired {
                problem: "abandoned_pool_entry",
                action: format!(
                    "deleted the worktree entry of '{}', whose directory is gone",
                    linked.path.display()
                ),
            });
            if !dry_run {
                worktree::remove_admin(&linked)?;
            }
        }
    }
    Ok(out)
}
