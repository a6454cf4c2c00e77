//! Running one check: in place through the store's trial, or in a scratch copy of the
//! workspace with the preview written into it; the files the command changed are named and
//! the outcome is kept on the pending action.

use std::time::Duration;

use resolve_store::{CheckMode, CheckOutcome, CheckRun, Store};

use super::command::{LiveOutput, run_command};
use super::tree::{TreeStamps, copy_tree};
use crate::error::EditError;

/// Where a check runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckPlace {
    /// In the workspace, the preview applied as a trial and rolled back afterwards: fast for
    /// incremental builds, which reuse their caches.
    InPlace,
    /// In a copy of the workspace: nothing in the workspace changes, even for a moment (an
    /// editor or a file watcher is running).
    Scratch {
        /// Copy ignored paths too (build caches, `node_modules`, …).
        with_ignored: bool,
    },
}

/// One check to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckRequest {
    /// The pending action whose preview is checked.
    pub id: String,
    /// The program and its arguments (run directly, not through a shell).
    pub command: Vec<String>,
    /// How long it may run before it (and everything it started) is killed.
    pub timeout: Duration,
    /// Where it runs.
    pub place: CheckPlace,
}

/// Run `request` and keep its outcome on the pending action. A stale preview, an action that
/// is not pending (or calls an MCP tool), or a command that cannot start is an error, and no
/// outcome is kept; a command that fails is an outcome that did not pass.
pub fn run_check(
    store: &Store,
    request: &CheckRequest,
    live: LiveOutput,
) -> Result<CheckOutcome, EditError> {
    if request.command.is_empty() {
        return Err(EditError::NoCheckCommand);
    }
    match request.place {
        CheckPlace::InPlace => {
            let root = store.workspace().root().to_path_buf();
            store.check_in_place(&request.id, || observed_run(&root, request, live))
        }
        CheckPlace::Scratch { with_ignored } => {
            let scratch = tempfile::Builder::new()
                .prefix("resolve-check-")
                .tempdir()
                .map_err(|source| EditError::io("create", std::env::temp_dir(), source))?;
            copy_tree(store.workspace(), scratch.path(), with_ignored)?;
            let record = store.write_preview_into(&request.id, scratch.path())?;
            let run = observed_run(scratch.path(), request, live)?;
            Ok(store.record_check(&request.id, &record.fingerprint, CheckMode::Scratch, run)?)
        }
    }
}

/// Run the command in `dir`, naming the files it changed there.
fn observed_run(
    dir: &std::path::Path,
    request: &CheckRequest,
    live: LiveOutput,
) -> Result<CheckRun, EditError> {
    let before = TreeStamps::of(dir);
    let mut run = run_command(&request.command, dir, request.timeout, live)?;
    run.changed_files = before.changed(&TreeStamps::of(dir));
    Ok(run)
}
