//! File access; the only module of the project that writes, renames or removes files (plan
//! files included), which `clippy.toml` enforces.
//!
//! Every error names the path and what was being done. Single-file writes are atomic (a temp
//! file in the target's directory, written, fsynced, renamed over the target, then the
//! directory fsynced) and keep the existing file's permissions. The transaction module builds
//! its multi-file guarantee from the smaller steps here. Reading is the [`read`] module's: it
//! classifies content as text or binary the way every producer must, and never blocks (a
//! FIFO, device or socket is refused, not opened). State under `.resolve/` may come from a
//! clone, so it is read without following links (`O_NOFOLLOW`) and files are read whole with
//! a size cap (the layout module checks the whole state tree for links and special files
//! before anything touches it).

#![expect(
    clippy::disallowed_methods,
    reason = "the one module that writes, renames and removes files"
)]

use std::fs::{self, File, OpenOptions, Permissions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::Serialize;

use crate::error::StoreError;

mod read;

pub use self::read::{
    BINARY_SNIFF_LEN, FileContent, STATE_FILE_MAX_LEN, is_binary, open_regular_file, read_content,
    read_listed_regular_file, read_listed_regular_file_into, read_regular_file,
    read_regular_file_into, read_state_file, text_of,
};
use self::read::{Links, link_in_state, open_flags, refuse_irregular};
pub(crate) use self::read::{is_link_loop, open_existing, read_bytes, state_entry_error};

/// Atomically replace (or create) `path` with `bytes`, keeping an existing file's permissions.
///
/// A reader sees either the old or the new content, never a mix; after a crash the file holds
/// one of the two.
pub fn atomic_write(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    atomic_write_with(path, |file| file.write_all(bytes))
}

/// [`atomic_write`] of `value` as pretty JSON, serialized straight into the temp file.
pub(crate) fn atomic_write_json<T: Serialize + ?Sized>(
    path: &Path,
    value: &T,
) -> Result<(), StoreError> {
    atomic_write_with(path, |file| {
        let mut writer = BufWriter::with_capacity(64 * 1024, file);
        serde_json::to_writer_pretty(&mut writer, value).map_err(io::Error::from)?;
        writer.flush()
    })
}

/// [`atomic_write`] with the content written by `write`.
fn atomic_write_with(
    path: &Path,
    write: impl FnOnce(&mut File) -> io::Result<()>,
) -> Result<(), StoreError> {
    let temp = written_beside(path, write)?;
    temp.as_file()
        .sync_all()
        .map_err(|source| StoreError::io("sync", temp.path(), source))?;
    persist(temp, path)?;
    sync_dir(&parent_of(path))
}

/// Replace the file at `path` with one holding `bytes` as [`atomic_write`] does (a reader sees
/// the old bytes or the new, never part of them), but sync nothing: for a file that is written
/// again whenever it is found wrong, so a crash that loses or empties it costs nothing.
pub(crate) fn replace_unsynced(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    persist(written_beside(path, |file| file.write_all(bytes))?, path)
}

/// A temporary file beside `path` holding what `write` writes, with `path`'s permissions when
/// it exists (else the defaults of a new file), to be renamed onto `path`.
fn written_beside(
    path: &Path,
    write: impl FnOnce(&mut File) -> io::Result<()>,
) -> Result<tempfile::NamedTempFile, StoreError> {
    let dir = parent_of(path);
    let existing = permissions(path)?;
    let mut builder = tempfile::Builder::new();
    builder.prefix(".resolve-").suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // Subject to the umask, like any newly created file.
        builder.permissions(Permissions::from_mode(0o666));
    }
    let mut temp = builder
        .tempfile_in(&dir)
        .map_err(|source| StoreError::io("create a temporary file in", &dir, source))?;
    write(temp.as_file_mut()).map_err(|source| StoreError::io("write", temp.path(), source))?;
    if let Some(permissions) = existing {
        fs::set_permissions(temp.path(), permissions)
            .map_err(|source| StoreError::io("set permissions of", temp.path(), source))?;
    }
    Ok(temp)
}

/// When `path` was last modified, or `None` when it does not exist.
pub(crate) fn modified(path: &Path) -> Result<Option<std::time::SystemTime>, StoreError> {
    match fs::symlink_metadata(path).and_then(|metadata| metadata.modified()) {
        Ok(time) => Ok(Some(time)),
        Err(error) if is_absent(&error) => Ok(None),
        Err(source) => Err(StoreError::io("read the metadata of", path, source)),
    }
}

