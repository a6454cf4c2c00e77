//! [`FileTools`]: running the model-facing file tools (the producers, then `read`, `ls`,
//! `grep`) for one origin, from JSON arguments or a producer's typed request, and staging the
//! producers' previews in the durable store. The tools' names, specs and requests are the
//! producers and read_only modules'; keeping a pending stack in step with the store is the
//! pending_source module's.

use std::sync::LazyLock;

use resolve_core::{PreviewFacts, ProducerFacts, ToolResult, ToolSpec};
use resolve_store::{Blobs, NewAction, Origin, StagedRecord, Store, Workspace};
use serde_json::Value;

use crate::ast_edit::DEFAULT_MAX_FILES;
use crate::error::EditError;
use crate::pending_source::StorePendingSource;
use crate::preview::{Preview, ProduceLimits, Produced, ResultDetails};
use crate::preview_facts::{SpooledFiles, StagedDetails};
use crate::producers::{ProducerRequest, producer_specs};
use crate::read_only::ReadTool;

static SPECS: LazyLock<Vec<ToolSpec>> = LazyLock::new(|| {
    let mut specs = producer_specs();
    specs.extend(ReadTool::ALL.map(ReadTool::spec));
    specs
});

/// The specs of the file tools, producers first.
pub fn file_tool_specs() -> &'static [ToolSpec] {
    &SPECS
}

/// Runs file tool calls for one origin: producers stage previews in the store, read-only tools
/// answer at once.
#[derive(Debug, Clone)]
pub struct FileTools {
    workspace: Workspace,
    store: Store,
    origin: Origin,
    max_files: Option<usize>,
}

impl FileTools {
    /// File tools staging previews for `origin`, capped at [`DEFAULT_MAX_FILES`] files per
    /// `ast_edit` preview.
    pub fn new(store: Store, origin: Origin) -> Self {
        Self {
            workspace: store.workspace().clone(),
            store,
            origin,
            max_files: Some(DEFAULT_MAX_FILES),
        }
    }

    /// Change the file cap of `ast_edit` previews (`None`: no cap). By default
    /// [`DEFAULT_MAX_FILES`].
    #[must_use]
    pub fn with_max_files(mut self, max_files: Option<usize>) -> Self {
        self.max_files = max_files;
        self
    }

    /// The store previews are staged in.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Run the tool `name` with raw JSON arguments (checked against its schema first); a staged
    /// preview's result carries its whole text.
    pub fn call(&self, name: &str, args: &Value) -> Result<ToolResult, EditError> {
        self.run(name, args)?.into_result(&self.workspace)
    }

    /// Run the tool `name` like [`FileTools::call`], but leave a staged preview's text in the
    /// store, for a caller that streams it (`resolve ast-edit` prints it from there).
    pub fn run(&self, name: &str, args: &Value) -> Result<FileToolOutput, EditError> {
        if let Some(request) = ProducerRequest::from_args(name, args)? {
            return self.produce(&request);
        }
        let tool = ReadTool::from_name(name)
            .ok_or_else(|| EditError::InvalidRequest(format!("Unknown tool `{name}`.")))?;
        let text = tool.run(&self.workspace, args)?;
        Ok(FileToolOutput::Result(ToolResult::text(text)))
    }

    /// Run a producer's typed request (what `resolve ast-edit`, `edit` and `write` build from
    /// their flags) and stage its preview, leaving the preview's text in the store like
    /// [`FileTools::run`].
    pub fn produce(&self, request: &ProducerRequest) -> Result<FileToolOutput, EditError> {
        let limits = ProduceLimits {
            max_files: self.max_files,
        };
        match request.produce(&self.workspace, limits)? {
            Produced::Nothing(text) => Ok(FileToolOutput::Result(ToolResult::text(text))),
            Produced::Preview(preview) => self.stage(*preview),
        }
    }

