//! The value every preview producer returns: the change set to stage, the label of its pending
//! action, the model-facing text (banner, then a unified diff per file) and JSON details; and
//! writing that text piece by piece; and [`Produce`], the trait each producer's request type
//! implements to compute one. The success texts after an apply are the producer module's.

use std::io::{self, Write};

use resolve_store::{ChangeSet, Content, SpooledChangeSet, Workspace};
use serde::de::DeserializeOwned;
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use serde_json::{Value, json};

use crate::diff::LineCounts;
use crate::error::EditError;
use crate::producer::Producer;

/// First line of every preview result.
pub const PREVIEW_BANNER: &str = "Staged as a preview — files are NOT modified yet. Call `resolve` with action \"apply\" to apply it or \"discard\" to drop it.";

/// A computed change, not yet applied: what a producer hands over to be staged as a pending
/// action.
#[derive(Debug)]
pub struct Preview {
    /// Every touched file's new content (in the blob store) and base hash, in a spool.
    pub change_set: SpooledChangeSet,
    /// The producing tool.
    pub producer: Producer,
    /// The pending action's label, e.g. `AST Edit: 3 replacements in 2 files`.
    pub label: String,
    /// The lines its diffs add and remove in all (counted as the diffs are made; the same
    /// counts as the hunk model's, see [`LineCounts`]).
    pub lines: LineCounts,
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
    /// What re-derives the change on a file that moved since (an `ast_edit` request, see
    /// [`rederive`](crate::rederive)); `None`: such a file is merged by lines.
    pub rederive: Option<Value>,
}

impl Preview {
    /// The success text once this preview's change set (or `applied`, a part of it) is applied.
    pub fn applied_text(&self, applied: &ChangeSet) -> String {
        self.producer
            .applied_text(&applied.paths(), applied.total_replacements())
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
    /// The producer's details (a staged preview's facts are added by
    /// [`StagedDetails`](crate::StagedDetails)).
    pub details: &'a Value,
    /// Where the files are listed, if anywhere.
    pub files_key: Option<&'static str>,
    /// The change set whose files are listed.
    pub change_set: &'a SpooledChangeSet,
}

impl ResultDetails<'_> {
    /// The details as one JSON value, the file list read into it.
    pub fn to_value(&self) -> Result<Value, EditError> {
        details_value(self)
    }
}

/// `details` as one JSON value, its lists read into it.
pub(crate) fn details_value(details: &impl Serialize) -> Result<Value, EditError> {
    serde_json::to_value(details).map_err(|error| EditError::DetailsUnlisted {
        reason: error.to_string(),
    })
}

impl Serialize for ResultDetails<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match (self.details, self.files_key) {
            (Value::Object(details), Some(key)) => {
                let mut map = serializer.serialize_map(Some(details.len() + 1))?;
                for (name, value) in details.iter().filter(|(name, _)| *name != key) {
                    map.serialize_entry(name, value)?;
                }
                map.serialize_entry(key, &self.change_set.file_counts())?;
                map.end()
            }
            (details, _) => details.serialize(serializer),
        }
    }
}

/// How a producer call may be bounded by whoever runs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProduceLimits {
    /// The most files one preview may change (`None`: no cap).
    pub max_files: Option<usize>,
}

/// What a producer call came to.
#[derive(Debug)]
pub enum Produced {
    /// A preview to stage as a pending action.
    Preview(Box<Preview>),
    /// Nothing to stage (`No replacements made`, …): the text to answer.
    Nothing(String),
}

/// The JSON Schema of an object with `properties`, of which `required` must be given, and no
/// others.
pub(crate) fn closed_object(properties: Value, required: &[&str]) -> Value {
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false
    })
}

/// A producer's typed request: what the model's JSON arguments and the CLI's flags both become.
/// Each producer's module implements it for its request type; the producers module lists them.
pub trait Produce: DeserializeOwned + Send + Sync + 'static {
    /// The producer: its name and applied text.
    const PRODUCER: Producer;
    /// The model-facing description of the tool.
    const DESCRIPTION: &'static str;

    /// The JSON Schema of the arguments (no `$ref`, no `$schema`), which the request's
    /// `Deserialize` accepts.
    fn input_schema() -> Value;

    /// Compute the preview without touching the workspace.
    fn produce(&self, workspace: &Workspace, limits: ProduceLimits) -> Result<Produced, EditError>;
}

/// Writes a preview text piece by piece as the diffs come: the banner, the diffs one after
/// another (the last one's final newline dropped), then any notes, each after a blank line.
pub(crate) struct PreviewText<W> {
    sink: W,
    /// The last diff's final newline, written only if another diff follows.
    newline_held: bool,
}

impl<W: Write> PreviewText<W> {
    /// Start the text in `sink` with the banner.
    pub(crate) fn start(mut sink: W) -> io::Result<Self> {
        sink.write_all(PREVIEW_BANNER.as_bytes())?;
        sink.write_all(b"\n\n")?;
        Ok(Self {
            sink,
            newline_held: false,
        })
    }

