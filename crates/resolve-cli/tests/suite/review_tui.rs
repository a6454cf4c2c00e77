//! `resolve review` through a real terminal: the binary runs inside `tmux` at 80×24, keys go in
//! with `tmux send-keys`, the screen comes back with `tmux capture-pane`, and the files and the
//! history are checked afterwards. The preview under review is staged by an MCP connection
//! (`resolve mcp` spoken to over stdio), as an agent in another terminal would stage it.
//!
//! Without `tmux` the end-to-end test fails under CI (`CI` set) and is skipped loudly elsewhere.

#![allow(clippy::print_stderr, reason = "tests explain skips on stderr")]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::tmux_harness::{Tmux, stderr, tmux_available};
use resolve_test_support::{McpChild, MockServer, Reply, Turn};
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

fn resolve(root: &Path, args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_resolve"))
        .arg("--root")
        .arg(root)
        .args(args)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn a_reviewer_rejects_a_hunk_with_a_reason_amends_a_file_and_applies_the_rest_in_a_terminal() {
    if !tmux_available() {
        return;
    }
    let root = review_root();
    let scratch = tempfile::tempdir().unwrap();
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

    let exit_file = scratch.path().join("exit");
    let command = format!(
        "EDITOR='sh {editor}' VISUAL= '{resolve}' --root '{root}' review; echo $? > '{exit}'; sleep 600",
        editor = editor_script(scratch.path()).display(),
        resolve = env!("CARGO_BIN_EXE_resolve"),
        root = root.path().display(),
        exit = exit_file.display(),
    );
    let tmux = Tmux::start(&command);

    // It opens on the head action, at the first hunk of its first file.
    let screen = tmux.wait_for("the review", |screen| screen.contains("▶ src/lib.rs#1"));
    eprintln!("--- the review opens (80×24):\n{screen}");
    assert!(screen.contains(&id), "{screen}");
    assert!(screen.contains("staged by mcp:"), "{screen}");
    assert!(
        screen.contains("AST Edit: 3 replacements in 2 files"),
        "{screen}"
    );
    assert!(screen.contains("src/lib.rs   +2 -2  2 hunks"), "{screen}");
    assert!(screen.contains("src/main.rs  +1 -1  1 hunk"), "{screen}");
    assert!(screen.contains("-fn a() { foo(2); }"), "{screen}");
    assert!(screen.contains("+fn a() { bar(2); }"), "{screen}");
    assert!(screen.contains("q quit"), "{screen}");

    // j to the second hunk, r to reject it with a reason; the cursor stays there.
    tmux.keys(&["j", "r"]);
    tmux.wait_for("the reason prompt", |screen| {
        screen.contains("Reject src/lib.rs#2, reason (optional):")
    });
    tmux.type_text("callers outside the crate use foo");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("the rejection", |screen| {
        screen.contains(
            "▶ src/lib.rs#2 @@ -20,7 +20,7 @@  ✗ rejected: callers outside the crate use foo",
        )
    });
    eprintln!("--- after rejecting src/lib.rs#2:\n{screen}");
    assert!(screen.contains("2 hunks, 1 rejected"), "{screen}");

    // J to the next file, e to amend it in the editor; the hunks are recomputed.
    tmux.keys(&["J", "e"]);
    let screen = tmux.wait_for("the amended hunk", |screen| {
        screen.contains("Amended src/main.rs") && screen.contains("+    baz(1);")
    });
    assert!(screen.contains("▶ src/main.rs#1"), "{screen}");
    // The rejection made before the amendment still stands.
    assert!(
        screen.contains("src/lib.rs   +2 -2  2 hunks, 1 rejected"),
        "{screen}"
    );

    // a applies what is kept, after the overall reason.
    tmux.keys(&["a"]);
    tmux.wait_for("the apply prompt", |screen| {
        screen.contains("Apply 2 of 3 hunks, reason:")
    });
    tmux.type_text("rename inside the crate only");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("the review to end", |_| exited(&exit_file));
    let exit = std::fs::read_to_string(&exit_file).unwrap();
    assert_eq!(exit.trim(), "0", "{screen}");
    // Back on the normal screen: the one-line summary.
    let screen = tmux.screen();
    assert!(
        screen.contains(&format!(
            "Applied {id} (rejected src/lib.rs#2); nothing is pending."
        )),
        "{screen}"
    );

    // The files: the kept hunks as previewed, the amended file as amended, the rejected hunk
    // as the base.
    let lib = std::fs::read_to_string(root.path().join("src/lib.rs")).unwrap();
    assert!(lib.contains("fn a() { bar(2); }"), "{lib}");
    assert!(lib.contains("fn b() { foo(3); }"), "{lib}");
    assert_eq!(
        std::fs::read_to_string(root.path().join("src/main.rs")).unwrap(),
        "fn main() {\n    baz(1);\n}\n"
    );

    // The history: applied by the reviewer at the command line, with the overall reason.
    let log = resolve(root.path(), &["log"]);
    assert!(log.contains(&id), "{log}");
    assert!(log.contains("applied"), "{log}");
    assert!(log.contains("resolved: cli"), "{log}");
    assert!(log.contains("rename inside the crate only"), "{log}");
    assert!(
        log.contains("[kept src/lib.rs#1; rejected src/lib.rs#2; amended src/main.rs]"),
        "{log}"
    );
    let log: Value = serde_json::from_str(&resolve(root.path(), &["log", "--json"])).unwrap();
    let rejected = log["history"][0]["review"].to_string();
    assert!(
        rejected.contains("callers outside the crate use foo"),
        "{log}"
    );
    assert!(resolve(root.path(), &["pending"]).contains("No pending actions."));

    // The connection that staged it hears what the reviewer did with its next tool result.
    let next = mcp.call("ls", json!({}));
    let text = next["content"][0]["text"].as_str().unwrap().to_owned();
    assert!(
        text.contains(&format!(
            "A reviewer resolved {id} (AST Edit: 3 replacements in 2 files)"
        )),
        "{text}"
    );
    assert!(text.contains("src/lib.rs#2"), "{text}");
    assert!(text.contains("callers outside the crate use foo"), "{text}");
    assert!(text.contains("+    baz(1);"), "{text}");
    assert!(text.contains("rename inside the crate only"), "{text}");
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
fn review_in_tmux(environment: &str) -> (tempfile::TempDir, tempfile::TempDir, Tmux, PathBuf) {
    let root = review_root();
    resolve(
        root.path(),
        &["ast-edit", "-p", "foo($A)", "-r", "bar($A)", "src"],
    );
    let scratch = tempfile::tempdir().unwrap();
    let exit_file = scratch.path().join("exit");
    let command = format!(
        "{environment} '{resolve}' --root '{root}' review; echo $? > '{exit}'; sleep 600",
        resolve = env!("CARGO_BIN_EXE_resolve"),
        root = root.path().display(),
        exit = exit_file.display(),
    );
    let tmux = Tmux::start(&command);
    tmux.wait_for("the review", |screen| screen.contains("▶ src/lib.rs#1"));
    (root, scratch, tmux, exit_file)
}

#[test]
fn ctrl_c_leaves_the_review_without_changes_and_restores_the_terminal() {
    if !tmux_available() {
        return;
    }
    let (root, _scratch, tmux, exit_file) = review_in_tmux("");
    assert!(tmux.in_alternate_screen());
    tmux.keys(&["j", "Space", "C-c"]);
    tmux.wait_for("the review to end", |_| exited(&exit_file));
    assert_eq!(std::fs::read_to_string(&exit_file).unwrap().trim(), "0");
    assert!(!tmux.in_alternate_screen());
    let screen = tmux.screen();
    assert!(
        screen.contains(
            "Review ended without changes; 1 action still pending.\nKept for the next review: 1 \
             rejected hunk."
        ),
        "{screen}"
    );
    assert_eq!(
        resolve(root.path(), &["log"]).trim(),
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
    let (_root, _scratch, tmux, _exit) = review_in_tmux("NO_COLOR=1");
    let plain = tmux.screen_with_styles();
    assert!(!colored(&plain), "{plain:?}");
    // Without color the changed words are still marked (bold, underlined).
    assert!(plain.contains("\u{1b}["), "{plain:?}");
    drop(tmux);
    let (_root, _scratch, tmux, _exit) = review_in_tmux("env -u NO_COLOR TERM=xterm-256color");
    let screen = tmux.screen_with_styles();
    assert!(colored(&screen), "{screen:?}");
}

#[test]
fn agent_approve_ask_on_a_terminal_opens_the_review_and_the_model_hears_the_rejected_hunk() {
    if !tmux_available() {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let filler: String = (1..=12).map(|n| format!("line {n}\n")).collect();
    std::fs::write(root.path().join("a.txt"), format!("one\n{filler}one\n")).unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let model = runtime.block_on(MockServer::start(
        [
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
        ]
        .into_iter()
        .map(Reply::Turn)
        .collect(),
    ));
    let scratch = tempfile::tempdir().unwrap();
    let exit_file = scratch.path().join("exit");
    let command = format!(
        "'{resolve}' --root '{root}' agent --base-url '{base}' --model mock --api-key-env RESOLVE_TEST_NO_KEY --approve ask 'Change one to uno in a.txt.' 2> /dev/null; echo $? > '{exit}'; sleep 600",
        resolve = env!("CARGO_BIN_EXE_resolve"),
        root = root.path().display(),
        base = model.openai_base(),
        exit = exit_file.display(),
    );
    let tmux = Tmux::start(&command);
    let screen = tmux.wait_for("the review of the model's preview", |screen| {
        screen.contains("▶ a.txt#1")
    });
    assert!(screen.contains("staged by agent"), "{screen}");
    assert!(
        screen.contains(
            "The model asks to apply this: a applies what is kept, d discards, q declines."
        ),
        "{screen}"
    );
    assert!(screen.contains("a.txt  +2 -2  2 hunks"), "{screen}");
    tmux.keys(&["j", "r"]);
    tmux.wait_for("the reason prompt", |screen| {
        screen.contains("Reject a.txt#2")
    });
    tmux.type_text("the second one is a proper name");
    tmux.keys(&["Enter", "a"]);
    tmux.wait_for("the apply prompt", |screen| {
        screen.contains("Apply 1 of 2 hunks, reason:")
    });
    tmux.type_text("only the first");
    tmux.keys(&["Enter"]);
    tmux.wait_for("the run to end", |_| exited(&exit_file));
    assert_eq!(std::fs::read_to_string(&exit_file).unwrap().trim(), "0");

    assert_eq!(
        std::fs::read_to_string(root.path().join("a.txt")).unwrap(),
        format!("uno\n{filler}one\n")
    );
    // The model's `resolve` result names the hunk left out and why.
    let last = model.bodies().pop().unwrap();
    let result = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|message| message["role"] == "tool")
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(result.contains("a.txt#2"), "{result}");
    assert!(
        result.contains("the second one is a proper name"),
        "{result}"
    );
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
    assert!(
        message.contains("`resolve review` needs a terminal"),
        "{message}"
    );
    assert!(message.contains("resolve apply --only PATH#N"), "{message}");
}

/// Whether the shell wrote the exit code to `exit_file` (`echo $? > file` creates the file
/// before it writes, so its existence alone is not enough).
fn exited(exit_file: &std::path::Path) -> bool {
    std::fs::read_to_string(exit_file).is_ok_and(|code| code.ends_with('\n'))
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
    resolve(
        root.path(),
        &[
            "ast-edit",
            "-p",
            "$X.unwrap()",
            "-r",
            "$X.expect(\"checked\")",
            "src",
        ],
    );
    let scratch = tempfile::tempdir().unwrap();
    let exit_file = scratch.path().join("exit");
    let command = format!(
        "'{resolve}' --root '{root}' review; echo $? > '{exit}'; sleep 600",
        resolve = env!("CARGO_BIN_EXE_resolve"),
        root = root.path().display(),
        exit = exit_file.display(),
    );
    let tmux = Tmux::start(&command);
    tmux.wait_for("the review", |screen| screen.contains("▶ src/config.rs#1"));
    tmux.keys(&["J"]);
    let screen = tmux.wait_for("the demo's main.rs", |screen| {
        screen.contains("▶ src/main.rs#1")
    });
    eprintln!("--- src/main.rs#1 of the demo at 80×24:\n{screen}");
    assert!(screen.contains(" ↪"), "{screen}");
    let rows = unwrapped_rows(&screen);
    let removed = r#"│ -    let listener = std::net::TcpListener::bind(("127.0.0.1", config.port())).unwrap();"#;
    let added = r#"│ +    let listener = std::net::TcpListener::bind(("127.0.0.1", config.port())).expect("checked");"#;
    assert!(rows.iter().any(|row| row == removed), "{screen}");
    assert!(rows.iter().any(|row| row == added), "{screen}");
    tmux.keys(&["q"]);
    tmux.wait_for("the review to end", |_| exited(&exit_file));
}

/// `resolve agent --approve ask --max-turns 3 EXTRA…` in tmux over a model that stages an
/// edit of `a.txt`, asks to apply it, then ends its turn (so the run stops at its limit, exit
/// 1, with the preview pending); the review of the apply is on screen when this returns.
fn agent_review_in_tmux(extra: &str) -> AgentInTmux {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("a.txt"), "one\n").unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let model = runtime.block_on(MockServer::start(
        [
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
        ]
        .into_iter()
        .map(Reply::Turn)
        .collect(),
    ));
    let scratch = tempfile::tempdir().unwrap();
    let exit_file = scratch.path().join("exit");
    let command = format!(
        "'{resolve}' --root '{root}' agent --base-url '{base}' --model mock --api-key-env RESOLVE_TEST_NO_KEY --approve ask --max-turns 3 {extra} 'Change one to uno in a.txt.' 2> /dev/null; echo $? > '{exit}'; sleep 600",
        resolve = env!("CARGO_BIN_EXE_resolve"),
        root = root.path().display(),
        base = model.openai_base(),
        exit = exit_file.display(),
    );
    let tmux = Tmux::start(&command);
    tmux.wait_for("the review of the model's preview", |screen| {
        screen.contains("▶ a.txt#1")
    });
    AgentInTmux {
        root,
        model,
        tmux,
        exit_file,
        _scratch: scratch,
        _runtime: runtime,
    }
}

/// An agent run in tmux, and what it needs to stay up.
struct AgentInTmux {
    root: tempfile::TempDir,
    model: MockServer,
    tmux: Tmux,
    /// Where the run's exit code is written.
    exit_file: PathBuf,
    _scratch: tempfile::TempDir,
    /// Runs the model server.
    _runtime: tokio::runtime::Runtime,
}

/// Issue #31 §2: `q` in the review of an agent's apply leaves the preview pending (it used to
/// discard it), and the model reads that.
#[test]
fn q_in_the_review_of_an_agents_apply_leaves_it_pending_and_the_model_reads_so() {
    if !tmux_available() {
        return;
    }
    let run = agent_review_in_tmux("");
    let (root, model, tmux, exit_file) = (&run.root, &run.model, &run.tmux, &run.exit_file);
    tmux.keys(&["q"]);
    tmux.wait_for("the run to end", |_| exited(exit_file));
    assert_eq!(std::fs::read_to_string(exit_file).unwrap().trim(), "1");
    assert_eq!(
        std::fs::read_to_string(root.path().join("a.txt")).unwrap(),
        "one\n"
    );
    let result = model.last_tool_result();
    assert!(
        result.starts_with("Not applied: the person left the review without deciding."),
        "{result}"
    );
    let pending = Command::new(env!("CARGO_BIN_EXE_resolve"))
        .arg("--root")
        .arg(root.path())
        .args(["pending", "--json"])
        .output()
        .unwrap();
    let pending: Value = serde_json::from_slice(&pending.stdout).unwrap();
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
    let (root, model, tmux, exit_file) = (&run.root, &run.model, &run.tmux, &run.exit_file);
    tmux.wait_for("the run to end", |_| exited(exit_file));
    assert_eq!(std::fs::read_to_string(exit_file).unwrap().trim(), "1");
    assert_eq!(
        std::fs::read_to_string(root.path().join("a.txt")).unwrap(),
        "one\n"
    );
    let result = model.last_tool_result();
    assert!(
        result.starts_with("Not applied: no decision came in time (a person had 2s"),
        "{result}"
    );
}

/// See: issue #32, "The person's reason is lost in the agent's review".
#[test]
fn agent_approve_ask_records_the_reason_typed_in_the_review_with_the_models_beside_it() {
    if !tmux_available() {
        return;
    }
    let run = agent_review_in_tmux("");
    let (root, tmux, exit_file) = (&run.root, &run.tmux, &run.exit_file);
    tmux.keys(&["a"]);
    tmux.wait_for("the apply prompt", |screen| {
        screen.contains("Apply, reason:")
    });
    tmux.type_text("The person's own reason.");
    tmux.keys(&["Enter"]);
    tmux.wait_for("the run to end", |_| exited(exit_file));
    assert_eq!(std::fs::read_to_string(exit_file).unwrap().trim(), "0");
    assert_eq!(
        std::fs::read_to_string(root.path().join("a.txt")).unwrap(),
        "uno\n"
    );
    let log: Value = serde_json::from_str(&resolve(root.path(), &["log", "--json"])).unwrap();
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
    let (root, _scratch, tmux, exit_file) = review_in_tmux("");
    tmux.keys(&["r"]);
    tmux.wait_for("the reason prompt", |screen| {
        screen.contains("reason (optional):")
    });
    tmux.type_text("Not this one.");
    tmux.keys(&["Enter", "q"]);
    tmux.wait_for("the review to end", |_| exited(&exit_file));
    assert_eq!(std::fs::read_to_string(&exit_file).unwrap().trim(), "0");
    let screen = tmux.screen();
    assert!(
        screen.contains("Kept for the next review: 1 rejected hunk."),
        "{screen}"
    );
    assert_eq!(
        resolve(root.path(), &["pending", "--json"])
            .matches("pending-action:")
            .count(),
        1
    );

    let again = Tmux::start(&format!(
        "'{resolve}' --root '{root}' review; sleep 600",
        resolve = env!("CARGO_BIN_EXE_resolve"),
        root = root.path().display(),
    ));
    let screen = again.wait_for("the review with its marks", |screen| {
        screen.contains("▶ src/lib.rs#1") && screen.contains("✗ rejected: Not this one.")
    });
    assert!(screen.contains("▶ src/lib.rs#1"), "{screen}");
}
