//! Column alignment for `list` and `status` (no dependency).

/// Formats rows so that every column but the last is padded to its widest cell.
pub fn align(rows: &[Vec<String>]) -> Vec<String> {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let mut widths = vec![0; columns];
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    rows.iter()
        .map(|row| {
            let mut line = String::new();
            for (i, cell) in row.iter().enumerate() {
                if i + 1 == row.len() {
                    line.push_str(cell);
                } else {
                    line.push_str(cell);
                    line.extend(std::iter::repeat_n(
                        ' ',
                        widths[i] - cell.chars().count() + 2,
                    ));
                }
            }
            line.trim_end().to_owned()
        })
        .collect()
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
