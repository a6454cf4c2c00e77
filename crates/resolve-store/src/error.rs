//! The one error type of `resolve-store`, and whose fault each kind is.
//!
//! Every message is a full sentence naming what was wrong. [`StoreError::is_tool_error`] sorts
//! them: a tool error is about the request (a path outside the root, a stale preview, an id
//! that is not pending) and reaches the model unchanged; anything else (I/O, a lock held too
//! long, damaged state, a broken invariant) is the action failing, `Apply failed: …`.

use std::fmt;
use std::path::PathBuf;

use crate::rebase::{ConflictList, FileConflict};

/// What went wrong while reading or changing the durable state of a workspace.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// A path leaves the workspace (`..`, or an absolute path elsewhere).
    #[error(
        "`{path}` is outside the workspace root `{root}`; only paths inside it can be read or changed."
    )]
    OutsideWorkspace {
        /// The path as given.
        path: String,
        /// The workspace root.
        root: PathBuf,
    },
    /// A path goes through a symlink that points outside the workspace.
    #[error(
        "`{path}` resolves through a symlink to `{target}`, which is outside the workspace root; refusing to follow it."
    )]
    SymlinkEscape {
        /// The path as given.
        path: String,
        /// Where the symlink leads.
        target: PathBuf,
    },
    /// A path points into `.resolve/`.
    #[error(
        "`{path}` is inside `.resolve/`, which holds resolve's own state and is never a target."
    )]
    StateDir {
        /// The path as given.
        path: String,
    },
    /// `HOME` does not name a directory for per-user state.
    #[error(
        "Cannot find the per-user directory (~/.config/resolve, where trust records and the key that signs records live): set HOME to an absolute path."
    )]
    NoUserDir,
    /// A workspace's configuration names commands, and the person has not trusted this exact
    /// file with `resolve trust` (or it changed since); nothing was run.
    #[error(
        "The configuration `{}` {}, so resolve runs none of the commands it names ({}). Read the file; if you trust those commands, run `{trust_command}`.",
        .path.display(),
        if *.changed { "changed since it was trusted" } else { "is not trusted" },
        CommandList(.commands)
    )]
    UntrustedConfig {
        /// The configuration file.
        path: PathBuf,
        /// Whether an earlier version of it was trusted.
        changed: bool,
        /// What it would run: `<program and args> ([<table>])` each.
        commands: Vec<String>,
        /// The command line that trusts it.
        trust_command: String,
    },
    /// The per-user key that signs records cannot be used.
    #[error("Cannot use the record key `{path}`: {reason}.")]
    RecordKey {
        /// The key file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// A pending action this user's `resolve` did not stage (no valid signature) was to be
    /// resolved where only this user's own actions are.
    #[error(
        "The pending action `{id}` was not staged by this user's resolve (it carries no valid signature; it may come from a cloned repository), so it is not run here. A person must review it with `resolve show {id}` and apply it with `resolve apply --id {id} --reason …`, or discard it with `resolve discard --id {id} --reason …`."
    )]
    ForeignAction {
        /// The action's id.
        id: String,
    },
    /// An applied action whose history record this user's `resolve` did not write was to be
    /// undone without a person naming it.
    #[error(
        "The applied action `{id}` was not recorded by this user's resolve (it carries no valid signature; it may come from a cloned repository), so its originals are not written back here. Review it with `resolve show {id}`; to undo it anyway, name it: `resolve undo {id}`."
    )]
    ForeignUndo {
        /// The action's id.
        id: String,
    },
    /// The workspace root given is a file.
    #[error("`{path}` is a file, expected a directory.")]
    RootNotADirectory {
        /// The root as given.
        path: String,
    },
    /// A file-system operation failed.
    #[error("Could not {action} `{path}`: {source}")]
    Io {
        /// What was being done (`read`, `write`, `rename`, …).
        action: &'static str,
        /// The file involved.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// Files changed since the preview was staged; nothing was written.
    #[error(
        "Preview is stale: {} changed since the preview was staged; nothing was written. Discard this preview and stage the change again.",
        QuotedList(.files)
    )]
    Stale {
        /// The changed files, relative to the root.
        files: Vec<String>,
    },
    /// Files changed since the preview was staged and the preview does not rebase onto them
    /// cleanly; nothing was written and the action stays pending.
    #[error(
        "Preview is stale: {} changed since the preview was staged, and the preview conflicts with those changes; nothing was written and it stays pending. Discard this preview, or stage the change again from the current file.\n{}",
        QuotedList(&ConflictList::paths(.files)),
        ConflictList(.files)
    )]
    Conflicts {
        /// Each conflicting file, with its conflicting hunks.
        files: Vec<FileConflict>,
    },
    /// A `resolve` process stopped (was killed, crashed, lost power) while it was calling an
    /// MCP server's tool for this action, so the call may have run; the action stays pending
    /// and the next try calls the tool again.
    #[error(
        "An earlier resolve process stopped while it was calling the tool `{tool}` of the MCP server `{server}` for `{id}`, so that call may have run. Check what it did; then apply or discard `{id}` again, which calls the tool again."
    )]
    InterruptedCall {
        /// The action.
        id: String,
        /// The MCP server called.
        server: String,
        /// Its tool.
        tool: String,
    },
    /// Another process holds the workspace lock for too long.
    #[error("Timed out after {seconds} s waiting for the lock `{}`; another resolve process is working in this workspace.", .path.display())]
    LockTimeout {
        /// The lock file.
        path: PathBuf,
        /// How long we waited.
        seconds: u64,
    },
    /// A state file under `.resolve/` cannot be understood.
    #[error("`{}` is corrupt ({reason}); move it aside to continue.", .path.display())]
    CorruptState {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// No pending action has this id.
    #[error("`{id}` is not a pending action. Run `resolve pending` to list them.")]
    NotPending {
        /// The id asked for.
        id: String,
    },
    /// Nothing in history has this id.
    #[error("`{id}` is neither pending nor in the history.")]
    UnknownAction {
        /// The id asked for.
        id: String,
    },
    /// `--only` / `extra.only` named a file the preview does not touch.
    #[error("`{path}` is not part of this preview; it touches: {}.", QuotedList(.touched))]
    NotInPreview {
        /// The path asked for.
        path: String,
        /// The files the preview touches.
        touched: Vec<String>,
    },
    /// `--only` / `extra.only` named no file at all.
    #[error("`only` names no file; name at least one file of the preview, or discard it.")]
    NothingSelected,
    /// An apply that would write files was asked of an action that calls an MCP tool.
    #[error(
        "`{id}` calls the tool `{tool}` of the MCP server `{server}`; it is applied through an MCP client, not by writing files."
    )]
    ExternalPayload {
        /// The action.
        id: String,
        /// The MCP server it calls.
        server: String,
        /// The tool it calls there.
        tool: String,
    },
    /// A check was asked of an action that calls an MCP tool: it changes no file.
    #[error(
        "`{id}` calls the tool `{tool}` of the MCP server `{server}`; it changes no file, so there is nothing to check."
    )]
    NothingToCheck {
        /// The action.
        id: String,
        /// The MCP server it calls.
        server: String,
        /// The tool it calls there.
        tool: String,
    },
    /// An apply that requires a passing check (`--require-check`, `[check] require = true`)
    /// found none for this preview.
    #[error(
        "`{id}` {state}, and this apply requires a passing check; nothing was written. Check it first (`resolve check {id}`, or the `check` tool), then apply it once the check passes."
    )]
    CheckRequired {
        /// The action.
        id: String,
        /// `has not been checked` or `failed its last check (exit status 1)`.
        state: String,
    },
    /// The pending action changed (was amended) while its check ran.
    #[error("`{id}` changed while its check ran, so the outcome was not recorded; check it again.")]
    CheckedVersionChanged {
        /// The action.
        id: String,
    },
    /// A reviewed apply or an amendment was made on a version of the action that has changed
    /// since (another reviewer amended it).
    #[error(
        "`{id}` changed since it was reviewed (a file of it was amended); review it again with `resolve show {id}`. Nothing was written."
    )]
    PreviewChanged {
        /// The action.
        id: String,
    },
    /// An amendment or a partial apply was asked of a file the preview deletes.
    #[error(
        "`{path}` is deleted by this preview; a deletion lands whole or not at all and cannot be amended."
    )]
    NotEditable {
        /// The file.
        path: String,
    },
    /// A change set names one real file twice (through a symlink) with different contents.
    #[error(
        "The change names `{path}` twice (through a symlink) with different contents; stage one change per file."
    )]
    AliasConflict {
        /// The real file, relative to the root.
        path: String,
    },
    /// Undo refused because files changed after the apply.
    #[error("Cannot undo `{id}`: {} changed since it was applied; nothing was reverted.", QuotedList(.files))]
    UndoConflict {
        /// The applied action.
        id: String,
        /// The files that changed since.
        files: Vec<String>,
    },
    /// Undo asked for an action that is not an applied, not yet undone change.
    #[error("Cannot undo `{id}`: it {state}; there is nothing to revert.")]
    NothingToUndo {
        /// The action asked for.
        id: String,
        /// Where it stands (`is still pending`, `was discarded`, `was already undone`).
        state: &'static str,
    },
    /// An origin string is not `cli`, `agent` or `mcp:<connection id>`.
    #[error("Unknown origin `{origin}`; expected `cli`, `agent` or `mcp:<connection id>`.")]
    UnknownOrigin {
        /// The string given.
        origin: String,
    },
    /// A shell command's call id cannot name its snapshot file.
    #[error(
        "The shell call id `{call}` cannot name a snapshot; expected 1 to 128 letters, digits, `_` or `-`."
    )]
    BadShellCall {
        /// The id given.
        call: String,
    },
    /// A caller of this crate broke one of its rules: a bug, not a bad request.
    #[error(transparent)]
    Invariant(#[from] Invariant),
    /// A path names something that is not a regular file where one is read or written (a
    /// FIFO, a device, a socket): it is never opened, so nothing waits on it.
    #[error(
        "`{}` is {kind}, not a regular file; resolve reads and writes only regular files. Remove or rename it, then try again.",
        .path.display()
    )]
    NotRegularFile {
        /// The file.
        path: PathBuf,
        /// What it is (`a FIFO (named pipe)`, `a character device`, …).
        kind: &'static str,
    },
    /// A path points into `.git/`.
    #[error("`{path}` is inside `.git/`, git's own state, and is never a target.")]
    GitDir {
        /// The path as given.
        path: String,
    },
    /// A path goes through more symlinks than one lookup may follow.
    #[error(
        "`{path}` goes through too many symlinks (more than {hops}, or a loop); refusing to follow them."
    )]
    TooManyLinks {
        /// The path as given.
        path: String,
        /// How many links were followed before giving up.
        hops: usize,
    },
}

