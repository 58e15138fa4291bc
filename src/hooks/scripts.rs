//! The hook shims, embedded from `hooks/` (the one source of their text).
//!
//! Each shim carries three settings that `hooks install` fills in: the absolute
//! path of the git-task binary, the task branch prefix and the hooks directory
//! it chains to (empty in a shared hooks directory). Everything else is
//! written byte for byte as it is in `hooks/`, so [`render`] of the values
//! parsed back from an installed file reproduces that file exactly when nobody
//! edited it.

/// The hooks git-task installs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum HookKind {
    /// `pre-commit`: judges the staged changes.
    PreCommit,
    /// `post-checkout`: marks the task of a checked-out task branch active.
    PostCheckout,
    /// `reference-transaction`: refuses, in a task's worktree, updates of refs other than the
    /// task's own branch, and notes the moves of branches tasks started from.
    ReferenceTransaction,
}

impl HookKind {
    /// Every hook git-task installs, in install order.
    pub const ALL: [HookKind; 3] = [
        HookKind::PreCommit,
        HookKind::PostCheckout,
        HookKind::ReferenceTransaction,
    ];

    /// The hook's file name (`pre-commit`).
    pub fn name(self) -> &'static str {
        match self {
            HookKind::PreCommit => "pre-commit",
            HookKind::PostCheckout => "post-checkout",
            HookKind::ReferenceTransaction => "reference-transaction",
        }
    }

    /// The shim as shipped in `hooks/`, with default settings.
    pub fn template(self) -> &'static str {
        match self {
            HookKind::PreCommit => PRE_COMMIT,
            HookKind::PostCheckout => POST_CHECKOUT,
            HookKind::ReferenceTransaction => REFERENCE_TRANSACTION,
        }
    }
}

/// `hooks/pre-commit`.
pub const PRE_COMMIT: &str = include_str!("../../hooks/pre-commit");
/// `hooks/post-checkout`.
pub const POST_CHECKOUT: &str = include_str!("../../hooks/post-checkout");
/// `hooks/reference-transaction`.
pub const REFERENCE_TRANSACTION: &str = include_str!("../../hooks/reference-transaction");
/// `hooks/pass-through`: every other hook, in git-task's own hooks directory of a worktree.
pub const PASS_THROUGH: &str = include_str!("../../hooks/pass-through");
/// The shims of version 1 (no chain setting), recognised so that `install` updates them.
const V1_PRE_COMMIT: &str = include_str!("v1/pre-commit");
const V1_POST_CHECKOUT: &str = include_str!("v1/post-checkout");
/// The shims of version 2 (trusting any `GIT_DIR`), recognised so that `install` updates them.
const V2_PRE_COMMIT: &str = include_str!("v2/pre-commit");
const V2_POST_CHECKOUT: &str = include_str!("v2/post-checkout");
const V2_REFERENCE_TRANSACTION: &str = include_str!("v2/reference-transaction");
/// The shims of version 3 (a chain that is run whatever stands there), likewise.
const V3_PRE_COMMIT: &str = include_str!("v3/pre-commit");
const V3_POST_CHECKOUT: &str = include_str!("v3/post-checkout");
const V3_REFERENCE_TRANSACTION: &str = include_str!("v3/reference-transaction");

/// The shims of version 4 (a chain that is always a fixed directory), likewise.
const V4_PRE_COMMIT: &str = include_str!("v4/pre-commit");
const V4_POST_CHECKOUT: &str = include_str!("v4/post-checkout");
const V4_REFERENCE_TRANSACTION: &str = include_str!("v4/reference-transaction");
/// The pass-through hook of version 2 (a fixed directory), likewise.
const V2_PASS_THROUGH: &str = include_str!("v2/pass-through");

/// The chain setting of the shims in git-task's own directory of the main worktree, pointed at
/// while a patch-mode task guards it: the directory the repository's own config names, looked
/// up when the hook runs (a hook manager may have changed it since).
pub const CHAIN_REPOSITORY: &str = "@";

/// The line that identifies a shim as git-task's (its second line starts with it).
pub const MARKER: &str = "# git-task ";
const BIN_LINE: &str = "git_task_bin=";
const PREFIX_LINE: &str = "git_task_prefix=";
const DEFAULT_BIN_LINE: &str = "git_task_bin=''";
const DEFAULT_PREFIX_LINE: &str = "git_task_prefix='task/'";
const CHAIN_LINE: &str = "git_task_chain=";
const DEFAULT_CHAIN_LINE: &str = "git_task_chain=''";

/// The install-time settings of a shim.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// Absolute path of the git-task binary (empty: look it up on `PATH` only).
    pub binary: String,
    /// Task branch prefix (`task/`).
    pub prefix: String,
    /// The hooks directory whose hook of the same name runs first (empty: `<name>.git-task-chained`).
    pub chain: String,
}

