//! A `.resolve/` may arrive with `git clone`, so whatever it holds is untrusted: random layouts
//! of symlinks at state paths (to a directory or file outside the root, inside it, to
//! `/dev/zero`, dangling), planted before the workspace is opened or after, never lead the
//! store's open, recovery, clean-up, staging or apply to write, create or remove anything
//! outside the root, and a state directory holding a link is refused as corrupt.

#![expect(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] functions fail the test by panicking"
)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use proptest::prelude::*;
use resolve_store::{Origin, Store, StoreError, Workspace};

use super::common::{change_set, create, new_action, update};

/// State paths a link may be planted at (relative to the root).
const STATE_PATHS: &[&str] = &[
    ".resolve",
    ".resolve/journal",
    ".resolve/journal/journal.json",
    ".resolve/journal/backup-0",
    ".resolve/journal/state-0.json",
    ".resolve/pending",
    ".resolve/pending/1.json",
    ".resolve/history",
    ".resolve/history/1.json",
    ".resolve/notes",
    ".resolve/blobs",
    ".resolve/blobs/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    ".resolve/lock",
    ".resolve/counters.json",
    ".resolve/.gitignore",
    ".resolve/config.toml",
    ".resolve/h",
];

/// Where a planted link points.
#[derive(Debug, Clone, Copy)]
enum Target {
    /// The victim directory outside the root.
    OutsideDir,
    /// A victim file outside the root.
    OutsideFile,
    /// A directory inside the root.
    InsideDir,
    /// A file inside the root.
    InsideFile,
    /// `/dev/zero`: endless bytes.
    DevZero,
    /// Nothing, outside the root.
    Dangling,
    /// The parent of the root, relatively (`../..`-style, as a committed link would).
    Up,
}

fn target() -> impl Strategy<Value = Target> {
    prop_oneof![
        Just(Target::OutsideDir),
        Just(Target::OutsideFile),
        Just(Target::InsideDir),
        Just(Target::InsideFile),
        Just(Target::DevZero),
        Just(Target::Dangling),
        Just(Target::Up),
    ]
}

/// `<tmp>/ws` (the root, with `src/lib.rs`) beside `<tmp>/victim/` and `<tmp>/victim.txt`.
struct Scene {
    dir: tempfile::TempDir,
}

impl Scene {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let write = |relative: &str, content: &str| {
            let path = dir.path().join(relative);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, content).unwrap();
        };
        write("ws/src/lib.rs", "fn a() {}\n");
        write("victim.txt", "keep me\n");
        write("victim/a.txt", "alpha\n");
        write("victim/journal.json", "{}");
        write("victim/backup-0", "backup\n");
        write(&format!("victim/{}", "b".repeat(64)), "blob-named\n");
        Self { dir }
    }

    fn root(&self) -> PathBuf {
        self.dir.path().join("ws")
    }

    /// Every entry under the scene outside the root: path → content (`None` for a directory
    /// or link), to compare before and after.
    fn outside(&self) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
        let mut seen = BTreeMap::new();
        let mut unvisited = vec![self.dir.path().to_path_buf()];
        while let Some(dir) = unvisited.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let entry = entry.unwrap();
                let path = entry.path();
                if path == self.root() {
                    continue;
                }
                let kind = entry.file_type().unwrap();
                if kind.is_dir() {
                    unvisited.push(path.clone());
                    seen.insert(path, None);
                } else if kind.is_file() {
                    let bytes = std::fs::read(&path).unwrap();
                    seen.insert(path, Some(bytes));
                } else {
                    seen.insert(path, None);
                }
            }
        }
        seen
    }

    /// Plant a link at `relative` (under the root) to `target`, creating real parent
    /// directories; `false` (nothing planted) when something already stands there or on the
    /// way (a link planted earlier must never be written through by the test itself).
    fn plant(&self, relative: &str, target: Target) -> bool {
        let root = self.root();
        let path = root.join(relative);
        let mut ancestor = path.parent().unwrap().to_path_buf();
        while ancestor != root {
            if std::fs::symlink_metadata(&ancestor).is_ok_and(|meta| !meta.is_dir()) {
                return false;
            }
            ancestor.pop();
        }
        if std::fs::symlink_metadata(&path).is_ok() {
            return false;
        }
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let depth = relative.matches('/').count() + 1;
        let to: PathBuf = match target {
            Target::OutsideDir => self.dir.path().join("victim"),
            Target::OutsideFile => self.dir.path().join("victim.txt"),
            Target::InsideDir => root.join("src"),
            Target::InsideFile => root.join("src/lib.rs"),
            Target::DevZero => PathBuf::from("/dev/zero"),
            Target::Dangling => self.dir.path().join("victim/nothing-here"),
            Target::Up => "../".repeat(depth).into(),
        };
        std::os::unix::fs::symlink(to, path).unwrap();
        true
    }
}