/// The permissions of `path` (following symlinks), or `None` when it does not exist.
pub(crate) fn permissions(path: &Path) -> Result<Option<Permissions>, StoreError> {
    match fs::metadata(path) {
        Ok(metadata) => Ok(Some(metadata.permissions())),
        Err(error) if is_absent(&error) => Ok(None),
        Err(source) => Err(StoreError::io("read the metadata of", path, source)),
    }
}

/// Write `bytes` to a fresh file at `path` (replacing a leftover one) and set `permissions`
/// when given. Nothing is synced: the caller syncs the file (see [`sync_all`]) before it
/// renames it anywhere, and then the directory.
pub(crate) fn write_new(
    path: &Path,
    bytes: &[u8],
    permissions: Option<&Permissions>,
) -> Result<(), StoreError> {
    let mut file = create_new(path)?;
    file.write_all(bytes)
        .map_err(|source| StoreError::io("write", path, source))?;
    if let Some(permissions) = permissions {
        file.set_permissions(permissions.clone())
            .map_err(|source| StoreError::io("set permissions of", path, source))?;
    }
    Ok(())
}

/// Serialize `value` as pretty JSON straight into a fresh file at `path` (replacing a leftover
/// one), without building the text in memory. Nothing is synced, as with [`write_new`].
pub(crate) fn write_new_json<T: Serialize + ?Sized>(
    path: &Path,
    value: &T,
) -> Result<(), StoreError> {
    let mut writer = BufWriter::with_capacity(64 * 1024, create_new(path)?);
    serde_json::to_writer_pretty(&mut writer, value)
        .map_err(|error| StoreError::io("write", path, error.into()))?;
    writer
        .flush()
        .map_err(|source| StoreError::io("write", path, source))
}

/// Create the file `path` holding `bytes`, readable and writable by its owner only (mode
/// 0600 on Unix), synced; `false` when it already exists (nothing is written then).
pub(crate) fn write_private_new(path: &Path, bytes: &[u8]) -> Result<bool, StoreError> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = match options.open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => return Ok(false),
        Err(source) => return Err(StoreError::io("create", path, source)),
    };
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(|source| StoreError::io("write", path, source))?;
    Ok(true)
}

/// A fresh file at `path`, replacing a leftover one.
fn create_new(path: &Path) -> Result<File, StoreError> {
    let create = || OpenOptions::new().write(true).create_new(true).open(path);
    replacing(path, create)?.map_err(|source| StoreError::io("create", path, source))
}

/// Run `create`, which makes something new at `path`; what stands there already is removed
/// and `create` runs again (not removed first: an apply's temp files have no leftovers).
fn replacing<T>(
    path: &Path,
    create: impl Fn() -> io::Result<T>,
) -> Result<io::Result<T>, StoreError> {
    match create() {
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {
            remove_file(path)?;
            Ok(create())
        }
        created => Ok(created),
    }
}

/// Make `backup` hold the content of the existing file `original`: a hard link when the file
/// system allows one (no data is copied, and the data is as durable as the original's), else
/// a copy, which the caller must sync. Returns whether it copied.
pub(crate) fn link_or_copy(original: &Path, backup: &Path) -> Result<bool, StoreError> {
    match replacing(backup, || fs::hard_link(original, backup))? {
        Ok(()) => Ok(false),
        Err(_) => {
            fs::copy(original, backup)
                .map_err(|source| StoreError::io("copy", original, source))?;
            Ok(true)
        }
    }
}

/// Copy the file `from` to `to` (replacing what stands there) with its permissions: a clone
/// sharing the data where the file system can clone (`FICLONE`: Btrfs, XFS, bcachefs, …),
/// else a plain copy. Nothing is synced: this is for scratch copies, never for state.
pub fn copy_file(from: &Path, to: &Path) -> Result<(), StoreError> {
    #[cfg(target_os = "linux")]
    {
        let source = File::open(from).map_err(|source| StoreError::io("read", from, source))?;
        let target = create_new(to)?;
        if rustix::fs::ioctl_ficlone(&target, &source).is_ok() {
            let permissions = source
                .metadata()
                .map_err(|source| StoreError::io("read the metadata of", from, source))?
                .permissions();
            return target
                .set_permissions(permissions)
                .map_err(|source| StoreError::io("set permissions of", to, source));
        }
    }
    fs::copy(from, to)
        .map(drop)
        .map_err(|source| StoreError::io("copy", from, source))
}

