//! A staged preview's facts ([`PreviewFacts`]) as its result shows them, read from the hunk
//! model: each file's counts and hunk addresses are its [`FileHunks`](crate::FileHunks)'
//! ([`FileHunks::facts`](crate::FileHunks::facts)). A preview may change thousands of files,
//! so nothing here is held per file: the totals are the counts its producer made as it diffed
//! ([`Preview::lines`](crate::Preview::lines), the same line diff), and the file list is
//! computed file by file from the change set's spool as the details are written, on worker
//! threads, in path order ([`StagedDetails`]).

use std::collections::HashSet;
use std::ops::ControlFlow;

use resolve_core::{PreviewFacts, PreviewFile};
use resolve_store::{ChangeSet, SpooledChangeSet, Store};
use serde::ser::{Error as _, SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::error::EditError;
use crate::ordered::{default_threads, map_in_order};
use crate::preview::{ResultDetails, details_value};
use crate::review::file_hunks;

/// The facts of every file of `change_set` whose hunks can be shown, in path order. A file
/// whose base is gone (it changed since the preview) has no hunks to address and is left out.
pub fn preview_files(store: &Store, change_set: &ChangeSet) -> Result<Vec<PreviewFile>, EditError> {
    let mut files = Vec::with_capacity(change_set.len());
    for (path, change) in change_set.files() {
        if let Some(hunks) = file_hunks(store, path, change)? {
            files.push(hunks.facts());
        }
    }
    Ok(files)
}

/// The file list of a spooled change set's facts, serialized as a list of [`PreviewFile`]s
/// computed file by file from the spool.
#[derive(Debug, Clone, Copy)]
pub struct SpooledFiles<'a> {
    /// The store holding the bases and new contents.
    pub store: &'a Store,
    /// The files.
    pub change_set: &'a SpooledChangeSet,
}

impl Serialize for SpooledFiles<'_> {
    /// Each file's hunks are built on the worker threads (a diff of its base and its new
    /// text: on a preview of hundreds of files, a sixth of its time when done on this thread),
    /// and written here in path order as they come.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut list = serializer.serialize_seq(None)?;
        let mut failed = None;
        map_in_order(
            self.change_set.changes(),
            default_threads(),
            |file| -> Result<Option<PreviewFile>, EditError> {
                let (path, change) = file?;
                Ok(file_hunks(self.store, &path, &change)?.map(|hunks| hunks.facts()))
            },
            |facts| {
                let written = match facts {
                    Ok(Some(facts)) => list.serialize_element(&facts),
                    Ok(None) => Ok(()),
                    Err(error) => Err(S::Error::custom(error)),
                };
                match written {
                    Ok(()) => ControlFlow::Continue(()),
                    Err(error) => {
                        failed = Some(error);
                        ControlFlow::Break(())
                    }
                }
            },
        );
        match failed {
            Some(error) => Err(error),
            None => list.end(),
        }
    }
}

/// A staged preview's details as its result shows them: the producer's details (with its file
/// list, see [`ResultDetails`]), then the preview's facts with their files listed from the
/// spool. A producer's detail of the same name as a fact gives way to the fact.
#[derive(Debug, Clone)]
pub struct StagedDetails<'a> {
    /// The producer's details.
    pub producer: ResultDetails<'a>,
    /// The facts.
    pub facts: PreviewFacts<SpooledFiles<'a>>,
}

impl StagedDetails<'_> {
    /// The details as one JSON value, every list read into it.
    pub fn to_value(&self) -> Result<Value, EditError> {
        details_value(self)
    }
}

impl Serialize for StagedDetails<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        /// The producer's details without the facts' names.
        struct Unshadowed<'a> {
            producer: &'a ResultDetails<'a>,
            shadowed: HashSet<String>,
        }
        impl Serialize for Unshadowed<'_> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let Value::Object(details) = self.producer.details else {
                    return serializer.serialize_map(Some(0))?.end();
                };
                let mut map = serializer.serialize_map(None)?;
                for (name, value) in details.iter().filter(|(name, _)| {
                    !self.shadowed.contains(*name) && Some(name.as_str()) != self.producer.files_key
                }) {
                    map.serialize_entry(name, value)?;
                }
                if let Some(key) = self.producer.files_key {
                    map.serialize_entry(key, &self.producer.change_set.file_counts())?;
                }
                map.end()
            }
        }
        #[derive(Serialize)]
        struct Shown<'a> {
            #[serde(flatten)]
            producer: Unshadowed<'a>,
            #[serde(flatten)]
            facts: &'a PreviewFacts<SpooledFiles<'a>>,
        }
        // The facts' names, read from the facts without their files.
        let shadowed = match serde_json::to_value(self.facts.clone().with_files(())) {
            Ok(Value::Object(names)) => names.into_iter().map(|(name, _)| name).collect(),
            Ok(_) => HashSet::new(),
            Err(error) => return Err(S::Error::custom(error)),
        };
        Shown {
            producer: Unshadowed {
                producer: &self.producer,
                shadowed,
            },
            facts: &self.facts,
        }
        .serialize(serializer)
    }
}
