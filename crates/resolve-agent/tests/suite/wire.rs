//! What goes on the wire: reminder placement, append-only history, identical tools arrays,
//! tool schemas, headers and Anthropic cache breakpoints.

use pretty_assertions::assert_eq;
use resolve_agent::ProviderKind;
use resolve_core::RESOLVE_REMINDER;
use serde_json::{Value, json};

use super::support::{
    Events, Tools, change_a_txt, greeted, messages_without_cache_markers, peek, resolve,
    run_quietly, session, stage_call, stage_then_apply, tools_and_session,
};
use crate::both_providers;
use resolve_test_support::{MockServer, Reply, Turn};

/// The messages of the second request of a run in which the model stages a.txt and calls
/// `echo` in one turn, then applies; its calls are numbered after `prefix`.
async fn second_request_after_stage_and_echo(kind: ProviderKind, prefix: &str) -> Vec<Value> {
    let server = MockServer::start(vec![
        Reply::Turn(
            Turn::call(&format!("{prefix}1"), "stage", json!({"path": "a.txt"})).and_call(
                &format!("{prefix}2"),
                "echo",
                r#"{"text":"hi"}"#,
            ),
        ),
        resolve(&format!("{prefix}3"), "apply"),
        Reply::text("Done."),
    ])
    .await;
    let mut session = session(&server, kind, &Tools::new());
    change_a_txt(&mut session, &Events::default())
        .await
        .unwrap();
    server.bodies()[1]["messages"].as_array().unwrap().clone()
}

#[tokio::test]
async fn openai_reminder_is_a_user_message_after_the_tool_messages() {
    let messages = second_request_after_stage_and_echo(ProviderKind::OpenAi, "c").await;
    let tail: Vec<Value> = messages[messages.len() - 4..].to_vec();
    assert_eq!(tail[0]["role"], "assistant");
    assert_eq!(
        tail[0]["content"],
        json!(""),
        "content is a string, not null"
    );
    assert_eq!(tail[1]["role"], "tool");
    assert_eq!(tail[1]["tool_call_id"], "c1");
    assert_eq!(tail[2]["role"], "tool");
    assert_eq!(tail[2]["tool_call_id"], "c2");
    assert_eq!(
        tail[3],
        json!({"role": "user", "content": RESOLVE_REMINDER})
    );
}

#[tokio::test]
async fn anthropic_reminder_is_a_text_block_after_the_tool_results_in_the_same_user_turn() {
    let messages = second_request_after_stage_and_echo(ProviderKind::Anthropic, "t").await;
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "user");
    let blocks = last["content"].as_array().unwrap();
    assert_eq!(blocks.len(), 3);
    assert_eq!(blocks[0]["type"], "tool_result");
    assert_eq!(blocks[0]["tool_use_id"], "t1");
    assert_eq!(blocks[1]["type"], "tool_result");
    assert_eq!(blocks[1]["tool_use_id"], "t2");
    assert_eq!(blocks[2]["type"], "text");
    assert_eq!(blocks[2]["text"], RESOLVE_REMINDER);
    for message in &messages {
        assert!(
            message["content"].is_array(),
            "content is always a block array"
        );
    }
}

async fn history_is_append_only_across_a_whole_run(kind: ProviderKind) {
    let server = MockServer::start(vec![
        stage_call("c1", "a.txt"),
        peek("c2"),
        Reply::text("Thinking."),
        resolve("c3", "apply"),
        stage_call("c4", "b.txt"),
        resolve("c5", "discard"),
        Reply::text("Done."),
    ])
    .await;
    let (_, mut session) = tools_and_session(&server, kind);
    run_quietly(&mut session, "Change files").await.unwrap();
    let bodies = server.bodies();
    assert_eq!(bodies.len(), 7);
    for pair in bodies.windows(2) {
        let before = messages_without_cache_markers(&pair[0]);
        let after = messages_without_cache_markers(&pair[1]);
        assert!(after.len() > before.len());
        assert_eq!(
            &after[..before.len()],
            &before[..],
            "earlier messages unchanged"
        );
        assert_eq!(
            pair[0]["tools"], pair[1]["tools"],
            "same tools array every request"
        );
        assert_eq!(pair[0]["system"], pair[1]["system"]);
    }
    let names: Vec<&str> = bodies[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            t["name"]
                .as_str()
                .or(t["function"]["name"].as_str())
                .unwrap()
        })
        .collect();
    assert_eq!(names, vec!["stage", "peek", "echo", "resolve"]);
}
both_providers!(history_is_append_only_across_a_whole_run);

