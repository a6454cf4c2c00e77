//! Transport behavior through the real HTTP client: the forced-choice fallback, streaming
//! (split deltas, parallel calls, a stream without a finish reason), retries, error texts and
//! cancellation mid-stream.

use std::sync::{Arc, Mutex};

use pretty_assertions::assert_eq;
use resolve_agent::{AgentError, AgentEvent, AgentSession, ForcedChoiceSupport, ProviderKind};
use resolve_core::{PushOptions, RejectReason, ToolChoice};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::support::{
    Events, Tools, any_tool, config, forced_resolve, peek, resolve, run_quietly, run_recording,
    session, stage_call, stage_detour_then_apply, tool_choice, tool_results, tools_and_session,
};
use crate::both_providers;
use resolve_test_support::{MockServer, Reply, Turn};

/// The `stream` flag of every request the server got, in order.
fn stream_flags(server: &MockServer) -> Vec<Value> {
    server
        .bodies()
        .iter()
        .map(|b| b["stream"].clone())
        .collect()
}

/// `error` is the HTTP status `status`.
fn assert_status(error: &AgentError, status: u16) {
    assert!(
        matches!(error, AgentError::Status { status: got, .. } if *got == status),
        "{error}"
    );
}

fn rejects_tool_choice(status: u16) -> Reply {
    Reply::status(
        status,
        r#"{"error":{"type":"invalid_request_error","message":"This model does not support the requested tool_choice."}}"#,
    )
}

async fn rejected_forced_choice_falls_back_to_any_then_to_none_and_is_remembered(
    kind: ProviderKind,
) {
    let server = MockServer::start(vec![
        stage_call("c1", "a.txt"),
        peek("c2"),
        rejects_tool_choice(400),
        rejects_tool_choice(500),
        resolve("c3", "apply"),
        stage_call("c4", "b.txt"),
        peek("c5"),
        resolve("c6", "apply"),
        Reply::text("Done."),
    ])
    .await;
    let (tools, mut session) = tools_and_session(&server, kind);
    let events = Events::default();
    run_recording(&mut session, "Change files", &events)
        .await
        .unwrap();

    assert_eq!(tools.applied(), 2);
    assert_eq!(server.unused_replies(), 0);
    let choices: Vec<_> = server.bodies().iter().map(tool_choice).collect();
    assert_eq!(
        choices,
        vec![
            None,
            None,
            Some(forced_resolve(kind)),
            Some(any_tool(kind)),
            None, // reminder only
            None,
            None,
            None, // the decline is still "forced", but the remembered level sends nothing
            None,
        ]
    );
    let notices = events
        .all()
        .into_iter()
        .filter(|e| matches!(e, AgentEvent::Notice { message } if message.contains("tool_choice")))
        .count();
    assert_eq!(notices, 2);
}
both_providers!(rejected_forced_choice_falls_back_to_any_then_to_none_and_is_remembered);

async fn configured_capability_sends_any_instead_of_a_named_choice(kind: ProviderKind) {
    let server = MockServer::start(stage_detour_then_apply("c")).await;
    let tools = Tools::new();
    let mut config = config(&server, kind);
    config.forced_tool_choice = ForcedChoiceSupport::AnyTool;
    let mut session = AgentSession::new(config, tools.all(), "").unwrap();
    run_quietly(&mut session, "Change").await.unwrap();
    assert_eq!(tool_choice(&server.bodies()[2]), Some(any_tool(kind)));
}
both_providers!(configured_capability_sends_any_instead_of_a_named_choice);

