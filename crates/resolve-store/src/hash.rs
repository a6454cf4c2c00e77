//! Content ids: the SHA-256 of a file's bytes in lowercase hex, which names a content in
//! change sets, records and the blob store. Owns nothing else.

use sha2::{Digest, Sha256};

/// The SHA-256 of `bytes`, in lowercase hex; identifies a file's content at preview time.
pub fn content_hash(bytes: &[u8]) -> String {
    hex(&sha256(bytes))
}

/// The SHA-256 of `bytes`.
pub fn sha256(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// `digest` in lowercase hex.
pub fn hex(digest: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut hex = String::with_capacity(digest.len() * 2);
    for byte in digest {
        hex.push(char::from(DIGITS[usize::from(byte >> 4)]));
        hex.push(char::from(DIGITS[usize::from(byte & 0x0f)]));
    }
    hex
}

/// Whether two secrets (a MAC, a token) are equal, compared in time independent of where they
/// differ.
pub fn same_secret(given: &str, expected: &str) -> bool {
    given.len() == expected.len()
        && given
            .bytes()
            .zip(expected.bytes())
            .fold(0u8, |diff, (a, b)| diff | (a ^ b))
            == 0
}

/// Whether `name` is a SHA-256 in lowercase hex, as [`content_hash`] writes it.
pub(crate) fn is_sha256_hex(name: &str) -> bool {
    name.len() == 64
        && name
            .bytes()
            .all(|byte| matches!(byte, b'0'..=b'9' | b'a'..=b'f'))
}

/// A SHA-256 computed piece by piece.
#[derive(Default)]
pub(crate) struct Hasher(Sha256);

impl Hasher {
    /// Add `bytes`.
    pub(crate) fn update(&mut self, bytes: impl AsRef<[u8]>) {
        self.0.update(bytes);
    }

    /// The hash of everything added.
    pub(crate) fn digest(self) -> [u8; 32] {
        self.0.finalize().into()
    }

    /// The hash of everything added, in lowercase hex.
    pub(crate) fn finish(self) -> String {
        hex(&self.digest())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_hash_is_sha256_hex() {
        assert_eq!(
            content_hash(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert!(is_sha256_hex(&content_hash(b"x")));
        assert!(!is_sha256_hex(&"A".repeat(64)));
    }

    #[test]
    fn a_hash_in_pieces_is_the_hash_of_the_whole() {
        let mut hasher = Hasher::default();
        hasher.update(b"ab");
        hasher.update(b"c");
        assert_eq!(hasher.finish(), content_hash(b"abc"));
    }
}
