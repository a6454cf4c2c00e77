//! `resolve review` through a real terminal: the binary runs inside `tmux` at 80×24, keys go in
//! with `tmux send-keys`, the screen comes back with `tmux capture-pane`, and the files and the
//! history are checked afterwards. The preview under review is staged by an MCP connection
//! (`resolve mcp` spoken to over stdio), as an agent in another terminal would stage it.
//!
//! Without `tmux` the end-to-end test fails under CI (`CI` set) and is skipped loudly elsewhere.

#![allow(clippy::print_stderr, reason = "tests explain skips on stderr")]

use resolve_test_support::text::{assert_contains, assert_starts_with};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::common::{Model, UNWRAP_TO_EXPECT};
use crate::tmux_harness::{TmuxRun, resolve_command, resolve_ok, stderr, tmux_available};
use resolve_test_support::{McpChild, Turn};
use serde_json::{Value, json};

/// A `resolve mcp` connection to `root`, handshake done.
fn mcp_connection(root: &Path) -> McpChild {
    let mut command = Command::new(env!("CARGO_BIN_EXE_resolve"));
    command.arg("--root").arg(root).arg("mcp");
    McpChild::start(command, "review-test")
}

/// `src/lib.rs` with two calls of `foo` far apart (two hunks) and `src/main.rs` with one.
fn review_root() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("src")).unwrap();
    let mut lib: Vec<String> = (1..=30).map(|n| format!("fn f{n}() {{}}")).collect();
    lib[2] = "fn a() { foo(2); }".to_owned();
    lib[22] = "fn b() { foo(3); }".to_owned();
    std::fs::write(root.path().join("src/lib.rs"), lib.join("\n") + "\n").unwrap();
    std::fs::write(
        root.path().join("src/main.rs"),
        "fn main() {\n    foo(1);\n}\n",
    )
    .unwrap();
    root
}

/// An editor that renames `bar(1)` to `baz(1)` in the file it is given.
fn editor_script(dir: &Path) -> PathBuf {
    let script = dir.join("editor.sh");
    std::fs::write(&script, "#!/bin/sh\nsed -i 's/bar(1)/baz(1)/' \"$1\"\n").unwrap();
    script
}

