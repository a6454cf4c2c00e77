//! The durable pending store and its transactional apply, through the public API.

#![expect(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] functions fail the test by panicking"
)]

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use pretty_assertions::assert_eq;
use resolve_store::{
    Content, JOURNAL_DIR, Origin, Outcome, STATE_DIR, Store, StoreError, StoreLock, StoredAction,
    content_hash,
};
use serde_json::json;

use super::common::{
    change_set, create, delete, leftovers, stage_as, stage_as_agent, store_at, store_holding,
    store_in_temp, update,
};

fn pending_ids(store: &Store) -> Vec<String> {
    store
        .pending()
        .unwrap()
        .into_iter()
        .map(|record| record.id)
        .collect()
}

#[test]
fn stage_then_apply_writes_exactly_the_previewed_bytes() {
    let (dir, store) = store_holding(&[("src/a.rs", "\u{feff}fn a() {}\r\nfn b() {}")]);
    let new = "\u{feff}fn a() { 1 }\r\nfn b() {}";
    let record = stage_as_agent(
        &store,
        change_set([("src/a.rs", update("\u{feff}fn a() {}\r\nfn b() {}", new))]),
    );
    assert_eq!(record.id, "pending-action:edit:1");
    assert_eq!(pending_ids(&store), vec![record.id.clone()]);
    assert_eq!(
        dir.try_read("src/a.rs").unwrap(),
        "\u{feff}fn a() {}\r\nfn b() {}",
        "staging touches no file"
    );

    let outcome = store.apply(&record.id, None, "looks right", None).unwrap();

    assert_eq!(
        std::fs::read(dir.path().join("src/a.rs")).unwrap(),
        new.as_bytes()
    );
    assert_eq!(outcome.applied_files, vec!["src/a.rs"]);
    assert!(outcome.dropped_files.is_empty());
    assert_eq!(outcome.total_replacements, 1);
    assert_eq!(outcome.record.outcome, Outcome::Applied);
    assert_eq!(outcome.record.reason, "looks right");
    assert!(store.pending().unwrap().is_empty());
    assert_eq!(
        store.get(&record.id).unwrap(),
        StoredAction::Resolved(outcome.record)
    );
}

#[test]
fn a_stale_apply_lists_every_changed_file_writes_nothing_and_stays_pending() {
    let (dir, store) = store_holding(&[("a.txt", "a"), ("b.txt", "b"), ("gone.txt", "g")]);
    let record = stage_as_agent(
        &store,
        change_set([
            ("a.txt", update("a", "A")),
            ("b.txt", update("b", "B")),
            ("gone.txt", delete("g")),
            ("new.txt", create("N")),
        ]),
    );
    dir.write("b.txt", "changed by someone");
    std::fs::remove_file(dir.path().join("gone.txt")).unwrap();
    dir.write("new.txt", "appeared");

    let err = store.apply(&record.id, None, "go", None).unwrap_err();

    match &err {
        StoreError::Stale { files } => assert_eq!(files, &["b.txt", "gone.txt", "new.txt"]),
        other => panic!("expected stale, got {other}"),
    }
    assert!(err.to_string().starts_with("Preview is stale:"), "{err}");
    assert!(err.is_tool_error());
    assert_eq!(
        dir.try_read("a.txt").unwrap(),
        "a",
        "the fresh file is not written either"
    );
    assert_eq!(dir.try_read("b.txt").unwrap(), "changed by someone");
    assert_eq!(dir.try_read("new.txt").unwrap(), "appeared");
    assert_eq!(
        store.get(&record.id).unwrap(),
        StoredAction::Pending(record.load().unwrap())
    );
    assert!(store.history().unwrap().is_empty());
}

