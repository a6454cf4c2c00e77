//! Checks through the store's public API: a preview put in place as a trial and rolled back
//! (also after a crash at any instant), written into a scratch copy, the outcome kept on the
//! record, and an apply that requires a passing check.

#![expect(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] functions fail the test by panicking"
)]

use std::os::unix::fs::PermissionsExt;

use pretty_assertions::assert_eq;
use resolve_store::{CRASH_AT_ENV, CheckMode, CheckRun, StoreError, StoredAction};
use resolve_test_support::TestDir;
use resolve_test_support::crash::{self, CrashChild};

use super::common::{
    A_NEW, A_OLD, B_OLD, C_NEW, rolled_back_and_pending, store_at, three_file_action,
};

/// The three files exactly as before the preview, with nothing left behind.
fn assert_at_base(dir: &TestDir, context: &str) {
    assert_eq!(
        dir.try_read("src/a.rs").as_deref(),
        Some(A_OLD),
        "{context}"
    );
    assert_eq!(dir.try_read("b.txt").as_deref(), Some(B_OLD), "{context}");
    assert_eq!(dir.try_read("src/new/c.txt"), None, "{context}");
    assert!(!dir.path().join("src/new").exists(), "{context}");
    assert_eq!(dir.mode("src/a.rs"), 0o755, "{context}");
    let journal = dir.path().join(".resolve/journal");
    let left: Vec<_> = std::fs::read_dir(&journal)
        .map(|entries| entries.map(|entry| entry.unwrap().file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "{context}: journal left {left:?}");
}

fn passing_run() -> CheckRun {
    CheckRun {
        command: vec!["true".into()],
        exit_code: Some(0),
        ..CheckRun::default()
    }
}

#[test]
fn a_check_in_place_sees_the_preview_then_leaves_the_base_and_keeps_the_outcome() {
    let (dir, store, id) = three_file_action();
    let outcome = store
        .check_in_place(&id, || {
            // While the command runs, the preview is in place.
            assert_eq!(dir.try_read("src/a.rs").as_deref(), Some(A_NEW));
            assert_eq!(dir.try_read("b.txt"), None);
            assert_eq!(dir.try_read("src/new/c.txt").as_deref(), Some(C_NEW));
            Ok::<_, StoreError>(passing_run())
        })
        .unwrap();
    assert_at_base(&dir, "after the check");
    assert!(outcome.passed);
    assert_eq!(outcome.mode, CheckMode::InPlace);
    assert!(outcome.run.changed_files.is_empty());
    let StoredAction::Pending(record) = store.get(&id).unwrap() else {
        panic!("a check resolved the action");
    };
    assert_eq!(record.last_check(), Some(&outcome));
}

#[test]
fn files_the_command_changes_are_named_and_the_previews_put_back_while_others_stay() {
    let (dir, store, id) = three_file_action();
    let outcome = store
        .check_in_place(&id, || {
            dir.write("src/a.rs", "formatted by the command\n");
            dir.write("src/new/generated.rs", "generated\n");
            dir.write("outside.txt", "left by the command\n");
            Ok::<_, StoreError>(passing_run())
        })
        .unwrap();
    assert_eq!(outcome.run.changed_files, ["src/a.rs"]);
    assert_eq!(dir.try_read("src/a.rs").as_deref(), Some(A_OLD));
    assert_eq!(dir.try_read("b.txt").as_deref(), Some(B_OLD));
    assert_eq!(dir.try_read("src/new/c.txt"), None);
    assert_eq!(
        dir.try_read("outside.txt").as_deref(),
        Some("left by the command\n")
    );
    assert_eq!(
        dir.try_read("src/new/generated.rs").as_deref(),
        Some("generated\n"),
        "a file outside the preview stays, and so does its directory"
    );
}

#[test]
fn a_stale_preview_is_not_checked_and_the_command_never_runs() {
    let (dir, store, id) = three_file_action();
    dir.write("src/a.rs", "changed since\n");
    let error = store
        .check_in_place(&id, || -> Result<CheckRun, StoreError> {
            panic!("the command ran on a stale preview")
        })
        .unwrap_err();
    assert!(matches!(error, StoreError::Stale { .. }), "{error}");
    assert_eq!(dir.try_read("src/a.rs").as_deref(), Some("changed since\n"));
}

#[test]
fn a_preview_written_into_a_copy_leaves_the_workspace_alone() {
    let (dir, store, id) = three_file_action();
    let copy = TestDir::new();
    copy.write("src/a.rs", A_OLD);
    copy.write("b.txt", B_OLD);
    let record = store.write_preview_into(&id, copy.path()).unwrap();
    assert_eq!(copy.try_read("src/a.rs").as_deref(), Some(A_NEW));
    assert_eq!(copy.try_read("b.txt"), None);
    assert_eq!(copy.try_read("src/new/c.txt").as_deref(), Some(C_NEW));
    let mode = std::fs::metadata(copy.path().join("src/a.rs"))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o755, "the workspace file's permissions");
    assert_at_base(&dir, "the workspace");
    let failed = CheckRun {
        exit_code: Some(1),
        ..passing_run()
    };
    let outcome = store
        .record_check(&id, &record.fingerprint, CheckMode::Scratch, failed)
        .unwrap();
    assert!(!outcome.passed);
    let error = store
        .record_check(&id, "another change set", CheckMode::Scratch, passing_run())
        .unwrap_err();
    assert!(
        matches!(error, StoreError::CheckedVersionChanged { .. }),
        "{error}"
    );
}

