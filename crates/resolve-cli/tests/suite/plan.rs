//! `resolve agent --plan` end to end: the real binary against a scripted mock model server
//! (OpenAI-compatible wire format). Plan mode offers the read-only tools and a plan-file
//! `write`; `resolve` submits the plan; approval restores every tool and the run goes on.

use resolve_agent::PLAN_MODE_REMINDER;
use resolve_test_support::text::{assert_contains, assert_starts_with};
use resolve_test_support::{Reply, Turn};
use serde_json::{Value, json};

use super::common::{self, Model, Run, Workspace, json_lines};

const PLAN_PATH: &str = ".resolve/plans/words-counter-plan.md";
const PLAN: &str = "# Words counter\n\n1. Change one to uno in a.txt.\n";
const APPROVED: &str = "Plan approved at .resolve/plans/words-counter-plan.md. Plan mode exited; proceed with the implementation.";
const PLAN_TOOLS: [&str; 5] = ["read", "ls", "grep", "write", "resolve"];
const ALL_TOOLS: [&str; 8] = [
    "ast_edit",
    "edit",
    "write",
    "apply_patch",
    "read",
    "ls",
    "grep",
    "resolve",
];
const REFUSED: &str = "Plan mode: `write` only writes plan files, as `.resolve/plans/<name>.md` (for example `.resolve/plans/words-counter-plan.md`);";
const NOT_APPROVED: &str =
    "The run ended in plan mode: no plan was approved, so nothing was implemented.";

/// `resolve agent EXTRA… TASK` with `stdin` piped in.
fn run_agent(workspace: &Workspace, model: &Model, args: &[&str], stdin: &str) -> Run {
    common::run_agent(workspace, model, args, "Change one to uno in a.txt.", stdin)
}

fn plan_agent(workspace: &Workspace, model: &Model, extra: &[&str], stdin: &str) -> Run {
    let mut args = vec!["--plan"];
    args.extend_from_slice(extra);
    run_agent(workspace, model, &args, stdin)
}

/// `resolve agent --plan` to exit 0 (nothing on stdin); the bodies of the model's requests.
fn planned_run_bodies(workspace: &Workspace, model: &Model) -> Vec<Value> {
    plan_agent(workspace, model, &[], "").expect_code(0);
    model.bodies()
}

fn write_plan(id: &str, path: &str, content: &str) -> Turn {
    Turn::call(id, "write", json!({"path": path, "content": content}))
}

fn submit(id: &str, title: &str) -> Turn {
    Turn::call(
        id,
        "resolve",
        json!({"action": "apply", "reason": "The plan is complete.", "extra": {"title": title}}),
    )
}

fn edit_call(id: &str) -> Turn {
    Turn::call(
        id,
        "edit",
        json!({"path": "a.txt", "old_text": "one", "new_text": "uno"}),
    )
}

fn resolve_call(id: &str, action: &str, reason: &str) -> Turn {
    Turn::call(id, "resolve", json!({"action": action, "reason": reason}))
}

