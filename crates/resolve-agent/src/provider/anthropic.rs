//! The Anthropic Messages wire format (`<base>/v1/messages`).
//!
//! Message content is always a block array, so attaching a `cache_control` marker never
//! changes a message's shape. Consecutive user-side messages of the transcript (tool results,
//! then the reminder; or a task and a reminder) form one user turn, `tool_result` blocks first.
//! Where the transcript has two assistant messages in a row or ends with one (a declined
//! bare-text turn), a fixed `Continue.` user turn keeps the roles alternating; it is derived
//! from the transcript, so it is the same in every later request. Breakpoints go on the system
//! prompt and on the newest message: moving that marker is the only change to earlier
//! messages from one request to the next.
//!
//! With a thinking budget, requests carry `"thinking": {"type": "enabled", "budget_tokens": N}`;
//! `thinking` and `redacted_thinking` blocks (streamed ones reassembled from their deltas,
//! signature included) are kept verbatim and lead their assistant turn in every later request.
//! Usage comes from `usage` (`message_start`, then `message_delta`, when streaming).
//!
//! Owned here: the Anthropic request body and response parsing. Not owned: retries and the
//! transport (`http`), the fallbacks shared with OpenAI (the parent module).

use std::collections::BTreeMap;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::schema::wire_schema;
use super::{
    FinishReason, Flow, ModelRequest, ModelResponse, StreamReader, WireChoice, fill_call_ids,
};
use crate::{
    AgentError, AgentEvent, ApiKey, CallUsage, EventSink, Message, ProviderConfig, ToolCall,
};

/// The API version header value.
pub(super) const ANTHROPIC_VERSION: &str = "2023-06-01";
/// Output token limit when none is configured (the API requires one).
const DEFAULT_MAX_TOKENS: u32 = 8192;
/// Text of the user turn inserted between two assistant messages.
const CONTINUE_TEXT: &str = "Continue.";
/// Text standing in for an assistant message with no content (empty blocks are rejected).
const EMPTY_ASSISTANT_TEXT: &str = "(no content)";

pub(super) fn headers(key: Option<&ApiKey>) -> Result<HeaderMap, AgentError> {
    let mut headers = HeaderMap::new();
    headers.insert(
        HeaderName::from_static("anthropic-version"),
        HeaderValue::from_static(ANTHROPIC_VERSION),
    );
    if let Some(key) = key {
        let mut value =
            HeaderValue::from_str(key.expose()).map_err(|_| AgentError::InvalidApiKey)?;
        value.set_sensitive(true);
        headers.insert(HeaderName::from_static("x-api-key"), value);
    }
    Ok(headers)
}

fn wire_tool_choice(choice: WireChoice<'_>) -> Value {
    match choice {
        WireChoice::Auto => json!({"type": "auto"}),
        WireChoice::None => json!({"type": "none"}),
        WireChoice::AnyTool => json!({"type": "any"}),
        WireChoice::Named(name) => json!({"type": "tool", "name": name}),
    }
}

fn cache_marker() -> Value {
    json!({"type": "ephemeral"})
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    User,
    Assistant,
}

fn text_block(text: &str) -> Value {
    json!({"type": "text", "text": text})
}

fn assistant_blocks(thinking: &[Value], text: &str, tool_calls: &[ToolCall]) -> Vec<Value> {
    let mut blocks = Vec::with_capacity(thinking.len() + tool_calls.len() + 1);
    blocks.extend(thinking.iter().cloned());
    if !text.is_empty() {
        blocks.push(text_block(text));
    }
    for call in tool_calls {
        let input = match call.parse_arguments() {
            Ok(Value::Object(object)) => Value::Object(object),
            Ok(_) | Err(_) => Value::Object(Map::new()),
        };
        blocks.push(json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input}));
    }
    if text.is_empty() && tool_calls.is_empty() {
        blocks.push(text_block(EMPTY_ASSISTANT_TEXT));
    }
    blocks
}

