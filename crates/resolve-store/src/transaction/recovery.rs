//! Recovery: what the next `resolve` process does about a transaction a crash interrupted.
//! It reads the journal back, refuses one it cannot trust, settles it either way (see the
//! settle module; a trial, for a check, is always rolled back) and says in one sentence what
//! it did.

use resolve_core::count_noun;

use super::crash::CrashHook;
use super::journal::{JOURNAL_VERSION, Journal, Purpose, leftovers, remove_journal};
use super::settle::{finish, rollback};
use crate::error::{QuotedList, StoreError};
use crate::fs;
use crate::workspace::Workspace;

/// Settle an interrupted transaction of `workspace` (call it under the store lock): roll back
/// an uncommitted one, finish a committed one. Returns what was done, or `None` when there was
/// nothing to do.
pub(crate) fn recover(workspace: &Workspace) -> Result<Option<String>, StoreError> {
    let layout = workspace.layout();
    if leftovers(layout)?.is_empty() {
        return Ok(None);
    }
    let path = layout.journal_file();
    let Some(bytes) = fs::read_state_file(&path, fs::STATE_FILE_MAX_LEN)? else {
        // Interrupted before the journal was written (no file touched yet) or after it was
        // removed (everything done): what is left is only backups and temp files.
        remove_journal(layout, &mut CrashHook::disabled())?;
        return Ok(None);
    };
    let journal: Journal =
        serde_json::from_slice(&bytes).map_err(|error| StoreError::CorruptState {
            path: path.clone(),
            reason: error.to_string(),
        })?;
    if journal.version != JOURNAL_VERSION {
        return Err(StoreError::CorruptState {
            path,
            reason: format!("unknown journal version {}", journal.version),
        });
    }
    journal
        .check(workspace)
        .map_err(|reason| StoreError::CorruptState { path, reason })?;
    let purpose = journal.purpose;
    // A trial is never committed; were one marked so, it is rolled back all the same.
    if journal.committed && purpose != Purpose::Trial {
        for entry in &journal.entries {
            fs::remove_file(&workspace.root().join(&entry.temp))?;
        }
        finish(workspace, &journal, &mut CrashHook::disabled())?;
        return Ok(Some(format!(
            "Finished an interrupted {} of `{}`; {}.",
            purpose.noun(),
            journal.action,
            purpose.after_finish()
        )));
    }
    let report = rollback(workspace, &journal)?;
    let mut message = format!(
        "Rolled back an interrupted {} of `{}` ({} restored); {}.",
        purpose.noun(),
        journal.action,
        count_noun(report.restored, "file"),
        purpose.after_rollback()
    );
    if !report.left.is_empty() {
        message.push_str(&format!(
            " Left {} as found: changed after the interruption.",
            QuotedList(&report.left)
        ));
    }
    Ok(Some(message))
}
