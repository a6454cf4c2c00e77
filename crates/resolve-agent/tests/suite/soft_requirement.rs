//! Reference §9.2 end to end, through the real HTTP client, for both wire formats: the soft
//! `resolve` requirement (remind once, skip and force on a decline, cap on the fourth).

use pretty_assertions::assert_eq;
use resolve_agent::{AgentError, AgentEvent, AgentSession, ProviderKind};
use resolve_core::{ToolChoice, skipped_call_details, skipped_call_text};
use serde_json::json;

use super::support::{
    Events, Tools, change_a_txt, config, forced_resolve, peek, reminder_count, resolve,
    run_quietly, run_recording, stage_call, stage_detour_then_apply, stage_then_apply, tool_choice,
    tool_results, tools_and_session,
};
use crate::both_providers;
use resolve_test_support::{MockServer, Reply, Turn};

async fn compliant_resolve_sends_no_tool_choice_and_one_reminder(kind: ProviderKind) {
    let server = MockServer::start(stage_then_apply("c")).await;
    let (tools, mut session) = tools_and_session(&server, kind);
    let events = Events::default();
    let summary = change_a_txt(&mut session, &events).await.unwrap();

    assert_eq!(tools.applied(), 1, "resolve ran once");
    assert_eq!(summary.model_calls, 3);
    assert_eq!(summary.final_text, "Done.");
    assert_eq!(summary.pending_actions, 0);
    let bodies = server.bodies();
    assert_eq!(bodies.len(), 3);
    for body in &bodies {
        assert_eq!(tool_choice(body), None, "no tool_choice on any call");
    }
    assert_eq!(reminder_count(&bodies[0]), 0);
    assert_eq!(reminder_count(&bodies[1]), 1);
    assert_eq!(
        reminder_count(&bodies[2]),
        1,
        "the reminder appears exactly once"
    );
    assert_eq!(events.reminders(), 1);
    let results = tool_results(&bodies[2]);
    assert_eq!(results[1].0, "c2");
    assert_eq!(results[1].1, "Applied stage to a.txt.");
}
both_providers!(compliant_resolve_sends_no_tool_choice_and_one_reminder);

async fn detour_is_not_executed_gets_a_skipped_result_and_the_next_call_is_forced(
    kind: ProviderKind,
) {
    let server = MockServer::start(stage_detour_then_apply("c")).await;
    let (tools, mut session) = tools_and_session(&server, kind);
    let events = Events::default();
    let summary = change_a_txt(&mut session, &events).await.unwrap();

    assert_eq!(tools.peeks(), 0, "the detour never ran");
    assert_eq!(tools.applied(), 1);
    assert_eq!(summary.skipped_calls, 1);
    let bodies = server.bodies();
    assert_eq!(bodies.len(), 4);
    assert_eq!(tool_choice(&bodies[0]), None);
    assert_eq!(tool_choice(&bodies[1]), None);
    assert_eq!(tool_choice(&bodies[2]), Some(forced_resolve(kind)));
    assert_eq!(tool_choice(&bodies[3]), None, "the force lasts one call");
    let skipped = tool_results(&bodies[2])
        .into_iter()
        .find(|(id, ..)| id == "c2")
        .expect("the skipped call has a paired result");
    assert_eq!(skipped.1, skipped_call_text("resolve"));
    if kind == ProviderKind::Anthropic {
        assert!(skipped.2, "the skipped result is an error");
    }
    assert!(events.all().contains(&AgentEvent::ToolResult {
        id: "c2".into(),
        name: "peek".into(),
        text: skipped_call_text("resolve"),
        is_error: true,
        details: Some(skipped_call_details()),
        executed: false,
    }));
    assert_eq!(
        reminder_count(&bodies[3]),
        1,
        "no second reminder for the same id"
    );
}
both_providers!(detour_is_not_executed_gets_a_skipped_result_and_the_next_call_is_forced);

