//! The per-user secret that signs this user's records: 32 random bytes in `record-key` under
//! the per-user directory (created once, mode 0600), and HMAC-SHA256 under it. A repository
//! can plant any record under its own `.resolve/`, but without this key it cannot sign one, so
//! a record it planted reads as foreign. What a signature covers is the store's (see its
//! `signature` module).

use std::fmt;
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::error::StoreError;
use crate::fs;
use crate::hash::hex;
use crate::user_dir::user_dir;

/// The key's file name under the per-user directory.
pub const RECORD_KEY_FILE: &str = "record-key";

/// Bytes in a key.
const KEY_LEN: usize = 32;

/// SHA-256's block size, which HMAC pads the key to.
const BLOCK_LEN: usize = 64;

/// The secret that signs this user's records. Its `Debug` shows no byte of it.
#[derive(Clone, PartialEq, Eq)]
pub struct RecordKey([u8; KEY_LEN]);

impl fmt::Debug for RecordKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RecordKey(****)")
    }
}

impl RecordKey {
    /// A key of the given bytes (tests, and callers that keep the key elsewhere).
    pub fn from_bytes(bytes: [u8; KEY_LEN]) -> Self {
        Self(bytes)
    }

    /// The key in the per-user directory ([`user_dir`]), created there on first use.
    pub fn from_user_dir() -> Result<Self, StoreError> {
        Self::load_or_create(&user_dir()?)
    }

    /// The key in `dir/record-key`, created (32 random bytes, mode 0600, and `dir` with its
    /// parents) when there is none. A file of another length is refused, naming it.
    pub fn load_or_create(dir: &Path) -> Result<Self, StoreError> {
        let path = dir.join(RECORD_KEY_FILE);
        if let Some(bytes) = fs::read_bytes(&path)? {
            return Self::parse(&path, &bytes);
        }
        let mut bytes = [0; KEY_LEN];
        getrandom::fill(&mut bytes).map_err(|error| StoreError::RecordKey {
            path: path.clone(),
            reason: format!("no random bytes could be drawn ({error})"),
        })?;
        fs::create_dir_all(dir)?;
        if fs::write_private_new(&path, &bytes)? {
            return Ok(Self(bytes));
        }
        // Another process created it first: use theirs.
        let bytes = fs::read_bytes(&path)?.unwrap_or_default();
        Self::parse(&path, &bytes)
    }

    fn parse(path: &Path, bytes: &[u8]) -> Result<Self, StoreError> {
        <[u8; KEY_LEN]>::try_from(bytes)
            .map(Self)
            .map_err(|_| StoreError::RecordKey {
                path: path.to_path_buf(),
                reason: format!(
                    "it holds {} bytes, not {KEY_LEN}; remove it and resolve makes a new one (records signed with the old key then read as foreign)",
                    bytes.len()
                ),
            })
    }

    /// HMAC-SHA256 of `message` under this key, in lowercase hex.
    pub fn mac(&self, message: &[u8]) -> String {
        let mut padded = [0u8; BLOCK_LEN];
        padded[..KEY_LEN].copy_from_slice(&self.0);
        let inner_key: Vec<u8> = padded.iter().map(|byte| byte ^ 0x36).collect();
        let outer_key: Vec<u8> = padded.iter().map(|byte| byte ^ 0x5c).collect();
        let inner = Sha256::new()
            .chain_update(&inner_key)
            .chain_update(message)
            .finalize();
        let outer = Sha256::new()
            .chain_update(&outer_key)
            .chain_update(inner)
            .finalize();
        hex(&outer)
    }

    /// Whether `mac` is [`RecordKey::mac`] of `message`, compared in constant time.
    pub fn verifies(&self, message: &[u8], mac: &str) -> bool {
        crate::hash::same_secret(mac, &self.mac(message))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mac_is_hmac_sha256_as_rfc_4231_gives_it() {
        // RFC 4231 test case 2 uses a 4-byte key; pad ours the same way HMAC does.
        let mut key = [0u8; KEY_LEN];
        key[..4].copy_from_slice(b"Jefe");
        assert_eq!(
            RecordKey(key).mac(b"what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn a_key_is_created_once_private_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("cfg").join("resolve");
        let key = RecordKey::load_or_create(&config).unwrap();
        assert_eq!(RecordKey::load_or_create(&config).unwrap(), key);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(config.join(RECORD_KEY_FILE))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert!(key.verifies(b"m", &key.mac(b"m")));
        assert!(!key.verifies(b"n", &key.mac(b"m")));
        assert_eq!(format!("{key:?}"), "RecordKey(****)");
    }

    #[test]
    fn a_key_file_of_the_wrong_length_is_refused_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(RECORD_KEY_FILE), b"short").unwrap();
        let error = RecordKey::load_or_create(dir.path()).unwrap_err();
        assert!(error.to_string().contains(RECORD_KEY_FILE), "{error}");
    }
}
