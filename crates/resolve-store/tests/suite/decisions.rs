//! Who decided each resolution (`decidedBy`), and the model's reason kept beside a person's.

#![expect(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] functions fail the test by panicking"
)]

use pretty_assertions::assert_eq;
use resolve_core::DecidedBy;
use resolve_store::{Attribution, HistoryRecord, Origin, Outcome, Store, StoredAction};
use serde_json::json;

use super::common::{stage_create, store_at};

fn resolved(store: &Store, id: &str) -> HistoryRecord {
    match store.get(id).unwrap() {
        StoredAction::Resolved(entry) => entry,
        StoredAction::Pending(_) => panic!("{id} is still pending"),
    }
}

#[test]
fn history_records_who_decided_and_keeps_the_models_reason_beside_a_persons() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_at(dir.path()).resolved_by(Origin::Mcp("conn-1".into()));
    let by_model = stage_create(&store, Origin::Mcp("conn-1".into()), "a.txt", "new\n");
    let by_person = stage_create(&store, Origin::Mcp("conn-1".into()), "b.txt", "new\n");
    let same_reason = stage_create(&store, Origin::Mcp("conn-1".into()), "c.txt", "new\n");
    let discarded = stage_create(&store, Origin::Mcp("conn-1".into()), "d.txt", "new\n");
    let untold = stage_create(&store, Origin::Mcp("conn-1".into()), "e.txt", "new\n");

    // Who decided travels with each decision; the handle only knows who resolves.
    assert_eq!(store.decider(), Some(DecidedBy::Model));
    store
        .apply_as(
            &by_model.id,
            None,
            "Model wants it.",
            None,
            &Attribution::model(),
        )
        .unwrap();
    let person = Attribution::over_model(DecidedBy::Person, "Model wants it.");
    store
        .apply_as(&by_person.id, None, "Looks right to me.", None, &person)
        .unwrap();
    store
        .apply_as(&same_reason.id, None, "Model wants it.", None, &person)
        .unwrap();
    store
        .discard_as(&discarded.id, "Wrong file.", None, &person)
        .unwrap();
    store.apply(&untold.id, None, "No one said.", None).unwrap();

    let entry = resolved(&store, &by_model.id);
    assert_eq!(entry.decided_by, Some(DecidedBy::Model));
    assert_eq!(entry.model_reason, None);
    let entry = resolved(&store, &by_person.id);
    assert_eq!(
        (
            entry.decided_by,
            entry.reason.as_str(),
            entry.model_reason.as_deref()
        ),
        (
            Some(DecidedBy::Person),
            "Looks right to me.",
            Some("Model wants it.")
        )
    );
    assert_eq!(entry.resolved_by, Some(Origin::Mcp("conn-1".into())));
    let entry = resolved(&store, &same_reason.id);
    assert_eq!(
        (entry.decided_by, entry.model_reason),
        (Some(DecidedBy::Person), None),
        "the same reason is not repeated"
    );
    let entry = resolved(&store, &discarded.id);
    assert_eq!(entry.outcome, Outcome::Discarded);
    assert_eq!(entry.model_reason.as_deref(), Some("Model wants it."));
    assert_eq!(
        resolved(&store, &untold.id).decided_by,
        Some(DecidedBy::Model),
        "nobody said who decided: an MCP connection's resolution is the model's"
    );
}

#[test]
fn decided_by_and_the_models_reason_round_trip_and_old_records_read_without_them() {
    let mut json = json!({
        "version": 1, "id": "pending-action:edit:1", "seq": 1, "origin": "agent",
        "sourceTool": "edit", "label": "Edit: a", "createdAt": 5, "order": 2,
        "previewText": "", "details": null, "fingerprint": "f",
        "outcome": "applied", "reason": "r", "resolvedAt": 6,
        "appliedFiles": [], "droppedFiles": [], "undone": false
    });
    let old: HistoryRecord = serde_json::from_value(json.clone()).unwrap();
    assert_eq!((old.decided_by, old.model_reason), (None, None));
    json["decidedBy"] = "person".into();
    json["modelReason"] = "m".into();
    let record: HistoryRecord = serde_json::from_value(json).unwrap();
    assert_eq!(record.decided_by, Some(DecidedBy::Person));
    assert_eq!(record.model_reason.as_deref(), Some("m"));
    let written = serde_json::to_value(&record).unwrap();
    assert_eq!(
        (&written["decidedBy"], &written["modelReason"]),
        (&json!("person"), &json!("m"))
    );
    assert_eq!(DecidedBy::Model.to_string(), "model");
}
