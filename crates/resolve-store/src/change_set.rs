//! A change set: the exact new content of every file a preview touches, with the hash of the
//! content each change was computed from. Previews, pending actions and apply all read this one
//! value; applying it is a separate step (see the transaction module). Contents are named by
//! hash once they are in the blob store, so a change set stays small however much it changes.
//! Paths are kept in [`path_order`], the order of a sorted walk of the tree; a preview writes
//! its change set to disk in that order as it computes it (see the spool module).

use std::borrow::Cow;
use std::cmp::Ordering;

use serde::{Deserialize, Serialize};

use crate::error::StoreError;
use crate::hash::{Hasher, content_hash};

/// The order of root-relative paths: component by component, as a walk that visits each
/// directory's entries sorted by name meets them (`a/b.rs` before `a.rs`, which plain string
/// order puts first because `.` sorts before `/`).
pub fn path_order(a: &str, b: &str) -> Ordering {
    a.split('/').cmp(b.split('/'))
}

/// A file's content in a change set or a history record: the text itself (a change not yet
/// staged; staging moves it to the blob store), or the name of what holds it under
/// `.resolve/blobs/`. Reading it is the blob store's ([`Blobs::read`](crate::Blobs::read)).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Content {
    /// The text, inline.
    Text(String),
    /// Kept in the blob store.
    Stored {
        /// The SHA-256 of the content, which names its blob.
        blob: String,
    },
    /// Kept in a pack of the blob store, with other contents of the same preview.
    Packed {
        /// The pack's name.
        pack: String,
        /// Where the content starts in the pack.
        offset: u64,
        /// Its length in bytes.
        len: u64,
        /// Its SHA-256, checked when it is read.
        hash: String,
    },
}

impl Content {
    /// The SHA-256 of the content, in lowercase hex.
    pub fn hash(&self) -> Cow<'_, str> {
        match self {
            Self::Text(text) => Cow::Owned(content_hash(text.as_bytes())),
            Self::Stored { blob } => Cow::Borrowed(blob),
            Self::Packed { hash, .. } => Cow::Borrowed(hash),
        }
    }

    /// The name of the blob or pack holding the content, when it is not inline.
    pub fn blob_name(&self) -> Option<&str> {
        match self {
            Self::Text(_) => None,
            Self::Stored { blob } => Some(blob),
            Self::Packed { pack, .. } => Some(pack),
        }
    }
}

impl From<String> for Content {
    fn from(text: String) -> Self {
        Self::Text(text)
    }
}

impl From<&str> for Content {
    fn from(text: &str) -> Self {
        Self::Text(text.to_owned())
    }
}

/// What happens to one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FileChange {
    /// Create a file that must not exist yet.
    Create {
        /// Its content.
        content: Content,
    },
    /// Replace the content of an existing file whose content hashes to `base_hash`.
    Update {
        /// Hash of the content the change was computed from.
        base_hash: String,
        /// The exact new content.
        content: Content,
        /// How many spans were replaced (for counts in texts).
        replacements: usize,
        /// Where the preview kept the content the change was computed from, when it kept it
        /// with its new contents (a pack); otherwise a kept base is the blob named
        /// `base_hash` (see [`FileChange::kept_base`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        base: Option<Content>,
    },
    /// Remove an existing file whose content hashes to `base_hash`.
    Delete {
        /// Hash of the content the change was computed from.
        base_hash: String,
    },
}

impl FileChange {
    /// An update of a file whose content hashes to `base_hash` to `content`, its base kept (if
    /// at all) as the blob named `base_hash`.
    pub fn update(base_hash: String, content: Content, replacements: usize) -> Self {
        Self::Update {
            base_hash,
            content,
            replacements,
            base: None,
        }
    }

    /// Where the content the change was computed from is kept, when the store may hold it: a
    /// pack for an update whose preview packed it, else the blob named by its base hash (which
    /// may be gone: check with [`Blobs::holds`](crate::Blobs::holds)); `None` for a create.
    pub fn kept_base(&self) -> Option<Content> {
        match self {
            Self::Create { .. } => None,
            Self::Update {
                base: Some(base), ..
            } => Some(base.clone()),
            Self::Update { base_hash, .. } | Self::Delete { base_hash } => Some(Content::Stored {
                blob: base_hash.clone(),
            }),
        }
    }

    /// The base hash the file must still have, or `None` when the file must not exist.
    pub fn base_hash(&self) -> Option<&str> {
        match self {
            Self::Create { .. } => None,
            Self::Update { base_hash, .. } | Self::Delete { base_hash } => Some(base_hash),
        }
    }

    /// The content after the change, or `None` for a delete.
    pub fn new_content(&self) -> Option<&Content> {
        match self {
            Self::Create { content } | Self::Update { content, .. } => Some(content),
            Self::Delete { .. } => None,
        }
    }

    /// Replacements this change makes (1 for a create or delete).
    pub fn replacements(&self) -> usize {
        match self {
            Self::Update { replacements, .. } => *replacements,
            Self::Create { .. } | Self::Delete { .. } => 1,
        }
    }
}

