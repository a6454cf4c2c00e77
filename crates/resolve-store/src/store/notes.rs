//! Reviewer notes: what a person did to an action a model staged (amended it, applied all or
//! part of it, discarded it), kept until that model is told, once. Who decided ([`DecidedBy`])
//! says whether a decision makes a note: a person's about an action of an `agent` or `mcp:<id>`
//! origin does; a model's own never does, and nothing staged at the command line has a model
//! to tell.
//!
//! A note is a file `.resolve/notes/<seq>.json` per action. A resolution writes it in the
//! transaction that moves the action to the history, so a crash leaves both or neither; an
//! amendment writes it after the amended pending record. Events not yet told merge into the
//! one note of their action. [`Store::take_reviewer_notes`] reads and removes an origin's
//! notes under the lock: a note is handed out once, or (when the process dies before it
//! delivers what it took) never, but never twice and never to another origin.
//!
//! Notes are bounded: an MCP connection drops its own when it ends
//! ([`Store::drop_reviewer_notes`]: nobody else is told them), and a retention pass drops the
//! notes of actions that are gone and keeps at most [`MAX_NOTES_PER_ORIGIN`] per origin.

use std::collections::{HashMap, HashSet};

use resolve_core::DecidedBy;
use serde::{Deserialize, Serialize};

use super::Store;
use super::records::{Attribution, Origin, Outcome, PendingRecord, RecordVersion, read_json};
use super::review::{Amendment, Review};
use crate::error::StoreError;
use crate::fs;
use crate::layout::record_seq;

/// The most notes kept for one origin not yet told; a retention pass drops the oldest past it.
pub const MAX_NOTES_PER_ORIGIN: usize = 100;

/// How a person resolved an action, as its note tells the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NoteResolution {
    /// Applied (all or part of it) or discarded.
    pub outcome: Outcome,
    /// The reason the person gave.
    pub reason: String,
    /// Files written.
    pub applied_files: Vec<String>,
    /// Files left out.
    pub dropped_files: Vec<String>,
    /// Hunks picked one by one, and reasons for rejected ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<Review>,
}

/// What a person did to an action a model staged, not yet told to that model: kept under
/// `.resolve/notes/<seq>.json` until the model's next request (`resolve agent`) or tool result
/// (`resolve mcp`) carries it, then removed, so it is told once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReviewerNote {
    /// The record format.
    pub version: RecordVersion,
    /// The action's id.
    pub id: String,
    /// The action's seq (the note file's name).
    pub seq: u64,
    /// The origin that staged the action: the only one told.
    pub origin: Origin,
    /// The action's label.
    pub label: String,
    /// Who made the decisions it reports (a person; kept for readers that tell them apart).
    pub decided_by: DecidedBy,
    /// Amendments made since the model was last told, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub amendments: Vec<Amendment>,
    /// How the action was resolved, once it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution: Option<NoteResolution>,
}

impl ReviewerNote {
    /// An empty note about `record`, decided by `decided_by`.
    fn about(record: &PendingRecord, decided_by: DecidedBy) -> Self {
        Self {
            version: RecordVersion,
            id: record.id.clone(),
            seq: record.seq,
            origin: record.origin.clone(),
            label: record.label.clone(),
            decided_by,
            amendments: Vec::new(),
            resolution: None,
        }
    }
}

impl Store {
    /// The note a decision about `record` through this store makes, merged into the one not yet
    /// told for it; `None` when it makes none (a model decided, or no model staged it). Call
    /// under the lock.
    pub(super) fn note_for(
        &self,
        record: &PendingRecord,
        attribution: Option<&Attribution>,
    ) -> Result<Option<ReviewerNote>, StoreError> {
        let decider = attribution.map_or(DecidedBy::Model, |attribution| attribution.decided_by);
        // A decision made where the action was staged (an approval prompt of that agent or
        // connection) is told in that call's own result, so it makes no note.
        let told_to_a_model = match record.origin {
            Origin::Agent | Origin::Mcp(_) | Origin::HostSession { .. } => {
                self.resolver.as_ref() != Some(&record.origin)
            }
            Origin::Cli => false,
        };
        if decider != DecidedBy::Person || !told_to_a_model {
            return Ok(None);
        }
        let path = self.workspace.layout().note_file(record.seq);
        let earlier = read_json::<ReviewerNote>(&path)?.filter(|note| note.id == record.id);
        Ok(Some(
            earlier.unwrap_or_else(|| ReviewerNote::about(record, decider)),
        ))
    }

    /// The note of a resolution of `record` (see [`Store::note_for`]).
    pub(super) fn resolution_note(
        &self,
        record: &PendingRecord,
        attribution: Option<&Attribution>,
        resolution: NoteResolution,
    ) -> Result<Option<ReviewerNote>, StoreError> {
        Ok(self.note_for(record, attribution)?.map(|mut note| {
            note.resolution = Some(resolution);
            note
        }))
    }

