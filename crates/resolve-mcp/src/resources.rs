//! Pending previews and history as MCP resources: `resolve://pending/<id>` for this
//! connection's pending actions (head first), `resolve://history/<id>` for every resolved action
//! of the workspace (most recent first). Reading one gives a header line (for a checked
//! preview, its last check's outcome and output tail after it) and the preview diff. The list
//! ends with the review app ([`crate::app`]), which `read` serves too.

use resolve_edit::{
    HistoryRecord, Origin, Outcome, PendingRecord, Store, StoreError, StoredAction, check_report,
    check_summary,
};
use rmcp::ErrorData;
use rmcp::model::{Resource, ResourceContents, ResourceTemplate};

/// URI prefix of a pending preview; the pending id follows (a preview's facts name it).
pub const PENDING_URI_PREFIX: &str = resolve_core::facts::PENDING_RESOURCE_PREFIX;
/// URI prefix of a resolved (applied or discarded) action; the id follows.
pub const HISTORY_URI_PREFIX: &str = "resolve://history/";

/// MIME type of every resource: a header line, then the preview text with its diff.
const MIME_TEXT: &str = "text/plain";

/// The resources of `origin`: its pending previews (head first), then the workspace history
/// (most recently resolved first), then the review app (`ui://resolve/review`).
pub(crate) fn list(store: &Store, origin: &Origin) -> Result<Vec<Resource>, StoreError> {
    let pending = store.pending_for(origin)?;
    let history = store.history()?;
    Ok(pending
        .iter()
        .map(pending_resource)
        .chain(history.iter().map(history_resource))
        .chain(std::iter::once(crate::app::review_resource()))
        .collect())
}

/// The URIs [`list`] would give, to notice when the set changes.
pub(crate) fn uris(resources: &[Resource]) -> Vec<String> {
    resources
        .iter()
        .map(|resource| resource.uri.clone())
        .collect()
}

/// Templates for the two kinds of URI.
pub(crate) fn templates() -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new(format!("{PENDING_URI_PREFIX}{{id}}"), "pending")
            .with_title("Pending preview")
            .with_description(
                "A preview staged by this connection and waiting for `resolve`: its label and diff.",
            )
            .with_mime_type(MIME_TEXT),
        ResourceTemplate::new(format!("{HISTORY_URI_PREFIX}{{id}}"), "history")
            .with_title("Resolved action")
            .with_description(
                "An applied or discarded action of this workspace: outcome, reason and diff.",
            )
            .with_mime_type(MIME_TEXT),
    ]
}

fn pending_resource(record: &PendingRecord) -> Resource {
    let check = record
        .last_check()
        .map(|check| format!(" {}.", check_summary(check)))
        .unwrap_or_default();
    Resource::new(format!("{PENDING_URI_PREFIX}{}", record.id), &record.id)
        .with_title(&record.label)
        .with_description(format!(
            "Pending ({}): {}. Files: {}.{check}",
            record.origin,
            record.label,
            record.change_set.paths().join(", ")
        ))
        .with_mime_type(MIME_TEXT)
}

fn history_resource(entry: &HistoryRecord) -> Resource {
    Resource::new(
        format!("{HISTORY_URI_PREFIX}{}", entry.action.id),
        &entry.action.id,
    )
    .with_title(&entry.action.label)
    .with_description(format!(
        "{} ({}): {}. Reason: {}",
        outcome_word(entry),
        entry.action.origin,
        entry.action.label,
        entry.reason
    ))
    .with_mime_type(MIME_TEXT)
}

/// Read the resource at `uri`: a header line, a blank line, then the preview as it was staged.
pub(crate) fn read(store: &Store, uri: &str) -> Result<ResourceContents, ErrorData> {
    if crate::app::is_review_uri(uri) {
        return Ok(crate::app::read_review());
    }
    if uri.starts_with("ui://") {
        return Err(crate::app::unknown_ui(uri));
    }
    let (id, want_pending) = if let Some(id) = uri.strip_prefix(PENDING_URI_PREFIX) {
        (id, true)
    } else if let Some(id) = uri.strip_prefix(HISTORY_URI_PREFIX) {
        (id, false)
    } else {
        return Err(not_found(format!(
            "Unknown resource `{uri}`; resources are `{PENDING_URI_PREFIX}<id>` and `{HISTORY_URI_PREFIX}<id>`."
        )));
    };
    let stored = match store.get(id) {
        Ok(stored) => stored,
        Err(error @ StoreError::UnknownAction { .. }) => return Err(not_found(error.to_string())),
        Err(error) => return Err(ErrorData::internal_error(error.to_string(), None)),
    };
    // Derived from what resolving the action writes, not the stored text.
    let preview = |record: &resolve_edit::PendingRecord| {
        resolve_edit::shown_preview(store, record)
            .map_err(|error| ErrorData::internal_error(error.to_string(), None))
    };
    let text = match (stored, want_pending) {
        (StoredAction::Pending(record), true) => format!(
            "{} — pending ({}): {}{}\n\n{}",
            record.id,
            record.origin,
            record.label,
            record
                .last_check()
                .map(|check| format!("\n{}", check_report(check)))
                .unwrap_or_default(),
            preview(&record)?
        ),
        (StoredAction::Resolved(entry), false) => format!(
            "{}  {}  {}  — {}\n\n{}",
            entry.action.id,
            outcome_word(&entry),
            entry.action.label,
            entry.reason,
            preview(&entry.action)?
        ),
        (StoredAction::Resolved(entry), true) => {
            return Err(not_found(format!(
                "`{id}` is no longer pending (it was {}); read `{HISTORY_URI_PREFIX}{id}`.",
                outcome_word(&entry)
            )));
        }
        (StoredAction::Pending(_), false) => {
            return Err(not_found(format!(
                "`{id}` is still pending; read `{PENDING_URI_PREFIX}{id}`."
            )));
        }
    };
    Ok(ResourceContents::text(text, uri).with_mime_type(MIME_TEXT))
}

fn outcome_word(entry: &HistoryRecord) -> &'static str {
    match (entry.outcome, entry.undone) {
        (Outcome::Applied, false) => "applied",
        (Outcome::Applied, true) => "applied, undone",
        (Outcome::Discarded, _) => "discarded",
    }
}

fn not_found(message: String) -> ErrorData {
    ErrorData::resource_not_found(message, None)
}

/// A `resource_link` to the pending preview `id` (for a producer's result).
pub(crate) fn pending_link(id: &str, label: &str) -> Resource {
    Resource::new(format!("{PENDING_URI_PREFIX}{id}"), id)
        .with_title(label)
        .with_mime_type(MIME_TEXT)
}
