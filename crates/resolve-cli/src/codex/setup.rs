//! `resolve setup codex`: the hook and the `resolve mcp` server in a Codex `config.toml`
//! (the project's `.codex/config.toml`, or the user's `$CODEX_HOME/config.toml` with `--user`),
//! merged into what is there with its comments and order kept, idempotent, and taken out again
//! exactly with `--remove`.
//!
//! What it writes (the pure [`add`]; [`remove`] is its inverse):
//! - `[mcp_servers.resolve]`: `resolve [--root ROOT] mcp`, with `approval_mode = "approve"` for
//!   its `resolve` tool (Codex refuses a destructive MCP tool under `approval_policy = "never"`
//!   unless approved there);
//! - one `[[hooks.PreToolUse]]` group with `matcher = "^(Bash|apply_patch)$"` running
//!   `resolve [--root ROOT] hook codex --approve MODE`.
//!
//! Ours is recognised by the server's name and the hook command's `hook codex` words, so a
//! second run updates in place and `--remove` leaves everything else as it was.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use resolve_edit::{atomic_write, create_dir_all, read_regular_file, unified_diff};
use serde_json::json;
use toml_edit::{Array, ArrayOfTables, DocumentMut, Item, Table, value};

use super::hook_trust::{distrust, hook_hash, hook_key, table_at, trust};
use crate::Outcome;
use crate::args::SetupArgs;
use crate::output::{Output, note};

/// The name `resolve mcp` is registered under.
pub(crate) const SERVER_NAME: &str = "resolve";

use super::protocol::HOOK_MATCHER as MATCHER;

/// The words that mark a hook command as ours.
const HOOK_WORDS: &str = " hook codex";

/// Where and how `resolve` is set up in Codex.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CodexSetup {
    /// The `resolve` executable the configuration runs.
    pub(crate) resolve: PathBuf,
    /// The workspace root for a project's configuration; `None` for the user's (the hook and
    /// the server then work in the session's directory).
    pub(crate) root: Option<PathBuf>,
    /// The hook's `--approve` mode (`stage`, `review` or `auto`).
    pub(crate) approve: String,
}

impl CodexSetup {
    /// `resolve [--root ROOT]` as shell words.
    fn resolve_words(&self) -> String {
        let mut words = shell_quote(&self.resolve.to_string_lossy());
        if let Some(root) = &self.root {
            words.push_str(" --root ");
            words.push_str(&shell_quote(&root.to_string_lossy()));
        }
        words
    }

    /// The hook's command line (Codex runs it with `sh -c`).
    pub(crate) fn hook_command(&self) -> String {
        format!(
            "{}{HOOK_WORDS} --approve {}",
            self.resolve_words(),
            self.approve
        )
    }

    /// The MCP server's arguments.
    fn server_args(&self) -> Array {
        let mut args = Array::new();
        if let Some(root) = &self.root {
            args.push("--root");
            args.push(root.to_string_lossy().as_ref());
        }
        args.push("mcp");
        args
    }
}

/// Quote `word` for `sh` unless it needs none.
fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// The Codex configuration file setup writes: `<root>/.codex/config.toml`, or with `user`,
/// `$CODEX_HOME/config.toml` (by default `~/.codex/config.toml`).
pub(crate) fn config_file(
    root: &Path,
    user: bool,
    codex_home: Option<PathBuf>,
    home: Option<PathBuf>,
) -> anyhow::Result<PathBuf> {
    if !user {
        return Ok(root.join(".codex").join("config.toml"));
    }
    let codex_home = match codex_home {
        Some(dir) => dir,
        None => home
            .context(
                "Neither CODEX_HOME nor HOME is set; cannot find the user's Codex configuration.",
            )?
            .join(".codex"),
    };
    Ok(codex_home.join("config.toml"))
}

/// Whether a hook group (a table of `hooks.PreToolUse`) is ours.
fn is_our_group(group: &Table) -> bool {
    group
        .get("hooks")
        .and_then(Item::as_array_of_tables)
        .is_some_and(|hooks| {
            hooks.iter().any(|hook| {
                hook.get("command")
                    .and_then(Item::as_str)
                    .is_some_and(|command| command.contains(HOOK_WORDS))
            })
        })
}

/// Parse a configuration's text (empty for a missing file).
fn parse(text: &str, file: &Path) -> anyhow::Result<DocumentMut> {
    text.parse::<DocumentMut>()
        .with_context(|| format!("`{}` is not valid TOML; fix it first.", file.display()))
}

