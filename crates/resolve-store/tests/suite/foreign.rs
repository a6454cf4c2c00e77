//! Foreign records: what this user's `resolve` did not sign (a cloned `.resolve/`) is marked
//! foreign when read, stays foreign when written back, and its payload runs only through a
//! store accepting foreign actions.

#![expect(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] functions fail the test by panicking"
)]

use pretty_assertions::assert_eq;
use resolve_store::{Origin, RecordKey, STATE_DIR, Store, StoreError, Workspace};
use serde_json::{Value, json};

use super::common::{change_set, new_action, stage_create, update};

fn store_with(root: &std::path::Path, key: u8) -> Store {
    Store::open(Workspace::open(root).unwrap()).with_record_key(RecordKey::from_bytes([key; 32]))
}

fn record_file(root: &std::path::Path, seq: u64) -> std::path::PathBuf {
    root.join(STATE_DIR)
        .join("pending")
        .join(format!("{seq}.json"))
}

#[test]
fn a_record_this_user_staged_is_own_and_one_signed_by_another_key_is_foreign() {
    let dir = tempfile::tempdir().unwrap();
    let id = stage_create(&store_with(dir.path(), 7), Origin::Agent, "a.txt", "a\n").id;
    let own = store_with(dir.path(), 7)
        .pending_record(&id)
        .unwrap()
        .unwrap();
    assert!(!own.foreign);
    assert!(own.mac.is_some());
    let other = store_with(dir.path(), 8);
    assert!(other.pending_record(&id).unwrap().unwrap().foreign);
    let error = other.apply(&id, None, "go", None).unwrap_err();
    assert!(matches!(error, StoreError::ForeignAction { .. }), "{error}");
    assert!(error.is_tool_error());
    assert!(
        error
            .to_string()
            .contains(&format!("resolve apply --id {id}")),
        "{error}"
    );
    assert!(!dir.path().join("a.txt").exists(), "nothing was written");
}

#[test]
fn a_signed_record_whose_change_set_was_edited_is_foreign() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with(dir.path(), 7);
    let id = stage_create(&store, Origin::Agent, "a.txt", "a\n").id;
    let path = record_file(dir.path(), 1);
    let mut record: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let files = record["changeSet"]["files"].as_object_mut().unwrap();
    let change = files.remove("a.txt").unwrap();
    files.insert("evil.sh".into(), change);
    std::fs::write(&path, serde_json::to_vec(&record).unwrap()).unwrap();
    assert!(store.pending_record(&id).unwrap().unwrap().foreign);
    assert!(matches!(
        store.apply(&id, None, "go", None).unwrap_err(),
        StoreError::ForeignAction { .. }
    ));
    assert!(!dir.path().join("evil.sh").exists());
}

#[test]
fn writing_a_foreign_record_back_does_not_sign_it_and_a_store_accepting_foreign_applies_it() {
    let dir = tempfile::tempdir().unwrap();
    let id = stage_create(&store_with(dir.path(), 8), Origin::Agent, "a.txt", "a\n").id;
    let store = store_with(dir.path(), 7);
    // A failed apply moves it to the head: a write of the record, which must not sign it.
    store.bump_to_head(&id).unwrap();
    assert!(store.pending_record(&id).unwrap().unwrap().foreign);
    let record: Value =
        serde_json::from_slice(&std::fs::read(record_file(dir.path(), 1)).unwrap()).unwrap();
    assert_eq!(
        store.pending().unwrap()[0].mac.as_deref(),
        record["mac"].as_str(),
        "the foreign record keeps the signature it came with"
    );
    let outcome = store
        .accepting_foreign(true)
        .apply(&id, None, "a person named it", None)
        .unwrap();
    assert_eq!(outcome.applied_files, ["a.txt"]);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "a\n"
    );
}

#[test]
fn a_version_one_record_without_a_signature_reads_and_is_foreign() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with(dir.path(), 7);
    stage_create(&store, Origin::Agent, "seed.txt", "x\n");
    std::fs::write(
        record_file(dir.path(), 5),
        serde_json::to_vec(&json!({
            "version": 1, "id": "pending-action:write:5", "seq": 5, "origin": "agent",
            "sourceTool": "write", "label": "Write: b.txt", "createdAt": 1, "order": 5,
            "changeSet": {"files": {"b.txt": {"kind": "create", "content": "b\n"}}},
            "previewText": "innocent", "details": null, "fingerprint": "f"
        }))
        .unwrap(),
    )
    .unwrap();
    let pending = store.pending().unwrap();
    assert_eq!(pending[0].id, "pending-action:write:5");
    assert!(pending[0].foreign);
    assert!(!pending[1].foreign);
    // Discarding writes no file and calls nothing, so a model may drop it.
    store
        .discard("pending-action:write:5", "not mine", None)
        .unwrap();
    assert!(!dir.path().join("b.txt").exists());
}

#[test]
fn an_applied_action_recorded_under_another_key_is_undone_only_by_a_store_accepting_foreign() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "old\n").unwrap();
    let theirs = store_with(dir.path(), 8);
    let set = change_set([("a.txt", update("old\n", "new\n"))]);
    let action = new_action(Origin::Agent, "write", "Write: a.txt");
    let id = theirs.stage(action, set).unwrap().id;
    theirs.apply(&id, None, "theirs", None).unwrap();

    // The history record (and the originals it names) came with the clone: not this user's.
    let mine = store_with(dir.path(), 7);
    let error = mine.undo(&id).unwrap_err();
    assert!(matches!(error, StoreError::ForeignUndo { .. }), "{error}");
    assert!(
        error.to_string().contains(&format!("resolve undo {id}")),
        "{error}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "new\n",
        "nothing was written back"
    );
    mine.accepting_foreign(true).undo(&id).unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "old\n"
    );
}
