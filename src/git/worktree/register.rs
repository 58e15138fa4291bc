//! Registering a new linked worktree (its administrative entry and the links between the two)
//! without looking at every other worktree.
//!
//! gix's `prepare_add_worktree` refuses a destination that is already registered by resolving
//! every registered worktree's path (a `realpath` walk each): with a thousand task worktrees
//! that was most of what adding one cost. git names an entry after the worktree directory's
//! basename, adding a number when the name is taken (`<name>`, `<name>1`, `<name>2`, ...), and
//! reserves it with `mkdir`; here the names taken on the way to a free one are the entries
//! looked at, so a destination registered before under its own basename (a worktree deleted
//! without git, whose entry stayed) is refused as gix and git refuse it. The rest is what
//! `prepare_add_worktree` writes, in the same order: `locked` while it is made, `gitdir`,
//! `commondir`, the worktree's `.git` file, `HEAD` with its reflog, the worktree's own config.
//!
//! Links written relative (`worktree.useRelativePaths`), sparse-checkout patterns to inherit,
//! or a basename that is not UTF-8 are left to gix ([`register`] returns `None`).

use crate::error::{Context, Error, Result};
use crate::git::{ObjectId, Repo};
use std::path::{Path, PathBuf};

/// Registers a linked worktree at `path` with a detached `HEAD` at `tip` (no index, no files
/// yet), returning the repository opened there; `None` when gix must do it (see the module).
pub(super) fn register(repo: &Repo, path: &Path, tip: ObjectId) -> Option<Result<gix::Repository>> {
    let basename = path.file_name()?.to_str()?;
    if repo
        .config_bool("worktree.useRelativePaths")
        .unwrap_or(false)
        || repo.config_bool("core.sparseCheckout").unwrap_or(false)
    {
        return None;
    }
    // The entry's name as git and gix make it from the basename: made a valid ref name
    // component (a pool entry's `.pool-<pid>-<nanos>` does not start with a dot there).
    let name = gix::validate::reference::name_partial_or_sanitize(basename.into()).to_string();
    if !super::is_entry_name(&name) {
        return None;
    }
    Some(register_plain(repo, path, basename, &name, tip))
}

fn register_plain(
    repo: &Repo,
    path: &Path,
    basename: &str,
    name: &str,
    tip: ObjectId,
) -> Result<gix::Repository> {
    let refuse =
        |why: &str| Error::repo_msg(format!("worktree destination '{}' {why}", path.display()));
    // The destination: absent, or an empty directory that is not a symbolic link (as gix).
    let existed = match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => return Err(refuse("is a symbolic link")),
        Ok(m) if !m.is_dir() => return Err(refuse("is not a directory")),
        Ok(_) => {
            let mut entries = std::fs::read_dir(path)
                .context(|| format!("could not read '{}'", path.display()))?;
            if entries.next().is_some() {
                return Err(refuse("is not empty"));
            }
            true
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(e) => {
            return Err(Error::repo(
                format!("could not read '{}'", path.display()),
                e,
            ))
        }
    };
    let parent = path
        .parent()
        .ok_or_else(|| refuse("has no parent directory"))?;
    std::fs::create_dir_all(parent)
        .context(|| format!("could not create '{}'", parent.display()))?;
    // Absolute, with symbolic links resolved in the parents, as gix writes them.
    let work_dir = crate::git::canonical(parent).join(basename);
    let common = crate::git::canonical(repo.common_dir());
    if !repo.is_bare()
        && repo
            .main_worktree()
            .is_ok_and(|main| super::same_path(&main, &work_dir))
    {
        return Err(refuse("is the main worktree"));
    }
    let worktrees = common.join("worktrees");
    std::fs::create_dir_all(&worktrees)
        .context(|| format!("could not create '{}'", worktrees.display()))?;
    let admin = reserve(&worktrees, name, &work_dir, &refuse)?;
    let mut made = Made {
        admin: admin.clone(),
        work_dir: None,
        dot_git: None,
        armed: true,
    };
    let write = |file: &Path, bytes: &[u8]| {
        std::fs::write(file, bytes).context(|| format!("could not write '{}'", file.display()))
    };
    write(&admin.join("locked"), b"initializing\n")?;
    write(&admin.join("gitdir"), &line(b"", &work_dir.join(".git")))?;
    write(&admin.join("commondir"), b"../..\n")?;
    if !existed {
        // Only a directory this call made is removed on failure: one another process made
        // meanwhile (the same destination, at the same moment) is its own.
        std::fs::create_dir(&work_dir)
            .context(|| format!("could not create '{}'", work_dir.display()))?;
        made.work_dir = Some(work_dir.clone());
    }
    let dot_git = work_dir.join(".git");
    {
        use std::io::Write;
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&dot_git)
            .context(|| format!("could not create '{}'", dot_git.display()))?;
        if existed {
            made.dot_git = Some(dot_git.clone());
        }
        file.write_all(&line(b"gitdir: ", &admin))
            .context(|| format!("could not write '{}'", dot_git.display()))?;
    }
    // Opening the repository needs a HEAD: the null id, so that the first update (below)
    // records the worktree's start in its reflog, as gix and git do.
    let mut head = tip.kind().null().to_string().into_bytes();
    head.push(b'\n');
    write(&admin.join("HEAD"), &head)?;
    if repo
        .config_bool("extensions.worktreeConfig")
        .unwrap_or(false)
    {
        copy_worktree_config(
            &repo.git_dir().join("config.worktree"),
            &admin.join("config.worktree"),
        )?;
    }
    let options = crate::git::open_options().full.open_path_as_is(true);
    let mut created = gix::open_opts(&admin, options)
        .context(|| format!("could not open the worktree '{}'", work_dir.display()))?;
    created.clear_namespace();
    use gix::refs::transaction::{LogChange, PreviousValue, RefEdit, RefLog};
    created
        .edit_reference(RefEdit::update_with_log(
            "HEAD".try_into().expect("valid reference name"),
            tip,
            PreviousValue::Any,
            LogChange {
                mode: RefLog::AndReference,
                ..Default::default()
            },
        ))
        .context(|| "could not initialize the worktree's HEAD and its reflog".into())?;
    // Registered: git may list, prune and lock it from now on.
    let locked = admin.join("locked");
    std::fs::remove_file(&locked).context(|| format!("could not delete '{}'", locked.display()))?;
    made.armed = false;
    Ok(created)
}

