//! The model-facing `check` tool: runs the configured check command on the caller's head
//! preview (or the one named by `id`), in place, and returns the outcome with the output's
//! tail. It exists only when a command is configured, and the model cannot choose the command.
//! A command from a configuration the person has not trusted is offered but not run: each call
//! is a tool error saying so, until the person trusts the file (checked at every call).

use std::sync::Arc;
use std::time::Duration;

use resolve_core::{CHECK_TOOL_NAME, ToolKind, ToolResult, ToolSpec};
use resolve_store::{CheckFacts, CommandTrust, Origin, Store, StoreError};
use serde::Deserialize;
use serde_json::{Value, json};

use super::command::LiveOutput;
use super::report::{check_report, command_line};
use super::run::{CheckPlace, CheckRequest, run_check};
use super::settings::CheckSettings;
use crate::error::EditError;

/// Makes the writers a check's live output goes to, once per check.
type LiveOutputFactory = Arc<dyn Fn() -> LiveOutput + Send + Sync>;

/// The `check` tool of one origin.
#[derive(Clone)]
pub struct CheckTool {
    store: Store,
    origin: Origin,
    command: Vec<String>,
    timeout: Duration,
    trust: CommandTrust,
    live: LiveOutputFactory,
}

impl std::fmt::Debug for CheckTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CheckTool")
            .field("origin", &self.origin)
            .field("command", &self.command)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CheckArgs {
    #[serde(default)]
    id: Option<String>,
}

impl CheckTool {
    /// The tool checking `origin`'s previews with the command of `settings`; `None` when no
    /// command is configured (then no `check` tool is offered).
    pub fn new(store: Store, origin: Origin, settings: &CheckSettings) -> Option<Self> {
        Some(Self {
            store,
            origin,
            command: settings.command.clone()?,
            timeout: settings.timeout,
            trust: settings.trust.clone(),
            live: Arc::new(LiveOutput::quiet),
        })
    }

    /// This tool streaming each check's output to the writers `live` makes. By default the
    /// output is only kept (its tail), not streamed.
    #[must_use]
    pub fn with_live_output(
        mut self,
        live: impl Fn() -> LiveOutput + Send + Sync + 'static,
    ) -> Self {
        self.live = Arc::new(live);
        self
    }

    /// The spec offered to the model; its description names the configured command.
    pub fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: CHECK_TOOL_NAME.to_owned(),
            description: format!(
                "Run the project's check (`{}`) against a pending preview before you resolve it: the preview is put in place, the check runs, and every file is put back; the preview stays pending. Returns whether the check passed and the end of its output. `id` (optional): a pending action id; by default your most recent preview. Calling `check` while a preview is pending is allowed: then call `resolve`.",
                command_line(&self.command)
            ),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "id": {"type": "string", "description": "pending action id; default: your most recent preview"}
                },
                "additionalProperties": false
            }),
            hidden: false,
            strict: false,
            kind: ToolKind::Companion,
        }
    }

    /// Run a check for the model (arguments checked against the schema first): blocks while
    /// the command runs.
    pub fn call(&self, args: &Value) -> Result<ToolResult, EditError> {
        self.spec().validate(args)?;
        let args: CheckArgs = serde_json::from_value(args.clone()).map_err(|error| {
            EditError::InvalidRequest(format!("Invalid arguments for `check`: {error}"))
        })?;
        let (id, label) = self.target(args.id)?;
        self.trust.check()?;
        let request = CheckRequest {
            id: id.clone(),
            command: self.command.clone(),
            timeout: self.timeout,
            place: CheckPlace::InPlace,
        };
        let outcome = run_check(&self.store, &request, (self.live)())?;
        let text = format!(
            "Checked {id} ({label}); every file is as it was and the preview is still pending.\n{}",
            check_report(&outcome)
        );
        Ok(ToolResult::text(text).with_facts(&CheckFacts {
            pending_id: id,
            label,
            check: outcome,
        }))
    }

    /// The id and label of the preview to check: `id` when it is one of this origin's pending
    /// actions, else this origin's head.
    fn target(&self, id: Option<String>) -> Result<(String, String), EditError> {
        let pending = self.store.pending_summaries()?;
        match id {
            Some(id) => match pending.into_iter().find(|record| record.id == id) {
                Some(record) if record.origin == self.origin => Ok((record.id, record.label)),
                Some(_) => Err(EditError::InvalidRequest(format!(
                    "`{id}` was staged by someone else; you can check only your own pending previews."
                ))),
                None => Err(StoreError::NotPending { id }.into()),
            },
            None => pending
                .into_iter()
                .find(|record| record.origin == self.origin)
                .map(|record| (record.id, record.label))
                .ok_or_else(|| {
                    EditError::InvalidRequest(
                        "No pending preview to check; stage a change first (`ast_edit`, `edit`, `write` or `apply_patch`)."
                            .to_owned(),
                    )
                }),
        }
    }
}
