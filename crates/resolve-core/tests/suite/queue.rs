//! The consuming hard-directive queue: each directive is handed out once, in order.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use pretty_assertions::assert_eq;
use resolve_core::{PushOptions, ResolveAction};
use resolve_core::{
    RejectInfo, RejectOutcome, RejectReason, ResolveArgs, ResolveHandler, ResolveInfo, ToolChoice,
    ToolChoiceQueue, ToolResult,
};
use serde_json::json;

use super::common::{Log, assert_serves_next, queue_forcing};

fn forced() -> ToolChoice {
    ToolChoice::Tool("write".to_owned())
}

/// An `on_invoked` handler that counts its calls and echoes its input in the details.
fn echo_handler(calls: Arc<AtomicUsize>) -> ResolveHandler {
    Arc::new(move |args: ResolveArgs| {
        calls.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move {
            Ok(ToolResult::text("handled").with_details(json!({"echoed": args.to_value()})))
        })
    })
}

fn apply_args() -> ResolveArgs {
    ResolveArgs::new(ResolveAction::Apply, "Go ahead.")
}

#[test]
fn push_once_then_resolve_fires_on_resolved_with_the_served_choice() {
    let mut queue = ToolChoiceQueue::new();
    let resolved = Log::default();
    let log = resolved.clone();
    queue.push_once(
        forced(),
        PushOptions::new().on_resolved(move |info: &ResolveInfo| log.push(info.clone())),
    );
    assert_eq!(queue.next_tool_choice(), Some(forced()));
    queue.resolve();
    assert_eq!(resolved.all(), vec![ResolveInfo { choice: forced() }]);
}

/// A queue holding `choices` as one directive (with `options`) whose rejected yields answer
/// `outcome`, and the log of those rejections.
fn logging_rejections(
    choices: Vec<ToolChoice>,
    options: PushOptions,
    outcome: RejectOutcome,
) -> (ToolChoiceQueue, Log<RejectInfo>) {
    let mut queue = ToolChoiceQueue::new();
    let rejected = Log::default();
    let log = rejected.clone();
    queue.push_sequence(
        choices,
        options.on_rejected(move |info: &RejectInfo| {
            log.push(info.clone());
            outcome
        }),
    );
    (queue, rejected)
}

#[test]
fn requeued_sequence_replays_only_the_lost_yield_then_continues() {
    let (mut queue, rejected) = logging_rejections(
        vec![forced(), ToolChoice::None],
        PushOptions::new(),
        RejectOutcome::Requeue,
    );
    assert_eq!(queue.next_tool_choice(), Some(forced()));
    queue.reject(RejectReason::Aborted);
    assert_eq!(
        rejected.all(),
        vec![RejectInfo {
            choice: forced(),
            reason: RejectReason::Aborted
        }]
    );
    assert_eq!(queue.next_tool_choice(), Some(forced()), "the replay");
    queue.resolve();
    assert_eq!(queue.next_tool_choice(), Some(ToolChoice::None));
    queue.resolve();
    assert_eq!(queue.next_tool_choice(), None);
}

#[test]
fn rejected_yield_is_gone_when_on_rejected_drops_it() {
    let mut queue = ToolChoiceQueue::new();
    queue.push_once(
        forced(),
        PushOptions::new().on_rejected(|_: &RejectInfo| RejectOutcome::Drop),
    );
    assert_eq!(queue.next_tool_choice(), Some(forced()));
    queue.reject(RejectReason::Aborted);
    assert_eq!(queue.next_tool_choice(), None);
}

#[test]
fn requeued_directive_keeps_on_rejected_until_it_drops() {
    let mut queue = ToolChoiceQueue::new();
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&calls);
    queue.push_once(
        forced(),
        PushOptions::new().on_rejected(move |_: &RejectInfo| {
            if counter.fetch_add(1, Ordering::SeqCst) < 2 {
                RejectOutcome::Requeue
            } else {
                RejectOutcome::Drop
            }
        }),
    );
    for _ in 0..3 {
        assert_eq!(queue.next_tool_choice(), Some(forced()));
        queue.reject(RejectReason::Aborted);
    }
    assert_eq!(calls.load(Ordering::SeqCst), 3);
    assert_eq!(queue.next_tool_choice(), None);
    assert_eq!(queue.inspect(), Vec::<String>::new());
}

