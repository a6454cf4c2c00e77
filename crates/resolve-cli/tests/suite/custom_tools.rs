//! Custom tools from MCP servers, end to end: the real `resolve` binary, a scripted mock model,
//! and small Python MCP servers (the `mcp` SDK from PyPI, through `RESOLVE_PYTHON` or
//! `python3`). Without the SDK these tests print a loud skip; with `CI` set they fail.

use resolve_test_support::text::{assert_contains, assert_starts_with};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use pretty_assertions::assert_eq;
use resolve_test_support::Turn;
use serde_json::{Value, json};

use super::common::{Model, Run, Workspace, json_lines, reminders, run_agent};

/// The test MCP server.
fn test_server() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp_test_server.py")
}

/// The custom tools guide's example server (docs/custom-tools.md).
fn notes_server() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/mcp/notes_server.py")
}

/// A Python with the `mcp` SDK, or `None` (after a loud skip note) when there is none. With
/// `CI` set, a missing SDK fails the test instead.
fn python() -> Option<&'static str> {
    static PYTHON: OnceLock<Option<String>> = OnceLock::new();
    PYTHON
        .get_or_init(|| {
            let python = std::env::var("RESOLVE_PYTHON").unwrap_or_else(|_| "python3".into());
            let probe = std::process::Command::new(&python)
                .args(["-c", "import mcp.types, mcp.server"])
                .output();
            match probe {
                Ok(output) if output.status.success() => Some(python),
                outcome => {
                    let why = match outcome {
                        Ok(output) => String::from_utf8_lossy(&output.stderr).into_owned(),
                        Err(error) => error.to_string(),
                    };
                    if std::env::var_os("CI").is_some() {
                        panic!(
                            "CI is set but `{python}` cannot import the `mcp` SDK ({why}); set RESOLVE_PYTHON to a Python with `pip install mcp`"
                        );
                    }
                    eprintln!(
                        "\n!!!!!!!! SKIPPED: MCP custom-tool tests need `{python}` with the `mcp` SDK ({}). Set RESOLVE_PYTHON to a Python with `pip install mcp`. !!!!!!!!\n",
                        why.trim()
                    );
                    None
                }
            }
        })
        .as_deref()
}

/// A workspace whose `.resolve/config.toml` runs the test server as `srv`, logging to
/// `calls.log`, plus any `extra` TOML; `None` (skip) without a Python that has `mcp`.
fn tool_workspace(extra: &str) -> Option<Workspace> {
    let python = python()?;
    let workspace = Workspace::new();
    let config = format!(
        "[mcp_servers.srv]\ncommand = {python:?}\nargs = [{:?}]\nenv = {{ RESOLVE_TEST_LOG = {:?} }}\n{extra}",
        test_server().display().to_string(),
        workspace.path("calls.log").display().to_string(),
    );
    workspace.write(".resolve/config.toml", config.as_bytes());
    workspace.trust();
    Some(workspace)
}

fn agent(workspace: &Workspace, model: &Model, extra: &[&str]) -> Run {
    run_agent(workspace, model, extra, "Take a note.", "")
}

/// The JSON lines the server's apply and reject tools logged.
fn calls(workspace: &Workspace) -> Vec<Value> {
    match std::fs::read_to_string(workspace.path("calls.log")) {
        Ok(text) => json_lines(&text),
        Err(_) => Vec::new(),
    }
}

fn stage_call(text: &str, with_reject: bool) -> Turn {
    Turn::call(
        "c1",
        "srv__stage",
        json!({"text": text, "with_reject": with_reject}),
    )
}

fn resolve(args: Value) -> Turn {
    Turn::call("c2", "resolve", args)
}

