//! Regression tests for damaged or crafted state under `.resolve/`, each found by the
//! `store_readers` fuzz target (its reproducers live in `fuzz/regressions/store_readers/`):
//! recovery and the store refuse what they cannot trust, name the file, keep it, and never
//! reach outside the workspace.

#![expect(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] functions fail the test by panicking"
)]

use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use resolve_store::{JOURNAL_DIR, Origin, STATE_DIR, Store, StoreError, content_hash};
use serde_json::{Value, json};

use super::common::{change_set, new_action, stage_as_agent, store_at, store_holding, update};
use resolve_store::StoredAction;
use resolve_test_support::TestDir;

/// `<tmp>/ws` with `b.txt`, beside `<tmp>/outside/victim.txt`.
struct Fixture {
    _dir: TestDir,
    root: PathBuf,
    victim: PathBuf,
    store: Store,
}

fn fixture() -> Fixture {
    let dir = TestDir::with_files([("b.txt", "beta\n")]);
    let root = dir.root().to_path_buf();
    let victim = dir.outside().join("victim.txt");
    std::fs::write(&victim, "keep me\n").unwrap();
    let store = store_at(&root);
    Fixture {
        _dir: dir,
        root,
        victim,
        store,
    }
}

fn journal_dir(root: &Path) -> PathBuf {
    root.join(STATE_DIR).join(JOURNAL_DIR)
}

/// An uncommitted journal of an apply of `b.txt` ("beta\n" → "BETA\n"), with `edit` applied.
fn write_journal(root: &Path, backup: &[u8], edit: impl FnOnce(&mut Value)) -> PathBuf {
    let dir = journal_dir(root);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("backup-0"), backup).unwrap();
    let mut journal = json!({
        "version": 1, "purpose": "apply", "action": "pending-action:write:1", "committed": false,
        "entries": [{"path": "b.txt", "temp": ".b.txt.resolve-1-1.tmp", "backup": "backup-0",
                     "originalHash": content_hash(b"beta\n"), "newHash": content_hash(b"BETA\n"),
                     "mode": 33188}],
        "createdDirs": [], "state": []
    });
    edit(&mut journal);
    let path = dir.join("journal.json");
    std::fs::write(&path, journal.to_string()).unwrap();
    path
}

#[test]
fn a_journal_naming_a_file_outside_the_workspace_is_refused_and_nothing_outside_is_touched() {
    // Before the fix, rollback removed the journal's "temp file": here, a file outside.
    for (field, value) in [
        ("temp", "../outside/victim.txt"),
        ("path", "../outside/victim.txt"),
        ("temp", "/etc/hostname-resolve-test"),
        ("backup", "../../outside/victim.txt"),
    ] {
        let fx = fixture();
        let journal = write_journal(&fx.root, b"beta\n", |journal| {
            journal["entries"][0][field] = json!(value);
        });
        let error = fx.store.recover().unwrap_err();
        match &error {
            StoreError::CorruptState { path, .. } => assert_eq!(path, &journal),
            other => panic!("{field}={value}: expected corrupt state, got {other}"),
        }
        assert!(error.to_string().contains(value), "{error}");
        assert_eq!(std::fs::read_to_string(&fx.victim).unwrap(), "keep me\n");
        assert!(journal.exists(), "the refused journal was dropped");
    }
}

#[test]
fn a_journal_state_path_leaving_the_state_directory_is_refused() {
    let fx = fixture();
    let journal = write_journal(&fx.root, b"beta\n", |journal| {
        journal["committed"] = json!(true);
        journal["state"] = json!([{"op": "remove", "path": "../../outside/victim.txt"}]);
    });
    assert!(matches!(
        fx.store.recover().unwrap_err(),
        StoreError::CorruptState { path, .. } if path == journal
    ));
    assert_eq!(std::fs::read_to_string(&fx.victim).unwrap(), "keep me\n");
}