#[tokio::test]
async fn a_failure_that_does_not_name_tool_choice_is_not_a_fallback() {
    let server = MockServer::start(vec![
        stage_call("c1", "a.txt"),
        peek("c2"),
        Reply::status(400, r#"{"error":{"message":"context length exceeded"}}"#),
    ])
    .await;
    let mut session = session(&server, ProviderKind::OpenAi, &Tools::new());
    let error = run_quietly(&mut session, "Change").await.unwrap_err();
    assert_status(&error, 400);
    assert_eq!(server.bodies().len(), 3, "a 400 is not retried");
}

async fn streamed_split_argument_deltas_and_parallel_calls_are_reassembled(kind: ProviderKind) {
    let server = MockServer::start(vec![
        Reply::Turn(
            Turn::text("Let me echo twice.")
                .and_call("c1", "echo", r#"{"text": "the first, rather long text"}"#)
                .and_call("c2", "echo", r#"{"text": "two"}"#),
        ),
        Reply::text("Echoed."),
    ])
    .await;
    let (_, mut session) = tools_and_session(&server, kind);
    let events = Events::default();
    let summary = run_recording(&mut session, "Echo", &events).await.unwrap();
    assert_eq!(summary.executed_calls, 2);
    let results = tool_results(&server.bodies()[1]);
    assert_eq!(
        results
            .iter()
            .map(|(id, text, _)| (id.as_str(), text.as_str()))
            .collect::<Vec<_>>(),
        vec![
            ("c1", "echo: the first, rather long text"),
            ("c2", "echo: two")
        ]
    );
    let deltas = events
        .picked(|e| match e {
            AgentEvent::TextDelta { text } => Some(text),
            _ => None,
        })
        .concat();
    assert_eq!(deltas, "Let me echo twice.Echoed.");
    let delta_count = events
        .all()
        .iter()
        .filter(|e| matches!(e, AgentEvent::TextDelta { .. }))
        .count();
    assert!(delta_count > 1, "text arrived in pieces");
}
both_providers!(streamed_split_argument_deltas_and_parallel_calls_are_reassembled);

async fn stream_without_finish_reason_is_retried_once_without_streaming(kind: ProviderKind) {
    let call = Turn::call("c1", "echo", json!({"text": "x"}));
    let server = MockServer::start(vec![
        Reply::Turn(call.clone().without_finish()),
        Reply::Turn(call),
        Reply::text("Done."),
    ])
    .await;
    let mut session = session(&server, kind, &Tools::new());
    let events = Events::default();
    let summary = run_recording(&mut session, "Echo", &events).await.unwrap();
    assert_eq!(summary.executed_calls, 1);
    assert_eq!(
        stream_flags(&server),
        vec![json!(true), json!(false), json!(false)],
        "streaming stays off"
    );
    assert!(events.all().iter().any(
        |e| matches!(e, AgentEvent::Notice { message } if message.contains("without a finish reason"))
    ));
}
both_providers!(stream_without_finish_reason_is_retried_once_without_streaming);

#[tokio::test]
async fn an_empty_stream_is_retried_without_streaming() {
    // llama.cpp's server ends some streams with no chunk and no [DONE].
    let server = MockServer::start(vec![Reply::RawSse(vec![]), Reply::text("Hi.")]).await;
    let mut session = session(&server, ProviderKind::OpenAi, &Tools::new());
    let summary = run_quietly(&mut session, "Hi").await.unwrap();
    assert_eq!(summary.final_text, "Hi.");
    assert_eq!(server.bodies()[1]["stream"], json!(false));
}

async fn rate_limited_request_is_retried(kind: ProviderKind) {
    let server = MockServer::start(vec![
        Reply::Status {
            status: 429,
            body: "slow down".into(),
            retry_after: Some(0),
        },
        Reply::status(503, "overloaded"),
        Reply::text("Hi."),
    ])
    .await;
    let mut session = session(&server, kind, &Tools::new());
    let events = Events::default();
    let summary = run_recording(&mut session, "Hi", &events).await.unwrap();
    assert_eq!(summary.final_text, "Hi.");
    assert_eq!(summary.model_calls, 1);
    let bodies = server.bodies();
    assert_eq!(bodies.len(), 3);
    assert_eq!(bodies[0], bodies[2], "the same request is retried");
}
both_providers!(rate_limited_request_is_retried);

#[tokio::test]
async fn retries_are_bounded() {
    let busy = || Reply::status(429, "slow down");
    let server =
        MockServer::start(vec![busy(), busy(), busy(), busy(), Reply::text("never")]).await;
    let mut session = session(&server, ProviderKind::OpenAi, &Tools::new());
    let error = run_quietly(&mut session, "Hi").await.unwrap_err();
    assert_status(&error, 429);
    assert_eq!(server.bodies().len(), 4, "one try and three retries");
}

async fn unauthorized_error_names_the_url_and_the_model(kind: ProviderKind) {
    let server = MockServer::start(vec![Reply::status(
        401,
        r#"{"error":{"message":"invalid api key"}}"#,
    )])
    .await;
    let mut session = session(&server, kind, &Tools::new());
    let error = run_quietly(&mut session, "Hi").await.unwrap_err();
    let text = error.to_string();
    let url = session.provider_config().endpoint();
    assert!(text.contains(&format!("`{url}`")), "{text}");
    assert!(text.contains("`mock-model`"), "{text}");
    assert!(text.contains("401"), "{text}");
    assert!(text.contains("invalid api key"), "{text}");
    assert!(!text.contains("test-key"), "the key is never shown");
    assert_eq!(server.bodies().len(), 1, "a 401 is not retried");
}
both_providers!(unauthorized_error_names_the_url_and_the_model);

#[tokio::test]
async fn not_found_error_names_the_url_and_the_model_and_hints_at_the_base_url() {
    let server = MockServer::start(vec![Reply::status(404, "model not found")]).await;
    let mut session = session(&server, ProviderKind::OpenAi, &Tools::new());
    let error = run_quietly(&mut session, "Hi").await.unwrap_err();
    let text = error.to_string();
    assert!(text.contains(&server.openai_base()), "{text}");
    assert!(text.contains("`mock-model`"), "{text}");
    assert!(text.contains("--base-url"), "{text}");
}

#[tokio::test]
async fn unreachable_server_fails_after_bounded_retries_naming_the_url() {
    resolve_agent::init();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let mut config = resolve_agent::ProviderConfig::new(
        ProviderKind::OpenAi,
        format!("http://127.0.0.1:{port}/v1"),
        "m",
    );
    config.retry_base_delay = std::time::Duration::from_millis(1);
    config.max_retries = 2;
    let mut session = AgentSession::new(config, Vec::new(), "").unwrap();
    let error = run_quietly(&mut session, "Hi").await.unwrap_err();
    assert!(
        matches!(error, AgentError::Connection { attempts: 3, .. }),
        "{error}"
    );
    assert!(error.to_string().contains(&format!("127.0.0.1:{port}")));
}

async fn cancelling_mid_stream_stops_cleanly_and_rejects_the_in_flight_directive(
    kind: ProviderKind,
) {
    let server = MockServer::start(vec![Reply::Hang(Turn::text("hello there"))]).await;
    let (_, mut session) = tools_and_session(&server, kind);
    let rejected = Arc::new(Mutex::new(Vec::new()));
    let seen = rejected.clone();
    session.resolve_session().queue().push_once(
        ToolChoice::Tool("peek".into()),
        PushOptions::new().on_rejected(move |info| {
            seen.lock().unwrap().push(info.reason);
            resolve_core::RejectOutcome::Drop
        }),
    );
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let mut sink = move |event: AgentEvent| {
        if matches!(event, AgentEvent::TextDelta { .. }) {
            trigger.cancel();
        }
    };
    let error = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        session.run("Hi", &mut sink, &cancel),
    )
    .await
    .expect("the run stops promptly")
    .unwrap_err();
    assert!(matches!(error, AgentError::Cancelled));
    assert_eq!(*rejected.lock().unwrap(), vec![RejectReason::Aborted]);
    let expected_choice = match kind {
        ProviderKind::OpenAi => json!({"type":"function","function":{"name":"peek"}}),
        ProviderKind::Anthropic => json!({"type":"tool","name":"peek"}),
    };
    assert_eq!(tool_choice(&server.bodies()[0]), Some(expected_choice));
    assert_eq!(
        session.transcript().len(),
        1,
        "nothing half-received is kept"
    );
    assert!(!session.resolve_session().queue().has_in_flight());
}
both_providers!(cancelling_mid_stream_stops_cleanly_and_rejects_the_in_flight_directive);

#[tokio::test]
async fn a_hanging_server_times_out_with_an_error_naming_the_url() {
    let server = MockServer::start(vec![
        Reply::Hang(Turn::text("hello there")),
        Reply::Hang(Turn::text("hello there")),
    ])
    .await;
    let mut config = config(&server, ProviderKind::OpenAi);
    config.request_timeout = std::time::Duration::from_millis(300);
    let mut session = AgentSession::new(config, Vec::new(), "").unwrap();
    let error = run_quietly(&mut session, "Hi").await.unwrap_err();
    assert!(matches!(error, AgentError::Timeout { .. }), "{error}");
    assert!(error.to_string().contains(&server.openai_base()), "{error}");
    assert_eq!(
        stream_flags(&server),
        vec![json!(true), json!(false)],
        "a broken stream is retried once without streaming"
    );
}

#[test]
fn the_run_future_is_send() {
    fn assert_send<T: Send>(_: &T) {}
    resolve_agent::init();
    let config =
        resolve_agent::ProviderConfig::new(ProviderKind::OpenAi, "http://127.0.0.1:9/v1", "m");
    let mut session = AgentSession::new(config, Vec::new(), "").unwrap();
    let mut sink = |_event: AgentEvent| {};
    let cancel = CancellationToken::new();
    let future = session.run("Hi", &mut sink, &cancel);
    assert_send(&future);
}
