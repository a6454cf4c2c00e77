//! Pending actions and the non-forcing pending-action stack.
//!
//! A [`PendingAction`] is a staged change waiting for `resolve`: a label, the tool that staged
//! it, an async apply and an optional async reject. The [`PendingStack`] holds them by id in
//! stack order: each entry has an `order` (the id counter's value when it was staged), the
//! highest order is the head, and re-registering an id with [`PendingStack::register`] moves it
//! to the head. Durable and in-memory actions draw their orders from one counter, so the head is
//! always the most recently staged action, whenever each one reached the stack.

use std::collections::HashSet;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Map, Value};

use crate::{ActionError, Error, ToolResult};

/// A boxed, sendable future, as the callbacks return.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// Free-form metadata passed through `resolve`'s `extra` argument.
pub type Extra = Map<String, Value>;

/// The apply callback of a pending action: `(reason, extra)`.
pub type ApplyFn =
    Arc<dyn Fn(String, Option<Extra>) -> BoxFuture<Result<ToolResult, ActionError>> + Send + Sync>;

/// The reject callback of a pending action: `(reason, extra)`; `None` means "use the default
/// discard text".
pub type RejectFn = Arc<
    dyn Fn(String, Option<Extra>) -> BoxFuture<Result<Option<ToolResult>, ActionError>>
        + Send
        + Sync,
>;

/// A staged change waiting for `resolve`.
#[derive(Clone)]
pub struct PendingAction {
    /// Short label shown by renderers (`AST Edit: 1 replacement in 1 file`).
    pub label: String,
    /// The tool that staged it (`ast_edit`); part of the pending id.
    pub source_tool: String,
    /// Runs on `resolve` apply.
    pub apply: ApplyFn,
    /// Runs on `resolve` discard; without it, discard returns the default text.
    pub reject: Option<RejectFn>,
}

impl fmt::Debug for PendingAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PendingAction")
            .field("label", &self.label)
            .field("source_tool", &self.source_tool)
            .field("reject", &self.reject.is_some())
            .finish_non_exhaustive()
    }
}

impl PendingAction {
    /// A pending action with an apply callback and no reject callback.
    pub fn new<F, Fut>(label: impl Into<String>, source_tool: impl Into<String>, apply: F) -> Self
    where
        F: Fn(String, Option<Extra>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ToolResult, ActionError>> + Send + 'static,
    {
        Self {
            label: label.into(),
            source_tool: source_tool.into(),
            apply: Arc::new(move |reason, extra| Box::pin(apply(reason, extra))),
            reject: None,
        }
    }

    /// This action with a reject callback.
    #[must_use]
    pub fn with_reject<F, Fut>(mut self, reject: F) -> Self
    where
        F: Fn(String, Option<Extra>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Option<ToolResult>, ActionError>> + Send + 'static,
    {
        self.reject = Some(Arc::new(move |reason, extra| {
            Box::pin(reject(reason, extra))
        }));
        self
    }
}

/// Builds the id of a pending action: `pending-action:<source_tool>:<seq>`.
pub fn pending_id(source_tool: &str, seq: u64) -> String {
    format!("pending-action:{source_tool}:{seq}")
}

/// Hands out the sequence numbers in pending ids; they are monotonic and never reused.
///
/// The default is [`ProcessIdAllocator`]; a durable store persists its counter instead.
pub trait IdAllocator: Send + Sync {
    /// The next sequence number.
    fn next_seq(&self) -> Result<u64, Error>;
}

/// The default id allocator: one counter for the whole process, shared by every session.
#[derive(Debug, Default, Clone, Copy)]
pub struct ProcessIdAllocator;

static PROCESS_SEQ: AtomicU64 = AtomicU64::new(0);

impl IdAllocator for ProcessIdAllocator {
    fn next_seq(&self) -> Result<u64, Error> {
        Ok(PROCESS_SEQ.fetch_add(1, Ordering::Relaxed))
    }
}

/// One registered pending action.
#[derive(Debug, Clone)]
pub struct PendingEntry {
    /// Its unique id.
    pub id: String,
    /// The action itself.
    pub action: Arc<PendingAction>,
    /// Its stack position: the highest order is the head.
    pub order: u64,
}

/// Id and source tool of the head pending action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingHead {
    /// The head's id.
    pub id: String,
    /// The tool that staged it.
    pub source_tool: String,
}

/// The LIFO stack of pending actions, keyed by id and kept in stack order.
///
/// Registering at the head, and finding or removing the head, take constant time however deep
/// the stack is: a set of the ids answers "is it here?", and lookups search from the head down.
/// Registering below the head (an action that reaches the stack after a newer one) shifts the
/// entries above it.
#[derive(Debug, Default, Clone)]
pub struct PendingStack {
    /// Lowest order first, equal orders in registration order; the last entry is the head.
    /// Ids are unique.
    entries: Vec<PendingEntry>,
    /// The ids of `entries`.
    ids: HashSet<String>,
}

impl PendingStack {
    /// Register `action` under `id` at the head; an id already present moves to the head.
    pub fn register(&mut self, id: impl Into<String>, action: Arc<PendingAction>) {
        let id = id.into();
        let own = self.get(&id).map(|entry| entry.order);
        self.remove(&id);
        let head = self.entries.last().map(|entry| entry.order);
        let order = own.max(head).unwrap_or(0);
        self.ids.insert(id.clone());
        self.entries.push(PendingEntry { id, action, order });
    }

