//! The tool-choice queue: consuming hard directives, plus the pending-action stack.
//!
//! Hard directives are generators of [`ToolChoice`]s with lifecycle callbacks. Each
//! [`ToolChoiceQueue::next_tool_choice`] consumes one yield and holds it "in flight" until the
//! turn ends with [`ToolChoiceQueue::resolve`] or [`ToolChoiceQueue::reject`]. The pending-action
//! stack lives beside it and never forces anything.
//!
//! Callbacks run while the queue is borrowed mutably, so they must not call back into the
//! queue.

use std::collections::VecDeque;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::ToolChoice;
use crate::pending::PendingStack;
use crate::resolve::ResolveHandler;

/// Passed to `on_resolved` when an in-flight yield resolves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolveInfo {
    /// The choice that was served.
    pub choice: ToolChoice,
}

/// Why an in-flight yield was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RejectReason {
    /// The turn ended with an abort.
    Aborted,
    /// The turn ended with an error.
    Error,
    /// [`ToolChoiceQueue::clear`] was called.
    Cleared,
    /// [`ToolChoiceQueue::remove_by_label`] hit the in-flight directive.
    Removed,
    /// The named tool is not active.
    Unavailable,
    /// An `on_invoked` directive's tool never ran.
    NotInvoked,
}

impl RejectReason {
    /// The reason as the reference spells it (`not_invoked`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Aborted => "aborted",
            Self::Error => "error",
            Self::Cleared => "cleared",
            Self::Removed => "removed",
            Self::Unavailable => "unavailable",
            Self::NotInvoked => "not_invoked",
        }
    }
}

/// Passed to `on_rejected` when an in-flight yield is rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RejectInfo {
    /// The choice that was served.
    pub choice: ToolChoice,
    /// Why it was rejected.
    pub reason: RejectReason,
}

/// What to do with a rejected yield.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RejectOutcome {
    /// Put the lost yield back at the front of the queue.
    Requeue,
    /// Forget it.
    #[default]
    Drop,
}

/// Called when an in-flight yield resolves.
pub type OnResolved = Arc<dyn Fn(&ResolveInfo) + Send + Sync>;
/// Called when an in-flight yield is rejected; decides requeue or drop.
pub type OnRejected = Arc<dyn Fn(&RejectInfo) -> RejectOutcome + Send + Sync>;

/// Options for [`ToolChoiceQueue::push`]: position, label and lifecycle callbacks.
#[derive(Clone, Default)]
pub struct PushOptions {
    now: bool,
    label: Option<String>,
    on_resolved: Option<OnResolved>,
    on_rejected: Option<OnRejected>,
    on_invoked: Option<ResolveHandler>,
}

impl fmt::Debug for PushOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PushOptions")
            .field("now", &self.now)
            .field("label", &self.label)
            .finish_non_exhaustive()
    }
}

impl PushOptions {
    /// Default options: appended, labelled `anonymous`, no callbacks.
    pub fn new() -> Self {
        Self::default()
    }

    /// Put the directive at the front of the queue. By default it is appended.
    #[must_use]
    pub fn now(mut self) -> Self {
        self.now = true;
        self
    }

    /// Label the directive. By default it is `anonymous`.
    #[must_use]
    pub fn label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }

    /// Called when a yield resolves. By default nothing is called.
    #[must_use]
    pub fn on_resolved(mut self, f: impl Fn(&ResolveInfo) + Send + Sync + 'static) -> Self {
        self.on_resolved = Some(Arc::new(f));
        self
    }

    /// Called when a yield is rejected. By default the yield is dropped.
    #[must_use]
    pub fn on_rejected(
        mut self,
        f: impl Fn(&RejectInfo) -> RejectOutcome + Send + Sync + 'static,
    ) -> Self {
        self.on_rejected = Some(Arc::new(f));
        self
    }

    /// The handler `resolve` dispatches to while this directive is in flight. By default none.
    #[must_use]
    pub fn on_invoked(mut self, handler: ResolveHandler) -> Self {
        self.on_invoked = Some(handler);
        self
    }
}

#[derive(Clone, Default)]
struct Callbacks {
    on_resolved: Option<OnResolved>,
    on_rejected: Option<OnRejected>,
    on_invoked: Option<ResolveHandler>,
}

struct Directive {
    choices: Box<dyn Iterator<Item = ToolChoice> + Send>,
    label: String,
    callbacks: Callbacks,
}

struct InFlight {
    label: String,
    callbacks: Callbacks,
    yielded: ToolChoice,
    invoked: Arc<AtomicBool>,
}

/// The per-session queue of hard tool-choice directives and the pending-action stack.
#[derive(Default)]
pub struct ToolChoiceQueue {
    directives: VecDeque<Directive>,
    in_flight: Option<InFlight>,
    last_resolved_label: Option<String>,
    pending: PendingStack,
}

impl fmt::Debug for ToolChoiceQueue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolChoiceQueue")
            .field("directives", &self.inspect())
            .field("in_flight", &self.in_flight.as_ref().map(|i| &i.label))
            .field("pending", &self.pending)
            .finish()
    }
}