    /// Append one file's diff.
    pub(crate) fn diff(&mut self, diff: &[u8]) -> io::Result<()> {
        if self.newline_held {
            self.sink.write_all(b"\n")?;
        }
        let body = diff.strip_suffix(b"\n");
        self.newline_held = body.is_some();
        self.sink.write_all(body.unwrap_or(diff))
    }

    /// End the text with `notes`; returns the sink.
    pub(crate) fn finish(mut self, notes: &[String]) -> io::Result<W> {
        for note in notes {
            self.sink.write_all(b"\n\n")?;
            self.sink.write_all(note.as_bytes())?;
        }
        Ok(self.sink)
    }
}

/// The preview text of one diff, in memory.
pub(crate) fn preview_text(diff: &str) -> String {
    let mut text = Vec::with_capacity(PREVIEW_BANNER.len() + 2 + diff.len());
    // Writing to a `Vec` cannot fail.
    let _infallible = PreviewText::start(&mut text).and_then(|mut preview| {
        preview.diff(diff.as_bytes())?;
        preview.finish(&[])
    });
    String::from_utf8(text)
        .unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into_owned())
}

/// `text`, a preview text, with the diff of `path` replaced by `diff` (a file's diff as
/// [`change_diff`](crate::diff::change_diff) writes it; empty to remove it). The diffs are
/// found by their structure (headers, then hunks of the line counts their headers give), so
/// a changed line that looks like a header is never taken for one. A preview without a diff
/// of `path` gets `diff` at its end.
pub(crate) fn replace_file_diff(text: &str, path: &str, diff: &str) -> String {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut at = 0;
    while at < lines.len() {
        let Some(section_path) = diff_header_path(&lines[at..]) else {
            at += 1;
            continue;
        };
        let end = section_end(&lines, at + 2);
        if section_path == path {
            let ends_with_newline = lines[end - 1].ends_with('\n');
            let mut replaced: String = lines[..at].concat();
            replaced.push_str(if ends_with_newline {
                diff
            } else {
                diff.strip_suffix('\n').unwrap_or(diff)
            });
            replaced.push_str(&lines[end..].concat());
            return replaced;
        }
        at = end;
    }
    let mut appended = text.to_owned();
    if !appended.is_empty() && !appended.ends_with('\n') {
        appended.push('\n');
    }
    appended.push_str(diff.strip_suffix('\n').unwrap_or(diff));
    appended
}

/// `text`, a preview text, with each hunk header of its diffs followed by the hunk's address
/// (`@@ -1,4 +1,4 @@ src/a.rs#2`): hunks are numbered from 1 per file, in the order the diff
/// shows them, as [`FileHunks`](crate::FileHunks) numbers them. Everything else is unchanged.
pub fn addressed_preview(text: &str) -> String {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut addressed = String::with_capacity(text.len() + 64);
    let mut at = 0;
    while at < lines.len() {
        let Some(path) = diff_header_path(&lines[at..]) else {
            addressed.push_str(lines[at]);
            at += 1;
            continue;
        };
        let end = section_end(&lines, at + 2);
        let mut number = 0;
        for line in &lines[at..end] {
            if line.starts_with("@@ ")
                && hunk_counts(line).is_some()
                && let Some(header) = line.strip_suffix('\n')
            {
                number += 1;
                addressed.push_str(&format!("{header} {path}#{number}\n"));
            } else {
                addressed.push_str(line);
            }
        }
        at = end;
    }
    addressed
}

/// The notes of `text`, a stored preview text: what is left without its banner line and every
/// diff (headers and the hunks their counts cover), blank lines at either end trimmed. A note
/// shaped like a diff is left out with the diffs.
pub(crate) fn preview_notes(text: &str) -> String {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut notes = String::new();
    let mut at = usize::from(
        lines
            .first()
            .is_some_and(|line| line.starts_with(PREVIEW_BANNER)),
    );
    while at < lines.len() {
        if diff_header_path(&lines[at..]).is_some() || lines[at].starts_with("--- ") {
            at = section_end(&lines, at + 2).max(at + 1);
            continue;
        }
        notes.push_str(lines[at]);
        at += 1;
    }
    notes.trim_matches('\n').to_owned()
}

/// The path of the file diff whose `---`/`+++` headers start `lines`, if they do.
fn diff_header_path<'a>(lines: &[&'a str]) -> Option<&'a str> {
    let [old, new, ..] = lines else {
        return None;
    };
    let old = old.trim_end_matches('\n').strip_prefix("--- ")?;
    let new = new.trim_end_matches('\n').strip_prefix("+++ ")?;
    match (old, new) {
        ("/dev/null", "/dev/null") => None,
        (_, "/dev/null") => old.strip_prefix("a/"),
        (_, new) if old == "/dev/null" || old.strip_prefix("a/") == new.strip_prefix("b/") => {
            new.strip_prefix("b/")
        }
        _ => None,
    }
}

