//! Each connection is its own origin; the durable store is shared with the CLI.

use pretty_assertions::assert_eq;
use resolve_edit::Origin;
use serde_json::json;

use super::common::{
    Connection, Workspace, connected, is_error, pending_id, reminds, resolve_args, text,
};

#[tokio::test]
async fn two_connections_cannot_resolve_each_others_previews() {
    let workspace = Workspace::with(&[("a.txt", "a\n")]);
    let first = Connection::open(&workspace).await;
    let second = Connection::open(&workspace).await;
    assert_ne!(first.connection_id, second.connection_id);

    first.stage_edit("a.txt", "a", "A").await;
    let other = second.call("read", json!({"path": "a.txt"})).await;
    assert!(
        !reminds(&other),
        "the second connection has nothing pending"
    );
    let refused = second.resolve("apply", "Not mine.").await;
    assert!(is_error(&refused));
    assert_eq!(
        text(&refused),
        "No pending action to resolve. Nothing to apply or discard."
    );
    let nothing = second.resolve("discard", "Not mine.").await;
    assert_eq!(
        text(&nothing),
        "Nothing to discard; no pending action remains."
    );
    assert_eq!(workspace.read("a.txt"), "a\n");

    let applied = first.resolve("apply", "Mine.").await;
    assert_eq!(text(&applied), "Applied edit to a.txt.");
}

#[tokio::test]
async fn previews_are_staged_under_the_connection_origin() {
    let (workspace, connection) = connected(&[]).await;
    let staged = connection
        .call("write", json!({"path": "n.txt", "content": "n\n"}))
        .await;
    let id = pending_id(&staged);
    let pending = workspace.store().pending().unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].id, id);
    assert_eq!(
        pending[0].origin,
        Origin::Mcp(connection.connection_id.clone())
    );
    assert_eq!(
        pending[0].origin.to_string(),
        format!("mcp:{}", connection.connection_id)
    );
}

#[tokio::test]
async fn a_preview_applied_elsewhere_leaves_the_connection_with_nothing_pending() {
    let (workspace, connection) = connected(&[("a.txt", "a\n")]).await;
    let staged = connection.stage_edit("a.txt", "a", "A").await;
    let id = pending_id(&staged);

    // A person applies it from a terminal (another process, same store).
    workspace
        .store()
        .apply(&id, None, "Reviewed in a terminal.", None)
        .unwrap();
    assert_eq!(workspace.read("a.txt"), "A\n");

    let read = connection.call("read", json!({"path": "a.txt"})).await;
    assert!(!reminds(&read), "{}", text(&read));
    let apply = connection.resolve("apply", "Again?").await;
    assert!(is_error(&apply));
    assert_eq!(
        text(&apply),
        "No pending action to resolve. Nothing to apply or discard."
    );
}

#[tokio::test]
async fn the_history_records_the_connection_that_resolved_an_action() {
    let (workspace, connection) = connected(&[("a.txt", "a\n")]).await;
    let staged = connection.stage_edit("a.txt", "a", "A").await;
    let id = pending_id(&staged);
    let applied = connection.resolve("apply", "Mine.").await;
    assert!(!is_error(&applied), "{applied:?}");
    let entry = workspace
        .store()
        .history()
        .unwrap()
        .into_iter()
        .find(|entry| entry.action.id == id)
        .unwrap();
    let origin = Origin::Mcp(connection.connection_id.clone());
    assert_eq!(entry.action.origin, origin);
    assert_eq!(entry.resolved_by, Some(origin));
}

/// Resolve as a Codex session would: the call names the session in `_meta.sessionId`.
async fn resolve_in_session(connection: &Connection, session: &str) -> rmcp::model::CallToolResult {
    let mut params = rmcp::model::CallToolRequestParams::new("resolve").with_arguments(
        resolve_args("apply", "The session's own patch.")
            .as_object()
            .unwrap()
            .clone(),
    );
    params.meta = Some(rmcp::model::RequestMetaObject::from(
        json!({"sessionId": session}).as_object().unwrap().clone(),
    ));
    connection.client.call_tool(params).await.unwrap()
}

#[tokio::test]
async fn a_codex_sessions_calls_resolve_what_its_hook_staged_and_no_other_sessions() {
    let workspace = Workspace::with(&[("a.txt", "a\n")]);
    // What `resolve hook codex` stages for the session `sess-a`.
    resolve_edit::FileTools::new(
        workspace.store(),
        resolve_edit::codex_session_origin("sess-a"),
    )
    .call(
        "edit",
        &json!({"path": "a.txt", "old_text": "a", "new_text": "A"}),
    )
    .unwrap();
    let connection = Connection::open(&workspace).await;
    let other = resolve_in_session(&connection, "sess-b").await;
    assert!(is_error(&other), "another session's call sees nothing");
    assert_eq!(workspace.read("a.txt"), "a\n");
    let own = resolve_in_session(&connection, "sess-a").await;
    assert!(!is_error(&own), "{own:?}");
    assert!(text(&own).starts_with("Applied edit to a.txt."), "{own:?}");
    assert_eq!(workspace.read("a.txt"), "A\n");
}
