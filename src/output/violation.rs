//! The contract-violation report as a command answer (exit 1): JSON on stdout, or the human form on stderr.

use super::{Out, Palette, Report};
use crate::contract::Verdict;
use owo_colors::OwoColorize;

/// A verdict with violations, printable as SPEC §5's report.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(transparent)]
pub struct ViolationReport<'a>(pub &'a Verdict);

impl Report for ViolationReport<'_> {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        out.raw_err(&render(self.0, &out.err_palette));
        Ok(())
    }
}

/// Renders a verdict for people: one line per violation (path, reason, rule), then the repair as `hint:` lines.
pub fn render(verdict: &Verdict, palette: &Palette) -> String {
    let mut out = String::new();
    if verdict.is_clean() {
        return out;
    }
    let n = verdict.violations.len();
    out.push_str(&format!(
        "{} task '{}': {n} contract violation{}\n",
        "error:".style(palette.error),
        verdict.task,
        if n == 1 { "" } else { "s" }
    ));
    let width = verdict
        .violations
        .iter()
        .map(|v| super::escape(&v.file).chars().count())
        .max()
        .unwrap_or(0)
        .min(60);
    let rwidth = verdict
        .violations
        .iter()
        .map(|v| v.reason.to_string().len())
        .max()
        .unwrap_or(0);
    for v in &verdict.violations {
        let file = super::escape(&v.file);
        let pad = width.saturating_sub(file.chars().count());
        let reason = v.reason.to_string();
        out.push_str(&format!(
            "  {file}{}  {}{}  {}\n",
            " ".repeat(pad),
            reason.style(palette.bad),
            " ".repeat(rwidth - reason.len()),
            super::escape(&v.rule)
        ));
    }
    for line in verdict.repair.lines() {
        // Paths in the commands are shell-quoted without control characters; rules may hold any.
        out.push_str(&format!(
            "{} {}\n",
            "hint:".style(palette.hint),
            super::escape(line)
        ));
    }
    for hint in &verdict.hints {
        out.push_str(&format!(
            "{} {}\n",
            "hint:".style(palette.hint),
            super::escape(hint)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::contract::judge::{judge, Change, RepairContext};
    use crate::contract::{BranchFile, ContractFile, Effective};
    use crate::git::diff::ChangeKind;

    #[test]
    fn one_line_per_violation_then_the_repair() {
        let frozen = ContractFile::parse(
            "version = 1\nallowed = [\"src/api/**\"]\nforbidden = [\"src/db/**\"]\n",
            "c",
        )
        .unwrap();
        let e = Effective::new("t", None, &frozen, &BranchFile::NotApplicable, false).unwrap();
        let ctx = RepairContext {
            source: "HEAD".into(),
            staged: true,
            root: None,
        };
        let changes = [Change::file("src/db/x y.rs", ChangeKind::Modified)];
        let text = super::render(&judge(&e, &changes, &ctx), &super::Palette::default());
        assert!(
            text.starts_with("error: task 't': 1 contract violation\n"),
            "{text}"
        );
        assert!(
            text.contains("  src/db/x y.rs  forbidden  src/db/**\n"),
            "{text}"
        );
        assert!(
            text.contains("hint: This task may only change: src/api/**"),
            "{text}"
        );
    }
}
