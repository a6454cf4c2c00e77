//! What the unit tests of this crate share: a workspace over a fresh temporary directory.

use crate::Workspace;

/// A fresh temporary directory (dropped with the returned guard) opened as a `Workspace`.
pub(crate) fn temp_workspace() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    let workspace = Workspace::open(dir.path()).unwrap();
    (dir, workspace)
}
