//! The model-facing file tools (`ast_edit`, `edit`, `write`, `apply_patch`, `read`, `ls`, `grep`): their
//! specs, argument checking, running them, and staging the producers' previews in the durable
//! store. Keeping a pending stack in step with the store is the pending_source module's.

use std::sync::LazyLock;

use resolve_core::{ToolResult, ToolSpec};
use resolve_store::{Blobs, NewAction, Origin, StagedRecord, Store, Workspace};
use serde_json::{Map, Value, json};

use crate::apply_patch::{ApplyPatchOutcome, ApplyPatchRequest, preview_apply_patch};
use crate::ast_edit::{AstEditOutcome, AstEditRequest, DEFAULT_MAX_FILES, preview_ast_edit};
use crate::error::EditError;
use crate::pending_source::StorePendingSource;
use crate::preview::{Preview, ResultDetails};
use crate::producer::Producer;
use crate::read_tools::{self, GrepRequest, LsRequest, ReadRequest};
use crate::text_edit::{EditRequest, WriteRequest, preview_edit, preview_write};

const AST_EDIT_DESCRIPTION: &str = "\
Structural search-and-rewrite with ast-grep patterns, staged as a preview: nothing is written until you call `resolve`.
- `ops`: [{`pat`, `out`}]. `pat` is code in the target language with metavariables: `$X` matches one node, `$$$ARGS` any number of nodes. `out` is the replacement and may use the same metavariables. All ops match the original text; only the outermost of nested matches is rewritten.
- `paths`: files, directories or globs relative to the workspace root (`.gitignore` is honored).
- `lang` (optional): language name (rust, python, typescript, tsx, javascript, go, …); by default from each file's extension.
Patterns do not match inside macro invocations such as `println!(…)`. The result is a unified diff of the staged change.";

const EDIT_DESCRIPTION: &str = "\
Replace exact text in one file, staged as a preview: nothing is written until you call `resolve`.
`old_text` must match the file exactly (whitespace included) and occur once, unless `replace_all` is true.";

const WRITE_DESCRIPTION: &str = "\
Create a file or replace its whole content, staged as a preview: nothing is written until you call `resolve`.";

const APPLY_PATCH_DESCRIPTION: &str = "\
Add, delete, move and update files with one patch, staged as one preview: nothing is written until you call `resolve`.
`input` is the whole patch:
*** Begin Patch
*** Add File: <path>        (every line of the new file starts with `+`)
*** Delete File: <path>
*** Update File: <path>
*** Move to: <new path>     (optional, right after Update File)
@@ <a line that occurs once before the change, e.g. `fn main() {`>   (or a bare `@@`)
 context line (starts with a space)
-removed line
+added line
*** End of File             (optional: the block ends the file)
*** End Patch
Paths are relative to the workspace root (or absolute inside it). Give about 3 lines of context around each change; no line numbers.";

const READ_DESCRIPTION: &str = "\
Read a text file with line numbers. `offset` is the first line (1-based), `limit` the number of lines.";

const LS_DESCRIPTION: &str =
    "List a directory of the workspace (default: the root); directories end with `/`.";

const GREP_DESCRIPTION: &str = "\
Search files for a regular expression (`.gitignore` is honored). `path` limits the search to a file or directory. Output lines are `path:line:text`.";

/// A file tool by identity; its name is its producer's, or the read-only tool's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FileTool {
    /// A preview producer.
    Produce(Producer),
    /// `read`.
    Read,
    /// `ls`.
    Ls,
    /// `grep`.
    Grep,
}

impl FileTool {
    /// Every file tool, producers first (the order of the specs).
    const ALL: [FileTool; 7] = [
        Self::Produce(Producer::AstEdit),
        Self::Produce(Producer::Edit),
        Self::Produce(Producer::Write),
        Self::Produce(Producer::ApplyPatch),
        Self::Read,
        Self::Ls,
        Self::Grep,
    ];

