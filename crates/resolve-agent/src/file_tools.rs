//! The file tools of `resolve-edit` (`ast_edit`, `edit`, `write`, `read`, `ls`, `grep`) as
//! agent [`Tool`]s: producers stage previews in the durable store under the session's origin;
//! the session's pending source picks them up before the next model call.
//!
//! Owned here: the adapter from `resolve-edit`'s file tools to [`Tool`]. Not owned: the tools
//! themselves, previews and the store (`resolve-edit`).

use std::sync::Arc;

use resolve_core::{ToolResult, ToolSpec};
use resolve_edit::{FileTools, file_tool_specs, run_blocking};
use serde_json::Value;

use crate::{Tool, ToolContext, ToolError, ToolFuture};

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