#[test]
fn a_reviewer_rejects_a_hunk_with_a_reason_amends_a_file_and_applies_the_rest_in_a_terminal() {
    if !tmux_available() {
        return;
    }
    let root = review_root();
    let mut mcp = mcp_connection(root.path());
    let staged = mcp.call(
        "ast_edit",
        json!({"ops": [{"pat": "foo($A)", "out": "bar($A)"}], "paths": ["src"], "lang": "rust"}),
    );
    assert_eq!(staged["isError"], false, "{staged}");
    let id = staged["_meta"]["resolve/details"]["pendingId"]
        .as_str()
        .unwrap()
        .to_owned();

    let tmux = TmuxRun::start(|scratch| {
        let editor = format!("EDITOR='sh {}' VISUAL=", editor_script(scratch).display());
        resolve_command(&editor, root.path(), "review")
    });

    // It opens on the head action, at the first hunk of its first file.
    let screen = tmux.wait_for("the review", |screen| screen.contains("▶ src/lib.rs#1"));
    eprintln!("--- the review opens (80×24):\n{screen}");
    assert_contains(&screen, &id);
    assert_contains(&screen, "staged by mcp:");
    assert_contains(&screen, "AST Edit: 3 replacements in 2 files");
    assert_contains(&screen, "src/lib.rs   +2 -2  2 hunks");
    assert_contains(&screen, "src/main.rs  +1 -1  1 hunk");
    assert_contains(&screen, "-fn a() { foo(2); }");
    assert_contains(&screen, "+fn a() { bar(2); }");
    assert_contains(&screen, "q quit");

    // j to the second hunk, r to reject it with a reason; the cursor stays there.
    tmux.keys(&["j", "r"]);
    tmux.answer(
        "Reject src/lib.rs#2, reason (optional):",
        "callers outside the crate use foo",
    );
    let screen = tmux.wait_for("the rejection", |screen| {
        screen.contains(
            "▶ src/lib.rs#2 @@ -20,7 +20,7 @@  ✗ rejected: callers outside the crate use foo",
        )
    });
    eprintln!("--- after rejecting src/lib.rs#2:\n{screen}");
    assert_contains(&screen, "2 hunks, 1 rejected");

    // J to the next file, e to amend it in the editor; the hunks are recomputed.
    tmux.keys(&["J", "e"]);
    let screen = tmux.wait_for("the amended hunk", |screen| {
        screen.contains("Amended src/main.rs") && screen.contains("+    baz(1);")
    });
    assert_contains(&screen, "▶ src/main.rs#1");
    // The rejection made before the amendment still stands.
    assert_contains(&screen, "src/lib.rs   +2 -2  2 hunks, 1 rejected");

    // a applies what is kept, after the overall reason.
    tmux.keys(&["a"]);
    tmux.answer(
        "Apply 2 of 3 hunks, reason:",
        "rename inside the crate only",
    );
    let exit = tmux.wait_exit("the review to end");
    assert_eq!(exit, "0", "{}", tmux.screen());
    // Back on the normal screen: the one-line summary.
    let screen = tmux.screen();
    assert_contains(
        &screen,
        &format!("Applied {id} (rejected src/lib.rs#2); nothing is pending."),
    );

    // The files: the kept hunks as previewed, the amended file as amended, the rejected hunk
    // as the base.
    let lib = std::fs::read_to_string(root.path().join("src/lib.rs")).unwrap();
    assert_contains(&lib, "fn a() { bar(2); }");
    assert_contains(&lib, "fn b() { foo(3); }");
    assert_eq!(
        std::fs::read_to_string(root.path().join("src/main.rs")).unwrap(),
        "fn main() {\n    baz(1);\n}\n"
    );

    // The history: applied by the reviewer at the command line, with the overall reason.
    let log = resolve_ok(root.path(), &["log"]);
    assert_contains(&log, &id);
    assert_contains(&log, "applied");
    assert_contains(&log, "resolved: cli");
    assert_contains(&log, "rename inside the crate only");
    assert_contains(
        &log,
        "[kept src/lib.rs#1; rejected src/lib.rs#2; amended src/main.rs]",
    );
    let log: Value = serde_json::from_str(&resolve_ok(root.path(), &["log", "--json"])).unwrap();
    let rejected = log["history"][0]["review"].to_string();
    assert!(
        rejected.contains("callers outside the crate use foo"),
        "{log}"
    );
    assert!(resolve_ok(root.path(), &["pending"]).contains("No pending actions."));

    // The connection that staged it hears what the reviewer did with its next tool result.
    let next = mcp.call("ls", json!({}));
    let text = next["content"][0]["text"].as_str().unwrap().to_owned();
    assert_contains(
        &text,
        &format!("A reviewer resolved {id} (AST Edit: 3 replacements in 2 files)"),
    );
    assert_contains(&text, "src/lib.rs#2");
    assert_contains(&text, "callers outside the crate use foo");
    assert_contains(&text, "+    baz(1);");
    assert_contains(&text, "rename inside the crate only");
    // Told once.
    let again = mcp.call("ls", json!({}));
    assert!(
        !again["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("A reviewer"),
        "{again}"
    );
}

/// A workspace with one CLI-staged preview, and a review of it running in tmux (with
/// `environment` set); the file the review's exit code is written to.
fn review_in_tmux(environment: &str) -> (tempfile::TempDir, TmuxRun) {
    let root = review_root();
    resolve_ok(
        root.path(),
        &["ast-edit", "-p", "foo($A)", "-r", "bar($A)", "src"],
    );
    let tmux = TmuxRun::resolve(environment, root.path(), "review");
    tmux.wait_for("the review", |screen| screen.contains("▶ src/lib.rs#1"));
    (root, tmux)
}

#[test]
fn ctrl_c_leaves_the_review_without_changes_and_restores_the_terminal() {
    if !tmux_available() {
        return;
    }
    let (root, tmux) = review_in_tmux("");
    assert!(tmux.in_alternate_screen());
    tmux.keys(&["j", "Space", "C-c"]);
    assert_eq!(tmux.wait_exit("the review to end"), "0");
    assert!(!tmux.in_alternate_screen());
    let screen = tmux.screen();
    assert_contains(
        &screen,
        "Review ended without changes; 1 action still pending.\nKept for the next review: 1 \
         rejected hunk.",
    );
    assert_eq!(
        resolve_ok(root.path(), &["log"]).trim(),
        "No applied or discarded actions yet."
    );
    assert!(
        std::fs::read_to_string(root.path().join("src/lib.rs"))
            .unwrap()
            .contains("foo(3)")
    );
}

#[test]
fn no_color_turns_colors_off_and_colors_are_on_otherwise() {
    if !tmux_available() {
        return;
    }
    // A foreground or background color: SGR 30-38 and 40-48 (38 and 48 start 256-color and RGB
    // colors), 90-97 and 100-107; 39 and 49 only reset to the terminal's default.
    let colored = |screen: &str| {
        screen.split("\u{1b}[").skip(1).any(|sequence| {
            let parameters = sequence.split('m').next().unwrap_or("");
            parameters.split(';').any(|parameter| {
                matches!(
                    parameter.parse::<u32>(),
                    Ok(30..=38 | 40..=48 | 90..=97 | 100..=107)
                )
            })
        })
    };
    let (_root, tmux) = review_in_tmux("NO_COLOR=1");
    let plain = tmux.screen_with_styles();
    assert!(!colored(&plain), "{plain:?}");
    // Without color the changed words are still marked (bold, underlined).
    assert!(plain.contains("\u{1b}["), "{plain:?}");
    drop(tmux);
    let (_root, tmux) = review_in_tmux("env -u NO_COLOR TERM=xterm-256color");
    let screen = tmux.screen_with_styles();
    assert!(colored(&screen), "{screen:?}");
}

#[test]
fn agent_approve_ask_on_a_terminal_opens_the_review_and_the_model_hears_the_rejected_hunk() {
    if !tmux_available() {
        return;
    }
    let filler: String = (1..=12).map(|n| format!("line {n}\n")).collect();
    let run = agent_in_tmux(
        &format!("one\n{filler}one\n"),
        vec![
            Turn::call(
                "c1",
                "edit",
                json!({"path": "a.txt", "old_text": "one", "new_text": "uno", "replace_all": true}),
            ),
            Turn::call(
                "c2",
                "resolve",
                json!({"action": "apply", "reason": "Translate both."}),
            ),
            Turn::text("Done."),
        ],
        "",
    );
    let (model, tmux) = (&run.model, &run.tmux);
    let screen = tmux.screen();
    assert_contains(&screen, "staged by agent");
    assert_contains(
        &screen,
        "The model asks to apply this: a applies what is kept, d discards, q declines.",
    );
    assert_contains(&screen, "a.txt  +2 -2  2 hunks");
    tmux.keys(&["j", "r"]);
    tmux.answer("Reject a.txt#2", "the second one is a proper name");
    tmux.keys(&["a"]);
    tmux.answer("Apply 1 of 2 hunks, reason:", "only the first");
    run.ended_with("0", format!("uno\n{filler}one\n"));
    // The model's `resolve` result names the hunk left out and why.
    let result = model.last_tool_result();
    assert_contains(&result, "a.txt#2");
    assert_contains(&result, "the second one is a proper name");
}

#[test]
fn without_a_terminal_review_exits_2_and_points_at_apply_only() {
    let root = review_root();
    let output = Command::new(env!("CARGO_BIN_EXE_resolve"))
        .arg("--root")
        .arg(root.path())
        .arg("review")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let message = stderr(&output);
    assert_contains(&message, "`resolve review` needs a terminal");
    assert_contains(&message, "resolve apply --only PATH#N");
}

/// A copy of the README's demo project (`examples/demo`).
fn demo_workspace() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/demo/src");
    std::fs::create_dir_all(root.path().join("src")).unwrap();
    for entry in std::fs::read_dir(demo).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(
            entry.path(),
            root.path().join("src").join(entry.file_name()),
        )
        .unwrap();
    }
    root
}