/// A rule of this crate's API that a caller broke; always a bug in the caller.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Invariant {
    /// A change set writer was given a path that does not come after the last one.
    #[error(
        "the change of `{path}` was added to a change set after that of `{last}`; changes must come in path order, one per path"
    )]
    OutOfPathOrder {
        /// The path added.
        path: String,
        /// The path added before it.
        last: String,
    },
    /// A file selected for an apply has no change in the change set it was selected from.
    #[error("`{path}` was selected for the apply but has no change in the preview")]
    NotInChangeSet {
        /// The path.
        path: String,
    },
}

impl StoreError {
    /// An I/O error naming the action and the path.
    pub fn io(action: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            action,
            path: path.into(),
            source,
        }
    }

    /// Whether the model should see this unchanged (a tool error: the request was wrong)
    /// rather than as `Apply failed: …` (the action failed).
    pub fn is_tool_error(&self) -> bool {
        !matches!(
            self,
            Self::Io { .. }
                | Self::LockTimeout { .. }
                | Self::CorruptState { .. }
                | Self::NoUserDir
                | Self::RecordKey { .. }
                | Self::Invariant(_)
        )
    }
}

impl From<StoreError> for resolve_core::ActionError {
    fn from(error: StoreError) -> Self {
        if error.is_tool_error() {
            Self::Tool(error.to_string())
        } else {
            Self::Failed(error.to_string())
        }
    }
}

