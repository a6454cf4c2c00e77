//! The `edit` and `write` producers: an exact-substring replacement in one file, and a whole
//! file created or overwritten, each computed as a [`Preview`].
//!
//! `edit` matches `old_text` exactly. One courtesy: when it is not found, the file uses CRLF
//! line endings and `old_text` uses bare LF, the search is repeated with both texts in CRLF, so
//! a model that copied lines without their `\r` still hits them and the file keeps its endings.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use resolve_store::{ChangeSet, FileChange, Workspace, WorkspacePath, content_hash};

use crate::diff::counted_change_diff;
use crate::error::EditError;
use crate::preview::{Preview, Produce, ProduceLimits, Produced, closed_object, preview_text};
use crate::producer::{Producer, replacements_text_for};
use crate::text_file::{decode, read_bytes};

const EDIT_DESCRIPTION: &str = "\
Replace exact text in one file, staged as a preview: nothing is written until you call `resolve`.
`old_text` must match the file exactly (whitespace included) and occur once, unless `replace_all` is true.";

const WRITE_DESCRIPTION: &str = "\
Create a file or replace its whole content, staged as a preview: nothing is written until you call `resolve`.";

/// The `edit` producer: `Applied edit to <path>.`
const EDIT: Producer = Producer::new("edit").with_applied_text(|paths, replacements| match paths {
    [path] => format!("Applied edit to {path}."),
    _ => replacements_text_for(paths, replacements),
});

/// The `write` producer: `Wrote <path>.`
const WRITE: Producer =
    Producer::new("write").with_applied_text(|paths, replacements| match paths {
        [path] => format!("Wrote {path}."),
        _ => replacements_text_for(paths, replacements),
    });

impl Produce for EditRequest {
    const PRODUCER: Producer = EDIT;
    const DESCRIPTION: &'static str = EDIT_DESCRIPTION;

    fn input_schema() -> Value {
        let properties = json!({
            "path": {"type": "string"},
            "old_text": {"type": "string"},
            "new_text": {"type": "string"},
            "replace_all": {"type": "boolean"}
        });
        closed_object(properties, &["path", "old_text", "new_text"])
    }

    fn produce(&self, workspace: &Workspace, _: ProduceLimits) -> Result<Produced, EditError> {
        Ok(Produced::Preview(Box::new(preview_edit(workspace, self)?)))
    }
}

impl Produce for WriteRequest {
    const PRODUCER: Producer = WRITE;
    const DESCRIPTION: &'static str = WRITE_DESCRIPTION;

    fn input_schema() -> Value {
        let properties = json!({"path": {"type": "string"}, "content": {"type": "string"}});
        closed_object(properties, &["path", "content"])
    }

    fn produce(&self, workspace: &Workspace, _: ProduceLimits) -> Result<Produced, EditError> {
        Ok(Produced::Preview(Box::new(preview_write(workspace, self)?)))
    }
}

/// The arguments of `edit`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EditRequest {
    /// The file, relative to the root.
    pub path: String,
    /// The exact text to replace.
    pub old_text: String,
    /// What it becomes.
    pub new_text: String,
    /// Replace every occurrence instead of requiring exactly one.
    #[serde(default)]
    pub replace_all: bool,
}

/// The arguments of `write`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WriteRequest {
    /// The file, relative to the root; created if it does not exist.
    pub path: String,
    /// The whole new content.
    pub content: String,
}

/// Compute the `edit` preview: `old_text` must occur exactly once, or at least once with
/// `replace_all`.
pub fn preview_edit(workspace: &Workspace, request: &EditRequest) -> Result<Preview, EditError> {
    if request.old_text.is_empty() {
        return Err(EditError::InvalidRequest(
            "`old_text` must not be empty; use `write` to create or replace a whole file."
                .to_owned(),
        ));
    }
    let target = workspace.resolve(&request.path)?;
    let (base_hash, old) = match read_text(&request.path, &target)? {
        Some(existing) => existing,
        None => {
            return Err(EditError::NotFound {
                path: request.path.clone(),
            });
        }
    };
    let path = target.relative;

    let mut find = request.old_text.clone();
    let mut replace = request.new_text.clone();
    let mut count = old.matches(find.as_str()).count();
    if count == 0 && old.contains("\r\n") && find.contains('\n') && !find.contains("\r\n") {
        find = to_crlf(&find);
        replace = to_crlf(&replace);
        count = old.matches(find.as_str()).count();
    }
    if count == 0 {
        return Err(EditError::EditNotFound { path });
    }
    if count > 1 && !request.replace_all {
        return Err(EditError::EditAmbiguous { path, count });
    }
    let new = if request.replace_all {
        old.replace(find.as_str(), &replace)
    } else {
        old.replacen(find.as_str(), &replace, 1)
    };
    if new == old {
        return Err(EditError::NoChange { path });
    }
    let replacements = if request.replace_all { count } else { 1 };

    let (diff, lines) = counted_change_diff(&path, Some(&old), Some(&new));
    let mut change_set = ChangeSet::new();
    change_set.insert(
        path.clone(),
        FileChange::update(base_hash, new.into(), replacements),
    );
    Ok(Preview {
        change_set: change_set.into_spooled(workspace)?,
        producer: EDIT,
        label: format!("Edit: {}", resolve_core::quote_path(&path)),
        lines,
        text: preview_text(&diff).into(),
        details: json!({"path": path, "replacements": replacements}),
        files_key: None,
        rederive: None,
    })
}

