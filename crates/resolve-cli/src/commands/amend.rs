//! `resolve amend [ID] [PATH]`: replace the previewed new content of one file of a pending
//! action with a person's version, written in `$VISUAL`/`$EDITOR` or read from `--from FILE`;
//! and the hunks of a pending action as `resolve show --json` lists them.

use std::io::Write;
use std::path::Path;
use std::process::Command;

use anyhow::Context;
use resolve_edit::{
    AmendOutcome, PendingRecord, Store, action_hunks, amend, amend_target, previewed_content,
};
use serde_json::{Value, json};

use crate::Outcome;
use crate::args::AmendArgs;
use crate::output::{Output, failure};

/// Run `resolve amend`.
pub(crate) fn run(store: &Store, args: &AmendArgs, output: Output) -> anyhow::Result<Outcome> {
    let (id, path) = match args.targets.as_slice() {
        [] => (None, None),
        [first] if first.starts_with("pending-action:") => (Some(first.clone()), None),
        [first] => (None, Some(first.clone())),
        [id, path, ..] => (Some(id.clone()), Some(path.clone())),
    };
    let record = match id {
        Some(id) => match store.pending_record(&id)? {
            Some(record) => record,
            None => {
                failure(
                    output,
                    &format!("`{id}` is not a pending action. Run `resolve pending` to list them."),
                );
                return Ok(Outcome::Failed);
            }
        },
        None => match store.pending()?.into_iter().next() {
            Some(record) => record,
            None => {
                failure(output, "No pending action to amend.");
                return Ok(Outcome::Failed);
            }
        },
    };
    let path = match amend_target(&record, path.as_deref()) {
        Ok(path) => path,
        Err(error) => {
            failure(output, &error.to_string());
            return Ok(Outcome::Failed);
        }
    };
    let content = match &args.from {
        Some(from) if from.as_os_str() == "-" => std::io::read_to_string(std::io::stdin())
            .context("could not read the new content from standard input")?,
        Some(from) => std::fs::read_to_string(from)
            .with_context(|| format!("could not read `{}`", from.display()))?,
        None => {
            let previewed = previewed_content(store, &record, &path)?;
            match edit_in_editor(&path, &previewed) {
                Ok(content) => content,
                Err(error) => {
                    failure(output, &format!("{error:#}"));
                    return Ok(Outcome::Failed);
                }
            }
        }
    };
    match amend(store, &record.id, &path, content, Some(&record.fingerprint)) {
        Ok(AmendOutcome::Amended(amended)) => {
            let diff = amended
                .amendments
                .last()
                .map_or("", |amendment| amendment.diff.as_str());
            let text = format!(
                "Amended {path} in {} ({}); it is still pending.",
                amended.id, amended.label
            );
            output.data(
                &json!({"text": text, "id": amended.id, "path": path, "diff": diff}),
                &format!("{text}\n\n{}", diff.trim_end()),
            );
            Ok(Outcome::Success)
        }
        Ok(AmendOutcome::Unchanged) => {
            let text = format!("{path} is unchanged; nothing was amended.");
            output.data(&json!({"text": text, "id": record.id, "path": path}), &text);
            Ok(Outcome::Success)
        }
        Err(error) => {
            failure(output, &error.to_string());
            Ok(Outcome::Failed)
        }
    }
}

/// Open `content` (the previewed new content of `path`) in `$VISUAL`, else `$EDITOR`, and
/// return what the person saved. The scratch file is a temporary file named after `path`
/// (so the editor picks its syntax), removed afterwards.
pub(crate) fn edit_in_editor(path: &str, content: &str) -> anyhow::Result<String> {
    let editor = ["VISUAL", "EDITOR"]
        .iter()
        .find_map(|name| std::env::var(name).ok().filter(|value| !value.trim().is_empty()))
        .context(
            "Set $VISUAL or $EDITOR to the editor to use, or give the new content with --from FILE.",
        )?;
    let name = Path::new(path).file_name().map_or_else(
        || "file".to_owned(),
        |name| name.to_string_lossy().into_owned(),
    );
    let mut scratch = tempfile::Builder::new()
        .prefix("resolve-amend-")
        .suffix(&format!("-{name}"))
        .tempfile()
        .context("could not create a temporary file for the editor")?;
    scratch
        .write_all(content.as_bytes())
        .and_then(|()| scratch.flush())
        .context("could not write the temporary file for the editor")?;
    // The editor may carry arguments (`code --wait`), so a shell splits it.
    let status = Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("sh")
        .arg(scratch.path())
        .status()
        .with_context(|| format!("could not start the editor `{editor}`"))?;
    if !status.success() {
        anyhow::bail!("The editor `{editor}` exited with {status}; nothing was amended.");
    }
    std::fs::read_to_string(scratch.path()).context("could not read what the editor saved")
}

/// The files of `record` with their hunks, as `resolve show --json` lists them.
pub(crate) fn hunks_json(store: &Store, record: &PendingRecord) -> anyhow::Result<Value> {
    let hunks = action_hunks(store, record)?;
    Ok(json!(
        hunks
            .files
            .iter()
            .map(|file| {
                let hunks = file.hunks.as_ref().map(|file_hunks| {
                    file_hunks
                        .hunks
                        .iter()
                        .map(|hunk| {
                            let (added, removed) = hunk.counts();
                            json!({
                                "address": format!("{}#{}", file.path, hunk.number),
                                "number": hunk.number,
                                "header": hunk.header,
                                "oldStart": hunk.old_start,
                                "oldLines": hunk.old_lines,
                                "newStart": hunk.new_start,
                                "newLines": hunk.new_lines,
                                "added": added,
                                "removed": removed,
                            })
                        })
                        .collect::<Vec<_>>()
                });
                json!({
                    "path": file.path,
                    "kind": file.kind,
                    "stale": file.hunks.is_none(),
                    "hunks": hunks,
                })
            })
            .collect::<Vec<_>>()
    ))
}
