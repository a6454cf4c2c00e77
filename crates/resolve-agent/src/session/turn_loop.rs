//! The turn loop: one [`AgentSession::run`], from the task to the model's final answer.
//!
//! Per model call, through [`SoftGate`]:
//! 1. the directive is resolved once per logical turn (a consumed hard choice, or a soft
//!    requirement for the head pending action); a soft requirement with a new id injects the
//!    reminder as its own message, after the tool results;
//!    reviewer notes waiting for the model (what a person did to its actions) follow, each its
//!    own message too;
//! 2. the request carries host hard choice ?? one-turn escalation ?? static choice;
//! 3. a response that does anything but call only `resolve` (and `check`, its companion, while
//!    the session offers it) while a preview is pending executes none of its calls (each gets the skipped-call text as
//!    an error result) and forces `resolve` for the next call alone; the fourth decline on one
//!    id ends the run with the cap error;
//! 4. otherwise the calls run in order; unknown tools, malformed JSON and schema violations
//!    become error results the model can read;
//! 5. `turn_end` settles the in-flight hard directive; after the run, `abort` is the safety net.
//!
//! In plan mode (`plan`), a text-only stop gets the plan-mode reminder and a `required`
//! directive (at most three in a row; a `resolve` call resets the count), a `resolve` that hit
//! a pending preview says the plan was not submitted, and an approval swaps in the session's
//! full tools before the next model call. The loop decides when; `plan` does each of these.
//!
//! Every model call's usage is summed, forced calls (those forcing `resolve`) also apart; the
//! run reports it in a [`AgentEvent::Usage`] event as it ends, whatever the outcome, and in its
//! [`RunSummary`].
//!
//! The transcript only grows: every tool call is paired with a result even when the run stops
//! (cap, cancellation, a fatal tool error), so the next run can continue from it.
//!
//! Owned here: the run, tool dispatch and result pairing. Not owned: the wire (`provider`),
//! which tools are offered (`tool_set`), plan-mode rules (`plan`).

use resolve_core::{
    RESOLVE_TOOL_NAME, SoftGate, ToolChoice, ToolChoiceDirective, ToolResult, TurnStop,
    TurnVerdict, skipped_call_details, skipped_call_text,
};
use tokio_util::sync::CancellationToken;

use super::{AgentSession, RunSummary};
use crate::error::AgentError;
use crate::event::{AgentEvent, EventSink};
use crate::message::{Message, ToolCall};
use crate::plan::{PlanRuntime, note_preview_ahead_of_plan};
use crate::provider::{FinishReason, ModelRequest, WireState};
use crate::usage::Usage;
use resolve_core::{ToolContext, ToolError};

/// Result text of a call cut off by the output token limit.
const TRUNCATED_CALL_TEXT: &str = "Tool call was not executed because the response was cut off at the output token limit; its arguments may be incomplete. Make the call again with shorter arguments.";
/// Result text of a call not run because the run was cancelled.
const CANCELLED_CALL_TEXT: &str = "Aborted: Cancelled";
/// Result text of a call not run because an earlier call ended the run.
const STOPPED_CALL_TEXT: &str =
    "Tool call was not executed because the run stopped after an earlier call failed.";

#[derive(Debug, Default)]
struct Counts {
    model_calls: u32,
    executed: u32,
    skipped: u32,
}

impl AgentSession {
    /// Append each reviewer note waiting for the model as its own reminder message (see
    /// `reviewer_notes`); a store that cannot be read is reported and the run goes on.
    fn tell_reviewer_notes(&mut self, sink: &mut dyn EventSink) {
        let Some(notes) = &self.reviewer_notes else {
            return;
        };
        match notes.take() {
            Ok(texts) => {
                for text in texts {
                    sink.emit(AgentEvent::ReviewerNote { text: text.clone() });
                    self.transcript.push(Message::Reminder { text });
                }
            }
            Err(error) => sink.emit(AgentEvent::Notice {
                message: format!("reviewer notes could not be read: {error}"),
            }),
        }
    }

