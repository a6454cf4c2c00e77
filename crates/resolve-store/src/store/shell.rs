//! What a host's shell command changed, kept for the record: the tree as the command found it
//! (a [`TreeSnapshot`] whose contents are in the blob store, signed and kept in
//! `shell/<call>.json` until the command ends), and the applied history entry of what it
//! changed ([`Store::record_observed`]), which `resolve undo` reverts like any apply.
//!
//! The walk of the tree and the comparison are the caller's (`resolve_edit::shell_capture`);
//! this module owns keeping a snapshot and recording an observed change.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use super::Store;
use super::records::{HistoryRecord, Outcome, RecordVersion, read_json, write_json};
use super::staging::{NewAction, Payload};
use crate::change_set::{ChangeSet, Content, FileChange};
use crate::error::StoreError;
use crate::fs;
use crate::transaction::Purpose;

/// The longest call id that names a snapshot.
const MAX_CALL_LEN: usize = 128;

/// How long a snapshot waits for the end of its command: one older than this was left by a
/// command whose end never came (interrupted), and [`Store::gc`] removes it; until then the
/// contents it names are kept.
pub const SNAPSHOT_LIFETIME: Duration = Duration::from_secs(24 * 60 * 60);

/// Each file of the tree, by its root-relative path, with the hash of its content (kept in the
/// blob store under that name).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TreeSnapshot {
    /// Path to content hash.
    pub files: BTreeMap<String, String>,
}

/// A snapshot as stored: signed with the user's record key, so a snapshot that came with a
/// clone is never taken for one this user's hook wrote.
#[derive(Serialize, Deserialize)]
struct StoredSnapshot {
    version: RecordVersion,
    files: BTreeMap<String, String>,
    mac: String,
}

/// One file a command outside resolve changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObservedFile {
    /// Root-relative path.
    pub path: String,
    /// The hash of its content before (kept in the blob store); `None` when it was created.
    pub before: Option<String>,
    /// Its content after; `None` when it was removed.
    pub after: Option<Content>,
}

/// The bytes a snapshot's signature covers.
fn signed_message(files: &BTreeMap<String, String>) -> Vec<u8> {
    let mut message = b"resolve shell snapshot v1\n".to_vec();
    for (path, hash) in files {
        message.extend_from_slice(path.as_bytes());
        message.push(0);
        message.extend_from_slice(hash.as_bytes());
        message.push(b'\n');
    }
    message
}

/// Refuse a call id that is not a plain name (it names a file under `shell/`).
fn checked_call(call: &str) -> Result<&str, StoreError> {
    let plain = !call.is_empty()
        && call.len() <= MAX_CALL_LEN
        && call
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-');
    if plain {
        Ok(call)
    } else {
        Err(StoreError::BadShellCall {
            call: call.to_owned(),
        })
    }
}

impl Store {
    /// The snapshots waiting for their command's end: each one's path, and whether it is past
    /// [`SNAPSHOT_LIFETIME`].
    fn snapshots(&self) -> Result<Vec<(PathBuf, bool)>, StoreError> {
        let dir = self.workspace.layout().shell_dir();
        let now = SystemTime::now();
        let mut found = Vec::new();
        for name in fs::list_dir(&dir)? {
            let path = dir.join(name);
            let stale = fs::modified(&path)?.is_some_and(|modified| {
                now.duration_since(modified)
                    .is_ok_and(|age| age > SNAPSHOT_LIFETIME)
            });
            found.push((path, stale));
        }
        Ok(found)
    }

    /// The contents the live snapshots name (a snapshot that cannot be read names none).
    pub(super) fn snapshot_blobs(&self) -> Result<Vec<String>, StoreError> {
        let mut blobs = Vec::new();
        for (path, stale) in self.snapshots()? {
            if stale {
                continue;
            }
            if let Ok(Some(stored)) = read_json::<StoredSnapshot>(&path) {
                blobs.extend(stored.files.into_values());
            }
        }
        Ok(blobs)
    }

