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

/// Decides whether a stream gets colour: `NO_COLOR`, then `color.ui`, then "is it a terminal".
pub fn use_color(
    is_terminal: bool,
    no_color: Option<&std::ffi::OsStr>,
    color_ui: Option<&str>,
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
    !no_color && !git_says_never && (is_terminal || git_says_always)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    #[test]
    fn colour_truth_table() {
        assert!(use_color(true, None, None));
        assert!(!use_color(false, None, None));
        assert!(!use_color(true, Some(OsStr::new("1")), None));
        assert!(
            use_color(true, Some(OsStr::new("")), None),
            "an empty NO_COLOR does not count"
        );
        assert!(!use_color(true, None, Some("never")));
        assert!(!use_color(true, None, Some("false")));
        assert!(use_color(true, None, Some("auto")));
        assert!(use_color(false, None, Some("always")));
        assert!(
            !use_color(false, Some(OsStr::new("1")), Some("always")),
            "NO_COLOR wins"
        );
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
