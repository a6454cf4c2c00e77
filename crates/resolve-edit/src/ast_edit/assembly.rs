//! Putting the preview together: the files' results, taken in path order ([`Assembly`]), go
//! on to the preview text and the change set's spool as they come, and become the
//! [`AstEditOutcome`] with its label, notes on skipped files and details.

use serde_json::{Value, json};

use super::packs::Spooled;
use super::request::{AstEditOp, AstEditOutcome, AstEditRequest, LIMIT_NOTE, NO_REPLACEMENTS};
use super::rewrite::FileResult;
use resolve_core::{Facts, ProducerFacts, count_noun};
use resolve_store::{BlobWriter, Blobs, ChangeSetWriter, Content, FileChange, Workspace, hex};

use crate::diff::LineCounts;
use crate::error::EditError;
use crate::preview::{Preview, PreviewText};

/// How many skipped files the text lists by name (the details list all).
const SKIPPED_LISTED: usize = 20;

/// The preview, put together from the files' results as they come in path order: a changed
/// file's diff goes on to the preview text and its change on to the change set's spool at once,
/// so what is held does not grow with the files changed. Only the skipped files are kept (they
/// are listed at the end).
pub(super) struct Assembly<'a> {
    workspace: &'a Workspace,
    max_files: Option<usize>,
    /// The request's paths relative to the root, for the details' `scopePath`.
    scope_path: String,
    /// The request's rewrites (`{pat, out}`), for the details' `rewrites`.
    rewrites: Vec<Value>,
    searched: usize,
    /// Files changed, also those past the cap.
    changed: usize,
    /// The lines the diffs of the files within the cap add and remove.
    lines: LineCounts,
    /// The text and the change set, from the first change on.
    written: Option<(PreviewText<BlobWriter>, ChangeSetWriter)>,
    skipped: Vec<(String, String)>,
    /// The first overlap: the file and the two ops.
    overlap: Option<(String, usize, usize)>,
    /// The first change that could not be stored.
    failure: Option<EditError>,
}

impl<'a> Assembly<'a> {
    pub(super) fn new(
        workspace: &'a Workspace,
        max_files: Option<usize>,
        scope_path: String,
        ops: &[AstEditOp],
    ) -> Self {
        Self {
            workspace,
            max_files,
            scope_path,
            rewrites: ops
                .iter()
                .map(|op| json!({"pat": op.pat, "out": op.out}))
                .collect(),
            searched: 0,
            changed: 0,
            lines: LineCounts::default(),
            written: None,
            skipped: Vec::new(),
            overlap: None,
            failure: None,
        }
    }

    /// Take the result of the next file in path order.
    pub(super) fn add(&mut self, result: FileResult) {
        if result.searched() {
            self.searched += 1;
        }
        match result {
            FileResult::Unchanged => {}
            FileResult::Changed {
                path,
                spooled,
                replacements,
                lines,
            } => {
                self.changed += 1;
                let within_cap = self.max_files.is_none_or(|cap| self.changed <= cap);
                if within_cap && self.failure.is_none() {
                    let written = self.write(&path, &spooled, replacements);
                    self.failure = written.err();
                    self.lines += lines;
                }
            }
            FileResult::Skipped { path, reason, .. } => self.skipped.push((path, reason)),
            FileResult::Overlap {
                path,
                first,
                second,
            } => {
                self.overlap.get_or_insert((path, first, second));
            }
            FileResult::Failed(error) => {
                self.failure.get_or_insert(error);
            }
        }
    }

    /// Append a changed file's diff to the text and its change to the change set.
    fn write(
        &mut self,
        path: &str,
        spooled: &Spooled,
        replacements: usize,
    ) -> Result<(), EditError> {
        let blobs = Blobs::of(self.workspace);
        let (text, change_set) = match &mut self.written {
            Some(written) => written,
            None => {
                let writer = blobs.writer()?;
                let text = PreviewText::start(writer).map_err(|error| text_error(&blobs, error))?;
                self.written
                    .insert((text, ChangeSetWriter::new(self.workspace)))
            }
        };
        let diff_len = usize::try_from(spooled.diff_len).map_err(|_| too_large(path))?;
        text.diff(
            &spooled
                .pack
                .read(spooled.offset + spooled.new_len, diff_len)?,
        )
        .map_err(|error| text_error(&blobs, error))?;
        Ok(change_set.push(
            path,
            FileChange::Update {
                base_hash: hex(&spooled.base_hash),
                content: spooled.new_content(),
                replacements,
                base: Some(spooled.base_content()),
            },
        )?)
    }