/// Every file change of one preview, keyed by path relative to the workspace root
/// (`/`-separated), in [`path_order`].
///
/// Kept as one list sorted by path rather than a map: a whole-tree change names every file of
/// the tree, and a map's half-full nodes would cost about as much again as the changes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ChangeSet {
    /// Sorted in [`path_order`], one change per path.
    files: Vec<(String, FileChange)>,
}

/// The stored shape of a [`ChangeSet`]: `{"files": {path: change, ...}}`.
#[derive(Serialize, Deserialize)]
struct ChangeSetShape<Files> {
    files: Files,
}

impl Serialize for ChangeSet {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        struct Files<'a>(&'a [(String, FileChange)]);
        impl Serialize for Files<'_> {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_map(self.0.iter().map(|(path, change)| (path, change)))
            }
        }
        ChangeSetShape {
            files: Files(&self.files),
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ChangeSet {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        /// The entries of the `files` map, in the order stored.
        struct Files(Vec<(String, FileChange)>);
        impl<'de> Deserialize<'de> for Files {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct Entries;
                impl<'de> serde::de::Visitor<'de> for Entries {
                    type Value = Files;
                    fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
                        formatter.write_str("a map of paths to file changes")
                    }
                    fn visit_map<A: serde::de::MapAccess<'de>>(
                        self,
                        mut map: A,
                    ) -> Result<Files, A::Error> {
                        let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0));
                        while let Some(entry) = map.next_entry()? {
                            entries.push(entry);
                        }
                        Ok(Files(entries))
                    }
                }
                deserializer.deserialize_map(Entries)
            }
        }
        let ChangeSetShape {
            files: Files(mut files),
        } = ChangeSetShape::deserialize(deserializer)?;
        // A stored set is written in path order, one change per path; the lookups rely on it.
        if let Some(pair) = files
            .windows(2)
            .find(|pair| path_order(&pair[0].0, &pair[1].0) != Ordering::Less)
        {
            return Err(serde::de::Error::custom(format_args!(
                "the change of `{}` follows that of `{}`; a change set lists each path once, in path order",
                pair[1].0, pair[0].0
            )));
        }
        files.shrink_to_fit();
        Ok(ChangeSet { files })
    }
}

impl ChangeSet {
    /// An empty change set.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty change set with room for `files` changes.
    pub fn with_capacity(files: usize) -> Self {
        Self {
            files: Vec::with_capacity(files),
        }
    }

    /// Add (or replace) the change of `path` (relative, `/`-separated).
    pub fn insert(&mut self, path: impl Into<String>, change: FileChange) {
        let path = path.into();
        // Producers add paths in order, so this is mostly a push.
        match self.files.last() {
            Some((last, _)) if path_order(last, &path) == Ordering::Less => {
                self.files.push((path, change));
            }
            None => self.files.push((path, change)),
            Some(_) => match self.position(&path) {
                Ok(at) => self.files[at].1 = change,
                Err(at) => self.files.insert(at, (path, change)),
            },
        }
    }

    /// Where `path` is in the sorted list, or where it would go.
    fn position(&self, path: &str) -> Result<usize, usize> {
        self.files
            .binary_search_by(|(entry, _)| path_order(entry, path))
    }

    /// The changes, by path.
    pub fn files(&self) -> impl Iterator<Item = (&str, &FileChange)> {
        self.files
            .iter()
            .map(|(path, change)| (path.as_str(), change))
    }

    /// The changes, by path, taken out of the set.
    pub fn into_files(self) -> impl Iterator<Item = (String, FileChange)> {
        self.files.into_iter()
    }

    /// The paths touched.
    pub fn paths(&self) -> Vec<String> {
        self.files.iter().map(|(path, _)| path.clone()).collect()
    }

    /// The change of `path`.
    pub fn get(&self, path: &str) -> Option<&FileChange> {
        self.position(path).ok().map(|at| &self.files[at].1)
    }

    /// How many files are touched.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// Whether nothing is touched.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Total replacements over all files.
    pub fn total_replacements(&self) -> usize {
        self.files
            .iter()
            .map(|(_, change)| change.replacements())
            .sum()
    }

    /// Split into the files in `only` and the names of the dropped ones; every path in `only`
    /// must be part of this change set.
    pub fn restrict(&self, only: &[String]) -> Result<(ChangeSet, Vec<String>), StoreError> {
        let mut kept = ChangeSet::new();
        for path in only {
            let normalized = path.trim_start_matches("./");
            match self.get(normalized) {
                Some(change) => kept.insert(normalized, change.clone()),
                None => {
                    return Err(StoreError::NotInPreview {
                        path: path.clone(),
                        touched: self.paths(),
                    });
                }
            }
        }
        let dropped = self
            .files
            .iter()
            .filter(|(path, _)| kept.get(path).is_none())
            .map(|(path, _)| path.clone())
            .collect();
        Ok((kept, dropped))
    }

