//! The journal of a transaction: what it records (targets, backups, temp names, hashes,
//! permissions, directories to create, the state changes to make), the checks a journal read
//! back must pass before recovery acts on it, and writing and removing it. Running a
//! transaction and settling one are the parent module's.

use std::fs::Permissions;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::crash::CrashHook;
use crate::error::StoreError;
use crate::fs;
use crate::hash::is_sha256_hex;
use crate::layout::{StateLayout, is_record_path};
use crate::workspace::Workspace;

/// Version of the journal format; a journal of another version is refused.
pub(super) const JOURNAL_VERSION: u32 = 1;

/// How the backup of a transaction's `index`-th file is named in the journal directory.
pub(super) fn backup_name(index: usize) -> String {
    format!("backup-{index}")
}

/// How the `index`-th state file a transaction places is named in the journal directory.
pub(super) fn staged_name(index: usize) -> String {
    format!("state-{index}.json")
}

/// The journal file's name in its directory (as the layout spells it).
fn journal_file_name(layout: &StateLayout) -> Option<String> {
    layout
        .journal_file()
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
}

/// Whether `name` is one a transaction writes in the journal directory: the journal, a
/// backup, a staged state file, or the temporary file the journal is written through. Only
/// these are ever removed from there.
pub(super) fn is_journal_name(layout: &StateLayout, name: &str) -> bool {
    let numbered = |prefix: &str, suffix: &str| {
        name.strip_prefix(prefix)
            .and_then(|rest| rest.strip_suffix(suffix))
            .is_some_and(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
    };
    journal_file_name(layout).as_deref() == Some(name)
        || numbered("backup-", "")
        || numbered("state-", ".json")
        || (name.starts_with(".resolve-") && name.ends_with(".tmp") && !name.contains('/'))
}

/// What a transaction does for the store; decides the words of recovery messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Purpose {
    /// Apply a pending action (it becomes history).
    Apply,
    /// Discard a pending action (it becomes history; no files).
    Discard,
    /// Revert an applied action.
    Undo,
    /// Record what a command outside resolve changed (it becomes history; no files).
    Observe,
    /// Put a pending action's preview in place for a check, to be rolled back afterwards
    /// whatever happens: a trial is never committed, and its recovery always rolls back.
    Trial,
    /// Record in an applied action's history what came of the git commit made after it (no
    /// files).
    RecordCommit,
}

impl Purpose {
    pub(super) fn noun(self) -> &'static str {
        match self {
            Self::Apply => "apply",
            Self::Discard => "discard",
            Self::Undo => "undo",
            Self::Observe => "record of a shell command",
            Self::Trial => "check trial",
            Self::RecordCommit => "record of the commit",
        }
    }

    pub(super) fn after_rollback(self) -> &'static str {
        match self {
            Self::Apply | Self::Discard | Self::Trial => "it is still pending",
            Self::Undo => "it is still applied",
            Self::Observe => "it is not recorded",
            Self::RecordCommit => "its history does not name the commit",
        }
    }

    pub(super) fn after_finish(self) -> &'static str {
        match self {
            Self::Apply => "it is applied",
            Self::Discard => "it is discarded",
            Self::Undo => "it is undone",
            Self::Observe => "it is recorded",
            Self::Trial => "it is still pending",
            Self::RecordCommit => "its history names the commit",
        }
    }
}

