//! `tools/list` as a client receives it.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::common::connected;

#[tokio::test]
async fn lists_seven_tools_with_literal_schemas_annotations_and_no_output_schema() {
    let (_workspace, connection) = connected(&[]).await;
    let tools = connection.client.list_all_tools().await.unwrap();
    let wire: Vec<Value> = tools
        .iter()
        .map(|tool| serde_json::to_value(tool).unwrap())
        .collect();
    let names: Vec<&str> = wire
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names.join(" "),
        "ast_edit edit write apply_patch read ls grep resolve"
    );
    for tool in &wire {
        // Hosts hand a model the structured content instead of the text when a tool has one.
        assert!(tool.get("outputSchema").is_none(), "{tool}");
        let schema = tool["inputSchema"].to_string();
        assert!(
            !schema.contains("$ref") && !schema.contains("$schema"),
            "{schema}"
        );
        assert_eq!(tool["inputSchema"]["additionalProperties"], json!(false));
    }
    let by_name = |name: &str| wire.iter().find(|tool| tool["name"] == name).unwrap();
    assert_eq!(
        by_name("edit")["inputSchema"],
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "old_text": {"type": "string"},
                "new_text": {"type": "string"},
                "replace_all": {"type": "boolean"}
            },
            "required": ["path", "old_text", "new_text"],
            "additionalProperties": false
        })
    );
    assert_eq!(
        by_name("resolve")["inputSchema"]["required"],
        json!(["action", "reason"])
    );
    assert_eq!(
        by_name("resolve")["inputSchema"]["properties"]["action"]["enum"],
        json!(["apply", "discard"])
    );
    assert_eq!(
        by_name("resolve")["description"],
        json!(resolve_core::RESOLVE_DESCRIPTION)
    );
    assert_eq!(
        by_name("read")["annotations"],
        json!({"readOnlyHint": true, "openWorldHint": false})
    );
    assert_eq!(
        by_name("write")["annotations"],
        json!({"readOnlyHint": true, "openWorldHint": false})
    );
    assert_eq!(
        by_name("resolve")["annotations"],
        json!({"readOnlyHint": false, "destructiveHint": true, "openWorldHint": false})
    );
}

#[tokio::test]
async fn the_server_introduces_itself_with_instructions_and_resource_notifications() {
    let (_workspace, connection) = connected(&[]).await;
    let info = connection.client.peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().unwrap().name, "resolve");
    assert_eq!(
        info.instructions.as_deref(),
        Some(resolve_mcp::INSTRUCTIONS)
    );
    let resources = info.capabilities.resources.as_ref().unwrap();
    assert_eq!(resources.list_changed, Some(true));
    assert_eq!(resources.subscribe, Some(true));
    assert!(info.capabilities.tools.is_some());
}
