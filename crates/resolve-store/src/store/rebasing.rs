//! Rebasing at apply: each file that changed since its preview is merged with the store's
//! [`Rebase`] (base → preview into base → current), for an apply (the merged bytes kept, to
//! land in its transaction) or for a look at whether an action still applies
//! ([`Store::rebase_state`]). A record that carries a [`PendingRecord::rederive`] request is
//! first re-derived on the file's current bytes ([`Rebase::rederive`]); the merge decides
//! when that gives nothing.

use super::Store;
use super::records::PendingRecord;
use crate::change_set::{ChangeSet, Content, FileChange, path_order};
use crate::error::StoreError;
use crate::fs;
use crate::hash::content_hash;
use crate::rebase::{ConflictReason, FileConflict, Rebase, Rebased, Rederived};
use serde_json::Value;

/// One file of an action, as [`Store::rebase_file`] takes it.
#[derive(Clone, Copy)]
struct RebaseFile<'a> {
    /// Its path in the change set.
    path: &'a str,
    /// Its change.
    change: &'a FileChange,
    /// What it holds now (`None`: absent).
    current: Option<&'a [u8]>,
    /// The record's re-derivation request.
    rederive: Option<&'a Value>,
}

/// Whether a rebase keeps the merged bytes in the blob store (an apply) or only looks (a
/// state shown to a person).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Keep {
    /// Keep them: they land.
    Merged,
    /// Keep nothing.
    Nothing,
}

/// Whether a pending action applies as staged ([`Store::rebase_state`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RebaseState {
    /// Every file holds what the preview was computed from.
    Fresh,
    /// These files changed since, and the preview rebases onto them cleanly.
    Rebases {
        /// The files, in path order.
        files: Vec<String>,
    },
    /// These files conflict with what changed since; an apply would write nothing.
    Conflicts {
        /// Each conflicting file, with its hunks.
        files: Vec<FileConflict>,
    },
    /// These files changed since, and this store makes no rebase.
    Stale {
        /// The files.
        files: Vec<String>,
    },
}

impl RebaseState {
    /// Its name as `resolve pending --json` gives it: `fresh`, `rebases`, `conflicts` or
    /// `stale`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Fresh => "fresh",
            Self::Rebases { .. } => "rebases",
            Self::Conflicts { .. } => "conflicts",
            Self::Stale { .. } => "stale",
        }
    }
}

/// What [`Store::check_or_rebase`] found.
pub(super) struct Checked {
    /// The files to write, as [`Store::check_fresh`] gives them.
    pub(super) targets: Vec<String>,
    /// The rebased changes, by path.
    pub(super) rebased: Vec<(String, FileChange)>,
    /// Files already as the preview leaves them, which are not written.
    pub(super) settled: Vec<String>,
    /// Those of the rebased files whose change was re-derived rather than merged.
    pub(super) rederived: Vec<String>,
}

/// A file's change rebased onto its current bytes.
struct FileRebase {
    /// What lands.
    change: FileChange,
    /// Whether [`Rebase::rederive`] made it.
    rederived: bool,
}

impl Store {
    /// Whether `record` applies as staged, rebases cleanly onto files that changed since, or
    /// conflicts with them, read without the lock: a snapshot for `resolve pending` and
    /// `resolve show`, never the check before a write (apply makes that one under the lock).
    pub fn rebase_state(&self, record: &PendingRecord) -> Result<RebaseState, StoreError> {
        match self.check_or_rebase(&record.change_set, record.rederive.as_ref(), Keep::Nothing) {
            Ok(checked) if checked.rebased.is_empty() && checked.settled.is_empty() => {
                Ok(RebaseState::Fresh)
            }
            Ok(checked) => {
                let mut files: Vec<String> =
                    checked.rebased.into_iter().map(|(path, _)| path).collect();
                files.extend(checked.settled);
                files.sort_by(|a, b| path_order(a, b));
                Ok(RebaseState::Rebases { files })
            }
            Err(StoreError::Conflicts { files }) => Ok(RebaseState::Conflicts { files }),
            Err(StoreError::Stale { files }) => Ok(RebaseState::Stale { files }),
            Err(error) => Err(error),
        }
    }

