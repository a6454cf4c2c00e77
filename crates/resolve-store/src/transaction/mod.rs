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
//! | `state:<n>` | the n-th store-state change is done (move the backups of the originals into the blob store, place the history record, remove the pending record) |
//! | `journal-removed` | `journal.json` is gone; the journal's other files (a rolled-back one's backups) are removed next |
//!
//! A trial (for a check) goes through the same steps up to the last `renamed:<n>` and
//! `synced`, then reaches `trial` (its files are in place; the command runs next), and is
//! then rolled back; it never commits.
//!
//! Syncing is batched: one pass makes the backups, the state files and the journal durable
//! before the journal is put in place, and one pass makes every temp file durable before the
//! first rename, each pass syncing its files concurrently; every touched directory is synced
//! once. So the journal and the backups are durable before any target changes, as a crash
//! (also a power loss) requires, at a few sync rounds instead of two per file.
//!
//! [`recover`] rolls an uncommitted journal back from the backups (a file is restored only when
//! it still holds what the transaction wrote; one changed since is left alone and named) or
//! finishes a committed one, then removes the journal. A trial's files are always put back,
//! whatever they hold: what a check's command did to them is not the person's work. Recovery is idempotent, so a crash
//! during recovery is settled by the next one.
//!
//! The journal's format is the journal module's, the crash hook the crash module's, settling
//! either way the settle module's and recovery the recovery module's. A transaction is generic
//! over the record its state change writes: which records exist is the store's business.

mod crash;
mod journal;
mod recovery;
mod settle;

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;

pub(crate) use self::crash::CrashHook;
use self::journal::{
    JOURNAL_VERSION, Journal, JournalEntry, JournalState, backup_name, mode_of, permissions_from,
    staged_name, write_journal,
};
pub(crate) use self::settle::Rollback;
use self::settle::{finish, rollback};
use crate::blobs::Blobs;
use crate::change_set::Content;
use crate::error::StoreError;
use crate::fs;
use crate::hash::content_hash;
use crate::workspace::Workspace;

pub use self::crash::{CRASH_AT_ENV, CRASH_STEPS, GC_CRASH_STEPS};
pub(crate) use self::journal::Purpose;
pub(crate) use self::recovery::recover;

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
pub(crate) enum StateChange<'a, R> {
    /// Write `record` as JSON to `path` (relative to the state directory).
    Write {
        /// Relative to the state directory.
        path: String,
        /// What to write.
        record: &'a R,
    },
    /// Remove `path` (relative to the state directory).
    Remove {
        /// Relative to the state directory.
        path: String,
    },
}

/// A multi-file write plus the store-state change that goes with it; `R` is the record the
/// state change writes.
#[derive(Debug)]
pub(crate) struct Transaction<'a, R> {
    /// Where the files and the state directory are.
    pub(crate) workspace: &'a Workspace,
    /// What it is for.
    pub(crate) purpose: Purpose,
    /// The pending id it applies, discards or undoes.
    pub(crate) action: String,
    /// The files, in order.
    pub(crate) files: Vec<FileWrite<'a>>,
    /// The state changes, in order, made after the files are committed.
    pub(crate) state: Vec<StateChange<'a, R>>,
}

impl<R: Serialize> Transaction<'_, R> {
    /// Run it: on success everything landed; on an error everything was rolled back (or, if
    /// even that failed, the journal is left for the next recovery).
    pub(crate) fn run(self) -> Result<(), StoreError> {
        let mut hook = CrashHook::from_env();
        let mut journal = self.begin(&mut hook)?;
        let blobs = Blobs::of(self.workspace);
        let root = self.workspace.root();
        let landed = write_files(root, &blobs, &journal, &self.files, &mut hook).and_then(|()| {
            journal.committed = true;
            write_journal(self.workspace.layout(), &journal)
        });
        if let Err(error) = landed {
            // When the rollback fails too, the journal stays and the next recovery retries.
            let _rolled_back = rollback(self.workspace, &journal);
            return Err(error);
        }
        hook.point("committed");
        finish(self.workspace, &journal, &mut hook)
    }

    /// Run it as a trial ([`Purpose::Trial`]): put the files in place, call `during` while they
    /// are, then roll every file back to its original, whatever `during` or the files' own
    /// changes did. The journal stays uncommitted throughout, so a process killed at any
    /// point (`during` included) is rolled back by the next recovery.
    pub(crate) fn trial<T>(self, during: impl FnOnce() -> T) -> Result<(T, Rollback), StoreError> {
        let mut hook = CrashHook::from_env();
        let journal = self.begin(&mut hook)?;
        let blobs = Blobs::of(self.workspace);
        let root = self.workspace.root();
        if let Err(error) = write_files(root, &blobs, &journal, &self.files, &mut hook) {
            let _rolled_back = rollback(self.workspace, &journal);
            return Err(error);
        }
        hook.point("trial");
        let value = during();
        let report = rollback(self.workspace, &journal)?;
        Ok((value, report))
    }

    /// Keep the originals as backups and write the journal (the crash points `begin`,
    /// `backup:<n>` and `journal`); no target is touched yet.
    fn begin(&self, hook: &mut CrashHook) -> Result<Journal, StoreError> {
        hook.point("begin");
        let root = self.workspace.root();
        let layout = self.workspace.layout();
        let journal_dir = layout.journal_dir();
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
                    let name = backup_name(index);
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
                    let staged = staged_name(index);
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
        let journal = Journal {
            version: JOURNAL_VERSION,
            purpose: self.purpose,
            action: self.action.clone(),
            committed: false,
            entries,
            created_dirs: missing_dirs(root, &self.files),
            state,
        };
        // Backups (their names too) and state files are durable before the journal that
        // points at them.
        unsynced.push(journal_dir);
        fs::sync_all(&unsynced)?;
        write_journal(layout, &journal)?;
        hook.point("journal");
        Ok(journal)
    }
}

