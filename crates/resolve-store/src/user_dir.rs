//! The per-user directory outside every workspace: where what a person decided about a
//! workspace is kept, out of reach of a cloned repository (a repository can plant anything under
//! its own root, `.resolve/` included, but nothing here).
//!
//! It is `$HOME/.config/resolve`, from `HOME` alone. `XDG_CONFIG_HOME` is deliberately not
//! consulted: MCP hosts start servers with a trimmed environment (the official SDKs pass
//! `HOME`, `PATH`, `USER` and a few more, not `XDG_*`), and every `resolve` process of a person —
//! the one their host started and the one in their shell — must find the same trust records
//! and the same key, or what one signs the other calls foreign. Trust decisions
//! (`resolve trust`) and the key that signs this user's records live here.

use std::path::PathBuf;

use crate::error::StoreError;

/// The per-user directory's path under the home directory.
const UNDER_HOME: [&str; 2] = [".config", "resolve"];

/// The per-user directory, from `HOME`; an error when `HOME` is not an absolute path.
pub fn user_dir() -> Result<PathBuf, StoreError> {
    user_dir_from(std::env::var_os("HOME").map(PathBuf::from))
}

/// The per-user directory for the given `HOME` value.
fn user_dir_from(home: Option<PathBuf>) -> Result<PathBuf, StoreError> {
    match home.filter(|path| path.is_absolute()) {
        Some(home) => Ok(UNDER_HOME.iter().fold(home, |dir, part| dir.join(part))),
        None => Err(StoreError::NoUserDir),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_directory_is_under_home_whatever_xdg_says() {
        let dir = user_dir_from(Some("/home/u".into())).unwrap();
        assert_eq!(dir, PathBuf::from("/home/u/.config/resolve"));
    }

    #[test]
    fn no_absolute_home_is_an_error_naming_home() {
        for home in [None, Some(PathBuf::from("rel"))] {
            let error = user_dir_from(home).unwrap_err();
            assert!(error.to_string().contains("HOME"), "{error}");
        }
    }
}
