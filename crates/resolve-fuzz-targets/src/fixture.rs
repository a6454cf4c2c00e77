//! A workspace in a fresh temporary directory, with a sibling directory outside it holding a
//! secret, and snapshots of both, so a target can prove that nothing outside the workspace was
//! read, changed or created.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use resolve_edit::{STATE_DIR, Workspace};

/// How many fixtures this process made; part of each secret.
static FIXTURES: AtomicU64 = AtomicU64::new(0);

/// The content of the file outside the workspace, fresh for every fixture (so the fuzzer
/// cannot learn it and echo it back through the arguments); no tool output may contain it.
fn fresh_secret() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.subsec_nanos());
    let count = FIXTURES.fetch_add(1, Ordering::Relaxed);
    format!("TOP-SECRET-{}-{count}-{nanos}", std::process::id())
}

/// One entry of a directory tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Entry {
    File(Vec<u8>),
    Dir,
    Symlink(PathBuf),
}

/// A tree by root-relative, `/`-separated path.
pub(crate) type Tree = BTreeMap<String, Entry>;

/// `<tmp>/ws` (the workspace root) beside `<tmp>/outside/secret.txt`.
pub(crate) struct Fixture {
    _dir: tempfile::TempDir,
    top: PathBuf,
    root: PathBuf,
    outside: PathBuf,
    secret: String,
}

impl Fixture {
    /// A workspace holding `files` (path, bytes; directories are created), plus the symlinks
    /// `link` → the outside directory, `link_secret.txt` → the secret, `inner_link.txt` →
    /// `a.txt`, `alias.rs` → `src/lib.rs` and `dangling_out.txt` → `../outside/new.txt`
    /// (which does not exist).
    pub(crate) fn new(files: &[(&str, &[u8])]) -> Self {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let top = dir
            .path()
            .canonicalize()
            .expect("a canonical temporary directory");
        let root = top.join("ws");
        let outside = top.join("outside");
        std::fs::create_dir_all(&root).expect("the workspace root");
        std::fs::create_dir_all(&outside).expect("the outside directory");
        let secret = fresh_secret();
        std::fs::write(outside.join("secret.txt"), format!("{secret}\n")).expect("the secret");
        for (path, bytes) in files {
            let path = root.join(path);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).expect("a fixture directory");
            }
            std::fs::write(path, bytes).expect("a fixture file");
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::symlink;
            symlink(&outside, root.join("link")).expect("a symlink to the outside");
            symlink(outside.join("secret.txt"), root.join("link_secret.txt"))
                .expect("a symlink to the secret");
            symlink("a.txt", root.join("inner_link.txt")).expect("an inner symlink");
            symlink("src/lib.rs", root.join("alias.rs")).expect("an alias (dangling if absent)");
            symlink("../outside/new.txt", root.join("dangling_out.txt"))
                .expect("a dangling symlink to the outside");
        }
        Self {
            _dir: dir,
            top,
            root,
            outside,
            secret,
        }
    }

    /// The content of the file outside the workspace.
    pub(crate) fn secret(&self) -> &str {
        &self.secret
    }

    /// The workspace root.
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// The workspace, opened.
    pub(crate) fn workspace(&self) -> Workspace {
        Workspace::open(&self.root).expect("the fixture workspace opens")
    }

    /// Every entry under the root except `.resolve/`.
    pub(crate) fn snapshot(&self) -> Tree {
        let mut tree = Tree::new();
        walk(&self.root, "", &mut tree);
        tree.remove(STATE_DIR);
        tree.retain(|path, _| !path.starts_with(&format!("{STATE_DIR}/")));
        tree
    }

    /// Panic unless the outside directory holds exactly the secret and nothing appeared next
    /// to the workspace.
    #[track_caller]
    pub(crate) fn assert_outside_untouched(&self) {
        let mut outside = Tree::new();
        walk(&self.outside, "", &mut outside);
        assert_eq!(
            outside,
            Tree::from([(
                "secret.txt".to_owned(),
                Entry::File(format!("{}\n", self.secret).into_bytes())
            )]),
            "something outside the workspace changed"
        );
        let mut beside: Vec<String> = std::fs::read_dir(&self.top)
            .expect("the fixture's top directory")
            .map(|entry| {
                entry
                    .expect("a directory entry")
                    .file_name()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        beside.sort();
        assert_eq!(
            beside,
            ["outside", "ws"],
            "something was created next to the workspace"
        );
    }
}

/// Only the files and symlinks of `tree` (an apply may leave directories it created).
pub(crate) fn files_only(tree: &Tree) -> Tree {
    tree.iter()
        .filter(|(_, entry)| !matches!(entry, Entry::Dir))
        .map(|(path, entry)| (path.clone(), entry.clone()))
        .collect()
}

fn walk(dir: &Path, prefix: &str, tree: &mut Tree) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let entry = entry.expect("a directory entry");
        let name = entry.file_name().to_string_lossy().into_owned();
        let relative = if prefix.is_empty() {
            name
        } else {
            format!("{prefix}/{name}")
        };
        let path = entry.path();
        let kind = entry.file_type().expect("a file type");
        if kind.is_symlink() {
            let target = std::fs::read_link(&path).expect("a symlink target");
            tree.insert(relative, Entry::Symlink(target));
        } else if kind.is_dir() {
            tree.insert(relative.clone(), Entry::Dir);
            walk(&path, &relative, tree);
        } else {
            let bytes = std::fs::read(&path).expect("a file's bytes");
            tree.insert(relative, Entry::File(bytes));
        }
    }
}
