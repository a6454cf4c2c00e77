//! [`builtin_tools`]: every built-in tool as one [`ToolRegistry`] — the producers (one
//! [`ProducerTool`] each), the read-only file tools, then `check` when a check command is
//! configured. The agent's session and the MCP server both offer and dispatch this registry;
//! `resolve` is each one's single special case.
//!
//! Owned here: the adapters from the file tools and the check tool to the
//! [`Tool`](resolve_core::Tool) contract (each call runs on a blocking thread). Not owned: the
//! tools themselves.

use std::sync::Arc;

use resolve_core::{
    DuplicateToolName, Tool, ToolContext, ToolError, ToolFuture, ToolRegistry, ToolResult, ToolSpec,
};
use serde_json::Value;

use crate::blocking::run_blocking;
use crate::check::CheckTool;
use crate::error::EditError;
use crate::producer::Producer;
use crate::producers::{PRODUCERS, ProducerRequest, producer_specs};
use crate::read_only::ReadTool;
use crate::tools::FileTools;

/// The built-in tools staging for `tools`' origin: the producers, `read`, `ls`, `grep`, then
/// `check` when given.
pub fn builtin_tools(
    tools: &FileTools,
    check: Option<CheckTool>,
) -> Result<ToolRegistry, DuplicateToolName> {
    let mut registry = ToolRegistry::new();
    for (producer, spec) in PRODUCERS.into_iter().zip(producer_specs()) {
        registry.register(Arc::new(ProducerTool {
            producer,
            spec,
            tools: tools.clone(),
        }))?;
    }
    for tool in ReadTool::ALL {
        registry.register(Arc::new(ReadOnlyTool {
            tool,
            tools: tools.clone(),
        }))?;
    }
    if let Some(check) = check {
        registry.register(check_tool(check))?;
    }
    Ok(registry)
}

/// The `check` tool alone as a [`Tool`](resolve_core::Tool), for a host that offers it apart
/// from the file tools (the agent's session, after its registered tools).
pub fn check_tool(check: CheckTool) -> Arc<dyn Tool> {
    Arc::new(CheckAdapter {
        spec: check.spec(),
        check,
    })
}

/// One producer as a tool: its JSON arguments become its typed request, whose preview is
/// staged for the file tools' origin.
#[derive(Debug)]
struct ProducerTool {
    producer: Producer,
    spec: ToolSpec,
    tools: FileTools,
}

impl Tool for ProducerTool {
    fn spec(&self) -> ToolSpec {
        self.spec.clone()
    }

    fn execute<'a>(&'a self, args: Value, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        let tools = self.tools.clone();
        let name = self.producer.name();
        blocking("file tool", move || {
            let request = ProducerRequest::from_args(name, &args)?
                .ok_or_else(|| EditError::InvalidRequest(format!("Unknown tool `{name}`.")))?;
            tools
                .produce(&request)?
                .into_result(tools.store().workspace())
        })
    }
}

/// A read-only file tool as a tool.
#[derive(Debug)]
struct ReadOnlyTool {
    tool: ReadTool,
    tools: FileTools,
}

impl Tool for ReadOnlyTool {
    fn spec(&self) -> ToolSpec {
        self.tool.spec()
    }

    fn execute<'a>(&'a self, args: Value, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        let tools = self.tools.clone();
        let name = self.tool.name();
        blocking("file tool", move || tools.call(name, &args))
    }
}

/// The `check` tool as a tool (the command may run for minutes).
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
        blocking("check", move || check.call(&args))
    }
}

/// Run `call` on a blocking thread: its error becomes an error result the model reads; a
/// thread that died ends the run.
fn blocking<'a>(
    what: &'static str,
    call: impl FnOnce() -> Result<ToolResult, EditError> + Send + 'static,
) -> ToolFuture<'a> {
    Box::pin(async move {
        let outcome = run_blocking(what, call)
            .await
            .map_err(|error| ToolError::Fatal(error.to_string()))?;
        Ok(outcome.unwrap_or_else(|error| ToolResult::error(error.to_string())))
    })
}
