//! `resolve agent`'s provider options end to end: `--thinking-budget` (Anthropic),
//! `--reasoning-effort` (OpenAI-compatible), and the usage line / `usage` event that ends a run.

use resolve_test_support::Turn;
use serde_json::{Value, json};

use super::common::{Model, Run, Workspace, edit_call, resolve, resolve_call, run_agent};

fn agent(workspace: &Workspace, model: &Model, extra: &[&str]) -> Run {
    run_agent(workspace, model, extra, "Change one to uno in a.txt.", "")
}

fn apply_call() -> Turn {
    resolve_call("apply", "Matches the task.")
}

fn thinking_block() -> Value {
    json!({"type": "thinking", "thinking": "Edit a.txt, then apply it.", "signature": "c2lnbmF0dXJl"})
}

#[test]
fn thinking_budget_enables_anthropic_thinking_and_sends_its_blocks_back() {
    let workspace = Workspace::with(&[("a.txt", "one\n")]);
    let model = Model::start(vec![
        edit_call().with_thinking_block(thinking_block()),
        apply_call(),
        Turn::text("Done."),
    ]);
    agent(
        &workspace,
        &model,
        &["--provider", "anthropic", "--thinking-budget", "2048"],
    )
    .expect_code(0);
    assert_eq!(workspace.read("a.txt"), "uno\n");
    let bodies = model.bodies();
    assert_eq!(bodies.len(), 3);
    for body in &bodies {
        assert_eq!(
            body["thinking"],
            json!({"type": "enabled", "budget_tokens": 2048})
        );
        assert!(body.get("reasoning_effort").is_none());
    }
    let assistant = &bodies[1]["messages"][1];
    assert_eq!(assistant["role"], "assistant");
    assert_eq!(assistant["content"][0], thinking_block());
    assert_eq!(assistant["content"][1]["type"], "tool_use");
}

#[test]
fn reasoning_effort_is_sent_to_openai_compatible_servers() {
    let workspace = Workspace::with(&[("a.txt", "one\n")]);
    let model = Model::start(vec![Turn::text("Nothing to do.")]);
    agent(&workspace, &model, &["--reasoning-effort", "high"]).expect_code(0);
    let body = &model.bodies()[0];
    assert_eq!(body["reasoning_effort"], json!("high"));
    assert!(body.get("thinking").is_none());
}

#[test]
fn without_the_flags_no_reasoning_keys_are_sent() {
    for provider in ["openai", "anthropic"] {
        let workspace = Workspace::with(&[("a.txt", "one\n")]);
        let model = Model::start(vec![Turn::text("Nothing to do.")]);
        agent(&workspace, &model, &["--provider", provider]).expect_code(0);
        let body = &model.bodies()[0];
        assert!(body.get("thinking").is_none(), "{provider}: {body}");
        assert!(body.get("reasoning_effort").is_none(), "{provider}: {body}");
    }
}

#[test]
fn reasoning_flags_for_the_other_provider_are_usage_errors() {
    let workspace = Workspace::new();
    for (args, says) in [
        (
            vec!["agent", "--thinking-budget", "2048", "task"],
            "`--thinking-budget` needs `--provider anthropic`",
        ),
        (
            vec![
                "agent",
                "--provider",
                "anthropic",
                "--reasoning-effort",
                "low",
                "task",
            ],
            "`--reasoning-effort` is for OpenAI-compatible servers",
        ),
        (
            vec![
                "agent",
                "--provider",
                "anthropic",
                "--thinking-budget",
                "100",
                "task",
            ],
            "1024",
        ),
        (
            vec!["agent", "--reasoning-effort", "extreme", "task"],
            "invalid value 'extreme'",
        ),
    ] {
        let run = workspace.run(&args).expect_code(2);
        assert!(run.stderr.contains(says), "{args:?}: {}", run.stderr);
    }
}

/// edit, a declined (text-only) turn, the forced `resolve`, the answer.
fn declining_script() -> Vec<Turn> {
    vec![
        edit_call().with_usage(100, 0, 0, 10),
        Turn::text("I would rather not.").with_usage(200, 80, 0, 20),
        apply_call().with_usage(300, 200, 0, 30),
        Turn::text("Done.").with_usage(400, 300, 0, 40),
    ]
}

const USAGE_LINE: &str = "usage: 4 model calls (1 forced), 1000 input tokens (420 uncached, 580 cached), 100 output tokens; forced calls: 300 input tokens (100 uncached, 200 cached), 30 output tokens";

#[test]
fn the_last_line_on_stderr_reports_usage_with_forced_calls_apart() {
    let workspace = Workspace::with(&[("a.txt", "one\n")]);
    let model = Model::start(declining_script());
    let run = agent(&workspace, &model, &[]).expect_code(0);
    assert_eq!(workspace.read("a.txt"), "uno\n");
    assert_eq!(
        run.stderr.lines().last(),
        Some(USAGE_LINE),
        "{}",
        run.stderr
    );
    assert!(
        model
            .bodies()
            .iter()
            .all(|b| b["stream_options"] == json!({"include_usage": true})),
        "streamed requests ask for usage"
    );
}

#[test]
fn a_failed_run_ends_with_its_usage_after_the_error() {
    let workspace = Workspace::with(&[("a.txt", "one\n")]);
    let model = Model::start(vec![edit_call().with_usage(100, 40, 0, 10)]);
    let run = agent(&workspace, &model, &["--max-turns", "1"]).expect_code(1);
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(
        lines[lines.len() - 2..],
        [
            "error: Stopped after 1 model calls (--max-turns).",
            "usage: 1 model call (0 forced), 100 input tokens (60 uncached, 40 cached), 10 output tokens"
        ],
        "{}",
        run.stderr
    );
}

#[test]
fn json_mode_ends_the_run_with_a_usage_event() {
    let workspace = Workspace::with(&[("a.txt", "one\n")]);
    let model = Model::start(declining_script());
    let run = agent(&workspace, &model, &["--json"]).expect_code(0);
    let last: Value = serde_json::from_str(run.stdout.lines().last().unwrap()).unwrap();
    assert_eq!(
        last,
        json!({"type": "usage", "model_calls": 4, "calls_without_usage": 0,
            "input_tokens": 1000, "cached_input_tokens": 580, "cache_write_input_tokens": 0,
            "output_tokens": 100,
            "forced": {"model_calls": 1, "calls_without_usage": 0, "input_tokens": 300,
                "cached_input_tokens": 200, "cache_write_input_tokens": 0, "output_tokens": 30}})
    );
}

#[test]
fn agent_help_documents_the_reasoning_flags_and_the_usage_line() {
    let output = resolve().args(["agent", "--help"]).output().unwrap();
    // Joined into one line: where the help wraps depends on the terminal width.
    let help = String::from_utf8_lossy(&output.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    for needle in [
        "--thinking-budget",
        "--reasoning-effort",
        "usage:",
        "`usage` event",
    ] {
        assert!(help.contains(needle), "{needle} missing from:\n{help}");
    }
}
