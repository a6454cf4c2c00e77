//! [`ResolveSession`]: one session's tool-choice queue, pending stack, standing handler and id
//! allocator, with the `resolve` dispatch and the per-turn directive.
//!
//! Dispatch order for a `resolve` call: the in-flight hard directive's invoker, then the head
//! pending action, then the standing handler. Calls are serialized per session, so two
//! concurrent `resolve` calls act on the stack one after the other and never consume one
//! pending action twice.
//!
//! Cancellation: a call whose token is already cancelled fails at once with `Aborted:
//! Cancelled`. If the token fires while a callback runs, the call returns the same error at once
//! and the callback's future is dropped at its next `.await`; the pending action stays
//! registered, because an action is consumed only when its callback returns normally. Work a
//! callback has handed to another thread (resolve-edit runs its transactional apply that way)
//! finishes there and records its own outcome.

use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::pending::{
    IdAllocator, PendingAction, PendingEntry, PendingStack, ProcessIdAllocator, pending_id,
};
use crate::queue::{PushOptions, RejectOutcome, RejectReason, ToolChoiceQueue};
use crate::resolve::{
    NOTHING_TO_DISCARD, ResolveAction, ResolveArgs, ResolveHandler, base_details,
    run_resolve_invocation,
};
use crate::{
    Error, RESOLVE_TOOL_NAME, ReminderMessage, SoftToolRequirement, ToolChoice,
    ToolChoiceDirective, ToolResult,
};

/// Keeps the pending stack in step with actions staged or consumed outside this session
/// (for example by other processes sharing a durable store).
pub trait PendingSource: Send + Sync {
    /// Add actions that appeared and remove actions that were consumed elsewhere.
    fn refresh(&self, stack: &mut PendingStack) -> Result<(), Error>;
}

/// How a model turn ended, for [`ResolveSession::turn_end`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TurnStop {
    /// The turn finished normally.
    Completed,
    /// The turn was aborted.
    Aborted,
    /// The turn ended with an error.
    Error,
}

/// The state `resolve` works on for one session.
pub struct ResolveSession {
    queue: Mutex<ToolChoiceQueue>,
    standing: Mutex<Option<ResolveHandler>>,
    ids: Arc<dyn IdAllocator>,
    source: Option<Arc<dyn PendingSource>>,
    dispatch: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for ResolveSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResolveSession")
            .field("queue", &*self.queue())
            .finish_non_exhaustive()
    }
}

impl Default for ResolveSession {
    fn default() -> Self {
        Self::new()
    }
}

enum Target {
    Handler(ResolveHandler),
    Pending(PendingEntry),
    Nothing,
}

impl ResolveSession {
    /// A session with an empty queue and the process-wide id counter.
    pub fn new() -> Self {
        Self {
            queue: Mutex::new(ToolChoiceQueue::new()),
            standing: Mutex::new(None),
            ids: Arc::new(ProcessIdAllocator),
            source: None,
            dispatch: tokio::sync::Mutex::new(()),
        }
    }

    /// This session with another id allocator. By default ids come from one process-wide
    /// counter.
    #[must_use]
    pub fn with_id_allocator(mut self, ids: Arc<dyn IdAllocator>) -> Self {
        self.ids = ids;
        self
    }

    /// This session refreshing its pending stack from `source` before every dispatch and every
    /// directive. By default there is no source.
    #[must_use]
    pub fn with_pending_source(mut self, source: Arc<dyn PendingSource>) -> Self {
        self.source = Some(source);
        self
    }

    /// The tool-choice queue (with the pending stack). Do not hold the guard across `.await`.
    pub fn queue(&self) -> MutexGuard<'_, ToolChoiceQueue> {
        self.queue
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Stage `action` as a pending action under a fresh `pending-action:<tool>:<seq>` id, at
    /// the head of the stack; returns the id.
    pub fn queue_resolve_handler(&self, action: PendingAction) -> Result<String, Error> {
        let id = pending_id(&action.source_tool, self.ids.next_seq()?);
        self.queue()
            .pending_mut()
            .register(id.clone(), Arc::new(action));
        Ok(id)
    }

    /// Bring the pending stack up to date with the pending source, if any.
    pub fn refresh_pending(&self) -> Result<(), Error> {
        let mut queue = self.queue();
        self.refresh_locked(&mut queue)
    }

    fn refresh_locked(&self, queue: &mut ToolChoiceQueue) -> Result<(), Error> {
        match &self.source {
            Some(source) => source.refresh(queue.pending_mut()),
            None => Ok(()),
        }
    }

    /// Install (`Some`) or clear (`None`) the standing resolve handler.
    pub fn set_standing_resolve_handler(&self, handler: Option<ResolveHandler>) {
        *self
            .standing
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = handler;
    }

