//! Thin clients for the two wire formats the agent speaks: OpenAI Chat Completions (and the
//! many servers compatible with it) and Anthropic Messages.
//!
//! This module owns turning the neutral transcript and tool specs into request bodies,
//! reading streamed (SSE, `sse`) and whole responses within size bounds
//! ([`crate::ResponseLimit`]), and the transport policy: retries with bounded backoff for 429, 5xx and connection errors;
//! the forced-choice fallback (named → `required`/`any` → none, remembered for the run); and a
//! stream that ends without a finish reason retried once without streaming, which then stays
//! off for the run. The settings ([`ProviderConfig`]) live in `config`. The agent loop (which
//! tool choice to ask for, and when) lives in `session::turn_loop`.

mod anthropic;
mod config;
mod http;
mod openai;
mod schema;
mod sse;

use std::time::Duration;

use futures::StreamExt;
use resolve_core::{ToolChoice, ToolSpec};
use tokio_util::sync::CancellationToken;

use serde_json::Value;

use crate::{AgentError, AgentEvent, CallUsage, EventSink, Message, ResponseLimit, ToolCall};

pub use config::{ForcedChoiceSupport, ProviderConfig, ProviderKind, ReasoningEffort};
pub use schema::openai_strict_accepts;

/// Per-run transport state: what the server has shown it accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WireState {
    /// The highest forced-choice form still tried.
    pub forced: ForcedChoiceSupport,
    /// Whether requests stream.
    pub streaming: bool,
    /// Whether streamed OpenAI requests ask for usage (`stream_options`); off for the rest of
    /// the run once a server rejects the key.
    pub stream_usage: bool,
}

impl WireState {
    pub(crate) fn new(config: &ProviderConfig) -> Self {
        // Anthropic accepts only `auto`/`none` tool choices while thinking.
        let forced = match config.anthropic_thinking() {
            Some(_) => ForcedChoiceSupport::Off,
            None => config.forced_tool_choice,
        };
        Self {
            forced,
            streaming: config.stream,
            stream_usage: true,
        }
    }
}

/// One model call: everything the wire request is built from.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ModelRequest<'a> {
    pub system: &'a str,
    pub messages: &'a [Message],
    pub tools: &'a [ToolSpec],
    pub tool_choice: Option<&'a ToolChoice>,
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FinishReason {
    ToolUse,
    Stop,
    Length,
    Other(String),
}

impl FinishReason {
    /// The normalized name: `tool_use`, `stop`, `length`, or the server's own word.
    pub(crate) fn as_str(&self) -> &str {
        match self {
            Self::ToolUse => "tool_use",
            Self::Stop => "stop",
            Self::Length => "length",
            Self::Other(reason) => reason,
        }
    }
}

/// A model response in neutral form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ModelResponse {
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
    pub finish: FinishReason,
    /// Anthropic `thinking` / `redacted_thinking` blocks, verbatim, in order.
    pub thinking: Vec<Value>,
    /// The usage figures, when the server sent them.
    pub usage: Option<CallUsage>,
}

/// A tool choice in the form the wire will carry, after the fallback level is applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WireChoice<'a> {
    Auto,
    None,
    AnyTool,
    Named(&'a str),
}

impl WireChoice<'_> {
    fn forced(self) -> Option<ForcedChoiceSupport> {
        match self {
            Self::AnyTool => Some(ForcedChoiceSupport::AnyTool),
            Self::Named(_) => Some(ForcedChoiceSupport::Named),
            Self::Auto | Self::None => None,
        }
    }
}

fn wire_choice(choice: Option<&ToolChoice>, level: ForcedChoiceSupport) -> Option<WireChoice<'_>> {
    match choice? {
        ToolChoice::Auto => Some(WireChoice::Auto),
        ToolChoice::None => Some(WireChoice::None),
        ToolChoice::Any | ToolChoice::Required => match level {
            ForcedChoiceSupport::Named | ForcedChoiceSupport::AnyTool => Some(WireChoice::AnyTool),
            ForcedChoiceSupport::Off => None,
        },
        ToolChoice::Tool(name) => match level {
            ForcedChoiceSupport::Named => Some(WireChoice::Named(name)),
            ForcedChoiceSupport::AnyTool => Some(WireChoice::AnyTool),
            ForcedChoiceSupport::Off => None,
        },
    }
}

