//! The content store: file contents kept as files named by their SHA-256 under
//! `<root>/.resolve/blobs/`, so pending and history records carry hashes instead of texts and no
//! step ever holds a whole change set in memory.
//!
//! A preview appends each new content (and its diff) to a pack, one per walker thread, as soon
//! as it is computed, and keeps its preview text as a blob; an apply keeps each original here (a
//! hard link to the replaced file: no data is copied) so undo can restore it. Blobs are written
//! to a temporary name and renamed into place, so a reader never sees half a blob; a pack is
//! named by no record until its preview is staged. Every read checks the content against its
//! hash: a damaged or missing blob is [`EditError::CorruptState`], never silently used. Blobs
//! and packs no record needs are removed an hour after they were written (see
//! [`Store::collect_garbage`](crate::Store::collect_garbage)). Packs and blobs are not synced
//! when a preview writes them (a preview survives a killed process, and its apply writes and
//! syncs the targets from them); originals kept by an apply are durable before it commits.
//! A preview's scratch files (the spool of a large change set) live here too, without a name,
//! so they never outlive the process.

use std::collections::HashSet;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime};

use sha2::{Digest, Sha256};

use crate::change_set::{hex, is_sha256_hex};
use crate::{EditError, Workspace, content_hash, fs};

/// The blob directory, under the state directory.
pub(crate) const BLOBS_DIR: &str = "blobs";

/// The blob directory of one workspace.
#[derive(Debug, Clone)]
pub(crate) struct Blobs {
    workspace: Workspace,
    dir: PathBuf,
    /// Set once the directories are known to exist.
    dir_ready: Arc<OnceLock<()>>,
}

impl Blobs {
    /// The blobs of `workspace`; nothing is created until a blob is written.
    pub(crate) fn of(workspace: &Workspace) -> Self {
        Self {
            workspace: workspace.clone(),
            dir: workspace.state_dir().join(BLOBS_DIR),
            dir_ready: Arc::new(OnceLock::new()),
        }
    }

    /// The directory, for syncing after blobs were linked into it.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// Keep `bytes`; returns their hash (the blob's name).
    pub(crate) fn put(&self, bytes: &[u8]) -> Result<String, EditError> {
        let mut writer = self.writer()?;
        writer.write(bytes)?;
        writer.finish()
    }

    /// A blob written piece by piece: what is written is hashed on the way, and the blob takes
    /// its name when finished.
    pub(crate) fn writer(&self) -> Result<BlobWriter, EditError> {
        self.ensure_dir()?;
        Ok(BlobWriter {
            file: BufWriter::with_capacity(64 * 1024, fs::temp_file_in(&self.dir)?),
            hasher: Sha256::new(),
            dir: self.dir.clone(),
        })
    }

    /// A new pack under a fresh name, for one writer to append contents to.
    pub(crate) fn create_pack(&self) -> Result<PackWriter, EditError> {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        self.ensure_dir()?;
        let nanos = SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_nanos());
        let name = format!(
            "{PACK_PREFIX}{}-{nanos}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let path = self.dir.join(&name);
        let file = fs::create_exclusive(&path)?;
        Ok(PackWriter {
            pack: Arc::new(Pack { name, path, file }),
            len: 0,
        })
    }

    /// A file with no name in the blob directory, for data a preview sets aside until it is
    /// staged (see the spool module); it is gone once closed, also when the process dies.
    pub(crate) fn scratch_file(&self) -> Result<std::fs::File, EditError> {
        self.ensure_dir()?;
        fs::scratch_file_in(&self.dir)
    }

    /// The `len` bytes at `offset` of the pack `pack`, checked against `hash`.
    pub(crate) fn read_packed(
        &self,
        pack: &str,
        offset: u64,
        len: u64,
        hash: &str,
    ) -> Result<Vec<u8>, EditError> {
        let path = self.path(pack)?;
        let file = fs::open_existing(&path)?.ok_or_else(|| missing(path.clone()))?;
        // A damaged record may name any range; nothing is allocated for one the pack lacks.
        let out_of_range = || EditError::CorruptState {
            path: path.clone(),
            reason: format!("a record names {len} bytes at offset {offset}, beyond its end"),
        };
        let end = offset.checked_add(len).ok_or_else(out_of_range)?;
        if end > fs::file_len(&file, &path)? {
            return Err(out_of_range());
        }
        let mut bytes = vec![0; usize::try_from(len).map_err(|_| out_of_range())?];
        fs::read_at(&file, &path, offset, &mut bytes)?;
        self.check(&path, hash, &bytes)?;
        Ok(bytes)
    }

