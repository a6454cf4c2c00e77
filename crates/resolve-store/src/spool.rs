//! Change sets written out as they are computed: a producer adds each file's change in path
//! order to a [`ChangeSetWriter`], and what it gets back, a [`SpooledChangeSet`], keeps the
//! changes in a spool rather than in memory. Staging serializes the pending record's change set
//! straight from the spool, and a result lists the files from it, so neither a preview nor its
//! staging holds something that grows with the files it touches.
//!
//! A spool is one JSON line per change (`[path, replacements, change]`); it stays in memory up
//! to [`SPOOL_IN_MEMORY`] bytes (a one-file edit never touches the disk for it) and then moves
//! to a file with no name in the blob directory, which is gone when the spool is dropped or the
//! process dies. Contents are put in the blob store as changes are added, so a spooled change
//! set names every content by hash, as a staged one must; so is the base each update was
//! computed from, named by its hash, which a rebase at apply merges from.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::HashSet;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};

use serde::ser::{Error as _, SerializeMap, SerializeSeq, SerializeStruct};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::value::RawValue;

use crate::blobs::Blobs;
use crate::change_set::{ChangeSet, Content, FileChange, Fingerprint, path_order};
use crate::error::{Invariant, StoreError};
use crate::hash::content_hash;
use crate::workspace::Workspace;

/// How many bytes of a spool stay in memory before it moves to a file.
const SPOOL_IN_MEMORY: usize = 64 * 1024;

/// Writes a change set change by change, in [`path_order`], into a spool.
pub struct ChangeSetWriter {
    workspace: Workspace,
    blobs: Blobs,
    spool: SpoolWriter,
    /// The line being written, reused from change to change.
    line: Vec<u8>,
    /// The path of the last change added.
    last: Option<String>,
    fingerprint: Fingerprint,
    files: usize,
    replacements: usize,
    /// Blobs and packs already known to be in the store.
    present: HashSet<String>,
}

impl ChangeSetWriter {
    /// An empty change set whose contents go to the blob store of `workspace`.
    pub fn new(workspace: &Workspace) -> Self {
        let blobs = Blobs::of(workspace);
        Self {
            workspace: workspace.clone(),
            spool: SpoolWriter::new(blobs.clone()),
            blobs,
            line: Vec::new(),
            last: None,
            fingerprint: Fingerprint::default(),
            files: 0,
            replacements: 0,
            present: HashSet::new(),
        }
    }

    /// Add the change of `path`, which must come after every path added so far; an inline
    /// content is put in the blob store, a stored one must be there.
    pub fn push(&mut self, path: &str, mut change: FileChange) -> Result<(), StoreError> {
        match &mut self.last {
            Some(last) if path_order(last, path) != Ordering::Less => {
                return Err(Invariant::OutOfPathOrder {
                    path: path.to_owned(),
                    last: last.clone(),
                }
                .into());
            }
            Some(last) => path.clone_into(last),
            None => self.last = Some(path.to_owned()),
        }
        if let FileChange::Create { content } | FileChange::Update { content, .. } = &mut change {
            self.intern(content)?;
        }
        match &mut change {
            FileChange::Update {
                base: Some(base), ..
            } => self.intern(base)?,
            FileChange::Update {
                base_hash,
                base: None,
                ..
            } if !self.present.contains(base_hash.as_str()) => self.keep_base(path, base_hash)?,
            _ => {}
        }
        self.fingerprint.add(path, &change);
        self.files += 1;
        self.replacements += change.replacements();
        self.line.clear();
        serde_json::to_writer(&mut self.line, &(path, change.replacements(), &change))
            .map_err(|error| spool_error(&self.blobs, error.into()))?;
        self.line.push(b'\n');
        self.spool.write(&self.line)
    }

    /// `content` kept in the blob store (see [`Blobs::intern`]), unless this change set already
    /// made sure of it.
    fn intern(&mut self, content: &mut Content) -> Result<(), StoreError> {
        if content
            .blob_name()
            .is_none_or(|name| !self.present.contains(name))
        {
            self.blobs.intern(content)?;
            self.present.extend(content.blob_name().map(str::to_owned));
        }
        Ok(())
    }

