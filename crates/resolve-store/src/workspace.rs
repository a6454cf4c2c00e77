//! Workspace confinement: every path a tool or a person names is resolved inside the root, and
//! the one lexical path normalizer ([`normalize_lexically`]).
//!
//! `..` escapes, absolute paths elsewhere, symlinks leading outside and chains of more links
//! than one lookup follows are refused, and so is anything under `.resolve/`, where resolve
//! keeps its own state, or under any `.git/`, git's (both compared ASCII-case-insensitively,
//! since the file system may fold case). Opening a workspace checks its state directory (see
//! [`StateLayout::check`]) before anything else reads it.

use std::path::{Component, Path, PathBuf};

use crate::error::StoreError;
use crate::fs;
use crate::layout::{STATE_DIR, StateLayout};

/// The name of git's own directory, never a target.
const GIT_DIR: &str = ".git";

/// A workspace root (canonical) that paths are confined to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    root: PathBuf,
    layout: StateLayout,
}

/// A path confined to the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspacePath {
    /// The absolute path (through the canonical root).
    pub absolute: PathBuf,
    /// The path relative to the root, `/`-separated (`.` for the root itself).
    pub relative: String,
    /// Where it really leads, symlinks followed (what [`Workspace::real_path`] gives for
    /// `absolute`): a write to it lands there.
    pub real: PathBuf,
}

impl Workspace {
    /// Open the workspace rooted at `root`, which must be an existing directory; its state
    /// directory, when there is one, must pass [`StateLayout::check`] (a `.resolve/` holding
    /// a symlink, say one committed to a repository, is refused before anything touches it).
    pub fn open(root: impl AsRef<Path>) -> Result<Self, StoreError> {
        let root = root.as_ref();
        let canonical = root
            .canonicalize()
            .map_err(|source| StoreError::io("open the workspace root", root, source))?;
        if !canonical.is_dir() {
            return Err(StoreError::RootNotADirectory {
                path: root.display().to_string(),
            });
        }
        let layout = StateLayout::under(&canonical);
        layout.check()?;
        Ok(Self {
            layout,
            root: canonical,
        })
    }

    /// The canonical root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `<root>/.resolve`.
    pub fn state_dir(&self) -> PathBuf {
        self.layout.dir().to_path_buf()
    }

    /// The names of everything under `<root>/.resolve`.
    pub fn layout(&self) -> &StateLayout {
        &self.layout
    }

    /// Resolve `path` (relative to the root, or absolute inside it) to a confined path.
    ///
    /// The path need not exist; existing parts are checked for symlinks leading outside.
    pub fn resolve(&self, path: &str) -> Result<WorkspacePath, StoreError> {
        let given = Path::new(path);
        let outside = || StoreError::OutsideWorkspace {
            path: path.to_owned(),
            root: self.root.clone(),
        };
        let relative_part = if given.is_absolute() {
            // Compare lexically against the canonical root (and the root as the caller may
            // spell it through a symlinked prefix, which canonicalization resolves).
            let normalized = normalize_lexically(given).ok_or_else(outside)?;
            match normalized.strip_prefix(&self.root) {
                Ok(rest) => rest.to_path_buf(),
                Err(_) => {
                    let parent_canonical =
                        canonical_prefix(&normalized).ok_or_else(|| StoreError::TooManyLinks {
                            path: path.to_owned(),
                            hops: MAX_LINK_HOPS,
                        })?;
                    parent_canonical
                        .strip_prefix(&self.root)
                        .map_err(|_| outside())?
                        .to_path_buf()
                }
            }
        } else {
            normalize_lexically(given).ok_or_else(outside)?
        };
        let relative = to_slash(&relative_part);
        refuse_own_state(&relative, path)?;
        let absolute = self.root.join(&relative_part);
        // Follow symlinks on the longest existing prefix.
        let real = match linkless(&self.root, &relative_part) {
            Some(real) => real,
            None => canonical_prefix(&absolute).ok_or_else(|| StoreError::TooManyLinks {
                path: path.to_owned(),
                hops: MAX_LINK_HOPS,
            })?,
        };
        if !real.starts_with(&self.root) {
            return Err(StoreError::SymlinkEscape {
                path: path.to_owned(),
                target: real,
            });
        }
        if let Ok(rest) = real.strip_prefix(&self.root) {
            refuse_own_state(&to_slash(rest), path)?;
        }
        Ok(WorkspacePath {
            absolute,
            real,
            relative: if relative.is_empty() {
                ".".to_owned()
            } else {
                relative
            },
        })
    }

