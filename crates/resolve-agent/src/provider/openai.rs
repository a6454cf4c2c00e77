//! The OpenAI Chat Completions wire format (`<base>/chat/completions`), as real compatible
//! servers speak it.
//!
//! Liberal in what it accepts: unknown fields are ignored; tool-call chunks may repeat the id,
//! omit the index, or come with a legacy `function_call` alongside; arguments may arrive as an
//! object instead of a string. Conservative in what it sends: assistant `content` is always a
//! string (`""` when the message only calls tools), reminders go in the `user` role, `$schema`
//! is stripped from tool schemas and `strict` is set only where OpenAI strict mode accepts the
//! schema. Streamed requests ask for usage (`stream_options: {"include_usage": true}`; a
//! server that rejects the key is asked no more); `reasoning_effort` is sent only when
//! configured.
//!
//! Owned here: the Chat Completions request body and response parsing. Not owned: retries and
//! the transport (`http`), the fallbacks shared with Anthropic (the parent module).

use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::schema::{openai_strict_accepts, wire_schema};
use super::{
    FinishReason, Flow, ModelRequest, ModelResponse, StreamReader, WireChoice, WireState,
    fill_call_ids,
};
use crate::{
    AgentError, AgentEvent, ApiKey, CallUsage, EventSink, Message, ProviderConfig, ToolCall,
};

pub(super) fn headers(key: Option<&ApiKey>) -> Result<HeaderMap, AgentError> {
    let mut headers = HeaderMap::new();
    if let Some(key) = key {
        let mut value = HeaderValue::from_str(&format!("Bearer {}", key.expose()))
            .map_err(|_| AgentError::InvalidApiKey)?;
        value.set_sensitive(true);
        headers.insert(AUTHORIZATION, value);
    }
    Ok(headers)
}

fn wire_tool_choice(choice: WireChoice<'_>) -> Value {
    match choice {
        WireChoice::Auto => json!("auto"),
        WireChoice::None => json!("none"),
        WireChoice::AnyTool => json!("required"),
        WireChoice::Named(name) => json!({"type": "function", "function": {"name": name}}),
    }
}

fn wire_message(message: &Message) -> Value {
    match message {
        Message::User { text } | Message::Reminder { text } => {
            json!({"role": "user", "content": text})
        }
        // Thinking blocks are Anthropic's; OpenAI-compatible servers never see them.
        Message::Assistant {
            text, tool_calls, ..
        } => {
            let mut object = Map::new();
            object.insert("role".into(), "assistant".into());
            object.insert("content".into(), text.clone().into());
            if !tool_calls.is_empty() {
                let calls: Vec<Value> = tool_calls
                    .iter()
                    .map(|call| {
                        json!({"id": call.id, "type": "function",
                               "function": {"name": call.name, "arguments": call.arguments}})
                    })
                    .collect();
                object.insert("tool_calls".into(), Value::Array(calls));
            }
            Value::Object(object)
        }
        Message::Tool { call_id, text, .. } => {
            json!({"role": "tool", "tool_call_id": call_id, "content": text})
        }
    }
}

