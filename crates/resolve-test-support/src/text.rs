//! Assertions on text (command output, a screen, a file) that print the whole text when they
//! fail, and helpers that pick lines out of it.

/// Assert that `text` contains `needle`, printing the whole text when it does not.
#[track_caller]
pub fn assert_contains(text: &str, needle: &str) {
    assert!(
        text.contains(needle),
        "expected to find {needle:?} in:\n{text}"
    );
}

/// Assert that `text` contains every one of `needles`, printing the whole text and the first
/// one missing when it does not.
#[track_caller]
pub fn assert_contains_all(text: &str, needles: &[&str]) {
    for needle in needles {
        assert_contains(text, needle);
    }
}

/// Assert that `text` does not contain `needle`, printing the whole text when it does.
#[track_caller]
pub fn assert_lacks(text: &str, needle: &str) {
    assert!(!text.contains(needle), "expected no {needle:?} in:\n{text}");
}

/// Lines `1..=count`, each ending in `\n`: `marked(n)` for the numbers in `which`, `plain(n)`
/// for the others (a file whose numbered lines a test changes).
#[must_use]
pub fn numbered_lines(
    count: usize,
    which: &[usize],
    plain: impl Fn(usize) -> String,
    marked: impl Fn(usize) -> String,
) -> String {
    (1..=count)
        .map(|n| {
            let line = if which.contains(&n) {
                marked(n)
            } else {
                plain(n)
            };
            line + "\n"
        })
        .collect()
}

/// The lines `1` to `count`, each `n\n`, those numbered in `marked` as `n!\n`: changing a few
/// makes hunks far enough apart to be reviewed one by one.
#[must_use]
pub fn marked_numbered_lines(count: usize, marked: &[usize]) -> String {
    numbered_lines(count, marked, |n| n.to_string(), |n| format!("{n}!"))
}

/// The lines `1` to `count`, each `n\n`, those numbered in `replaced` holding the given text
/// instead.
#[must_use]
pub fn lines_replacing(count: usize, replaced: &[(usize, &str)]) -> String {
    let numbers: Vec<usize> = replaced.iter().map(|(line, _)| *line).collect();
    numbered_lines(
        count,
        &numbers,
        |n| n.to_string(),
        |n| {
            replaced
                .iter()
                .find(|(line, _)| *line == n)
                .map_or_else(String::new, |(_, text)| (*text).to_owned())
        },
    )
}

/// Assert that `text` starts with `prefix`, printing the whole text when it does not.
#[track_caller]
pub fn assert_starts_with(text: &str, prefix: &str) {
    assert!(
        text.starts_with(prefix),
        "expected {text:?} to start with {prefix:?}"
    );
}
