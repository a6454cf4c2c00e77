//! Checking a pending action: its preview put in place in the workspace as a trial (applied
//! through the transaction with a trial journal, then rolled back from it, even across
//! `kill -9`), or written into a scratch copy of the workspace; and the outcome kept on the
//! pending record. Running the command is the caller's: a closure here, run while the preview
//! is in place.

use std::path::Path;

use super::Store;
use super::records::{PendingRecord, unix_now, write_json};
use super::resolution::{file_writes, merge_aliases};
use crate::check_outcome::{CheckMode, CheckOutcome, CheckRun};
use crate::error::StoreError;
use crate::fs;
use crate::layout::RecordKind;
use crate::transaction::{Purpose, StateChange, Transaction};

impl Store {
    /// Check the pending action `id` in place: under the lock, refuse a stale preview (as
    /// apply does), put the preview's files in place through a trial transaction, call `run`
    /// (which runs the command in the root), then put every file of the preview back to its
    /// base — whatever the command did to it — and keep the outcome on the record.
    ///
    /// The lock is held throughout, so other processes wait as they do for an apply. A process
    /// killed while the preview is in place leaves a trial journal, which the next store
    /// operation rolls back ([`Store::recover`] says so). Files the command changed outside the
    /// preview are left as it left them; the preview's files it changed are added to the
    /// outcome's [`CheckRun::changed_files`].
    pub fn check_in_place<E: From<StoreError>>(
        &self,
        id: &str,
        run: impl FnOnce() -> Result<CheckRun, E>,
    ) -> Result<CheckOutcome, E> {
        let _lock = self.session()?;
        let mut record = self.require_checkable(id)?;
        let targets = self.check_fresh(&record.change_set)?;
        let paths = record.change_set.paths();
        let files = merge_aliases(file_writes(targets, &paths, &record.change_set)?)?;
        let transaction = Transaction {
            workspace: &self.workspace,
            purpose: Purpose::Trial,
            action: record.id.clone(),
            files,
            state: Vec::<StateChange<'_, ()>>::new(),
        };
        let (ran, rollback) = transaction.trial(run)?;
        let mut ran = ran?;
        ran.changed_files.extend(rollback.changed);
        ran.changed_files.sort();
        ran.changed_files.dedup();
        let outcome = CheckOutcome::new(
            ran,
            CheckMode::InPlace,
            record.fingerprint.clone(),
            unix_now(),
        );
        record.check = Some(outcome.clone());
        self.sign_pending(&mut record)?;
        write_json(&self.record_path(RecordKind::Pending, record.seq), &record)?;
        Ok(outcome)
    }

    /// Write the preview of the pending action `id` into `dir`, a copy of the workspace, for a
    /// check in a scratch copy: under the lock, refuse a stale preview (as apply does), then
    /// write each changed file's new content at its place in `dir` (its real name in the
    /// workspace, with the workspace file's permissions) and remove each deleted one. The
    /// workspace is not touched. Returns the record, whose fingerprint
    /// [`Store::record_check`] takes.
    pub fn write_preview_into(&self, id: &str, dir: &Path) -> Result<PendingRecord, StoreError> {
        let _lock = self.session()?;
        let record = self.require_checkable(id)?;
        let targets = self.check_fresh(&record.change_set)?;
        let blobs = self.blobs();
        for (relative, (_path, change)) in targets.iter().zip(record.change_set.files()) {
            let target = dir.join(relative);
            // Whatever the copy holds there (a file, a link) is replaced, never written through.
            fs::remove_file(&target)?;
            if let Some(content) = change.new_content() {
                fs::create_dir_all(&fs::parent_of(&target))?;
                let permissions = fs::permissions(&self.workspace.root().join(relative))?;
                fs::write_new(&target, &blobs.read(content)?, permissions.as_ref())?;
            }
        }
        Ok(record)
    }

    /// Keep the outcome of `run`, a check made `mode` on the change set with `fingerprint`, on
    /// the pending action `id`. [`StoreError::CheckedVersionChanged`] when the action's change set is
    /// no longer that one (it was amended meanwhile); [`StoreError::NotPending`] when it was
    /// resolved.
    pub fn record_check(
        &self,
        id: &str,
        fingerprint: &str,
        mode: CheckMode,
        run: CheckRun,
    ) -> Result<CheckOutcome, StoreError> {
        let _lock = self.session()?;
        let mut record = self.require_pending(id)?;
        if record.fingerprint != fingerprint {
            return Err(StoreError::CheckedVersionChanged { id: id.to_owned() });
        }
        let outcome = CheckOutcome::new(run, mode, record.fingerprint.clone(), unix_now());
        record.check = Some(outcome.clone());
        self.sign_pending(&mut record)?;
        write_json(&self.record_path(RecordKind::Pending, record.seq), &record)?;
        Ok(outcome)
    }

    /// The pending record `id`, when it has files to check.
    fn require_checkable(&self, id: &str) -> Result<PendingRecord, StoreError> {
        let record = self.require_pending(id)?;
        self.refuse_foreign(&record)?;
        match &record.mcp {
            Some(action) => Err(StoreError::NothingToCheck {
                id: id.to_owned(),
                server: action.server.clone(),
                tool: action.apply.tool.clone(),
            }),
            None => Ok(record),
        }
    }
}
