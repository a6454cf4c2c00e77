//! Rebasing at apply, as the store sees it: the [`Rebase`] it calls for a file whose bytes
//! moved since the preview (the merge itself is `resolve-edit`'s; the store knows no diff),
//! what a rebase gives ([`Rebased`]), and the conflicts an apply reports ([`FileConflict`]).

use std::fmt;

/// Merges a preview's change onto the file as it is now: base → preview on one side, base →
/// current on the other.
pub trait Rebase: fmt::Debug + Send + Sync {
    /// The bytes to write, or the conflicts.
    fn rebase(&self, base: &[u8], current: &[u8], preview: &[u8]) -> Rebased;
}

/// What a [`Rebase`] gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rebased {
    /// The merge is clean: these bytes land.
    Clean(Vec<u8>),
    /// These hunks of the preview conflict with what changed since.
    Conflicts(Vec<RebaseConflict>),
}

/// One conflicting hunk: lines of the current file and of the preview that replace the same
/// lines of the base differently.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RebaseConflict {
    /// Its first line in the current file, from 1.
    pub current_line: usize,
    /// The current file's lines there.
    pub current: Vec<u8>,
    /// Its first line in the preview, from 1.
    pub preview_line: usize,
    /// The preview's lines there.
    pub preview: Vec<u8>,
}

/// Why one file of an action cannot be rebased.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConflictReason {
    /// The preview creates it, and it now exists with other bytes.
    CreatedSince,
    /// The preview changes or deletes it, and it is gone.
    RemovedSince,
    /// The preview deletes it, and it changed.
    ChangedBeforeDelete,
    /// The bytes the preview was computed from are not kept, so there is nothing to merge from.
    BaseNotKept,
    /// These hunks conflict.
    Hunks(Vec<RebaseConflict>),
}

/// A file of an action that conflicts with what changed since its preview.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileConflict {
    /// The file, relative to the root.
    pub path: String,
    /// Why.
    pub reason: ConflictReason,
}

impl fmt::Display for FileConflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = &self.path;
        match &self.reason {
            ConflictReason::CreatedSince => {
                write!(
                    f,
                    "`{path}` was created since the preview, with other content."
                )
            }
            ConflictReason::RemovedSince => write!(f, "`{path}` was removed since the preview."),
            ConflictReason::ChangedBeforeDelete => {
                write!(f, "`{path}` changed since the preview, which deletes it.")
            }
            ConflictReason::BaseNotKept => write!(
                f,
                "`{path}` changed since the preview, and the content the preview was computed from is not kept."
            ),
            ConflictReason::Hunks(hunks) => {
                for (index, hunk) in hunks.iter().enumerate() {
                    if index > 0 {
                        writeln!(f)?;
                    }
                    write!(
                        f,
                        "{path}:{} (preview) against {path}:{} (current):",
                        hunk.preview_line, hunk.current_line
                    )?;
                    write_side(f, "current", &hunk.current)?;
                    write_side(f, "preview", &hunk.preview)?;
                }
                Ok(())
            }
        }
    }
}

/// `  current:` and its lines, each behind `  | `.
fn write_side(f: &mut fmt::Formatter<'_>, name: &str, lines: &[u8]) -> fmt::Result {
    write!(f, "\n  {name}:")?;
    if lines.is_empty() {
        return write!(f, " (no lines)");
    }
    for line in String::from_utf8_lossy(lines).lines() {
        write!(f, "\n  | {line}")?;
    }
    Ok(())
}

/// The conflicts of an apply, one paragraph per file.
pub(crate) struct ConflictList<'a>(pub(crate) &'a [FileConflict]);

impl ConflictList<'_> {
    /// The conflicting files' paths.
    pub(crate) fn paths(files: &[FileConflict]) -> Vec<String> {
        files.iter().map(|file| file.path.clone()).collect()
    }
}

impl fmt::Display for ConflictList<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, conflict) in self.0.iter().enumerate() {
            if index > 0 {
                writeln!(f)?;
            }
            write!(f, "{conflict}")?;
        }
        Ok(())
    }
}
