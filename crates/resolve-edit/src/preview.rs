//! The value every preview producer returns: the change set to stage, the label of its pending
//! action, the model-facing text (banner, then a unified diff per file) and JSON details; plus
//! the success texts shown after a preview is applied.

use serde::{Deserialize, Serialize};

use crate::ChangeSet;

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
    /// The exact new content of every touched file, with base hashes.
    pub change_set: ChangeSet,
    /// The producing tool (`ast_edit`, `edit`, `write`).
    pub source_tool: String,
    /// The pending action's label, e.g. `AST Edit: 3 replacements in 2 files`.
    pub label: String,
    /// The result text: the preview banner, then a unified diff per file, then notes.
    pub text: String,
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

/// The preview text: banner, diffs, then any notes, separated by blank lines.
pub(crate) fn preview_text(diffs: &str, notes: &[String]) -> String {
    let mut text = crate::PREVIEW_BANNER.to_owned();
    text.push_str("\n\n");
    text.push_str(diffs.strip_suffix('\n').unwrap_or(diffs));
    for note in notes {
        text.push_str("\n\n");
        text.push_str(note);
    }
    text
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
                    content: String::new(),
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
            "--- a/x\n+++ b/x\n",
            &["Limit reached; narrow paths.".into()],
        );
        assert!(text.starts_with(crate::PREVIEW_BANNER));
        assert!(text.ends_with("+++ b/x\n\nLimit reached; narrow paths."));
    }
}