#[test]
fn a_backup_that_is_not_the_original_is_never_restored() {
    // Interrupted after `b.txt` was renamed into place; the backup is truncated.
    let fx = fixture();
    std::fs::write(fx.root.join("b.txt"), "BETA\n").unwrap();
    let journal = write_journal(&fx.root, b"be", |_| {});
    let error = fx.store.recover().unwrap_err();
    match &error {
        StoreError::CorruptState { path, reason } => {
            assert_eq!(path, &journal_dir(&fx.root).join("backup-0"));
            assert!(reason.contains("b.txt"), "{reason}");
        }
        other => panic!("expected corrupt state, got {other}"),
    }
    assert_eq!(
        std::fs::read_to_string(fx.root.join("b.txt")).unwrap(),
        "BETA\n"
    );
    assert!(journal.exists());

    // With the real backup, the same journal rolls back.
    std::fs::write(journal_dir(&fx.root).join("backup-0"), "beta\n").unwrap();
    let message = fx.store.recover().unwrap().unwrap();
    assert!(message.starts_with("Rolled back"), "{message}");
    assert_eq!(
        std::fs::read_to_string(fx.root.join("b.txt")).unwrap(),
        "beta\n"
    );
}

/// Stage a change to `b.txt`, let `damage` rewrite its pending record, then apply it and list
/// the pending actions: both must fail as corrupt state naming the record, with `b.txt`
/// untouched. The record's path and the two reasons.
fn refusals_of_a_damaged_record(
    fx: &Fixture,
    damage: impl FnOnce(&Path),
) -> (PathBuf, Vec<String>) {
    let set = change_set([("b.txt", update("beta\n", "BETA\n"))]);
    let record = fx
        .store
        .stage(new_action(Origin::Cli, "write", "Write: b.txt"), set)
        .unwrap();
    let file = fx.root.join(STATE_DIR).join("pending/1.json");
    damage(&file);
    let reasons = [
        fx.store.apply(&record.id, None, "r", None).unwrap_err(),
        fx.store.pending().unwrap_err(),
    ]
    .into_iter()
    .map(|error| match error {
        StoreError::CorruptState { path, reason } => {
            assert_eq!(path, file);
            reason
        }
        other => panic!("expected corrupt state, got {other}"),
    })
    .collect();
    assert_eq!(
        std::fs::read_to_string(fx.root.join("b.txt")).unwrap(),
        "beta\n"
    );
    (file, reasons)
}

#[test]
fn a_record_whose_seq_disagrees_with_its_file_name_is_corrupt_not_applied() {
    // Before the fix, applying it wrote `history/7.json`, removed the missing `pending/7.json`
    // and left `pending/1.json`: the action was applied yet stayed pending.
    let fx = fixture();
    let (_, reasons) = refusals_of_a_damaged_record(&fx, |file| {
        let mut value: Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
        value["seq"] = json!(7);
        std::fs::write(file, value.to_string()).unwrap();
    });
    for reason in reasons {
        assert!(reason.contains("does not match its name"), "{reason}");
    }
    assert!(!fx.root.join(STATE_DIR).join("history/7.json").exists());
}

#[test]
fn a_truncated_record_is_corrupt_state_naming_it_and_is_kept() {
    // Records are read whole and parsed from memory; a cut-off text is the record's fault
    // (corrupt state naming it), not an I/O error, and nothing is written.
    let fx = fixture();
    let mut cut = Vec::new();
    let (file, _) = refusals_of_a_damaged_record(&fx, |file| {
        let text = std::fs::read(file).unwrap();
        cut = text[..text.len() / 2].to_vec();
        std::fs::write(file, &cut).unwrap();
    });
    assert_eq!(std::fs::read(&file).unwrap(), cut);
}