#[tokio::test]
async fn anthropic_cache_breakpoints_sit_on_the_system_prompt_and_the_newest_message() {
    let server = MockServer::start(stage_then_apply("t")).await;
    let (_, mut session) = tools_and_session(&server, ProviderKind::Anthropic);
    change_a_txt(&mut session, &Events::default())
        .await
        .unwrap();
    for body in server.bodies() {
        assert_eq!(
            body["system"],
            json!([{"type":"text","text":"You are a test agent.","cache_control":{"type":"ephemeral"}}])
        );
        let messages = body["messages"].as_array().unwrap();
        let marked: Vec<usize> = messages
            .iter()
            .enumerate()
            .filter(|(_, m)| m.to_string().contains("cache_control"))
            .map(|(i, _)| i)
            .collect();
        assert_eq!(marked, vec![messages.len() - 1]);
        let last_block = messages.last().unwrap()["content"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()
            .clone();
        assert_eq!(last_block["cache_control"], json!({"type":"ephemeral"}));
    }
}

#[tokio::test]
async fn openai_tools_carry_no_dollar_schema_and_strict_only_where_openai_accepts_it() {
    let server = greeted(ProviderKind::OpenAi).await;
    let body = &server.bodies()[0];
    let tools = body["tools"].as_array().unwrap();
    let by_name = |name: &str| {
        tools
            .iter()
            .find(|t| t["function"]["name"] == name)
            .unwrap()["function"]
            .clone()
    };
    assert_eq!(by_name("stage")["strict"], json!(true));
    assert_eq!(
        by_name("resolve").get("strict"),
        None,
        "resolve has an optional open object"
    );
    assert_eq!(by_name("echo")["parameters"].get("$schema"), None);
    assert_eq!(
        by_name("resolve")["parameters"]["required"],
        json!(["action", "reason"])
    );
    assert_eq!(body["model"], "mock-model");
    assert_eq!(body["stream"], json!(true));
}

#[tokio::test]
async fn anthropic_requests_carry_the_api_key_and_version_headers() {
    let request = greeted(ProviderKind::Anthropic).await.requests().remove(0);
    assert_eq!(request.path, "/v1/messages");
    assert_eq!(request.headers["x-api-key"], "test-key");
    assert_eq!(request.headers["anthropic-version"], "2023-06-01");
    assert!(request.body["max_tokens"].is_u64());
    assert_eq!(
        request.body["tools"][0]["input_schema"]["required"],
        json!(["path"])
    );
}

#[tokio::test]
async fn openai_requests_carry_a_bearer_token() {
    let request = greeted(ProviderKind::OpenAi).await.requests().remove(0);
    assert_eq!(request.path, "/v1/chat/completions");
    assert_eq!(request.headers["authorization"], "Bearer test-key");
}

#[tokio::test]
async fn resolve_is_not_offered_without_a_deferrable_tool() {
    let server = MockServer::start(vec![Reply::text("Hi.")]).await;
    let tools = Tools::new();
    let config = super::support::config(&server, ProviderKind::OpenAi);
    let mut session =
        resolve_agent::AgentSession::new(config, vec![tools.peek.clone(), tools.echo.clone()], "")
            .unwrap();
    run_quietly(&mut session, "Hi").await.unwrap();
    let body = &server.bodies()[0];
    let names: Vec<&str> = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["peek", "echo"]);
    assert_eq!(
        body["messages"][0]["role"], "user",
        "no system message when the prompt is empty"
    );
}
