//! What the edit test modules share: a fresh test workspace holding some files, as a
//! `Workspace` or with a store over it.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] functions fail the test by panicking"
)]

use resolve_store::{RecordKey, Store, Workspace};
use resolve_test_support::TestDir;

/// A store over `root`, signing with the tests' record key.
pub fn store_at(root: &std::path::Path) -> Store {
    Store::open(Workspace::open(root).unwrap()).with_record_key(RecordKey::from_bytes([7; 32]))
}

/// An empty test workspace and a store over its root.
pub fn empty_store() -> (TestDir, Store) {
    let dir = TestDir::new();
    let store = store_at(dir.root());
    (dir, store)
}

/// A test workspace holding `files` (relative path, contents) and a store over its root.
pub fn store_with_files<P: AsRef<str>, C: AsRef<[u8]>>(
    files: impl IntoIterator<Item = (P, C)>,
) -> (TestDir, Store) {
    let dir = TestDir::with_files(files);
    let store = store_at(dir.root());
    (dir, store)
}

/// A test workspace holding `files` (relative path, contents), opened as a `Workspace`.
pub fn workspace_holding(files: &[(&str, &[u8])]) -> (TestDir, Workspace) {
    let dir = TestDir::with_files(files.iter().copied());
    let workspace = Workspace::open(dir.root()).unwrap();
    (dir, workspace)
}
