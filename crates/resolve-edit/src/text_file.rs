//! Reading workspace files as text: the binary rule (a NUL byte in the first 8 KiB, or not
//! valid UTF-8; it lives in [`FileContent::classify`]) and the byte-order mark, which producers
//! keep but never hand to a parser.

use std::path::Path;

use resolve_store::FileContent;

use crate::error::EditError;

/// The UTF-8 byte-order mark.
pub(crate) const BOM: &str = "\u{feff}";

/// The text of `bytes`, or `None` when they are binary.
pub(crate) fn decode(bytes: Vec<u8>) -> Option<String> {
    FileContent::classify(bytes).into_text()
}

/// Read a whole file, naming it in the error; anything but a regular file (a FIFO, a device)
/// is refused without blocking.
pub(crate) fn read_bytes(path: &Path) -> Result<Vec<u8>, EditError> {
    found(path, resolve_store::read_regular_file(path)?)
}

/// [`read_bytes`] of a file a directory walk listed as a regular file (see
/// [`resolve_store::read_listed_regular_file`]).
pub(crate) fn read_listed_bytes(path: &Path) -> Result<Vec<u8>, EditError> {
    found(path, resolve_store::read_listed_regular_file(path)?)
}

/// [`read_bytes`] into `room`, a buffer kept between reads (see
/// [`resolve_store::read_listed_regular_file_into`]).
pub(crate) fn read_bytes_into<'r>(
    path: &Path,
    room: &'r mut Vec<u8>,
) -> Result<&'r [u8], EditError> {
    found(path, resolve_store::read_regular_file_into(path, room)?)
}

/// [`read_listed_bytes`] into `room`, a buffer kept between reads.
pub(crate) fn read_listed_bytes_into<'r>(
    path: &Path,
    room: &'r mut Vec<u8>,
) -> Result<&'r [u8], EditError> {
    found(
        path,
        resolve_store::read_listed_regular_file_into(path, room)?,
    )
}

/// What was read, or the error that names a file gone.
fn found<T>(path: &Path, read: Option<T>) -> Result<T, EditError> {
    read.ok_or_else(|| EditError::io("read", path, std::io::ErrorKind::NotFound.into()))
}

/// Split a leading byte-order mark off `text`: `(bom, rest)`.
pub(crate) fn split_bom(text: &str) -> (&str, &str) {
    match text.strip_prefix(BOM) {
        Some(rest) => (BOM, rest),
        None => ("", text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_gives_the_text_of_text_only() {
        assert_eq!(decode(b"abc\0def".to_vec()), None);
        assert_eq!(decode(vec![0xc3, 0x28]), None);
        assert_eq!(decode(b"ok".to_vec()).as_deref(), Some("ok"));
    }

    #[test]
    fn the_bom_is_split_off_and_kept() {
        assert_eq!(split_bom("\u{feff}fn a() {}"), (BOM, "fn a() {}"));
        assert_eq!(split_bom("fn a() {}"), ("", "fn a() {}"));
    }
}
