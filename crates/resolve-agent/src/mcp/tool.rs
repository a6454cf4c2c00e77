//! [`McpTool`]: one tool of an MCP server as an agent [`Tool`] named `<server>__<tool>`.
//!
//! A plain result is the tool result (an `isError` result becomes an error result). A result
//! following the `resolve/pendingAction` convention also stages a durable pending action.

use resolve_core::{ToolResult, ToolSpec};
use resolve_edit::{NewAction, Origin, Store, run_blocking};
use rmcp::model::Tool as McpToolInfo;
use serde_json::{Map, Value, json};

use super::McpHub;
use super::convention::{PENDING_ACTION_META_KEY, PendingActionRequest, result_text};
use super::hub::{input_schema, tool_result};
use crate::{Tool, ToolContext, ToolError, ToolFuture};

/// One tool of a running MCP server.
#[derive(Debug)]
pub(crate) struct McpTool {
    hub: McpHub,
    server: String,
    tool: String,
    spec: ToolSpec,
    store: Store,
    origin: Origin,
}

impl McpTool {
    pub(crate) fn new(
        hub: McpHub,
        server: &str,
        info: &McpToolInfo,
        store: Store,
        origin: Origin,
    ) -> Self {
        let description = info
            .description
            .as_deref()
            .map(str::to_owned)
            .or_else(|| info.title.clone())
            .unwrap_or_else(|| format!("The tool `{}` of the MCP server `{server}`.", info.name));
        Self {
            hub,
            server: server.to_owned(),
            tool: info.name.to_string(),
            spec: ToolSpec {
                name: format!("{server}__{}", info.name),
                description,
                input_schema: input_schema(info),
                hidden: false,
                strict: false,
                // Any result may stage a pending action, so `resolve` must be offered.
                deferrable: true,
            },
            store,
            origin,
        }
    }
}

impl Tool for McpTool {
    fn spec(&self) -> ToolSpec {
        self.spec.clone()
    }

    fn execute<'a>(&'a self, args: Value, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let arguments = match args {
                Value::Object(arguments) => arguments,
                Value::Null
                | Value::Bool(_)
                | Value::Number(_)
                | Value::String(_)
                | Value::Array(_) => Map::new(),
            };
            let result = match self
                .hub
                .call_tool(&self.server, &self.tool, arguments, false)
                .await
            {
                Ok(result) => result,
                Err(problem) => return Ok(ToolResult::error(sentence(&problem))),
            };
            if result.is_error == Some(true) {
                return Ok(tool_result(&result));
            }
            let request = match PendingActionRequest::from_result(&result) {
                None => return Ok(tool_result(&result)),
                Some(Err(problem)) => {
                    return Ok(ToolResult::error(format!(
                        "`{}` returned a malformed `{PENDING_ACTION_META_KEY}` in its result's `_meta`: {problem}. Nothing was staged; the server must send {{\"label\": string, \"apply\": {{\"tool\": string, \"arguments\": object}}, \"reject\"?: {{…}}}}.",
                        self.spec.name
                    )));
                }
                Some(Ok(request)) => request,
            };
            let text = result_text(&result);
            let details = result.structured_content.clone().unwrap_or(Value::Null);
            let store = self.store.clone();
            let staged_action = NewAction {
                origin: self.origin.clone(),
                source_tool: self.spec.name.clone(),
                label: request.label.clone(),
                preview_text: text.clone().into(),
                details,
            };
            let call = request.into_action(&self.server);
            let staged = run_blocking("staging", move || store.stage_mcp(staged_action, call))
                .await
                .map_err(|error| ToolError::Fatal(error.to_string()))?;
            Ok(match staged {
                Ok(record) => {
                    let mut details = json!({"pendingId": record.id, "label": record.label});
                    if let Some(structured) = result.structured_content
                        && !structured.is_null()
                    {
                        details["structuredContent"] = structured;
                    }
                    ToolResult::text(text).with_details(details)
                }
                Err(error) => ToolResult::error(error.to_string()),
            })
        })
    }
}

/// A lower-case fragment as a sentence: capitalized, ending with a period.
fn sentence(fragment: &str) -> String {
    let mut chars = fragment.chars();
    let mut text: String = match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    };
    if !text.ends_with('.') {
        text.push('.');
    }
    text
}
