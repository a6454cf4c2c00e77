//! The model-facing file tools (`ast_edit`, `edit`, `write`, `read`, `ls`, `grep`): their
//! specs, argument checking, and staging previews in the durable store; plus the
//! [`StorePendingSource`] that turns stored previews (and stored MCP tool calls, through an
//! [`ExternalActionRunner`]) into `resolve-core` pending actions.

use std::collections::HashSet;
use std::sync::{Arc, LazyLock, Mutex};

use resolve_core::{
    ActionError, IdAllocator, PendingAction, PendingSource, PendingStack, ToolResult, ToolSpec,
};
use serde_json::{Map, Value, json};

use crate::ast_edit::{AstEditOutcome, AstEditRequest, DEFAULT_MAX_FILES, preview_ast_edit};
use crate::external::ExternalActionRunner;
use crate::read_tools::{GrepRequest, LsRequest, ReadRequest};
use crate::store::{
    ApplyOutcome, Origin, Outcome, PendingRecord, PendingSummary, StagedRecord, Store,
};
use crate::text_edit::{EditRequest, WriteRequest, preview_edit, preview_write};
use crate::{EditError, Preview, ResultDetails, Workspace, read_tools};

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

const READ_DESCRIPTION: &str = "\
Read a text file with line numbers. `offset` is the first line (1-based), `limit` the number of lines.";

const LS_DESCRIPTION: &str =
    "List a directory of the workspace (default: the root); directories end with `/`.";

const GREP_DESCRIPTION: &str = "\
Search files for a regular expression (`.gitignore` is honored). `path` limits the search to a file or directory. Output lines are `path:line:text`.";

