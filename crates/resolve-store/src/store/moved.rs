//! Telling a model that a file under one of its pending previews moved: at the origin's next
//! opportunity (where reviewer notes are delivered), [`Store::take_moved_notes`] finds each of
//! its previews whose files changed since they were staged and says whether it still rebases
//! cleanly or which hunks conflict. Each move is told once: the record keeps what was told
//! ([`PendingRecord::told_moved`]). A long-lived handle (an MCP connection's) remembers each
//! file's hash with the metadata it had ([`HashMemo`]), so looking again reads only the files
//! whose size, times or inode changed.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, SystemTime};

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
            let current = match self.remembered_hash(path) {
                Ok(current) => current,
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

impl Store {
    /// The current hash of the workspace file `path` (`None`: absent), from the memo when its
    /// metadata is what it was when last hashed.
    fn remembered_hash(&self, path: &str) -> Result<Option<String>, StoreError> {
        let real = self.real_target(path)?;
        let Some(stamp) = Stamp::of(&real) else {
            return Ok(self.hash_target(path)?.1);
        };
        if let Some(hash) = self.hashes.get(&real, &stamp) {
            return Ok(hash);
        }
        // Stamped before reading: a write during the read changes the stamp, so the next look
        // hashes again.
        let current = self.hash_target(path)?.1;
        self.hashes.put(real, stamp, current.clone());
        Ok(current)
    }
}

/// A file's metadata that any write changes: size, modification and status-change times,
/// inode.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    len: u64,
    modified: SystemTime,
    #[cfg(unix)]
    changed: (i64, i64),
    #[cfg(unix)]
    inode: (u64, u64),
}

impl Stamp {
    /// The stamp of the regular file at `path`; `None` for anything else or on an error.
    fn of(path: &Path) -> Option<Self> {
        let metadata = std::fs::metadata(path).ok()?;
        if !metadata.is_file() {
            return None;
        }
        #[cfg(unix)]
        use std::os::unix::fs::MetadataExt;
        Some(Self {
            len: metadata.len(),
            modified: metadata.modified().ok()?,
            #[cfg(unix)]
            changed: (metadata.ctime(), metadata.ctime_nsec()),
            #[cfg(unix)]
            inode: (metadata.dev(), metadata.ino()),
        })
    }

    /// Whether a write in the same clock tick could leave the stamp as it is: the file was
    /// modified within the last [`RACY_WINDOW`] (as git treats a "racily clean" index entry).
    fn is_racy(&self) -> bool {
        SystemTime::now()
            .duration_since(self.modified)
            .map_or(true, |age| age < RACY_WINDOW)
    }
}

/// How recent a modification time is too recent to trust a stamp.
const RACY_WINDOW: Duration = Duration::from_secs(2);

/// Workspace files' hashes, each with the [`Stamp`] the file had when it was hashed.
#[derive(Debug, Default)]
pub(super) struct HashMemo {
    entries: Mutex<HashMap<PathBuf, (Stamp, Option<String>)>>,
}

impl HashMemo {
    /// The hash remembered for `path` if its stamp is still `stamp`.
    fn get(&self, path: &Path, stamp: &Stamp) -> Option<Option<String>> {
        let entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        let (remembered, hash) = entries.get(path)?;
        (remembered == stamp).then(|| hash.clone())
    }

    /// Remember `hash` for `path` as of `stamp`, unless the stamp is too recent to trust.
    fn put(&self, path: PathBuf, stamp: Stamp, hash: Option<String>) {
        if stamp.is_racy() {
            return;
        }
        self.entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(path, (stamp, hash));
    }

    /// How many files are remembered.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

/// Whether `moved` (the files of `record` that moved) is news to its origin: some moved, not
/// as last told, and the action is its own (not foreign, not an MCP call).
fn untold(record: &PendingRecord, moved: &BTreeMap<String, String>) -> bool {
    !record.foreign && record.mcp.is_none() && !moved.is_empty() && *moved != record.told_moved
}

#[cfg(test)]
mod tests {
    use std::fs::File;
    use std::time::{Duration, SystemTime};

    use super::*;
    use crate::Workspace;

    /// Write `bytes` to `path` and date its modification an hour back.
    fn write_old(path: &Path, bytes: &[u8]) {
        std::fs::write(path, bytes).unwrap();
        File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(SystemTime::now() - Duration::from_secs(3600))
            .unwrap();
    }

    #[test]
    fn a_file_is_hashed_again_only_when_its_metadata_changed() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(Workspace::open(dir.path()).unwrap());
        let file = dir.path().join("a.txt");
        write_old(&file, b"one\n");
        let first = store.remembered_hash("a.txt").unwrap();
        assert_eq!(first, store.hash_target("a.txt").unwrap().1);
        assert_eq!(store.hashes.len(), 1);
        assert_eq!(store.remembered_hash("a.txt").unwrap(), first);

        // Same length, the old modification time put back: the status-change time still moved.
        write_old(&file, b"two\n");
        let second = store.remembered_hash("a.txt").unwrap();
        assert_ne!(second, first);
        assert_eq!(second, store.hash_target("a.txt").unwrap().1);

        std::fs::remove_file(&file).unwrap();
        assert_eq!(store.remembered_hash("a.txt").unwrap(), None);
    }

    #[test]
    fn a_file_modified_just_now_is_not_remembered() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(Workspace::open(dir.path()).unwrap());
        std::fs::write(dir.path().join("a.txt"), b"fresh\n").unwrap();
        assert!(store.remembered_hash("a.txt").unwrap().is_some());
        assert_eq!(store.hashes.len(), 0);
    }
}
