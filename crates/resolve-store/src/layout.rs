//! The `.resolve/` layout: every file and directory name under a workspace's state directory,
//! creating them, and checking the whole tree (no link, no special file anywhere) before
//! anything reads or changes it. No other module spells one of these names.
//!
//! ```text
//! .resolve/
//!   .gitignore          `*`: nothing in here is ever committed
//!   config.toml         the person's settings (commands in it run only once trusted)
//!   lock                the flock target (see the lock module)
//!   counters.json       {"nextSeq": N}: the never-reused id counter
//!   pending/<seq>.json  one pending record per pending action
//!   pending/<seq>.calling  the MCP call in flight for that action, while it is made
//!   history/<seq>.json  one history record per applied or discarded action
//!   notes/<seq>.json    what a person did to that action, until its model is told
//!   blobs/<sha256>      contents the records name: preview texts, kept originals
//!   blobs/pack-<…>      new contents of one preview thread, named by offset and hash
//!   blobs/.collected    its time says when unneeded blobs were last removed
//!   journal/            the transaction in flight: journal.json, backups, staged records
//!   plans/<name>.md     plan files written in plan mode
//!   shell/<call>.json   the tree as a host's shell command found it, until the command ends
//!   reviews/<seq>.json  a review of that pending action in progress: marks, reasons, comments
//! ```

use std::path::{Path, PathBuf};

use crate::error::StoreError;
use crate::fs;

/// Name of the state directory under the root.
pub const STATE_DIR: &str = ".resolve";

/// Name of the configuration file inside the state directory (see the trust module).
pub const CONFIG_FILE: &str = "config.toml";

/// Name of the lock file inside the state directory.
pub const LOCK_FILE: &str = "lock";

/// Directory of the journal and its backups, under the state directory.
pub const JOURNAL_DIR: &str = "journal";

/// Directory of plan files, under the state directory.
pub const PLANS_DIR: &str = "plans";

/// The `.gitignore` that keeps the state directory out of commits, and its content.
const GITIGNORE: (&str, &[u8]) = (".gitignore", b"*\n");

/// The id counter, under the state directory.
const COUNTERS_FILE: &str = "counters.json";

/// The blob directory, under the state directory.
const BLOBS_DIR: &str = "blobs";

/// The file whose time says when unneeded blobs were last removed, in the blob directory.
const COLLECTED_STAMP: &str = ".collected";

/// The stamp of the last history retention pass, in the history directory.
const RETAINED_STAMP: &str = ".retained";

/// The directory of reviewer notes, under the state directory.
const NOTES_DIR: &str = "notes";
/// The directory of snapshots taken before a host's shell commands, under the state directory.
const SHELL_DIR: &str = "shell";
/// The directory of reviews in progress, under the state directory.
const REVIEWS_DIR: &str = "reviews";

/// The journal file inside [`JOURNAL_DIR`].
const JOURNAL_FILE: &str = "journal.json";

/// The two kinds of record, each in a directory of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordKind {
    /// `pending/`: actions waiting for `resolve`.
    Pending,
    /// `history/`: applied and discarded actions.
    History,
}

impl RecordKind {
    /// Both kinds, pending first.
    pub const ALL: [RecordKind; 2] = [Self::Pending, Self::History];

    /// The directory's name under the state directory.
    pub fn dir_name(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::History => "history",
        }
    }

    /// The record of `seq`, relative to the state directory (`pending/7.json`).
    pub fn relative(self, seq: u64) -> String {
        format!("{}/{seq}.json", self.dir_name())
    }
}

/// The seq of a record file name (`42.json`); `None` for anything else (temp files).
pub fn record_seq(name: &str) -> Option<u64> {
    name.strip_suffix(".json")?.parse().ok()
}

/// The reviewer note of the action `seq`, relative to the state directory (`notes/7.json`).
pub fn note_relative(seq: u64) -> String {
    format!("{NOTES_DIR}/{seq}.json")
}

/// The marker of the MCP call in flight for the pending action `seq`, relative to the state
/// directory (`pending/7.calling`).
pub fn call_marker(seq: u64) -> String {
    format!("{}/{seq}.calling", RecordKind::Pending.dir_name())
}

/// Whether `relative` (relative to the state directory) names a file a transaction may place
/// or remove: a bare name in `pending/`, `history/` or `notes/`, nowhere else.
pub fn is_record_path(relative: &str) -> bool {
    let mut parts = relative.split('/');
    let (Some(dir), Some(name), None) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    let known = RecordKind::ALL.iter().any(|kind| kind.dir_name() == dir) || dir == NOTES_DIR;
    known && !name.is_empty() && name != "." && name != ".." && !name.contains('\\')
}

/// The paths of one workspace's state directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateLayout {
    dir: PathBuf,
}

