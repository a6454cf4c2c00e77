//! Reading: a workspace file or a state file read whole, never blocking (a FIFO, a device or
//! a socket is refused, not opened for a read that waits), state files without following
//! links and within a size cap; and the classification of what was read as text or binary.

use std::fs::{self, File, FileType, OpenOptions};
use std::io::{self, Read};
use std::path::Path;

use super::{file_len, is_absent};
use crate::error::StoreError;

/// How many leading bytes are searched for a NUL byte when classifying a file.
pub const BINARY_SNIFF_LEN: usize = 8 * 1024;

/// A file's content, classified as text or binary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileContent {
    /// Valid UTF-8 with no NUL byte in the first [`BINARY_SNIFF_LEN`] bytes.
    Text(String),
    /// Anything else; never rewritten.
    Binary(Vec<u8>),
}

impl FileContent {
    /// Classify `bytes`: binary when a NUL byte is in the first 8 KiB or it is not UTF-8.
    pub fn classify(bytes: Vec<u8>) -> Self {
        if nul_sniffed(&bytes) {
            return Self::Binary(bytes);
        }
        match String::from_utf8(bytes) {
            Ok(text) => Self::Text(text),
            Err(error) => Self::Binary(error.into_bytes()),
        }
    }

    /// The text of `bytes`, or `None` when they classify as binary.
    pub fn into_text(self) -> Option<String> {
        match self {
            Self::Text(text) => Some(text),
            Self::Binary(_) => None,
        }
    }

    /// The raw bytes.
    pub fn as_bytes(&self) -> &[u8] {
        match self {
            Self::Text(text) => text.as_bytes(),
            Self::Binary(bytes) => bytes,
        }
    }
}

/// Whether `bytes` classify as binary (see [`FileContent::classify`]): a NUL byte in the
/// first 8 KiB, or not valid UTF-8.
pub fn is_binary(bytes: &[u8]) -> bool {
    text_of(bytes).is_none()
}

/// `bytes` as text, or `None` when they classify as binary (see [`FileContent::classify`]).
pub fn text_of(bytes: &[u8]) -> Option<&str> {
    if nul_sniffed(bytes) {
        return None;
    }
    std::str::from_utf8(bytes).ok()
}

/// The first half of the binary rule: a NUL byte in the first [`BINARY_SNIFF_LEN`] bytes
/// (`memchr`'s vector search: every searched file is sniffed, and the slice's `contains` goes
/// a word at a time).
fn nul_sniffed(bytes: &[u8]) -> bool {
    memchr::memchr(0, &bytes[..bytes.len().min(BINARY_SNIFF_LEN)]).is_some()
}

/// Read and classify the file at `path`; `Ok(None)` when it does not exist.
pub fn read_content(path: &Path) -> Result<Option<FileContent>, StoreError> {
    Ok(read_bytes(path)?.map(FileContent::classify))
}

/// The bytes of the regular file at `path` (symlinks followed), or `None` when it does not
/// exist. Anything else there (a FIFO, a device, a socket, a directory) is refused with
/// [`StoreError::NotRegularFile`] without blocking: a FIFO is never opened for a read that
/// waits for a writer.
pub(crate) fn read_bytes(path: &Path) -> Result<Option<Vec<u8>>, StoreError> {
    read_opened(path, open_regular_sized(path, Links::Follow, Look::First)?)
}

/// The whole of a file opened by [`open_regular_sized`], or `None` when nothing was there.
fn read_opened(path: &Path, opened: Option<(File, u64)>) -> Result<Option<Vec<u8>>, StoreError> {
    let mut room = Vec::new();
    let filled = read_opened_into(path, opened, &mut room)?;
    Ok(filled.map(|filled| {
        room.truncate(filled);
        room
    }))
}

/// [`read_opened`] into the start of `room` (see [`read_to_end_from`]): how many bytes the
/// file had, or `None` when nothing was there.
fn read_opened_into(
    path: &Path,
    opened: Option<(File, u64)>,
    room: &mut Vec<u8>,
) -> Result<Option<usize>, StoreError> {
    let Some((file, len)) = opened else {
        return Ok(None);
    };
    read_to_end_from(&file, len, room)
        .map(Some)
        .map_err(|source| StoreError::io("read", path, source))
}

