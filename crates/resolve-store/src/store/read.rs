//! Reading the store: the pending stack, single records, the history, and the record files
//! behind them. None creates anything when there is no state yet, and none waits on a writer:
//! when the lock is free a reader takes it and recovers first; while another process (or
//! thread) holds it, the reader reads the records as they are, without it ([`ReadGuard`]).

use std::cmp::Reverse;
use std::path::PathBuf;
use std::time::Duration;

use serde::de::DeserializeOwned;

use super::Store;
use super::records::{
    HistoryRecord, HistorySummary, Origin, Outcome, PendingRecord, PendingSummary, StoredAction,
    history_key, id_seq, pending_key, read_record,
};
use crate::error::StoreError;
use crate::fs;
use crate::layout::{RecordKind, record_seq};
use crate::lock::StoreLock;
use crate::transaction;

/// How a reader holds the store while it reads.
///
/// Every record file is replaced whole (written aside, then renamed), so a reader without the
/// lock still reads each record whole: the one before a writer's change or the one after it.
/// Recovery needs the lock, so an unlocked reader leaves an interrupted apply to the next
/// taker of the lock.
#[derive(Debug)]
pub(super) enum ReadGuard {
    /// The lock was free: taken, and the store recovered, for the read.
    Locked(#[expect(dead_code, reason = "held for the read, released on drop")] StoreLock),
    /// The lock is held by a writer (a `resolve check`, an apply): the records are read as
    /// they stand, without waiting.
    Unlocked,
}

impl Store {
    /// Take the lock if it is free (and recover), or read without it while a writer holds it;
    /// `None` when there is no state yet.
    pub(super) fn reading(&self) -> Result<Option<ReadGuard>, StoreError> {
        if !self.workspace.layout().exists() {
            return Ok(None);
        }
        match StoreLock::acquire_with_timeout(&self.workspace, Duration::ZERO) {
            Ok(lock) => {
                transaction::recover(&self.workspace)?;
                Ok(Some(ReadGuard::Locked(lock)))
            }
            Err(StoreError::LockTimeout { .. }) => Ok(Some(ReadGuard::Unlocked)),
            Err(error) => Err(error),
        }
    }

    /// Every pending action, head (highest `order`) first.
    pub fn pending(&self) -> Result<Vec<PendingRecord>, StoreError> {
        self.all_records(RecordKind::Pending, pending_key, Self::verified, |record| {
            record.order
        })
    }

    /// Every pending action's identifying fields, head first: [`Store::pending`] without
    /// reading change sets into memory.
    pub fn pending_summaries(&self) -> Result<Vec<PendingSummary>, StoreError> {
        let Some(_lock) = self.reading()? else {
            return Ok(Vec::new());
        };
        let mut records: Vec<PendingSummary> = self
            .load_all(RecordKind::Pending, |summary: &PendingSummary| {
                (&summary.id, summary.seq)
            })?;
        records.sort_by_key(|record| Reverse(record.order));
        Ok(records)
    }

    /// The pending action with this id, or `None` when it is not pending.
    pub fn pending_record(&self, id: &str) -> Result<Option<PendingRecord>, StoreError> {
        let Some(_lock) = self.reading()? else {
            return Ok(None);
        };
        self.find_pending(id)
    }

    /// The pending actions of `origin`, head first.
    pub fn pending_for(&self, origin: &Origin) -> Result<Vec<PendingRecord>, StoreError> {
        let mut records = self.pending()?;
        records.retain(|record| &record.origin == origin);
        Ok(records)
    }

    /// The pending or history record with this id; [`StoreError::UnknownAction`] when neither.
    pub fn get(&self, id: &str) -> Result<StoredAction, StoreError> {
        let unknown = || StoreError::UnknownAction { id: id.to_owned() };
        let Some(_lock) = self.reading()? else {
            return Err(unknown());
        };
        if let Some(record) = self.find_pending(id)? {
            return Ok(StoredAction::Pending(record));
        }
        self.find_history(id)?
            .map(StoredAction::Resolved)
            .ok_or_else(unknown)
    }

    /// Every resolved action, most recently resolved first.
    pub fn history(&self) -> Result<Vec<HistoryRecord>, StoreError> {
        self.all_records(
            RecordKind::History,
            history_key,
            Self::verified_history,
            |record| record.action.order,
        )
    }

