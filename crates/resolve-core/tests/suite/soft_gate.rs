//! The soft tool requirement on `SoftGate`, driven by a scripted agent loop, plus the escalation
//! cap and reminder re-injection rules.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use pretty_assertions::assert_eq;
use resolve_core::{
    ActionError, CHECK_TOOL_NAME, Error, MAX_COMPANION_TURNS, MAX_SOFT_ESCALATIONS, PushOptions,
    ReminderMessage, ResolveSession, SoftGate, SoftToolRequirement, ToolChoice,
    ToolChoiceDirective, ToolResult, TurnStop, TurnVerdict, skipped_call_text,
};

use super::common::{Log, apply, counting_edit, recording_action, session, token};

const SKIPPED: &str = "Tool call was not executed because the assistant ended its turn: Not executed: call the `resolve` tool to resolve the pending action before using other tools.";
const CAP: &str = "Soft tool requirement 'resolve' was not satisfied after 3 forced turns; aborting to avoid an unbounded force loop.";

/// One scripted model response.
#[derive(Debug, Clone, Copy)]
enum Reply {
    /// Tool calls, by name.
    Calls(&'static [&'static str]),
    /// Bare text, no tool calls.
    Text,
    /// A response the loop must re-sample within the same logical turn (a Harmony leak).
    HarmonyLeak,
}

