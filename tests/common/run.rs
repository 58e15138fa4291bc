//! What one process run printed and how it ended, and the binary under test.

use std::fmt;
use std::path::PathBuf;

/// Path of the binary under test.
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_git-task"))
}

/// Captured output of one process run.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// What a finished process printed and how it ended (`-1`: killed by a signal).
    pub fn of(out: std::process::Output) -> Run {
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// Asserts exit 0.
    #[track_caller]
    pub fn ok(self) -> Self {
        assert_eq!(self.code, 0, "{self}");
        self
    }
    /// Asserts the exit code.
    #[track_caller]
    pub fn code(self, want: i32) -> Self {
        assert_eq!(self.code, want, "{self}");
        self
    }
    /// Parses stdout as one JSON document.
    #[track_caller]
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}):\n{self}"))
    }
    /// Returns stdout trimmed.
    pub fn out(&self) -> &str {
        self.stdout.trim()
    }
}

impl fmt::Display for Run {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.stdout)?;
        if !self.stderr.is_empty() {
            write!(f, "--- stderr ---\n{}", self.stderr)?;
        }
        if self.code != 0 {
            write!(f, "[exit: {}]", self.code)?;
        }
        Ok(())
    }
}

impl fmt::Debug for Run {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}