/// Creates `<worktrees>/<name>` (or `<name>1`, `<name>2`, ... when taken), as git and gix
/// reserve an entry; refuses when a taken one is the registration of `work_dir` already.
fn reserve(
    worktrees: &Path,
    name: &str,
    work_dir: &Path,
    refuse: &dyn Fn(&str) -> Error,
) -> Result<PathBuf> {
    for suffix in 0u32.. {
        let candidate = match suffix {
            0 => worktrees.join(name),
            n => worktrees.join(format!("{name}{n}")),
        };
        match std::fs::create_dir(&candidate) {
            Ok(()) => return Ok(candidate),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                if super::path_of(&candidate).is_some_and(|p| super::same_path(&p, work_dir)) {
                    return Err(refuse("is already registered").hint(
                        "its worktree is missing: remove the registration with 'git worktree prune'",
                    ));
                }
            }
            Err(e) => {
                return Err(Error::repo(
                    format!("could not create '{}'", candidate.display()),
                    e,
                ))
            }
        }
    }
    unreachable!("a free name is found")
}

/// `prefix`, the path's bytes and a newline: what git writes in `gitdir` and `.git` files.
fn line(prefix: &[u8], path: &Path) -> Vec<u8> {
    let mut out = prefix.to_vec();
    out.extend_from_slice(path.as_os_str().as_encoded_bytes());
    out.push(b'\n');
    out
}

/// Copies the worktree-specific config of the worktree `add` runs from, without `core.worktree`
/// and a `core.bare = true`, as gix does with `extensions.worktreeConfig`.
fn copy_worktree_config(source: &Path, destination: &Path) -> Result<()> {
    if !source.exists() {
        return Ok(());
    }
    let mut config =
        gix::config::File::from_path_no_includes(source.to_owned(), gix::config::Source::Worktree)
            .context(|| format!("could not read '{}'", source.display()))?;
    if matches!(config.boolean("core.bare"), Ok(Some(true))) {
        if let Ok(mut values) = config.raw_values_mut("core.bare") {
            values.delete_all();
        }
    }
    if let Ok(mut values) = config.raw_values_mut("core.worktree") {
        values.delete_all();
    }
    let mut out = std::fs::File::create(destination)
        .context(|| format!("could not write '{}'", destination.display()))?;
    config
        .write_to(&mut out)
        .context(|| format!("could not write '{}'", destination.display()))
}

/// What a registration made, removed again unless it finished (as gix rolls back).
struct Made {
    admin: PathBuf,
    /// The worktree directory, when the registration created it.
    work_dir: Option<PathBuf>,
    /// The `.git` file it wrote in a worktree directory that was there (empty) before.
    dot_git: Option<PathBuf>,
    armed: bool,
}

impl Drop for Made {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        if let Some(dir) = &self.work_dir {
            let _ = std::fs::remove_dir_all(dir);
        }
        if let Some(file) = &self.dot_git {
            let _ = std::fs::remove_file(file);
        }
        let _ = std::fs::remove_dir_all(&self.admin);
    }
}