/// Create directories, stage every temp file, sync them all, then rename or remove every
/// target and sync each touched directory once.
fn write_files(
    root: &Path,
    blobs: &Blobs,
    journal: &Journal,
    files: &[FileWrite<'_>],
    hook: &mut CrashHook,
) -> Result<(), StoreError> {
    for dir in &journal.created_dirs {
        fs::create_dir(&root.join(dir))?;
    }
    let mut staged = Vec::with_capacity(files.len());
    for (entry, file) in journal.entries.iter().zip(files) {
        if let Some(content) = file.content {
            let permissions = entry.mode.map(permissions_from);
            let temp = root.join(&entry.temp);
            fs::write_new(&temp, &blobs.read(content)?, permissions.as_ref())?;
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

/// The directories (relative, outermost first) that must be created for new files. Each
/// directory is looked at once, however many files it holds.
fn missing_dirs(root: &Path, files: &[FileWrite<'_>]) -> Vec<String> {
    let mut dirs: Vec<String> = Vec::new();
    let mut existing: BTreeSet<&Path> = BTreeSet::new();
    for file in files.iter().filter(|file| file.content.is_some()) {
        let mut missing = Vec::new();
        let mut dir = Path::new(&file.relative).parent();
        while let Some(current) = dir
            && !current.as_os_str().is_empty()
            && !existing.contains(current)
        {
            if root.join(current).exists() {
                existing.insert(current);
                break;
            }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::temp_workspace;

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
        let (_dir, workspace) = temp_workspace();
        assert_eq!(recover(&workspace).unwrap(), None);
    }

    #[test]
    fn journal_clean_up_removes_only_the_names_a_transaction_writes() {
        let (_dir, workspace) = temp_workspace();
        let journal_dir = workspace.layout().journal_dir();
        std::fs::create_dir_all(&journal_dir).unwrap();
        for name in [
            "backup-0",
            "state-1.json",
            ".resolve-x1.tmp",
            "keep.txt",
            "backup-x",
        ] {
            std::fs::write(journal_dir.join(name), "x").unwrap();
        }
        assert_eq!(recover(&workspace).unwrap(), None);
        assert_eq!(
            fs::list_dir(&journal_dir).unwrap(),
            vec!["backup-x", "keep.txt"]
        );
        // Only foreign names left: nothing to recover, and they stay.
        assert_eq!(recover(&workspace).unwrap(), None);
        assert_eq!(fs::list_dir(&journal_dir).unwrap().len(), 2);
    }

    #[test]
    fn a_failed_write_rolls_every_file_back_and_removes_the_journal() {
        let (dir, workspace) = temp_workspace();
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
            state: Vec::<StateChange<'_, ()>>::new(),
        };
        assert!(matches!(transaction.run(), Err(StoreError::Io { .. })));
        assert_eq!(std::fs::read(dir.path().join("a.txt")).unwrap(), b"a");
        let mut names = fs::list_dir(dir.path()).unwrap();
        names.retain(|name| name != ".resolve");
        assert_eq!(names, vec!["a.txt", "blocker"]);
        assert!(
            fs::list_dir(&workspace.layout().journal_dir())
                .unwrap()
                .is_empty()
        );
    }
}
