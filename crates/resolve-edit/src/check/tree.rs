//! The workspace tree as a check sees it: a walk of every file a copy would hold (`.git` and
//! `.resolve` never; ignored paths only when asked), used to copy the workspace into a
//! scratch directory and to notice which files a check command changed.
//!
//! A scratch copy must not reach back into the workspace through its links (issue #35 item
//! 7): a symbolic link that leads into the workspace (absolute, or relative and climbing out
//! and back in) is re-pointed, relative, to the same place in the copy; one that leads to the
//! workspace root's parent or above (which holds the workspace) is left out of the copy; one
//! that leads elsewhere outside the workspace (a toolchain, a shared cache) is kept as it is.
//! What lies outside the workspace is not inspected: a link out there that leads back in is
//! beyond the copy's reach to change.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use resolve_store::{STATE_DIR, Workspace, copy_file, create_dir_all, create_symlink};

use crate::error::EditError;
use crate::sorted_walk::{SortedWalk, WalkEntry, WalkRules};

/// A walk of the tree under `root`: hidden files included, `.git` and `.resolve` left out,
/// ignored paths (`.gitignore`, `.ignore`, git's excludes) left out unless `with_ignored`.
fn walk(root: &Path, with_ignored: bool) -> impl Iterator<Item = (String, WalkEntry)> {
    let rules = WalkRules {
        ignore_files: !with_ignored,
        hidden: false,
    };
    let keep = |_: &Path, name: &OsStr| name != ".git" && name != STATE_DIR;
    let root = root.to_path_buf();
    SortedWalk::new(&root, rules, keep).filter_map(move |entry| {
        let relative = entry.path.strip_prefix(&root).ok()?;
        Some((relative.to_string_lossy().into_owned(), entry))
    })
}

/// Copy the tree of `workspace` into the existing directory `to`: directories created, files
/// cloned or copied (see [`copy_file`]), symbolic links copied as links that cannot reach the
/// workspace (see the module doc). Returns how many files were copied.
pub(crate) fn copy_tree(
    workspace: &Workspace,
    to: &Path,
    with_ignored: bool,
) -> Result<u64, EditError> {
    let mut files = 0;
    for (relative, entry) in walk(workspace.root(), with_ignored) {
        let kind = entry.kind;
        let target = to.join(&relative);
        if kind.is_dir() {
            create_dir_all(&target)?;
        } else if kind.is_symlink() {
            if let Some(link_to) = scratch_link(workspace, &entry.path, &relative)? {
                create_symlink(&link_to, &target)?;
            }
        } else if kind.is_file() {
            copy_file(&entry.path, &target)?;
            files += 1;
        }
    }
    Ok(files)
}

/// Where the copy of the link at `link` (`relative` to the root) points: into the copy when
/// it leads into the workspace, as it is when it leads elsewhere outside; `None` (left out)
/// when it leads to a directory that holds the workspace, or loops.
fn scratch_link(
    workspace: &Workspace,
    link: &Path,
    relative: &str,
) -> Result<Option<PathBuf>, EditError> {
    let target =
        std::fs::read_link(link).map_err(|source| EditError::io("read the link", link, source))?;
    // Where a write through the link lands (links followed, dangling ones too). A link that
    // loops leads nowhere a write could land; the copy leaves it out.
    let Ok(real) = workspace.real_path(link) else {
        return Ok(None);
    };
    let root = workspace.root();
    if let Ok(inside) = real.strip_prefix(root) {
        // The link's parents are real directories in the copy (links are not descended), so
        // climbing them reaches the copy's root.
        let depth = Path::new(relative).components().count().saturating_sub(1);
        let mut pointed: PathBuf = std::iter::repeat_n("..", depth).collect();
        pointed.push(inside);
        if pointed.as_os_str().is_empty() {
            pointed.push(".");
        }
        return Ok(Some(pointed));
    }
    if root.starts_with(&real) {
        return Ok(None);
    }
    Ok(Some(target))
}

/// What identifies a file's version without reading it: size, modification time, inode.
type Stamp = (u64, Option<SystemTime>, u64);

/// Every file of a tree that a copy would hold, with its [`Stamp`], to compare before and
/// after a command runs.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct TreeStamps(BTreeMap<String, Stamp>);

impl TreeStamps {
    /// The stamps of the files under `root`, ignored paths left out as a copy leaves them
    /// (build output in `target/` is not worth reporting).
    pub(crate) fn of(root: &Path) -> Self {
        let mut stamps = BTreeMap::new();
        for (relative, entry) in walk(root, false) {
            if !entry.kind.is_file() {
                continue;
            }
            if let Ok(metadata) = std::fs::symlink_metadata(&entry.path) {
                stamps.insert(relative, stamp(&metadata));
            }
        }
        Self(stamps)
    }

