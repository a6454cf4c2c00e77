//! Bad tool calls become error results the model can read; limits and fatal errors end runs.

use pretty_assertions::assert_eq;
use resolve_agent::{
    AgentError, AgentSession, ProviderKind, Tool, ToolContext, ToolError, ToolFuture,
};
use resolve_core::ToolSpec;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::support::{Tools, config, peek, read_only_spec, run_quietly, session, tool_results};
use crate::both_providers;
use resolve_test_support::text::assert_starts_with;
use resolve_test_support::{MockServer, Reply, Turn};

async fn malformed_json_arguments_become_an_error_tool_result(kind: ProviderKind) {
    let server = MockServer::start(vec![
        Reply::Turn(Turn::default().and_call("c1", "echo", r#"{"text": "unterminated"#)),
        Reply::text("Sorry."),
    ])
    .await;
    let mut session = session(&server, kind, &Tools::new());
    let summary = run_quietly(&mut session, "Echo").await.unwrap();
    assert_eq!(summary.final_text, "Sorry.");
    let results = tool_results(&server.bodies()[1]);
    assert_eq!(results.len(), 1);
    assert!(
        results[0]
            .1
            .starts_with("Invalid arguments for `echo`: not valid JSON"),
        "{}",
        results[0].1
    );
    if kind == ProviderKind::Anthropic {
        assert!(results[0].2);
        // The echoed tool_use carries an object input even though the JSON was broken.
        assert_eq!(
            server.bodies()[1]["messages"][1]["content"][0]["input"],
            json!({})
        );
    }
}
both_providers!(malformed_json_arguments_become_an_error_tool_result);

#[tokio::test]
async fn schema_violations_and_unknown_tools_become_error_tool_results() {
    let server = MockServer::start(vec![
        Reply::Turn(
            Turn::call("c1", "echo", json!({"txt": "x"}))
                .and_call("c2", "nope", "{}")
                .and_call("c3", "resolve", r#"{"action":"maybe","reason":"r"}"#)
                .and_call("c4", "resolve", r#"{"action":"apply","reason":"r"}"#),
        ),
        Reply::text("Sorry."),
    ])
    .await;
    let mut session = session(&server, ProviderKind::OpenAi, &Tools::new());
    run_quietly(&mut session, "Echo").await.unwrap();
    let texts: Vec<String> = tool_results(&server.bodies()[1])
        .into_iter()
        .map(|(_, text, _)| text)
        .collect();
    assert_starts_with(&texts[0], "Invalid arguments for `echo`:");
    assert!(texts[0].contains("text"), "names the field: {}", texts[0]);
    assert_eq!(
        texts[1],
        "Unknown tool `nope`. Available tools: stage, peek, echo, resolve."
    );
    assert_starts_with(&texts[2], "Invalid arguments for `resolve`:");
    assert!(texts[2].contains("action"), "{}", texts[2]);
    assert_eq!(
        texts[3],
        "No pending action to resolve. Nothing to apply or discard."
    );
}

async fn max_turns_stops_the_run_with_an_error(kind: ProviderKind) {
    let server = MockServer::start(vec![peek("c1"), peek("c2"), Reply::text("never")]).await;
    let tools = Tools::new();
    let mut builder = AgentSession::builder(config(&server, kind));
    builder.tools(tools.all()).max_turns(Some(2));
    let mut session = builder.build().unwrap();
    let error = run_quietly(&mut session, "Look").await.unwrap_err();
    assert!(matches!(error, AgentError::MaxTurns(2)));
    assert_eq!(
        error.to_string(),
        "Stopped after 2 model calls (--max-turns)."
    );
    assert_eq!(server.bodies().len(), 2);
    assert_eq!(tools.peeks(), 2);
}
both_providers!(max_turns_stops_the_run_with_an_error);

/// Fails every call: the first way the model can read, the second fatally.
struct Flaky {
    fatal: bool,
}

impl Tool for Flaky {
    fn spec(&self) -> ToolSpec {
        read_only_spec(
            if self.fatal { "broken" } else { "flaky" },
            "Fails.",
            json!({"type": "object"}),
        )
    }

    fn execute<'a>(&'a self, _args: Value, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            if self.fatal {
                Err(ToolError::Fatal("the disk is gone".into()))
            } else {
                Err(ToolError::RespondToModel("try again later".into()))
            }
        })
    }
}

#[tokio::test]
async fn tool_errors_reach_the_model_and_fatal_errors_end_the_run_with_paired_results() {
    let server = MockServer::start(vec![
        Reply::call("c1", "flaky", json!({})),
        Reply::Turn(Turn::call("c2", "broken", json!({})).and_call("c3", "flaky", "{}")),
        Reply::text("never"),
    ])
    .await;
    let tools: Vec<std::sync::Arc<dyn Tool>> = vec![
        std::sync::Arc::new(Flaky { fatal: false }),
        std::sync::Arc::new(Flaky { fatal: true }),
    ];
    let mut session = AgentSession::new(config(&server, ProviderKind::OpenAi), tools, "").unwrap();
    let error = run_quietly(&mut session, "Go").await.unwrap_err();
    assert_eq!(error.to_string(), "Tool `broken` failed: the disk is gone");
    let results = tool_results(&server.bodies()[1]);
    assert_eq!(results[0].1, "try again later");
    let paired: Vec<&str> = session
        .transcript()
        .iter()
        .filter_map(|m| match m {
            resolve_agent::Message::Tool { call_id, .. } => Some(call_id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(paired, vec!["c1", "c2", "c3"]);
}

/// A tool that tries to take a reserved name.
struct Impostor(&'static str);

impl Tool for Impostor {
    fn spec(&self) -> ToolSpec {
        read_only_spec(self.0, "Not the real one.", json!({"type": "object"}))
    }

    fn execute<'a>(&'a self, _args: Value, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move { Err(ToolError::Fatal("unreachable".into())) })
    }
}

#[tokio::test]
async fn duplicate_or_reserved_tool_names_are_refused() {
    let server = MockServer::start(vec![]).await;
    let tools = Tools::new();
    let peek: std::sync::Arc<dyn Tool> = tools.peek;
    let twice = vec![peek.clone(), peek];
    let error = AgentSession::new(config(&server, ProviderKind::OpenAi), twice, "").unwrap_err();
    assert!(matches!(error, AgentError::DuplicateTool { name } if name == "peek"));
    let reserved: Vec<std::sync::Arc<dyn Tool>> = vec![std::sync::Arc::new(Impostor("resolve"))];
    let error = AgentSession::new(config(&server, ProviderKind::OpenAi), reserved, "").unwrap_err();
    assert!(matches!(error, AgentError::DuplicateTool { name } if name == "resolve"));
}

// Issue #36, item 1: `check` is the session's, like `resolve`, so a library tool of that name
// can never run (with its side effects) as the companion of a pending preview.
#[tokio::test]
async fn a_registered_tool_named_check_is_refused_as_reserved() {
    let server = MockServer::start(vec![]).await;
    let reserved: Vec<std::sync::Arc<dyn Tool>> = vec![std::sync::Arc::new(Impostor("check"))];
    let error = AgentSession::new(config(&server, ProviderKind::OpenAi), reserved, "").unwrap_err();
    assert!(matches!(&error, AgentError::DuplicateTool { name } if name == "check"));
    assert!(error.to_string().contains("`check`"), "{error}");
}

/// Waits until the run is cancelled.
struct Wait;

impl Tool for Wait {
    fn spec(&self) -> ToolSpec {
        read_only_spec("wait", "Waits.", json!({"type": "object"}))
    }

    fn execute<'a>(&'a self, _args: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            ctx.cancellation().cancelled().await;
            Ok(resolve_core::ToolResult::text("woke up"))
        })
    }
}

#[tokio::test]
async fn cancelling_during_a_tool_call_pairs_the_calls_and_stops() {
    let server = MockServer::start(vec![
        Reply::Turn(Turn::call("c1", "wait", json!({})).and_call("c2", "wait", "{}")),
        Reply::text("never"),
    ])
    .await;
    let tools: Vec<std::sync::Arc<dyn Tool>> = vec![std::sync::Arc::new(Wait)];
    let mut session = AgentSession::new(config(&server, ProviderKind::OpenAi), tools, "").unwrap();
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let mut sink = move |event: resolve_agent::AgentEvent| {
        if matches!(event, resolve_agent::AgentEvent::ToolCall { .. }) {
            trigger.cancel();
        }
    };
    let error = session.run("Wait", &mut sink, &cancel).await.unwrap_err();
    assert!(matches!(error, AgentError::Cancelled));
    let results: Vec<(&str, &str)> = session
        .transcript()
        .iter()
        .filter_map(|m| match m {
            resolve_agent::Message::Tool { call_id, text, .. } => {
                Some((call_id.as_str(), text.as_str()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        results,
        vec![("c1", "Aborted: Cancelled"), ("c2", "Aborted: Cancelled")]
    );
    assert_eq!(server.bodies().len(), 1);
}
