//! The `store_readers` target: the pending store and crash recovery reading a state file that
//! is corrupt, truncated or crafted.

use std::path::Path;
use std::time::Duration;

use resolve_edit::{
    ChangeSet, FileChange, JOURNAL_DIR, NewAction, Origin, Store, StoreError, StoredAction,
    content_hash,
};

use crate::fixture::Fixture;

/// The discarded action of the fixture (in `history/1.json`).
const DISCARDED: &str = "pending-action:write:1";
/// The pending action of the fixture (in `pending/3.json`).
const PENDING: &str = "pending-action:write:3";

/// Replace one state file of a store holding one resolved and one pending action, then use
/// the store.
///
/// Input: a header line naming the file (`journal`, `backup`, `pending`, `history`,
/// `counters`), then its new bytes. `journal` writes `.resolve/journal/journal.json` next to
/// a backup `backup-0` of `b.txt`; `backup` writes that backup next to the journal of an
/// apply interrupted after it renamed the new `b.txt` into place.
///
/// Invariants: no panic; every operation returns, and an error naming a corrupt state file
/// leaves that file in place (never silently dropped); nothing outside the workspace is
/// touched; an apply that succeeds writes exactly the change set it read and consumes the
/// action, so a second apply of it is refused; recovery restores a backup only when it holds
/// the original bytes.
pub fn store_readers(data: &[u8]) {
    let newline = data
        .iter()
        .position(|byte| *byte == b'\n')
        .unwrap_or(data.len());
    let Ok(header) = std::str::from_utf8(&data[..newline]) else {
        return;
    };
    let body = data.get(newline + 1..).unwrap_or_default();

    let fixture = Fixture::new(&[("a.txt", b"alpha\n"), ("b.txt", b"beta\n")]);
    let store = Store::open(fixture.workspace()).with_lock_timeout(Duration::from_secs(5));
    stage_fixture_actions(&store);
    let state = fixture.root().join(".resolve");
    let journal_dir = state.join(JOURNAL_DIR);
    match header.trim() {
        "journal" => {
            write_creating_dirs(&journal_dir.join("backup-0"), b"beta\n");
            write_creating_dirs(&journal_dir.join("journal.json"), body);
        }
        "backup" => {
            // Interrupted after `b.txt` was renamed into place: rollback needs the backup.
            write_creating_dirs(&fixture.root().join("b.txt"), b"BETA\n");
            write_creating_dirs(&journal_dir.join("backup-0"), body);
            write_creating_dirs(&journal_dir.join("journal.json"), &seed_journal());
        }
        "pending" => write_creating_dirs(&state.join("pending/3.json"), body),
        "history" => write_creating_dirs(&state.join("history/1.json"), body),
        "counters" => write_creating_dirs(&state.join("counters.json"), body),
        _ => return,
    }

    let check = |error: Option<&StoreError>| {
        if let Some(error) = error {
            assert!(!error.to_string().is_empty());
            if let StoreError::CorruptState { path, .. } = error {
                assert!(
                    path.exists(),
                    "`{}` was reported corrupt and then dropped",
                    path.display()
                );
            }
        }
        fixture.assert_outside_untouched();
    };
    let recovered = store.recover();
    if header.trim() == "backup" {
        // A backup is restored only when it is the original, byte for byte.
        let b = std::fs::read(fixture.root().join("b.txt")).expect("b.txt is kept");
        match &recovered {
            Ok(_) => assert_eq!(b, b"beta\n", "rollback restored a damaged backup"),
            Err(_) => assert_eq!(b, b"BETA\n", "a failed rollback changed b.txt"),
        }
    }
    check(recovered.as_ref().err());
    check(store.pending().err().as_ref());
    check(store.history().err().as_ref());
    check(store.get(DISCARDED).err().as_ref());
    let staged = store.get(PENDING);
    check(staged.as_ref().err());
    let applied = store.apply(PENDING, None, "fuzz", None);
    if let (Ok(outcome), Ok(StoredAction::Pending(record))) = (&applied, &staged) {
        for path in &outcome.applied_files {
            let content = record
                .change_set
                .get(path)
                .and_then(FileChange::new_content);
            let absolute = fixture.root().join(path);
            assert_eq!(
                std::fs::read(&absolute).ok(),
                content.map(|content| store
                    .blobs()
                    .read(content)
                    .expect("an applied content reads back")
                    .into_owned()),
                "`{path}` does not hold what the applied change set says"
            );
        }
        assert!(
            !store
                .pending()
                .map(|records| records.iter().any(|record| record.id == PENDING))
                .unwrap_or(false),
            "an applied action is still pending"
        );
        assert!(
            matches!(
                store.apply(PENDING, None, "again", None),
                Err(StoreError::NotPending { .. })
            ),
            "an applied action could be applied a second time"
        );
    }
    check(applied.as_ref().err());
    check(store.next_seq().err().as_ref());
    check(store.undo(PENDING).err().as_ref());
}

/// `history/1.json` (a discarded write of `a.txt`) and `pending/3.json` (an update of `b.txt`
/// plus a new `c.txt`).
fn stage_fixture_actions(store: &Store) {
    let mut first = ChangeSet::new();
    first.insert(
        "a.txt",
        FileChange::update(content_hash(b"alpha\n"), "ALPHA\n".into(), 1),
    );
    let record = store
        .stage(action(Origin::Cli, "Write: a.txt"), first)
        .expect("staging the first action");
    assert_eq!(record.id, DISCARDED);
    store
        .discard(DISCARDED, "seed", None)
        .expect("discarding the first action");
    let mut second = ChangeSet::new();
    second.insert(
        "b.txt",
        FileChange::update(content_hash(b"beta\n"), "BETA\n".into(), 1),
    );
    second.insert(
        "c.txt",
        FileChange::Create {
            content: "gamma\n".into(),
        },
    );
    let record = store
        .stage(action(Origin::Agent, "Write: b.txt"), second)
        .expect("staging the second action");
    assert_eq!(record.id, PENDING);
}

/// A `write` of the fixture's, staged by `origin` under `label`.
fn action(origin: Origin, label: &str) -> NewAction {
    NewAction {
        origin,
        source_tool: "write".into(),
        label: label.into(),
        preview_text: "preview".into(),
        details: serde_json::Value::Null,
    }
}

/// An uncommitted journal of applying the pending action, before any rename.
fn seed_journal() -> Vec<u8> {
    serde_json::json!({
        "version": 1,
        "purpose": "apply",
        "action": PENDING,
        "committed": false,
        "entries": [
            {"path": "b.txt", "temp": ".b.txt.resolve-1-1.tmp", "backup": "backup-0",
             "originalHash": content_hash(b"beta\n"), "newHash": content_hash(b"BETA\n"),
             "mode": 33188},
            {"path": "c.txt", "temp": ".c.txt.resolve-1-1.tmp", "backup": null,
             "originalHash": null, "newHash": content_hash(b"gamma\n"), "mode": null}
        ],
        "createdDirs": [],
        "state": [
            {"op": "write", "path": "history/3.json", "content": {}},
            {"op": "remove", "path": "pending/3.json"}
        ]
    })
    .to_string()
    .into_bytes()
}

/// Write `bytes` to `path`, creating its parent directories.
fn write_creating_dirs(path: &Path, bytes: &[u8]) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("a state directory");
    }
    std::fs::write(path, bytes).expect("a state file");
}