#[test]
fn remove_by_label_drops_only_queued_directives_with_that_label() {
    let mut queue = queue_forcing(&[("todo", "eager-todo"), ("read", "user-force")]);
    queue.remove_by_label("eager-todo");
    assert_serves_next(&mut queue, &["user-force"], "read");
}

#[test]
fn remove_by_label_rejects_the_in_flight_directive_as_removed() {
    let (mut queue, rejected) = logging_rejections(
        vec![forced()],
        PushOptions::new().label("eager-todo"),
        RejectOutcome::Drop,
    );
    queue.next_tool_choice();
    queue.remove_by_label("eager-todo");
    assert_eq!(
        rejected.all(),
        vec![RejectInfo {
            choice: forced(),
            reason: RejectReason::Removed
        }]
    );
    assert!(!queue.has_in_flight());
    assert_eq!(queue.next_tool_choice(), None);
}

#[test]
fn remove_by_label_keeps_a_replay_requeued_during_the_removal() {
    let mut queue = ToolChoiceQueue::new();
    queue.push_once(
        forced(),
        PushOptions::new()
            .label("user-force")
            .on_rejected(|_: &RejectInfo| RejectOutcome::Requeue),
    );
    queue.next_tool_choice();
    queue.remove_by_label("user-force");
    assert_eq!(queue.inspect(), vec!["user-force-requeued".to_owned()]);
    assert_eq!(queue.next_tool_choice(), Some(forced()));
}

#[test]
fn clear_rejects_in_flight_as_cleared_and_empties_even_a_requeue() {
    let (mut queue, rejected) = logging_rejections(
        vec![forced(), ToolChoice::None],
        PushOptions::new(),
        RejectOutcome::Requeue,
    );
    queue.next_tool_choice();
    queue.clear();
    assert_eq!(
        rejected.all(),
        vec![RejectInfo {
            choice: forced(),
            reason: RejectReason::Cleared
        }]
    );
    assert_eq!(queue.next_tool_choice(), None);
    assert_eq!(queue.inspect(), Vec::<String>::new());
}

#[test]
fn consume_last_served_label_returns_the_resolved_label_once() {
    let mut queue = ToolChoiceQueue::new();
    queue.push_once(forced(), PushOptions::new().label("user-force"));
    queue.next_tool_choice();
    queue.resolve();
    assert_eq!(
        queue.consume_last_served_label(),
        Some("user-force".to_owned())
    );
    assert_eq!(queue.consume_last_served_label(), None);
}

#[test]
fn has_in_flight_is_true_only_between_next_and_resolve() {
    let mut queue = ToolChoiceQueue::new();
    assert!(!queue.has_in_flight());
    queue.push_once(forced(), PushOptions::new());
    queue.next_tool_choice();
    assert!(queue.has_in_flight());
    queue.resolve();
    assert!(!queue.has_in_flight());
}

