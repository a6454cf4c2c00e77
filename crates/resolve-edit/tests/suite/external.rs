//! Durable MCP actions: the store keeps the calls as data, and `StorePendingSource` resolves
//! them through an `ExternalActionRunner` under the store's lock.

#![expect(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] functions fail the test by panicking"
)]

use std::sync::{Arc, Mutex};

use pretty_assertions::assert_eq;
use resolve_core::{BoxFuture, Error, Extra, ResolveSession, ToolResult};
use resolve_edit::{
    ExternalActionRunner, McpAction, McpToolCall, NewAction, Origin, Outcome, Payload,
    PendingRecord, Store, StoreError, StorePendingSource, StoredAction,
};
use serde_json::{Value, json};

use super::common::empty_store;
use tokio_util::sync::CancellationToken;

/// Records every call; answers with `answer`.
#[derive(Debug)]
struct FakeRunner {
    calls: Mutex<Vec<(String, String, Value)>>,
    answer: Result<ToolResult, String>,
}

impl FakeRunner {
    fn answering(answer: Result<ToolResult, String>) -> Arc<Self> {
        Arc::new(Self {
            calls: Mutex::new(Vec::new()),
            answer,
        })
    }

    fn calls(&self) -> Vec<(String, String, Value)> {
        self.calls.lock().unwrap().clone()
    }
}

impl ExternalActionRunner for FakeRunner {
    fn call(
        &self,
        server: &str,
        call: &McpToolCall,
        reason: &str,
        extra: Option<&Extra>,
    ) -> BoxFuture<Result<ToolResult, String>> {
        self.calls.lock().unwrap().push((
            server.to_owned(),
            call.tool.clone(),
            Value::Object(call.arguments_with(reason, extra)),
        ));
        let answer = self.answer.clone();
        Box::pin(async move { answer })
    }
}

fn call(tool: &str) -> McpToolCall {
    McpToolCall {
        tool: tool.to_owned(),
        arguments: json!({"text": "hi"}).as_object().cloned().unwrap(),
    }
}

fn stage_note(store: &Store, with_reject: bool) -> PendingRecord {
    let action = NewAction {
        origin: Origin::Agent,
        source_tool: "notes__add".into(),
        label: "Note: hi".into(),
        preview_text: "Would add hi.".into(),
        details: json!({"text": "hi"}),
    };
    let call = McpAction {
        server: "notes".into(),
        apply: call("apply"),
        reject: with_reject.then(|| call("reject")),
    };
    store.stage_mcp(action, call).unwrap()
}

fn session(store: &Store, runner: Option<Arc<FakeRunner>>) -> ResolveSession {
    let mut source = StorePendingSource::new(store.clone(), None);
    if let Some(runner) = runner {
        source = source.with_external_runner(runner);
    }
    ResolveSession::new()
        .with_id_allocator(Arc::new(store.clone()))
        .with_pending_source(Arc::new(source))
}

fn args(action: &str, reason: &str) -> Value {
    json!({"action": action, "reason": reason})
}

/// Call `resolve` with `args` in a session over `store` running MCP calls with `runner`.
async fn resolve(
    store: &Store,
    runner: Option<Arc<FakeRunner>>,
    args: &Value,
) -> Result<ToolResult, Error> {
    session(store, runner)
        .execute_resolve(args, &CancellationToken::new())
        .await
}

#[test]
fn an_mcp_action_is_stored_as_data_and_a_record_without_one_is_a_change_set() {
    let (dir, store) = empty_store();
    let record = stage_note(&store, false);
    assert_eq!(record.id, "pending-action:notes__add:1");
    let stored: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join(".resolve/pending/1.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        stored["mcp"],
        json!({"server": "notes", "apply": {"tool": "apply", "arguments": {"text": "hi"}}})
    );
    assert!(matches!(
        store.pending().unwrap()[0].payload(),
        Payload::Mcp(_)
    ));

    // A record without an `mcp` key (every staged change set): its payload is its change set.
    let mut old = stored;
    old.as_object_mut().unwrap().remove("mcp");
    old["changeSet"] = json!({"files": {}});
    let old: PendingRecord = serde_json::from_value(old).unwrap();
    assert!(matches!(old.payload(), Payload::ChangeSet(set) if set.is_empty()));
}

