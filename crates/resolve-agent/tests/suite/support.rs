//! Test tools, session set-up and request-inspection helpers shared by the behavior tests.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use resolve_agent::{
    AgentError, AgentEvent, AgentSession, ApiKey, ProviderConfig, ProviderKind, RunSummary, Tool,
    ToolContext, ToolFuture,
};
use resolve_core::{PendingAction, RESOLVE_REMINDER, ToolKind, ToolResult, ToolSpec};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use resolve_test_support::{MockServer, Reply};

/// The spec of a visible, non-strict read-only tool.
pub fn read_only_spec(name: &str, description: &str, input_schema: Value) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: description.into(),
        input_schema,
        hidden: false,
        strict: false,
        kind: ToolKind::ReadOnly,
    }
}

/// The spec of a visible read-only tool that takes no arguments.
pub fn no_arguments_spec(name: &str, description: &str) -> ToolSpec {
    read_only_spec(
        name,
        description,
        json!({"type": "object", "properties": {}, "additionalProperties": false}),
    )
}

/// The spec of a visible, strict tool that stages previews.
pub fn producer_spec(name: &str, description: &str, input_schema: Value) -> ToolSpec {
    ToolSpec {
        kind: ToolKind::Producer,
        strict: true,
        ..read_only_spec(name, description, input_schema)
    }
}

/// Stages `Stage: <path>` as a pending action (the preview producer); apply counts.
#[derive(Debug, Default)]
pub struct StageTool {
    pub staged: AtomicUsize,
    pub applied: Arc<AtomicUsize>,
}

impl Tool for StageTool {
    fn spec(&self) -> ToolSpec {
        producer_spec(
            "stage",
            "Stage a change to a file as a preview.",
            json!({"type":"object","properties":{"path":{"type":"string"}},
                "required":["path"],"additionalProperties":false}),
        )
    }

    fn execute<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let path = args["path"].as_str().unwrap_or_default().to_owned();
            let applied = self.applied.clone();
            let label = format!("Stage: {path}");
            ctx.queue_resolve_handler(PendingAction::new(
                label,
                "stage",
                move |_reason, _extra| {
                    let applied = applied.clone();
                    let path = path.clone();
                    async move {
                        applied.fetch_add(1, Ordering::SeqCst);
                        Ok(ToolResult::text(format!("Applied stage to {path}.")))
                    }
                },
            ))?;
            self.staged.fetch_add(1, Ordering::SeqCst);
            Ok(ToolResult::text(
                "Staged as a preview — files are NOT modified yet.",
            ))
        })
    }
}

/// A read-only detour tool; counts its runs.
#[derive(Debug, Default)]
pub struct PeekTool {
    pub runs: AtomicUsize,
}

impl Tool for PeekTool {
    fn spec(&self) -> ToolSpec {
        no_arguments_spec("peek", "Look around.")
    }

    fn execute<'a>(&'a self, _args: Value, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            self.runs.fetch_add(1, Ordering::SeqCst);
            Ok(ToolResult::text("peeked"))
        })
    }
}

/// Echoes its `text`; its schema carries a `$schema` key, which must not reach the wire.
#[derive(Debug, Default)]
pub struct EchoTool;

impl Tool for EchoTool {
    fn spec(&self) -> ToolSpec {
        read_only_spec(
            "echo",
            "Echo text.",
            json!({"$schema":"https://json-schema.org/draft/2020-12/schema",
                "type":"object","properties":{"text":{"type":"string"}},
                "required":["text"],"additionalProperties":false}),
        )
    }

    fn execute<'a>(&'a self, args: Value, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            Ok(ToolResult::text(format!(
                "echo: {}",
                args["text"].as_str().unwrap_or_default()
            )))
        })
    }
}

/// The test tools of one session.
#[derive(Debug, Clone)]
pub struct Tools {
    pub stage: Arc<StageTool>,
    pub peek: Arc<PeekTool>,
    pub echo: Arc<EchoTool>,
}

