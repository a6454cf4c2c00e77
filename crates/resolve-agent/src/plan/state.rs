//! [`PlanState`]: where a plan-mode session stands ([`PlanPhase`]), shared by the plan
//! `write`, the approval handler and the session's plan runtime.
//!
//! Owned here: the phase and its transitions. Not owned: what causes them (`write`,
//! `approval`, `runtime`).

use std::sync::{Mutex, PoisonError};

/// Where a plan-mode session stands.
#[derive(Debug)]
pub(super) enum PlanPhase {
    /// Planning; the plan file written last, if any.
    Planning { last_written: Option<String> },
    /// Approved at this path; the session has not switched tools yet.
    Approved { path: String },
    /// The approver gave up; the run must end.
    Stopped { reason: String },
    /// Over: the session switched tools (or ended the run).
    Done,
}

/// Plan-mode state shared by the plan `write`, the approval handler and the session.
#[derive(Debug)]
pub(super) struct PlanState {
    phase: Mutex<PlanPhase>,
}

impl PlanState {
    /// Planning, with no plan file written yet.
    pub(super) fn new() -> Self {
        Self {
            phase: Mutex::new(PlanPhase::Planning { last_written: None }),
        }
    }

    fn phase(&self) -> std::sync::MutexGuard<'_, PlanPhase> {
        self.phase.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(super) fn is_planning(&self) -> bool {
        matches!(*self.phase(), PlanPhase::Planning { .. })
    }

    pub(super) fn last_written(&self) -> Option<String> {
        match &*self.phase() {
            PlanPhase::Planning { last_written } => last_written.clone(),
            PlanPhase::Approved { .. } | PlanPhase::Stopped { .. } | PlanPhase::Done => None,
        }
    }

    pub(super) fn wrote(&self, name: String) {
        if let PlanPhase::Planning { last_written } = &mut *self.phase() {
            *last_written = Some(name);
        }
    }

    /// Move from planning to `next`; false when no longer planning.
    pub(super) fn leave_planning(&self, next: PlanPhase) -> bool {
        let mut phase = self.phase();
        if matches!(*phase, PlanPhase::Planning { .. }) {
            *phase = next;
            return true;
        }
        false
    }

    pub(super) fn take_outcome(&self) -> Option<PlanPhase> {
        let mut phase = self.phase();
        match &*phase {
            PlanPhase::Approved { .. } | PlanPhase::Stopped { .. } => {
                Some(std::mem::replace(&mut *phase, PlanPhase::Done))
            }
            PlanPhase::Planning { .. } | PlanPhase::Done => None,
        }
    }
}
