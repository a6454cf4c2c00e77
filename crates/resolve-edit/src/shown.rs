//! What a person or a model is shown for a stored pending action, derived from exactly what
//! resolving it does: each file's diff is computed from the change set's base and new bytes
//! (the hunk model's diff), never taken from the record's stored preview text, so a record
//! whose text shows one diff while its change set writes another (a forged or damaged
//! `.resolve/`) shows what would land. Only the preview's notes (skipped files, a reached
//! limit) come from the stored text, after the diffs and with every diff-shaped part left out.
//! An action that calls an MCP tool shows the server's text, then the exact call.

use resolve_store::{FileChange, McpToolCall, PendingRecord, Store};

use crate::diff::change_diff;
use crate::error::EditError;
use crate::hunks::ChangeKind;
use crate::preview::{PREVIEW_BANNER, preview_notes};
use crate::review::file_hunks;

/// How the diffs are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Diffs {
    /// As a preview result gives them.
    Plain,
    /// Each hunk header followed by the hunk's address (`src/a.rs#2`), for a reviewer.
    Addressed,
}

/// The preview of `record` as a result gives it (banner, a unified diff per file, notes),
/// derived from its change set; a file changed since the preview says so instead of a diff.
pub fn shown_preview(store: &Store, record: &PendingRecord) -> Result<String, EditError> {
    shown(store, record, Diffs::Plain)
}

/// [`shown_preview`] with each hunk header followed by the hunk's address, as `resolve show`
/// and the approval prompt show it.
pub fn shown_addressed_preview(store: &Store, record: &PendingRecord) -> Result<String, EditError> {
    shown(store, record, Diffs::Addressed)
}

/// The preview of a history entry, and whether it was derived from its contents: while the
/// store holds them it is [`shown_preview`]; a discarded or undone action's contents go at the
/// next clean-up (nothing of it will land), and then it is the text it was staged with.
pub fn shown_history_preview(
    store: &Store,
    record: &PendingRecord,
) -> Result<(String, bool), EditError> {
    for (_, change) in record.change_set.files() {
        if let Some(content) = change.new_content()
            && !store.blobs().holds(content)?
        {
            return Ok((store.blobs().read_text(&record.preview_text)?, false));
        }
    }
    Ok((shown_preview(store, record)?, true))
}

fn shown(store: &Store, record: &PendingRecord, diffs: Diffs) -> Result<String, EditError> {
    let stored = store.blobs().read_text(&record.preview_text)?;
    if let Some(action) = &record.mcp {
        let mut text = stored;
        text.push_str(&format!(
            "\n\nApplying it calls the tool `{}` of the MCP server `{}` with {}.",
            action.apply.tool,
            action.server,
            arguments(&action.apply)
        ));
        if let Some(reject) = &action.reject {
            text.push_str(&format!(
                "\nDiscarding it calls the tool `{}` with {}.",
                reject.tool,
                arguments(reject)
            ));
        }
        return Ok(text);
    }
    let mut text = format!("{PREVIEW_BANNER}\n\n");
    for (path, change) in record.change_set.files() {
        let Some(hunks) = file_hunks(store, path, change)? else {
            text.push_str(&format!(
                "{path}: changed since the preview; its diff cannot be shown (the preview is stale).\n"
            ));
            continue;
        };
        text.push_str(&match diffs {
            Diffs::Addressed => hunks.addressed_diff(),
            Diffs::Plain => change_diff(
                path,
                (hunks.kind != ChangeKind::Create).then(|| hunks.base()),
                match change {
                    FileChange::Delete { .. } => None,
                    FileChange::Create { .. } | FileChange::Update { .. } => {
                        Some(hunks.new_content())
                    }
                },
            ),
        });
    }
    if text.ends_with('\n') {
        text.pop();
    }
    let notes = preview_notes(&stored);
    if !notes.is_empty() {
        text.push_str("\n\n");
        text.push_str(&notes);
    }
    Ok(text)
}

/// A call's arguments as compact JSON.
fn arguments(call: &McpToolCall) -> String {
    serde_json::to_string(&call.arguments).unwrap_or_else(|_| "its arguments".to_owned())
}
