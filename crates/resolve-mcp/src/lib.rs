//! The MCP server behind `resolve mcp`: any MCP client gets staged, reviewable, transactional
//! file edits.
//!
//! It owns the MCP face of `resolve`:
//!
//! - **Tools** `ast_edit`, `edit`, `write` (producers: they stage a preview and touch no file),
//!   `read`, `ls`, `grep` (read-only) and `resolve` (applies or discards the head pending
//!   action, with a reason). Input schemas are the literal JSON of the tool specs, without
//!   `$ref` or `$schema`; annotations mark the read-only tools and the producers (which only
//!   stage) `readOnlyHint` and `resolve` `destructiveHint`. No tool has an `outputSchema` and
//!   no result carries `structuredContent` (hosts would show the model that JSON instead of the
//!   text); the facts programs read are under `_meta["resolve/details"]`; a producer's result
//!   links its pending resource.
//! - **Approval** ([`ApprovalMode`]): `auto` applies on the model's word; `ask` asks a person
//!   through MCP elicitation (`elicitation/create` on 2025-11-25, an input-required result with
//!   a sealed `requestState` on 2026-07-28) and fails closed when the client cannot ask;
//!   `review` never applies on the model's word.
//! - **The reminder.** MCP cannot force a tool choice, so while this connection has pending
//!   actions every tool result ends with [`RESOLVE_REMINDER`](resolve_core::RESOLVE_REMINDER).
//!   Nothing is refused because a preview is pending.
//! - **Origins.** Each connection is its own origin `mcp:<connection id>`; its `resolve` sees only
//!   its own previews, head first. A person can still apply them with `resolve apply` (the store
//!   is shared), and the connection sees that at its next call.
//! - **Resources** `resolve://pending/<id>` (this connection's pending previews) and
//!   `resolve://history/<id>` (every resolved action of the workspace), read as text, with
//!   `notifications/resources/list_changed` when the set changes and
//!   `notifications/resources/updated` for subscribed ones.
//! - **The review app** `ui://resolve/review` (MCP Apps, `text/html;profile=mcp-app`): the
//!   producers and `resolve` link it under `_meta.ui.resourceUri`, so a host that renders apps
//!   shows their results as a review whose decisions are `resolve` calls through the host.
//! - **Errors** the model should read (bad arguments, stale preview, confinement, nothing
//!   pending, unknown tool) are `isError: true` tool results with the CLI's text; JSON-RPC errors
//!   are only for malformed protocol messages.
//!
//! It does not own the tools themselves, the durable store or the transactional apply
//! (`resolve-edit`), nor the `resolve` dispatch (`resolve-core`), nor the command line
//! (`resolve-cli`, whose `resolve mcp` calls [`serve_stdio`]).
//!
//! Stdout belongs to the protocol: this crate never prints, and logs only through `tracing`
//! (the binary sends it to stderr).
//!
//! # Example
//!
//! Serve one connection over an in-memory pipe (a real client speaks on the other end):
//!
//! ```no_run
//! # async fn example() -> Result<(), resolve_mcp::McpError> {
//! let (server_end, _client_end) = tokio::io::duplex(64 * 1024);
//! let server = resolve_mcp::ResolveServer::open(std::path::Path::new("."))?;
//! resolve_mcp::serve(server, server_end).await?;
//! # Ok(())
//! # }
//! ```

// Unit tests set up and inspect files directly.
#![cfg_attr(test, allow(clippy::disallowed_methods))]
#![deny(missing_docs, clippy::print_stdout, clippy::print_stderr)]

use std::path::Path;

use rmcp::service::ServerInitializeError;
use rmcp::transport::IntoTransport;
use rmcp::{RoleServer, ServiceExt};

mod app;
mod approval;
mod approval_state;
mod error;
mod resolve_call;
mod resources;
mod server;
mod subscriptions;
mod tools;

pub use app::{APP_MIME, REVIEW_APP_URI, UI_EXTENSION_ID};
pub use approval::FormAnswer;
pub use error::McpError;
/// Who approves an `apply` the model asks for: the one mode type the agent shares.
pub use resolve_edit::ApprovalMode;
/// [`ApprovalMode`] under the name this crate gave it first.
pub use resolve_edit::ApprovalMode as ApproveMode;
/// How long a person has to answer an approval: the one deadline the agent shares.
pub use resolve_edit::ApproveTimeout;
pub use resources::{HISTORY_URI_PREFIX, PENDING_URI_PREFIX};
pub use server::{INSTRUCTIONS, ResolveServer, ServerOptions, new_connection_id};
pub use tools::{mcp_tools, mcp_tools_of};

/// Serve `resolve mcp` for the workspace at `root` on stdin/stdout until the client closes the
/// connection, with `approve` deciding who approves an apply and `approve_timeout` bounding how
/// long a person is waited for.
pub async fn serve_stdio(
    root: &Path,
    approve: ApprovalMode,
    approve_timeout: ApproveTimeout,
) -> Result<(), McpError> {
    serve_stdio_with(
        root,
        ServerOptions {
            approve,
            approve_timeout,
            ..ServerOptions::default()
        },
    )
    .await
}

/// [`serve_stdio`] with a server set up by `options`.
pub async fn serve_stdio_with(root: &Path, options: ServerOptions) -> Result<(), McpError> {
    let (approve, approve_timeout) = (options.approve, options.approve_timeout);
    let server = ResolveServer::with_options(root, options)?;
    tracing::info!(
        connection = server.connection_id(),
        approve = ?approve,
        %approve_timeout,
        root = %root.display(),
        "serving MCP on stdio"
    );
    serve(server, rmcp::transport::stdio_pipes()).await
}

/// Serve one connection of `server` over `transport` (a reader/writer pair, a duplex stream, or
/// any rmcp transport) until the client closes it.
///
/// A client that goes away before initializing is not an error.
pub async fn serve<T, E, A>(server: ResolveServer, transport: T) -> Result<(), McpError>
where
    T: IntoTransport<RoleServer, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let ending = server.clone();
    let running = match server.serve(transport).await {
        Ok(running) => running,
        Err(ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
        Err(error) => return Err(McpError::Initialize(Box::new(error))),
    };
    let reason = running.waiting().await;
    ending.end_connection().await;
    let reason = reason.map_err(McpError::Task)?;
    tracing::info!(?reason, "MCP connection ended");
    Ok(())
}
