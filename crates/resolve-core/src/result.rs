//! The result every tool call produces: text for the model, optional structured details and an
//! error flag.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The outcome of a tool call as the model (and a renderer) sees it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ToolResult {
    /// Text handed to the model.
    pub text: String,
    /// Structured details for renderers and programs; not sent to the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    /// Whether the call failed.
    #[serde(rename = "isError", default)]
    pub is_error: bool,
}

impl ToolResult {
    /// A successful result carrying `text`.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            details: None,
            is_error: false,
        }
    }

    /// An error result carrying `text`.
    pub fn error(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            details: None,
            is_error: true,
        }
    }

    /// This result with `details` attached.
    #[must_use]
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    /// The error result a failed call becomes: its text and empty details.
    pub fn from_error(error: &crate::Error) -> Self {
        Self {
            text: error.to_string(),
            details: Some(Value::Object(serde_json::Map::new())),
            is_error: true,
        }
    }
}