/// Read `file`, `len` bytes long when it was opened, to its end into the start of `room`,
/// giving how many bytes it read. `room` only grows (what lies past those bytes is left over
/// from earlier reads), so a run of reads zeroes memory once for the largest file instead of
/// once per file. A regular file's read comes back short of what it asked for only at the end,
/// so the read that brings exactly `len` bytes (it asked for more) ends it without an empty
/// read to confirm; a file that grew meanwhile fills that room and is read on to an empty read,
/// one that shrank ends at one.
fn read_to_end_from(mut file: &File, len: u64, room: &mut Vec<u8>) -> io::Result<usize> {
    let len = usize::try_from(len).map_err(|_| io::Error::from(io::ErrorKind::OutOfMemory))?;
    let asked = len.saturating_add(1);
    if room.len() < asked {
        room.resize(asked, 0);
    }
    let mut filled = 0;
    loop {
        if filled == room.len() {
            room.resize(filled.saturating_mul(2).max(8 * 1024), 0);
        }
        match file.read(&mut room[filled..]) {
            Ok(0) => break,
            Ok(read) => {
                filled += read;
                if filled == len {
                    break;
                }
            }
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    Ok(filled)
}

/// The bytes of the workspace file at `path` (symlinks followed: confinement has checked
/// where they lead), or `None` when it does not exist; anything but a regular file is refused
/// with [`StoreError::NotRegularFile`] without blocking (a FIFO never hangs a read).
pub fn read_regular_file(path: &Path) -> Result<Option<Vec<u8>>, StoreError> {
    read_bytes(path)
}

/// [`read_regular_file`] of a file a directory listing showed as a regular file: what stands
/// at `path` is not looked at again before the open (the listing did that, and a search of a
/// large tree pays a path lookup per file for it), only the opened file is, so one swapped
/// since the listing is still refused, and the open never blocks.
pub fn read_listed_regular_file(path: &Path) -> Result<Option<Vec<u8>>, StoreError> {
    read_opened(
        path,
        open_regular_sized(path, Links::Follow, Look::OpenedOnly)?,
    )
}

/// [`read_listed_regular_file`] into `room`, a buffer kept from one read to the next: the
/// file's bytes are the slice given, and `room` only grows, so a search of many files
/// allocates and zeroes memory for the largest of them, not for each.
pub fn read_listed_regular_file_into<'r>(
    path: &Path,
    room: &'r mut Vec<u8>,
) -> Result<Option<&'r [u8]>, StoreError> {
    read_into(path, Look::OpenedOnly, room)
}

/// [`read_regular_file`] into `room` (see [`read_listed_regular_file_into`]).
pub fn read_regular_file_into<'r>(
    path: &Path,
    room: &'r mut Vec<u8>,
) -> Result<Option<&'r [u8]>, StoreError> {
    read_into(path, Look::First, room)
}

/// The regular file at `path` (symlinks followed, looked at as `look` says) read into `room`.
fn read_into<'r>(
    path: &Path,
    look: Look,
    room: &'r mut Vec<u8>,
) -> Result<Option<&'r [u8]>, StoreError> {
    let opened = open_regular_sized(path, Links::Follow, look)?;
    let filled = read_opened_into(path, opened, room)?;
    Ok(filled.map(|filled| &room[..filled]))
}

/// The workspace file at `path` opened for reading, or `None` when it does not exist; as
/// [`read_regular_file`], anything but a regular file is refused without blocking, for
/// readers that stream instead of reading whole.
pub fn open_regular_file(path: &Path) -> Result<Option<File>, StoreError> {
    open_regular(path, Links::Follow)
}

/// The most a JSON or TOML state file read whole (a journal, a marker, a configuration) may
/// hold; a larger one is corrupt state.
pub const STATE_FILE_MAX_LEN: u64 = 64 * 1024 * 1024;

