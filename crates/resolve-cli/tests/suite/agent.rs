//! `resolve agent` end to end: the real binary against a scripted mock model server on
//! 127.0.0.1, speaking the OpenAI-compatible wire format.

use resolve_test_support::Turn;
use resolve_test_support::text::assert_contains;
use serde_json::{Value, json};

use super::common::{
    Model, REMINDER, Run, Workspace, edit_and_apply_model, edit_call, json_lines, reminders,
    resolve_call, run_agent,
};

fn agent(workspace: &Workspace, model: &Model, extra: &[&str], stdin: &str) -> Run {
    run_agent(
        workspace,
        model,
        extra,
        "Change one to uno in a.txt.",
        stdin,
    )
}

#[test]
fn the_model_stages_an_edit_and_its_resolve_applies_it() {
    let workspace = Workspace::with(&[("a.txt", "one\n")]);
    let model = edit_and_apply_model(Turn::text("Done."));
    let run = agent(&workspace, &model, &[], "").expect_code(0);
    assert_eq!(workspace.read("a.txt"), "uno\n");
    assert_contains(&run.stdout, "Applied edit to a.txt.");
    assert_contains(&run.stdout, "Accept: a.txt ⟦Edit⟧");
    let bodies = model.bodies();
    assert_eq!(bodies.len(), 3);
    assert!(
        bodies.iter().all(|body| body.get("tool_choice").is_none()),
        "a compliant model is never forced"
    );
    assert_eq!(
        reminders(&bodies[1]),
        1,
        "the reminder follows the preview's tool result"
    );
    let messages = bodies[1]["messages"].as_array().unwrap();
    assert_eq!(messages.last().unwrap()["content"], REMINDER);
    assert_eq!(messages[messages.len() - 2]["role"], "tool");
    assert!(workspace.pending_ids().is_empty());
}

#[test]
fn approve_ask_lets_a_person_discard_and_the_model_reads_why() {
    let workspace = Workspace::with(&[("a.txt", "one\n")]);
    let model = edit_and_apply_model(Turn::text("Understood."));
    let run = agent(
        &workspace,
        &model,
        &["--approve", "ask"],
        "d\nKeep the English word.\n",
    )
    .expect_code(0);
    assert_eq!(workspace.read("a.txt"), "one\n");
    assert_contains(&run.stderr, "Apply this change?");
    assert_contains(&model.last_tool_result(), "Keep the English word.");
    let log = workspace.run_ok(&["log"]);
    assert_contains(&log.stdout, "discarded");
    assert_contains(
        &log.stdout,
        "decided: person)  — Keep the English word. (model: Matches the task.)",
    );
}

/// The model stages an edit of `a.txt` and asks to apply it under `--approve MODE`; the person
/// answers `a`: the edit lands and the log says the person decided. The run, exit 0.
fn person_applies_under(mode: &str) -> Run {
    let workspace = Workspace::with(&[("a.txt", "one\n")]);
    let model = edit_and_apply_model(Turn::text("Done."));
    let run = agent(&workspace, &model, &["--approve", mode], "a\n").expect_code(0);
    assert_eq!(workspace.read("a.txt"), "uno\n");
    let log = workspace.run_ok(&["log"]);
    assert_contains(
        &log.stdout,
        "(staged: agent, resolved: agent, decided: person)  — Matches the task.",
    );
    run
}

#[test]
fn approve_review_asks_the_person_at_the_terminal_and_applies_what_they_keep() {
    let run = person_applies_under("review");
    assert_contains(&run.stderr, "Apply this change?");
}

#[test]
fn approve_ask_applies_when_the_person_agrees() {
    person_applies_under("ask");
}

#[test]
fn max_turns_stops_with_exit_one_and_a_preview_left_pending_is_reminded_next_run() {
    let workspace = Workspace::with(&[("a.txt", "one\n")]);
    let first = Model::start(vec![edit_call()]);
    let run = agent(&workspace, &first, &["--max-turns", "1"], "").expect_code(1);
    assert_contains(&run.stderr, "Stopped after 1 model calls (--max-turns).");
    assert_eq!(workspace.pending_ids().len(), 1);

    let second = Model::start(vec![
        resolve_call("discard", "Not needed after all."),
        Turn::text("Dropped."),
    ]);
    agent(&workspace, &second, &[], "").expect_code(0);
    assert_eq!(
        reminders(&second.bodies()[0]),
        1,
        "the first request of the next run carries the reminder"
    );
    assert!(workspace.pending_ids().is_empty());
    assert_eq!(workspace.read("a.txt"), "one\n");
}