/// Make `to` a symbolic link with the same target as the link `from` (the target is copied
/// as it is, not followed).
pub fn copy_symlink(from: &Path, to: &Path) -> Result<(), StoreError> {
    let target =
        fs::read_link(from).map_err(|source| StoreError::io("read the link", from, source))?;
    replacing(to, || std::os::unix::fs::symlink(&target, to))?
        .map_err(|source| StoreError::io("create the link", to, source))
}

/// Make `link` a symbolic link to `target` (replacing what stands there); `target` is stored
/// as given, relative or absolute.
pub fn create_symlink(target: &Path, link: &Path) -> Result<(), StoreError> {
    replacing(link, || std::os::unix::fs::symlink(target, link))?
        .map_err(|source| StoreError::io("create the link", link, source))
}

/// A fresh temporary file in `dir`, to be filled and then [`persist`]ed under its final name
/// (it is removed if dropped before).
pub(crate) fn temp_file_in(dir: &Path) -> Result<tempfile::NamedTempFile, StoreError> {
    tempfile::Builder::new()
        .prefix(".resolve-")
        .suffix(".partial")
        .tempfile_in(dir)
        .map_err(|source| StoreError::io("create a temporary file in", dir, source))
}

/// Rename the temporary file `temp` to `path`, replacing it. Nothing is synced.
pub(crate) fn persist(temp: tempfile::NamedTempFile, path: &Path) -> Result<(), StoreError> {
    temp.persist(path)
        .map(drop)
        .map_err(|error| StoreError::io("rename a temporary file onto", path, error.error))
}

/// A new file at `path`, open for reading and appending; it must not exist yet.
pub(crate) fn create_exclusive(path: &Path) -> Result<File, StoreError> {
    OpenOptions::new()
        .read(true)
        .append(true)
        .create_new(true)
        .open(path)
        .map_err(|source| StoreError::io("create", path, source))
}

/// The length of the open file `file` (at `path`).
pub(crate) fn file_len(file: &File, path: &Path) -> Result<u64, StoreError> {
    file.metadata()
        .map(|metadata| metadata.len())
        .map_err(|source| StoreError::io("read the metadata of", path, source))
}

/// Append `bytes` to `file` (at `path`), opened for appending.
pub(crate) fn append(mut file: &File, path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    file.write_all(bytes)
        .map_err(|source| StoreError::io("write", path, source))
}

/// A temporary file in `dir` that has no name (or loses it at once): nothing is left behind
/// when it is closed, whether by drop or by the process dying.
pub(crate) fn scratch_file_in(dir: &Path) -> Result<File, StoreError> {
    tempfile::tempfile_in(dir)
        .map_err(|source| StoreError::io("create a temporary file in", dir, source))
}

/// Fill `buffer` from `file` (at `path`) at `offset`.
#[cfg(unix)]
pub(crate) fn read_at(
    file: &File,
    path: &Path,
    offset: u64,
    buffer: &mut [u8],
) -> Result<(), StoreError> {
    use std::os::unix::fs::FileExt;
    file.read_exact_at(buffer, offset)
        .map_err(|source| StoreError::io("read", path, source))
}

/// Whether something exists at `path`.
pub(crate) fn exists(path: &Path) -> Result<bool, StoreError> {
    match fs::symlink_metadata(path) {
        Ok(_) => Ok(true),
        Err(error) if is_absent(&error) => Ok(false),
        Err(source) => Err(StoreError::io("read the metadata of", path, source)),
    }
}