/// The screen's diff rows with every continuation row (`↪` in place of the sign) joined to
/// the row it continues.
fn unwrapped_rows(screen: &str) -> Vec<String> {
    let mut rows: Vec<String> = Vec::new();
    for row in screen.lines() {
        let lead: String = row.chars().take(3).collect();
        match (lead.chars().nth(2), rows.last_mut()) {
            (Some('↪'), Some(previous)) => {
                previous.push_str(&row.chars().skip(3).collect::<String>())
            }
            _ => rows.push(row.to_owned()),
        }
    }
    rows
}

/// See: issue #32, "The review UI hides changes past the right edge".
#[test]
fn long_diff_lines_wrap_with_a_continuation_mark_at_80_by_24() {
    if !tmux_available() {
        return;
    }
    let root = demo_workspace();
    resolve_ok(root.path(), &UNWRAP_TO_EXPECT);
    let tmux = TmuxRun::resolve("", root.path(), "review");
    tmux.wait_for("the review", |screen| screen.contains("▶ src/config.rs#1"));
    tmux.keys(&["J"]);
    let screen = tmux.wait_for("the demo's main.rs", |screen| {
        screen.contains("▶ src/main.rs#1")
    });
    eprintln!("--- src/main.rs#1 of the demo at 80×24:\n{screen}");
    assert_contains(&screen, " ↪");
    let rows = unwrapped_rows(&screen);
    let removed = r#"│ -    let listener = std::net::TcpListener::bind(("127.0.0.1", config.port())).unwrap();"#;
    let added = r#"│ +    let listener = std::net::TcpListener::bind(("127.0.0.1", config.port())).expect("checked");"#;
    assert!(rows.iter().any(|row| row == removed), "{screen}");
    assert!(rows.iter().any(|row| row == added), "{screen}");
    tmux.keys(&["q"]);
    tmux.wait_exit("the review to end");
}