/// `text` with `setup`'s server and hook merged in (updated in place when already there).
pub(crate) fn add(text: &str, setup: &CodexSetup, file: &Path) -> anyhow::Result<String> {
    let mut document = parse(text, file)?;
    let root = document.as_table_mut();

    let servers = table_at(root, "mcp_servers", file)?;
    let server = table_at(servers, SERVER_NAME, file)?;
    server.set_implicit(false);
    let command = setup.resolve.to_string_lossy().into_owned();
    if server.get("command").and_then(Item::as_str) != Some(command.as_str()) {
        server["command"] = value(command);
    }
    let args = setup.server_args();
    let same_args = server
        .get("args")
        .and_then(Item::as_array)
        .is_some_and(|old| {
            old.iter()
                .map(|v| v.as_str())
                .eq(args.iter().map(|v| v.as_str()))
        });
    if !same_args {
        server["args"] = value(args);
    }
    let tools = table_at(server, "tools", file)?;
    let resolve_tool = table_at(tools, SERVER_NAME, file)?;
    resolve_tool.set_implicit(false);
    if resolve_tool.get("approval_mode").and_then(Item::as_str) != Some("approve") {
        resolve_tool["approval_mode"] = value("approve");
    }

    let hooks = table_at(root, "hooks", file)?;
    let groups = hooks
        .entry("PreToolUse")
        .or_insert_with(|| Item::ArrayOfTables(ArrayOfTables::new()))
        .as_array_of_tables_mut()
        .with_context(|| {
            format!(
                "`hooks.PreToolUse` in `{}` is not an array of tables.",
                file.display()
            )
        })?;
    let command = setup.hook_command();
    let ours = groups.iter().position(is_our_group);
    match ours.and_then(|index| groups.get_mut(index)) {
        Some(group) => {
            if group.get("matcher").and_then(Item::as_str) != Some(MATCHER) {
                group["matcher"] = value(MATCHER);
            }
            if let Some(handlers) = group
                .get_mut("hooks")
                .and_then(Item::as_array_of_tables_mut)
            {
                for handler in handlers.iter_mut() {
                    let ours = handler
                        .get("command")
                        .and_then(Item::as_str)
                        .is_some_and(|old| old.contains(HOOK_WORDS));
                    if ours
                        && handler.get("command").and_then(Item::as_str) != Some(command.as_str())
                    {
                        handler["command"] = value(command.clone());
                    }
                }
            }
        }
        None => {
            let mut handler = Table::new();
            handler["type"] = value("command");
            handler["command"] = value(command);
            let mut handlers = ArrayOfTables::new();
            handlers.push(handler);
            let mut group = Table::new();
            group["matcher"] = value(MATCHER);
            group["hooks"] = Item::ArrayOfTables(handlers);
            groups.push(group);
        }
    }
    Ok(document.to_string())
}

/// `text` without what [`add`] put there (nothing else changes); tables left empty by it go.
pub(crate) fn remove(text: &str, file: &Path) -> anyhow::Result<String> {
    let mut document = parse(text, file)?;
    let root = document.as_table_mut();
    if let Some(servers) = root.get_mut("mcp_servers").and_then(Item::as_table_mut) {
        servers.remove(SERVER_NAME);
        if servers.is_empty() {
            root.remove("mcp_servers");
        }
    }
    if let Some(hooks) = root.get_mut("hooks").and_then(Item::as_table_mut) {
        if let Some(groups) = hooks
            .get_mut("PreToolUse")
            .and_then(Item::as_array_of_tables_mut)
        {
            groups.retain(|group| !is_our_group(group));
            if groups.is_empty() {
                hooks.remove("PreToolUse");
            }
        }
        if hooks.is_empty() {
            root.remove("hooks");
        }
    }
    Ok(document.to_string())
}

/// Where our hook sits in a configuration `file` (its trust key) and the hash Codex trusts for
/// it; `None` when the file has no hook of ours.
pub(crate) fn our_hook(text: &str, file: &Path) -> anyhow::Result<Option<(String, String)>> {
    let document = parse(text, file)?;
    let groups = document
        .get("hooks")
        .and_then(|hooks| hooks.get("PreToolUse"))
        .and_then(Item::as_array_of_tables);
    let Some((group_index, group)) = groups.and_then(|groups| {
        groups
            .iter()
            .enumerate()
            .find(|(_, group)| is_our_group(group))
    }) else {
        return Ok(None);
    };
    let matcher = group
        .get("matcher")
        .and_then(Item::as_str)
        .unwrap_or_default();
    let handlers = group.get("hooks").and_then(Item::as_array_of_tables);
    let ours = handlers
        .into_iter()
        .flat_map(|handlers| handlers.iter().enumerate())
        .find_map(|(index, handler)| {
            let command = handler.get("command").and_then(Item::as_str)?;
            command
                .contains(HOOK_WORDS)
                .then(|| (index, command.to_owned()))
        });
    Ok(ours.map(|(handler_index, command)| {
        (
            hook_key(file, group_index, handler_index),
            hook_hash(matcher, &command),
        )
    }))
}