    /// Where an absolute path really leads, symlinks followed (also dangling ones); a write
    /// to `absolute` lands there. More links than one lookup follows (a loop) is
    /// [`StoreError::TooManyLinks`].
    pub fn real_path(&self, absolute: &Path) -> Result<PathBuf, StoreError> {
        canonical_prefix(absolute).ok_or_else(|| StoreError::TooManyLinks {
            path: absolute.display().to_string(),
            hops: MAX_LINK_HOPS,
        })
    }

    /// The root-relative, `/`-separated name of an absolute path inside the root.
    pub fn relative_name(&self, absolute: &Path) -> Option<String> {
        absolute.strip_prefix(&self.root).ok().map(to_slash)
    }
}

/// Refuse the root-relative, `/`-separated `relative` (of `given`, as the caller wrote it)
/// when it is resolve's state directory or under it, or has a `.git` component; both names
/// compared ASCII-case-insensitively, as a case-folding file system would.
fn refuse_own_state(relative: &str, given: &str) -> Result<(), StoreError> {
    let mut components = relative.split('/');
    if components
        .next()
        .is_some_and(|first| first.eq_ignore_ascii_case(STATE_DIR))
    {
        return Err(StoreError::StateDir {
            path: given.to_owned(),
        });
    }
    if relative
        .split('/')
        .any(|component| component.eq_ignore_ascii_case(GIT_DIR))
    {
        return Err(StoreError::GitDir {
            path: given.to_owned(),
        });
    }
    Ok(())
}

/// Resolve `.` and `..` lexically; `None` if `..` climbs above the start (the root of an
/// absolute path, or the first component of a relative one). The one lexical normalizer of the
/// project: confinement and plan paths both go through it.
pub fn normalize_lexically(path: &Path) -> Option<PathBuf> {
    apply_dots(path, AboveStart::Refuse)
}

/// What `..` above the start of a path does.
#[derive(Clone, Copy, PartialEq, Eq)]
enum AboveStart {
    /// Makes the path invalid.
    Refuse,
    /// Stays at the start, as the kernel treats `/..`.
    Stay,
}

/// `path` with `.` dropped and `..` applied lexically.
fn apply_dots(path: &Path, above_start: AboveStart) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    let mut depth = 0usize;
    for component in path.components() {
        match component {
            Component::Prefix(_) | Component::RootDir => out.push(component.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir if depth == 0 => {
                if above_start == AboveStart::Refuse {
                    return None;
                }
            }
            Component::ParentDir => {
                out.pop();
                depth -= 1;
            }
            Component::Normal(name) => {
                out.push(name);
                depth += 1;
            }
        }
    }
    Some(out)
}

/// How many symlinks [`canonical_prefix`] follows by hand before it gives up (as the kernel's
/// own limit for one path lookup).
const MAX_LINK_HOPS: usize = 40;

/// Where `path` really leads: the longest existing prefix canonicalized, then the rest. A
/// symlink whose target does not exist (yet) is followed too, since a write through it would
/// create that target; `..` left in the rest is resolved lexically. `None` when the kernel
/// finds more links than one lookup follows (`ELOOP`: a loop, or a chain longer than 40), or
/// more than [`MAX_LINK_HOPS`] dangling links are followed by hand: where such a path leads
/// is unknown, so it is never taken for inside.
fn canonical_prefix(path: &Path) -> Option<PathBuf> {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_LINK_HOPS {
        // Walk up from `current` to its longest existing prefix, collecting the rest.
        let mut existing = current.clone();
        let mut rest = Vec::new();
        let next = loop {
            match existing.canonicalize() {
                Ok(canonical) => {
                    let mut result = canonical;
                    for name in rest.iter().rev() {
                        result.push(name);
                    }
                    return Some(lexical(&result));
                }
                // More links than the kernel follows in one lookup: where a write would land
                // is unknown (the write itself would fail), so this is no path inside.
                Err(error) if fs::is_link_loop(&error) => return None,
                Err(_) => {}
            }
            if let Ok(target) = std::fs::read_link(&existing) {
                // A dangling link: go on from its target.
                let mut next = existing.parent().unwrap_or(Path::new("")).join(target);
                for name in rest.iter().rev() {
                    next.push(name);
                }
                break next;
            }
            match (
                existing.file_name().map(ToOwned::to_owned),
                existing.parent(),
            ) {
                (Some(name), Some(parent)) => {
                    rest.push(name);
                    existing = parent.to_path_buf();
                }
                _ => return Some(lexical(&current)),
            }
        };
        current = next;
    }
    None
}