    /// Keep the content of the file at `source`, which hashes to `hash`, as a hard link (a copy
    /// where the file system has none); nothing happens when the blob exists. Returns the path
    /// of a copy the caller must sync, or `None` when only the directory needs syncing.
    pub(crate) fn keep_file(
        &self,
        source: &Path,
        hash: &str,
    ) -> Result<Option<PathBuf>, EditError> {
        let path = self.path(hash)?;
        if fs::exists(&path)? {
            return Ok(None);
        }
        self.ensure_dir()?;
        // A link appears whole or not at all, so it needs no temporary name.
        if fs::hard_link(source, &path)? {
            return Ok(None);
        }
        let bytes = fs::read_bytes(source)?.ok_or_else(|| missing(source.to_path_buf()))?;
        self.put(&bytes)?;
        Ok(Some(path))
    }

    /// The path of the blob or pack `name`; a name that is neither a SHA-256 in hex nor a
    /// pack's name is corrupt state (a record naming `../x` must not reach outside the
    /// directory).
    pub(crate) fn path(&self, name: &str) -> Result<PathBuf, EditError> {
        let hash = is_sha256_hex(name);
        let pack = name.strip_prefix(PACK_PREFIX).is_some_and(|rest| {
            !rest.is_empty()
                && rest
                    .bytes()
                    .all(|byte| byte.is_ascii_digit() || byte == b'-')
        });
        if hash || pack {
            Ok(self.dir.join(name))
        } else {
            Err(EditError::CorruptState {
                path: self.dir.clone(),
                reason: format!(
                    "a record names the blob `{name}`, which is neither a SHA-256 nor a pack"
                ),
            })
        }
    }

    /// The blob named `hash`, opened for reading.
    pub(crate) fn open(&self, hash: &str) -> Result<std::fs::File, EditError> {
        let path = self.path(hash)?;
        fs::open_existing(&path)?.ok_or_else(|| missing(path))
    }

    /// Fail unless the blob named `hash` is there (a preview held past [`BLOB_GRACE`] may have
    /// lost its contents to a clean-up).
    ///
    /// [`BLOB_GRACE`]: crate::store::BLOB_GRACE
    pub(crate) fn require(&self, hash: &str) -> Result<(), EditError> {
        let path = self.path(hash)?;
        if fs::exists(&path)? {
            Ok(())
        } else {
            Err(missing(path))
        }
    }

    /// The content of the blob named `hash`, checked against it.
    pub(crate) fn read(&self, hash: &str) -> Result<Vec<u8>, EditError> {
        let path = self.path(hash)?;
        let bytes = fs::read_bytes(&path)?.ok_or_else(|| missing(path.clone()))?;
        self.check(&path, hash, &bytes)?;
        Ok(bytes)
    }

    fn check(&self, path: &Path, hash: &str, bytes: &[u8]) -> Result<(), EditError> {
        if content_hash(bytes) == hash {
            Ok(())
        } else {
            Err(EditError::CorruptState {
                path: path.to_path_buf(),
                reason: "its content does not match its name (it was changed or damaged)"
                    .to_owned(),
            })
        }
    }

    /// Remove every blob not in `needed`, and every leftover temporary file, last modified
    /// more than `grace` ago (writing a blob always gives it a fresh time, so a blob written for
    /// a preview not staged yet survives). Returns how many files were removed.
    pub(crate) fn remove_unneeded(
        &self,
        needed: &HashSet<String>,
        grace: Duration,
    ) -> Result<usize, EditError> {
        let now = SystemTime::now();
        let mut removed = 0;
        for name in fs::list_dir(&self.dir)? {
            let path = self.dir.join(&name);
            let unneeded = match self.path(&name) {
                Ok(_) => !needed.contains(&name),
                Err(_) => name.starts_with(".resolve-") && name.ends_with(".partial"),
            };
            let old = fs::modified(&path)?
                .is_some_and(|modified| now.duration_since(modified).is_ok_and(|age| age > grace));
            if unneeded && old && fs::remove_file(&path)? {
                removed += 1;
            }
        }
        Ok(removed)
    }

