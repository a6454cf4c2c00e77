//! Usage at the end of a run: model calls, input tokens (cached and not), output tokens, and
//! the calls that forced `resolve` apart, read off both wire formats, streamed or not.

use pretty_assertions::assert_eq;
use resolve_agent::{AgentEvent, AgentSession, ProviderKind, TokenUsage, Usage};
use serde_json::json;

use super::support::{Events, Tools, change_a_txt, config, run_quietly, run_recording};
use resolve_test_support::{MockServer, Reply, Turn};

fn session(server: &MockServer, kind: ProviderKind, tools: &Tools, stream: bool) -> AgentSession {
    let mut config = config(server, kind);
    config.stream = stream;
    AgentSession::new(config, tools.all(), "You are a test agent.").unwrap()
}

/// stage, a declined turn (peek), the forced `resolve`, the final answer; each with its own
/// usage figures `(input, cached, cache writes, output)`.
fn declining_script() -> Vec<Reply> {
    vec![
        Reply::Turn(Turn::call("c1", "stage", json!({"path": "a.txt"})).with_usage(100, 0, 80, 10)),
        Reply::Turn(Turn::call("c2", "peek", json!({})).with_usage(200, 80, 0, 20)),
        Reply::Turn(
            Turn::call(
                "c3",
                "resolve",
                json!({"action": "apply", "reason": "The preview is right."}),
            )
            .with_usage(300, 200, 0, 30),
        ),
        Reply::Turn(Turn::text("Done.").with_usage(400, 300, 0, 40)),
    ]
}

fn expected_usage(kind: ProviderKind) -> Usage {
    // OpenAI reports no cache writes.
    let writes = match kind {
        ProviderKind::OpenAi => 0,
        ProviderKind::Anthropic => 80,
    };
    Usage {
        total: TokenUsage {
            model_calls: 4,
            calls_without_usage: 0,
            input_tokens: 1000,
            cached_input_tokens: 580,
            cache_write_input_tokens: writes,
            output_tokens: 100,
        },
        forced: TokenUsage {
            model_calls: 1,
            calls_without_usage: 0,
            input_tokens: 300,
            cached_input_tokens: 200,
            cache_write_input_tokens: 0,
            output_tokens: 30,
        },
    }
}

async fn usage_is_summed_with_forced_calls_apart(kind: ProviderKind, stream: bool) {
    let server = MockServer::start(declining_script()).await;
    let tools = Tools::new();
    let mut session = session(&server, kind, &tools, stream);
    let events = Events::default();
    let summary = change_a_txt(&mut session, &events).await.unwrap();
    assert_eq!(tools.applied(), 1);
    assert_eq!(summary.usage, expected_usage(kind));
    assert_eq!(
        events.all().last(),
        Some(&AgentEvent::Usage(expected_usage(kind))),
        "the usage event ends the run"
    );
}

/// One test of [`usage_is_summed_with_forced_calls_apart`] per `name: kind, streamed`.
macro_rules! usage_tests {
    ($($name:ident: $kind:ident, $stream:literal;)*) => {$(
        #[tokio::test]
        async fn $name() {
            usage_is_summed_with_forced_calls_apart(ProviderKind::$kind, $stream).await;
        }
    )*};
}

usage_tests! {
    openai_streamed_usage_is_summed_with_forced_calls_apart: OpenAi, true;
    openai_whole_usage_is_summed_with_forced_calls_apart: OpenAi, false;
    anthropic_streamed_usage_is_summed_with_forced_calls_apart: Anthropic, true;
    anthropic_whole_usage_is_summed_with_forced_calls_apart: Anthropic, false;
}

#[tokio::test]
async fn streamed_openai_requests_ask_for_usage_and_whole_ones_do_not() {
    for stream in [true, false] {
        let server = MockServer::start(vec![Reply::text("Done.")]).await;
        let tools = Tools::new();
        let mut session = session(&server, ProviderKind::OpenAi, &tools, stream);
        run_quietly(&mut session, "Hi").await.unwrap();
        let body = &server.bodies()[0];
        if stream {
            assert_eq!(body["stream_options"], json!({"include_usage": true}));
        } else {
            assert!(body.get("stream_options").is_none(), "{body}");
        }
    }
}

#[tokio::test]
async fn a_server_that_rejects_stream_options_is_asked_no_more_and_usage_is_unknown() {
    let server = MockServer::start(vec![
        Reply::status(
            400,
            r#"{"error":{"message":"Unrecognized request argument supplied: stream_options"}}"#,
        ),
        Reply::call("c1", "peek", json!({})),
        Reply::text("Done."),
    ])
    .await;
    let tools = Tools::new();
    let mut session = session(&server, ProviderKind::OpenAi, &tools, true);
    let events = Events::default();
    let summary = run_recording(&mut session, "Look", &events).await.unwrap();
    let bodies = server.bodies();
    assert_eq!(bodies.len(), 3);
    assert!(bodies[0].get("stream_options").is_some());
    assert!(
        bodies[1..]
            .iter()
            .all(|b| b.get("stream_options").is_none())
    );
    assert!(bodies.iter().all(|b| b["stream"] == json!(true)));
    assert_eq!(summary.usage.total.model_calls, 2);
    assert_eq!(summary.usage.total.calls_without_usage, 2);
    assert!(events.all().iter().any(
        |e| matches!(e, AgentEvent::Notice { message } if message.contains("stream_options"))
    ));
}

#[tokio::test]
async fn a_failed_run_still_ends_with_its_usage() {
    let server = MockServer::start(vec![Reply::Turn(
        Turn::call("c1", "peek", json!({})).with_usage(50, 0, 0, 5),
    )])
    .await;
    let tools = Tools::new();
    let mut config = config(&server, ProviderKind::Anthropic);
    config.stream = true;
    let mut builder = AgentSession::builder(config);
    builder.tools(tools.all()).max_turns(Some(1));
    let mut session = builder.build().unwrap();
    let events = Events::default();
    let outcome = run_recording(&mut session, "Look", &events).await;
    assert!(outcome.is_err());
    let Some(AgentEvent::Usage(usage)) = events.all().last().cloned() else {
        panic!("no usage event last: {:?}", events.all());
    };
    assert_eq!(usage.total.model_calls, 1);
    assert_eq!(usage.total.input_tokens, 50);
    assert_eq!(usage.total.output_tokens, 5);
    assert_eq!(usage.forced, TokenUsage::default());
}
