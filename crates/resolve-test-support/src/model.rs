//! A scripted mock model server on 127.0.0.1 that speaks the real wire formats: OpenAI Chat
//! Completions (`/v1/chat/completions`) and Anthropic Messages (`/v1/messages`), streaming
//! (SSE) or not, as each request asks, and OpenAI Responses (`/v1/responses`, SSE; what Codex
//! speaks). It records every request. A [`Reply::Step`] computes its answer from the request
//! and may first act (say, a person's decision in another process) before the model answers.
//!
//! Usage figures go out as each real API sends them: OpenAI's in the response body, or, when
//! streaming, in a last chunk with no choices only if the request asked for it
//! (`stream_options.include_usage`); Anthropic's in `message_start` and `message_delta`.
//! Anthropic thinking blocks lead the content, streamed as `thinking_delta` and
//! `signature_delta` events.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use futures::StreamExt;
use serde_json::{Value, json};

/// A model turn the mock renders in whichever format the request asks for.
#[derive(Debug, Clone, Default)]
pub struct Turn {
    pub text: String,
    /// `(id, name, raw arguments)`.
    pub calls: Vec<(String, String, String)>,
    /// Leave out the finish reason (and `[DONE]` / `message_stop`).
    pub no_finish: bool,
    /// Force this finish reason (wire spelling).
    pub finish: Option<String>,
    /// Usage figures to report; by default 1 input and 1 output token.
    pub usage: Option<MockUsage>,
    /// Anthropic content blocks (`thinking`, `redacted_thinking`) sent before the text, as
    /// given (streamed: reassembled by the client from deltas). OpenAI answers leave them out.
    pub thinking: Vec<Value>,
    /// `(call id, namespace)`: the Responses format's `namespace` of a call, for a tool the
    /// client offered inside a `namespace` tool (Codex offers MCP tools as `mcp__<server>`).
    /// The other formats have no namespaces and ignore it.
    pub namespaces: Vec<(String, String)>,
    /// Call ids of calls of a freeform (custom) tool: the Responses format sends them as
    /// `custom_tool_call` items whose `input` is the raw text (the call's "arguments"), as
    /// Codex offers `apply_patch`. The other formats ignore it.
    pub custom: Vec<String>,
}

/// Token counts a turn reports, in neutral form (each wire format spells them its own way).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MockUsage {
    /// All input tokens, cached or not.
    pub input: u64,
    /// Of those, read from the prompt cache.
    pub cached: u64,
    /// Of those, written to the prompt cache (Anthropic only).
    pub cache_write: u64,
    /// Output tokens.
    pub output: u64,
}

impl MockUsage {
    fn of(turn: &Turn) -> Self {
        turn.usage.unwrap_or(Self {
            input: 1,
            cached: 0,
            cache_write: 0,
            output: 1,
        })
    }

    fn openai(self) -> Value {
        json!({"prompt_tokens": self.input, "completion_tokens": self.output,
            "total_tokens": self.input + self.output,
            "prompt_tokens_details": {"cached_tokens": self.cached}})
    }

    fn anthropic(self, output: u64) -> Value {
        json!({"input_tokens": self.input - self.cached - self.cache_write,
            "cache_read_input_tokens": self.cached,
            "cache_creation_input_tokens": self.cache_write,
            "output_tokens": output})
    }
}

impl Turn {
    pub fn text(text: &str) -> Self {
        Self {
            text: text.to_owned(),
            ..Self::default()
        }
    }

    pub fn call(id: &str, name: &str, arguments: Value) -> Self {
        Self::default().and_call(id, name, &arguments.to_string())
    }

    pub fn and_call(mut self, id: &str, name: &str, raw_arguments: &str) -> Self {
        self.calls
            .push((id.to_owned(), name.to_owned(), raw_arguments.to_owned()));
        self
    }

    /// Add a call of `name` inside the client's `namespace` tool (Responses format; see
    /// [`Turn::namespaces`]).
    pub fn and_namespaced_call(
        mut self,
        id: &str,
        namespace: &str,
        name: &str,
        raw_arguments: &str,
    ) -> Self {
        self.namespaces.push((id.to_owned(), namespace.to_owned()));
        self.and_call(id, name, raw_arguments)
    }