    /// The tool's name.
    fn name(self) -> &'static str {
        match self {
            Self::Produce(producer) => producer.name(),
            Self::Read => "read",
            Self::Ls => "ls",
            Self::Grep => "grep",
        }
    }

    /// The tool named `name`, if it is a file tool.
    fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|tool| tool.name() == name)
    }
}

static SPECS: LazyLock<Vec<ToolSpec>> = LazyLock::new(|| {
    let spec = |tool: FileTool, description: &str, schema: Value| ToolSpec {
        name: tool.name().to_owned(),
        description: description.to_owned(),
        input_schema: schema,
        hidden: false,
        strict: false,
        deferrable: matches!(tool, FileTool::Produce(_)),
    };
    vec![
        spec(
            FileTool::Produce(Producer::AstEdit),
            AST_EDIT_DESCRIPTION,
            json!({
                "type": "object",
                "properties": {
                    "ops": {"type": "array", "minItems": 1, "description": "rewrite operations", "items": {
                        "type": "object",
                        "properties": {
                            "pat": {"type": "string", "description": "ast-grep pattern"},
                            "out": {"type": "string", "description": "replacement"}
                        },
                        "required": ["pat", "out"],
                        "additionalProperties": false
                    }},
                    "paths": {"type": "array", "minItems": 1, "items": {"type": "string"}, "description": "files, directories or globs"},
                    "lang": {"type": "string", "description": "language name; default: from file extensions"}
                },
                "required": ["ops", "paths"],
                "additionalProperties": false
            }),
        ),
        spec(
            FileTool::Produce(Producer::Edit),
            EDIT_DESCRIPTION,
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "old_text": {"type": "string"},
                    "new_text": {"type": "string"},
                    "replace_all": {"type": "boolean"}
                },
                "required": ["path", "old_text", "new_text"],
                "additionalProperties": false
            }),
        ),
        spec(
            FileTool::Produce(Producer::Write),
            WRITE_DESCRIPTION,
            json!({
                "type": "object",
                "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                "required": ["path", "content"],
                "additionalProperties": false
            }),
        ),
        spec(
            FileTool::Produce(Producer::ApplyPatch),
            APPLY_PATCH_DESCRIPTION,
            json!({
                "type": "object",
                "properties": {"input": {"type": "string", "description": "the whole patch, from `*** Begin Patch` to `*** End Patch`"}},
                "required": ["input"],
                "additionalProperties": false
            }),
        ),
        spec(
            FileTool::Read,
            READ_DESCRIPTION,
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "offset": {"type": "integer", "minimum": 1},
                    "limit": {"type": "integer", "minimum": 1}
                },
                "required": ["path"],
                "additionalProperties": false
            }),
        ),
        spec(
            FileTool::Ls,
            LS_DESCRIPTION,
            json!({
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "additionalProperties": false
            }),
        ),
        spec(
            FileTool::Grep,
            GREP_DESCRIPTION,
            json!({
                "type": "object",
                "properties": {"pattern": {"type": "string"}, "path": {"type": "string"}},
                "required": ["pattern"],
                "additionalProperties": false
            }),
        ),
    ]
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
        match self.run(name, args)? {
            FileToolOutput::Result(result) => Ok(result),
            FileToolOutput::Staged(staged) => staged.into_result(&self.workspace),
        }
    }

    /// Run the tool `name` like [`FileTools::call`], but leave a staged preview's text in the
    /// store, for a caller that streams it (`resolve ast-edit` prints it from there).
    pub fn run(&self, name: &str, args: &Value) -> Result<FileToolOutput, EditError> {
        let unknown = || EditError::InvalidRequest(format!("Unknown tool `{name}`."));
        let tool = FileTool::from_name(name).ok_or_else(unknown)?;
        let spec = file_tool_specs()
            .iter()
            .find(|spec| spec.name == name)
            .ok_or_else(unknown)?;
        spec.validate(args)?;
        let text = |text: String| Ok(FileToolOutput::Result(ToolResult::text(text)));
        match tool {
            FileTool::Produce(Producer::AstEdit) => {
                let request: AstEditRequest = parse(name, args)?;
                match preview_ast_edit(&self.workspace, &request, self.max_files)? {
                    AstEditOutcome::NoReplacements { text: nothing } => text(nothing),
                    AstEditOutcome::Preview(preview) => self.stage(*preview),
                }
            }
            FileTool::Produce(Producer::Edit) => self.stage(preview_edit(
                &self.workspace,
                &parse::<EditRequest>(name, args)?,
            )?),
            FileTool::Produce(Producer::Write) => self.stage(preview_write(
                &self.workspace,
                &parse::<WriteRequest>(name, args)?,
            )?),
            FileTool::Produce(Producer::ApplyPatch) => {
                let request: ApplyPatchRequest = parse(name, args)?;
                match preview_apply_patch(&self.workspace, &request)? {
                    ApplyPatchOutcome::AlreadyApplied { text: applied } => text(applied),
                    ApplyPatchOutcome::Preview(preview) => self.stage(*preview),
                }
            }
            FileTool::Read => text(read_tools::read(
                &self.workspace,
                &parse::<ReadRequest>(name, args)?,
            )?),
            FileTool::Ls => text(read_tools::ls(
                &self.workspace,
                &parse::<LsRequest>(name, args)?,
            )?),
            FileTool::Grep => text(read_tools::grep(
                &self.workspace,
                &parse::<GrepRequest>(name, args)?,
            )?),
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
            text,
            details,
            files_key,
        } = preview;
        let action = NewAction {
            origin: self.origin.clone(),
            source_tool: producer.name().to_owned(),
            label,
            preview_text: text,
            details,
        };
        let mut record = self.store.stage_spooled(action, change_set)?;
        let note = earlier.map(|earlier| {
            format!(
                "Note: an identical change was discarded earlier ({}). Reason given then: {}",
                earlier.action.id, earlier.reason
            )
        });
        // The details move to the result; the record's copy was written to the store.
        let mut details = match std::mem::take(&mut record.details) {
            Value::Object(map) => map,
            Value::Null
            | Value::Bool(_)
            | Value::Number(_)
            | Value::String(_)
            | Value::Array(_) => Map::new(),
        };
        details.insert("pendingId".into(), record.id.clone().into());
        details.insert("label".into(), record.label.clone().into());
        Ok(FileToolOutput::Staged(Box::new(StagedPreview {
            record,
            note,
            details: Value::Object(details),
            files_key,
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

/// A preview staged as a pending action, its text still in the store and its change set still
/// in its spool.
#[derive(Debug)]
pub struct StagedPreview {
    /// The pending record (its details moved to [`StagedPreview::details`]).
    pub record: StagedRecord,
    /// A line to show after the preview text (an identical change was discarded before).
    pub note: Option<String>,
    /// The result's details: the producer's, plus `pendingId` and `label`; without the list of
    /// files under [`StagedPreview::files_key`], which [`StagedPreview::result_details`] adds.
    pub details: Value,
    /// See [`Preview::files_key`].
    pub files_key: Option<&'static str>,
}

impl StagedPreview {
    /// The result's details as they are shown, the files listed from the change set's spool
    /// (so `resolve ast-edit --json` streams them however many there are).
    pub fn result_details(&self) -> ResultDetails<'_> {
        ResultDetails {
            details: &self.details,
            files_key: self.files_key,
            change_set: &self.record.change_set,
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

/// Arguments already checked against the schema, as the producer's request type.
fn parse<T: serde::de::DeserializeOwned>(tool: &str, args: &Value) -> Result<T, EditError> {
    serde_json::from_value(args.clone()).map_err(|error| {
        EditError::InvalidRequest(format!("Invalid arguments for `{tool}`: {error}"))
    })
}
