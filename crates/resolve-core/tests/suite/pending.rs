//! The pending-action stack and pending ids.

use std::sync::Arc;

use pretty_assertions::assert_eq;
use resolve_core::{
    Error, IdAllocator, PendingAction, PendingHead, PendingStack, ResolveSession, ToolChoiceQueue,
    pending_id,
};

use super::common::{
    apply, assert_serves_next, queue_forcing, recording_action, resolved, session, stack_ids,
};

fn action(tool: &str) -> Arc<PendingAction> {
    Arc::new(recording_action(&format!("{tool}: something"), tool, "done").0)
}

#[test]
fn latest_registration_is_the_head() {
    let mut stack = PendingStack::default();
    stack.register("A", action("edit"));
    stack.register("B", action("write"));
    assert_eq!(
        stack.peek_head(),
        Some(PendingHead {
            id: "B".to_owned(),
            source_tool: "write".to_owned()
        })
    );
}

#[test]
fn removing_the_head_exposes_the_one_below() {
    let mut stack = PendingStack::default();
    stack.register("A", action("edit"));
    stack.register("B", action("write"));
    assert!(stack.remove("B"));
    assert_eq!(stack.peek().map(|entry| entry.id.as_str()), Some("A"));
    assert!(!stack.remove("B"), "removing an absent id is a no-op");
    assert_eq!(stack.len(), 1);
}

#[test]
fn re_registering_an_id_moves_it_to_the_head_without_duplicating_it() {
    let mut stack = PendingStack::default();
    stack.register("A", action("edit"));
    stack.register("B", action("write"));
    stack.register("A", action("edit"));
    assert_eq!(stack_ids(&stack), vec!["A".to_owned(), "B".to_owned()]);
    assert_eq!(stack.len(), 2);
    stack.register("A", action("edit"));
    assert_eq!(stack.len(), 2, "same-id re-register does not duplicate");
}

#[test]
fn clearing_pending_actions_leaves_hard_directives_intact() {
    let mut queue = queue_forcing(&[("todo", "eager-todo")]);
    queue.pending_mut().register("A", action("edit"));
    queue.pending_mut().clear();
    assert!(!queue.pending().has_pending());
    assert_serves_next(&mut queue, &["eager-todo"], "todo");
}

#[test]
fn clearing_the_queue_empties_the_pending_stack() {
    let mut queue = ToolChoiceQueue::new();
    queue.pending_mut().register("A", action("edit"));
    queue.pending_mut().register("B", action("write"));
    queue.clear();
    assert!(queue.pending().is_empty());
    assert_eq!(queue.pending().peek_head(), None);
}

#[test]
fn pending_ids_name_the_source_tool_and_a_sequence_number() {
    assert_eq!(pending_id("ast_edit", 0), "pending-action:ast_edit:0");
    let session = session();
    let first = session
        .queue_resolve_handler(recording_action("AST Edit: x", "ast_edit", "ok").0)
        .unwrap();
    let second = session
        .queue_resolve_handler(recording_action("Edit: a.rs", "edit", "ok").0)
        .unwrap();
    assert_eq!(
        vec![first, second],
        vec![
            "pending-action:ast_edit:0".to_owned(),
            "pending-action:edit:1".to_owned()
        ]
    );
}

#[tokio::test]
async fn pending_ids_are_never_reused_after_an_action_is_consumed() {
    let session = session();
    let first = session
        .queue_resolve_handler(recording_action("Edit: a.rs", "edit", "ok").0)
        .unwrap();
    resolved(&session, &apply("Looks right.")).await;
    let second = session
        .queue_resolve_handler(recording_action("Edit: a.rs", "edit", "ok").0)
        .unwrap();
    assert_eq!(first, "pending-action:edit:0");
    assert_eq!(second, "pending-action:edit:1");
}

fn seq_of(id: &str) -> u64 {
    id.rsplit(':').next().unwrap().parse().unwrap()
}

#[test]
fn default_ids_are_monotonic_across_sessions_of_one_process() {
    let (one, two) = (ResolveSession::new(), ResolveSession::new());
    let mut seqs = Vec::new();
    for round in 0..4 {
        let session = if round % 2 == 0 { &one } else { &two };
        let id = session
            .queue_resolve_handler(recording_action("Write: a", "write", "ok").0)
            .unwrap();
        assert!(id.starts_with("pending-action:write:"), "{id}");
        seqs.push(seq_of(&id));
    }
    assert!(
        seqs.windows(2).all(|pair| pair[0] < pair[1]),
        "not strictly increasing: {seqs:?}"
    );
}

struct FailingIds;

impl IdAllocator for FailingIds {
    fn next_seq(&self) -> Result<u64, Error> {
        Err(Error::PendingSource("id counter unavailable".to_owned()))
    }
}

#[test]
fn failing_id_allocator_stages_nothing() {
    let session = ResolveSession::new().with_id_allocator(Arc::new(FailingIds));
    let outcome = session.queue_resolve_handler(recording_action("Write: a", "write", "ok").0);
    assert_eq!(
        outcome,
        Err(Error::PendingSource("id counter unavailable".to_owned()))
    );
    assert!(!session.queue().pending().has_pending());
}