/// `resolve agent --approve ask --max-turns 3 EXTRA…` in tmux over a model that stages an
/// edit of `a.txt`, asks to apply it, then ends its turn (so the run stops at its limit, exit
/// 1, with the preview pending); the review of the apply is on screen when this returns.
fn agent_review_in_tmux(extra: &str) -> AgentInTmux {
    agent_in_tmux(
        "one\n",
        vec![
            Turn::call(
                "c1",
                "edit",
                json!({"path": "a.txt", "old_text": "one", "new_text": "uno"}),
            ),
            Turn::call(
                "c2",
                "resolve",
                json!({"action": "apply", "reason": "Translate it."}),
            ),
            Turn::text("I will wait."),
        ],
        &format!("--max-turns 3 {extra}"),
    )
}

/// `resolve agent --approve ask EXTRA… 'Change one to uno in a.txt.'` in tmux, in a root
/// holding `a.txt` (`a_txt`), over a model answering with `script`; the review of the model's
/// preview is on screen when this returns.
fn agent_in_tmux(a_txt: &str, script: Vec<Turn>, extra: &str) -> AgentInTmux {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("a.txt"), a_txt).unwrap();
    let model = Model::start(script);
    let args = format!(
        "agent --base-url '{base}' --model mock --api-key-env RESOLVE_TEST_NO_KEY --approve ask {extra} 'Change one to uno in a.txt.' 2> /dev/null",
        base = model.openai_base(),
    );
    let tmux = TmuxRun::resolve("", root.path(), &args);
    tmux.wait_for("the review of the model's preview", |screen| {
        screen.contains("▶ a.txt#1")
    });
    AgentInTmux { root, model, tmux }
}

