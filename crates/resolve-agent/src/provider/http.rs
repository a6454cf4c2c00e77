//! Sending one request: bounded retries with backoff for 429, 5xx and connection errors, the
//! request timeout, cancellation, and error texts that name the URL and the model; reading a
//! whole body within a size bound (64 KiB of an error body, [`ResponseLimit::Body`] of an
//! answer), with cancellation checked between chunks.
//!
//! Owned here: the transport policy of one request. Not owned: the request bodies and response
//! parsing (`openai`, `anthropic`, the parent module).

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::{Provider, excerpt};
use crate::{AgentError, AgentEvent, EventSink, ResponseLimit};

/// Why a request produced no usable response.
#[derive(Debug)]
pub(super) enum SendError {
    /// The server refused a forced tool choice (its error body names `tool_choice`).
    ToolChoiceRejected { status: u16 },
    /// The server refused the `stream_options` key (a 4xx whose body names it).
    StreamOptionsRejected { status: u16 },
    /// Anything else; ends the model call.
    Fatal(AgentError),
}

impl From<AgentError> for SendError {
    fn from(error: AgentError) -> Self {
        Self::Fatal(error)
    }
}

/// Whether an error body blames the tool choice.
fn blames_tool_choice(body: &str) -> bool {
    let body = body.to_ascii_lowercase();
    body.contains("tool_choice") || body.contains("tool choice") || body.contains("toolchoice")
}

fn retryable(status: StatusCode) -> bool {
    status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error()
}

/// A `retry-after` header in seconds.
fn retry_after(response: &reqwest::Response) -> Option<Duration> {
    let value = response.headers().get(reqwest::header::RETRY_AFTER)?;
    let seconds: f64 = value.to_str().ok()?.trim().parse().ok()?;
    (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds))
}

fn backoff(provider: &Provider, retry: u32, hint: Option<Duration>) -> Duration {
    let config = provider.config();
    let exponential = config
        .retry_base_delay
        .saturating_mul(2u32.saturating_pow(retry));
    hint.unwrap_or(exponential).min(config.retry_max_delay)
}

async fn sleep(delay: Duration, cancel: &CancellationToken) -> Result<(), AgentError> {
    tokio::select! {
        biased;
        () = cancel.cancelled() => Err(AgentError::Cancelled),
        () = tokio::time::sleep(delay) => Ok(()),
    }
}

/// POST `body` to the provider's endpoint and return a successful response.
///
/// 429, 5xx and connection errors are retried up to `max_retries` times; a 4xx/5xx whose body
/// names `tool_choice` while a forced choice was sent is handed back as
/// [`SendError::ToolChoiceRejected`] at once (the caller retries with a lower choice), and a
/// 4xx whose body names `stream_options` as [`SendError::StreamOptionsRejected`] (the caller
/// retries without the key).
pub(super) async fn send(
    provider: &Provider,
    body: &Value,
    forced_choice: bool,
    sink: &mut dyn EventSink,
    cancel: &CancellationToken,
) -> Result<reqwest::Response, SendError> {
    let config = provider.config();
    let url = &provider.url;
    let mut retry = 0u32;
    loop {
        if cancel.is_cancelled() {
            return Err(AgentError::Cancelled.into());
        }
        let request = provider
            .http
            .post(url)
            .headers(provider.headers.clone())
            .timeout(config.request_timeout)
            .json(body);
        let sent = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(AgentError::Cancelled.into()),
            sent = request.send() => sent,
        };
        let response = match sent {
            Ok(response) => response,
            Err(error) if error.is_timeout() => {
                return Err(AgentError::Timeout {
                    url: url.clone(),
                    after: config.request_timeout,
                }
                .into());
            }
            Err(error) => {
                if retry >= config.max_retries {
                    return Err(AgentError::Connection {
                        url: url.clone(),
                        attempts: retry + 1,
                        source: error,
                    }
                    .into());
                }
                let delay = backoff(provider, retry, None);
                sink.emit(AgentEvent::Notice {
                    message: format!(
                        "Could not reach `{url}`; retrying in {} ms.",
                        delay.as_millis()
                    ),
                });
                retry += 1;
                sleep(delay, cancel).await?;
                continue;
            }
        };
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let hint = retry_after(&response);
        // Only the start of an error body is used (an excerpt, a search for `tool_choice`).
        let text = match read_capped(response, ERROR_BODY_BYTES, cancel).await {
            Ok(Capped { bytes, .. }) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(ReadStop::Cancelled) => return Err(AgentError::Cancelled.into()),
            Err(ReadStop::Failed(_)) => String::new(),
        };
        if forced_choice
            && (status.is_client_error() || status.is_server_error())
            && blames_tool_choice(&text)
        {
            return Err(SendError::ToolChoiceRejected {
                status: status.as_u16(),
            });
        }
        if body.get("stream_options").is_some()
            && status.is_client_error()
            && text.to_ascii_lowercase().contains("stream_options")
        {
            return Err(SendError::StreamOptionsRejected {
                status: status.as_u16(),
            });
        }
        if retryable(status) && retry < config.max_retries {
            let delay = backoff(provider, retry, hint);
            sink.emit(AgentEvent::Notice {
                message: format!(
                    "HTTP {} from `{url}`; retrying in {} ms.",
                    status.as_u16(),
                    delay.as_millis()
                ),
            });
            retry += 1;
            sleep(delay, cancel).await?;
            continue;
        }
        return Err(status_error(provider, status, &text).into());
    }
}