/// `(name, text, is_error)` of the `tool_result` events of a `--json` run.
fn tool_results(run: &Run) -> Vec<(String, String, bool, Value)> {
    run.stdout
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|event| event["type"] == "tool_result")
        .map(|event| {
            (
                event["name"].as_str().unwrap().to_owned(),
                event["text"].as_str().unwrap().to_owned(),
                event["is_error"].as_bool().unwrap(),
                event.get("details").cloned().unwrap_or(Value::Null),
            )
        })
        .collect()
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["function"]["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_staged_mcp_action_is_reminded_and_resolve_apply_calls_the_apply_tool_with_reason_and_extra() {
    let Some(workspace) = tool_workspace("") else {
        return;
    };
    let model = Model::start(vec![
        stage_call("buy milk", false),
        resolve(
            json!({"action": "apply", "reason": "The user asked for it.", "extra": {"ticket": 7}}),
        ),
        Turn::text("Done."),
    ]);
    let run = agent(&workspace, &model, &["--json"]).expect_code(0);

    let bodies = model.bodies();
    let tools = tool_names(&bodies[0]);
    for name in ["srv__stage", "srv__echo", "srv__fail", "resolve"] {
        assert!(tools.contains(&name.to_owned()), "{name} in {tools:?}");
    }
    assert!(
        !tools
            .iter()
            .any(|name| name == "srv__apply" || name == "srv__reject"),
        "tools marked resolve/hidden are not offered: {tools:?}"
    );
    let stage_tool = bodies[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["function"]["name"] == "srv__stage")
        .unwrap();
    assert_eq!(
        stage_tool["function"]["parameters"]["required"],
        json!(["text"]),
        "the server's input schema is forwarded"
    );
    assert_eq!(reminders(&bodies[1]), 1, "the staged action is reminded");

    let results = tool_results(&run);
    assert_eq!(results[0].1, "Preview: would add the note 'buy milk'.");
    assert!(!results[0].2);
    let pending_id = results[0].3["pendingId"].as_str().unwrap().to_owned();
    assert_starts_with(&pending_id, "pending-action:srv__stage:");
    let (name, text, is_error, details) = &results[1];
    assert_eq!(name, "resolve");
    assert_eq!(text, "Added the note 'buy milk'.");
    assert!(!is_error);
    assert_eq!(details["label"], "Note: buy milk");
    assert_eq!(details["sourceToolName"], "srv__stage");
    assert_eq!(details["sourceResultDetails"], json!({"lines": 1}));

    assert_eq!(
        calls(&workspace),
        vec![
            json!({"call": "apply", "text": "buy milk", "reason": "The user asked for it.", "extra": {"ticket": 7}})
        ]
    );
    assert!(workspace.pending_ids().is_empty());
    let log = workspace.run_ok(&["log"]);
    assert_contains(&log.stdout, &pending_id);
    assert_contains(&log.stdout, "applied");
}

#[test]
fn discard_without_a_reject_call_calls_nothing_and_answers_the_default_text() {
    let Some(workspace) = tool_workspace("") else {
        return;
    };
    let model = Model::start(vec![
        stage_call("buy milk", false),
        resolve(json!({"action": "discard", "reason": "Already bought."})),
        Turn::text("Dropped."),
    ]);
    let run = agent(&workspace, &model, &["--json"]).expect_code(0);
    let results = tool_results(&run);
    assert_eq!(
        results[1].1,
        "Discarded: Note: buy milk. Reason: Already bought."
    );
    assert!(calls(&workspace).is_empty(), "nothing was called");
    assert!(workspace.pending_ids().is_empty());
}

#[test]
fn discard_with_a_reject_call_calls_it_with_the_reason_and_extra() {
    let Some(workspace) = tool_workspace("") else {
        return;
    };
    let model = Model::start(vec![
        stage_call("buy milk", true),
        resolve(json!({"action": "discard", "reason": "Already bought.", "extra": {"by": "user"}})),
        Turn::text("Dropped."),
    ]);
    let run = agent(&workspace, &model, &["--json"]).expect_code(0);
    let results = tool_results(&run);
    assert_eq!(results[1].1, "Dropped the note 'buy milk'.");
    assert_eq!(
        calls(&workspace),
        vec![
            json!({"call": "reject", "text": "buy milk", "reason": "Already bought.", "extra": {"by": "user"}})
        ]
    );
    assert!(workspace.pending_ids().is_empty());
}

#[test]
fn resolve_apply_on_the_cli_applies_an_action_an_earlier_agent_run_staged() {
    let Some(workspace) = tool_workspace("") else {
        return;
    };
    let model = Model::start(vec![stage_call("buy milk", false)]);
    agent(&workspace, &model, &["--max-turns", "1"]).expect_code(1);
    let pending = workspace.pending_ids();
    assert_eq!(pending.len(), 1);
    let seq = pending[0].rsplit(':').next().unwrap();
    let record: Value =
        serde_json::from_str(&workspace.read(&format!(".resolve/pending/{seq}.json"))).unwrap();
    assert_eq!(record["origin"], "agent");
    assert_eq!(
        record["mcp"],
        json!({"server": "srv", "apply": {"tool": "apply", "arguments": {"text": "buy milk"}}})
    );
    assert!(calls(&workspace).is_empty(), "staging calls nothing");

    // A later process: no server is running, so `resolve apply` starts it from the config.
    let run = workspace.run_ok(&["apply", "--reason", "Reviewed by a person."]);
    assert_contains(&run.stdout, "Added the note 'buy milk'.");
    assert_eq!(
        calls(&workspace),
        vec![
            json!({"call": "apply", "text": "buy milk", "reason": "Reviewed by a person.", "extra": null})
        ]
    );
    assert!(workspace.pending_ids().is_empty());
    let undo = workspace.run(&["undo", &pending[0]]).expect_code(1);
    assert_contains(&undo.stderr, "MCP server");
}