    /// Take every note for `origin`, oldest action first: each is removed as it is handed out,
    /// so no note is handed out twice. Takes the lock only when a note for `origin` is there
    /// (notes are written whole, by rename, so they can be looked at without it).
    pub fn take_reviewer_notes(&self, origin: &Origin) -> Result<Vec<ReviewerNote>, StoreError> {
        if !self.workspace.layout().exists() || self.note_seqs(origin)?.is_empty() {
            return Ok(Vec::new());
        }
        let _lock = self.session()?;
        let mut taken = Vec::new();
        for seq in self.note_seqs(origin)? {
            let path = self.workspace.layout().note_file(seq);
            if let Some(note) = read_json::<ReviewerNote>(&path)? {
                fs::remove_file(&path)?;
                taken.push(note);
            }
        }
        if !taken.is_empty() {
            fs::sync_dir(&self.workspace.layout().notes_dir())?;
        }
        Ok(taken)
    }

    /// Drop every note for `origin` untold (its connection ended, so no model will be told);
    /// returns how many.
    pub fn drop_reviewer_notes(&self, origin: &Origin) -> Result<usize, StoreError> {
        if !self.workspace.layout().exists() || self.note_seqs(origin)?.is_empty() {
            return Ok(0);
        }
        let _lock = self.session()?;
        let layout = self.workspace.layout();
        fs::remove_files(
            self.note_seqs(origin)?
                .into_iter()
                .map(|seq| layout.note_file(seq)),
        )
    }

    /// The notes a retention pass drops: those of actions not in `live` (neither pending nor
    /// in the history that stays), and past the newest [`MAX_NOTES_PER_ORIGIN`] of an origin.
    /// Removed unless `dry_run`; returns how many. Call under the lock.
    pub(super) fn prune_notes_locked(
        &self,
        live: &HashSet<u64>,
        dry_run: bool,
    ) -> Result<usize, StoreError> {
        let layout = self.workspace.layout();
        let mut by_origin: HashMap<Origin, Vec<u64>> = HashMap::new();
        let mut dropping = Vec::new();
        for name in fs::list_dir(&layout.notes_dir())? {
            let Some(seq) = record_seq(&name) else {
                continue;
            };
            let Some(note) = read_json::<ReviewerNote>(&layout.note_file(seq))? else {
                continue;
            };
            if live.contains(&seq) {
                by_origin.entry(note.origin).or_default().push(seq);
            } else {
                dropping.push(seq);
            }
        }
        for mut seqs in by_origin.into_values() {
            seqs.sort_unstable_by(|a, b| b.cmp(a));
            dropping.extend(seqs.into_iter().skip(MAX_NOTES_PER_ORIGIN));
        }
        if !dry_run {
            for seq in &dropping {
                fs::remove_file(&layout.note_file(*seq))?;
            }
        }
        Ok(dropping.len())
    }

    /// The seqs of the notes for `origin`, ascending.
    fn note_seqs(&self, origin: &Origin) -> Result<Vec<u64>, StoreError> {
        let mut seqs = Vec::new();
        for name in fs::list_dir(&self.workspace.layout().notes_dir())? {
            let Some(seq) = record_seq(&name) else {
                continue;
            };
            let path = self.workspace.layout().note_file(seq);
            if read_json::<ReviewerNote>(&path)?.is_some_and(|note| &note.origin == origin) {
                seqs.push(seq);
            }
        }
        seqs.sort_unstable();
        Ok(seqs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::records::default_decider;
    use crate::store::review::{HunkReview, RejectedHunk};

    #[test]
    fn a_person_decides_at_the_command_line_and_the_model_elsewhere() {
        assert_eq!(default_decider(Some(&Origin::Cli)), DecidedBy::Person);
        assert_eq!(default_decider(Some(&Origin::Agent)), DecidedBy::Model);
        assert_eq!(
            default_decider(Some(&Origin::Mcp("c".into()))),
            DecidedBy::Model
        );
        assert_eq!(default_decider(None), DecidedBy::Model);
    }

    #[test]
    fn a_note_round_trips_with_camel_case_keys() {
        let note = ReviewerNote {
            version: RecordVersion,
            id: "pending-action:edit:4".into(),
            seq: 4,
            origin: Origin::Mcp("c1".into()),
            label: "Edit: src/a.rs".into(),
            decided_by: DecidedBy::Person,
            amendments: vec![Amendment {
                path: "src/a.rs".into(),
                diff: "-a\n+b\n".into(),
                amended_at: 9,
            }],
            resolution: Some(NoteResolution {
                outcome: Outcome::Applied,
                reason: "ok".into(),
                applied_files: vec!["src/a.rs".into()],
                dropped_files: Vec::new(),
                review: Some(Review {
                    hunks: vec![HunkReview {
                        path: "src/a.rs".into(),
                        hunks: 3,
                        landed: vec![1, 3],
                        rejected: vec![RejectedHunk {
                            hunk: 2,
                            reason: Some("keep it".into()),
                        }],
                    }],
                    rejected_files: Vec::new(),
                    comments: Vec::new(),
                }),
            }),
        };
        let json = serde_json::to_value(&note).unwrap();
        assert_eq!(json["decidedBy"], "person");
        assert_eq!(json["resolution"]["appliedFiles"][0], "src/a.rs");
        assert_eq!(json["amendments"][0]["amendedAt"], 9);
        assert_eq!(serde_json::from_value::<ReviewerNote>(json).unwrap(), note);
    }
}
