//! Transactions: a multi-file write (plus the store-state change that goes with it) that lands
//! whole or not at all, also across `kill -9` at any instant; and the recovery that settles an
//! interrupted one.
//!
//! A transaction runs under the store lock and goes through these steps. Each step name is a
//! crash point: when the environment variable [`CRASH_AT_ENV`] holds a step name (`renamed:2`)
//! or the ordinal of a point counted from 1 within the transaction (`7`), the process calls
//! [`std::process::abort`] right after that step. The crash tests use this to reach every
//! instant.
//!
//! | step | done when the point is reached |
//! |---|---|
//! | `begin` | nothing yet |
//! | `backup:<n>` | the n-th original file is kept as `.resolve/journal/backup-<i>`: a hard link (a copy where the file system has none) |
//! | `journal` | the state files (the history record to place) are written, and `.resolve/journal/journal.json` records the intent: targets, backups, temp names, hashes, permissions, directories to create, the state change; the backups, the state files and the journal are durable |
//! | `staged:<n>` | the n-th new content is in its temp file next to its target (permissions set) |
//! | `renamed:<n>` | the n-th target is renamed into place or removed; before the first, every temp file was synced |
//! | `synced` | every touched directory is fsynced |
//! | `committed` | the journal is marked committed |
//! | `state:<n>` | the n-th store-state change is done (keep the originals in the blob store, place the history record, remove the pending record) |
//! | `journal-removed` | `journal.json` is gone; the backups are removed next |
//!
//! Syncing is batched: one pass makes the backups, the state files and the journal durable
//! before the journal is put in place, and one pass makes every temp file durable before the
//! first rename, each pass syncing its files concurrently; every touched directory is synced
//! once. So the journal and the backups are durable before any target changes, as a crash
//! (also a power loss) requires, at a few sync rounds instead of two per file.
//!
//! [`recover`] rolls an uncommitted journal back from the backups (a file is restored only when
//! it still holds what the transaction wrote; one changed since is left alone and named) or
//! finishes a committed one, then removes the journal. Recovery is idempotent, so a crash
//! during recovery is settled by the next one.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::fs::Permissions;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::blobs::Blobs;
use crate::change_set::is_sha256_hex;
use crate::error::quote_list;
use crate::store::HistoryRecord;
use crate::{Content, EditError, Workspace, content_hash, fs};

/// Environment variable naming the crash point at which to abort (tests only).
pub const CRASH_AT_ENV: &str = "RESOLVE_TEST_CRASH_AT";

/// The crash points of a transaction, in order; `<n>` counts from 1.
pub const CRASH_STEPS: &[&str] = &[
    "begin",
    "backup:<n>",
    "journal",
    "staged:<n>",
    "renamed:<n>",
    "synced",
    "committed",
    "state:<n>",
    "journal-removed",
];

/// Directory of the journal and its backups, under the state directory.
pub const JOURNAL_DIR: &str = "journal";

/// The journal file inside [`JOURNAL_DIR`].
const JOURNAL_FILE: &str = "journal.json";

/// Version of the journal format.
const JOURNAL_VERSION: u32 = 1;

/// What a transaction does for the store; decides the words of recovery messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Purpose {
    /// Apply a pending action (it becomes history).
    Apply,
    /// Discard a pending action (it becomes history; no files).
    Discard,
    /// Revert an applied action.
    Undo,
}

impl Purpose {
    fn noun(self) -> &'static str {
        match self {
            Self::Apply => "apply",
            Self::Discard => "discard",
            Self::Undo => "undo",
        }
    }

    fn after_rollback(self) -> &'static str {
        match self {
            Self::Apply | Self::Discard => "it is still pending",
            Self::Undo => "it is still applied",
        }
    }

    fn after_finish(self) -> &'static str {
        match self {
            Self::Apply => "it is applied",
            Self::Discard => "it is discarded",
            Self::Undo => "it is undone",
        }
    }
}

