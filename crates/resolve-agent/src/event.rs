//! [`AgentEvent`]s a run reports to a caller-provided [`EventSink`] as it goes, so a CLI can
//! print them or write them as JSON lines.
//!
//! Owned here: the event shapes and their JSON form. Not owned: when events happen (the turn
//! loop, plan mode, the provider clients) or how they are shown (the CLI).

use serde::Serialize;
use serde_json::Value;

use crate::usage::Usage;

/// Something that happened during a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum AgentEvent {
    /// A model call is about to be made.
    ModelCall {
        /// 1-based number of the call within the run.
        number: u32,
        /// The tool the call forces, if any (after any fallback, the wire may send less).
        forced_tool: Option<String>,
    },
    /// A piece of the model's text, as it streams in (the whole text when not streaming).
    TextDelta {
        /// The new text.
        text: String,
    },
    /// The model's complete text for one response (only when non-empty).
    AssistantText {
        /// The whole text.
        text: String,
    },
    /// The model called a tool.
    ToolCall {
        /// The call id.
        id: String,
        /// The tool's name.
        name: String,
        /// The raw JSON arguments.
        arguments: String,
    },
    /// A tool call got its result.
    ToolResult {
        /// The call id.
        id: String,
        /// The tool's name.
        name: String,
        /// The text the model reads.
        text: String,
        /// Whether it is an error result.
        is_error: bool,
        /// Structured details (for renderers); not sent to the model.
        #[serde(skip_serializing_if = "Option::is_none")]
        details: Option<Value>,
        /// False when the call was skipped (a preview was pending) rather than run.
        executed: bool,
    },
    /// The loop appended a reminder message (a preview waits for `resolve`).
    Reminder {
        /// The reminder text.
        text: String,
        /// The tool that staged the pending action.
        source_tool: String,
    },
    /// The loop appended a reviewer note: what a person did to an action the model staged.
    ReviewerNote {
        /// The note as the model reads it.
        text: String,
    },
    /// Plan mode: the model stopped without calling `resolve`; the loop appended the plan-mode
    /// reminder and forces some tool call for the next model call.
    PlanModeReminder {
        /// The reminder text.
        text: String,
        /// How many reminders in a row so far (at most `PLAN_MODE_REMINDER_MAX`).
        number: u32,
    },
    /// Plan mode ended: the plan was approved, and every tool is offered from the next model
    /// call on.
    PlanApproved {
        /// The plan file, relative to the root.
        plan_path: String,
    },
    /// Something the operator may want to know (a retry, a fallback).
    Notice {
        /// What happened.
        message: String,
    },
    /// The run's last event, whatever its outcome: model calls and tokens, forced calls also
    /// apart (`{"type":"usage","model_calls":…,…,"forced":{…}}`, see [`Usage`]).
    Usage(Usage),
}

/// Receives a run's events in order.
pub trait EventSink: Send {
    /// Handle one event.
    fn emit(&mut self, event: AgentEvent);
}

impl<F> EventSink for F
where
    F: FnMut(AgentEvent) + Send,
{
    fn emit(&mut self, event: AgentEvent) {
        self(event);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn events_serialize_as_tagged_json_lines() {
        let event = AgentEvent::ToolCall {
            id: "c1".into(),
            name: "resolve".into(),
            arguments: "{}".into(),
        };
        assert_eq!(
            serde_json::to_value(&event).unwrap(),
            json!({"type": "tool_call", "id": "c1", "name": "resolve", "arguments": "{}"})
        );
    }
}
