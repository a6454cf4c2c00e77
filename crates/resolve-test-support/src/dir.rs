//! The test workspace: a throwaway directory holding a root (the workspace under test) and a
//! sibling directory outside it, files written in by relative path, and a snapshot of the tree
//! (bytes, mode, symlinks) to compare before and after.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use tempfile::TempDir;

/// A throwaway test workspace: `root()` is the workspace, `outside()` a sibling directory
/// outside it; both go away when the value is dropped.
#[derive(Debug)]
pub struct TestDir {
    /// The temporary directory holding `root` and `outside`.
    dir: TempDir,
    /// The workspace root.
    root: PathBuf,
    /// A directory next to the root, outside it.
    outside: PathBuf,
}

/// One entry of a [`Tree`] snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A regular file: its bytes and permission bits.
    File {
        /// The file's contents.
        bytes: Vec<u8>,
        /// The permission bits (`mode & 0o7777`).
        mode: u32,
    },
    /// A directory and its permission bits.
    Dir {
        /// The permission bits (`mode & 0o7777`).
        mode: u32,
    },
    /// A symbolic link and where it points (not followed).
    Symlink(PathBuf),
}

/// A snapshot of a directory tree: each entry under its path relative to the root, with `/`
/// between components.
pub type Tree = BTreeMap<String, Entry>;

impl Default for TestDir {
    fn default() -> Self {
        Self::new()
    }
}

impl TestDir {
    /// An empty root and an empty sibling directory in a fresh temporary directory.
    #[must_use]
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        let outside = dir.path().join("outside");
        std::fs::create_dir(&root).unwrap();
        std::fs::create_dir(&outside).unwrap();
        Self { dir, root, outside }
    }

    /// A root holding the given files (relative path, contents).
    #[must_use]
    pub fn with_files<P: AsRef<str>, C: AsRef<[u8]>>(
        files: impl IntoIterator<Item = (P, C)>,
    ) -> Self {
        let dir = Self::new();
        for (path, content) in files {
            dir.write(path.as_ref(), content);
        }
        dir
    }

    /// The workspace root.
    #[must_use]
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The workspace root (the name `TempDir` uses, so tests read the same either way).
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.root
    }

    /// A directory next to the root, outside it.
    #[must_use]
    pub fn outside(&self) -> &Path {
        &self.outside
    }

    /// The temporary directory holding the root and the sibling.
    #[must_use]
    pub fn parent(&self) -> &Path {
        self.dir.path()
    }

    /// `relative` under the root.
    #[must_use]
    pub fn join(&self, relative: impl AsRef<Path>) -> PathBuf {
        self.root.join(relative)
    }

    /// Write a file under the root, creating its parent directories.
    pub fn write(&self, relative: &str, content: impl AsRef<[u8]>) {
        let path = self.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }

    /// A file's text under the root; panics, naming the file, when it cannot be read.
    #[must_use]
    pub fn read(&self, relative: &str) -> String {
        std::fs::read_to_string(self.join(relative))
            .unwrap_or_else(|error| panic!("cannot read {relative}: {error}"))
    }

    /// A file's text under the root, or `None` when it cannot be read (say, it does not exist).
    #[must_use]
    pub fn try_read(&self, relative: &str) -> Option<String> {
        std::fs::read_to_string(self.join(relative)).ok()
    }

    /// A file's bytes under the root, or `None` when it cannot be read.
    #[must_use]
    pub fn read_bytes(&self, relative: &str) -> Option<Vec<u8>> {
        std::fs::read(self.join(relative)).ok()
    }

    /// Set a path's permission bits.
    pub fn set_mode(&self, relative: &str, mode: u32) {
        std::fs::set_permissions(self.join(relative), std::fs::Permissions::from_mode(mode))
            .unwrap();
    }

    /// A path's permission bits (`mode & 0o777`, following links).
    #[must_use]
    pub fn mode(&self, relative: &str) -> u32 {
        std::fs::metadata(self.join(relative))
            .unwrap()
            .permissions()
            .mode()
            & 0o777
    }

    /// Make a symbolic link at `relative` pointing at `target` (as given, not resolved).
    pub fn symlink(&self, relative: &str, target: impl AsRef<Path>) {
        let path = self.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(target, path).unwrap();
    }

    /// A snapshot of everything under the root.
    #[must_use]
    pub fn tree(&self) -> Tree {
        self.tree_except(&[])
    }

    /// A snapshot of everything under the root but the top-level names in `skip` (say, the
    /// state directory).
    #[must_use]
    pub fn tree_except(&self, skip: &[&str]) -> Tree {
        let mut tree = Tree::new();
        walk(&self.root, "", skip, &mut tree);
        tree
    }
}

/// Add what is under `dir` to `tree`, each path after `prefix`.
fn walk(dir: &Path, prefix: &str, skip: &[&str], tree: &mut Tree) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap())
        .collect();
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for entry in entries {
        let name = entry.file_name().to_string_lossy().into_owned();
        if prefix.is_empty() && skip.contains(&name.as_str()) {
            continue;
        }
        let relative = if prefix.is_empty() {
            name
        } else {
            format!("{prefix}/{name}")
        };
        let path = entry.path();
        let meta = std::fs::symlink_metadata(&path).unwrap();
        let mode = meta.permissions().mode() & 0o7777;
        if meta.file_type().is_symlink() {
            tree.insert(relative, Entry::Symlink(std::fs::read_link(&path).unwrap()));
        } else if meta.is_dir() {
            tree.insert(relative.clone(), Entry::Dir { mode });
            walk(&path, &relative, skip, tree);
        } else {
            let bytes = std::fs::read(&path).unwrap();
            tree.insert(relative, Entry::File { bytes, mode });
        }
    }
}

/// Copy the directories and regular files under `from` to `to` (made when missing), leaving out
/// links and the directories named in `skip` (e.g. `.resolve`, `target`).
pub fn copy_tree(from: &Path, to: &Path, skip: &[&str]) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let kind = entry.file_type().unwrap();
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            if !skip.iter().any(|name| entry.file_name() == **name) {
                copy_tree(&entry.path(), &target, skip);
            }
        } else if kind.is_file() {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}
