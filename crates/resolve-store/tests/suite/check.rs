//! Checks through the store's public API: a preview put in place as a trial and rolled back
//! (also after a crash at any instant), written into a scratch copy, the outcome kept on the
//! record, and an apply that requires a passing check.

#![allow(
    clippy::disallowed_methods,
    reason = "tests set up and inspect files directly"
)]
#![expect(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] functions fail the test by panicking"
)]

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::process::Command;

use pretty_assertions::assert_eq;
use resolve_store::{
    CRASH_AT_ENV, ChangeSet, CheckMode, CheckRun, FileChange, NewAction, Origin, Store, StoreError,
    StoredAction, Workspace, content_hash,
};
use tempfile::TempDir;

const A_OLD: &str = "fn a() {}\n";
const A_NEW: &str = "fn a() { 1 }\n";
const B_OLD: &str = "obsolete\n";
const C_NEW: &str = "created\n";

fn write(dir: &TempDir, path: &str, content: &str) {
    let path = dir.path().join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

fn read(dir: &TempDir, path: &str) -> Option<String> {
    std::fs::read_to_string(dir.path().join(path)).ok()
}

/// A workspace with a 3-file action staged: update `src/a.rs` (mode 0o755), delete `b.txt`,
/// create `src/new/c.txt` in a directory that does not exist yet.
fn three_file_action() -> (TempDir, Store, String) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(Workspace::open(dir.path()).unwrap())
        .with_record_key(resolve_store::RecordKey::from_bytes([7; 32]));
    write(&dir, "src/a.rs", A_OLD);
    std::fs::set_permissions(
        dir.path().join("src/a.rs"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    write(&dir, "b.txt", B_OLD);
    let mut set = ChangeSet::new();
    set.insert(
        "src/a.rs",
        FileChange::Update {
            base_hash: content_hash(A_OLD.as_bytes()),
            content: A_NEW.into(),
            replacements: 1,
        },
    );
    set.insert(
        "b.txt",
        FileChange::Delete {
            base_hash: content_hash(B_OLD.as_bytes()),
        },
    );
    set.insert(
        "src/new/c.txt",
        FileChange::Create {
            content: C_NEW.into(),
        },
    );
    let action = NewAction {
        origin: Origin::Agent,
        source_tool: "edit".into(),
        label: "Edit: three files".into(),
        preview_text: "preview".into(),
        details: serde_json::Value::Null,
    };
    let id = store.stage(action, set).unwrap().id;
    (dir, store, id)
}

/// The three files exactly as before the preview, with nothing left behind.
fn assert_at_base(dir: &TempDir, context: &str) {
    assert_eq!(read(dir, "src/a.rs").as_deref(), Some(A_OLD), "{context}");
    assert_eq!(read(dir, "b.txt").as_deref(), Some(B_OLD), "{context}");
    assert_eq!(read(dir, "src/new/c.txt"), None, "{context}");
    assert!(!dir.path().join("src/new").exists(), "{context}");
    let mode = std::fs::metadata(dir.path().join("src/a.rs"))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o755, "{context}");
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
            assert_eq!(read(&dir, "src/a.rs").as_deref(), Some(A_NEW));
            assert_eq!(read(&dir, "b.txt"), None);
            assert_eq!(read(&dir, "src/new/c.txt").as_deref(), Some(C_NEW));
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
            write(&dir, "src/a.rs", "formatted by the command\n");
            write(&dir, "src/new/generated.rs", "generated\n");
            write(&dir, "outside.txt", "left by the command\n");
            Ok::<_, StoreError>(passing_run())
        })
        .unwrap();
    assert_eq!(outcome.run.changed_files, ["src/a.rs"]);
    assert_eq!(read(&dir, "src/a.rs").as_deref(), Some(A_OLD));
    assert_eq!(read(&dir, "b.txt").as_deref(), Some(B_OLD));
    assert_eq!(read(&dir, "src/new/c.txt"), None);
    assert_eq!(
        read(&dir, "outside.txt").as_deref(),
        Some("left by the command\n")
    );
    assert_eq!(
        read(&dir, "src/new/generated.rs").as_deref(),
        Some("generated\n"),
        "a file outside the preview stays, and so does its directory"
    );
}

#[test]
fn a_stale_preview_is_not_checked_and_the_command_never_runs() {
    let (dir, store, id) = three_file_action();
    write(&dir, "src/a.rs", "changed since\n");
    let error = store
        .check_in_place(&id, || -> Result<CheckRun, StoreError> {
            panic!("the command ran on a stale preview")
        })
        .unwrap_err();
    assert!(matches!(error, StoreError::Stale { .. }), "{error}");
    assert_eq!(read(&dir, "src/a.rs").as_deref(), Some("changed since\n"));
}

#[test]
fn a_preview_written_into_a_copy_leaves_the_workspace_alone() {
    let (dir, store, id) = three_file_action();
    let copy = tempfile::tempdir().unwrap();
    write(&copy, "src/a.rs", A_OLD);
    write(&copy, "b.txt", B_OLD);
    let record = store.write_preview_into(&id, copy.path()).unwrap();
    assert_eq!(read(&copy, "src/a.rs").as_deref(), Some(A_NEW));
    assert_eq!(read(&copy, "b.txt"), None);
    assert_eq!(read(&copy, "src/new/c.txt").as_deref(), Some(C_NEW));
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
    assert_eq!(read(&dir, "src/a.rs").as_deref(), Some(A_NEW));
}

// ---------------------------------------------------------------------------------------------
// Crash recovery: the test binary re-runs itself as a child that aborts at one crash point.

const CHILD_ROOT_ENV: &str = "RESOLVE_TEST_CHECK_CHILD_ROOT";
const CHILD_ID_ENV: &str = "RESOLVE_TEST_CHECK_CHILD_ID";
const CHILD_TEST: &str = "suite::check::crash_child_checks_the_action";

/// Run by the crash test as a child process; does nothing when run directly.
#[test]
#[ignore = "a child process of the crash test"]
fn crash_child_checks_the_action() {
    let (Ok(root), Ok(id)) = (std::env::var(CHILD_ROOT_ENV), std::env::var(CHILD_ID_ENV)) else {
        return;
    };
    let store = Store::open(Workspace::open(root).unwrap())
        .with_record_key(resolve_store::RecordKey::from_bytes([7; 32]));
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
        let output = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", CHILD_TEST, "--ignored", "--nocapture"])
            .env(CHILD_ROOT_ENV, dir.path())
            .env(CHILD_ID_ENV, &id)
            .env(CRASH_AT_ENV, step.to_string())
            .output()
            .unwrap();
        let crashed = output.status.signal() == Some(6);
        assert_eq!(crashed, step <= POINTS, "step {step}: {output:?}");
        let message = store.recover().unwrap();
        let context = format!("step {step} (recovery said {message:?})");
        assert_at_base(&dir, &context);
        match step {
            // From the journal on, there is something to roll back.
            4..=11 => assert!(
                message.as_deref().is_some_and(|text| text
                    .starts_with(&format!("Rolled back an interrupted check trial of `{id}`"))
                    && text.ends_with("it is still pending.")),
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
