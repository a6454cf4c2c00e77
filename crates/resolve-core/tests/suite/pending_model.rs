//! The pending stack against a model: under random sequences of operations, `PendingStack`
//! and a session's `resolve` dispatch behave exactly like a plain LIFO list of ids.

use std::sync::Arc;

use proptest::prelude::*;
use resolve_core::{ActionError, PendingAction, PendingStack, ToolResult};
use serde_json::json;

use super::common::{pending_ids, session, stack_ids, token};

/// An operation on the stack; ids are drawn from a small pool so they collide often.
#[derive(Debug, Clone)]
enum Op {
    Register(u8),
    Remove(u8),
    Clear,
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    let op = prop_oneof![
        5 => (0u8..6).prop_map(Op::Register),
        3 => (0u8..6).prop_map(Op::Remove),
        1 => Just(Op::Clear),
    ];
    prop::collection::vec(op, 0..40)
}

fn id(key: u8) -> String {
    format!("pending-action:t{key}:{key}")
}

/// An action whose label says which registration made it.
fn labelled(step: usize, key: u8) -> Arc<PendingAction> {
    Arc::new(PendingAction::new(
        format!("step {step}"),
        format!("t{key}"),
        |_reason, _extra| async { Ok(ToolResult::text("applied")) },
    ))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn the_pending_stack_behaves_like_a_lifo_list_of_ids(ops in ops()) {
        let mut stack = PendingStack::default();
        // Oldest first, each id once, with the step that registered it.
        let mut model: Vec<(u8, usize)> = Vec::new();
        for (step, op) in ops.into_iter().enumerate() {
            match op {
                Op::Register(key) => {
                    stack.register(id(key), labelled(step, key));
                    model.retain(|(k, _)| *k != key);
                    model.push((key, step));
                }
                Op::Remove(key) => {
                    let present = model.iter().any(|(k, _)| *k == key);
                    prop_assert_eq!(stack.remove(&id(key)), present);
                    model.retain(|(k, _)| *k != key);
                }
                Op::Clear => {
                    stack.clear();
                    model.clear();
                }
            }
            let head_first: Vec<String> = model.iter().rev().map(|(k, _)| id(*k)).collect();
            let actual = stack_ids(&stack);
            prop_assert_eq!(&actual, &head_first);
            prop_assert_eq!(stack.len(), model.len());
            prop_assert_eq!(stack.is_empty(), model.is_empty());
            prop_assert_eq!(stack.has_pending(), !model.is_empty());
            prop_assert_eq!(stack.peek().map(|e| e.id.clone()), head_first.first().cloned());
            prop_assert_eq!(
                stack.peek_head().map(|head| head.source_tool),
                model.last().map(|(k, _)| format!("t{k}"))
            );
            for key in 0u8..6 {
                let expected = model.iter().find(|(k, _)| *k == key).map(|(_, step)| format!("step {step}"));
                prop_assert_eq!(stack.contains(&id(key)), expected.is_some());
                prop_assert_eq!(stack.get(&id(key)).map(|e| e.action.label.clone()), expected);
            }
        }
    }

    #[test]
    fn resolve_always_consumes_the_head_and_a_failed_apply_keeps_it(
        steps in prop::collection::vec((0u8..3, any::<bool>()), 1..25),
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let session = session();
        let mut model: Vec<String> = Vec::new();
        for (kind, failing) in steps {
            match kind {
                // Stage an action whose apply fails or succeeds.
                0 => {
                    let action = PendingAction::new("label", "tool", move |_reason, _extra| async move {
                        if failing {
                            Err(ActionError::Failed("disk on fire".into()))
                        } else {
                            Ok(ToolResult::text("applied"))
                        }
                    });
                    model.push(session.queue_resolve_handler(action).unwrap());
                }
                // Apply or discard the head.
                _ => {
                    let action = if kind == 1 { "apply" } else { "discard" };
                    let result = runtime.block_on(session.execute_resolve(
                        &json!({"action": action, "reason": "model"}),
                        &token(),
                    ));
                    let head = model.last().cloned();
                    let applied_ok = result.is_ok();
                    match (head, action) {
                        (None, "apply") => prop_assert!(!applied_ok, "apply with nothing pending succeeded"),
                        (None, _) => prop_assert!(applied_ok, "discard with nothing pending failed"),
                        (Some(_), "discard") => {
                            prop_assert!(applied_ok);
                            model.pop();
                        }
                        (Some(_), _) => {
                            if applied_ok {
                                model.pop();
                            }
                        }
                    }
                }
            }
            let actual = pending_ids(&session);
            let expected: Vec<String> = model.iter().rev().cloned().collect();
            prop_assert_eq!(actual, expected);
        }
    }
}
