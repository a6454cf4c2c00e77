//! The browser review and the terminal review decide through one pipeline: the same decisions
//! on the same preview give the same files, the same `resolve log` and the same note to the
//! model that staged it. The terminal review runs in tmux (as `review_tui` drives it); without
//! tmux the test fails under CI (`CI` set) and is skipped loudly elsewhere.

use resolve_test_support::text::assert_contains;

use pretty_assertions::assert_eq;
use serde_json::json;

use super::common::Workspace;
use super::web::WebReview;
use super::web_browser::Connection;
use crate::tmux_harness::{TmuxRun, tmux_available};

/// The two-file preview of `review_tui`, staged by an MCP connection of a fresh workspace.
fn staged() -> (Workspace, Connection) {
    let mut lib: Vec<String> = (1..=30).map(|n| format!("fn f{n}() {{}}")).collect();
    lib[2] = "fn a() { foo(2); }".to_owned();
    lib[22] = "fn b() { foo(3); }".to_owned();
    let lib = lib.join("\n") + "\n";
    let workspace = Workspace::with(&[
        ("src/lib.rs", &lib),
        ("src/main.rs", "fn main() {\n    foo(1);\n}\n"),
    ]);
    let mut model = Connection::open(&workspace);
    let text = model.tool(
        "ast_edit",
        json!({"ops": [{"pat": "foo($A)", "out": "bar($A)"}], "paths": ["src"], "lang": "rust"}),
    );
    assert!(text.starts_with("Staged as a preview"), "{text}");
    (workspace, model)
}

/// What must be the same: both files, `resolve log` without its times, the note.
fn outcome(workspace: &Workspace, model: &mut Connection) -> (String, String, String, String) {
    let log = workspace.run_ok(&["log"]).stdout;
    // Not the same: the time, and the id of the MCP connection that staged it.
    let log: Vec<String> = log.lines().map(without_time_and_connection).collect();
    let note = model.tool("ls", json!({}));
    let note = note[note.find("<system-reminder>").unwrap_or(0)..].to_owned();
    (
        workspace.read("src/lib.rs"),
        workspace.read("src/main.rs"),
        log.join("\n"),
        note,
    )
}

/// A log line without its leading time and with `mcp:<connection>` for the connection's id.
fn without_time_and_connection(line: &str) -> String {
    let line = match line.split_once("  ") {
        Some((time, rest)) if time.starts_with("20") => rest,
        _ => line,
    };
    match line.split_once("staged: mcp:") {
        Some((before, after)) => {
            let rest = after.split_once(',').map_or("", |(_, rest)| rest);
            format!("{before}staged: mcp:<connection>,{rest}")
        }
        None => line.to_owned(),
    }
}

/// Run the terminal review of `workspace` in tmux with `steps` (keys, or text to type after
/// `"type:"`), waiting after each for the screen to contain its expected text (`exit`: for the
/// review to end).
fn terminal_review(workspace: &Workspace, steps: &[(&str, &str)]) {
    let home = format!("HOME='{}'", workspace.home().display());
    let tmux = TmuxRun::resolve(&home, workspace.root(), "review");
    let wait = |what: &str| {
        tmux.wait_for(what, |screen| {
            screen.contains(what) || (what == "exit" && tmux.exited())
        })
    };
    wait("▶ src/lib.rs#1");
    for (step, then) in steps {
        match step.strip_prefix("type:") {
            Some(text) => tmux.type_text(text),
            None => tmux.keys(&[step]),
        }
        wait(then);
    }
}

#[test]
fn the_same_decisions_in_the_browser_and_the_terminal_give_the_same_files_log_and_note() {
    if !tmux_available() {
        return;
    }
    let (terminal, mut terminal_model) = staged();
    terminal_review(
        &terminal,
        &[
            ("j", "▶ src/lib.rs#2"),
            ("r", "reason (optional):"),
            ("type:callers use foo", "callers use foo"),
            ("Enter", "✗ rejected: callers use foo"),
            ("a", "reason:"),
            (
                "type:rename inside the crate only",
                "rename inside the crate only",
            ),
            ("Enter", "exit"),
        ],
    );

    let (web_workspace, mut web_model) = staged();
    let web = WebReview::start(&web_workspace);
    let action = web.get("/api/actions")["actions"][0].clone();
    let (status, body) = web.post(
        "/api/apply",
        &json!({
            "id": action["id"], "version": action["version"], "reason": "rename inside the crate only",
            "rejected": [{"address": "src/lib.rs#2", "reason": "callers use foo"}],
        }),
    );
    assert_eq!(status, 200, "{body}");

    let terminal = outcome(&terminal, &mut terminal_model);
    let browser = outcome(&web_workspace, &mut web_model);
    assert_contains(&terminal.3, "rejected src/lib.rs#2 (\"callers use foo\")");
    assert_eq!(browser, terminal);
}
