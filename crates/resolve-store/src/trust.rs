//! Trust in a workspace's configuration: whether the commands its `.resolve/config.toml` names
//! (`[check] command`, `[mcp_servers.*]`) may run.
//!
//! A repository can plant anything under its own root, `.resolve/config.toml` included, so a
//! clone (or a model writing a nested root's configuration) must not get a command run just by
//! being opened. A person trusts one exact file with `resolve trust`: its path and the SHA-256
//! of its bytes go to `trusted.json` in the per-user directory ([`user_dir`]), outside every
//! workspace. A file whose bytes differ from the trusted ones is untrusted again.
//!
//! Owned here: reading a configuration file safely ([`ConfigFile::read`]: no symlink followed,
//! regular files only, at most [`CONFIG_MAX_LEN`] bytes), listing the commands it names, the
//! trust records ([`TrustedFiles`]) and the decision ([`CommandTrust`]) that the `[check]`
//! table's reader (`resolve-edit`) and the MCP servers' reader (`resolve-agent`) carry and
//! consult before they spawn anything. Not owned: what the tables mean, or running anything.
//!
//! A file the person names on the command line (`--config FILE`) is theirs and allowed, unless
//! it is some workspace's own `.resolve/config.toml`, which needs trust like any other.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::StoreError;
use crate::fs;
use crate::hash::content_hash;
use crate::layout::{CONFIG_FILE, STATE_DIR};
use crate::user_dir::user_dir;

/// Name of the trust records' file in the per-user directory.
pub const TRUST_FILE: &str = "trusted.json";

/// The longest configuration file read (1 MiB); a longer one is refused as corrupt.
pub const CONFIG_MAX_LEN: u64 = 1024 * 1024;

/// The longest trust records' file read (16 MiB).
const TRUST_FILE_MAX_LEN: u64 = 16 * 1024 * 1024;

/// The version of the trust records' format.
const TRUST_FILE_VERSION: u32 = 1;

/// A command a configuration names, with the table that names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConfiguredCommand {
    /// The table: `check` or `mcp_servers.<name>`.
    pub table: String,
    /// The program, then its arguments.
    pub command: Vec<String>,
}

impl ConfiguredCommand {
    /// `` `python3 notes.py` ([mcp_servers.notes]) ``: how messages list it.
    pub fn describe(&self) -> String {
        format!("`{}` ([{}])", shell_words(&self.command), self.table)
    }
}

/// How a configuration file stands with the person.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TrustState {
    /// `resolve trust` recorded these exact bytes.
    Trusted,
    /// The person named the file on the command line, and it is no workspace's own
    /// configuration.
    Chosen,
    /// Nothing is recorded for it.
    Untrusted,
    /// Other bytes were trusted at this path; these were not.
    Changed,
}

impl TrustState {
    /// Whether its commands may run.
    pub fn allows_commands(self) -> bool {
        match self {
            Self::Trusted | Self::Chosen => true,
            Self::Untrusted | Self::Changed => false,
        }
    }
}

/// Whether the commands of a configuration may run: what its readers carry and consult right
/// before they spawn one.
///
/// By default (settings built in code, or no file) they may.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum CommandTrust {
    /// They may run.
    #[default]
    Allowed,
    /// They may not, unless the person trusts these exact bytes meanwhile.
    Refused(Box<Untrusted>),
}

impl CommandTrust {
    /// `Ok` when commands may run: allowed from the start, or the file (these exact bytes) was
    /// trusted since it was read. Else the error that says what would run and how to trust
    /// it. Reads the trust records only when refused.
    pub fn check(&self) -> Result<(), StoreError> {
        match self {
            Self::Allowed => Ok(()),
            Self::Refused(untrusted) => {
                let records = TrustedFiles::load_from(untrusted.user_dir.as_deref())?;
                if records.state_of(&untrusted.path, &untrusted.sha256) == TrustState::Trusted {
                    Ok(())
                } else {
                    Err(untrusted.error())
                }
            }
        }
    }

    /// Whether commands were allowed when the file was read (no records read).
    pub fn is_allowed(&self) -> bool {
        matches!(self, Self::Allowed)
    }
}

/// A configuration whose commands may not run, and what to tell the person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Untrusted {
    /// The file, as trust records name it.
    pub path: PathBuf,
    /// The SHA-256 of the bytes read, in hex.
    pub sha256: String,
    /// Whether other bytes were trusted at this path.
    pub changed: bool,
    /// The commands it names.
    pub commands: Vec<ConfiguredCommand>,
    /// The command line that trusts it (`resolve trust --root DIR` or `--config FILE`).
    pub trust_command: String,
    /// The per-user directory whose records decide (`None`: [`user_dir`]).
    pub user_dir: Option<PathBuf>,
}

