//! `--confine=strict`: the part of a worktree the kernel fence can leave writable for a
//! contract.
//!
//! Landlock grants rights beneath directories (or on single files), and rules only add
//! rights. So the fence can narrow a worktree to the contract's *directory hull*: an
//! allowed `src/api/**` (or `src/api`, `src/api/*.rs`) grants `src/api/`; an allowed path
//! to a file grants the directory holding it. A pattern that matches at any depth (`*.md`,
//! `**/*.test.ts`) has no directory: then the whole worktree stays writable. A forbidden
//! directory (or file) inside a writable one is left out by granting, instead of that
//! directory, each of its other entries one by one (directories whole, files for writing
//! in place): no new entry can then be made directly in a directory on the way to it. A
//! forbidden pattern without a fixed path (`**/*.pem`) cannot be left out. The commit hook
//! and the gate judge every path exactly either way; the fence only makes the gross
//! mistakes impossible to write.

use std::path::{Path, PathBuf};

/// What strict mode makes writable in a worktree.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Hull {
    /// Directories writable as a whole (absolute).
    pub dirs: Vec<PathBuf>,
    /// Files writable in place only (absolute): siblings of a forbidden entry.
    pub files: Vec<PathBuf>,
    /// What the fence could not express, in words.
    pub warnings: Vec<String>,
}

/// The components of a rule as a fixed path, and whether it names everything below it
/// (`dir/**`, `dir/`, or a plain path, which covers what is below it): `None` when it has
/// a wildcard before its end or matches at any depth.
fn fixed_path(rule: &str) -> Option<Vec<String>> {
    let trimmed = rule.trim_end_matches('/');
    let (anchored, body) = match trimmed.strip_prefix('/') {
        Some(rest) => (true, rest),
        None => (false, trimmed),
    };
    let body = body.strip_suffix("/**").unwrap_or(body);
    if body.is_empty() || body == "**" {
        return Some(Vec::new());
    }
    if !anchored && !body.contains('/') {
        return None;
    }
    let parts: Vec<String> = body.split('/').map(str::to_owned).collect();
    if parts
        .iter()
        .any(|p| is_wild(p) || p.is_empty() || p == "." || p == "..")
    {
        return None;
    }
    Some(parts)
}

fn is_wild(part: &str) -> bool {
    part.contains(['*', '?', '[', '{', '\\'])
}

/// The directory (components) all matches of an allowed rule lie under: its literal
/// prefix. `None`: it can match anywhere (no narrowing).
fn allowed_dir(rule: &str, root: &Path) -> Option<Vec<String>> {
    if let Some(parts) = fixed_path(rule) {
        let path = join(root, &parts);
        return Some(match std::fs::symlink_metadata(&path) {
            Ok(m) if m.is_dir() => parts,
            // A file, or nothing yet: it is made (or replaced) in its directory.
            _ if rule.ends_with('/') && !path.exists() => parts,
            _ => parts[..parts.len().saturating_sub(1)].to_vec(),
        });
    }
    let trimmed = rule.trim_end_matches('/');
    let (anchored, body) = match trimmed.strip_prefix('/') {
        Some(rest) => (true, rest),
        None => (false, trimmed),
    };
    if !anchored && !body.contains('/') {
        return None;
    }
    let parts: Vec<String> = body
        .split('/')
        .take_while(|p| !is_wild(p))
        .map(str::to_owned)
        .collect();
    if parts.iter().any(|p| p.is_empty() || p == "." || p == "..") {
        return None;
    }
    Some(parts)
}

fn join(root: &Path, parts: &[String]) -> PathBuf {
    let mut p = root.to_path_buf();
    for part in parts {
        p.push(part);
    }
    p
}

fn shown(parts: &[String]) -> String {
    if parts.is_empty() {
        "the worktree's root".into()
    } else {
        format!("'{}/'", parts.join("/"))
    }
}