/// The transcript as alternating user/assistant turns with block-array content.
fn wire_messages(messages: &[Message]) -> Vec<Value> {
    fn push_user(turns: &mut Vec<(Role, Vec<Value>)>, block: Value) {
        match turns.last_mut() {
            Some((Role::User, blocks)) => blocks.push(block),
            Some((Role::Assistant, _)) | None => turns.push((Role::User, vec![block])),
        }
    }
    let mut turns: Vec<(Role, Vec<Value>)> = Vec::new();
    for message in messages {
        match message {
            Message::User { text } | Message::Reminder { text } => {
                push_user(&mut turns, text_block(text));
            }
            Message::Tool {
                call_id,
                text,
                is_error,
                ..
            } => {
                let mut block =
                    json!({"type": "tool_result", "tool_use_id": call_id, "content": text});
                if *is_error && let Some(object) = block.as_object_mut() {
                    object.insert("is_error".into(), true.into());
                }
                push_user(&mut turns, block);
            }
            Message::Assistant {
                text,
                tool_calls,
                thinking,
            } => {
                if matches!(turns.last(), Some((Role::Assistant, _))) {
                    turns.push((Role::User, vec![text_block(CONTINUE_TEXT)]));
                }
                turns.push((
                    Role::Assistant,
                    assistant_blocks(thinking, text, tool_calls),
                ));
            }
        }
    }
    if matches!(turns.last(), Some((Role::Assistant, _))) {
        turns.push((Role::User, vec![text_block(CONTINUE_TEXT)]));
    }
    let mut wire: Vec<Value> = turns
        .into_iter()
        .map(|(role, blocks)| {
            let role = match role {
                Role::User => "user",
                Role::Assistant => "assistant",
            };
            json!({"role": role, "content": blocks})
        })
        .collect();
    if let Some(block) = wire
        .last_mut()
        .and_then(|message| message.get_mut("content"))
        .and_then(Value::as_array_mut)
        .and_then(|blocks| blocks.last_mut())
        .and_then(Value::as_object_mut)
    {
        block.insert("cache_control".into(), cache_marker());
    }
    wire
}

pub(super) fn request_body(
    config: &ProviderConfig,
    request: &ModelRequest<'_>,
    choice: Option<WireChoice<'_>>,
    stream: bool,
) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), config.model.clone().into());
    // The output limit must exceed the thinking budget; by default it leaves the usual room.
    let default_max_tokens = DEFAULT_MAX_TOKENS.saturating_add(config.thinking_budget.unwrap_or(0));
    body.insert(
        "max_tokens".into(),
        config.max_tokens.unwrap_or(default_max_tokens).into(),
    );
    if let Some(budget) = config.thinking_budget {
        body.insert(
            "thinking".into(),
            json!({"type": "enabled", "budget_tokens": budget}),
        );
    }
    if !request.system.is_empty() {
        body.insert(
            "system".into(),
            json!([{"type": "text", "text": request.system, "cache_control": cache_marker()}]),
        );
    }
    body.insert(
        "messages".into(),
        Value::Array(wire_messages(request.messages)),
    );
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|spec| {
                json!({"name": spec.name, "description": spec.description,
                       "input_schema": wire_schema(&spec.input_schema)})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
        if let Some(choice) = choice {
            body.insert("tool_choice".into(), wire_tool_choice(choice));
        }
    }
    if let Some(temperature) = config.temperature {
        body.insert("temperature".into(), temperature.into());
    }
    body.insert("stream".into(), stream.into());
    Value::Object(body)
}