/// A configuration file's text, empty when it does not exist.
fn read_config(file: &Path) -> anyhow::Result<String> {
    Ok(match read_regular_file(file)? {
        Some(bytes) => String::from_utf8(bytes)
            .with_context(|| format!("`{}` is not UTF-8 text.", file.display()))?,
        None => String::new(),
    })
}

/// `resolve setup codex`: merge (or with `--remove` take out) the hook and the server in the
/// file [`config_file`] names, and Codex's trust in that hook in the user's configuration;
/// with `--dry-run`, print the changes as unified diffs instead.
pub(crate) fn run(root: &Path, args: &SetupArgs, output: Output) -> anyhow::Result<Outcome> {
    // Codex names a project's configuration by its real path.
    let root = root
        .canonicalize()
        .with_context(|| format!("Cannot open the root `{}`.", root.display()))?;
    let codex_home = std::env::var_os("CODEX_HOME").map(PathBuf::from);
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let hook_file = config_file(&root, args.user, codex_home.clone(), home.clone())?;
    let user_file = config_file(&root, true, codex_home, home)?;

    let hook_before = read_config(&hook_file)?;
    let hook_after = if args.remove {
        remove(&hook_before, &hook_file)?
    } else {
        let setup = CodexSetup {
            resolve: std::env::current_exe().context("Cannot find the `resolve` executable.")?,
            root: (!args.user).then(|| root.clone()),
            approve: resolve_edit::HookApproval::from(args.approve)
                .as_str()
                .to_owned(),
        };
        add(&hook_before, &setup, &hook_file)?
    };
    let old_hook = our_hook(&hook_before, &hook_file)?;
    let new_hook = our_hook(&hook_after, &hook_file)?;

    // The trust goes in the user's file: the hook's own file when it is that one.
    let same_file = hook_file == user_file;
    let user_before = if same_file {
        hook_after.clone()
    } else {
        read_config(&user_file)?
    };
    let mut user = parse(&user_before, &user_file)?;
    if let Some((old_key, _)) = &old_hook
        && new_hook
            .as_ref()
            .is_none_or(|(new_key, _)| new_key != old_key)
    {
        distrust(&mut user, old_key);
    }
    if let Some((key, hash)) = &new_hook {
        trust(&mut user, key, hash, &user_file)?;
    }
    let project_note = (!args.user && !args.remove && !project_trusted(&user, &root)).then(|| {
        format!(
            "note: Codex reads {} only in a trusted project, and runs its hooks only then; \
trust this folder when Codex asks (or `codex exec --trust`), or Codex applies patches itself.",
            hook_file.display()
        )
    });
    let user_after = user.to_string();

    let changes = if same_file {
        vec![(hook_file, hook_before, user_after)]
    } else {
        vec![
            (hook_file, hook_before, hook_after),
            (user_file, user_before, user_after),
        ]
    };
    for (file, before, after) in changes {
        let shown = file.display().to_string();
        let diff = unified_diff(&shown, &before, &after);
        let changed = before != after;
        // A file that held nothing but what setup added goes with it.
        let emptied = args.remove && changed && after.trim().is_empty();
        let human = if !changed {
            format!("{shown}: nothing to change.")
        } else if args.dry_run {
            diff.clone()
        } else if emptied {
            resolve_edit::remove_file(&file)?;
            format!("{shown}: removed (it held only what setup added).")
        } else {
            if let Some(dir) = file.parent() {
                create_dir_all(dir)?;
            }
            atomic_write(&file, after.as_bytes())?;
            format!("{shown}: updated.")
        };
        output.data(
            &json!({"file": shown, "changed": changed && !args.dry_run, "dryRun": args.dry_run, "diff": diff}),
            &human,
        );
    }
    if let Some(project_note) = project_note {
        note(&project_note);
    }
    Ok(Outcome::Success)
}