#[test]
fn a_server_that_crashed_before_apply_fails_the_apply_and_the_action_stays_pending() {
    let Some(workspace) = tool_workspace("") else {
        return;
    };
    let model = Model::start(vec![
        stage_call("buy milk", false).and_call("c1b", "srv__crash", "{}"),
        resolve(json!({"action": "apply", "reason": "Go."})),
    ]);
    // The action stays pending, so the run stops at the turn limit.
    let run = agent(&workspace, &model, &["--json", "--max-turns", "2"]).expect_code(1);
    let results = tool_results(&run);
    assert_eq!(results[1].0, "srv__crash");
    assert!(results[1].2, "the crashed call is an error result");
    let (name, text, is_error, _) = &results[2];
    assert_eq!(name, "resolve");
    assert!(*is_error);
    assert_starts_with(text, "Apply failed: the MCP server `srv` has exited");
    assert_contains(&run.stderr, "note: MCP server `srv` exited");
    assert!(calls(&workspace).is_empty());
    assert_eq!(
        workspace.pending_ids().len(),
        1,
        "the preview stays pending"
    );

    // Any later process can still apply it, with a fresh server.
    workspace.run_ok(&["apply", "--reason", "Retry."]);
    assert_eq!(calls(&workspace)[0]["reason"], "Retry.");
}

/// A workspace whose server `srv` gives each tool call `timeout_sec`, with one action staged
/// by an agent run whose apply call never answers; and the action's id.
fn staged_hanging_apply(timeout_sec: u64) -> Option<(Workspace, String)> {
    // Appended to the `[mcp_servers.srv]` table.
    let workspace = tool_workspace(&format!("tool_timeout_sec = {timeout_sec}\n"))?;
    let model = Model::start(vec![Turn::call(
        "c1",
        "srv__stage",
        json!({"text": "buy milk", "hang_apply": true}),
    )]);
    agent(&workspace, &model, &["--max-turns", "1"]).expect_code(1);
    let mut pending = workspace.pending_ids();
    assert_eq!(pending.len(), 1);
    let id = pending.remove(0);
    Some((workspace, id))
}

#[test]
fn an_apply_call_the_server_never_answers_times_out_and_the_action_stays_pending() {
    let Some((workspace, _id)) = staged_hanging_apply(1) else {
        return;
    };

    let run = workspace.run_fails(&["apply", "--reason", "Go."]);
    assert_contains(
        &run.stderr,
        "the MCP server `srv` did not answer the call to `apply` within 1 s (`tool_timeout_sec`)",
    );
    assert_eq!(workspace.pending_ids().len(), 1, "the action stays pending");
    // The store lock went with the call: the next command gets it at once.
    workspace.run_ok(&["discard", "--reason", "The server hangs."]);
    assert!(workspace.pending_ids().is_empty());
    assert!(calls(&workspace).is_empty());
}