/// What the run sent and recorded.
#[derive(Debug, Clone, PartialEq)]
enum Message {
    Reminder(ReminderMessage),
    Assistant(Vec<&'static str>),
    ToolResult {
        call: &'static str,
        text: String,
        is_error: bool,
    },
}

#[derive(Debug)]
struct Run {
    /// The tool choice of every model call, in order.
    tool_choices: Vec<Option<ToolChoice>>,
    /// The transcript.
    messages: Vec<Message>,
    /// Tool calls that actually ran, in order.
    executed: Vec<&'static str>,
    /// How the run ended.
    outcome: Result<(), Error>,
}

impl Run {
    fn reminders(&self) -> Vec<ReminderMessage> {
        self.messages
            .iter()
            .filter_map(|message| match message {
                Message::Reminder(reminder) => Some(reminder.clone()),
                Message::Assistant(_) | Message::ToolResult { .. } => None,
            })
            .collect()
    }
}

fn forced_resolve() -> Option<ToolChoice> {
    Some(ToolChoice::Tool("resolve".to_owned()))
}

/// The agent loop in miniature: one directive per logical turn, the gate's tool choice per
/// model call, calls run only on `Execute` (`resolve` through the session), stop on a turn
/// without tool calls that the gate accepts.
async fn run_agent(
    session: &ResolveSession,
    static_choice: Option<ToolChoice>,
    script: &[Reply],
) -> Run {
    let mut gate = SoftGate::new();
    let mut replies = script.iter().copied();
    let mut run = Run {
        tool_choices: Vec::new(),
        messages: Vec::new(),
        executed: Vec::new(),
        outcome: Ok(()),
    };
    loop {
        let directive = session.next_tool_choice_directive(|_| true);
        for reminder in gate.begin_turn(directive) {
            run.messages.push(Message::Reminder(reminder));
        }
        let calls = loop {
            run.tool_choices
                .push(gate.tool_choice(static_choice.as_ref()));
            match replies.next() {
                Some(Reply::HarmonyLeak) => {}
                Some(Reply::Calls(calls)) => break calls.to_vec(),
                Some(Reply::Text) => break Vec::new(),
                None => panic!(
                    "the loop asked for model call {} but the script has {}",
                    run.tool_choices.len(),
                    script.len()
                ),
            }
        };
        run.messages.push(Message::Assistant(calls.clone()));
        match gate.after_response(static_choice.as_ref(), &calls) {
            Err(error) => {
                session.turn_end(TurnStop::Error);
                run.outcome = Err(error);
                return run;
            }
            Ok(TurnVerdict::SkipAll { skipped_text }) => {
                for call in calls {
                    run.messages.push(Message::ToolResult {
                        call,
                        text: skipped_text.clone(),
                        is_error: true,
                    });
                }
            }
            Ok(TurnVerdict::Execute) => {
                if calls.is_empty() {
                    session.turn_end(TurnStop::Completed);
                    return run;
                }
                for call in calls {
                    run.executed.push(call);
                    let result = if call == "resolve" {
                        session
                            .execute_resolve(&apply("The preview is right."), &token())
                            .await
                            .unwrap_or_else(|error| ToolResult::from_error(&error))
                    } else {
                        ToolResult::text(format!("{call} ran"))
                    };
                    run.messages.push(Message::ToolResult {
                        call,
                        text: result.text,
                        is_error: result.is_error,
                    });
                }
            }
        }
        session.turn_end(TurnStop::Completed);
    }
}

/// A session with one staged preview; returns it and the apply log.
fn staged() -> (ResolveSession, Log<super::common::CallbackCall>, String) {
    let session = session();
    let (action, applies) = recording_action(
        "AST Edit: 1 replacement in 1 file",
        "ast_edit",
        "Applied 1 replacement in 1 file.",
    );
    let id = session.queue_resolve_handler(action).unwrap();
    (session, applies, id)
}

#[tokio::test]
async fn compliant_model_is_never_forced_and_sees_the_reminder_once() {
    let (session, applies, _) = staged();
    let run = run_agent(&session, None, &[Reply::Calls(&["resolve"]), Reply::Text]).await;
    assert_eq!(run.outcome, Ok(()));
    assert_eq!(applies.len(), 1);
    assert_eq!(run.tool_choices, vec![None, None]);
    assert_eq!(run.reminders(), vec![ReminderMessage::resolve("ast_edit")]);
    assert_eq!(
        run.messages[0],
        Message::Reminder(ReminderMessage::resolve("ast_edit")),
        "the reminder precedes the first call"
    );
}

#[tokio::test]
async fn detour_call_is_skipped_and_the_next_call_is_forced_to_resolve() {
    let (session, applies, _) = staged();
    let run = run_agent(
        &session,
        None,
        &[
            Reply::Calls(&["peek"]),
            Reply::Calls(&["resolve"]),
            Reply::Text,
        ],
    )
    .await;
    assert_eq!(run.outcome, Ok(()));
    assert_eq!(run.executed, vec!["resolve"], "peek never ran");
    assert_eq!(applies.len(), 1);
    assert_eq!(run.tool_choices, vec![None, forced_resolve(), None]);
    assert_eq!(
        run.messages[1..3],
        [
            Message::Assistant(vec!["peek"]),
            Message::ToolResult {
                call: "peek",
                text: SKIPPED.to_owned(),
                is_error: true
            }
        ]
    );
    assert_eq!(run.reminders().len(), 1);
}

#[tokio::test]
async fn bare_text_while_pending_does_not_end_the_run_and_forces_resolve() {
    let (session, applies, _) = staged();
    let run = run_agent(
        &session,
        None,
        &[Reply::Text, Reply::Calls(&["resolve"]), Reply::Text],
    )
    .await;
    assert_eq!(run.outcome, Ok(()));
    assert_eq!(run.tool_choices.len(), 3, "the loop went on after the text");
    assert_eq!(run.tool_choices[1], forced_resolve());
    assert_eq!(applies.len(), 1);
}

#[tokio::test]
async fn without_a_requirement_one_text_reply_ends_the_run_unforced() {
    let session = session();
    let run = run_agent(&session, None, &[Reply::Text]).await;
    assert_eq!(run.outcome, Ok(()));
    assert_eq!(run.tool_choices, vec![None]);
    assert_eq!(run.reminders(), Vec::new());
}

/// A hard directive yielding `resolve` forever, counting its yields.
fn counting_hard_source(session: &ResolveSession) -> Arc<AtomicUsize> {
    let yields = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&yields);
    session.queue().push(
        std::iter::from_fn(move || {
            counter.fetch_add(1, Ordering::SeqCst);
            Some(ToolChoice::Tool("resolve".to_owned()))
        }),
        PushOptions::new().label("host"),
    );
    yields
}