async fn bare_text_while_pending_does_not_stop_the_loop_and_forces_resolve(kind: ProviderKind) {
    let server = MockServer::start(vec![
        stage_call("c1", "a.txt"),
        Reply::text("Looks good to me."),
        resolve("c2", "apply"),
        Reply::text("Done."),
    ])
    .await;
    let (tools, mut session) = tools_and_session(&server, kind);
    let summary = change_a_txt(&mut session, &Events::default())
        .await
        .unwrap();

    assert_eq!(
        summary.model_calls, 4,
        "the loop did not stop at the bare text"
    );
    assert_eq!(tools.applied(), 1);
    let bodies = server.bodies();
    assert_eq!(tool_choice(&bodies[1]), None);
    assert_eq!(tool_choice(&bodies[2]), Some(forced_resolve(kind)));
    assert_eq!(tool_choice(&bodies[3]), None);
}
both_providers!(bare_text_while_pending_does_not_stop_the_loop_and_forces_resolve);

async fn no_requirement_sends_no_tool_choice(kind: ProviderKind) {
    let server = MockServer::start(vec![Reply::text("Hello.")]).await;
    let (_, mut session) = tools_and_session(&server, kind);
    let summary = run_quietly(&mut session, "Say hello").await.unwrap();

    assert_eq!(summary.model_calls, 1);
    let bodies = server.bodies();
    assert_eq!(bodies.len(), 1);
    assert_eq!(tool_choice(&bodies[0]), None);
    assert_eq!(reminder_count(&bodies[0]), 0);
}
both_providers!(no_requirement_sends_no_tool_choice);

async fn fourth_decline_ends_the_run_with_the_cap_error(kind: ProviderKind) {
    let server = MockServer::start(vec![
        stage_call("c1", "a.txt"),
        peek("c2"),
        peek("c3"),
        peek("c4"),
        peek("c5"),
        Reply::text("never sent"),
    ])
    .await;
    let (tools, mut session) = tools_and_session(&server, kind);
    let error = change_a_txt(&mut session, &Events::default())
        .await
        .unwrap_err();

    assert_eq!(
        error.to_string(),
        "Soft tool requirement 'resolve' was not satisfied after 3 forced turns; aborting to avoid an unbounded force loop."
    );
    assert!(matches!(error, AgentError::Core(_)));
    assert_eq!(tools.peeks(), 0);
    let bodies = server.bodies();
    assert_eq!(
        bodies.len(),
        5,
        "at most 3 forced calls after the first decline"
    );
    let choices: Vec<_> = bodies.iter().map(tool_choice).collect();
    let forced = Some(forced_resolve(kind));
    assert_eq!(
        choices,
        vec![None, None, forced.clone(), forced.clone(), forced]
    );
    // The transcript stays valid: the last calls are paired with results.
    let last = session.transcript().last().unwrap();
    assert!(matches!(last, resolve_agent::Message::Tool { call_id, .. } if call_id == "c5"));
    assert_eq!(
        session.resolve_session().queue().pending().len(),
        1,
        "still pending"
    );
}
both_providers!(fourth_decline_ends_the_run_with_the_cap_error);

async fn resolve_mixed_into_a_detour_batch_is_not_executed(kind: ProviderKind) {
    let server = MockServer::start(vec![
        stage_call("c1", "a.txt"),
        Reply::Turn(
            Turn::call("c2", "resolve", json!({"action":"apply","reason":"ok"}))
                .and_call("c3", "peek", "{}"),
        ),
        resolve("c4", "discard"),
        Reply::text("Dropped."),
    ])
    .await;
    let (tools, mut session) = tools_and_session(&server, kind);
    change_a_txt(&mut session, &Events::default())
        .await
        .unwrap();

    assert_eq!(tools.applied(), 0, "the mixed-in resolve did not apply");
    assert_eq!(tools.peeks(), 0);
    let bodies = server.bodies();
    assert_eq!(tool_choice(&bodies[2]), Some(forced_resolve(kind)));
    let results = tool_results(&bodies[3]);
    assert_eq!(results[1].1, skipped_call_text("resolve"));
    assert_eq!(results[2].1, skipped_call_text("resolve"));
    assert_eq!(
        results[3].1,
        "Discarded: Stage: a.txt. Reason: The preview is right."
    );
}
both_providers!(resolve_mixed_into_a_detour_batch_is_not_executed);