    /// Run the agent on `task` until the model answers without calling tools.
    ///
    /// Events go to `sink` as they happen. Cancelling `cancel` stops the run cleanly (the
    /// in-flight hard directive is rejected as aborted) with [`AgentError::Cancelled`].
    pub async fn run(
        &mut self,
        task: &str,
        sink: &mut dyn EventSink,
        cancel: &CancellationToken,
    ) -> Result<RunSummary, AgentError> {
        let mut usage = Usage::default();
        let outcome = self.run_loop(task, &mut usage, sink, cancel).await;
        // Safety net: a hard directive still in flight is rejected as aborted.
        self.resolve.abort();
        if let Some(plan) = &self.plan {
            plan.finish_run(&self.resolve);
        }
        sink.emit(AgentEvent::Usage(usage));
        outcome
    }

    async fn run_loop(
        &mut self,
        task: &str,
        usage: &mut Usage,
        sink: &mut dyn EventSink,
        cancel: &CancellationToken,
    ) -> Result<RunSummary, AgentError> {
        let mut gate = SoftGate::new();
        let mut wire = WireState::new(self.provider.config());
        let mut counts = Counts::default();
        // Plan mode: reminders after text-only stops since the last `resolve` call.
        let mut plan_reminders = 0;
        self.transcript.push(Message::User {
            text: task.to_owned(),
        });
        loop {
            if cancel.is_cancelled() {
                return Err(AgentError::Cancelled);
            }
            // The tools array changes here, between model calls, only when plan mode ends.
            self.settle_plan_mode(sink)?;
            // A companion (`check`) tests the pending preview: part of resolving it, so
            // calling it is no decline while it is offered (the offered tools change when plan
            // mode ends). A `check` call when none is offered is a detour like any other.
            gate.set_companions(self.tools.companions());
            if let Some(max) = self.max_turns
                && counts.model_calls >= max
            {
                return Err(AgentError::MaxTurns(max));
            }
            let static_choice = self.active_static_choice();
            let directive = self.directive();
            for reminder in gate.begin_turn(directive) {
                sink.emit(AgentEvent::Reminder {
                    text: reminder.content.clone(),
                    source_tool: reminder.source_tool,
                });
                self.transcript.push(Message::Reminder {
                    text: reminder.content,
                });
            }
            self.tell_reviewer_notes(sink);
            let choice = gate.tool_choice(static_choice.as_ref());
            counts.model_calls += 1;
            sink.emit(AgentEvent::ModelCall {
                number: counts.model_calls,
                forced_tool: choice
                    .as_ref()
                    .and_then(|c| c.tool_name())
                    .map(str::to_owned),
            });
            let forced_resolve =
                choice.as_ref().and_then(ToolChoice::tool_name) == Some(RESOLVE_TOOL_NAME);
            let request = ModelRequest {
                system: &self.system_prompt,
                messages: &self.transcript,
                tools: self.tools.specs(),
                tool_choice: choice.as_ref(),
            };
            let response = match self
                .provider
                .complete(&request, &mut wire, sink, cancel)
                .await
            {
                Ok(response) => {
                    usage.record(forced_resolve, response.usage.as_ref());
                    response
                }
                Err(error) => {
                    usage.record_failed(forced_resolve);
                    self.resolve.turn_end(match error {
                        AgentError::Cancelled => TurnStop::Aborted,
                        _ => TurnStop::Error,
                    });
                    return Err(error);
                }
            };
            if !response.text.is_empty() {
                sink.emit(AgentEvent::AssistantText {
                    text: response.text.clone(),
                });
            }
            for call in &response.tool_calls {
                sink.emit(AgentEvent::ToolCall {
                    id: call.id.clone(),
                    name: call.name.clone(),
                    arguments: call.arguments.clone(),
                });
            }
            self.transcript.push(Message::Assistant {
                text: response.text.clone(),
                tool_calls: response.tool_calls.clone(),
                thinking: response.thinking.clone(),
            });
            let names: Vec<&str> = response
                .tool_calls
                .iter()
                .map(|call| call.name.as_str())
                .collect();
            match gate.after_response(static_choice.as_ref(), &names) {
                Err(error) => {
                    let tool = gate.required_tool().unwrap_or(RESOLVE_TOOL_NAME).to_owned();
                    self.pair_skipped(&response.tool_calls, &skipped_call_text(&tool), sink);
                    self.resolve.turn_end(TurnStop::Error);
                    return Err(error.into());
                }
                Ok(TurnVerdict::SkipAll { skipped_text }) => {
                    counts.skipped += self.pair_skipped(&response.tool_calls, &skipped_text, sink);
                    self.resolve.turn_end(TurnStop::Completed);
                }
                Ok(TurnVerdict::Execute) => {
                    if response.tool_calls.is_empty() {
                        self.resolve.turn_end(TurnStop::Completed);
                        if let Some(plan) = &self.plan
                            && plan.remind(
                                &mut plan_reminders,
                                &self.resolve,
                                &mut self.transcript,
                                sink,
                            )
                        {
                            continue;
                        }
                        return Ok(RunSummary {
                            final_text: response.text,
                            model_calls: counts.model_calls,
                            executed_calls: counts.executed,
                            skipped_calls: counts.skipped,
                            pending_actions: self.resolve.queue().pending().len(),
                            usage: *usage,
                        });
                    }
                    if response.finish == FinishReason::Length {
                        counts.skipped +=
                            self.pair_unexecuted(&response.tool_calls, TRUNCATED_CALL_TEXT, sink);
                        self.resolve.turn_end(TurnStop::Completed);
                        continue;
                    }
                    self.execute_calls(&response.tool_calls, &mut counts, sink, cancel)
                        .await?;
                    if names.contains(&RESOLVE_TOOL_NAME) {
                        plan_reminders = 0;
                    }
                    if cancel.is_cancelled() {
                        self.resolve.turn_end(TurnStop::Aborted);
                        return Err(AgentError::Cancelled);
                    }
                    self.resolve.turn_end(TurnStop::Completed);
                }
            }
        }
    }