#[test]
fn an_exhausted_id_counter_is_a_clear_error_not_an_overflow() {
    let fx = fixture();
    fx.store.next_seq().unwrap();
    let counters = fx.root.join(STATE_DIR).join("counters.json");
    std::fs::write(&counters, format!("{{\"nextSeq\": {}}}", u64::MAX)).unwrap();
    match fx.store.next_seq().unwrap_err() {
        StoreError::CorruptState { path, reason } => {
            assert_eq!(path, counters);
            assert!(reason.contains("no id"), "{reason}");
        }
        other => panic!("expected corrupt state, got {other}"),
    }
    // A record file named after the largest seq is refused the same way.
    std::fs::write(&counters, "{\"nextSeq\": 3}").unwrap();
    let pending = fx.root.join(STATE_DIR).join("pending");
    std::fs::write(pending.join(format!("{}.json", u64::MAX)), "{}").unwrap();
    assert!(matches!(
        fx.store.next_seq().unwrap_err(),
        StoreError::CorruptState { .. }
    ));
}

#[test]
fn a_record_of_another_format_version_is_refused_naming_the_version() {
    let (dir, store) = store_holding(&[("a.rs", "old a\n")]);
    let record = stage_as_agent(&store, change_set([("a.rs", update("old a\n", "new a\n"))]));
    let file = dir
        .path()
        .join(STATE_DIR)
        .join(format!("pending/{}.json", record.seq));
    let mut value: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(value["version"], 1, "records carry their format version");
    for version in [json!(2), serde_json::Value::Null] {
        match version {
            serde_json::Value::Null => value.as_object_mut().unwrap().remove("version"),
            other => value
                .as_object_mut()
                .unwrap()
                .insert("version".into(), other),
        };
        std::fs::write(&file, value.to_string()).unwrap();
        for error in [
            store.pending().unwrap_err(),
            store.pending_summaries().unwrap_err(),
            store.apply(&record.id, None, "r", None).unwrap_err(),
        ] {
            match &error {
                StoreError::CorruptState { path, reason } => {
                    assert_eq!(path, &file);
                    assert!(reason.contains("version"), "{reason}");
                }
                other => panic!("expected corrupt state, got {other}"),
            }
        }
    }
    assert!(file.exists(), "the record was kept as found");
    assert_eq!(dir.try_read("a.rs").as_deref(), Some("old a\n"));
}

#[test]
fn a_journal_of_another_version_is_refused_and_kept() {
    let (dir, store) = store_holding(&[("a.rs", "new a\n")]);
    let journal_dir = format!("{STATE_DIR}/{JOURNAL_DIR}");
    let journal = json!({
        "version": 2, "purpose": "apply", "action": "pending-action:edit:3", "committed": true,
        "entries": [], "createdDirs": [], "state": []
    });
    dir.write(&format!("{journal_dir}/journal.json"), journal.to_string());
    match store.recover().unwrap_err() {
        StoreError::CorruptState { reason, .. } => {
            assert_eq!(reason, "unknown journal version 2");
        }
        other => panic!("expected corrupt state, got {other}"),
    }
    assert!(dir.path().join(&journal_dir).join("journal.json").exists());
}

#[test]
fn a_damaged_content_blob_fails_the_apply_and_touches_nothing() {
    let (dir, store) = store_holding(&[("a.rs", "old a\n"), ("b.rs", "old b\n")]);
    let record = stage_as_agent(
        &store,
        change_set([
            ("a.rs", update("old a\n", "new a\n")),
            ("b.rs", update("old b\n", "new b\n")),
        ]),
    );
    let blob = dir
        .path()
        .join(STATE_DIR)
        .join("blobs")
        .join(content_hash(b"new b\n"));
    std::fs::write(&blob, "tampered\n").unwrap();
    let error = store.apply(&record.id, None, "r", None).unwrap_err();
    assert!(
        matches!(error, StoreError::CorruptState { ref path, .. } if *path == blob),
        "{error}"
    );
    assert_eq!(dir.try_read("a.rs").as_deref(), Some("old a\n"));
    assert_eq!(dir.try_read("b.rs").as_deref(), Some("old b\n"));
    assert!(matches!(
        store.get(&record.id).unwrap(),
        StoredAction::Pending(_)
    ));
}