    /// Whether unneeded blobs were removed less than `period` ago (see
    /// [`Blobs::mark_collected`]).
    pub(crate) fn collected_within(&self, period: Duration) -> bool {
        let stamp = fs::modified(&self.dir.join(COLLECTED_STAMP)).ok().flatten();
        stamp.is_some_and(|stamp| {
            SystemTime::now()
                .duration_since(stamp)
                .is_ok_and(|age| age < period)
        })
    }

    /// Record that unneeded blobs were just removed.
    pub(crate) fn mark_collected(&self) -> Result<(), EditError> {
        self.ensure_dir()?;
        fs::write_new(&self.dir.join(COLLECTED_STAMP), b"", None)
    }

    /// Create the state directory (with its `.gitignore`) and the blob directory, once.
    fn ensure_dir(&self) -> Result<(), EditError> {
        if self.dir_ready.get().is_none() {
            crate::store::ensure_state_dir(&self.workspace)?;
            fs::create_dir_all(&self.dir)?;
            let _ = self.dir_ready.set(());
        }
        Ok(())
    }
}

/// The file whose time says when unneeded blobs were last removed.
const COLLECTED_STAMP: &str = ".collected";

/// Packs are named `pack-<pid>-<nanos>-<n>`.
const PACK_PREFIX: &str = "pack-";

/// A pack being filled: the new contents (and the diffs) one walker thread computed for one
/// preview, appended one after another. A record names a content in it by offset, length and
/// hash ([`Content::Packed`](crate::Content::Packed)). A preview thus creates one file per
/// thread, not one per changed file. One writer appends at a time; what it appended can be read
/// back through [`Pack`] by anyone holding it.
pub(crate) struct PackWriter {
    pack: Arc<Pack>,
    len: u64,
}

impl PackWriter {
    /// The pack being written.
    pub(crate) fn pack(&self) -> &Arc<Pack> {
        &self.pack
    }

    /// Append `bytes`; returns their offset.
    pub(crate) fn append(&mut self, bytes: &[u8]) -> Result<u64, EditError> {
        let offset = self.len;
        fs::append(&self.pack.file, &self.pack.path, bytes)?;
        self.len += bytes.len() as u64;
        Ok(offset)
    }
}

/// A pack's file, open for reading back what its writer appended.
#[derive(Debug)]
pub(crate) struct Pack {
    name: String,
    path: PathBuf,
    file: std::fs::File,
}

impl Pack {
    /// Its name in the blob directory.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// Read back the `len` bytes appended at `offset`.
    pub(crate) fn read(&self, offset: u64, len: usize) -> Result<Vec<u8>, EditError> {
        let mut bytes = vec![0; len];
        fs::read_at(&self.file, &self.path, offset, &mut bytes)?;
        Ok(bytes)
    }
}

/// The error for a blob a record names that is not there.
fn missing(path: PathBuf) -> EditError {
    EditError::CorruptState {
        path,
        reason: "the content a record names is missing".to_owned(),
    }
}

impl crate::preview::TextSink for BlobWriter {
    fn put(&mut self, bytes: &[u8]) -> Result<(), EditError> {
        self.write(bytes)
    }
}

/// A blob being written; see [`Blobs::writer`]. Dropped unfinished, it leaves nothing.
pub(crate) struct BlobWriter {
    file: BufWriter<tempfile::NamedTempFile>,
    hasher: Sha256,
    dir: PathBuf,
}

impl BlobWriter {
    /// Append `bytes`.
    pub(crate) fn write(&mut self, bytes: &[u8]) -> Result<(), EditError> {
        self.hasher.update(bytes);
        self.file
            .write_all(bytes)
            .map_err(|source| self.error(source))
    }

    /// Name the blob by its hash (replacing an identical one) and return the hash.
    pub(crate) fn finish(self) -> Result<String, EditError> {
        let hash = hex(&self.hasher.finalize());
        let file = self
            .file
            .into_inner()
            .map_err(|error| EditError::io("write a blob in", &self.dir, error.into_error()))?;
        fs::persist(file, &self.dir.join(&hash))?;
        Ok(hash)
    }