#[tokio::test]
async fn in_flight_invoker_passes_its_input_to_on_invoked() {
    let mut queue = ToolChoiceQueue::new();
    let calls = Arc::new(AtomicUsize::new(0));
    queue.push_once(
        forced(),
        PushOptions::new().on_invoked(echo_handler(Arc::clone(&calls))),
    );
    queue.next_tool_choice();
    let invoker = queue
        .peek_in_flight_invoker()
        .expect("an invoker in flight");
    let result = invoker(apply_args()).await.unwrap();
    assert_eq!(
        result.details,
        Some(json!({"echoed": {"action": "apply", "reason": "Go ahead."}}))
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[test]
fn on_invoked_directive_resolved_without_invocation_is_rejected_not_invoked() {
    let mut queue = ToolChoiceQueue::new();
    let rejected = Log::default();
    let resolved = Log::<ResolveInfo>::default();
    let (reject_log, resolve_log) = (rejected.clone(), resolved.clone());
    queue.push_once(
        forced(),
        PushOptions::new()
            .on_invoked(echo_handler(Arc::new(AtomicUsize::new(0))))
            .on_resolved(move |info: &ResolveInfo| resolve_log.push(info.clone()))
            .on_rejected(move |info: &RejectInfo| {
                reject_log.push(info.reason);
                RejectOutcome::Requeue
            }),
    );
    queue.next_tool_choice();
    queue.resolve();
    assert_eq!(rejected.all(), vec![RejectReason::NotInvoked]);
    assert_eq!(resolved.len(), 0, "on_resolved must not fire");
    assert_eq!(queue.next_tool_choice(), Some(forced()), "replayed");
}

#[tokio::test]
async fn invoked_directive_resolves_and_leaves_nothing_in_flight() {
    let mut queue = ToolChoiceQueue::new();
    let resolved = Log::default();
    let log = resolved.clone();
    queue.push_once(
        forced(),
        PushOptions::new()
            .on_invoked(echo_handler(Arc::new(AtomicUsize::new(0))))
            .on_resolved(move |info: &ResolveInfo| log.push(info.clone())),
    );
    queue.next_tool_choice();
    let invoker = queue
        .peek_in_flight_invoker()
        .expect("an invoker in flight");
    invoker(apply_args()).await.unwrap();
    queue.resolve();
    assert_eq!(resolved.all(), vec![ResolveInfo { choice: forced() }]);
    assert!(!queue.has_in_flight());
}

#[test]
fn peek_in_flight_invoker_is_none_with_nothing_in_flight() {
    let mut queue = ToolChoiceQueue::new();
    assert!(queue.peek_in_flight_invoker().is_none());
    queue.push_once(
        forced(),
        PushOptions::new().on_invoked(echo_handler(Arc::new(AtomicUsize::new(0)))),
    );
    assert!(
        queue.peek_in_flight_invoker().is_none(),
        "queued but not yet served"
    );
}

#[tokio::test]
async fn on_invoked_survives_a_requeue() {
    let mut queue = ToolChoiceQueue::new();
    let calls = Arc::new(AtomicUsize::new(0));
    queue.push_once(
        forced(),
        PushOptions::new()
            .on_invoked(echo_handler(Arc::clone(&calls)))
            .on_rejected(|_: &RejectInfo| RejectOutcome::Requeue),
    );
    queue.next_tool_choice();
    queue.reject(RejectReason::Aborted);
    assert_eq!(queue.next_tool_choice(), Some(forced()));
    let invoker = queue
        .peek_in_flight_invoker()
        .expect("the replay keeps on_invoked");
    let result = invoker(apply_args()).await.unwrap();
    assert_eq!(result.text, "handled");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[test]
fn push_now_puts_a_directive_ahead_of_queued_ones() {
    let mut queue = ToolChoiceQueue::new();
    queue.push_once(forced(), PushOptions::new());
    queue.push_once(
        ToolChoice::Required,
        PushOptions::new().label("urgent").now(),
    );
    assert_eq!(
        queue.inspect(),
        vec!["urgent".to_owned(), "anonymous".to_owned()]
    );
    assert_eq!(queue.next_tool_choice(), Some(ToolChoice::Required));
}

#[test]
fn resolve_and_reject_without_in_flight_do_nothing() {
    let mut queue = ToolChoiceQueue::new();
    let calls = Arc::new(AtomicUsize::new(0));
    let (a, b) = (Arc::clone(&calls), Arc::clone(&calls));
    queue.push_once(
        forced(),
        PushOptions::new()
            .on_resolved(move |_: &ResolveInfo| {
                a.fetch_add(1, Ordering::SeqCst);
            })
            .on_rejected(move |_: &RejectInfo| {
                b.fetch_add(1, Ordering::SeqCst);
                RejectOutcome::Drop
            }),
    );
    queue.resolve();
    queue.reject(RejectReason::Error);
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    assert_eq!(queue.next_tool_choice(), Some(forced()), "still queued");
}
