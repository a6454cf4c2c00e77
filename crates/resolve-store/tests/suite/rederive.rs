//! Re-deriving at apply, as the store does it with any [`Rebase`]: a record staged with a
//! `rederive` request keeps it (signed, so the record is not foreign), hands it to
//! [`Rebase::rederive`] before the merge, lands a clean re-derivation and names the file; a
//! mismatch falls back to the merge, and a conflict then names the matches that moved.

#![expect(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] functions fail the test by panicking"
)]

use std::sync::Arc;

use pretty_assertions::assert_eq;
use resolve_store::{ConflictReason, Origin, Rebase, Rebased, Rederived, Store, StoreError};
use resolve_test_support::TestDir;
use serde_json::{Value, json};

use super::common::{change_set, line_two_conflict, new_action, store_at, update};

/// A rebase whose re-derivation and merge answer as told, after checking the request it was
/// handed.
#[derive(Debug)]
struct Scripted {
    rederived: Option<Rederived>,
    merged: Rebased,
}

impl Rebase for Scripted {
    fn rebase(&self, _base: &[u8], _current: &[u8], _preview: &[u8]) -> Rebased {
        self.merged.clone()
    }

    fn rederive(
        &self,
        request: &Value,
        path: &str,
        base: &[u8],
        current: &[u8],
        preview: &[u8],
    ) -> Option<Rederived> {
        assert_eq!(request, &json!({"ast_edit": {"ops": []}}));
        assert_eq!(
            (path, base, current, preview),
            (
                "a.txt",
                b"one\ntwo\n".as_slice(),
                b"one\nTWO\n".as_slice(),
                b"ONE\ntwo\n".as_slice()
            )
        );
        self.rederived.clone()
    }
}

fn staged(rebase: Scripted, rederive: Option<Value>) -> (TestDir, Store, String) {
    let dir = TestDir::with_files([("a.txt", "one\ntwo\n")]);
    let store = store_at(dir.root()).rebasing(Some(Arc::new(rebase)));
    let change_set = change_set([("a.txt", update("one\ntwo\n", "ONE\ntwo\n"))]);
    let action = new_action(Origin::Cli, "ast_edit", "AST Edit: 1 replacement in 1 file");
    let spooled = change_set.into_spooled(store.workspace()).unwrap();
    let id = store
        .stage_rederivable(action, spooled, rederive)
        .unwrap()
        .id;
    dir.write("a.txt", "one\nTWO\n");
    (dir, store, id)
}

fn request() -> Option<Value> {
    Some(json!({"ast_edit": {"ops": []}}))
}

#[test]
fn a_clean_rederivation_lands_instead_of_the_merge_and_is_named() {
    let rebase = Scripted {
        rederived: Some(Rederived::Clean(b"ONE\nTWO\n".to_vec())),
        merged: Rebased::Conflicts(Vec::new()),
    };
    let (dir, store, id) = staged(rebase, request());
    let record = store.pending().unwrap().remove(0);
    assert!(!record.foreign, "the request is signed with the record");
    assert_eq!(record.rederive, request());
    let outcome = store.apply(&id, None, "Go.", None).unwrap();
    assert_eq!(outcome.rebased_files, ["a.txt"]);
    assert_eq!(outcome.rederived_files, ["a.txt"]);
    assert_eq!(dir.try_read("a.txt").unwrap(), "ONE\nTWO\n");
}

#[test]
fn a_mismatch_falls_back_to_the_merge_and_a_conflict_names_the_moved_matches() {
    let hunk = line_two_conflict();
    let rebase = Scripted {
        rederived: Some(Rederived::Mismatch {
            appeared: vec!["`TWO` at line 2".into()],
            vanished: Vec::new(),
        }),
        merged: Rebased::Conflicts(vec![hunk.clone()]),
    };
    let (dir, store, id) = staged(rebase, request());
    let error = store.apply(&id, None, "Go.", None).unwrap_err();
    let StoreError::Conflicts { files } = &error else {
        panic!("not a conflict: {error}");
    };
    assert_eq!(
        files[0].reason,
        ConflictReason::MatchesMoved {
            appeared: vec!["`TWO` at line 2".into()],
            vanished: Vec::new(),
            hunks: vec![hunk],
        }
    );
    assert!(
        error.to_string().contains("  appeared: `TWO` at line 2"),
        "{error}"
    );
    assert_eq!(dir.try_read("a.txt").unwrap(), "one\nTWO\n");
}

#[test]
fn a_mismatch_whose_merge_is_clean_lands_the_merge() {
    let rebase = Scripted {
        rederived: Some(Rederived::Mismatch {
            appeared: Vec::new(),
            vanished: vec!["`two` at line 2".into()],
        }),
        merged: Rebased::Clean(b"merged\n".to_vec()),
    };
    let (dir, store, id) = staged(rebase, request());
    let outcome = store.apply(&id, None, "Go.", None).unwrap();
    assert_eq!(outcome.rebased_files, ["a.txt"]);
    assert!(outcome.rederived_files.is_empty());
    assert_eq!(dir.try_read("a.txt").unwrap(), "merged\n");
}

#[test]
fn a_record_without_a_request_is_only_merged() {
    let rebase = Scripted {
        rederived: Some(Rederived::Clean(b"not asked\n".to_vec())),
        merged: Rebased::Clean(b"merged\n".to_vec()),
    };
    let (dir, store, id) = staged(rebase, None);
    store.apply(&id, None, "Go.", None).unwrap();
    assert_eq!(dir.try_read("a.txt").unwrap(), "merged\n");
}
