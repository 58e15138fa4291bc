//! Where answers go: stdout for results (human or JSON), stderr for the rest.
//!
//! Every command builds one [`Report`] value and hands it to [`Out::report`],
//! so the human and JSON forms come from the same struct and cannot drift.

pub mod enforcement;
mod escape;
mod style;
pub mod table;
pub mod violation;

pub use escape::{escape, escape_keep_lines};
pub use style::{use_color_env, Palette};

use std::cell::RefCell;
use std::io::{self, Write};
use std::rc::Rc;

/// How results are printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Short text for people.
    Human,
    /// One JSON document per command on stdout.
    Json,
}

/// The version of the shape of every JSON document git-task prints, its `schema_version`:
/// raised when a field is removed or changes meaning (new fields do not raise it).
/// The schemas are published in `schema/` (`commands/schema.rs`).
pub const SCHEMA_VERSION: u32 = 1;

/// A JSON document as printed: `schema_version` first, then the report's own fields.
///
/// (In a schema it takes the report's name.)
#[derive(serde::Serialize, schemars::JsonSchema)]
#[schemars(rename = "{T}")]
pub struct Versioned<'a, T: ?Sized> {
    /// The version of this document's shape (see `schema/`).
    #[schemars(schema_with = "schema_version")]
    pub schema_version: u32,
    /// The report.
    #[serde(flatten)]
    pub report: &'a T,
}

impl<'a, T: ?Sized> Versioned<'a, T> {
    /// Wraps `report` with the current [`SCHEMA_VERSION`].
    pub fn new(report: &'a T) -> Self {
        Self {
            schema_version: SCHEMA_VERSION,
            report,
        }
    }
}

/// `schema_version` is exactly [`SCHEMA_VERSION`].
fn schema_version(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": "integer", "const": SCHEMA_VERSION })
}

/// The schema of `R` as [`Out::report`] prints it: `schema_version`, then `R`'s fields.
pub fn schema_of<R: Report + schemars::JsonSchema + 'static>(
    generator: &mut schemars::SchemaGenerator,
) -> schemars::Schema {
    generator.subschema_for::<Versioned<'static, R>>()
}

/// A command's error as data: what `--json` prints on stdout when a command could not
/// finish (`schema/error.json`), and the content of an MCP tool error.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct Failure {
    /// `"error"`, or the refusal's own kind (`record_tampered`, `config_changed`), like the
    /// `kind` of every report.
    pub kind: &'static str,
    /// `input` (exit 2), `repo` (exit 128) or `negative` (exit 1): see `error::Kind`.
    pub error: &'static str,
    /// The exit code the command line gives.
    pub exit_code: u8,
    /// The message (`error: …` on the command line).
    pub message: String,
    /// What to run next (`hint: …` on the command line).
    pub hints: Vec<String>,
    /// The next steps as `git task mcp` tool calls, where a tool does them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub next: Vec<crate::error::Call>,
}

impl Failure {
    /// Describes `err`.
    pub fn of(err: &crate::Error) -> Self {
        Failure {
            kind: err.code(),
            error: err.kind().name(),
            exit_code: err.exit_code(),
            message: err.to_string(),
            hints: err.hints().to_vec(),
            next: err.next_calls().to_vec(),
        }
    }
}

/// A refusal (a negative verdict, exit 1) as JSON: the report's own fields, then what to do
/// next, in words (`hints`, the `hint:` lines of the command line) and as MCP tool calls
/// (`next`), so a person, a script and an agent that has only the MCP tools each get from the
/// refusal to a landed task.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[schemars(rename = "{T}")]
pub struct Refusal<T> {
    /// The report.
    #[serde(flatten)]
    pub report: T,
    /// What to run next, in order (`hint: …` on the command line).
    pub hints: Vec<String>,
    /// The same steps as `git task mcp` tool calls, in order, where a tool does them (a step
    /// only a shell can take, such as resolving a conflict in an editor, has none).
    pub next: Vec<crate::error::Call>,
}

/// A refusal's human form on stderr, built beside its `hints`: `error:` lines, `hint:` lines
/// (each also kept as a hint), and text as it is.
pub struct Said<'p> {
    palette: &'p Palette,
    /// The text for people.
    pub text: String,
    /// The hints, in order.
    pub hints: Vec<String>,
}

impl<'p> Said<'p> {
    /// Nothing said yet.
    pub fn new(palette: &'p Palette) -> Self {
        Said {
            palette,
            text: String::new(),
            hints: Vec::new(),
        }
    }

