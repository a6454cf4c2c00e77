//! `resolve mcp` inside the real hosts people use: Claude Code (`claude -p`) and Codex
//! (`codex exec`), each pointed at a scripted model on 127.0.0.1 (the mock of
//! `resolve-test-support`: Anthropic Messages for Claude Code, OpenAI Responses for Codex). The
//! tests read what the host sends the model after each tool call, because only a host decides
//! which part of an MCP result the model sees: the preview's diff, the reminder and the pending
//! id after an `edit`; the result text after `resolve`; a person's decision made in another
//! process, once.
//!
//! The hosts are the executables in `RESOLVE_CLAUDE` and `RESOLVE_CODEX` (`.ci/run` installs
//! the pinned npm packages); without one, its tests fail under CI (`CI` set) and are skipped
//! loudly elsewhere. Each run gets a throwaway `HOME` (and `CODEX_HOME`), an environment with
//! nothing but what it needs (no proxy, no real key), the mock's base URL, and a time limit; a
//! failed test prints the host's output and what it sent the model.

#![allow(clippy::print_stderr, reason = "tests explain skips on stderr")]

use std::process::Output;
use std::sync::{Arc, Mutex};

use crate::host_harness::{AFTER, BEFORE, Host, Lab, REMINDER, person, succeeded};
use resolve_test_support::{Reply, Step, Turn};
use serde_json::json;

fn edit_call(host: Host) -> Reply {
    host.call(
        "call_edit",
        "edit",
        &json!({"path": "a.txt", "old_text": "two\n", "new_text": "TWO\n"}),
    )
}

fn done() -> Reply {
    Reply::Turn(Turn::text("Done."))
}

/// After `edit`, the model reads the staged sentence, the unified diff (real lines), the
/// pending id and the reminder; the file is untouched.
fn edit_result_carries_the_diff_the_reminder_and_the_pending_id(host: Host) {
    let Some(binary) = host.binary() else {
        return;
    };
    let lab = Lab::new();
    let run = host.run(
        &binary,
        &lab,
        vec![edit_call(host), done()],
        "In a.txt, change two to TWO.",
    );
    run.check_finished(2);
    let text = run.result(2, "call_edit");
    for part in [
        "Staged as a preview",
        "@@ -1,3 +1,3 @@",
        "\n one\n-two\n+TWO\n three",
        "pending-action:edit:1",
        REMINDER,
    ] {
        run.check(
            text.contains(part),
            &format!("the edit result should carry {part:?}; it is:\n{text}"),
        );
    }
    run.check(
        lab.file() == BEFORE,
        "a.txt must not change before an apply",
    );
}

/// After `resolve` with `apply`, the model reads the result text (no reminder: nothing is
/// pending), and the file holds exactly the previewed bytes.
fn resolve_apply_result_carries_the_applied_text_and_the_file_holds_the_preview(host: Host) {
    let Some(binary) = host.binary() else {
        return;
    };
    let lab = Lab::new();
    let apply = json!({"action": "apply", "reason": "The task asks for TWO."});
    let run = host.run(
        &binary,
        &lab,
        vec![
            edit_call(host),
            host.call("call_resolve", "resolve", &apply),
            done(),
        ],
        "In a.txt, change two to TWO, then apply it.",
    );
    run.check_finished(3);
    let text = run.result(3, "call_resolve");
    run.check(
        text.contains("Applied edit to a.txt.") && !text.contains(REMINDER),
        &format!("the resolve result should say `Applied edit to a.txt.` without the reminder; it is:\n{text}"),
    );
    let file = lab.file();
    run.check(
        file == AFTER,
        &format!("a.txt should hold the previewed bytes {AFTER:?}, not {file:?}"),
    );
}

/// A person discards the model's preview from a terminal (another process) while the model
/// "thinks"; the model's next tool result carries the reviewer note with the person's reason,
/// and the one after it does not repeat it.
fn a_persons_decision_in_another_process_reaches_the_model_once(host: Host) {
    let Some(binary) = host.binary() else {
        return;
    };
    let lab = Lab::new();
    let reason = "Keep it lowercase; TWO is a reserved word here.";
    let decided: Arc<Mutex<Option<Output>>> = Arc::default();
    let person = {
        let decided = decided.clone();
        let (root, home) = (lab.root.clone(), lab.home.clone());
        Step::new(move |_request| {
            let args = [
                "discard",
                "--id",
                "pending-action:edit:1",
                "--reason",
                reason,
            ];
            *decided.lock().unwrap() = Some(person(&root, &home, &args));
            host.call("call_ls", "ls", &json!({}))
        })
    };
    let run = host.run(
        &binary,
        &lab,
        vec![
            edit_call(host),
            Reply::Step(person),
            host.call("call_read", "read", &json!({"path": "a.txt"})),
            done(),
        ],
        "In a.txt, change two to TWO, then look around.",
    );
    let decided = decided.lock().unwrap().take();
    run.check(
        succeeded(&decided),
        &format!("the person's `resolve discard` should succeed: {decided:?}"),
    );
    run.check_finished(4);
    let note = run.result(3, "call_ls");
    for part in [
        "A reviewer discarded pending-action:edit:1 (Edit: a.txt); nothing was written.",
        &format!("Reason: {}", json!(reason)),
    ] {
        run.check(
            note.contains(part),
            &format!("the next tool result should carry {part:?}; it is:\n{note}"),
        );
    }
    let after = run.result(4, "call_read");
    run.check(
        !after.contains("A reviewer") && !after.contains(reason),
        &format!("the note should arrive once; the result after it is:\n{after}"),
    );
    run.check(lab.file() == BEFORE, "a discarded preview writes nothing");
}

/// One test per (name, case, host): the case run against that host.
macro_rules! host_tests {
    ($($name:ident: $case:ident($host:ident);)*) => {$(
        #[test]
        fn $name() {
            $case(Host::$host);
        }
    )*};
}

host_tests! {
    claude_code_edit_result_carries_the_diff_the_reminder_and_the_pending_id:
        edit_result_carries_the_diff_the_reminder_and_the_pending_id(ClaudeCode);
    claude_code_resolve_apply_result_carries_the_applied_text_and_the_file_holds_the_preview:
        resolve_apply_result_carries_the_applied_text_and_the_file_holds_the_preview(ClaudeCode);
    claude_code_shows_a_persons_decision_in_another_process_to_the_model_once:
        a_persons_decision_in_another_process_reaches_the_model_once(ClaudeCode);
    codex_edit_result_carries_the_diff_the_reminder_and_the_pending_id:
        edit_result_carries_the_diff_the_reminder_and_the_pending_id(Codex);
    codex_resolve_apply_result_carries_the_applied_text_and_the_file_holds_the_preview:
        resolve_apply_result_carries_the_applied_text_and_the_file_holds_the_preview(Codex);
    codex_shows_a_persons_decision_in_another_process_to_the_model_once:
        a_persons_decision_in_another_process_reaches_the_model_once(Codex);
}