async fn preview_left_pending_by_an_earlier_run_is_reminded_in_the_next_runs_first_request(
    kind: ProviderKind,
) {
    let server = MockServer::start(vec![
        stage_call("c1", "a.txt"),
        Reply::text("Staged; stopping here."),
        resolve("c2", "apply"),
        Reply::text("Done."),
    ])
    .await;
    let tools = Tools::new();
    let mut builder = resolve_agent::AgentSession::builder(super::support::config(&server, kind));
    builder.tools(tools.all()).max_turns(Some(2));
    let mut session = builder.build().unwrap();
    let error = change_a_txt(&mut session, &Events::default())
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "Stopped after 2 model calls (--max-turns)."
    );
    assert_eq!(session.resolve_session().queue().pending().len(), 1);

    let events = Events::default();
    run_recording(&mut session, "Go on", &events).await.unwrap();
    assert_eq!(
        events.reminders(),
        1,
        "a new run re-injects the reminder once"
    );
    assert_eq!(tools.applied(), 1);
    let bodies = server.bodies();
    assert_eq!(reminder_count(&bodies[2]), 2);
    assert_eq!(tool_choice(&bodies[2]), None);
}
both_providers!(preview_left_pending_by_an_earlier_run_is_reminded_in_the_next_runs_first_request);

async fn host_hard_choice_is_sent_once_and_settled_at_turn_end(kind: ProviderKind) {
    let server = MockServer::start(vec![peek("c1"), Reply::text("Done.")]).await;
    let (tools, mut session) = tools_and_session(&server, kind);
    let resolved = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = resolved.clone();
    session.resolve_session().queue().push_once(
        resolve_core::ToolChoice::Tool("peek".into()),
        resolve_core::PushOptions::new().on_resolved(move |_| {
            seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }),
    );
    run_quietly(&mut session, "Look").await.unwrap();
    assert_eq!(tools.peeks(), 1);
    assert_eq!(resolved.load(std::sync::atomic::Ordering::SeqCst), 1);
    let bodies = server.bodies();
    let forced_peek = match kind {
        ProviderKind::OpenAi => json!({"type":"function","function":{"name":"peek"}}),
        ProviderKind::Anthropic => json!({"type":"tool","name":"peek"}),
    };
    assert_eq!(tool_choice(&bodies[0]), Some(forced_peek));
    assert_eq!(
        tool_choice(&bodies[1]),
        None,
        "the consumed directive is not replayed"
    );
    assert!(!session.resolve_session().queue().has_in_flight());
}
both_providers!(host_hard_choice_is_sent_once_and_settled_at_turn_end);

async fn with_forcing_off_every_decline_gets_no_tool_choice_and_the_fourth_is_the_cap(
    kind: ProviderKind,
) {
    let server = MockServer::start(vec![
        stage_call("c1", "a.txt"),
        Reply::text("I would rather not."),
        peek("c2"),
        Reply::text("Still no."),
        peek("c3"),
        Reply::text("never sent"),
    ])
    .await;
    let tools = Tools::new();
    let mut config = super::support::config(&server, kind);
    config.forced_tool_choice = resolve_agent::ForcedChoiceSupport::Off;
    let mut session =
        resolve_agent::AgentSession::new(config, tools.all(), "You are a test agent.").unwrap();
    let events = Events::default();
    let error = change_a_txt(&mut session, &events).await.unwrap_err();

    assert_eq!(
        error.to_string(),
        "Soft tool requirement 'resolve' was not satisfied after 3 forced turns; aborting to avoid an unbounded force loop."
    );
    let bodies = server.bodies();
    assert_eq!(bodies.len(), 5, "the fourth decline ends the run");
    assert!(
        bodies.iter().all(|body| tool_choice(body).is_none()),
        "forcing is off: reminder only"
    );
    assert_eq!(reminder_count(&bodies[4]), 1, "reminded once per id");
    assert_eq!(tools.peeks(), 0, "declined turns run nothing");
    assert_eq!(session.resolve_session().queue().pending().len(), 1);
}
both_providers!(with_forcing_off_every_decline_gets_no_tool_choice_and_the_fourth_is_the_cap);

