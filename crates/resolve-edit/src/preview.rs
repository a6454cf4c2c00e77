//! The value every preview producer returns: the change set to stage, the label of its pending
//! action, the model-facing text (banner, then a unified diff per file) and JSON details; plus
//! the success texts shown after a preview is applied.

use serde::{Deserialize, Serialize};

use crate::{ChangeSet, Content};

/// Name of the structural rewrite producer.
pub const AST_EDIT_TOOL: &str = "ast_edit";
/// Name of the exact-text edit producer.
pub const EDIT_TOOL: &str = "edit";
/// Name of the whole-file write producer.
pub const WRITE_TOOL: &str = "write";

/// A computed change, not yet applied: what a producer hands over to be staged as a pending
/// action.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Preview {
    /// Every touched file's new content (inline or in the blob store) and base hash.
    pub change_set: ChangeSet,
    /// The producing tool (`ast_edit`, `edit`, `write`).
    pub source_tool: String,
    /// The pending action's label, e.g. `AST Edit: 3 replacements in 2 files`.
    pub label: String,
    /// The result text: the preview banner, then a unified diff per file, then notes (kept in
    /// the blob store when it is large, as an `ast_edit` preview's is).
    pub text: Content,
    /// Structured details (camelCase keys) for renderers and `sourceResultDetails`.
    pub details: serde_json::Value,
}

impl Preview {
    /// The success text once this preview's change set (or `applied`, a part of it) is applied.
    pub fn applied_text(&self, applied: &ChangeSet) -> String {
        applied_text(&self.source_tool, applied)
    }
}

/// The success text after applying `applied`, a change set staged by `source_tool`:
/// `Applied 3 replacements in 2 files.`, `Applied edit to <path>.` or `Wrote <path>.`.
pub fn applied_text(source_tool: &str, applied: &ChangeSet) -> String {
    applied_text_of(source_tool, &applied.paths(), applied.total_replacements())
}

/// [`applied_text`] from the applied paths and their replacements alone.
pub(crate) fn applied_text_of(source_tool: &str, paths: &[String], replacements: usize) -> String {
    match (source_tool, paths) {
        (EDIT_TOOL, [path]) => crate::text_edit::edit_applied_text(path),
        (WRITE_TOOL, [path]) => crate::text_edit::write_applied_text(path),
        _ => crate::ast_edit::ast_edit_applied_text(replacements, paths.len()),
    }
}

/// `1 replacement`, `3 replacements`: `count` and `noun`, plural unless it is 1.
pub(crate) fn count_noun(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("{count} {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

/// The preview text of a few diffs, in memory (see [`write_preview_text`]).
pub(crate) fn preview_text(diffs: Vec<String>, notes: &[String]) -> String {
    let mut text = Vec::new();
    let Ok(()) = write_preview_text::<std::convert::Infallible>(
        |bytes| {
            text.extend_from_slice(bytes);
            Ok(())
        },
        diffs.into_iter().map(|diff| Ok(diff.into_bytes())),
        notes,
    );
    String::from_utf8(text)
        .unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into_owned())
}

/// Write a preview text through `sink`, one piece at a time: the banner, the diffs one after
/// another (the last one's final newline dropped), then any notes, each after a blank line.
/// Diffs are pulled one at a time, so a caller can stream them from disk.
pub(crate) fn write_preview_text<E>(
    mut sink: impl FnMut(&[u8]) -> Result<(), E>,
    diffs: impl IntoIterator<Item = Result<Vec<u8>, E>>,
    notes: &[String],
) -> Result<(), E> {
    sink(crate::PREVIEW_BANNER.as_bytes())?;
    sink(b"\n\n")?;
    let mut diffs = diffs.into_iter().peekable();
    while let Some(diff) = diffs.next() {
        let diff = diff?;
        let last = diffs.peek().is_none();
        sink(match (last, diff.strip_suffix(b"\n")) {
            (true, Some(stripped)) => stripped,
            (false, _) | (true, None) => &diff,
        })?;
    }
    for note in notes {
        sink(b"\n\n")?;
        sink(note.as_bytes())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FileChange, content_hash};

    fn set(paths: &[(&str, usize)]) -> ChangeSet {
        let mut set = ChangeSet::new();
        for (path, replacements) in paths {
            set.insert(
                *path,
                FileChange::Update {
                    base_hash: content_hash(b""),
                    content: String::new().into(),
                    replacements: *replacements,
                },
            );
        }
        set
    }

    #[test]
    fn applied_texts_use_singular_and_plural_forms() {
        assert_eq!(
            applied_text(AST_EDIT_TOOL, &set(&[("a.rs", 1)])),
            "Applied 1 replacement in 1 file."
        );
        assert_eq!(
            applied_text(AST_EDIT_TOOL, &set(&[("a.rs", 2), ("b.rs", 1)])),
            "Applied 3 replacements in 2 files."
        );
        assert_eq!(
            applied_text(EDIT_TOOL, &set(&[("src/a.rs", 1)])),
            "Applied edit to src/a.rs."
        );
        assert_eq!(
            applied_text(WRITE_TOOL, &set(&[("notes.md", 1)])),
            "Wrote notes.md."
        );
    }

    #[test]
    fn preview_text_starts_with_the_banner() {
        let text = preview_text(
            vec!["--- a/x\n".into(), "+++ b/x\n".into()],
            &["Limit reached; narrow paths.".into()],
        );
        assert!(text.starts_with(crate::PREVIEW_BANNER));
        assert!(text.ends_with("+++ b/x\n\nLimit reached; narrow paths."));
    }
}
