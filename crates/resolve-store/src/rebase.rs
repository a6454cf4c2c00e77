//! Rebasing at apply, as the store sees it: the [`Rebase`] it calls for a file whose bytes
//! moved since the preview (the merge and the re-derivation are `resolve-edit`'s; the store
//! knows no diff and no ast-grep), what a rebase gives ([`Rebased`], [`Rederived`]), and the
//! conflicts an apply reports ([`FileConflict`]).

use std::fmt;

use serde_json::Value;

/// Merges a preview's change onto the file as it is now: base → preview on one side, base →
/// current on the other.
pub trait Rebase: fmt::Debug + Send + Sync {
    /// The bytes to write, or the conflicts.
    fn rebase(&self, base: &[u8], current: &[u8], preview: &[u8]) -> Rebased;

    /// Re-derive the preview of `path` on its current bytes with `request` (a record's
    /// [`rederive`](crate::PendingRecord::rederive)), tried before the merge; `None` when this
    /// rebase cannot (an unknown request, or one that does not give `preview` from `base`).
    fn rederive(
        &self,
        _request: &Value,
        _path: &str,
        _base: &[u8],
        _current: &[u8],
        _preview: &[u8],
    ) -> Option<Rederived> {
        None
    }
}

/// What a [`Rebase::rederive`] gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rederived {
    /// The request found the same matches on the current bytes: these bytes land.
    Clean(Vec<u8>),
    /// The matches differ from the preview's: the merge by lines decides, and these name them
    /// if it conflicts.
    Mismatch {
        /// Matches of the current bytes the preview did not have, each described (`foo(3)` at
        /// line 7).
        appeared: Vec<String>,
        /// Matches of the preview that the current bytes no longer have.
        vanished: Vec<String>,
    },
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
    /// The lines of the base, the file the preview was computed from, that both replace.
    pub base: Vec<u8>,
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
    /// The re-derived change's matches differ from the preview's, and these hunks of the merge
    /// by lines conflict.
    MatchesMoved {
        /// Matches that appeared since the preview.
        appeared: Vec<String>,
        /// Matches that vanished since the preview.
        vanished: Vec<String>,
        /// The conflicting hunks.
        hunks: Vec<RebaseConflict>,
    },
}

impl ConflictReason {
    /// Its conflicting hunks (none for a reason about the whole file).
    pub fn hunks(&self) -> &[RebaseConflict] {
        match self {
            Self::Hunks(hunks) | Self::MatchesMoved { hunks, .. } => hunks,
            Self::CreatedSince
            | Self::RemovedSince
            | Self::ChangedBeforeDelete
            | Self::BaseNotKept => &[],
        }
    }
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
            ConflictReason::Hunks(hunks) => write_hunks(f, path, hunks),
            ConflictReason::MatchesMoved {
                appeared,
                vanished,
                hunks,
            } => {
                write!(
                    f,
                    "`{path}`: the rewrite no longer finds the preview's matches, so it was merged by lines."
                )?;
                write_matches(f, "appeared", appeared)?;
                write_matches(f, "vanished", vanished)?;
                if appeared.is_empty() && vanished.is_empty() {
                    write!(f, "\n  the same matches, in another order")?;
                }
                writeln!(f)?;
                write_hunks(f, path, hunks)
            }
        }
    }
}

/// `  appeared: a, b` (nothing when there are none).
fn write_matches(f: &mut fmt::Formatter<'_>, name: &str, matches: &[String]) -> fmt::Result {
    if matches.is_empty() {
        return Ok(());
    }
    write!(f, "\n  {name}: {}", matches.join(", "))
}

/// Each conflicting hunk with both sides.
fn write_hunks(f: &mut fmt::Formatter<'_>, path: &str, hunks: &[RebaseConflict]) -> fmt::Result {
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