/// One file of a transaction.
#[derive(Debug, Clone)]
pub(crate) struct FileWrite<'a> {
    /// The target, relative to the root (symlinks already resolved).
    pub(crate) relative: String,
    /// The hash of its content now (checked by the caller), or `None` when it does not exist.
    pub(crate) original: Option<Cow<'a, str>>,
    /// Its content afterwards, or `None` to remove it; a stored content is read from the blob
    /// store only when its temp file is written, one file at a time.
    pub(crate) content: Option<&'a Content>,
}

/// A change to a file of the state directory, made once the files are committed.
#[derive(Debug, Clone)]
pub(crate) enum StateChange<'a> {
    /// Write `record` as JSON to `path` (relative to the state directory).
    Write {
        /// Relative to the state directory.
        path: String,
        /// What to write.
        record: &'a HistoryRecord,
    },
    /// Remove `path` (relative to the state directory).
    Remove {
        /// Relative to the state directory.
        path: String,
    },
}

/// A state change as the journal records it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
enum JournalState {
    /// Write `content` as JSON to `path` (relative to the state directory); journals written
    /// before state files were staged carry the content inline.
    Write {
        /// Relative to the state directory.
        path: String,
        /// The JSON to write.
        content: Value,
    },
    /// Move the state file `staged` (in the journal directory, durable before the journal) to
    /// `path` (relative to the state directory).
    Place {
        /// Relative to the state directory.
        path: String,
        /// Its name in the journal directory.
        staged: String,
    },
    /// Remove `path` (relative to the state directory).
    Remove {
        /// Relative to the state directory.
        path: String,
    },
    /// Keep every backup of the journal's entries (the originals, replaced by now) in the blob
    /// store, named by its original hash: an apply keeps originals for undo.
    KeepOriginals,
    /// Keep the one backup `backup` in the blob store as the blob `blob`, its hash (journals
    /// written before the originals were kept in one step).
    Keep {
        /// Its name in the journal directory.
        backup: String,
        /// The SHA-256 of its content.
        blob: String,
    },
}

/// A multi-file write plus the store-state change that goes with it.
#[derive(Debug)]
pub(crate) struct Transaction<'a> {
    /// Where the files and the state directory are.
    pub(crate) workspace: &'a Workspace,
    /// What it is for.
    pub(crate) purpose: Purpose,
    /// The pending id it applies, discards or undoes.
    pub(crate) action: String,
    /// The files, in order.
    pub(crate) files: Vec<FileWrite<'a>>,
    /// The state changes, in order, made after the files are committed.
    pub(crate) state: Vec<StateChange<'a>>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Journal {
    version: u32,
    purpose: Purpose,
    action: String,
    committed: bool,
    entries: Vec<JournalEntry>,
    /// Directories created for new files, relative to the root, outermost first.
    created_dirs: Vec<String>,
    state: Vec<JournalState>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct JournalEntry {
    /// The target, relative to the root.
    path: String,
    /// The temp file next to it, relative to the root.
    temp: String,
    /// The backup's name in the journal directory; `None` when the target was absent.
    backup: Option<String>,
    original_hash: Option<String>,
    /// `None` when the target is removed.
    new_hash: Option<String>,
    /// Unix permission bits of the original.
    mode: Option<u32>,
}

