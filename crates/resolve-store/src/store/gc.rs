//! Garbage collection of the blob store: what every record still needs, and removing the rest
//! once it is older than [`BLOB_GRACE`]; resolutions run it themselves at most once per grace
//! period. And history retention ([`Store::gc`], `resolve gc`): history entries past a
//! [`Retention`] are removed, then the blobs only they needed.

use std::collections::HashSet;
use std::time::{Duration, SystemTime};

use serde::Deserialize;

use super::Store;
use super::records::{Outcome, RecordVersion, original_of};
use crate::change_set::{ChangeSet, Content, FileChange};
use crate::error::StoreError;
use crate::fs;
use crate::layout::RecordKind;
use crate::transaction::CrashHook;

/// How long an unneeded blob is kept before an apply, discard or undo removes it: a preview
/// writes its blobs before it is staged, and it is computed without the lock.
pub const BLOB_GRACE: Duration = Duration::from_secs(60 * 60);

/// What a pending or history record keeps in the blob store, read without the rest (its
/// details above all): what collecting garbage needs.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct BlobUse {
    #[serde(rename = "version")]
    _version: RecordVersion,
    id: String,
    seq: u64,
    preview_text: Content,
    #[serde(default)]
    change_set: ChangeSet,
    /// `None` for a pending record.
    #[serde(default)]
    outcome: Option<Outcome>,
    #[serde(default)]
    undone: bool,
    #[serde(default)]
    applied_files: Vec<String>,
    /// When it was resolved (history records only).
    #[serde(default)]
    resolved_at: Option<u64>,
    /// Whether it calls an MCP server's tool (which no undo can revert).
    #[serde(default)]
    mcp: Option<serde_json::Value>,
}

impl BlobUse {
    /// The blobs and packs it needs: its preview text; when pending, its new contents and the
    /// bases of its updates; when an apply that can still be undone, its originals and what it
    /// wrote.
    fn needs(&self, mut need: impl FnMut(&Content)) {
        need(&self.preview_text);
        match (self.outcome, self.undone) {
            (None, _) => {
                for (_, change) in self.change_set.files() {
                    change.new_content().map(&mut need);
                    // The base an update was computed from, which a rebase merges from.
                    if let FileChange::Update { .. } = change
                        && let Some(base) = change.kept_base()
                    {
                        need(&base);
                    }
                }
            }
            (Some(Outcome::Applied), false) => {
                for path in &self.applied_files {
                    if let Some(Some(original)) = original_of(&self.change_set, path) {
                        need(&original);
                    }
                    // What it wrote: undo (through `resolve undo`) and `log --json` read it.
                    if let Some(written) = self
                        .change_set
                        .get(path)
                        .and_then(|change| change.new_content())
                    {
                        need(written);
                    }
                }
            }
            (Some(_), _) => {}
        }
    }
}

/// How often a command runs [`Store::gc`] by itself ([`Store::gc_if_due`]): once a day.
pub const AUTO_GC_PERIOD: Duration = Duration::from_secs(24 * 60 * 60);

/// How much history [`Store::gc`] keeps: every entry younger than `age`, and the newest
/// `entries` whatever their age. By default 30 days and 1,000 entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// Entries resolved within this long ago are kept.
    pub age: Duration,
    /// The newest this many entries are kept.
    pub entries: usize,
}

impl Default for Retention {
    fn default() -> Self {
        Self {
            age: Duration::from_secs(30 * 24 * 60 * 60),
            entries: 1000,
        }
    }
}

/// What a [`Store::gc`] pass removed (or, for a dry run, would remove).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GcReport {
    /// History entries removed.
    pub history_entries: usize,
    /// Their size on disk, in bytes.
    pub history_bytes: u64,
    /// Entries past the retention kept because they can still be undone.
    pub kept_undoable: usize,
    /// Reviewer notes removed: of actions gone, or past the most kept for one origin.
    pub notes: usize,
    /// Snapshots of shell commands whose end never came, removed (see `SNAPSHOT_LIFETIME`).
    pub shell_snapshots: usize,
    /// Reviews in progress of actions no longer pending, removed.
    pub review_drafts: usize,
    /// Blob files removed.
    pub blobs: usize,
    /// Their size, in bytes.
    pub blob_bytes: u64,
    /// Whether nothing was removed (`--dry-run`).
    pub dry_run: bool,
}