    /// Before each model call: if plan mode has an outcome, leave it (an approval swaps in the
    /// session's own tools and is remembered; a stopped approval ends the run).
    fn settle_plan_mode(&mut self, sink: &mut dyn EventSink) -> Result<(), AgentError> {
        let approved = PlanRuntime::settle(&mut self.plan, &mut self.tools, &self.resolve, sink)?;
        if let Some(path) = approved {
            self.approved_plan = Some(path);
        }
        Ok(())
    }

    /// The static tool choice, dropped when it names a tool that is not offered (§4.3).
    fn active_static_choice(&self) -> Option<ToolChoice> {
        self.tool_choice.clone().filter(|choice| {
            choice
                .tool_name()
                .is_none_or(|name| self.tools.is_offered(name))
        })
    }

    /// This turn's directive; a soft requirement for a tool that is not offered is dropped,
    /// so an inactive `resolve` means no reminder and no gate.
    fn directive(&self) -> Option<ToolChoiceDirective> {
        match self
            .resolve
            .next_tool_choice_directive(|name| self.tools.is_offered(name))
        {
            Some(ToolChoiceDirective::Soft(requirement))
                if !self.tools.is_offered(&requirement.tool_name) =>
            {
                None
            }
            other => other,
        }
    }

    fn record_result(
        &mut self,
        call: &ToolCall,
        result: ToolResult,
        executed: bool,
        sink: &mut dyn EventSink,
    ) {
        sink.emit(AgentEvent::ToolResult {
            id: call.id.clone(),
            name: call.name.clone(),
            text: result.text.clone(),
            is_error: result.is_error,
            details: result.details,
            executed,
        });
        self.transcript.push(Message::Tool {
            call_id: call.id.clone(),
            name: call.name.clone(),
            text: result.text,
            is_error: result.is_error,
        });
    }

