//! Settling a journal either way: finishing a committed one (the state changes, then the
//! journal's removal) and rolling back an uncommitted one (a trial's always) from its backups. Both are idempotent,
//! so a crash while settling is settled again by the next recovery.

use std::collections::BTreeSet;
use std::path::Path;

use super::crash::CrashHook;
use super::journal::{Journal, JournalState, Purpose, permissions_from, remove_journal};
use crate::blobs::Blobs;
use crate::error::StoreError;
use crate::fs;
use crate::hash::content_hash;
use crate::workspace::Workspace;

/// Make the state changes of a committed journal, then remove the journal.
/// Originals are moved into the blob store first, and are durable before the history record that
/// names them is placed.
pub(super) fn finish(
    workspace: &Workspace,
    journal: &Journal,
    hook: &mut CrashHook,
) -> Result<(), StoreError> {
    let layout = workspace.layout();
    let journal_dir = layout.journal_dir();
    let blobs = Blobs::of(workspace);
    for (index, change) in journal.state.iter().enumerate() {
        match change {
            JournalState::KeepOriginals => keep_backups(
                &blobs,
                &journal_dir,
                journal.entries.iter().filter_map(|entry| {
                    entry.backup.as_deref().zip(entry.original_hash.as_deref())
                }),
            )?,
            JournalState::Place { path, staged } => {
                let path = layout.join(path);
                let staged = journal_dir.join(staged);
                // Already placed when a recovery finishes a transaction that got this far.
                if fs::permissions(&staged)?.is_some() {
                    fs::rename(&staged, &path)?;
                }
                fs::sync_dir(&fs::parent_of(&path))?;
            }
            JournalState::Remove { path } => {
                let path = layout.join(path);
                fs::remove_file(&path)?;
                fs::sync_dir(&fs::parent_of(&path))?;
            }
        }
        hook.point(&format!("state:{}", index + 1));
    }
    remove_journal(layout, hook)
}

/// Move each journal backup (a bare name in `journal_dir`) into `blobs` under its hash, then
/// make them durable: the copies made where the store is on another file system, and the blob
/// directory. A backup already gone was moved by an earlier try that got this far. A committed
/// journal is never rolled back, so its backups are not needed any more.
fn keep_backups<'a>(
    blobs: &Blobs,
    journal_dir: &Path,
    backups: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Result<(), StoreError> {
    let mut unsynced = Vec::new();
    for (backup, blob) in backups {
        unsynced.extend(blobs.move_in(&journal_dir.join(backup), blob)?);
    }
    unsynced.push(blobs.dir().to_path_buf());
    fs::sync_all(&unsynced)
}

/// What a rollback did.
#[derive(Debug)]
pub(crate) struct Rollback {
    /// How many files were put back.
    pub(crate) restored: usize,
    /// Files that hold neither the original nor the transaction's content, left as found
    /// (never for a trial, whose files are put back regardless).
    pub(crate) left: Vec<String>,
    /// A trial's files that no longer held what the trial wrote (something else changed them
    /// while it was in place); they were put back all the same.
    pub(crate) changed: Vec<String>,
}

/// Put every target back as it was, remove created directories and the journal. A target
/// that holds neither its original nor the transaction's content is left alone and named,
/// except in a trial, where every target is put back.
pub(super) fn rollback(workspace: &Workspace, journal: &Journal) -> Result<Rollback, StoreError> {
    let root = workspace.root();
    let journal_dir = workspace.layout().journal_dir();
    let trial = journal.purpose == Purpose::Trial;
    let mut report = Rollback {
        restored: 0,
        left: Vec::new(),
        changed: Vec::new(),
    };
    let mut touched = BTreeSet::new();
    for entry in &journal.entries {
        let target = root.join(&entry.path);
        let temp = root.join(&entry.temp);
        fs::remove_file(&temp)?;
        let current = fs::read_bytes(&target)?.map(|bytes| content_hash(&bytes));
        if trial && current != entry.new_hash {
            report.changed.push(entry.path.clone());
        }
        if current == entry.original_hash {
            continue;
        }
        if current != entry.new_hash && !trial {
            report.left.push(entry.path.clone());
            continue;
        }
        match &entry.backup {
            Some(name) => {
                let backup = journal_dir.join(name);
                // A state file: no link is followed, whatever its length.
                let bytes = fs::read_state_file(&backup, u64::MAX)?.ok_or_else(|| {
                    StoreError::CorruptState {
                        path: backup.clone(),
                        reason: "the backup the journal names is missing".to_owned(),
                    }
                })?;
                // Restoring a damaged backup would lose the original silently.
                if entry.original_hash.as_deref() != Some(content_hash(&bytes).as_str()) {
                    return Err(StoreError::CorruptState {
                        path: backup,
                        reason: format!(
                            "it does not hold the original content of `{}` that the journal records",
                            entry.path
                        ),
                    });
                }
                let permissions = entry.mode.map(permissions_from);
                if trial {
                    // The trial's command may have removed the directory.
                    fs::create_dir_all(&fs::parent_of(&target))?;
                }
                fs::write_new(&temp, &bytes, permissions.as_ref())?;
                fs::sync_all(std::slice::from_ref(&temp))?;
                fs::rename(&temp, &target)?;
            }
            None => {
                fs::remove_file(&target)?;
            }
        }
        touched.insert(fs::parent_of(&target));
        report.restored += 1;
    }
    for dir in &touched {
        fs::sync_dir(dir)?;
    }
    for dir in journal.created_dirs.iter().rev() {
        fs::remove_empty_dir(&root.join(dir))?;
    }
    remove_journal(workspace.layout(), &mut CrashHook::disabled())?;
    Ok(report)
}