static SPECS: LazyLock<Vec<ToolSpec>> = LazyLock::new(|| {
    let spec = |name: &str, description: &str, deferrable: bool, schema: Value| ToolSpec {
        name: name.to_owned(),
        description: description.to_owned(),
        input_schema: schema,
        hidden: false,
        strict: false,
        deferrable,
    };
    vec![
        spec(
            "ast_edit",
            AST_EDIT_DESCRIPTION,
            true,
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
            "edit",
            EDIT_DESCRIPTION,
            true,
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
            "write",
            WRITE_DESCRIPTION,
            true,
            json!({
                "type": "object",
                "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                "required": ["path", "content"],
                "additionalProperties": false
            }),
        ),
        spec(
            "read",
            READ_DESCRIPTION,
            false,
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
            "ls",
            LS_DESCRIPTION,
            false,
            json!({
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "additionalProperties": false
            }),
        ),
        spec(
            "grep",
            GREP_DESCRIPTION,
            false,
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
        let spec = file_tool_specs()
            .iter()
            .find(|spec| spec.name == name)
            .ok_or_else(|| EditError::InvalidRequest(format!("Unknown tool `{name}`.")))?;
        spec.validate(args)?;
        let text = |text: String| Ok(FileToolOutput::Result(ToolResult::text(text)));
        match name {
            "ast_edit" => {
                let request: AstEditRequest = parse(name, args)?;
                match preview_ast_edit(&self.workspace, &request, self.max_files)? {
                    AstEditOutcome::NoReplacements { text: nothing } => text(nothing),
                    AstEditOutcome::Preview(preview) => self.stage(*preview),
                }
            }
            "edit" => self.stage(preview_edit(
                &self.workspace,
                &parse::<EditRequest>(name, args)?,
            )?),
            "write" => self.stage(preview_write(
                &self.workspace,
                &parse::<WriteRequest>(name, args)?,
            )?),
            "read" => text(read_tools::read(
                &self.workspace,
                &parse::<ReadRequest>(name, args)?,
            )?),
            "ls" => text(read_tools::ls(
                &self.workspace,
                &parse::<LsRequest>(name, args)?,
            )?),
            _ => text(read_tools::grep(
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
            source_tool,
            label,
            text,
            details,
            files_key,
        } = preview;
        let mut record = self.store.stage_spooled(
            self.origin.clone(),
            &source_tool,
            &label,
            change_set,
            text,
            details,
        )?;
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
        let mut text = self.record.preview_text.load_text(workspace)?;
        if let Some(note) = &self.note {
            text.push('\n');
            text.push_str(note);
        }
        let details = self.result_details().to_value()?;
        Ok(ToolResult::text(text).with_details(details))
    }
}

/// A person's say before a stored preview is applied (`resolve agent --approve ask`).
pub trait ApplyGate: Send + Sync + std::fmt::Debug {
    /// Decide whether `record` may be applied. Runs on a blocking thread; may prompt.
    fn review(&self, record: &PendingRecord) -> GateDecision;
}

/// What the person decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GateDecision {
    /// Let the apply go ahead.
    Apply,
    /// Discard the preview instead, with the person's reason.
    Discard {
        /// Why the person discarded it.
        reason: String,
    },
}

/// Keeps a session's pending stack in step with the durable store: previews staged by any
/// process appear, previews consumed by any process disappear.
#[derive(Debug)]
pub struct StorePendingSource {
    store: Store,
    origin: Option<Origin>,
    gate: Option<Arc<dyn ApplyGate>>,
    runner: Option<Arc<dyn ExternalActionRunner>>,
    known: Mutex<HashSet<String>>,
}

impl StorePendingSource {
    /// A source of the pending actions of `origin` (`None`: every origin, as a person at the
    /// CLI sees them).
    pub fn new(store: Store, origin: Option<Origin>) -> Self {
        Self {
            store,
            origin,
            gate: None,
            runner: None,
            known: Mutex::new(HashSet::new()),
        }
    }

    /// This source resolving stored MCP tool calls through `runner`. By default there is no
    /// runner, and applying such an action fails with a message saying so (it stays pending).
    #[must_use]
    pub fn with_external_runner(mut self, runner: Arc<dyn ExternalActionRunner>) -> Self {
        self.runner = Some(runner);
        self
    }

    /// This source asking `gate` before every apply. By default applies are not reviewed.
    #[must_use]
    pub fn with_gate(mut self, gate: Arc<dyn ApplyGate>) -> Self {
        self.gate = Some(gate);
        self
    }
}

/// The store's persisted counter numbers in-memory pending actions too, so no two actions in a
/// root ever share an id.
impl IdAllocator for Store {
    fn next_seq(&self) -> Result<u64, resolve_core::Error> {
        Store::next_seq(self).map_err(|e| resolve_core::Error::PendingSource(e.to_string()))
    }
}

impl PendingSource for StorePendingSource {
    fn refresh(&self, stack: &mut PendingStack) -> Result<(), resolve_core::Error> {
        let records = self
            .store
            .pending_summaries()
            .map_err(|e| resolve_core::Error::PendingSource(e.to_string()))?;
        let records: Vec<PendingSummary> = records
            .into_iter()
            .filter(|record| {
                self.origin
                    .as_ref()
                    .is_none_or(|origin| &record.origin == origin)
            })
            .collect();
        let live: HashSet<String> = records.iter().map(|record| record.id.clone()).collect();
        let mut known = self
            .known
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for gone in known.difference(&live) {
            stack.remove(gone);
        }
        known.retain(|id| live.contains(id));
        // Oldest first, so the newest ends at the head.
        for record in records.iter().rev() {
            if known.insert(record.id.clone()) {
                let action = match record.mcp {
                    None => durable_action(&self.store, record, self.gate.clone()),
                    Some(_) => {
                        mcp_action(&self.store, record, self.gate.clone(), self.runner.clone())
                    }
                };
                stack.register(record.id.clone(), Arc::new(action));
            }
        }
        Ok(())
    }
}

/// The pending action of a stored preview: apply and discard go through the store, under its
/// lock, on a blocking thread (so an abort cannot interrupt a transaction half-way).
fn durable_action(
    store: &Store,
    record: &PendingSummary,
    gate: Option<Arc<dyn ApplyGate>>,
) -> PendingAction {
    let apply_store = store.clone();
    let apply_id = record.id.clone();
    let source_tool = record.source_tool.clone();
    let reject_store = store.clone();
    let reject_id = record.id.clone();
    PendingAction::new(
        record.label.clone(),
        record.source_tool.clone(),
        move |reason, extra| {
            let store = apply_store.clone();
            let id = apply_id.clone();
            let source_tool = source_tool.clone();
            let gate = gate.clone();
            async move {
                let only = only_paths(extra.as_ref())?;
                let outcome = tokio::task::spawn_blocking(move || {
                    if let Some(reason) = gate_discards(gate.as_ref(), &store, &id)? {
                        store.discard(&id, &reason, None)?;
                        return Ok(Err(reason));
                    }
                    let outcome = store.apply(&id, only.as_deref(), &reason, extra);
                    if outcome.is_err() {
                        // Keep the failed action at the head for every process.
                        let _ = store.bump_to_head(&id);
                    }
                    outcome.map(Ok)
                })
                .await
                .map_err(|e| ActionError::Failed(format!("the apply task died: {e}")))??;
                match outcome {
                    Ok(outcome) => Ok(applied_result(&source_tool, &outcome)),
                    Err(human_reason) => Ok(human_discard_result(&human_reason)),
                }
            }
        },
    )
    .with_reject(move |reason, extra| {
        let store = reject_store.clone();
        let id = reject_id.clone();
        async move {
            tokio::task::spawn_blocking(move || store.discard(&id, &reason, extra))
                .await
                .map_err(|e| ActionError::Failed(format!("the discard task died: {e}")))??;
            Ok(None)
        }
    })
}

/// Ask `gate` (when there is one) about the pending action `id`: the person's reason when they
/// discard it, `None` when the apply may go ahead.
fn gate_discards(
    gate: Option<&Arc<dyn ApplyGate>>,
    store: &Store,
    id: &str,
) -> Result<Option<String>, EditError> {
    let Some(gate) = gate else {
        return Ok(None);
    };
    let Some(record) = store.pending_record(id)? else {
        return Ok(None);
    };
    Ok(match gate.review(&record) {
        GateDecision::Apply => None,
        GateDecision::Discard { reason } => Some(reason),
    })
}

/// The pending action of a stored MCP tool call: apply (and discard, when the record has a
/// reject call) make the call through `runner`, under the store's lock, on a blocking thread;
/// the action is consumed only when the call succeeds.
fn mcp_action(
    store: &Store,
    record: &PendingSummary,
    gate: Option<Arc<dyn ApplyGate>>,
    runner: Option<Arc<dyn ExternalActionRunner>>,
) -> PendingAction {
    let apply_store = store.clone();
    let apply_id = record.id.clone();
    let apply_runner = runner.clone();
    let reject_store = store.clone();
    let reject_id = record.id.clone();
    PendingAction::new(
        record.label.clone(),
        record.source_tool.clone(),
        move |reason, extra| {
            let store = apply_store.clone();
            let id = apply_id.clone();
            let runner = apply_runner.clone();
            let gate = gate.clone();
            let handle = tokio::runtime::Handle::current();
            async move {
                tokio::task::spawn_blocking(move || {
                    if let Some(reason) = gate_discards(gate.as_ref(), &store, &id)? {
                        mcp_discard(&store, runner.as_ref(), &handle, &id, &reason, None)?;
                        return Ok(human_discard_result(&reason));
                    }
                    store
                        .resolve_external(
                            &id,
                            Outcome::Applied,
                            &reason,
                            extra.clone(),
                            |record| {
                                mcp_call(
                                    runner.as_ref(),
                                    &handle,
                                    record,
                                    Step::Apply,
                                    &reason,
                                    extra.as_ref(),
                                )
                            },
                        )?
                        .map_err(ActionError::Failed)
                })
                .await
                .map_err(|e| ActionError::Failed(format!("the apply task died: {e}")))?
            }
        },
    )
    .with_reject(move |reason, extra| {
        let store = reject_store.clone();
        let id = reject_id.clone();
        let runner = runner.clone();
        let handle = tokio::runtime::Handle::current();
        async move {
            tokio::task::spawn_blocking(move || {
                mcp_discard(&store, runner.as_ref(), &handle, &id, &reason, extra)
            })
            .await
            .map_err(|e| ActionError::Failed(format!("the discard task died: {e}")))?
        }
    })
}

/// Which call of an MCP action to make.
#[derive(Debug, Clone, Copy)]
enum Step {
    Apply,
    Reject,
}

/// Discard a stored MCP action: call its reject tool when it has one (the result is the
/// discard's result), else call nothing (`None`: the default discard text).
fn mcp_discard(
    store: &Store,
    runner: Option<&Arc<dyn ExternalActionRunner>>,
    handle: &tokio::runtime::Handle,
    id: &str,
    reason: &str,
    extra: Option<resolve_core::Extra>,
) -> Result<Option<ToolResult>, ActionError> {
    store
        .resolve_external(
            id,
            Outcome::Discarded,
            reason,
            extra.clone(),
            |record| match record
                .mcp
                .as_ref()
                .and_then(|action| action.reject.as_ref())
            {
                None => Ok(None),
                Some(_) => {
                    mcp_call(runner, handle, record, Step::Reject, reason, extra.as_ref()).map(Some)
                }
            },
        )?
        .map_err(ActionError::Tool)
}

/// Make the apply or reject call of `record` and wait for it (on this blocking thread). An
/// error result, like a call that could not be made, is an `Err` with a message naming the
/// server and the tool.
fn mcp_call(
    runner: Option<&Arc<dyn ExternalActionRunner>>,
    handle: &tokio::runtime::Handle,
    record: &PendingRecord,
    step: Step,
    reason: &str,
    extra: Option<&resolve_core::Extra>,
) -> Result<ToolResult, String> {
    let Some(action) = &record.mcp else {
        return Err(format!("`{}` is not an MCP tool call.", record.id));
    };
    let call = match step {
        Step::Apply => &action.apply,
        Step::Reject => action
            .reject
            .as_ref()
            .ok_or_else(|| format!("`{}` has no reject call.", record.id))?,
    };
    let Some(runner) = runner else {
        return Err(format!(
            "`{}` calls the tool `{}` of the MCP server `{}`, and no MCP client is set up in this process.",
            record.id, call.tool, action.server
        ));
    };
    let result = handle.block_on(runner.call(&action.server, call, reason, extra))?;
    if result.is_error {
        return Err(format!(
            "the tool `{}` of the MCP server `{}` returned an error: {}",
            call.tool, action.server, result.text
        ));
    }
    Ok(result)
}

/// The result the model reads when the person at the gate discarded its preview.
fn human_discard_result(reason: &str) -> ToolResult {
    ToolResult::error(format!(
        "Not applied: the user reviewed this preview and discarded it. Their reason: {reason}"
    ))
}

/// Arguments already checked against the schema, as the producer's request type.
fn parse<T: serde::de::DeserializeOwned>(tool: &str, args: &Value) -> Result<T, EditError> {
    serde_json::from_value(args.clone()).map_err(|error| {
        EditError::InvalidRequest(format!("Invalid arguments for `{tool}`: {error}"))
    })
}

/// `extra.only`, checked: a list of paths.
fn only_paths(extra: Option<&Map<String, Value>>) -> Result<Option<Vec<String>>, ActionError> {
    let Some(only) = extra.and_then(|extra| extra.get("only")) else {
        return Ok(None);
    };
    let paths = only.as_array().and_then(|items| {
        items
            .iter()
            .map(|item| item.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()
    });
    match paths {
        Some(paths) if !paths.is_empty() => Ok(Some(paths)),
        Some(_) | None => Err(ActionError::Tool(
            "`extra.only` must be a non-empty array of file paths from the preview.".to_owned(),
        )),
    }
}

/// The success text and details of an apply.
fn applied_result(source_tool: &str, outcome: &ApplyOutcome) -> ToolResult {
    let mut text = crate::preview::applied_text_of(
        source_tool,
        &outcome.applied_files,
        outcome.total_replacements,
    );
    if !outcome.dropped_files.is_empty() {
        text.push_str(&format!(
            "\nApplied files: {}\nDropped files: {}",
            outcome.applied_files.join(", "),
            outcome.dropped_files.join(", ")
        ));
    }
    ToolResult::text(text).with_details(json!({
        "pendingId": outcome.record.action.id,
        "appliedFiles": outcome.applied_files,
        "droppedFiles": outcome.dropped_files,
        "totalReplacements": outcome.total_replacements,
    }))
}
