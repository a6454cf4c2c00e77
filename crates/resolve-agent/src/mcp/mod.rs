//! Custom tools from MCP servers.
//!
//! `resolve agent` reads `<root>/.resolve/config.toml` (or `--config FILE`):
//!
//! ```toml
//! [mcp_servers.notes]            # tools offered to the model as notes__<tool>
//! command = "python3"
//! args = ["notes_server.py"]
//! env = { NOTES_FILE = "notes.log" }
//! ```
//!
//! [`McpHub`] starts each server over stdio with rmcp's client and offers its tools to the
//! model as `<server>__<tool>`, input schemas forwarded. A server that fails to start, or dies,
//! is reported as a notice and skipped. A tool result whose `_meta` carries
//! [`PENDING_ACTION_META_KEY`] stages a durable pending action (see [`PendingActionRequest`]);
//! resolving it calls the server's apply or reject tool with `reason` and `extra` added, through
//! the hub acting as the store's [`ExternalActionRunner`](resolve_edit::ExternalActionRunner).
//!
//! Inside, the layers go one way: `hub` (servers and calls) uses `tool` (the agent tools and
//! the MCP-to-agent converters), which uses `convention` and `error`; `config` is read by the
//! hub. Not owned here: the durable store and the pending-action records (`resolve-edit`).

mod config;
mod convention;
mod error;
mod hub;
mod tool;

pub use config::{CONFIG_PATH, McpConfig, McpServerConfig};
pub use convention::{HIDDEN_META_KEY, PENDING_ACTION_META_KEY, PendingActionRequest};
pub use hub::{DEFAULT_START_TIMEOUT, DEFAULT_TOOL_TIMEOUT, McpHub, McpHubBuilder, NoticeFn};
