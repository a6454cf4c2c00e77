//! The hunks of one file change: the hunks of its unified diff with 3 lines of context, as the
//! preview shows them (the same diff, so the same hunks), numbered from 1, each with its line
//! ranges, its header and its lines; and composing the base with any subset of them, byte for
//! byte. A created or deleted file is one hunk.
//!
//! Composing walks the whole diff once, change by change: a change of a kept hunk contributes
//! its new lines, any other change its old lines, and unchanged lines come from the base. So
//! hunks whose context overlaps compose without duplicating or losing a line, and line endings
//! (CRLF, a missing final newline) and a BOM are kept as they are, being part of the lines.

use std::ops::Range;

use resolve_core::PreviewFile;
use serde::Serialize;
use similar::udiff::UnifiedHunkHeader;
use similar::{DiffOp, DiffTag, group_diff_ops};

use crate::diff::{CONTEXT_LINES, PreviewDiff};

/// What a file change does to its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// The file is created.
    Create,
    /// The file's content is replaced.
    Update,
    /// The file is removed.
    Delete,
}

impl ChangeKind {
    /// What `change` does to its file.
    pub fn of(change: &resolve_store::FileChange) -> Self {
        match change {
            resolve_store::FileChange::Create { .. } => Self::Create,
            resolve_store::FileChange::Update { .. } => Self::Update,
            resolve_store::FileChange::Delete { .. } => Self::Delete,
        }
    }
}

/// What one line of a hunk is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LineKind {
    /// Unchanged, shown around the changes (` ` in a diff).
    Context,
    /// Only in the base (`-`).
    Removed,
    /// Only in the new content (`+`).
    Added,
}

/// One line of a hunk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HunkLine {
    /// Context, removed or added.
    pub kind: LineKind,
    /// The line's bytes as in the file, its line ending included (none on a last line without
    /// a final newline).
    pub text: String,
}

impl HunkLine {
    /// The line without its line ending (`\n` or `\r\n`).
    pub fn content(&self) -> &str {
        let text = self.text.strip_suffix('\n').unwrap_or(&self.text);
        text.strip_suffix('\r').unwrap_or(text)
    }

    /// Whether the line ends with a newline (only a file's last line may not).
    pub fn has_newline(&self) -> bool {
        self.text.ends_with('\n')
    }
}

/// One hunk of a file change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Hunk {
    /// Its number in its file, from 1.
    pub number: usize,
    /// First line of the base it covers (1-based; for an empty range, the line before it, as
    /// the header shows it).
    pub old_start: usize,
    /// How many base lines it covers.
    pub old_lines: usize,
    /// First line of the new content it covers (as `old_start`).
    pub new_start: usize,
    /// How many new lines it covers.
    pub new_lines: usize,
    /// `@@ -old_start,old_lines +new_start,new_lines @@`, as the preview's diff shows it.
    pub header: String,
    /// Its lines, in diff order (a replaced run's removed lines before its added ones).
    pub lines: Vec<HunkLine>,
}

impl Hunk {
    /// How many lines it adds and removes.
    pub fn counts(&self) -> (usize, usize) {
        self.lines
            .iter()
            .fold((0, 0), |(added, removed), line| match line.kind {
                LineKind::Added => (added + 1, removed),
                LineKind::Removed => (added, removed + 1),
                LineKind::Context => (added, removed),
            })
    }
}

/// The hunks of one file change, and what it takes to compose its base with any of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileHunks {
    /// The file, relative to the root.
    pub path: String,
    /// Created, updated or deleted.
    pub kind: ChangeKind,
    /// Its hunks, numbered from 1.
    pub hunks: Vec<Hunk>,
    /// The base content (empty for a create).
    base: String,
    /// The new content (empty for a delete).
    new: String,
    /// The line diff, every line of both sides covered in order.
    ops: Vec<DiffOp>,
    /// For each op, the number of the hunk holding it (0 for unchanged lines).
    op_hunks: Vec<usize>,
    /// Where each base line is in `base`.
    old_lines: Vec<Range<usize>>,
    /// Where each new line is in `new`.
    new_lines: Vec<Range<usize>>,
}

