//! Amending a pending action: a reviewer replaces one file's new content (the action keeps
//! its id, its place in the stack and its base hashes), and the base content every hunk and
//! amendment is computed against.

use super::Store;
use super::records::{PendingRecord, unix_now, write_json};
use super::resolution::refuse_external;
use super::review::Amendment;
use crate::change_set::{Content, FileChange};
use crate::error::StoreError;
use crate::fs;
use crate::hash::content_hash;
use crate::layout::RecordKind;

/// A reviewer's new content for one file of a pending action (see [`Store::amend`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AmendFile {
    /// The [`ChangeSet::fingerprint`](crate::ChangeSet::fingerprint) of the action the
    /// amendment was made on; when it has changed since, the amendment is refused.
    pub fingerprint: String,
    /// The file, as the change set names it.
    pub path: String,
    /// Its new content, the reviewer's version.
    pub content: Content,
    /// The action's preview text with this file's diff recomputed.
    pub preview_text: Content,
    /// A unified diff from the version before to the reviewer's version.
    pub diff: String,
    /// The bytes the file holds now, when the amendment settles a file that moved since the
    /// preview (see `resolve amend --take`): they become the change's base, so it applies
    /// as staged; `None` keeps the base.
    pub rebased_onto: Option<Vec<u8>>,
}

impl Store {
    /// Replace the new content of one file of the pending action `id` with a reviewer's: the
    /// action keeps its id, order and base hashes, takes the new preview text and remembers
    /// the amendment. When a person amends an action a model staged, the model is told (see
    /// [`ReviewerNote`](crate::ReviewerNote)). A file the preview deletes cannot be amended
    /// ([`StoreError::NotEditable`]).
    pub fn amend(&self, id: &str, amend: AmendFile) -> Result<PendingRecord, StoreError> {
        let AmendFile {
            fingerprint,
            path,
            mut content,
            mut preview_text,
            diff,
            rebased_onto,
        } = amend;
        let blobs = self.blobs();
        blobs.intern(&mut content)?;
        blobs.intern(&mut preview_text)?;
        // The new base is kept like any base, so a later move rebases from it.
        let new_base = match rebased_onto {
            Some(base) => Some(blobs.put(&base)?),
            None => None,
        };
        let _lock = self.session()?;
        let mut record = self.require_pending(id)?;
        refuse_external(&record)?;
        if record.fingerprint != fingerprint {
            return Err(StoreError::PreviewChanged { id: id.to_owned() });
        }
        let amended = match record.change_set.get(&path) {
            None => {
                return Err(StoreError::NotInPreview {
                    path,
                    touched: record.change_set.paths(),
                });
            }
            Some(FileChange::Delete { .. }) => return Err(StoreError::NotEditable { path }),
            Some(FileChange::Create { .. }) => match new_base {
                Some(base_hash) => FileChange::update(base_hash, content, 1),
                None => FileChange::Create { content },
            },
            Some(FileChange::Update {
                base_hash,
                replacements,
                base,
                ..
            }) => match new_base {
                Some(new_base) => FileChange::update(new_base, content, *replacements),
                None => FileChange::Update {
                    base_hash: base_hash.clone(),
                    content,
                    replacements: *replacements,
                    base: base.clone(),
                },
            },
        };
        record.change_set.insert(path.clone(), amended);
        record.fingerprint = record.change_set.fingerprint();
        record.preview_text = preview_text;
        let amendment = Amendment {
            path,
            diff,
            amended_at: unix_now(),
        };
        record.amendments.push(amendment.clone());
        let note = self
            .note_for(&record, self.default_attribution().as_ref())?
            .map(|mut note| {
                note.amendments.push(amendment);
                note
            });
        self.sign_pending(&mut record)?;
        write_json(&self.record_path(RecordKind::Pending, record.seq), &record)?;
        if let Some(note) = note {
            write_json(&self.workspace.layout().note_file(record.seq), &note)?;
        }
        Ok(record)
    }

    /// The content `change` of `path` was computed from, when it still exists: the file as it
    /// is now if it hashes to the change's base hash, else the base the store kept (see
    /// [`FileChange::kept_base`]); `None` for a create and when neither holds it (the file
    /// changed since the preview).
    pub fn base_content(
        &self,
        path: &str,
        change: &FileChange,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        let (Some(base_hash), Some(kept)) = (change.base_hash(), change.kept_base()) else {
            return Ok(None);
        };
        let real = self.workspace.resolve(path)?.real;
        if let Some(bytes) = fs::read_bytes(&real).or_else(|error| match error {
            // A directory stands where the file was: it changed.
            StoreError::Io { ref source, .. }
                if source.kind() == std::io::ErrorKind::IsADirectory =>
            {
                Ok(None)
            }
            error => Err(error),
        })? && content_hash(&bytes) == base_hash
        {
            return Ok(Some(bytes));
        }
        let blobs = self.blobs();
        if blobs.holds(&kept)? {
            return blobs.read(&kept).map(|bytes| Some(bytes.into_owned()));
        }
        Ok(None)
    }
}
