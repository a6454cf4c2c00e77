//! Crash recovery of the store's transactional apply and undo: the test binary re-runs itself
//! as a child that aborts at one crash point, and every step leaves all or nothing.

use pretty_assertions::assert_eq;
use resolve_core::DecidedBy;
use resolve_store::{Attribution, CRASH_AT_ENV, Origin, Outcome, StoredAction};
use resolve_test_support::TestDir;
use resolve_test_support::crash::{self, CrashChild};

use super::common::{
    A_NEW, A_OLD, B_OLD, C_NEW, leftovers, rolled_back_and_pending, store_at, three_file_action,
};

/// Root directory of the child's workspace.
const CHILD_ROOT_ENV: &str = "RESOLVE_TEST_CHILD_ROOT";
/// The pending id the child applies or undoes.
const CHILD_ID_ENV: &str = "RESOLVE_TEST_CHILD_ID";
/// `apply` or `undo`.
const CHILD_OP_ENV: &str = "RESOLVE_TEST_CHILD_OP";

/// Run by the crash tests as a child process; does nothing when run directly.
#[test]
#[ignore = "a child process of the crash tests"]
fn crash_child_resolves_the_action() {
    let (Some(root), Some(id), Some(op)) = (
        crash::var(CHILD_ROOT_ENV),
        crash::var(CHILD_ID_ENV),
        crash::var(CHILD_OP_ENV),
    ) else {
        return;
    };
    let store = store_at(root);
    match op.as_str() {
        "apply" => {
            store.apply(&id, None, "crash test", None).unwrap();
        }
        "undo" => {
            store.undo(&id).unwrap();
        }
        "apply as a person" => {
            let person = Attribution::over_model(DecidedBy::Person, "crash test");
            store
                .apply_as(&id, None, "crash test", None, &person)
                .unwrap();
        }
        other => panic!("unknown op {other}"),
    }
}