pub(super) fn request_body(
    config: &ProviderConfig,
    request: &ModelRequest<'_>,
    choice: Option<WireChoice<'_>>,
    state: &WireState,
) -> Value {
    let stream = state.streaming;
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if !request.system.is_empty() {
        messages.push(json!({"role": "system", "content": request.system}));
    }
    messages.extend(request.messages.iter().map(wire_message));
    let mut body = Map::new();
    body.insert("model".into(), config.model.clone().into());
    body.insert("messages".into(), Value::Array(messages));
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|spec| {
                let parameters = wire_schema(&spec.input_schema);
                let mut function = Map::new();
                function.insert("name".into(), spec.name.clone().into());
                function.insert("description".into(), spec.description.clone().into());
                if spec.strict && openai_strict_accepts(&parameters) {
                    function.insert("strict".into(), true.into());
                }
                function.insert("parameters".into(), parameters);
                json!({"type": "function", "function": function})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
        if let Some(choice) = choice {
            body.insert("tool_choice".into(), wire_tool_choice(choice));
        }
    }
    if let Some(max_tokens) = config.max_tokens {
        body.insert("max_tokens".into(), max_tokens.into());
    }
    if let Some(temperature) = config.temperature {
        body.insert("temperature".into(), temperature.into());
    }
    if let Some(effort) = config.reasoning_effort {
        body.insert("reasoning_effort".into(), effort.as_str().into());
    }
    body.insert("stream".into(), stream.into());
    if stream && state.stream_usage {
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    Value::Object(body)
}

fn finish_reason(reason: &str) -> FinishReason {
    match reason {
        "tool_calls" | "function_call" => FinishReason::ToolUse,
        "stop" => FinishReason::Stop,
        "length" => FinishReason::Length,
        other => FinishReason::Other(other.to_owned()),
    }
}

/// Arguments as text: servers send a string, some an object.
fn arguments_text(arguments: Option<&Value>) -> String {
    match arguments {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
    }
}

/// Content as text: a string, or an array of `{type:"text", text}` parts.
fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .collect(),
        _ => String::new(),
    }
}

#[derive(Debug, Default, Deserialize)]
struct FunctionPart {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<Value>,
}

#[derive(Debug, Deserialize)]
struct ToolCallPart {
    #[serde(default)]
    index: Option<usize>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<FunctionPart>,
}

#[derive(Debug, Default, Deserialize)]
struct MessagePart {
    #[serde(default)]
    content: Option<Value>,
    #[serde(default)]
    tool_calls: Option<Vec<ToolCallPart>>,
    #[serde(default)]
    function_call: Option<FunctionPart>,
}

#[derive(Debug, Deserialize)]
struct Choice {
    #[serde(default)]
    index: Option<usize>,
    #[serde(default)]
    delta: Option<MessagePart>,
    #[serde(default)]
    message: Option<MessagePart>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Vec<Choice>,
    #[serde(default)]
    error: Option<Value>,
    #[serde(default)]
    usage: Option<Value>,
}

/// A `usage` object as neutral figures; `None` when it carries no token counts.
fn call_usage(usage: Option<&Value>) -> Option<CallUsage> {
    let usage = usage?;
    let count = |value: Option<&Value>| value.and_then(Value::as_u64);
    let input = count(usage.get("prompt_tokens"));
    let output = count(usage.get("completion_tokens"));
    if input.is_none() && output.is_none() {
        return None;
    }
    Some(CallUsage {
        input_tokens: input.unwrap_or(0),
        cached_input_tokens: count(usage.pointer("/prompt_tokens_details/cached_tokens"))
            .unwrap_or(0),
        cache_write_input_tokens: 0,
        output_tokens: output.unwrap_or(0),
    })
}

#[derive(Debug, Default)]
struct PartialCall {
    index: Option<usize>,
    id: String,
    name: String,
    arguments: String,
}

impl PartialCall {
    fn into_call(self) -> ToolCall {
        ToolCall {
            id: self.id,
            name: self.name,
            arguments: self.arguments,
        }
    }
}

/// Reader of one streamed completion.
#[derive(Debug, Default)]
pub(super) struct StreamState {
    text: String,
    calls: Vec<PartialCall>,
    legacy: Option<PartialCall>,
    finish: Option<String>,
    usage: Option<CallUsage>,
}

impl StreamState {
    fn slot(&mut self, part: &ToolCallPart) -> &mut PartialCall {
        let id = part.id.as_deref().filter(|id| !id.is_empty());
        let found = match (part.index, id) {
            (Some(index), _) => self.calls.iter().position(|c| c.index == Some(index)),
            (None, Some(id)) => self.calls.iter().position(|c| c.id == id),
            (None, None) => self.calls.len().checked_sub(1),
        };
        let position = match found {
            Some(position) => position,
            None => {
                self.calls.push(PartialCall {
                    index: part.index,
                    ..PartialCall::default()
                });
                self.calls.len() - 1
            }
        };
        &mut self.calls[position]
    }