/// The names of the tools a request offered.
fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|tool| tool["function"]["name"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

fn messages(body: &Value) -> &Vec<Value> {
    body["messages"].as_array().unwrap()
}

/// The texts of a request's tool results, oldest first.
fn tool_results(body: &Value) -> Vec<String> {
    messages(body)
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .collect()
}

fn last_tool_result(body: &Value) -> String {
    tool_results(body).pop().unwrap()
}

fn plan_reminders(body: &Value) -> usize {
    messages(body)
        .iter()
        .filter(|m| m["role"] == "user" && m["content"] == PLAN_MODE_REMINDER)
        .count()
}

/// The `tool_choice` of each request (`None` when absent).
fn tool_choices(model: &Model) -> Vec<Option<Value>> {
    model
        .bodies()
        .iter()
        .map(|body| body.get("tool_choice").cloned())
        .collect()
}

/// Write the plan ([`PLAN`]) and submit it, then `then`.
fn planned_then(then: Vec<Turn>) -> Vec<Turn> {
    [
        vec![
            write_plan("p1", PLAN_PATH, PLAN),
            submit("p2", "words-counter"),
        ],
        then,
    ]
    .concat()
}

/// Write the plan, submit it, implement it (edit + resolve), finish.
fn plan_then_implement() -> Vec<Turn> {
    planned_then(vec![
        edit_call("e1"),
        resolve_call("e2", "apply", "Matches the plan."),
        Turn::text("Done."),
    ])
}

#[test]
fn a_plan_written_and_approved_automatically_is_then_implemented_in_the_same_run() {
    let workspace = Workspace::with(&[("a.txt", "one\n")]);
    let model = Model::start(plan_then_implement());
    // stdin is a pipe, not a terminal: `--plan-approve` defaults to auto.
    let run = plan_agent(&workspace, &model, &[], "").expect_code(0);
    assert!(
        !run.stderr.contains("Approve this plan?"),
        "auto never asks: {}",
        run.stderr
    );
    assert_eq!(workspace.read(PLAN_PATH), PLAN);
    assert_eq!(
        workspace.read("a.txt"),
        "uno\n",
        "the approved plan was implemented"
    );

    let bodies = model.bodies();
    assert_eq!(bodies.len(), 5);
    assert!(
        messages(&bodies[0])[0]["content"]
            .as_str()
            .unwrap()
            .contains("You start in plan mode."),
        "the system prompt explains plan mode"
    );
    let wrote = last_tool_result(&bodies[1]);
    assert_starts_with(
        &wrote,
        "Wrote plan .resolve/plans/words-counter-plan.md (3 lines).",
    );
    assert!(
        workspace.pending_ids().is_empty(),
        "a plan is not a preview"
    );
    let approved = last_tool_result(&bodies[2]);
    assert!(approved.starts_with(APPROVED), "{approved}");
    assert!(
        approved.contains(PLAN.trim_end()),
        "the plan stays in context: {approved}"
    );
    assert_eq!(
        last_tool_result(&bodies[4]),
        "Applied edit to a.txt.",
        "after approval `edit` stages a preview and `resolve` applies it"
    );
}

#[test]
fn producers_are_not_offered_in_plan_mode_and_are_offered_after_approval() {
    let workspace = Workspace::with(&[("a.txt", "one\n")]);
    let model = Model::start(plan_then_implement());
    plan_agent(&workspace, &model, &[], "").expect_code(0);
    let names: Vec<Vec<String>> = model.bodies().iter().map(tool_names).collect();
    assert_eq!(names[0], PLAN_TOOLS);
    assert_eq!(names[1], PLAN_TOOLS, "unchanged within plan mode");
    for later in &names[2..] {
        assert_eq!(later, &ALL_TOOLS, "every tool once the plan is approved");
    }
    let write = &model.bodies()[0]["tools"][3]["function"];
    assert!(
        write["description"]
            .as_str()
            .unwrap()
            .contains("`.resolve/plans/<name>.md`"),
        "{write}"
    );
}

#[test]
fn plan_approve_ask_shows_the_plan_and_approves_when_the_person_agrees() {
    let workspace = Workspace::with(&[("a.txt", "one\n")]);
    let model = Model::start(plan_then_implement());
    let run = plan_agent(&workspace, &model, &["--plan-approve", "ask"], "a\n").expect_code(0);
    assert_contains(&run.stderr, "Approve this plan?");
    assert!(
        run.stderr
            .contains("submitted a plan for approval: .resolve/plans/words-counter-plan.md")
            && run.stderr.contains("1. Change one to uno in a.txt."),
        "the person sees the plan: {}",
        run.stderr
    );
    assert!(last_tool_result(&model.bodies()[2]).starts_with(APPROVED));
    assert_eq!(workspace.read("a.txt"), "uno\n");
}

#[test]
fn refine_gives_the_model_the_feedback_and_plan_mode_stays_until_approval() {
    let workspace = Workspace::with(&[("a.txt", "one\n")]);
    let revised = "# Words counter\n\n1. Change one to uno in a.txt.\n2. Test empty input.\n";
    let model = Model::start(planned_then(vec![
        write_plan("p3", PLAN_PATH, revised),
        submit("p4", "words-counter"),
        Turn::text("Done."),
    ]));
    let run = plan_agent(
        &workspace,
        &model,
        &["--plan-approve", "ask"],
        "r\nAdd a test for empty input.\na\n",
    )
    .expect_code(0);
    assert_contains(&run.stderr, "What should change");
    let bodies = model.bodies();
    assert_eq!(
        last_tool_result(&bodies[2]),
        "Plan refinement requested: Add a test for empty input. Update the plan file, then call `resolve` with action \"apply\" again when ready."
    );
    assert_eq!(tool_names(&bodies[2]), PLAN_TOOLS, "still in plan mode");
    assert_eq!(tool_names(&bodies[3]), PLAN_TOOLS);
    assert!(last_tool_result(&bodies[4]).starts_with(APPROVED));
    assert_eq!(tool_names(&bodies[4]), ALL_TOOLS);
    assert_eq!(workspace.read(PLAN_PATH), revised);
}

#[test]
fn discard_answers_with_the_plan_label_and_plan_mode_stays() {
    let workspace = Workspace::with(&[("a.txt", "one\n")]);
    let model = Model::start(vec![
        write_plan("p1", PLAN_PATH, PLAN),
        resolve_call("p2", "discard", "Rethinking the approach."),
        submit("p3", "words-counter"),
        Turn::text("Done."),
    ]);
    let bodies = planned_run_bodies(&workspace, &model);
    assert_eq!(
        last_tool_result(&bodies[2]),
        "Discarded: Plan ready for approval. Reason: Rethinking the approach."
    );
    assert_eq!(tool_names(&bodies[2]), PLAN_TOOLS, "still in plan mode");
    assert!(last_tool_result(&bodies[3]).starts_with(APPROVED));
    assert_eq!(tool_names(&bodies[3]), ALL_TOOLS);
}

#[test]
fn apply_without_a_plan_file_says_where_to_write_it_and_plan_mode_stays() {
    let workspace = Workspace::with(&[("a.txt", "one\n")]);
    let model = Model::start(vec![
        submit("p1", "ghost"),
        write_plan("p2", ".resolve/plans/ghost-plan.md", PLAN),
        submit("p3", "ghost"),
        Turn::text("Done."),
    ]);
    let bodies = planned_run_bodies(&workspace, &model);
    assert_eq!(
        last_tool_result(&bodies[1]),
        "Plan file not found at .resolve/plans/ghost-plan.md. Write the finalized plan to .resolve/plans/ghost-plan.md before requesting approval."
    );
    assert_eq!(tool_names(&bodies[1]), PLAN_TOOLS);
    assert!(
        last_tool_result(&bodies[3]).starts_with("Plan approved at .resolve/plans/ghost-plan.md."),
        "{}",
        last_tool_result(&bodies[3])
    );
}

#[test]
fn unusable_plan_titles_get_the_three_normalization_errors() {
    let workspace = Workspace::with(&[("a.txt", "one\n")]);
    let bad_titles = submit("t1", "   ")
        .and_call(
            "t2",
            "resolve",
            &json!({"action": "apply", "reason": "Ready.", "extra": {"title": "../plans/x"}})
                .to_string(),
        )
        .and_call(
            "t3",
            "resolve",
            &json!({"action": "apply", "reason": "Ready.", "extra": {"title": "!!!"}}).to_string(),
        );
    let model = Model::start(vec![
        write_plan("p1", PLAN_PATH, PLAN),
        bad_titles,
        submit("p2", "words-counter"),
        Turn::text("Done."),
    ]);
    plan_agent(&workspace, &model, &[], "").expect_code(0);
    let results = tool_results(&model.bodies()[2]);
    assert_eq!(
        results[results.len() - 3..],
        [
            "Plan title is required and must not be empty.",
            "Plan title must not contain path separators or '..'.",
            "Plan title must contain at least one letter, number, underscore, or hyphen after sanitization.",
        ]
    );
    assert_eq!(
        tool_names(&model.bodies()[2]),
        PLAN_TOOLS,
        "still in plan mode"
    );
}

#[test]
fn write_outside_the_plan_directory_is_refused_and_nothing_is_written() {
    let workspace = Workspace::with(&[("a.txt", "one\n")]);
    let paths = [
        "a.txt",
        ".resolve/plans/../../b.txt",
        ".resolve/pending/9.json",
        "notes/plan.md",
        ".resolve/plans/plan.txt",
    ];
    let mut outside = Turn::default();
    for (index, path) in paths.iter().enumerate() {
        outside = outside.and_call(
            &format!("w{index}"),
            "write",
            &json!({"path": path, "content": "changed\n"}).to_string(),
        );
    }
    let model = Model::start(vec![
        outside,
        write_plan("p1", PLAN_PATH, PLAN),
        submit("p2", "words-counter"),
        Turn::text("Done."),
    ]);
    plan_agent(&workspace, &model, &[], "").expect_code(0);
    let results = tool_results(&model.bodies()[1]);
    assert_eq!(results.len(), paths.len());
    for (result, path) in results.iter().zip(paths) {
        assert!(result.starts_with(REFUSED), "{result}");
        assert_contains(result, &format!("`{path}` was not written"));
    }
    assert_eq!(workspace.read("a.txt"), "one\n");
    for path in &paths[1..] {
        assert!(!workspace.path(path).exists(), "{path} was written");
    }
    assert!(!workspace.path("b.txt").exists());
    assert!(
        workspace.pending_ids().is_empty(),
        "nothing was staged either"
    );
}

#[test]
fn text_stops_in_plan_mode_get_a_reminder_and_a_forced_tool_call_at_most_three_times() {
    let workspace = Workspace::with(&[("a.txt", "one\n")]);
    let model = Model::start((0..5).map(|_| Turn::text("Here is my plan: …")).collect());
    let run = plan_agent(&workspace, &model, &[], "").expect_code(1);
    assert_contains(&run.stderr, NOT_APPROVED);
    let bodies = model.bodies();
    assert_eq!(bodies.len(), 4, "the fourth text-only stop ends the run");
    let required = Some(json!("required"));
    assert_eq!(
        tool_choices(&model),
        [None, required.clone(), required.clone(), required]
    );
    assert_eq!(plan_reminders(&bodies[3]), 3);
    let last = messages(&bodies[1]).last().unwrap();
    assert_eq!(last["role"], "user");
    assert_eq!(
        last["content"], PLAN_MODE_REMINDER,
        "the reminder is its own message"
    );
}

#[test]
fn a_resolve_call_resets_the_plan_mode_reminder_count() {
    let workspace = Workspace::with(&[("a.txt", "one\n")]);
    let model = Model::start(vec![
        Turn::text("Thinking."),
        resolve_call("d1", "discard", "Not ready yet."),
        Turn::text("Still thinking."),
        Turn::text("Still thinking."),
        Turn::text("Still thinking."),
        Turn::text("Still thinking."),
        Turn::text("Never requested."),
    ]);
    plan_agent(&workspace, &model, &[], "").expect_code(1);
    let bodies = model.bodies();
    assert_eq!(bodies.len(), 6, "three reminders after the reset, not two");
    assert_eq!(plan_reminders(&bodies[5]), 4);
    let required = Some(json!("required"));
    assert_eq!(
        tool_choices(&model),
        [
            None,
            required.clone(),
            None,
            required.clone(),
            required.clone(),
            required
        ]
    );
}

#[test]
fn a_server_rejecting_the_forced_choice_still_gets_the_reminder() {
    let workspace = Workspace::with(&[("a.txt", "one\n")]);
    let model = Model::replies(vec![
        Reply::Turn(Turn::text("Thinking.")),
        Reply::Status {
            status: 400,
            body: r#"{"error":{"message":"tool_choice 'required' is not supported"}}"#.to_owned(),
            retry_after: None,
        },
        Reply::Turn(write_plan("p1", PLAN_PATH, PLAN)),
        Reply::Turn(submit("p2", "words-counter")),
        Reply::Turn(Turn::text("Done.")),
    ]);
    let run = plan_agent(&workspace, &model, &[], "").expect_code(0);
    assert_contains(&run.stderr, "rejected the forced tool_choice");
    let bodies = model.bodies();
    assert_eq!(bodies[1]["tool_choice"], "required");
    assert_eq!(
        bodies[2].get("tool_choice"),
        None,
        "degraded to reminder-only"
    );
    assert_eq!(
        messages(&bodies[2]).last().unwrap()["content"],
        PLAN_MODE_REMINDER
    );
    assert!(last_tool_result(&bodies[4]).starts_with(APPROVED));
}

#[test]
fn a_pending_preview_is_resolved_before_the_plan_and_the_result_says_so() {
    let workspace = Workspace::with(&[("a.txt", "one\n")]);
    let first = Model::start(vec![edit_call("e1")]);
    run_agent(&workspace, &first, &["--max-turns", "1"], "").expect_code(1);
    assert_eq!(workspace.pending_ids().len(), 1);

    let model = Model::start(vec![
        submit("p1", "words-counter"),
        write_plan("p2", PLAN_PATH, PLAN),
        submit("p3", "words-counter"),
        Turn::text("Done."),
    ]);
    let bodies = planned_run_bodies(&workspace, &model);
    assert_eq!(
        last_tool_result(&bodies[1]),
        "Applied edit to a.txt.\n\nThis resolved the pending preview `Edit: a.txt`, not the plan; call `resolve` again to submit the plan."
    );
    assert_eq!(workspace.read("a.txt"), "uno\n");
    assert_eq!(
        tool_names(&bodies[1]),
        PLAN_TOOLS,
        "the plan was not submitted"
    );
    assert!(last_tool_result(&bodies[3]).starts_with(APPROVED));
}

#[test]
fn apply_without_a_title_finds_the_written_plan_and_titles_it_from_its_heading() {
    let workspace = Workspace::with(&[("a.txt", "one\n")]);
    let model = Model::start(vec![
        write_plan(
            "p1",
            ".resolve/plans/counter.md",
            "# Words Counter\n\nSteps.\n",
        ),
        resolve_call("p2", "apply", "The plan is complete."),
        Turn::text("Done."),
    ]);
    let run = plan_agent(&workspace, &model, &["--json"], "").expect_code(0);
    let events = json_lines(&run.stdout);
    let result = events
        .iter()
        .find(|e| e["type"] == "tool_result" && e["name"] == "resolve")
        .unwrap();
    assert_eq!(result["is_error"], false);
    assert_eq!(result["details"]["sourceToolName"], "plan_approval");
    assert_eq!(result["details"]["label"], "Plan ready for approval");
    assert_eq!(
        result["details"]["sourceResultDetails"],
        json!({"planFilePath": ".resolve/plans/counter.md", "title": "Words-Counter",
               "planExists": true, "approved": true})
    );
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "plan_approved" && e["plan_path"] == ".resolve/plans/counter.md"),
        "{}",
        run.stdout
    );
}

