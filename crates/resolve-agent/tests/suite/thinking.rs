//! Reasoning settings on the wire: Anthropic extended thinking (its blocks kept verbatim in
//! the transcript and sent back) and OpenAI-compatible `reasoning_effort`; both off by default.

use pretty_assertions::assert_eq;
use resolve_agent::{
    AgentError, AgentEvent, AgentSession, Message, ProviderConfig, ProviderKind, ReasoningEffort,
};
use serde_json::{Value, json};

use super::support::{
    Events, Tools, change_a_txt, config, stage_detour_then_apply, stage_then_apply,
    tools_and_session,
};
use crate::both_providers;
use resolve_test_support::{MockServer, Reply, Turn};

fn thinking_block() -> Value {
    json!({"type": "thinking",
        "thinking": "The user wants a.txt changed; stage it first, then resolve.",
        "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"})
}

fn redacted_block() -> Value {
    json!({"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"})
}

fn thinking_session(server: &MockServer, tools: &Tools, stream: bool) -> AgentSession {
    let mut config = config(server, ProviderKind::Anthropic);
    config.stream = stream;
    config.thinking_budget(Some(2048));
    AgentSession::new(config, tools.all(), "You are a test agent.").unwrap()
}

async fn no_reasoning_keys_are_sent_by_default(kind: ProviderKind) {
    let server = MockServer::start(stage_then_apply("c")).await;
    let (_, mut session) = tools_and_session(&server, kind);
    change_a_txt(&mut session, &Events::default())
        .await
        .unwrap();
    for body in server.bodies() {
        assert!(body.get("thinking").is_none(), "{body}");
        assert!(body.get("reasoning_effort").is_none(), "{body}");
    }
    if kind == ProviderKind::Anthropic {
        assert_eq!(server.bodies()[0]["max_tokens"], json!(8192));
    }
}
both_providers!(no_reasoning_keys_are_sent_by_default);

/// Thinking and redacted-thinking blocks lead the assistant turn that carried them in every
/// later request, exactly as the server sent them (streamed: reassembled, signature included).
async fn thinking_blocks_are_kept_verbatim_and_sent_back(stream: bool) {
    let server = MockServer::start(vec![
        Reply::Turn(
            Turn::call("t1", "stage", json!({"path": "a.txt"}))
                .with_thinking_block(thinking_block())
                .with_thinking_block(redacted_block()),
        ),
        Reply::Turn(
            Turn::call(
                "t2",
                "resolve",
                json!({"action": "apply", "reason": "The preview is right."}),
            )
            .with_thinking_block(
                json!({"type": "thinking", "thinking": "Apply it.", "signature": "c2ln"}),
            ),
        ),
        Reply::text("Done."),
    ])
    .await;
    let tools = Tools::new();
    let mut session = thinking_session(&server, &tools, stream);
    change_a_txt(&mut session, &Events::default())
        .await
        .unwrap();
    assert_eq!(tools.applied(), 1);

    let bodies = server.bodies();
    assert_eq!(bodies.len(), 3);
    for body in &bodies {
        assert_eq!(
            body["thinking"],
            json!({"type": "enabled", "budget_tokens": 2048})
        );
        assert_eq!(
            body["max_tokens"],
            json!(8192 + 2048),
            "room beyond the budget"
        );
        assert_eq!(body["stream"], json!(stream));
    }
    let first_turn = &bodies[1]["messages"][1];
    assert_eq!(first_turn["role"], "assistant");
    assert_eq!(
        first_turn["content"],
        json!([thinking_block(), redacted_block(),
            {"type": "tool_use", "id": "t1", "name": "stage", "input": {"path": "a.txt"}}])
    );
    assert_eq!(
        bodies[2]["messages"][1], bodies[1]["messages"][1],
        "the same blocks in every later request"
    );
    assert_eq!(
        bodies[2]["messages"][3]["content"][0],
        json!({"type": "thinking", "thinking": "Apply it.", "signature": "c2ln"})
    );

    let kept: Vec<Vec<Value>> = session
        .transcript()
        .iter()
        .filter_map(|message| match message {
            Message::Assistant { thinking, .. } => Some(thinking.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        kept,
        vec![
            vec![thinking_block(), redacted_block()],
            vec![json!({"type": "thinking", "thinking": "Apply it.", "signature": "c2ln"})],
            vec![],
        ]
    );
}

#[tokio::test]
async fn streamed_thinking_blocks_are_kept_verbatim_and_sent_back() {
    thinking_blocks_are_kept_verbatim_and_sent_back(true).await;
}

#[tokio::test]
async fn whole_thinking_blocks_are_kept_verbatim_and_sent_back() {
    thinking_blocks_are_kept_verbatim_and_sent_back(false).await;
}

/// The API accepts only `auto`/`none` tool choices while thinking: a declined preview gets
/// the reminder alone, and the run goes on.
#[tokio::test]
async fn with_thinking_a_declined_preview_is_not_forced_on_the_wire() {
    let server = MockServer::start(stage_detour_then_apply("t")).await;
    let tools = Tools::new();
    let mut session = thinking_session(&server, &tools, true);
    let events = Events::default();
    change_a_txt(&mut session, &events).await.unwrap();
    assert_eq!(tools.applied(), 1);
    assert_eq!(tools.peeks(), 0, "the declining call was skipped");
    assert!(
        server
            .bodies()
            .iter()
            .all(|b| b.get("tool_choice").is_none()),
        "no forced tool_choice while thinking"
    );
    let forced: Vec<Option<String>> = events.picked(|e| match e {
        AgentEvent::ModelCall { forced_tool, .. } => Some(forced_tool),
        _ => None,
    });
    assert_eq!(forced, vec![None, None, Some("resolve".to_owned()), None]);
}

#[tokio::test]
async fn reasoning_effort_goes_to_openai_compatible_servers_only() {
    for kind in [ProviderKind::OpenAi, ProviderKind::Anthropic] {
        let server = MockServer::start(vec![Reply::text("Done.")]).await;
        let mut config = config(&server, kind);
        config.reasoning_effort(Some(ReasoningEffort::High));
        let mut session = AgentSession::new(config, Vec::new(), "").unwrap();
        change_a_txt(&mut session, &Events::default())
            .await
            .unwrap();
        let body = &server.bodies()[0];
        match kind {
            ProviderKind::OpenAi => assert_eq!(body["reasoning_effort"], json!("high")),
            ProviderKind::Anthropic => assert!(body.get("reasoning_effort").is_none()),
        }
    }
}

#[tokio::test]
async fn a_thinking_budget_goes_to_anthropic_only() {
    let server = MockServer::start(vec![Reply::text("Done.")]).await;
    let mut config = config(&server, ProviderKind::OpenAi);
    config.thinking_budget(Some(2048));
    let mut session = AgentSession::new(config, Vec::new(), "").unwrap();
    change_a_txt(&mut session, &Events::default())
        .await
        .unwrap();
    assert!(server.bodies()[0].get("thinking").is_none());
}

#[test]
fn a_thinking_budget_not_below_max_tokens_is_refused() {
    resolve_agent::init();
    let mut config = ProviderConfig::new(ProviderKind::Anthropic, "http://127.0.0.1:9/", "m");
    config.thinking_budget(Some(4096));
    config.max_tokens = Some(4096);
    let error = AgentSession::new(config, Vec::new(), "").unwrap_err();
    assert!(
        matches!(
            error,
            AgentError::ThinkingBudget {
                budget: 4096,
                max_tokens: 4096
            }
        ),
        "{error}"
    );
}