    fn add_tool_call(&mut self, part: &ToolCallPart) {
        let slot = self.slot(part);
        if let Some(id) = part.id.as_deref()
            && !id.is_empty()
            && slot.id.is_empty()
        {
            slot.id = id.to_owned();
        }
        if let Some(function) = &part.function {
            if let Some(name) = function.name.as_deref()
                && !name.is_empty()
                && slot.name.is_empty()
            {
                slot.name = name.to_owned();
            }
            slot.arguments
                .push_str(&arguments_text(function.arguments.as_ref()));
        }
    }
}

impl StreamReader for StreamState {
    fn handle(&mut self, _event: &str, data: &str, sink: &mut dyn EventSink) -> Flow {
        let data = data.trim();
        if data == "[DONE]" {
            return Flow::Done;
        }
        // Keep-alives and other non-JSON lines carry nothing.
        let Ok(chunk) = serde_json::from_str::<Chunk>(data) else {
            return Flow::Continue;
        };
        if let Some(error) = chunk.error {
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .map_or_else(|| error.to_string(), str::to_owned);
            return Flow::Abandon(message);
        }
        // With `include_usage`, a last chunk with no choices carries the usage; some servers
        // put it on the finishing chunk instead.
        if let Some(usage) = call_usage(chunk.usage.as_ref()) {
            self.usage = Some(usage);
        }
        for choice in chunk
            .choices
            .into_iter()
            .filter(|c| c.index.unwrap_or(0) == 0)
        {
            if let Some(delta) = choice.delta.or(choice.message) {
                let text = content_text(delta.content.as_ref());
                if !text.is_empty() {
                    self.text.push_str(&text);
                    sink.emit(AgentEvent::TextDelta { text });
                }
                for part in delta.tool_calls.iter().flatten() {
                    self.add_tool_call(part);
                }
                if let Some(function) = delta.function_call {
                    let legacy = self.legacy.get_or_insert_with(PartialCall::default);
                    if let Some(name) = function.name.filter(|n| !n.is_empty())
                        && legacy.name.is_empty()
                    {
                        legacy.name = name;
                    }
                    legacy
                        .arguments
                        .push_str(&arguments_text(function.arguments.as_ref()));
                }
            }
            if let Some(reason) = choice.finish_reason.filter(|r| !r.is_empty()) {
                self.finish = Some(reason);
            }
        }
        Flow::Continue
    }

    fn finish(self) -> Option<ModelResponse> {
        let reason = self.finish?;
        let mut tool_calls: Vec<ToolCall> =
            self.calls.into_iter().map(PartialCall::into_call).collect();
        if tool_calls.is_empty()
            && let Some(legacy) = self.legacy.filter(|l| !l.name.is_empty())
        {
            tool_calls.push(legacy.into_call());
        }
        fill_call_ids(&mut tool_calls);
        Some(ModelResponse {
            text: self.text,
            tool_calls,
            finish: finish_reason(&reason),
            thinking: Vec::new(),
            usage: self.usage,
        })
    }
}

