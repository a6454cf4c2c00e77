//! [`ResolveSession`]: one session's tool-choice queue, pending stack, standing handler and id
//! allocator, with the `resolve` dispatch and the per-turn directive.
//!
//! Dispatch order for a `resolve` call: the in-flight hard directive's invoker, then the head
//! pending action, then the standing handler. Calls are serialized per session, so two
//! concurrent `resolve` calls act on the stack one after the other and never consume one
//! pending action twice.
//!
//! Cancellation: a call whose token is already cancelled fails at once with
//! `Aborted: Cancelled` and runs nothing. If the token fires while a callback runs, the call
//! returns the same error at once, and the callback runs on to its end in the background (on its
//! own task): the pending action stays registered while it runs, is consumed if it succeeds,
//! and is requeued at the head if its apply fails.
//!
//! Stack order: an action staged here takes its id counter value as its order, and a pending
//! source places its actions by their own orders from the same counter, so the head is the
//! most recently staged action whichever reached the stack first.
//!
//! A pending source that cannot be read leaves no gate closed (reference #3061): the actions it
//! put on the stack are stale, so they are dropped (actions staged in this process stay), the
//! directive stops requiring `resolve` for them, and the next `resolve` call's error says why.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::pending::{
    BoxFuture, IdAllocator, PendingAction, PendingEntry, PendingStack, ProcessIdAllocator,
    pending_id,
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
    queue: Arc<Mutex<ToolChoiceQueue>>,
    local: Mutex<LocalActions>,
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

/// What the session knows about the pending stack beyond the stack itself.
#[derive(Debug, Default)]
struct LocalActions {
    /// Ids staged through this session (in memory); every other entry came from the source.
    staged_here: HashSet<String>,
    /// Stale source actions dropped since the source was last read, not yet reported.
    unreported_drops: usize,
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
            queue: Arc::new(Mutex::new(ToolChoiceQueue::new())),
            local: Mutex::new(LocalActions::default()),
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
        lock(&self.queue)
    }

    fn local(&self) -> MutexGuard<'_, LocalActions> {
        lock(&self.local)
    }

    /// Stage `action` as a pending action under a fresh `pending-action:<tool>:<seq>` id, at
    /// the head of the stack (its order is the seq); returns the id.
    pub fn queue_resolve_handler(&self, action: PendingAction) -> Result<String, Error> {
        let seq = self.ids.next_seq()?;
        let id = pending_id(&action.source_tool, seq);
        let mut queue = self.queue();
        queue
            .pending_mut()
            .register_at(id.clone(), seq, Arc::new(action));
        self.local().staged_here.insert(id.clone());
        Ok(id)
    }

    /// Bring the pending stack up to date with the pending source, if any. When the source
    /// cannot be read, the actions it put on the stack are dropped as stale.
    pub fn refresh_pending(&self) -> Result<(), Error> {
        let mut queue = self.queue();
        self.refresh_locked(&mut queue)
    }

    fn refresh_locked(&self, queue: &mut ToolChoiceQueue) -> Result<(), Error> {
        let Some(source) = &self.source else {
            return Ok(());
        };
        let refreshed = source.refresh(queue.pending_mut());
        let mut local = self.local();
        match refreshed {
            Ok(()) => {
                local.unreported_drops = 0;
                Ok(())
            }
            Err(cause) => {
                // Stale markers: what the source staged can no longer be vouched for.
                let before = queue.pending().len();
                let staged_here = &local.staged_here;
                queue
                    .pending_mut()
                    .retain(|entry| staged_here.contains(&entry.id));
                local.unreported_drops += before - queue.pending().len();
                let pending = queue.pending();
                local.staged_here.retain(|id| pending.contains(id));
                Err(cause)
            }
        }
    }

    /// Refresh before a dispatch: a source that cannot be read fails the call, and the first
    /// error after stale actions were dropped says how many and what that means.
    fn refresh_for_dispatch(&self, queue: &mut ToolChoiceQueue) -> Result<(), Error> {
        self.refresh_locked(queue).map_err(|cause| {
            let dropped = std::mem::take(&mut self.local().unreported_drops);
            if dropped == 0 {
                cause
            } else {
                Error::StalePendingDropped {
                    cause: cause.to_string(),
                    dropped,
                }
            }
        })
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
        // A source that cannot be read has its actions dropped, so no stale head keeps the
        // gate closed; the next dispatch reports the error.
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
        let work: BoxFuture<Result<ToolResult, Error>> = match self.pick_target(target)? {
            Target::Handler(handler) => handler(args),
            Target::Pending(entry) => {
                let queue = Arc::clone(&self.queue);
                Box::pin(async move {
                    let outcome = run_resolve_invocation(&args, &entry.action).await;
                    settle(&queue, entry, args.action, outcome.is_ok());
                    outcome
                })
            }
            Target::Nothing => {
                return match args.action {
                    ResolveAction::Discard => Ok(ToolResult::text(NOTHING_TO_DISCARD)
                        .with_details(Value::Object(base_details(&args, None, None)))),
                    ResolveAction::Apply => Err(Error::NothingToApply),
                };
            }
        };
        run_to_end(work).await
    }

    fn pick_target(&self, target: Option<&str>) -> Result<Target, Error> {
        let mut queue = self.queue();
        self.refresh_for_dispatch(&mut queue)?;
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
        // Nothing can act. There is no stale marker to drain here: the gate reads this same
        // stack, which the refresh above has just brought in step with the pending source (a
        // source that fails drops its stale entries there), so it is already empty.
        Ok(Target::Nothing)
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Settle the stack after a pending action's callback returned: consumed when it succeeded; a
/// failed apply is requeued at the head under the same id (unless something else consumed or
/// dropped it meanwhile, for example a retry after a cancelled call).
fn settle(queue: &Mutex<ToolChoiceQueue>, entry: PendingEntry, action: ResolveAction, ok: bool) {
    let mut queue = lock(queue);
    match (ok, action) {
        (true, ResolveAction::Apply | ResolveAction::Discard) => {
            queue.pending_mut().remove(&entry.id);
        }
        (false, ResolveAction::Apply) => {
            if queue.pending().contains(&entry.id) {
                queue.pending_mut().register(entry.id, entry.action);
            }
        }
        (false, ResolveAction::Discard) => {}
    }
}

/// Run `work` to its end on its own task, so a caller that stops waiting (a cancelled call)
/// does not stop it half-way; outside a Tokio runtime it runs in place.
async fn run_to_end(work: BoxFuture<Result<ToolResult, Error>>) -> Result<ToolResult, Error> {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return work.await;
    };
    match runtime.spawn(work).await {
        Ok(outcome) => outcome,
        Err(error) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
        // The runtime is shutting down.
        Err(_) => Err(aborted()),
    }
}

fn aborted() -> Error {
    Error::Aborted("Cancelled".to_owned())
}
