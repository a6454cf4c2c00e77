//! Durable pending actions whose payload is not a change set but a call to a tool of an MCP
//! server (the `resolve/pendingAction` convention), kept as data so any process can resolve
//! them. Making the call is not this crate's: the store hands the record to a caller-supplied
//! step ([`Store::resolve_external`](crate::Store::resolve_external)) under its lock.

use resolve_core::Extra;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::change_set::ChangeSet;

/// One call of a tool of an MCP server: `{"tool": …, "arguments": {…}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpToolCall {
    /// The tool's name on its server (without the `<server>__` prefix the model sees).
    pub tool: String,
    /// The arguments; resolving adds `reason` and, when given, `extra`.
    #[serde(default)]
    pub arguments: Map<String, Value>,
}

impl McpToolCall {
    /// The arguments to send when resolving: these arguments plus `reason` and, when given,
    /// `extra` (which replace keys of the same name).
    pub fn arguments_with(&self, reason: &str, extra: Option<&Extra>) -> Map<String, Value> {
        let mut arguments = self.arguments.clone();
        arguments.insert("reason".into(), reason.into());
        if let Some(extra) = extra {
            arguments.insert("extra".into(), Value::Object(extra.clone()));
        }
        arguments
    }
}

/// A pending action staged by a tool of an MCP server: which server, what to call to apply
/// it, and what to call (if anything) to discard it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpAction {
    /// The server's name in the configuration (`[mcp_servers.NAME]`).
    pub server: String,
    /// Called on `resolve` apply.
    pub apply: McpToolCall,
    /// Called on `resolve` discard; without it, discard calls nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reject: Option<McpToolCall>,
}

/// What resolving a stored pending action does: write a change set, or call an MCP tool.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Payload<'a> {
    /// Write these files (the built-in producers).
    ChangeSet(&'a ChangeSet),
    /// Call a tool of an MCP server.
    Mcp(&'a McpAction),
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn resolving_adds_reason_and_extra_to_the_arguments() {
        let call = McpToolCall {
            tool: "apply".into(),
            arguments: json!({"text": "hi", "reason": "old"})
                .as_object()
                .cloned()
                .unwrap(),
        };
        let extra = json!({"ticket": 7}).as_object().cloned().unwrap();
        assert_eq!(
            Value::Object(call.arguments_with("ok", Some(&extra))),
            json!({"text": "hi", "reason": "ok", "extra": {"ticket": 7}})
        );
        assert_eq!(
            Value::Object(call.arguments_with("ok", None)),
            json!({"text": "hi", "reason": "ok"})
        );
    }

    #[test]
    fn mcp_actions_read_the_convention_shape() {
        let action: McpAction = serde_json::from_value(json!({
            "server": "notes",
            "apply": {"tool": "apply", "arguments": {"text": "hi"}},
        }))
        .unwrap();
        assert_eq!(action.reject, None);
        assert_eq!(action.apply.tool, "apply");
        assert_eq!(
            serde_json::to_value(&action).unwrap(),
            json!({"server": "notes", "apply": {"tool": "apply", "arguments": {"text": "hi"}}})
        );
    }
}