impl Journal {
    /// Refuse a journal naming anything recovery must not touch: it writes, renames and removes
    /// what the journal names, so every file and directory must be confined to the workspace
    /// (outside `.resolve/`), every backup a bare name in the journal directory, and every
    /// state path plain and relative.
    fn check(&self, workspace: &Workspace) -> Result<(), String> {
        let plain = |path: &str| {
            !path.is_empty()
                && Path::new(path)
                    .components()
                    .all(|component| matches!(component, std::path::Component::Normal(_)))
        };
        let confined = |path: &str| {
            if plain(path) && workspace.resolve(path).is_ok() {
                Ok(())
            } else {
                Err(format!(
                    "it names `{path}`, which is not a path inside the workspace"
                ))
            }
        };
        for entry in &self.entries {
            confined(&entry.path)?;
            confined(&entry.temp)?;
            if let Some(backup) = &entry.backup
                && (!plain(backup) || Path::new(backup).components().count() != 1)
            {
                return Err(format!(
                    "it names the backup `{backup}`, which is not a bare name"
                ));
            }
        }
        for dir in &self.created_dirs {
            confined(dir)?;
        }
        for change in &self.state {
            let path = match change {
                JournalState::Write { path, .. }
                | JournalState::Remove { path }
                | JournalState::Place { path, .. } => path,
                JournalState::KeepOriginals => {
                    for entry in &self.entries {
                        if entry.backup.is_some()
                            && !entry.original_hash.as_deref().is_some_and(is_sha256_hex)
                        {
                            return Err(format!(
                                "it keeps the original of `{}` without its SHA-256",
                                entry.path
                            ));
                        }
                    }
                    continue;
                }
                JournalState::Keep { backup, blob } => {
                    if !plain(backup)
                        || Path::new(backup).components().count() != 1
                        || !is_sha256_hex(blob)
                    {
                        return Err(format!(
                            "it keeps the backup `{backup}` as the blob `{blob}`, which is not a bare name and a SHA-256"
                        ));
                    }
                    continue;
                }
            };
            if !plain(path) {
                return Err(format!(
                    "it names the state file `{path}`, which is not plain"
                ));
            }
            if let JournalState::Place { staged, .. } = change
                && (!plain(staged) || Path::new(staged).components().count() != 1)
            {
                return Err(format!(
                    "it names the staged state file `{staged}`, which is not a bare name"
                ));
            }
        }
        Ok(())
    }
}

impl Transaction<'_> {
    /// Run it: on success everything landed; on an error everything was rolled back (or, if
    /// even that failed, the journal is left for the next recovery).
    pub(crate) fn run(self) -> Result<(), EditError> {
        let mut hook = CrashHook::from_env();
        hook.point("begin");
        let root = self.workspace.root();
        let state_dir = self.workspace.state_dir();
        let journal_dir = state_dir.join(JOURNAL_DIR);
        fs::create_dir_all(&journal_dir)?;
        let transaction_id = transaction_id();
        // Files written here that must be durable before the journal is.
        let mut unsynced = Vec::new();
        let mut entries = Vec::with_capacity(self.files.len());
        let mut backups = 0;
        for (index, file) in self.files.iter().enumerate() {
            let target = root.join(&file.relative);
            let backup = match file.original {
                Some(_) => {
                    let name = format!("backup-{index}");
                    let path = journal_dir.join(&name);
                    if fs::link_or_copy(&target, &path)? {
                        unsynced.push(path);
                    }
                    backups += 1;
                    hook.point(&format!("backup:{backups}"));
                    Some(name)
                }
                None => None,
            };
            entries.push(JournalEntry {
                path: file.relative.clone(),
                temp: temp_name(&file.relative, &transaction_id),
                backup,
                original_hash: file.original.as_deref().map(str::to_owned),
                new_hash: file.content.map(|content| content.hash().into_owned()),
                mode: fs::permissions(&target)?.as_ref().map(mode_of),
            });
        }
        let mut state = Vec::with_capacity(self.state.len() + 1);
        if self.purpose == Purpose::Apply && backups > 0 {
            state.push(JournalState::KeepOriginals);
        }
        for (index, change) in self.state.iter().enumerate() {
            state.push(match change {
                StateChange::Write { path, record } => {
                    let staged = format!("state-{index}.json");
                    let staged_path = journal_dir.join(&staged);
                    fs::write_new_json(&staged_path, record)?;
                    unsynced.push(staged_path);
                    JournalState::Place {
                        path: path.clone(),
                        staged,
                    }
                }
                StateChange::Remove { path } => JournalState::Remove { path: path.clone() },
            });
        }
        let mut journal = Journal {
            version: JOURNAL_VERSION,
            purpose: self.purpose,
            action: self.action,
            committed: false,
            entries,
            created_dirs: missing_dirs(root, &self.files),
            state,
        };
        // Backups (their names too) and state files are durable before the journal that
        // points at them.
        unsynced.push(journal_dir.clone());
        fs::sync_all(&unsynced)?;
        write_journal(&journal_dir, &journal)?;
        hook.point("journal");
        let blobs = Blobs::of(self.workspace);
        let landed = write_files(root, &blobs, &journal, &self.files, &mut hook).and_then(|()| {
            journal.committed = true;
            write_journal(&journal_dir, &journal)
        });
        if let Err(error) = landed {
            // When the rollback fails too, the journal stays and the next recovery retries.
            let _rolled_back = rollback(root, &journal_dir, &journal);
            return Err(error);
        }
        hook.point("committed");
        finish(self.workspace, &journal, &mut hook)
    }
}

