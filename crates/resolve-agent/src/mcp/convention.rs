//! The `resolve/pendingAction` convention: how an MCP tool result asks `resolve` to stage a
//! pending action, and the text of such results.
//!
//! A tool result whose `_meta` has
//! `"resolve/pendingAction": {"label": string, "apply": {"tool": string, "arguments": object},
//! "reject"?: {"tool": string, "arguments": object}}` stages a durable pending action.
//! Resolving it calls the same server's `apply` (or `reject`) tool with the arguments plus
//! `reason` and, when given, `extra`. A tool whose own `_meta` has `"resolve/hidden": true` is
//! not offered to the model (so it can run only through `resolve`).
//!
//! Owned here: reading the convention's `_meta` keys and a result's text. Not owned: calling
//! servers (`hub`) or the agent tools built on them (`tool`).

use resolve_edit::{McpAction, McpToolCall};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use serde::Deserialize;
use serde_json::Value;

/// The `_meta` key of a tool result that stages a pending action.
pub const PENDING_ACTION_META_KEY: &str = "resolve/pendingAction";

/// The `_meta` key of a tool that is not offered to the model.
pub const HIDDEN_META_KEY: &str = "resolve/hidden";

/// What a tool result asks to stage.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct PendingActionRequest {
    /// Short label shown by renderers and in `resolve pending`.
    pub label: String,
    /// Called on apply.
    pub apply: McpToolCall,
    /// Called on discard, when given.
    #[serde(default)]
    pub reject: Option<McpToolCall>,
}

impl PendingActionRequest {
    /// The request in `result`'s `_meta`: `None` when there is none, `Err` (saying what is
    /// wrong) when it is malformed.
    pub fn from_result(result: &CallToolResult) -> Option<Result<Self, String>> {
        let value = result.meta.as_ref()?.0.get(PENDING_ACTION_META_KEY)?;
        Some(Self::from_value(value))
    }

    /// Parse and check the convention's object.
    pub fn from_value(value: &Value) -> Result<Self, String> {
        let request: Self =
            serde_json::from_value(value.clone()).map_err(|error| error.to_string())?;
        if request.label.trim().is_empty() {
            return Err("`label` is empty".to_owned());
        }
        for (field, call) in [
            ("apply", Some(&request.apply)),
            ("reject", request.reject.as_ref()),
        ] {
            if call.is_some_and(|call| call.tool.is_empty()) {
                return Err(format!("`{field}.tool` is empty"));
            }
        }
        Ok(request)
    }

    /// The durable payload for a pending action of `server`.
    pub fn into_action(self, server: &str) -> McpAction {
        McpAction {
            server: server.to_owned(),
            apply: self.apply,
            reject: self.reject,
        }
    }
}

/// Whether a tool's `_meta` hides it from the model.
pub(crate) fn is_hidden(meta: Option<&JsonObject>) -> bool {
    meta.and_then(|meta| meta.get(HIDDEN_META_KEY)) == Some(&Value::Bool(true))
}

/// The text of a tool result: its text blocks joined by newlines; other blocks are named.
pub(crate) fn result_text(result: &CallToolResult) -> String {
    let parts: Vec<String> = result
        .content
        .iter()
        .map(|block| match block {
            ContentBlock::Text(text) => text.text.clone(),
            other => match serde_json::to_value(other) {
                Ok(value) => format!(
                    "[{} content]",
                    value.get("type").and_then(Value::as_str).unwrap_or("other")
                ),
                Err(_) => "[content]".to_owned(),
            },
        })
        .collect();
    let text = parts.join("\n");
    if text.is_empty() {
        match &result.structured_content {
            Some(structured) if !structured.is_null() => structured.to_string(),
            Some(_) | None => String::new(),
        }
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn a_complete_request_parses() {
        let request = PendingActionRequest::from_value(&json!({
            "label": "Note: hi",
            "apply": {"tool": "apply", "arguments": {"text": "hi"}},
            "reject": {"tool": "reject", "arguments": {}},
        }))
        .unwrap();
        assert_eq!(request.label, "Note: hi");
        assert_eq!(request.apply.arguments["text"], "hi");
        assert_eq!(request.reject.unwrap().tool, "reject");
    }

    #[test]
    fn malformed_requests_say_what_is_wrong() {
        for (value, expected) in [
            (json!({"apply": {"tool": "a", "arguments": {}}}), "label"),
            (
                json!({"label": " ", "apply": {"tool": "a", "arguments": {}}}),
                "label",
            ),
            (json!({"label": "x"}), "apply"),
            (
                json!({"label": "x", "apply": {"tool": "", "arguments": {}}}),
                "apply.tool",
            ),
            (
                json!({"label": "x", "apply": {"tool": "a", "arguments": []}}),
                "map",
            ),
            (json!("x"), "invalid type"),
        ] {
            let error = PendingActionRequest::from_value(&value).unwrap_err();
            assert!(error.contains(expected), "{value}: {error}");
        }
    }
}