impl StateLayout {
    /// The state directory of the workspace rooted at `root`.
    pub fn under(root: &Path) -> Self {
        Self {
            dir: root.join(STATE_DIR),
        }
    }

    /// `<root>/.resolve`.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `relative` (as [`RecordKind::relative`] and `call_marker` give it) under the state
    /// directory.
    pub fn join(&self, relative: &str) -> PathBuf {
        self.dir.join(relative)
    }

    /// The lock file.
    pub fn lock_file(&self) -> PathBuf {
        self.dir.join(LOCK_FILE)
    }

    /// The id counter.
    pub fn counters_file(&self) -> PathBuf {
        self.dir.join(COUNTERS_FILE)
    }

    /// The directory of the records of `kind`.
    pub fn records_dir(&self, kind: RecordKind) -> PathBuf {
        self.dir.join(kind.dir_name())
    }

    /// The record of `kind` numbered `seq`.
    pub fn record_file(&self, kind: RecordKind, seq: u64) -> PathBuf {
        self.dir.join(kind.relative(seq))
    }

    /// The directory of reviewer notes.
    pub fn notes_dir(&self) -> PathBuf {
        self.dir.join(NOTES_DIR)
    }

    /// The reviewer note of the action `seq`.
    pub fn note_file(&self, seq: u64) -> PathBuf {
        self.dir.join(note_relative(seq))
    }

    /// The blob directory.
    pub fn blobs_dir(&self) -> PathBuf {
        self.dir.join(BLOBS_DIR)
    }

    /// The stamp of the last blob clean-up, in the blob directory.
    pub fn collected_stamp(&self) -> PathBuf {
        self.blobs_dir().join(COLLECTED_STAMP)
    }

    /// The stamp of the last automatic history retention pass, in the history directory.
    pub fn retained_stamp(&self) -> PathBuf {
        self.records_dir(RecordKind::History).join(RETAINED_STAMP)
    }

    /// The journal directory.
    pub fn journal_dir(&self) -> PathBuf {
        self.dir.join(JOURNAL_DIR)
    }

    /// The journal of the transaction in flight.
    pub fn journal_file(&self) -> PathBuf {
        self.journal_dir().join(JOURNAL_FILE)
    }

    /// The directory of plan files.
    pub fn plans_dir(&self) -> PathBuf {
        self.dir.join(PLANS_DIR)
    }

    /// The directory of snapshots taken before shell commands.
    pub fn shell_dir(&self) -> PathBuf {
        self.dir.join(SHELL_DIR)
    }

    /// The snapshot taken before the shell command `call` ran (`shell/<call>.json`).
    pub fn shell_snapshot(&self, call: &str) -> PathBuf {
        self.shell_dir().join(format!("{call}.json"))
    }

    /// The directory of reviews in progress.
    pub fn reviews_dir(&self) -> PathBuf {
        self.dir.join(REVIEWS_DIR)
    }

    /// The review in progress of the pending action `seq` (`reviews/<seq>.json`).
    pub fn review_draft(&self, seq: u64) -> PathBuf {
        self.reviews_dir().join(format!("{seq}.json"))
    }

    /// Whether anything stands at the state directory's path (nothing was ever staged or
    /// locked when not). A symlink or a file there counts, so that [`StateLayout::check`]
    /// refuses it rather than the store taking the state for empty.
    pub fn exists(&self) -> bool {
        !matches!(fs::exists(&self.dir), Ok(false))
    }

    /// Refuse a state directory that cannot be trusted, before anything reads or changes it:
    /// a repository may carry a `.resolve/` into a clone, so the directory itself must not be
    /// a symlink, and everything in it must be a real directory or a regular file (no
    /// symlink, FIFO, device or socket), all the way down. A missing directory is fine.
    /// Nothing is touched either way; the first offender is [`StoreError::CorruptState`]
    /// naming it.
    pub fn check(&self) -> Result<(), StoreError> {
        check_state_tree(&self.dir)
    }

    /// [`StateLayout::check`] the state directory, then create it with its record and note
    /// directories when missing, and write its `.gitignore` when that is not `*`; returns its
    /// path.
    pub fn ensure(&self) -> Result<&Path, StoreError> {
        self.check()?;
        for kind in RecordKind::ALL {
            fs::create_dir_all(&self.records_dir(kind))?;
        }
        fs::create_dir_all(&self.notes_dir())?;
        let (name, content) = GITIGNORE;
        let gitignore = self.dir.join(name);
        // Written back whenever it is not what it should be (missing, changed, or left empty by
        // a crash), so it is not synced: no state rests on it.
        if fs::read_state_file(&gitignore, fs::STATE_FILE_MAX_LEN)?.as_deref() != Some(content) {
            fs::replace_unsynced(&gitignore, content)?;
        }
        Ok(&self.dir)
    }
}

