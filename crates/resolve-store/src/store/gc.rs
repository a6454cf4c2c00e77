//! Garbage collection of the blob store: what every record still needs, and removing the rest
//! once it is older than [`BLOB_GRACE`]; resolutions run it themselves at most once per grace
//! period.

use std::collections::HashSet;
use std::time::Duration;

use serde::Deserialize;

use super::Store;
use super::records::{Outcome, RecordVersion, original_of};
use crate::change_set::{ChangeSet, Content, FileChange};
use crate::error::StoreError;
use crate::layout::RecordKind;

/// How long an unneeded blob is kept before an apply, discard or undo removes it: a preview
/// writes its blobs before it is staged, and it is computed without the lock.
pub const BLOB_GRACE: Duration = Duration::from_secs(60 * 60);

/// What a pending or history record keeps in the blob store, read without the rest (its
/// details above all): what collecting garbage needs.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct BlobUse {
    #[serde(rename = "version")]
    _version: RecordVersion,
    id: String,
    seq: u64,
    preview_text: Content,
    #[serde(default)]
    change_set: ChangeSet,
    /// `None` for a pending record.
    #[serde(default)]
    outcome: Option<Outcome>,
    #[serde(default)]
    undone: bool,
    #[serde(default)]
    applied_files: Vec<String>,
}

impl BlobUse {
    /// The blobs and packs it needs: its preview text; when pending, its new contents and the
    /// bases of its updates; when
    /// an apply that can still be undone, its originals.
    fn needs(&self, mut need: impl FnMut(&Content)) {
        need(&self.preview_text);
        match (self.outcome, self.undone) {
            (None, _) => {
                for (_, change) in self.change_set.files() {
                    change.new_content().map(&mut need);
                    // The base an update was computed from, which a rebase merges from.
                    if let FileChange::Update { base_hash, .. } = change {
                        need(&Content::Stored {
                            blob: base_hash.clone(),
                        });
                    }
                }
            }
            (Some(Outcome::Applied), false) => {
                for path in &self.applied_files {
                    if let Some(Some(original)) = original_of(&self.change_set, path) {
                        need(&original);
                    }
                }
            }
            (Some(_), _) => {}
        }
    }
}

/// The id and seq a record read for its blobs carries.
fn blob_use_key(record: &BlobUse) -> (&str, u64) {
    (&record.id, record.seq)
}

impl Store {
    /// Remove the blobs no record needs that are older than `grace`; returns how many files
    /// were removed. Applies, discards and undos do this themselves (with [`BLOB_GRACE`]).
    ///
    /// A record needs its preview text; a pending one, its new contents; an apply that can still
    /// be undone, its originals (undo compares the written files by hash). The new contents of a
    /// resolved action are not kept: its preview text shows what it changed.
    pub fn collect_garbage(&self, grace: Duration) -> Result<usize, StoreError> {
        let Some(_lock) = self.read_session()? else {
            return Ok(0);
        };
        self.collect_garbage_locked(grace)
    }

    fn collect_garbage_locked(&self, grace: Duration) -> Result<usize, StoreError> {
        let mut needed = HashSet::new();
        let mut need = |content: &Content| {
            if let Some(name) = content.blob_name() {
                needed.insert(name.to_owned());
            }
        };
        for kind in RecordKind::ALL {
            self.for_each_record(kind, blob_use_key, |record: BlobUse| {
                record.needs(&mut need);
            })?;
        }
        self.blobs().remove_unneeded(&needed, grace)
    }

    /// [`Store::collect_garbage`] as a resolution starts, under its lock, at most once per
    /// [`BLOB_GRACE`] (it reads every record): before the resolution loads its own record, so
    /// the two never take memory at once. A failure here is not the resolution's failure: the
    /// blobs stay until the next try.
    pub(super) fn tidy_blobs(&self) {
        let blobs = self.blobs();
        if blobs.collected_within(BLOB_GRACE) {
            return;
        }
        if self.collect_garbage_locked(BLOB_GRACE).is_ok() {
            let _ = blobs.mark_collected();
        }
    }
}