impl FileHunks {
    /// The hunks of the change of `path` from `base` to `new`, where `None` means the file
    /// does not exist on that side.
    pub fn compute(path: &str, base: Option<&str>, new: Option<&str>) -> Self {
        let kind = match (base, new) {
            (None, _) => ChangeKind::Create,
            (Some(_), None) => ChangeKind::Delete,
            (Some(_), Some(_)) => ChangeKind::Update,
        };
        let (base, new) = (base.unwrap_or(""), new.unwrap_or(""));
        let diff = PreviewDiff::new(base, new);
        let old_lines = spans(diff.old_lines());
        let new_lines = spans(diff.new_lines());
        let ops = diff.ops().to_vec();
        let mut op_hunks = vec![0; ops.len()];
        let mut hunks = Vec::new();
        // Groups come in order and never split a change (only unchanged runs are trimmed), so
        // each change of a group is found at or after the previous one.
        let mut next_op = 0;
        for (index, group) in group_diff_ops(ops.clone(), CONTEXT_LINES)
            .into_iter()
            .enumerate()
        {
            let number = index + 1;
            for op in group.iter().filter(|op| op.tag() != DiffTag::Equal) {
                if let Some(offset) = ops[next_op..].iter().position(|candidate| candidate == op) {
                    op_hunks[next_op + offset] = number;
                    next_op += offset + 1;
                }
            }
            hunks.push(hunk(number, &group, (base, &old_lines), (new, &new_lines)));
        }
        if hunks.is_empty() && kind != ChangeKind::Update {
            // An empty file created or deleted is still one change to take or leave.
            hunks.push(Hunk {
                number: 1,
                old_start: 0,
                old_lines: 0,
                new_start: 0,
                new_lines: 0,
                header: "@@ -0,0 +0,0 @@".to_owned(),
                lines: Vec::new(),
            });
        }
        Self {
            path: path.to_owned(),
            kind,
            hunks,
            base: base.to_owned(),
            new: new.to_owned(),
            ops,
            op_hunks,
            old_lines,
            new_lines,
        }
    }

    /// The file's content with exactly the hunks `kept` applied to the base (numbers not in
    /// the file are ignored); `None` when the file does not exist then (a create left out, a
    /// delete kept).
    pub fn compose(&self, kept: &[usize]) -> Option<String> {
        let keeps_the_one_hunk = kept.contains(&1);
        match self.kind {
            ChangeKind::Create => return keeps_the_one_hunk.then(|| self.new.clone()),
            ChangeKind::Delete => return (!keeps_the_one_hunk).then(|| self.base.clone()),
            ChangeKind::Update => {}
        }
        let mut composed = String::with_capacity(self.base.len().max(self.new.len()));
        for (op, hunk) in self.ops.iter().zip(&self.op_hunks) {
            let (tag, old, new) = op.as_tag_tuple();
            if tag != DiffTag::Equal && kept.contains(hunk) {
                composed.push_str(slice_lines(&self.new, &self.new_lines, new));
            } else {
                composed.push_str(slice_lines(&self.base, &self.old_lines, old));
            }
        }
        Some(composed)
    }

    /// The file's unified diff with each hunk header followed by the hunk's address
    /// (`@@ -1,4 +1,4 @@ src/a.rs#1`), as `resolve show` prints it.
    pub fn addressed_diff(&self) -> String {
        let old_header = match self.kind {
            ChangeKind::Create => "/dev/null".to_owned(),
            ChangeKind::Update | ChangeKind::Delete => format!("a/{}", self.path),
        };
        let new_header = match self.kind {
            ChangeKind::Delete => "/dev/null".to_owned(),
            ChangeKind::Create | ChangeKind::Update => format!("b/{}", self.path),
        };
        let mut text = format!("--- {old_header}\n+++ {new_header}\n");
        for hunk in &self.hunks {
            text.push_str(&format!("{} {}\n", hunk.header, self.address(hunk.number)));
            for line in &hunk.lines {
                text.push(match line.kind {
                    LineKind::Context => ' ',
                    LineKind::Removed => '-',
                    LineKind::Added => '+',
                });
                text.push_str(&line.text);
                if !line.has_newline() {
                    text.push_str("\n\\ No newline at end of file\n");
                }
            }
        }
        text
    }

    /// The address of hunk `number` of this file: `path#number`, as `resolve` takes it in
    /// `extra.only` and `extra.except` and `resolve show` prints it.
    pub fn address(&self, number: usize) -> String {
        format!("{}#{number}", self.path)
    }

    /// The file as a preview's facts list it: its path, the lines its hunks add and remove,
    /// and every hunk's address in order.
    pub fn facts(&self) -> PreviewFile {
        let (added, removed) = self
            .hunks
            .iter()
            .map(Hunk::counts)
            .fold((0, 0), |(added, removed), (a, r)| (added + a, removed + r));
        PreviewFile {
            path: self.path.clone(),
            added,
            removed,
            hunks: self
                .hunks
                .iter()
                .map(|hunk| self.address(hunk.number))
                .collect(),
        }
    }

    /// The hunk numbered `number`, if the file has it.
    pub fn hunk(&self, number: usize) -> Option<&Hunk> {
        number
            .checked_sub(1)
            .and_then(|index| self.hunks.get(index))
    }

