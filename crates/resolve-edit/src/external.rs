//! The [`ExternalActionRunner`]: how a process makes the MCP tool calls of durable pending
//! actions staged by MCP custom tools ([`McpAction`](resolve_store::McpAction), kept by the store
//! as data). The
//! [`StorePendingSource`](crate::StorePendingSource) hands a record's apply or reject call to
//! its runner, under the store's lock, and the action is consumed only when the call succeeds.
//! This crate does no MCP I/O itself; `resolve-agent` implements the runner with an MCP client.

use resolve_core::{BoxFuture, Extra, ToolResult};
use resolve_store::McpToolCall;

/// Makes the calls of [`McpAction`](resolve_store::McpAction)s: the one mechanism every process uses to resolve them
/// (`resolve agent` with the servers it runs, `resolve apply|discard` by starting the server
/// from the configuration).
pub trait ExternalActionRunner: Send + Sync + std::fmt::Debug {
    /// Call `call` on the MCP server `server` with its arguments plus `reason` and, when given,
    /// `extra`. The result's text is the tool's text content, its details the tool's
    /// `structuredContent`, and `is_error` its `isError`. `Err` means the call could not be
    /// made or did not complete (the server is not configured, did not start, or exited); its
    /// text says which.
    fn call(
        &self,
        server: &str,
        call: &McpToolCall,
        reason: &str,
        extra: Option<&Extra>,
    ) -> BoxFuture<Result<ToolResult, String>>;
}
