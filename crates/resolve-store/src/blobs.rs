//! The content store: file contents kept as files named by their SHA-256 under
//! `<root>/.resolve/blobs/`, so pending and history records carry hashes instead of texts and no
//! step ever holds a whole change set in memory.
//!
//! A preview appends each new content (and its diff) to a pack, one per walker thread, as soon
//! as it is computed, and keeps its preview text as a blob; an apply keeps each original here (a
//! hard link to the replaced file: no data is copied) so undo can restore it. Blobs are written
//! to a temporary name and renamed into place, so a reader never sees half a blob; a pack is
//! named by no record until its preview is staged. Every read checks the content against its
//! hash: a damaged or missing blob is [`StoreError::CorruptState`], never silently used. Blobs
//! and packs no record needs are removed an hour after they were written (see
//! [`Store::collect_garbage`](crate::Store::collect_garbage)). Packs and blobs are not synced
//! when a preview writes them (a preview survives a killed process, and its apply writes and
//! syncs the targets from them); originals kept by an apply are durable before it commits.
//! A preview's scratch files (the spool of a large change set) live here too, without a name,
//! so they never outlive the process.

use std::borrow::Cow;
use std::collections::HashSet;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime};

use crate::change_set::Content;
use crate::error::StoreError;
use crate::fs;
use crate::hash::{Hasher, content_hash, is_sha256_hex};
use crate::workspace::Workspace;

/// The blob store of one workspace.
#[derive(Debug, Clone)]
pub struct Blobs {
    workspace: Workspace,
    dir: PathBuf,
    /// Set once the directories are known to exist.
    dir_ready: Arc<OnceLock<()>>,
}

impl Blobs {
    /// The blobs of `workspace`; nothing is created until a blob is written.
    pub fn of(workspace: &Workspace) -> Self {
        Self {
            workspace: workspace.clone(),
            dir: workspace.layout().blobs_dir(),
            dir_ready: Arc::new(OnceLock::new()),
        }
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The bytes of `content`, read from the store when kept there (and checked against the
    /// name).
    pub fn read<'a>(&self, content: &'a Content) -> Result<Cow<'a, [u8]>, StoreError> {
        match content {
            Content::Text(text) => Ok(Cow::Borrowed(text.as_bytes())),
            Content::Stored { blob } => self.read_blob(blob).map(Cow::Owned),
            Content::Packed {
                pack,
                offset,
                len,
                hash,
            } => self.read_packed(pack, *offset, *len, hash).map(Cow::Owned),
        }
    }

    /// Whether the store still holds `content` (a text always is): the contents of a
    /// discarded or undone action go at the next clean-up while its record stays in history.
    pub fn holds(&self, content: &Content) -> Result<bool, StoreError> {
        match content.blob_name() {
            None => Ok(true),
            Some(name) => fs::exists(&self.path(name)?),
        }
    }

