//! What the review shows: pending actions, their files and hunks, and the reviewer's decision
//! on each hunk. Plain data built by the adapter; nothing here reads the store.

use std::ops::Range;

/// One pending action as the review shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActionView {
    /// `pending-action:<tool>:<seq>`.
    pub id: String,
    /// The version of the action shown; an apply or amend of another version is refused.
    pub version: String,
    /// Short label (`Edit: src/main.rs`).
    pub label: String,
    /// Who staged it (`agent`, `mcp:<id>`, `cli`).
    pub origin: String,
    /// How long ago it was staged (`3m ago`).
    pub age: String,
    /// The files it changes, in path order; empty for an MCP tool call.
    pub files: Vec<FileView>,
    /// A line shown instead of a diff when there is none to show (an MCP tool call).
    pub note: Option<String>,
    /// Whether this user's resolve did not stage it (a cloned `.resolve/`): marked loudly.
    pub foreign: bool,
    /// An `ast_edit` preview's rewrites (pattern, replacement), for reading it by rewrite.
    pub rewrites: Vec<(String, String)>,
}

impl ActionView {
    /// Hunks kept and hunks in all.
    pub fn kept_of_total(&self) -> (usize, usize) {
        let hunks = self.files.iter().flat_map(|file| &file.hunks);
        let total = hunks.clone().count();
        let kept = hunks.filter(|hunk| !hunk.decision.is_rejected()).count();
        (kept, total)
    }
}

/// How a file changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A new file.
    Create,
    /// An existing file's content changes.
    Update,
    /// An existing file goes.
    Delete,
}

/// One file of an action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileView {
    /// Path relative to the root.
    pub path: String,
    /// Create, update or delete.
    pub kind: FileKind,
    /// Lines added.
    pub added: usize,
    /// Lines removed.
    pub removed: usize,
    /// The file changed since the preview: its hunks cannot be shown or applied.
    pub stale: bool,
    /// Its hunks, numbered from 1; empty when the diff has none (an empty file created).
    pub hunks: Vec<HunkView>,
    /// When it changed since the preview and the preview conflicts with that change: the
    /// conflicting hunks, which `C` / `P` settle.
    pub conflicts: Vec<ConflictView>,
    /// Whether its hunks, counts and staleness were computed: the review opens with only the
    /// files' names and kinds and computes a file when the cursor first reaches it.
    pub loaded: bool,
}

/// A hunk of the preview that conflicts with what changed since: the lines of the file as it
/// is now and the preview's, which replace the same lines of the base differently.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConflictView {
    /// Its first line in the current file, from 1.
    pub current_line: usize,
    /// The current file's lines there.
    pub current: String,
    /// Its first line in the preview, from 1.
    pub preview_line: usize,
    /// The preview's lines there.
    pub preview: String,
    /// The base's lines (what the preview was computed from) that both replace.
    pub base: String,
}

impl FileView {
    /// A file whose hunks are not computed yet.
    pub fn unloaded(path: String, kind: FileKind) -> Self {
        Self {
            path,
            kind,
            added: 0,
            removed: 0,
            stale: false,
            hunks: Vec::new(),
            conflicts: Vec::new(),
            loaded: false,
        }
    }

    /// How many of its hunks are rejected.
    pub fn rejected(&self) -> usize {
        self.hunks
            .iter()
            .filter(|hunk| hunk.decision.is_rejected())
            .count()
    }
}

/// One hunk of a file's diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HunkView {
    /// `src/a.rs#2`.
    pub address: String,
    /// `@@ -10,7 +10,8 @@`.
    pub header: String,
    /// Its lines, context and changes.
    pub lines: Vec<DiffLine>,
    /// Kept (the default) or rejected.
    pub decision: Decision,
}

/// What kind of line of a hunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    /// Unchanged context.
    Context,
    /// Added by the change.
    Added,
    /// Removed by the change.
    Removed,
    /// `\ No newline at end of file`.
    NoNewline,
}