    /// Register `action` under `id` at stack position `order` (an id counter value): above every
    /// entry with a lower or equal order, below every entry with a higher one. An id already
    /// present moves there.
    pub fn register_at(&mut self, id: impl Into<String>, order: u64, action: Arc<PendingAction>) {
        let id = id.into();
        self.remove(&id);
        let index = self.entries.partition_point(|entry| entry.order <= order);
        self.ids.insert(id.clone());
        self.entries
            .insert(index, PendingEntry { id, action, order });
    }

    /// Keep only the entries for which `keep` is true.
    pub fn retain(&mut self, mut keep: impl FnMut(&PendingEntry) -> bool) {
        let ids = &mut self.ids;
        self.entries.retain(|entry| {
            let kept = keep(entry);
            if !kept {
                ids.remove(&entry.id);
            }
            kept
        });
    }

    /// Remove the entry with `id`; returns whether it was present.
    pub fn remove(&mut self, id: &str) -> bool {
        let Some(index) = self.position(id) else {
            return false;
        };
        self.ids.remove(id);
        self.entries.remove(index);
        true
    }

    /// Drop every entry.
    pub fn clear(&mut self) {
        self.entries.clear();
        self.ids.clear();
    }

    /// Where `id` is in `entries`, searching from the head.
    fn position(&self, id: &str) -> Option<usize> {
        if !self.ids.contains(id) {
            return None;
        }
        self.entries.iter().rposition(|entry| entry.id == id)
    }

    /// Whether anything is pending.
    pub fn has_pending(&self) -> bool {
        !self.entries.is_empty()
    }

    /// How many actions are pending.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the stack is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The head (most recently registered) entry.
    pub fn peek(&self) -> Option<&PendingEntry> {
        self.entries.last()
    }

    /// Id and source tool of the head.
    pub fn peek_head(&self) -> Option<PendingHead> {
        self.peek().map(|entry| PendingHead {
            id: entry.id.clone(),
            source_tool: entry.action.source_tool.clone(),
        })
    }

    /// The entry with `id`.
    pub fn get(&self, id: &str) -> Option<&PendingEntry> {
        self.position(id).and_then(|index| self.entries.get(index))
    }

    /// Whether `id` is pending.
    pub fn contains(&self, id: &str) -> bool {
        self.ids.contains(id)
    }

    /// Entries head first.
    pub fn iter(&self) -> impl Iterator<Item = &PendingEntry> {
        self.entries.iter().rev()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noop(label: &str) -> Arc<PendingAction> {
        Arc::new(PendingAction::new(label, "t", |_reason, _extra| async {
            Ok(ToolResult::text("ok"))
        }))
    }

    /// A stack with each `(id, label)` registered in order.
    fn stack_of(entries: &[(&str, &str)]) -> PendingStack {
        let mut stack = PendingStack::default();
        for (id, label) in entries {
            stack.register(*id, noop(label));
        }
        stack
    }

    #[test]
    fn registering_an_id_again_moves_it_to_the_head_without_a_duplicate() {
        let mut stack = stack_of(&[("a", "A"), ("b", "B"), ("a", "A2")]);
        assert_eq!(stack.len(), 2);
        assert_eq!(stack.peek().map(|entry| entry.id.as_str()), Some("a"));
        assert_eq!(
            stack.get("a").map(|entry| entry.action.label.as_str()),
            Some("A2")
        );
        assert!(stack.remove("a"));
        assert!(!stack.remove("a"));
        assert!(!stack.contains("a"));
        assert_eq!(stack.peek().map(|entry| entry.id.as_str()), Some("b"));
        stack.clear();
        assert!(stack.is_empty() && !stack.contains("b"));
    }

    fn ids(stack: &PendingStack) -> Vec<&str> {
        stack.iter().map(|entry| entry.id.as_str()).collect()
    }

    #[test]
    fn an_action_registered_late_with_an_older_order_goes_below_the_newer_ones() {
        let mut stack = PendingStack::default();
        stack.register_at("custom:8", 8, noop("custom"));
        stack.register_at("edit:7", 7, noop("edit"));
        assert_eq!(ids(&stack), vec!["custom:8", "edit:7"]);
        stack.register_at("write:9", 9, noop("write"));
        assert_eq!(ids(&stack), vec!["write:9", "custom:8", "edit:7"]);
        // Requeued at the head: above everything, below whatever is staged next.
        stack.register("edit:7", noop("edit"));
        assert_eq!(ids(&stack), vec!["edit:7", "write:9", "custom:8"]);
        stack.register_at("ast_edit:10", 10, noop("ast"));
        assert_eq!(
            ids(&stack),
            vec!["ast_edit:10", "edit:7", "write:9", "custom:8"]
        );
        stack.retain(|entry| entry.id != "write:9");
        assert_eq!(ids(&stack), vec!["ast_edit:10", "edit:7", "custom:8"]);
        assert!(!stack.contains("write:9"));
    }
}
