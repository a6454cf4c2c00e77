//! Unified diffs of one file, as previews show them: `--- a/<path>` / `+++ b/<path>` headers
//! (`/dev/null` for a side that does not exist), `@@ -l,n +l,n @@` hunks with 3 lines of
//! context, git-style (a count of 1 is left out). Line endings are kept as they are (a CRLF line
//! shows its `\r`), and a last line without a newline is followed by `\ No newline at end of
//! file`.
//!
//! [`PreviewDiff`] is the one line diff under every preview diff and the hunk model: the ops
//! `similar` makes for its `TextDiff::from_lines`, found with less work (see there).

use std::fmt::Write as _;
use std::ops::Range;

use similar::algorithms::IdentifyDistinct;
use similar::udiff::UnifiedHunkHeader;
use similar::{Algorithm, DiffOp, DiffTag, capture_diff_deadline, group_diff_ops};

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
    let diff = PreviewDiff::new(old, new);
    (diff.unified(&old_header, &new_header), diff.counts())
}

/// The line diff a preview shows, of two texts: each split into lines as `similar` splits them
/// (after a `\n`, a `\r\n` or a lone `\r`, each line keeping its ending), and the ops between
/// the lines, the very ops `similar::TextDiff::from_lines` makes. It makes them with less work: the lines are found
/// with `memchr` instead of char by char, and they are only hashed (to compare numbers instead
/// of lines) when more than [`HASHED_LINES`] lines lie between the common start and end, where
/// `similar` hashes every line of any text longer than that. A change of a few lines in a long
/// file, what a search-and-replace makes, is then a compare of each line.
pub(crate) struct PreviewDiff<'a> {
    old: Vec<&'a str>,
    new: Vec<&'a str>,
    ops: Vec<DiffOp>,
}

/// Beyond how many changed lines on a side the lines are hashed before they are diffed (the
/// bound `similar` uses for whole texts).
const HASHED_LINES: usize = 100;

impl<'a> PreviewDiff<'a> {
    /// The line diff from `old` to `new`.
    pub(crate) fn new(old: &'a str, new: &'a str) -> Self {
        let (old, new) = (lines(old), lines(new));
        let same_start = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
        let same_end = old[same_start..]
            .iter()
            .rev()
            .zip(new[same_start..].iter().rev())
            .take_while(|(a, b)| a == b)
            .count();
        let changed = (old.len() - same_start - same_end).max(new.len() - same_start - same_end);
        let ops = if changed > HASHED_LINES {
            let ids = IdentifyDistinct::<u32>::new(&old[..], 0..old.len(), &new[..], 0..new.len());
            capture_diff_deadline(
                Algorithm::Myers,
                ids.old_lookup(),
                ids.old_range(),
                ids.new_lookup(),
                ids.new_range(),
                None,
            )
        } else {
            capture_diff_deadline(
                Algorithm::Myers,
                &old[..],
                0..old.len(),
                &new[..],
                0..new.len(),
                None,
            )
        };
        Self { old, new, ops }
    }

    /// The lines of the old text, each with its ending.
    pub(crate) fn old_lines(&self) -> &[&'a str] {
        &self.old
    }

    /// The lines of the new text, each with its ending.
    pub(crate) fn new_lines(&self) -> &[&'a str] {
        &self.new
    }

    /// The ops, every line of both sides covered in order.
    pub(crate) fn ops(&self) -> &[DiffOp] {
        &self.ops
    }

    /// How many lines the diff adds and removes.
    pub(crate) fn counts(&self) -> LineCounts {
        let mut counts = LineCounts::default();
        for op in &self.ops {
            let (tag, old_range, new_range) = op.as_tag_tuple();
            if tag != DiffTag::Equal {
                counts.added += new_range.len();
                counts.removed += old_range.len();
            }
        }
        counts
    }

