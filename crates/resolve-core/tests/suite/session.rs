//! `ResolveSession`: staging, the per-turn directive, dispatch order, failure, abort and
//! concurrency.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pretty_assertions::assert_eq;
use resolve_core::{
    ActionError, Error, IdAllocator, NOTHING_TO_DISCARD, PendingAction, PendingSource,
    PendingStack, PushOptions, RESOLVE_REMINDER, ReminderMessage, ResolveArgs, ResolveHandler,
    ResolveSession, SoftToolRequirement, ToolChoice, ToolChoiceDirective, ToolKind, ToolResult,
    ToolSpec, TurnStop, needs_resolve_tool,
};
use serde_json::json;
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::common::{
    Log, SeqIds, apply, counting_edit, discard, pending_ids, recording_action, refused, resolved,
    session, token,
};

const AST_LABEL: &str = "AST Edit: 2 replacements in 1 file";

fn all_active(_: &str) -> bool {
    true
}

fn soft(id: &str, source_tool: &str) -> Option<ToolChoiceDirective> {
    Some(ToolChoiceDirective::Soft(SoftToolRequirement {
        id: id.to_owned(),
        tool_name: "resolve".to_owned(),
        reminder: vec![ReminderMessage::resolve(source_tool)],
    }))
}

/// A session with an `ast_edit` preview staged; its pending id.
fn with_ast_edit_staged() -> (ResolveSession, String) {
    let session = session();
    let id = session
        .queue_resolve_handler(recording_action(AST_LABEL, "ast_edit", "ok").0)
        .unwrap();
    (session, id)
}

fn handler(text: &'static str, calls: Log<ResolveArgs>) -> ResolveHandler {
    Arc::new(move |args: ResolveArgs| {
        calls.push(args);
        Box::pin(async move { Ok(ToolResult::text(text)) })
    })
}

#[test]
fn staged_preview_forces_nothing_and_yields_a_soft_requirement_with_the_reminder() {
    let (session, id) = with_ast_edit_staged();
    assert_eq!(session.queue().next_tool_choice(), None, "nothing forced");
    let directive = session.next_tool_choice_directive(all_active);
    assert_eq!(directive, soft(&id, "ast_edit"));
    let Some(ToolChoiceDirective::Soft(requirement)) = directive else {
        unreachable!()
    };
    assert_eq!(requirement.reminder[0].custom_type, "resolve-reminder");
    assert_eq!(
        requirement.reminder[0].content,
        "<system-reminder>\nThis is a preview. Call the `resolve` tool to apply or discard these changes.\n</system-reminder>"
    );
    assert_eq!(requirement.reminder[0].content, RESOLVE_REMINDER);
}

#[test]
fn soft_directive_is_a_peek_that_advances_nothing() {
    let (session, id) = with_ast_edit_staged();
    for _ in 0..3 {
        assert_eq!(
            session.next_tool_choice_directive(all_active),
            soft(&id, "ast_edit")
        );
    }
    assert_eq!(session.queue().pending().len(), 1);
    assert!(!session.queue().has_in_flight());
}

#[tokio::test]
async fn resolving_the_staged_preview_applies_once_and_drains_the_gate() {
    let session = session();
    let (action, applies) = recording_action(AST_LABEL, "ast_edit", "Applied.");
    session.queue_resolve_handler(action).unwrap();
    assert!(matches!(
        session.next_tool_choice_directive(all_active),
        Some(ToolChoiceDirective::Soft(_))
    ));
    resolved(&session, &apply("Looks right.")).await;
    assert_eq!(applies.len(), 1);
    assert_eq!(session.next_tool_choice_directive(all_active), None);
}

/// A pending source that removes the ids consumed by "another process".
#[derive(Default)]
struct ConsumedElsewhere {
    consumed: Mutex<Vec<String>>,
}

impl PendingSource for ConsumedElsewhere {
    fn refresh(&self, stack: &mut PendingStack) -> Result<(), Error> {
        for id in self.consumed.lock().unwrap().iter() {
            stack.remove(id);
        }
        Ok(())
    }
}

