//! Colours for human output, decided once at start-up.

use owo_colors::Style;

/// Styles for one stream; every field is plain when colour is off.
#[derive(Clone, Copy, Debug, Default)]
pub struct Palette {
    /// `error:` prefix.
    pub error: Style,
    /// `warning:` prefix.
    pub warning: Style,
    /// `hint:` prefix.
    pub hint: Style,
    /// Good news: clean, allowed, merged.
    pub ok: Style,
    /// Bad news inside a report: a violation's reason.
    pub bad: Style,
    /// Task ids and refs.
    pub id: Style,
    /// Less important details: commit ids, paths.
    pub dim: Style,
}

impl Palette {
    /// Builds the palette for a stream that may (`true`) or may not use colour.
    pub fn new(color: bool) -> Self {
        if !color {
            return Self::default();
        }
        Self {
            error: Style::new().red().bold(),
            warning: Style::new().yellow().bold(),
            hint: Style::new().yellow(),
            ok: Style::new().green(),
            bad: Style::new().red(),
            id: Style::new().cyan(),
            dim: Style::new().dimmed(),
        }
    }
}

/// Decides whether a stream gets colour, as git does: `NO_COLOR` (set and not empty) means
/// never; then `color.ui` (`-c color.ui=…` included): `never`/`false` means never, `always`
/// means always; otherwise (`auto`, unset) only on a terminal that is not `TERM=dumb` (magit
/// and other editors run git on a pseudo-terminal with `TERM=dumb`).
pub fn use_color(
    is_terminal: bool,
    no_color: Option<&std::ffi::OsStr>,
    color_ui: Option<&str>,
    term: Option<&std::ffi::OsStr>,
) -> bool {
    let no_color = no_color.is_some_and(|v| !v.is_empty());
    let git_says_never = matches!(
        color_ui.map(str::to_ascii_lowercase).as_deref(),
        Some("never" | "false" | "no" | "off" | "0")
    );
    let git_says_always = matches!(
        color_ui.map(str::to_ascii_lowercase).as_deref(),
        Some("always")
    );
    let dumb = term.is_some_and(|t| t == "dumb");
    !no_color && !git_says_never && ((is_terminal && !dumb) || git_says_always)
}

/// [`use_color`] for this process: `NO_COLOR` and `TERM` from the environment.
pub fn use_color_env(is_terminal: bool, color_ui: Option<&str>) -> bool {
    use_color(
        is_terminal,
        std::env::var_os("NO_COLOR").as_deref(),
        color_ui,
        std::env::var_os("TERM").as_deref(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    #[test]
    fn colour_truth_table() {
        assert!(use_color(true, None, None, None));
        assert!(!use_color(false, None, None, None));
        assert!(!use_color(true, Some(OsStr::new("1")), None, None));
        assert!(
            use_color(true, Some(OsStr::new("")), None, None),
            "an empty NO_COLOR does not count"
        );
        assert!(!use_color(true, None, Some("never"), None));
        assert!(!use_color(true, None, Some("false"), None));
        assert!(use_color(true, None, Some("auto"), None));
        assert!(use_color(false, None, Some("always"), None));
        assert!(
            !use_color(false, Some(OsStr::new("1")), Some("always"), None),
            "NO_COLOR wins"
        );
        let dumb = Some(OsStr::new("dumb"));
        assert!(!use_color(true, None, None, dumb), "TERM=dumb");
        assert!(!use_color(true, None, Some("auto"), dumb));
        assert!(use_color(true, None, Some("always"), dumb));
        assert!(use_color(true, None, None, Some(OsStr::new("xterm"))));
    }

    #[test]
    fn plain_palette_writes_no_escapes() {
        use owo_colors::OwoColorize;
        let p = Palette::new(false);
        assert_eq!(format!("{}", "error:".style(p.error)), "error:");
        let p = Palette::new(true);
        assert_ne!(format!("{}", "error:".style(p.error)), "error:");
    }
}