/// Settle an interrupted transaction of `workspace` (call it under the store lock): roll back
/// an uncommitted one, finish a committed one. Returns what was done, or `None` when there was
/// nothing to do.
pub(crate) fn recover(workspace: &Workspace) -> Result<Option<String>, EditError> {
    let state_dir = workspace.state_dir();
    let journal_dir = state_dir.join(JOURNAL_DIR);
    if fs::list_dir(&journal_dir)?.is_empty() {
        return Ok(None);
    }
    let path = journal_dir.join(JOURNAL_FILE);
    let Some(bytes) = fs::read_bytes(&path)? else {
        // Interrupted before the journal was written (no file touched yet) or after it was
        // removed (everything done): what is left is only backups and temp files.
        remove_journal(&journal_dir, &mut CrashHook::disabled())?;
        return Ok(None);
    };
    let journal: Journal =
        serde_json::from_slice(&bytes).map_err(|error| EditError::CorruptState {
            path: path.clone(),
            reason: error.to_string(),
        })?;
    if journal.version != JOURNAL_VERSION {
        return Err(EditError::CorruptState {
            path,
            reason: format!("unknown journal version {}", journal.version),
        });
    }
    journal
        .check(workspace)
        .map_err(|reason| EditError::CorruptState { path, reason })?;
    let purpose = journal.purpose;
    if journal.committed {
        for entry in &journal.entries {
            fs::remove_file(&workspace.root().join(&entry.temp))?;
        }
        finish(workspace, &journal, &mut CrashHook::disabled())?;
        return Ok(Some(format!(
            "Finished an interrupted {} of `{}`; {}.",
            purpose.noun(),
            journal.action,
            purpose.after_finish()
        )));
    }
    let report = rollback(workspace.root(), &journal_dir, &journal)?;
    let mut message = format!(
        "Rolled back an interrupted {} of `{}` ({} restored); {}.",
        purpose.noun(),
        journal.action,
        count_files(report.restored),
        purpose.after_rollback()
    );
    if !report.left.is_empty() {
        message.push_str(&format!(
            " Left {} as found: changed after the interruption.",
            quote_list(&report.left)
        ));
    }
    Ok(Some(message))
}