fn finish_reason(reason: &str) -> FinishReason {
    match reason {
        "tool_use" => FinishReason::ToolUse,
        "end_turn" | "stop_sequence" => FinishReason::Stop,
        "max_tokens" => FinishReason::Length,
        other => FinishReason::Other(other.to_owned()),
    }
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block {
    Text {
        #[serde(default)]
        text: String,
    },
    ToolUse {
        #[serde(default)]
        id: String,
        #[serde(default)]
        name: String,
        #[serde(default)]
        input: Value,
    },
    #[serde(other)]
    Other,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum BlockDelta {
    TextDelta {
        #[serde(default)]
        text: String,
    },
    InputJsonDelta {
        #[serde(default)]
        partial_json: String,
    },
    ThinkingDelta {
        #[serde(default)]
        thinking: String,
    },
    SignatureDelta {
        #[serde(default)]
        signature: String,
    },
    #[serde(other)]
    Other,
}

#[derive(Debug, Default, Deserialize)]
struct MessageDelta {
    #[serde(default)]
    stop_reason: Option<String>,
}

/// Whether a content block is a thinking block, kept verbatim.
fn is_thinking(block: &Value) -> bool {
    matches!(
        block.get("type").and_then(Value::as_str),
        Some("thinking" | "redacted_thinking")
    )
}

/// The usage counts as sent; a `message_delta` updates what it carries (its counts are
/// cumulative).
#[derive(Debug, Default, Clone, Copy, Deserialize)]
struct WireUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
}

impl WireUsage {
    fn update(&mut self, later: WireUsage) {
        self.input_tokens = later.input_tokens.or(self.input_tokens);
        self.cache_read_input_tokens = later
            .cache_read_input_tokens
            .or(self.cache_read_input_tokens);
        self.cache_creation_input_tokens = later
            .cache_creation_input_tokens
            .or(self.cache_creation_input_tokens);
        self.output_tokens = later.output_tokens.or(self.output_tokens);
    }

    fn neutral(self) -> CallUsage {
        let read = self.cache_read_input_tokens.unwrap_or(0);
        let write = self.cache_creation_input_tokens.unwrap_or(0);
        CallUsage {
            input_tokens: self
                .input_tokens
                .unwrap_or(0)
                .saturating_add(read)
                .saturating_add(write),
            cached_input_tokens: read,
            cache_write_input_tokens: write,
            output_tokens: self.output_tokens.unwrap_or(0),
        }
    }
}

#[derive(Debug, Default, Deserialize)]
struct StartMessage {
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum StreamEvent {
    MessageStart {
        #[serde(default)]
        message: StartMessage,
    },
    ContentBlockStart {
        index: usize,
        content_block: Value,
    },
    ContentBlockDelta {
        index: usize,
        delta: BlockDelta,
    },
    MessageDelta {
        #[serde(default)]
        delta: MessageDelta,
        #[serde(default)]
        usage: Option<WireUsage>,
    },
    MessageStop,
    Error {
        #[serde(default)]
        error: Value,
    },
    #[serde(other)]
    Other,
}

#[derive(Debug)]
enum PartialBlock {
    Text(String),
    ToolUse {
        id: String,
        name: String,
        start_input: Value,
        json: Option<String>,
    },
    /// A `thinking` or `redacted_thinking` block: the start block, deltas appended.
    Thinking(Value),
    Other,
}

/// Reader of one streamed message.
#[derive(Debug, Default)]
pub(super) struct StreamState {
    blocks: BTreeMap<usize, PartialBlock>,
    stop_reason: Option<String>,
    stopped: bool,
    usage: Option<WireUsage>,
}

/// Append `piece` to the string field `key` of a thinking block.
fn append_field(block: &mut Value, key: &str, piece: &str) {
    if let Some(object) = block.as_object_mut() {
        let mut text = object
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        text.push_str(piece);
        object.insert(key.to_owned(), Value::String(text));
    }
}

impl StreamReader for StreamState {
    fn handle(&mut self, _event: &str, data: &str, sink: &mut dyn EventSink) -> Flow {
        let Ok(event) = serde_json::from_str::<StreamEvent>(data) else {
            return Flow::Continue;
        };
        match event {
            StreamEvent::MessageStart { message } => {
                if let Some(usage) = message.usage {
                    self.usage
                        .get_or_insert_with(WireUsage::default)
                        .update(usage);
                }
            }
            StreamEvent::ContentBlockStart {
                index,
                content_block,
            } if is_thinking(&content_block) => {
                self.blocks
                    .insert(index, PartialBlock::Thinking(content_block));
            }
            StreamEvent::ContentBlockStart {
                index,
                content_block,
            } => {
                let content_block =
                    serde_json::from_value::<Block>(content_block).unwrap_or(Block::Other);
                let block = match content_block {
                    Block::Text { text } => {
                        if !text.is_empty() {
                            sink.emit(AgentEvent::TextDelta { text: text.clone() });
                        }
                        PartialBlock::Text(text)
                    }
                    Block::ToolUse { id, name, input } => PartialBlock::ToolUse {
                        id,
                        name,
                        start_input: input,
                        json: None,
                    },
                    Block::Other => PartialBlock::Other,
                };
                self.blocks.insert(index, block);
            }
            StreamEvent::ContentBlockDelta { index, delta } => {
                match (self.blocks.get_mut(&index), delta) {
                    (Some(PartialBlock::Text(text)), BlockDelta::TextDelta { text: piece }) => {
                        text.push_str(&piece);
                        sink.emit(AgentEvent::TextDelta { text: piece });
                    }
                    (
                        Some(PartialBlock::ToolUse { json, .. }),
                        BlockDelta::InputJsonDelta { partial_json },
                    ) => json.get_or_insert_with(String::new).push_str(&partial_json),
                    (
                        Some(PartialBlock::Thinking(block)),
                        BlockDelta::ThinkingDelta { thinking },
                    ) => {
                        append_field(block, "thinking", &thinking);
                    }
                    (
                        Some(PartialBlock::Thinking(block)),
                        BlockDelta::SignatureDelta { signature },
                    ) => append_field(block, "signature", &signature),
                    _ => {}
                }
            }
            StreamEvent::MessageDelta { delta, usage } => {
                if let Some(reason) = delta.stop_reason {
                    self.stop_reason = Some(reason);
                }
                if let Some(usage) = usage {
                    self.usage
                        .get_or_insert_with(WireUsage::default)
                        .update(usage);
                }
            }
            StreamEvent::MessageStop => {
                self.stopped = true;
                return Flow::Done;
            }
            StreamEvent::Error { error } => {
                let message = error
                    .get("message")
                    .and_then(Value::as_str)
                    .map_or_else(|| error.to_string(), str::to_owned);
                return Flow::Abandon(message);
            }
            StreamEvent::Other => {}
        }
        Flow::Continue
    }

    fn finish(self) -> Option<ModelResponse> {
        let finish = match (self.stop_reason, self.stopped) {
            (Some(reason), _) => finish_reason(&reason),
            (None, true) => FinishReason::Stop,
            (None, false) => return None,
        };
        let mut text = String::new();
        let mut tool_calls = Vec::new();
        let mut thinking = Vec::new();
        for block in self.blocks.into_values() {
            match block {
                PartialBlock::Text(piece) => text.push_str(&piece),
                PartialBlock::Thinking(block) => thinking.push(block),
                PartialBlock::ToolUse {
                    id,
                    name,
                    start_input,
                    json,
                } => tool_calls.push(ToolCall {
                    id,
                    name,
                    arguments: json.unwrap_or_else(|| input_text(&start_input)),
                }),
                PartialBlock::Other => {}
            }
        }
        fill_call_ids(&mut tool_calls);
        Some(ModelResponse {
            text,
            tool_calls,
            finish,
            thinking,
            usage: self.usage.map(WireUsage::neutral),
        })
    }
}

fn input_text(input: &Value) -> String {
    match input {
        Value::Null => "{}".to_owned(),
        other => other.to_string(),
    }
}

#[derive(Debug, Deserialize)]
struct WholeMessage {
    #[serde(default)]
    content: Vec<Block>,
    #[serde(default)]
    stop_reason: Option<String>,
    #[serde(default)]
    error: Option<Value>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

/// Parse a whole (non-streamed) message.
pub(super) fn parse_response(value: &Value) -> Result<ModelResponse, String> {
    let message: WholeMessage = serde_json::from_value(value.clone()).map_err(|e| e.to_string())?;
    if let Some(error) = message.error {
        return Err(format!("it reports an error: {error}"));
    }
    let mut text = String::new();
    let mut tool_calls = Vec::new();
    for block in message.content {
        match block {
            Block::Text { text: piece } => text.push_str(&piece),
            Block::ToolUse { id, name, input } => tool_calls.push(ToolCall {
                id,
                name,
                arguments: input_text(&input),
            }),
            Block::Other => {}
        }
    }
    fill_call_ids(&mut tool_calls);
    let finish = match message.stop_reason.as_deref() {
        Some(reason) => finish_reason(reason),
        None if tool_calls.is_empty() => FinishReason::Stop,
        None => FinishReason::ToolUse,
    };
    let thinking = value
        .get("content")
        .and_then(Value::as_array)
        .map(|blocks| blocks.iter().filter(|b| is_thinking(b)).cloned().collect())
        .unwrap_or_default();
    Ok(ModelResponse {
        text,
        tool_calls,
        finish,
        thinking,
        usage: message.usage.map(WireUsage::neutral),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn reminder_is_a_text_block_after_the_tool_results_of_the_same_user_turn() {
        let messages = vec![
            Message::User {
                text: "task".into(),
            },
            Message::Assistant {
                thinking: Vec::new(),
                text: String::new(),
                tool_calls: vec![ToolCall {
                    id: "t1".into(),
                    name: "stage".into(),
                    arguments: "{}".into(),
                }],
            },
            Message::Tool {
                call_id: "t1".into(),
                name: "stage".into(),
                text: "staged".into(),
                is_error: false,
            },
            Message::Reminder {
                text: "remind".into(),
            },
        ];
        let wire = wire_messages(&messages);
        assert_eq!(
            wire[2],
            json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "staged"},
                {"type": "text", "text": "remind", "cache_control": {"type": "ephemeral"}}
            ]})
        );
    }

    #[test]
    fn consecutive_assistant_messages_get_a_continue_turn_between_them() {
        let messages = vec![
            Message::User {
                text: "task".into(),
            },
            Message::Assistant {
                thinking: Vec::new(),
                text: "done".into(),
                tool_calls: vec![],
            },
        ];
        let wire = wire_messages(&messages);
        assert_eq!(wire.len(), 3);
        assert_eq!(wire[2]["content"][0]["text"], json!(CONTINUE_TEXT));
    }
}