/// One line of a hunk, without its newline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffLine {
    /// Context, added or removed.
    pub kind: LineKind,
    /// The line's text (without the diff's `+`/`-`/space prefix).
    pub text: String,
    /// Byte ranges of `text` whose words changed against the paired line.
    pub changed_words: Vec<Range<usize>>,
}

/// The reviewer's decision on one hunk.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Decision {
    /// It lands with the apply (the default).
    #[default]
    Kept,
    /// It is left out, with the reviewer's reason when one was given.
    Rejected {
        /// Why, as the reviewer said it.
        reason: Option<String>,
    },
}

impl Decision {
    /// Whether the hunk is rejected.
    pub fn is_rejected(&self) -> bool {
        matches!(self, Self::Rejected { .. })
    }
}

/// A rejected hunk and its reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    /// `src/a.rs#2`.
    pub address: String,
    /// The reviewer's reason, if one was given.
    pub reason: Option<String>,
}

/// What the reviewer decided to apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApplyRequest {
    /// The action to apply.
    pub id: String,
    /// The version of the action reviewed.
    pub version: String,
    /// Every rejected hunk with its reason; the rest lands.
    pub rejected: Vec<Rejection>,
    /// The reviewer's line comments (the browser review's; the terminal has none).
    pub comments: Vec<resolve_edit::LineComment>,
    /// The overall reason.
    pub reason: String,
}

/// The text of the line marking a missing final newline.
pub const NO_NEWLINE: &str = "\\ No newline at end of file";

/// The pairs of line indices (removed, added) whose words are compared: in each run of
/// removed lines followed by a run of added lines, the first removed with the first added,
/// and so on, as far as the shorter run goes.
pub fn pair_changed_lines(lines: &[DiffLine]) -> Vec<(usize, usize)> {
    let mut pairs = Vec::new();
    let mut at = 0;
    while at < lines.len() {
        let removed_start = at;
        while at < lines.len() && lines[at].kind == LineKind::Removed {
            at += 1;
        }
        let removed_end = at;
        while at < lines.len() && lines[at].kind == LineKind::NoNewline {
            at += 1;
        }
        let added_start = at;
        while at < lines.len() && lines[at].kind == LineKind::Added {
            at += 1;
        }
        let added_end = at;
        pairs.extend((removed_start..removed_end).zip(added_start..added_end));
        if at == removed_start {
            at += 1;
        }
    }
    pairs
}

/// `seconds` ago as a short age: `12s ago`, `3m ago`, `5h ago`, `2d ago`.
pub fn age_text(seconds: u64) -> String {
    match seconds {
        0..60 => format!("{seconds}s ago"),
        60..3600 => format!("{}m ago", seconds / 60),
        3600..86_400 => format!("{}h ago", seconds / 3600),
        _ => format!("{}d ago", seconds / 86_400),
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::review::sample::parse_hunk_line;

    fn lines(diff: &[&str]) -> Vec<DiffLine> {
        diff.iter()
            .map(|line| parse_hunk_line(line).unwrap())
            .collect()
    }

    #[test]
    fn removed_lines_pair_with_the_added_lines_that_follow_them_in_order() {
        let hunk = lines(&[" a", "-b", "-c", "+B", " d", "-e", "+E", "+F"]);
        assert_eq!(pair_changed_lines(&hunk), vec![(1, 3), (5, 6)]);
    }

    #[test]
    fn a_missing_newline_marker_between_the_runs_does_not_break_the_pair() {
        let hunk = lines(&["-b", "\\ No newline at end of file", "+c"]);
        assert_eq!(pair_changed_lines(&hunk), vec![(0, 2)]);
    }

    #[test]
    fn diff_lines_lose_their_prefix_and_line_ending() {
        let line = parse_hunk_line("+let x = 1;\r\n").unwrap();
        assert_eq!(line.kind, LineKind::Added);
        assert_eq!(line.text, "let x = 1;");
    }

    #[test]
    fn ages_read_in_the_largest_whole_unit() {
        assert_eq!(age_text(5), "5s ago");
        assert_eq!(age_text(125), "2m ago");
        assert_eq!(age_text(7300), "2h ago");
        assert_eq!(age_text(200_000), "2d ago");
    }
}
