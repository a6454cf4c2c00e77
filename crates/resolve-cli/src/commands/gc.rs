//! `resolve gc`: remove history past the retention, reviewer notes nobody will be told, and
//! the stored contents only they needed (`--dry-run`: say what that would free). Deciding what goes, and removing it safely, is
//! `resolve_store`'s ([`Store::gc`]); this reports it.

use std::time::Duration;

use resolve_edit::{GcReport, Retention, Store};
use serde_json::json;

use crate::Outcome;
use crate::args::GcArgs;
use crate::output::Output;

/// Run `resolve gc` on `store`, keeping what `configured` (the `[gc]` table) says unless the
/// arguments say otherwise.
pub(crate) fn run(
    store: &Store,
    args: &GcArgs,
    configured: Retention,
    output: Output,
) -> anyhow::Result<Outcome> {
    let retention = Retention {
        age: args.keep_days.map_or(configured.age, |days| {
            Duration::from_secs(days.saturating_mul(24 * 60 * 60))
        }),
        entries: args.keep_entries.unwrap_or(configured.entries),
    };
    let report = store.gc(&retention, args.dry_run)?;
    let json = json!({
        "dryRun": report.dry_run,
        "historyEntries": report.history_entries,
        "historyBytes": report.history_bytes,
        "keptUndoable": report.kept_undoable,
        "notes": report.notes,
        "shellSnapshots": report.shell_snapshots,
        "reviewDrafts": report.review_drafts,
        "blobs": report.blobs,
        "blobBytes": report.blob_bytes,
        "bytes": report.history_bytes + report.blob_bytes,
    });
    output.data(&json, &summary(&report));
    Ok(Outcome::Success)
}

/// The one-line report: what was (or would be) removed and freed, and what was kept because
/// it can still be undone.
fn summary(report: &GcReport) -> String {
    let verb = if report.dry_run {
        "Would remove"
    } else {
        "Removed"
    };
    let mut line = format!(
        "{verb} {}, {} and {}, freeing {}.",
        count(report.history_entries, "history entry", "history entries"),
        count(report.notes, "reviewer note", "reviewer notes"),
        count(report.blobs, "stored content file", "stored content files"),
        size(report.history_bytes + report.blob_bytes),
    );
    if report.kept_undoable > 0 {
        line.push_str(&format!(
            " Kept {} past the retention that can still be undone.",
            count(report.kept_undoable, "entry", "entries")
        ));
    }
    line
}

fn count(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// `bytes` in B, KiB or MiB.
fn size(bytes: u64) -> String {
    const KIB: u64 = 1024;
    if bytes < KIB {
        format!("{bytes} B")
    } else if bytes < KIB * KIB {
        format!("{:.1} KiB", bytes as f64 / KIB as f64)
    } else {
        format!("{:.1} MiB", bytes as f64 / (KIB * KIB) as f64)
    }
}
