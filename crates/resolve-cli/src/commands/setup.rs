//! `resolve setup claude-code`: the entries that make Claude Code use resolve, merged into its
//! settings files without touching anything else there — the `PreToolUse` hook (`resolve
//! hook claude-code`) and its `PostToolUse` twin on `Bash` (what a command changed is
//! recorded), the permission for the `resolve` MCP server's tools and (for a
//! project) its enabling in `.claude/settings.json`, and the `resolve mcp` server in
//! `.mcp.json` (`--user`: `~/.claude/settings.json` and `~/.claude.json`).
//!
//! Entries are recognised as resolve's by what they run (a hook command running `hook
//! claude-code`, a server named `resolve` running `mcp`), so running setup again replaces them
//! (idempotent, or a new mode) and `--remove` takes out exactly those.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, anyhow};
use resolve_edit::{atomic_write, change_diff, create_dir_all, read_regular_file, shell_words};
use serde_json::{Map, Value, json};

use crate::Outcome;
use crate::args::{HookApprovalChoice, HostChoice, SetupArgs};
use crate::output::Output;

/// The name the `resolve mcp` server is registered under; Claude Code calls its tools
/// `mcp__resolve__<tool>`.
pub(crate) const SERVER_NAME: &str = "resolve";

/// The tools whose calls the hook sees.
const HOOK_MATCHER: &str = "Edit|Write|MultiEdit|NotebookEdit|Bash";

/// The tools the `PostToolUse` hook answers for: what a shell command changed is recorded.
const POST_HOOK_MATCHER: &str = "Bash";

/// The permission rule allowing every tool of the `resolve` server.
const SERVER_PERMISSION: &str = "mcp__resolve";

/// How long Claude Code lets the hook run, in seconds, when it decides at once; `review`
/// gets its wait on top.
const HOOK_TIMEOUT_SECS: u64 = 120;

/// Make the host use resolve (or stop, with `--remove`), or print the change (`--dry-run`).
pub(crate) fn run(root: &Path, args: &SetupArgs, output: Output) -> anyhow::Result<Outcome> {
    if args.host == HostChoice::Codex {
        return crate::codex::setup::run(root, args, output);
    }
    let (settings_path, servers_path) = if args.user {
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .ok_or_else(|| anyhow!("HOME is not set; --user needs it"))?;
        (
            home.join(".claude").join("settings.json"),
            home.join(".claude.json"),
        )
    } else {
        let root = root
            .canonicalize()
            .with_context(|| format!("the root `{}` does not exist", root.display()))?;
        (
            root.join(".claude").join("settings.json"),
            root.join(".mcp.json"),
        )
    };
    let resolve = std::env::current_exe().context("could not find the resolve executable")?;
    let resolve = resolve.to_string_lossy().into_owned();
    let mut changed = 0;
    for (path, change) in [
        (&settings_path, Change::Settings),
        (&servers_path, Change::Servers),
    ] {
        let before = read_json(path)?;
        let mut after = before.clone().unwrap_or_else(|| json!({}));
        let object = after
            .as_object_mut()
            .ok_or_else(|| anyhow!("`{}` does not hold a JSON object", path.display()))?;
        match change {
            Change::Settings => {
                remove_settings(object);
                if !args.remove {
                    add_settings(object, &resolve, args.approve, !args.user);
                }
            }
            Change::Servers => {
                remove_server(object);
                if !args.remove {
                    add_server(object, &resolve);
                }
            }
        }
        let old_text = before.as_ref().map(pretty).transpose()?;
        let new_text = pretty(&after)?;
        if old_text.as_deref() == Some(new_text.as_str())
            || (old_text.is_none() && object_is_empty(&after))
        {
            continue;
        }
        changed += 1;
        let shown = path.to_string_lossy();
        // A file that held nothing but what setup added goes with it.
        let emptied = args.remove && object_is_empty(&after);
        if args.dry_run {
            let new = (!emptied).then_some(new_text.as_str());
            let diff = change_diff(&shown, old_text.as_deref(), new);
            write!(std::io::stdout(), "{diff}")?;
            continue;
        }
        if emptied {
            resolve_edit::remove_file(path)?;
            writeln!(
                std::io::stdout(),
                "Removed {shown} (it held only what setup added)."
            )?;
            continue;
        }
        if let Some(parent) = path.parent() {
            create_dir_all(parent)?;
        }
        atomic_write(path, new_text.as_bytes())?;
        writeln!(std::io::stdout(), "Updated {shown}.")?;
    }
    if changed == 0 {
        writeln!(
            std::io::stdout(),
            "Nothing to change: Claude Code is {} set up.",
            if args.remove { "not" } else { "already" }
        )?;
    }
    Ok(Outcome::Success)
}