impl ToolChoiceQueue {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }

    /// Queue a one-shot directive.
    pub fn push_once(&mut self, choice: ToolChoice, options: PushOptions) {
        self.push(std::iter::once(choice), options);
    }

    /// Queue a directive yielding `choices` in order.
    pub fn push_sequence(&mut self, choices: Vec<ToolChoice>, options: PushOptions) {
        self.push(choices, options);
    }

    /// Queue a directive yielding each choice of `choices`.
    pub fn push<I>(&mut self, choices: I, options: PushOptions)
    where
        I: IntoIterator<Item = ToolChoice>,
        I::IntoIter: Send + 'static,
    {
        let directive = Directive {
            choices: Box::new(choices.into_iter()),
            label: options.label.unwrap_or_else(|| "anonymous".to_owned()),
            callbacks: Callbacks {
                on_resolved: options.on_resolved,
                on_rejected: options.on_rejected,
                on_invoked: options.on_invoked,
            },
        };
        if options.now {
            self.directives.push_front(directive);
        } else {
            self.directives.push_back(directive);
        }
    }

    /// Consume the next choice and hold it in flight; `None` when the queue is empty.
    ///
    /// An earlier in-flight yield is silently replaced.
    pub fn next_tool_choice(&mut self) -> Option<ToolChoice> {
        while let Some(head) = self.directives.front_mut() {
            if let Some(choice) = head.choices.next() {
                self.in_flight = Some(InFlight {
                    label: head.label.clone(),
                    callbacks: head.callbacks.clone(),
                    yielded: choice.clone(),
                    invoked: Arc::new(AtomicBool::new(false)),
                });
                return Some(choice);
            }
            self.directives.pop_front();
        }
        None
    }

    /// Resolve the in-flight yield; an `on_invoked` directive whose handler never ran is
    /// rejected with [`RejectReason::NotInvoked`] instead.
    pub fn resolve(&mut self) {
        let Some(in_flight) = &self.in_flight else {
            return;
        };
        if in_flight.callbacks.on_invoked.is_some() && !in_flight.invoked.load(Ordering::SeqCst) {
            self.reject(RejectReason::NotInvoked);
            return;
        }
        let Some(in_flight) = self.in_flight.take() else {
            return;
        };
        self.last_resolved_label = Some(in_flight.label);
        if let Some(on_resolved) = &in_flight.callbacks.on_resolved {
            on_resolved(&ResolveInfo {
                choice: in_flight.yielded,
            });
        }
    }

    /// Reject the in-flight yield; `on_rejected` decides whether it is replayed.
    pub fn reject(&mut self, reason: RejectReason) {
        let Some(in_flight) = self.in_flight.take() else {
            return;
        };
        let info = RejectInfo {
            choice: in_flight.yielded.clone(),
            reason,
        };
        let outcome = in_flight
            .callbacks
            .on_rejected
            .as_ref()
            .map_or(RejectOutcome::Drop, |f| f(&info));
        match outcome {
            RejectOutcome::Requeue => self.directives.push_front(Directive {
                choices: Box::new(std::iter::once(in_flight.yielded)),
                label: format!("{}-requeued", in_flight.label),
                callbacks: in_flight.callbacks,
            }),
            RejectOutcome::Drop => {}
        }
    }

    /// Whether a yield is in flight.
    pub fn has_in_flight(&self) -> bool {
        self.in_flight.is_some()
    }

    /// The in-flight directive's `on_invoked` handler, wrapped so that calling it marks the
    /// directive invoked.
    pub fn peek_in_flight_invoker(&self) -> Option<ResolveHandler> {
        let in_flight = self.in_flight.as_ref()?;
        let handler = in_flight.callbacks.on_invoked.clone()?;
        let invoked = Arc::clone(&in_flight.invoked);
        Some(Arc::new(move |args| {
            invoked.store(true, Ordering::SeqCst);
            handler(args)
        }))
    }

    /// Reject the in-flight directive if it has `label`, then drop queued directives with it.
    pub fn remove_by_label(&mut self, label: &str) {
        if self
            .in_flight
            .as_ref()
            .is_some_and(|in_flight| in_flight.label == label)
        {
            self.reject(RejectReason::Removed);
        }
        self.directives.retain(|directive| directive.label != label);
    }

    /// Reject the in-flight yield, then empty the directives and the pending stack.
    pub fn clear(&mut self) {
        self.reject(RejectReason::Cleared);
        self.directives.clear();
        self.pending.clear();
        self.last_resolved_label = None;
    }

    /// The label of the directive resolved last, once.
    pub fn consume_last_served_label(&mut self) -> Option<String> {
        self.last_resolved_label.take()
    }

    /// Labels of the queued directives, front first.
    pub fn inspect(&self) -> Vec<String> {
        self.directives
            .iter()
            .map(|directive| directive.label.clone())
            .collect()
    }

    /// The pending-action stack.
    pub fn pending(&self) -> &PendingStack {
        &self.pending
    }

    /// The pending-action stack, mutably.
    pub fn pending_mut(&mut self) -> &mut PendingStack {
        &mut self.pending
    }
}