    /// An `error:` line.
    pub fn error(&mut self, text: &str) {
        use owo_colors::OwoColorize;
        self.text
            .push_str(&format!("{} {text}\n", "error:".style(self.palette.error)));
    }

    /// A `hint:` line, kept as a hint.
    pub fn hint(&mut self, text: impl Into<String>) {
        use owo_colors::OwoColorize;
        let text = text.into();
        self.text
            .push_str(&format!("{} {text}\n", "hint:".style(self.palette.hint)));
        self.hints.push(text);
    }

    /// Text as it is (a check's output, the list of paths).
    pub fn raw(&mut self, text: &str) {
        self.text.push_str(text);
    }
}

/// An error as the `error:` and `hint:` lines [`Out::error`] writes, without colour: for text
/// read elsewhere than this process's terminal (an MCP tool result, a harness's refusal).
pub fn error_lines(err: &crate::Error) -> String {
    let mut text = format!("error: {}\n", escape_keep_lines(&err.to_string()));
    for hint in err.hints() {
        text.push_str(&hint_line(hint));
        text.push('\n');
    }
    text
}

/// A `hint:` line without colour or newline, for text read elsewhere than this process's
/// terminal (a harness's refusal).
pub fn hint_line(hint: &str) -> String {
    format!("hint: {}", escape_keep_lines(hint))
}

