//! The one error type of `resolve-edit`; each message is a full sentence naming what was wrong.

use std::path::PathBuf;

/// What went wrong while staging, applying, discarding or undoing a change.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EditError {
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
        quote_list(.files)
    )]
    Stale {
        /// The changed files, relative to the root.
        files: Vec<String>,
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
    #[error("`{path}` is not part of this preview; it touches: {}.", quote_list(.touched))]
    NotInPreview {
        /// The path asked for.
        path: String,
        /// The files the preview touches.
        touched: Vec<String>,
    },
    /// Undo refused because files changed after the apply.
    #[error("Cannot undo `{id}`: {} changed since it was applied; nothing was reverted.", quote_list(.files))]
    UndoConflict {
        /// The applied action.
        id: String,
        /// The files that changed since.
        files: Vec<String>,
    },
    /// An `ast_edit` pattern or rewrite does not parse cleanly.
    #[error("Invalid pattern `{pattern}` for {lang}: {reason}")]
    InvalidPattern {
        /// The pattern (or rewrite) text.
        pattern: String,
        /// The language it was parsed as.
        lang: String,
        /// Why it is invalid.
        reason: String,
    },
    /// The language named by `lang` is unknown or not compiled in.
    #[error("Unknown language `{lang}`; supported: {supported}.")]
    UnknownLanguage {
        /// The name given.
        lang: String,
        /// The supported names.
        supported: String,
    },
    /// Two ops produce overlapping edits.
    #[error(
        "Patterns `{first}` and `{second}` produce overlapping replacements in `{path}`; split them into separate ast_edit calls."
    )]
    OverlappingOps {
        /// One pattern.
        first: String,
        /// The other pattern.
        second: String,
        /// Where they overlap.
        path: String,
    },
    /// `edit` found no occurrence of `old_text`.
    #[error("`old_text` was not found in `{path}`; read the file and copy the text exactly.")]
    EditNotFound {
        /// The file.
        path: String,
    },
    /// `edit` found several occurrences without `replace_all`.
    #[error(
        "`old_text` occurs {count} times in `{path}`; add surrounding lines to make it unique, or set `replace_all`."
    )]
    EditAmbiguous {
        /// The file.
        path: String,
        /// How many occurrences.
        count: usize,
    },
    /// A file is binary or not UTF-8 and cannot be edited as text.
    #[error("`{path}` is binary or not valid UTF-8; resolve only edits text files.")]
    Binary {
        /// The file.
        path: String,
    },
    /// A path does not exist.
    #[error("`{path}` does not exist.")]
    NotFound {
        /// The path as given.
        path: String,
    },
    /// A path is a directory where a file was expected, or the reverse.
    #[error("`{path}` is {found}, expected {expected}.")]
    WrongKind {
        /// The path as given.
        path: String,
        /// What it is.
        found: &'static str,
        /// What was needed.
        expected: &'static str,
    },
    /// Tool arguments that break the tool's schema (the core's error names the field).
    #[error(transparent)]
    Arguments(#[from] resolve_core::Error),
    /// Bad arguments that the schema cannot express (an empty pattern, a duplicate op, …).
    #[error("{0}")]
    InvalidRequest(String),
    // store and transaction
    /// An origin string is not `cli`, `agent` or `mcp:<connection id>`.
    #[error("Unknown origin `{origin}`; expected `cli`, `agent` or `mcp:<connection id>`.")]
    UnknownOrigin {
        /// The string given.
        origin: String,
    },
    /// Undo asked for an action that is not an applied, not yet undone change.
    #[error("Cannot undo `{id}`: it {state}; there is nothing to revert.")]
    NothingToUndo {
        /// The action asked for.
        id: String,
        /// Where it stands (`is still pending`, `was discarded`, `was already undone`).
        state: &'static str,
    },
    // producers
    /// A glob in `paths` cannot be compiled.
    #[error("Invalid glob `{glob}`: {reason}")]
    InvalidGlob {
        /// The glob as given.
        glob: String,
        /// Why it is invalid.
        reason: String,
    },
    /// A `grep` pattern is not a valid regular expression.
    #[error("Invalid regular expression `{pattern}`: {reason}")]
    InvalidRegex {
        /// The pattern as given.
        pattern: String,
        /// Why it is invalid.
        reason: String,
    },
    /// An `edit` or `write` would leave the file exactly as it is.
    #[error("`{path}` already has this content; nothing to stage.")]
    NoChange {
        /// The file.
        path: String,
    },
}

impl EditError {
    /// An I/O error naming the action and the path.
    pub fn io(action: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            action,
            path: path.into(),
            source,
        }
    }

    /// Whether the model should see this unchanged (a tool error) rather than as
    /// `Apply failed: …`.
    pub fn is_tool_error(&self) -> bool {
        !matches!(
            self,
            Self::Io { .. } | Self::LockTimeout { .. } | Self::CorruptState { .. }
        )
    }
}

/// `a`, `a` and `b`, or `a`, `b` and `c`, each in backticks.
pub(crate) fn quote_list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|item| format!("`{item}`")).collect();
    match quoted.as_slice() {
        [] => "no files".to_owned(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

impl From<EditError> for resolve_core::ActionError {
    fn from(error: EditError) -> Self {
        if error.is_tool_error() {
            Self::Tool(error.to_string())
        } else {
            Self::Failed(error.to_string())
        }
    }
}
