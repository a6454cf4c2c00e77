//! Rebasing at apply, as the store does it with any [`Rebase`]: the base each update was
//! computed from is kept (also through garbage collection), a clean merge lands and is named,
//! a conflict writes nothing and keeps the action pending, and a store without a rebase keeps
//! the strict check.

#![expect(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] functions fail the test by panicking"
)]

use std::sync::Arc;
use std::time::Duration;

use pretty_assertions::assert_eq;
use resolve_store::{ConflictReason, Origin, Rebase, Rebased, Store, StoreError};
use resolve_test_support::TestDir;

use super::common::{change_set, line_two_conflict, new_action, store_at, update};

/// A rebase that records nothing and answers as told, after checking it was given the base
/// the preview was computed from.
#[derive(Debug)]
struct Scripted {
    base: &'static [u8],
    answer: Rebased,
}

impl Rebase for Scripted {
    fn rebase(&self, base: &[u8], _current: &[u8], _preview: &[u8]) -> Rebased {
        assert_eq!(base, self.base, "the rebase is given the preview's base");
        self.answer.clone()
    }
}

fn staged(answer: Option<Rebased>) -> (TestDir, Store, String) {
    let dir = TestDir::with_files([("a.txt", "one\ntwo\n")]);
    let rebase = answer.map(|answer| {
        Arc::new(Scripted {
            base: b"one\ntwo\n",
            answer,
        }) as Arc<dyn Rebase>
    });
    let store = store_at(dir.root()).rebasing(rebase);
    let change_set = change_set([("a.txt", update("one\ntwo\n", "ONE\ntwo\n"))]);
    let action = new_action(Origin::Cli, "edit", "Edit: a.txt");
    let id = store.stage(action, change_set).unwrap().id;
    // Nothing but the records keeps the base now.
    store.collect_garbage(Duration::ZERO).unwrap();
    dir.write("a.txt", "one\nTWO\n");
    (dir, store, id)
}

#[test]
fn a_clean_rebase_lands_the_merged_bytes_and_names_the_file() {
    let (dir, store, id) = staged(Some(Rebased::Clean(b"ONE\nTWO\n".to_vec())));
    let outcome = store.apply(&id, None, "Go.", None).unwrap();
    assert_eq!(outcome.rebased_files, ["a.txt"]);
    assert_eq!(dir.try_read("a.txt").unwrap(), "ONE\nTWO\n");
    store.undo(&id).unwrap();
    assert_eq!(
        dir.try_read("a.txt").unwrap(),
        "one\nTWO\n",
        "undo restores the bytes from just before"
    );
}

#[test]
fn a_conflict_writes_nothing_and_keeps_the_action_pending() {
    let hunk = line_two_conflict();
    let (dir, store, id) = staged(Some(Rebased::Conflicts(vec![hunk.clone()])));
    let error = store.apply(&id, None, "Go.", None).unwrap_err();
    let StoreError::Conflicts { files } = &error else {
        panic!("not a conflict: {error}");
    };
    assert_eq!(files[0].path, "a.txt");
    assert_eq!(files[0].reason, ConflictReason::Hunks(vec![hunk]));
    assert!(
        error
            .to_string()
            .starts_with("Preview is stale: `a.txt` changed")
    );
    assert!(error.is_tool_error());
    assert_eq!(dir.try_read("a.txt").unwrap(), "one\nTWO\n");
    assert_eq!(store.pending().unwrap().len(), 1);
}

#[test]
fn a_store_without_a_rebase_refuses_a_changed_file() {
    let (dir, store, id) = staged(None);
    let error = store.apply(&id, None, "Go.", None).unwrap_err();
    assert!(matches!(error, StoreError::Stale { .. }), "{error}");
    assert_eq!(dir.try_read("a.txt").unwrap(), "one\nTWO\n");
}