    /// Add a call of the freeform (custom) tool `name` with raw text `input` (Responses
    /// format; see [`Turn::custom`]).
    pub fn and_custom_call(mut self, id: &str, name: &str, input: &str) -> Self {
        self.custom.push(id.to_owned());
        self.and_call(id, name, input)
    }

    pub fn without_finish(mut self) -> Self {
        self.no_finish = true;
        self
    }

    pub fn with_usage(mut self, input: u64, cached: u64, cache_write: u64, output: u64) -> Self {
        self.usage = Some(MockUsage {
            input,
            cached,
            cache_write,
            output,
        });
        self
    }

    /// Lead the (Anthropic) answer with this thinking or redacted-thinking block.
    pub fn with_thinking_block(mut self, block: Value) -> Self {
        self.thinking.push(block);
        self
    }
}

/// One scripted answer.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A model turn.
    Turn(Turn),
    /// An HTTP error status with a body (and an optional `retry-after`).
    Status {
        status: u16,
        body: String,
        retry_after: Option<u32>,
    },
    /// A raw SSE body, sent as given.
    RawSse(Vec<String>),
    /// Stream the first part of a turn (its first text piece), then hang without ending.
    Hang(Turn),
    /// A body that never ends, as a broken or hostile server sends it: `head`, then `repeat`
    /// again and again, waiting `pause` before each repeat. The bytes sent are counted
    /// ([`MockServer::sent_bytes`]).
    Endless {
        /// The `content-type` header.
        content_type: &'static str,
        /// Sent first.
        head: String,
        /// Sent after it, forever.
        repeat: String,
        /// The wait before each repeat (none: as fast as the client reads).
        pause: Option<std::time::Duration>,
    },
    /// The reply a function of the request body returns; see [`Step`].
    Step(Step),
}

impl Reply {
    /// A turn answering `text` alone.
    pub fn text(text: &str) -> Self {
        Self::Turn(Turn::text(text))
    }

    /// A turn with the one call `id` of `name` with `arguments` (an object).
    pub fn call(id: &str, name: &str, arguments: Value) -> Self {
        Self::Turn(Turn::call(id, name, arguments))
    }

    /// A turn with the one call `id` of `resolve` deciding `action` for `reason`.
    pub fn resolve(id: &str, action: &str, reason: &str) -> Self {
        Self::call(id, "resolve", json!({"action": action, "reason": reason}))
    }

    /// The HTTP error `status` with `body`, without `retry-after`.
    pub fn status(status: u16, body: &str) -> Self {
        Self::Status {
            status,
            body: body.to_owned(),
            retry_after: None,
        }
    }

    /// A body of `content_type` that never ends: `head`, then `repeat` as fast as the client
    /// reads (see [`Reply::Endless`]).
    pub fn endless(content_type: &'static str, head: &str, repeat: String) -> Self {
        Self::Endless {
            content_type,
            head: head.to_owned(),
            repeat,
            pause: None,
        }
    }
}

/// A reply computed from the request: the function gets the request body, runs on a thread
/// that may block (it may run a process first, such as a person's decision made while the
/// model "thinks"), and returns the reply to send (another `Step` is run in turn).
#[derive(Clone)]
pub struct Step(Arc<dyn Fn(&Value) -> Reply + Send + Sync>);

impl Step {
    /// A step answering each request it gets with `reply(body)`.
    pub fn new(reply: impl Fn(&Value) -> Reply + Send + Sync + 'static) -> Self {
        Self(Arc::new(reply))
    }
}

impl std::fmt::Debug for Step {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("Step(..)")
    }
}

/// What the mock saw.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub path: String,
    pub headers: HeaderMap,
    pub body: Value,
}

#[derive(Debug, Default)]
struct MockState {
    script: Mutex<VecDeque<Reply>>,
    requests: Mutex<Vec<Recorded>>,
    /// Bytes of `Reply::Endless` bodies handed to the connection so far.
    sent: Arc<AtomicUsize>,
}

