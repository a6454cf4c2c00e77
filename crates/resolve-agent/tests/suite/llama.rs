//! Opt-in: the OpenAI-compatible client against a real llama.cpp server (llama-cpp-python with
//! SmolLM2-135M, both from PyPI). Start one with `scripts/llama-server.sh PORT`, then run
//! `RESOLVE_LLAMA_URL=http://127.0.0.1:PORT/v1 cargo test -p resolve-agent --test all suite::llama`.
//! Without `RESOLVE_LLAMA_URL` the test returns at once: the server takes minutes to build.
//!
//! The 135M model's judgment is not under test; the wire format is: streaming and
//! non-streaming responses, the reminder as a `user` message, a named forced `tool_choice`
//! (grammar-constrained, so the arguments are schema-valid), and the fallbacks for what this
//! server rejects.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use resolve_agent::{AgentError, AgentEvent, AgentSession, ProviderConfig, ProviderKind};
use resolve_core::{PendingAction, ResolveSession, ToolResult};
use tokio_util::sync::CancellationToken;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_llama_cpp_server_resolves_a_pending_preview_through_the_forced_choice() {
    let Ok(base_url) = std::env::var("RESOLVE_LLAMA_URL") else {
        eprintln!("RESOLVE_LLAMA_URL is not set: skipping the opt-in llama.cpp test");
        return;
    };
    resolve_agent::init();
    let resolved = Arc::new(AtomicUsize::new(0));
    let resolve = Arc::new(ResolveSession::new());
    let counter = Arc::clone(&resolved);
    let discard_counter = Arc::clone(&resolved);
    resolve
        .queue_resolve_handler(
            PendingAction::new("Edit: notes.txt", "edit", move |_reason, _extra| {
                let counter = Arc::clone(&counter);
                async move {
                    counter.fetch_add(1, Ordering::SeqCst);
                    Ok(ToolResult::text("Applied edit to notes.txt."))
                }
            })
            .with_reject(move |_reason, _extra| {
                let counter = Arc::clone(&discard_counter);
                async move {
                    counter.fetch_add(1, Ordering::SeqCst);
                    Ok(None)
                }
            }),
        )
        .unwrap();

    let mut config = ProviderConfig::new(ProviderKind::OpenAi, base_url, "smollm2");
    config.temperature = Some(0.0);
    config.max_tokens = Some(96);
    let mut session = AgentSession::builder(config)
        .system_prompt("You are a coding agent. A staged edit is pending; call the resolve tool.")
        .resolve_session(Arc::clone(&resolve))
        .offer_resolve(true)
        .max_turns(Some(6))
        .build()
        .unwrap();
    let mut events = Vec::new();
    let mut sink = |event: AgentEvent| events.push(event);
    let outcome = session
        .run(
            "Apply the pending edit to notes.txt.",
            &mut sink,
            &CancellationToken::new(),
        )
        .await;
    for event in &events {
        eprintln!("{}", serde_json::to_string(event).unwrap());
    }
    match &outcome {
        Ok(_) | Err(AgentError::MaxTurns(_)) => {}
        Err(error) => panic!("the run failed on the wire: {error}"),
    }
    let resolve_calls = events
        .iter()
        .filter(|event| matches!(event, AgentEvent::ToolResult { name, executed: true, is_error: false, .. } if name == "resolve"))
        .count();
    assert!(
        resolve_calls >= 1,
        "the server never produced a valid resolve call: {outcome:?}"
    );
    assert_eq!(
        resolved.load(Ordering::SeqCst),
        1,
        "the pending action was consumed exactly once"
    );
    assert!(!resolve.queue().pending().has_pending());
}