/// The `resolve` tool-result events of a `--json` run.
fn resolve_results(run: &Run) -> Vec<Value> {
    run.stdout
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|e| e["type"] == "tool_result" && e["name"] == "resolve")
        .collect()
}

#[test]
fn apply_with_a_title_reports_the_plan_it_approved_in_source_result_details() {
    let workspace = Workspace::with(&[("a.txt", "one\n")]);
    let model = Model::start(planned_then(vec![Turn::text("Done.")]));
    let run = plan_agent(&workspace, &model, &["--json"], "").expect_code(0);
    let results = resolve_results(&run);
    assert_eq!(results.len(), 1, "{}", run.stdout);
    assert_eq!(results[0]["is_error"], false);
    assert_eq!(results[0]["details"]["sourceToolName"], "plan_approval");
    assert_eq!(
        results[0]["details"]["extra"],
        json!({"title": "words-counter"})
    );
    assert_eq!(
        results[0]["details"]["sourceResultDetails"],
        json!({"planFilePath": PLAN_PATH, "title": "words-counter",
               "planExists": true, "approved": true})
    );
}

#[test]
fn a_title_that_is_not_a_string_falls_back_to_the_heading_then_the_file_stem() {
    // `{}` (as a grammar-constrained model sends it): the plan's first heading.
    // `3`, for a plan without a heading: the file stem, less its `-plan`.
    let cases = [
        (
            json!({}),
            ".resolve/plans/counter.md",
            "# Words Counter\n\nSteps.\n",
            "Words-Counter",
        ),
        (
            json!(3),
            ".resolve/plans/tally-plan.md",
            "Steps only.\n",
            "tally",
        ),
    ];
    for (title, path, content, expected) in cases {
        let workspace = Workspace::with(&[("a.txt", "one\n")]);
        let model = Model::start(vec![
            write_plan("p1", path, content),
            Turn::call(
                "p2",
                "resolve",
                json!({"action": "apply", "reason": "The plan is complete.", "extra": {"title": title}}),
            ),
            Turn::text("Done."),
        ]);
        let run = plan_agent(&workspace, &model, &["--json"], "").expect_code(0);
        let results = resolve_results(&run);
        assert_eq!(results.len(), 1, "{}", run.stdout);
        assert_eq!(results[0]["is_error"], false, "{title}: {}", results[0]);
        assert_eq!(
            results[0]["details"]["sourceResultDetails"],
            json!({"planFilePath": path, "title": expected, "planExists": true, "approved": true}),
            "{title}"
        );
    }
}