impl Tools {
    pub fn new() -> Self {
        Self {
            stage: Arc::new(StageTool::default()),
            peek: Arc::new(PeekTool::default()),
            echo: Arc::new(EchoTool),
        }
    }

    pub fn all(&self) -> Vec<Arc<dyn Tool>> {
        vec![self.stage.clone(), self.peek.clone(), self.echo.clone()]
    }

    pub fn applied(&self) -> usize {
        self.stage.applied.load(Ordering::SeqCst)
    }

    pub fn peeks(&self) -> usize {
        self.peek.runs.load(Ordering::SeqCst)
    }
}

/// A provider config for the mock, with short retry delays.
pub fn config(server: &MockServer, kind: ProviderKind) -> ProviderConfig {
    resolve_agent::init();
    let base = match kind {
        ProviderKind::OpenAi => server.openai_base(),
        ProviderKind::Anthropic => server.anthropic_base(),
    };
    let mut config = ProviderConfig::new(kind, base, "mock-model");
    config.api_key = Some(ApiKey::new("test-key"));
    config.retry_base_delay = Duration::from_millis(5);
    config.retry_max_delay = Duration::from_millis(20);
    config.request_timeout = Duration::from_secs(20);
    config
}

pub fn session(server: &MockServer, kind: ProviderKind, tools: &Tools) -> AgentSession {
    AgentSession::new(config(server, kind), tools.all(), "You are a test agent.").unwrap()
}

/// New test tools and a session of `kind` over them, against `server`.
pub fn tools_and_session(server: &MockServer, kind: ProviderKind) -> (Tools, AgentSession) {
    let tools = Tools::new();
    let session = session(server, kind, &tools);
    (tools, session)
}

/// The server of a model that answered "Hi." once a session of `kind` over the test tools ran
/// the task "Hi".
pub async fn greeted(kind: ProviderKind) -> MockServer {
    let server = MockServer::start(vec![Reply::text("Hi.")]).await;
    let mut session = session(&server, kind, &Tools::new());
    run_quietly(&mut session, "Hi").await.unwrap();
    server
}

/// Run `session` on `task`, its events into `events`.
pub async fn run_recording(
    session: &mut AgentSession,
    task: &str,
    events: &Events,
) -> Result<RunSummary, AgentError> {
    session
        .run(task, &mut events.sink(), &CancellationToken::new())
        .await
}

/// Run `session` on `task`, its events dropped.
pub async fn run_quietly(session: &mut AgentSession, task: &str) -> Result<RunSummary, AgentError> {
    run_recording(session, task, &Events::default()).await
}

/// Run `session` on the task "Change a.txt" (what every scripted model here stages), its events
/// into `events`.
pub async fn change_a_txt(
    session: &mut AgentSession,
    events: &Events,
) -> Result<RunSummary, AgentError> {
    run_recording(session, "Change a.txt", events).await
}

/// The model stages `path` with the call `id`.
pub fn stage_call(id: &str, path: &str) -> Reply {
    Reply::call(id, "stage", json!({"path": path}))
}

/// The model decides the pending preview (`action`) with the call `id`: "The preview is right."
pub fn resolve(id: &str, action: &str) -> Reply {
    Reply::resolve(id, action, "The preview is right.")
}

/// The model takes the detour `peek` with the call `id`.
pub fn peek(id: &str) -> Reply {
    Reply::call(id, "peek", json!({}))
}

/// The model stages a.txt, resolves it with `apply`, and says "Done."; its calls are numbered
/// after `prefix` (`c1`, `c2`).
pub fn stage_then_apply(prefix: &str) -> Vec<Reply> {
    vec![
        stage_call(&format!("{prefix}1"), "a.txt"),
        resolve(&format!("{prefix}2"), "apply"),
        Reply::text("Done."),
    ]
}

/// The model stages a.txt, takes the detour `peek` (a decline), resolves with `apply`, and says
/// "Done."; its calls are numbered after `prefix` (`c1` to `c3`).
pub fn stage_detour_then_apply(prefix: &str) -> Vec<Reply> {
    vec![
        stage_call(&format!("{prefix}1"), "a.txt"),
        peek(&format!("{prefix}2")),
        resolve(&format!("{prefix}3"), "apply"),
        Reply::text("Done."),
    ]
}

