//! Plan approval: what the approver sees ([`PlanReview`]) and decides ([`PlanDecision`]), the
//! [`PlanApprover`] trait with [`AutoApprove`], and the standing `resolve` handler that submits
//! a plan on `apply`.
//!
//! Owned here: the approval texts and result details. Not owned: locating the plan (`files`),
//! leaving plan mode after an approval (`runtime`).

use std::fmt;
use std::sync::Arc;

use resolve_core::{
    ActionError, BoxFuture, Extra, PendingAction, ResolveArgs, ResolveHandler, ToolResult,
    run_resolve_invocation,
};
use resolve_edit::run_blocking;
use serde_json::{Value, json};

use super::files::{PlanFiles, display_path, locate};
use super::state::{PlanPhase, PlanState};
use super::{PLAN_APPROVAL_LABEL, PLAN_APPROVAL_TOOL};

/// A plan found on `apply`, as the approver sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanReview {
    /// The plan file, relative to the root (`.resolve/plans/words-counter-plan.md`).
    pub path: String,
    /// The plan's title (see [`resolve_plan_title`](super::resolve_plan_title)).
    pub title: String,
    /// The plan's text.
    pub content: String,
}

/// What the approver decided about a submitted plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanDecision {
    /// Approve: plan mode ends and the run implements the plan.
    Approve,
    /// Ask for changes: the model reads the feedback; plan mode stays.
    Refine {
        /// What should change (may be empty).
        feedback: String,
    },
    /// No decision can be had (for example, nobody can answer): the run ends with this reason.
    Stop {
        /// Why.
        reason: String,
    },
}

/// Decides on submitted plans.
pub trait PlanApprover: Send + Sync + fmt::Debug {
    /// Decide on `plan`. Runs on a blocking thread, so it may prompt a person.
    fn review(&self, plan: &PlanReview) -> PlanDecision;
}

/// Approves every plan at once.
#[derive(Debug, Default, Clone, Copy)]
pub struct AutoApprove;

impl PlanApprover for AutoApprove {
    fn review(&self, _plan: &PlanReview) -> PlanDecision {
        PlanDecision::Approve
    }
}

/// The apply of the plan-approval handler.
async fn submit_plan(
    files: PlanFiles,
    state: Arc<PlanState>,
    approver: Arc<dyn PlanApprover>,
    extra: Option<Extra>,
) -> Result<ToolResult, ActionError> {
    if !state.is_planning() {
        return Err(ActionError::Tool("Plan mode is not active.".to_owned()));
    }
    // A title that is not a string (a grammar-constrained model may send `{}`) is no title:
    // the plan's first heading, then its file stem, then `plan` (reference §5.2, #1179).
    let supplied = extra
        .as_ref()
        .and_then(|extra| extra.get("title"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let last_written = state.last_written();
    let plan = run_blocking("plan lookup", move || {
        locate(&files, supplied.as_deref(), last_written.as_deref())
    })
    .await?
    .map_err(ActionError::Tool)?;
    let review = PlanReview {
        path: display_path(&plan.name),
        title: plan.title,
        content: plan.content,
    };
    let asked = review.clone();
    let decision = run_blocking("plan approval", move || approver.review(&asked)).await?;
    let mut details = json!({
        "planFilePath": review.path,
        "title": review.title,
        "planExists": true,
    });
    match decision {
        PlanDecision::Approve => {
            if !state.leave_planning(PlanPhase::Approved {
                path: review.path.clone(),
            }) {
                return Err(ActionError::Tool("Plan mode is not active.".to_owned()));
            }
            details["approved"] = true.into();
            Ok(ToolResult::text(format!(
                "Plan approved at {}. Plan mode exited; proceed with the implementation.\n\nThe approved plan:\n\n{}",
                review.path,
                review.content.trim_end()
            ))
            .with_details(details))
        }
        PlanDecision::Refine { feedback } => {
            let feedback = feedback.trim().trim_end_matches('.').trim_end();
            details["approved"] = false.into();
            details["feedback"] = feedback.into();
            let requested = if feedback.is_empty() {
                "Plan refinement requested".to_owned()
            } else {
                format!("Plan refinement requested: {feedback}")
            };
            Ok(ToolResult::text(format!(
                "{requested}. Update the plan file, then call `resolve` with action \"apply\" again when ready."
            ))
            .with_details(details))
        }
        PlanDecision::Stop { reason } => {
            state.leave_planning(PlanPhase::Stopped {
                reason: reason.clone(),
            });
            Err(ActionError::Tool(format!(
                "Plan approval stopped: {reason}"
            )))
        }
    }
}

/// The standing handler: plan approval through [`run_resolve_invocation`].
pub(super) fn approval_handler(
    files: &PlanFiles,
    approver: &Arc<dyn PlanApprover>,
    state: &Arc<PlanState>,
) -> ResolveHandler {
    let files = files.clone();
    let approver = Arc::clone(approver);
    let state = Arc::clone(state);
    let action = Arc::new(PendingAction::new(
        PLAN_APPROVAL_LABEL,
        PLAN_APPROVAL_TOOL,
        move |_reason, extra| {
            submit_plan(
                files.clone(),
                Arc::clone(&state),
                Arc::clone(&approver),
                extra,
            )
        },
    ));
    Arc::new(
        move |args: ResolveArgs| -> BoxFuture<Result<ToolResult, resolve_core::Error>> {
            let action = Arc::clone(&action);
            Box::pin(async move { run_resolve_invocation(&args, &action).await })
        },
    )
}
