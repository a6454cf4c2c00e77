//! Capturing what a host's shell command changed: before the command runs, every file of the
//! tree (as a directory walk sees it: ignored files, `.git/` and `.resolve/` left out) is kept
//! in the blob store and listed in a [`TreeSnapshot`]; after it ran, the tree is walked again
//! and each file created, changed or removed becomes an [`ObservedFile`], which the store
//! records as an applied history entry that `resolve undo` reverts.
//!
//! This is capture, not prevention: the command has run and its writes have landed; the entry
//! only makes them visible and revertible. A tree past [`MAX_SNAPSHOT_FILES`] or
//! [`MAX_SNAPSHOT_BYTES`] is not captured (copying it before every command would cost more
//! than the command), and a file past [`MAX_CAPTURED_FILE`] is left out.

use std::collections::BTreeSet;

use resolve_store::{
    Content, ObservedFile, Store, TreeSnapshot, Workspace, content_hash, read_regular_file,
};

use crate::error::EditError;
use crate::scope::Scope;

/// The most files a captured tree may hold.
pub const MAX_SNAPSHOT_FILES: usize = 20_000;

/// The most bytes a captured tree may hold (all its files together).
pub const MAX_SNAPSHOT_BYTES: u64 = 256 * 1024 * 1024;

/// The largest file captured; larger files are left out of the snapshot and of the record.
pub const MAX_CAPTURED_FILE: u64 = 16 * 1024 * 1024;

/// Why a tree was not captured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotCaptured {
    /// The tree holds more than [`MAX_SNAPSHOT_FILES`] files or [`MAX_SNAPSHOT_BYTES`] bytes.
    TooLarge,
}

/// The files of a tree within the limits, with their bytes, in path order; and the paths of
/// the files left out for their size.
struct TreeFiles {
    files: Vec<(String, Vec<u8>)>,
    oversized: BTreeSet<String>,
}

/// The files of the tree of `workspace`, within the limits.
fn tree_files(workspace: &Workspace) -> Result<Result<TreeFiles, NotCaptured>, EditError> {
    let scope = Scope::resolve(workspace, &[".".to_owned()])?;
    let mut files = Vec::new();
    let mut oversized = BTreeSet::new();
    let mut total: u64 = 0;
    for file in scope.files(workspace) {
        let Ok(metadata) = std::fs::symlink_metadata(&file.absolute) else {
            continue;
        };
        if !metadata.is_file() {
            continue;
        }
        if metadata.len() > MAX_CAPTURED_FILE {
            oversized.insert(file.relative);
            continue;
        }
        total += metadata.len();
        if files.len() >= MAX_SNAPSHOT_FILES || total > MAX_SNAPSHOT_BYTES {
            return Ok(Err(NotCaptured::TooLarge));
        }
        // A file removed or replaced during the walk is simply not part of the tree.
        if let Ok(Some(bytes)) = read_regular_file(&file.absolute) {
            files.push((file.relative, bytes));
        }
    }
    Ok(Ok(TreeFiles { files, oversized }))
}

/// Keep `bytes` in the blob store (once per content); their hash.
fn keep(store: &Store, bytes: &[u8]) -> Result<String, EditError> {
    let hash = content_hash(bytes);
    let kept = Content::Stored { blob: hash.clone() };
    if !store.blobs().holds(&kept)? {
        store.blobs().put(bytes)?;
    }
    Ok(hash)
}

/// The tree of `store`'s workspace as it is now, every file's content kept in the blob store.
pub fn snapshot_tree(store: &Store) -> Result<Result<TreeSnapshot, NotCaptured>, EditError> {
    let tree = match tree_files(store.workspace())? {
        Ok(tree) => tree,
        Err(not) => return Ok(Err(not)),
    };
    let mut snapshot = TreeSnapshot::default();
    for (path, bytes) in tree.files {
        let hash = keep(store, &bytes)?;
        snapshot.files.insert(path, hash);
    }
    Ok(Ok(snapshot))
}

/// What changed in the tree since `before`: each file created, changed or removed, in path
/// order, its new content kept in the blob store.
pub fn changes_since(
    store: &Store,
    before: &TreeSnapshot,
) -> Result<Result<Vec<ObservedFile>, NotCaptured>, EditError> {
    let tree = match tree_files(store.workspace())? {
        Ok(tree) => tree,
        Err(not) => return Ok(Err(not)),
    };
    let mut changes = Vec::new();
    // A file grown past the size limit is left out, not taken for removed.
    let mut seen = tree.oversized;
    for (path, bytes) in tree.files {
        let hash = content_hash(&bytes);
        let earlier = before.files.get(&path);
        seen.insert(path.clone());
        if earlier == Some(&hash) {
            continue;
        }
        keep(store, &bytes)?;
        changes.push(ObservedFile {
            path,
            before: earlier.cloned(),
            after: Some(Content::Stored { blob: hash }),
        });
    }
    for (path, hash) in &before.files {
        if !seen.contains(path) {
            changes.push(ObservedFile {
                path: path.clone(),
                before: Some(hash.clone()),
                after: None,
            });
        }
    }
    changes.sort_by(|a, b| resolve_store::path_order(&a.path, &b.path));
    Ok(Ok(changes))
}