/// Collects events; usable as a sink.
#[derive(Debug, Clone, Default)]
pub struct Events(pub Arc<Mutex<Vec<AgentEvent>>>);

impl Events {
    pub fn sink(&self) -> impl FnMut(AgentEvent) + Send + use<> {
        let events = self.0.clone();
        move |event| events.lock().unwrap().push(event)
    }

    pub fn all(&self) -> Vec<AgentEvent> {
        self.0.lock().unwrap().clone()
    }

    /// What `pick` takes out of each event, in order.
    pub fn picked<T>(&self, pick: impl FnMut(AgentEvent) -> Option<T>) -> Vec<T> {
        self.all().into_iter().filter_map(pick).collect()
    }

    pub fn reminders(&self) -> usize {
        self.all()
            .iter()
            .filter(|e| matches!(e, AgentEvent::Reminder { .. }))
            .count()
    }
}

/// The request's `tool_choice`, if any.
pub fn tool_choice(body: &Value) -> Option<Value> {
    body.get("tool_choice").cloned()
}

/// The forced choice of `resolve` in the provider's wire shape.
pub fn forced_resolve(kind: ProviderKind) -> Value {
    match kind {
        ProviderKind::OpenAi => json!({"type":"function","function":{"name":"resolve"}}),
        ProviderKind::Anthropic => json!({"type":"tool","name":"resolve"}),
    }
}

/// The "call some tool" choice in the provider's wire shape.
pub fn any_tool(kind: ProviderKind) -> Value {
    match kind {
        ProviderKind::OpenAi => json!("required"),
        ProviderKind::Anthropic => json!({"type":"any"}),
    }
}

/// How many times the reminder text appears in the request's messages.
pub fn reminder_count(body: &Value) -> usize {
    let mut count = 0;
    for message in body["messages"].as_array().unwrap() {
        match &message["content"] {
            Value::String(text) if text == RESOLVE_REMINDER => count += 1,
            Value::Array(blocks) => {
                count += blocks
                    .iter()
                    .filter(|b| b["type"] == "text" && b["text"] == RESOLVE_REMINDER)
                    .count();
            }
            _ => {}
        }
    }
    count
}

/// `(call id, text, is_error)` of every tool result in the request, in order.
pub fn tool_results(body: &Value) -> Vec<(String, String, bool)> {
    let mut results = Vec::new();
    for message in body["messages"].as_array().unwrap() {
        if message["role"] == "tool" {
            results.push((
                message["tool_call_id"].as_str().unwrap().to_owned(),
                message["content"].as_str().unwrap().to_owned(),
                false,
            ));
        }
        if let Value::Array(blocks) = &message["content"] {
            for block in blocks.iter().filter(|b| b["type"] == "tool_result") {
                results.push((
                    block["tool_use_id"].as_str().unwrap().to_owned(),
                    block["content"].as_str().unwrap().to_owned(),
                    block["is_error"] == json!(true),
                ));
            }
        }
    }
    results
}

/// The message list with every `cache_control` marker removed.
pub fn messages_without_cache_markers(body: &Value) -> Vec<Value> {
    fn strip(value: &mut Value) {
        match value {
            Value::Object(object) => {
                object.remove("cache_control");
                object.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut messages = body["messages"].as_array().unwrap().clone();
    messages.iter_mut().for_each(strip);
    messages
}

/// Run `body` for both providers.
#[macro_export]
macro_rules! both_providers {
    ($scenario:ident) => {
        mod $scenario {
            #[tokio::test]
            async fn openai() {
                super::$scenario(resolve_agent::ProviderKind::OpenAi).await;
            }

            #[tokio::test]
            async fn anthropic() {
                super::$scenario(resolve_agent::ProviderKind::Anthropic).await;
            }
        }
    };
}
