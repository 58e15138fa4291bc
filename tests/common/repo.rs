//! The fixture: a throwaway repository driven through the real `git` and `git-task` binaries.

use super::{bin, Run};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// A fresh temporary directory under [`temp_root`], never the system's temporary directory:
/// nothing a test or the binary leaves goes there, and the test removes it when it ends.
pub fn temp_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("t")
        .tempdir_in(temp_root())
        .expect("a temporary directory")
}

/// Where this test's temporary directories live: `GIT_TASK_TEST_TMPDIR` if set; else, on
/// Linux, `/dev/shm/gt-tmp` when `/dev/shm` is a tmpfs with room ([`memory_root`]); else
/// Cargo's private directory for integration tests (`target/tmp`). The tests of `exec
/// --confine` (`cmd::confine`) stay on disk: a confined process may write all of `/dev/shm`
/// (`src/confine`), so a repository there would not be fenced.
///
/// Why memory first: each test makes and deletes a repository and its worktrees. On an ext4
/// without a journal (this project's 2-core test machine), making a file scans past every
/// inode deleted in the last seconds
/// (`recently_deleted` in the kernel's inode allocator): `perf` put ~40% of a run's CPU there,
/// and `cmd::merge` with `cmd::sweep` took 13-18 s of CPU on disk against 6.7-6.9 s on tmpfs.
pub fn temp_root() -> &'static Path {
    if let Some(root) = env_root() {
        return root;
    }
    let fenced = std::thread::current()
        .name()
        .is_some_and(|name| name.starts_with("cmd::confine::"));
    match memory_root() {
        Some(root) if !fenced => root,
        _ => disk_root(),
    }
}

/// Every directory [`temp_root`] may give, for `GIT_CEILING_DIRECTORIES`.
fn temp_roots() -> Vec<&'static Path> {
    match env_root() {
        Some(root) => vec![root],
        None => memory_root().into_iter().chain([disk_root()]).collect(),
    }
}

fn env_root() -> Option<&'static Path> {
    static ROOT: OnceLock<Option<PathBuf>> = OnceLock::new();
    ROOT.get_or_init(|| std::env::var_os("GIT_TASK_TEST_TMPDIR").map(|r| made(r.into())))
        .as_deref()
}

fn disk_root() -> &'static Path {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| made(env!("CARGO_TARGET_TMPDIR").into()))
}

/// `root`, made if missing, canonical (the paths git prints, and `GIT_CEILING_DIRECTORIES`).
fn made(root: PathBuf) -> PathBuf {
    std::fs::create_dir_all(&root)
        .and_then(|()| root.canonicalize())
        .unwrap_or_else(|e| panic!("the tests' temporary directory {}: {e}", root.display()))
}

/// `/dev/shm/gt-tmp` if `/dev/shm` is a tmpfs with room (2 GiB free, far more than the suite
/// holds at once) and a directory can be made there. (No `git-task` in the name: tests assert
/// that a config names no `git-task`, and it holds paths under it.)
fn memory_root() -> Option<&'static Path> {
    static ROOT: OnceLock<Option<PathBuf>> = OnceLock::new();
    ROOT.get_or_init(|| {
        #[cfg(target_os = "linux")]
        {
            const TMPFS_MAGIC: i64 = 0x0102_1994;
            let shm = Path::new("/dev/shm");
            let fs = rustix::fs::statfs(shm).ok()?;
            let free = (fs.f_bavail as u64).saturating_mul(fs.f_bsize as u64);
            if fs.f_type as i64 != TMPFS_MAGIC || free < 2 << 30 {
                return None;
            }
            let root = shm.join("gt-tmp");
            std::fs::create_dir_all(&root).ok()?;
            tempfile::tempdir_in(&root).ok()?;
            remove_stale(&root);
            root.canonicalize().ok()
        }
        #[cfg(not(target_os = "linux"))]
        None
    })
    .as_deref()
}