/// Fsync every file or directory in `paths`, several at a time: concurrent fsyncs share the
/// file system's journal commits, so N files cost about as much as a few. Returns when all
/// are durable; the first error wins.
pub(crate) fn sync_all(paths: &[PathBuf]) -> Result<(), StoreError> {
    const SYNC_THREADS: usize = 8;
    let sync = |path: &PathBuf| {
        File::open(path)
            .and_then(|handle| handle.sync_all())
            .map_err(|source| StoreError::io("sync", path, source))
    };
    if paths.len() <= 1 {
        return paths.iter().try_for_each(sync);
    }
    let next = AtomicUsize::new(0);
    let threads = paths.len().min(SYNC_THREADS);
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    while let Some(path) = paths.get(next.fetch_add(1, Ordering::Relaxed)) {
                        sync(path)?;
                    }
                    Ok(())
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|worker| {
                worker.join().unwrap_or_else(|_| {
                    Err(StoreError::io(
                        "sync",
                        Path::new("."),
                        io::Error::other("a sync thread panicked"),
                    ))
                })
            })
            .collect::<Result<Vec<()>, StoreError>>()
    })?;
    Ok(())
}

/// Rename `from` onto `to`, replacing `to`.
pub(crate) fn rename(from: &Path, to: &Path) -> Result<(), StoreError> {
    fs::rename(from, to)
        .map_err(|source| StoreError::io("rename a temporary file onto", to, source))
}

/// What [`move_file`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Moved {
    /// The file is at its new path now.
    Done,
    /// Nothing was at the old path.
    Absent,
    /// The two paths are on different file systems; nothing was moved.
    OtherFileSystem,
}

/// Rename the file `from` onto `to`, replacing `to`, as one step.
pub(crate) fn move_file(from: &Path, to: &Path) -> Result<Moved, StoreError> {
    match fs::rename(from, to) {
        Ok(()) => Ok(Moved::Done),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(Moved::Absent),
        Err(error) if error.kind() == io::ErrorKind::CrossesDevices => Ok(Moved::OtherFileSystem),
        Err(source) => Err(StoreError::io("move a file onto", to, source)),
    }
}

/// Remove the file at `path`; `Ok(false)` when there was none.
pub fn remove_file(path: &Path) -> Result<bool, StoreError> {
    match fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(error) if is_absent(&error) => Ok(false),
        Err(source) => Err(StoreError::io("remove", path, source)),
    }
}

/// Remove the files at `paths` (see [`remove_file`]); returns how many there were.
pub(crate) fn remove_files<P: AsRef<Path>>(
    paths: impl IntoIterator<Item = P>,
) -> Result<usize, StoreError> {
    let mut removed = 0;
    for path in paths {
        if remove_file(path.as_ref())? {
            removed += 1;
        }
    }
    Ok(removed)
}

/// Create the directory `path` (its parent must exist); fine when it already exists.
pub(crate) fn create_dir(path: &Path) -> Result<(), StoreError> {
    match fs::create_dir(path) {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists && path.is_dir() => Ok(()),
        Err(source) => Err(StoreError::io("create the directory", path, source)),
    }
}

/// Create `path` and its missing parents.
pub fn create_dir_all(path: &Path) -> Result<(), StoreError> {
    fs::create_dir_all(path).map_err(|source| StoreError::io("create the directory", path, source))
}

/// Remove the directory `path` if it exists and is empty; a non-empty one is left alone.
pub(crate) fn remove_empty_dir(path: &Path) -> Result<(), StoreError> {
    match fs::remove_dir(path) {
        Ok(()) => Ok(()),
        Err(error)
            if matches!(
                error.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::DirectoryNotEmpty
            ) =>
        {
            Ok(())
        }
        Err(source) => Err(StoreError::io("remove the directory", path, source)),
    }
}

/// Fsync the directory `dir`, making renames and removals in it durable.
pub(crate) fn sync_dir(dir: &Path) -> Result<(), StoreError> {
    File::open(dir)
        .and_then(|handle| handle.sync_all())
        .map_err(|source| StoreError::io("sync the directory", dir, source))
}

/// The size of the file at `path` in bytes (0 when it is gone).
pub(crate) fn file_size(path: &Path) -> Result<u64, StoreError> {
    match fs::symlink_metadata(path) {
        Ok(metadata) => Ok(metadata.len()),
        Err(error) if is_absent(&error) => Ok(0),
        Err(source) => Err(StoreError::io("read the size of", path, source)),
    }
}

/// The names of the entries of `dir`, sorted; empty when it does not exist.
pub(crate) fn list_dir(dir: &Path) -> Result<Vec<String>, StoreError> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(StoreError::io("list", dir, source)),
    };
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| StoreError::io("list", dir, source))?;
        names.push(entry.file_name().to_string_lossy().into_owned());
    }
    names.sort();
    Ok(names)
}