impl AgentInTmux {
    /// Wait for the run to end; check its exit code and what `a.txt` then holds.
    fn ended_with(&self, code: &str, a_txt: impl AsRef<str>) {
        assert_eq!(self.tmux.wait_exit("the run to end"), code);
        assert_eq!(
            std::fs::read_to_string(self.root.path().join("a.txt")).unwrap(),
            a_txt.as_ref()
        );
    }
}

/// An agent run in tmux, and what it needs to stay up.
struct AgentInTmux {
    root: tempfile::TempDir,
    /// The model server, with the runtime it runs on.
    model: Model,
    tmux: TmuxRun,
}

/// Issue #31 §2: `q` in the review of an agent's apply leaves the preview pending (it used to
/// discard it), and the model reads that.
#[test]
fn q_in_the_review_of_an_agents_apply_leaves_it_pending_and_the_model_reads_so() {
    if !tmux_available() {
        return;
    }
    let run = agent_review_in_tmux("");
    let (root, model, tmux) = (&run.root, &run.model, &run.tmux);
    tmux.keys(&["q"]);
    run.ended_with("1", "one\n");
    let result = model.last_tool_result();
    assert_starts_with(
        &result,
        "Not applied: the person left the review without deciding.",
    );
    let pending: Value =
        serde_json::from_str(&resolve_ok(root.path(), &["pending", "--json"])).unwrap();
    assert_eq!(pending["pending"].as_array().unwrap().len(), 1, "{pending}");
}

/// Issue #31 §2: the review of an agent's apply closes itself at `--approve-timeout`, nothing
/// is written and the model reads that no decision came in time.
#[test]
fn the_review_of_an_agents_apply_closes_at_the_approve_timeout_and_leaves_it_pending() {
    if !tmux_available() {
        return;
    }
    let run = agent_review_in_tmux("--approve-timeout 2s");
    run.ended_with("1", "one\n");
    let result = run.model.last_tool_result();
    assert_starts_with(
        &result,
        "Not applied: no decision came in time (a person had 2s",
    );
}

/// See: issue #32, "The person's reason is lost in the agent's review".
#[test]
fn agent_approve_ask_records_the_reason_typed_in_the_review_with_the_models_beside_it() {
    if !tmux_available() {
        return;
    }
    let run = agent_review_in_tmux("");
    let (root, tmux) = (&run.root, &run.tmux);
    tmux.keys(&["a"]);
    tmux.answer("Apply, reason:", "The person's own reason.");
    run.ended_with("0", "uno\n");
    let log: Value = serde_json::from_str(&resolve_ok(root.path(), &["log", "--json"])).unwrap();
    let entry = &log["history"][0];
    assert_eq!(entry["reason"], "The person's own reason.", "{entry}");
    assert_eq!(entry["modelReason"], "Translate it.", "{entry}");
    assert_eq!(entry["decidedBy"], "person", "{entry}");
}
/// See: issue #32 ("`q` in the review UI throws away every hunk decision") and #30 §1 (a review
/// in progress is saved): `q` quits at once, and the next review shows the same marks.
#[test]
fn q_keeps_the_rejected_hunks_and_their_reasons_for_the_next_review() {
    if !tmux_available() {
        return;
    }
    let (root, tmux) = review_in_tmux("");
    tmux.keys(&["r"]);
    tmux.answer("reason (optional):", "Not this one.");
    tmux.keys(&["q"]);
    assert_eq!(tmux.wait_exit("the review to end"), "0");
    let screen = tmux.screen();
    assert_contains(&screen, "Kept for the next review: 1 rejected hunk.");
    assert_eq!(
        resolve_ok(root.path(), &["pending", "--json"])
            .matches("pending-action:")
            .count(),
        1
    );

    let again = TmuxRun::resolve("", root.path(), "review");
    let screen = again.wait_for("the review with its marks", |screen| {
        screen.contains("▶ src/lib.rs#1") && screen.contains("✗ rejected: Not this one.")
    });
    assert_contains(&screen, "▶ src/lib.rs#1");
}