/// What a stream parser wants after one event.
pub(crate) enum Flow {
    Continue,
    Done,
    /// The server reported an error inside the stream; treat the stream as unfinished.
    Abandon(String),
}

/// A provider's incremental reader of one streamed response.
pub(crate) trait StreamReader {
    fn handle(&mut self, event: &str, data: &str, sink: &mut dyn EventSink) -> Flow;
    /// The response, or `None` when no finish reason arrived.
    fn finish(self) -> Option<ModelResponse>;
}

/// A client for one configured server.
#[derive(Debug)]
pub(crate) struct Provider {
    config: ProviderConfig,
    url: String,
    http: reqwest::Client,
    headers: reqwest::header::HeaderMap,
}

impl Provider {
    pub(crate) fn new(config: ProviderConfig) -> Result<Self, AgentError> {
        crate::init();
        let url = config.endpoint();
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(AgentError::InvalidBaseUrl {
                url: config.base_url,
            });
        }
        if let (Some(budget), Some(max_tokens)) = (config.anthropic_thinking(), config.max_tokens)
            && max_tokens <= budget
        {
            return Err(AgentError::ThinkingBudget { budget, max_tokens });
        }
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(30))
            .build()
            .map_err(AgentError::ClientBuild)?;
        let headers = match config.kind {
            ProviderKind::OpenAi => openai::headers(config.api_key.as_ref())?,
            ProviderKind::Anthropic => anthropic::headers(config.api_key.as_ref())?,
        };
        Ok(Self {
            config,
            url,
            http,
            headers,
        })
    }

    pub(crate) fn config(&self) -> &ProviderConfig {
        &self.config
    }

    /// Make one model call, with retries, the forced-choice fallback and the streaming
    /// fallback. Every loop iteration lowers the forced level or turns streaming off, so a
    /// failing request is never repeated unchanged (beyond the bounded transport retries).
    pub(crate) async fn complete(
        &self,
        request: &ModelRequest<'_>,
        state: &mut WireState,
        sink: &mut dyn EventSink,
        cancel: &CancellationToken,
    ) -> Result<ModelResponse, AgentError> {
        loop {
            let choice = wire_choice(request.tool_choice, state.forced);
            let body = match self.config.kind {
                ProviderKind::OpenAi => openai::request_body(&self.config, request, choice, state),
                ProviderKind::Anthropic => {
                    anthropic::request_body(&self.config, request, choice, state.streaming)
                }
            };
            let forced = choice.and_then(WireChoice::forced);
            let response = match http::send(self, &body, forced.is_some(), sink, cancel).await {
                Ok(response) => response,
                Err(http::SendError::ToolChoiceRejected { status }) => {
                    let lower = match forced {
                        Some(ForcedChoiceSupport::Named) => ForcedChoiceSupport::AnyTool,
                        Some(ForcedChoiceSupport::AnyTool | ForcedChoiceSupport::Off) | None => {
                            ForcedChoiceSupport::Off
                        }
                    };
                    state.forced = state.forced.min(lower);
                    sink.emit(AgentEvent::Notice {
                        message: format!(
                            "The server rejected the forced tool_choice (HTTP {status}); using {} for the rest of the run.",
                            state.forced.describe()
                        ),
                    });
                    continue;
                }
                Err(http::SendError::StreamOptionsRejected { status }) => {
                    state.stream_usage = false;
                    sink.emit(AgentEvent::Notice {
                        message: format!(
                            "The server rejected `stream_options` (HTTP {status}); streamed responses carry no usage for the rest of the run."
                        ),
                    });
                    continue;
                }
                Err(http::SendError::Fatal(error)) => return Err(error),
            };
            if !state.streaming {
                let value = http::read_json(self, response, cancel).await?;
                let parsed = match self.config.kind {
                    ProviderKind::OpenAi => openai::parse_response(&value),
                    ProviderKind::Anthropic => anthropic::parse_response(&value),
                };
                let response = parsed.map_err(|message| AgentError::BadResponse {
                    url: self.url.clone(),
                    message,
                })?;
                if !response.text.is_empty() {
                    sink.emit(AgentEvent::TextDelta {
                        text: response.text.clone(),
                    });
                }
                return Ok(response);
            }
            let finished = match self.config.kind {
                ProviderKind::OpenAi => {
                    read_stream(
                        response.bytes_stream(),
                        openai::StreamState::default(),
                        sink,
                        cancel,
                    )
                    .await
                }
                ProviderKind::Anthropic => {
                    read_stream(
                        response.bytes_stream(),
                        anthropic::StreamState::default(),
                        sink,
                        cancel,
                    )
                    .await
                }
            };
            let finished = match finished {
                Ok(finished) => finished,
                Err(StreamStop::Cancelled) => return Err(AgentError::Cancelled),
                Err(StreamStop::TooLarge(limit)) => {
                    return Err(AgentError::ResponseTooLarge {
                        url: self.url.clone(),
                        limit,
                    });
                }
            };
            match finished {
                Ok(response) => return Ok(response),
                Err(why) => {
                    state.streaming = false;
                    sink.emit(AgentEvent::Notice {
                        message: format!(
                            "The stream {why}; retrying without streaming, which stays off for the rest of the run."
                        ),
                    });
                }
            }
        }
    }
}