/// Which file a change is for.
#[derive(Debug, Clone, Copy)]
enum Change {
    /// Claude Code's settings: hook, permission, enabling.
    Settings,
    /// The MCP servers.
    Servers,
}

/// The JSON in `path`, `None` when there is no file.
fn read_json(path: &Path) -> anyhow::Result<Option<Value>> {
    let Some(bytes) = read_regular_file(path)? else {
        return Ok(None);
    };
    let value = serde_json::from_slice(&bytes)
        .with_context(|| format!("`{}` is not valid JSON; fix it first", path.display()))?;
    Ok(Some(value))
}

/// `value` as the file holds it: two-space indents and a final newline.
fn pretty(value: &Value) -> anyhow::Result<String> {
    Ok(format!("{}\n", serde_json::to_string_pretty(value)?))
}

fn object_is_empty(value: &Value) -> bool {
    value.as_object().is_some_and(Map::is_empty)
}

/// The hook command for `mode`: this resolve, rooted at the project Claude Code runs in.
fn hook_command(resolve: &str, mode: HookApprovalChoice) -> String {
    let mode = match mode {
        HookApprovalChoice::Stage => "stage",
        HookApprovalChoice::Review => "review",
        HookApprovalChoice::Auto => "auto",
    };
    format!(
        "{} --root \"$CLAUDE_PROJECT_DIR\" hook claude-code --approve {mode}",
        shell_words(&[resolve.to_owned()])
    )
}

/// Whether a hook command is resolve's.
fn is_resolve_hook(hook: &Value) -> bool {
    hook["command"]
        .as_str()
        .is_some_and(|command| command.contains(" hook claude-code"))
}

/// Add the hook, the permission and (for a project) the enabling of the server.
fn add_settings(
    settings: &mut Map<String, Value>,
    resolve: &str,
    mode: HookApprovalChoice,
    project: bool,
) {
    let timeout = match mode {
        HookApprovalChoice::Review => HOOK_TIMEOUT_SECS + 600,
        HookApprovalChoice::Stage | HookApprovalChoice::Auto => HOOK_TIMEOUT_SECS,
    };
    let entry = json!({"matcher": HOOK_MATCHER, "hooks": [
        {"type": "command", "command": hook_command(resolve, mode), "timeout": timeout}
    ]});
    push(settings, &["hooks", "PreToolUse"], entry);
    let post = json!({"matcher": POST_HOOK_MATCHER, "hooks": [
        {"type": "command", "command": hook_command(resolve, mode), "timeout": HOOK_TIMEOUT_SECS}
    ]});
    push(settings, &["hooks", "PostToolUse"], post);
    push_unique(
        settings,
        &["permissions", "allow"],
        json!(SERVER_PERMISSION),
    );
    if project {
        push_unique(settings, &["enabledMcpjsonServers"], json!(SERVER_NAME));
    }
}

/// Take out every entry [`add_settings`] adds, and the containers it leaves empty.
fn remove_settings(settings: &mut Map<String, Value>) {
    for event in ["PreToolUse", "PostToolUse"] {
        retain(settings, &["hooks", event], |entry| {
            let hooks = entry["hooks"]
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default();
            !hooks.iter().any(is_resolve_hook)
        });
    }
    retain(settings, &["permissions", "allow"], |rule| {
        rule != SERVER_PERMISSION
    });
    retain(settings, &["enabledMcpjsonServers"], |name| {
        name != SERVER_NAME
    });
}

