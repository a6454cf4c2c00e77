//! [`McpTool`]: one tool of an MCP server as an agent [`Tool`] named `<server>__<tool>`, the
//! factory that makes them from a server's tool list ([`mcp_tools`]), and the converters from
//! MCP to agent shapes ([`input_schema`], [`tool_result`]).
//!
//! A plain result is the tool result (an `isError` result becomes an error result). A result
//! following the `resolve/pendingAction` convention also stages a durable pending action.
//!
//! Owned here: what the model sees of an MCP tool and what its call returns. Not owned:
//! running servers and making the calls (`hub`, through [`ToolCaller`]), the convention's
//! shapes (`convention`).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use resolve_core::{Facts, PreviewFacts, ToolKind, ToolResult, ToolSpec};
use resolve_edit::{NewAction, Origin, Store, run_blocking};
use rmcp::model::{CallToolResult, JsonObject, Tool as McpToolInfo};
use serde_json::{Map, Value};

use super::convention::{PENDING_ACTION_META_KEY, PendingActionRequest, is_hidden, result_text};
use super::error::CallError;
use resolve_core::{Tool, ToolContext, ToolError, ToolFuture};

/// The future of a [`ToolCaller::call_running`].
pub(crate) type CallFuture<'a> =
    Pin<Box<dyn Future<Output = Result<CallToolResult, CallError>> + Send + 'a>>;

/// What an [`McpTool`] needs of the hub: calls to tools of running servers.
pub(crate) trait ToolCaller: Send + Sync + std::fmt::Debug {
    /// Call `tool` of `server` with `arguments`, if the server is running (it is not started).
    fn call_running<'a>(
        &'a self,
        server: &'a str,
        tool: &'a str,
        arguments: JsonObject,
    ) -> CallFuture<'a>;
}

/// The agent tools of `server` from its tool list `infos`, in listing order, calling through
/// `hub`; results that stage a pending action are stored in `store` under `origin`. Tools
/// marked `"resolve/hidden": true` are left out.
pub(crate) fn mcp_tools(
    hub: &Arc<dyn ToolCaller>,
    server: &str,
    infos: &[McpToolInfo],
    store: &Store,
    origin: &Origin,
) -> Vec<Arc<dyn Tool>> {
    let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
    for info in infos {
        if is_hidden(info.meta.as_ref().map(|meta| &meta.0)) {
            continue;
        }
        tools.push(Arc::new(McpTool::new(
            Arc::clone(hub),
            server,
            info,
            store.clone(),
            origin.clone(),
        )));
    }
    tools
}

/// One tool of a running MCP server.
#[derive(Debug)]
struct McpTool {
    hub: Arc<dyn ToolCaller>,
    server: String,
    tool: String,
    spec: ToolSpec,
    store: Store,
    origin: Origin,
}

impl McpTool {
    fn new(
        hub: Arc<dyn ToolCaller>,
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
                kind: ToolKind::Other,
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
                .call_running(&self.server, &self.tool, arguments)
                .await
            {
                Ok(result) => result,
                Err(error) => return Ok(ToolResult::error(error.to_string())),
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
                    let facts = PreviewFacts::staged(record.id, record.label, None, Vec::new());
                    let mut details = Value::Object(facts.to_details());
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

/// A tool result as `resolve` reports it: the text content, `structuredContent` as details.
pub(crate) fn tool_result(result: &CallToolResult) -> ToolResult {
    let text = result_text(result);
    let mut out = if result.is_error == Some(true) {
        ToolResult::error(text)
    } else {
        ToolResult::text(text)
    };
    if let Some(structured) = result.structured_content.clone()
        && !structured.is_null()
    {
        out = out.with_details(structured);
    }
    out
}

/// The JSON object of a tool's input schema.
pub(crate) fn input_schema(info: &McpToolInfo) -> Value {
    Value::Object((*info.input_schema).clone())
}
