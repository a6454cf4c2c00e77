//! Telling a model that a file under one of its pending previews moved: at the origin's next
//! opportunity (where reviewer notes are delivered), [`Store::take_moved_notes`] finds each of
//! its previews whose files changed since they were staged and says whether it still rebases
//! cleanly or which hunks conflict. Each move is told once: the record keeps what was told
//! ([`PendingRecord::told_moved`]).

use std::collections::BTreeMap;

use super::Store;
use super::rebasing::RebaseState;
use super::records::{Origin, PendingRecord, write_json};
use crate::change_set::ChangeSet;
use crate::error::StoreError;
use crate::layout::RecordKind;

/// A pending preview whose files moved since it was staged, as its origin is told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MovedNote {
    /// The action's id.
    pub id: String,
    /// The action's label.
    pub label: String,
    /// The files that moved, in the change set's order.
    pub files: Vec<String>,
    /// Whether it still applies: it rebases, or these hunks conflict.
    pub state: RebaseState,
}

impl Store {
    /// The previews of `origin` whose files moved since they were staged (or since it was last
    /// told), each with its [`RebaseState`]; each move is handed out once. Foreign actions and
    /// MCP calls are left alone.
    pub fn take_moved_notes(&self, origin: &Origin) -> Result<Vec<MovedNote>, StoreError> {
        let mut notes = Vec::new();
        let mut records = self.pending_for(origin)?;
        records.reverse();
        for record in records {
            if !untold(&record, &self.moved_files(&record.change_set)?) {
                continue;
            }
            let _lock = self.session()?;
            let Some(mut record) = self.find_pending(&record.id)? else {
                continue;
            };
            let moved = self.moved_files(&record.change_set)?;
            if !untold(&record, &moved) {
                continue;
            }
            let state = self.rebase_state(&record)?;
            record.told_moved = moved;
            self.sign_pending(&mut record)?;
            write_json(&self.record_path(RecordKind::Pending, record.seq), &record)?;
            if state == RebaseState::Fresh {
                continue;
            }
            notes.push(MovedNote {
                id: record.id.clone(),
                label: record.label.clone(),
                files: record.told_moved.keys().cloned().collect(),
                state,
            });
        }
        Ok(notes)
    }

    /// The files of `set` that no longer hold what their change was computed from, each with
    /// the hash it holds now (empty when absent).
    fn moved_files(&self, set: &ChangeSet) -> Result<BTreeMap<String, String>, StoreError> {
        let mut moved = BTreeMap::new();
        for (path, change) in set.files() {
            let current = match self.hash_target(path) {
                Ok((_, current)) => current,
                // A directory stands where the file was.
                Err(StoreError::Io { source, .. })
                    if source.kind() == std::io::ErrorKind::IsADirectory =>
                {
                    Some("directory".to_owned())
                }
                Err(error) => return Err(error),
            };
            if change.base_hash() != current.as_deref() {
                moved.insert(path.to_owned(), current.unwrap_or_default());
            }
        }
        Ok(moved)
    }
}

/// Whether `moved` (the files of `record` that moved) is news to its origin: some moved, not
/// as last told, and the action is its own (not foreign, not an MCP call).
fn untold(record: &PendingRecord, moved: &BTreeMap<String, String>) -> bool {
    !record.foreign && record.mcp.is_none() && !moved.is_empty() && *moved != record.told_moved
}
