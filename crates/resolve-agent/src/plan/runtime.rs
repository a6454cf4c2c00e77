//! [`PlanRuntime`]: a session's plan mode while it lasts — entering it, leaving it on an
//! outcome, the reminder after a text-only stop, and the note on a `resolve` that acted on a
//! pending preview instead of the plan.
//!
//! The session calls in at fixed moments and hands over what plan mode may touch: the
//! session's [`ToolSet`] (swapped on entry and on approval), its [`ResolveSession`] (the
//! standing handler and the plan-mode directive), the transcript and an [`EventSink`]. Owned
//! here: those steps. Not owned: when they happen (the session's turn loop), the session itself
//! (never imported here), plan files, approval and titles (the sibling modules).

use std::sync::Arc;

use resolve_core::{PushOptions, RESOLVE_TOOL_NAME, ResolveSession, ToolChoice, ToolResult};
use serde_json::Value;

use super::approval::approval_handler;
use super::mode::PlanMode;
use super::state::{PlanPhase, PlanState};
use super::write::PlanWriteTool;
use super::{
    PLAN_APPROVAL_TOOL, PLAN_MODE_DECISION, PLAN_MODE_PROMPT, PLAN_MODE_REMINDER,
    PLAN_MODE_REMINDER_MAX,
};
use crate::error::AgentError;
use crate::event::{AgentEvent, EventSink};
use crate::message::Message;
use crate::session::tool_set::ToolSet;

/// A session's plan mode while it lasts: its state and the tools to restore on approval.
pub(crate) struct PlanRuntime {
    state: Arc<PlanState>,
    /// The session's own tools, offered again once the plan is approved.
    after: ToolSet,
}

impl PlanRuntime {
    /// Enter plan mode in a freshly built session: offer the plan tools in `tools` (keeping
    /// the session's own to restore), install the approval handler on `resolve` and extend
    /// `system_prompt`.
    pub(crate) fn enter(
        plan: &PlanMode,
        tools: &mut ToolSet,
        resolve: &ResolveSession,
        system_prompt: &mut String,
    ) -> Result<Self, AgentError> {
        let state = Arc::new(PlanState::new());
        let mut plan_tools = plan.tools.clone();
        plan_tools.push(Arc::new(PlanWriteTool::new(
            plan.files.clone(),
            Arc::clone(&state),
        )));
        let plan_tools = ToolSet::new(plan_tools, None, true)?;
        resolve.set_standing_resolve_handler(Some(approval_handler(
            &plan.files,
            &plan.approver,
            &state,
        )));
        if !system_prompt.is_empty() {
            system_prompt.push_str("\n\n");
        }
        system_prompt.push_str(PLAN_MODE_PROMPT);
        Ok(Self {
            state,
            after: std::mem::replace(tools, plan_tools),
        })
    }

    /// Before each model call: if the plan in `slot` was approved, leave plan mode (empty
    /// `slot`, restore the session's own `tools`, clear the handler and any queued plan-mode
    /// directive) and return the plan's path; if approval stopped, leave it and end the run.
    pub(crate) fn settle(
        slot: &mut Option<Self>,
        tools: &mut ToolSet,
        resolve: &ResolveSession,
        sink: &mut dyn EventSink,
    ) -> Result<Option<String>, AgentError> {
        let Some(outcome) = slot.as_ref().and_then(|plan| plan.state.take_outcome()) else {
            return Ok(None);
        };
        let Some(plan) = slot.take() else {
            return Ok(None);
        };
        resolve.set_standing_resolve_handler(None);
        resolve.queue().remove_by_label(PLAN_MODE_DECISION);
        match outcome {
            PlanPhase::Approved { path } => {
                *tools = plan.after;
                sink.emit(AgentEvent::PlanApproved {
                    plan_path: path.clone(),
                });
                Ok(Some(path))
            }
            PlanPhase::Stopped { reason } => Err(AgentError::PlanApprovalStopped { reason }),
            // take_outcome yields only the two phases above.
            PlanPhase::Planning { .. } | PlanPhase::Done => Ok(None),
        }
    }

    /// On a text-only stop: under the cap, append the reminder to `transcript`, queue the
    /// `required` directive on `resolve` and return true (the run goes on); otherwise false.
    pub(crate) fn remind(
        &self,
        reminders: &mut u32,
        resolve: &ResolveSession,
        transcript: &mut Vec<Message>,
        sink: &mut dyn EventSink,
    ) -> bool {
        if *reminders >= PLAN_MODE_REMINDER_MAX {
            return false;
        }
        *reminders += 1;
        sink.emit(AgentEvent::PlanModeReminder {
            text: PLAN_MODE_REMINDER.to_owned(),
            number: *reminders,
        });
        transcript.push(Message::Reminder {
            text: PLAN_MODE_REMINDER.to_owned(),
        });
        resolve.queue().push_once(
            ToolChoice::Required,
            PushOptions::new().label(PLAN_MODE_DECISION),
        );
        true
    }

    /// The label of the pending preview a `resolve` call would act on instead of the plan.
    pub(crate) fn preview_ahead(&self, resolve: &ResolveSession) -> Option<String> {
        // A source that cannot be read is reported by the dispatch itself.
        let _ = resolve.refresh_pending();
        let queue = resolve.queue();
        queue
            .pending()
            .peek()
            .map(|entry| entry.action.label.clone())
    }

    /// After a run: drop a plan-mode directive the run did not get to use.
    pub(crate) fn finish_run(&self, resolve: &ResolveSession) {
        resolve.queue().remove_by_label(PLAN_MODE_DECISION);
    }
}

/// Say in a `resolve` result that it acted on the pending preview `label`, not on the plan.
pub(crate) fn note_preview_ahead_of_plan(mut result: ToolResult, label: &str) -> ToolResult {
    let source = result
        .details
        .as_ref()
        .and_then(|details| details.get("sourceToolName"))
        .and_then(Value::as_str);
    if source != Some(PLAN_APPROVAL_TOOL) {
        result.text.push_str(&format!(
            "\n\nThis resolved the pending preview `{label}`, not the plan; call `{RESOLVE_TOOL_NAME}` again to submit the plan."
        ));
    }
    result
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn a_preview_note_is_added_unless_the_plan_handler_answered() {
        let preview = ToolResult::text("Applied edit to a.txt.")
            .with_details(json!({"sourceToolName": "edit", "label": "Edit: a.txt"}));
        assert_eq!(
            note_preview_ahead_of_plan(preview, "Edit: a.txt").text,
            "Applied edit to a.txt.\n\nThis resolved the pending preview `Edit: a.txt`, not the plan; call `resolve` again to submit the plan."
        );
        let plan = ToolResult::text("Plan approved at x.")
            .with_details(json!({"sourceToolName": PLAN_APPROVAL_TOOL}));
        assert_eq!(
            note_preview_ahead_of_plan(plan, "Edit: a.txt").text,
            "Plan approved at x."
        );
    }
}