/// Why reading a stream stopped without an outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StreamStop {
    /// The run was cancelled.
    Cancelled,
    /// The server broke a size bound.
    TooLarge(ResponseLimit),
}

/// Read an SSE body (a stream of byte chunks, split anywhere) to its end. `Ok(Err(why))` means
/// the stream ended without a finish reason (or broke off), so the caller retries without
/// streaming; a broken size bound is an error, never retried. Cancellation is checked before
/// every chunk, and each chunk is parsed in time linear in its length.
async fn read_stream<R, S, B, E>(
    body: S,
    mut reader: R,
    sink: &mut dyn EventSink,
    cancel: &CancellationToken,
) -> Result<Result<ModelResponse, String>, StreamStop>
where
    R: StreamReader,
    S: futures::Stream<Item = Result<B, E>>,
    B: AsRef<[u8]>,
    E: std::fmt::Display,
{
    let mut body = std::pin::pin!(body);
    let mut parser = sse::SseParser::default();
    let mut events = Vec::new();
    loop {
        let next = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(StreamStop::Cancelled),
            next = body.next() => next,
        };
        let chunk = match next {
            None => break,
            Some(Err(error)) => return Ok(Err(format!("broke off ({error})"))),
            Some(Ok(chunk)) => chunk,
        };
        // Events before a parse error are handled first, so the outcome does not depend on
        // where the body was split.
        let parsed = parser.feed(chunk.as_ref(), &mut events);
        for event in events.drain(..) {
            match reader.handle(&event.event, &event.data, sink) {
                Flow::Continue => {}
                Flow::Done => return Ok(finish(reader)),
                Flow::Abandon(message) => {
                    return Ok(Err(format!("reported an error ({message})")));
                }
            }
        }
        match parsed {
            Ok(()) => {}
            Err(sse::SseError::Limit(limit)) => return Err(StreamStop::TooLarge(limit)),
            Err(sse::SseError::NotUtf8) => {
                return Ok(Err("broke off (a line is not valid UTF-8)".to_owned()));
            }
        }
    }
    Ok(finish(reader))
}

/// The response a reader built, or why there is none.
fn finish(reader: impl StreamReader) -> Result<ModelResponse, String> {
    reader
        .finish()
        .ok_or_else(|| "ended without a finish reason".to_owned())
}

