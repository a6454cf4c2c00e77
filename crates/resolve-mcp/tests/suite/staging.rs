//! Staging, the reminder, apply, discard, stale previews and the stack order.

use pretty_assertions::assert_eq;
use resolve_core::RESOLVE_REMINDER;
use resolve_edit::PREVIEW_BANNER;
use serde_json::json;

use super::common::{
    Connection, Workspace, assert_error_starting, connected, details, is_error, reminds, text,
};

#[tokio::test]
async fn a_preview_touches_nothing_and_every_result_reminds_until_it_is_applied() {
    let (workspace, connection) = connected(&[("a.txt", "one\ntwo\n")]).await;

    let staged = connection.stage_edit("a.txt", "two", "2").await;
    assert!(!is_error(&staged), "{staged:?}");
    assert!(
        text(&staged).starts_with(PREVIEW_BANNER),
        "{}",
        text(&staged)
    );
    assert!(text(&staged).contains("-two\n+2"), "{}", text(&staged));
    assert!(reminds(&staged));
    assert_eq!(details(&staged)["pendingId"], "pending-action:edit:1");
    assert_eq!(workspace.read("a.txt"), "one\ntwo\n");

    // Read-only tools still run, and remind.
    for (name, arguments) in [
        ("read", json!({"path": "a.txt"})),
        ("ls", json!({})),
        ("grep", json!({"pattern": "two"})),
    ] {
        let result = connection.call(name, arguments).await;
        assert!(!is_error(&result), "{name}: {result:?}");
        assert!(reminds(&result), "{name}: {}", text(&result));
    }
    let read = connection.call("read", json!({"path": "a.txt"})).await;
    assert_eq!(
        text(&read),
        format!("     1\tone\n     2\ttwo\n\n{RESOLVE_REMINDER}")
    );

    let applied = connection.resolve("apply", "Numbers read better.").await;
    assert!(!is_error(&applied), "{applied:?}");
    assert_eq!(text(&applied), "Applied edit to a.txt.");
    assert_eq!(details(&applied)["action"], "apply");
    assert_eq!(details(&applied)["label"], "Edit: a.txt");
    assert_eq!(workspace.read("a.txt"), "one\n2\n");

    let read = connection.call("read", json!({"path": "a.txt"})).await;
    assert!(!reminds(&read), "{}", text(&read));
}

#[tokio::test]
async fn discard_drops_the_preview_with_the_reason_and_writes_nothing() {
    let (workspace, connection) = connected(&[]).await;
    let staged = connection
        .call("write", json!({"path": "new.txt", "content": "hi\n"}))
        .await;
    assert!(reminds(&staged));
    let discarded = connection.resolve("discard", "Not needed.").await;
    assert!(!is_error(&discarded), "{discarded:?}");
    assert_eq!(
        text(&discarded),
        "Discarded: Write: new.txt. Reason: Not needed."
    );
    assert!(!workspace.path("new.txt").exists());
    let again = connection.resolve("discard", "Again.").await;
    assert!(!is_error(&again));
    assert_eq!(
        text(&again),
        "Nothing to discard; no pending action remains."
    );
}

#[tokio::test]
async fn a_stale_preview_is_an_error_result_and_stays_pending() {
    let (workspace, connection) = connected(&[("a.txt", "old\n")]).await;
    connection.stage_edit("a.txt", "old", "new").await;
    workspace.write("a.txt", "old\nchanged by someone else\n");

    let stale = connection.resolve("apply", "Ship it.").await;
    assert_error_starting(&stale, "Preview is stale: `a.txt` changed");
    assert!(reminds(&stale), "still pending, so still reminded");
    assert_eq!(workspace.read("a.txt"), "old\nchanged by someone else\n");

    let discarded = connection.resolve("discard", "Stale.").await;
    assert!(!is_error(&discarded));
    assert!(!reminds(&discarded));
}

#[tokio::test]
async fn stacked_previews_resolve_head_first() {
    let (workspace, connection) = connected(&[("a.txt", "a\n")]).await;
    connection.stage_edit("a.txt", "a", "A").await;
    connection
        .call("write", json!({"path": "b.txt", "content": "b\n"}))
        .await;

    let first = connection.resolve("apply", "Newest first.").await;
    assert_eq!(
        text(&first),
        format!("Wrote b.txt.\n\n{RESOLVE_REMINDER}"),
        "the edit is still pending"
    );
    assert_eq!(workspace.read("a.txt"), "a\n");

    let second = connection.resolve("apply", "Then the edit.").await;
    assert_eq!(text(&second), "Applied edit to a.txt.");
    assert_eq!(workspace.read("a.txt"), "A\n");
    assert_eq!(workspace.read("b.txt"), "b\n");
}

#[tokio::test]
async fn ast_edit_stages_a_structural_rewrite_and_only_paths_apply_part_of_it() {
    let workspace = Workspace::with(&[
        ("src/a.rs", "fn a() { x.unwrap(); }\n"),
        ("src/b.rs", "fn b() { y.unwrap(); }\n"),
    ]);
    let connection = Connection::open(&workspace).await;
    let staged = connection
        .call(
            "ast_edit",
            json!({"ops": [{"pat": "$X.unwrap()", "out": "$X.expect(\"checked\")"}], "paths": ["src"]}),
        )
        .await;
    assert!(!is_error(&staged), "{}", text(&staged));
    assert!(text(&staged).starts_with(PREVIEW_BANNER));
    assert_eq!(
        details(&staged)["label"],
        "AST Edit: 2 replacements in 2 files"
    );
    let applied = connection
        .call(
            "resolve",
            json!({"action": "apply", "reason": "Only a.", "extra": {"only": ["src/a.rs"]}}),
        )
        .await;
    assert!(!is_error(&applied), "{}", text(&applied));
    assert!(!reminds(&applied));
    assert_eq!(
        workspace.read("src/a.rs"),
        "fn a() { x.expect(\"checked\"); }\n"
    );
    assert_eq!(workspace.read("src/b.rs"), "fn b() { y.unwrap(); }\n");
}