#[tokio::test]
async fn phantom_gate_discard_succeeds_and_opens_the_gate() {
    let source = Arc::new(ConsumedElsewhere::default());
    let session = ResolveSession::new()
        .with_id_allocator(Arc::new(SeqIds::default()))
        .with_pending_source(Arc::clone(&source) as Arc<dyn PendingSource>);
    let (action, applies) = recording_action(AST_LABEL, "ast_edit", "ok");
    let rejects = Log::default();
    let log = rejects.clone();
    let action = action.with_reject(move |reason, _| {
        log.push(reason);
        async { Ok(None) }
    });
    let id = session.queue_resolve_handler(action).unwrap();
    assert_eq!(
        session.next_tool_choice_directive(all_active),
        soft(&id, "ast_edit")
    );
    source.consumed.lock().unwrap().push(id);

    let result = resolved(&session, &discard("Dropping it.")).await;
    assert!(!result.is_error);
    assert_eq!(
        result.text,
        "Nothing to discard; no pending action remains."
    );
    assert_eq!(
        result.details,
        Some(json!({"action": "discard", "reason": "Dropping it."}))
    );
    assert_eq!((applies.len(), rejects.len()), (0, 0));
    assert_eq!(session.next_tool_choice_directive(all_active), None);
}

/// A pending source that hands over actions staged by "another process", once each.
#[derive(Default)]
struct StagedElsewhere {
    incoming: Mutex<Vec<(String, PendingAction)>>,
}

impl PendingSource for StagedElsewhere {
    fn refresh(&self, stack: &mut PendingStack) -> Result<(), Error> {
        for (id, action) in self.incoming.lock().unwrap().drain(..) {
            stack.register(id, Arc::new(action));
        }
        Ok(())
    }
}

#[tokio::test]
async fn actions_from_the_pending_source_are_seen_by_directive_and_dispatch() {
    let source = Arc::new(StagedElsewhere::default());
    let session = session().with_pending_source(Arc::clone(&source) as Arc<dyn PendingSource>);
    let (action, applies) = recording_action("Write: a.txt", "write", "Wrote a.txt.");
    source
        .incoming
        .lock()
        .unwrap()
        .push(("pending-action:write:41".to_owned(), action));
    assert_eq!(
        session.next_tool_choice_directive(all_active),
        soft("pending-action:write:41", "write")
    );
    let result = resolved(&session, &apply("Fine.")).await;
    assert_eq!(result.text, "Wrote a.txt.");
    assert_eq!(applies.len(), 1);
}

struct BrokenSource;

impl PendingSource for BrokenSource {
    fn refresh(&self, _: &mut PendingStack) -> Result<(), Error> {
        Err(Error::PendingSource(
            "pending store is unreadable".to_owned(),
        ))
    }
}

#[tokio::test]
async fn unreadable_pending_source_fails_dispatch_without_consuming() {
    let session = session().with_pending_source(Arc::new(BrokenSource));
    let (action, applies) = recording_action("Write: a.txt", "write", "ok");
    let id = session.queue_resolve_handler(action).unwrap();
    let error = refused(&session, &apply("Go.")).await;
    assert_eq!(error.to_string(), "pending store is unreadable");
    assert_eq!(applies.len(), 0);
    assert!(session.queue().pending().contains(&id));
}

#[tokio::test]
async fn stacked_previews_resolve_most_recent_first() {
    let session = session();
    let order = Log::default();
    let mut ids = Vec::new();
    for name in ["first", "second", "third"] {
        let log = order.clone();
        let action = PendingAction::new(format!("Edit: {name}"), "edit", move |_, _| {
            log.push(name);
            async move { Ok(ToolResult::text(format!("applied {name}"))) }
        });
        ids.push(session.queue_resolve_handler(action).unwrap());
    }
    let mut heads = Vec::new();
    let mut texts = Vec::new();
    for _ in 0..3 {
        heads.push(session.queue().pending().peek_head().unwrap().id);
        texts.push(resolved(&session, &apply("Yes.")).await.text);
    }
    ids.reverse();
    assert_eq!(heads, ids);
    assert_eq!(order.all(), vec!["third", "second", "first"]);
    assert_eq!(
        texts,
        vec!["applied third", "applied second", "applied first"]
    );
    assert_eq!(
        session.execute_resolve(&apply("Yes."), &token()).await,
        Err(Error::NothingToApply)
    );
}