/// A running mock server; it stops when the test's runtime ends.
#[derive(Debug, Clone)]
pub struct MockServer {
    addr: SocketAddr,
    state: Arc<MockState>,
}

impl MockServer {
    pub async fn start(script: Vec<Reply>) -> Self {
        let state = Arc::new(MockState {
            script: Mutex::new(script.into()),
            requests: Mutex::new(Vec::new()),
            sent: Arc::new(AtomicUsize::new(0)),
        });
        let app = Router::new()
            .route("/v1/chat/completions", post(handle))
            .route("/v1/messages", post(handle))
            .route("/v1/responses", post(handle))
            .with_state(state.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self { addr, state }
    }

    /// The OpenAI-compatible base URL (with `/v1`).
    pub fn openai_base(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The Anthropic base URL (without `/v1`).
    pub fn anthropic_base(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.state.requests.lock().unwrap().clone()
    }

    pub fn bodies(&self) -> Vec<Value> {
        self.requests().into_iter().map(|r| r.body).collect()
    }

    /// The content of the last tool result the model was sent: the newest request's last
    /// `tool` message (OpenAI wire format); panics when there is none.
    pub fn last_tool_result(&self) -> String {
        let last = self.bodies().pop().unwrap();
        last["messages"]
            .as_array()
            .unwrap()
            .iter()
            .rev()
            .find(|message| message["role"] == "tool")
            .unwrap()["content"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    pub fn unused_replies(&self) -> usize {
        self.state.script.lock().unwrap().len()
    }

    /// Bytes of [`Reply::Endless`] bodies the server handed to its connections so far; the
    /// client's reading pace bounds it (plus what the sockets buffer).
    pub fn sent_bytes(&self) -> usize {
        self.state.sent.load(Ordering::Relaxed)
    }
}

async fn handle(
    State(state): State<Arc<MockState>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let anthropic = uri.path() == "/v1/messages";
    let responses = uri.path() == "/v1/responses";
    let stream = body.get("stream").and_then(Value::as_bool).unwrap_or(false);
    let include_usage = body
        .pointer("/stream_options/include_usage")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let number = {
        let mut requests = state.requests.lock().unwrap();
        requests.push(Recorded {
            path: uri.path().to_owned(),
            headers,
            body: body.clone(),
        });
        requests.len()
    };
    let reply = state.script.lock().unwrap().pop_front();
    let Some(mut reply) = reply else {
        return (StatusCode::INTERNAL_SERVER_ERROR, "mock script exhausted").into_response();
    };
    while let Reply::Step(step) = reply {
        let body = body.clone();
        reply = match tokio::task::spawn_blocking(move || (step.0)(&body)).await {
            Ok(reply) => reply,
            Err(error) => {
                let message = format!("the mock's step for request {number} failed: {error}");
                return (StatusCode::INTERNAL_SERVER_ERROR, message).into_response();
            }
        };
    }
    match reply {
        Reply::Status {
            status,
            body,
            retry_after,
        } => {
            let mut response = (StatusCode::from_u16(status).unwrap(), body).into_response();
            if let Some(seconds) = retry_after {
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, seconds.to_string().parse().unwrap());
            }
            response
        }
        Reply::RawSse(chunks) => sse(chunks, false),
        Reply::Endless {
            content_type,
            head,
            repeat,
            pause,
        } => endless(content_type, head, repeat, pause, state.sent.clone()),
        // Steps were run above until they gave another reply.
        Reply::Step(_) => {
            (StatusCode::INTERNAL_SERVER_ERROR, "mock step left over").into_response()
        }
        Reply::Hang(turn) => {
            let events = if responses {
                responses_events(&turn, number)
            } else if anthropic {
                anthropic_events(&turn)
            } else {
                openai_chunks(&turn, include_usage)
            };
            // Up to and including the first text piece.
            let cut = events
                .iter()
                .position(|e| {
                    e.contains("\"delta\":{\"content\":\"")
                        || e.contains("text_delta")
                        || e.contains("output_text.delta")
                })
                .map_or(1, |p| p + 1);
            sse(events[..cut].to_vec(), true)
        }
        Reply::Turn(turn) if responses => sse(responses_events(&turn, number), false),
        Reply::Turn(turn) => match (anthropic, stream) {
            (false, true) => sse(openai_chunks(&turn, include_usage), false),
            (false, false) => axum::Json(openai_json(&turn)).into_response(),
            (true, true) => sse(anthropic_events(&turn), false),
            (true, false) => axum::Json(anthropic_json(&turn)).into_response(),
        },
    }
}

/// An SSE response; every event is sent in two network chunks split mid-event.
fn sse(events: Vec<String>, hang: bool) -> Response {
    let mut pieces: Vec<Result<Bytes, Infallible>> = Vec::new();
    for event in events {
        let mid = event.len() / 2;
        let mid = (mid..event.len())
            .find(|i| event.is_char_boundary(*i))
            .unwrap_or(event.len());
        pieces.push(Ok(Bytes::from(event[..mid].to_owned())));
        pieces.push(Ok(Bytes::from(event[mid..].to_owned())));
    }
    let stream = futures::stream::iter(pieces);
    let body = if hang {
        Body::from_stream(stream.chain(futures::stream::pending()))
    } else {
        Body::from_stream(stream)
    };
    Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .body(body)
        .unwrap()
}

/// A body that never ends; see [`Reply::Endless`].
fn endless(
    content_type: &'static str,
    head: String,
    repeat: String,
    pause: Option<std::time::Duration>,
    sent: Arc<AtomicUsize>,
) -> Response {
    let repeat = Bytes::from(repeat);
    let first = futures::stream::once(async move { Bytes::from(head) });
    let rest = futures::stream::unfold(repeat, move |repeat| async move {
        if let Some(pause) = pause {
            tokio::time::sleep(pause).await;
        }
        Some((repeat.clone(), repeat))
    });
    let body = first.chain(rest).map(move |chunk| {
        sent.fetch_add(chunk.len(), Ordering::Relaxed);
        Ok::<_, Infallible>(chunk)
    });
    Response::builder()
        .header(header::CONTENT_TYPE, content_type)
        .body(Body::from_stream(body))
        .unwrap()
}

/// Split `text` into pieces of at most `size` characters.
fn pieces(text: &str, size: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

/// The turn's forced finish reason, or the wire's word for a turn that ends (`ended`) or one
/// that calls tools (`called`).
fn finish_reason(turn: &Turn, ended: &str, called: &str) -> String {
    let natural = if turn.calls.is_empty() { ended } else { called };
    turn.finish.clone().unwrap_or_else(|| natural.to_owned())
}

fn openai_finish(turn: &Turn) -> String {
    finish_reason(turn, "stop", "tool_calls")
}

fn anthropic_stop(turn: &Turn) -> String {
    finish_reason(turn, "end_turn", "tool_use")
}

/// OpenAI chunks, with the quirks of llama-cpp-python: the call id repeated in every chunk and
/// a legacy `function_call` alongside for the first call. Arguments of parallel calls arrive
/// interleaved, three characters at a time.
fn openai_chunks(turn: &Turn, include_usage: bool) -> Vec<String> {
    let data = |value: Value| format!("data: {value}\n\n");
    let mut out = vec![data(
        json!({"id":"chatcmpl-1","object":"chat.completion.chunk",
        "choices":[{"index":0,"delta":{"role":"assistant","content":null},"finish_reason":null}]}),
    )];
    for piece in pieces(&turn.text, 3) {
        out.push(data(
            json!({"id":"chatcmpl-1","object":"chat.completion.chunk",
            "choices":[{"index":0,"delta":{"content":piece},"finish_reason":null}]}),
        ));
    }
    for (index, (id, name, _)) in turn.calls.iter().enumerate() {
        let mut delta = json!({"tool_calls":[{"index":index,"id":id,"type":"function",
            "function":{"name":name,"arguments":""}}]});
        if index == 0 {
            delta["function_call"] = json!({"name": name, "arguments": ""});
        }
        out.push(data(
            json!({"id":"chatcmpl-1","choices":[{"index":0,"delta":delta,"finish_reason":null}]}),
        ));
    }
    let split: Vec<Vec<String>> = turn.calls.iter().map(|(_, _, a)| pieces(a, 3)).collect();
    let longest = split.iter().map(Vec::len).max().unwrap_or(0);
    for round in 0..longest {
        for (index, parts) in split.iter().enumerate() {
            if let Some(part) = parts.get(round) {
                let mut delta = json!({"tool_calls":[{"index":index,"id":turn.calls[index].0,
                    "type":"function","function":{"arguments":part}}]});
                if index == 0 {
                    delta["function_call"] = json!({"arguments": part});
                }
                out.push(data(json!({"id":"chatcmpl-1","choices":[{"index":0,"delta":delta,"finish_reason":null}]})));
            }
        }
    }
    if !turn.no_finish {
        out.push(data(
            json!({"id":"chatcmpl-1","choices":[{"index":0,"delta":{},
            "finish_reason":openai_finish(turn)}]}),
        ));
        if include_usage {
            out.push(data(json!({"id":"chatcmpl-1","choices":[],
                "usage": MockUsage::of(turn).openai()})));
        }
        out.push("data: [DONE]\n\n".to_owned());
    }
    out
}

fn openai_json(turn: &Turn) -> Value {
    let mut message = json!({"role":"assistant",
        "content": if turn.text.is_empty() { Value::Null } else { json!(turn.text) }});
    if !turn.calls.is_empty() {
        message["tool_calls"] = turn
            .calls
            .iter()
            .map(|(id, name, args)| json!({"id":id,"type":"function","function":{"name":name,"arguments":args}}))
            .collect();
    }
    json!({"id":"chatcmpl-1","object":"chat.completion","model":"mock",
        "choices":[{"index":0,"message":message,"finish_reason":openai_finish(turn)}],
        "usage": MockUsage::of(turn).openai()})
}

/// An Anthropic SSE event.
fn anthropic_event(name: &str, value: &Value) -> String {
    format!("event: {name}\ndata: {value}\n\n")
}

/// The events of content block `index`: its start with `block`, one `content_block_delta` for
/// each of `deltas`, its stop.
fn anthropic_block(index: usize, block: &Value, deltas: Vec<Value>) -> Vec<String> {
    let mut out = vec![anthropic_event(
        "content_block_start",
        &json!({"type":"content_block_start","index":index,"content_block":block}),
    )];
    for delta in deltas {
        out.push(anthropic_event(
            "content_block_delta",
            &json!({"type":"content_block_delta","index":index,"delta":delta}),
        ));
    }
    out.push(anthropic_event(
        "content_block_stop",
        &json!({"type":"content_block_stop","index":index}),
    ));
    out
}

/// The deltas of type `kind` carrying `text` under `key`, `size` characters each.
fn anthropic_deltas(kind: &str, key: &str, text: &str, size: usize) -> Vec<Value> {
    pieces(text, size)
        .into_iter()
        .map(|piece| json!({"type": kind, key: piece}))
        .collect()
}

fn anthropic_events(turn: &Turn) -> Vec<String> {
    let mut out = vec![
        anthropic_event(
            "message_start",
            &json!({"type":"message_start","message":{"id":"msg_1","type":"message",
            "role":"assistant","content":[],"model":"mock","stop_reason":null,
            "usage": MockUsage::of(turn).anthropic(1)}}),
        ),
        anthropic_event("ping", &json!({"type":"ping"})),
    ];
    let mut blocks: Vec<(Value, Vec<Value>)> = Vec::new();
    for block in &turn.thinking {
        if block["type"] == "thinking" {
            let thinking = block["thinking"].as_str().unwrap_or_default();
            let mut deltas = anthropic_deltas("thinking_delta", "thinking", thinking, 5);
            deltas.push(json!({"type":"signature_delta","signature":block["signature"]}));
            blocks.push((json!({"type":"thinking","thinking":""}), deltas));
        } else {
            blocks.push((block.clone(), Vec::new()));
        }
    }
    if !turn.text.is_empty() {
        let deltas = anthropic_deltas("text_delta", "text", &turn.text, 3);
        blocks.push((json!({"type":"text","text":""}), deltas));
    }
    for (id, name, args) in &turn.calls {
        let deltas = anthropic_deltas("input_json_delta", "partial_json", args, 3);
        let block = json!({"type":"tool_use","id":id,"name":name,"input":{}});
        blocks.push((block, deltas));
    }
    for (index, (block, deltas)) in blocks.into_iter().enumerate() {
        out.extend(anthropic_block(index, &block, deltas));
    }
    if !turn.no_finish {
        out.push(anthropic_event(
            "message_delta",
            &json!({"type":"message_delta",
            "delta":{"stop_reason":anthropic_stop(turn),"stop_sequence":null},
            "usage":{"output_tokens": MockUsage::of(turn).output}}),
        ));
        out.push(anthropic_event(
            "message_stop",
            &json!({"type":"message_stop"}),
        ));
    }
    out
}

fn anthropic_json(turn: &Turn) -> Value {
    let mut content = turn.thinking.clone();
    if !turn.text.is_empty() {
        content.push(json!({"type":"text","text":turn.text}));
    }
    for (id, name, args) in &turn.calls {
        let input: Value = serde_json::from_str(args).unwrap_or(json!({}));
        content.push(json!({"type":"tool_use","id":id,"name":name,"input":input}));
    }
    json!({"id":"msg_1","type":"message","role":"assistant","model":"mock","content":content,
        "stop_reason":anthropic_stop(turn),"stop_sequence":null,
        "usage": MockUsage::of(turn).anthropic(MockUsage::of(turn).output)})
}

/// OpenAI Responses events for `turn` (the `number`th request), as Codex reads them: the
/// response is created, each output item (the text as a `message`, then each call as a
/// `function_call`, with its `namespace` when it has one, or a `custom_tool_call`) is added
/// and done, and the response
/// completes with every item and the usage.
fn responses_events(turn: &Turn, number: usize) -> Vec<String> {
    let event = |value: Value| {
        let name = value["type"].as_str().unwrap_or_default().to_owned();
        format!("event: {name}\ndata: {value}\n\n")
    };
    let id = format!("resp_{number}");
    let mut items = Vec::new();
    if !turn.text.is_empty() {
        items.push(
            json!({"type":"message","id":format!("msg_{number}"),"role":"assistant",
            "status":"completed",
            "content":[{"type":"output_text","text":turn.text,"annotations":[]}]}),
        );
    }
    for (index, (call_id, name, arguments)) in turn.calls.iter().enumerate() {
        let mut item = if turn.custom.contains(call_id) {
            json!({"type":"custom_tool_call","id":format!("ctc_{number}_{index}"),
                "call_id":call_id,"name":name,"input":arguments,"status":"completed"})
        } else {
            json!({"type":"function_call","id":format!("fc_{number}_{index}"),
                "call_id":call_id,"name":name,"arguments":arguments,"status":"completed"})
        };
        if let Some((_, namespace)) = turn.namespaces.iter().find(|(id, _)| id == call_id) {
            item["namespace"] = json!(namespace);
        }
        items.push(item);
    }
    let mut out = vec![event(json!({"type":"response.created",
        "response":{"id":id,"object":"response","status":"in_progress","output":[]}}))];
    for (index, item) in items.iter().enumerate() {
        out.push(event(
            json!({"type":"response.output_item.added","output_index":index,
            "item":item}),
        ));
        if let Some(text) = item.pointer("/content/0/text").and_then(Value::as_str) {
            for piece in pieces(text, 3) {
                out.push(event(
                    json!({"type":"response.output_text.delta","item_id":item["id"],
                    "output_index":index,"content_index":0,"delta":piece}),
                ));
            }
        }
        out.push(event(
            json!({"type":"response.output_item.done","output_index":index,
            "item":item}),
        ));
    }
    if !turn.no_finish {
        let usage = MockUsage::of(turn);
        out.push(event(
            json!({"type":"response.completed","response":{"id":id,
            "object":"response","status":"completed","output":items,
            "usage":{"input_tokens":usage.input,
                "input_tokens_details":{"cached_tokens":usage.cached},
                "output_tokens":usage.output,"output_tokens_details":{"reasoning_tokens":0},
                "total_tokens":usage.input + usage.output}}}),
        ));
    }
    out
}
