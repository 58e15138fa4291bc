//! Column alignment for `list` and `status` (no dependency).

/// Formats rows so that every column but the last is padded to its widest cell.
pub fn align(rows: &[Vec<String>]) -> Vec<String> {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let mut widths = vec![0; columns];
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(width(cell));
        }
    }
    // `list` prints a thousand rows: one allocation a line.
    let line_len = widths.iter().map(|w| w + 2).sum::<usize>();
    rows.iter()
        .map(|row| {
            let mut line = String::with_capacity(line_len);
            for (i, cell) in row.iter().enumerate() {
                line.push_str(cell);
                if i + 1 < row.len() {
                    line.extend(std::iter::repeat_n(' ', widths[i] - width(cell) + 2));
                }
            }
            line.truncate(line.trim_end().len());
            line
        })
        .collect()
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
        let rows = vec![
            vec!["a".into(), "bb".into(), "c".into()],
            vec!["aaa".into(), "b".into(), "".into()],
        ];
        assert_eq!(super::align(&rows), vec!["a    bb  c", "aaa  b"]);
    }
}