    /// Keep the bytes `path` holds in the blob store when they are the base `base_hash` an
    /// update was computed from, so that an apply after the file moved can rebase the update
    /// onto it. A file that already moved (or cannot be read) keeps no base; such an update
    /// can only apply to its base.
    fn keep_base(&mut self, path: &str, base_hash: &str) -> Result<(), StoreError> {
        let bytes = self
            .workspace
            .resolve(path)
            .and_then(|resolved| crate::fs::read_bytes(&resolved.real));
        if let Ok(Some(bytes)) = bytes
            && content_hash(&bytes) == base_hash
        {
            self.blobs.put(&bytes)?;
            self.present.insert(base_hash.to_owned());
        }
        Ok(())
    }

    /// The change set written.
    pub fn finish(self) -> Result<SpooledChangeSet, StoreError> {
        Ok(SpooledChangeSet {
            spool: self.spool.finish()?,
            files: self.files,
            replacements: self.replacements,
            fingerprint: self.fingerprint.finish(),
        })
    }
}

/// A change set kept in a spool (see the module docs): what a producer's preview carries and
/// [`Store::stage_spooled`](crate::Store::stage_spooled) writes into the pending record. It serializes as a [`ChangeSet`] does, read from the spool as it goes.
pub struct SpooledChangeSet {
    spool: Spool,
    files: usize,
    replacements: usize,
    fingerprint: String,
}

impl SpooledChangeSet {
    /// How many files are touched.
    pub fn len(&self) -> usize {
        self.files
    }

    /// Whether nothing is touched.
    pub fn is_empty(&self) -> bool {
        self.files == 0
    }

    /// The files with their replacements, to serialize as `[{"path": …, "count": …}, …]`
    /// straight from the spool (an `ast_edit` result's `fileReplacements`).
    pub fn file_counts(&self) -> FileCounts<'_> {
        FileCounts(self)
    }

    /// Total replacements over all files.
    pub fn total_replacements(&self) -> usize {
        self.replacements
    }

    /// [`ChangeSet::fingerprint`] of the change set.
    pub fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    /// The whole change set, read into memory.
    pub fn load(&self) -> Result<ChangeSet, StoreError> {
        let mut set = ChangeSet::with_capacity(self.files);
        for file in self.changes() {
            let (path, change) = file?;
            set.insert(path, change);
        }
        Ok(set)
    }

    /// Hand every file and its change to `visit`, in order, read from the spool one at a time
    /// (never the whole change set at once); a spool that cannot be read fails with
    /// `spool_error` of why.
    pub fn for_each_file<E>(
        &self,
        spool_error: impl Fn(StoreError) -> E,
        mut visit: impl FnMut(&str, &FileChange) -> Result<(), E>,
    ) -> Result<(), E> {
        for file in self.changes() {
            let (path, change) = file.map_err(&spool_error)?;
            visit(&path, &change)?;
        }
        Ok(())
    }

    /// Every file and its change, in order, read from the spool one at a time (for a caller
    /// that hands them on, as [`SpooledChangeSet::for_each_file`] cannot); a line that does not
    /// parse is an error in its place, and reading stops after an error of the spool itself.
    pub fn changes(&self) -> impl Iterator<Item = Result<(String, FileChange), StoreError>> + '_ {
        self.lines().map(|line| {
            let (path, _, change): (String, usize, FileChange) =
                serde_json::from_str(&line?).map_err(|error| self.error(error.into()))?;
            Ok((path, change))
        })
    }

    /// Hand every line of the spool to `visit`, in order; a spool that cannot be read fails
    /// with `spool_error` of why.
    fn for_each_line<E>(
        &self,
        spool_error: impl Fn(StoreError) -> E,
        mut visit: impl FnMut(&str) -> Result<(), E>,
    ) -> Result<(), E> {
        for line in self.lines() {
            visit(&line.map_err(&spool_error)?)?;
        }
        Ok(())
    }

    /// The spool's lines, in order, each without its newline; nothing after the first error.
    fn lines(&self) -> impl Iterator<Item = Result<String, StoreError>> + '_ {
        let mut reader = Some(BufReader::with_capacity(64 * 1024, self.spool.reader()));
        std::iter::from_fn(move || {
            let mut line = String::new();
            match reader.as_mut()?.read_line(&mut line) {
                Ok(0) => None,
                Ok(_) => {
                    line.truncate(line.trim_end_matches('\n').len());
                    Some(Ok(line))
                }
                Err(error) => {
                    reader = None;
                    Some(Err(self.error(error)))
                }
            }
        })
    }

    fn error(&self, error: std::io::Error) -> StoreError {
        spool_error(&self.spool.blobs, error)
    }
}