/// Compute the `write` preview: a create when the file does not exist, else an overwrite.
pub fn preview_write(workspace: &Workspace, request: &WriteRequest) -> Result<Preview, EditError> {
    let target = workspace.resolve(&request.path)?;
    let existing = read_text(&request.path, &target)?;
    let path = target.relative;
    let created = existing.is_none();
    let (change, (diff, lines)) = match existing {
        Some((base_hash, old)) => {
            if old == request.content {
                return Err(EditError::NoChange { path });
            }
            (
                FileChange::update(base_hash, request.content.clone().into(), 1),
                counted_change_diff(&path, Some(&old), Some(&request.content)),
            )
        }
        None => (
            FileChange::Create {
                content: request.content.clone().into(),
            },
            counted_change_diff(&path, None, Some(&request.content)),
        ),
    };
    let mut change_set = ChangeSet::new();
    change_set.insert(path.clone(), change);
    Ok(Preview {
        change_set: change_set.into_spooled(workspace)?,
        producer: WRITE,
        label: format!("Write: {}", resolve_core::quote_path(&path)),
        lines,
        text: preview_text(&diff).into(),
        details: json!({"path": path, "created": created, "bytes": request.content.len()}),
        files_key: None,
        rederive: None,
    })
}

/// The base hash and text of an existing file, `None` if it does not exist; a directory or a
/// binary file is an error.
pub(crate) fn read_text(
    given: &str,
    target: &WorkspacePath,
) -> Result<Option<(String, String)>, EditError> {
    let metadata = match std::fs::metadata(&target.absolute) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(EditError::io("inspect", &target.absolute, source)),
    };
    if metadata.is_dir() {
        return Err(EditError::WrongKind {
            path: given.to_owned(),
            found: "a directory",
            expected: "a file",
        });
    }
    let bytes = read_bytes(&target.absolute)?;
    let hash = content_hash(&bytes);
    match decode(bytes) {
        Some(text) => Ok(Some((hash, text))),
        None => Err(EditError::Binary {
            path: target.relative.clone(),
        }),
    }
}

/// `text` with every bare `\n` turned into `\r\n`.
fn to_crlf(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\n', "\r\n")
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::test_support::workspace_holding;

    fn edit(path: &str, old: &str, new: &str, all: bool) -> EditRequest {
        EditRequest {
            path: path.into(),
            old_text: old.into(),
            new_text: new.into(),
            replace_all: all,
        }
    }

    #[test]
    fn an_edit_matching_bare_lf_lines_in_a_crlf_file_keeps_crlf() {
        let (_dir, ws) = workspace_holding(&[("w.txt", b"one\r\ntwo\r\nthree\r\n")]);
        let preview = preview_edit(&ws, &edit("w.txt", "one\ntwo", "1\n2", false)).unwrap();
        let change_set = preview.change_set.load().unwrap();
        let content = change_set.get("w.txt").unwrap().new_content().unwrap();
        assert_eq!(
            resolve_store::Blobs::of(&ws)
                .read(content)
                .unwrap()
                .as_ref(),
            b"1\r\n2\r\nthree\r\n"
        );
    }

    #[test]
    fn an_empty_old_text_is_refused() {
        let (_dir, ws) = workspace_holding(&[("a.txt", b"a")]);
        let error = preview_edit(&ws, &edit("a.txt", "", "b", false)).unwrap_err();
        assert!(matches!(error, EditError::InvalidRequest(_)), "{error}");
    }

    #[test]
    fn an_edit_or_write_that_changes_nothing_is_refused() {
        let (_dir, ws) = workspace_holding(&[("a.txt", b"same")]);
        let error = preview_edit(&ws, &edit("a.txt", "same", "same", false)).unwrap_err();
        assert!(matches!(error, EditError::NoChange { .. }), "{error}");
        let same = WriteRequest {
            path: "a.txt".into(),
            content: "same".into(),
        };
        let error = preview_write(&ws, &same).unwrap_err();
        assert_eq!(
            error.to_string(),
            "`a.txt` already has this content; nothing to stage."
        );
    }

    #[test]
    fn editing_a_directory_or_a_missing_file_is_refused() {
        let (_dir, ws) = workspace_holding(&[("src/a.txt", b"a")]);
        assert!(matches!(
            preview_edit(&ws, &edit("src", "a", "b", false)).unwrap_err(),
            EditError::WrongKind { .. }
        ));
        assert!(matches!(
            preview_edit(&ws, &edit("src/none.txt", "a", "b", false)).unwrap_err(),
            EditError::NotFound { .. }
        ));
    }
}
