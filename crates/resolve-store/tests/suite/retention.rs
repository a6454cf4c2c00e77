//! History retention through the public API (issue #31 §3): [`Store::gc`] keeps the newest
//! entries and the recent ones, never a pending action or an apply that can still be undone;
//! [`Store::gc_if_due`] runs it at most once a day, and not while another process holds the
//! lock.
#![expect(clippy::unwrap_used, reason = "tests fail by panicking")]

use std::time::Duration;

use pretty_assertions::assert_eq;
use resolve_store::{
    MAX_NOTES_PER_ORIGIN, NewAction, Origin, Retention, STATE_DIR, StagedRecord, Store, StoreLock,
};
use resolve_test_support::TestDir;
use resolve_test_support::crash::{self, CrashChild};
use serde_json::json;

use super::common::{change_set, history_ids, new_action, store_at, store_in_temp, update};

/// Stage a change of `path` from `base` to `content`, at the command line.
fn stage_change(store: &Store, path: &'static str, base: &str, content: &str) -> StagedRecord {
    stage_change_as(store, Origin::Cli, path, base, content)
}

/// Stage a change of `path` from `base` to `content` for `origin`.
fn stage_change_as(
    store: &Store,
    origin: Origin,
    path: &'static str,
    base: &str,
    content: &str,
) -> StagedRecord {
    let action = NewAction {
        details: json!({}),
        ..new_action(origin, "edit", &format!("Edit: {path}"))
    };
    store
        .stage(action, change_set([(path, update(base, content))]))
        .unwrap()
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
    let (dir, store) = store_in_temp();
    std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
    for n in 0..5 {
        let staged = stage_change(&store, "a.txt", "a\n", &format!("a{n}\n"));
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
    assert_eq!(
        history_ids(&store),
        ["pending-action:edit:9", "pending-action:edit:7"]
    );
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
    let (dir, store) = store_in_temp();
    std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
    let applied = stage_change(&store, "a.txt", "a\n", "A\n");
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
    let (dir, store) = store_in_temp();
    assert_eq!(store.gc_if_due(&NOTHING).unwrap(), None);
    assert!(
        !dir.path().join(STATE_DIR).exists(),
        "nothing is created without history"
    );
    std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
    let discarded = stage_change(&store, "a.txt", "a\n", "A\n");
    store.discard(&discarded.id, "no", None).unwrap();

    // Another process holds the lock: the pass is put off, at once.
    let held = StoreLock::acquire(store.workspace()).unwrap();
    assert_eq!(store.gc_if_due(&NOTHING).unwrap(), None);
    drop(held);
    assert_eq!(history_len(&store), 1);

    let report = store.gc_if_due(&NOTHING).unwrap().unwrap();
    assert_eq!(report.history_entries, 1);
    let again = stage_change(&store, "a.txt", "a\n", "B\n");
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
    let (dir, store) = store_in_temp();
    std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
    // A person resolves what a model staged: each decision leaves a note for that model.
    let person = store.clone().resolved_by(Origin::Cli);
    let notes = || {
        std::fs::read_dir(dir.path().join(".resolve/notes"))
            .unwrap()
            .count()
    };
    for n in 0..=MAX_NOTES_PER_ORIGIN {
        let staged = stage_change_as(&store, Origin::Agent, "a.txt", "a\n", &format!("{n}\n"));
        person.discard(&staged.id, "no", None).unwrap();
    }
    let mcp = stage_change_as(&store, Origin::Mcp("c".into()), "a.txt", "a\n", "m\n");
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

const CHILD_ROOT_ENV: &str = "RESOLVE_TEST_GC_ROOT";

/// Run in a child process by the crash test: a full clean-up of the root it is given.
#[test]
#[ignore = "run by the crash test in a child process"]
fn gc_crash_child_cleans_up() {
    let Some(root) = crash::var(CHILD_ROOT_ENV) else {
        return;
    };
    let store = store_at(root);
    store.gc(&NOTHING, false).unwrap();
}

/// A root whose clean-up has work at every step: an apply that can still be undone (kept),
/// two discards and an apply whose file changed since (removed), a pending action (kept), all
/// contents past their grace. Returns the ids of the undoable apply and of the pending action.
fn root_for_a_crashing_gc() -> (TestDir, Store, String, String) {
    let (dir, store) = store_in_temp();
    for (name, text) in [
        ("a.txt", "a\n"),
        ("b.txt", "b\n"),
        ("c.txt", "c\n"),
        ("d.txt", "d\n"),
    ] {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let undoable = stage_change(&store, "a.txt", "a\n", "A\n");
    store.apply(&undoable.id, None, "yes", None).unwrap();
    for content in ["B\n", "bee\n"] {
        let discarded = stage_change(&store, "b.txt", "b\n", content);
        store.discard(&discarded.id, "no", None).unwrap();
    }
    let changed = stage_change(&store, "c.txt", "c\n", "C\n");
    store.apply(&changed.id, None, "yes", None).unwrap();
    std::fs::write(dir.path().join("c.txt"), "C by hand\n").unwrap();
    let pending = stage_change(&store, "d.txt", "d\n", "D\n");
    let past_grace = std::time::SystemTime::now() - Duration::from_secs(3 * 60 * 60);
    for entry in std::fs::read_dir(dir.path().join(STATE_DIR).join("blobs")).unwrap() {
        std::fs::File::options()
            .write(true)
            .open(entry.unwrap().path())
            .unwrap()
            .set_modified(past_grace)
            .unwrap();
    }
    (dir, store, undoable.id, pending.id)
}

#[test]
fn a_gc_killed_at_any_step_loses_nothing_still_needed_and_the_next_pass_finishes() {
    // gc-notes, gc-history:1-3, gc-blobs; then one run that is not cut short.
    const POINTS: usize = 5;
    for step in 1..=POINTS + 1 {
        let (dir, store, undoable, pending) = root_for_a_crashing_gc();
        let output = CrashChild::new(&crash::test_name(
            module_path!(),
            "gc_crash_child_cleans_up",
        ))
        .env(CHILD_ROOT_ENV, dir.path())
        .env(resolve_store::CRASH_AT_ENV, step.to_string())
        .run();
        let aborted = crash::aborted(&output);
        assert_eq!(
            aborted,
            step <= POINTS,
            "step {step}: {:?}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
        // Whatever is left reads: every history entry and its preview text.
        for entry in store.history().unwrap() {
            store.blobs().read(&entry.action.preview_text).unwrap();
        }
        // The next pass finishes the job.
        store.gc(&NOTHING, false).unwrap();
        assert_eq!(
            history_ids(&store),
            std::slice::from_ref(&undoable),
            "step {step}"
        );
        // The pending action still applies, and the apply that could be undone still undoes.
        store.apply(&pending, None, "now", None).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("d.txt")).unwrap(),
            "D\n",
            "step {step}"
        );
        store.undo(&undoable).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
            "a\n",
            "step {step}"
        );
    }
}

#[test]
fn a_shell_snapshot_keeps_its_contents_until_it_is_a_day_old_and_then_goes() {
    let (dir, store) = store_in_temp();
    let hash = store.blobs().put(b"before the command\n").unwrap();
    let snapshot = resolve_store::TreeSnapshot {
        files: [("a.txt".to_owned(), hash.clone())].into(),
    };
    store.keep_snapshot("toolu_1", &snapshot).unwrap();
    let state = dir.path().join(STATE_DIR);
    let age = |path: std::path::PathBuf, by: Duration| {
        std::fs::File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(std::time::SystemTime::now() - by)
            .unwrap();
    };
    let blob = state.join("blobs").join(&hash);
    age(blob.clone(), Duration::from_secs(3 * 60 * 60));
    // The command is still running: its snapshot and what it names stay.
    let report = store.gc(&NOTHING, false).unwrap();
    assert_eq!((report.shell_snapshots, report.blobs), (0, 0));
    assert!(blob.exists());
    // A day later no end came (an interrupted command): both go.
    age(
        state.join("shell/toolu_1.json"),
        Duration::from_secs(25 * 60 * 60),
    );
    let report = store.gc(&NOTHING, false).unwrap();
    assert_eq!((report.shell_snapshots, report.blobs), (1, 1));
    assert!(!blob.exists());
    assert_eq!(store.take_snapshot("toolu_1").unwrap(), None);
}
