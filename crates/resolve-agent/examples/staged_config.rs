//! A custom in-process tool whose change lands only through `resolve`.
//!
//! `set_config` stages a configuration change with `ToolContext::push_pending_action`; the
//! configuration changes only when the model calls `resolve` with `apply`. The model here is a
//! tiny scripted one (the mock server of `resolve-test-support` on 127.0.0.1), so the example
//! runs offline:
//!
//! ```sh
//! cargo run -p resolve-agent --example staged_config
//! ```
//!
//! Point `ProviderConfig` at a real server (`http://127.0.0.1:8080/v1`, say) to try it with a
//! real model.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use resolve_agent::{
    AgentEvent, AgentSession, CustomPendingAction, ProviderConfig, ProviderKind, Tool, ToolContext,
    ToolError, ToolFuture,
};
use resolve_core::{ToolKind, ToolResult, ToolSpec};
use resolve_test_support::{MockServer, Reply, Turn};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

type Config = Arc<Mutex<BTreeMap<String, String>>>;

/// Stages `key = value`; applying it writes the value into the shared configuration.
struct SetConfig {
    config: Config,
}

impl Tool for SetConfig {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "set_config".into(),
            description:
                "Stage a change of one configuration key. Nothing changes until you call `resolve`."
                    .into(),
            input_schema: json!({
                "type": "object",
                "properties": {"key": {"type": "string"}, "value": {"type": "string"}},
                "required": ["key", "value"],
                "additionalProperties": false
            }),
            hidden: false,
            strict: true,
            // It stages previews, so the session offers `resolve`.
            kind: ToolKind::Producer,
        }
    }

    fn execute<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let key = args["key"].as_str().unwrap_or_default().to_owned();
            let value = args["value"].as_str().unwrap_or_default().to_owned();
            let old = self
                .config
                .lock()
                .map_err(|_| ToolError::Fatal("the configuration lock is poisoned".into()))?
                .get(&key)
                .cloned()
                .unwrap_or_else(|| "(unset)".into());
            let preview = format!("Preview: {key}: {old} -> {value}");
            let config = self.config.clone();
            let id = ctx.push_pending_action(
                CustomPendingAction::new(
                    format!("Config: {key} = {value}"),
                    move |reason, _extra| {
                        let config = config.clone();
                        let (key, value) = (key.clone(), value.clone());
                        async move {
                            config
                                .lock()
                                .map_err(|_| {
                                    resolve_core::ActionError::Failed(
                                        "the configuration lock is poisoned".into(),
                                    )
                                })?
                                .insert(key.clone(), value.clone());
                            Ok(ToolResult::text(format!("Set {key} = {value}. ({reason})")))
                        }
                    },
                )
                .source_tool("set_config")
                .with_reject(|reason, _extra| async move {
                    Ok(Some(ToolResult::text(format!(
                        "Left the configuration as it was: {reason}"
                    ))))
                }),
            )?;
            Ok(ToolResult::text(format!("{preview}\nStaged as {id}.")))
        })
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    resolve_agent::init();
    // The scripted model: stage, apply with a reason, then answer.
    let model = MockServer::start(vec![
        Reply::Turn(Turn::call(
            "c1",
            "set_config",
            json!({"key": "pool_size", "value": "16"}),
        )),
        Reply::Turn(Turn::call(
            "c2",
            "resolve",
            json!({"action": "apply", "reason": "The load test needs 16 connections."}),
        )),
        Reply::Turn(Turn::text("The pool size is now 16.")),
    ])
    .await;

    let config: Config = Arc::new(Mutex::new(BTreeMap::from([(
        "pool_size".into(),
        "8".into(),
    )])));
    let tool: Arc<dyn Tool> = Arc::new(SetConfig {
        config: config.clone(),
    });
    let provider = ProviderConfig::new(ProviderKind::OpenAi, model.openai_base(), "scripted");
    let mut session =
        AgentSession::new(provider, vec![tool], "You tune configurations carefully.")?;

    let mut print = |event: AgentEvent| match event {
        AgentEvent::ToolCall {
            name, arguments, ..
        } => println!("→ {name} {arguments}"),
        AgentEvent::ToolResult { text, .. } => println!("  {}", text.replace('\n', "\n  ")),
        AgentEvent::Reminder { .. } => println!("  (reminder: call `resolve`)"),
        AgentEvent::AssistantText { text } => println!("{text}"),
        _ => {}
    };
    session
        .run(
            "Raise the pool size to 16.",
            &mut print,
            &CancellationToken::new(),
        )
        .await?;
    println!(
        "configuration now: {:?}",
        config.lock().map_err(|e| e.to_string())?
    );
    Ok(())
}
