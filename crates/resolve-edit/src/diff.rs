//! Unified diffs of one file, as previews show them: `--- a/<path>` / `+++ b/<path>` headers
//! (`/dev/null` for a side that does not exist), `@@ -l,n +l,n @@` hunks with 3 lines of
//! context, git-style (a count of 1 is left out). Line endings are kept as they are (a CRLF line
//! shows its `\r`), and a last line without a newline is followed by `\ No newline at end of
//! file`.

use similar::{DiffTag, TextDiff};

/// Lines of context around each change.
pub(crate) const CONTEXT_LINES: usize = 3;

/// The unified diff from `old` to `new` of the file `path` (relative to the root); empty when
/// they are equal.
pub fn unified_diff(path: &str, old: &str, new: &str) -> String {
    change_diff(path, Some(old), Some(new))
}

/// The unified diff of `path` where `None` means the file does not exist on that side (a
/// create or a delete, shown against `/dev/null`); empty when nothing changes.
pub fn change_diff(path: &str, old: Option<&str>, new: Option<&str>) -> String {
    counted_change_diff(path, old, new).0
}

/// How many lines a diff adds and removes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LineCounts {
    /// Lines added.
    pub added: usize,
    /// Lines removed.
    pub removed: usize,
}

impl std::ops::AddAssign for LineCounts {
    fn add_assign(&mut self, other: Self) {
        self.added += other.added;
        self.removed += other.removed;
    }
}

/// [`change_diff`], with the lines it adds and removes: the same line diff the hunk model
/// makes ([`FileHunks`](crate::FileHunks)), so the counts are its hunks' counts.
pub(crate) fn counted_change_diff(
    path: &str,
    old: Option<&str>,
    new: Option<&str>,
) -> (String, LineCounts) {
    let old_header = old.map_or_else(|| "/dev/null".to_owned(), |_| format!("a/{path}"));
    let new_header = new.map_or_else(|| "/dev/null".to_owned(), |_| format!("b/{path}"));
    let exists_on_both_sides = old.is_some() && new.is_some();
    let (old, new) = (old.unwrap_or(""), new.unwrap_or(""));
    if old == new {
        // An empty file created or deleted still shows its headers.
        let text = if exists_on_both_sides {
            String::new()
        } else {
            format!("--- {old_header}\n+++ {new_header}\n")
        };
        return (text, LineCounts::default());
    }
    let diff = TextDiff::from_lines(old, new);
    let mut counts = LineCounts::default();
    for op in diff.ops() {
        let (tag, old_range, new_range) = op.as_tag_tuple();
        if tag != DiffTag::Equal {
            counts.added += new_range.len();
            counts.removed += old_range.len();
        }
    }
    let text = diff
        .unified_diff()
        .context_radius(CONTEXT_LINES)
        .missing_newline_hint(true)
        .header(&old_header, &new_header)
        .to_string();
    (text, counts)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn a_one_line_change_has_headers_a_hunk_and_three_lines_of_context() {
        let old = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
        let new = "1\n2\n3\n4\nfive\n6\n7\n8\n9\n";
        assert_eq!(
            unified_diff("src/n.txt", old, new),
            "--- a/src/n.txt\n+++ b/src/n.txt\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n"
        );
    }

    #[test]
    fn far_apart_changes_make_two_hunks() {
        let old: String = (1..=20).map(|n| format!("{n}\n")).collect();
        let new: String = (1..=20)
            .map(|n| match n {
                2 => "two\n".to_owned(),
                19 => "nineteen\n".to_owned(),
                n => format!("{n}\n"),
            })
            .collect();
        let diff = unified_diff("f", &old, &new);
        assert_eq!(
            diff.lines().filter(|line| line.starts_with("@@ ")).count(),
            2,
            "{diff}"
        );
        assert!(diff.contains("@@ -1,5 +1,5 @@\n"), "{diff}");
        assert!(diff.contains("@@ -16,5 +16,5 @@\n"), "{diff}");
    }

    #[test]
    fn a_missing_final_newline_is_marked() {
        assert_eq!(
            unified_diff("f", "a\nb", "a\nc"),
            "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"
        );
        assert_eq!(
            unified_diff("f", "a", "a\n"),
            "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+a\n"
        );
    }

    #[test]
    fn crlf_line_endings_are_kept_in_the_diff() {
        assert_eq!(
            unified_diff("w.txt", "a\r\nb\r\n", "a\r\nc\r\n"),
            "--- a/w.txt\n+++ b/w.txt\n@@ -1,2 +1,2 @@\n a\r\n-b\r\n+c\r\n"
        );
    }

    #[test]
    fn creates_and_deletes_are_shown_against_dev_null() {
        assert_eq!(
            change_diff("new.txt", None, Some("x\ny\n")),
            "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+x\n+y\n"
        );
        assert_eq!(
            change_diff("old.txt", Some("x\n"), None),
            "--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
        );
    }

    #[test]
    fn equal_texts_give_an_empty_diff_but_an_empty_create_shows_headers() {
        assert_eq!(unified_diff("f", "same\n", "same\n"), "");
        assert_eq!(
            change_diff("empty", None, Some("")),
            "--- /dev/null\n+++ b/empty\n"
        );
    }
}
