//! The review as an MCP App (io.modelcontextprotocol/ui): the server declares the extension,
//! lists and serves `ui://resolve/review` as `text/html;profile=mcp-app`, and the producers and
//! `resolve` link it under `_meta.ui.resourceUri`.

use pretty_assertions::assert_eq;
use rmcp::model::{ReadResourceRequestParams, ResourceContents};
use serde_json::{Value, json};

use super::common::{assert_error_containing, connected, details, is_error, pending_id, text};

const APP_URI: &str = "ui://resolve/review";
const APP_MIME: &str = "text/html;profile=mcp-app";

#[tokio::test]
async fn the_server_declares_the_mcp_apps_extension_with_its_mime_type() {
    let (_workspace, connection) = connected(&[]).await;
    let info = connection.client.peer_info().unwrap();
    let capabilities = serde_json::to_value(&info.capabilities).unwrap();
    assert_eq!(
        capabilities["extensions"]["io.modelcontextprotocol/ui"],
        json!({"mimeTypes": [APP_MIME]})
    );
}

#[tokio::test]
async fn the_review_app_is_listed_and_read_as_one_self_contained_html_page() {
    let (_workspace, connection) = connected(&[("a.txt", "a\n")]).await;
    let listed = connection.client.list_all_resources().await.unwrap();
    let app: Vec<_> = listed.iter().filter(|r| r.uri == APP_URI).collect();
    assert_eq!(app.len(), 1, "{listed:?}");
    assert_eq!(app[0].mime_type.as_deref(), Some(APP_MIME));
    assert_eq!(app[0].name, "review");
    let listed_meta = serde_json::to_value(&app[0].meta).unwrap();
    assert_eq!(
        listed_meta["ui"]["csp"],
        json!({"connectDomains": [], "resourceDomains": [], "frameDomains": [], "baseUriDomains": []})
    );

    let read = connection
        .client
        .read_resource(ReadResourceRequestParams::new(APP_URI))
        .await
        .unwrap();
    assert_eq!(read.contents.len(), 1);
    let ResourceContents::TextResourceContents {
        uri,
        mime_type,
        text,
        meta,
    } = &read.contents[0]
    else {
        panic!("expected text contents, got {:?}", read.contents[0]);
    };
    assert_eq!(uri, APP_URI);
    assert_eq!(mime_type.as_deref(), Some(APP_MIME));
    assert_eq!(serde_json::to_value(meta).unwrap(), listed_meta);
    let page = text.to_ascii_lowercase();
    assert!(page.starts_with("<!doctype html>"), "{text}");
    assert!(page.contains("<script>") && page.contains("<style>"));
    for needed in [
        "ui/initialize",
        "ui/notifications/tool-result",
        "tools/call",
    ] {
        assert!(text.contains(needed), "the page speaks {needed}");
    }
    for external in ["http://", "https://", " src=", "<link", "@import", "url("] {
        assert!(
            !page.contains(external),
            "the page loads nothing: {external}"
        );
    }

    // Listing the app changes nothing else: a preview is still listed first.
    let staged = connection.stage_edit("a.txt", "a", "A").await;
    let id = pending_id(&staged);
    assert_eq!(
        connection.resource_uris().await,
        [format!("resolve://pending/{id}"), APP_URI.to_owned()]
    );

    let unknown = connection
        .client
        .read_resource(ReadResourceRequestParams::new("ui://resolve/other"))
        .await
        .unwrap_err();
    assert!(unknown.to_string().contains(APP_URI), "{unknown}");
}

#[tokio::test]
async fn producers_and_resolve_link_the_app_and_the_read_only_tools_do_not() {
    let (_workspace, connection) = connected(&[]).await;
    let tools = connection.client.list_all_tools().await.unwrap();
    assert!(!tools.is_empty());
    for tool in &tools {
        let meta = serde_json::to_value(&tool.meta).unwrap();
        let linked = matches!(
            tool.name.as_ref(),
            "ast_edit" | "edit" | "write" | "apply_patch" | "resolve"
        );
        let expected = if linked {
            json!({"resourceUri": APP_URI, "visibility": ["model", "app"]})
        } else {
            Value::Null
        };
        assert_eq!(meta["ui"], expected, "{}", tool.name);
    }
}

#[tokio::test]
async fn a_producer_result_is_unchanged_and_carries_what_the_app_renders() {
    let (_workspace, connection) = connected(&[("a.txt", "a\n")]).await;
    let staged = connection.stage_edit("a.txt", "a", "A").await;
    assert!(staged.structured_content.is_none());
    let facts = details(&staged);
    assert_eq!(facts["files"][0]["hunks"], json!(["a.txt#1"]));
    assert!(text(&staged).contains("--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+A"));
}

/// The app sends the id of the preview it shows as `extra.id`: a decision naming another action
/// than the one `resolve` decides lands nothing, and one naming it lands as usual.
#[tokio::test]
async fn a_decision_naming_another_action_than_the_one_decided_writes_nothing() {
    let (workspace, connection) = connected(&[("a.txt", "a\n")]).await;
    let staged = connection.stage_edit("a.txt", "a", "A").await;
    let id = pending_id(&staged);

    let refused = connection
        .call(
            "resolve",
            json!({"action": "apply", "reason": "Seen.", "extra": {"id": "pending-action:edit:99"}}),
        )
        .await;
    assert_error_containing(
        &refused,
        &format!(
            "Not applied: `extra.id` names `pending-action:edit:99`, but the pending action `resolve` decides now is `{id}`"
        ),
    );
    assert_eq!(
        std::fs::read_to_string(workspace.root().join("a.txt")).unwrap(),
        "a\n"
    );

    let applied = connection
        .call(
            "resolve",
            json!({"action": "apply", "reason": "Seen.", "extra": {"id": id}}),
        )
        .await;
    assert!(!is_error(&applied), "{}", text(&applied));
    assert_eq!(
        std::fs::read_to_string(workspace.root().join("a.txt")).unwrap(),
        "A\n"
    );
}