/// Create directories, stage every temp file, sync them all, then rename or remove every
/// target and sync each touched directory once.
fn write_files(
    root: &Path,
    blobs: &Blobs,
    journal: &Journal,
    files: &[FileWrite<'_>],
    hook: &mut CrashHook,
) -> Result<(), EditError> {
    for dir in &journal.created_dirs {
        fs::create_dir(&root.join(dir))?;
    }
    let mut staged = Vec::with_capacity(files.len());
    for (entry, file) in journal.entries.iter().zip(files) {
        if let Some(content) = file.content {
            let permissions = entry.mode.map(permissions_from);
            let temp = root.join(&entry.temp);
            fs::write_new(&temp, &content.bytes(blobs)?, permissions.as_ref())?;
            staged.push(temp);
            hook.point(&format!("staged:{}", staged.len()));
        }
    }
    fs::sync_all(&staged)?;
    let mut touched = BTreeSet::new();
    for (index, (entry, file)) in journal.entries.iter().zip(files).enumerate() {
        let target = root.join(&entry.path);
        if file.content.is_some() {
            fs::rename(&root.join(&entry.temp), &target)?;
        } else {
            fs::remove_file(&target)?;
        }
        touched.insert(fs::parent_of(&target));
        hook.point(&format!("renamed:{}", index + 1));
    }
    for dir in &journal.created_dirs {
        touched.insert(fs::parent_of(&root.join(dir)));
    }
    fs::sync_all(&touched.into_iter().collect::<Vec<_>>())?;
    hook.point("synced");
    Ok(())
}

/// Make the state changes of a committed journal, then remove the journal.
/// Originals are kept in the blob store first, and are durable before the history record that
/// names them is placed.
fn finish(workspace: &Workspace, journal: &Journal, hook: &mut CrashHook) -> Result<(), EditError> {
    let state_dir = workspace.state_dir();
    let journal_dir = state_dir.join(JOURNAL_DIR);
    let blobs = Blobs::of(workspace);
    for (index, change) in journal.state.iter().enumerate() {
        match change {
            JournalState::KeepOriginals => keep_backups(
                &blobs,
                &journal_dir,
                journal.entries.iter().filter_map(|entry| {
                    entry.backup.as_deref().zip(entry.original_hash.as_deref())
                }),
            )?,
            JournalState::Keep { backup, blob } => {
                keep_backups(&blobs, &journal_dir, [(backup.as_str(), blob.as_str())])?;
            }
            JournalState::Write { path, content } => {
                fs::atomic_write_json(&state_dir.join(path), content)?;
            }
            JournalState::Place { path, staged } => {
                let path = state_dir.join(path);
                let staged = journal_dir.join(staged);
                // Already placed when a recovery finishes a transaction that got this far.
                if fs::permissions(&staged)?.is_some() {
                    fs::rename(&staged, &path)?;
                }
                fs::sync_dir(&fs::parent_of(&path))?;
            }
            JournalState::Remove { path } => {
                let path = state_dir.join(path);
                fs::remove_file(&path)?;
                fs::sync_dir(&fs::parent_of(&path))?;
            }
        }
        hook.point(&format!("state:{}", index + 1));
    }
    remove_journal(&journal_dir, hook)
}

/// Keep each journal backup (a bare name in `journal_dir`) in `blobs` under its hash, then make
/// them durable: the copies made where the file system cannot link, and the blob directory. A
/// backup already gone was kept by an earlier try that got this far.
fn keep_backups<'a>(
    blobs: &Blobs,
    journal_dir: &Path,
    backups: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Result<(), EditError> {
    let mut unsynced = Vec::new();
    for (backup, blob) in backups {
        let backup = journal_dir.join(backup);
        if fs::exists(&backup)? {
            unsynced.extend(blobs.keep_file(&backup, blob)?);
        }
    }
    unsynced.push(blobs.dir().to_path_buf());
    fs::sync_all(&unsynced)
}

/// What a rollback did.
struct Rollback {
    restored: usize,
    /// Files that hold neither the original nor the transaction's content.
    left: Vec<String>,
}

/// Put every target back as it was, remove created directories and the journal.
fn rollback(root: &Path, journal_dir: &Path, journal: &Journal) -> Result<Rollback, EditError> {
    let mut report = Rollback {
        restored: 0,
        left: Vec::new(),
    };
    let mut touched = BTreeSet::new();
    for entry in &journal.entries {
        let target = root.join(&entry.path);
        let temp = root.join(&entry.temp);
        fs::remove_file(&temp)?;
        let current = fs::read_bytes(&target)?.map(|bytes| content_hash(&bytes));
        if current == entry.original_hash {
            continue;
        }
        if current != entry.new_hash {
            report.left.push(entry.path.clone());
            continue;
        }
        match &entry.backup {
            Some(name) => {
                let backup = journal_dir.join(name);
                let bytes = fs::read_bytes(&backup)?.ok_or_else(|| EditError::CorruptState {
                    path: backup.clone(),
                    reason: "the backup the journal names is missing".to_owned(),
                })?;
                // Restoring a damaged backup would lose the original silently.
                if entry.original_hash.as_deref() != Some(content_hash(&bytes).as_str()) {
                    return Err(EditError::CorruptState {
                        path: backup,
                        reason: format!(
                            "it does not hold the original content of `{}` that the journal records",
                            entry.path
                        ),
                    });
                }
                let permissions = entry.mode.map(permissions_from);
                fs::write_new(&temp, &bytes, permissions.as_ref())?;
                fs::sync_all(std::slice::from_ref(&temp))?;
                fs::rename(&temp, &target)?;
            }
            None => {
                fs::remove_file(&target)?;
            }
        }
        touched.insert(fs::parent_of(&target));
        report.restored += 1;
    }
    for dir in &touched {
        fs::sync_dir(dir)?;
    }
    for dir in journal.created_dirs.iter().rev() {
        fs::remove_empty_dir(&root.join(dir))?;
    }
    remove_journal(journal_dir, &mut CrashHook::disabled())?;
    Ok(report)
}

/// Remove `journal.json` (the end of the transaction), then the backups.
fn remove_journal(journal_dir: &Path, hook: &mut CrashHook) -> Result<(), EditError> {
    fs::remove_file(&journal_dir.join(JOURNAL_FILE))?;
    fs::sync_dir(journal_dir)?;
    hook.point("journal-removed");
    for name in fs::list_dir(journal_dir)? {
        fs::remove_file(&journal_dir.join(name))?;
    }
    Ok(())
}

fn write_journal(journal_dir: &Path, journal: &Journal) -> Result<(), EditError> {
    fs::atomic_write_json(&journal_dir.join(JOURNAL_FILE), journal)
}

/// The directories (relative, outermost first) that must be created for new files.
fn missing_dirs(root: &Path, files: &[FileWrite<'_>]) -> Vec<String> {
    let mut dirs: Vec<String> = Vec::new();
    for file in files.iter().filter(|file| file.content.is_some()) {
        let mut missing = Vec::new();
        let mut dir = Path::new(&file.relative).parent();
        while let Some(current) = dir
            && !current.as_os_str().is_empty()
            && !root.join(current).exists()
        {
            missing.push(current.to_string_lossy().into_owned());
            dir = current.parent();
        }
        for name in missing.into_iter().rev() {
            if !dirs.contains(&name) {
                dirs.push(name);
            }
        }
    }
    dirs
}

/// How much of a target's name its temp file name keeps.
const TEMP_NAME_KEEP: usize = 100;

/// `<dir>/.<name>.resolve-<transaction>.tmp`, next to the target so the rename stays on one
/// file system.
fn temp_name(relative: &str, transaction_id: &str) -> String {
    let path = Path::new(relative);
    let mut name = path
        .file_name()
        .map_or_else(String::new, |name| name.to_string_lossy().into_owned());
    // Keep the temp name under the usual 255-byte limit: a long name is cut, and a hash of the
    // whole name keeps it unique.
    if name.len() > TEMP_NAME_KEEP {
        let mut cut = TEMP_NAME_KEEP;
        while !name.is_char_boundary(cut) {
            cut -= 1;
        }
        name = format!("{}~{}", &name[..cut], &content_hash(name.as_bytes())[..16]);
    }
    let temp = format!(".{name}.resolve-{transaction_id}.tmp");
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => PathBuf::from(parent)
            .join(temp)
            .to_string_lossy()
            .into_owned(),
        Some(_) | None => temp,
    }
}

fn transaction_id() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos());
    format!("{}-{nanos}", std::process::id())
}

