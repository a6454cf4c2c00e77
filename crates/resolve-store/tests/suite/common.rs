//! What the store's test modules share: a store over a fresh test workspace, change builders,
//! staging, and the three-file action the crash tests apply, undo and check.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] functions fail the test by panicking"
)]

use resolve_store::{
    ChangeSet, FileChange, NewAction, Origin, RebaseConflict, RecordKey, StagedRecord, Store,
    Workspace, content_hash,
};
use resolve_test_support::TestDir;
use serde_json::json;

/// Contents of `src/a.rs` before the three-file action.
pub const A_OLD: &str = "fn a() {}\n";
/// Contents of `src/a.rs` after the three-file action.
pub const A_NEW: &str = "fn a() { 1 }\n";
/// Contents of `b.txt`, which the three-file action deletes.
pub const B_OLD: &str = "obsolete\n";
/// Contents of `src/new/c.txt`, which the three-file action creates.
pub const C_NEW: &str = "created\n";

/// A store over `root`, signing with the tests' record key.
pub fn store_at(root: impl AsRef<std::path::Path>) -> Store {
    Store::open(Workspace::open(root.as_ref()).unwrap())
        .with_record_key(RecordKey::from_bytes([7; 32]))
}

/// A fresh test workspace and a store over its root.
pub fn store_in_temp() -> (TestDir, Store) {
    let dir = TestDir::new();
    let store = store_at(dir.root());
    (dir, store)
}

/// A fresh test workspace holding `files` (path, text), and a store over its root.
pub fn store_holding(files: &[(&str, &str)]) -> (TestDir, Store) {
    let (dir, store) = store_in_temp();
    for (path, text) in files {
        dir.write(path, text);
    }
    (dir, store)
}

/// A change of a file from `base` to `content`.
pub fn update(base: &str, content: &str) -> FileChange {
    FileChange::update(content_hash(base.as_bytes()), content.into(), 1)
}

/// A new file holding `content`.
pub fn create(content: &str) -> FileChange {
    FileChange::Create {
        content: content.into(),
    }
}

/// The deletion of a file holding `base`.
pub fn delete(base: &str) -> FileChange {
    FileChange::Delete {
        base_hash: content_hash(base.as_bytes()),
    }
}

/// A change set of the given changes.
pub fn change_set(changes: impl IntoIterator<Item = (&'static str, FileChange)>) -> ChangeSet {
    let mut set = ChangeSet::new();
    for (path, change) in changes {
        set.insert(path, change);
    }
    set
}

/// Stage `set` as the agent.
pub fn stage_as_agent(store: &Store, set: ChangeSet) -> StagedRecord {
    stage_as(store, Origin::Agent, set)
}

/// An action of `source_tool` for `origin` labelled `label`, previewed as `preview`, without
/// details.
pub fn new_action(origin: Origin, source_tool: &str, label: &str) -> NewAction {
    NewAction {
        origin,
        source_tool: source_tool.into(),
        label: label.into(),
        preview_text: "preview".into(),
        details: serde_json::Value::Null,
    }
}

/// Stage `set` for `origin`.
pub fn stage_as(store: &Store, origin: Origin, set: ChangeSet) -> StagedRecord {
    let action = NewAction {
        details: json!({"k": 1}),
        ..new_action(origin, "edit", "Edit: test")
    };
    store.stage(action, set).unwrap()
}

/// Stage the creation of `path` holding `content` by the `write` tool for `origin`.
pub fn stage_create(store: &Store, origin: Origin, path: &str, content: &str) -> StagedRecord {
    let mut set = ChangeSet::new();
    set.insert(path, create(content));
    let action = new_action(origin, "write", &format!("Write: {path}"));
    store.stage(action, set).unwrap()
}

/// A rebase conflict at line 2: the current `TWO` against the preview's and the base's `two`.
pub fn line_two_conflict() -> RebaseConflict {
    RebaseConflict {
        current_line: 2,
        current: b"TWO\n".to_vec(),
        preview_line: 2,
        preview: b"two\n".to_vec(),
        base: b"two\n".to_vec(),
    }
}

/// The ids of the history entries, newest first.
pub fn history_ids(store: &Store) -> Vec<String> {
    store
        .history()
        .unwrap()
        .into_iter()
        .map(|entry| entry.action.id)
        .collect()
}

/// A workspace with a 3-file action staged: update `src/a.rs` (mode 0o755), delete `b.txt`,
/// create `src/new/c.txt` in a directory that does not exist yet.
pub fn three_file_action() -> (TestDir, Store, String) {
    let (dir, store) = store_holding(&[("src/a.rs", A_OLD)]);
    dir.set_mode("src/a.rs", 0o755);
    dir.write("b.txt", B_OLD);
    let record = stage_as_agent(
        &store,
        change_set([
            ("src/a.rs", update(A_OLD, A_NEW)),
            ("b.txt", delete(B_OLD)),
            ("src/new/c.txt", create(C_NEW)),
        ]),
    );
    (dir, store, record.id)
}

/// Whether recovery's `message` says it rolled back an interrupted `what` (`apply`, `check
/// trial`) of the action `id`, which is still pending.
pub fn rolled_back_and_pending(message: Option<&str>, what: &str, id: &str) -> bool {
    message.is_some_and(|text| {
        text.starts_with(&format!("Rolled back an interrupted {what} of `{id}`"))
            && text.ends_with("it is still pending.")
    })
}

/// Temp files anywhere in the root, and anything left in the journal directory.
pub fn leftovers(root: &std::path::Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                dirs.push(path);
            } else if name.ends_with(".tmp")
                || path.parent().unwrap().ends_with(resolve_store::JOURNAL_DIR)
            {
                found.push(path.display().to_string());
            }
        }
    }
    found
}
