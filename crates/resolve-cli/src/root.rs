//! Finding the workspace root as git finds its work tree, and reading paths typed on the
//! command line against it.
//!
//! Without `--root`, the root is the nearest directory, from the current one upward, that holds
//! `.resolve/`; else the top of the git work tree the current directory is in (the nearest
//! directory holding `.git`); else the current directory. A path typed on the command line is
//! relative to the current directory when that is inside the root, and relative to the root
//! otherwise (`resolve --root examples/demo ast-edit … src` names `examples/demo/src`); what is
//! printed names paths relative to the root.

use std::path::{Component, Path, PathBuf};

/// The workspace root, and where the current directory is inside it.
#[derive(Debug, Clone)]
pub struct Located {
    /// The root, as found or given.
    root: PathBuf,
    /// The current directory relative to the root, when it is inside it (empty at the root).
    within: Option<PathBuf>,
}

impl Located {
    /// The root for `given` (`--root DIR`), or the one found from the current directory.
    pub fn find(given: Option<&Path>) -> anyhow::Result<Self> {
        // With `--root`, a current directory that cannot be read (removed) only means typed
        // paths are read from the root.
        let current = std::env::current_dir();
        let root = match given {
            Some(root) => root.to_path_buf(),
            None => discover(current.as_ref().map_err(|error| {
                anyhow::anyhow!("could not read the current directory: {error}")
            })?),
        };
        let within = match (
            root.canonicalize(),
            current.and_then(|dir| dir.canonicalize()),
        ) {
            (Ok(root), Ok(current)) => current.strip_prefix(&root).ok().map(Path::to_path_buf),
            _ => None,
        };
        Ok(Self { root, within })
    }

    /// The root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `typed` (a path, directory or glob a person typed) as the tools take it: relative to the
    /// root, or absolute as typed.
    pub fn path(&self, typed: &str) -> String {
        let Some(within) = self
            .within
            .as_deref()
            .filter(|within| !within.as_os_str().is_empty())
        else {
            return typed.to_owned();
        };
        if Path::new(typed).is_absolute() {
            return typed.to_owned();
        }
        let mut parts: Vec<String> = within
            .components()
            .map(|part| part.as_os_str().to_string_lossy().into_owned())
            .collect();
        for part in Path::new(typed).components() {
            match part {
                Component::CurDir => {}
                // A `..` past the root stays, for the tools to refuse as an escape.
                Component::ParentDir if parts.last().is_some_and(|last| last != "..") => {
                    parts.pop();
                }
                other => parts.push(other.as_os_str().to_string_lossy().into_owned()),
            }
        }
        if parts.is_empty() {
            ".".to_owned()
        } else {
            parts.join("/")
        }
    }

    /// An address `PATH[#N,…]` with its path read as [`Located::path`] reads one.
    pub fn address(&self, typed: &str) -> String {
        match typed.rsplit_once('#') {
            Some((path, hunks)) => format!("{}#{hunks}", self.path(path)),
            None => self.path(typed),
        }
    }
}

/// The root for a run started in `current`: the nearest ancestor holding `.resolve`, else the
/// nearest holding `.git`, else `current`.
fn discover(current: &Path) -> PathBuf {
    let holding = |name: &str| {
        current
            .ancestors()
            .find(|dir| dir.join(name).symlink_metadata().is_ok())
            .map(Path::to_path_buf)
    };
    holding(".resolve")
        .or_else(|| holding(".git"))
        .unwrap_or_else(|| current.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inside(within: &str) -> Located {
        Located {
            root: PathBuf::from("/r"),
            within: Some(PathBuf::from(within)),
        }
    }

    #[test]
    fn typed_paths_are_read_from_the_current_directory_inside_the_root() {
        let located = inside("crates/core");
        assert_eq!(located.path("src"), "crates/core/src");
        assert_eq!(located.path("."), "crates/core");
        assert_eq!(located.path("../edit/lib.rs"), "crates/edit/lib.rs");
        assert_eq!(located.path("src/**/*.rs"), "crates/core/src/**/*.rs");
        assert_eq!(located.path("/abs/x.rs"), "/abs/x.rs");
        assert_eq!(located.path("../../.."), "..");
        assert_eq!(located.address("src/a.rs#1,3"), "crates/core/src/a.rs#1,3");
    }

    #[test]
    fn at_the_root_or_outside_it_typed_paths_are_relative_to_the_root() {
        assert_eq!(inside("").path("src"), "src");
        let outside = Located {
            root: PathBuf::from("/r"),
            within: None,
        };
        assert_eq!(outside.path("src/a.rs"), "src/a.rs");
    }

    #[test]
    fn the_root_is_the_nearest_resolve_dir_then_the_git_top_then_here() {
        let top = tempfile::tempdir().unwrap();
        let deep = top.path().join("a/b/c");
        std::fs::create_dir_all(&deep).unwrap();
        assert_eq!(discover(&deep), deep);
        std::fs::create_dir(top.path().join(".git")).unwrap();
        assert_eq!(discover(&deep), top.path());
        std::fs::create_dir(top.path().join("a/.resolve")).unwrap();
        assert_eq!(discover(&deep), top.path().join("a"));
    }
}