/// Add the `resolve mcp` server.
fn add_server(file: &mut Map<String, Value>, resolve: &str) {
    let servers = file.entry("mcpServers").or_insert_with(|| json!({}));
    if let Some(servers) = servers.as_object_mut() {
        servers.insert(
            SERVER_NAME.to_owned(),
            json!({"type": "stdio", "command": resolve, "args": ["mcp"]}),
        );
    }
}

/// Take out the `resolve mcp` server (a server named `resolve` running `mcp`).
fn remove_server(file: &mut Map<String, Value>) {
    let Some(servers) = file.get_mut("mcpServers").and_then(Value::as_object_mut) else {
        return;
    };
    let ours = servers.get(SERVER_NAME).is_some_and(|server| {
        server["args"].as_array().and_then(|args| args.last()) == Some(&json!("mcp"))
    });
    if ours {
        servers.remove(SERVER_NAME);
    }
    if servers.is_empty() {
        file.remove("mcpServers");
    }
}

/// Append `value` to the array at `path`, creating what is missing.
fn push(object: &mut Map<String, Value>, path: &[&str], value: Value) {
    if let Some(array) = array_at(object, path) {
        array.push(value);
    }
}

/// Append `value` to the array at `path` unless it holds it already.
fn push_unique(object: &mut Map<String, Value>, path: &[&str], value: Value) {
    if let Some(array) = array_at(object, path)
        && !array.contains(&value)
    {
        array.push(value);
    }
}

/// The array at `path`, created (with its parents) when missing; `None` when something else
/// stands there (left alone).
fn array_at<'a>(object: &'a mut Map<String, Value>, path: &[&str]) -> Option<&'a mut Vec<Value>> {
    let (last, parents) = path.split_last()?;
    let mut current = object;
    for key in parents {
        current = current
            .entry((*key).to_owned())
            .or_insert_with(|| json!({}))
            .as_object_mut()?;
    }
    current
        .entry((*last).to_owned())
        .or_insert_with(|| json!([]))
        .as_array_mut()
}

/// Keep only the entries of the array at `path` that `keep` accepts; remove the array and
/// then its parents when that leaves them empty.
fn retain(object: &mut Map<String, Value>, path: &[&str], keep: impl Fn(&Value) -> bool) {
    let Some((first, rest)) = path.split_first() else {
        return;
    };
    let emptied = match object.get_mut(*first) {
        Some(Value::Array(array)) if rest.is_empty() => {
            array.retain(|value| keep(value));
            array.is_empty()
        }
        Some(Value::Object(inner)) if !rest.is_empty() => {
            retain(inner, rest, keep);
            inner.is_empty()
        }
        _ => false,
    };
    if emptied {
        object.remove(*first);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_merge_keeps_others_and_removal_takes_out_exactly_what_was_added() {
        let original = json!({
            "model": "opus",
            "permissions": {"allow": ["Bash(ls:*)"]},
            "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "lint"}]}]}
        });
        let mut settings = original.as_object().unwrap().clone();
        add_settings(
            &mut settings,
            "/bin/resolve",
            HookApprovalChoice::Stage,
            true,
        );
        let once = settings.clone();
        remove_settings(&mut settings);
        add_settings(
            &mut settings,
            "/bin/resolve",
            HookApprovalChoice::Stage,
            true,
        );
        assert_eq!(settings, once, "setup twice is setup once");
        assert_eq!(settings["hooks"]["PreToolUse"].as_array().unwrap().len(), 2);
        assert_eq!(
            settings["hooks"]["PreToolUse"][1]["hooks"][0]["command"],
            "/bin/resolve --root \"$CLAUDE_PROJECT_DIR\" hook claude-code --approve stage"
        );
        remove_settings(&mut settings);
        assert_eq!(Value::Object(settings), original);
    }

    #[test]
    fn the_server_is_added_once_and_removed_alone() {
        let original = json!({"mcpServers": {"other": {"command": "x"}}});
        let mut file = original.as_object().unwrap().clone();
        add_server(&mut file, "/bin/resolve");
        add_server(&mut file, "/bin/resolve");
        assert_eq!(file["mcpServers"]["resolve"]["args"], json!(["mcp"]));
        remove_server(&mut file);
        assert_eq!(Value::Object(file), original);
    }
}