/// Stage a write of `new.txt` and an edit of `src/lib.rs`.
fn try_stage(store: &Store) -> Result<String, StoreError> {
    let change_set = change_set([
        ("new.txt", create("new\n")),
        ("src/lib.rs", update("fn a() {}\n", "fn b() {}\n")),
    ]);
    let action = new_action(Origin::Cli, "write", "Write: new.txt");
    store.stage(action, change_set).map(|record| record.id)
}

/// Every store path an operation takes, each allowed to fail.
fn exercise(root: &Path) {
    let Ok(workspace) = Workspace::open(root) else {
        return;
    };
    let store = Store::open(workspace).with_lock_timeout(Duration::from_millis(200));
    let _ = store.recover();
    let _ = store.pending();
    let _ = store.collect_garbage(Duration::ZERO);
    if let Ok(id) = try_stage(&store) {
        let _ = store.apply(&id, None, "go", None);
    }
    let _ = store.history();
}

/// A committed journal whose `place` step reaches through `.resolve/h`.
fn plant_journal(root: &Path) {
    let journal = root.join(".resolve/journal");
    if std::fs::symlink_metadata(root.join(".resolve")).is_ok_and(|meta| !meta.is_dir())
        || std::fs::symlink_metadata(&journal).is_ok_and(|meta| !meta.is_dir())
    {
        return;
    }
    std::fs::create_dir_all(&journal).unwrap();
    let place = |name: &str, content: &[u8]| {
        let path = journal.join(name);
        if std::fs::symlink_metadata(&path).is_err() {
            std::fs::write(path, content).unwrap();
        }
    };
    place("state-0.json", b"payload\n");
    place(
        "journal.json",
        serde_json::json!({
            "version": 1, "purpose": "apply", "action": "pending-action:write:1",
            "committed": true, "entries": [], "createdDirs": [],
            "state": [{"op": "place", "path": "h/victim.txt", "staged": "state-0.json"}]
        })
        .to_string()
        .as_bytes(),
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn no_symlink_layout_under_the_state_directory_leads_to_a_change_outside_the_root(
        links in proptest::collection::vec((0..STATE_PATHS.len(), target()), 1..4),
        staged_first in any::<bool>(),
        crafted_journal in any::<bool>(),
        planted_after_open in any::<bool>(),
    ) {
        let scene = Scene::new();
        let root = scene.root();
        if staged_first {
            let store = Store::open(Workspace::open(&root).unwrap());
            try_stage(&store).unwrap();
        }
        if crafted_journal {
            plant_journal(&root);
        }
        let opened = planted_after_open.then(|| Workspace::open(&root).unwrap());
        let mut planted = Vec::new();
        for (index, target) in links {
            if scene.plant(STATE_PATHS[index], target) {
                planted.push(STATE_PATHS[index]);
            }
        }
        let before = scene.outside();
        exercise(&root);
        if let Some(workspace) = opened {
            // A long-running process that opened the workspace before the links appeared.
            let store = Store::open(workspace).with_lock_timeout(Duration::from_millis(200));
            let _ = store.recover();
            let _ = store.collect_garbage(Duration::ZERO);
            if let Ok(id) = try_stage(&store) {
                let _ = store.apply(&id, None, "go", None);
            }
        }
        prop_assert_eq!(scene.outside(), before, "planted {:?}", planted);
        if !planted.is_empty() {
            let error = Workspace::open(&root).unwrap_err();
            prop_assert!(
                matches!(error, StoreError::CorruptState { .. }),
                "planted {:?}: {}", planted, error
            );
            prop_assert!(error.to_string().contains("symlink"), "{}", error);
        }
    }
}