#[test]
fn an_apply_killed_during_its_mcp_call_is_reported_by_the_next_try_which_calls_nothing() {
    let Some((workspace, id)) = staged_hanging_apply(2) else {
        return;
    };
    let seq = id.rsplit(':').next().unwrap().to_owned();

    // `kill -9` while the apply waits for the server's answer.
    let mut child = workspace
        .command(&["apply", "--reason", "Go."])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let marker = workspace.path(&format!(".resolve/pending/{seq}.calling"));
    let waited = std::time::Instant::now();
    while !marker.exists() {
        assert!(
            waited.elapsed() < std::time::Duration::from_secs(60),
            "the apply never started its call"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();

    let next = workspace.run_fails(&["apply", "--reason", "Again."]);
    assert_contains(
        &next.stderr,
        &format!(
            "An earlier resolve process stopped while it was calling the tool `apply` of the MCP server `srv` for `{id}`, so that call may have run."
        ),
    );
    assert_eq!(workspace.pending_ids(), vec![id.clone()]);
    // Told once: the try after that calls the tool again (and this server still hangs).
    let again = workspace.run_fails(&["apply", "--reason", "Checked."]);
    assert_contains(
        &again.stderr,
        "did not answer the call to `apply` within 2 s",
    );
    assert_eq!(workspace.pending_ids(), vec![id]);
}

#[test]
fn an_error_from_the_apply_tool_fails_the_apply_and_keeps_the_action_at_the_head() {
    let Some(workspace) = tool_workspace("") else {
        return;
    };
    let model = Model::start(vec![
        Turn::call(
            "c1",
            "srv__stage",
            json!({"text": "buy milk", "fail_apply": true}),
        ),
        resolve(json!({"action": "apply", "reason": "Go."})),
    ]);
    // The action stays pending, so the run stops at the turn limit.
    let run = agent(&workspace, &model, &["--json", "--max-turns", "2"]).expect_code(1);
    let results = tool_results(&run);
    assert!(results[1].2);
    assert_eq!(
        results[1].1,
        "Apply failed: the tool `apply` of the MCP server `srv` returned an error: the notebook is full"
    );
    assert_eq!(workspace.pending_ids().len(), 1);
}

#[test]
fn a_server_that_fails_to_start_is_reported_and_the_run_goes_on() {
    let Some(workspace) = tool_workspace(
        "[mcp_servers.missing]\ncommand = \"/nonexistent/mcp-server\"\n\n[mcp_servers.quits]\ncommand = \"true\"\n",
    ) else {
        return;
    };
    let model = Model::start(vec![
        Turn::call("c1", "srv__echo", json!({"text": "still here"})),
        Turn::text("Done."),
    ]);
    let run = agent(&workspace, &model, &[]).expect_code(0);
    for server in ["missing", "quits"] {
        assert_contains(
            &run.stderr,
            &format!("note: MCP server `{server}` could not be started:"),
        );
    }
    let tools = tool_names(&model.bodies()[0]);
    assert!(tools.contains(&"srv__echo".to_owned()), "{tools:?}");
    assert!(
        !tools
            .iter()
            .any(|name| name.starts_with("missing__") || name.starts_with("quits__")),
        "{tools:?}"
    );
    assert_contains(&run.stdout, "echo: still here");
}

#[test]
fn tools_without_the_convention_just_run_and_their_errors_become_error_results() {
    let Some(workspace) = tool_workspace("") else {
        return;
    };
    let model = Model::start(vec![
        Turn::call("c1", "srv__echo", json!({"text": "hi"}))
            .and_call("c2", "srv__fail", "{}")
            .and_call("c3", "srv__stage_broken", "{}"),
        Turn::text("Done."),
    ]);
    let run = agent(&workspace, &model, &["--json"]).expect_code(0);
    let results = tool_results(&run);
    assert_eq!(
        results
            .iter()
            .map(|(name, text, is_error, _)| (name.as_str(), *is_error, text.clone()))
            .take(2)
            .collect::<Vec<_>>(),
        vec![
            ("srv__echo", false, "echo: hi".to_owned()),
            ("srv__fail", true, "the widget is jammed".to_owned()),
        ]
    );
    let (_, broken, is_error, _) = &results[2];
    assert!(*is_error);
    assert_contains(broken, "malformed `resolve/pendingAction`");
    assert_contains(broken, "label");
    assert!(workspace.pending_ids().is_empty(), "nothing was staged");
    assert_eq!(reminders(&model.bodies()[1]), 0);
}

#[test]
fn the_readme_notes_server_stages_and_applies_a_note() {
    let Some(python) = python() else { return };
    let workspace = Workspace::new();
    let config = format!(
        "[mcp_servers.notes]\ncommand = {python:?}\nargs = [{:?}]\nenv = {{ NOTES_FILE = \"notes.log\" }}\n",
        notes_server().display().to_string(),
    );
    workspace.write(".resolve/config.toml", config.as_bytes());
    workspace.trust();
    let model = Model::start(vec![
        Turn::call("c1", "notes__add_note", json!({"text": "call the plumber"})),
        resolve(json!({"action": "apply", "reason": "Requested."})),
        Turn::call("c3", "notes__add_note", json!({"text": "water the plants"})),
        resolve(json!({"action": "discard", "reason": "Already done."})),
        Turn::text("Done."),
    ]);
    let run = agent(&workspace, &model, &[]).expect_code(0);
    assert_contains(&run.stdout, "Added note 1");
    assert_eq!(workspace.read("notes.log"), "call the plumber\n");
    let tools = tool_names(&model.bodies()[0]);
    assert!(tools.contains(&"notes__add_note".to_owned()), "{tools:?}");
    assert!(tools.contains(&"notes__list_notes".to_owned()), "{tools:?}");
}

#[test]
fn a_missing_config_file_given_with_config_is_an_error_naming_it() {
    let workspace = Workspace::new();
    let model = Model::start(vec![Turn::text("Done.")]);
    let run = agent(&workspace, &model, &["--config", "nope.toml"]).expect_code(1);
    assert_contains(&run.stderr, "nope.toml");
}

#[test]
fn the_custom_tools_guide_shows_the_example_notes_server_verbatim() {
    let readme = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/custom-tools.md"),
    )
    .unwrap();
    let block = readme
        .split("```python\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .unwrap();
    let example = std::fs::read_to_string(notes_server()).unwrap();
    let body = &example[example.find("import os").unwrap()..];
    assert_eq!(
        block, body,
        "keep docs/custom-tools.md and examples/mcp/notes_server.py in step"
    );
}