#[test]
fn a_model_that_keeps_declining_ends_with_the_cap_error_and_exit_one() {
    let workspace = Workspace::with(&[("a.txt", "one\n")]);
    let mut script = vec![edit_call()];
    script.extend((0..4).map(|_| Turn::text("I would rather not.")));
    let model = Model::start(script);
    let run = agent(&workspace, &model, &[], "").expect_code(1);
    assert_contains(
        &run.stderr,
        "Soft tool requirement 'resolve' was not satisfied after 3 forced turns; aborting to avoid an unbounded force loop.",
    );
    let forced: Vec<bool> = model
        .bodies()
        .iter()
        .map(|body| body.get("tool_choice").is_some())
        .collect();
    assert_eq!(forced, vec![false, false, true, true, true]);
    assert_eq!(
        model.bodies()[2]["tool_choice"],
        json!({"type": "function", "function": {"name": "resolve"}})
    );
    assert_eq!(
        workspace.read("a.txt"),
        "one\n",
        "nothing lands without resolve"
    );
}

#[test]
fn json_mode_writes_one_event_per_line() {
    let workspace = Workspace::with(&[("a.txt", "one\n")]);
    let model = Model::start(vec![
        edit_call(),
        resolve_call("apply", "Fine."),
        Turn::text("Done."),
    ]);
    let run = agent(&workspace, &model, &["--json"], "").expect_code(0);
    let events = json_lines(&run.stdout);
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "tool_call" && e["name"] == "edit")
    );
    assert!(
        events.iter().any(|e| e["type"] == "tool_result"
            && e["name"] == "resolve"
            && e["is_error"] == false)
    );
}

/// The events of a `--json` run.
fn json_events(run: &Run) -> Vec<Value> {
    json_lines(&run.stdout)
}

#[test]
fn json_mode_shows_the_synthetic_details_of_calls_skipped_while_a_preview_is_pending() {
    let workspace = Workspace::with(&[("a.txt", "one\n")]);
    let model = Model::start(vec![
        edit_call(),
        Turn::call("c3", "read", json!({"path": "a.txt"})),
        resolve_call("discard", "Not needed."),
        Turn::text("Done."),
    ]);
    let run = agent(&workspace, &model, &["--json"], "").expect_code(0);
    let skipped: Vec<Value> = json_events(&run)
        .into_iter()
        .filter(|e| e["type"] == "tool_result" && e["name"] == "read")
        .collect();
    assert_eq!(skipped.len(), 1, "{}", run.stdout);
    assert_eq!(skipped[0]["executed"], false);
    assert_eq!(skipped[0]["is_error"], true);
    assert_eq!(
        skipped[0]["details"],
        json!({"__synthetic": true, "source": "assistant_stop_skipped", "executed": false})
    );
}

#[test]
fn json_mode_reports_the_replacements_of_an_applied_ast_edit_in_source_result_details() {
    let workspace = Workspace::with(&[("src/lib.rs", "fn main() { foo(1); foo(2); }\n")]);
    let model = Model::start(vec![
        Turn::call(
            "c1",
            "ast_edit",
            json!({"ops": [{"pat": "foo($A)", "out": "bar($A)"}], "paths": ["src"]}),
        ),
        resolve_call("apply", "Renames every call."),
        Turn::text("Done."),
    ]);
    let run = agent(&workspace, &model, &["--json"], "").expect_code(0);
    let result = json_events(&run)
        .into_iter()
        .find(|e| e["type"] == "tool_result" && e["name"] == "resolve")
        .unwrap();
    assert_eq!(result["is_error"], false, "{result}");
    assert_eq!(result["details"]["sourceToolName"], "ast_edit");
    assert_eq!(
        result["details"]["sourceResultDetails"]["totalReplacements"],
        2
    );
    assert_eq!(
        workspace.read("src/lib.rs"),
        "fn main() { bar(1); bar(2); }\n"
    );
}