impl Untrusted {
    /// The error naming the file, what it would run and how to trust it.
    pub fn error(&self) -> StoreError {
        StoreError::UntrustedConfig {
            path: self.path.clone(),
            changed: self.changed,
            commands: self
                .commands
                .iter()
                .map(ConfiguredCommand::describe)
                .collect(),
            trust_command: self.trust_command.clone(),
        }
    }
}

/// A configuration file as read: its text, its hash and how it stands with the person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigFile {
    /// The file, as trust records name it: its directory canonical, the name as it is.
    pub path: PathBuf,
    /// Whether it is a workspace's own `.resolve/config.toml` (which needs trust).
    pub workspace_config: bool,
    /// Its text.
    pub text: String,
    /// The SHA-256 of its bytes, in hex.
    pub sha256: String,
    /// How it stands with the person.
    pub state: TrustState,
    /// The command line that trusts it.
    pub trust_command: String,
    /// The per-user directory whose records decided (`None`: [`user_dir`]).
    pub user_dir: Option<PathBuf>,
}

impl ConfigFile {
    /// Read `file` when the person named one (it must exist), else `<root>/.resolve/config.toml`
    /// (`None` when there is none). A symbolic link at the file or at `.resolve` is refused, as
    /// is anything but a regular file of at most [`CONFIG_MAX_LEN`] bytes or text that is not
    /// UTF-8. Its trust comes from the records of the per-user directory ([`user_dir`]);
    /// records that cannot be read trust nothing.
    pub fn read(root: &Path, file: Option<&Path>) -> Result<Option<Self>, StoreError> {
        Self::read_with(root, file, None)
    }

    /// [`ConfigFile::read`] with the trust records of `user_dir` when given (tests and
    /// embedders keep their own), else of the per-user directory.
    pub fn read_with(
        root: &Path,
        file: Option<&Path>,
        user_dir: Option<&Path>,
    ) -> Result<Option<Self>, StoreError> {
        let Some(Located {
            path,
            workspace_config,
            trust_command,
        }) = locate(root, file)?
        else {
            return Ok(None);
        };
        let Some(bytes) = fs::read_state_file(&path, CONFIG_MAX_LEN)? else {
            return match file {
                Some(_) => Err(StoreError::io(
                    "read the configuration",
                    path,
                    std::io::ErrorKind::NotFound.into(),
                )),
                None => Ok(None),
            };
        };
        let sha256 = content_hash(&bytes);
        let text = String::from_utf8(bytes).map_err(|_| StoreError::CorruptState {
            path: path.clone(),
            reason: "it is not UTF-8 text".to_owned(),
        })?;
        let mut config = Self {
            path,
            workspace_config,
            text,
            sha256,
            state: TrustState::Chosen,
            trust_command,
            user_dir: user_dir.map(Path::to_path_buf),
        };
        if workspace_config {
            // Records that cannot be read trust nothing; the error is told when a command
            // would run (see `CommandTrust::check`), not to a reader that runs none.
            config.state = TrustedFiles::load_from(user_dir)
                .map_or(TrustState::Untrusted, |records| {
                    records.state_of(&config.path, &config.sha256)
                });
        }
        Ok(Some(config))
    }

    /// The path trust records name for `file` (when the person named one) or
    /// `<root>/.resolve/config.toml`, whether or not the file exists; `None` when the
    /// workspace has no `.resolve/`.
    pub fn path_of(root: &Path, file: Option<&Path>) -> Result<Option<PathBuf>, StoreError> {
        Ok(locate(root, file)?.map(|located| located.path))
    }

    /// The commands it names (`[check] command`, then each `[mcp_servers.<name>]`'s command
    /// and arguments), as far as the text parses.
    pub fn commands(&self) -> Vec<ConfiguredCommand> {
        configured_commands(&self.text)
    }

    /// Whether its commands may run (see [`CommandTrust`]).
    pub fn command_trust(&self) -> CommandTrust {
        if self.state.allows_commands() {
            return CommandTrust::Allowed;
        }
        CommandTrust::Refused(Box::new(Untrusted {
            path: self.path.clone(),
            sha256: self.sha256.clone(),
            changed: self.state == TrustState::Changed,
            commands: self.commands(),
            trust_command: self.trust_command.clone(),
            user_dir: self.user_dir.clone(),
        }))
    }
}