/// Run the child; `true` when it aborted at the crash point, `false` when it finished.
fn run_child(dir: &TestDir, id: &str, op: &str, crash_at: &str) -> bool {
    let output = CrashChild::new(&crash::test_name(
        module_path!(),
        "crash_child_resolves_the_action",
    ))
    .env(CHILD_ROOT_ENV, dir.path())
    .env(CHILD_ID_ENV, id)
    .env(CHILD_OP_ENV, op)
    .env(CRASH_AT_ENV, crash_at)
    .run();
    let aborted = crash::aborted(&output);
    assert!(
        aborted || output.status.success(),
        "child at {crash_at} failed: {:?}\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    aborted
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Landed {
    /// Every file as before the apply.
    Original,
    /// Every file as the preview says.
    New,
}

/// The files are all original or all new (never a mix), with nothing left behind. An undo
/// leaves the directory its apply created (empty) in place; an apply's rollback removes it.
fn landed(dir: &TestDir, context: &str) -> Landed {
    landed_after(dir, context, "apply")
}

fn landed_after(dir: &TestDir, context: &str, op: &str) -> Landed {
    let files = (
        dir.try_read("src/a.rs"),
        dir.try_read("b.txt"),
        dir.try_read("src/new/c.txt"),
    );
    let original = (Some(A_OLD.to_owned()), Some(B_OLD.to_owned()), None);
    let new = (Some(A_NEW.to_owned()), None, Some(C_NEW.to_owned()));
    let state = if files == original {
        assert_eq!(
            dir.path().join("src/new").exists(),
            op == "undo",
            "{context}: the created directory"
        );
        Landed::Original
    } else if files == new {
        Landed::New
    } else {
        panic!("{context}: a mix of original and new files: {files:?}");
    };
    assert_eq!(dir.mode("src/a.rs"), 0o755, "{context}: permissions");
    assert_eq!(leftovers(dir.path()), Vec::<String>::new(), "{context}");
    state
}

#[test]
fn a_crash_at_every_step_of_a_three_file_apply_leaves_all_or_nothing() {
    // begin, backup:1-2, journal, staged:1-2, renamed:1-3, synced | committed, state:1-3 (keep
    // the originals, place the history record, remove the pending one), journal-removed:
    // 15 points, the first 10 before the commit.
    const POINTS: usize = 15;
    const LAST_BEFORE_COMMIT: usize = 10;
    for step in 1..=POINTS + 1 {
        let (dir, store, id) = three_file_action();
        let crashed = run_child(&dir, &id, "apply", &step.to_string());
        assert_eq!(crashed, step <= POINTS, "step {step}: crash points reached");

        let message = store.recover().unwrap();
        let context = format!("step {step} (recovery said {message:?})");
        let state = landed(&dir, &context);
        match store.get(&id).unwrap() {
            StoredAction::Pending(_) => assert_eq!(state, Landed::Original, "{context}"),
            StoredAction::Resolved(record) => {
                assert_eq!(state, Landed::New, "{context}");
                assert_eq!(record.outcome, Outcome::Applied, "{context}");
            }
        }
        let expected = if step <= LAST_BEFORE_COMMIT {
            Landed::Original
        } else {
            Landed::New
        };
        assert_eq!(state, expected, "{context}");
        match step {
            4..=10 => assert!(
                rolled_back_and_pending(message.as_deref(), "apply", &id),
                "{context}"
            ),
            11..=14 => assert_eq!(
                message,
                Some(format!(
                    "Finished an interrupted apply of `{id}`; it is applied."
                )),
                "{context}"
            ),
            _ => assert_eq!(message, None, "{context}"),
        }
        if state == Landed::Original {
            store.apply(&id, None, "again", None).unwrap();
            assert_eq!(landed(&dir, &context), Landed::New);
        }
        // However the apply ended, its originals were kept for undo.
        store.undo(&id).unwrap();
        assert_eq!(
            landed_after(&dir, &context, "undo"),
            Landed::Original,
            "{context}"
        );
    }
}

#[test]
fn crash_points_can_be_named() {
    for (step, expected) in [
        ("backup:2", Landed::Original),
        ("journal", Landed::Original),
        ("renamed:2", Landed::Original),
        ("synced", Landed::Original),
        ("committed", Landed::New),
        ("state:1", Landed::New),
        ("journal-removed", Landed::New),
    ] {
        let (dir, store, id) = three_file_action();
        assert!(run_child(&dir, &id, "apply", step), "{step} is reached");
        store.recover().unwrap();
        assert_eq!(landed(&dir, step), expected, "{step}");
    }
}

/// The `.json` records in the state directory `kind` (`notes`, `history`).
fn records_in(dir: &TestDir, kind: &str) -> usize {
    std::fs::read_dir(dir.join(format!(".resolve/{kind}")))
        .map(|entries| {
            entries
                .filter(|entry| {
                    entry.as_ref().is_ok_and(|entry| {
                        entry.path().extension().is_some_and(|ext| ext == "json")
                    })
                })
                .count()
        })
        .unwrap_or(0)
}

#[test]
fn a_persons_note_is_placed_before_the_history_record_that_shows_the_action_resolved() {
    let (dir, store, id) = three_file_action();
    // state:1 keeps the originals; state:2 is the first record placed.
    assert!(run_child(&dir, &id, "apply as a person", "state:2"));
    // Whoever polls for the history record without the lock (a hook waiting for a person)
    // finds the note there first.
    assert_eq!(
        (records_in(&dir, "notes"), records_in(&dir, "history")),
        (1, 0)
    );
    store.recover().unwrap();
    assert_eq!(
        (records_in(&dir, "notes"), records_in(&dir, "history")),
        (1, 1)
    );
    assert_eq!(store.take_reviewer_notes(&Origin::Agent).unwrap().len(), 1);
}

#[test]
fn a_crash_at_every_step_of_an_undo_leaves_it_applied_or_undone() {
    for step in 1.. {
        assert!(step < 50, "the undo never finished");
        let (dir, store, id) = three_file_action();
        store.apply(&id, None, "r", None).unwrap();
        let crashed = run_child(&dir, &id, "undo", &step.to_string());
        let message = store.recover().unwrap();
        let context = format!("undo step {step} (recovery said {message:?})");
        let state = landed_after(&dir, &context, "undo");
        let StoredAction::Resolved(record) = store.get(&id).unwrap() else {
            panic!("{context}: an applied action became pending");
        };
        assert_eq!(record.undone, state == Landed::Original, "{context}");
        if !crashed {
            assert_eq!(state, Landed::Original, "{context}");
            // begin, backup:1-2, journal, staged:1-2, renamed:1-3, synced, committed, state:1,
            // journal-removed: every one of the 13 points crashed before the child finished.
            assert_eq!(step, 14, "{context}");
            break;
        }
    }
}