    /// Stage `preview` as a durable pending action of this origin.
    pub fn stage(&self, preview: Preview) -> Result<FileToolOutput, EditError> {
        let earlier = self
            .store
            .discarded_with_fingerprint(preview.change_set.fingerprint())?;
        let Preview {
            change_set,
            producer,
            label,
            lines,
            text,
            details,
            files_key,
            rederive,
        } = preview;
        let action = NewAction {
            origin: self.origin.clone(),
            source_tool: producer.name().to_owned(),
            label,
            preview_text: text,
            details,
        };
        let mut record = self.store.stage_rederivable(action, change_set, rederive)?;
        let note = earlier.map(|earlier| {
            format!(
                "Note: an identical change was discarded earlier ({}). Reason given then: {}",
                earlier.action.id, earlier.reason
            )
        });
        let facts = PreviewFacts::totals(
            record.id.clone(),
            record.label.clone(),
            ProducerFacts::scope_of(&record.details),
            (lines.added, lines.removed),
        );
        // The details move to the result; the record's copy was written to the store.
        let details = std::mem::take(&mut record.details);
        Ok(FileToolOutput::Staged(Box::new(StagedPreview {
            record,
            note,
            details,
            files_key,
            facts,
            store: self.store.clone(),
        })))
    }

    /// A pending source over the store for this origin.
    pub fn pending_source(&self) -> StorePendingSource {
        StorePendingSource::new(self.store.clone(), Some(self.origin.clone()))
    }
}

/// What a file tool call produced (see [`FileTools::run`]).
#[derive(Debug)]
pub enum FileToolOutput {
    /// A finished result: a read-only tool's, or a preview with nothing to stage.
    Result(ToolResult),
    /// A preview staged as a pending action.
    Staged(Box<StagedPreview>),
}

impl FileToolOutput {
    /// The result the model reads (a staged preview's whole text, see
    /// [`StagedPreview::into_result`]).
    pub fn into_result(self, workspace: &Workspace) -> Result<ToolResult, EditError> {
        match self {
            Self::Result(result) => Ok(result),
            Self::Staged(staged) => staged.into_result(workspace),
        }
    }
}

/// A preview staged as a pending action, its text still in the store and its change set still
/// in its spool.
#[derive(Debug)]
pub struct StagedPreview {
    /// The pending record (its details moved to [`StagedPreview::details`]).
    pub record: StagedRecord,
    /// A line to show after the preview text (an identical change was discarded before).
    pub note: Option<String>,
    /// The producer's details, without the list of files under
    /// [`StagedPreview::files_key`], which [`StagedPreview::result_details`] adds.
    pub details: Value,
    /// See [`Preview::files_key`].
    pub files_key: Option<&'static str>,
    /// The preview's facts, its files listed by [`StagedPreview::result_details`].
    pub facts: PreviewFacts<()>,
    /// The store it is staged in (where its files' bases and new contents are read).
    pub store: Store,
}

impl StagedPreview {
    /// The result's details as they are shown: the producer's, then the preview's facts
    /// ([`PreviewFacts`]), every file list read from the change set's spool as it is written
    /// (so `resolve ast-edit --json` streams them however many there are).
    pub fn result_details(&self) -> StagedDetails<'_> {
        StagedDetails {
            producer: ResultDetails {
                details: &self.details,
                files_key: self.files_key,
                change_set: &self.record.change_set,
            },
            facts: self.facts.clone().with_files(SpooledFiles {
                store: &self.store,
                change_set: &self.record.change_set,
            }),
        }
    }

    /// The result the model reads: the preview text, the note on its own line, the details.
    pub fn into_result(self, workspace: &Workspace) -> Result<ToolResult, EditError> {
        let mut text = Blobs::of(workspace).read_text(&self.record.preview_text)?;
        if let Some(note) = &self.note {
            text.push('\n');
            text.push_str(note);
        }
        let details = self.result_details().to_value()?;
        Ok(ToolResult::text(text).with_details(details))
    }
}
