//! Running user commands: checks, `--setup`, and `exec`.
//!
//! This is the only module that starts processes. Commands run through
//! `sh -c` with the task's environment, a timeout, and captured output.
//!
//! [`Frozen::run`] is the one runner of a task's frozen checks (`check --run`,
//! the merge gate, accepting a patch-mode task); its [`Run`] is what the
//! `checks` event records (`crate::record::event::Checks`).

use crate::error::{Error, Result};
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What one command did.
#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
pub struct Outcome {
    /// The command line as written.
    pub command: String,
    /// Its exit code (`None` if killed by a signal or the timeout).
    pub code: Option<i32>,
    /// Whether it ran past its timeout and was killed.
    pub timed_out: bool,
    /// Its standard output followed by its standard error.
    pub output: String,
    /// How long it ran, in milliseconds.
    pub millis: u64,
}

impl Outcome {
    /// Returns whether the command succeeded.
    pub fn ok(&self) -> bool {
        self.code == Some(0) && !self.timed_out
    }
}

/// The frozen checks of a task, ready to run: the contract's commands, their
/// timeout and the task's environment (`crate::record::Record::frozen_checks`).
#[derive(Clone, Debug)]
pub struct Frozen {
    /// The commands, in the contract's order.
    pub commands: Vec<String>,
    /// How long each may run.
    pub timeout: Duration,
    /// The task's environment (`GIT_TASK_*`).
    pub env: Vec<(&'static str, String)>,
}

/// How to run the frozen checks.
#[derive(Clone, Copy, Debug, Default)]
pub struct How {
    /// Also stream their output to stderr as it comes (a terminal is watching, SPEC §7.5).
    pub stream: bool,
    /// Run every command even after one failed (`check --run`); else stop at the first failure.
    pub keep_going: bool,
}

/// The checks of one task: what ran and how it went.
#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
pub struct Run {
    /// Whether `--no-checks` skipped them.
    pub skipped: bool,
    /// Whether every command that ran succeeded (true when skipped or none).
    pub passed: bool,
    /// One entry per command run, in order, with its output.
    pub commands: Vec<Outcome>,
}

impl Run {
    /// Checks that did not run: skipped (`--no-checks`), or none to run.
    pub fn not_run(skipped: bool) -> Run {
        Run {
            skipped,
            passed: true,
            commands: Vec::new(),
        }
    }
}

impl Frozen {
    /// Runs the commands in `dir` (which becomes `GIT_TASK_WORKTREE`), telling `progress`
    /// when each command starts, every [`TICK`] while it runs, and when it ends.
    pub fn run(&self, dir: &Path, how: How, progress: &mut dyn FnMut(Progress<'_>)) -> Result<Run> {
        let here = dir.display().to_string();
        let env: Vec<(&str, String)> = self
            .env
            .iter()
            .map(|(k, v)| match *k {
                "GIT_TASK_WORKTREE" => (*k, here.clone()),
                _ => (*k, v.clone()),
            })
            .collect();
        let mut commands = Vec::new();
        for command in &self.commands {
            progress(Progress::Starting(command));
            let outcome = run_ticking(command, dir, &env, self.timeout, how.stream, &mut |t| {
                progress(Progress::Running(command, t))
            })?;
            progress(Progress::Finished(&outcome));
            let ok = outcome.ok();
            commands.push(outcome);
            if !ok && !how.keep_going {
                break;
            }
        }
        Ok(Run {
            skipped: false,
            passed: commands.iter().all(Outcome::ok),
            commands,
        })
    }
}

/// Prepares `sh -c command` in `dir` with `env` and without the hook variables of the calling git.
fn shell(command: &str, dir: &Path, env: &[(&str, String)]) -> Command {
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(command).current_dir(dir);
    // Its own process group, so a timeout or Ctrl-C can end everything it started.
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    for var in crate::git::LOCAL_ENV {
        cmd.env_remove(var);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// Runs `command` in `dir`, capturing its output, killing it after `timeout`.
pub fn run_captured(
    command: &str,
    dir: &Path,
    env: &[(&str, String)],
    timeout: Duration,
) -> Result<Outcome> {
    run_captured_echo(command, dir, env, timeout, false)
}

/// Like [`run_captured`]; with `echo`, the output also streams to stderr as it comes
/// (the merge gate's checks on a terminal, SPEC §7.5).
pub fn run_captured_echo(
    command: &str,
    dir: &Path,
    env: &[(&str, String)],
    timeout: Duration,
    echo: bool,
) -> Result<Outcome> {
    run_ticking(command, dir, env, timeout, echo, &mut |_| {})
}

/// How often a running check's progress is told.
pub const TICK: Duration = Duration::from_secs(1);

/// What [`Frozen::run`] tells of its progress.
#[derive(Clone, Copy, Debug)]
pub enum Progress<'a> {
    /// This command starts.
    Starting(&'a str),
    /// This command has been running this long (every [`TICK`]).
    Running(&'a str, Duration),
    /// A command ended.
    Finished(&'a Outcome),
}

/// [`run_captured_echo`], calling `tick` with the time it has run every [`TICK`].
fn run_ticking(
    command: &str,
    dir: &Path,
    env: &[(&str, String)],
    timeout: Duration,
    echo: bool,
    tick: &mut dyn FnMut(Duration),
) -> Result<Outcome> {
    let start = Instant::now();
    let mut next_tick = TICK;
    let mut child = shell(command, dir, env)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| Error::repo(format!("could not run '{command}'"), e))?;
    let out = Reader::spawn(child.stdout.take().expect("stdout was piped"), echo);
    let err = Reader::spawn(child.stderr.take().expect("stderr was piped"), echo);
    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child
            .try_wait()
            .map_err(|e| Error::repo(format!("could not wait for '{command}'"), e))?
        {
            break status;
        }
        if start.elapsed() >= timeout || crate::git::interrupt::is_triggered() {
            timed_out = start.elapsed() >= timeout;
            // The command may have started children of its own that hold the pipes open:
            // end its whole process group, not only the shell.
            kill_group(child.id());
            let _ = child.kill();
            break child
                .wait()
                .map_err(|e| Error::repo(format!("could not wait for '{command}'"), e))?;
        }
        if start.elapsed() >= next_tick {
            tick(start.elapsed());
            next_tick += TICK;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let mut output = out.finish();
    output.extend(err.finish());
    Ok(Outcome {
        command: command.to_owned(),
        code: if timed_out { None } else { status.code() },
        timed_out,
        output: String::from_utf8_lossy(&output).into_owned(),
        millis: start.elapsed().as_millis() as u64,
    })
}

/// How much of one output stream of a command is kept: its first [`KEEP_HEAD`] bytes and its
/// last [`KEEP_TAIL`]; what lies between is counted and left out (a check that prints
/// gigabytes never fills memory; it still streams whole to a terminal watching).
pub const KEEP_HEAD: usize = 64 << 10;
/// See [`KEEP_HEAD`].
pub const KEEP_TAIL: usize = 960 << 10;

/// One output stream, kept within [`KEEP_HEAD`] + [`KEEP_TAIL`] bytes.
#[derive(Default)]
struct Bounded {
    head: Vec<u8>,
    tail: std::collections::VecDeque<u8>,
    left_out: u64,
}

impl Bounded {
    fn push(&mut self, mut bytes: &[u8]) {
        if self.head.len() < KEEP_HEAD {
            let n = bytes.len().min(KEEP_HEAD - self.head.len());
            self.head.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
        }
        if bytes.len() >= KEEP_TAIL {
            self.left_out += (self.tail.len() + bytes.len() - KEEP_TAIL) as u64;
            self.tail.clear();
            bytes = &bytes[bytes.len() - KEEP_TAIL..];
        }
        let over = (self.tail.len() + bytes.len()).saturating_sub(KEEP_TAIL);
        if over > 0 {
            self.tail.drain(..over);
            self.left_out += over as u64;
        }
        self.tail.extend(bytes);
    }

    fn take(&mut self) -> Vec<u8> {
        let mut out = std::mem::take(&mut self.head);
        if self.left_out > 0 {
            out.extend_from_slice(
                format!(
                    "\n[git-task: {} bytes of output left out here]\n",
                    self.left_out
                )
                .as_bytes(),
            );
        }
        out.extend(std::mem::take(&mut self.tail));
        out
    }
}

/// Collects one output pipe of a child on a thread, bounded ([`Bounded`]).
struct Reader {
    buf: std::sync::Arc<std::sync::Mutex<Bounded>>,
    done: std::sync::mpsc::Receiver<()>,
}

impl Reader {
    fn spawn(mut pipe: impl Read + Send + 'static, echo: bool) -> Reader {
        let buf = std::sync::Arc::new(std::sync::Mutex::new(Bounded::default()));
        let (tx, done) = std::sync::mpsc::channel();
        let shared = buf.clone();
        std::thread::spawn(move || {
            let mut chunk = [0u8; 8192];
            loop {
                match pipe.read(&mut chunk) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        if echo {
                            use std::io::Write;
                            let _ = std::io::stderr().write_all(&chunk[..n]);
                        }
                        shared
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .push(&chunk[..n])
                    }
                }
            }
            let _ = tx.send(());
        });
        Reader { buf, done }
    }

    /// Returns what was read once the pipe closes, or after a short grace when a
    /// background process the command started keeps it open (a daemon from a setup).
    fn finish(self) -> Vec<u8> {
        let _ = self.done.recv_timeout(Duration::from_secs(2));
        self.buf.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

/// Kills the process group led by `pid` (commands run in their own group, see [`shell`]).
fn kill_group(pid: u32) {
    #[cfg(unix)]
    if let Some(group) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
    }
    #[cfg(not(unix))]
    let _ = pid;
}

/// Runs `command` in `dir` with the terminal's stdin/stdout/stderr, returning its exit code.
pub fn run_inherited(command: &[String], dir: &Path, env: &[(&str, String)]) -> Result<i32> {
    let (program, args) = command.split_first().ok_or_else(|| {
        Error::input("no command given after '--'").hint("e.g. git task exec <id> -- make test")
    })?;
    let mut cmd = Command::new(program);
    cmd.args(args).current_dir(dir);
    for var in crate::git::LOCAL_ENV {
        cmd.env_remove(var);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let status = cmd.status().map_err(|e| {
        let err = Error::input(format!("could not run '{program}': {e}"));
        if e.kind() == std::io::ErrorKind::NotFound {
            err.hint(format!("is '{program}' installed and on PATH?"))
        } else {
            err.hint(format!("check that '{program}' is an executable program"))
        }
    })?;
    Ok(status.code().unwrap_or_else(|| {
        #[cfg(unix)]
        {
            use std::os::unix::process::ExitStatusExt;
            128 + status.signal().unwrap_or(0)
        }
        #[cfg(not(unix))]
        {
            1
        }
    }))
}

/// Runs a git hook script (`post-checkout`) in `dir` with `args`, the way git runs hooks: output passes through, status ignored by the caller if it wishes.
pub fn run_hook(script: &Path, dir: &Path, args: &[&str]) -> Result<i32> {
    let mut cmd = Command::new(script);
    cmd.args(args).current_dir(dir).stdin(Stdio::null());
    for var in crate::git::LOCAL_ENV {
        cmd.env_remove(var);
    }
    // Git hands stdout of hooks to stderr so that it never mixes with a command's answer.
    cmd.stdout(std::io::stderr());
    let status = cmd
        .status()
        .map_err(|e| Error::repo(format!("could not run hook '{}'", script.display()), e))?;
    Ok(status.code().unwrap_or(1))
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// Returns whether `pid` is a live (not zombie) process.
    fn alive(pid: &str) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|stat| {
                stat.rsplit(')')
                    .next()
                    .and_then(|rest| rest.trim_start().chars().next())
                    != Some('Z')
            })
            .unwrap_or(false)
    }

    /// A timed-out command is ended with everything it started, and its output so far is kept.
    #[test]
    fn timeout_ends_the_whole_process_group() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().to_path_buf();
        let pidfile = dir.join("bg.pid");
        let cmd = format!(
            "echo begun; sleep 600 & echo $! > '{}'; exec sleep 600",
            pidfile.display()
        );
        let outcome = run_captured(&cmd, &dir, &[], Duration::from_secs(1)).unwrap();
        assert!(outcome.timed_out);
        assert_eq!(outcome.code, None);
        assert!(!outcome.ok());
        assert!(outcome.output.contains("begun"), "{}", outcome.output);
        let pid = std::fs::read_to_string(&pidfile).unwrap();
        let pid = pid.trim();
        // Reaping by init can lag a moment; this only waits, it measures nothing.
        for _ in 0..3000 {
            if !alive(pid) {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(
            !alive(pid),
            "the background child of a timed-out command was left running"
        );
    }

    #[test]
    fn output_is_bounded_and_keeps_its_start_and_end() {
        let tmp = tempfile::tempdir().unwrap();
        let o = run_captured(
            "echo first; yes 0123456789 | head -c 20000000; echo; echo last",
            tmp.path(),
            &[],
            Duration::from_secs(60),
        )
        .unwrap();
        assert!(o.ok());
        assert!(
            o.output.len() <= KEEP_HEAD + KEEP_TAIL + 100,
            "{}",
            o.output.len()
        );
        assert!(o.output.starts_with("first\n"));
        assert!(o.output.ends_with("last\n"));
        assert!(o.output.contains("bytes of output left out here]"));
        let mut b = Bounded::default();
        b.push(b"small");
        assert_eq!(b.take(), b"small");
    }

    #[test]
    fn output_and_exit_code_are_captured() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().to_path_buf();
        let outcome = run_captured(
            "echo out; echo err >&2; exit 3",
            &dir,
            &[("X", "y".into())],
            Duration::from_secs(600),
        )
        .unwrap();
        assert_eq!(outcome.code, Some(3));
        assert!(!outcome.timed_out);
        assert_eq!(outcome.output, "out\nerr\n");
        let outcome = run_captured(
            "printf %s \"$X\"",
            &dir,
            &[("X", "y".into())],
            Duration::from_secs(600),
        )
        .unwrap();
        assert!(outcome.ok());
        assert_eq!(outcome.output, "y");
    }
}