/// The hull of `allowed` minus `forbidden` in the worktree at `root` (canonical), plus the
/// build directories `build` (relative to the root; made when missing). Directories it
/// names that do not exist are made (empty directories: git does not see them). A
/// directory that resolves outside the worktree (a symbolic link) is never granted.
pub fn hull(root: &Path, allowed: &[String], forbidden: &[String], build: &[String]) -> Hull {
    let mut out = Hull::default();
    let mut dirs: Vec<Vec<String>> = Vec::new();
    if allowed.is_empty() {
        out.warnings.push(
            "--confine=strict: the contract allows any path not forbidden, so the whole worktree stays writable"
                .into(),
        );
        dirs.push(Vec::new());
    }
    for rule in allowed {
        match allowed_dir(rule, root) {
            Some(d) => dirs.push(d),
            None => {
                out.warnings.push(format!(
                    "--confine=strict: allowed '{rule}' has no directory of its own (it matches at any depth), so the whole worktree stays writable"
                ));
                dirs.push(Vec::new());
            }
        }
    }
    // Only the outermost of nested directories.
    dirs.sort();
    dirs.dedup();
    let outer: Vec<Vec<String>> = dirs
        .iter()
        .filter(|d| !dirs.iter().any(|o| o.len() < d.len() && d.starts_with(o)))
        .cloned()
        .collect();
    let mut cut: Vec<Vec<String>> = Vec::new();
    for rule in forbidden {
        match fixed_path(rule) {
            Some(parts) if !parts.is_empty() => cut.push(parts),
            _ => out.warnings.push(format!(
                "--confine=strict: forbidden '{rule}' has no fixed path, so the fence cannot leave it out (the commit hook and the gate still refuse it)"
            )),
        }
    }
    for dir in &outer {
        grant(root, dir, &cut, &mut out);
    }
    for b in build {
        let parts: Vec<String> = b
            .trim_matches('/')
            .split('/')
            .filter(|p| !p.is_empty())
            .map(str::to_owned)
            .collect();
        if parts.is_empty() || parts.iter().any(|p| p == "." || p == ".." || is_wild(p)) {
            out.warnings.push(format!(
                "task.confineBuildDirs: '{b}' is not a directory of the worktree; left out"
            ));
            continue;
        }
        let path = join(root, &parts);
        if !path.exists() {
            let _ = std::fs::create_dir_all(&path);
        }
        match inside(root, &path) {
            Some(p) if p.is_dir() => out.dirs.push(p),
            _ => out.warnings.push(format!(
                "task.confineBuildDirs: '{b}' is not a directory inside the worktree; left out"
            )),
        }
    }
    out.dirs.sort();
    out.dirs.dedup();
    out
}

/// `path` resolved, when it lies inside `root` (canonical): never a link out of it.
fn inside(root: &Path, path: &Path) -> Option<PathBuf> {
    let real = path.canonicalize().ok()?;
    real.starts_with(root).then_some(real)
}

/// Grants `dir` (components below `root`) whole, or, when a cut path lies inside it, its
/// entries one by one but the cut ones.
fn grant(root: &Path, dir: &[String], cut: &[Vec<String>], out: &mut Hull) {
    if cut.iter().any(|c| dir.starts_with(c)) {
        return; // forbidden as a whole
    }
    let path = join(root, dir);
    if !path.exists() {
        let _ = std::fs::create_dir_all(&path);
    }
    let Some(real) = inside(root, &path).filter(|p| p.is_dir()) else {
        out.warnings.push(format!(
            "--confine=strict: {} is not a directory inside the worktree; left out",
            shown(dir)
        ));
        return;
    };
    let below: Vec<&Vec<String>> = cut
        .iter()
        .filter(|c| c.len() > dir.len() && c.starts_with(dir))
        .collect();
    if below.is_empty() {
        out.dirs.push(real);
        return;
    }
    let names: Vec<String> = below.iter().map(|c| c.join("/")).collect();
    out.warnings.push(format!(
        "--confine=strict: {} holds forbidden '{}': its entries are granted one by one, so no new file or directory can be made directly in it",
        shown(dir),
        names.join("', '")
    ));
    let Ok(entries) = std::fs::read_dir(&real) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            continue;
        };
        if dir.is_empty() && name == ".git" {
            continue;
        }
        let mut child = dir.to_vec();
        child.push(name);
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            grant(root, &child, cut, out);
        } else if kind.is_file() && !cut.iter().any(|c| child.starts_with(c)) {
            out.files.push(entry.path());
        }
        // Symbolic links are left out: a rule on one would grant its target.
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowed_dirs_and_forbidden_cuts() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        for d in ["src/api/secret", "src/api/v1", "src/core", "docs"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::fs::write(root.join("src/api/mod.rs"), "").unwrap();
        std::fs::write(root.join("src/lib.rs"), "").unwrap();
        let h = hull(
            &root,
            &["src/api/**".into(), "src/lib.rs".into()],
            &["src/api/secret/**".into()],
            &["target/".into()],
        );
        assert!(h.dirs.contains(&root.join("src/api/v1")), "{h:?}");
        assert!(h.dirs.contains(&root.join("target")), "{h:?}");
        assert!(
            !h.dirs.contains(&root.join("src/api")),
            "the forbidden dir's parent is not granted whole: {h:?}"
        );
        assert!(!h.dirs.iter().any(|d| d.ends_with("secret")), "{h:?}");
        assert!(h.files.contains(&root.join("src/api/mod.rs")), "{h:?}");
        // `src/lib.rs` is a file: its directory `src/` is granted (it holds `src/api/`, so
        // `src/` is the outer one and is cut around `src/api/secret`).
        assert!(h.dirs.contains(&root.join("src/core")), "{h:?}");
        assert!(!h.dirs.contains(&root.join("docs")), "{h:?}");

        let h = hull(&root, &["*.md".into()], &[], &[]);
        assert_eq!(h.dirs, vec![root.clone()]);
        assert_eq!(h.warnings.len(), 1, "{h:?}");
    }

    #[cfg(unix)]
    #[test]
    fn a_link_out_of_the_worktree_is_never_granted() {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("src/api")).unwrap();
        let h = hull(&root, &["src/api/**".into()], &[], &["target".into()]);
        assert!(h.dirs.iter().all(|d| d.starts_with(&root)), "{h:?}");
        assert!(!h.dirs.contains(&root.join("src/api")), "{h:?}");
    }
}
