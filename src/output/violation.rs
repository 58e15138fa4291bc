//! The contract-violation report as a command answer (exit 1): JSON on stdout, or the human form on stderr.

use super::{Out, Report};
use crate::contract::Verdict;

/// A verdict with violations, printable as SPEC §5's report.
#[derive(serde::Serialize)]
#[serde(transparent)]
pub struct ViolationReport<'a>(pub &'a Verdict);

impl Report for ViolationReport<'_> {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        out.raw_err(&self.0.human(&out.err_palette));
        Ok(())
    }
}