/// What a streamed (SSE) response body amounts to, as [`parse_event_stream`] reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamOutcome {
    /// The stream carried a finish reason: the model's response.
    Finished {
        /// The text the model wrote.
        text: String,
        /// The tool calls, in order; calls the server sent without an id get `call_<n>`.
        tool_calls: Vec<ToolCall>,
        /// Why the model stopped, normalized: `tool_use`, `stop`, `length`, or the server's
        /// own word for anything else.
        finish_reason: String,
    },
    /// The stream ended without a finish reason, broke off, or reported an error in-stream;
    /// the agent then retries the call without streaming. `why` says which. (A stream that
    /// breaks a size bound, [`crate::ResponseLimit`], is also `Unfinished` here; the agent
    /// ends the call with an error instead of retrying.)
    Unfinished {
        /// What went wrong, e.g. `ended without a finish reason`.
        why: String,
    },
}

/// Parse a streamed response body of a `kind` server, given as the byte chunks it arrived in
/// (a chunk may end anywhere: inside a line, an event or a UTF-8 character).
///
/// This is exactly the reader the agent runs on a live response, minus the network; it exists
/// so that the parsers can be fuzzed and tested on recorded or made-up streams. It never
/// panics: any input gives a [`StreamOutcome`].
///
/// ```
/// use resolve_agent::ProviderKind;
/// use resolve_agent::provider::{StreamOutcome, parse_event_stream};
///
/// let body = b"data: {\"choices\":[{\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
/// let (head, tail) = body.split_at(20);
/// let outcome = parse_event_stream(ProviderKind::OpenAi, [head.to_vec(), tail.to_vec()]);
/// assert_eq!(
///     outcome,
///     StreamOutcome::Finished { text: "hi".into(), tool_calls: vec![], finish_reason: "stop".into() }
/// );
/// ```
pub fn parse_event_stream(
    kind: ProviderKind,
    chunks: impl IntoIterator<Item = Vec<u8>>,
) -> StreamOutcome {
    let body = futures::stream::iter(
        chunks
            .into_iter()
            .map(Ok::<Vec<u8>, std::convert::Infallible>),
    );
    let mut sink = |_event: AgentEvent| {};
    let cancel = CancellationToken::new();
    let read = async {
        match kind {
            ProviderKind::OpenAi => {
                read_stream(body, openai::StreamState::default(), &mut sink, &cancel).await
            }
            ProviderKind::Anthropic => {
                read_stream(body, anthropic::StreamState::default(), &mut sink, &cancel).await
            }
        }
    };
    match futures::executor::block_on(read) {
        Ok(Ok(response)) => StreamOutcome::Finished {
            text: response.text,
            tool_calls: response.tool_calls,
            finish_reason: response.finish.as_str().to_owned(),
        },
        Ok(Err(why)) => StreamOutcome::Unfinished { why },
        Err(StreamStop::TooLarge(limit)) => StreamOutcome::Unfinished {
            why: format!("was dropped: the server sent {limit}"),
        },
        // This token is never cancelled.
        Err(StreamStop::Cancelled) => StreamOutcome::Unfinished {
            why: AgentError::Cancelled.to_string(),
        },
    }
}

/// Give calls without an id one that is unique within the response.
fn fill_call_ids(calls: &mut [ToolCall]) {
    for (index, call) in calls.iter_mut().enumerate() {
        if call.id.is_empty() {
            call.id = format!("call_{index}");
        }
    }
}

/// The first characters of a body, for error messages.
fn excerpt(text: &str) -> String {
    const LIMIT: usize = 500;
    let text = text.trim();
    match text.char_indices().nth(LIMIT) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forced_choice_lowers_with_the_level() {
        let tool = ToolChoice::Tool("resolve".into());
        assert_eq!(
            wire_choice(Some(&tool), ForcedChoiceSupport::Named),
            Some(WireChoice::Named("resolve"))
        );
        assert_eq!(
            wire_choice(Some(&tool), ForcedChoiceSupport::AnyTool),
            Some(WireChoice::AnyTool)
        );
        assert_eq!(wire_choice(Some(&tool), ForcedChoiceSupport::Off), None);
        assert_eq!(
            wire_choice(Some(&ToolChoice::Auto), ForcedChoiceSupport::Off),
            Some(WireChoice::Auto)
        );
    }
}