impl std::fmt::Debug for SpooledChangeSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpooledChangeSet")
            .field("files", &self.files)
            .field("replacements", &self.replacements)
            .field("fingerprint", &self.fingerprint)
            .finish_non_exhaustive()
    }
}

/// One line of a spool, read without copying the change.
#[derive(Deserialize)]
struct Line<'a>(
    #[serde(borrow)] Cow<'a, str>,
    usize,
    #[serde(borrow)] &'a RawValue,
);

impl Serialize for SpooledChangeSet {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        struct Files<'a>(&'a SpooledChangeSet);
        impl Serialize for Files<'_> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let mut map = serializer.serialize_map(Some(self.0.files))?;
                self.0.for_each_line(S::Error::custom, |line| {
                    let Line(path, _, change) =
                        serde_json::from_str(line).map_err(S::Error::custom)?;
                    map.serialize_entry(&path, change)
                })?;
                map.end()
            }
        }
        let mut shape = serializer.serialize_struct("ChangeSet", 1)?;
        shape.serialize_field("files", &Files(self))?;
        shape.end()
    }
}

/// The files of a spooled change set with their replacements, serialized as
/// `[{"path": …, "count": …}, …]` straight from the spool (see
/// [`SpooledChangeSet::file_counts`]).
#[derive(Debug, Clone, Copy)]
pub struct FileCounts<'a>(&'a SpooledChangeSet);

impl Serialize for FileCounts<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Entry<'a> {
            path: &'a str,
            count: usize,
        }
        let mut seq = serializer.serialize_seq(Some(self.0.files))?;
        self.0.for_each_line(S::Error::custom, |line| {
            let Line(path, count, _) = serde_json::from_str(line).map_err(S::Error::custom)?;
            seq.serialize_element(&Entry { path: &path, count })
        })?;
        seq.end()
    }
}

impl ChangeSet {
    /// This change set in a spool, its contents put in the blob store of `workspace`.
    pub fn into_spooled(self, workspace: &Workspace) -> Result<SpooledChangeSet, StoreError> {
        let mut writer = ChangeSetWriter::new(workspace);
        for (path, change) in self.into_files() {
            writer.push(&path, change)?;
        }
        writer.finish()
    }
}

/// The bytes of a spool being written.
struct SpoolWriter {
    blobs: Blobs,
    memory: Vec<u8>,
    file: Option<BufWriter<File>>,
}

impl SpoolWriter {
    fn new(blobs: Blobs) -> Self {
        Self {
            blobs,
            memory: Vec::new(),
            file: None,
        }
    }

    fn write(&mut self, bytes: &[u8]) -> Result<(), StoreError> {
        if self.file.is_none() && self.memory.len() + bytes.len() > SPOOL_IN_MEMORY {
            let mut file = BufWriter::with_capacity(64 * 1024, self.blobs.scratch_file()?);
            file.write_all(&self.memory)
                .map_err(|error| spool_error(&self.blobs, error))?;
            self.memory = Vec::new();
            self.file = Some(file);
        }
        match &mut self.file {
            Some(file) => file
                .write_all(bytes)
                .map_err(|error| spool_error(&self.blobs, error)),
            None => {
                self.memory.extend_from_slice(bytes);
                Ok(())
            }
        }
    }

    fn finish(self) -> Result<Spool, StoreError> {
        let content = match self.file {
            None => SpoolContent::Memory(self.memory),
            Some(file) => SpoolContent::File(
                file.into_inner()
                    .map_err(|error| spool_error(&self.blobs, error.into_error()))?,
            ),
        };
        Ok(Spool {
            blobs: self.blobs,
            content,
        })
    }
}

/// The bytes of a finished spool, read from the start by each reader.
struct Spool {
    blobs: Blobs,
    content: SpoolContent,
}

enum SpoolContent {
    Memory(Vec<u8>),
    File(File),
}

impl Spool {
    fn reader(&self) -> Box<dyn Read + '_> {
        match &self.content {
            SpoolContent::Memory(bytes) => Box::new(bytes.as_slice()),
            SpoolContent::File(file) => Box::new(FileFrom { file, offset: 0 }),
        }
    }
}

