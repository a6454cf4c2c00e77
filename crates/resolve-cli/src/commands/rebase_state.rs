//! What `resolve pending` and `resolve show` say about whether a pending action still applies
//! as staged: `fresh`, `rebases` (cleanly, onto files that changed since) or `conflicts`
//! (with each conflicting hunk), as [`Store::rebase_state`] finds it.

use resolve_edit::{PendingRecord, RebaseState, Store};
use serde_json::{Value, json};

/// The action's state, for the JSON of `pending` and `show` (under `rebase`):
/// `{"state": "fresh"}`, with `rebasedFiles` or `conflicts` (each `{path, text}`) when it has
/// them.
pub(super) fn state_json(state: Option<&RebaseState>) -> Value {
    let Some(state) = state else {
        return Value::Null;
    };
    let mut json = json!({"state": state.name()});
    match state {
        RebaseState::Fresh => {}
        RebaseState::Rebases { files } | RebaseState::Stale { files } => {
            json["rebasedFiles"] = json!(files);
        }
        RebaseState::Conflicts { files } => {
            json["conflicts"] = files
                .iter()
                .map(|file| json!({"path": file.path, "text": file.to_string()}))
                .collect();
        }
    }
    json
}

/// The paragraph `resolve show` gives an action that does not apply as staged.
pub(super) fn state_text(state: Option<&RebaseState>) -> String {
    match state {
        None | Some(RebaseState::Fresh) => String::new(),
        Some(RebaseState::Rebases { files }) => format!(
            "\nrebases: {} changed since the preview; it rebases onto those changes cleanly.",
            files.join(", ")
        ),
        Some(RebaseState::Stale { files }) => {
            format!("\nstale: {} changed since the preview.", files.join(", "))
        }
        Some(RebaseState::Conflicts { files }) => {
            let mut text = String::from("\nconflicts: applying it now writes nothing.");
            for file in files {
                text.push('\n');
                text.push_str(&file.to_string());
            }
            text
        }
    }
}

/// The state of `record`, as a snapshot; `None` when a file of it cannot be read (a FIFO
/// swapped in, say), which the listing does not fail on: apply names that error.
pub(super) fn state_of(store: &Store, record: &PendingRecord) -> Option<RebaseState> {
    store.rebase_state(record).ok()
}
