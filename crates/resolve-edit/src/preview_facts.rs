//! A staged preview's facts ([`PreviewFacts`]) as its result shows them, read from the hunk
//! model: each file's counts and hunk addresses are its [`FileHunks`](crate::FileHunks)'
//! ([`FileHunks::facts`](crate::FileHunks::facts)). A preview may change thousands of files,
//! so nothing here is held per file: the totals are the counts its producer made as it diffed
//! ([`Preview::lines`](crate::Preview::lines), the same line diff), and the file list is
//! computed file by file from the change set's spool as the details are written, on worker
//! threads, in path order ([`StagedDetails`]).

use std::borrow::Borrow;
use std::collections::HashSet;
use std::ops::ControlFlow;

use resolve_core::{PreviewFacts, PreviewFile};
use resolve_store::{ChangeSet, FileChange, SpooledChangeSet, Store};
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
    for_each_file_facts(
        store,
        change_set.files().map(Ok),
        |error| error,
        |facts| {
            files.push(facts);
            Ok(())
        },
    )?;
    Ok(files)
}

/// Hand `visit` the facts of each file of `changes` (paths with their changes, in path order)
/// whose hunks can be shown, in that order, each file's hunks built on the worker threads (a
/// diff of its base and its new text: on a preview of hundreds of files, a sixth of its time
/// when done on one thread). The first error (reading a change, building hunks, made an `E`
/// by `fail`, or `visit`'s) stops it and is returned.
fn for_each_file_facts<P, C, E>(
    store: &Store,
    changes: impl Iterator<Item = Result<(P, C), EditError>>,
    fail: impl Fn(EditError) -> E,
    mut visit: impl FnMut(PreviewFile) -> Result<(), E>,
) -> Result<(), E>
where
    P: AsRef<str> + Send,
    C: Borrow<FileChange> + Send,
{
    let mut failed = None;
    map_in_order(
        changes,
        default_threads(),
        |file| -> Result<Option<PreviewFile>, EditError> {
            let (path, change) = file?;
            Ok(file_hunks(store, path.as_ref(), change.borrow())?.map(|hunks| hunks.facts()))
        },
        |facts| {
            let visited = match facts {
                Ok(Some(facts)) => visit(facts),
                Ok(None) => Ok(()),
                Err(error) => Err(fail(error)),
            };
            match visited {
                Ok(()) => ControlFlow::Continue(()),
                Err(error) => {
                    failed = Some(error);
                    ControlFlow::Break(())
                }
            }
        },
    );
    failed.map_or(Ok(()), Err)
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
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut list = serializer.serialize_seq(None)?;
        let changes = self.change_set.changes().map(|file| Ok(file?));
        for_each_file_facts(self.store, changes, S::Error::custom, |facts| {
            list.serialize_element(&facts)
        })?;
        list.end()
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