/// Check the state directory `dir` before anything reads or changes it: it must be a real
/// directory (not a symlink), and hold only real directories and regular files, all the way
/// down; no link is followed while looking. A missing `dir` is fine (nothing was staged).
/// The first symlink, FIFO, device or socket found is [`StoreError::CorruptState`] naming it.
fn check_state_tree(dir: &Path) -> Result<(), StoreError> {
    let metadata = match std::fs::symlink_metadata(dir) {
        Ok(metadata) => metadata,
        Err(error) if fs::is_absent(&error) => return Ok(()),
        Err(source) => return Err(StoreError::io("read the metadata of", dir, source)),
    };
    if !metadata.is_dir() {
        return Err(fs::state_entry_error(dir, metadata.file_type()));
    }
    let mut unvisited = vec![dir.to_path_buf()];
    while let Some(current) = unvisited.pop() {
        let entries = match std::fs::read_dir(&current) {
            Ok(entries) => entries,
            // Removed by another process since it was listed.
            Err(error) if fs::is_absent(&error) => continue,
            Err(source) => return Err(StoreError::io("list", &current, source)),
        };
        for entry in entries {
            let entry = entry.map_err(|source| StoreError::io("list", &current, source))?;
            let file_type = match entry.file_type() {
                Ok(file_type) => file_type,
                Err(error) if fs::is_absent(&error) => continue,
                Err(source) => return Err(StoreError::io("list", &current, source)),
            };
            if file_type.is_dir() {
                unvisited.push(entry.path());
            } else if !file_type.is_file() {
                return Err(fs::state_entry_error(&entry.path(), file_type));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_and_markers_are_named_by_seq() {
        assert_eq!(RecordKind::Pending.relative(7), "pending/7.json");
        assert_eq!(RecordKind::History.relative(7), "history/7.json");
        assert_eq!(call_marker(7), "pending/7.calling");
        assert_eq!(note_relative(7), "notes/7.json");
        assert_eq!(record_seq("12.json"), Some(12));
        assert_eq!(record_seq(".resolve-abc.tmp"), None);
        assert_eq!(record_seq("7.calling"), None);
    }

    #[test]
    fn only_bare_names_in_the_record_directories_are_record_paths() {
        for path in [
            "pending/7.json",
            "history/7.json",
            "notes/7.json",
            "pending/7.calling",
        ] {
            assert!(is_record_path(path), "{path}");
        }
        for path in [
            "h/home/user/.bashrc",
            "pending/../../x",
            "pending/a/b",
            "pending/",
            "pending/..",
            "blobs/abc",
            "journal/journal.json",
            "lock",
            "",
        ] {
            assert!(!is_record_path(path), "{path}");
        }
    }

    #[test]
    fn ensure_creates_the_record_directories_and_a_gitignore_once() {
        let dir = tempfile::tempdir().unwrap();
        let layout = StateLayout::under(dir.path());
        assert!(!layout.exists());
        layout.ensure().unwrap();
        assert!(layout.records_dir(RecordKind::Pending).is_dir());
        assert!(layout.records_dir(RecordKind::History).is_dir());
        assert_eq!(
            std::fs::read(layout.dir().join(".gitignore")).unwrap(),
            b"*\n"
        );
    }

    #[test]
    fn ensure_writes_back_a_gitignore_left_empty_or_changed() {
        let dir = tempfile::tempdir().unwrap();
        let layout = StateLayout::under(dir.path());
        layout.ensure().unwrap();
        let gitignore = layout.dir().join(".gitignore");
        for left in [&b""[..], b"!blobs\n"] {
            std::fs::write(&gitignore, left).unwrap();
            layout.ensure().unwrap();
            assert_eq!(std::fs::read(&gitignore).unwrap(), b"*\n");
        }
    }

    #[test]
    fn the_state_tree_check_refuses_the_first_link_or_special_file_anywhere_under_it() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join(".resolve");
        assert!(
            check_state_tree(&state).is_ok(),
            "a missing directory is fine"
        );
        std::fs::create_dir_all(state.join("pending")).unwrap();
        std::fs::write(state.join("pending/1.json"), "{}").unwrap();
        assert!(check_state_tree(&state).is_ok());
        std::os::unix::fs::symlink("/tmp", state.join("pending/deep")).unwrap();
        let err = check_state_tree(&state).unwrap_err();
        assert!(err.to_string().contains("pending/deep"), "{err}");
        std::fs::remove_file(state.join("pending/deep")).unwrap();
        let linked = dir.path().join("linked");
        std::os::unix::fs::symlink(&state, &linked).unwrap();
        let err = check_state_tree(&linked).unwrap_err();
        assert!(err.to_string().contains("symlink"), "{err}");
    }
}
