//! Reading a workspace file line by line without loading it: opening only regular files (a
//! FIFO, socket or device is refused before it can block), the binary rule applied to what is
//! read (a NUL byte in the first 8 KiB; UTF-8 checked incrementally over every byte scanned),
//! the byte-order mark skipped, and each line kept only up to a caller's byte limit while the
//! rest of it is scanned and dropped. Memory stays bounded by the buffer and the kept bytes,
//! whatever the file's size or its longest line.
//!
//! Owned here: the streaming scan. Not owned: what `read` and `grep` make of the lines
//! (`read_tools`), the whole-file binary rule producers apply before rewriting
//! (`resolve_store::FileContent`).

use std::fs::File;
use std::io::{BufRead, BufReader, Chain, Cursor, Read};
use std::path::Path;

use resolve_store::{BINARY_SNIFF_LEN, StoreError};

use crate::error::EditError;

/// The read buffer of one scan.
const BUFFER_LEN: usize = 64 * 1024;

/// The UTF-8 byte-order mark, as bytes.
const BOM_BYTES: &[u8] = b"\xef\xbb\xbf";

/// Why a scan stopped before the end of the file.
#[derive(Debug)]
pub(crate) enum ScanStop {
    /// The file is binary: a NUL byte in its first 8 KiB, or bytes that are not UTF-8.
    Binary,
    /// The caller's budget of scanned-but-not-kept bytes ran out in the middle of a line.
    Budget,
    /// Reading failed.
    Io(std::io::Error),
}

/// One line as the scan saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LineInfo {
    /// Whether bytes of the line were dropped because it was longer than the bytes kept.
    pub cut: bool,
}

/// A regular file read line by line; see the module doc.
pub(crate) struct LineScanner {
    reader: BufReader<Chain<Cursor<Vec<u8>>, File>>,
    utf8: Utf8Check,
    started: bool,
}

impl LineScanner {
    /// Open `target` for a scan: refused when it is not a regular file, and binary at once when
    /// a NUL byte is in its first 8 KiB.
    /// `relative` names the file in errors; `real` is where it is, symlinks followed.
    pub(crate) fn open(relative: &str, real: &Path) -> Result<Self, EditError> {
        let mut file = open_regular(relative, real)?;
        let mut head = Vec::with_capacity(BINARY_SNIFF_LEN);
        (&mut file)
            .take(BINARY_SNIFF_LEN as u64)
            .read_to_end(&mut head)
            .map_err(|source| EditError::io("read", real, source))?;
        if head.contains(&0) {
            return Err(EditError::Binary {
                path: relative.to_owned(),
            });
        }
        Ok(Self {
            reader: BufReader::with_capacity(BUFFER_LEN, Cursor::new(head).chain(file)),
            utf8: Utf8Check::default(),
            started: false,
        })
    }

    /// The next line, its bytes (without the `\n`) kept in `kept` up to `keep` bytes and the
    /// rest scanned and dropped; `Ok(None)` at the end of the file. Every byte scanned and not
    /// kept is taken from `budget`; when it runs out mid-line the scan stops with
    /// [`ScanStop::Budget`].
    pub(crate) fn next_line(
        &mut self,
        keep: usize,
        kept: &mut Vec<u8>,
        budget: &mut u64,
    ) -> Result<Option<LineInfo>, ScanStop> {
        kept.clear();
        let mut seen = false;
        let mut cut = false;
        loop {
            let buffer = self.reader.fill_buf().map_err(ScanStop::Io)?;
            let mut chunk = buffer;
            if chunk.is_empty() {
                if !self.utf8.finish() {
                    return Err(ScanStop::Binary);
                }
                return Ok(seen.then_some(LineInfo { cut }));
            }
            let mut skipped_bom = 0;
            if !self.started {
                // The first chunk holds the whole sniffed head, so a BOM is never split.
                self.started = true;
                if chunk.starts_with(BOM_BYTES) {
                    chunk = &chunk[BOM_BYTES.len()..];
                    skipped_bom = BOM_BYTES.len();
                }
            }
            let (line, ended) = match memchr::memchr(b'\n', chunk) {
                Some(end) => (&chunk[..end], true),
                None => (chunk, false),
            };
            seen = seen || !line.is_empty() || ended;
            let room = keep.saturating_sub(kept.len()).min(line.len());
            kept.extend_from_slice(&line[..room]);
            let dropped = (line.len() - room) as u64;
            cut = cut || dropped > 0;
            let used = if dropped > *budget {
                // Scan only what the budget allows, then stop.
                line.len() - dropped as usize + *budget as usize
            } else {
                line.len() + usize::from(ended)
            };
            if !self.utf8.feed(&chunk[..used]) {
                return Err(ScanStop::Binary);
            }
            self.reader.consume(skipped_bom + used);
            if dropped > *budget {
                *budget = 0;
                return Err(ScanStop::Budget);
            }
            *budget -= dropped;
            if ended {
                return Ok(Some(LineInfo { cut }));
            }
        }
    }
}