    /// Remove the snapshots past [`SNAPSHOT_LIFETIME`]; how many there were (with
    /// `dry_run`, only count them).
    pub(super) fn remove_stale_snapshots(&self, dry_run: bool) -> Result<usize, StoreError> {
        let mut removed = 0;
        for (path, stale) in self.snapshots()? {
            if stale {
                if !dry_run {
                    fs::remove_file(&path)?;
                }
                removed += 1;
            }
        }
        Ok(removed)
    }

    /// Keep `snapshot` as the tree the shell command `call` found, until
    /// [`Store::take_snapshot`]. Every content it names must already be in the blob store.
    pub fn keep_snapshot(&self, call: &str, snapshot: &TreeSnapshot) -> Result<(), StoreError> {
        let path = self.workspace.layout().shell_snapshot(checked_call(call)?);
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir)?;
        }
        let stored = StoredSnapshot {
            version: RecordVersion,
            files: snapshot.files.clone(),
            mac: self.record_key()?.mac(&signed_message(&snapshot.files)),
        };
        write_json(&path, &stored)
    }

    /// The snapshot kept for the shell command `call`, removed from the store; `None` when
    /// there is none, or when it is not signed by this user's key (it came from elsewhere).
    pub fn take_snapshot(&self, call: &str) -> Result<Option<TreeSnapshot>, StoreError> {
        let path = self.workspace.layout().shell_snapshot(checked_call(call)?);
        let stored: Option<StoredSnapshot> = read_json(&path)?;
        fs::remove_file(&path)?;
        let Some(stored) = stored else {
            return Ok(None);
        };
        if !self
            .record_key()?
            .verifies(&signed_message(&stored.files), &stored.mac)
        {
            return Ok(None);
        }
        Ok(Some(TreeSnapshot {
            files: stored.files,
        }))
    }

    /// Record `files`, changed by a command outside resolve, as an applied entry of the
    /// history under `action` (its `source_tool` names the id, e.g. `shell`) with `reason`.
    /// Each `before` content must be in the blob store (it is what `resolve undo` writes back);
    /// the `after` contents are kept there too, so undo can tell whether a file still holds
    /// what the command wrote. Nothing in the tree is written.
    pub fn record_observed(
        &self,
        action: NewAction,
        files: Vec<ObservedFile>,
        reason: &str,
    ) -> Result<HistoryRecord, StoreError> {
        let mut action = action;
        let blobs = self.blobs();
        blobs.intern(&mut action.preview_text)?;
        let mut change_set = ChangeSet::new();
        let mut paths = Vec::with_capacity(files.len());
        for file in files {
            if let Some(before) = &file.before {
                let kept = Content::Stored {
                    blob: before.clone(),
                };
                if !blobs.holds(&kept)? {
                    return Err(StoreError::CorruptState {
                        path: blobs.path(before)?,
                        reason: format!(
                            "the content `{}` had before the command is not kept",
                            file.path
                        ),
                    });
                }
            }
            let change = match (file.before, file.after) {
                (None, Some(mut content)) => {
                    blobs.intern(&mut content)?;
                    FileChange::Create { content }
                }
                (Some(base_hash), Some(mut content)) => {
                    blobs.intern(&mut content)?;
                    FileChange::update(base_hash, content, 0)
                }
                (Some(base_hash), None) => FileChange::Delete { base_hash },
                (None, None) => continue,
            };
            paths.push(file.path.clone());
            change_set.insert(file.path, change);
        }
        let _lock = self.session()?;
        let fingerprint = change_set.fingerprint();
        let payload = Payload {
            change_set,
            mcp: None,
            rederive: None,
        };
        let record = self.numbered_record(action, payload, fingerprint.clone(), &fingerprint)?;
        let history = HistoryRecord {
            applied_files: paths,
            ..self.resolved_now(record, Outcome::Applied, reason, None, None)
        };
        self.commit(Purpose::Observe, Vec::new(), &history)?;
        Ok(history)
    }
}