    /// The standing resolve handler, if one is installed.
    pub fn peek_standing_resolve_handler(&self) -> Option<ResolveHandler> {
        self.standing
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// What the next model call should do, resolved once per logical turn.
    ///
    /// In order: a consumed hard choice (a choice naming a tool for which `is_active` is false
    /// is rejected as unavailable and skipped); else a soft requirement for the head pending
    /// action (a peek: nothing advances); else `None`.
    pub fn next_tool_choice_directive(
        &self,
        is_active: impl Fn(&str) -> bool,
    ) -> Option<ToolChoiceDirective> {
        let mut queue = self.queue();
        if let Some(choice) = queue.next_tool_choice() {
            match choice.tool_name() {
                Some(name) if !is_active(name) => queue.reject(RejectReason::Unavailable),
                Some(_) | None => return Some(ToolChoiceDirective::Hard(choice)),
            }
        }
        // A source that cannot be read leaves the stack as it was; dispatch reports the error.
        let _ = self.refresh_locked(&mut queue);
        queue.pending().peek_head().map(|head| {
            ToolChoiceDirective::Soft(SoftToolRequirement {
                id: head.id,
                tool_name: RESOLVE_TOOL_NAME.to_owned(),
                reminder: vec![ReminderMessage::resolve(&head.source_tool)],
            })
        })
    }

    /// Force `name` for the next turn, then `none` (the `user-force` directive); it is replayed
    /// when rejected.
    pub fn set_forced_tool_choice(
        &self,
        name: &str,
        is_active: impl Fn(&str) -> bool,
    ) -> Result<(), Error> {
        if !is_active(name) {
            return Err(Error::ToolInactive {
                name: name.to_owned(),
            });
        }
        self.queue().push_sequence(
            vec![ToolChoice::Tool(name.to_owned()), ToolChoice::None],
            PushOptions::new()
                .label("user-force")
                .on_rejected(|_| RejectOutcome::Requeue),
        );
        Ok(())
    }

    /// Settle the in-flight hard directive at the end of a turn.
    pub fn turn_end(&self, stop: TurnStop) {
        let mut queue = self.queue();
        if !queue.has_in_flight() {
            return;
        }
        match stop {
            TurnStop::Completed => queue.resolve(),
            TurnStop::Aborted => queue.reject(RejectReason::Aborted),
            TurnStop::Error => queue.reject(RejectReason::Error),
        }
    }

    /// Safety net after a run: reject any yield still in flight as aborted.
    pub fn abort(&self) {
        self.queue().reject(RejectReason::Aborted);
    }

    /// Execute a `resolve` tool call with raw arguments: validate, then dispatch.
    pub async fn execute_resolve(
        &self,
        args: &Value,
        cancel: &CancellationToken,
    ) -> Result<ToolResult, Error> {
        if cancel.is_cancelled() {
            return Err(aborted());
        }
        let args = ResolveArgs::from_value(args)?;
        self.resolve_with(args, None, cancel).await
    }

    /// Resolve with checked arguments: the head (`target` `None`) or a given pending id.
    pub async fn resolve_with(
        &self,
        args: ResolveArgs,
        target: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<ToolResult, Error> {
        if cancel.is_cancelled() {
            return Err(aborted());
        }
        tokio::select! {
            biased;
            () = cancel.cancelled() => Err(aborted()),
            outcome = self.dispatch(args, target) => outcome,
        }
    }

    async fn dispatch(&self, args: ResolveArgs, target: Option<&str>) -> Result<ToolResult, Error> {
        let _serialized = self.dispatch.lock().await;
        let target = self.pick_target(target)?;
        match target {
            Target::Handler(handler) => handler(args).await,
            Target::Pending(entry) => {
                let outcome = run_resolve_invocation(&args, &entry.action).await;
                let mut queue = self.queue();
                match (&outcome, args.action) {
                    (Ok(_), ResolveAction::Apply | ResolveAction::Discard) => {
                        queue.pending_mut().remove(&entry.id);
                    }
                    // A failed apply stays pending, at the head, under the same id.
                    (Err(_), ResolveAction::Apply) => {
                        queue.pending_mut().register(entry.id, entry.action)
                    }
                    (Err(_), ResolveAction::Discard) => {}
                }
                outcome
            }
            Target::Nothing => match args.action {
                ResolveAction::Discard => Ok(ToolResult::text(NOTHING_TO_DISCARD)
                    .with_details(Value::Object(base_details(&args, None, None)))),
                ResolveAction::Apply => Err(Error::NothingToApply),
            },
        }
    }

    fn pick_target(&self, target: Option<&str>) -> Result<Target, Error> {
        let mut queue = self.queue();
        self.refresh_locked(&mut queue)?;
        if let Some(id) = target {
            return match queue.pending().get(id) {
                Some(entry) => Ok(Target::Pending(entry.clone())),
                None => Err(Error::NotPending { id: id.to_owned() }),
            };
        }
        if let Some(invoker) = queue.peek_in_flight_invoker() {
            return Ok(Target::Handler(invoker));
        }
        if let Some(entry) = queue.pending().peek() {
            return Ok(Target::Pending(entry.clone()));
        }
        if let Some(handler) = self.peek_standing_resolve_handler() {
            return Ok(Target::Handler(handler));
        }
        // Nothing can act: drain stale markers so no phantom gate keeps demanding `resolve`.
        queue.pending_mut().clear();
        Ok(Target::Nothing)
    }
}

fn aborted() -> Error {
    Error::Aborted("Cancelled".to_owned())
}
