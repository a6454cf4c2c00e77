//! Helpers shared by the suite: deterministic ids, recording callbacks and argument builders.

use std::future::Future;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use resolve_core::{
    ActionError, Error, Extra, IdAllocator, PendingAction, PendingStack, PushOptions,
    ResolveSession, ToolChoice, ToolChoiceQueue, ToolResult,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// Sequence numbers 0, 1, 2, … private to one allocator, so ids are deterministic.
#[derive(Debug, Default)]
pub struct SeqIds(AtomicU64);

impl IdAllocator for SeqIds {
    fn next_seq(&self) -> Result<u64, Error> {
        Ok(self.0.fetch_add(1, Ordering::SeqCst))
    }
}

/// A session whose pending ids count from 0.
pub fn session() -> ResolveSession {
    ResolveSession::new().with_id_allocator(Arc::new(SeqIds::default()))
}

/// The ids on `stack`, head first.
pub fn stack_ids(stack: &PendingStack) -> Vec<String> {
    stack.iter().map(|entry| entry.id.clone()).collect()
}

/// The ids pending in `session`, head first.
pub fn pending_ids(session: &ResolveSession) -> Vec<String> {
    stack_ids(session.queue().pending())
}

/// A queue forcing each `(tool, label)` once, in order.
pub fn queue_forcing(tools: &[(&str, &str)]) -> ToolChoiceQueue {
    let mut queue = ToolChoiceQueue::new();
    for (tool, label) in tools {
        queue.push_once(
            ToolChoice::Tool((*tool).to_owned()),
            PushOptions::new().label(*label),
        );
    }
    queue
}

/// Assert that `queue` holds the directives labelled `labels` and serves the tool `tool` next.
pub fn assert_serves_next(queue: &mut ToolChoiceQueue, labels: &[&str], tool: &str) {
    let labels: Vec<String> = labels.iter().map(|label| (*label).to_owned()).collect();
    assert_eq!(queue.inspect(), labels);
    assert_eq!(
        queue.next_tool_choice(),
        Some(ToolChoice::Tool(tool.to_owned()))
    );
}

/// An `edit` action on `a.rs` whose apply counts its runs (the returned counter) and then
/// answers with `apply(reason)`.
pub fn counting_edit<F, Fut>(apply: F) -> (PendingAction, Arc<AtomicUsize>)
where
    F: Fn(String) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ToolResult, ActionError>> + Send + 'static,
{
    let runs = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&runs);
    let action = PendingAction::new("Edit: a.rs", "edit", move |reason, _| {
        counter.fetch_add(1, Ordering::SeqCst);
        apply(reason)
    });
    (action, runs)
}

/// The result of calling `resolve` with `args` in `session`, which must succeed.
pub async fn resolved(session: &ResolveSession, args: &Value) -> ToolResult {
    session.execute_resolve(args, &token()).await.unwrap()
}

/// The error of calling `resolve` with `args` in `session`, which must fail.
pub async fn refused(session: &ResolveSession, args: &Value) -> Error {
    session.execute_resolve(args, &token()).await.unwrap_err()
}

/// A shared, append-only log of values seen by callbacks.
#[derive(Debug)]
pub struct Log<T>(Arc<Mutex<Vec<T>>>);

impl<T> Clone for Log<T> {
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

impl<T> Default for Log<T> {
    fn default() -> Self {
        Self(Arc::new(Mutex::new(Vec::new())))
    }
}

impl<T: Clone> Log<T> {
    pub fn push(&self, value: T) {
        self.0.lock().unwrap().push(value);
    }

    pub fn all(&self) -> Vec<T> {
        self.0.lock().unwrap().clone()
    }

    pub fn len(&self) -> usize {
        self.0.lock().unwrap().len()
    }
}

/// What a pending action's callback was called with.
#[derive(Debug, Clone, PartialEq)]
pub struct CallbackCall {
    pub reason: String,
    pub extra: Option<Extra>,
}

/// A pending action whose apply records its arguments and returns `text`.
pub fn recording_action(label: &str, tool: &str, text: &str) -> (PendingAction, Log<CallbackCall>) {
    let calls = Log::default();
    let log = calls.clone();
    let text = text.to_owned();
    let action = PendingAction::new(label, tool, move |reason, extra| {
        log.push(CallbackCall { reason, extra });
        let result = ToolResult::text(text.clone());
        async move { Ok(result) }
    });
    (action, calls)
}

/// `resolve` arguments applying with `reason`.
pub fn apply(reason: &str) -> Value {
    json!({"action": "apply", "reason": reason})
}

/// `resolve` arguments discarding with `reason`.
pub fn discard(reason: &str) -> Value {
    json!({"action": "discard", "reason": reason})
}

/// A token that is never cancelled.
pub fn token() -> CancellationToken {
    CancellationToken::new()
}

/// `value` as an `extra` map.
pub fn extra(value: Value) -> Extra {
    match value {
        Value::Object(map) => map,
        other => panic!("extra must be an object, got {other}"),
    }
}

/// `text` without ANSI escape sequences (`ESC [ … letter`).
pub fn strip_ansi(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}