    /// [`Store::check_fresh`], rebasing each changed file when this store rebases (see
    /// [`Store::rebasing`]): the files to write (real root-relative names, in the order of
    /// `set`, without those already as the preview leaves them), the rebased changes (each
    /// from the bytes the file holds now), and the files that need no write. `rederive` is the
    /// record's [`PendingRecord::rederive`].
    pub(super) fn check_or_rebase(
        &self,
        set: &ChangeSet,
        rederive: Option<&Value>,
        keep: Keep,
    ) -> Result<Checked, StoreError> {
        let Some(rebase) = &self.rebase else {
            let targets = self.check_fresh(set)?;
            return Ok(Checked {
                targets,
                rebased: Vec::new(),
                settled: Vec::new(),
                rederived: Vec::new(),
            });
        };
        let mut checked = Checked {
            targets: Vec::with_capacity(set.len()),
            rebased: Vec::new(),
            settled: Vec::new(),
            rederived: Vec::new(),
        };
        let mut stale = Vec::new();
        let mut conflicts = Vec::new();
        for (path, change) in set.files() {
            let Some((relative, current)) =
                unless_directory(self.read_target(path), path, &mut stale)?
            else {
                continue;
            };
            let current_hash = current.as_deref().map(content_hash);
            if change.base_hash() == current_hash.as_deref() {
                checked.targets.push(relative);
                continue;
            }
            let file = RebaseFile {
                path,
                change,
                current: current.as_deref(),
                rederive,
            };
            match self.rebase_file(rebase.as_ref(), &file, keep)? {
                Ok(Some(rebased)) => {
                    checked.targets.push(relative);
                    if rebased.rederived {
                        checked.rederived.push(path.to_owned());
                    }
                    checked.rebased.push((path.to_owned(), rebased.change));
                }
                Ok(None) => checked.settled.push(path.to_owned()),
                Err(reason) => conflicts.push(FileConflict {
                    path: path.to_owned(),
                    reason,
                }),
            }
        }
        if !stale.is_empty() {
            return Err(StoreError::Stale { files: stale });
        }
        if !conflicts.is_empty() {
            return Err(StoreError::Conflicts { files: conflicts });
        }
        Ok(checked)
    }

    /// The change that lands `file.change` on a file that now holds `file.current` (`None`:
    /// absent), computed from it: `Ok(None)` when the file is already as the preview leaves it.
    fn rebase_file(
        &self,
        rebase: &dyn Rebase,
        file: &RebaseFile<'_>,
        keep: Keep,
    ) -> Result<Result<Option<FileRebase>, ConflictReason>, StoreError> {
        let RebaseFile {
            path,
            change,
            current,
            rederive,
        } = *file;
        let merged = |change: FileChange| {
            Ok(Ok(Some(FileRebase {
                change,
                rederived: false,
            })))
        };
        let blobs = self.blobs();
        let (content, replacements, current) = match (change, current) {
            (FileChange::Delete { .. }, None) => return Ok(Ok(None)),
            (FileChange::Delete { .. }, Some(_)) => {
                return Ok(Err(ConflictReason::ChangedBeforeDelete));
            }
            (FileChange::Update { .. }, None) => return Ok(Err(ConflictReason::RemovedSince)),
            // Fresh: the caller took it.
            (FileChange::Create { .. }, None) => return merged(change.clone()),
            (FileChange::Create { content }, Some(current)) => (content, 1, current),
            (
                FileChange::Update {
                    content,
                    replacements,
                    ..
                },
                Some(current),
            ) => (content, *replacements, current),
        };
        let current_hash = content_hash(current);
        if *content.hash() == current_hash {
            // Already as the preview leaves it: write the same bytes over it.
            return merged(FileChange::update(
                current_hash,
                content.clone(),
                replacements,
            ));
        }
        let base_content = match change {
            FileChange::Update { .. } => change.kept_base(),
            FileChange::Create { .. } | FileChange::Delete { .. } => None,
        };
        let Some(base_content) = base_content else {
            return Ok(Err(ConflictReason::CreatedSince));
        };
        if !blobs.holds(&base_content)? {
            return Ok(Err(ConflictReason::BaseNotKept));
        }
        let base = blobs.read(&base_content)?;
        let preview = blobs.read(content)?;
        let rederived =
            rederive.and_then(|request| rebase.rederive(request, path, &base, current, &preview));
        let (bytes, rederived) = match rederived {
            Some(Rederived::Clean(bytes)) => (bytes, true),
            Some(Rederived::Mismatch { appeared, vanished }) => {
                match rebase.rebase(&base, current, &preview) {
                    Rebased::Clean(bytes) => (bytes, false),
                    Rebased::Conflicts(hunks) => {
                        return Ok(Err(ConflictReason::MatchesMoved {
                            appeared,
                            vanished,
                            hunks,
                        }));
                    }
                }
            }
            None => match rebase.rebase(&base, current, &preview) {
                Rebased::Clean(bytes) => (bytes, false),
                Rebased::Conflicts(hunks) => return Ok(Err(ConflictReason::Hunks(hunks))),
            },
        };
        let blob = match keep {
            Keep::Merged => blobs.put(&bytes)?,
            Keep::Nothing => content_hash(&bytes),
        };
        Ok(Ok(Some(FileRebase {
            change: FileChange::update(current_hash, Content::Stored { blob }, replacements),
            rederived,
        })))
    }

    /// Confine `path`, follow it to the real file, and read it: its root-relative name and
    /// its bytes (`None` when absent).
    fn read_target(&self, path: &str) -> Result<(String, Option<Vec<u8>>), StoreError> {
        let (relative, real) = self.located_target(path)?;
        Ok((relative, fs::read_bytes(&real)?))
    }
}

/// `target`, the file found at `path`; `None` after listing `path` in `stale` when a directory
/// now stands where the preview saw a file (or none): it changed.
pub(super) fn unless_directory<T>(
    target: Result<T, StoreError>,
    path: &str,
    stale: &mut Vec<String>,
) -> Result<Option<T>, StoreError> {
    match target {
        Ok(target) => Ok(Some(target)),
        Err(StoreError::Io { source, .. }) if source.kind() == std::io::ErrorKind::IsADirectory => {
            stale.push(path.to_owned());
            Ok(None)
        }
        Err(error) => Err(error),
    }
}