/// The schema of the error document `--json` prints (`schema/error.json`).
pub fn error_schemas(generator: &mut schemars::SchemaGenerator) -> Vec<schemars::Schema> {
    vec![generator.subschema_for::<Versioned<'static, Failure>>()]
}

/// A command's answer, printable for people or as JSON.
pub trait Report: serde::Serialize {
    /// Writes the human form (stdout; notes for people go through `out.note`).
    fn human(&self, out: &Out) -> io::Result<()>;
}

/// The two output streams, the format and the colours decided once at start-up.
pub struct Out {
    format: Format,
    quiet: bool,
    err_is_terminal: bool,
    /// Colours for stdout.
    pub palette: Palette,
    /// Colours for stderr.
    pub err_palette: Palette,
    stdout: RefCell<Box<dyn Write>>,
    stderr: RefCell<Box<dyn Write>>,
}

impl Out {
    /// Creates the output for a process: real stdout and stderr.
    pub fn new(format: Format, quiet: bool, palette: Palette, err_palette: Palette) -> Self {
        Self {
            format,
            quiet,
            err_is_terminal: std::io::IsTerminal::is_terminal(&io::stderr()),
            palette,
            err_palette,
            stdout: RefCell::new(Box::new(io::stdout())),
            stderr: RefCell::new(Box::new(io::stderr())),
        }
    }

    /// Creates an output that writes into memory instead of the process's streams, without
    /// colours or progress: a command run in process (`git task mcp`, the harness hooks)
    /// whose answer the caller reads back from the two buffers.
    pub fn captured(format: Format, quiet: bool) -> (Self, Captured, Captured) {
        let (stdout, stderr) = (Captured::default(), Captured::default());
        let out = Self {
            format,
            quiet,
            err_is_terminal: false,
            palette: Palette::default(),
            err_palette: Palette::default(),
            stdout: RefCell::new(Box::new(stdout.clone())),
            stderr: RefCell::new(Box::new(stderr.clone())),
        };
        (out, stdout, stderr)
    }

    /// Returns whether results are printed as JSON.
    pub fn is_json(&self) -> bool {
        self.format == Format::Json
    }

    /// Prints `report` as JSON or in its human form.
    pub fn report<R: Report>(&self, report: &R) -> io::Result<()> {
        match self.format {
            Format::Json => {
                let mut text =
                    serde_json::to_string(&Versioned::new(report)).map_err(io::Error::other)?;
                text.push('\n');
                self.raw(&text)
            }
            Format::Human => report.human(self),
        }
    }

    /// Writes one line to stdout.
    pub fn line(&self, text: impl std::fmt::Display) -> io::Result<()> {
        writeln!(self.stdout.borrow_mut(), "{text}")
    }

    /// Writes text to stdout as is.
    pub fn raw(&self, text: &str) -> io::Result<()> {
        let mut out = self.stdout.borrow_mut();
        out.write_all(text.as_bytes())?;
        out.flush()
    }

    /// Writes bytes to stdout as is (a diff of files that are not UTF-8).
    pub fn raw_bytes(&self, bytes: &[u8]) -> io::Result<()> {
        let mut out = self.stdout.borrow_mut();
        out.write_all(bytes)?;
        out.flush()
    }

    /// Writes a status line for people to stderr, unless `--quiet`.
    pub fn note(&self, text: impl std::fmt::Display) {
        if !self.quiet {
            let _ = writeln!(self.stderr.borrow_mut(), "{text}");
        }
    }

    /// Returns whether progress lines should be drawn (stderr is a terminal, not `--quiet`).
    pub fn progress_enabled(&self) -> bool {
        self.err_is_terminal && !self.quiet
    }

    /// Redraws a progress line on stderr; `last` ends it with a newline.
    pub fn progress(&self, text: impl std::fmt::Display, last: bool) {
        if self.progress_enabled() {
            let _ = write!(
                self.stderr.borrow_mut(),
                "\r{text}{}",
                if last { "\n" } else { "" }
            );
        }
    }

    /// Writes a `warning:` line to stderr, unless `--quiet`.
    pub fn warn(&self, text: impl std::fmt::Display) {
        use owo_colors::OwoColorize;
        if self.quiet {
            return;
        }
        let _ = writeln!(
            self.stderr.borrow_mut(),
            "{} {}",
            "warning:".style(self.err_palette.warning),
            escape_keep_lines(&text.to_string())
        );
    }

    /// Writes an `error:` line to stdout, as part of a report's human form (a failed check).
    pub fn error_line(&self, text: impl std::fmt::Display) -> io::Result<()> {
        use owo_colors::OwoColorize;
        self.line(format_args!(
            "{} {text}",
            "error:".style(self.palette.error)
        ))
    }

    /// Writes a `hint:` line to stderr, unless `--quiet` (an error's hints always show).
    pub fn hint(&self, text: impl std::fmt::Display) {
        if !self.quiet {
            self.write_hint(text);
        }
    }

    fn write_hint(&self, text: impl std::fmt::Display) {
        use owo_colors::OwoColorize;
        let _ = writeln!(
            self.stderr.borrow_mut(),
            "{} {}",
            "hint:".style(self.err_palette.hint),
            escape_keep_lines(&text.to_string())
        );
    }

    /// Writes an `error:` line and its hints to stderr; with `--json`, also the error as one
    /// JSON document on stdout ([`Failure`]), so a script reading stdout always gets one.
    pub fn error(&self, err: &crate::Error) {
        use owo_colors::OwoColorize;
        if self.format == Format::Json {
            if let Ok(mut text) = serde_json::to_string(&Versioned::new(&Failure::of(err))) {
                text.push('\n');
                let _ = self.raw(&text);
            }
        }
        let _ = writeln!(
            self.stderr.borrow_mut(),
            "{} {}",
            "error:".style(self.err_palette.error),
            escape_keep_lines(&err.to_string())
        );
        for hint in err.hints() {
            self.write_hint(hint);
        }
    }

    /// Writes text to stderr as is (reports of negative verdicts from hooks).
    pub fn raw_err(&self, text: &str) {
        let _ = self.stderr.borrow_mut().write_all(text.as_bytes());
    }

    /// Waits up to `timeout` and returns whether stdout's reader went away meanwhile (a pipe
    /// whose other end closed): a process that only prints when something happens learns it
    /// without writing. Asleep in poll(2), so idle costs nothing.
    pub fn wait_stdout_closed(&self, timeout: std::time::Duration) -> bool {
        #[cfg(unix)]
        {
            use rustix::event::{poll, PollFd, PollFlags, Timespec};
            let stdout = io::stdout();
            let mut fds = [PollFd::new(&stdout, PollFlags::empty())];
            let timeout = Timespec {
                tv_sec: timeout.as_secs() as i64,
                tv_nsec: i64::from(timeout.subsec_nanos()),
            };
            match poll(&mut fds, Some(&timeout)) {
                Ok(n) if n > 0 => fds[0]
                    .revents()
                    .intersects(PollFlags::ERR | PollFlags::HUP | PollFlags::NVAL),
                // Interrupted by a signal (Ctrl-C): the caller looks at its flag.
                _ => false,
            }
        }
        #[cfg(not(unix))]
        {
            std::thread::sleep(timeout);
            false
        }
    }

    /// Flushes stdout; a closed pipe is not an error.
    pub fn flush(&self) -> io::Result<()> {
        self.stdout.borrow_mut().flush()
    }
}

/// One in-memory stream of an [`Out::captured`]: what the command wrote there.
#[derive(Clone, Default)]
pub struct Captured(Rc<RefCell<Vec<u8>>>);

impl Captured {
    /// Takes what was written so far.
    pub fn take(&self) -> Vec<u8> {
        std::mem::take(&mut self.0.borrow_mut())
    }
}

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Formats seconds since the epoch as `YYYY-MM-DD HH:MM:SS` UTC.
pub fn format_time(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}