/// `root/relative` when no part of `relative` is a symlink, so that it is its own real path
/// (`root` is canonical and `relative` lexically normal): each existing part is looked at
/// without following it, down to the first that does not exist, since nothing below that
/// exists either. One `lstat` per part inside the root, where canonicalizing reads every part
/// from `/` down again for each file. `None` when a part is a symlink or cannot be looked at
/// (not a directory, no permission): [`canonical_prefix`] decides those.
fn linkless(root: &Path, relative: &Path) -> Option<PathBuf> {
    let mut path = root.to_path_buf();
    for part in relative.components() {
        path.push(part);
        match std::fs::symlink_metadata(&path) {
            Ok(metadata) if metadata.file_type().is_symlink() => return None,
            Ok(_) => {}
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Some(root.join(relative));
            }
            Err(_) => return None,
        }
    }
    Some(path)
}

/// `path` with `.` dropped and `..` applied lexically (never above the root).
fn lexical(path: &Path) -> PathBuf {
    apply_dots(path, AboveStart::Stay).unwrap_or_default()
}

fn to_slash(path: &Path) -> String {
    path.components()
        .filter_map(|component| match component {
            Component::Normal(name) => Some(name.to_string_lossy().into_owned()),
            Component::Prefix(_)
            | Component::RootDir
            | Component::CurDir
            | Component::ParentDir => None,
        })
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::temp_workspace;

    /// A temporary workspace holding an empty `src` directory.
    fn workspace_with_src_dir() -> (tempfile::TempDir, Workspace) {
        let (dir, workspace) = temp_workspace();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        (dir, workspace)
    }

    #[test]
    fn relative_paths_resolve_inside_the_root() {
        let (_dir, ws) = workspace_with_src_dir();
        let path = ws.resolve("./src/../src/main.rs").unwrap();
        assert_eq!(path.relative, "src/main.rs");
        assert_eq!(path.absolute, ws.root().join("src/main.rs"));
    }

    #[test]
    fn dot_dot_escapes_are_refused() {
        let (_dir, ws) = workspace_with_src_dir();
        let err = ws.resolve("src/../../etc/passwd").unwrap_err();
        assert!(matches!(err, StoreError::OutsideWorkspace { .. }), "{err}");
    }

    #[test]
    fn absolute_paths_outside_are_refused_and_inside_accepted() {
        let (_dir, ws) = workspace_with_src_dir();
        assert!(matches!(
            ws.resolve("/etc/passwd").unwrap_err(),
            StoreError::OutsideWorkspace { .. }
        ));
        let inside = ws.root().join("src/lib.rs");
        assert_eq!(
            ws.resolve(inside.to_str().unwrap()).unwrap().relative,
            "src/lib.rs"
        );
    }

    #[test]
    fn a_real_path_is_the_one_canonicalizing_gives_with_or_without_links_on_the_way() {
        let (dir, ws) = workspace_with_src_dir();
        std::fs::create_dir_all(dir.path().join("deep/inner")).unwrap();
        std::fs::write(dir.path().join("deep/inner/file.rs"), "x").unwrap();
        std::fs::write(dir.path().join("src/lib.rs"), "x").unwrap();
        std::os::unix::fs::symlink("deep/inner", dir.path().join("shortcut")).unwrap();
        std::os::unix::fs::symlink("inner/file.rs", dir.path().join("deep/alias.rs")).unwrap();
        for path in [
            "deep/inner/file.rs",
            "deep/inner/new.rs",
            "deep/missing/dir/new.rs",
            "shortcut/file.rs",
            "shortcut/new.rs",
            "deep/alias.rs",
            "src/lib.rs",
            "src/lib.rs/inside",
            ".",
        ] {
            let resolved = ws.resolve(path).unwrap();
            assert_eq!(
                Some(resolved.real),
                canonical_prefix(&ws.root().join(path)),
                "{path}"
            );
        }
        assert_eq!(
            ws.resolve("shortcut/file.rs").unwrap().real,
            ws.root().join("deep/inner/file.rs")
        );
    }

    #[test]
    fn symlinks_leading_outside_are_refused() {
        let (dir, ws) = workspace_with_src_dir();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("escape")).unwrap();
        let err = ws.resolve("escape/file.txt").unwrap_err();
        assert!(matches!(err, StoreError::SymlinkEscape { .. }), "{err}");
    }

    #[test]
    fn dangling_symlinks_are_followed_to_where_a_write_would_land() {
        let (dir, ws) = workspace_with_src_dir();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path().join("new.txt"), dir.path().join("out.txt"))
            .unwrap();
        std::os::unix::fs::symlink("../../escape/x", dir.path().join("src/up")).unwrap();
        std::os::unix::fs::symlink("src/missing.rs", dir.path().join("alias.rs")).unwrap();
        for path in ["out.txt", "src/up"] {
            let err = ws.resolve(path).unwrap_err();
            assert!(
                matches!(err, StoreError::SymlinkEscape { .. }),
                "{path}: {err}"
            );
        }
        let alias = ws.resolve("alias.rs").unwrap();
        assert_eq!(
            ws.real_path(&alias.absolute).unwrap(),
            ws.root().join("src/missing.rs")
        );
    }

    #[test]
    fn symlink_loops_are_refused_as_too_many_links_without_hanging() {
        let (dir, ws) = workspace_with_src_dir();
        std::os::unix::fs::symlink("b", dir.path().join("a")).unwrap();
        std::os::unix::fs::symlink("a", dir.path().join("b")).unwrap();
        let err = ws.resolve("a/file.txt").unwrap_err();
        assert!(matches!(err, StoreError::TooManyLinks { .. }), "{err}");
        assert!(err.to_string().contains("a/file.txt"), "{err}");
    }

    /// `<dir>/<prefix>0 -> <prefix>1 -> … -> <prefix><len-1> -> end`.
    fn chain(dir: &Path, prefix: &str, len: usize, end: &Path) {
        std::os::unix::fs::symlink(end, dir.join(format!("{prefix}{}", len - 1))).unwrap();
        for index in (0..len - 1).rev() {
            std::os::unix::fs::symlink(
                format!("{prefix}{}", index + 1),
                dir.join(format!("{prefix}{index}")),
            )
            .unwrap();
        }
    }

    #[test]
    fn an_eighty_link_chain_is_refused_as_too_many_links_wherever_it_ends() {
        let (dir, ws) = workspace_with_src_dir();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("victim.txt"), "keep").unwrap();
        chain(dir.path(), "out", 80, &outside.path().join("victim.txt"));
        chain(dir.path(), "in", 80, &dir.path().join("src/inside.rs"));
        chain(dir.path(), "gone", 80, &outside.path().join("missing.txt"));
        for path in ["out0", "in0", "gone0", "out0/x"] {
            let err = ws.resolve(path).unwrap_err();
            assert!(
                matches!(err, StoreError::TooManyLinks { .. }),
                "{path}: {err}"
            );
            assert!(err.to_string().contains("too many symlinks"), "{err}");
        }
        assert!(matches!(
            ws.real_path(&dir.path().join("out0")).unwrap_err(),
            StoreError::TooManyLinks { .. }
        ));
        // A short chain is followed as ever.
        chain(dir.path(), "short", 5, &outside.path().join("victim.txt"));
        assert!(matches!(
            ws.resolve("short0").unwrap_err(),
            StoreError::SymlinkEscape { .. }
        ));
    }

    #[test]
    fn git_directories_are_never_a_target_in_any_case_or_through_a_link() {
        let (dir, ws) = workspace_with_src_dir();
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        std::os::unix::fs::symlink(".git", dir.path().join("gitlink")).unwrap();
        for path in [
            ".git/config",
            ".Git/config",
            "src/.GIT/hooks/pre-commit",
            "gitlink/config",
            ".git",
        ] {
            let err = ws.resolve(path).unwrap_err();
            assert!(matches!(err, StoreError::GitDir { .. }), "{path}: {err}");
            assert!(err.to_string().contains("inside `.git/`"), "{err}");
        }
        for path in [".gitignore", ".github/workflows/ci.yml", "src/.gitkeep"] {
            assert!(ws.resolve(path).is_ok(), "{path}");
        }
    }

    /// Assert that each of `paths` is refused as naming the state directory.
    fn assert_state_dir_refused(paths: &[&str]) {
        let (_dir, ws) = workspace_with_src_dir();
        for path in paths {
            let err = ws.resolve(path).unwrap_err();
            assert!(matches!(err, StoreError::StateDir { .. }), "{path}: {err}");
        }
    }

    #[test]
    fn the_state_directory_is_refused_in_any_case() {
        assert_state_dir_refused(&[".RESOLVE/pending/1.json", ".Resolve", "src/../.reSolve/x"]);
    }

    #[test]
    fn the_state_directory_is_never_a_target() {
        assert_state_dir_refused(&[".resolve/pending/x.json", "src/../.resolve"]);
    }
}
