//! Reviews in progress: what a person has marked on a pending action so far (rejected hunks
//! with their reasons, line comments), kept in `reviews/<seq>.json` so that quitting the
//! review and coming back, or going from the terminal to the browser, loses nothing. A draft is
//! signed with the user's record key: one that came with a clone is not shown. A draft whose
//! action is no longer pending is not shown either, and gc removes it.

use serde::{Deserialize, Serialize};

use super::Store;
use super::records::{RecordVersion, id_seq, read_json, write_json};
use super::review::LineComment;
use crate::error::StoreError;
use crate::fs;
use crate::layout::RecordKind;

/// A review of one pending action in progress.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReviewDraft {
    /// The version of the action the marks were made on (the review's fingerprint); a draft
    /// of another version no longer fits its hunks.
    pub action_version: String,
    /// The hunks rejected so far.
    pub rejected: Vec<DraftRejection>,
    /// The line comments written so far.
    pub comments: Vec<LineComment>,
}

impl ReviewDraft {
    /// Whether nothing is marked: such a draft is not kept.
    pub fn is_empty(&self) -> bool {
        self.rejected.is_empty() && self.comments.is_empty()
    }
}

/// One hunk rejected in a review in progress.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DraftRejection {
    /// Its address, `path#N`.
    pub address: String,
    /// Why, when the person said.
    pub reason: Option<String>,
}

/// A draft as stored, with its action's id and the MAC over both.
#[derive(Serialize, Deserialize)]
struct StoredDraft {
    version: RecordVersion,
    id: String,
    draft: ReviewDraft,
    mac: String,
}

/// The bytes a draft's signature covers: the action's id and the draft.
fn signed_message(id: &str, draft: &ReviewDraft) -> Result<Vec<u8>, StoreError> {
    let mut message = format!("review-draft\n{id}\n").into_bytes();
    let body = serde_json::to_vec(draft).map_err(|error| StoreError::CorruptState {
        path: id.into(),
        reason: error.to_string(),
    })?;
    message.extend_from_slice(&body);
    Ok(message)
}

impl Store {
    /// Keep `draft` as the review in progress of the pending action `id` (an empty draft
    /// removes it). The last save wins; no lock is taken, so a review never waits on a check.
    pub fn save_review_draft(&self, id: &str, draft: &ReviewDraft) -> Result<(), StoreError> {
        let seq = draft_seq(id)?;
        let layout = self.workspace.layout();
        let path = layout.review_draft(seq);
        if draft.is_empty() {
            fs::remove_file(&path)?;
            return Ok(());
        }
        layout.check()?;
        fs::create_dir_all(&layout.reviews_dir())?;
        let stored = StoredDraft {
            version: RecordVersion,
            id: id.to_owned(),
            draft: draft.clone(),
            mac: self.record_key()?.mac(&signed_message(id, draft)?),
        };
        write_json(&path, &stored)
    }

    /// The review in progress of the pending action `id`; `None` when there is none, when it
    /// is not signed by this user's key, or when the action is no longer pending.
    pub fn review_draft(&self, id: &str) -> Result<Option<ReviewDraft>, StoreError> {
        let seq = draft_seq(id)?;
        let Some(stored) = read_json::<StoredDraft>(&self.workspace.layout().review_draft(seq))?
        else {
            return Ok(None);
        };
        if stored.id != id
            || !self
                .record_key()?
                .verifies(&signed_message(id, &stored.draft)?, &stored.mac)
            || !self.is_pending_seq(seq)?
        {
            return Ok(None);
        }
        Ok(Some(stored.draft))
    }

    /// Remove the drafts whose action is no longer pending (or, with `dry_run`, count them).
    pub(super) fn remove_orphan_drafts(&self, dry_run: bool) -> Result<usize, StoreError> {
        let dir = self.workspace.layout().reviews_dir();
        let mut removed = 0;
        for name in fs::list_dir(&dir)? {
            let Some(seq) = name
                .strip_suffix(".json")
                .and_then(|seq| seq.parse::<u64>().ok())
            else {
                continue;
            };
            if self.is_pending_seq(seq)? {
                continue;
            }
            if !dry_run {
                fs::remove_file(&dir.join(&name))?;
            }
            removed += 1;
        }
        Ok(removed)
    }
}

impl Store {
    /// Whether the action numbered `seq` is pending: its record file exists (numbers are never
    /// reused, so this needs no parse of a record that may be megabytes long; the review asks
    /// it for every file it computes).
    fn is_pending_seq(&self, seq: u64) -> Result<bool, StoreError> {
        fs::exists(&self.record_path(RecordKind::Pending, seq))
    }
}

/// The sequence number of the pending action `id`, which names its draft.
fn draft_seq(id: &str) -> Result<u64, StoreError> {
    id_seq(id).ok_or_else(|| StoreError::NotPending { id: id.to_owned() })
}