/// Reads `file` from `offset` on without moving the file's own position, so any number of
/// readers can each read it from the start.
struct FileFrom<'a> {
    file: &'a File,
    offset: u64,
}

impl Read for FileFrom<'_> {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        use std::os::unix::fs::FileExt;
        let read = self.file.read_at(buffer, self.offset)?;
        self.offset += read as u64;
        Ok(read)
    }
}

/// A spool that could not be written or read.
fn spool_error(blobs: &Blobs, error: std::io::Error) -> StoreError {
    StoreError::io("write or read a spooled change set in", blobs.dir(), error)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::change_set::Content;
    use crate::hash::content_hash;
    use crate::test_support::temp_workspace;

    fn update(text: &str, replacements: usize) -> FileChange {
        FileChange::update(content_hash(b"old"), text.into(), replacements)
    }

    #[test]
    fn a_spooled_set_serializes_and_loads_as_the_set_it_was_written_from() {
        let (_dir, workspace) = temp_workspace();
        let mut set = ChangeSet::new();
        set.insert("b.rs", update("b", 2));
        set.insert("a/x.rs", update("quote \" and \\ and\nnewline", 1));
        set.insert(
            "new \"file\".txt",
            FileChange::Create {
                content: "x".into(),
            },
        );
        let fingerprint = set.fingerprint();
        let spooled = set.into_spooled(&workspace).unwrap();
        assert_eq!(spooled.len(), 3);
        assert_eq!(spooled.total_replacements(), 4);
        assert_eq!(spooled.fingerprint(), fingerprint);

        let loaded = spooled.load().unwrap();
        assert_eq!(loaded.paths(), ["a/x.rs", "b.rs", "new \"file\".txt"]);
        let Some(FileChange::Update { content, .. }) = loaded.get("a/x.rs") else {
            panic!("{loaded:?}");
        };
        assert_eq!(
            content,
            &Content::Stored {
                blob: content_hash(b"quote \" and \\ and\nnewline")
            },
            "an inline content is put in the blob store"
        );
        assert_eq!(
            Blobs::of(&workspace).read(content).unwrap().as_ref(),
            b"quote \" and \\ and\nnewline"
        );
        assert_eq!(
            serde_json::to_value(&spooled).unwrap(),
            serde_json::to_value(&loaded).unwrap()
        );
        assert_eq!(
            serde_json::to_value(spooled.file_counts()).unwrap(),
            serde_json::json!([
                {"path": "a/x.rs", "count": 1},
                {"path": "b.rs", "count": 2},
                {"path": "new \"file\".txt", "count": 1}
            ])
        );
    }

    #[test]
    fn a_large_spool_moves_to_a_file_that_leaves_nothing_behind() {
        let (_dir, workspace) = temp_workspace();
        let mut writer = ChangeSetWriter::new(&workspace);
        let count = 2 * SPOOL_IN_MEMORY / 100;
        for index in 0..count {
            writer
                .push(
                    &format!("src/f{index:06}.rs"),
                    update(&index.to_string(), 1),
                )
                .unwrap();
        }
        let spooled = writer.finish().unwrap();
        assert!(matches!(spooled.spool.content, SpoolContent::File(_)));
        let loaded = spooled.load().unwrap();
        assert_eq!(loaded.len(), count);
        assert_eq!(loaded.fingerprint(), spooled.fingerprint());
        // Two readers, one after the other, both read from the start.
        assert_eq!(spooled.load().unwrap(), loaded);
        drop(spooled);
        let blobs = workspace.layout().blobs_dir();
        let left: Vec<String> = crate::fs::list_dir(&blobs).unwrap();
        assert_eq!(
            left.len(),
            count,
            "only the contents' blobs remain: {left:?}"
        );
    }

    #[test]
    fn changes_out_of_path_order_are_refused() {
        let (_dir, workspace) = temp_workspace();
        let mut writer = ChangeSetWriter::new(&workspace);
        writer.push("a.rs", update("1", 1)).unwrap();
        for path in ["a.rs", "a/b.rs"] {
            let error = writer.push(path, update("2", 1)).unwrap_err();
            assert!(error.to_string().contains("path order"), "{error}");
        }
        assert_eq!(writer.finish().unwrap().len(), 1);
    }
}