async fn an_inactive_resolve_with_an_action_pending_gets_no_reminder_and_no_forcing(
    kind: ProviderKind,
) {
    let server = MockServer::start(vec![peek("c1"), Reply::text("Done.")]).await;
    let tools = Tools::new();
    // No deferrable tool is registered, so `resolve` is not offered; an action is pending all
    // the same (staged on the session before the run).
    let resolve = std::sync::Arc::new(resolve_core::ResolveSession::new());
    let id = resolve
        .queue_resolve_handler(resolve_core::PendingAction::new(
            "Stage: a.txt",
            "stage",
            |_, _| async { Ok(resolve_core::ToolResult::text("applied")) },
        ))
        .unwrap();
    let mut builder = resolve_agent::AgentSession::builder(super::support::config(&server, kind));
    builder
        .tools(vec![
            tools.peek.clone() as std::sync::Arc<dyn resolve_agent::Tool>
        ])
        .resolve_session(resolve.clone());
    let mut session = builder.build().unwrap();
    let events = Events::default();
    run_recording(&mut session, "Look around", &events)
        .await
        .unwrap();

    let bodies = server.bodies();
    assert_eq!(bodies.len(), 2);
    for body in &bodies {
        assert_eq!(tool_choice(body), None);
        assert_eq!(reminder_count(body), 0);
        let names: Vec<&str> = body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|tool| {
                tool["function"]["name"]
                    .as_str()
                    .or(tool["name"].as_str())
                    .unwrap()
            })
            .collect();
        assert_eq!(names, vec!["peek"], "resolve is not offered");
    }
    assert_eq!(events.reminders(), 0);
    assert_eq!(tools.peeks(), 1, "the detour ran: no gate");
    assert_eq!(
        resolve.queue().pending().peek_head().unwrap().id,
        id,
        "still pending"
    );
}
both_providers!(an_inactive_resolve_with_an_action_pending_gets_no_reminder_and_no_forcing);

/// A pending source whose store stages one preview at the first read and then cannot be read.
#[derive(Default)]
struct UnreadableAfterFirstRefresh {
    refreshes: std::sync::atomic::AtomicUsize,
}

impl resolve_core::PendingSource for UnreadableAfterFirstRefresh {
    fn refresh(&self, stack: &mut resolve_core::PendingStack) -> Result<(), resolve_core::Error> {
        use std::sync::atomic::Ordering;
        if self.refreshes.fetch_add(1, Ordering::SeqCst) > 0 {
            return Err(resolve_core::Error::PendingSource(
                "cannot read .resolve/pending: permission denied".to_owned(),
            ));
        }
        let action = resolve_core::PendingAction::new("Edit: a.txt", "edit", |_, _| async {
            Ok(resolve_core::ToolResult::text("Applied edit to a.txt."))
        });
        stack.register_at("pending-action:edit:1", 1, std::sync::Arc::new(action));
        Ok(())
    }
}

async fn a_store_that_cannot_be_read_opens_the_gate_and_the_resolve_result_says_why(
    kind: ProviderKind,
) {
    let server = MockServer::start(vec![
        peek("c1"),
        resolve("c2", "apply"),
        peek("c3"),
        Reply::text("Done."),
    ])
    .await;
    let tools = Tools::new();
    let resolve = std::sync::Arc::new(
        resolve_core::ResolveSession::new()
            .with_pending_source(std::sync::Arc::new(UnreadableAfterFirstRefresh::default())),
    );
    let mut builder = resolve_agent::AgentSession::builder(super::support::config(&server, kind));
    builder.tools(tools.all()).resolve_session(resolve.clone());
    let mut session = builder.build().unwrap();
    let events = Events::default();
    change_a_txt(&mut session, &events).await.unwrap();

    let bodies = server.bodies();
    assert_eq!(bodies.len(), 4);
    assert_eq!(
        reminder_count(&bodies[0]),
        1,
        "the store's preview was pending"
    );
    assert_eq!(
        tool_choice(&bodies[1]),
        Some(forced_resolve(kind)),
        "the decline's one force"
    );
    assert_eq!(
        tool_choice(&bodies[2]),
        None,
        "no more forcing on a stale stack"
    );
    assert_eq!(tool_choice(&bodies[3]), None);
    let said = tool_results(&bodies[2])
        .into_iter()
        .find(|(id, ..)| id == "c2")
        .unwrap()
        .1;
    assert!(
        said.starts_with(
            "cannot read .resolve/pending: permission denied\nDropped 1 stale pending action"
        ),
        "{said}"
    );
    assert_eq!(tools.peeks(), 1, "the gate is open again");
    assert!(resolve.queue().pending().is_empty());
}
both_providers!(a_store_that_cannot_be_read_opens_the_gate_and_the_resolve_result_says_why);

/// A session over the test tools with `choice` as its static tool choice.
fn session_choosing(
    server: &MockServer,
    kind: ProviderKind,
    tools: &Tools,
    choice: ToolChoice,
) -> AgentSession {
    let mut builder = AgentSession::builder(config(server, kind));
    builder
        .tools(tools.all())
        .system_prompt("You are a test agent.")
        .tool_choice(Some(choice));
    builder.build().unwrap()
}

