//! `resolve trust`: trust a workspace's `.resolve/config.toml`, as it is now, to run the
//! commands it names (recorded in the per-user directory, outside every workspace); `--list`
//! the trusted files; `--remove` forget one.
//!
//! Reading the file and the records is `resolve_store`'s (its trust module); this prints what
//! the file would run and turns the outcome into an exit status.

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use resolve_edit::{ConfigFile, TrustState, TrustedFiles, read_state_file};
use serde_json::json;

use crate::Outcome;
use crate::args::TrustArgs;
use crate::output::{Output, failure};

/// Run `resolve trust` for the workspace at `root`.
pub(crate) fn run(root: &Path, args: &TrustArgs, output: Output) -> anyhow::Result<Outcome> {
    if args.list {
        return list(output);
    }
    if args.remove {
        return remove(root, args, output);
    }
    let Some(config) = ConfigFile::read(root, args.config.as_deref())? else {
        failure(
            output,
            &format!(
                "There is no configuration to trust: `{}` has no .resolve/config.toml.",
                root.display()
            ),
        );
        return Ok(Outcome::Failed);
    };
    let commands = config.commands();
    let listed = if commands.is_empty() {
        "It names no commands.".to_owned()
    } else {
        let lines: Vec<String> = commands
            .iter()
            .map(|command| {
                format!(
                    "  [{}] {}",
                    command.table,
                    resolve_edit::shell_words(&command.command)
                )
            })
            .collect();
        format!("It runs:\n{}", lines.join("\n"))
    };
    if !config.workspace_config {
        let text = format!(
            "`{}` is not a workspace's .resolve/config.toml: a file you name with --config is yours, and its commands run without trust. Nothing was recorded.\n{listed}",
            config.path.display()
        );
        output.data(
            &json!({"trusted": false, "needed": false, "path": config.path, "sha256": config.sha256, "commands": commands, "text": text}),
            &text,
        );
        return Ok(Outcome::Success);
    }
    let mut records = TrustedFiles::load()?;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs());
    records.trust(&config, now)?;
    let again = match config.state {
        TrustState::Changed => " (it changed since it was last trusted)",
        TrustState::Trusted => " (already trusted as it is)",
        TrustState::Untrusted | TrustState::Chosen => "",
    };
    let text = format!(
        "Trusted `{}`{again}, SHA-256 {}.\n{listed}\nAny change to the file makes it untrusted again. Recorded in `{}`.",
        config.path.display(),
        config.sha256,
        records.file().display()
    );
    output.data(
        &json!({"trusted": true, "needed": true, "path": config.path, "sha256": config.sha256, "commands": commands, "recordedIn": records.file(), "text": text}),
        &text,
    );
    Ok(Outcome::Success)
}

/// `--remove`: forget the file's record.
fn remove(root: &Path, args: &TrustArgs, output: Output) -> anyhow::Result<Outcome> {
    let Some(path) = ConfigFile::path_of(root, args.config.as_deref())? else {
        failure(
            output,
            &format!(
                "There is no configuration to forget: `{}` has no .resolve/config.toml.",
                root.display()
            ),
        );
        return Ok(Outcome::Failed);
    };
    let mut records = TrustedFiles::load()?;
    let removed = records.remove(&path)?;
    let text = if removed {
        format!(
            "Forgot the trust in `{}`: its commands no longer run until it is trusted again.",
            path.display()
        )
    } else {
        format!("`{}` was not trusted; nothing to forget.", path.display())
    };
    output.data(
        &json!({"removed": removed, "path": path, "text": text}),
        &text,
    );
    Ok(Outcome::Success)
}

/// `--list`: every trusted file, as still trusted, changed or missing.
fn list(output: Output) -> anyhow::Result<Outcome> {
    let records = TrustedFiles::load()?;
    let mut entries = Vec::new();
    let mut lines = Vec::new();
    for (path, record) in records.records() {
        let state = match read_state_file(Path::new(path), resolve_edit::CONFIG_MAX_LEN) {
            Ok(Some(bytes)) if resolve_edit::content_hash(&bytes) == record.sha256 => "trusted",
            Ok(Some(_)) => "changed",
            Ok(None) => "missing",
            Err(_) => "unreadable",
        };
        lines.push(format!("{state:<10} {path}"));
        entries.push(json!({"path": path, "sha256": record.sha256, "trustedAt": record.trusted_at, "state": state}));
    }
    let human = if lines.is_empty() {
        "No trusted configurations.".to_owned()
    } else {
        lines.join("\n")
    };
    output.data(
        &json!({"trusted": entries, "recordedIn": records.file()}),
        &human,
    );
    Ok(Outcome::Success)
}