/// A state change as the journal records it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub(super) enum JournalState {
    /// Move the state file `staged` (in the journal directory, durable before the journal) to
    /// `path` (relative to the state directory).
    Place {
        /// Relative to the state directory.
        path: String,
        /// Its name in the journal directory.
        staged: String,
    },
    /// Remove `path` (relative to the state directory).
    Remove {
        /// Relative to the state directory.
        path: String,
    },
    /// Move every backup of the journal's entries (the originals, replaced by now) into the
    /// blob store, named by its original hash: an apply keeps originals for undo.
    KeepOriginals,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Journal {
    pub(super) version: u32,
    pub(super) purpose: Purpose,
    pub(super) action: String,
    pub(super) committed: bool,
    pub(super) entries: Vec<JournalEntry>,
    /// Directories created for new files, relative to the root, outermost first.
    pub(super) created_dirs: Vec<String>,
    pub(super) state: Vec<JournalState>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct JournalEntry {
    /// The target, relative to the root.
    pub(super) path: String,
    /// The temp file next to it, relative to the root.
    pub(super) temp: String,
    /// The backup's name in the journal directory; `None` when the target was absent.
    pub(super) backup: Option<String>,
    pub(super) original_hash: Option<String>,
    /// `None` when the target is removed.
    pub(super) new_hash: Option<String>,
    /// Unix permission bits of the original.
    pub(super) mode: Option<u32>,
}

impl Journal {
    /// Refuse a journal naming anything recovery must not touch: it writes, renames and removes
    /// what the journal names, so every file and directory must be confined to the workspace
    /// (outside `.resolve/` and `.git/`, symlinks followed), every backup and staged file one
    /// of the names a transaction gives them in the journal directory, and every state path a
    /// bare name in a record directory that is itself no symlink.
    pub(super) fn check(&self, workspace: &Workspace) -> Result<(), String> {
        let layout = workspace.layout();
        let plain = |path: &str| {
            !path.is_empty()
                && Path::new(path)
                    .components()
                    .all(|component| matches!(component, std::path::Component::Normal(_)))
        };
        let confined = |path: &str| {
            if plain(path) && workspace.resolve(path).is_ok() {
                Ok(())
            } else {
                Err(format!(
                    "it names `{path}`, which is not a path inside the workspace"
                ))
            }
        };
        for entry in &self.entries {
            confined(&entry.path)?;
            confined(&entry.temp)?;
            if let Some(backup) = &entry.backup
                && !(backup.starts_with("backup-") && is_journal_name(layout, backup))
            {
                return Err(format!(
                    "it names the backup `{backup}`, which is not a bare name"
                ));
            }
        }
        for dir in &self.created_dirs {
            confined(dir)?;
        }
        for change in &self.state {
            let path = match change {
                JournalState::Remove { path } | JournalState::Place { path, .. } => path,
                JournalState::KeepOriginals => {
                    for entry in &self.entries {
                        if entry.backup.is_some()
                            && !entry.original_hash.as_deref().is_some_and(is_sha256_hex)
                        {
                            return Err(format!(
                                "it keeps the original of `{}` without its SHA-256",
                                entry.path
                            ));
                        }
                    }
                    continue;
                }
            };
            if !plain(path) || !is_record_path(path) || !record_dir_is_real(layout, path) {
                return Err(format!(
                    "it names the state file `{path}`, which is not a record of the state directory"
                ));
            }
            if let JournalState::Place { staged, .. } = change
                && !(staged.starts_with("state-") && is_journal_name(layout, staged))
            {
                return Err(format!(
                    "it names the staged state file `{staged}`, which is not a bare name"
                ));
            }
        }
        Ok(())
    }
}

/// Whether the directory holding the record `relative` (a [`is_record_path`]) is where its
/// name says, symlinks followed: a missing one is (nothing can be placed through it).
fn record_dir_is_real(layout: &StateLayout, relative: &str) -> bool {
    let dir = fs::parent_of(&layout.join(relative));
    match dir.canonicalize() {
        Ok(real) => real == dir,
        Err(error) => error.kind() == std::io::ErrorKind::NotFound,
    }
}

/// Write `journal` in place of the journal file (atomically).
pub(super) fn write_journal(layout: &StateLayout, journal: &Journal) -> Result<(), StoreError> {
    fs::atomic_write_json(&layout.journal_file(), journal)
}

/// Remove the journal file (the end of the transaction), then the backups and staged files:
/// only names a transaction gives ([`is_journal_name`]); anything else in the directory is
/// left alone.
pub(super) fn remove_journal(layout: &StateLayout, hook: &mut CrashHook) -> Result<(), StoreError> {
    let journal_dir = layout.journal_dir();
    fs::remove_file(&layout.journal_file())?;
    fs::sync_dir(&journal_dir)?;
    hook.point("journal-removed");
    for name in leftovers(layout)? {
        fs::remove_file(&journal_dir.join(name))?;
    }
    Ok(())
}

/// The names in the journal directory a transaction wrote ([`is_journal_name`]).
pub(super) fn leftovers(layout: &StateLayout) -> Result<Vec<String>, StoreError> {
    let mut names = fs::list_dir(&layout.journal_dir())?;
    names.retain(|name| is_journal_name(layout, name));
    Ok(names)
}

/// The permission bits a journal entry records.
#[cfg(unix)]
pub(super) fn mode_of(permissions: &Permissions) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    permissions.mode()
}

/// The permissions of recorded bits.
#[cfg(unix)]
pub(super) fn permissions_from(mode: u32) -> Permissions {
    use std::os::unix::fs::PermissionsExt;
    Permissions::from_mode(mode)
}
