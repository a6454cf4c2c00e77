//! Reviewing a pending action through the library: composing hunks (a property over random
//! texts), applying a reviewer's pick with reasons, amending, and the reviewer notes a
//! person's decisions leave for the model that staged the action — once, and only for it.

#![expect(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] functions fail the test by panicking"
)]

use pretty_assertions::assert_eq;
use proptest::prelude::*;
use resolve_core::DecidedBy;
use resolve_edit::{
    AmendOutcome, ApplyOutcome, EditError, FileHunks, FileTools, HunkAddress, HunkRejection,
    Origin, Outcome, ReviewDecision, Selection, Store, StoreError, action_hunks, amend,
    apply_reviewed, reviewer_note_text,
};
use resolve_test_support::TestDir;
use resolve_test_support::text::{assert_starts_with, marked_numbered_lines};
use serde_json::json;

use super::common::store_with_files;

/// Lines of text ending in `\n`, `\r\n` or nothing (only the last may end in nothing).
fn text() -> impl Strategy<Value = String> {
    (
        any::<bool>(),
        prop::collection::vec(
            (
                prop::sample::select(vec!["a", "b", "c", "d", "é", ""]),
                prop::sample::select(vec!["\n", "\r\n"]),
            ),
            0..40,
        ),
        any::<bool>(),
    )
        .prop_map(|(bom, lines, final_newline)| {
            let mut text = if bom {
                "\u{feff}".to_owned()
            } else {
                String::new()
            };
            let count = lines.len();
            for (index, (line, ending)) in lines.into_iter().enumerate() {
                text.push_str(line);
                if index + 1 < count || final_newline {
                    text.push_str(ending);
                }
            }
            text
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn composing_every_hunk_gives_the_new_text_and_none_gives_the_base(
        base in text(),
        new in text(),
        picks in prop::collection::vec(any::<bool>(), 0..20),
    ) {
        let file = FileHunks::compute("f.txt", Some(&base), Some(&new));
        let every: Vec<usize> = file.hunks.iter().map(|hunk| hunk.number).collect();
        let all = file.compose(&every).unwrap();
        let none = file.compose(&[]).unwrap();
        prop_assert_eq!(&all, &new);
        prop_assert_eq!(&none, &base);
        // Any subset: each hunk's old lines are replaced by its new lines, the rest is base.
        let kept: Vec<usize> = every
            .iter()
            .copied()
            .filter(|number| picks.get(*number - 1).copied().unwrap_or(false))
            .collect();
        let composed = file.compose(&kept).unwrap();
        let again = FileHunks::compute("f.txt", Some(&composed), Some(&new));
        prop_assert_eq!(again.compose(&(1..=again.hunks.len()).collect::<Vec<_>>()).unwrap(), new);
        let back = FileHunks::compute("f.txt", Some(&base), Some(&composed));
        prop_assert_eq!(back.compose(&[]).unwrap(), base);
    }
}

/// Stage a `write` of `a.txt` (20 lines, lines 2 and 19 marked: two hunks) for `origin`.
fn stage_two_hunks(store: &Store, origin: Origin) -> String {
    let result = FileTools::new(store.clone(), origin)
        .call(
            "write",
            &json!({"path": "a.txt", "content": marked_numbered_lines(20, &[2, 19])}),
        )
        .unwrap();
    result.details.unwrap()["pendingId"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// A workspace holding `a.txt` (20 lines) and a store over it with [`stage_two_hunks`] staged
/// for `origin`; the pending id.
fn two_hunks_staged(origin: Origin) -> (TestDir, Store, String) {
    let (dir, store) = store_with_files([("a.txt", &marked_numbered_lines(20, &[]))]);
    let id = stage_two_hunks(&store, origin);
    (dir, store, id)
}

/// A person applies all of `id` but its second hunk, for the reason "Only line 2.".
fn apply_but_the_second_hunk(store: &Store, id: &str) -> Result<ApplyOutcome, EditError> {
    apply_reviewed(
        &person(store),
        id,
        &reject_second_hunk(),
        "Only line 2.",
        None,
    )
}

fn person(store: &Store) -> Store {
    store.clone().resolved_by(Origin::Cli)
}

fn reject_second_hunk() -> ReviewDecision {
    ReviewDecision {
        selection: Selection::Except(vec![HunkAddress::hunk("a.txt", 2)]),
        rejections: vec![HunkRejection {
            address: HunkAddress::hunk("a.txt", 2),
            reason: "keep line 19".into(),
        }],
        fingerprint: None,
    }
}

#[test]
fn the_hunks_of_an_action_are_numbered_per_file_and_a_changed_file_shows_none() {
    let (dir, store, id) = two_hunks_staged(Origin::Agent);
    let record = store.pending_record(&id).unwrap().unwrap();
    let hunks = action_hunks(&store, &record).unwrap();
    assert_eq!(hunks.fingerprint, record.fingerprint);
    let file = hunks.files[0].hunks.as_ref().unwrap();
    assert_eq!(
        file.hunks
            .iter()
            .map(|h| h.header.as_str())
            .collect::<Vec<_>>(),
        ["@@ -1,5 +1,5 @@", "@@ -16,5 +16,5 @@"]
    );
    std::fs::write(dir.path().join("a.txt"), "changed\n").unwrap();
    let stale = action_hunks(&store, &record).unwrap();
    assert!(stale.files[0].hunks.is_none());
    assert!(stale.addressed_diff().contains("changed since the preview"));
}

#[test]
fn a_reviewed_apply_lands_the_kept_hunks_and_records_the_rejected_ones_with_reasons() {
    let (dir, store, id) = two_hunks_staged(Origin::Agent);
    let outcome = apply_but_the_second_hunk(&store, &id).unwrap();
    assert_eq!(
        dir.try_read("a.txt").unwrap(),
        marked_numbered_lines(20, &[2])
    );
    let review = outcome.record.review.unwrap();
    assert_eq!(review.hunks[0].landed, [1]);
    assert_eq!(review.hunks[0].rejected[0].hunk, 2);
    assert_eq!(
        review.hunks[0].rejected[0].reason.as_deref(),
        Some("keep line 19")
    );
    // A reason for a hunk that lands is refused.
    std::fs::write(dir.path().join("a.txt"), marked_numbered_lines(20, &[])).unwrap();
    let id = stage_two_hunks(&store, Origin::Agent);
    let decision = ReviewDecision {
        selection: Selection::All,
        ..reject_second_hunk()
    };
    let error = apply_reviewed(&person(&store), &id, &decision, "x", None).unwrap_err();
    assert!(error.to_string().contains("selected to land"), "{error}");
}

#[test]
fn a_decision_on_an_amended_version_is_refused_and_nothing_lands() {
    let (dir, store, id) = two_hunks_staged(Origin::Agent);
    let reviewed = store.pending_record(&id).unwrap().unwrap().fingerprint;
    let amended = amend(
        &person(&store),
        &id,
        "a.txt",
        marked_numbered_lines(20, &[3]),
        None,
    )
    .unwrap();
    assert!(matches!(amended, AmendOutcome::Amended(_)));
    let decision = ReviewDecision {
        fingerprint: Some(reviewed),
        ..reject_second_hunk()
    };
    let error = apply_reviewed(&person(&store), &id, &decision, "x", None).unwrap_err();
    assert!(
        matches!(
            error,
            resolve_edit::EditError::Store(StoreError::PreviewChanged { .. })
        ),
        "{error}"
    );
    assert_eq!(
        dir.try_read("a.txt").unwrap(),
        marked_numbered_lines(20, &[])
    );
}

#[test]
fn a_person_applying_part_of_a_models_action_leaves_one_note_for_that_origin_only() {
    let (_dir, store, id) = two_hunks_staged(Origin::Mcp("c1".into()));
    apply_but_the_second_hunk(&store, &id).unwrap();
    assert!(
        store
            .take_reviewer_notes(&Origin::Agent)
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .take_reviewer_notes(&Origin::Mcp("c2".into()))
            .unwrap()
            .is_empty()
    );
    let notes = store
        .take_reviewer_notes(&Origin::Mcp("c1".into()))
        .unwrap();
    assert_eq!(notes.len(), 1);
    assert_eq!(notes[0].decided_by, DecidedBy::Person);
    assert_eq!(
        reviewer_note_text(&notes[0]),
        format!(
            "<system-reminder>\nA reviewer resolved {id} (Write: a.txt): applied a.txt#1; rejected a.txt#2 (\"keep line 19\").\nReason: \"Only line 2.\"\n</system-reminder>"
        )
    );
    assert!(
        store
            .take_reviewer_notes(&Origin::Mcp("c1".into()))
            .unwrap()
            .is_empty(),
        "told once"
    );
}

#[test]
fn an_amendment_then_a_discard_by_a_person_are_told_together_and_a_models_own_resolve_tells_nothing()
 {
    let (_dir, store, id) = two_hunks_staged(Origin::Agent);
    let person = person(&store);
    amend(&person, &id, "a.txt", marked_numbered_lines(20, &[2]), None).unwrap();
    person.discard(&id, "Not now.", None).unwrap();
    let notes = store.take_reviewer_notes(&Origin::Agent).unwrap();
    assert_eq!(notes.len(), 1, "{notes:?}");
    let text = reviewer_note_text(&notes[0]);
    assert!(text.contains("A reviewer discarded"), "{text}");
    assert!(text.contains("-19!\n+19\n"), "the amendment's diff: {text}");
    assert!(text.contains("Reason: \"Not now.\""), "{text}");

    // The model resolving its own action (the agent's store) leaves no note.
    let model = store.clone().resolved_by(Origin::Agent);
    let id = stage_two_hunks(&store, Origin::Agent);
    assert_eq!(model.decider(), Some(DecidedBy::Model));
    apply_reviewed(&model, &id, &reject_second_hunk(), "Mine.", None).unwrap();
    let id = stage_two_hunks(&store, Origin::Agent);
    model.discard(&id, "Mine.", None).unwrap();
    assert!(
        store
            .take_reviewer_notes(&Origin::Agent)
            .unwrap()
            .is_empty()
    );

    // Nothing staged at the command line has a model to tell.
    let id = stage_two_hunks(&store, Origin::Cli);
    person.discard(&id, "x", None).unwrap();
    assert!(store.take_reviewer_notes(&Origin::Cli).unwrap().is_empty());
    let history = store.history().unwrap();
    assert!(
        history
            .iter()
            .all(|entry| entry.outcome == Outcome::Discarded || entry.review.is_some())
    );
}

#[test]
fn amend_keeps_the_id_base_and_order_and_recomputes_the_preview() {
    let (dir, store, id) = two_hunks_staged(Origin::Agent);
    let before = store.pending_record(&id).unwrap().unwrap();
    let AmendOutcome::Amended(after) = amend(
        &person(&store),
        &id,
        "./a.txt",
        marked_numbered_lines(20, &[5]),
        None,
    )
    .unwrap() else {
        panic!("expected an amendment");
    };
    assert_eq!(after.id, before.id);
    assert_eq!(after.order, before.order);
    assert_eq!(
        after.change_set.get("a.txt").unwrap().base_hash(),
        before.change_set.get("a.txt").unwrap().base_hash()
    );
    let preview = store.blobs().read_text(&after.preview_text).unwrap();
    assert_starts_with(&preview, resolve_edit::PREVIEW_BANNER);
    assert!(preview.contains("-5\n+5!\n"), "{preview}");
    assert!(!preview.contains("+2!"), "{preview}");
    assert_eq!(
        after.amendments[0].diff,
        resolve_edit::unified_diff(
            "a.txt",
            &marked_numbered_lines(20, &[2, 19]),
            &marked_numbered_lines(20, &[5])
        )
    );
    assert_eq!(
        amend(
            &person(&store),
            &id,
            "a.txt",
            marked_numbered_lines(20, &[5]),
            None
        )
        .unwrap(),
        AmendOutcome::Unchanged
    );
    store.apply(&id, None, "ok", None).unwrap();
    assert_eq!(
        dir.try_read("a.txt").unwrap(),
        marked_numbered_lines(20, &[5])
    );
}