#[test]
fn stacked_previews_of_one_file_make_the_other_stale_once_one_applies() {
    let (dir, store) = store_holding(&[("a.txt", "base")]);
    let first = stage_as_agent(&store, change_set([("a.txt", update("base", "first"))]));
    let second = stage_as_agent(&store, change_set([("a.txt", update("base", "second"))]));
    assert_eq!(
        pending_ids(&store),
        vec![second.id.clone(), first.id.clone()]
    );

    store
        .apply(&second.id, None, "take the second", None)
        .unwrap();
    let err = store
        .apply(&first.id, None, "and the first", None)
        .unwrap_err();

    assert!(
        matches!(&err, StoreError::Stale { files } if files == &["a.txt"]),
        "{err}"
    );
    assert_eq!(dir.try_read("a.txt").unwrap(), "second");
    assert_eq!(pending_ids(&store), vec![first.id]);
}

#[test]
fn only_applies_the_named_files_reports_the_dropped_ones_and_consumes_the_action() {
    let (dir, store) = store_holding(&[("a.txt", "a"), ("b.txt", "b")]);
    let record = stage_as_agent(
        &store,
        change_set([
            ("a.txt", update("a", "A")),
            ("b.txt", update("b", "B")),
            ("c.txt", create("C")),
        ]),
    );

    let outcome = store
        .apply(&record.id, Some(&["./b.txt".to_owned()]), "just b", None)
        .unwrap();

    assert_eq!(outcome.applied_files, vec!["b.txt"]);
    assert_eq!(outcome.dropped_files, vec!["a.txt", "c.txt"]);
    assert_eq!(outcome.record.dropped_files, vec!["a.txt", "c.txt"]);
    assert_eq!(dir.try_read("a.txt").unwrap(), "a");
    assert_eq!(dir.try_read("b.txt").unwrap(), "B");
    assert_eq!(dir.try_read("c.txt"), None);
    assert!(store.pending().unwrap().is_empty());
    assert!(matches!(
        store.apply(&record.id, None, "again", None).unwrap_err(),
        StoreError::NotPending { .. }
    ));
}

#[test]
fn only_refuses_a_file_outside_the_preview_and_an_empty_list() {
    let (dir, store) = store_holding(&[("a.txt", "a")]);
    let record = stage_as_agent(&store, change_set([("a.txt", update("a", "A"))]));
    assert!(matches!(
        store
            .apply(&record.id, Some(&["b.txt".to_owned()]), "r", None)
            .unwrap_err(),
        StoreError::NotInPreview { .. }
    ));
    assert!(matches!(
        store.apply(&record.id, Some(&[]), "r", None).unwrap_err(),
        StoreError::NothingSelected
    ));
    assert_eq!(dir.try_read("a.txt").unwrap(), "a");
    assert_eq!(pending_ids(&store), vec![record.id]);
}

#[test]
fn discard_leaves_files_untouched_and_records_the_reason() {
    let (dir, store) = store_holding(&[("a.txt", "a")]);
    let set = change_set([("a.txt", update("a", "A")), ("n.txt", create("n"))]);
    let record = stage_as_agent(&store, set.clone());
    let extra = json!({"note": "x"}).as_object().cloned();

    let history = store
        .discard(&record.id, "wrong approach", extra.clone())
        .unwrap();

    assert_eq!(dir.try_read("a.txt").unwrap(), "a");
    assert_eq!(dir.try_read("n.txt"), None);
    assert_eq!(history.outcome, Outcome::Discarded);
    assert_eq!(history.reason, "wrong approach");
    assert_eq!(history.extra, extra);
    assert!(history.applied_files.is_empty());
    assert!(store.pending().unwrap().is_empty());
    assert_eq!(store.history().unwrap(), vec![history.clone()]);
    assert_eq!(
        store
            .discarded_with_fingerprint(&set.fingerprint())
            .unwrap(),
        Some(history)
    );
    assert!(matches!(
        store
            .apply(&record.id, None, "changed my mind", None)
            .unwrap_err(),
        StoreError::NotPending { .. }
    ));
}

