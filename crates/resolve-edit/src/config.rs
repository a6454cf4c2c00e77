//! `<root>/.resolve/config.toml` (or the file `--config` names), read once into one typed
//! [`WorkspaceConfig`]: the top-level `commit = true|false` (a git commit per apply), the
//! `[check]` table ([`CheckSettings`]), the `[mcp_servers.<name>]` tables ([`McpServerConfig`])
//! and the `[gc]` table (the history's [`Retention`]), with the file's trust. Any other table
//! is refused, so a misspelt table never goes unnoticed.
//!
//! Owned here: reading and checking the whole file. Not owned: what the settings do (the
//! check in `check`, starting servers in `resolve-agent`), nor trust itself (the store's
//! [`ConfigFile`]; the rules are unchanged: commands run only from a trusted file).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use std::time::Duration;

use resolve_store::{CommandTrust, ConfigFile, Retention};
use serde::Deserialize;

use crate::check::CheckSettings;
use crate::error::EditError;

/// The tables `resolve` reads, by their names in the file.
const KNOWN_TABLES: [&str; 3] = ["check", "mcp_servers", "gc"];

/// Seconds in a day, for `[gc] keep_days`.
const DAY: u64 = 24 * 60 * 60;

/// How to start one MCP server over stdio (a `[mcp_servers.<name>]` table).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServerConfig {
    /// The program: a name looked up on `PATH`, an absolute path, or a path relative to the
    /// workspace root.
    pub command: String,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Environment variables set for it, on top of the inherited environment.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// How long one call of its tools may take, in whole seconds (at least 1; by default the
    /// agent's `DEFAULT_TOOL_TIMEOUT`). A server that never answers must not hold a
    /// `resolve apply`, and the store lock with it, forever.
    #[serde(default)]
    pub tool_timeout_sec: Option<u64>,
}

/// A workspace's configuration, read once: every table `resolve` reads, typed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkspaceConfig {
    /// The `[check]` table (defaults when it is missing); carries the file's trust.
    pub check: CheckSettings,
    /// The `[mcp_servers.<name>]` tables, by name.
    pub mcp_servers: BTreeMap<String, McpServerConfig>,
    /// How much history `resolve gc` and the daily clean-up keep (`[gc] keep_days`,
    /// `keep_entries`; each defaults to [`Retention::default`]'s). Read whether or not the file
    /// is trusted: it runs nothing.
    pub retention: Retention,
    /// `commit = true`: every apply becomes a git commit (honoured once the file is trusted,
    /// since a commit runs the repository's hooks).
    pub commit: bool,
    /// The file they were read from, if any.
    pub source: Option<PathBuf>,
    /// Whether the commands it names may run (see [`ConfigFile::command_trust`]).
    pub trust: CommandTrust,
}

/// The tables read with serde (`[check]` has its own reader, shared with `--config`).
#[derive(Debug, Deserialize)]
struct TablesFile {
    #[serde(default)]
    mcp_servers: BTreeMap<String, McpServerConfig>,
    #[serde(default)]
    gc: GcTable,
}

/// The `[gc]` table as written: either key may be left out.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct GcTable {
    keep_days: Option<u64>,
    keep_entries: Option<usize>,
}

impl GcTable {
    /// The retention it asks for, the default's for what it leaves out.
    fn retention(&self) -> Retention {
        let default = Retention::default();
        Retention {
            age: self.keep_days.map_or(default.age, |days| {
                Duration::from_secs(days.saturating_mul(DAY))
            }),
            entries: self.keep_entries.unwrap_or(default.entries),
        }
    }
}

