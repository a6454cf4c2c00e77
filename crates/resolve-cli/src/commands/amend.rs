//! `resolve amend [ID] [PATH]`: replace the previewed new content of one file of a pending
//! action with a person's version, written in `$VISUAL`/`$EDITOR` or read from `--from FILE`,
//! or settle a conflicting file with `--take current|preview`; and the hunks of a pending
//! action as `resolve show --json` lists them.

use anyhow::Context;
use resolve_edit::{
    AmendOutcome, MergeSide, PendingRecord, SettleOutcome, Store, action_hunks, amend,
    amend_target, conflict_draft, has_conflict_markers, previewed_content, settle,
};
use serde_json::{Value, json};

use crate::Outcome;
use crate::args::{AmendArgs, TakeSide};
use crate::output::{Output, failure};
use crate::root::Located;

/// The diff of `record`'s latest amendment (empty when it has none).
fn last_amendment_diff(record: &PendingRecord) -> &str {
    record
        .amendments
        .last()
        .map_or("", |amendment| amendment.diff.as_str())
}

/// Run `resolve amend`.
pub(crate) fn run(
    store: &Store,
    args: &AmendArgs,
    located: &Located,
    output: Output,
) -> anyhow::Result<Outcome> {
    let (id, path) = match args.targets.as_slice() {
        [] => (None, None),
        [first] if first.starts_with("pending-action:") => (Some(first.clone()), None),
        [first] => (None, Some(located.path(first))),
        [id, path, ..] => (Some(id.clone()), Some(located.path(path))),
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
    if let Some(take) = args.take {
        return settle_file(store, &record, path.as_deref(), take, output);
    }
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
            // A file that conflicts since the preview opens as the merge with conflict
            // markers: what is saved is the result.
            let previewed = match conflict_draft(store, &record, &path)? {
                Some(draft) => draft,
                None => previewed_content(store, &record, &path)?,
            };
            match crate::editor::edit_in_editor(&path, &previewed) {
                Ok(content) => content,
                Err(error) => {
                    failure(output, &format!("{error:#}"));
                    return Ok(Outcome::Failed);
                }
            }
        }
    };
    if has_conflict_markers(&content) {
        failure(
            output,
            &format!(
                "{path} still holds conflict markers (`<<<<<<< current`, `>>>>>>> preview`); nothing was amended. Resolve each conflict, or use --take current|preview."
            ),
        );
        return Ok(Outcome::Failed);
    }
    match amend(store, &record.id, &path, content, Some(&record.fingerprint)) {
        Ok(AmendOutcome::Amended(amended)) => {
            let diff = last_amendment_diff(&amended);
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

/// `resolve amend --take SIDE`: settle `path` of `record` onto the file as it is now.
fn settle_file(
    store: &Store,
    record: &PendingRecord,
    path: Option<&str>,
    take: TakeSide,
    output: Output,
) -> anyhow::Result<Outcome> {
    let (side, name) = match take {
        TakeSide::Current => (MergeSide::Current, "current"),
        TakeSide::Preview => (MergeSide::Preview, "preview"),
    };
    match settle(store, &record.id, path, side, Some(&record.fingerprint)) {
        Ok(SettleOutcome::Settled {
            record: amended,
            path,
            hunks,
        }) => {
            let diff = last_amendment_diff(&amended);
            let text = format!(
                "Settled {path} in {} ({}): {hunks} conflicting {} took the {name} side, merged onto the file as it is now; it is still pending and applies as staged.",
                amended.id,
                amended.label,
                if hunks == 1 { "hunk" } else { "hunks" },
            );
            output.data(
                &json!({"text": text, "id": amended.id, "path": path, "take": name, "conflicts": hunks, "diff": diff}),
                &format!("{text}\n\n{}", diff.trim_end()),
            );
            Ok(Outcome::Success)
        }
        Ok(SettleOutcome::Clean { path }) => {
            let text = format!(
                "{path} does not conflict with the file as it is now; nothing was amended (`resolve apply` rebases it)."
            );
            output.data(&json!({"text": text, "id": record.id, "path": path}), &text);
            Ok(Outcome::Success)
        }
        Err(error) => {
            failure(output, &error.to_string());
            Ok(Outcome::Failed)
        }
    }
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