/// The id and seq a record read for its blobs carries.
fn blob_use_key(record: &BlobUse) -> (&str, u64) {
    (&record.id, record.seq)
}

impl Store {
    /// Remove the blobs no record needs that are older than `grace`; returns how many files
    /// were removed. Applies, discards and undos do this themselves (with [`BLOB_GRACE`]).
    ///
    /// A record needs its preview text; a pending one, its new contents; an apply that can still
    /// be undone, its originals and what it wrote (undo compares the written files by hash). The
    /// new contents of a discarded or undone action are not kept: its preview text shows what
    /// it changed.
    pub fn collect_garbage(&self, grace: Duration) -> Result<usize, StoreError> {
        let Some(_lock) = self.read_session()? else {
            return Ok(0);
        };
        self.collect_garbage_locked(grace)
    }

    fn collect_garbage_locked(&self, grace: Duration) -> Result<usize, StoreError> {
        let needed = self.needed_blobs(&HashSet::new())?;
        self.blobs().remove_unneeded(&needed, grace)
    }

    /// The blobs every record needs, leaving out the history records in `leaving`.
    fn needed_blobs(&self, leaving: &HashSet<u64>) -> Result<HashSet<String>, StoreError> {
        let mut needed = HashSet::new();
        let mut need = |content: &Content| {
            if let Some(name) = content.blob_name() {
                needed.insert(name.to_owned());
            }
        };
        for kind in RecordKind::ALL {
            self.for_each_record(kind, blob_use_key, |record: BlobUse| {
                let leaves = kind == RecordKind::History && leaving.contains(&record.seq);
                if !leaves {
                    record.needs(&mut need);
                }
            })?;
        }
        // What a shell command will be compared with when it ends (`resolve undo` of it writes
        // these contents back).
        needed.extend(self.snapshot_blobs()?);
        Ok(needed)
    }

    /// Remove the history entries past `retention` (oldest first), then the blobs no record
    /// needs any more; with `dry_run`, only say what that would free. Never removed: a
    /// pending action or what it needs, an entry within the retention, and an apply that can
    /// still be undone (every file it wrote still holds what it wrote), with its originals.
    ///
    /// Crash safe: each history file is removed on its own, and blobs only after the records
    /// that needed them, counted from what is left; a pass cut short leaves blobs a later pass
    /// removes, never a record without its blobs.
    pub fn gc(&self, retention: &Retention, dry_run: bool) -> Result<GcReport, StoreError> {
        let _lock = self.session()?;
        let now = super::records::unix_now();
        let mut history: Vec<BlobUse> = Vec::new();
        self.for_each_record(RecordKind::History, blob_use_key, |record: BlobUse| {
            history.push(record);
        })?;
        // Newest first: the first `entries` are kept whatever their age.
        history.sort_by_key(|record| std::cmp::Reverse(record.seq));
        let cutoff = now.saturating_sub(retention.age.as_secs());
        let mut leaving = HashSet::new();
        let mut kept_undoable = 0;
        for record in history.iter().skip(retention.entries) {
            if record.resolved_at.is_some_and(|at| at > cutoff) {
                continue;
            }
            if self.undoable(record) {
                kept_undoable += 1;
                continue;
            }
            leaving.insert(record.seq);
        }
        let needed = self.needed_blobs(&leaving)?;
        let mut report = GcReport {
            history_entries: leaving.len(),
            history_bytes: 0,
            kept_undoable,
            notes: 0,
            shell_snapshots: 0,
            review_drafts: 0,
            blobs: 0,
            blob_bytes: 0,
            dry_run,
        };
        // Notes first: one whose action goes is told to nobody.
        let mut live: HashSet<u64> = history
            .iter()
            .map(|record| record.seq)
            .filter(|seq| !leaving.contains(seq))
            .collect();
        self.for_each_record(RecordKind::Pending, blob_use_key, |record: BlobUse| {
            live.insert(record.seq);
        })?;
        // The crash tests abort after each step (`GC_CRASH_STEPS`); a dry run has none.
        let mut crash = if dry_run {
            CrashHook::disabled()
        } else {
            CrashHook::from_env()
        };
        report.notes = self.prune_notes_locked(&live, dry_run)?;
        report.shell_snapshots = self.remove_stale_snapshots(dry_run)?;
        report.review_drafts = self.remove_orphan_drafts(dry_run)?;
        crash.point("gc-notes");
        for (n, seq) in leaving.iter().enumerate() {
            let path = self.record_path(RecordKind::History, *seq);
            report.history_bytes += fs::file_size(&path)?;
            if !dry_run {
                fs::remove_file(&path)?;
                crash.point(&format!("gc-history:{}", n + 1));
            }
        }
        let (blobs, blob_bytes) = self.blobs().unneeded(&needed, BLOB_GRACE)?;
        report.blobs = blobs;
        report.blob_bytes = blob_bytes;
        if !dry_run {
            self.blobs().remove_unneeded(&needed, BLOB_GRACE)?;
            crash.point("gc-blobs");
            let _ = self.blobs().mark_collected();
        }
        Ok(report)
    }

