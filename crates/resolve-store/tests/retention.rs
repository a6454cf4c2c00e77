//! History retention through the public API (issue #31 §3): [`Store::gc`] keeps the newest
//! entries and the recent ones, never a pending action or an apply that can still be undone;
//! [`Store::gc_if_due`] runs it at most once a day, and not while another process holds the
//! lock.
#![allow(
    clippy::disallowed_methods,
    reason = "tests set up and inspect files directly"
)]
#![expect(clippy::unwrap_used, reason = "tests fail by panicking")]

use std::time::Duration;

use pretty_assertions::assert_eq;
use resolve_store::{
    ChangeSet, FileChange, MAX_NOTES_PER_ORIGIN, NewAction, Origin, Retention, STATE_DIR,
    StagedRecord, Store, StoreLock, Workspace, content_hash,
};
use serde_json::json;
use tempfile::TempDir;

fn setup() -> (TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(Workspace::open(dir.path()).unwrap())
        .with_record_key(resolve_store::RecordKey::from_bytes([7; 32]));
    (dir, store)
}

/// Stage a change of `path` from `base` to `content`, at the command line.
fn stage(store: &Store, path: &'static str, base: &str, content: &str) -> StagedRecord {
    stage_as(store, Origin::Cli, path, base, content)
}

/// Stage a change of `path` from `base` to `content` for `origin`.
fn stage_as(
    store: &Store,
    origin: Origin,
    path: &'static str,
    base: &str,
    content: &str,
) -> StagedRecord {
    let mut set = ChangeSet::new();
    set.insert(
        path,
        FileChange::Update {
            base_hash: content_hash(base.as_bytes()),
            content: content.into(),
            replacements: 1,
        },
    );
    let action = NewAction {
        origin,
        source_tool: "edit".into(),
        label: format!("Edit: {path}"),
        preview_text: "preview".into(),
        details: json!({}),
    };
    store.stage(action, set).unwrap()
}

/// Keep nothing for its age or its rank.
const NOTHING: Retention = Retention {
    age: Duration::ZERO,
    entries: 0,
};

fn history_len(store: &Store) -> usize {
    store.history().unwrap().len()
}

#[test]
fn the_newest_entries_are_kept_and_the_rest_go_oldest_first() {
    let (dir, store) = setup();
    std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
    for n in 0..5 {
        let staged = stage(&store, "a.txt", "a\n", &format!("a{n}\n"));
        store.discard(&staged.id, "no", None).unwrap();
    }
    let keep_two = Retention {
        entries: 2,
        ..NOTHING
    };
    let dry = store.gc(&keep_two, true).unwrap();
    assert_eq!((dry.history_entries, dry.dry_run), (3, true));
    assert_eq!(history_len(&store), 5, "a dry run removes nothing");
    let done = store.gc(&keep_two, false).unwrap();
    assert_eq!(done.history_entries, 3);
    let left: Vec<String> = store
        .history()
        .unwrap()
        .into_iter()
        .map(|entry| entry.action.id)
        .collect();
    assert_eq!(left, ["pending-action:edit:9", "pending-action:edit:7"]);
    // Recent entries are kept whatever their rank.
    let recent = Retention {
        age: Duration::from_secs(3600),
        entries: 0,
    };
    assert_eq!(store.gc(&recent, false).unwrap().history_entries, 0);
    assert_eq!(history_len(&store), 2);
}

#[test]
fn an_apply_that_can_still_be_undone_is_kept_until_its_file_changes() {
    let (dir, store) = setup();
    std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
    let applied = stage(&store, "a.txt", "a\n", "A\n");
    store.apply(&applied.id, None, "yes", None).unwrap();
    let report = store.gc(&NOTHING, false).unwrap();
    assert_eq!((report.history_entries, report.kept_undoable), (0, 1));
    store.undo(&applied.id).unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "a\n"
    );
    // Undone, it can go.
    assert_eq!(store.gc(&NOTHING, false).unwrap().history_entries, 1);
    assert_eq!(history_len(&store), 0);
}

#[test]
fn the_automatic_pass_runs_once_a_day_and_never_waits_for_the_lock() {
    let (dir, store) = setup();
    assert_eq!(store.gc_if_due(&NOTHING).unwrap(), None);
    assert!(
        !dir.path().join(STATE_DIR).exists(),
        "nothing is created without history"
    );
    std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
    let discarded = stage(&store, "a.txt", "a\n", "A\n");
    store.discard(&discarded.id, "no", None).unwrap();

    // Another process holds the lock: the pass is put off, at once.
    let held = StoreLock::acquire(store.workspace()).unwrap();
    assert_eq!(store.gc_if_due(&NOTHING).unwrap(), None);
    drop(held);
    assert_eq!(history_len(&store), 1);

    let report = store.gc_if_due(&NOTHING).unwrap().unwrap();
    assert_eq!(report.history_entries, 1);
    let again = stage(&store, "a.txt", "a\n", "B\n");
    store.discard(&again.id, "no", None).unwrap();
    assert_eq!(
        store.gc_if_due(&NOTHING).unwrap(),
        None,
        "once a day at most"
    );
    assert_eq!(history_len(&store), 1);
}

#[test]
fn notes_of_actions_gone_are_dropped_and_each_origin_keeps_the_newest_hundred() {
    let (dir, store) = setup();
    std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
    // A person resolves what a model staged: each decision leaves a note for that model.
    let person = store.clone().resolved_by(Origin::Cli);
    let notes = || {
        std::fs::read_dir(dir.path().join(".resolve/notes"))
            .unwrap()
            .count()
    };
    for n in 0..=MAX_NOTES_PER_ORIGIN {
        let staged = stage_as(&store, Origin::Agent, "a.txt", "a\n", &format!("{n}\n"));
        person.discard(&staged.id, "no", None).unwrap();
    }
    let mcp = stage_as(&store, Origin::Mcp("c".into()), "a.txt", "a\n", "m\n");
    person.discard(&mcp.id, "no", None).unwrap();
    assert_eq!(notes(), MAX_NOTES_PER_ORIGIN + 2);

    let everything = Retention {
        age: Duration::from_secs(3600),
        entries: usize::MAX,
    };
    let report = store.gc(&everything, false).unwrap();
    assert_eq!((report.history_entries, report.notes), (0, 1));
    let told = store.take_reviewer_notes(&Origin::Agent).unwrap();
    assert_eq!(told.len(), MAX_NOTES_PER_ORIGIN);
    assert_eq!(told[0].id, "pending-action:edit:3", "the oldest went");

    // The history entry goes, and its note with it.
    let report = store.gc(&NOTHING, false).unwrap();
    assert_eq!(report.notes, 1);
    assert!(
        store
            .take_reviewer_notes(&Origin::Mcp("c".into()))
            .unwrap()
            .is_empty()
    );
}