fn count_files(count: usize) -> String {
    if count == 1 {
        "1 file".to_owned()
    } else {
        format!("{count} files")
    }
}

#[cfg(unix)]
fn mode_of(permissions: &Permissions) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    permissions.mode()
}

#[cfg(unix)]
fn permissions_from(mode: u32) -> Permissions {
    use std::os::unix::fs::PermissionsExt;
    Permissions::from_mode(mode)
}

/// The fault-injection hook: aborts the process at the point named by [`CRASH_AT_ENV`].
struct CrashHook {
    target: Option<String>,
    reached: usize,
}

impl CrashHook {
    fn from_env() -> Self {
        Self {
            target: std::env::var(CRASH_AT_ENV)
                .ok()
                .filter(|target| !target.is_empty()),
            reached: 0,
        }
    }

    fn disabled() -> Self {
        Self {
            target: None,
            reached: 0,
        }
    }

    fn point(&mut self, step: &str) {
        self.reached += 1;
        if let Some(target) = &self.target
            && (target == step || target.parse::<usize>() == Ok(self.reached))
        {
            std::process::abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_files_sit_next_to_their_target() {
        assert_eq!(temp_name("src/a.rs", "7-1"), "src/.a.rs.resolve-7-1.tmp");
        assert_eq!(temp_name("a.rs", "7-1"), ".a.rs.resolve-7-1.tmp");
    }

    #[test]
    fn missing_dirs_lists_new_directories_outermost_first_once() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        let x = Content::from("x");
        let file = |relative: &str| FileWrite {
            relative: relative.to_owned(),
            original: None,
            content: Some(&x),
        };
        let files = [file("src/a/b/c.rs"), file("src/a/d.rs"), file("top.rs")];
        assert_eq!(missing_dirs(dir.path(), &files), vec!["src/a", "src/a/b"]);
    }

    #[test]
    fn recovery_with_no_journal_has_nothing_to_say() {
        let dir = tempfile::tempdir().unwrap();
        let workspace = Workspace::open(dir.path()).unwrap();
        assert_eq!(recover(&workspace).unwrap(), None);
    }

    #[test]
    fn a_failed_write_rolls_every_file_back_and_removes_the_journal() {
        let dir = tempfile::tempdir().unwrap();
        let workspace = Workspace::open(dir.path()).unwrap();
        std::fs::write(dir.path().join("a.txt"), "a").unwrap();
        // The second target's parent is a file, so creating it fails after `a.txt` is staged.
        std::fs::write(dir.path().join("blocker"), "").unwrap();
        let (upper_a, upper_b) = (Content::from("A"), Content::from("B"));
        let transaction = Transaction {
            workspace: &workspace,
            purpose: Purpose::Apply,
            action: "pending-action:test:1".to_owned(),
            files: vec![
                FileWrite {
                    relative: "a.txt".to_owned(),
                    original: Some(content_hash(b"a").into()),
                    content: Some(&upper_a),
                },
                FileWrite {
                    relative: "blocker/b.txt".to_owned(),
                    original: None,
                    content: Some(&upper_b),
                },
            ],
            state: Vec::new(),
        };
        assert!(matches!(transaction.run(), Err(EditError::Io { .. })));
        assert_eq!(std::fs::read(dir.path().join("a.txt")).unwrap(), b"a");
        let mut names = fs::list_dir(dir.path()).unwrap();
        names.retain(|name| name != ".resolve");
        assert_eq!(names, vec!["a.txt", "blocker"]);
        assert!(
            fs::list_dir(&workspace.state_dir().join(JOURNAL_DIR))
                .unwrap()
                .is_empty()
        );
    }
}
