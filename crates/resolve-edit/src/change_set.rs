//! A change set: the exact new content of every file a preview touches, with the hash of the
//! content each change was computed from. Previews, pending actions and apply all read this one
//! value; applying it is a separate step (see the transaction module).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::EditError;

/// The SHA-256 of `bytes`, in lowercase hex; identifies a file's content at preview time.
pub fn content_hash(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut hex = String::with_capacity(64);
    for byte in digest {
        hex.push_str(&format!("{byte:02x}"));
    }
    hex
}

/// What happens to one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FileChange {
    /// Create a file that must not exist yet.
    Create {
        /// Its content.
        content: String,
    },
    /// Replace the content of an existing file whose content hashes to `base_hash`.
    Update {
        /// Hash of the content the change was computed from.
        base_hash: String,
        /// The exact new content.
        content: String,
        /// How many spans were replaced (for counts in texts).
        replacements: usize,
    },
    /// Remove an existing file whose content hashes to `base_hash`.
    Delete {
        /// Hash of the content the change was computed from.
        base_hash: String,
    },
}

impl FileChange {
    /// The base hash the file must still have, or `None` when the file must not exist.
    pub fn base_hash(&self) -> Option<&str> {
        match self {
            Self::Create { .. } => None,
            Self::Update { base_hash, .. } | Self::Delete { base_hash } => Some(base_hash),
        }
    }

    /// The content after the change, or `None` for a delete.
    pub fn new_content(&self) -> Option<&str> {
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
/// (`/`-separated).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ChangeSet {
    files: BTreeMap<String, FileChange>,
}

impl ChangeSet {
    /// An empty change set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add (or replace) the change of `path` (relative, `/`-separated).
    pub fn insert(&mut self, path: impl Into<String>, change: FileChange) {
        self.files.insert(path.into(), change);
    }

    /// The changes, by path.
    pub fn files(&self) -> impl Iterator<Item = (&str, &FileChange)> {
        self.files
            .iter()
            .map(|(path, change)| (path.as_str(), change))
    }

    /// The paths touched.
    pub fn paths(&self) -> Vec<String> {
        self.files.keys().cloned().collect()
    }

    /// The change of `path`.
    pub fn get(&self, path: &str) -> Option<&FileChange> {
        self.files.get(path)
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
        self.files.values().map(FileChange::replacements).sum()
    }

    /// Split into the files in `only` and the names of the dropped ones; every path in `only`
    /// must be part of this change set.
    pub fn restrict(&self, only: &[String]) -> Result<(ChangeSet, Vec<String>), EditError> {
        let mut kept = ChangeSet::new();
        for path in only {
            let normalized = path.trim_start_matches("./");
            match self.files.get(normalized) {
                Some(change) => kept.insert(normalized, change.clone()),
                None => {
                    return Err(EditError::NotInPreview {
                        path: path.clone(),
                        touched: self.paths(),
                    });
                }
            }
        }
        let dropped = self
            .files
            .keys()
            .filter(|path| kept.get(path).is_none())
            .cloned()
            .collect();
        Ok((kept, dropped))
    }

    /// A hash of the whole change set, to recognize a change staged (and discarded) before.
    pub fn fingerprint(&self) -> String {
        let mut hasher = Sha256::new();
        for (path, change) in &self.files {
            hasher.update(path.as_bytes());
            hasher.update([0]);
            hasher.update(change.base_hash().unwrap_or("-").as_bytes());
            hasher.update([0]);
            hasher.update(
                change
                    .new_content()
                    .map_or("-".to_owned(), |content| content_hash(content.as_bytes()))
                    .as_bytes(),
            );
            hasher.update([0]);
        }
        content_hash(&hasher.finalize())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> ChangeSet {
        let mut set = ChangeSet::new();
        set.insert(
            "a.rs",
            FileChange::Update {
                base_hash: content_hash(b"a"),
                content: "b".into(),
                replacements: 2,
            },
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
    fn content_hash_is_sha256_hex() {
        assert_eq!(
            content_hash(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
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
}
