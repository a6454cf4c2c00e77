//! Plan approval: the standing `resolve` handler that submits a plan on `apply` to the
//! plan's [`Approver`] (the one decision pipeline: the plan is an [`ApprovalSubject::Plan`]),
//! and what each [`Decision`] means for a plan: apply approves it, leave-pending asks for a
//! refinement (the model reads why), discard stops the run.
//!
//! Owned here: the approval texts and result details. Not owned: locating the plan (`files`),
//! leaving plan mode after an approval (`runtime`).

use std::sync::Arc;

use resolve_core::{
    ActionError, BoxFuture, Extra, PendingAction, ResolveAction, ResolveArgs, ResolveHandler,
    ToolResult, run_resolve_invocation,
};
use resolve_edit::{
    ApprovalRequest, ApprovalSubject, Approver, Decision, PlanReview, ResolveRequest, decide,
    run_blocking,
};
use serde_json::{Value, json};

use super::files::{PlanFiles, display_path, locate};
use super::state::{PlanPhase, PlanState};
use super::{PLAN_APPROVAL_LABEL, PLAN_APPROVAL_TOOL};

/// The apply of the plan-approval handler.
async fn submit_plan(
    files: PlanFiles,
    state: Arc<PlanState>,
    approver: Arc<dyn Approver>,
    reason: String,
    extra: Option<Extra>,
) -> Result<ToolResult, ActionError> {
    if !state.is_planning() {
        return Err(ActionError::Tool("Plan mode is not active.".to_owned()));
    }
    // A title that is not a string (a grammar-constrained model may send `{}`) is no title:
    // the plan's first heading, then its file stem, then `plan`.
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
    let request = ApprovalRequest {
        subject: ApprovalSubject::Plan(review.clone()),
        model: ResolveRequest::model(ResolveAction::Apply, reason),
    };
    let decided = decide(approver.as_ref(), &request).await;
    let mut details = json!({
        "planFilePath": review.path,
        "title": review.title,
        "planExists": true,
    });
    match decided.decision {
        // A plan has no hunks: approving part of it approves it.
        Decision::Apply | Decision::ApplyPart(_) => {
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
        Decision::LeavePending { why: feedback } => {
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
        Decision::Discard { reason } => {
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
    approver: &Arc<dyn Approver>,
    state: &Arc<PlanState>,
) -> ResolveHandler {
    let files = files.clone();
    let approver = Arc::clone(approver);
    let state = Arc::clone(state);
    let action = Arc::new(PendingAction::new(
        PLAN_APPROVAL_LABEL,
        PLAN_APPROVAL_TOOL,
        move |reason, extra| {
            submit_plan(
                files.clone(),
                Arc::clone(&state),
                Arc::clone(&approver),
                reason,
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
