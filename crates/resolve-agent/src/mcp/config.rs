//! The MCP servers section of `<root>/.resolve/config.toml`:
//!
//! ```toml
//! [mcp_servers.notes]            # tools offered to the model as notes__<tool>
//! command = "python3"
//! args = ["notes_server.py"]
//! env = { NOTES_FILE = "notes.log" }
//! ```
//!
//! Owned here: the servers a process may start, taken from the one typed workspace
//! configuration ([`WorkspaceConfig`], which reads and checks the file). Not owned: starting the
//! servers (`hub`).
//!
//! A workspace's own file may come from a clone, so its servers start only once the person
//! trusted the file (`resolve trust`): the configuration carries the store's [`CommandTrust`],
//! which the hub consults before it spawns anything.

use std::collections::BTreeMap;
use std::path::PathBuf;

use resolve_edit::{CommandTrust, WorkspaceConfig};

/// Where the configuration lives, relative to the workspace root (its `[check]` table is
/// `resolve-edit`'s, which the MCP server reads too).
pub use resolve_edit::CONFIG_PATH;

/// How to start one MCP server over stdio (the typed `[mcp_servers.<name>]` table of the
/// workspace configuration).
pub use resolve_edit::McpServerConfig;

/// The MCP servers a `resolve` process may start, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct McpConfig {
    /// The servers, by the name that prefixes their tools (`<name>__<tool>`).
    pub servers: BTreeMap<String, McpServerConfig>,
    /// The file they were read from, if any.
    pub source: Option<PathBuf>,
    /// Whether the servers may be started: refused for a workspace's configuration the person
    /// has not trusted. Allowed by default (a configuration built in code, or parsed from text
    /// the caller chose).
    pub trust: CommandTrust,
}

impl McpConfig {
    /// The servers of a workspace configuration read once for the whole process (see
    /// [`WorkspaceConfig`], which has checked them), with its trust.
    pub fn from_workspace(config: &WorkspaceConfig) -> Self {
        Self {
            servers: config.mcp_servers.clone(),
            source: config.source.clone(),
            trust: config.trust.clone(),
        }
    }

    /// Whether no server is configured.
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }
}