/// The commands of an untrusted configuration, `; `-separated (`its commands` when none
/// could be listed).
#[derive(Debug, Clone, Copy)]
struct CommandList<'a>(&'a [String]);

impl fmt::Display for CommandList<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("none could be listed");
        }
        f.write_str(&self.0.join("; "))
    }
}

/// `a`, `a` and `b`, or `a`, `b` and `c`, each in backticks (`no files` when empty).
#[derive(Debug, Clone, Copy)]
pub(crate) struct QuotedList<'a>(pub(crate) &'a [String]);

impl fmt::Display for QuotedList<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            [] => f.write_str("no files"),
            [one] => write!(f, "`{one}`"),
            [rest @ .., last] => {
                for (index, item) in rest.iter().enumerate() {
                    if index > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "`{item}`")?;
                }
                write!(f, " and `{last}`")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quoted_list_joins_with_commas_and_a_last_and() {
        let list = |items: &[&str]| {
            let items: Vec<String> = items.iter().map(|item| (*item).to_owned()).collect();
            QuotedList(&items).to_string()
        };
        assert_eq!(list(&[]), "no files");
        assert_eq!(list(&["a"]), "`a`");
        assert_eq!(list(&["a", "b"]), "`a` and `b`");
        assert_eq!(list(&["a", "b", "c"]), "`a`, `b` and `c`");
    }

    #[test]
    fn broken_invariants_and_io_fail_the_action_while_bad_requests_are_tool_errors() {
        let invariant = StoreError::from(Invariant::NotInChangeSet { path: "a".into() });
        assert!(!invariant.is_tool_error());
        assert!(StoreError::NothingSelected.is_tool_error());
        assert!(
            StoreError::Stale {
                files: vec!["a".into()]
            }
            .is_tool_error()
        );
        assert!(!StoreError::io("read", "a", std::io::Error::other("x")).is_tool_error());
    }
}