#[test]
fn plan_approve_ask_with_standard_input_closed_ends_the_run_with_a_clear_error() {
    let workspace = Workspace::with(&[("a.txt", "one\n")]);
    let model = Model::start(planned_then(vec![Turn::text("Never requested.")]));
    let run = plan_agent(&workspace, &model, &["--plan-approve", "ask"], "").expect_code(1);
    assert_contains(
        &run.stderr,
        "Plan approval stopped the run: standard input closed",
    );
    assert_eq!(model.bodies().len(), 2);
}

#[test]
fn plan_approve_needs_plan() {
    let workspace = Workspace::new();
    let run = workspace.run(&["agent", "--plan-approve", "auto", "Do it."]);
    run.expect_code(2);
}

#[test]
fn agent_help_describes_plan_mode() {
    let run = Workspace::new().run_ok(&["agent", "--help"]);
    for needle in [
        "--plan",
        "--plan-approve <MODE>",
        ".resolve/plans/",
        "ask:  Show the plan and ask",
    ] {
        assert!(run.stdout.contains(needle), "{needle}: {}", run.stdout);
    }
}

// Issue #36: the count of lines in the `write` result agrees with its number.
#[test]
fn a_one_line_plan_is_reported_as_1_line() {
    let workspace = Workspace::with(&[("a.txt", "one\n")]);
    let model = Model::start(vec![
        write_plan("p1", PLAN_PATH, "# Words counter\n"),
        submit("p2", "words-counter"),
        Turn::text("Done."),
    ]);
    plan_agent(&workspace, &model, &[], "").expect_code(0);
    let wrote = last_tool_result(&model.bodies()[1]);
    assert_starts_with(
        &wrote,
        "Wrote plan .resolve/plans/words-counter-plan.md (1 line).",
    );
}

// Issue #36, item 7: approval clears the standing handler, so a later
// `resolve` finds nothing pending instead of reaching the plan handler again.
#[test]
fn a_resolve_after_plan_approval_finds_nothing_pending() {
    let workspace = Workspace::with(&[("a.txt", "one\n")]);
    let model = Model::start(planned_then(vec![
        resolve_call("r1", "apply", "Submitting once more."),
        resolve_call("r2", "discard", "Nothing left to drop."),
        Turn::text("Done."),
    ]));
    let run = plan_agent(&workspace, &model, &[], "").expect_code(0);
    let bodies = model.bodies();
    assert_eq!(bodies.len(), 5, "{}", run.stderr);
    assert!(last_tool_result(&bodies[2]).starts_with(APPROVED));
    assert_eq!(
        last_tool_result(&bodies[3]),
        "No pending action to resolve. Nothing to apply or discard.",
        "not `Plan mode is not active.`"
    );
    assert_eq!(
        last_tool_result(&bodies[4]),
        "Nothing to discard; no pending action remains."
    );
    assert_eq!(tool_names(&bodies[3]), ALL_TOOLS);
}
