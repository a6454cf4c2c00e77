//! Where changed files go as they are computed: the packs of one preview ([`Packs`]), to which
//! each worker thread appends a changed file's new text, diff and original text (the base a
//! rebase merges from), and where they went ([`Spooled`]).

use std::sync::{Arc, Mutex, PoisonError};

use resolve_store::{Blobs, Content, Pack, PackWriter, hex, sha256};

use crate::error::EditError;

/// The packs of one preview: each worker thread appends the new text, the diff and the original
/// text of every file it changes to a pack of its own (see [`PackWriter`]), so a preview holds
/// none of them and keeps no file per original; the assembly reads each diff back for the text.
pub(super) struct Packs {
    blobs: Blobs,
    /// Packs no thread is writing.
    idle: Mutex<Vec<PackWriter>>,
}

/// Where a changed file's new text, its diff and its original text went, back to back, in one
/// pack.
pub(super) struct Spooled {
    pub(super) pack: Arc<Pack>,
    /// Where the new text starts; the diff and then the original follow it.
    pub(super) offset: u64,
    pub(super) new_len: u64,
    pub(super) new_hash: [u8; 32],
    pub(super) diff_len: u64,
    pub(super) base_len: u64,
    pub(super) base_hash: [u8; 32],
}

impl Spooled {
    /// Where the new text is.
    pub(super) fn new_content(&self) -> Content {
        self.packed(self.offset, self.new_len, &self.new_hash)
    }

    /// Where the original text is.
    pub(super) fn base_content(&self) -> Content {
        self.packed(
            self.offset + self.new_len + self.diff_len,
            self.base_len,
            &self.base_hash,
        )
    }

    fn packed(&self, offset: u64, len: u64, hash: &[u8; 32]) -> Content {
        Content::Packed {
            pack: self.pack.name().to_owned(),
            offset,
            len,
            hash: hex(hash),
        }
    }
}

impl Packs {
    pub(super) fn new(blobs: Blobs) -> Self {
        Self {
            blobs,
            idle: Mutex::new(Vec::new()),
        }
    }

    /// Append a changed file's new text, then its diff, then its original text `base`, to a
    /// pack.
    pub(super) fn put(&self, new: &str, diff: &str, base: &str) -> Result<Spooled, EditError> {
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
            pack.append(base.as_bytes())?;
            Ok(Spooled {
                pack: Arc::clone(pack.pack()),
                offset,
                new_len: new.len() as u64,
                new_hash: sha256(new.as_bytes()),
                diff_len: diff.len() as u64,
                base_len: base.len() as u64,
                base_hash: sha256(base.as_bytes()),
            })
        });
        self.idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(pack);
        Ok(appended?)
    }
}
