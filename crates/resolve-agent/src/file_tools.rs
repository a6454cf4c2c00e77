//! The file tools of `resolve-edit` (`ast_edit`, `edit`, `write`, `read`, `ls`, `grep`) and its
//! `check` tool as agent [`Tool`]s: producers stage previews in the durable store under the
//! session's origin; the session's pending source picks them up before the next model call.
//!
//! Owned here: the adapters from `resolve-edit`'s tools to [`Tool`]. Not owned: the tools
//! themselves, previews, checks and the store (`resolve-edit`).

use std::sync::Arc;

use resolve_core::{ToolResult, ToolSpec};
use resolve_edit::{CheckTool, FileTools, file_tool_specs, run_blocking};
use serde_json::Value;

use resolve_core::{Tool, ToolContext, ToolError, ToolFuture};

/// One file tool, run on a blocking thread.
#[derive(Debug)]
struct FileTool {
    spec: ToolSpec,
    tools: FileTools,
}

impl Tool for FileTool {
    fn spec(&self) -> ToolSpec {
        self.spec.clone()
    }

    fn execute<'a>(&'a self, args: Value, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        let tools = self.tools.clone();
        let name = self.spec.name.clone();
        Box::pin(async move {
            let outcome = run_blocking("file tool", move || tools.call(&name, &args))
                .await
                .map_err(|error| ToolError::Fatal(error.to_string()))?;
            Ok(outcome.unwrap_or_else(|error| ToolResult::error(error.to_string())))
        })
    }
}

/// Every file tool over `tools`, producers first.
pub fn file_tools(tools: &FileTools) -> Vec<Arc<dyn Tool>> {
    file_tool_specs()
        .iter()
        .map(|spec| {
            Arc::new(FileTool {
                spec: spec.clone(),
                tools: tools.clone(),
            }) as Arc<dyn Tool>
        })
        .collect()
}

/// The `check` tool, run on a blocking thread (the command may run for minutes).
#[derive(Debug)]
struct CheckAdapter {
    spec: ToolSpec,
    check: CheckTool,
}

impl Tool for CheckAdapter {
    fn spec(&self) -> ToolSpec {
        self.spec.clone()
    }

    fn execute<'a>(&'a self, args: Value, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        let check = self.check.clone();
        Box::pin(async move {
            let outcome = run_blocking("check", move || check.call(&args))
                .await
                .map_err(|error| ToolError::Fatal(error.to_string()))?;
            Ok(outcome.unwrap_or_else(|error| ToolResult::error(error.to_string())))
        })
    }
}

/// The `check` tool as an agent tool, for the session to offer (see
/// `AgentSessionBuilder::check`): while it is offered, a turn that calls it while a preview is
/// pending is not a decline of the soft requirement (see `resolve_core::SoftGate::allowing`).
pub(crate) fn check_tool(check: CheckTool) -> Arc<dyn Tool> {
    Arc::new(CheckAdapter {
        spec: check.spec(),
        check,
    })
}