    /// The outcome: an error, no replacements, or the preview with its label and details.
    pub(super) fn finish(self, request: &AstEditRequest) -> Result<AstEditOutcome, EditError> {
        if let Some(error) = self.failure {
            return Err(error);
        }
        if let Some((path, first, second)) = self.overlap {
            let pattern = |index: usize| {
                request
                    .ops
                    .get(index)
                    .map_or_else(String::new, |op| op.pat.clone())
            };
            return Err(EditError::OverlappingOps {
                first: pattern(first),
                second: pattern(second),
                path,
            });
        }
        let limit_reached = self.max_files.is_some_and(|cap| self.changed > cap);
        let mut notes = Vec::new();
        if !self.skipped.is_empty() {
            notes.push(skipped_note(&self.skipped));
        }
        if limit_reached {
            notes.push(LIMIT_NOTE.to_owned());
        }
        let Some((text, change_set)) = self.written else {
            let mut text = NO_REPLACEMENTS.to_owned();
            if self.searched == 0 {
                text.push_str("\nNo files were searched; check `paths` and `lang`.");
            }
            for note in &notes {
                text.push('\n');
                text.push_str(note);
            }
            return Ok(AstEditOutcome::NoReplacements { text });
        };
        let text = text
            .finish(&notes)
            .map_err(|error| text_error(&Blobs::of(self.workspace), error))?
            .finish()?;
        let change_set = change_set.finish()?;
        let total = change_set.total_replacements();
        let files = change_set.len();
        let label = format!(
            "AST Edit: {} in {}",
            count_noun(total, "replacement"),
            count_noun(files, "file")
        );
        let skipped: Vec<Value> = self
            .skipped
            .iter()
            .map(|(path, reason)| json!({"path": path, "reason": reason}))
            .collect();
        let mut details = json!({
            "totalReplacements": total,
            "filesTouched": files,
            "filesSearched": self.searched,
            "skipped": skipped,
            "limitReached": limit_reached,
            "rewrites": self.rewrites,
        });
        if let Value::Object(map) = &mut details {
            map.extend(ProducerFacts::searched(self.scope_path).to_details());
        }
        Ok(AstEditOutcome::Preview(Box::new(Preview {
            change_set,
            producer: super::request::AST_EDIT,
            label,
            lines: self.lines,
            text: Content::Stored { blob: text },
            details,
            files_key: Some(FILE_REPLACEMENTS),
            rederive: Some(super::rederive::request_json(request)),
        })))
    }
}

/// The details key listing every changed file with its replacements.
const FILE_REPLACEMENTS: &str = "fileReplacements";

/// The error for a preview text that could not be written to its blob.
fn text_error(blobs: &Blobs, error: std::io::Error) -> EditError {
    EditError::io("write a blob in", blobs.dir(), error)
}

/// The error for a diff too large to read back into memory on this machine.
fn too_large(path: &str) -> EditError {
    EditError::DiffTooLarge {
        path: path.to_owned(),
    }
}

/// `Skipped 2 files:` and one `- path: reason` line per file (at most 20 named).
fn skipped_note(skipped: &[(String, String)]) -> String {
    let mut note = format!("Skipped {}:", count_noun(skipped.len(), "file"));
    for (path, reason) in skipped.iter().take(SKIPPED_LISTED) {
        note.push_str(&format!("\n- {path}: {reason}"));
    }
    if skipped.len() > SKIPPED_LISTED {
        note.push_str(&format!(
            "\n- … and {} more",
            skipped.len() - SKIPPED_LISTED
        ));
    }
    note
}
