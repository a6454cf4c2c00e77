//! In-process custom tools: `ToolContext::push_pending_action` stages through the same path as
//! the built-in previews, binds to the session running the tool, and stays in memory.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use pretty_assertions::assert_eq;
use resolve_agent::{
    AgentSession, CUSTOM_TOOL_SOURCE, CustomPendingAction, ProviderKind, Tool, ToolContext,
    ToolFuture,
};
use resolve_core::{ActionError, Error, ResolveSession, ToolResult, ToolSpec};
use resolve_edit::{
    ChangeSet, FileChange, NewAction, Origin, Store, StorePendingSource, Workspace,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::support::{
    Events, config, producer_spec, reminder_count, run_quietly, run_recording, tool_results,
};
use resolve_test_support::text::assert_starts_with;
use resolve_test_support::{MockServer, Reply, Turn};

/// Stages a config change (`{key, value}`) as an in-memory pending action; applying sets it.
#[derive(Debug, Default)]
struct SetConfig {
    applied: Arc<AtomicUsize>,
    /// Name the source tool, or leave the default `custom_tool`.
    named: bool,
    /// Make the first apply fail.
    fail_first: bool,
}

impl Tool for SetConfig {
    fn spec(&self) -> ToolSpec {
        producer_spec(
            "set_config",
            "Stage a configuration change.",
            json!({"type": "object", "properties": {"key": {"type": "string"}, "value": {"type": "string"}},
                                 "required": ["key", "value"], "additionalProperties": false}),
        )
    }

    fn execute<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let key = args["key"].as_str().unwrap_or_default().to_owned();
            let value = args["value"].as_str().unwrap_or_default().to_owned();
            let applied = self.applied.clone();
            let fail_first = self.fail_first;
            let mut action = CustomPendingAction::new(
                format!("Config: {key} = {value}"),
                move |reason, extra| {
                    let applied = applied.clone();
                    let key = key.clone();
                    async move {
                        if fail_first && applied.fetch_add(1, Ordering::SeqCst) == 0 {
                            return Err(ActionError::Failed("the config file is locked".into()));
                        }
                        if !fail_first {
                            applied.fetch_add(1, Ordering::SeqCst);
                        }
                        Ok(
                            ToolResult::text(format!("Set {key} ({reason}).")).with_details(
                                json!({"extra": extra.map(Value::Object).unwrap_or(Value::Null)}),
                            ),
                        )
                    }
                },
            );
            if self.named {
                action = action.source_tool("set_config");
            }
            let id = ctx.push_pending_action(action)?;
            Ok(ToolResult::text(format!("Preview staged as {id}.")))
        })
    }
}

fn resolve_args(action: &str, reason: &str) -> Value {
    json!({"action": action, "reason": reason})
}

/// Run `session`'s `resolve` to `action` its head for `reason`.
async fn decide(session: &ResolveSession, action: &str, reason: &str) -> Result<ToolResult, Error> {
    session
        .execute_resolve(&resolve_args(action, reason), &CancellationToken::new())
        .await
}

fn context(session: &Arc<ResolveSession>) -> ToolContext {
    ToolContext::new(session.clone(), CancellationToken::new(), "call-1".into())
}

