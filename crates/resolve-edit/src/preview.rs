//! The value every preview producer returns: the change set to stage, the label of its pending
//! action, the model-facing text (banner, then a unified diff per file) and JSON details; plus
//! the success texts shown after a preview is applied.

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::spool::{FileCounts, SpooledChangeSet};
use crate::{ChangeSet, Content, EditError};

/// Name of the structural rewrite producer.
pub const AST_EDIT_TOOL: &str = "ast_edit";
/// Name of the exact-text edit producer.
pub const EDIT_TOOL: &str = "edit";
/// Name of the whole-file write producer.
pub const WRITE_TOOL: &str = "write";

/// A computed change, not yet applied: what a producer hands over to be staged as a pending
/// action.
#[derive(Debug)]
pub struct Preview {
    /// Every touched file's new content (in the blob store) and base hash, in a spool.
    pub change_set: SpooledChangeSet,
    /// The producing tool (`ast_edit`, `edit`, `write`).
    pub source_tool: String,
    /// The pending action's label, e.g. `AST Edit: 3 replacements in 2 files`.
    pub label: String,
    /// The result text: the preview banner, then a unified diff per file, then notes (kept in
    /// the blob store when it is large, as an `ast_edit` preview's is).
    pub text: Content,
    /// Structured details (camelCase keys) for renderers and `sourceResultDetails`, without the
    /// list of files under [`Preview::files_key`].
    pub details: Value,
    /// The key of the details that lists every changed file with its replacements
    /// (`fileReplacements` for `ast_edit`; none for one-file producers). The list is the change
    /// set's, so it is written out from there wherever the details are shown (see
    /// [`ResultDetails`]) and never held as a value.
    pub files_key: Option<&'static str>,
}

impl Preview {
    /// The success text once this preview's change set (or `applied`, a part of it) is applied.
    pub fn applied_text(&self, applied: &ChangeSet) -> String {
        applied_text(&self.source_tool, applied)
    }

    /// The details as a result shows them: [`Preview::details`] with the files listed.
    pub fn result_details(&self) -> ResultDetails<'_> {
        ResultDetails {
            details: &self.details,
            files_key: self.files_key,
            change_set: &self.change_set,
        }
    }
}

/// A preview's details as a result shows them: its details, plus the files of its change set
/// under its files key (see [`Preview::files_key`]), serialized straight from the spool.
#[derive(Debug, Clone, Copy)]
pub struct ResultDetails<'a> {
    /// The producer's details (and, once staged, `pendingId` and `label`).
    pub details: &'a Value,
    /// Where the files are listed, if anywhere.
    pub files_key: Option<&'static str>,
    /// The change set whose files are listed.
    pub change_set: &'a SpooledChangeSet,
}

impl ResultDetails<'_> {
    /// The details as one JSON value, the file list read into it.
    pub fn to_value(&self) -> Result<Value, EditError> {
        serde_json::to_value(self).map_err(|error| {
            EditError::InvalidRequest(format!(
                "The preview's details could not be listed: {error}"
            ))
        })
    }
}

impl Serialize for ResultDetails<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match (self.details, self.files_key) {
            (Value::Object(details), Some(key)) => {
                let mut map = serializer.serialize_map(Some(details.len() + 1))?;
                for (name, value) in details.iter().filter(|(name, _)| *name != key) {
                    map.serialize_entry(name, value)?;
                }
                map.serialize_entry(key, &FileCounts(self.change_set))?;
                map.end()
            }
            (details, _) => details.serialize(serializer),
        }
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

/// Where a preview text goes: memory for a one-file preview, the blob store for `ast_edit`'s.
pub(crate) trait TextSink {
    /// Append `bytes`.
    fn put(&mut self, bytes: &[u8]) -> Result<(), EditError>;
}

impl TextSink for Vec<u8> {
    fn put(&mut self, bytes: &[u8]) -> Result<(), EditError> {
        self.extend_from_slice(bytes);
        Ok(())
    }
}

/// Writes a preview text piece by piece as the diffs come: the banner, the diffs one after
/// another (the last one's final newline dropped), then any notes, each after a blank line.
pub(crate) struct PreviewText<S> {
    sink: S,
    /// The last diff's final newline, written only if another diff follows.
    newline_held: bool,
}

impl<S: TextSink> PreviewText<S> {
    /// Start the text in `sink` with the banner.
    pub(crate) fn start(mut sink: S) -> Result<Self, EditError> {
        sink.put(crate::PREVIEW_BANNER.as_bytes())?;
        sink.put(b"\n\n")?;
        Ok(Self {
            sink,
            newline_held: false,
        })
    }

    /// Append one file's diff.
    pub(crate) fn diff(&mut self, diff: &[u8]) -> Result<(), EditError> {
        if self.newline_held {
            self.sink.put(b"\n")?;
        }
        let body = diff.strip_suffix(b"\n");
        self.newline_held = body.is_some();
        self.sink.put(body.unwrap_or(diff))
    }

    /// End the text with `notes`; returns the sink.
    pub(crate) fn finish(mut self, notes: &[String]) -> Result<S, EditError> {
        for note in notes {
            self.sink.put(b"\n\n")?;
            self.sink.put(note.as_bytes())?;
        }
        Ok(self.sink)
    }
}

/// The preview text of one diff, in memory.
pub(crate) fn preview_text(diff: &str) -> Result<String, EditError> {
    let mut text = PreviewText::start(Vec::new())?;
    text.diff(diff.as_bytes())?;
    let text = text.finish(&[])?;
    Ok(String::from_utf8(text)
        .unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into_owned()))
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
    fn a_preview_text_joins_the_diffs_and_drops_only_the_last_final_newline() {
        let mut text = PreviewText::start(Vec::new()).unwrap();
        for diff in ["--- a/x\n", "+++ b/x\n", "no newline"] {
            text.diff(diff.as_bytes()).unwrap();
        }
        text.diff(b"--- a/y\n").unwrap();
        let text = text
            .finish(&["Limit reached; narrow paths.".into()])
            .unwrap();
        let text = String::from_utf8(text).unwrap();
        assert_eq!(
            text.strip_prefix(crate::PREVIEW_BANNER).unwrap(),
            "\n\n--- a/x\n+++ b/x\nno newline--- a/y\n\nLimit reached; narrow paths."
        );
        assert_eq!(
            preview_text("--- a/x\n").unwrap(),
            format!("{}\n\n--- a/x", crate::PREVIEW_BANNER)
        );
    }

    #[test]
    fn result_details_list_the_change_set_under_the_files_key() {
        let dir = tempfile::tempdir().unwrap();
        let workspace = crate::Workspace::open(dir.path()).unwrap();
        let change_set = set(&[("a.rs", 2), ("b/c.rs", 1)])
            .into_spooled(&workspace)
            .unwrap();
        let details = serde_json::json!({"totalReplacements": 3, "fileReplacements": "stale"});
        let listed = ResultDetails {
            details: &details,
            files_key: Some("fileReplacements"),
            change_set: &change_set,
        };
        assert_eq!(
            listed.to_value().unwrap(),
            serde_json::json!({
                "totalReplacements": 3,
                "fileReplacements": [{"path": "a.rs", "count": 2}, {"path": "b/c.rs", "count": 1}]
            })
        );
        let unlisted = ResultDetails {
            files_key: None,
            ..listed
        };
        assert_eq!(unlisted.to_value().unwrap(), details);
    }
}
