//! The one error type of `resolve-edit`, and whose fault each kind is: the request's (a tool
//! error the model reads as it is) or the action's (`Apply failed: …`). Each message is a full
//! sentence naming what was wrong.

use std::path::PathBuf;

use resolve_store::StoreError;

/// What went wrong while staging, applying, discarding or undoing a change.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EditError {
    /// The durable state refused or failed (confinement, a stale preview, I/O, the lock, …).
    #[error(transparent)]
    Store(#[from] StoreError),
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
    /// A path names a FIFO, socket or device, which the read-only tools do not open.
    #[error(
        "`{path}` is not a regular file (a FIFO, socket or device); `read` and `grep` only read regular files."
    )]
    NotRegularFile {
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
    /// A changed file's diff does not fit in memory on this machine.
    #[error("the diff of `{path}` is too large to show")]
    DiffTooLarge {
        /// The file.
        path: String,
    },
    /// A hunk address (`src/a.rs#2`) that cannot be read.
    #[error("Invalid hunk address `{address}`: {reason}.")]
    InvalidHunkAddress {
        /// The address as given.
        address: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A hunk address names a hunk the file does not have.
    #[error("`{address}` names no hunk of this preview: `{path}` has {count} {}.", if *.count == 1 { "hunk" } else { "hunks" })]
    NoSuchHunk {
        /// The address as given.
        address: String,
        /// The file.
        path: String,
        /// How many hunks it has.
        count: usize,
    },
    /// An `apply_patch` input that does not follow the patch grammar.
    #[error("Invalid patch at line {line}: {message}.")]
    InvalidPatch {
        /// The line of the patch (from 1).
        line: usize,
        /// What is wrong there.
        message: String,
    },
    /// A patch's change block that cannot be placed in its file.
    #[error("The patch does not apply to `{path}`: {message}")]
    PatchMismatch {
        /// The file.
        path: String,
        /// Which block, why, and where the nearest candidate is.
        message: String,
    },
    /// A patch adds a file, or moves one onto a path, that exists.
    #[error(
        "`{path}` already exists; `*** Add File:` and `*** Move to:` never replace a file. Change it with `*** Update File:`."
    )]
    PatchTargetExists {
        /// The path.
        path: String,
    },
    // checks
    /// The configuration file could not be read.
    #[error("Could not read the configuration `{}`: {source}", .path.display())]
    ConfigRead {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The configuration's `[check]` table is not valid.
    #[error("The configuration `{}` is invalid: {message}", .path.display())]
    Config {
        /// The file.
        path: PathBuf,
        /// What is wrong, with its line.
        message: String,
    },
    /// A check was asked for, but no command was given or configured.
    #[error(
        "No check command: give one after `--` (`resolve check -- cargo test`) or set `command` in the `[check]` table of .resolve/config.toml."
    )]
    NoCheckCommand,
    /// The check command could not be started.
    #[error("Could not run the check command `{program}`: {source}")]
    CheckCommand {
        /// The program.
        program: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A preview's details could not be put together from its change set.
    #[error("The preview's details could not be listed: {reason}")]
    DetailsUnlisted {
        /// Why.
        reason: String,
    },
}

impl EditError {
    /// An I/O error naming the action and the path (the store's kind: the action failed).
    pub fn io(action: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Store(StoreError::io(action, path, source))
    }

    /// Whether the model should see this unchanged (a tool error: the request was wrong)
    /// rather than as `Apply failed: …` (the action failed).
    pub fn is_tool_error(&self) -> bool {
        match self {
            Self::Store(error) => error.is_tool_error(),
            Self::DiffTooLarge { .. }
            | Self::DetailsUnlisted { .. }
            | Self::ConfigRead { .. }
            | Self::Config { .. }
            | Self::NoCheckCommand
            | Self::CheckCommand { .. } => false,
            Self::InvalidPattern { .. }
            | Self::UnknownLanguage { .. }
            | Self::OverlappingOps { .. }
            | Self::EditNotFound { .. }
            | Self::EditAmbiguous { .. }
            | Self::Binary { .. }
            | Self::NotFound { .. }
            | Self::NotRegularFile { .. }
            | Self::WrongKind { .. }
            | Self::Arguments(_)
            | Self::InvalidRequest(_)
            | Self::InvalidGlob { .. }
            | Self::InvalidRegex { .. }
            | Self::NoChange { .. }
            | Self::InvalidHunkAddress { .. }
            | Self::NoSuchHunk { .. }
            | Self::InvalidPatch { .. }
            | Self::PatchMismatch { .. }
            | Self::PatchTargetExists { .. } => true,
        }
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
