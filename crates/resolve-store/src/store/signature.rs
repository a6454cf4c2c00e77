//! Signing records and telling foreign ones: what this user's `resolve` writes carries an
//! HMAC ([`RecordKey`]) over what resolving it does — its id and origin, its change set's
//! fingerprint (every path, base hash and new content hash, computed from the change set, not
//! the stored field) and its MCP apply and reject calls, and what re-derives its change when it has that. A record without a valid one (a cloned
//! `.resolve/`, an older format) is foreign: the store marks it when reading it
//! ([`PendingRecord::foreign`]), keeps it foreign when writing it back, and runs its payload
//! (writes its files, calls its MCP tool, puts it in place for a check) only through a store
//! [accepting foreign actions](Store::accepting_foreign).

use std::sync::{Arc, OnceLock};

use super::Store;
use super::records::{HistoryRecord, PendingRecord};
use crate::error::StoreError;
use crate::record_key::RecordKey;

/// What the signature of a record covers; `fingerprint` is its change set's, computed.
fn signed_message<C>(record: &PendingRecord<C>, fingerprint: &str) -> Vec<u8> {
    let mcp = record
        .mcp
        .as_ref()
        .and_then(|action| serde_json::to_vec(action).ok())
        .unwrap_or_else(|| b"-".to_vec());
    let mut message = Vec::with_capacity(128 + mcp.len());
    for part in [
        b"resolve record v1".as_slice(),
        record.id.as_bytes(),
        record.origin.to_string().as_bytes(),
        fingerprint.as_bytes(),
        &mcp,
    ] {
        message.extend_from_slice(part);
        message.push(0);
    }
    // Only records that carry one sign it, so those written before it existed still verify.
    if let Some(rederive) = &record.rederive {
        message.extend_from_slice(b"rederive");
        message.push(0);
        message.extend_from_slice(rederive.to_string().as_bytes());
        message.push(0);
    }
    message
}

/// Where a store's key comes from: given, or read from the per-user directory on first use.
pub(super) type KeyCell = Arc<OnceLock<RecordKey>>;

impl Store {
    /// This store signing and verifying records with `key`. By default, the key in the per-user
    /// directory ([`RecordKey::from_user_dir`]), read (or created) on first use.
    #[must_use]
    pub fn with_record_key(mut self, key: RecordKey) -> Self {
        self.key = Arc::new(OnceLock::from(key));
        self
    }

    /// This store running foreign actions' payloads when `yes` (a person who named the action).
    /// By default a foreign action is refused with [`StoreError::ForeignAction`] before its
    /// files are written, its MCP tool is called or it is put in place for a check.
    #[must_use]
    pub fn accepting_foreign(mut self, yes: bool) -> Self {
        self.accept_foreign = yes;
        self
    }

    /// The key that signs this store's records.
    pub(super) fn record_key(&self) -> Result<&RecordKey, StoreError> {
        if let Some(key) = self.key.get() {
            return Ok(key);
        }
        let key = RecordKey::from_user_dir()?;
        Ok(self.key.get_or_init(|| key))
    }

    /// Sign `record`, whose change set's fingerprint is `fingerprint`, unless it is foreign (a
    /// foreign record stays foreign whatever is written into it).
    pub(super) fn sign<C>(
        &self,
        record: &mut PendingRecord<C>,
        fingerprint: &str,
    ) -> Result<(), StoreError> {
        if !record.foreign {
            record.mac = Some(self.record_key()?.mac(&signed_message(record, fingerprint)));
        }
        Ok(())
    }

    /// Sign a pending record read from the store (see [`Store::sign`]).
    pub(super) fn sign_pending(&self, record: &mut PendingRecord) -> Result<(), StoreError> {
        let fingerprint = record.change_set.fingerprint();
        self.sign(record, &fingerprint)
    }

    /// `record` with [`PendingRecord::foreign`] set from its signature.
    pub(super) fn verified(&self, mut record: PendingRecord) -> Result<PendingRecord, StoreError> {
        record.foreign = match &record.mac {
            None => true,
            Some(mac) => {
                let message = signed_message(&record, &record.change_set.fingerprint());
                !self.record_key()?.verifies(&message, mac)
            }
        };
        Ok(record)
    }

    /// `record` with its action's [`PendingRecord::foreign`] set from its signature.
    pub(super) fn verified_history(
        &self,
        mut record: HistoryRecord,
    ) -> Result<HistoryRecord, StoreError> {
        record.action = self.verified(record.action)?;
        Ok(record)
    }

    /// Fail with [`StoreError::ForeignAction`] when `record` is foreign and this store does
    /// not accept foreign actions.
    pub fn refuse_foreign(&self, record: &PendingRecord) -> Result<(), StoreError> {
        if record.foreign && !self.accept_foreign {
            return Err(StoreError::ForeignAction {
                id: record.id.clone(),
            });
        }
        Ok(())
    }
}
