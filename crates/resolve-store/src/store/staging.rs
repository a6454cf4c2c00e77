//! Staging: a new pending action at the head of the stack, the id counter that numbers it (and
//! in-memory actions), and moving an action back to the head.

use std::path::PathBuf;

use resolve_core::IdAllocator;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Store;
use super::records::{
    ID_PREFIX, Origin, PendingRecord, RecordVersion, StagedRecord, read_json, unix_now, write_json,
};
use crate::change_set::{ChangeSet, Content};
use crate::error::StoreError;
use crate::fs;
use crate::hash::content_hash;
use crate::layout::{RecordKind, record_seq};
use crate::mcp_action::McpAction;
use crate::spool::SpooledChangeSet;

/// What staging a pending action takes besides its payload: who staged it, with which tool,
/// under which label, and what to show for it.
#[derive(Debug, Clone, PartialEq)]
pub struct NewAction {
    /// Who stages it.
    pub origin: Origin,
    /// The tool that staged it (it names the id: `pending-action:<tool>:<seq>`).
    pub source_tool: String,
    /// Short label (`Edit: src/main.rs`).
    pub label: String,
    /// The preview text; moved to the blob store when staged.
    pub preview_text: Content,
    /// The producer's result details.
    pub details: Value,
}

/// What a staged record carries out: its change set, or an MCP call, and what re-derives the
/// change.
pub(super) struct Payload<C> {
    pub(super) change_set: C,
    pub(super) mcp: Option<McpAction>,
    pub(super) rederive: Option<Value>,
}

/// The id counter's file: `{"nextSeq": N}`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Counters {
    next_seq: u64,
}

/// The store's persisted counter numbers in-memory pending actions too, so no two actions in a
/// root ever share an id.
impl IdAllocator for Store {
    fn next_seq(&self) -> Result<u64, resolve_core::Error> {
        Store::next_seq(self).map_err(|e| resolve_core::Error::PendingSource(e.to_string()))
    }
}

impl Store {
    /// Take the next number of the never-reused id counter (in-memory actions share it).
    pub fn next_seq(&self) -> Result<u64, StoreError> {
        let _lock = self.session()?;
        self.take_seq()
    }

    /// Stage `change_set` as a pending action at the head of the stack; its inline contents
    /// move to the blob store.
    pub fn stage(
        &self,
        action: NewAction,
        change_set: ChangeSet,
    ) -> Result<StagedRecord, StoreError> {
        let change_set = change_set.into_spooled(&self.workspace)?;
        self.stage_spooled(action, change_set)
    }

    /// [`Store::stage`] of a change set in a spool (a producer's preview's): the record is
    /// written from the spool, one change at a time.
    pub fn stage_spooled(
        &self,
        action: NewAction,
        change_set: SpooledChangeSet,
    ) -> Result<StagedRecord, StoreError> {
        self.stage_rederivable(action, change_set, None)
    }

    /// [`Store::stage_spooled`] of a change that `rederive` re-derives on a file that moved
    /// (see [`PendingRecord::rederive`]).
    pub fn stage_rederivable(
        &self,
        action: NewAction,
        change_set: SpooledChangeSet,
        rederive: Option<Value>,
    ) -> Result<StagedRecord, StoreError> {
        let fingerprint = change_set.fingerprint().to_owned();
        let payload = Payload {
            change_set,
            mcp: None,
            rederive,
        };
        self.stage_payload(action, payload, fingerprint.clone(), &fingerprint)
    }

    /// Stage an MCP tool call as a pending action at the head of the stack; resolving it makes
    /// the call (see [`Store::resolve_external`]).
    pub fn stage_mcp(
        &self,
        action: NewAction,
        call: McpAction,
    ) -> Result<PendingRecord, StoreError> {
        let encoded = serde_json::to_vec(&call).unwrap_or_default();
        let fingerprint = format!("mcp:{}", content_hash(&encoded));
        let signed = ChangeSet::new().fingerprint();
        let payload = Payload {
            change_set: ChangeSet::new(),
            mcp: Some(call),
            rederive: None,
        };
        self.stage_payload(action, payload, fingerprint, &signed)
    }

    /// Write the pending record of `action` with its payload, numbered by the counter, signed
    /// over `change_fingerprint` (its change set's [`ChangeSet::fingerprint`]).
    fn stage_payload<C: Serialize>(
        &self,
        action: NewAction,
        payload: Payload<C>,
        fingerprint: String,
        change_fingerprint: &str,
    ) -> Result<PendingRecord<C>, StoreError> {
        let mut action = action;
        self.blobs().intern(&mut action.preview_text)?;
        let _lock = self.session()?;
        let record = self.numbered_record(action, payload, fingerprint, change_fingerprint)?;
        let seq = record.seq;
        write_json(&self.record_path(RecordKind::Pending, seq), &record)?;
        Ok(record)
    }

    /// The record of `action` (its preview text already in the blob store), numbered by the
    /// counter and signed over `change_fingerprint`; the caller holds the lock.
    pub(super) fn numbered_record<C>(
        &self,
        action: NewAction,
        payload: Payload<C>,
        fingerprint: String,
        change_fingerprint: &str,
    ) -> Result<PendingRecord<C>, StoreError> {
        let NewAction {
            origin,
            source_tool,
            label,
            preview_text,
            details,
        } = action;
        let Payload {
            change_set,
            mcp,
            rederive,
        } = payload;
        let seq = self.take_seq()?;
        let mut record = PendingRecord {
            version: RecordVersion,
            id: format!("{ID_PREFIX}{source_tool}:{seq}"),
            seq,
            origin,
            source_tool,
            label,
            created_at: unix_now(),
            order: seq,
            fingerprint,
            change_set,
            mcp,
            preview_text,
            details,
            amendments: Vec::new(),
            rederive,
            told_moved: std::collections::BTreeMap::new(),
            check: None,
            mac: None,
            foreign: false,
        };
        self.sign(&mut record, change_fingerprint)?;
        Ok(record)
    }

    /// Move a pending action to the head of the stack (after a failed apply).
    pub fn bump_to_head(&self, id: &str) -> Result<PendingRecord, StoreError> {
        let _lock = self.session()?;
        let mut record = self.require_pending(id)?;
        record.order = self.take_seq()?;
        self.sign_pending(&mut record)?;
        write_json(&self.record_path(RecordKind::Pending, record.seq), &record)?;
        Ok(record)
    }

    /// Hand out the next seq: never below what the counter says nor below any stored record.
    pub(super) fn take_seq(&self) -> Result<u64, StoreError> {
        let layout = self.workspace.layout();
        let path = layout.counters_file();
        let exhausted = |path: PathBuf| StoreError::CorruptState {
            path,
            reason: "its number leaves no id to hand out".to_owned(),
        };
        let counted = read_json::<Counters>(&path)?.map_or(1, |counters| counters.next_seq);
        let mut seq = counted.max(1);
        for kind in RecordKind::ALL {
            let dir = layout.records_dir(kind);
            for name in fs::list_dir(&dir)? {
                if let Some(stored) = record_seq(&name) {
                    let after = stored
                        .checked_add(1)
                        .ok_or_else(|| exhausted(dir.join(&name)))?;
                    seq = seq.max(after);
                }
            }
        }
        let next_seq = seq.checked_add(1).ok_or_else(|| exhausted(path.clone()))?;
        write_json(&path, &Counters { next_seq })?;
        Ok(seq)
    }
}