    /// The base content (empty for a create).
    pub fn base(&self) -> &str {
        &self.base
    }

    /// The new content as previewed (empty for a delete).
    pub fn new_content(&self) -> &str {
        &self.new
    }
}

/// The hunk `number` made of the ops of `group`.
fn hunk(
    number: usize,
    group: &[DiffOp],
    (base, old_lines): (&str, &[Range<usize>]),
    (new, new_lines): (&str, &[Range<usize>]),
) -> Hunk {
    let mut lines = Vec::new();
    let mut push = |kind, text: &str, spans: &[Range<usize>], range: Range<usize>| {
        for span in &spans[range] {
            lines.push(HunkLine {
                kind,
                text: text[span.clone()].to_owned(),
            });
        }
    };
    for op in group {
        let (tag, old, new_range) = op.as_tag_tuple();
        match tag {
            DiffTag::Equal => push(LineKind::Context, base, old_lines, old),
            DiffTag::Delete => push(LineKind::Removed, base, old_lines, old),
            DiffTag::Insert => push(LineKind::Added, new, new_lines, new_range),
            DiffTag::Replace => {
                push(LineKind::Removed, base, old_lines, old);
                push(LineKind::Added, new, new_lines, new_range);
            }
        }
    }
    let (old_start, old_count) = header_range(group, DiffOp::old_range);
    let (new_start, new_count) = header_range(group, DiffOp::new_range);
    Hunk {
        number,
        old_start,
        old_lines: old_count,
        new_start,
        new_lines: new_count,
        header: UnifiedHunkHeader::new(group).to_string(),
        lines,
    }
}

/// The start and length of one side of a hunk as its header shows them: the first line,
/// 1-based, or for an empty range the line before it.
fn header_range(group: &[DiffOp], side: fn(&DiffOp) -> Range<usize>) -> (usize, usize) {
    let start = group.first().map_or(0, |op| side(op).start);
    let end = group.last().map_or(0, |op| side(op).end);
    let len = end.saturating_sub(start);
    if len == 0 {
        (start, 0)
    } else {
        (start + 1, len)
    }
}

/// The byte range of each line, from the lines of a text in order.
fn spans(lines: &[&str]) -> Vec<Range<usize>> {
    let mut at = 0;
    lines
        .iter()
        .map(|line| {
            let span = at..at + line.len();
            at = span.end;
            span
        })
        .collect()
}