/// Open (creating it when missing) the file an advisory lock is taken on; a symlink there is
/// never followed (it is corrupt state), nor is anything but a regular file opened.
pub(crate) fn open_lock_file(path: &Path) -> Result<File, StoreError> {
    if let Ok(metadata) = fs::symlink_metadata(path) {
        refuse_irregular(path, metadata.file_type(), Links::Refuse)?;
    }
    let mut options = OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(open_flags(Links::Refuse));
    }
    match options.open(path) {
        Ok(file) => Ok(file),
        Err(error) if is_link_loop(&error) => Err(link_in_state(path)),
        Err(source) => Err(StoreError::io("open the lock file", path, source)),
    }
}

/// Whether `error` says the path does not exist (also when a parent is not a directory).
pub(crate) fn is_absent(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

/// The directory holding `path` (`.` for a bare name).
pub(crate) fn parent_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        Some(_) | None => PathBuf::from("."),
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    /// The permission bits of the file at `path`.
    fn mode_of(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    /// Write `content` to `path` with the permission bits `mode`.
    fn write_with_mode(path: &Path, content: &str, mode: u32) {
        std::fs::write(path, content).unwrap();
        std::fs::set_permissions(path, Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn a_leftover_temp_or_backup_is_replaced_never_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let original = dir.path().join("a.rs");
        std::fs::write(&original, "original").unwrap();
        // A leftover of an interrupted transaction, linked to the original: replacing it
        // must not change the original's bytes.
        let temp = dir.path().join(".a.rs.tmp");
        std::fs::hard_link(&original, &temp).unwrap();
        write_new(&temp, b"new", None).unwrap();
        assert_eq!(std::fs::read_to_string(&temp).unwrap(), "new");
        assert_eq!(std::fs::read_to_string(&original).unwrap(), "original");

        let other = dir.path().join("b.rs");
        std::fs::write(&other, "other").unwrap();
        let backup = dir.path().join("backup-0");
        std::fs::hard_link(&other, &backup).unwrap();
        assert!(!link_or_copy(&original, &backup).unwrap());
        assert_eq!(std::fs::read_to_string(&backup).unwrap(), "original");
        assert_eq!(std::fs::read_to_string(&other).unwrap(), "other");
        // And with nothing left over, each is simply made.
        let fresh = dir.path().join("backup-1");
        assert!(!link_or_copy(&original, &fresh).unwrap());
        assert_eq!(std::fs::read_to_string(&fresh).unwrap(), "original");
    }

    #[test]
    fn atomic_write_replaces_content_and_keeps_permissions() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.sh");
        write_with_mode(&path, "old", 0o751);
        atomic_write(&path, b"new").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        let mode = mode_of(&path);
        assert_eq!(mode, 0o751);
        assert_eq!(list_dir(dir.path()).unwrap(), vec!["run.sh"]);
    }

    #[test]
    fn atomic_write_creates_a_missing_file_with_ordinary_permissions() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new.txt");
        atomic_write(&path, b"x").unwrap();
        let mode = mode_of(&path);
        // 0o666 minus the umask: readable by others, unlike a bare temp file's 0o600.
        assert_ne!(mode & 0o044, 0, "mode {mode:o}");
    }

    #[test]
    fn a_copied_file_has_the_bytes_and_permissions_and_a_copied_link_the_same_target() {
        let dir = tempfile::tempdir().unwrap();
        let from = dir.path().join("run.sh");
        write_with_mode(&from, "#!/bin/sh\n", 0o751);
        let to = dir.path().join("copy.sh");
        std::fs::write(&to, "leftover, longer than the original").unwrap();
        copy_file(&from, &to).unwrap();
        assert_eq!(std::fs::read(&to).unwrap(), b"#!/bin/sh\n");
        let mode = mode_of(&to);
        assert_eq!(mode, 0o751);
        std::os::unix::fs::symlink("run.sh", dir.path().join("link")).unwrap();
        copy_symlink(&dir.path().join("link"), &dir.path().join("link2")).unwrap();
        assert_eq!(
            std::fs::read_link(dir.path().join("link2")).unwrap(),
            Path::new("run.sh")
        );
    }

    #[test]
    fn io_errors_name_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("no/such/dir/file");
        let err = atomic_write(&path, b"x").unwrap_err();
        assert!(err.to_string().contains("no/such/dir"), "{err}");
    }
}
