//! Telling the model what a person did to the actions it staged: before each request, the
//! session takes the reviewer notes waiting for it (a person amended, applied all or part of,
//! or discarded a preview, in this process or another) and appends each as its own reminder
//! message, like the `resolve` reminder (user role; for Anthropic a text block in the user
//! turn). A note is taken from the store as it is sent, so it is sent once. The same way it
//! learns that a file under one of its pending previews moved since it was staged.
//!
//! Owned here: the [`ReviewerNotes`] hook and its store-backed form. Not owned: when notes are
//! written or their words (`resolve-edit` and `resolve-store`).

use std::fmt;

use resolve_edit::{Origin, Store, take_origin_notes};

/// Where a session learns what a person did to the actions its model staged.
pub trait ReviewerNotes: Send + Sync + fmt::Debug {
    /// Take the notes not yet told, oldest first, as the texts the model reads; each is
    /// handed out once.
    fn take(&self) -> Result<Vec<String>, String>;
}

/// The reviewer notes of one origin in the durable store (`agent` for `resolve agent`).
#[derive(Debug, Clone)]
pub struct StoreReviewerNotes {
    store: Store,
    origin: Origin,
}

impl StoreReviewerNotes {
    /// The notes `store` keeps for the actions `origin` staged.
    pub fn new(store: Store, origin: Origin) -> Self {
        Self { store, origin }
    }
}

impl ReviewerNotes for StoreReviewerNotes {
    fn take(&self) -> Result<Vec<String>, String> {
        take_origin_notes(&self.store, &self.origin).map_err(|error| error.to_string())
    }
}