    /// Files created, changed or removed between `self` and `after`, in path order.
    pub(crate) fn changed(&self, after: &Self) -> Vec<String> {
        let mut changed: Vec<String> = after
            .0
            .iter()
            .filter(|(path, stamp)| self.0.get(*path) != Some(stamp))
            .map(|(path, _)| path.clone())
            .collect();
        changed.extend(
            self.0
                .keys()
                .filter(|path| !after.0.contains_key(*path))
                .cloned(),
        );
        changed.sort();
        changed
    }
}

#[cfg(unix)]
fn stamp(metadata: &std::fs::Metadata) -> Stamp {
    use std::os::unix::fs::MetadataExt;
    (metadata.len(), metadata.modified().ok(), metadata.ino())
}

#[cfg(not(unix))]
fn stamp(metadata: &std::fs::Metadata) -> Stamp {
    (metadata.len(), metadata.modified().ok(), 0)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use resolve_test_support::TestDir;

    use super::*;

    #[test]
    fn a_copy_leaves_out_git_state_and_ignored_paths_unless_asked() {
        let from = TestDir::with_files([
            (".gitignore", "target/\n"),
            ("src/a.rs", "a"),
            (".env", "hidden but kept"),
            ("target/out", "ignored"),
            (".git/HEAD", "ref"),
            (".resolve/lock", ""),
        ]);
        std::os::unix::fs::symlink("src/a.rs", from.path().join("link")).unwrap();
        let to = tempfile::tempdir().unwrap();
        let workspace = Workspace::open(from.path()).unwrap();
        assert_eq!(copy_tree(&workspace, to.path(), false).unwrap(), 3);
        assert_eq!(
            std::fs::read_to_string(to.path().join("src/a.rs")).unwrap(),
            "a"
        );
        assert!(to.path().join(".env").exists());
        assert!(!to.path().join("target").exists());
        assert!(!to.path().join(".git").exists());
        assert!(!to.path().join(".resolve").exists());
        assert_eq!(
            std::fs::read_link(to.path().join("link")).unwrap(),
            Path::new("src/a.rs")
        );
        let all = tempfile::tempdir().unwrap();
        copy_tree(&workspace, all.path(), true).unwrap();
        assert!(all.path().join("target/out").exists());
        assert!(!all.path().join(".git").exists());
    }

    #[test]
    fn links_into_the_workspace_point_into_the_copy_and_links_above_it_are_left_out() {
        let from = TestDir::new();
        from.write("src/a.rs", "a");
        let root = from.path().canonicalize().unwrap();
        let link = |name: &str, target: &Path| {
            std::os::unix::fs::symlink(target, from.path().join(name)).unwrap();
        };
        std::fs::create_dir(from.path().join("deep")).unwrap();
        link("abs", &root.join("src/a.rs"));
        link("deep/abs", &root.join("src/a.rs"));
        link("dangling", &root.join("src/new.rs"));
        link("itself", &root);
        link("above", root.parent().unwrap());
        link("tool", Path::new("/usr/bin/env"));
        let to = tempfile::tempdir().unwrap();
        copy_tree(&Workspace::open(from.path()).unwrap(), to.path(), false).unwrap();
        let read_link = |name: &str| std::fs::read_link(to.path().join(name)).unwrap();
        assert_eq!(read_link("abs"), Path::new("src/a.rs"));
        assert_eq!(read_link("deep/abs"), Path::new("../src/a.rs"));
        assert_eq!(read_link("dangling"), Path::new("src/new.rs"));
        assert_eq!(read_link("itself"), Path::new("."));
        assert!(std::fs::symlink_metadata(to.path().join("above")).is_err());
        assert_eq!(read_link("tool"), Path::new("/usr/bin/env"));
    }

    #[test]
    fn stamps_name_files_created_changed_and_removed() {
        let root = TestDir::with_files([("same", "s"), ("changed", "c"), ("removed", "r")]);
        let before = TreeStamps::of(root.path());
        root.write("changed", "changed, longer");
        root.write("new/created", "n");
        std::fs::remove_file(root.path().join("removed")).unwrap();
        let after = TreeStamps::of(root.path());
        assert_eq!(
            before.changed(&after),
            ["changed", "new/created", "removed"]
        );
        assert!(after.changed(&TreeStamps::of(root.path())).is_empty());
    }
}
