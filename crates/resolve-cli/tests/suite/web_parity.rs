//! The browser review and the terminal review decide through one pipeline: the same decisions
//! on the same preview give the same files, the same `resolve log` and the same note to the
//! model that staged it. The terminal review runs in tmux (as `review_tui` drives it); without
//! tmux the test fails under CI (`CI` set) and is skipped loudly elsewhere.

use std::process::Command;
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::json;

use super::common::Workspace;
use super::web::WebReview;
use super::web_browser::Connection;

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
    let log = workspace.run(&["log"]).expect_code(0).stdout;
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

fn tmux_available() -> bool {
    let available = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|out| out.status.success());
    if !available {
        let message =
            "tmux is not installed (Debian: `apt-get install tmux`); the parity test needs it";
        assert!(std::env::var_os("CI").is_none(), "{message}");
        eprintln!("SKIPPED: {message}");
    }
    available
}

/// Run the terminal review of `workspace` in tmux with `steps` (keys, or text to type after
/// `"type:"`), waiting after each for the screen to contain its expected text.
fn terminal_review(workspace: &Workspace, steps: &[(&str, &str)]) {
    let socket = format!("resolve-web-parity-{}", std::process::id());
    let tmux = |args: &[&str]| {
        let out = Command::new("tmux")
            .args(["-L", &socket, "-f", "/dev/null"])
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "tmux {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let done = workspace.root().join(".parity-exit");
    let command = format!(
        "HOME='{home}' '{resolve}' --root '{root}' review; echo $? > '{done}'; sleep 600",
        home = workspace.home().display(),
        resolve = env!("CARGO_BIN_EXE_resolve"),
        root = workspace.root().display(),
        done = done.display(),
    );
    tmux(&[
        "new-session",
        "-d",
        "-s",
        "review",
        "-x",
        "80",
        "-y",
        "24",
        &command,
    ]);
    let wait = |what: &str| {
        let start = Instant::now();
        loop {
            let screen = tmux(&["capture-pane", "-p", "-t", "review"]);
            if screen.contains(what) || (what == "exit" && done.exists()) {
                return;
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "waiting for {what}:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    wait("▶ src/lib.rs#1");
    for (step, then) in steps {
        match step.strip_prefix("type:") {
            Some(text) => tmux(&["send-keys", "-t", "review", "-l", text]),
            None => tmux(&["send-keys", "-t", "review", step]),
        };
        wait(then);
    }
    let _ = Command::new("tmux")
        .args(["-L", &socket, "kill-server"])
        .output();
    std::fs::remove_file(&done).unwrap();
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
    assert!(
        terminal
            .3
            .contains("rejected src/lib.rs#2 (\"callers use foo\")"),
        "{}",
        terminal.3
    );
    assert_eq!(browser, terminal);
}