    /// `content` as text (a byte that is not UTF-8 shows as U+FFFD), read from the store when
    /// kept there.
    pub fn read_text(&self, content: &Content) -> Result<String, StoreError> {
        match content {
            Content::Text(text) => Ok(text.clone()),
            Content::Stored { .. } | Content::Packed { .. } => {
                let bytes = self.read(content)?.into_owned();
                Ok(String::from_utf8(bytes)
                    .unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into_owned()))
            }
        }
    }

    /// A reader of `content`, for streaming it out (a blob is not checked against its name on
    /// this path; [`Blobs::read`] checks it).
    pub fn open<'a>(&self, content: &'a Content) -> Result<Box<dyn Read + 'a>, StoreError> {
        match content {
            Content::Text(text) => Ok(Box::new(text.as_bytes())),
            Content::Stored { blob } => Ok(Box::new(self.open_blob(blob)?)),
            Content::Packed { .. } => Ok(Box::new(std::io::Cursor::new(
                self.read(content)?.into_owned(),
            ))),
        }
    }

    /// `content` kept in the store: a text is written here and replaced by its name; a kept
    /// content must still be here.
    pub fn intern(&self, content: &mut Content) -> Result<(), StoreError> {
        match content {
            Content::Text(text) => {
                *content = Content::Stored {
                    blob: self.put(text.as_bytes())?,
                };
                Ok(())
            }
            Content::Stored { blob } => self.require(blob),
            Content::Packed { pack, .. } => self.require(pack),
        }
    }

    /// Keep `bytes`; returns their hash (the blob's name).
    pub fn put(&self, bytes: &[u8]) -> Result<String, StoreError> {
        let mut writer = self.writer()?;
        writer.append(bytes)?;
        writer.finish()
    }

    /// A blob written piece by piece: what is written is hashed on the way, and the blob takes
    /// its name when finished.
    pub fn writer(&self) -> Result<BlobWriter, StoreError> {
        self.ensure_dir()?;
        Ok(BlobWriter {
            file: BufWriter::with_capacity(64 * 1024, fs::temp_file_in(&self.dir)?),
            hasher: Hasher::default(),
            dir: self.dir.clone(),
        })
    }

    /// A new pack under a fresh name, for one writer to append contents to.
    pub fn create_pack(&self) -> Result<PackWriter, StoreError> {
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
    pub(crate) fn scratch_file(&self) -> Result<std::fs::File, StoreError> {
        self.ensure_dir()?;
        fs::scratch_file_in(&self.dir)
    }

    /// The `len` bytes at `offset` of the pack `pack`, checked against `hash`.
    fn read_packed(
        &self,
        pack: &str,
        offset: u64,
        len: u64,
        hash: &str,
    ) -> Result<Vec<u8>, StoreError> {
        let path = self.path(pack)?;
        let file = fs::open_existing(&path)?.ok_or_else(|| missing(path.clone()))?;
        // A damaged record may name any range; nothing is allocated for one the pack lacks.
        let out_of_range = || StoreError::CorruptState {
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

    /// Move the file at `source`, which hashes to `hash` and which nothing but the store
    /// holds (a journal backup), into the store as that blob: one rename, replacing a blob of
    /// the same content if there is one. A `source` already gone was moved by an earlier try.
    /// Where the store is on another file system its content is copied in instead. Returns the
    /// path of such a copy, which the caller must sync, or `None` when only the directory needs
    /// syncing.
    pub(crate) fn move_in(&self, source: &Path, hash: &str) -> Result<Option<PathBuf>, StoreError> {
        let path = self.path(hash)?;
        self.ensure_dir()?;
        match fs::move_file(source, &path)? {
            fs::Moved::Done | fs::Moved::Absent => Ok(None),
            fs::Moved::OtherFileSystem => {
                let bytes = fs::read_bytes(source)?.ok_or_else(|| missing(source.to_path_buf()))?;
                self.put(&bytes)?;
                Ok(Some(path))
            }
        }
    }

    /// The path of the blob or pack `name`; a name that is neither a SHA-256 in hex nor a
    /// pack's name is corrupt state (a record naming `../x` must not reach outside the
    /// directory).
    pub(crate) fn path(&self, name: &str) -> Result<PathBuf, StoreError> {
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
            Err(StoreError::CorruptState {
                path: self.dir.clone(),
                reason: format!(
                    "a record names the blob `{name}`, which is neither a SHA-256 nor a pack"
                ),
            })
        }
    }

    /// The blob named `hash`, opened for reading.
    fn open_blob(&self, hash: &str) -> Result<std::fs::File, StoreError> {
        let path = self.path(hash)?;
        fs::open_existing(&path)?.ok_or_else(|| missing(path))
    }

    /// Fail unless the blob named `hash` is there (a preview held past
    /// [`BLOB_GRACE`](crate::BLOB_GRACE) may have lost its contents to a clean-up).
    fn require(&self, hash: &str) -> Result<(), StoreError> {
        let path = self.path(hash)?;
        if fs::exists(&path)? {
            Ok(())
        } else {
            Err(missing(path))
        }
    }

    /// The content of the blob named `hash`, checked against it.
    pub(crate) fn read_blob(&self, hash: &str) -> Result<Vec<u8>, StoreError> {
        let path = self.path(hash)?;
        let bytes = fs::read_bytes(&path)?.ok_or_else(|| missing(path.clone()))?;
        self.check(&path, hash, &bytes)?;
        Ok(bytes)
    }

    fn check(&self, path: &Path, hash: &str, bytes: &[u8]) -> Result<(), StoreError> {
        if content_hash(bytes) == hash {
            Ok(())
        } else {
            Err(StoreError::CorruptState {
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
    ) -> Result<usize, StoreError> {
        let files = self.unneeded_files(needed, grace)?;
        fs::remove_files(files.into_iter().map(|(path, _)| path))
    }

    /// What [`Blobs::remove_unneeded`] would remove: how many files, and their bytes.
    pub(crate) fn unneeded(
        &self,
        needed: &HashSet<String>,
        grace: Duration,
    ) -> Result<(usize, u64), StoreError> {
        let files = self.unneeded_files(needed, grace)?;
        Ok((files.len(), files.iter().map(|(_, size)| size).sum()))
    }

    /// The files [`Blobs::remove_unneeded`] removes, with their sizes.
    fn unneeded_files(
        &self,
        needed: &HashSet<String>,
        grace: Duration,
    ) -> Result<Vec<(PathBuf, u64)>, StoreError> {
        let now = SystemTime::now();
        let mut files = Vec::new();
        for name in fs::list_dir(&self.dir)? {
            let path = self.dir.join(&name);
            let unneeded = match self.path(&name) {
                Ok(_) => !needed.contains(&name),
                Err(_) => name.starts_with(".resolve-") && name.ends_with(".partial"),
            };
            let old = fs::modified(&path)?
                .is_some_and(|modified| now.duration_since(modified).is_ok_and(|age| age > grace));
            if unneeded && old {
                let size = fs::file_size(&path)?;
                files.push((path, size));
            }
        }
        Ok(files)
    }

    /// Whether unneeded blobs were removed less than `period` ago (see
    /// [`Blobs::mark_collected`]).
    pub(crate) fn collected_within(&self, period: Duration) -> bool {
        let stamp = fs::modified(&self.workspace.layout().collected_stamp())
            .ok()
            .flatten();
        stamp.is_some_and(|stamp| {
            SystemTime::now()
                .duration_since(stamp)
                .is_ok_and(|age| age < period)
        })
    }

    /// Record that unneeded blobs were just removed.
    pub(crate) fn mark_collected(&self) -> Result<(), StoreError> {
        self.ensure_dir()?;
        fs::write_new(&self.workspace.layout().collected_stamp(), b"", None)
    }

    /// Create the state directory (with its `.gitignore`) and the blob directory, once.
    fn ensure_dir(&self) -> Result<(), StoreError> {
        if self.dir_ready.get().is_none() {
            self.workspace.layout().ensure()?;
            fs::create_dir_all(&self.dir)?;
            let _ = self.dir_ready.set(());
        }
        Ok(())
    }
}

/// Packs are named `pack-<pid>-<nanos>-<n>`.
const PACK_PREFIX: &str = "pack-";

/// A pack being filled: the new contents (and the diffs) one walker thread computed for one
/// preview, appended one after another. A record names a content in it by offset, length and
/// hash ([`Content::Packed`](crate::Content::Packed)). A preview thus creates one file per
/// thread, not one per changed file. One writer appends at a time; what it appended can be read
/// back through [`Pack`] by anyone holding it.
pub struct PackWriter {
    pack: Arc<Pack>,
    len: u64,
}

impl PackWriter {
    /// The pack being written.
    pub fn pack(&self) -> &Arc<Pack> {
        &self.pack
    }

    /// Append `bytes`; returns their offset.
    pub fn append(&mut self, bytes: &[u8]) -> Result<u64, StoreError> {
        let offset = self.len;
        fs::append(&self.pack.file, &self.pack.path, bytes)?;
        self.len += bytes.len() as u64;
        Ok(offset)
    }
}

/// A pack's file, open for reading back what its writer appended.
#[derive(Debug)]
pub struct Pack {
    name: String,
    path: PathBuf,
    file: std::fs::File,
}

impl Pack {
    /// Its name in the blob directory.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Read back the `len` bytes appended at `offset`.
    pub fn read(&self, offset: u64, len: usize) -> Result<Vec<u8>, StoreError> {
        let mut bytes = vec![0; len];
        fs::read_at(&self.file, &self.path, offset, &mut bytes)?;
        Ok(bytes)
    }
}

/// The error for a blob a record names that is not there.
fn missing(path: PathBuf) -> StoreError {
    StoreError::CorruptState {
        path,
        reason: "the content a record names is missing".to_owned(),
    }
}

/// A blob being written; see [`Blobs::writer`]. Dropped unfinished, it leaves nothing.
pub struct BlobWriter {
    file: BufWriter<tempfile::NamedTempFile>,
    hasher: Hasher,
    dir: PathBuf,
}

/// What is written is hashed on the way; an error names the blob directory.
impl Write for BlobWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let written = self.file.write(bytes)?;
        self.hasher.update(&bytes[..written]);
        Ok(written)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

impl BlobWriter {
    /// Append `bytes`.
    fn append(&mut self, bytes: &[u8]) -> Result<(), StoreError> {
        self.write_all(bytes).map_err(|source| self.error(source))
    }

    /// Name the blob by its hash (replacing an identical one) and return the hash.
    pub fn finish(self) -> Result<String, StoreError> {
        let hash = self.hasher.finish();
        let file = self
            .file
            .into_inner()
            .map_err(|error| StoreError::io("write a blob in", &self.dir, error.into_error()))?;
        fs::persist(file, &self.dir.join(&hash))?;
        Ok(hash)
    }

    /// An error writing this blob.
    pub fn error(&self, source: std::io::Error) -> StoreError {
        StoreError::io("write a blob in", &self.dir, source)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::temp_workspace;

    fn blobs() -> (tempfile::TempDir, Blobs) {
        let (dir, workspace) = temp_workspace();
        let blobs = Blobs::of(&workspace);
        (dir, blobs)
    }

    #[test]
    fn a_blob_is_named_by_its_hash_and_reads_back() {
        let (_dir, blobs) = blobs();
        let hash = blobs.put(b"fn main() {}\n").unwrap();
        assert_eq!(hash, content_hash(b"fn main() {}\n"));
        assert_eq!(blobs.read_blob(&hash).unwrap(), b"fn main() {}\n");
        assert_eq!(blobs.put(b"fn main() {}\n").unwrap(), hash);
    }

    #[test]
    fn a_damaged_or_missing_blob_is_corrupt_state() {
        let (_dir, blobs) = blobs();
        let hash = blobs.put(b"original").unwrap();
        std::fs::write(blobs.path(&hash).unwrap(), b"tampered").unwrap();
        let error = blobs.read_blob(&hash).unwrap_err();
        assert!(
            error.to_string().contains("does not match its name"),
            "{error}"
        );
        let missing = content_hash(b"never written");
        let error = blobs.read_blob(&missing).unwrap_err();
        assert!(error.to_string().contains("is missing"), "{error}");
    }

    #[test]
    fn a_name_that_is_not_a_hash_never_reaches_outside() {
        let (_dir, blobs) = blobs();
        for name in ["../../etc/passwd", "", &"A".repeat(64)] {
            let error = blobs.read_blob(name).unwrap_err();
            assert!(matches!(error, StoreError::CorruptState { .. }), "{error}");
        }
    }

    #[test]
    fn a_file_moved_in_is_the_blob_and_moving_it_again_does_nothing() {
        let (dir, blobs) = blobs();
        let file = dir.path().join("backup-0");
        std::fs::write(&file, b"old").unwrap();
        let hash = content_hash(b"old");
        assert_eq!(blobs.move_in(&file, &hash).unwrap(), None);
        assert!(!file.exists());
        assert_eq!(blobs.read_blob(&hash).unwrap(), b"old");
        // A retry after a crash finds the backup gone and the blob in place.
        assert_eq!(blobs.move_in(&file, &hash).unwrap(), None);
        assert_eq!(blobs.read_blob(&hash).unwrap(), b"old");
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
        assert_eq!(blobs.read_blob(&needed).unwrap(), b"needed");
        assert!(blobs.read_blob(&unneeded).is_err());
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
