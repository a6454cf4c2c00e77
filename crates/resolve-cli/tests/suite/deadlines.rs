//! Issue #31 §2 through the binary: every wait on a person has a deadline
//! (`--approve-timeout`). Past it nothing is written, the action stays pending and the model
//! reads that no decision came in time; an invalid duration is a usage error.

use resolve_test_support::text::assert_contains;
use std::io::Write;
use std::process::Stdio;
use std::time::{Duration, Instant};

use resolve_test_support::Turn;

use super::common::{Model, Run, Workspace, agent_args, edit_and_apply_model};

/// `resolve agent … EXTRA… TASK` whose standard input stays open and silent until it ends: a
/// person who never answers.
fn agent_nobody_answers(workspace: &Workspace, model: &Model, extra: &[&str]) -> Run {
    let base = model.openai_base();
    let mut args = agent_args(&base, extra);
    args.push("Change one to uno in a.txt.");
    let mut child = workspace
        .command(&args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut silent = child.stdin.take().unwrap();
    silent.flush().unwrap();
    let run = Run::from(child.wait_with_output().unwrap());
    drop(silent);
    run
}

#[test]
fn an_unanswered_ask_prompt_leaves_the_preview_pending_and_tells_the_model_at_the_deadline() {
    let workspace = Workspace::with(&[("a.txt", "one\n")]);
    let model = edit_and_apply_model(Turn::text("I will wait."));
    let started = Instant::now();
    let run = agent_nobody_answers(
        &workspace,
        &model,
        &[
            "--approve",
            "ask",
            "--approve-timeout",
            "1s",
            "--max-turns",
            "3",
        ],
    );
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "the prompt waited past its deadline"
    );
    assert_contains(&run.stderr, "Apply this change?");
    // The model read the result and went on; the run stops at its limit with the preview
    // still pending.
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_contains(&run.stderr, "Stopped after 3 model calls");
    assert_eq!(workspace.read("a.txt"), "one\n", "nothing was written");
    assert_eq!(workspace.pending_ids(), ["pending-action:edit:1"]);
    let result = model.last_tool_result();
    assert_contains(&result, "no decision came in time");
    assert_contains(&result, "1s");
    let log = workspace.run_ok(&["log"]);
    assert_contains(&log.stdout, "No applied or discarded actions yet.");
}

#[test]
fn an_unanswered_review_prompt_has_the_same_deadline() {
    let workspace = Workspace::with(&[("a.txt", "one\n")]);
    let model = edit_and_apply_model(Turn::text("I will wait."));
    let run = agent_nobody_answers(
        &workspace,
        &model,
        &[
            "--approve",
            "review",
            "--approve-timeout",
            "500ms",
            "--max-turns",
            "3",
        ],
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(workspace.read("a.txt"), "one\n");
    assert_eq!(workspace.pending_ids(), ["pending-action:edit:1"]);
    let result = model.last_tool_result();
    assert_contains(&result, "no decision came in time");
}

#[test]
fn an_invalid_approve_timeout_is_a_usage_error_naming_it() {
    let workspace = Workspace::with(&[("a.txt", "one\n")]);
    for command in [
        &["mcp", "--approve-timeout", "ten"][..],
        &["agent", "--approve-timeout", "5d", "task"][..],
    ] {
        let run = workspace.run(command).expect_code(2);
        assert_contains(&run.stderr, "Invalid duration");
    }
}