/// Parse a whole (non-streamed) completion.
pub(super) fn parse_response(value: &Value) -> Result<ModelResponse, String> {
    let chunk: Chunk = serde_json::from_value(value.clone()).map_err(|e| e.to_string())?;
    if let Some(error) = chunk.error {
        return Err(format!("it reports an error: {error}"));
    }
    let Some(choice) = chunk.choices.into_iter().next() else {
        return Err("it has no `choices`".to_owned());
    };
    let message = choice.message.or(choice.delta).unwrap_or_default();
    let mut tool_calls: Vec<ToolCall> = message
        .tool_calls
        .unwrap_or_default()
        .into_iter()
        .map(|part| {
            let function = part.function.unwrap_or_default();
            ToolCall {
                id: part.id.unwrap_or_default(),
                name: function.name.unwrap_or_default(),
                arguments: arguments_text(function.arguments.as_ref()),
            }
        })
        .collect();
    if tool_calls.is_empty()
        && let Some(function) = message.function_call
        && let Some(name) = function.name.filter(|n| !n.is_empty())
    {
        tool_calls.push(ToolCall {
            id: String::new(),
            name,
            arguments: arguments_text(function.arguments.as_ref()),
        });
    }
    fill_call_ids(&mut tool_calls);
    let finish = match choice.finish_reason.as_deref() {
        Some(reason) => finish_reason(reason),
        None if tool_calls.is_empty() => FinishReason::Stop,
        None => FinishReason::ToolUse,
    };
    Ok(ModelResponse {
        text: content_text(message.content.as_ref()),
        tool_calls,
        finish,
        thinking: Vec::new(),
        usage: call_usage(chunk.usage.as_ref()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(state: &mut StreamState, chunks: &[Value]) {
        let mut sink = |_event: AgentEvent| {};
        for chunk in chunks {
            let _ = state.handle("", &chunk.to_string(), &mut sink);
        }
    }

    #[test]
    fn repeated_ids_and_legacy_function_call_give_one_call() {
        let mut state = StreamState::default();
        feed(
            &mut state,
            &[
                json!({"choices":[{"index":0,"delta":{"content":null,
                    "function_call":{"name":"peek","arguments":""},
                    "tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"peek","arguments":""}}]}}]}),
                json!({"choices":[{"index":0,"delta":{
                    "function_call":{"arguments":"{\"a\""},
                    "tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"arguments":"{\"a\""}}]}}]}),
                json!({"choices":[{"index":0,"delta":{
                    "tool_calls":[{"index":0,"id":"call_a","function":{"arguments":":1}"}}]},"finish_reason":"tool_calls"}]}),
            ],
        );
        let response = state.finish().unwrap();
        assert_eq!(
            response.tool_calls,
            vec![ToolCall {
                id: "call_a".into(),
                name: "peek".into(),
                arguments: "{\"a\":1}".into()
            }]
        );
        assert_eq!(response.finish, FinishReason::ToolUse);
    }

    #[test]
    fn calls_without_index_are_told_apart_by_id() {
        let mut state = StreamState::default();
        feed(
            &mut state,
            &[
                json!({"choices":[{"delta":{"tool_calls":[{"id":"x","function":{"name":"a","arguments":"{}"}}]}}]}),
                json!({"choices":[{"delta":{"tool_calls":[{"id":"y","function":{"name":"b","arguments":"{"}}]}}]}),
                json!({"choices":[{"delta":{"tool_calls":[{"id":"y","function":{"arguments":"}"}}]},"finish_reason":"tool_calls"}]}),
            ],
        );
        let calls = state.finish().unwrap().tool_calls;
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[1].arguments, "{}");
    }

    #[test]
    fn stream_without_finish_reason_is_unfinished() {
        let mut state = StreamState::default();
        feed(
            &mut state,
            &[json!({"choices":[{"delta":{"content":"hi"}}]})],
        );
        assert!(state.finish().is_none());
    }

    #[test]
    fn whole_response_with_null_content_and_object_arguments() {
        let response = parse_response(&json!({"choices":[{"message":{"role":"assistant","content":null,
            "tool_calls":[{"id":"c1","type":"function","function":{"name":"peek","arguments":{"x":1}}}]},
            "finish_reason":"tool_calls"}], "usage": {"total_tokens": 3}}))
        .unwrap();
        assert_eq!(response.text, "");
        assert_eq!(response.tool_calls[0].arguments, "{\"x\":1}");
    }

    #[test]
    fn assistant_content_is_a_string_even_with_only_tool_calls() {
        let message = wire_message(&Message::Assistant {
            thinking: Vec::new(),
            text: String::new(),
            tool_calls: vec![ToolCall {
                id: "c".into(),
                name: "t".into(),
                arguments: "{}".into(),
            }],
        });
        assert_eq!(message["content"], json!(""));
    }
}
