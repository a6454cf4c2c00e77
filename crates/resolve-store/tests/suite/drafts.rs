//! Reviews in progress: a draft is kept per pending action, read back by the same user only,
//! gone when its action is resolved, and removed by gc when its action is gone.

use pretty_assertions::assert_eq;
use resolve_store::{
    DraftRejection, LineComment, LineSide, Origin, RecordKey, Retention, ReviewDraft, STATE_DIR,
    Store, Workspace,
};

use super::common::{stage_create, store_in_temp};

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
    let (dir, store) = store_in_temp();
    let id = stage_create(&store, Origin::Agent, "a.txt", "new\n").id;
    assert_eq!(store.review_draft(&id).unwrap(), None);
    store.save_review_draft(&id, &draft()).unwrap();
    assert_eq!(store.review_draft(&id).unwrap(), Some(draft()));

    // Saving an empty draft removes it.
    store
        .save_review_draft(&id, &ReviewDraft::default())
        .unwrap();
    assert_eq!(store.review_draft(&id).unwrap(), None);
    assert!(!dir.root().join(STATE_DIR).join("reviews/1.json").exists());

    store.save_review_draft(&id, &draft()).unwrap();
    store.discard(&id, "no", None).unwrap();
    assert_eq!(store.review_draft(&id).unwrap(), None);
    let report = store.gc(&Retention::default(), false).unwrap();
    assert_eq!(report.review_drafts, 1);
    assert!(!dir.root().join(STATE_DIR).join("reviews/1.json").exists());
}

#[test]
fn a_draft_another_key_signed_or_one_edited_is_not_read() {
    let (dir, mine) = store_in_temp();
    let id = stage_create(&mine, Origin::Agent, "a.txt", "new\n").id;
    mine.save_review_draft(&id, &draft()).unwrap();
    let theirs = Store::open(Workspace::open(dir.root()).unwrap())
        .with_record_key(RecordKey::from_bytes([2; 32]));
    assert_eq!(theirs.review_draft(&id).unwrap(), None);

    let path = dir.root().join(STATE_DIR).join("reviews/1.json");
    let edited = std::fs::read_to_string(&path)
        .unwrap()
        .replace("not this", "approved");
    std::fs::write(&path, edited).unwrap();
    assert_eq!(mine.review_draft(&id).unwrap(), None);
}

#[test]
fn a_draft_is_refused_for_a_malformed_id() {
    let (_dir, store) = store_in_temp();
    assert!(store.save_review_draft("../../x", &draft()).is_err());
    assert!(store.review_draft("nonsense").is_err());
}
