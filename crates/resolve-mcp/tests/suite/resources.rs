//! Pending previews and history as resources, and `list_changed` notifications.

use pretty_assertions::assert_eq;
use rmcp::model::{ReadResourceRequestParams, ResourceContents};
use serde_json::json;

use super::common::{Connection, connected, pending_id};
use resolve_test_support::text::assert_starts_with;

async fn read_text(connection: &Connection, uri: &str) -> String {
    let result = connection
        .client
        .read_resource(ReadResourceRequestParams::new(uri))
        .await
        .unwrap();
    match &result.contents[0] {
        ResourceContents::TextResourceContents {
            text, mime_type, ..
        } => {
            assert_eq!(mime_type.as_deref(), Some("text/plain"));
            text.clone()
        }
        other => panic!("expected text, got {other:?}"),
    }
}

/// The URIs listed, without the review app (`tests/suite/app.rs` checks it).
async fn uris(connection: &Connection) -> Vec<String> {
    let mut uris = connection.resource_uris().await;
    uris.retain(|uri| !uri.starts_with("ui://"));
    uris
}

#[tokio::test]
async fn pending_previews_and_history_are_listed_and_read_as_text() {
    let (_workspace, connection) = connected(&[("a.txt", "a\n")]).await;
    assert_eq!(uris(&connection).await, Vec::<String>::new());

    let staged = connection.stage_edit("a.txt", "a", "A").await;
    let id = pending_id(&staged);
    let pending_uri = format!("resolve://pending/{id}");
    assert_eq!(uris(&connection).await, vec![pending_uri.clone()]);
    let preview = read_text(&connection, &pending_uri).await;
    assert!(
        preview.starts_with(&format!(
            "{id} — pending (mcp:{}): Edit: a.txt\n\n",
            connection.connection_id
        )),
        "{preview}"
    );
    assert!(preview.contains("-a\n+A"), "{preview}");

    connection.resolve("apply", "Capital.").await;
    let history_uri = format!("resolve://history/{id}");
    assert_eq!(uris(&connection).await, vec![history_uri.clone()]);
    let history = read_text(&connection, &history_uri).await;
    assert_starts_with(
        &history,
        &format!("{id}  applied  Edit: a.txt  — Capital.\n\n"),
    );
    assert!(history.contains("-a\n+A"), "{history}");

    let gone = connection
        .client
        .read_resource(ReadResourceRequestParams::new(pending_uri))
        .await
        .unwrap_err();
    assert!(gone.to_string().contains("no longer pending"), "{gone}");
    let unknown = connection
        .client
        .read_resource(ReadResourceRequestParams::new("resolve://elsewhere/x"))
        .await
        .unwrap_err();
    assert!(
        unknown.to_string().contains("Unknown resource"),
        "{unknown}"
    );
}

#[tokio::test]
async fn resource_templates_name_both_kinds_of_uri() {
    let (_workspace, connection) = connected(&[]).await;
    let templates = connection
        .client
        .list_all_resource_templates()
        .await
        .unwrap();
    let uris: Vec<&str> = templates
        .iter()
        .map(|template| template.uri_template.as_str())
        .collect();
    assert_eq!(uris, ["resolve://pending/{id}", "resolve://history/{id}"]);
}

#[tokio::test]
async fn list_changed_is_sent_after_staging_apply_and_discard_but_not_after_reads() {
    let (_workspace, connection) = connected(&[("a.txt", "a\n")]).await;
    connection.stage_edit("a.txt", "a", "A").await;
    connection.wait_list_changed(1).await;

    // A read changes nothing. Notifications arrive in the order they are sent, so once the
    // apply's has come, one the read had sent would have come before it: no sleep needed.
    connection.call("read", json!({"path": "a.txt"})).await;
    connection.resolve("apply", "Yes.").await;
    connection.wait_list_changed(2).await;
    assert_eq!(connection.list_changed(), 2, "a read changes nothing");

    connection
        .call("write", json!({"path": "b.txt", "content": "b\n"}))
        .await;
    connection.wait_list_changed(3).await;
    connection.resolve("discard", "No.").await;
    connection.wait_list_changed(4).await;
}