#[tokio::test]
async fn failed_apply_keeps_the_id_at_the_head_and_a_discard_then_consumes_it() {
    let session = session();
    let (below, below_applies) = recording_action("Edit: b.rs", "edit", "ok");
    session.queue_resolve_handler(below).unwrap();
    let failing = PendingAction::new("Edit: a.rs", "edit", |_, _| async {
        Err(ActionError::Failed("disk full".to_owned()))
    });
    let id = session.queue_resolve_handler(failing).unwrap();

    let error = refused(&session, &apply("Go.")).await;
    assert_eq!(error.to_string(), "Apply failed: disk full");
    assert_eq!(session.queue().pending().peek_head().unwrap().id, id);
    assert_eq!(session.queue().pending().len(), 2);
    assert_eq!(
        session.next_tool_choice_directive(all_active),
        soft(&id, "edit"),
        "same id, so no new reminder"
    );

    let result = resolved(&session, &discard("Cannot apply.")).await;
    assert_eq!(result.text, "Discarded: Edit: a.rs. Reason: Cannot apply.");
    assert!(!session.queue().pending().contains(&id));
    assert_eq!(session.queue().pending().len(), 1);
    assert_eq!(below_applies.len(), 0);
}

#[tokio::test]
async fn failed_apply_moves_its_id_back_above_an_action_staged_meanwhile() {
    let session = Arc::new(session());
    let staged_during_apply = Arc::new(Mutex::new(None));
    let (inner, slot) = (Arc::downgrade(&session), Arc::clone(&staged_during_apply));
    let failing = PendingAction::new("Edit: a.rs", "edit", move |_, _| {
        if let Some(session) = inner.upgrade() {
            let id = session
                .queue_resolve_handler(recording_action("Write: b", "write", "ok").0)
                .unwrap();
            *slot.lock().unwrap() = Some(id);
        }
        async { Err(ActionError::Failed("boom".to_owned())) }
    });
    let id = session.queue_resolve_handler(failing).unwrap();
    refused(&session, &apply("Go.")).await;
    let other = staged_during_apply.lock().unwrap().clone().unwrap();
    let order = pending_ids(&session);
    assert_eq!(order, vec![id, other]);
}

#[tokio::test]
async fn cancelled_token_aborts_before_anything_is_consumed() {
    let session = session();
    let (action, applies) = recording_action("Edit: a.rs", "edit", "ok");
    let id = session.queue_resolve_handler(action).unwrap();
    let cancel = CancellationToken::new();
    cancel.cancel();
    let error = session
        .execute_resolve(&apply("Go."), &cancel)
        .await
        .unwrap_err();
    assert_eq!(error, Error::Aborted("Cancelled".to_owned()));
    assert_eq!(error.to_string(), "Aborted: Cancelled");
    assert_eq!(applies.len(), 0);
    assert!(session.queue().pending().contains(&id));
}

#[tokio::test]
async fn abort_during_a_slow_apply_returns_at_once_and_keeps_the_action_pending() {
    let session = Arc::new(session());
    let started = Arc::new(Notify::new());
    let calls = Arc::new(AtomicUsize::new(0));
    let (notify, counter) = (Arc::clone(&started), Arc::clone(&calls));
    let action = PendingAction::new("Edit: a.rs", "edit", move |_, _| {
        let first = counter.fetch_add(1, Ordering::SeqCst) == 0;
        let notify = Arc::clone(&notify);
        async move {
            if first {
                notify.notify_one();
                std::future::pending::<()>().await;
            }
            Ok(ToolResult::text("Applied edit to a.rs."))
        }
    });
    let id = session.queue_resolve_handler(action).unwrap();
    let (cancel, task) = spawn_apply(&session);
    started.notified().await;
    cancel.cancel();
    let outcome = tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .expect("the aborted call returns at once")
        .unwrap();
    assert_eq!(outcome, Err(Error::Aborted("Cancelled".to_owned())));
    assert!(session.queue().pending().contains(&id));

    let retry = tokio::time::timeout(
        Duration::from_secs(5),
        session.execute_resolve(&apply("Again."), &token()),
    )
    .await
    .expect("dispatch is free again after the abort")
    .unwrap();
    assert_eq!(retry.text, "Applied edit to a.rs.");
    assert!(!session.queue().pending().contains(&id));
}

