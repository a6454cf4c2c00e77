//! Reading workspace files as text: the binary rule (a NUL byte in the first 8 KiB, or not
//! valid UTF-8) and the byte-order mark, which producers keep but never hand to a parser.

use std::path::Path;

use crate::EditError;

/// How many leading bytes are probed for a NUL byte.
const BINARY_PROBE_LEN: usize = 8 * 1024;

/// The UTF-8 byte-order mark.
pub(crate) const BOM: &str = "\u{feff}";

/// Whether `bytes` count as binary: a NUL byte in the first 8 KiB, or not valid UTF-8.
pub fn is_binary(bytes: &[u8]) -> bool {
    let probe = &bytes[..bytes.len().min(BINARY_PROBE_LEN)];
    probe.contains(&0) || std::str::from_utf8(bytes).is_err()
}

/// The text of `bytes`, or `None` when they are binary.
pub(crate) fn decode(bytes: Vec<u8>) -> Option<String> {
    let probe = &bytes[..bytes.len().min(BINARY_PROBE_LEN)];
    if probe.contains(&0) {
        return None;
    }
    String::from_utf8(bytes).ok()
}

/// Read a whole file, naming it in the error.
pub(crate) fn read_bytes(path: &Path) -> Result<Vec<u8>, EditError> {
    std::fs::read(path).map_err(|source| EditError::io("read", path, source))
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
    fn a_nul_byte_in_the_first_8_kib_is_binary() {
        assert!(is_binary(b"abc\0def"));
        let mut late = vec![b'a'; BINARY_PROBE_LEN];
        late.push(0);
        assert!(!is_binary(&late), "a NUL after 8 KiB is valid UTF-8 text");
    }

    #[test]
    fn invalid_utf8_is_binary_and_plain_text_is_not() {
        assert!(is_binary(&[b'a', 0xff, b'b']));
        assert!(!is_binary("héllo\r\n".as_bytes()));
        assert_eq!(decode(vec![0xc3, 0x28]), None);
        assert_eq!(decode(b"ok".to_vec()).as_deref(), Some("ok"));
    }

    #[test]
    fn the_bom_is_split_off_and_kept() {
        assert_eq!(split_bom("\u{feff}fn a() {}"), (BOM, "fn a() {}"));
        assert_eq!(split_bom("fn a() {}"), ("", "fn a() {}"));
    }
}
