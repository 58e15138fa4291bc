//! Errors that stop a command, and the exit codes they map to.
//!
//! A negative verdict (violation, conflict, failed check) is not an error: it
//! is a report returned as [`crate::commands::Done::Negative`]. `Error` only
//! means "could not do what was asked".

use std::fmt;

/// Why a command could not finish; decides the exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Bad arguments, task ids, contract files, unknown tasks (exit 2).
    Input,
    /// The repository could not be read or written, or lost a race (exit 128).
    Repo,
    /// A negative verdict raised deep inside a core function (exit 1).
    Negative,
}

impl Kind {
    /// Returns the kind's name as scripts see it (`input`, `repo`, `negative`).
    pub fn name(self) -> &'static str {
        match self {
            Kind::Input => "input",
            Kind::Repo => "repo",
            Kind::Negative => "negative",
        }
    }
}

/// A next step as a call of a `git task mcp` tool: the tool (the command of the same name) and
/// its arguments (the command's options, `_` for `-`; `paths` for `--path`). What a hint says
/// in words, for an agent that has only the MCP tools.
#[derive(Clone, Debug, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct Call {
    /// The tool: `revert`, `commit`, `merge`, `sync`, `list`, ...
    pub tool: &'static str,
    /// Its arguments, as its input schema names them (`tools/list`).
    pub arguments: serde_json::Map<String, serde_json::Value>,
}

impl Call {
    /// A call of `tool` on task `id` (no other argument).
    pub fn on(tool: &'static str, id: &str) -> Call {
        Call::new(tool).arg("id", id)
    }

    /// A call of `tool` without arguments.
    pub fn new(tool: &'static str) -> Call {
        Call {
            tool,
            arguments: serde_json::Map::new(),
        }
    }

    /// Adds an argument.
    #[must_use]
    pub fn arg(mut self, name: &str, value: impl Into<serde_json::Value>) -> Call {
        self.arguments.insert(name.to_owned(), value.into());
        self
    }
}

/// A failure with a message, hints saying what to run next, and an optional cause.
pub struct Error {
    kind: Kind,
    message: String,
    hints: Vec<String>,
    /// The hints' steps as MCP tool calls, where a tool does them.
    next: Vec<Call>,
    /// The report kind scripts see in `--json` (`record_tampered`), when not plain `error`.
    code: Option<&'static str>,
    source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
}

/// The result type of every fallible core function.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Returns an error caused by bad input (exit 2).
    pub fn input(message: impl Into<String>) -> Self {
        Self {
            kind: Kind::Input,
            message: message.into(),
            hints: Vec::new(),
            next: Vec::new(),
            code: None,
            source: None,
        }
    }

    /// Returns a repository error (exit 128) with the cause that produced it.
    pub fn repo(
        message: impl Into<String>,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        Self {
            kind: Kind::Repo,
            message: message.into(),
            hints: Vec::new(),
            next: Vec::new(),
            code: None,
            source: Some(source.into()),
        }
    }

    /// Returns a repository error (exit 128) without an underlying cause.
    pub fn repo_msg(message: impl Into<String>) -> Self {
        Self {
            kind: Kind::Repo,
            message: message.into(),
            hints: Vec::new(),
            next: Vec::new(),
            code: None,
            source: None,
        }
    }

    /// Returns a negative verdict raised as an error (exit 1), e.g. a failed setup command.
    pub fn negative(message: impl Into<String>) -> Self {
        Self {
            kind: Kind::Negative,
            message: message.into(),
            hints: Vec::new(),
            next: Vec::new(),
            code: None,
            source: None,
        }
    }

    /// Adds a line telling the user what to run next.
    #[must_use]
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hints.push(hint.into());
        self
    }

    /// Adds a next step as an MCP tool call (say it in words with [`Error::hint`] too).
    #[must_use]
    pub fn next(mut self, call: Call) -> Self {
        self.next.push(call);
        self
    }

    /// Returns the next steps as MCP tool calls, in order.
    pub fn next_calls(&self) -> &[Call] {
        &self.next
    }

    /// Names the report kind scripts see in `--json` for this failure (`record_tampered`,
    /// `config_changed`) instead of the plain `error`.
    #[must_use]
    pub fn with_code(mut self, code: &'static str) -> Self {
        self.code = Some(code);
        self
    }

    /// The report kind of this failure in `--json`: its code, else `error`.
    pub fn code(&self) -> &'static str {
        self.code.unwrap_or("error")
    }

    /// Returns the kind of failure.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// Returns the main message, without the cause chain.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Returns the hints, in the order they were added.
    pub fn hints(&self) -> &[String] {
        &self.hints
    }

    /// Returns the process exit code this error maps to (SPEC §6).
    pub fn exit_code(&self) -> u8 {
        match self.kind {
            Kind::Negative => 1,
            Kind::Input => 2,
            Kind::Repo => 128,
        }
    }
}

impl fmt::Display for Error {
    /// Writes the message followed by the cause chain, joined by `: ` as git does.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        let mut cause: Option<&(dyn std::error::Error + 'static)> =
            self.source.as_deref().map(|e| e as _);
        while let Some(err) = cause {
            let text = err.to_string();
            if !text.is_empty() && !self.message.contains(&text) {
                write!(f, ": {text}")?;
            }
            cause = err.source();
        }
        Ok(())
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}: {self}", self.kind)
    }
}

impl std::error::Error for Error {}

impl From<std::io::Error> for Error {
    fn from(err: std::io::Error) -> Self {
        Error::repo("I/O error", err)
    }
}

/// Adds context to a fallible git (gix) or I/O call at the adapter boundary.
pub trait Context<T> {
    /// Turns the error into a repository error whose message names the object.
    fn context(self, message: impl FnOnce() -> String) -> Result<T>;
}

impl<T, E> Context<T> for std::result::Result<T, E>
where
    E: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    fn context(self, message: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|e| Error::repo(message(), e))
    }
}