impl WorkspaceConfig {
    /// Parse the text of a configuration file read from `path` (its commands allowed: the
    /// caller chose the text). Unknown tables, malformed tables and unusable values are
    /// refused with [`EditError::Config`] naming the file.
    pub fn parse(text: &str, path: &Path) -> Result<Self, EditError> {
        let invalid = |message: String| EditError::Config {
            path: path.to_path_buf(),
            message,
        };
        let table: toml::Table = toml::from_str(text)
            .map_err(|error| invalid(error.to_string().trim_end().to_owned()))?;
        if let Some(name) = table
            .iter()
            .find(|(name, value)| value.is_table() && !KNOWN_TABLES.contains(&name.as_str()))
            .map(|(name, _)| name)
        {
            return Err(invalid(format!(
                "unknown table `[{name}]`; resolve reads only the tables `[check]`, `[mcp_servers.<name>]` and `[gc]`. Remove it or correct its name."
            )));
        }
        let commit = match table.get("commit") {
            None => false,
            Some(toml::Value::Boolean(commit)) => *commit,
            Some(other) => {
                return Err(invalid(format!(
                    "`commit` is {}; write `commit = true` (a git commit per apply) or `commit = false`",
                    other.type_str()
                )));
            }
        };
        let check = CheckSettings::parse(text, path)?;
        let tables: TablesFile = toml::from_str(text)
            .map_err(|error| invalid(error.to_string().trim_end().to_owned()))?;
        for (name, server) in &tables.mcp_servers {
            if name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            {
                return Err(invalid(format!(
                    "it names an MCP server `{name}`; server names may use only letters, digits, `_` and `-`"
                )));
            }
            if server.tool_timeout_sec == Some(0) {
                return Err(invalid(format!(
                    "`mcp_servers.{name}.tool_timeout_sec` is 0; give the seconds a tool call may take, at least 1"
                )));
            }
        }
        Ok(Self {
            check,
            mcp_servers: tables.mcp_servers,
            retention: tables.gc.retention(),
            commit,
            source: Some(path.to_path_buf()),
            trust: CommandTrust::Allowed,
        })
    }

    /// The configuration of a file as the store read it, with its trust.
    pub fn from_config(config: &ConfigFile) -> Result<Self, EditError> {
        let trust = config.command_trust();
        let mut parsed = Self::parse(&config.text, &config.path)?;
        parsed.check.trust = trust.clone();
        parsed.trust = trust;
        Ok(parsed)
    }

    /// Read `file` when given (it must exist), else `<root>/.resolve/config.toml` when it
    /// exists (defaults when it does not), with its trust from the records of `user_dir`
    /// (`None`: the per-user directory; see [`ConfigFile::read_with`]).
    pub fn read(
        root: &Path,
        file: Option<&Path>,
        user_dir: Option<&Path>,
    ) -> Result<Self, EditError> {
        match ConfigFile::read_with(root, file, user_dir)? {
            Some(config) => Self::from_config(&config),
            None => Ok(Self::default()),
        }
    }

