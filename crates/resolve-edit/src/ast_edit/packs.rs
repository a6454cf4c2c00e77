//! Where changed files go as they are computed: the packs of one preview ([`Packs`]), to which
//! each worker thread appends a changed file's new text and diff, and where they went
//! ([`Spooled`]).

use std::sync::{Arc, Mutex, PoisonError};

use resolve_store::{Blobs, Pack, PackWriter, sha256};

use crate::error::EditError;

/// The packs of one preview: each worker thread appends the new text and the diff of every file
/// it changes to a pack of its own (see [`PackWriter`]), so a preview holds neither; the
/// assembly reads each diff back for the text.
pub(super) struct Packs {
    blobs: Blobs,
    /// Packs no thread is writing.
    idle: Mutex<Vec<PackWriter>>,
}

/// Where a changed file's new text and then its diff went, back to back, in one pack.
pub(super) struct Spooled {
    pub(super) pack: Arc<Pack>,
    /// Where the new text starts; the diff follows it.
    pub(super) offset: u64,
    pub(super) new_len: u64,
    pub(super) new_hash: [u8; 32],
    pub(super) diff_len: u64,
}

impl Packs {
    pub(super) fn new(blobs: Blobs) -> Self {
        Self {
            blobs,
            idle: Mutex::new(Vec::new()),
        }
    }

    /// Append a changed file's new text, then its diff, to a pack.
    pub(super) fn put(&self, new: &str, diff: &str) -> Result<Spooled, EditError> {
        let taken = self
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        let mut pack = match taken {
            Some(pack) => pack,
            None => self.blobs.create_pack()?,
        };
        let appended = pack.append(new.as_bytes()).and_then(|offset| {
            pack.append(diff.as_bytes())?;
            Ok(Spooled {
                pack: Arc::clone(pack.pack()),
                offset,
                new_len: new.len() as u64,
                new_hash: sha256(new.as_bytes()),
                diff_len: diff.len() as u64,
            })
        });
        self.idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(pack);
        Ok(appended?)
    }
}
