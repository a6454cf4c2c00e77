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

/// The lines of `text` that contain `marker`, in order.
#[must_use]
pub fn marked_lines<'a>(text: &'a str, marker: &str) -> Vec<&'a str> {
    text.lines().filter(|line| line.contains(marker)).collect()
}

/// `lines` joined with `\n`, each prefixed by its 1-based number and `: ` (for a failure message
/// that points at a line).
#[must_use]
pub fn numbered_lines(text: &str) -> String {
    text.lines()
        .enumerate()
        .map(|(index, line)| format!("{}: {line}\n", index + 1))
        .collect()
}