/// The bytes of the state file at `path`, or `None` when it does not exist. A symlink there
/// is never followed, and it, anything but a regular file (a FIFO, `/dev/zero`'s kind) and a
/// file longer than `max_len` bytes are refused as [`StoreError::CorruptState`] naming
/// `path`, without blocking and without reading past `max_len`.
pub fn read_state_file(path: &Path, max_len: u64) -> Result<Option<Vec<u8>>, StoreError> {
    let Some(file) = open_state_file(path)? else {
        return Ok(None);
    };
    let too_long = || StoreError::CorruptState {
        path: path.to_path_buf(),
        reason: format!("it is longer than the {max_len} bytes a state file may hold"),
    };
    let len = file_len(&file, path)?;
    if len > max_len {
        return Err(too_long());
    }
    // Room for all of it and the byte that finds its end, so that it is read in one go; a
    // huge length is only believed up to the cap on state files, past which the text grows as
    // it is read (a length is no promise that the bytes are there).
    let room = len.min(STATE_FILE_MAX_LEN).saturating_add(1);
    let mut bytes = Vec::with_capacity(usize::try_from(room).unwrap_or(0));
    file.take(max_len.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|source| StoreError::io("read", path, source))?;
    if bytes.len() as u64 > max_len {
        return Err(too_long());
    }
    Ok(Some(bytes))
}

/// The state file at `path` opened for reading, or `None` when it does not exist; a symlink
/// or anything but a regular file there is refused as [`StoreError::CorruptState`] (see
/// [`read_state_file`]).
fn open_state_file(path: &Path) -> Result<Option<File>, StoreError> {
    open_regular(path, Links::Refuse)
}

/// The file at `path` opened for reading, or `None` when it does not exist: a state file (a
/// record, a blob), so as [`open_state_file`].
pub(crate) fn open_existing(path: &Path) -> Result<Option<File>, StoreError> {
    open_state_file(path)
}

/// Whether a read follows a symlink at the path it is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Links {
    /// A workspace file: confinement has checked where its links lead.
    Follow,
    /// A state file: a link there is corrupt state.
    Refuse,
}

/// Whether a read looks at what stands at a path before opening it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Look {
    /// Look first, so a FIFO or a device is never opened, then look at the opened file too.
    First,
    /// A directory listing showed a regular file: look at the opened file only.
    OpenedOnly,
}

/// The regular file at `path` opened for reading without blocking, or `None` when nothing is
/// there. What stands there is looked at first (a FIFO is never opened), and the open file
/// again (so a swap in between is caught too).
fn open_regular(path: &Path, links: Links) -> Result<Option<File>, StoreError> {
    Ok(open_regular_sized(path, links, Look::First)?.map(|(file, _)| file))
}

/// [`open_regular`], with the file's length when it was opened.
fn open_regular_sized(
    path: &Path,
    links: Links,
    look: Look,
) -> Result<Option<(File, u64)>, StoreError> {
    if look == Look::First {
        let looked = match links {
            Links::Follow => fs::metadata(path),
            Links::Refuse => fs::symlink_metadata(path),
        };
        match looked {
            Ok(metadata) => refuse_irregular(path, metadata.file_type(), links)?,
            Err(error) if is_absent(&error) => return Ok(None),
            Err(source) => return Err(StoreError::io("read the metadata of", path, source)),
        }
    }
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(open_flags(links));
    }
    let file = match options.open(path) {
        Ok(file) => file,
        Err(error) if is_absent(&error) => return Ok(None),
        Err(error) if links == Links::Refuse && is_link_loop(&error) => {
            return Err(link_in_state(path));
        }
        Err(source) => return Err(StoreError::io("read", path, source)),
    };
    let metadata = file
        .metadata()
        .map_err(|source| StoreError::io("read the metadata of", path, source))?;
    refuse_irregular(path, metadata.file_type(), links)?;
    Ok(Some((file, metadata.len())))
}

/// `Ok` for a regular file; for anything else, the error a read of it at `path` gives.
pub(super) fn refuse_irregular(
    path: &Path,
    file_type: FileType,
    links: Links,
) -> Result<(), StoreError> {
    if file_type.is_file() {
        return Ok(());
    }
    Err(match links {
        Links::Refuse => state_entry_error(path, file_type),
        // As a read of a directory has always failed (callers take it for a changed file).
        Links::Follow if file_type.is_dir() => {
            StoreError::io("read", path, io::ErrorKind::IsADirectory.into())
        }
        Links::Follow => StoreError::NotRegularFile {
            path: path.to_path_buf(),
            kind: kind_of(file_type),
        },
    })
}

