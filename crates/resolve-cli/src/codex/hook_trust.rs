//! Codex's trust in one hook: Codex 0.171.0 runs a hook from a configuration file only once
//! the user's `config.toml` holds `[hooks.state."<key>"] trusted_hash = "<hash>"` for it (its
//! TUI asks; `codex exec` never does, and without the entry Codex applies patches itself). The
//! person who runs `resolve setup codex` asks for exactly this hook, so setup records the trust
//! Codex would record, for this hook alone; `--remove` takes it out. Pure: no I/O.
//!
//! Both halves were measured against Codex's own `hooks/list` (its app server): the key is
//! `<configuration file>:pre_tool_use:<group index>:<handler index>`, and the hash is
//! `sha256:` and the hex SHA-256 of the compact JSON, keys sorted, of
//! `{"event_name":"pre_tool_use","hooks":[{"async":false,"command":…,"timeout":600,
//! "type":"command"}],"matcher":…}` (the group with only this handler, its default timeout
//! filled in).

use std::path::Path;

use anyhow::Context as _;
use resolve_edit::content_hash;
use serde_json::json;
use toml_edit::{DocumentMut, Item, Table, value};

/// The timeout Codex gives a hook that names none (seconds), part of the hashed identity.
const DEFAULT_TIMEOUT_SEC: u64 = 600;

/// The event label in keys and hashes.
const EVENT: &str = "pre_tool_use";

/// The key of handler `handler` of group `group` of `PreToolUse` in `file`.
pub(crate) fn hook_key(file: &Path, group: usize, handler: usize) -> String {
    format!("{}:{EVENT}:{group}:{handler}", file.display())
}

/// The hash Codex trusts for a `PreToolUse` command hook `command` under `matcher`.
pub(crate) fn hook_hash(matcher: &str, command: &str) -> String {
    // Keys in sorted order (serde_json keeps insertion order here), as Codex hashes them.
    let identity = json!({
        "event_name": EVENT,
        "hooks": [{"async": false, "command": command, "timeout": DEFAULT_TIMEOUT_SEC, "type": "command"}],
        "matcher": matcher,
    });
    format!("sha256:{}", content_hash(identity.to_string().as_bytes()))
}

/// `document` (the configuration `file`) with `key` trusted at `hash` (updated in place
/// when there).
pub(crate) fn trust(
    document: &mut DocumentMut,
    key: &str,
    hash: &str,
    file: &Path,
) -> anyhow::Result<()> {
    let hooks = table_at(document.as_table_mut(), "hooks", file)?;
    let state = table_at(hooks, "state", file)?;
    let entry = state
        .entry(key)
        .or_insert_with(|| Item::Table(Table::new()));
    let entry = entry.as_table_mut().with_context(|| {
        format!(
            "`hooks.state.\"{key}\"` in `{}` is not a table.",
            file.display()
        )
    })?;
    if entry.get("trusted_hash").and_then(Item::as_str) != Some(hash) {
        entry["trusted_hash"] = value(hash);
    }
    Ok(())
}

/// `document` without the trust entry `key`; tables left empty by it go.
pub(crate) fn distrust(document: &mut DocumentMut, key: &str) {
    let root = document.as_table_mut();
    let Some(hooks) = root.get_mut("hooks").and_then(Item::as_table_mut) else {
        return;
    };
    if let Some(state) = hooks.get_mut("state").and_then(Item::as_table_mut) {
        state.remove(key);
        if state.is_empty() {
            hooks.remove("state");
        }
    }
    if hooks.is_empty() {
        root.remove("hooks");
    }
}

/// The table at `key` of `parent` in `file`, created implicit (no header of its own) when
/// absent; anything else there is an error (never overwritten).
pub(crate) fn table_at<'a>(
    parent: &'a mut Table,
    key: &str,
    file: &Path,
) -> anyhow::Result<&'a mut Table> {
    let item = parent.entry(key).or_insert_with(|| {
        let mut table = Table::new();
        table.set_implicit(true);
        Item::Table(table)
    });
    item.as_table_mut()
        .with_context(|| format!("`{key}` in `{}` is not a table.", file.display()))
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn the_hash_is_the_one_codex_computes() {
        // Codex 0.171.0's `hooks/list` reported this `currentHash` for this hook.
        assert_eq!(
            hook_hash(
                "^(Bash|apply_patch)$",
                "/usr/bin/resolve hook codex --approve stage"
            ),
            "sha256:c55bbe113c5d6956fcd72e4a2d42387d55d4d1ea33f4a7748c4e5856b436ab94"
        );
        assert_eq!(
            hook_key(Path::new("/p/.codex/config.toml"), 1, 0),
            "/p/.codex/config.toml:pre_tool_use:1:0"
        );
    }

    #[test]
    fn trust_then_distrust_leaves_the_file_as_it_was() {
        let file = Path::new("/home/u/.codex/config.toml");
        let before = "model = \"gpt-5\"\n";
        let mut document: DocumentMut = before.parse().unwrap();
        trust(
            &mut document,
            "/p/.codex/config.toml:pre_tool_use:0:0",
            "sha256:ab",
            file,
        )
        .unwrap();
        assert_eq!(
            document.to_string(),
            "model = \"gpt-5\"\n\n[hooks.state.\"/p/.codex/config.toml:pre_tool_use:0:0\"]\ntrusted_hash = \"sha256:ab\"\n"
        );
        distrust(&mut document, "/p/.codex/config.toml:pre_tool_use:0:0");
        assert_eq!(document.to_string(), before);
    }
}