#[tokio::test]
async fn hard_choice_is_consumed_once_for_a_resampled_turn() {
    let session = session();
    let yields = counting_hard_source(&session);
    let run = run_agent(&session, None, &[Reply::HarmonyLeak, Reply::Text]).await;
    assert_eq!(run.outcome, Ok(()));
    assert_eq!(run.tool_choices, vec![forced_resolve(), forced_resolve()]);
    assert_eq!(yields.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn hard_choice_is_consumed_exactly_once_per_logical_turn() {
    let session = session();
    let yields = counting_hard_source(&session);
    let run = run_agent(
        &session,
        None,
        &[
            Reply::HarmonyLeak,
            Reply::Calls(&["peek"]),
            Reply::HarmonyLeak,
            Reply::HarmonyLeak,
            Reply::Text,
        ],
    )
    .await;
    assert_eq!(run.outcome, Ok(()));
    assert_eq!(run.tool_choices.len(), 5);
    assert_eq!(yields.load(Ordering::SeqCst), 2, "two logical turns");
    assert_eq!(run.executed, vec!["peek"], "a hard turn has no soft gate");
}

#[tokio::test]
async fn fourth_decline_on_one_id_ends_the_run_with_the_cap_error() {
    let (session, applies, id) = staged();
    let run = run_agent(
        &session,
        None,
        &[
            Reply::Calls(&["peek"]),
            Reply::Text,
            Reply::Calls(&["peek", "resolve"]),
            Reply::Calls(&["peek"]),
        ],
    )
    .await;
    let error = run.outcome.unwrap_err();
    assert_eq!(
        error,
        Error::EscalationCap {
            tool: "resolve".to_owned(),
            cap: MAX_SOFT_ESCALATIONS
        }
    );
    assert_eq!(error.to_string(), CAP);
    assert_eq!(
        run.tool_choices,
        vec![None, forced_resolve(), forced_resolve(), forced_resolve()],
        "at most three forced calls"
    );
    assert_eq!(run.executed, Vec::<&str>::new());
    assert_eq!(applies.len(), 0);
    assert!(session.queue().pending().contains(&id));
}

#[tokio::test]
async fn resolve_mixed_into_a_detour_batch_is_skipped_too() {
    let (session, applies, _) = staged();
    let run = run_agent(
        &session,
        None,
        &[
            Reply::Calls(&["resolve", "peek"]),
            Reply::Calls(&["resolve"]),
            Reply::Text,
        ],
    )
    .await;
    assert_eq!(run.outcome, Ok(()));
    assert_eq!(run.executed, vec!["resolve"]);
    assert_eq!(applies.len(), 1, "only the compliant call ran");
    assert_eq!(
        run.messages[1..4],
        [
            Message::Assistant(vec!["resolve", "peek"]),
            Message::ToolResult {
                call: "resolve",
                text: SKIPPED.to_owned(),
                is_error: true
            },
            Message::ToolResult {
                call: "peek",
                text: SKIPPED.to_owned(),
                is_error: true
            },
        ]
    );
}

#[tokio::test]
async fn escalations_are_not_reset_by_a_compliant_turn_on_the_same_id() {
    let session = session();
    let (action, attempts) =
        counting_edit(|_| async { Err(ActionError::Failed("disk full".to_owned())) });
    session.queue_resolve_handler(action).unwrap();
    let run = run_agent(
        &session,
        None,
        &[
            Reply::Calls(&["peek"]),
            Reply::Calls(&["resolve"]),
            Reply::Calls(&["peek"]),
            Reply::Calls(&["peek"]),
            Reply::Calls(&["peek"]),
        ],
    )
    .await;
    assert_eq!(
        run.outcome.as_ref().map_err(ToString::to_string),
        Err(CAP.to_owned())
    );
    assert_eq!(attempts.load(Ordering::SeqCst), 1);
    assert_eq!(
        run.tool_choices,
        vec![
            None,
            forced_resolve(),
            None,
            forced_resolve(),
            forced_resolve()
        ]
    );
    assert!(run.messages.contains(&Message::ToolResult {
        call: "resolve",
        text: "Apply failed: disk full".to_owned(),
        is_error: true
    }));
    assert_eq!(
        run.reminders().len(),
        1,
        "the failed apply kept the same id"
    );
}

#[tokio::test]
async fn reminder_is_injected_again_when_the_head_id_changes() {
    let session = session();
    let (older, older_applies) = recording_action("Edit: a.rs", "edit", "ok");
    let (newer, newer_applies) =
        recording_action("AST Edit: 1 replacement in 1 file", "ast_edit", "ok");
    session.queue_resolve_handler(older).unwrap();
    session.queue_resolve_handler(newer).unwrap();
    let run = run_agent(
        &session,
        None,
        &[
            Reply::Calls(&["resolve"]),
            Reply::Calls(&["peek"]),
            Reply::Calls(&["resolve"]),
            Reply::Text,
        ],
    )
    .await;
    assert_eq!(run.outcome, Ok(()));
    assert_eq!(
        run.reminders(),
        vec![
            ReminderMessage::resolve("ast_edit"),
            ReminderMessage::resolve("edit")
        ]
    );
    assert_eq!((newer_applies.len(), older_applies.len()), (1, 1));
    assert_eq!(
        run.tool_choices,
        vec![None, None, forced_resolve(), None],
        "the decline counter restarted for the new id"
    );
}

#[tokio::test]
async fn compliant_batch_of_several_resolve_calls_runs_each_on_the_next_head() {
    let session = session();
    let (older, older_applies) = recording_action("Edit: a.rs", "edit", "ok");
    let (newer, newer_applies) = recording_action("Edit: b.rs", "edit", "ok");
    session.queue_resolve_handler(older).unwrap();
    session.queue_resolve_handler(newer).unwrap();
    let run = run_agent(
        &session,
        None,
        &[Reply::Calls(&["resolve", "resolve"]), Reply::Text],
    )
    .await;
    assert_eq!(run.outcome, Ok(()));
    assert_eq!(run.executed, vec!["resolve", "resolve"]);
    assert_eq!((newer_applies.len(), older_applies.len()), (1, 1));
    assert!(!session.queue().pending().has_pending());
}

#[test]
fn reminder_is_injected_again_after_a_hard_directive_turn() {
    let (session, _, id) = staged();
    let mut gate = SoftGate::new();
    let mut reminders = Vec::new();
    for turn in 0..5 {
        if turn == 2 {
            session.set_forced_tool_choice("read", |_| true).unwrap();
        }
        let directive = session.next_tool_choice_directive(|_| true);
        reminders.push(gate.begin_turn(directive).len());
        gate.after_response(None, &["resolve"]).unwrap();
        session.turn_end(TurnStop::Completed);
    }
    // Turns: soft (new id), soft (same id), hard `read`, hard `none`, soft again.
    assert_eq!(reminders, vec![1, 0, 0, 0, 1]);
    assert_eq!(
        session.next_tool_choice_directive(|_| true),
        Some(ToolChoiceDirective::Soft(SoftToolRequirement {
            id,
            tool_name: "resolve".to_owned(),
            reminder: vec![ReminderMessage::resolve("ast_edit")]
        }))
    );
}

#[tokio::test]
async fn static_choice_none_keeps_the_gate_inactive_but_still_reminds() {
    let (session, applies, id) = staged();
    let run = run_agent(&session, Some(ToolChoice::None), &[Reply::Text]).await;
    assert_eq!(run.outcome, Ok(()));
    assert_eq!(run.tool_choices, vec![Some(ToolChoice::None)]);
    assert_eq!(run.reminders().len(), 1);
    assert_eq!(applies.len(), 0);
    assert!(session.queue().pending().contains(&id));
}

#[tokio::test]
async fn static_choice_forcing_another_tool_keeps_the_gate_inactive() {
    let (session, applies, _) = staged();
    let peek = Some(ToolChoice::Tool("peek".to_owned()));
    let run = run_agent(
        &session,
        peek.clone(),
        &[Reply::Calls(&["peek"]), Reply::Text],
    )
    .await;
    assert_eq!(run.outcome, Ok(()));
    assert_eq!(run.executed, vec!["peek"]);
    assert_eq!(run.tool_choices, vec![peek.clone(), peek]);
    assert_eq!(applies.len(), 0);
}

#[test]
fn static_required_or_auto_does_not_block_the_gate() {
    for static_choice in [ToolChoice::Auto, ToolChoice::Required, ToolChoice::Any] {
        let mut gate = SoftGate::new();
        gate.begin_turn(Some(ToolChoiceDirective::Soft(SoftToolRequirement {
            id: "preview-1".to_owned(),
            tool_name: "resolve".to_owned(),
            reminder: Vec::new(),
        })));
        let verdict = gate
            .after_response(Some(&static_choice), &["peek"])
            .unwrap();
        assert_eq!(
            verdict,
            TurnVerdict::SkipAll {
                skipped_text: skipped_call_text("resolve")
            },
            "{static_choice:?}"
        );
        assert_eq!(gate.tool_choice(Some(&static_choice)), forced_resolve());
    }
}

#[test]
fn host_hard_choice_beats_the_escalation_which_beats_the_static_choice() {
    let requirement = || {
        Some(ToolChoiceDirective::Soft(SoftToolRequirement {
            id: "preview-1".to_owned(),
            tool_name: "resolve".to_owned(),
            reminder: Vec::new(),
        }))
    };
    let mut gate = SoftGate::new();
    gate.begin_turn(requirement());
    assert_eq!(
        gate.tool_choice(Some(&ToolChoice::Auto)),
        Some(ToolChoice::Auto)
    );
    gate.after_response(Some(&ToolChoice::Auto), &[]).unwrap();
    assert_eq!(gate.tool_choice(Some(&ToolChoice::Auto)), forced_resolve());
    gate.begin_turn(Some(ToolChoiceDirective::Hard(ToolChoice::Required)));
    assert_eq!(
        gate.tool_choice(Some(&ToolChoice::Auto)),
        Some(ToolChoice::Required)
    );
    gate.after_response(Some(&ToolChoice::Auto), &[]).unwrap();
    gate.begin_turn(None);
    assert_eq!(
        gate.tool_choice(Some(&ToolChoice::Auto)),
        Some(ToolChoice::Auto)
    );
}

#[test]
fn skipped_call_text_and_cap_text_are_exact() {
    assert_eq!(skipped_call_text("resolve"), SKIPPED);
    let mut gate = SoftGate::new();
    gate.begin_turn(Some(ToolChoiceDirective::Soft(SoftToolRequirement {
        id: "preview-1".to_owned(),
        tool_name: "resolve".to_owned(),
        reminder: Vec::new(),
    })));
    for decline in 1..=3 {
        assert!(matches!(
            gate.after_response(None, &["peek"]),
            Ok(TurnVerdict::SkipAll { .. })
        ));
        assert_eq!(gate.escalations(), decline);
    }
    let error = gate.after_response(None, &["peek"]).unwrap_err();
    assert_eq!(error.to_string(), CAP);
}

fn requirement(id: &str) -> Option<ToolChoiceDirective> {
    Some(ToolChoiceDirective::Soft(SoftToolRequirement {
        id: id.to_owned(),
        tool_name: "resolve".to_owned(),
        reminder: Vec::new(),
    }))
}

#[test]
fn a_check_before_resolve_is_no_decline_and_forces_nothing() {
    let mut gate = SoftGate::new().allowing(CHECK_TOOL_NAME);
    gate.begin_turn(requirement("preview-1"));
    for calls in [&["check"][..], &["check", "resolve"], &["resolve"]] {
        assert_eq!(
            gate.after_response(None, calls).unwrap(),
            TurnVerdict::Execute,
            "{calls:?}"
        );
        assert_eq!(gate.escalations(), 0, "{calls:?}");
        assert_eq!(gate.tool_choice(None), None, "{calls:?}: nothing forced");
    }
    // Without the companion, the same `check` turn is a decline.
    let mut plain = SoftGate::new();
    plain.begin_turn(requirement("preview-1"));
    assert!(matches!(
        plain.after_response(None, &["check"]),
        Ok(TurnVerdict::SkipAll { .. })
    ));
}

#[test]
fn companion_only_turns_past_the_limit_count_as_declines_until_a_new_preview() {
    let mut gate = SoftGate::new().allowing(CHECK_TOOL_NAME);
    gate.begin_turn(requirement("preview-1"));
    for _ in 0..MAX_COMPANION_TURNS {
        assert_eq!(
            gate.after_response(None, &["check"]).unwrap(),
            TurnVerdict::Execute
        );
    }
    assert!(matches!(
        gate.after_response(None, &["check"]),
        Ok(TurnVerdict::SkipAll { .. })
    ));
    assert_eq!(gate.escalations(), 1);
    // Another tool beside a companion is still a decline.
    assert!(matches!(
        gate.after_response(None, &["check", "peek"]),
        Ok(TurnVerdict::SkipAll { .. })
    ));
    // A new preview starts afresh.
    gate.begin_turn(requirement("preview-2"));
    assert_eq!(
        gate.after_response(None, &["check"]).unwrap(),
        TurnVerdict::Execute
    );
    assert_eq!(gate.escalations(), 0);
}

#[test]
fn a_companion_withdrawn_mid_requirement_makes_its_call_a_decline_again() {
    let mut gate = SoftGate::new();
    gate.set_allowed(CHECK_TOOL_NAME, true);
    gate.begin_turn(requirement("preview-1"));
    assert_eq!(
        gate.after_response(None, &["check"]).unwrap(),
        TurnVerdict::Execute
    );
    gate.set_allowed(CHECK_TOOL_NAME, false);
    assert_eq!(
        gate.after_response(None, &["check"]).unwrap(),
        TurnVerdict::SkipAll {
            skipped_text: skipped_call_text("resolve")
        }
    );
    assert_eq!(gate.tool_choice(None), forced_resolve());
    // Allowing it twice names it once: withdrawing it once withdraws it.
    gate.set_allowed(CHECK_TOOL_NAME, true);
    gate.set_allowed(CHECK_TOOL_NAME, true);
    gate.set_allowed(CHECK_TOOL_NAME, false);
    assert!(matches!(
        gate.after_response(None, &["check"]),
        Ok(TurnVerdict::SkipAll { .. })
    ));
}