    fn error(&self, source: std::io::Error) -> EditError {
        EditError::io("write a blob in", &self.dir, source)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blobs() -> (tempfile::TempDir, Blobs) {
        let dir = tempfile::tempdir().unwrap();
        let workspace = Workspace::open(dir.path()).unwrap();
        let blobs = Blobs::of(&workspace);
        (dir, blobs)
    }

    #[test]
    fn a_blob_is_named_by_its_hash_and_reads_back() {
        let (_dir, blobs) = blobs();
        let hash = blobs.put(b"fn main() {}\n").unwrap();
        assert_eq!(hash, content_hash(b"fn main() {}\n"));
        assert_eq!(blobs.read(&hash).unwrap(), b"fn main() {}\n");
        assert_eq!(blobs.put(b"fn main() {}\n").unwrap(), hash);
    }

    #[test]
    fn a_damaged_or_missing_blob_is_corrupt_state() {
        let (_dir, blobs) = blobs();
        let hash = blobs.put(b"original").unwrap();
        std::fs::write(blobs.path(&hash).unwrap(), b"tampered").unwrap();
        let error = blobs.read(&hash).unwrap_err();
        assert!(
            error.to_string().contains("does not match its name"),
            "{error}"
        );
        let missing = content_hash(b"never written");
        let error = blobs.read(&missing).unwrap_err();
        assert!(error.to_string().contains("is missing"), "{error}");
    }

    #[test]
    fn a_name_that_is_not_a_hash_never_reaches_outside() {
        let (_dir, blobs) = blobs();
        for name in ["../../etc/passwd", "", &"A".repeat(64)] {
            let error = blobs.read(name).unwrap_err();
            assert!(matches!(error, EditError::CorruptState { .. }), "{error}");
        }
    }

    #[test]
    fn a_kept_file_survives_the_file_being_replaced() {
        let (dir, blobs) = blobs();
        let file = dir.path().join("a.rs");
        std::fs::write(&file, b"old").unwrap();
        let hash = content_hash(b"old");
        blobs.keep_file(&file, &hash).unwrap();
        std::fs::write(dir.path().join("new"), b"new").unwrap();
        std::fs::rename(dir.path().join("new"), &file).unwrap();
        assert_eq!(blobs.read(&hash).unwrap(), b"old");
    }

    #[test]
    fn only_old_unneeded_blobs_are_removed() {
        let (_dir, blobs) = blobs();
        let needed = blobs.put(b"needed").unwrap();
        let unneeded = blobs.put(b"unneeded").unwrap();
        let keep: HashSet<String> = HashSet::from([needed.clone()]);
        assert_eq!(
            blobs
                .remove_unneeded(&keep, Duration::from_secs(3600))
                .unwrap(),
            0
        );
        assert_eq!(blobs.remove_unneeded(&keep, Duration::ZERO).unwrap(), 1);
        assert_eq!(blobs.read(&needed).unwrap(), b"needed");
        assert!(blobs.read(&unneeded).is_err());
    }

    #[test]
    fn a_packed_range_beyond_the_pack_is_corrupt_state_not_an_allocation() {
        let (_dir, blobs) = blobs();
        let mut pack = blobs.create_pack().unwrap();
        let offset = pack.append(b"text").unwrap();
        let hash = content_hash(b"text");
        let name = pack.pack().name();
        assert_eq!(blobs.read_packed(name, offset, 4, &hash).unwrap(), b"text");
        assert_eq!(pack.pack().read(offset, 4).unwrap(), b"text");
        for (offset, len) in [(0, u64::MAX), (u64::MAX, 1), (2, 4)] {
            let error = blobs.read_packed(name, offset, len, &hash).unwrap_err();
            assert!(error.to_string().contains("beyond its end"), "{error}");
        }
    }

    #[test]
    fn the_collection_stamp_says_when_blobs_were_last_collected() {
        let (_dir, blobs) = blobs();
        assert!(!blobs.collected_within(Duration::from_secs(3600)));
        blobs.mark_collected().unwrap();
        assert!(blobs.collected_within(Duration::from_secs(3600)));
        assert!(!blobs.collected_within(Duration::ZERO));
    }
}
