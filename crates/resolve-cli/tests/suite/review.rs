//! What a person reads after resolving: the block of a failed or partial apply, and `resolve
//! log`'s time and places of each resolution.

use pretty_assertions::assert_eq;
use resolve_test_support::Turn;
use resolve_test_support::text::{assert_contains, assert_lacks};
use serde_json::{Value, json};

use super::common::{Model, Workspace, run_agent};

/// `src/main.rs` with one match of `foo($A)`, `src/lib.rs` with three: a preview labelled
/// `AST Edit: 4 replacements in 2 files`.
fn two_file_preview() -> Workspace {
    let workspace = Workspace::with(&[
        ("src/main.rs", "fn main() { foo(1); }\n"),
        ("src/lib.rs", "fn f() { foo(2); foo(3); foo(4); }\n"),
    ]);
    workspace.run_ok(&["ast-edit", "-p", "foo($A)", "-r", "bar($A)", "src"]);
    workspace
}

fn log_json(workspace: &Workspace) -> Vec<Value> {
    let run = workspace.run_ok(&["log", "--json"]);
    let log: Value = serde_json::from_str(run.stdout.trim()).unwrap();
    log["history"].as_array().unwrap().clone()
}

#[test]
fn a_failed_apply_block_names_the_action_and_the_reason_given() {
    let workspace = two_file_preview();
    let run = workspace.run_fails(&["apply", "--reason", "try", "--only", "src/missing.rs"]);
    assert_contains(&run.stderr, "src/missing.rs");
    assert_contains(
        &run.stderr,
        "✘ Failed: 4 replacements in 2 files ⟦AST Edit⟧",
    );
    // The block's reason line (not padded into a pipe: issue #32 §9).
    assert!(
        run.stderr.lines().any(|line| line == " try"),
        "{}",
        run.stderr
    );
    assert_lacks(&run.stderr, "No reason provided");
    assert_eq!(
        workspace.pending_ids().len(),
        1,
        "the preview stays pending"
    );

    let run = workspace.run_fails(&[
        "--json",
        "apply",
        "--reason",
        "try",
        "--only",
        "src/missing.rs",
    ]);
    let value: Value = serde_json::from_str(run.stdout.trim()).unwrap();
    assert_eq!(value["isError"], true);
    assert_eq!(
        value["details"]["label"],
        "AST Edit: 4 replacements in 2 files"
    );
    assert_eq!(value["details"]["reason"], "try");
    assert_eq!(value["details"]["action"], "apply");
    assert_eq!(value["details"]["sourceToolName"], "ast_edit");
}

#[test]
fn a_failed_apply_with_nothing_pending_still_shows_the_reason_given() {
    let workspace = Workspace::new();
    let run = workspace.run_fails(&["apply", "--reason", "Go now."]);
    assert_contains(
        &run.stderr,
        "No pending action to resolve. Nothing to apply or discard.",
    );
    assert_contains(&run.stderr, "Failed: pending action");
    assert_contains(&run.stderr, "Go now.");
    assert_lacks(&run.stderr, "No reason provided");
}

#[test]
fn a_partial_apply_block_shows_what_landed_and_the_history_keeps_the_label() {
    let workspace = two_file_preview();
    let run = workspace.run_ok(&["apply", "--reason", "Main only.", "--only", "src/main.rs"]);
    assert_contains(
        &run.stdout,
        "✓ Accept: 1 replacement in 1 file, 1 file dropped ⟦AST Edit⟧",
    );
    assert_lacks(&run.stdout, "4 replacements");
    assert_eq!(workspace.read("src/main.rs"), "fn main() { bar(1); }\n");
    let history = log_json(&workspace);
    assert_eq!(history[0]["label"], "AST Edit: 4 replacements in 2 files");
    let log = workspace.run_ok(&["log"]);
    assert_contains(&log.stdout, "AST Edit: 4 replacements in 2 files");
}

