//! Text fixtures: numbered lines, some of them marked, so that changing a few makes hunks far
//! enough apart to be reviewed one by one.

/// The lines `1` to `count`, each `n\n`, those numbered in `marked` as `n!\n`.
#[must_use]
pub fn numbered_lines(count: usize, marked: &[usize]) -> String {
    (1..=count)
        .map(|n| {
            if marked.contains(&n) {
                format!("{n}!\n")
            } else {
                format!("{n}\n")
            }
        })
        .collect()
}