/// What `resolve trust` recorded for one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TrustRecord {
    /// The SHA-256 of the trusted bytes, in hex.
    pub sha256: String,
    /// When, in Unix seconds.
    pub trusted_at: u64,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TrustFile {
    version: u32,
    files: BTreeMap<String, TrustRecord>,
}

/// The trust records of this user: `<user dir>/trusted.json`, mapping each trusted
/// configuration's path to the hash of the bytes trusted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustedFiles {
    file: PathBuf,
    records: BTreeMap<String, TrustRecord>,
}

impl TrustedFiles {
    /// The records in the per-user directory (none when the file does not exist yet).
    pub fn load() -> Result<Self, StoreError> {
        Self::load_in(&user_dir()?)
    }

    /// The records in `dir` when given, else in the per-user directory.
    pub fn load_from(dir: Option<&Path>) -> Result<Self, StoreError> {
        match dir {
            Some(dir) => Self::load_in(dir),
            None => Self::load(),
        }
    }

    /// The records in `dir` (none when its file does not exist yet).
    pub fn load_in(dir: &Path) -> Result<Self, StoreError> {
        let file = dir.join(TRUST_FILE);
        let records = match fs::read_state_file(&file, TRUST_FILE_MAX_LEN)? {
            None => BTreeMap::new(),
            Some(bytes) => {
                let corrupt = |reason: String| StoreError::CorruptState {
                    path: file.clone(),
                    reason,
                };
                let parsed: TrustFile =
                    serde_json::from_slice(&bytes).map_err(|error| corrupt(error.to_string()))?;
                if parsed.version != TRUST_FILE_VERSION {
                    return Err(corrupt(format!(
                        "version {} is not {TRUST_FILE_VERSION}",
                        parsed.version
                    )));
                }
                parsed.files
            }
        };
        Ok(Self { file, records })
    }

    /// The file the records live in.
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// Every record, by path, in path order.
    pub fn records(&self) -> impl Iterator<Item = (&str, &TrustRecord)> {
        self.records
            .iter()
            .map(|(path, record)| (path.as_str(), record))
    }

    /// How the bytes hashing to `sha256` at `path` stand: trusted, changed or untrusted.
    pub fn state_of(&self, path: &Path, sha256: &str) -> TrustState {
        match self.records.get(&key(path)) {
            Some(record) if record.sha256 == sha256 => TrustState::Trusted,
            Some(_) => TrustState::Changed,
            None => TrustState::Untrusted,
        }
    }

    /// Record `config`'s bytes as trusted at `now` (Unix seconds), replacing an earlier
    /// record of its path, and write the records atomically.
    pub fn trust(&mut self, config: &ConfigFile, now: u64) -> Result<(), StoreError> {
        self.records.insert(
            key(&config.path),
            TrustRecord {
                sha256: config.sha256.clone(),
                trusted_at: now,
            },
        );
        self.save()
    }

    /// Remove the record of `path`; whether there was one. The records are written only when
    /// one was removed.
    pub fn remove(&mut self, path: &Path) -> Result<bool, StoreError> {
        if self.records.remove(&key(path)).is_none() {
            return Ok(false);
        }
        self.save()?;
        Ok(true)
    }

    fn save(&self) -> Result<(), StoreError> {
        fs::create_dir_all(&fs::parent_of(&self.file))?;
        fs::atomic_write_json(
            &self.file,
            &TrustFile {
                version: TRUST_FILE_VERSION,
                files: self.records.clone(),
            },
        )
    }
}

/// Where a configuration is, as [`ConfigFile::read`] finds it.
struct Located {
    path: PathBuf,
    workspace_config: bool,
    trust_command: String,
}

/// Find `file` (when the person named one) or `<root>/.resolve/config.toml`; `None` when the
/// workspace has no `.resolve/`. A link at `.resolve` is refused.
fn locate(root: &Path, file: Option<&Path>) -> Result<Option<Located>, StoreError> {
    let located = match file {
        Some(file) => {
            let path = canonical_dir_of(file)?;
            let workspace_config = is_state_config(&path);
            let command = format!("resolve trust --config {}", shell_word(&path));
            Located {
                path,
                workspace_config,
                trust_command: command,
            }
        }
        None => {
            let state_dir = root.join(STATE_DIR);
            match std::fs::symlink_metadata(&state_dir) {
                Ok(metadata) if metadata.file_type().is_symlink() => {
                    return Err(StoreError::CorruptState {
                        path: state_dir,
                        reason: "it is a symbolic link, which resolve does not follow".to_owned(),
                    });
                }
                Ok(_) => {}
                Err(_) => return Ok(None),
            }
            let root = root
                .canonicalize()
                .map_err(|source| StoreError::io("open the workspace root", root, source))?;
            let command = format!("resolve trust --root {}", shell_word(&root));
            Located {
                path: root.join(STATE_DIR).join(CONFIG_FILE),
                workspace_config: true,
                trust_command: command,
            }
        }
    };
    Ok(Some(located))
}