/// Returns the shim `kind` with `settings` filled in.
pub fn render(kind: HookKind, settings: &Settings) -> String {
    fill(kind.template(), settings)
}

/// Returns the pass-through hook that runs `chain`'s hook of the same name.
pub fn render_pass_through(chain: &str) -> String {
    PASS_THROUGH.replacen(
        DEFAULT_CHAIN_LINE,
        &format!("{CHAIN_LINE}{}", sh_quote(chain)),
        1,
    )
}

fn fill(template: &str, settings: &Settings) -> String {
    template
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
        .replacen(
            DEFAULT_CHAIN_LINE,
            &format!("{CHAIN_LINE}{}", sh_quote(&settings.chain)),
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
        chain: value(CHAIN_LINE).unwrap_or_default(),
    })
}

/// Returns whether `text` is exactly a shim `kind` of this or an earlier version with some
/// settings (not edited): one `install` may replace without `--force`.
pub fn is_pristine(kind: HookKind, text: &str) -> bool {
    let (v1, v2, v3, v4) = match kind {
        HookKind::PreCommit => (
            Some(V1_PRE_COMMIT),
            V2_PRE_COMMIT,
            V3_PRE_COMMIT,
            V4_PRE_COMMIT,
        ),
        HookKind::PostCheckout => (
            Some(V1_POST_CHECKOUT),
            V2_POST_CHECKOUT,
            V3_POST_CHECKOUT,
            V4_POST_CHECKOUT,
        ),
        HookKind::ReferenceTransaction => (
            None,
            V2_REFERENCE_TRANSACTION,
            V3_REFERENCE_TRANSACTION,
            V4_REFERENCE_TRANSACTION,
        ),
    };
    parse(text).is_some_and(|s| {
        render(kind, &s) == text
            || fill(v4, &s) == text
            || fill(v3, &s) == text
            || fill(v2, &s) == text
            || v1.is_some_and(|v1| fill(v1, &s) == text)
    })
}

/// Returns whether `text` is a pass-through hook of this or an earlier version with some chain,
/// not edited.
pub fn is_pristine_pass_through(text: &str) -> bool {
    text.lines()
        .find_map(|l| l.strip_prefix(CHAIN_LINE))
        .and_then(sh_unquote)
        .is_some_and(|chain| {
            render_pass_through(&chain) == text
                || V2_PASS_THROUGH.replacen(
                    DEFAULT_CHAIN_LINE,
                    &format!("{CHAIN_LINE}{}", sh_quote(&chain)),
                    1,
                ) == text
        })
}

/// Quotes `s` for a POSIX shell, always with single quotes.
pub(super) fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// Undoes [`sh_quote`].
pub(super) fn sh_unquote(s: &str) -> Option<String> {
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
            assert_eq!(t.matches(DEFAULT_CHAIN_LINE).count(), 1, "{}", kind.name());
            assert!(is_ours(t) && is_pristine(kind, t));
        }
    }

    #[test]
    fn render_and_parse_round_trip() {
        let s = Settings {
            binary: "/opt/it's here/git-task".into(),
            prefix: "work/$x/".into(),
            chain: ".husky/_".into(),
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
        // A shim of version 1 counts as pristine (install updates it), with its settings.
        let v1 = fill(V1_PRE_COMMIT, &s);
        assert!(is_pristine(HookKind::PreCommit, &v1));
        // So does one of version 2 or 3.
        for (kind, v2) in [
            (HookKind::PreCommit, V2_PRE_COMMIT),
            (HookKind::PostCheckout, V2_POST_CHECKOUT),
            (HookKind::ReferenceTransaction, V2_REFERENCE_TRANSACTION),
            (HookKind::PreCommit, V3_PRE_COMMIT),
            (HookKind::PreCommit, V4_PRE_COMMIT),
            (HookKind::PostCheckout, V4_POST_CHECKOUT),
            (HookKind::ReferenceTransaction, V4_REFERENCE_TRANSACTION),
            (HookKind::PostCheckout, V3_POST_CHECKOUT),
            (HookKind::ReferenceTransaction, V3_REFERENCE_TRANSACTION),
        ] {
            let v2 = fill(v2, &s);
            assert!(v2 != render(kind, &s) && is_pristine(kind, &v2));
        }
        assert_eq!(parse(&v1).unwrap().chain, "");
        let pass = render_pass_through(".githooks");
        assert!(is_ours(&pass) && is_pristine_pass_through(&pass));
        assert!(!is_pristine_pass_through(
            &pass.replace("exec", "exec nice")
        ));
    }
}