    /// A hash of the whole change set, to recognize a change staged (and discarded) before.
    pub fn fingerprint(&self) -> String {
        let mut fingerprint = Fingerprint::default();
        for (path, change) in &self.files {
            fingerprint.add(path, change);
        }
        fingerprint.finish()
    }
}

/// A change set's fingerprint, computed change by change in path order (see
/// [`ChangeSet::fingerprint`]): the path, base hash and new content hash of every change.
#[derive(Default)]
pub(crate) struct Fingerprint(Hasher);

impl Fingerprint {
    /// Add the change of `path`, which comes after every path added so far.
    pub(crate) fn add(&mut self, path: &str, change: &FileChange) {
        let hasher = &mut self.0;
        hasher.update(path.as_bytes());
        hasher.update([0]);
        hasher.update(change.base_hash().unwrap_or("-").as_bytes());
        hasher.update([0]);
        hasher.update(
            change
                .new_content()
                .map_or(Cow::Borrowed("-"), Content::hash)
                .as_bytes(),
        );
        hasher.update([0]);
    }

    /// The fingerprint, in lowercase hex.
    pub(crate) fn finish(self) -> String {
        content_hash(&self.0.digest())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> ChangeSet {
        let mut set = ChangeSet::new();
        set.insert(
            "a.rs",
            FileChange::update(content_hash(b"a"), "b".into(), 2),
        );
        set.insert(
            "new.txt",
            FileChange::Create {
                content: "x".into(),
            },
        );
        set
    }

    #[test]
    fn a_stored_set_reads_back_in_path_order_and_a_repeated_or_unsorted_path_is_refused() {
        let json = r#"{"files":{"a/b.rs":{"kind":"create","content":"1"},"a.rs":{"kind":"create","content":"2"}}}"#;
        let set: ChangeSet = serde_json::from_str(json).unwrap();
        assert_eq!(set.paths(), ["a/b.rs", "a.rs"]);
        assert_eq!(serde_json::to_string(&set).unwrap(), json);
        for json in [
            r#"{"files": {"b.rs": {"kind": "create", "content": "1"}, "a.rs": {"kind": "create", "content": "2"}}}"#,
            r#"{"files": {"a.rs": {"kind": "create", "content": "1"}, "a.rs": {"kind": "create", "content": "2"}}}"#,
            r#"{"files": {"a.rs": {"kind": "create", "content": "1"}, "a/b.rs": {"kind": "create", "content": "2"}}}"#,
        ] {
            let error = serde_json::from_str::<ChangeSet>(json).unwrap_err();
            assert!(error.to_string().contains("in path order"), "{error}");
        }
    }

    #[test]
    fn restrict_keeps_named_files_and_lists_the_dropped_ones() {
        let (kept, dropped) = sample().restrict(&["./a.rs".to_owned()]).unwrap();
        assert_eq!(kept.paths(), vec!["a.rs"]);
        assert_eq!(dropped, vec!["new.txt"]);
        assert_eq!(kept.total_replacements(), 2);
    }

    #[test]
    fn restrict_refuses_a_file_outside_the_preview() {
        let err = sample().restrict(&["b.rs".to_owned()]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "`b.rs` is not part of this preview; it touches: `a.rs` and `new.txt`."
        );
    }

    #[test]
    fn fingerprint_changes_with_content() {
        let mut other = sample();
        other.insert(
            "new.txt",
            FileChange::Create {
                content: "y".into(),
            },
        );
        assert_eq!(sample().fingerprint(), sample().fingerprint());
        assert_ne!(sample().fingerprint(), other.fingerprint());
    }

    #[test]
    fn paths_sort_component_by_component_as_a_sorted_walk_meets_them() {
        let mut paths = vec!["a.rs", "a/b.rs", "a-b.rs", "a/a/z.rs", "b.rs", "a"];
        paths.sort_by(|a, b| path_order(a, b));
        assert_eq!(paths, ["a", "a/a/z.rs", "a/b.rs", "a-b.rs", "a.rs", "b.rs"]);
        let mut set = ChangeSet::new();
        for path in ["a.rs", "b.rs", "a/b.rs"] {
            set.insert(
                path,
                FileChange::Delete {
                    base_hash: content_hash(b""),
                },
            );
        }
        assert_eq!(set.paths(), ["a/b.rs", "a.rs", "b.rs"]);
        assert!(set.get("a/b.rs").is_some());
    }

    #[test]
    fn inline_and_stored_contents_both_read_back_from_json() {
        let inline: FileChange =
            serde_json::from_str(r#"{"kind":"create","content":"hi"}"#).unwrap();
        assert_eq!(inline.new_content(), Some(&Content::Text("hi".into())));
        let stored = FileChange::Create {
            content: Content::Stored {
                blob: content_hash(b"hi"),
            },
        };
        let json = serde_json::to_string(&stored).unwrap();
        assert_eq!(serde_json::from_str::<FileChange>(&json).unwrap(), stored);
    }
}