#[test]
fn history_keeps_every_reason_newest_first() {
    let (_dir, store) = store_holding(&[("a.txt", "a")]);
    let applied = stage_as_agent(&store, change_set([("a.txt", update("a", "A"))]));
    let discarded = stage_as_agent(&store, change_set([("b.txt", create("b"))]));
    // Resolved in the opposite order of staging.
    store.discard(&discarded.id, "not needed", None).unwrap();
    store
        .apply(&applied.id, None, "fixes the bug", None)
        .unwrap();

    let history = store.history().unwrap();
    let summary: Vec<(&str, Outcome, &str)> = history
        .iter()
        .map(|record| {
            (
                record.action.id.as_str(),
                record.outcome,
                record.reason.as_str(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            (applied.id.as_str(), Outcome::Applied, "fixes the bug"),
            (discarded.id.as_str(), Outcome::Discarded, "not needed"),
        ]
    );
    assert_eq!(
        store
            .discarded_with_fingerprint(&applied.fingerprint)
            .unwrap(),
        None,
        "only discarded changes are found by fingerprint"
    );
}

#[test]
fn ids_are_monotonic_and_never_reused_across_store_reopen() {
    let (dir, store) = store_in_temp();
    let first = stage_as_agent(&store, change_set([("a.txt", create("a"))]));
    let shared = store.next_seq().unwrap();
    store.discard(&first.id, "r", None).unwrap();
    drop(store);

    let reopened = store_at(dir.path());
    let second = stage_as_agent(&reopened, change_set([("a.txt", create("a"))]));
    assert_eq!(first.seq, 1);
    assert_eq!(shared, 2, "in-memory actions draw from the same counter");
    assert!(second.seq > shared, "{} after {shared}", second.seq);

    // Even a lost counter file does not bring an id back.
    std::fs::remove_file(dir.path().join(STATE_DIR).join("counters.json")).unwrap();
    let third = stage_as_agent(&reopened, change_set([("b.txt", create("b"))]));
    assert!(third.seq > second.seq);
    assert_eq!(third.id, format!("pending-action:edit:{}", third.seq));
}

#[test]
fn bump_to_head_moves_an_action_above_newer_ones() {
    let (_dir, store) = store_in_temp();
    let older = stage_as_agent(&store, change_set([("a.txt", create("a"))]));
    let newer = stage_as_agent(&store, change_set([("b.txt", create("b"))]));
    assert_eq!(
        pending_ids(&store),
        vec![newer.id.clone(), older.id.clone()]
    );
    let bumped = store.bump_to_head(&older.id).unwrap();
    assert!(bumped.order > newer.order);
    assert_eq!(pending_ids(&store), vec![older.id, newer.id]);
}

#[test]
fn pending_for_sees_only_its_own_origin() {
    let (_dir, store) = store_in_temp();
    let agent = stage_as(&store, Origin::Agent, change_set([("a.txt", create("a"))]));
    let mcp = stage_as(
        &store,
        Origin::Mcp("c1".into()),
        change_set([("b.txt", create("b"))]),
    );
    let ids = |origin: Origin| -> Vec<String> {
        store
            .pending_for(&origin)
            .unwrap()
            .into_iter()
            .map(|record| record.id)
            .collect()
    };
    assert_eq!(ids(Origin::Agent), vec![agent.id.clone()]);
    assert_eq!(ids(Origin::Mcp("c1".into())), vec![mcp.id.clone()]);
    assert!(ids(Origin::Mcp("c2".into())).is_empty());
    assert_eq!(
        pending_ids(&store),
        vec![mcp.id, agent.id],
        "the CLI sees all"
    );
}

#[test]
fn undo_restores_the_original_bytes_of_every_file() {
    let (dir, store) = store_holding(&[("a.txt", "a\r\n"), ("old.txt", "old")]);
    let record = stage_as_agent(
        &store,
        change_set([
            ("a.txt", update("a\r\n", "A\r\n")),
            ("new/n.txt", create("n")),
            ("old.txt", delete("old")),
        ]),
    );
    store.apply(&record.id, None, "r", None).unwrap();

    let undone = store.undo(&record.id).unwrap();

    assert!(undone.undone);
    assert_eq!(dir.try_read("a.txt").unwrap(), "a\r\n");
    assert_eq!(dir.try_read("old.txt").unwrap(), "old");
    assert_eq!(dir.try_read("new/n.txt"), None);
    match store.get(&record.id).unwrap() {
        StoredAction::Resolved(history) => assert!(history.undone),
        StoredAction::Pending(_) => panic!("an undone action is not pending again"),
    }
    assert!(matches!(
        store.undo(&record.id).unwrap_err(),
        StoreError::NothingToUndo {
            state: "was already undone",
            ..
        }
    ));
}

#[test]
fn undo_refuses_after_a_later_change_and_reverts_nothing() {
    let (dir, store) = store_holding(&[("a.txt", "a"), ("b.txt", "b")]);
    let record = stage_as_agent(
        &store,
        change_set([("a.txt", update("a", "A")), ("b.txt", update("b", "B"))]),
    );
    store.apply(&record.id, None, "r", None).unwrap();
    dir.write("b.txt", "B, then edited by hand");

    let err = store.undo(&record.id).unwrap_err();

    assert!(
        matches!(&err, StoreError::UndoConflict { files, .. } if files == &["b.txt"]),
        "{err}"
    );
    assert_eq!(dir.try_read("a.txt").unwrap(), "A");
    assert_eq!(dir.try_read("b.txt").unwrap(), "B, then edited by hand");
}

#[test]
fn undo_refuses_pending_discarded_and_unknown_actions() {
    let (_dir, store) = store_in_temp();
    let pending = stage_as_agent(&store, change_set([("a.txt", create("a"))]));
    let discarded = stage_as_agent(&store, change_set([("b.txt", create("b"))]));
    store.discard(&discarded.id, "r", None).unwrap();
    assert!(matches!(
        store.undo(&pending.id).unwrap_err(),
        StoreError::NothingToUndo {
            state: "is still pending",
            ..
        }
    ));
    assert!(matches!(
        store.undo(&discarded.id).unwrap_err(),
        StoreError::NothingToUndo {
            state: "was discarded",
            ..
        }
    ));
    assert!(matches!(
        store.undo("pending-action:edit:99").unwrap_err(),
        StoreError::UnknownAction { .. }
    ));
}

#[test]
fn apply_and_undo_preserve_file_permissions() {
    let (dir, store) = store_holding(&[("run.sh", "echo a"), ("secret.txt", "s")]);
    std::fs::set_permissions(
        dir.path().join("run.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    std::fs::set_permissions(
        dir.path().join("secret.txt"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    let record = stage_as_agent(
        &store,
        change_set([
            ("run.sh", update("echo a", "echo b")),
            ("secret.txt", update("s", "S")),
        ]),
    );
    store.apply(&record.id, None, "r", None).unwrap();
    assert_eq!((dir.mode("run.sh"), dir.mode("secret.txt")), (0o755, 0o600));
    store.undo(&record.id).unwrap();
    assert_eq!((dir.mode("run.sh"), dir.mode("secret.txt")), (0o755, 0o600));
}

#[test]
fn create_and_delete_land_inside_one_transaction() {
    let (dir, store) = store_holding(&[("old.txt", "old"), ("keep.txt", "k")]);
    let record = stage_as_agent(
        &store,
        change_set([
            ("deep/er/new.txt", create("new")),
            ("keep.txt", update("k", "K")),
            ("old.txt", delete("old")),
        ]),
    );
    store.apply(&record.id, None, "r", None).unwrap();
    assert_eq!(dir.try_read("deep/er/new.txt").unwrap(), "new");
    assert_eq!(dir.try_read("keep.txt").unwrap(), "K");
    assert!(!dir.path().join("old.txt").exists());
    assert_eq!(leftovers(dir.path()), Vec::<String>::new());
}

#[test]
fn apply_writes_through_a_symlink_and_keeps_the_link() {
    let (dir, store) = store_holding(&[("real.txt", "r")]);
    std::os::unix::fs::symlink("real.txt", dir.path().join("link.txt")).unwrap();
    let record = stage_as_agent(&store, change_set([("link.txt", update("r", "R"))]));
    store.apply(&record.id, None, "r", None).unwrap();
    assert!(
        std::fs::symlink_metadata(dir.path().join("link.txt"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(dir.try_read("real.txt").unwrap(), "R");
}

#[test]
fn a_store_operation_waits_for_the_lock_then_times_out() {
    let (dir, store) = store_in_temp();
    let held = StoreLock::acquire(store.workspace()).unwrap();
    let impatient = store.with_lock_timeout(Duration::from_millis(200));
    // A writer's operation (recovery); readers do not wait (see the next test).
    let err = impatient.recover().unwrap_err();
    assert!(matches!(err, StoreError::LockTimeout { .. }), "{err}");
    assert!(!err.is_tool_error());
    drop(held);
    assert_eq!(impatient.recover().unwrap(), None);
    drop(dir);
}

/// See: issue #32, "Reading waits on writing".
#[test]
fn readers_read_the_records_as_they_stand_while_a_writer_holds_the_lock() {
    let (_dir, store) = store_holding(&[("a.txt", "a")]);
    let record = stage_as_agent(&store, change_set([("a.txt", update("a", "A"))]));
    let held = StoreLock::acquire(store.workspace()).unwrap();
    let impatient = store.clone().with_lock_timeout(Duration::from_secs(5));
    let started = std::time::Instant::now();
    let pending = impatient.pending().unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].id, record.id);
    assert!(matches!(
        impatient.get(&record.id).unwrap(),
        StoredAction::Pending(_)
    ));
    assert!(impatient.history().unwrap().is_empty());
    assert!(started.elapsed() < Duration::from_secs(2));
    // A writer still waits for the lock.
    assert!(matches!(
        store
            .with_lock_timeout(Duration::from_millis(100))
            .recover_now()
            .unwrap_err(),
        StoreError::LockTimeout { .. }
    ));
    drop(held);
}

#[test]
fn reading_a_fresh_root_creates_no_state() {
    let (dir, store) = store_in_temp();
    assert!(store.pending().unwrap().is_empty());
    assert!(store.history().unwrap().is_empty());
    assert_eq!(store.recover().unwrap(), None);
    assert!(matches!(
        store.get("pending-action:edit:1").unwrap_err(),
        StoreError::UnknownAction { .. }
    ));
    assert!(!dir.path().join(STATE_DIR).exists());
}

#[test]
fn the_state_directory_is_ignored_by_git() {
    let (dir, store) = store_in_temp();
    stage_as_agent(&store, change_set([("a.txt", create("a"))]));
    assert_eq!(dir.try_read(".resolve/.gitignore").unwrap(), "*\n");
}

#[test]
fn corrupt_or_truncated_state_is_reported_naming_the_file_and_kept() {
    let (dir, store) = store_in_temp();
    let record = stage_as_agent(&store, change_set([("a.txt", create("a"))]));
    let other = stage_as_agent(&store, change_set([("b.txt", create("b"))]));
    store.discard(&other.id, "r", None).unwrap();
    let state = dir.path().join(STATE_DIR);
    let pending_file = state.join(format!("pending/{}.json", record.seq));
    let full = std::fs::read(&pending_file).unwrap();
    std::fs::write(&pending_file, &full[..full.len() / 2]).unwrap();

    for err in [
        store.pending().unwrap_err(),
        store.apply(&record.id, None, "r", None).unwrap_err(),
    ] {
        match &err {
            StoreError::CorruptState { path, .. } => assert_eq!(path, &pending_file),
            other => panic!("expected corrupt state, got {other}"),
        }
        assert!(err.to_string().contains("move it aside"), "{err}");
    }
    assert_eq!(std::fs::read(&pending_file).unwrap().len(), full.len() / 2);

    let history_file = state.join(format!("history/{}.json", other.seq));
    std::fs::write(&history_file, "{\"id\": 3").unwrap();
    assert!(matches!(
        store.history().unwrap_err(),
        StoreError::CorruptState { path, .. } if path == history_file
    ));

    let counters = state.join("counters.json");
    std::fs::write(&counters, "").unwrap();
    assert!(matches!(
        store.next_seq().unwrap_err(),
        StoreError::CorruptState { path, .. } if path == counters
    ));

    std::fs::write(&counters, "{\"nextSeq\": 10}").unwrap();
    std::fs::create_dir_all(state.join(JOURNAL_DIR)).unwrap();
    let journal = state.join(JOURNAL_DIR).join("journal.json");
    std::fs::write(&journal, "{\"version\"").unwrap();
    assert!(matches!(
        store.next_seq().unwrap_err(),
        StoreError::CorruptState { path, .. } if path == journal
    ));
}

#[test]
fn a_staged_record_names_its_contents_by_hash_and_keeps_originals_for_undo() {
    let (dir, store) = store_holding(&[("a.rs", "old a\n")]);
    let record = stage_as_agent(&store, change_set([("a.rs", update("old a\n", "new a\n"))]));
    let json = std::fs::read_to_string(
        dir.path()
            .join(STATE_DIR)
            .join(format!("pending/{}.json", record.seq)),
    )
    .unwrap();
    assert!(!json.contains("new a"), "the record holds the text: {json}");
    assert!(json.contains(&content_hash(b"new a\n")), "{json}");

    let outcome = store.apply(&record.id, None, "r", None).unwrap();
    assert_eq!(
        outcome.record.original("a.rs"),
        Some(Some(Content::Stored {
            blob: content_hash(b"old a\n")
        }))
    );
    let history = std::fs::read_to_string(
        dir.path()
            .join(STATE_DIR)
            .join(format!("history/{}.json", record.seq)),
    )
    .unwrap();
    assert!(!history.contains("old a"), "the history holds the text");
    assert!(
        !history.contains("\"before\""),
        "the originals are the change set's base hashes, not a second list: {history}"
    );
    store.undo(&record.id).unwrap();
    assert_eq!(dir.try_read("a.rs").as_deref(), Some("old a\n"));
}

#[test]
fn a_resolution_removes_old_unneeded_blobs_at_most_once_an_hour() {
    let (dir, store) = store_in_temp();
    let blobs = dir.path().join(STATE_DIR).join("blobs");
    let blob = |text: &str| blobs.join(content_hash(text.as_bytes()));
    // Make a file of the blob directory look two hours old.
    let age = |path: &Path| {
        std::fs::File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(std::time::SystemTime::now() - Duration::from_secs(2 * 60 * 60))
            .unwrap();
    };
    let stamp = blobs.join(".collected");
    let stage_and_discard = |path: &'static str, text: &str| {
        let record = stage_as_agent(&store, change_set([(path, create(text))]));
        store.discard(&record.id, "no", None).unwrap();
    };
    stage_and_discard("a.rs", "never\n");
    let pending = stage_as_agent(&store, change_set([("b.rs", create("later\n"))]));
    assert!(
        stamp.exists(),
        "the discard did not look for unneeded blobs"
    );

    // An hour later, the next resolution removes what no record needs any more.
    for path in [blob("never\n"), blob("later\n"), stamp] {
        age(&path);
    }
    stage_and_discard("c.rs", "other\n");
    assert!(!blob("never\n").exists(), "an old unneeded blob was kept");
    assert!(
        blob("later\n").exists(),
        "a pending change lost its content"
    );

    // Within the hour, resolutions do not look again.
    age(&blob("other\n"));
    stage_and_discard("d.rs", "more\n");
    assert!(
        blob("other\n").exists(),
        "blobs were collected twice within an hour"
    );
    store.apply(&pending.id, None, "now", None).unwrap();
    assert_eq!(dir.try_read("b.rs").as_deref(), Some("later\n"));
}

#[test]
fn garbage_collection_keeps_what_records_need_and_drops_the_rest() {
    let (dir, store) = store_in_temp();
    let blob = |text: &str| {
        dir.path()
            .join(STATE_DIR)
            .join("blobs")
            .join(content_hash(text.as_bytes()))
    };
    dir.write("a.rs", "old a\n");
    let discarded = stage_as_agent(&store, change_set([("a.rs", update("old a\n", "never\n"))]));
    let applied = stage_as_agent(&store, change_set([("a.rs", update("old a\n", "new a\n"))]));
    let pending = stage_as_agent(&store, change_set([("b.rs", create("later\n"))]));
    store.discard(&discarded.id, "no", None).unwrap();
    store.apply(&applied.id, None, "yes", None).unwrap();
    assert!(store.collect_garbage(std::time::Duration::ZERO).unwrap() > 0);

    assert!(
        !blob("never\n").exists(),
        "a discarded change's content is kept"
    );
    assert!(
        blob("later\n").exists(),
        "a pending change lost its content"
    );
    assert!(
        blob("old a\n").exists(),
        "an undoable apply lost its original"
    );
    for id in [&discarded.id, &applied.id, &pending.id] {
        let record = match store.get(id).unwrap() {
            StoredAction::Pending(record) => record,
            StoredAction::Resolved(entry) => entry.action,
        };
        assert_eq!(
            store.blobs().read_text(&record.preview_text).unwrap(),
            "preview"
        );
    }
    store.undo(&applied.id).unwrap();
    assert_eq!(dir.try_read("a.rs").as_deref(), Some("old a\n"));
    store.collect_garbage(std::time::Duration::ZERO).unwrap();
    assert!(
        !blob("old a\n").exists(),
        "an undone apply keeps its original"
    );
    store.apply(&pending.id, None, "now", None).unwrap();
    assert_eq!(dir.try_read("b.rs").as_deref(), Some("later\n"));
}

#[test]
fn history_records_where_each_action_was_resolved() {
    let (_dir, store) = store_holding(&[("a.txt", "a\n"), ("b.txt", "b\n")]);
    let cli = store.clone().resolved_by(Origin::Cli);
    let mcp = store.clone().resolved_by(Origin::Mcp("conn-3".into()));
    assert_eq!(cli.resolver(), Some(&Origin::Cli));
    let applied = stage_as_agent(&store, change_set([("a.txt", update("a\n", "A\n"))]));
    let discarded = stage_as_agent(&store, change_set([("b.txt", update("b\n", "B\n"))]));
    let unknown = stage_as_agent(&store, change_set([("c.txt", create("c\n"))]));
    mcp.discard(&discarded.id, "not now", None).unwrap();
    cli.apply(&applied.id, None, "yes", None).unwrap();
    store.discard(&unknown.id, "no", None).unwrap();
    let external = stage_as_agent(&store, change_set([("d.txt", create("d\n"))]));
    store
        .clone()
        .resolved_by(Origin::Agent)
        .resolve_external(&external.id, Outcome::Applied, "call", None, |_| {
            Ok::<_, String>(())
        })
        .unwrap()
        .unwrap();
    let by_id = |id: &str| match store.get(id).unwrap() {
        StoredAction::Resolved(entry) => entry,
        StoredAction::Pending(_) => panic!("{id} is still pending"),
    };
    let entry = by_id(&applied.id);
    assert_eq!(entry.action.origin, Origin::Agent, "who staged it stays");
    assert_eq!(entry.resolved_by, Some(Origin::Cli));
    assert_eq!(
        by_id(&discarded.id).resolved_by,
        Some(Origin::Mcp("conn-3".into()))
    );
    assert_eq!(by_id(&unknown.id).resolved_by, None);
    assert_eq!(by_id(&external.id).resolved_by, Some(Origin::Agent));
    // Undo rewrites the record and keeps who resolved it.
    store.undo(&applied.id).unwrap();
    assert_eq!(by_id(&applied.id).resolved_by, Some(Origin::Cli));
}
