//! The MCP servers section of `<root>/.resolve/config.toml`:
//!
//! ```toml
//! [mcp_servers.notes]            # tools offered to the model as notes__<tool>
//! command = "python3"
//! args = ["notes_server.py"]
//! env = { NOTES_FILE = "notes.log" }
//! ```
//!
//! Owned here: reading and checking that section. Not owned: starting the servers (`hub`).
//!
//! A workspace's own file may come from a clone, so its servers start only once the person
//! trusted the file (`resolve trust`): the configuration carries the store's [`CommandTrust`],
//! which the hub consults before it spawns anything.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use resolve_edit::{CommandTrust, ConfigFile, StoreError, WorkspaceConfig};
use serde::Deserialize;

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

#[derive(Debug, Deserialize)]
struct ServersFile {
    #[serde(default)]
    mcp_servers: BTreeMap<String, McpServerConfig>,
}

/// A configuration file that cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpConfigError {
    /// The file could not be read.
    #[error("Could not read the configuration `{}`.", .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid TOML of the expected shape.
    #[error("The configuration `{}` is invalid: {message}", .path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong, with its line.
        message: String,
    },
    /// The file could not be read safely (a link, not a regular file, too long, not UTF-8), or
    /// the trust records could not be read.
    #[error(transparent)]
    State(#[from] StoreError),
    /// A server name cannot prefix tool names.
    #[error(
        "The configuration `{}` names an MCP server `{name}`; server names may use only letters, digits, `_` and `-`.",
        .path.display()
    )]
    ServerName {
        /// The file.
        path: PathBuf,
        /// The name.
        name: String,
    },
}

impl McpConfig {
    /// Parse the text of a configuration file read from `path`.
    pub fn parse(text: &str, path: &Path) -> Result<Self, McpConfigError> {
        let file: ServersFile = toml::from_str(text).map_err(|error| McpConfigError::Parse {
            path: path.to_path_buf(),
            message: error.to_string().trim_end().to_owned(),
        })?;
        if let Some(name) = file.mcp_servers.keys().find(|name| {
            name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        }) {
            return Err(McpConfigError::ServerName {
                path: path.to_path_buf(),
                name: name.clone(),
            });
        }
        if let Some(name) = file
            .mcp_servers
            .iter()
            .find_map(|(name, server)| (server.tool_timeout_sec == Some(0)).then_some(name))
        {
            return Err(McpConfigError::Parse {
                path: path.to_path_buf(),
                message: format!(
                    "`mcp_servers.{name}.tool_timeout_sec` is 0; give the seconds a tool call may take, at least 1"
                ),
            });
        }
        Ok(Self {
            servers: file.mcp_servers,
            source: Some(path.to_path_buf()),
            trust: CommandTrust::Allowed,
        })
    }

    /// The servers of a configuration file as read by the store, with its trust.
    pub fn from_config(config: &ConfigFile) -> Result<Self, McpConfigError> {
        Ok(Self {
            trust: config.command_trust(),
            ..Self::parse(&config.text, &config.path)?
        })
    }

    /// Read the configuration file at `path`, which must exist, as one the person named: its
    /// servers may start unless it is some workspace's own `.resolve/config.toml` that the
    /// person has not trusted (see [`ConfigFile::read`]).
    pub fn load(path: &Path) -> Result<Self, McpConfigError> {
        match ConfigFile::read(Path::new("."), Some(path))? {
            Some(config) => Self::from_config(&config),
            None => Err(McpConfigError::Read {
                path: path.to_path_buf(),
                source: std::io::ErrorKind::NotFound.into(),
            }),
        }
    }

    /// Read `file` when given, else `<root>/.resolve/config.toml` when it exists (no servers
    /// when it does not), with its trust from the per-user directory.
    pub fn discover(root: &Path, file: Option<&Path>) -> Result<Self, McpConfigError> {
        match ConfigFile::read(root, file)? {
            Some(config) => Self::from_config(&config),
            None => Ok(Self::default()),
        }
    }

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

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn the_documented_format_parses() {
        let config = McpConfig::parse(
            r#"
[mcp_servers.notes]            # tools offered to the model as notes__<tool>
command = "python3"
args = ["notes_server.py"]
env = { NOTES_FILE = "notes.log" }

[mcp_servers.bare]
command = "srv"
tool_timeout_sec = 5
"#,
            Path::new("config.toml"),
        )
        .unwrap();
        assert_eq!(
            config.servers["notes"],
            McpServerConfig {
                command: "python3".into(),
                args: vec!["notes_server.py".into()],
                env: BTreeMap::from([("NOTES_FILE".into(), "notes.log".into())]),
                tool_timeout_sec: None,
            }
        );
        assert!(config.servers["bare"].args.is_empty());
        assert_eq!(config.servers["bare"].tool_timeout_sec, Some(5));
    }

    #[test]
    fn an_empty_file_has_no_servers() {
        assert!(
            McpConfig::parse("", Path::new("c.toml"))
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn mistakes_are_named_with_the_file() {
        let typo = McpConfig::parse(
            "[mcp_servers.a]\ncommand = \"x\"\narg = []\n",
            Path::new("c.toml"),
        )
        .unwrap_err();
        assert!(typo.to_string().contains("c.toml"), "{typo}");
        assert!(typo.to_string().contains("arg"), "{typo}");
        let missing = McpConfig::parse("[mcp_servers.a]\n", Path::new("c.toml")).unwrap_err();
        assert!(missing.to_string().contains("command"), "{missing}");
        let name = McpConfig::parse(
            "[mcp_servers.\"a.b\"]\ncommand = \"x\"\n",
            Path::new("c.toml"),
        )
        .unwrap_err();
        assert!(matches!(name, McpConfigError::ServerName { .. }), "{name}");
        let zero = McpConfig::parse(
            "[mcp_servers.a]\ncommand = \"x\"\ntool_timeout_sec = 0\n",
            Path::new("c.toml"),
        )
        .unwrap_err();
        assert_eq!(
            zero.to_string(),
            "The configuration `c.toml` is invalid: `mcp_servers.a.tool_timeout_sec` is 0; give the seconds a tool call may take, at least 1"
        );
    }
}
