//! The plan `write` ([`PlanWriteTool`]): the only `write` the model has in plan mode; it
//! writes plan files at once and refuses every other path.
//!
//! Owned here: the tool's spec and texts. Not owned: plan paths and file I/O (`files`), the
//! phase it checks (`state`).

use std::sync::Arc;

use resolve_core::{ToolKind, ToolResult, ToolSpec, count_noun};
use resolve_edit::{Produce, WriteRequest, run_blocking};
use serde_json::{Value, json};

use super::PLAN_DIR;
use super::files::{PlanFiles, display_path};
use super::state::PlanState;
use super::title::resolve_plan_title;
use resolve_core::{Tool, ToolContext, ToolError, ToolFuture};

const PLAN_WRITE_DESCRIPTION: &str = "\
Plan mode: write a plan file. `path` must be `.resolve/plans/<name>.md` relative to the workspace root, \
for example `.resolve/plans/words-counter-plan.md`. The file is written at once (a plan is not a preview); \
any other path is refused, since project files can change only after the plan is approved.";

/// The plan `write`: writes plan files at once and refuses every other path.
#[derive(Debug)]
pub(super) struct PlanWriteTool {
    files: PlanFiles,
    state: Arc<PlanState>,
}

impl PlanWriteTool {
    /// The plan `write` for `files`, while `state` is planning.
    pub(super) fn new(files: PlanFiles, state: Arc<PlanState>) -> Self {
        Self { files, state }
    }
}

fn plan_write_spec() -> ToolSpec {
    ToolSpec {
        // The plan `write` takes the name of the `write` producer, which it stands in for.
        name: <WriteRequest as Produce>::PRODUCER.name().to_owned(),
        description: PLAN_WRITE_DESCRIPTION.to_owned(),
        input_schema: json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "`.resolve/plans/<name>.md`"},
                "content": {"type": "string", "description": "the whole plan, in Markdown"}
            },
            "required": ["path", "content"],
            "additionalProperties": false
        }),
        hidden: false,
        strict: false,
        kind: ToolKind::Other,
    }
}

impl Tool for PlanWriteTool {
    fn spec(&self) -> ToolSpec {
        plan_write_spec()
    }

    fn execute<'a>(&'a self, args: Value, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let path = args["path"].as_str().unwrap_or_default().to_owned();
            let content = args["content"].as_str().unwrap_or_default().to_owned();
            let Some(name) = self.files.file_name(&path) else {
                return Err(ToolError::RespondToModel(format!(
                    "Plan mode: `write` only writes plan files, as `{PLAN_DIR}/<name>.md` (for example `{PLAN_DIR}/words-counter-plan.md`); `{path}` was not written. Project files can change only after the plan is approved."
                )));
            };
            if !self.state.is_planning() {
                return Err(ToolError::RespondToModel(
                    "Plan mode has ended; the plan can no longer be changed.".to_owned(),
                ));
            }
            let files = self.files.clone();
            let target = name.clone();
            let written = content.clone();
            run_blocking("plan write", move || files.write(&target, &written))
                .await
                .map_err(|error| ToolError::Fatal(error.to_string()))?
                .map_err(ToolError::RespondToModel)?;
            self.state.wrote(name.clone());
            let title = resolve_plan_title(None, "", &name).unwrap_or_else(|_| "plan".to_owned());
            Ok(ToolResult::text(format!(
                "Wrote plan {} ({}). Plan files are written at once, not staged. When the plan is final, call `resolve` with action \"apply\" and `extra.title` \"{title}\" to submit it for approval.",
                display_path(&name),
                count_noun(content.lines().count(), "line"),
            ))
            .with_details(json!({"planFilePath": display_path(&name)})))
        })
    }
}
