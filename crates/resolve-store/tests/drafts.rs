//! Reviews in progress: a draft is kept per pending action, read back by the same user only,
//! gone when its action is resolved, and removed by gc when its action is gone.

#![allow(
    clippy::disallowed_methods,
    reason = "tests set up and inspect files directly"
)]
#![expect(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] functions fail the test by panicking"
)]

use pretty_assertions::assert_eq;
use resolve_store::{
    ChangeSet, DraftRejection, FileChange, LineComment, LineSide, NewAction, Origin, RecordKey,
    Retention, ReviewDraft, STATE_DIR, Store, Workspace,
};
use serde_json::Value;

fn store_with(root: &std::path::Path, key: u8) -> Store {
    Store::open(Workspace::open(root).unwrap()).with_record_key(RecordKey::from_bytes([key; 32]))
}

fn stage(store: &Store, path: &str) -> String {
    let mut set = ChangeSet::new();
    set.insert(
        path,
        FileChange::Create {
            content: "new\n".into(),
        },
    );
    let action = NewAction {
        origin: Origin::Agent,
        source_tool: "write".into(),
        label: format!("Write: {path}"),
        preview_text: "preview".into(),
        details: Value::Null,
    };
    store.stage(action, set).unwrap().id
}

fn draft() -> ReviewDraft {
    ReviewDraft {
        action_version: "v1".into(),
        rejected: vec![DraftRejection {
            address: "a.txt#1".into(),
            reason: Some("not this".into()),
        }],
        comments: vec![LineComment {
            path: "a.txt".into(),
            line: 1,
            side: LineSide::New,
            text: "new".into(),
            comment: "why new?".into(),
        }],
    }
}

#[test]
fn a_draft_reads_back_until_its_action_is_resolved() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with(dir.path(), 1);
    let id = stage(&store, "a.txt");
    assert_eq!(store.review_draft(&id).unwrap(), None);
    store.save_review_draft(&id, &draft()).unwrap();
    assert_eq!(store.review_draft(&id).unwrap(), Some(draft()));

    // Saving an empty draft removes it.
    store
        .save_review_draft(&id, &ReviewDraft::default())
        .unwrap();
    assert_eq!(store.review_draft(&id).unwrap(), None);
    assert!(!dir.path().join(STATE_DIR).join("reviews/1.json").exists());

    store.save_review_draft(&id, &draft()).unwrap();
    store.discard(&id, "no", None).unwrap();
    assert_eq!(store.review_draft(&id).unwrap(), None);
    let report = store.gc(&Retention::default(), false).unwrap();
    assert_eq!(report.review_drafts, 1);
    assert!(!dir.path().join(STATE_DIR).join("reviews/1.json").exists());
}

#[test]
fn a_draft_another_key_signed_or_one_edited_is_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let mine = store_with(dir.path(), 1);
    let id = stage(&mine, "a.txt");
    mine.save_review_draft(&id, &draft()).unwrap();
    assert_eq!(store_with(dir.path(), 2).review_draft(&id).unwrap(), None);

    let path = dir.path().join(STATE_DIR).join("reviews/1.json");
    let edited = std::fs::read_to_string(&path)
        .unwrap()
        .replace("not this", "approved");
    std::fs::write(&path, edited).unwrap();
    assert_eq!(mine.review_draft(&id).unwrap(), None);
}

#[test]
fn a_draft_is_refused_for_a_malformed_id() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with(dir.path(), 1);
    assert!(store.save_review_draft("../../x", &draft()).is_err());
    assert!(store.review_draft("nonsense").is_err());
}
