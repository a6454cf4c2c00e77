//! What the unit tests of this crate share: a temporary workspace holding some files, owned
//! strings, and a change set of updates.

use resolve_store::{ChangeSet, FileChange, Workspace, content_hash};
use resolve_test_support::TestDir;

/// A fresh test directory holding `files` (relative path, contents), opened as a `Workspace`.
pub(crate) fn workspace_holding(files: &[(&str, &[u8])]) -> (TestDir, Workspace) {
    let dir = TestDir::with_files(files.iter().copied());
    let workspace = Workspace::open(dir.root()).unwrap();
    (dir, workspace)
}

/// `names` as owned strings.
pub(crate) fn owned_strings(names: &[&str]) -> Vec<String> {
    names.iter().map(|name| (*name).to_owned()).collect()
}

/// A change set updating each `(path, replacements)` from empty to empty.
pub(crate) fn update_set(paths: &[(&str, usize)]) -> ChangeSet {
    let mut set = ChangeSet::new();
    for (path, replacements) in paths {
        set.insert(
            *path,
            FileChange::update(content_hash(b""), String::new().into(), *replacements),
        );
    }
    set
}
