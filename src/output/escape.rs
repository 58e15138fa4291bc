//! Makes repository-controlled strings safe to print on a terminal.

use std::borrow::Cow;

/// Replaces control characters (newlines, escapes, carriage returns) with visible `\xNN` forms.
pub fn escape(text: &str) -> Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            c if c.is_control() => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Like [`escape`], but keeps newlines: for messages whose lines are laid out on purpose
/// (`error:`, `warning:`, `hint:` text), which may quote repository-controlled names.
pub fn escape_keep_lines(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| c.is_control() && c != '\n') {
        return Cow::Borrowed(text);
    }
    let lines: Vec<Cow<'_, str>> = text.split('\n').map(escape).collect();
    Cow::Owned(lines.join("\n"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn control_characters_are_made_visible() {
        assert_eq!(super::escape("plain/path.rs"), "plain/path.rs");
        assert_eq!(super::escape("a\nb"), "a\\nb");
        assert_eq!(super::escape("\x1b[31mred"), "\\x1b[31mred");
        assert_eq!(
            super::escape_keep_lines("a\x1b[0m\nb\r"),
            "a\\x1b[0m\nb\\x0d"
        );
    }
}
