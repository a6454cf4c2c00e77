//! Thin clients for the two wire formats the agent speaks: OpenAI Chat Completions (and the
//! many servers compatible with it) and Anthropic Messages.
//!
//! This module owns the provider configuration ([`ProviderConfig`]), turning the neutral
//! transcript and tool specs into request bodies, reading streamed (SSE) and whole responses,
//! and the transport policy: retries with bounded backoff for 429, 5xx and connection errors;
//! the forced-choice fallback (named → `required`/`any` → none, remembered for the run); and a
//! stream that ends without a finish reason retried once without streaming, which then stays
//! off for the run. The agent loop (which tool choice to ask for, and when) lives in
//! `session::turn_loop`.

mod anthropic;
mod http;
mod openai;
mod schema;

use std::time::Duration;

use eventsource_stream::Eventsource;
use futures::StreamExt;
use resolve_core::{ToolChoice, ToolSpec};
use tokio_util::sync::CancellationToken;

use crate::{AgentError, AgentEvent, ApiKey, EventSink, Message, ToolCall};

pub use schema::openai_strict_accepts;

/// Which wire format a server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProviderKind {
    /// OpenAI Chat Completions and compatible servers (llama.cpp, vLLM, Ollama, …).
    OpenAi,
    /// Anthropic Messages.
    Anthropic,
}

impl ProviderKind {
    /// The official base URL (OpenAI's includes `/v1`, Anthropic's does not).
    pub fn default_base_url(self) -> &'static str {
        match self {
            Self::OpenAi => "https://api.openai.com/v1",
            Self::Anthropic => "https://api.anthropic.com",
        }
    }

    /// The environment variable that conventionally holds the API key.
    pub fn api_key_env(self) -> &'static str {
        match self {
            Self::OpenAi => crate::secret::OPENAI_API_KEY_ENV,
            Self::Anthropic => crate::secret::ANTHROPIC_API_KEY_ENV,
        }
    }
}

/// How far a server supports forcing a tool choice; also the fallback ladder's rungs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ForcedChoiceSupport {
    /// No forcing: a declined preview gets the reminder only.
    Off,
    /// Only "call some tool" (`"required"` / `{"type":"any"}`).
    AnyTool,
    /// Naming the tool (`{"type":"function",…}` / `{"type":"tool",…}`).
    Named,
}

impl ForcedChoiceSupport {
    fn describe(self) -> &'static str {
        match self {
            Self::Off => "no tool_choice (reminder only)",
            Self::AnyTool => "a `required`/`any` tool_choice",
            Self::Named => "a named tool_choice",
        }
    }
}

/// Where and how to reach the model.
///
/// Fields are public; build one with [`ProviderConfig::new`] and adjust what you need.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ProviderConfig {
    /// The wire format.
    pub kind: ProviderKind,
    /// Base URL as the official SDKs take it: OpenAI-compatible bases include the version
    /// segment (`http://127.0.0.1:8080/v1` → `<base>/chat/completions`); Anthropic bases do not
    /// (`https://api.anthropic.com` → `<base>/v1/messages`).
    pub base_url: String,
    /// Model name sent with every request.
    pub model: String,
    /// API key. By default, none (local servers need none).
    pub api_key: Option<ApiKey>,
    /// Stream responses (SSE). By default, true.
    pub stream: bool,
    /// How far the server supports forced tool choices. By default, [`ForcedChoiceSupport::Named`];
    /// a server that rejects a forced choice lowers it for the rest of the run anyway.
    pub forced_tool_choice: ForcedChoiceSupport,
    /// Output token limit. By default, none for OpenAI-compatible servers and 8192 for
    /// Anthropic (which requires one).
    pub max_tokens: Option<u32>,
    /// Sampling temperature. By default, the server's.
    pub temperature: Option<f64>,
    /// Timeout of one HTTP request, response body included. By default, 10 minutes.
    pub request_timeout: Duration,
    /// Retries after a 429, a 5xx or a connection error. By default, 3.
    pub max_retries: u32,
    /// First retry delay; it doubles per retry. By default, 500 ms.
    pub retry_base_delay: Duration,
    /// Cap on one retry delay (also on a server's `retry-after`). By default, 20 s.
    pub retry_max_delay: Duration,
}