    /// Whether it names a command that runs only once trusted (`[check] command` or a server).
    pub fn names_commands(&self) -> bool {
        self.check.command.is_some() || !self.mcp_servers.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::check::CONFIG_PATH;

    /// `text` parsed as the configuration file `c.toml`.
    fn parse(text: &str) -> Result<WorkspaceConfig, EditError> {
        WorkspaceConfig::parse(text, Path::new("c.toml"))
    }

    #[test]
    fn both_tables_parse_into_one_config() {
        let config = parse("[check]\ncommand = [\"cargo\", \"test\"]\nrequire = true\n\n[mcp_servers.notes]\ncommand = \"python3\"\nargs = [\"notes.py\"]\n")
        .unwrap();
        assert_eq!(
            config.check.command,
            Some(vec!["cargo".to_owned(), "test".to_owned()])
        );
        assert!(config.check.require);
        assert_eq!(config.mcp_servers["notes"].args, ["notes.py"]);
        assert!(config.names_commands());
    }

    #[test]
    fn commit_is_read_at_the_top_level_and_must_be_a_boolean() {
        let config = parse("commit = true\n").unwrap();
        assert!(config.commit);
        assert!(!parse("").unwrap().commit);
        let error = parse("commit = \"yes\"\n").unwrap_err().to_string();
        assert!(error.contains("`commit = true`"), "{error}");
    }

    #[test]
    fn an_unknown_table_is_refused_by_name() {
        let error = parse("[check]\nrequire = true\n\n[chekc]\ncommand = [\"x\"]\n").unwrap_err();
        assert_eq!(
            error.to_string(),
            "The configuration `c.toml` is invalid: unknown table `[chekc]`; resolve reads only the tables `[check]`, `[mcp_servers.<name>]` and `[gc]`. Remove it or correct its name."
        );
    }

    #[test]
    fn the_documented_server_format_parses_and_an_empty_file_has_none() {
        let config = WorkspaceConfig::parse(
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
            config.mcp_servers["notes"],
            McpServerConfig {
                command: "python3".into(),
                args: vec!["notes_server.py".into()],
                env: BTreeMap::from([("NOTES_FILE".into(), "notes.log".into())]),
                tool_timeout_sec: None,
            }
        );
        assert!(config.mcp_servers["bare"].args.is_empty());
        assert_eq!(config.mcp_servers["bare"].tool_timeout_sec, Some(5));
        let empty = parse("").unwrap();
        assert!(empty.mcp_servers.is_empty() && !empty.names_commands());
    }

    #[test]
    fn a_workspace_command_runs_only_once_its_file_is_trusted() {
        let root = tempfile::tempdir().unwrap();
        let user = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join(".resolve")).unwrap();
        std::fs::write(
            root.path().join(CONFIG_PATH),
            "[check]\ncommand = [\"touch\", \"marker\"]\nrequire = true\n",
        )
        .unwrap();
        let config = ConfigFile::read_with(root.path(), None, Some(user.path()))
            .unwrap()
            .unwrap();
        let settings = WorkspaceConfig::from_config(&config).unwrap().check;
        assert!(settings.require, "non-command settings are read untrusted");
        let error = settings.runnable_command().unwrap_err().to_string();
        assert!(error.contains("`touch marker` ([check])"), "{error}");
        resolve_store::TrustedFiles::load_in(user.path())
            .unwrap()
            .trust(&config, 1)
            .unwrap();
        assert_eq!(
            settings.runnable_command().unwrap(),
            Some(&["touch".to_owned(), "marker".to_owned()][..])
        );
    }

    #[test]
    fn the_gc_table_sets_the_retention_and_each_key_defaults() {
        let config = parse("[gc]\nkeep_days = 7\n").unwrap();
        assert_eq!(
            config.retention,
            Retention {
                age: Duration::from_secs(7 * DAY),
                entries: Retention::default().entries,
            }
        );
        let config = parse("[gc]\nkeep_entries = 5\n").unwrap();
        assert_eq!(config.retention.entries, 5);
        assert_eq!(config.retention.age, Retention::default().age);
        let empty = parse("").unwrap();
        assert_eq!(empty.retention, Retention::default());
        for text in [
            "[gc]\nkeep = 1\n",
            "[gc]\nkeep_days = -1\n",
            "[gc]\nkeep_days = \"7\"\n",
        ] {
            let error = parse(text).unwrap_err();
            assert!(error.to_string().contains("c.toml"), "{text}: {error}");
        }
    }

    #[test]
    fn a_bad_server_is_refused() {
        for text in [
            "[mcp_servers.\"a.b\"]\ncommand = \"x\"\n",
            "[mcp_servers.a]\ncommand = \"x\"\ntool_timeout_sec = 0\n",
            "[mcp_servers.a]\ncommand = \"x\"\narg = []\n",
            "[mcp_servers.a]\n",
        ] {
            let error = parse(text).unwrap_err();
            assert!(matches!(error, EditError::Config { .. }), "{text}: {error}");
            assert!(error.to_string().contains("c.toml"), "{text}: {error}");
        }
    }
}