#[test]
fn an_apply_that_requires_a_check_refuses_until_one_passes() {
    let (dir, store, id) = three_file_action();
    let strict = store.clone().requiring_check(true);
    let unchecked = strict.apply(&id, None, "r", None).unwrap_err();
    assert_eq!(
        unchecked.to_string(),
        format!(
            "`{id}` has not been checked, and this apply requires a passing check; nothing was written. Check it first (`resolve check {id}`, or the `check` tool), then apply it once the check passes."
        )
    );
    assert!(unchecked.is_tool_error());
    store
        .check_in_place(&id, || {
            Ok::<_, StoreError>(CheckRun {
                exit_code: Some(2),
                ..passing_run()
            })
        })
        .unwrap();
    let failed = strict.apply(&id, None, "r", None).unwrap_err();
    assert!(
        failed
            .to_string()
            .contains("failed its last check (exit status 2)"),
        "{failed}"
    );
    assert_at_base(&dir, "refused applies");
    store
        .check_in_place(&id, || Ok::<_, StoreError>(passing_run()))
        .unwrap();
    strict.apply(&id, None, "r", None).unwrap();
    assert_eq!(dir.try_read("src/a.rs").as_deref(), Some(A_NEW));
}

// ---------------------------------------------------------------------------------------------
// Crash recovery: the test binary re-runs itself as a child that aborts at one crash point.

const CHILD_ROOT_ENV: &str = "RESOLVE_TEST_CHECK_CHILD_ROOT";
const CHILD_ID_ENV: &str = "RESOLVE_TEST_CHECK_CHILD_ID";

/// Run by the crash test as a child process; does nothing when run directly.
#[test]
#[ignore = "a child process of the crash test"]
fn crash_child_checks_the_action() {
    let (Some(root), Some(id)) = (crash::var(CHILD_ROOT_ENV), crash::var(CHILD_ID_ENV)) else {
        return;
    };
    let store = store_at(root);
    store
        .check_in_place(&id, || Ok::<_, StoreError>(passing_run()))
        .unwrap();
}

#[test]
fn a_check_killed_at_any_step_is_rolled_back_by_the_next_recovery_and_stays_pending() {
    // begin, backup:1-2, journal, staged:1-2, renamed:1-3, synced, trial: 11 points, then the
    // rollback, which has none.
    const POINTS: usize = 11;
    for step in 1..=POINTS + 1 {
        let (dir, store, id) = three_file_action();
        let output = CrashChild::new(&crash::test_name(
            module_path!(),
            "crash_child_checks_the_action",
        ))
        .env(CHILD_ROOT_ENV, dir.path())
        .env(CHILD_ID_ENV, &id)
        .env(CRASH_AT_ENV, step.to_string())
        .run();
        let crashed = crash::aborted(&output);
        assert_eq!(crashed, step <= POINTS, "step {step}: {output:?}");
        let message = store.recover().unwrap();
        let context = format!("step {step} (recovery said {message:?})");
        assert_at_base(&dir, &context);
        match step {
            // From the journal on, there is something to roll back.
            4..=11 => assert!(
                rolled_back_and_pending(message.as_deref(), "check trial", &id),
                "{context}"
            ),
            _ => assert_eq!(message, None, "{context}"),
        }
        assert!(
            matches!(store.get(&id).unwrap(), StoredAction::Pending(_)),
            "{context}"
        );
    }
}