/// The flags every read opens with: never block (a FIFO or a device), and, for state files,
/// never follow a final symlink.
#[cfg(target_os = "linux")]
pub(super) fn open_flags(links: Links) -> i32 {
    use rustix::fs::OFlags;
    let mut flags = OFlags::NONBLOCK;
    if links == Links::Refuse {
        flags |= OFlags::NOFOLLOW;
    }
    i32::try_from(flags.bits()).unwrap_or(0)
}

/// The flags every read opens with; elsewhere than Linux, the checks before and after the
/// open stand alone.
#[cfg(all(unix, not(target_os = "linux")))]
pub(super) fn open_flags(_links: Links) -> i32 {
    0
}

/// Whether `error` is `ELOOP`: what an `O_NOFOLLOW` open of a symlink gives, and a lookup
/// through more links than the kernel follows.
pub(crate) fn is_link_loop(error: &io::Error) -> bool {
    #[cfg(target_os = "linux")]
    {
        error.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error())
    }
    #[cfg(not(target_os = "linux"))]
    {
        // The look before the open refused the link already.
        let _ = error;
        false
    }
}

/// What a file type is, in words (`a FIFO (named pipe)`).
fn kind_of(file_type: FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if file_type.is_socket() {
            return "a socket";
        }
        if file_type.is_char_device() {
            return "a character device";
        }
        if file_type.is_block_device() {
            return "a block device";
        }
    }
    if file_type.is_dir() {
        "a directory"
    } else if file_type.is_symlink() {
        "a symbolic link"
    } else if file_type.is_file() {
        "a regular file"
    } else {
        "of an unknown kind"
    }
}

/// The error for a symlink found in the state directory at `path`.
pub(super) fn link_in_state(path: &Path) -> StoreError {
    StoreError::CorruptState {
        path: path.to_path_buf(),
        reason: "it is a symlink, and resolve's state is never reached through a link: was it committed to the repository? Nothing was touched".to_owned(),
    }
}