/// Where the hunks that start at `lines[at]` end: each `@@ -a,b +c,d @@` header followed by
/// exactly the lines its counts say (and `\ No newline at end of file` markers).
fn section_end(lines: &[&str], mut at: usize) -> usize {
    while let Some((mut old, mut new)) = lines.get(at).and_then(|line| hunk_counts(line)) {
        at += 1;
        while (old > 0 || new > 0) && at < lines.len() {
            match lines[at].as_bytes().first() {
                Some(b' ') => (old, new) = (old.saturating_sub(1), new.saturating_sub(1)),
                Some(b'-') => old = old.saturating_sub(1),
                Some(b'+') => new = new.saturating_sub(1),
                Some(b'\\') => {}
                _ => break,
            }
            at += 1;
        }
        while lines.get(at).is_some_and(|line| line.starts_with("\\ ")) {
            at += 1;
        }
    }
    at
}

/// The old and new line counts of a hunk header `@@ -a,b +c,d @@` (a count of 1 may be left
/// out).
fn hunk_counts(line: &str) -> Option<(usize, usize)> {
    let rest = line.strip_prefix("@@ -")?;
    let (old, rest) = rest.split_once(" +")?;
    let (new, _) = rest.split_once(" @@")?;
    let count = |range: &str| match range.split_once(',') {
        Some((_, count)) => count.parse().ok(),
        None => range.parse::<usize>().ok().map(|_| 1),
    };
    Some((count(old)?, count(new)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{update_set, workspace_holding};

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
            text.strip_prefix(PREVIEW_BANNER).unwrap(),
            "\n\n--- a/x\n+++ b/x\nno newline--- a/y\n\nLimit reached; narrow paths."
        );
        assert_eq!(
            preview_text("--- a/x\n"),
            format!("{PREVIEW_BANNER}\n\n--- a/x")
        );
    }

    #[test]
    fn a_files_diff_is_replaced_in_place_and_a_look_alike_line_is_not_a_header() {
        let a = "--- a/a.rs\n+++ b/a.rs\n@@ -1,2 +1,2 @@\n--- a/b.rs\n-+++ b/b.rs\n+x\n+y\n";
        let b = "--- a/b.rs\n+++ b/b.rs\n@@ -1 +1 @@\n-1\n\\ No newline at end of file\n+2\n";
        let mut text = PreviewText::start(Vec::new()).unwrap();
        text.diff(a.as_bytes()).unwrap();
        text.diff(b.as_bytes()).unwrap();
        let text =
            String::from_utf8(text.finish(&["Skipped 1 binary file.".into()]).unwrap()).unwrap();
        let new_b = "--- a/b.rs\n+++ b/b.rs\n@@ -1 +1 @@\n-1\n+3\n";
        let replaced = replace_file_diff(&text, "b.rs", new_b);
        assert_eq!(
            replaced,
            format!(
                "{PREVIEW_BANNER}\n\n{a}{}\n\nSkipped 1 binary file.",
                new_b.trim_end()
            )
        );
        let new_a = "--- a/a.rs\n+++ b/a.rs\n@@ -1 +1 @@\n-q\n+r\n";
        assert_eq!(
            replace_file_diff(&text, "a.rs", new_a),
            text.replacen(a, new_a, 1)
        );
        assert_eq!(
            replace_file_diff("banner", "c.rs", "--- /dev/null\n+++ b/c.rs\n"),
            "banner\n--- /dev/null\n+++ b/c.rs"
        );
    }

    #[test]
    fn a_preview_shows_each_hunks_address_after_its_header() {
        let text = format!(
            "{PREVIEW_BANNER}\n\n--- a/a.rs\n+++ b/a.rs\n@@ -1 +1 @@\n-x\n+y\n@@ -9 +9 @@\n-@@ -1 +1 @@\n+z\n--- /dev/null\n+++ b/b.rs\n@@ -0,0 +1 @@\n+b\n\nSkipped 1 file."
        );
        assert_eq!(
            addressed_preview(&text),
            format!(
                "{PREVIEW_BANNER}\n\n--- a/a.rs\n+++ b/a.rs\n@@ -1 +1 @@ a.rs#1\n-x\n+y\n@@ -9 +9 @@ a.rs#2\n-@@ -1 +1 @@\n+z\n--- /dev/null\n+++ b/b.rs\n@@ -0,0 +1 @@ b.rs#1\n+b\n\nSkipped 1 file."
            )
        );
    }

    #[test]
    fn result_details_list_the_change_set_under_the_files_key() {
        let (_dir, workspace) = workspace_holding(&[]);
        let change_set = update_set(&[("a.rs", 2), ("b/c.rs", 1)])
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
