//! The `[check]` table of `<root>/.resolve/config.toml`: the command that checks a preview,
//! its time limit, and whether an apply requires a passing check.
//!
//! ```toml
//! [check]
//! command = ["cargo", "test", "--quiet"]   # the program and its arguments; no shell
//! timeout_sec = 600                        # optional, the default
//! require = false                          # optional: true makes every apply need a pass
//! ```
//!
//! It lives here, below the agent and the MCP server, because the command line, `resolve agent`
//! and `resolve mcp` all read it. Other tables of the file (`[mcp_servers.*]`) are the agent's
//! and are ignored here.
//!
//! A workspace's own file may come from a clone, so its `command` runs only once the person
//! trusted the file (`resolve trust`): the settings carry the store's [`CommandTrust`], and
//! [`CheckSettings::runnable_command`] consults it. `timeout_sec` and `require` are read
//! untrusted: they run nothing, and `require` only makes applying stricter.

use std::path::{Path, PathBuf};
use std::time::Duration;

use resolve_store::CommandTrust;
use serde::Deserialize;

use crate::error::EditError;

/// Where the configuration lives, relative to the workspace root.
pub const CONFIG_PATH: &str = ".resolve/config.toml";

/// How long a check command may run unless `timeout_sec` says otherwise.
pub const DEFAULT_CHECK_TIMEOUT: Duration = Duration::from_secs(600);

/// The `[check]` settings (all defaults when the file or the table is missing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckSettings {
    /// The configured command (program, then arguments), if any. Only this command runs for a
    /// model; a person may give another on the command line.
    pub command: Option<Vec<String>>,
    /// How long the command may run before it is killed (its whole process group).
    pub timeout: Duration,
    /// Whether every apply (the model's included) requires a passing check of the preview.
    pub require: bool,
    /// The file they were read from, if any.
    pub source: Option<PathBuf>,
    /// Whether `command` may run: refused for a workspace's configuration the person has not
    /// trusted. Allowed by default (settings built in code, or parsed from text the caller
    /// chose).
    pub trust: CommandTrust,
}

impl Default for CheckSettings {
    fn default() -> Self {
        Self {
            command: None,
            timeout: DEFAULT_CHECK_TIMEOUT,
            require: false,
            source: None,
            trust: CommandTrust::Allowed,
        }
    }
}

#[derive(Debug, Deserialize)]
struct CheckFile {
    #[serde(default)]
    check: Option<CheckTable>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CheckTable {
    #[serde(default)]
    command: Option<Vec<String>>,
    #[serde(default)]
    timeout_sec: Option<u64>,
    #[serde(default)]
    require: bool,
}

impl CheckSettings {
    /// Parse the text of a configuration file read from `path`.
    pub fn parse(text: &str, path: &Path) -> Result<Self, EditError> {
        let invalid = |message: String| EditError::Config {
            path: path.to_path_buf(),
            message,
        };
        let file: CheckFile = toml::from_str(text)
            .map_err(|error| invalid(error.to_string().trim_end().to_owned()))?;
        let Some(table) = file.check else {
            return Ok(Self {
                source: Some(path.to_path_buf()),
                ..Self::default()
            });
        };
        if let Some(command) = &table.command
            && command.first().is_none_or(String::is_empty)
        {
            return Err(invalid(
                "`check.command` is empty; give the program and its arguments, e.g. [\"cargo\", \"test\"]"
                    .to_owned(),
            ));
        }
        let timeout = match table.timeout_sec {
            None => DEFAULT_CHECK_TIMEOUT,
            Some(0) => {
                return Err(invalid(
                    "`check.timeout_sec` is 0; give the seconds the check may take, at least 1"
                        .to_owned(),
                ));
            }
            Some(seconds) => Duration::from_secs(seconds),
        };
        Ok(Self {
            command: table.command,
            timeout,
            require: table.require,
            source: Some(path.to_path_buf()),
            trust: CommandTrust::Allowed,
        })
    }

    /// The configured command when one is configured and may run; `Err` (nothing run) when
    /// it is configured in a file the person has not trusted, naming what it would run and how
    /// to trust it.
    pub fn runnable_command(&self) -> Result<Option<&[String]>, EditError> {
        match &self.command {
            None => Ok(None),
            Some(command) => {
                self.trust.check()?;
                Ok(Some(command))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn the_documented_table_parses_beside_other_tables() {
        let settings = CheckSettings::parse(
            r#"
[mcp_servers.notes]
command = "python3"

[check]
command = ["cargo", "test", "--quiet"]
timeout_sec = 30
require = true
"#,
            Path::new("c.toml"),
        )
        .unwrap();
        assert_eq!(
            settings.command,
            Some(vec!["cargo".into(), "test".into(), "--quiet".into()])
        );
        assert_eq!(settings.timeout, Duration::from_secs(30));
        assert!(settings.require);
    }

    #[test]
    fn without_a_table_nothing_is_configured_and_the_limit_is_ten_minutes() {
        let settings = CheckSettings::parse("", Path::new("c.toml")).unwrap();
        assert_eq!(settings.command, None);
        assert_eq!(settings.timeout, Duration::from_secs(600));
        assert!(!settings.require);
    }

    #[test]
    fn mistakes_are_named_with_the_file() {
        for (text, named) in [
            ("[check]\ncommand = []\n", "`check.command` is empty"),
            (
                "[check]\ncommand = [\"x\"]\ntimeout_sec = 0\n",
                "timeout_sec",
            ),
            ("[check]\ncomand = [\"x\"]\n", "comand"),
            ("[check]\ncommand = \"cargo test\"\n", "command"),
        ] {
            let error = CheckSettings::parse(text, Path::new("c.toml")).unwrap_err();
            let message = error.to_string();
            assert!(
                message.starts_with("The configuration `c.toml` is invalid: "),
                "{message}"
            );
            assert!(message.contains(named), "{message}");
        }
    }
}