/// Removes what earlier runs left in `root` more than a day ago: a test's directory goes when
/// the test ends, but a background process it started may make a directory again afterwards
/// (a removed worktree's aside note, the pool's sizes), and memory is not cleaned by
/// `cargo clean`.
#[cfg(target_os = "linux")]
fn remove_stale(root: &Path) {
    let day = std::time::Duration::from_secs(24 * 60 * 60);
    for entry in std::fs::read_dir(root).into_iter().flatten().flatten() {
        let stale = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > day);
        if stale {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// The files and directories of [`TestRepo::new`]'s repository (its `.git` too), read once.
static TEMPLATE: OnceLock<Template> = OnceLock::new();

/// A directory tree held in memory: directories (empty ones too), then files with their modes.
struct Template {
    dirs: Vec<PathBuf>,
    files: Vec<(PathBuf, Vec<u8>, u32)>,
}

impl Template {
    fn read(root: &Path) -> Template {
        fn walk(root: &Path, dir: &Path, t: &mut Template) {
            for e in std::fs::read_dir(dir).expect("read the template").flatten() {
                let path = e.path();
                let rel = path.strip_prefix(root).unwrap().to_path_buf();
                let meta = e.metadata().expect("stat the template");
                if meta.is_dir() {
                    t.dirs.push(rel);
                    walk(root, &path, t);
                } else {
                    let bytes = std::fs::read(&path).expect("read the template");
                    t.files.push((rel, bytes, mode(&meta)));
                }
            }
        }
        let mut t = Template {
            dirs: Vec::new(),
            files: Vec::new(),
        };
        walk(root, root, &mut t);
        t
    }

    fn write(&self, root: &Path) {
        for dir in &self.dirs {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        for (rel, bytes, mode) in &self.files {
            let path = root.join(rel);
            std::fs::write(&path, bytes).unwrap();
            set_mode(&path, *mode);
        }
    }
}

#[cfg(unix)]
fn mode(meta: &std::fs::Metadata) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o7777
}

#[cfg(not(unix))]
fn mode(_: &std::fs::Metadata) -> u32 {
    0o644
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    if mode != 0o644 {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }
}

#[cfg(not(unix))]
fn set_mode(_: &Path, _: u32) {}

/// The `PATH` every child gets: the binary under test's directory, then the test's own `PATH`.
fn child_path() -> std::ffi::OsString {
    let bin_dir = bin().parent().unwrap().to_path_buf();
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut paths = vec![bin_dir];
    paths.extend(std::env::split_paths(&path));
    std::env::join_paths(paths).unwrap()
}

/// The `git` that [`child_path`] finds first, looked up once (`git` itself if none is found,
/// so that the spawn reports it).
fn git_program() -> &'static Path {
    static GIT: OnceLock<PathBuf> = OnceLock::new();
    GIT.get_or_init(|| {
        std::env::split_paths(&child_path())
            .map(|dir| dir.join("git"))
            .find(|git| is_executable(git))
            .unwrap_or_else(|| PathBuf::from("git"))
    })
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    path.is_file()
}

/// A throwaway repository in a temporary directory, with its own HOME and git config.
pub struct TestRepo {
    tmp: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
}

impl TestRepo {
    /// Creates `repo/` with `src/lib.rs`, `src/store/mod.rs`, `README.md` and one commit on `main`.
    ///
    /// Real git makes that repository once per test-binary run ([`Template`]); each test gets a
    /// copy of its files, then `git update-index --refresh` gives the copy's index its own stat
    /// data, as `git commit` left it (commits and dates are fixed, so the copy is what `git init`,
    /// `add` and `commit` would make here: one process instead of three).
    pub fn new() -> Self {
        let repo = Self::dirs();
        TEMPLATE
            .get_or_init(|| {
                let made = Self::made_by_git();
                Template::read(&made.root)
            })
            .write(&repo.root);
        repo.git(&repo.root, &["update-index", "-q", "--refresh"]);
        repo
    }

    /// What [`TestRepo::new`] copies: the fixture made by `git init`, `add` and `commit`.
    fn made_by_git() -> Self {
        let repo = Self::empty();
        repo.write(&repo.root, "src/lib.rs", "pub fn lib() {}\n");
        repo.write(&repo.root, "src/store/mod.rs", "pub fn store() {}\n");
        repo.write(&repo.root, "README.md", "# demo\n");
        repo.git(&repo.root, &["add", "-A"]);
        repo.git(&repo.root, &["commit", "-q", "-m", "initial"]);
        repo
    }

    /// Creates `repo/` with `git init` and no commit.
    pub fn empty() -> Self {
        let repo = Self::dirs();
        repo.git(&repo.root, &["init", "-q", "-b", "main"]);
        repo
    }

    /// A temporary directory with an empty `repo/`, `tmp/` and `home/` with its `.gitconfig`.
    fn dirs() -> Self {
        let tmp = temp_dir();
        // Canonical path: macOS /var vs /private/var, and paths git prints.
        let base = tmp.path().canonicalize().expect("canonical temp dir");
        let home = base.join("home");
        let root = base.join("repo");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(base.join("tmp")).unwrap();
        std::fs::write(
            home.join(".gitconfig"),
            "[user]\n\tname = Test User\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n[advice]\n\tdetachedHead = false\n",
        )
        .unwrap();
        TestRepo { tmp, root, home }
    }

    /// The main worktree.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The temporary directory holding everything (repo, home, task worktrees).
    pub fn base(&self) -> PathBuf {
        self.root.parent().unwrap().to_path_buf()
    }

    /// The default worktree path of a task: `<base>/repo.tasks/<id>`.
    pub fn task_dir(&self, id: &str) -> PathBuf {
        self.base().join("repo.tasks").join(id)
    }

    /// Writes `contents` to `rel` under `dir`, creating directories.
    pub fn write(&self, dir: &Path, rel: &str, contents: &str) -> &Self {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
        self
    }

    /// Reads `rel` under `dir`.
    pub fn read(&self, dir: &Path, rel: &str) -> String {
        std::fs::read_to_string(dir.join(rel)).unwrap_or_else(|e| panic!("read {rel}: {e}"))
    }

    /// The hermetic environment every child process gets.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>, dir: &Path) -> Command {
        let mut cmd = Command::new(program);
        cmd.current_dir(dir).env_clear();
        cmd.env("PATH", child_path())
            .env("HOME", &self.home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
            .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
            .env("TZ", "UTC")
            .env("LC_ALL", "C")
            .env("NO_COLOR", "1")
            .env("TERM", "dumb")
            // What a child leaves in its temporary directory goes with the test's own.
            .env("TMPDIR", self.base().join("tmp"))
            // The temporary directories may live under the checkout's `target/`: git must not
            // find the checkout's own repository above them.
            .env(
                "GIT_CEILING_DIRECTORIES",
                std::env::join_paths(temp_roots()).unwrap(),
            );
        cmd
    }

    fn capture(mut cmd: Command) -> Run {
        Run::of(cmd.output().expect("the process runs"))
    }

    /// Runs `git` in `dir`; panics with its output if it fails; returns trimmed stdout.
    #[track_caller]
    pub fn git(&self, dir: &Path, args: &[&str]) -> String {
        let run = self.git_run(dir, args);
        assert_eq!(run.code, 0, "git {args:?} failed:\n{run}");
        run.stdout.trim_end().to_owned()
    }

    /// Runs `git` in `dir` and captures everything.
    pub fn git_run(&self, dir: &Path, args: &[&str]) -> Run {
        let mut cmd = self.git_command(dir);
        cmd.args(args);
        Self::capture(cmd)
    }

    /// `git` in `dir` with [`TestRepo::command`]'s environment, started by the path the
    /// children's `PATH` finds (`argv[0]` stays `git`). Given a bare name and a `PATH` of its
    /// own, std forks the whole test process to search `PATH`; given a path it uses
    /// `posix_spawn` (a vfork), which copies no page tables and leaves no copy-on-write faults.
    pub fn git_command(&self, dir: &Path) -> Command {
        let mut cmd = self.command(git_program(), dir);
        #[cfg(unix)]
        std::os::unix::process::CommandExt::arg0(&mut cmd, "git");
        cmd
    }

    /// Runs `git task` (the binary under test) in `dir` and captures everything.
    pub fn task(&self, dir: &Path, args: &[&str]) -> Run {
        let mut cmd = self.command(bin(), dir);
        cmd.args(args);
        Self::capture(cmd)
    }

    /// Runs `git task` in the main worktree.
    pub fn task_root(&self, args: &[&str]) -> Run {
        self.task(&self.root, args)
    }

    /// Starts task `id` with extra args and returns its worktree path.
    #[track_caller]
    pub fn start(&self, id: &str, extra: &[&str]) -> PathBuf {
        let mut args = vec!["start", id];
        args.extend_from_slice(extra);
        let run = self.task_root(&args).ok();
        PathBuf::from(run.out())
    }

    /// `git for-each-ref --format=%(refname) <prefix>` as lines.
    pub fn refs(&self, prefix: &str) -> Vec<String> {
        let out = self.git(&self.root, &["for-each-ref", "--format=%(refname)", prefix]);
        out.lines()
            .map(str::to_owned)
            .filter(|l| !l.is_empty())
            .collect()
    }

    /// The worktree paths `git worktree list --porcelain` reports.
    pub fn worktrees(&self) -> Vec<PathBuf> {
        self.git(&self.root, &["worktree", "list", "--porcelain"])
            .lines()
            .filter_map(|l| l.strip_prefix("worktree "))
            .map(PathBuf::from)
            .collect()
    }

    /// `git status --porcelain` of `dir`.
    pub fn porcelain(&self, dir: &Path) -> String {
        self.git(dir, &["status", "--porcelain", "--untracked-files=all"])
    }

    /// Asserts `git fsck` finds nothing wrong.
    #[track_caller]
    pub fn fsck(&self) {
        let run = self.git_run(&self.root, &["fsck", "--no-progress", "--strict"]);
        assert_eq!(run.code, 0, "git fsck failed:\n{run}");
        assert!(
            !run.stdout.contains("error") && !run.stderr.contains("error"),
            "git fsck:\n{run}"
        );
    }
}