    /// [`Store::gc`] with `retention`, when the last automatic pass is more than
    /// [`AUTO_GC_PERIOD`] ago (or there was none): what a command runs as it starts. Nothing
    /// happens, and nothing is created, in a workspace with no history yet, nor while another
    /// process holds the lock (the next command tries again).
    pub fn gc_if_due(&self, retention: &Retention) -> Result<Option<GcReport>, StoreError> {
        if !self.gc_is_due()? {
            return Ok(None);
        }
        let stamp = self.workspace.layout().retained_stamp();
        // Only when nobody holds the lock: a command never waits for this pass.
        let report = match self
            .clone()
            .with_lock_timeout(Duration::ZERO)
            .gc(retention, false)
        {
            Err(StoreError::LockTimeout { .. }) => return Ok(None),
            report => report?,
        };
        fs::write_new(&stamp, b"", None)?;
        Ok(Some(report))
    }

    /// Whether [`Store::gc_if_due`] would run a pass now: there is history, and the last
    /// automatic pass is more than [`AUTO_GC_PERIOD`] ago (or there was none). Two reads of
    /// file times: a caller can ask before it reads what the pass needs.
    pub fn gc_is_due(&self) -> Result<bool, StoreError> {
        let layout = self.workspace.layout();
        if !fs::exists(&layout.records_dir(RecordKind::History))? {
            return Ok(false);
        }
        let recent = fs::modified(&layout.retained_stamp())?.is_some_and(|stamp| {
            SystemTime::now()
                .duration_since(stamp)
                .is_ok_and(|age| age < AUTO_GC_PERIOD)
        });
        Ok(!recent)
    }

    /// Whether `record` is an apply that can still be undone: not undone, no MCP call, and
    /// every file it wrote still holds what it wrote (a file that cannot be read counts as
    /// undoable, so nothing is removed on a doubt).
    fn undoable(&self, record: &BlobUse) -> bool {
        if record.outcome != Some(Outcome::Applied) || record.undone || record.mcp.is_some() {
            return false;
        }
        record.applied_files.iter().all(|path| {
            let written = record
                .change_set
                .get(path)
                .and_then(|change| change.new_content())
                .map(|content| content.hash().into_owned());
            self.hash_target(path)
                .map_or(true, |(_, current)| current == written)
        })
    }

    /// [`Store::collect_garbage`] as a resolution starts, under its lock, at most once per
    /// [`BLOB_GRACE`] (it reads every record): before the resolution loads its own record, so
    /// the two never take memory at once. A failure here is not the resolution's failure: the
    /// blobs stay until the next try.
    pub(super) fn tidy_blobs(&self) {
        let blobs = self.blobs();
        if blobs.collected_within(BLOB_GRACE) {
            return;
        }
        if self.collect_garbage_locked(BLOB_GRACE).is_ok() {
            let _ = blobs.mark_collected();
        }
    }
}