#[test]
fn store_apply_refuses_an_mcp_action_so_it_is_never_consumed_without_its_call() {
    let (_dir, store) = empty_store();
    let record = stage_note(&store, false);
    let error = store.apply(&record.id, None, "go", None).unwrap_err();
    assert!(
        matches!(error, StoreError::ExternalPayload { .. }),
        "{error}"
    );
    assert_eq!(store.pending().unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn apply_calls_the_runner_with_reason_and_extra_and_moves_the_action_to_history() {
    let (_dir, store) = empty_store();
    let record = stage_note(&store, false);
    let runner = FakeRunner::answering(Ok(
        ToolResult::text("Added hi.").with_details(json!({"lines": 1}))
    ));
    let result = resolve(
        &store,
        Some(runner.clone()),
        &json!({"action": "apply", "reason": "Asked for.", "extra": {"ticket": 7}}),
    )
    .await
    .unwrap();
    assert_eq!(result.text, "Added hi.");
    let details = result.details.unwrap();
    assert_eq!(details["sourceResultDetails"], json!({"lines": 1}));
    assert_eq!(details["sourceToolName"], "notes__add");
    assert_eq!(
        runner.calls(),
        vec![(
            "notes".to_owned(),
            "apply".to_owned(),
            json!({"text": "hi", "reason": "Asked for.", "extra": {"ticket": 7}})
        )]
    );
    match store.get(&record.id).unwrap() {
        StoredAction::Resolved(history) => {
            assert_eq!(history.outcome, Outcome::Applied);
            assert_eq!(history.reason, "Asked for.");
        }
        StoredAction::Pending(_) => panic!("still pending"),
    }
    let undo = store.undo(&record.id).unwrap_err();
    assert!(undo.to_string().contains("MCP server"), "{undo}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn a_failed_or_error_call_is_apply_failed_and_the_action_stays_pending_at_the_head() {
    for answer in [
        Err("the MCP server `notes` has exited".to_owned()),
        Ok(ToolResult::error("disk full")),
    ] {
        let (_dir, store) = empty_store();
        let record = stage_note(&store, false);
        let newer = stage_note(&store, false);
        let session = session(&store, Some(FakeRunner::answering(answer)));
        let error = session
            .resolve_with(
                resolve_core::ResolveArgs::new(resolve_core::ResolveAction::Apply, "go"),
                Some(&record.id),
                &CancellationToken::new(),
            )
            .await
            .unwrap_err();
        assert!(matches!(error, Error::ApplyFailed(_)), "{error}");
        assert!(error.to_string().starts_with("Apply failed: "), "{error}");
        let ids: Vec<String> = store.pending().unwrap().into_iter().map(|r| r.id).collect();
        assert_eq!(
            ids,
            vec![record.id.clone(), newer.id.clone()],
            "failed apply is the head"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn without_a_runner_apply_fails_with_a_message_and_stays_pending() {
    let (_dir, store) = empty_store();
    stage_note(&store, false);
    let error = resolve(&store, None, &args("apply", "go"))
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("no MCP client is set up"),
        "{error}"
    );
    assert_eq!(store.pending().unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn discard_calls_the_reject_tool_only_when_there_is_one() {
    let (_dir, store) = empty_store();
    let runner = FakeRunner::answering(Ok(ToolResult::text("Forgot hi.")));
    stage_note(&store, false);
    let plain = resolve(&store, Some(runner.clone()), &args("discard", "No."))
        .await
        .unwrap();
    assert_eq!(plain.text, "Discarded: Note: hi. Reason: No.");
    assert!(runner.calls().is_empty());

    stage_note(&store, true);
    let rejected = resolve(&store, Some(runner.clone()), &args("discard", "Nope."))
        .await
        .unwrap();
    assert_eq!(rejected.text, "Forgot hi.");
    assert_eq!(runner.calls()[0].1, "reject");
    assert_eq!(runner.calls()[0].2["reason"], "Nope.");
    assert!(store.pending().unwrap().is_empty());
    assert_eq!(store.history().unwrap().len(), 2);
}

#[test]
fn a_call_interrupted_by_a_dying_process_is_reported_once_and_then_made_again() {
    let (dir, store) = empty_store();
    let record = stage_note(&store, false);
    // The process making the call dies during it: nothing after the call runs.
    let died = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        store.resolve_external(
            &record.id,
            Outcome::Applied,
            "go",
            None,
            |_| -> Result<(), String> { panic!("killed during the call") },
        )
    }));
    assert!(died.is_err());

    let calls = std::cell::Cell::new(0);
    let call = |_: &PendingRecord| -> Result<(), String> {
        calls.set(calls.get() + 1);
        Ok(())
    };
    let error = store
        .resolve_external(&record.id, Outcome::Applied, "again", None, call)
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "An earlier resolve process stopped while it was calling the tool `apply` of the MCP server `notes` for `pending-action:notes__add:1`, so that call may have run. Check what it did; then apply or discard `pending-action:notes__add:1` again, which calls the tool again."
    );
    assert_eq!(calls.get(), 0, "no second call without a word");
    assert!(matches!(
        store.get(&record.id).unwrap(),
        StoredAction::Pending(_)
    ));

    store
        .resolve_external(&record.id, Outcome::Applied, "checked", None, call)
        .unwrap()
        .unwrap();
    assert_eq!(calls.get(), 1);
    assert!(matches!(
        store.get(&record.id).unwrap(),
        StoredAction::Resolved(_)
    ));
    let pending = std::fs::read_dir(dir.path().join(".resolve/pending")).unwrap();
    assert_eq!(
        pending.count(),
        0,
        "the marker went with the move to history"
    );
}

fn stack_ids(stack: &resolve_core::PendingStack) -> Vec<String> {
    stack.iter().map(|entry| entry.id.clone()).collect()
}

#[test]
fn the_source_places_stored_actions_by_their_order_and_follows_it_when_it_changes() {
    let (_dir, store) = empty_store();
    let first = stage_note(&store, false);
    let second = stage_note(&store, false);
    let source = StorePendingSource::new(store.clone(), None);
    let mut stack = resolve_core::PendingStack::default();
    resolve_core::PendingSource::refresh(&source, &mut stack).unwrap();
    assert_eq!(stack_ids(&stack), vec![second.id.clone(), first.id.clone()]);

    // Bumped to the head (a failed apply, in any process): it moves there.
    store.bump_to_head(&first.id).unwrap();
    resolve_core::PendingSource::refresh(&source, &mut stack).unwrap();
    assert_eq!(stack_ids(&stack), vec![first.id.clone(), second.id.clone()]);

    // Dropped from the stack (as stale while the store could not be read): it comes back.
    stack.clear();
    resolve_core::PendingSource::refresh(&source, &mut stack).unwrap();
    assert_eq!(stack_ids(&stack), vec![first.id, second.id]);
}
