//! Undo: reverting an applied change set while every file it wrote still holds what it wrote,
//! from the originals the apply kept in the blob store.

use std::borrow::Cow;

use super::Store;
use super::records::{HistoryRecord, Outcome};
use crate::error::StoreError;
use crate::layout::RecordKind;
use crate::transaction::{FileWrite, Purpose};

impl Store {
    /// Revert an applied action, when every file it wrote is still byte-identical to what it
    /// wrote; otherwise [`StoreError::UndoConflict`] names the changed files and nothing is
    /// reverted. Directories the apply created for new files stay (empty).
    pub fn undo(&self, id: &str) -> Result<HistoryRecord, StoreError> {
        let _lock = self.session()?;
        self.tidy_blobs();
        let nothing_to_undo = |state| StoreError::NothingToUndo {
            id: id.to_owned(),
            state,
        };
        let Some(mut record) = self.find_history(id)? else {
            return Err(if self.find_pending(id)?.is_some() {
                nothing_to_undo("is still pending")
            } else {
                StoreError::UnknownAction { id: id.to_owned() }
            });
        };
        match (record.outcome, record.undone) {
            (Outcome::Discarded, _) => return Err(nothing_to_undo("was discarded")),
            (Outcome::Applied, true) => return Err(nothing_to_undo("was already undone")),
            (Outcome::Applied, false) => {}
        }
        if record.action.mcp.is_some() {
            return Err(nothing_to_undo(
                "called a tool of an MCP server, which resolve cannot revert",
            ));
        }
        // Undo writes the originals the record names: for a record this user's resolve did not
        // write, those are a stranger's bytes.
        if record.action.foreign && !self.accept_foreign {
            return Err(StoreError::ForeignUndo { id: id.to_owned() });
        }
        let record_path = self.record_path(RecordKind::History, record.action.seq);
        let corrupt = |reason: String| StoreError::CorruptState {
            path: record_path.clone(),
            reason,
        };
        let mut changed = Vec::new();
        let mut targets = Vec::new();
        let mut originals = Vec::new();
        for path in &record.applied_files {
            let written = record
                .action
                .change_set
                .get(path)
                .ok_or_else(|| corrupt(format!("applied file `{path}` is not in its change set")))?
                .new_content()
                .map(|content| content.hash().into_owned());
            let original = record
                .original(path)
                .ok_or_else(|| corrupt(format!("no original content of `{path}` is recorded")))?;
            let (relative, current) = self.hash_target(path)?;
            if current != written {
                changed.push(path.clone());
                continue;
            }
            targets.push((relative, current));
            originals.push(original);
        }
        if !changed.is_empty() {
            return Err(StoreError::UndoConflict {
                id: id.to_owned(),
                files: changed,
            });
        }
        record.undone = true;
        // Every file still holds what the apply wrote, so that is its original here.
        let files = targets
            .into_iter()
            .zip(&originals)
            .map(|((relative, current), original)| FileWrite {
                relative,
                original: current.map(Cow::Owned),
                content: original.as_ref(),
            })
            .collect();
        self.commit(Purpose::Undo, files, &record)?;
        Ok(record)
    }
}
