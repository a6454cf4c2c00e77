//! The per-user directory outside every workspace: where what a person decided about a
//! workspace is kept, out of reach of a cloned repository (a repository can plant anything under
//! its own root, `.resolve/` included, but nothing here).
//!
//! `$XDG_CONFIG_HOME/resolve` when that variable holds an absolute path, else
//! `$HOME/.config/resolve`. Trust decisions (`resolve trust`) and the key that signs this
//! user's records live there.

use std::path::PathBuf;

use crate::error::StoreError;

/// Name of the directory under the user's configuration directory.
const DIR_NAME: &str = "resolve";

/// The per-user directory, from the environment; an error when neither `XDG_CONFIG_HOME` nor
/// `HOME` names an absolute directory.
pub fn user_dir() -> Result<PathBuf, StoreError> {
    user_dir_from(
        std::env::var_os("XDG_CONFIG_HOME").map(PathBuf::from),
        std::env::var_os("HOME").map(PathBuf::from),
    )
}

/// The per-user directory for the given `XDG_CONFIG_HOME` and `HOME` values.
fn user_dir_from(
    xdg_config_home: Option<PathBuf>,
    home: Option<PathBuf>,
) -> Result<PathBuf, StoreError> {
    if let Some(config) = xdg_config_home.filter(|path| path.is_absolute()) {
        return Ok(config.join(DIR_NAME));
    }
    match home.filter(|path| path.is_absolute()) {
        Some(home) => Ok(home.join(".config").join(DIR_NAME)),
        None => Err(StoreError::NoUserDir),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xdg_config_home_wins_over_home_when_absolute() {
        let dir = user_dir_from(Some("/x/cfg".into()), Some("/home/u".into())).unwrap();
        assert_eq!(dir, PathBuf::from("/x/cfg/resolve"));
        let dir = user_dir_from(Some("relative".into()), Some("/home/u".into())).unwrap();
        assert_eq!(dir, PathBuf::from("/home/u/.config/resolve"));
    }

    #[test]
    fn no_absolute_home_is_an_error() {
        let error = user_dir_from(None, Some("rel".into())).unwrap_err();
        assert!(error.to_string().contains("HOME"), "{error}");
    }
}
