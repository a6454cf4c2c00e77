//! Numbered lines of text, the usual content of a file whose hunks a test counts.

/// The lines `1` to `count` (each `n\n`), those numbered in `marked` as `n!\n`.
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

/// The lines `1` to `count` (each `n\n`), those numbered in `replaced` holding the given text
/// instead.
#[must_use]
pub fn lines_replacing(count: usize, replaced: &[(usize, &str)]) -> String {
    (1..=count)
        .map(|n| match replaced.iter().find(|(line, _)| *line == n) {
            Some((_, text)) => format!("{text}\n"),
            None => format!("{n}\n"),
        })
        .collect()
}