    /// The unified diff under the headers `old_header` and `new_header`, with
    /// [`CONTEXT_LINES`] of context; empty when nothing changes. Byte for byte what `similar`
    /// writes for the same diff with its missing-newline hint on.
    pub(crate) fn unified(&self, old_header: &str, new_header: &str) -> String {
        let mut text = String::new();
        for group in group_diff_ops(self.ops.clone(), CONTEXT_LINES) {
            if text.is_empty() {
                let _ = write!(text, "--- {old_header}\n+++ {new_header}\n");
            }
            let _ = writeln!(text, "{}", UnifiedHunkHeader::new(&group));
            for op in &group {
                let (tag, old_range, new_range) = op.as_tag_tuple();
                match tag {
                    DiffTag::Equal => write_lines(&mut text, ' ', &self.old, old_range),
                    DiffTag::Delete => write_lines(&mut text, '-', &self.old, old_range),
                    DiffTag::Insert => write_lines(&mut text, '+', &self.new, new_range),
                    DiffTag::Replace => {
                        write_lines(&mut text, '-', &self.old, old_range);
                        write_lines(&mut text, '+', &self.new, new_range);
                    }
                }
            }
        }
        text
    }
}

/// Each line of `lines[range]` after `sign`, a line without an ending marked.
fn write_lines(text: &mut String, sign: char, lines: &[&str], range: Range<usize>) {
    for line in &lines[range] {
        text.push(sign);
        text.push_str(line);
        if !line.ends_with(['\n', '\r']) {
            text.push_str("\n\\ No newline at end of file\n");
        }
    }
}

/// The lines of `text` as `similar` splits them: each ends after a `\n`, a `\r\n` or a lone
/// `\r`, which it keeps; the last may have no ending.
fn lines(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut lines = Vec::new();
    let mut start = 0;
    for at in memchr::memchr2_iter(b'\n', b'\r', bytes) {
        if at < start {
            // The `\n` of a `\r\n` already taken.
            continue;
        }
        let end = if bytes[at] == b'\r' && bytes.get(at + 1) == Some(&b'\n') {
            at + 2
        } else {
            at + 1
        };
        lines.push(&text[start..end]);
        start = end;
    }
    if start < text.len() {
        lines.push(&text[start..]);
    }
    lines
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use proptest::prelude::*;
    use similar::{DiffableStr, TextDiff};

    use super::*;

    /// A line of a generated text: repeated lines, every ending `similar` splits at, none.
    fn line() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec![
            "a\n", "a\n", "b\n", "}\n", "}\n", "\n", "c\r\n", "d\r", "é ü\n", "x", "\r",
        ])
    }

    /// A text and another made from it by a few edits (or, at times, many).
    fn texts() -> impl Strategy<Value = (String, String)> {
        (
            prop::collection::vec(line(), 0..260),
            prop::collection::vec((any::<prop::sample::Index>(), 0..3_usize, line()), 0..6),
            prop::collection::vec(line(), 0..40),
        )
            .prop_map(|(old, edits, block)| {
                let mut new = old.clone();
                for (at, kind, line) in edits {
                    let at = at.index(new.len() + 1);
                    match kind {
                        0 => new.insert(at, line),
                        1 if at < new.len() => {
                            new.remove(at);
                        }
                        _ if at < new.len() => new[at] = line,
                        _ => new.extend(block.iter().copied()),
                    }
                }
                (old.concat(), new.concat())
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn the_line_diff_is_similars_line_diff_byte_for_byte((old, new) in texts()) {
            let expected = TextDiff::from_lines(&old, &new);
            let diff = PreviewDiff::new(&old, &new);
            prop_assert_eq!(diff.old_lines(), &old.tokenize_lines()[..]);
            prop_assert_eq!(diff.new_lines(), &new.tokenize_lines()[..]);
            prop_assert_eq!(diff.ops(), expected.ops());
            prop_assert_eq!(
                diff.unified("a/f", "b/f"),
                expected
                    .unified_diff()
                    .context_radius(CONTEXT_LINES)
                    .missing_newline_hint(true)
                    .header("a/f", "b/f")
                    .to_string()
            );
        }
    }

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
