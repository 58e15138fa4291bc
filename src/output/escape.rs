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

#[cfg(test)]
mod tests {
    #[test]
    fn control_characters_are_made_visible() {
        assert_eq!(super::escape("plain/path.rs"), "plain/path.rs");
        assert_eq!(super::escape("a\nb"), "a\\nb");
        assert_eq!(super::escape("\x1b[31mred"), "\\x1b[31mred");
    }
}