/// Whether the user's configuration `user` trusts the project at `root`
/// (`[projects."<root>"] trust_level = "trusted"`).
fn project_trusted(user: &DocumentMut, root: &Path) -> bool {
    user.get("projects")
        .and_then(|projects| projects.get(root.to_string_lossy().as_ref()))
        .and_then(|project| project.get("trust_level"))
        .and_then(Item::as_str)
        == Some("trusted")
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    /// The setup of `/opt/resolve/bin/resolve` for the project `/work/my project` in `approve`
    /// mode.
    fn codex_setup(approve: &str) -> CodexSetup {
        CodexSetup {
            resolve: PathBuf::from("/opt/resolve/bin/resolve"),
            root: Some(PathBuf::from("/work/my project")),
            approve: approve.to_owned(),
        }
    }

    const FILE: &str = "/work/my project/.codex/config.toml";

    const EXISTING: &str = r#"# my settings
model = "gpt-5" # the model

[mcp_servers.notes]
command = "notes-server"

[[hooks.PreToolUse]]
matcher = "^Bash$"
[[hooks.PreToolUse.hooks]]
type = "command"
command = "./guard.sh"
"#;

    #[test]
    fn into_an_empty_file_it_writes_the_server_and_the_hook() {
        let text = add("", &codex_setup("stage"), Path::new(FILE)).unwrap();
        assert_eq!(
            text,
            r#"[mcp_servers.resolve]
command = "/opt/resolve/bin/resolve"
args = ["--root", "/work/my project", "mcp"]

[mcp_servers.resolve.tools.resolve]
approval_mode = "approve"

[[hooks.PreToolUse]]
matcher = "^(Bash|apply_patch)$"

[[hooks.PreToolUse.hooks]]
type = "command"
command = "/opt/resolve/bin/resolve --root '/work/my project' hook codex --approve stage"
"#
        );
    }

    #[test]
    fn it_merges_keeping_comments_and_other_entries_and_is_idempotent() {
        let once = add(EXISTING, &codex_setup("stage"), Path::new(FILE)).unwrap();
        assert!(once.starts_with(EXISTING.lines().next().unwrap()));
        for kept in [
            "model = \"gpt-5\" # the model",
            "command = \"notes-server\"",
            "command = \"./guard.sh\"",
        ] {
            assert!(once.contains(kept), "{kept} kept in:\n{once}");
        }
        let twice = add(&once, &codex_setup("stage"), Path::new(FILE)).unwrap();
        assert_eq!(twice, once);
    }

    #[test]
    fn another_mode_updates_the_hook_in_place() {
        let stage = add(EXISTING, &codex_setup("stage"), Path::new(FILE)).unwrap();
        let review = add(&stage, &codex_setup("review"), Path::new(FILE)).unwrap();
        assert_eq!(review, stage.replace("--approve stage", "--approve review"));
    }

    #[test]
    fn remove_takes_out_exactly_what_add_put_in() {
        let added = add(EXISTING, &codex_setup("auto"), Path::new(FILE)).unwrap();
        assert_eq!(remove(&added, Path::new(FILE)).unwrap(), EXISTING);
        let from_empty = add("", &codex_setup("stage"), Path::new(FILE)).unwrap();
        assert_eq!(remove(&from_empty, Path::new(FILE)).unwrap(), "");
        assert_eq!(remove(EXISTING, Path::new(FILE)).unwrap(), EXISTING);
    }

    #[test]
    fn the_user_configuration_runs_in_the_session_directory() {
        let user = CodexSetup {
            root: None,
            ..codex_setup("stage")
        };
        assert_eq!(
            user.hook_command(),
            "/opt/resolve/bin/resolve hook codex --approve stage"
        );
        assert_eq!(
            config_file(Path::new("/r"), true, None, Some(PathBuf::from("/home/u"))).unwrap(),
            PathBuf::from("/home/u/.codex/config.toml")
        );
        assert_eq!(
            config_file(Path::new("/r"), true, Some(PathBuf::from("/ch")), None).unwrap(),
            PathBuf::from("/ch/config.toml")
        );
        assert_eq!(
            config_file(Path::new("/r"), false, None, None).unwrap(),
            PathBuf::from("/r/.codex/config.toml")
        );
    }

    #[test]
    fn a_project_is_trusted_only_by_its_own_entry() {
        let user: DocumentMut = "[projects.\"/a\"]\ntrust_level = \"trusted\"\n[projects.\"/b\"]\ntrust_level = \"untrusted\"\n"
            .parse()
            .unwrap();
        assert!(project_trusted(&user, Path::new("/a")));
        assert!(!project_trusted(&user, Path::new("/b")));
        assert!(!project_trusted(&user, Path::new("/c")));
    }

    #[test]
    fn a_broken_file_is_refused_not_overwritten() {
        let error = add("model = ", &codex_setup("stage"), Path::new(FILE)).unwrap_err();
        assert!(
            format!("{error:#}").contains("is not valid TOML"),
            "{error:#}"
        );
    }
}