    /// Every record of `kind` (`key` gives a record's id and seq), each checked by `verify`,
    /// the highest `order` first; none while the state is being created.
    fn all_records<T: DeserializeOwned>(
        &self,
        kind: RecordKind,
        key: fn(&T) -> (&str, u64),
        verify: fn(&Self, T) -> Result<T, StoreError>,
        order: fn(&T) -> u64,
    ) -> Result<Vec<T>, StoreError> {
        let Some(_lock) = self.reading()? else {
            return Ok(Vec::new());
        };
        let records = self.load_all(kind, key)?;
        let mut records = records
            .into_iter()
            .map(|record| verify(self, record))
            .collect::<Result<Vec<_>, _>>()?;
        records.sort_by_key(|record| Reverse(order(record)));
        Ok(records)
    }

    /// The most recently discarded action whose change set has this fingerprint.
    pub fn discarded_with_fingerprint(
        &self,
        fingerprint: &str,
    ) -> Result<Option<HistoryRecord>, StoreError> {
        let Some(_lock) = self.reading()? else {
            return Ok(None);
        };
        let mut summaries: Vec<HistorySummary> = self
            .load_all(RecordKind::History, |summary: &HistorySummary| {
                (&summary.id, summary.seq)
            })?;
        summaries.sort_by_key(|summary| Reverse(summary.order));
        match summaries.into_iter().find(|summary| {
            summary.outcome == Outcome::Discarded && summary.fingerprint == fingerprint
        }) {
            Some(summary) => self.find_history(&summary.id),
            None => Ok(None),
        }
    }

    /// The pending record `id`; [`StoreError::NotPending`] when there is none.
    pub(super) fn require_pending(&self, id: &str) -> Result<PendingRecord, StoreError> {
        self.find_pending(id)?
            .ok_or_else(|| StoreError::NotPending { id: id.to_owned() })
    }

    /// The pending record `id`, if there is one.
    pub(super) fn find_pending(&self, id: &str) -> Result<Option<PendingRecord>, StoreError> {
        self.find_record(id, RecordKind::Pending, pending_key, Self::verified)
    }

    /// The history record `id`, if there is one.
    pub(super) fn find_history(&self, id: &str) -> Result<Option<HistoryRecord>, StoreError> {
        self.find_record(id, RecordKind::History, history_key, Self::verified_history)
    }

    /// The record `id` of `kind` (`key` gives a record's id and seq), checked by `verify`, if
    /// there is one.
    fn find_record<T: DeserializeOwned>(
        &self,
        id: &str,
        kind: RecordKind,
        key: fn(&T) -> (&str, u64),
        verify: fn(&Self, T) -> Result<T, StoreError>,
    ) -> Result<Option<T>, StoreError> {
        let Some(seq) = id_seq(id) else {
            return Ok(None);
        };
        let record = read_record(&self.record_path(kind, seq), seq, key)?;
        record
            .filter(|record| key(record).0 == id)
            .map(|record| verify(self, record))
            .transpose()
    }

    /// The file of the record of `kind` numbered `seq`.
    pub(super) fn record_path(&self, kind: RecordKind, seq: u64) -> PathBuf {
        self.workspace.layout().record_file(kind, seq)
    }

    /// Every record of `kind`; a record that does not parse is an error, never skipped.
    pub(super) fn load_all<T: DeserializeOwned>(
        &self,
        kind: RecordKind,
        key: fn(&T) -> (&str, u64),
    ) -> Result<Vec<T>, StoreError> {
        let mut records = Vec::new();
        self.for_each_record(kind, key, |record| records.push(record))?;
        Ok(records)
    }

    /// Hand every record of `kind` to `visit`, one at a time.
    pub(super) fn for_each_record<T: DeserializeOwned>(
        &self,
        kind: RecordKind,
        key: fn(&T) -> (&str, u64),
        mut visit: impl FnMut(T),
    ) -> Result<(), StoreError> {
        let dir = self.workspace.layout().records_dir(kind);
        for name in fs::list_dir(&dir)? {
            if let Some(seq) = record_seq(&name)
                && let Some(record) = read_record(&dir.join(&name), seq, key)?
            {
                visit(record);
            }
        }
        Ok(())
    }
}
