//! The `sse_stream` target: a streamed model response, split into chunks, through the
//! provider's SSE reader.

use resolve_agent::ProviderKind;
use resolve_agent::provider::{StreamOutcome, parse_event_stream};

/// Parse a response body as one chunk, in chunks of a given size, and byte by byte.
///
/// Input: a header line, `openai` or `anthropic` optionally followed by a chunk size
/// (`anthropic 5`; default 7), then the body.
///
/// Invariants: no panic; the outcome is the same however the body was split; a finished
/// response gives every tool call an id.
pub fn sse_stream(data: &[u8]) {
    let newline = data
        .iter()
        .position(|byte| *byte == b'\n')
        .unwrap_or(data.len());
    let header = String::from_utf8_lossy(&data[..newline]);
    let body = data.get(newline + 1..).unwrap_or_default();
    let mut words = header.split_whitespace();
    let kind = match words.next() {
        Some("anthropic") => ProviderKind::Anthropic,
        Some(_) | None => ProviderKind::OpenAi,
    };
    let size = words
        .next()
        .and_then(|word| word.parse::<usize>().ok())
        .unwrap_or(7)
        .clamp(1, 4096);

    let whole = parse_event_stream(kind, [body.to_vec()]);
    let chunked = parse_event_stream(kind, body.chunks(size).map(<[u8]>::to_vec));
    let bytewise = parse_event_stream(kind, body.chunks(1).map(<[u8]>::to_vec));
    assert_eq!(
        chunked, whole,
        "splitting into {size}-byte chunks changed the outcome"
    );
    assert_eq!(
        bytewise, whole,
        "splitting byte by byte changed the outcome"
    );
    if let StreamOutcome::Finished { tool_calls, .. } = &whole {
        assert!(
            tool_calls.iter().all(|call| !call.id.is_empty()),
            "a tool call without an id: {tool_calls:?}"
        );
    }
}