    /// Pair every call with an error result carrying `text`, without running it.
    fn pair_unexecuted(&mut self, calls: &[ToolCall], text: &str, sink: &mut dyn EventSink) -> u32 {
        let mut count = 0;
        for call in calls {
            self.record_result(call, ToolResult::error(text), false, sink);
            count += 1;
        }
        count
    }

    /// Pair every call of a declining turn with the skipped-call result and its synthetic
    /// details, without running it.
    fn pair_skipped(&mut self, calls: &[ToolCall], text: &str, sink: &mut dyn EventSink) -> u32 {
        for call in calls {
            let skipped = ToolResult::error(text).with_details(skipped_call_details());
            self.record_result(call, skipped, false, sink);
        }
        u32::try_from(calls.len()).unwrap_or(u32::MAX)
    }

    async fn execute_calls(
        &mut self,
        calls: &[ToolCall],
        counts: &mut Counts,
        sink: &mut dyn EventSink,
        cancel: &CancellationToken,
    ) -> Result<(), AgentError> {
        for (index, call) in calls.iter().enumerate() {
            let rest = &calls[index + 1..];
            if cancel.is_cancelled() {
                counts.skipped += self.pair_unexecuted(&calls[index..], CANCELLED_CALL_TEXT, sink);
                self.resolve.turn_end(TurnStop::Aborted);
                return Err(AgentError::Cancelled);
            }
            match self.execute_call(call, cancel).await {
                Ok(result) => {
                    counts.executed += 1;
                    self.record_result(call, result, true, sink);
                }
                Err(AgentError::Cancelled) => {
                    counts.skipped +=
                        self.pair_unexecuted(&calls[index..], CANCELLED_CALL_TEXT, sink);
                    self.resolve.turn_end(TurnStop::Aborted);
                    return Err(AgentError::Cancelled);
                }
                Err(error) => {
                    self.record_result(call, ToolResult::error(error.to_string()), true, sink);
                    counts.skipped += self.pair_unexecuted(rest, STOPPED_CALL_TEXT, sink);
                    self.resolve.turn_end(TurnStop::Error);
                    return Err(error);
                }
            }
        }
        Ok(())
    }

    /// Run one call. Model mistakes (unknown tool, malformed JSON, schema violations) and tool
    /// errors become error results; only cancellation and fatal tool errors are `Err`.
    async fn execute_call(
        &self,
        call: &ToolCall,
        cancel: &CancellationToken,
    ) -> Result<ToolResult, AgentError> {
        let args = match call.parse_arguments() {
            Ok(args) => args,
            Err(error) => {
                return Ok(ToolResult::error(format!(
                    "Invalid arguments for `{}`: not valid JSON ({error}). Send the arguments as one JSON object matching the tool's schema.",
                    call.name
                )));
            }
        };
        if call.name == RESOLVE_TOOL_NAME && self.tools.offers_resolve() {
            let preview = self
                .plan
                .as_ref()
                .and_then(|plan| plan.preview_ahead(&self.resolve));
            let result = match self.resolve.execute_resolve(&args, cancel).await {
                Ok(result) => result,
                Err(error) => ToolResult::from_error(&error),
            };
            return Ok(match preview {
                Some(label) => note_preview_ahead_of_plan(result, &label),
                None => result,
            });
        }
        let Some(tool) = self.tools.get(&call.name) else {
            let names = self.tools.names();
            return Ok(ToolResult::error(format!(
                "Unknown tool `{}`. Available tools: {}.",
                call.name,
                names.join(", ")
            )));
        };
        if let Err(error) = tool.spec().validate(&args) {
            return Ok(ToolResult::from_error(&error));
        }
        let ctx = ToolContext::new(self.resolve.clone(), cancel.clone(), call.id.clone());
        let outcome = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(AgentError::Cancelled),
            outcome = tool.execute(args, &ctx) => outcome,
        };
        match outcome {
            Ok(result) => Ok(result),
            Err(ToolError::RespondToModel(message)) => Ok(ToolResult::error(message)),
            Err(ToolError::Fatal(message)) => Err(AgentError::ToolFatal {
                tool: call.name.clone(),
                message,
            }),
        }
    }
}