/// The key of `path` in the records.
fn key(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// `file` with its directory canonical and its name as it is (a link at the name is not
/// followed: reading refuses it); a path ending in `.` or `..` is refused.
fn canonical_dir_of(file: &Path) -> Result<PathBuf, StoreError> {
    let absolute = if file.is_absolute() {
        file.to_path_buf()
    } else {
        std::env::current_dir()
            .map_err(|source| StoreError::io("find the current directory for", file, source))?
            .join(file)
    };
    let name = match absolute.components().next_back() {
        Some(Component::Normal(name)) => name.to_owned(),
        _ => {
            return Err(StoreError::io(
                "read the configuration",
                file,
                std::io::ErrorKind::InvalidInput.into(),
            ));
        }
    };
    let dir = fs::parent_of(&absolute);
    let dir = dir
        .canonicalize()
        .map_err(|source| StoreError::io("read the configuration", file, source))?;
    Ok(dir.join(name))
}

/// Whether `path` is some workspace's own configuration: `config.toml` in a `.resolve`
/// directory.
fn is_state_config(path: &Path) -> bool {
    path.file_name().is_some_and(|name| name == CONFIG_FILE)
        && path
            .parent()
            .and_then(Path::file_name)
            .is_some_and(|name| name == STATE_DIR)
}

/// The commands `text` names, as far as it parses as TOML.
fn configured_commands(text: &str) -> Vec<ConfiguredCommand> {
    let Ok(table) = toml::from_str::<toml::Table>(text) else {
        return Vec::new();
    };
    let strings = |value: Option<&toml::Value>| -> Vec<String> {
        match value {
            Some(toml::Value::Array(items)) => items
                .iter()
                .map(|item| match item {
                    toml::Value::String(text) => text.clone(),
                    other => other.to_string(),
                })
                .collect(),
            Some(toml::Value::String(text)) => vec![text.clone()],
            Some(other) => vec![other.to_string()],
            None => Vec::new(),
        }
    };
    let mut commands = Vec::new();
    if let Some(toml::Value::Table(check)) = table.get("check")
        && check.contains_key("command")
    {
        commands.push(ConfiguredCommand {
            table: "check".to_owned(),
            command: strings(check.get("command")),
        });
    }
    if let Some(toml::Value::Table(servers)) = table.get("mcp_servers") {
        for (name, server) in servers {
            let mut command = Vec::new();
            if let toml::Value::Table(server) = server {
                command = strings(server.get("command"));
                command.extend(strings(server.get("args")));
            }
            commands.push(ConfiguredCommand {
                table: format!("mcp_servers.{name}"),
                command,
            });
        }
    }
    commands
}

/// `words` as one shell command line (each word quoted when it needs to be).
pub fn shell_words(words: &[String]) -> String {
    words
        .iter()
        .map(|word| shell_word(Path::new(word)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `word` as one shell word: as it is when it has only safe characters, else in single quotes.
fn shell_word(word: &Path) -> String {
    let word = word.to_string_lossy();
    let safe = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@%".contains(c));
    if safe {
        word.into_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn commands_are_listed_with_their_tables() {
        let commands = configured_commands(
            r#"
[check]
command = ["touch", "a marker"]

[mcp_servers.notes]
command = "python3"
args = ["notes.py"]
"#,
        );
        assert_eq!(
            commands
                .iter()
                .map(ConfiguredCommand::describe)
                .collect::<Vec<_>>(),
            [
                "`touch 'a marker'` ([check])",
                "`python3 notes.py` ([mcp_servers.notes])"
            ]
        );
        assert!(configured_commands("[check]\ntimeout_sec = 5\n").is_empty());
        assert!(configured_commands("not toml [").is_empty());
    }

    #[test]
    fn trusted_bytes_stay_trusted_and_other_bytes_at_the_path_are_changed() {
        let user = tempfile::tempdir().unwrap();
        let mut records = TrustedFiles::load_in(user.path()).unwrap();
        let config = ConfigFile {
            path: PathBuf::from("/w/.resolve/config.toml"),
            workspace_config: true,
            text: String::new(),
            sha256: content_hash(b"a"),
            state: TrustState::Untrusted,
            trust_command: "resolve trust --root /w".to_owned(),
            user_dir: None,
        };
        assert_eq!(
            records.state_of(&config.path, &config.sha256),
            TrustState::Untrusted
        );
        records.trust(&config, 7).unwrap();
        let records = TrustedFiles::load_in(user.path()).unwrap();
        assert_eq!(
            records.state_of(&config.path, &config.sha256),
            TrustState::Trusted
        );
        assert_eq!(
            records.state_of(&config.path, &content_hash(b"b")),
            TrustState::Changed
        );
        assert_eq!(
            records.records().collect::<Vec<_>>(),
            [(
                "/w/.resolve/config.toml",
                &TrustRecord {
                    sha256: content_hash(b"a"),
                    trusted_at: 7
                }
            )]
        );
    }

    #[test]
    fn an_untrusted_configuration_refuses_until_these_bytes_are_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let user = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".resolve")).unwrap();
        let file = dir.path().join(".resolve/config.toml");
        std::fs::write(&file, "[check]\ncommand = [\"touch\", \"marker\"]\n").unwrap();
        let config = ConfigFile::read_with(dir.path(), None, Some(user.path()))
            .unwrap()
            .unwrap();
        assert_eq!(config.state, TrustState::Untrusted);
        let trust = config.command_trust();
        let error = trust.check().unwrap_err().to_string();
        assert!(error.contains("is not trusted"), "{error}");
        assert!(error.contains("`touch marker` ([check])"), "{error}");
        assert!(error.contains("run `resolve trust --root /"), "{error}");
        TrustedFiles::load_in(user.path())
            .unwrap()
            .trust(&config, 1)
            .unwrap();
        trust.check().unwrap();
        std::fs::write(&file, "[check]\ncommand = [\"touch\", \"other\"]\n").unwrap();
        let changed = ConfigFile::read_with(dir.path(), None, Some(user.path()))
            .unwrap()
            .unwrap();
        assert_eq!(changed.state, TrustState::Changed);
        let error = changed.command_trust().check().unwrap_err().to_string();
        assert!(error.contains("changed since it was trusted"), "{error}");
    }

    #[test]
    fn a_damaged_records_file_is_refused_naming_it() {
        let user = tempfile::tempdir().unwrap();
        std::fs::write(user.path().join(TRUST_FILE), "{").unwrap();
        let error = TrustedFiles::load_in(user.path()).unwrap_err();
        assert!(error.to_string().contains(TRUST_FILE), "{error}");
    }

    #[test]
    fn a_named_file_is_chosen_unless_it_is_a_workspace_configuration() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("mine.toml"), "[check]\ncommand = [\"x\"]\n").unwrap();
        let chosen = ConfigFile::read(dir.path(), Some(&dir.path().join("mine.toml")))
            .unwrap()
            .unwrap();
        assert_eq!(chosen.state, TrustState::Chosen);
        assert!(chosen.command_trust().is_allowed());
        // A workspace's own configuration without commands needs no records at all.
        std::fs::create_dir(dir.path().join(".resolve")).unwrap();
        std::fs::write(dir.path().join(".resolve/config.toml"), "").unwrap();
        let own = ConfigFile::read_with(
            dir.path(),
            Some(&dir.path().join(".resolve/config.toml")),
            Some(dir.path()),
        )
        .unwrap()
        .unwrap();
        assert!(own.workspace_config);
        assert!(own.trust_command.starts_with("resolve trust --config /"));
    }

    #[test]
    fn a_linked_configuration_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".resolve")).unwrap();
        std::fs::write(dir.path().join("elsewhere.toml"), "").unwrap();
        std::os::unix::fs::symlink(
            dir.path().join("elsewhere.toml"),
            dir.path().join(".resolve/config.toml"),
        )
        .unwrap();
        let error = ConfigFile::read_with(dir.path(), None, Some(dir.path())).unwrap_err();
        assert!(error.to_string().contains("is a symlink"), "{error}");
        assert_eq!(
            ConfigFile::read(&dir.path().join("missing"), None).unwrap(),
            None
        );
    }

    #[test]
    fn shell_words_quote_what_needs_quoting() {
        assert_eq!(
            shell_words(&["a".into(), "b c".into(), "it's".into(), String::new()]),
            r"a 'b c' 'it'\''s' ''"
        );
    }
}
