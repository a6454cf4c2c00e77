//! Staging a producer's preview through the model-facing tools, down to what the store keeps:
//! an `ast_edit` preview's contents stay in packs of the blob store, named by the record.

use pretty_assertions::assert_eq;
use resolve_core::ToolResult;
use resolve_edit::{
    Content, FileChange, FileTools, Origin, PendingRecord, ProducerRebase, STATE_DIR, Store,
    StoreError, StoredAction,
};
use serde_json::json;

use super::common::empty_store;

/// `foo($A)` → `bar($A)` over the whole store, staged through the model-facing tools: the
/// tool's result and the pending record it staged.
#[expect(clippy::unwrap_used, reason = "a test helper panics when setup fails")]
fn staged_foo_to_bar(store: &Store) -> (ToolResult, PendingRecord) {
    let result = FileTools::new(store.clone(), Origin::Cli)
        .call(
            "ast_edit",
            &json!({"ops": [{"pat": "foo($A)", "out": "bar($A)"}], "paths": ["."]}),
        )
        .unwrap();
    let id = result.details.as_ref().unwrap()["pendingId"]
        .as_str()
        .unwrap()
        .to_owned();
    let StoredAction::Pending(record) = store.get(&id).unwrap() else {
        panic!("{id} is not pending");
    };
    (result, record)
}

#[test]
fn an_ast_edit_preview_keeps_its_texts_in_packs_and_a_damaged_pack_fails_the_apply() {
    let (dir, store) = empty_store();
    dir.write("a.rs", "fn a() { foo(1) }\n");
    dir.write("b.rs", "fn b() { foo(2) }\n");
    let (result, record) = staged_foo_to_bar(&store);
    assert!(
        result.text.contains("+fn a() { bar(1) }"),
        "{}",
        result.text
    );
    let details = result.details.unwrap();
    assert_eq!(
        details["fileReplacements"],
        json!([{"path": "a.rs", "count": 1}, {"path": "b.rs", "count": 1}])
    );
    assert_eq!(
        record.details.get("fileReplacements"),
        None,
        "the record keeps the file list once, in its change set"
    );
    assert_eq!(record.details["filesTouched"], 2);
    let Some(Content::Packed { pack, .. }) = record
        .change_set
        .get("b.rs")
        .and_then(FileChange::new_content)
    else {
        panic!("b.rs is not packed: {:?}", record.change_set);
    };
    let pack = dir.path().join(STATE_DIR).join("blobs").join(pack);
    let bytes = std::fs::read(&pack).unwrap();
    std::fs::write(&pack, bytes.to_ascii_uppercase()).unwrap();
    let error = store.apply(&record.id, None, "r", None).unwrap_err();
    assert!(
        matches!(error, StoreError::CorruptState { ref path, .. } if *path == pack),
        "{error}"
    );
    assert_eq!(dir.try_read("a.rs").as_deref(), Some("fn a() { foo(1) }\n"));
    assert_eq!(dir.try_read("b.rs").as_deref(), Some("fn b() { foo(2) }\n"));
}

#[test]
fn an_ast_edit_preview_keeps_each_original_in_its_pack_and_a_moved_file_rebases_from_it() {
    let (dir, store) = empty_store();
    let store = store.rebasing(Some(std::sync::Arc::new(ProducerRebase)));
    let files = ["a.rs", "b.rs", "c.rs"];
    for (index, file) in files.iter().enumerate() {
        dir.write(file, format!("fn f{index}() {{\n    foo({index})\n}}\n"));
    }
    let blobs = dir.path().join(STATE_DIR).join("blobs");
    let (_, record) = staged_foo_to_bar(&store);
    for file in files {
        let change = record.change_set.get(file).unwrap();
        let Some(Content::Packed { hash, .. }) = change.kept_base() else {
            panic!("the original of {file} is not in a pack: {change:?}");
        };
        assert_eq!(Some(hash.as_str()), change.base_hash(), "{file}");
        assert!(
            !blobs.join(&hash).exists(),
            "the original of {file} was also kept as a blob of its own"
        );
    }
    // a.rs moves: a line lands above the change; the apply merges from the packed original.
    dir.write("a.rs", "// moved\nfn f0() {\n    foo(0)\n}\n");
    store.apply(&record.id, None, "r", None).unwrap();
    assert_eq!(
        dir.try_read("a.rs").as_deref(),
        Some("// moved\nfn f0() {\n    bar(0)\n}\n")
    );
    assert_eq!(
        dir.try_read("c.rs").as_deref(),
        Some("fn f2() {\n    bar(2)\n}\n")
    );
}