/// Start applying the head action of `session` ("Go.") on a task: its cancellation token
/// and the task.
fn spawn_apply(
    session: &Arc<ResolveSession>,
) -> (CancellationToken, JoinHandle<Result<ToolResult, Error>>) {
    let cancel = CancellationToken::new();
    let task = tokio::spawn({
        let (session, cancel) = (Arc::clone(session), cancel.clone());
        async move { session.execute_resolve(&apply("Go."), &cancel).await }
    });
    (cancel, task)
}

/// Waits (up to 5 s) until `done` holds.
async fn eventually(what: &str, done: impl Fn() -> bool) {
    let waited = tokio::time::timeout(Duration::from_secs(5), async {
        while !done() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    assert!(waited.is_ok(), "timed out waiting until {what}");
}

#[tokio::test]
async fn abort_during_an_apply_returns_at_once_and_the_apply_runs_to_its_end_and_is_consumed() {
    let session = Arc::new(session());
    let (a, b) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let go_on = Arc::new(Notify::new());
    let action = PendingAction::new("Config: two steps", "custom_tool", {
        let (a, b, go_on) = (Arc::clone(&a), Arc::clone(&b), Arc::clone(&go_on));
        move |_, _| {
            let (a, b, go_on) = (Arc::clone(&a), Arc::clone(&b), Arc::clone(&go_on));
            async move {
                a.fetch_add(1, Ordering::SeqCst);
                go_on.notified().await;
                b.fetch_add(1, Ordering::SeqCst);
                Ok(ToolResult::text("done"))
            }
        }
    });
    let id = session.queue_resolve_handler(action).unwrap();
    let (cancel, call) = spawn_apply(&session);
    eventually("A = 1", || a.load(Ordering::SeqCst) == 1).await;
    cancel.cancel();
    let outcome = tokio::time::timeout(Duration::from_secs(5), call)
        .await
        .expect("the cancelled call returns at once")
        .unwrap();
    assert_eq!(outcome.unwrap_err().to_string(), "Aborted: Cancelled");
    assert_eq!(
        b.load(Ordering::SeqCst),
        0,
        "still waiting in the background"
    );
    assert!(
        session.queue().pending().contains(&id),
        "pending while it runs"
    );

    go_on.notify_one();
    eventually("B = 1", || b.load(Ordering::SeqCst) == 1).await;
    eventually("the stack is empty", || {
        session.queue().pending().is_empty()
    })
    .await;
    let again = refused(&session, &apply("Go.")).await;
    assert_eq!(
        again.to_string(),
        "No pending action to resolve. Nothing to apply or discard."
    );
    assert_eq!(a.load(Ordering::SeqCst), 1, "never run twice");
}

#[tokio::test]
async fn abort_during_an_apply_that_then_fails_requeues_it_at_the_head() {
    let session = Arc::new(session());
    let go_on = Arc::new(Notify::new());
    let started = Arc::new(AtomicUsize::new(0));
    let failing = PendingAction::new("Edit: a.rs", "edit", {
        let (go_on, started) = (Arc::clone(&go_on), Arc::clone(&started));
        move |_, _| {
            let (go_on, started) = (Arc::clone(&go_on), Arc::clone(&started));
            async move {
                started.fetch_add(1, Ordering::SeqCst);
                go_on.notified().await;
                Err(ActionError::Failed("disk full".to_owned()))
            }
        }
    });
    let id = session.queue_resolve_handler(failing).unwrap();
    let (cancel, call) = spawn_apply(&session);
    eventually("the apply started", || started.load(Ordering::SeqCst) == 1).await;
    cancel.cancel();
    assert_eq!(
        call.await.unwrap(),
        Err(Error::Aborted("Cancelled".to_owned()))
    );
    // Staged while the apply still runs: the failed apply goes back above it.
    let (later, _) = recording_action("Write: b", "write", "ok");
    let later = session.queue_resolve_handler(later).unwrap();
    go_on.notify_one();
    eventually("the failed apply is requeued at the head", || {
        session.queue().pending().peek_head().map(|head| head.id) == Some(id.clone())
    })
    .await;
    let order = pending_ids(&session);
    assert_eq!(order, vec![id, later]);
}

/// A pending source that hands over stored actions at their stored orders.
#[derive(Default)]
struct OrderedSource {
    incoming: Mutex<Vec<(String, u64, PendingAction)>>,
}

impl PendingSource for OrderedSource {
    fn refresh(&self, stack: &mut PendingStack) -> Result<(), Error> {
        for (id, order, action) in self.incoming.lock().unwrap().drain(..) {
            stack.register_at(id, order, Arc::new(action));
        }
        Ok(())
    }
}

#[tokio::test]
async fn an_action_that_reaches_the_stack_late_stays_below_one_staged_after_it() {
    let ids = Arc::new(SeqIds::default());
    let source = Arc::new(OrderedSource::default());
    let session = ResolveSession::new()
        .with_id_allocator(Arc::clone(&ids) as Arc<dyn IdAllocator>)
        .with_pending_source(Arc::clone(&source) as Arc<dyn PendingSource>);
    // The durable edit is staged first (seq 0) but reaches the stack only at the next refresh;
    // the in-memory custom action is staged after it (seq 1) and registered at once.
    let edit_seq = ids.next_seq().unwrap();
    let (edit, edit_applies) = recording_action("Edit: a.txt", "edit", "Applied edit to a.txt.");
    source.incoming.lock().unwrap().push((
        format!("pending-action:edit:{edit_seq}"),
        edit_seq,
        edit,
    ));
    let (custom, custom_applies) = recording_action("Config", "custom_tool", "done");
    let custom = session.queue_resolve_handler(custom).unwrap();
    assert_eq!(
        session.next_tool_choice_directive(all_active),
        soft(&custom, "custom_tool"),
        "the newest action is the head"
    );
    let result = resolved(&session, &apply("Go.")).await;
    assert_eq!(result.details.unwrap()["sourceToolName"], "custom_tool");
    assert_eq!((custom_applies.len(), edit_applies.len()), (1, 0));
    assert_eq!(
        session.queue().pending().peek_head().unwrap().id,
        "pending-action:edit:0"
    );
}

/// A pending source that stages one action at its first refresh and then cannot be read.
#[derive(Default)]
struct FailsAfterFirstRefresh {
    refreshes: AtomicUsize,
    applies: Log<String>,
}

impl PendingSource for FailsAfterFirstRefresh {
    fn refresh(&self, stack: &mut PendingStack) -> Result<(), Error> {
        if self.refreshes.fetch_add(1, Ordering::SeqCst) > 0 {
            return Err(Error::PendingSource(
                "cannot read .resolve/pending: permission denied".to_owned(),
            ));
        }
        let log = self.applies.clone();
        let action = PendingAction::new("Edit: a.txt", "edit", move |reason, _| {
            log.push(reason);
            async { Ok(ToolResult::text("Applied edit to a.txt.")) }
        });
        stack.register_at("pending-action:edit:40", 40, Arc::new(action));
        Ok(())
    }
}

#[tokio::test]
async fn an_unreadable_source_drops_its_stale_actions_stops_requiring_resolve_and_says_why() {
    let source = Arc::new(FailsAfterFirstRefresh::default());
    let session = session().with_pending_source(Arc::clone(&source) as Arc<dyn PendingSource>);
    session.refresh_pending().unwrap();
    assert_eq!(session.queue().pending().len(), 1);

    // The store cannot be read any more: the gate opens instead of forcing on a stale stack.
    assert_eq!(session.next_tool_choice_directive(all_active), None);
    assert!(session.queue().pending().is_empty());
    let error = refused(&session, &apply("Go.")).await;
    assert_eq!(
        error.to_string(),
        "cannot read .resolve/pending: permission denied\nDropped 1 stale pending action from this session because they could not be re-read: `resolve` is no longer required for them, and nothing was applied or discarded. They are not lost: they come back once their store can be read again."
    );
    assert_eq!(source.applies.len(), 0);
    assert_eq!(session.next_tool_choice_directive(all_active), None);
    // Said once; later calls give the plain cause.
    let again = refused(&session, &discard("Drop it.")).await;
    assert_eq!(
        again.to_string(),
        "cannot read .resolve/pending: permission denied"
    );
}

#[tokio::test]
async fn an_unreadable_source_keeps_the_actions_staged_in_this_process() {
    let source = Arc::new(FailsAfterFirstRefresh::default());
    let session = session().with_pending_source(Arc::clone(&source) as Arc<dyn PendingSource>);
    session.refresh_pending().unwrap();
    let (action, _) = recording_action("Config", "custom_tool", "done");
    let id = session.queue_resolve_handler(action).unwrap();
    assert_eq!(
        session.next_tool_choice_directive(all_active),
        soft(&id, "custom_tool")
    );
    let ids = pending_ids(&session);
    assert_eq!(ids, vec![id]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_resolve_calls_never_consume_one_action_twice() {
    let session = Arc::new(session());
    let (action, entered) = counting_edit(|_| async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        Ok(ToolResult::text("Applied edit to a.rs."))
    });
    session.queue_resolve_handler(action).unwrap();
    let tasks: Vec<_> = (0..2)
        .map(|_| {
            let session = Arc::clone(&session);
            tokio::spawn(async move { session.execute_resolve(&apply("Go."), &token()).await })
        })
        .collect();
    let mut outcomes = Vec::new();
    for task in tasks {
        outcomes.push(task.await.unwrap());
    }
    assert_eq!(entered.load(Ordering::SeqCst), 1, "apply ran exactly once");
    let applied = outcomes.iter().filter(|outcome| outcome.is_ok()).count();
    assert_eq!(applied, 1, "{outcomes:?}");
    assert!(
        outcomes.contains(&Err(Error::NothingToApply)),
        "{outcomes:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_resolve_calls_each_take_a_different_stacked_action() {
    let session = Arc::new(session());
    let runs = Log::default();
    for name in ["a", "b", "c"] {
        let log = runs.clone();
        session
            .queue_resolve_handler(PendingAction::new(
                format!("Edit: {name}"),
                "edit",
                move |_, _| {
                    log.push(name);
                    async {
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        Ok(ToolResult::text("ok"))
                    }
                },
            ))
            .unwrap();
    }
    let tasks: Vec<_> = (0..6)
        .map(|_| {
            let session = Arc::clone(&session);
            tokio::spawn(async move { session.execute_resolve(&apply("Go."), &token()).await })
        })
        .collect();
    let mut ok = 0;
    for task in tasks {
        match task.await.unwrap() {
            Ok(_) => ok += 1,
            Err(error) => assert_eq!(error, Error::NothingToApply),
        }
    }
    let mut ran = runs.all();
    ran.sort_unstable();
    assert_eq!(ran, vec!["a", "b", "c"]);
    assert_eq!(ok, 3);
}

#[tokio::test]
async fn in_flight_invoker_takes_precedence_over_the_pending_head() {
    let session = session();
    let (action, applies) = recording_action(AST_LABEL, "ast_edit", "preview applied");
    session.queue_resolve_handler(action).unwrap();
    let invoked = Log::default();
    session.queue().push_once(
        ToolChoice::Tool("resolve".to_owned()),
        PushOptions::new().on_invoked(handler("gate handled", invoked.clone())),
    );
    assert_eq!(
        session.next_tool_choice_directive(all_active),
        Some(ToolChoiceDirective::Hard(ToolChoice::Tool(
            "resolve".to_owned()
        )))
    );
    let result = resolved(&session, &apply("Approve.")).await;
    assert_eq!(
        result,
        ToolResult::text("gate handled"),
        "returned unchanged"
    );
    assert_eq!(invoked.len(), 1);
    assert_eq!(applies.len(), 0);
    assert!(session.queue().pending().has_pending());
}

#[tokio::test]
async fn pending_head_takes_precedence_over_the_standing_handler() {
    let session = session();
    let standing = Log::default();
    session.set_standing_resolve_handler(Some(handler("plan submitted", standing.clone())));
    let (action, applies) = recording_action(AST_LABEL, "ast_edit", "preview applied");
    session.queue_resolve_handler(action).unwrap();
    let first = resolved(&session, &apply("Go.")).await;
    assert_eq!(first.text, "preview applied");
    assert_eq!((applies.len(), standing.len()), (1, 0));
    let second = resolved(&session, &apply("Go.")).await;
    assert_eq!(second.text, "plan submitted");
    assert_eq!(standing.len(), 1);
}

#[tokio::test]
async fn standing_handler_creates_no_requirement_and_can_be_cleared() {
    let session = session();
    let standing = Log::default();
    session.set_standing_resolve_handler(Some(handler("plan submitted", standing.clone())));
    assert_eq!(session.next_tool_choice_directive(all_active), None);
    session.set_standing_resolve_handler(None);
    assert!(session.peek_standing_resolve_handler().is_none());
    let result = resolved(&session, &discard("Never mind.")).await;
    assert_eq!(result.text, NOTHING_TO_DISCARD);
    assert_eq!(standing.len(), 0);
}

#[test]
fn forced_tool_choice_serves_the_tool_then_none_then_nothing() {
    let session = session();
    session.set_forced_tool_choice("write", all_active).unwrap();
    let mut served = Vec::new();
    for _ in 0..3 {
        served.push(session.next_tool_choice_directive(all_active));
        session.turn_end(TurnStop::Completed);
    }
    assert_eq!(
        served,
        vec![
            Some(ToolChoiceDirective::Hard(ToolChoice::Tool(
                "write".to_owned()
            ))),
            Some(ToolChoiceDirective::Hard(ToolChoice::None)),
            None,
        ]
    );
}

#[test]
fn forced_tool_that_became_inactive_is_held_back_until_reactivated() {
    let session = session();
    session.set_forced_tool_choice("write", all_active).unwrap();
    let only_bash = |name: &str| name == "bash";
    assert_eq!(session.next_tool_choice_directive(only_bash), None);
    assert!(!session.queue().has_in_flight());
    assert_eq!(
        session.next_tool_choice_directive(all_active),
        Some(ToolChoiceDirective::Hard(ToolChoice::Tool(
            "write".to_owned()
        )))
    );
}

#[test]
fn forcing_an_inactive_tool_is_an_error() {
    let session = session();
    let error = session
        .set_forced_tool_choice("read", |name| name == "bash")
        .unwrap_err();
    assert_eq!(
        error,
        Error::ToolInactive {
            name: "read".to_owned()
        }
    );
    assert_eq!(error.to_string(), "Tool \"read\" is not currently active.");
    assert_eq!(session.queue().inspect(), Vec::<String>::new());
}

#[test]
fn aborted_turn_replays_the_forced_choice() {
    let session = session();
    session.set_forced_tool_choice("write", all_active).unwrap();
    let write = Some(ToolChoiceDirective::Hard(ToolChoice::Tool(
        "write".to_owned(),
    )));
    assert_eq!(session.next_tool_choice_directive(all_active), write);
    session.turn_end(TurnStop::Aborted);
    assert!(!session.queue().has_in_flight());
    assert_eq!(session.next_tool_choice_directive(all_active), write);
    session.turn_end(TurnStop::Completed);
    assert_eq!(
        session.queue().consume_last_served_label(),
        Some("user-force-requeued".to_owned())
    );
}

fn tool(name: &str, deferrable: bool) -> ToolSpec {
    ToolSpec {
        name: name.to_owned(),
        description: String::new(),
        input_schema: json!({"type": "object"}),
        hidden: false,
        strict: false,
        kind: if deferrable {
            ToolKind::Producer
        } else {
            ToolKind::ReadOnly
        },
    }
}

#[test]
fn resolve_is_needed_with_read_only_tools_when_plan_mode_is_enabled() {
    let read_only = [tool("read", false), tool("ls", false), tool("grep", false)];
    assert!(needs_resolve_tool(&read_only, true));
}

#[test]
fn resolve_is_not_needed_without_plan_mode_or_a_deferrable_tool() {
    assert!(!needs_resolve_tool(&[tool("read", false)], false));
    assert!(needs_resolve_tool(
        &[tool("read", false), tool("ast_edit", true)],
        false
    ));
}