// Issue #36, item 1: without a check tool, `check` is a detour like any other.
async fn a_check_call_while_pending_without_a_check_tool_is_skipped_and_forces_resolve(
    kind: ProviderKind,
) {
    let server = MockServer::start(vec![
        stage_call("c1", "a.txt"),
        Reply::call("c2", "check", json!({})),
        resolve("c3", "apply"),
        Reply::text("Done."),
    ])
    .await;
    let (tools, mut session) = tools_and_session(&server, kind);
    let events = Events::default();
    let summary = change_a_txt(&mut session, &events).await.unwrap();

    assert!(
        !session.tool_specs().iter().any(|spec| spec.name == "check"),
        "no check tool is offered"
    );
    assert_eq!(summary.skipped_calls, 1);
    assert_eq!(tools.applied(), 1);
    let bodies = server.bodies();
    assert_eq!(bodies.len(), 4);
    assert_eq!(tool_choice(&bodies[1]), None);
    assert_eq!(
        tool_choice(&bodies[2]),
        Some(forced_resolve(kind)),
        "the check turn was a decline"
    );
    assert_eq!(tool_choice(&bodies[3]), None);
    assert!(events.all().contains(&AgentEvent::ToolResult {
        id: "c2".into(),
        name: "check".into(),
        text: skipped_call_text("resolve"),
        is_error: true,
        details: Some(skipped_call_details()),
        executed: false,
    }));
}
both_providers!(a_check_call_while_pending_without_a_check_tool_is_skipped_and_forces_resolve);

// Issue #36, item 6: a static choice naming a tool that is not offered is
// dropped, so no `tool_choice` goes on the wire, and the soft requirement works as usual.
async fn a_static_choice_naming_a_tool_not_offered_is_not_sent(kind: ProviderKind) {
    let server = MockServer::start(stage_detour_then_apply("c")).await;
    let tools = Tools::new();
    let mut session =
        session_choosing(&server, kind, &tools, ToolChoice::Tool("absent".to_owned()));
    let summary = change_a_txt(&mut session, &Events::default())
        .await
        .unwrap();

    assert_eq!(summary.model_calls, 4);
    assert_eq!(
        tools.peeks(),
        0,
        "the gate is active: the detour was skipped"
    );
    let bodies = server.bodies();
    let choices: Vec<_> = bodies.iter().map(tool_choice).collect();
    assert_eq!(
        choices,
        vec![None, None, Some(forced_resolve(kind)), None],
        "the static choice never reached the wire"
    );
}
both_providers!(a_static_choice_naming_a_tool_not_offered_is_not_sent);

// Issue #36, item 6: a static `none` keeps the gate inactive, so a
// detour runs while a preview is pending, nothing is forced, and the reminder is still sent.
async fn a_static_none_lets_a_detour_run_while_pending_and_still_reminds(kind: ProviderKind) {
    let server = MockServer::start(stage_detour_then_apply("c")).await;
    let tools = Tools::new();
    let mut session = session_choosing(&server, kind, &tools, ToolChoice::None);
    let events = Events::default();
    let summary = change_a_txt(&mut session, &events).await.unwrap();

    assert_eq!(tools.peeks(), 1, "the detour ran");
    assert_eq!(summary.skipped_calls, 0);
    assert_eq!(tools.applied(), 1);
    let none = match kind {
        ProviderKind::OpenAi => json!("none"),
        ProviderKind::Anthropic => json!({"type": "none"}),
    };
    let bodies = server.bodies();
    assert_eq!(bodies.len(), 4);
    for body in &bodies {
        assert_eq!(tool_choice(body), Some(none.clone()), "nothing was forced");
    }
    assert_eq!(reminder_count(&bodies[0]), 0);
    assert_eq!(reminder_count(&bodies[1]), 1, "the reminder is still sent");
    assert_eq!(reminder_count(&bodies[3]), 1, "once");
    assert_eq!(events.reminders(), 1);
    let peeked = tool_results(&bodies[2])
        .into_iter()
        .find(|(id, ..)| id == "c2")
        .unwrap();
    assert_eq!(peeked.1, "peeked");
}
both_providers!(a_static_none_lets_a_detour_run_while_pending_and_still_reminds);