#[test]
fn a_partial_apply_in_json_keeps_the_label_and_adds_the_applied_label() {
    let workspace = two_file_preview();
    let run = workspace.run_ok(&[
        "--json",
        "apply",
        "--reason",
        "Main.",
        "--only",
        "src/main.rs",
    ]);
    let value: Value = serde_json::from_str(run.stdout.trim()).unwrap();
    assert_eq!(
        value["details"]["label"],
        "AST Edit: 4 replacements in 2 files"
    );
    assert_eq!(
        value["details"]["sourceResultDetails"]["appliedLabel"],
        "AST Edit: 1 replacement in 1 file, 1 file dropped"
    );
}

#[test]
fn a_whole_apply_block_keeps_the_preview_label() {
    let workspace = two_file_preview();
    let run = workspace.run_ok(&["apply", "--reason", "All."]);
    assert_contains(
        &run.stdout,
        "✓ Accept: 4 replacements in 2 files ⟦AST Edit⟧",
    );
}

/// `secs` as `resolve log` shows it in a zone `hours` east of UTC.
fn shown_at(secs: u64, hours: i64) -> String {
    let utc = chrono::DateTime::from_timestamp(i64::try_from(secs).unwrap(), 0).unwrap();
    (utc + chrono::Duration::hours(hours))
        .format("%Y-%m-%d %H:%M:%S")
        .to_string()
}

#[test]
fn log_shows_when_each_action_was_resolved_in_local_time() {
    let workspace = Workspace::with(&[("a.txt", "one\n")]);
    workspace.run_ok(&["edit", "a.txt", "--old", "one", "--new", "uno"]);
    workspace.run_ok(&["apply", "--reason", "Spanish."]);
    let resolved_at = log_json(&workspace)[0]["resolvedAt"].as_u64().unwrap();
    // POSIX TZ strings: `UTC0` is UTC, `XYZ-5` five hours east of it.
    for (tz, hours) in [("UTC0", 0), ("XYZ-5", 5)] {
        let output = workspace.command(&["log"]).env("TZ", tz).output().unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        let line = stdout.lines().next().unwrap();
        assert!(
            line.starts_with(&format!(
                "{}  pending-action:edit:",
                shown_at(resolved_at, hours)
            )),
            "TZ={tz}: {line}"
        );
    }
}

#[test]
fn log_shows_where_each_action_was_staged_and_resolved() {
    let workspace = Workspace::with(&[("a.txt", "one\n"), ("b.txt", "two\n")]);
    // Staged by the agent, which stops before resolving it; applied at the command line.
    let model = Model::start(vec![Turn::call(
        "c1",
        "edit",
        json!({"path": "a.txt", "old_text": "one", "new_text": "uno"}),
    )]);
    run_agent(
        &workspace,
        &model,
        &["--max-turns", "1"],
        "Change a.txt.",
        "",
    )
    .expect_code(1);
    workspace.run_ok(&["apply", "--reason", "Reviewed."]);
    // Staged at the command line, applied by the agent.
    workspace.run_ok(&["edit", "b.txt", "--old", "two", "--new", "dos"]);
    let model = Model::start(vec![
        Turn::call(
            "c2",
            "edit",
            json!({"path": "b.txt", "old_text": "two", "new_text": "zwei"}),
        ),
        Turn::call(
            "c3",
            "resolve",
            json!({"action": "discard", "reason": "Keep Spanish."}),
        ),
        Turn::text("Done."),
    ]);
    run_agent(&workspace, &model, &[], "Change b.txt.", "").expect_code(0);
    workspace.run_ok(&["discard", "--reason", "Not now."]);

    let history = log_json(&workspace);
    let places: Vec<(&str, &str, &str, &str)> = history
        .iter()
        .map(|entry| {
            (
                entry["reason"].as_str().unwrap(),
                entry["origin"].as_str().unwrap(),
                entry["resolvedBy"].as_str().unwrap(),
                entry["decidedBy"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        places,
        [
            ("Not now.", "cli", "cli", "person"),
            ("Keep Spanish.", "agent", "agent", "model"),
            ("Reviewed.", "agent", "cli", "person"),
        ]
    );
    let log = workspace.run_ok(&["log"]);
    assert_contains(
        &log.stdout,
        "(staged: agent, resolved: cli, decided: person)  — Reviewed.",
    );
    assert_contains(
        &log.stdout,
        "(staged: agent, resolved: agent, decided: model)  — Keep Spanish.",
    );
}