fn status_error(provider: &Provider, status: StatusCode, text: &str) -> AgentError {
    let url = provider.url.clone();
    let model = provider.config().model.clone();
    let body = excerpt(text);
    match status {
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => AgentError::Unauthorized {
            url,
            model,
            status: status.as_u16(),
            body,
        },
        StatusCode::NOT_FOUND => AgentError::NotFound { url, model, body },
        _ => AgentError::Status {
            url,
            model,
            status: status.as_u16(),
            body,
        },
    }
}

/// Bytes of an error response's body that are read; the rest is dropped unread.
const ERROR_BODY_BYTES: usize = 64 * 1024;

/// The first bytes of a body, and whether more followed.
struct Capped {
    bytes: Vec<u8>,
    more: bool,
}

/// Why a body was not read to its end or its cap.
enum ReadStop {
    Cancelled,
    Failed(reqwest::Error),
}

/// Read `response`'s body chunk by chunk up to `cap` bytes, checking for cancellation before
/// every chunk; a body announced (`content-length`) or found to be longer stops at the cap.
async fn read_capped(
    mut response: reqwest::Response,
    cap: usize,
    cancel: &CancellationToken,
) -> Result<Capped, ReadStop> {
    let announced = response
        .content_length()
        .and_then(|length| usize::try_from(length).ok());
    if announced.is_some_and(|length| length > cap) {
        return Ok(Capped {
            bytes: Vec::new(),
            more: true,
        });
    }
    let mut bytes = Vec::with_capacity(announced.unwrap_or(0));
    loop {
        let chunk = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(ReadStop::Cancelled),
            chunk = response.chunk() => chunk.map_err(ReadStop::Failed)?,
        };
        let Some(chunk) = chunk else {
            return Ok(Capped { bytes, more: false });
        };
        let room = cap - bytes.len();
        if chunk.len() > room {
            bytes.extend_from_slice(&chunk[..room]);
            return Ok(Capped { bytes, more: true });
        }
        bytes.extend_from_slice(&chunk);
    }
}

/// Read a whole JSON response body, at most [`ResponseLimit::Body`] bytes.
pub(super) async fn read_json(
    provider: &Provider,
    response: reqwest::Response,
    cancel: &CancellationToken,
) -> Result<Value, AgentError> {
    let limit = ResponseLimit::Body;
    let bytes = match read_capped(response, limit.bytes(), cancel).await {
        Ok(Capped { more: true, .. }) => {
            return Err(AgentError::ResponseTooLarge {
                url: provider.url.clone(),
                limit,
            });
        }
        Ok(Capped { bytes, more: false }) => bytes,
        Err(ReadStop::Cancelled) => return Err(AgentError::Cancelled),
        Err(ReadStop::Failed(error)) if error.is_timeout() => {
            return Err(AgentError::Timeout {
                url: provider.url.clone(),
                after: provider.config().request_timeout,
            });
        }
        Err(ReadStop::Failed(error)) => {
            return Err(AgentError::BadResponse {
                url: provider.url.clone(),
                message: format!("the body could not be read ({error})"),
            });
        }
    };
    serde_json::from_slice(&bytes).map_err(|error| AgentError::BadResponse {
        url: provider.url.clone(),
        message: format!(
            "it is not JSON ({error}): {}",
            excerpt(&String::from_utf8_lossy(&bytes))
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_choice_blame_is_found_in_error_bodies() {
        assert!(blames_tool_choice(
            r#"{"error":{"message":"Invalid value for 'tool_choice'"}}"#
        ));
        assert!(blames_tool_choice(
            "Tool choice is not supported with thinking"
        ));
        assert!(!blames_tool_choice(r#"{"error":"model not found"}"#));
    }
}
