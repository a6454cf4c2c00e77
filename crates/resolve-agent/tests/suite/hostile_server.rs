//! A broken or hostile model server (issue #35, item 9): a line that never ends, an event that
//! never ends and a whole body that never ends each fail the call with an error naming the
//! bound, without retrying it, and with the client reading no more than the bound (the server
//! counts what it could hand over); an endless stream of well-formed events stops as soon as
//! the run is cancelled. Hang checks only, no timing asserts.

use std::time::Duration;

use resolve_agent::{AgentError, AgentEvent, AgentSession, ProviderKind, ResponseLimit};
use resolve_test_support::{MockServer, Reply};
use tokio_util::sync::CancellationToken;

use super::support::{config, run_quietly};
use crate::both_providers;

/// What the client may read past a bound before it stops: socket buffers on both sides.
const SLACK: usize = 32 << 20;

/// Run one call against `server` with `kind` (streaming or not) and return its error.
async fn failing_run(server: &MockServer, kind: ProviderKind, stream: bool) -> AgentError {
    let mut config = config(server, kind);
    config.stream = stream;
    let mut session = AgentSession::new(config, Vec::new(), "").unwrap();
    // A hang check: the old reader scanned an endless line for minutes.
    tokio::time::timeout(Duration::from_secs(120), run_quietly(&mut session, "Hi"))
        .await
        .expect("the call ends")
        .unwrap_err()
}

/// `error` is the `expected` bound, its message says `said`, the call was not retried, and the
/// client read no more than the bound (plus socket buffers).
fn assert_bound(error: &AgentError, expected: ResponseLimit, server: &MockServer, said: &str) {
    let text = error.to_string();
    assert!(text.contains(said), "{text}");
    match error {
        AgentError::ResponseTooLarge { limit, .. } => assert_eq!(*limit, expected, "{error}"),
        other => panic!("expected the {expected:?} bound, got: {other}"),
    }
    assert_eq!(server.requests().len(), 1, "a broken bound is not retried");
    assert!(
        server.sent_bytes() <= expected.bytes() + SLACK,
        "the client read {} bytes for a bound of {}",
        server.sent_bytes(),
        expected.bytes()
    );
}

async fn an_sse_line_that_never_ends_fails_with_the_line_bound(kind: ProviderKind) {
    let server = MockServer::start(vec![Reply::endless(
        "text/event-stream",
        "data: ",
        "x".repeat(64 * 1024),
    )])
    .await;
    let error = failing_run(&server, kind, true).await;
    assert_bound(
        &error,
        ResponseLimit::SseLine,
        &server,
        "sent an SSE line longer than 8 MiB; the response was dropped and not retried.",
    );
    let text = error.to_string();
    assert!(
        text.starts_with(&format!(
            "The model server at `{}",
            match kind {
                ProviderKind::OpenAi => server.openai_base(),
                ProviderKind::Anthropic => server.anthropic_base(),
            }
        )),
        "{text}"
    );
}
both_providers!(an_sse_line_that_never_ends_fails_with_the_line_bound);

async fn an_sse_event_that_never_ends_fails_with_the_event_bound(kind: ProviderKind) {
    let line = format!("data: {}\n", "y".repeat(64 * 1024));
    let server = MockServer::start(vec![Reply::endless("text/event-stream", "", line)]).await;
    let error = failing_run(&server, kind, true).await;
    assert_bound(
        &error,
        ResponseLimit::SseEvent,
        &server,
        "sent an SSE event with more than 32 MiB of data",
    );
}
both_providers!(an_sse_event_that_never_ends_fails_with_the_event_bound);

async fn a_whole_body_that_never_ends_fails_with_the_body_bound(kind: ProviderKind) {
    let server = MockServer::start(vec![Reply::endless(
        "application/json",
        r#"{"choices":[{"message":{"content":""#,
        "z".repeat(64 * 1024),
    )])
    .await;
    let error = failing_run(&server, kind, false).await;
    assert_bound(
        &error,
        ResponseLimit::Body,
        &server,
        "sent a response body larger than 64 MiB",
    );
}
both_providers!(a_whole_body_that_never_ends_fails_with_the_body_bound);

/// An endless stream of text events, as fast as the client reads.
fn endless_text(kind: ProviderKind) -> Reply {
    match kind {
        ProviderKind::OpenAi => Reply::endless(
            "text/event-stream",
            "",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}]}\n\n".repeat(64),
        ),
        ProviderKind::Anthropic => Reply::endless(
            "text/event-stream",
            concat!(
                "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"mock\",\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n",
                "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
            ),
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n"
                .repeat(64),
        ),
    }
}

async fn an_endless_stream_of_events_stops_when_the_run_is_cancelled(kind: ProviderKind) {
    let server = MockServer::start(vec![endless_text(kind)]).await;
    let mut session = AgentSession::new(config(&server, kind), Vec::new(), "").unwrap();
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let mut deltas = 0usize;
    let mut sink = move |event: AgentEvent| {
        if matches!(event, AgentEvent::TextDelta { .. }) {
            deltas += 1;
            if deltas == 1000 {
                trigger.cancel();
            }
        }
    };
    let error = tokio::time::timeout(
        Duration::from_secs(20),
        session.run("Hi", &mut sink, &cancel),
    )
    .await
    .expect("the run stops once cancelled")
    .unwrap_err();
    assert!(matches!(error, AgentError::Cancelled), "{error}");
    assert!(
        server.sent_bytes() < ResponseLimit::Stream.bytes(),
        "cancelled, not stopped by the stream bound"
    );
}
both_providers!(an_endless_stream_of_events_stops_when_the_run_is_cancelled);