#[tokio::test]
async fn a_pushed_action_defaults_to_custom_tool_and_applies_with_reason_and_extra() {
    let session = Arc::new(ResolveSession::new());
    let tool = SetConfig::default();
    let result = tool
        .execute(json!({"key": "pool", "value": "8"}), &context(&session))
        .await
        .unwrap();
    let head = session.queue().pending().peek_head().unwrap();
    assert_eq!(head.source_tool, CUSTOM_TOOL_SOURCE);
    assert_starts_with(&head.id, "pending-action:custom_tool:");
    assert_eq!(result.text, format!("Preview staged as {}.", head.id));
    assert_eq!(
        tool.applied.load(Ordering::SeqCst),
        0,
        "nothing runs before resolve"
    );

    let applied = session
        .execute_resolve(
            &json!({"action": "apply", "reason": "Load test passed.", "extra": {"ticket": 7}}),
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(applied.text, "Set pool (Load test passed.).");
    let details = applied.details.unwrap();
    assert_eq!(details["label"], "Config: pool = 8");
    assert_eq!(details["sourceToolName"], "custom_tool");
    assert_eq!(
        details["sourceResultDetails"],
        json!({"extra": {"ticket": 7}})
    );
    assert!(!session.queue().pending().has_pending());
}

#[tokio::test]
async fn pushed_actions_stack_lifo_and_a_failed_apply_stays_at_the_head() {
    let session = Arc::new(ResolveSession::new());
    let flaky = SetConfig {
        named: true,
        fail_first: true,
        ..SetConfig::default()
    };
    let steady = SetConfig::default();
    steady
        .execute(json!({"key": "a", "value": "1"}), &context(&session))
        .await
        .unwrap();
    flaky
        .execute(json!({"key": "b", "value": "2"}), &context(&session))
        .await
        .unwrap();
    let head = session.queue().pending().peek_head().unwrap();
    assert_starts_with(&head.id, "pending-action:set_config:");

    let failed = decide(&session, "apply", "Go.").await.unwrap_err();
    assert_eq!(
        failed,
        Error::ApplyFailed("the config file is locked".into())
    );
    assert_eq!(
        failed.to_string(),
        "Apply failed: the config file is locked"
    );
    assert_eq!(session.queue().pending().peek_head().unwrap(), head);
    assert_eq!(session.queue().pending().len(), 2);

    let retried = decide(&session, "apply", "Again.").await.unwrap();
    assert_eq!(retried.text, "Set b (Again.).");
    let discarded = decide(&session, "discard", "Not now.").await.unwrap();
    assert_eq!(discarded.text, "Discarded: Config: a = 1. Reason: Not now.");
    assert_eq!(steady.applied.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_reject_callback_runs_on_discard() {
    let session = Arc::new(ResolveSession::new());
    let ctx = context(&session);
    ctx.push_pending_action(
        CustomPendingAction::new("Migration: add users.email", |_reason, _extra| async move {
            Ok(ToolResult::text("migrated"))
        })
        .with_reject(|reason, _extra| async move {
            Ok(Some(ToolResult::text(format!(
                "Rolled back the draft: {reason}"
            ))))
        }),
    )
    .unwrap();
    let discarded = decide(&session, "discard", "Wrong table.").await.unwrap();
    assert_eq!(discarded.text, "Rolled back the draft: Wrong table.");
}

#[tokio::test]
async fn in_memory_actions_take_ids_from_the_store_counter_and_are_never_written_to_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(Workspace::open(dir.path()).unwrap());
    let mut change_set = ChangeSet::new();
    change_set.insert(
        "a.txt",
        FileChange::Create {
            content: "a\n".into(),
        },
    );
    let action = NewAction {
        origin: Origin::Agent,
        source_tool: "write".into(),
        label: "Write: a.txt".into(),
        preview_text: "preview".into(),
        details: Value::Null,
    };
    let durable = store.stage(action, change_set).unwrap();
    let session = Arc::new(
        ResolveSession::new()
            .with_id_allocator(Arc::new(store.clone()))
            .with_pending_source(Arc::new(StorePendingSource::new(
                store.clone(),
                Some(Origin::Agent),
            ))),
    );
    session.refresh_pending().unwrap();
    let tool = SetConfig::default();
    tool.execute(json!({"key": "pool", "value": "8"}), &context(&session))
        .await
        .unwrap();
    let head = session.queue().pending().peek_head().unwrap();
    assert_eq!(
        head.id,
        format!("pending-action:custom_tool:{}", durable.seq + 1)
    );

    // Not in the store, in any form; a refresh from the store keeps it.
    let ids: Vec<String> = store.pending().unwrap().into_iter().map(|r| r.id).collect();
    assert_eq!(ids, vec![durable.id.clone()]);
    let files: Vec<_> = std::fs::read_dir(dir.path().join(".resolve/pending"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(files, vec![format!("{}.json", durable.seq)]);
    session.refresh_pending().unwrap();
    assert_eq!(session.queue().pending().len(), 2);

    let applied = decide(&session, "apply", "Fine.").await.unwrap();
    assert_eq!(applied.text, "Set pool (Fine.).");
    assert!(
        store.history().unwrap().is_empty(),
        "in-memory actions leave no history"
    );
    assert_eq!(
        session.queue().pending().peek_head().unwrap().id,
        durable.id,
        "the durable preview is next"
    );
}

#[tokio::test]
async fn two_sessions_in_one_process_never_see_each_others_pending_actions() {
    let tool = Arc::new(SetConfig::default());
    let tools = vec![tool.clone() as Arc<dyn Tool>];

    // Session A stages, then stops (one model call allowed) with its action pending.
    let server_a = MockServer::start(vec![Reply::call(
        "a1",
        "set_config",
        json!({"key": "pool", "value": "8"}),
    )])
    .await;
    let mut builder = AgentSession::builder(config(&server_a, ProviderKind::OpenAi));
    builder.tools(tools.clone()).max_turns(Some(1));
    let mut session_a = builder.build().unwrap();
    let stopped = run_quietly(&mut session_a, "Raise the pool.").await;
    assert!(stopped.is_err());
    assert_eq!(session_a.resolve_session().queue().pending().len(), 1);

    // Session B, with the same tool object, sees nothing to apply and gets no reminder.
    let server_b = MockServer::start(vec![
        Reply::call("b1", "resolve", resolve_args("apply", "Sure.")),
        Reply::text("Nothing was pending."),
    ])
    .await;
    let mut builder = AgentSession::builder(config(&server_b, ProviderKind::OpenAi));
    builder.tools(tools);
    let mut session_b = builder.build().unwrap();
    run_quietly(&mut session_b, "Apply it.").await.unwrap();
    let bodies = server_b.bodies();
    assert_eq!(reminder_count(&bodies[0]), 0);
    let results = tool_results(&bodies[1]);
    assert_eq!(
        results[0].1,
        "No pending action to resolve. Nothing to apply or discard."
    );
    assert_eq!(tool.applied.load(Ordering::SeqCst), 0);

    // Session A still holds its own action and applies it.
    let applied = decide(session_a.resolve_session(), "apply", "Approved.")
        .await
        .unwrap();
    assert_eq!(applied.text, "Set pool (Approved.).");
    assert_eq!(tool.applied.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn in_one_batch_an_edit_then_a_custom_action_leave_the_custom_action_at_the_head() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
    let store = Store::open(Workspace::open(dir.path()).unwrap());
    let server = MockServer::start(vec![
        Reply::Turn(
            Turn::call(
                "e1",
                "edit",
                json!({"path": "a.txt", "old_text": "one", "new_text": "uno"}),
            )
            .and_call(
                "s1",
                "set_config",
                &json!({"key": "pool", "value": "8"}).to_string(),
            ),
        ),
        Reply::call("r1", "resolve", resolve_args("apply", "Go.")),
        Reply::call("r2", "resolve", resolve_args("discard", "Not now.")),
        Reply::text("Done."),
    ])
    .await;
    let resolve = ResolveSession::new()
        .with_id_allocator(Arc::new(store.clone()))
        .with_pending_source(Arc::new(StorePendingSource::new(
            store.clone(),
            Some(Origin::Agent),
        )));
    let set_config = Arc::new(SetConfig::default());
    let mut builder = AgentSession::builder(config(&server, ProviderKind::OpenAi));
    builder
        .tools(resolve_agent::file_tools(&resolve_edit::FileTools::new(
            store.clone(),
            Origin::Agent,
        )))
        .tool(set_config.clone())
        .resolve_session(Arc::new(resolve));
    let mut session = builder.build().unwrap();
    let events = Events::default();
    run_recording(&mut session, "Edit and configure.", &events)
        .await
        .unwrap();

    let resolved: Vec<Value> = events.picked(|event| match event {
        resolve_agent::AgentEvent::ToolResult { name, details, .. } if name == "resolve" => details,
        _ => None,
    });
    assert_eq!(resolved.len(), 2);
    assert_eq!(resolved[0]["sourceToolName"], "custom_tool", "{resolved:?}");
    assert_eq!(
        resolved[1]["sourceToolName"], "edit",
        "the older edit came next"
    );
    assert_eq!(set_config.applied.load(Ordering::SeqCst), 1);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "one\n",
        "the edit was never applied"
    );
    assert!(store.pending().unwrap().is_empty());
}
