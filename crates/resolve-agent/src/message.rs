//! The provider-neutral transcript: what the user, the model, the tools and the loop said.
//!
//! The transcript only grows. Provider adapters turn it into their wire format with pure
//! functions, so a message, once sent, is sent the same way in every later request.
//!
//! Owned here: the message shapes. Not owned: who appends them (the session) or their wire
//! forms (`provider`).

use serde::Serialize;
use serde_json::Value;

/// One tool call made by the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolCall {
    /// The call id the provider gave (or one made up when it gave none).
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments as the model sent them: JSON text, possibly malformed.
    pub arguments: String,
}

impl ToolCall {
    /// The arguments as JSON; empty or blank arguments count as `{}`.
    pub fn parse_arguments(&self) -> Result<Value, serde_json::Error> {
        if self.arguments.trim().is_empty() {
            return Ok(Value::Object(serde_json::Map::new()));
        }
        serde_json::from_str(&self.arguments)
    }
}

/// One message of the transcript.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// A task or follow-up from the user.
    User {
        /// What the user wrote.
        text: String,
    },
    /// A model response: its text (possibly empty), its tool calls and any thinking blocks.
    Assistant {
        /// The text the model wrote.
        text: String,
        /// The tool calls it made, in order.
        tool_calls: Vec<ToolCall>,
        /// Anthropic `thinking` and `redacted_thinking` blocks of the response, verbatim
        /// (signature included; streamed blocks reassembled), in order. They go back to the
        /// server at the head of this assistant turn in every later request, as the API requires
        /// when tool use follows thinking; OpenAI-compatible servers never see them. Empty
        /// unless thinking is enabled.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        thinking: Vec<Value>,
    },
    /// The result of one tool call.
    Tool {
        /// The id of the call it answers.
        call_id: String,
        /// The tool's name.
        name: String,
        /// The text the model reads.
        text: String,
        /// Whether the call failed (or was not executed).
        is_error: bool,
    },
    /// A hidden reminder the loop appended (the `resolve` reminder), sent in the user role.
    Reminder {
        /// The reminder text.
        text: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn blank_arguments_parse_as_an_empty_object() {
        let call = ToolCall {
            id: "c".into(),
            name: "t".into(),
            arguments: "  ".into(),
        };
        assert_eq!(call.parse_arguments().unwrap(), json!({}));
    }
}