impl ProviderConfig {
    /// A configuration for `model` at `base_url`, with the defaults documented on each field.
    pub fn new(kind: ProviderKind, base_url: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            kind,
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            stream: true,
            forced_tool_choice: ForcedChoiceSupport::Named,
            max_tokens: None,
            temperature: None,
            request_timeout: Duration::from_secs(600),
            max_retries: 3,
            retry_base_delay: Duration::from_millis(500),
            retry_max_delay: Duration::from_secs(20),
        }
    }

    /// The URL requests go to.
    pub fn endpoint(&self) -> String {
        let base = self.base_url.trim_end_matches('/');
        match self.kind {
            ProviderKind::OpenAi => format!("{base}/chat/completions"),
            // Be liberal: a base that already ends in `/v1` is not given a second one.
            ProviderKind::Anthropic => {
                format!("{}/v1/messages", base.strip_suffix("/v1").unwrap_or(base))
            }
        }
    }
}

/// Per-run transport state: what the server has shown it accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WireState {
    /// The highest forced-choice form still tried.
    pub forced: ForcedChoiceSupport,
    /// Whether requests stream.
    pub streaming: bool,
}

impl WireState {
    pub(crate) fn new(config: &ProviderConfig) -> Self {
        Self {
            forced: config.forced_tool_choice,
            streaming: config.stream,
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
                ProviderKind::OpenAi => {
                    openai::request_body(&self.config, request, choice, state.streaming)
                }
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
                    .await?
                }
                ProviderKind::Anthropic => {
                    read_stream(
                        response.bytes_stream(),
                        anthropic::StreamState::default(),
                        sink,
                        cancel,
                    )
                    .await?
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

/// Read an SSE body (a stream of byte chunks, split anywhere) to its end. `Ok(Err(why))` means
/// the stream ended without a finish reason (or broke off), so the caller retries without
/// streaming.
async fn read_stream<R, S, B, E>(
    body: S,
    mut reader: R,
    sink: &mut dyn EventSink,
    cancel: &CancellationToken,
) -> Result<Result<ModelResponse, String>, AgentError>
where
    R: StreamReader,
    S: futures::Stream<Item = Result<B, E>>,
    B: AsRef<[u8]>,
    E: std::fmt::Display,
{
    let mut events = std::pin::pin!(body.eventsource());
    loop {
        let next = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(AgentError::Cancelled),
            next = events.next() => next,
        };
        match next {
            None => break,
            Some(Err(error)) => {
                return Ok(Err(format!("broke off ({error})")));
            }
            Some(Ok(event)) => match reader.handle(&event.event, &event.data, sink) {
                Flow::Continue => {}
                Flow::Done => break,
                Flow::Abandon(message) => {
                    return Ok(Err(format!("reported an error ({message})")));
                }
            },
        }
    }
    Ok(reader
        .finish()
        .ok_or_else(|| "ended without a finish reason".to_owned()))
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
    /// the agent then retries the call without streaming. `why` says which.
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
        // Only cancellation fails outright, and this token is never cancelled.
        Err(error) => StreamOutcome::Unfinished {
            why: error.to_string(),
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
    fn endpoints_follow_the_official_sdks() {
        let openai = ProviderConfig::new(ProviderKind::OpenAi, "http://127.0.0.1:8080/v1/", "m");
        assert_eq!(
            openai.endpoint(),
            "http://127.0.0.1:8080/v1/chat/completions"
        );
        let anthropic =
            ProviderConfig::new(ProviderKind::Anthropic, "https://api.anthropic.com", "m");
        assert_eq!(
            anthropic.endpoint(),
            "https://api.anthropic.com/v1/messages"
        );
        let doubled = ProviderConfig::new(ProviderKind::Anthropic, "http://h/v1", "m");
        assert_eq!(doubled.endpoint(), "http://h/v1/messages");
    }

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