/// The error for an entry of the state directory at `path` that is neither a regular file
/// nor a directory.
pub(crate) fn state_entry_error(path: &Path, file_type: FileType) -> StoreError {
    if file_type.is_symlink() {
        return link_in_state(path);
    }
    StoreError::CorruptState {
        path: path.to_path_buf(),
        reason: format!(
            "it is {}, where resolve keeps only regular files and directories; nothing was touched",
            kind_of(file_type)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A FIFO named `fifo` in `dir`.
    fn fifo_in(dir: &Path) -> std::path::PathBuf {
        let fifo = dir.join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.unwrap().success(), "mkfifo {}", fifo.display());
        fifo
    }

    #[test]
    fn a_file_is_read_to_its_end_whatever_length_it_had_when_opened() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.rs");
        let content: Vec<u8> = (0..20_000u32).map(|i| b'a' + (i % 26) as u8).collect();
        std::fs::write(&path, &content).unwrap();
        // The length it was opened with, one that grew since (smaller than now), one that
        // shrank since (larger), and none.
        for opened_len in [20_000, 3, 0, 19_999, 20_001, 1 << 20] {
            let file = File::open(&path).unwrap();
            // What the room held before is left past the bytes read, whatever its length.
            let mut room = vec![b'x'; 30_000];
            let filled = read_to_end_from(&file, opened_len, &mut room).unwrap();
            assert_eq!(room[..filled], content, "opened with length {opened_len}");
        }
        let empty = dir.path().join("empty.rs");
        std::fs::write(&empty, b"").unwrap();
        let mut room = b"left over".to_vec();
        assert_eq!(
            read_regular_file_into(&empty, &mut room).unwrap(),
            Some(&b""[..])
        );
    }

    #[test]
    fn a_read_into_a_buffer_gives_what_a_read_gives() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.rs");
        std::fs::write(&file, b"fn a() {}").unwrap();
        let mut room = b"a longer leftover of the last file read".to_vec();
        let read = read_listed_regular_file_into(&file, &mut room).unwrap();
        assert_eq!(read, Some(&b"fn a() {}"[..]));
        let read = read_regular_file_into(&file, &mut room).unwrap();
        assert_eq!(read, Some(&b"fn a() {}"[..]));
        let mut small = Vec::new();
        let read = read_regular_file_into(&file, &mut small).unwrap();
        assert_eq!(read, Some(&b"fn a() {}"[..]));
        let gone = dir.path().join("gone.rs");
        assert_eq!(
            read_listed_regular_file_into(&gone, &mut room).unwrap(),
            None
        );
        assert_eq!(read_regular_file_into(&gone, &mut room).unwrap(), None);
        let fifo = fifo_in(dir.path());
        let err = read_regular_file_into(&fifo, &mut room).unwrap_err();
        assert!(matches!(err, StoreError::NotRegularFile { .. }), "{err}");
        let err = read_listed_regular_file_into(&fifo, &mut room).unwrap_err();
        assert!(matches!(err, StoreError::NotRegularFile { .. }), "{err}");
    }

    #[test]
    fn text_is_utf8_without_nul_and_everything_else_is_binary() {
        assert_eq!(
            FileContent::classify(b"fn main() {}\r\n".to_vec()),
            FileContent::Text("fn main() {}\r\n".into())
        );
        assert!(matches!(
            FileContent::classify(b"a\0b".to_vec()),
            FileContent::Binary(_)
        ));
        assert!(matches!(
            FileContent::classify(vec![0xff, 0xfe, b'a']),
            FileContent::Binary(_)
        ));
        let mut late_nul = vec![b'a'; BINARY_SNIFF_LEN];
        late_nul.push(0);
        assert!(
            !is_binary(&late_nul),
            "a NUL after 8 KiB is valid UTF-8 text"
        );
        assert!(matches!(
            FileContent::classify(late_nul),
            FileContent::Text(_)
        ));
        assert!(is_binary(b"abc\0def"));
        assert!(is_binary(&[b'a', 0xff, b'b']));
        assert!(!is_binary("héllo\r\n".as_bytes()));
        assert_eq!(FileContent::classify(vec![0xc3, 0x28]).into_text(), None);
    }

    #[test]
    fn read_content_of_a_missing_file_is_none() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read_content(&dir.path().join("missing")).unwrap(), None);
    }

    #[test]
    fn a_state_file_is_read_only_when_it_is_a_regular_file_within_its_cap() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("journal.json");
        std::fs::write(&file, b"{}").unwrap();
        assert_eq!(read_state_file(&file, 2).unwrap().unwrap(), b"{}");
        assert_eq!(
            read_state_file(&dir.path().join("missing"), 2).unwrap(),
            None
        );
        let long = read_state_file(&file, 1).unwrap_err();
        assert!(matches!(long, StoreError::CorruptState { .. }), "{long}");
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        let err = read_state_file(&link, 100).unwrap_err();
        assert!(err.to_string().contains("is a symlink"), "{err}");
        let zero = dir.path().join("zero");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        assert!(read_state_file(&zero, 100).is_err());
        let fifo = fifo_in(dir.path());
        let err = read_state_file(&fifo, 100).unwrap_err();
        assert!(err.to_string().contains("FIFO"), "{err}");
        let err = read_bytes(&fifo).unwrap_err();
        assert!(matches!(err, StoreError::NotRegularFile { .. }), "{err}");
        // A workspace read follows a link (confinement checked where it leads).
        assert_eq!(read_bytes(&link).unwrap().unwrap(), b"{}");
    }

    #[test]
    fn a_listed_file_swapped_for_a_fifo_or_a_directory_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.rs");
        std::fs::write(&file, b"fn a() {}").unwrap();
        assert_eq!(
            read_listed_regular_file(&file).unwrap().unwrap(),
            b"fn a() {}"
        );
        assert_eq!(
            read_listed_regular_file(&dir.path().join("gone.rs")).unwrap(),
            None
        );
        // Listed as a regular file, then replaced by a FIFO with no writer: the open does not
        // wait for one, and what was opened is refused.
        std::fs::remove_file(&file).unwrap();
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&file)
                .status()
                .unwrap()
                .success()
        );
        let err = read_listed_regular_file(&file).unwrap_err();
        assert!(matches!(err, StoreError::NotRegularFile { .. }), "{err}");
        std::fs::remove_file(&file).unwrap();
        std::fs::create_dir(&file).unwrap();
        assert!(read_listed_regular_file(&file).is_err());
    }
}
