//! The hook shims, embedded from `hooks/` (the one source of their text).
//!
//! Each shim carries two settings that `hooks install` fills in: the absolute
//! path of the git-task binary and the task branch prefix. Everything else is
//! written byte for byte as it is in `hooks/`, so [`render`] of the values
//! parsed back from an installed file reproduces that file exactly when nobody
//! edited it.

/// The hooks git-task installs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum HookKind {
    /// `pre-commit`: judges the staged changes.
    PreCommit,
    /// `post-checkout`: marks the task of a checked-out task branch active.
    PostCheckout,
}

impl HookKind {
    /// Every hook git-task installs, in install order.
    pub const ALL: [HookKind; 2] = [HookKind::PreCommit, HookKind::PostCheckout];

    /// The hook's file name (`pre-commit`).
    pub fn name(self) -> &'static str {
        match self {
            HookKind::PreCommit => "pre-commit",
            HookKind::PostCheckout => "post-checkout",
        }
    }

    /// The shim as shipped in `hooks/`, with default settings.
    pub fn template(self) -> &'static str {
        match self {
            HookKind::PreCommit => PRE_COMMIT,
            HookKind::PostCheckout => POST_CHECKOUT,
        }
    }
}

/// `hooks/pre-commit`.
pub const PRE_COMMIT: &str = include_str!("../../hooks/pre-commit");
/// `hooks/post-checkout`.
pub const POST_CHECKOUT: &str = include_str!("../../hooks/post-checkout");

/// The line that identifies a shim as git-task's (its second line starts with it).
pub const MARKER: &str = "# git-task ";
const BIN_LINE: &str = "git_task_bin=";
const PREFIX_LINE: &str = "git_task_prefix=";
const DEFAULT_BIN_LINE: &str = "git_task_bin=''";
const DEFAULT_PREFIX_LINE: &str = "git_task_prefix='task/'";

/// The install-time settings of a shim.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// Absolute path of the git-task binary (empty: look it up on `PATH` only).
    pub binary: String,
    /// Task branch prefix (`task/`).
    pub prefix: String,
}

/// Returns the shim `kind` with `settings` filled in.
pub fn render(kind: HookKind, settings: &Settings) -> String {
    kind.template()
        .replacen(
            DEFAULT_BIN_LINE,
            &format!("{BIN_LINE}{}", sh_quote(&settings.binary)),
            1,
        )
        .replacen(
            DEFAULT_PREFIX_LINE,
            &format!("{PREFIX_LINE}{}", sh_quote(&settings.prefix)),
            1,
        )
}

/// Returns whether `text` is one of git-task's shims (of any version, edited or not).
pub fn is_ours(text: &str) -> bool {
    text.lines()
        .nth(1)
        .is_some_and(|l| l.starts_with(MARKER) && l.contains(" hook, version "))
}

/// Reads the settings back from an installed shim; `None` if they cannot be found.
pub fn parse(text: &str) -> Option<Settings> {
    let value = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(sh_unquote)
    };
    Some(Settings {
        binary: value(BIN_LINE)?,
        prefix: value(PREFIX_LINE)?,
    })
}

/// Returns whether `text` is exactly the current shim `kind` with some settings (not edited, not another version).
pub fn is_pristine(kind: HookKind, text: &str) -> bool {
    parse(text).is_some_and(|s| render(kind, &s) == text)
}

/// Quotes `s` for a POSIX shell, always with single quotes.
fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// Undoes [`sh_quote`].
fn sh_unquote(s: &str) -> Option<String> {
    let inner = s.strip_prefix('\'')?.strip_suffix('\'')?;
    Some(inner.replace("'\\''", "'"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_carry_the_default_settings_once() {
        for kind in HookKind::ALL {
            let t = kind.template();
            assert!(t.starts_with("#!/bin/sh\n"), "{}", kind.name());
            assert_eq!(t.matches(DEFAULT_BIN_LINE).count(), 1, "{}", kind.name());
            assert_eq!(t.matches(DEFAULT_PREFIX_LINE).count(), 1, "{}", kind.name());
            assert!(is_ours(t) && is_pristine(kind, t));
        }
    }

    #[test]
    fn render_and_parse_round_trip() {
        let s = Settings {
            binary: "/opt/it's here/git-task".into(),
            prefix: "work/$x/".into(),
        };
        for kind in HookKind::ALL {
            let text = render(kind, &s);
            assert!(
                text.contains("git_task_bin='/opt/it'\\''s here/git-task'\n"),
                "{text}"
            );
            assert_eq!(parse(&text), Some(s.clone()));
            assert!(is_pristine(kind, &text));
            let edited = text.replace("exit 0", "exit 0 # mine");
            assert!(is_ours(&edited));
            assert!(edited == text || !is_pristine(kind, &edited));
        }
        assert!(!is_ours("#!/bin/sh\nexit 0\n"));
        assert!(!is_pristine(HookKind::PreCommit, POST_CHECKOUT));
    }
}