/// Open `real` (the file `relative` names, symlinks followed) for reading through the store's
/// one regular-file opener (checked before the open and on the opened file, opened
/// non-blocking, so a FIFO cannot block the read); errors name `relative`.
fn open_regular(relative: &str, real: &Path) -> Result<File, EditError> {
    match resolve_store::open_regular_file(real) {
        Ok(Some(file)) => Ok(file),
        Ok(None) => Err(EditError::NotFound {
            path: relative.to_owned(),
        }),
        Err(StoreError::NotRegularFile { .. }) => Err(EditError::NotRegularFile {
            path: relative.to_owned(),
        }),
        Err(error) => Err(error.into()),
    }
}

/// An incremental UTF-8 check over bytes that arrive in pieces split anywhere.
#[derive(Debug, Default)]
struct Utf8Check {
    /// The start of a character whose remaining bytes have not arrived yet.
    pending: [u8; 4],
    pending_len: usize,
}

impl Utf8Check {
    /// Check the next bytes; `false` once anything seen is not UTF-8.
    fn feed(&mut self, mut bytes: &[u8]) -> bool {
        if self.pending_len > 0 {
            let width = match self.pending[0] {
                0xf0.. => 4,
                0xe0.. => 3,
                _ => 2,
            };
            while self.pending_len < width
                && let Some((&byte, rest)) = bytes.split_first()
            {
                self.pending[self.pending_len] = byte;
                self.pending_len += 1;
                bytes = rest;
            }
            if self.pending_len < width {
                return true;
            }
            if std::str::from_utf8(&self.pending[..width]).is_err() {
                return false;
            }
            self.pending_len = 0;
        }
        match std::str::from_utf8(bytes) {
            Ok(_) => true,
            Err(error) if error.error_len().is_some() => false,
            Err(error) => {
                // A character cut off at the end of this piece: keep its start.
                let tail = &bytes[error.valid_up_to()..];
                self.pending[..tail.len()].copy_from_slice(tail);
                self.pending_len = tail.len();
                true
            }
        }
    }

    /// Whether the bytes ended on a character boundary.
    fn finish(&self) -> bool {
        self.pending_len == 0
    }
}

/// The longest prefix of `bytes` that is UTF-8 (a kept line may end inside a character).
pub(crate) fn utf8_prefix(bytes: &[u8]) -> &str {
    match std::str::from_utf8(bytes) {
        Ok(text) => text,
        // `valid_up_to` marks a prefix that is valid UTF-8, so this never falls back.
        Err(error) => std::str::from_utf8(&bytes[..error.valid_up_to()]).unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_in_pieces(bytes: &[u8], size: usize) -> bool {
        let mut check = Utf8Check::default();
        bytes.chunks(size).all(|piece| check.feed(piece)) && check.finish()
    }

    #[test]
    fn utf8_split_anywhere_is_checked_like_the_whole() {
        let samples: [&[u8]; 6] = [
            "héllo wörld €𝄞".as_bytes(),
            b"\xc3\x28",
            b"ab\xe2\x82",
            b"\xf0\x9d\x84\x9e\n",
            b"\xed\xa0\x80",
            b"\xe2\x82\n\xac",
        ];
        for bytes in samples {
            let whole = std::str::from_utf8(bytes).is_ok();
            for size in 1..=bytes.len() {
                assert_eq!(check_in_pieces(bytes, size), whole, "{bytes:?} in {size}");
            }
        }
    }

    #[test]
    fn the_utf8_prefix_stops_before_a_cut_character() {
        assert_eq!(utf8_prefix("aé".as_bytes()), "aé");
        assert_eq!(utf8_prefix(&"aé".as_bytes()[..2]), "a");
    }
}