/// The text of the lines `range` of `text`, whose lines are at `spans`.
fn slice_lines<'a>(text: &'a str, spans: &[Range<usize>], range: Range<usize>) -> &'a str {
    match (
        spans.get(range.start),
        range.end.checked_sub(1).and_then(|last| spans.get(last)),
    ) {
        (Some(first), Some(last)) if !range.is_empty() => &text[first.start..last.end],
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::diff::unified_diff;
    use resolve_test_support::text::lines_replacing;

    fn numbered(lines: usize) -> String {
        lines_replacing(lines, &[])
    }

    #[test]
    fn hunks_are_the_preview_diffs_hunks_with_their_headers_and_ranges() {
        let old = numbered(20);
        let new = lines_replacing(20, &[(2, "two"), (19, "nineteen")]);
        let file = FileHunks::compute("f", Some(&old), Some(&new));
        let diff = unified_diff("f", &old, &new);
        let headers: Vec<&str> = diff.lines().filter(|line| line.starts_with("@@")).collect();
        assert_eq!(
            file.hunks
                .iter()
                .map(|hunk| hunk.header.as_str())
                .collect::<Vec<_>>(),
            headers
        );
        let first = &file.hunks[0];
        assert_eq!(
            (
                first.number,
                first.old_start,
                first.old_lines,
                first.new_start,
                first.new_lines
            ),
            (1, 1, 5, 1, 5)
        );
        assert_eq!(file.hunks[1].number, 2);
        assert_eq!(first.counts(), (1, 1));
        assert_eq!(
            first.lines.iter().map(|line| line.kind).collect::<Vec<_>>(),
            [
                LineKind::Context,
                LineKind::Removed,
                LineKind::Added,
                LineKind::Context,
                LineKind::Context,
                LineKind::Context
            ]
        );
        assert_eq!(first.lines[2].content(), "two");
    }

    #[test]
    fn composing_picks_exactly_the_kept_hunks() {
        let old = numbered(20);
        let new = lines_replacing(20, &[(2, "two"), (19, "nineteen")]);
        let file = FileHunks::compute("f", Some(&old), Some(&new));
        let cases: [(&[usize], String); 4] = [
            (&[1, 2], new),
            (&[], old),
            (&[1], lines_replacing(20, &[(2, "two")])),
            (&[2], lines_replacing(20, &[(19, "nineteen")])),
        ];
        for (kept, composed) in cases {
            assert_eq!(file.compose(kept).unwrap(), composed, "{kept:?}");
        }
    }

    #[test]
    fn adjacent_hunks_compose_without_losing_or_doubling_lines() {
        // Changes 6 unchanged lines apart share their context and make one hunk; 7 apart
        // (lines 5 and 13) make two hunks with a single line (9) between their contexts.
        let old = numbered(30);
        let merged = FileHunks::compute(
            "f",
            Some(&old),
            Some(&lines_replacing(30, &[(5, "five"), (12, "twelve")])),
        );
        assert_eq!(merged.hunks.len(), 1);
        let new = lines_replacing(30, &[(5, "five"), (13, "thirteen")]);
        let file = FileHunks::compute("f", Some(&old), Some(&new));
        assert_eq!(file.hunks.len(), 2, "{:?}", file.hunks);
        assert_eq!(
            file.hunks[0].old_start + file.hunks[0].old_lines + 1,
            file.hunks[1].old_start
        );
        assert_eq!(
            file.compose(&[2]).unwrap(),
            lines_replacing(30, &[(13, "thirteen")])
        );
        assert_eq!(
            file.compose(&[1]).unwrap(),
            lines_replacing(30, &[(5, "five")])
        );
        assert_eq!(file.compose(&[1, 2]).unwrap(), new);
    }

    #[test]
    fn crlf_bom_and_a_missing_final_newline_are_kept_byte_for_byte() {
        let old = "\u{feff}a\r\nb\r\nc\r\nd\r\ne\r\nf\r\ng\r\nh\r\ni\r\nj";
        let new = "\u{feff}A\r\nb\r\nc\r\nd\r\ne\r\nf\r\ng\r\nh\r\ni\r\nJ";
        let file = FileHunks::compute("w.txt", Some(old), Some(new));
        assert_eq!(file.hunks.len(), 2);
        assert_eq!(
            file.compose(&[1]).unwrap(),
            "\u{feff}A\r\nb\r\nc\r\nd\r\ne\r\nf\r\ng\r\nh\r\ni\r\nj"
        );
        assert_eq!(
            file.compose(&[2]).unwrap(),
            "\u{feff}a\r\nb\r\nc\r\nd\r\ne\r\nf\r\ng\r\nh\r\ni\r\nJ"
        );
        assert!(!file.hunks[1].lines.last().unwrap().has_newline());
        assert_eq!(file.hunks[0].lines[1].content(), "\u{feff}A");
    }

    #[test]
    fn a_created_or_deleted_file_is_one_hunk_taken_or_left_whole() {
        let created = FileHunks::compute("n", None, Some("x\ny\n"));
        assert_eq!(created.kind, ChangeKind::Create);
        assert_eq!(created.hunks.len(), 1);
        assert_eq!(created.hunks[0].header, "@@ -0,0 +1,2 @@");
        assert_eq!(created.compose(&[1]).as_deref(), Some("x\ny\n"));
        assert_eq!(created.compose(&[]), None);
        let deleted = FileHunks::compute("o", Some("x\n"), None);
        assert_eq!(deleted.hunks.len(), 1);
        assert_eq!(deleted.compose(&[1]), None);
        assert_eq!(deleted.compose(&[]).as_deref(), Some("x\n"));
        let empty = FileHunks::compute("e", None, Some(""));
        assert_eq!(empty.hunks.len(), 1);
        assert_eq!(empty.compose(&[1]).as_deref(), Some(""));
    }

    #[test]
    fn the_addressed_diff_is_the_preview_diff_with_an_address_after_each_header() {
        let old = numbered(20);
        let new = lines_replacing(20, &[(2, "two")]).trim_end().to_owned();
        let file = FileHunks::compute("src/n.txt", Some(&old), Some(&new));
        let expected = unified_diff("src/n.txt", &old, &new)
            .replace("@@ -1,5 +1,5 @@\n", "@@ -1,5 +1,5 @@ src/n.txt#1\n");
        assert_eq!(
            file.addressed_diff(),
            expected.replace("@@ -17,4 +17,4 @@\n", "@@ -17,4 +17,4 @@ src/n.txt#2\n")
        );
        assert!(file.addressed_diff().contains("src/n.txt#2\n"));
    }

    #[test]
    fn an_unchanged_file_has_no_hunks() {
        let file = FileHunks::compute("f", Some("a\n"), Some("a\n"));
        assert!(file.hunks.is_empty());
        assert_eq!(file.compose(&[]).as_deref(), Some("a\n"));
    }
}
