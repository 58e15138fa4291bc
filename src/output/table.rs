//! Column alignment for `list` and `status` (no dependency).

/// Formats rows, a line each, so that every column but the last is padded to its widest cell.
pub fn align<S: AsRef<str>>(rows: &[Vec<S>]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let mut widths = vec![0; columns];
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(width(cell.as_ref()));
        }
    }
    // `list` prints a thousand rows: one string for them all.
    let line_len = widths.iter().map(|w| w + 2).sum::<usize>();
    let mut text = String::with_capacity(rows.len() * line_len);
    for row in rows {
        let start = text.len();
        for (i, cell) in row.iter().enumerate() {
            let cell = cell.as_ref();
            text.push_str(cell);
            if i + 1 < row.len() {
                text.extend(std::iter::repeat_n(' ', widths[i] - width(cell) + 2));
            }
        }
        let end = start + text[start..].trim_end().len();
        text.truncate(end);
        text.push('\n');
    }
    text
}

/// A cell's width in characters (an ASCII cell, the common case, without decoding).
fn width(cell: &str) -> usize {
    if cell.is_ascii() {
        cell.len()
    } else {
        cell.chars().count()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn columns_line_up() {
        let rows: Vec<Vec<String>> = vec![
            vec!["a".into(), "bb".into(), "c".into()],
            vec!["aaa".into(), "b".into(), "".into()],
        ];
        assert_eq!(super::align(&rows), "a    bb  c\naaa  b\n");
    }
}
