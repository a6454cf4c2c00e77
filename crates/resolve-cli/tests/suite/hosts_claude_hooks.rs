//! Claude Code's own `Edit`, `Write` and `Bash` calls under `resolve setup claude-code`: the
//! real `claude -p` (pinned, from npm) against the scripted Anthropic-wire model on
//! 127.0.0.1, with the project's `.claude/settings.json` and `.mcp.json` as setup wrote them.
//! The tests read what Claude Code sends the model after each call (the hook's answer) and
//! what the workspace and its store hold.
//!
//! Also here, without a host: the hook fails closed on input it cannot stage (exit 2, nothing
//! written), and setup merges, repeats, dry-runs and removes its entries exactly.

#![allow(clippy::print_stderr, reason = "tests explain skips on stderr")]

use resolve_test_support::process::output_with_stdin;
use resolve_test_support::text::{assert_contains, assert_lacks, numbered_lines};
use std::path::Path;
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

use crate::host_harness::{
    BEFORE, Host, HostRun, Lab, claude_code_against, person, person_when_pending, succeeded,
};
use resolve_test_support::{Reply, Step, Turn};
use serde_json::{Value, json};

/// `resolve setup claude-code --approve <mode>` in the lab's root; it must succeed. The person
/// has trusted the workspace in Claude Code (which applies a project's permission entries only
/// then), as its trust dialog records it.
fn setup_claude_code(lab: &Lab, mode: &str) {
    let trusted =
        json!({"projects": {lab.root.to_string_lossy(): {"hasTrustDialogAccepted": true}}});
    std::fs::write(lab.home.join(".claude.json"), trusted.to_string()).unwrap();
    let output = person(
        &lab.root,
        &lab.home,
        &["setup", "claude-code", "--approve", mode],
    );
    assert!(output.status.success(), "setup failed: {output:?}");
}

/// Run Claude Code in the lab's root, as set up there, on `script`.
fn run_claude(lab: &Lab, script: Vec<Reply>, prompt: &str) -> Option<HostRun> {
    let binary = Host::ClaudeCode.binary()?;
    Some(Host::ClaudeCode.run_command(lab, script, |server| {
        let mut command = lab.host_command(&binary);
        claude_code_against(&mut command, server, prompt);
        command
    }))
}

fn read_call(lab: &Lab, id: &str) -> Reply {
    let path = lab.root.join("a.txt");
    Reply::Turn(Turn::call(id, "Read", json!({"file_path": path})))
}

fn edit(lab: &Lab, id: &str, old: &str, new: &str) -> Reply {
    let path = lab.root.join("a.txt");
    Reply::Turn(Turn::call(
        id,
        "Edit",
        json!({"file_path": path, "old_string": old, "new_string": new}),
    ))
}

fn done() -> Reply {
    Reply::Turn(Turn::text("Done."))
}

/// The session id Claude Code reported (`--output-format json`).
fn session_id(run: &HostRun) -> String {
    let printed: Value = serde_json::from_str(run.stdout.trim()).unwrap_or_default();
    let session = printed["session_id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    run.check(
        !session.is_empty(),
        "Claude Code should report its session id",
    );
    session
}

/// The history, newest first, as `resolve log --json` prints it.
fn log(lab: &Lab) -> Vec<Value> {
    let output = person(&lab.root, &lab.home, &["log", "--json"]);
    let printed: Value = serde_json::from_slice(&output.stdout).unwrap_or_default();
    printed["history"].as_array().cloned().unwrap_or_default()
}

/// `stage`: the Edit is staged, not written; the pending action's origin names the session;
/// the model reads the pending id; its `resolve` apply lands exactly the previewed bytes, and
/// the history has it with the model's reason.
#[test]
fn claude_code_stage_mode_stages_the_edit_and_the_sessions_resolve_applies_it() {
    let lab = Lab::new();
    setup_claude_code(&lab, "stage");
    let seen: Arc<Mutex<Option<(String, String)>>> = Arc::default();
    let reason = "The task asks for TWO.";
    let look = {
        let seen = seen.clone();
        let (root, home, file) = (lab.root.clone(), lab.home.clone(), lab.root.join("a.txt"));
        Step::new(move |_request| {
            let pending = person(&root, &home, &["pending", "--json"]);
            let file = std::fs::read_to_string(&file).unwrap();
            *seen.lock().unwrap() = Some((String::from_utf8_lossy(&pending.stdout).into(), file));
            Reply::Turn(Turn::call(
                "call_resolve",
                "mcp__resolve__resolve",
                json!({"action": "apply", "reason": reason}),
            ))
        })
    };
    let script = vec![
        read_call(&lab, "call_read"),
        edit(&lab, "call_edit", "two\n", "TWO\n"),
        Reply::Step(look),
        done(),
    ];
    let Some(run) = run_claude(&lab, script, "In a.txt, change two to TWO.") else {
        return;
    };
    run.check_finished(4);
    let session = session_id(&run);
    let staged = run.result(3, "call_edit");
    for part in ["pending-action:edit:1", "NOT modified", "-two", "+TWO"] {
        run.check(
            staged.contains(part),
            &format!("the Edit's result should carry {part:?}; it is:\n{staged}"),
        );
    }
    let (pending, file_then) = seen.lock().unwrap().take().unwrap_or_default();
    run.check(file_then == BEFORE, "a.txt must not change while staged");
    run.check(
        pending.contains("pending-action:edit:1")
            && pending.contains(&format!("claude-code:{session}")),
        &format!(
            "`resolve pending --json` should list the edit under the session's origin: {pending}"
        ),
    );
    let applied = run.result(4, "call_resolve");
    run.check(
        applied.contains("Applied edit to a.txt."),
        &format!("the session's resolve should apply the hook's preview: {applied}"),
    );
    run.check(
        applied.contains("Read a.txt again before you edit it further"),
        &format!("the apply should tell the model to read a.txt again: {applied}"),
    );
    run.check(
        lab.file() == "one\nTWO\nthree\n",
        "a.txt holds the previewed bytes",
    );
    let history = log(&lab);
    run.check(
        history.first().is_some_and(|entry| {
            entry["id"] == "pending-action:edit:1" && entry.to_string().contains(reason)
        }),
        &format!("`resolve log` should have the apply with the model's reason: {history:?}"),
    );
}

/// Another Claude Code session on the same root cannot resolve what the first one's hook
/// staged: its `resolve` finds nothing pending, and the preview stays for the first session
/// (or a person).
#[test]
fn claude_code_another_session_cannot_resolve_a_staged_edit() {
    let lab = Lab::new();
    setup_claude_code(&lab, "stage");
    let first = vec![
        read_call(&lab, "call_read"),
        edit(&lab, "call_edit", "two\n", "TWO\n"),
        done(),
    ];
    let Some(run) = run_claude(&lab, first, "In a.txt, change two to TWO.") else {
        return;
    };
    run.check_finished(3);
    let apply = json!({"action": "apply", "reason": "Looks right."});
    let second = vec![
        Reply::Turn(Turn::call("call_resolve", "mcp__resolve__resolve", apply)),
        done(),
    ];
    let other = run_claude(&lab, second, "Apply what is pending.").unwrap();
    other.check_finished(2);
    run.check(
        session_id(&run) != session_id(&other),
        "the second run should be another session",
    );
    let text = other.result(2, "call_resolve");
    other.check(
        text.contains("No pending action to resolve"),
        &format!("another session's resolve should find nothing: {text}"),
    );
    other.check(lab.file() == BEFORE, "nothing lands from another session");
    let pending = person(&lab.root, &lab.home, &["pending", "--json"]);
    other.check(
        String::from_utf8_lossy(&pending.stdout).contains("pending-action:edit:1"),
        "the edit stays pending for its session or a person",
    );
}

/// `auto`: each Edit lands at once through resolve; a second Edit of the same file succeeds at
/// the first attempt; the history has both, undoable.
#[test]
fn claude_code_auto_mode_lands_each_edit_and_a_second_edit_succeeds_first_time() {
    let lab = Lab::new();
    setup_claude_code(&lab, "auto");
    let script = vec![
        read_call(&lab, "call_read"),
        edit(&lab, "call_edit", "two\n", "TWO\n"),
        // Text only the first edit made: Claude Code must take the file as it is on disk.
        edit(&lab, "call_edit_again", "TWO\nthree\n", "TWO\nTHREE\n"),
        done(),
    ];
    let Some(run) = run_claude(&lab, script, "Upper-case two and three in a.txt.") else {
        return;
    };
    run.check_finished(4);
    for (number, id) in [(3, "call_edit"), (4, "call_edit_again")] {
        let text = run.result(number, id);
        run.check(
            text.contains("Applied edit to a.txt.") && text.contains("Landed through resolve"),
            &format!("{id} should have landed: {text}"),
        );
    }
    run.check(
        lab.file() == "one\nTWO\nTHREE\n",
        &format!("a.txt should hold both edits, not {:?}", lab.file()),
    );
    let history = log(&lab);
    run.check(
        history.len() == 2 && history.iter().all(|entry| entry["state"] == "applied"),
        &format!("both edits should be applied in the history: {history:?}"),
    );
    let undo = person(&lab.root, &lab.home, &["undo"]);
    run.check(
        undo.status.success() && lab.file() == "one\nTWO\nthree\n",
        &format!("`resolve undo` reverts the last edit: {undo:?}"),
    );
}

/// A file of 30 lines and a `Write` of it changing lines 2 and 25: two hunks.
fn lines(changed: &[usize]) -> String {
    numbered_lines(
        30,
        changed,
        |n| format!("line {n}"),
        |n| format!("LINE {n}"),
    )
}

/// The id of the model's first `Write`, staged by the hook.
const PENDING_WRITE: &str = "pending-action:write:1";

/// In `review` mode, Claude Code reads `a.txt` and writes `content` to it; while the hook waits
/// a person runs `resolve ACTION --id <the write> EXTRA… --reason REASON`, which succeeds. The
/// run (finished after 3 requests) and the write's result as the model read it; `None` when
/// Claude Code is not available.
fn person_decides_a_write_in_review_mode(
    lab: &Lab,
    content: &str,
    task: &str,
    action: &str,
    extra: &[&str],
    reason: &str,
) -> Option<(HostRun, String)> {
    setup_claude_code(lab, "review");
    let args = [
        &[action, "--id", PENDING_WRITE],
        extra,
        &["--reason", reason],
    ]
    .concat();
    let decided = person_when_pending(&lab.root, &lab.home, PENDING_WRITE, &args);
    let path = lab.root.join("a.txt");
    let script = vec![
        read_call(lab, "call_read"),
        Reply::Turn(Turn::call(
            "call_write",
            "Write",
            json!({"file_path": path, "content": content}),
        )),
        done(),
    ];
    let run = run_claude(lab, script, task)?;
    let decided = decided.join().unwrap();
    run.check(
        succeeded(&decided),
        &format!("the person's {action} should succeed: {decided:?}"),
    );
    run.check_finished(3);
    let told = run.result(3, "call_write");
    Some((run, told))
}

/// `review`: while the hook waits, a person applies the write but rejects hunk 2 with a reason;
/// the file holds the base with the other hunk, and the model reads the reason and the address.
#[test]
fn claude_code_review_mode_lands_what_a_person_approved_and_tells_the_model_why() {
    let lab = Lab::new();
    std::fs::write(lab.root.join("a.txt"), lines(&[])).unwrap();
    let reason = "Line 25 stays lowercase.";
    let Some((run, told)) = person_decides_a_write_in_review_mode(
        &lab,
        &lines(&[2, 25]),
        "Upper-case lines 2 and 25 of a.txt.",
        "apply",
        &["--except", "a.txt#2"],
        reason,
    ) else {
        return;
    };
    run.check(
        lab.file() == lines(&[2]),
        &format!(
            "a.txt should hold the base with hunk 1 only: {:?}",
            lab.file()
        ),
    );
    for part in ["a.txt#2", reason, "a person"] {
        run.check(
            told.contains(part),
            &format!("the model should read {part:?}; it read:\n{told}"),
        );
    }
}

/// `review`: a person's rejection of the whole write writes nothing, and the model reads why.
#[test]
fn claude_code_review_mode_rejection_writes_nothing() {
    let lab = Lab::new();
    let reason = "Not this file.";
    let Some((run, told)) = person_decides_a_write_in_review_mode(
        &lab,
        "replaced\n",
        "Replace a.txt.",
        "discard",
        &[],
        reason,
    ) else {
        return;
    };
    run.check(lab.file() == BEFORE, "a rejected write writes nothing");
    run.check(
        told.contains(reason) && told.contains("rejected"),
        &format!("the model should read the rejection and its reason: {told}"),
    );
}

/// The shell guard: `sed -i` on a file of the root is refused with a reason naming Edit; the
/// file is unchanged.
#[test]
fn claude_code_bash_sed_in_place_is_refused() {
    let lab = Lab::new();
    setup_claude_code(&lab, "stage");
    let script = vec![
        Reply::Turn(Turn::call(
            "call_bash",
            "Bash",
            json!({"command": "sed -i 's/two/TWO/' a.txt", "description": "Upper-case two"}),
        )),
        done(),
    ];
    let Some(run) = run_claude(&lab, script, "Upper-case two in a.txt.") else {
        return;
    };
    run.check_finished(2);
    let told = run.result(2, "call_bash");
    run.check(
        told.contains("Refused by resolve") && told.contains("`sed -i`") && told.contains("Edit"),
        &format!("the Bash call should be refused: {told}"),
    );
    run.check(lab.file() == BEFORE, "a refused command writes nothing");
}

/// A command whose writes the guard cannot see (a script) runs; what it changed is recorded
/// in `resolve log` after it, the model reads that in the next request, and `resolve undo`
/// reverts it.
#[test]
fn claude_code_a_scripts_writes_are_recorded_and_undone() {
    let lab = Lab::new();
    setup_claude_code(&lab, "stage");
    // The person allows the command (print mode asks for nothing).
    std::fs::write(
        lab.root.join(".claude/settings.local.json"),
        json!({"permissions": {"allow": ["Bash(sh tidy.sh)"]}}).to_string(),
    )
    .unwrap();
    std::fs::write(
        lab.root.join("tidy.sh"),
        "printf 'one\\nTWO\\nthree\\n' > a.txt\n",
    )
    .unwrap();
    let script = vec![
        Reply::Turn(Turn::call(
            "call_bash",
            "Bash",
            json!({"command": "sh tidy.sh", "description": "Tidy up"}),
        )),
        done(),
    ];
    let Some(run) = run_claude(&lab, script, "Run tidy.sh.") else {
        return;
    };
    run.check_finished(2);
    run.check(
        lab.file() == "one\nTWO\nthree\n",
        "the script ran and wrote a.txt",
    );
    let next = run.requests[1].body.to_string();
    run.check(
        next.contains("pending-action:shell:1") && next.contains("a.txt (changed)"),
        "the model's next request should say what the command changed and its id",
    );
    let history = log(&lab);
    run.check(
        history.first().is_some_and(|entry| {
            entry["id"] == "pending-action:shell:1"
                && entry["origin"]
                    .as_str()
                    .unwrap_or_default()
                    .starts_with("claude-code:")
        }),
        &format!("`resolve log` should have the command under the session: {history:?}"),
    );
    let undo = person(&lab.root, &lab.home, &["undo", "pending-action:shell:1"]);
    run.check(undo.status.success(), &format!("undo: {undo:?}"));
    run.check(lab.file() == BEFORE, "undo restores a.txt");
}

/// `resolve hook claude-code --approve auto` with `input` on stdin, in `root`.
fn hook(root: &Path, home: &Path, input: &str) -> Output {
    hook_in_mode(root, home, "auto", input)
}

/// `resolve hook claude-code --approve <mode>` with `input` on stdin, in `root`.
fn hook_in_mode(root: &Path, home: &Path, mode: &str, input: &str) -> Output {
    output_with_stdin(
        Command::new(env!("CARGO_BIN_EXE_resolve"))
            .env("HOME", home)
            .args(["--root"])
            .arg(root)
            .args(["hook", "claude-code", "--approve", mode]),
        input,
    )
}

fn edit_input(path: &Path) -> String {
    json!({"session_id": "s1", "hook_event_name": "PreToolUse", "tool_name": "Edit",
        "cwd": path.parent().unwrap(), "tool_use_id": "t1",
        "tool_input": {"file_path": path, "old_string": "two", "new_string": "TWO", "replace_all": false}})
    .to_string()
}

/// Input the hook cannot stage blocks the call (exit 2, reason on stderr) and writes nothing.
#[test]
fn the_hook_fails_closed_on_malformed_input_and_paths_outside_the_root() {
    let lab = Lab::new();
    let outside = lab.dir.parent().join("outside.txt");
    std::fs::write(&outside, BEFORE).unwrap();
    let cases = [
        ("not json".to_owned(), "not Claude Code's hook JSON"),
        (
            json!({"session_id": "s1", "hook_event_name": "PreToolUse", "tool_name": "Edit",
                "tool_input": {"file_path": "a.txt"}})
            .to_string(),
            "not the shape Claude Code sends",
        ),
        (edit_input(&outside), "outside"),
    ];
    for (input, says) in cases {
        let output = hook(&lab.root, &lab.home, &input);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{input}: {output:?}");
        assert!(
            stderr.contains(says),
            "{input}: stderr should say {says:?}: {stderr}"
        );
        assert!(output.stdout.is_empty(), "{input}: {output:?}");
    }
    assert_eq!(lab.file(), BEFORE);
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), BEFORE);
    // The same input inside the root lands (auto), so the refusals above were about the input.
    let output = hook(&lab.root, &lab.home, &edit_input(&lab.root.join("a.txt")));
    assert!(output.status.success(), "{output:?}");
    assert_eq!(lab.file(), "one\nTWO\nthree\n");
}

/// Setup merges with other settings, changes nothing the second time, prints a diff and writes
/// nothing on a dry run, and `--remove` leaves the files as they were.
#[test]
fn setup_merges_is_idempotent_dry_runs_and_removes_exactly_its_entries() {
    let lab = Lab::new();
    let settings = lab.root.join(".claude").join("settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let original = "{\n  \"model\": \"opus\",\n  \"permissions\": {\n    \"allow\": [\n      \"Bash(ls:*)\"\n    ]\n  }\n}\n";
    std::fs::write(&settings, original).unwrap();
    let run = |args: &[&str]| person(&lab.root, &lab.home, args);

    let dry = run(&["setup", "claude-code", "--dry-run"]);
    let shown = String::from_utf8_lossy(&dry.stdout);
    assert!(dry.status.success(), "{dry:?}");
    assert!(
        shown.contains("+          \"command\":") || shown.contains("hook claude-code"),
        "{shown}"
    );
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), original);
    assert!(!lab.root.join(".mcp.json").exists());

    assert!(run(&["setup", "claude-code"]).status.success());
    let merged: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(merged["model"], "opus");
    assert_eq!(
        merged["permissions"]["allow"],
        json!(["Bash(ls:*)", "mcp__resolve"])
    );
    assert_eq!(merged["enabledMcpjsonServers"], json!(["resolve"]));
    let servers: Value =
        serde_json::from_str(&std::fs::read_to_string(lab.root.join(".mcp.json")).unwrap())
            .unwrap();
    assert_eq!(servers["mcpServers"]["resolve"]["args"], json!(["mcp"]));
    let once = std::fs::read_to_string(&settings).unwrap();

    let again = run(&["setup", "claude-code"]);
    assert!(String::from_utf8_lossy(&again.stdout).contains("Nothing to change"));
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), once);

    let removed = run(&["setup", "claude-code", "--remove"]);
    assert!(removed.status.success(), "{removed:?}");
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), original);
    // `.mcp.json` held only what setup added: it goes, as it was before setup.
    assert!(!lab.root.join(".mcp.json").exists());
    assert!(
        String::from_utf8_lossy(&removed.stdout).contains("Removed"),
        "{removed:?}"
    );
}

/// A tool call as Claude Code's hook input.
fn call_input(tool: &str, input: &Value) -> String {
    json!({"session_id": "s1", "hook_event_name": "PreToolUse", "tool_name": tool,
        "tool_use_id": "t1", "tool_input": input})
    .to_string()
}

/// What the hook told the model (its `deny` reason).
fn told(output: &Output) -> String {
    let answer: Value = serde_json::from_slice(&output.stdout).unwrap_or_default();
    answer["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// `MultiEdit` (older Claude Code) applies its edits in order; `NotebookEdit` replaces,
/// inserts and deletes cells; each lands as the file's whole new content.
#[test]
fn the_hook_stages_multi_edits_and_notebook_edits_with_claude_codes_semantics() {
    let lab = Lab::new();
    let path = lab.root.join("a.txt");
    let multi = json!({"file_path": path, "edits": [
        {"old_string": "one", "new_string": "ONE"},
        {"old_string": "ONE\ntwo", "new_string": "ONE\n2"}
    ]});
    let output = hook(&lab.root, &lab.home, &call_input("MultiEdit", &multi));
    assert!(output.status.success(), "{output:?}");
    assert_eq!(lab.file(), "ONE\n2\nthree\n");

    let notebook = lab.root.join("n.ipynb");
    let cells = json!({"cells": [
        {"cell_type": "code", "id": "c1", "metadata": {}, "source": "print(1)", "outputs": [{"x": 1}], "execution_count": 3},
        {"cell_type": "markdown", "id": "c2", "metadata": {}, "source": "# Title"}
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5});
    std::fs::write(&notebook, cells.to_string()).unwrap();
    let edits = [
        json!({"notebook_path": notebook, "cell_id": "c1", "new_source": "print(2)"}),
        json!({"notebook_path": notebook, "cell_id": "c2", "new_source": "x = 1", "cell_type": "code", "edit_mode": "insert"}),
        json!({"notebook_path": notebook, "cell_id": "c2", "new_source": "", "edit_mode": "delete"}),
    ];
    for edit in edits {
        let output = hook(&lab.root, &lab.home, &call_input("NotebookEdit", &edit));
        assert!(output.status.success(), "{edit}: {output:?}");
    }
    let after: Value = serde_json::from_str(&std::fs::read_to_string(&notebook).unwrap()).unwrap();
    let sources: Vec<&str> = after["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|cell| cell["source"].as_str().unwrap())
        .collect();
    assert_eq!(sources, ["print(2)", "x = 1"]);
    assert_eq!(after["cells"][0]["outputs"], json!([]));
    assert_eq!(after["nbformat"], 4);

    let missing = json!({"notebook_path": notebook, "cell_id": "nope", "new_source": "x"});
    let output = hook(&lab.root, &lab.home, &call_input("NotebookEdit", &missing));
    assert_eq!(output.status.code(), Some(2), "{output:?}");
}

/// The shell guard refuses visible writes in `stage` and `review` only, lets reads run, and
/// `--shell-writes allow` turns it off; other tools get no answer.
#[test]
fn the_shell_guard_refuses_visible_writes_only_while_edits_are_staged() {
    let lab = Lab::new();
    let bash = |command: &str| call_input("Bash", &json!({"command": command}));
    for mode in ["stage", "review"] {
        let output = hook_in_mode(&lab.root, &lab.home, mode, &bash("echo x > a.txt"));
        assert!(output.status.success(), "{output:?}");
        assert_contains(&told(&output), "redirection `>` into `a.txt`");
    }
    for (mode, command) in [
        ("stage", "cat a.txt | grep two"),
        ("stage", "cargo test > /dev/null 2>&1"),
        ("auto", "echo x > a.txt"),
    ] {
        let output = hook_in_mode(&lab.root, &lab.home, mode, &bash(command));
        assert!(
            output.status.success() && output.stdout.is_empty(),
            "{command}: {output:?}"
        );
    }
    let output = output_with_stdin(
        Command::new(env!("CARGO_BIN_EXE_resolve"))
            .env("HOME", &lab.home)
            .arg("--root")
            .arg(&lab.root)
            .args(["hook", "claude-code", "--shell-writes", "allow"]),
        &bash("sed -i s/a/b/ a.txt"),
    );
    assert!(
        output.status.success() && output.stdout.is_empty(),
        "{output:?}"
    );
    let read = call_input("Read", &json!({"file_path": lab.root.join("a.txt")}));
    let output = hook_in_mode(&lab.root, &lab.home, "stage", &read);
    assert!(
        output.status.success() && output.stdout.is_empty(),
        "{output:?}"
    );
    assert_eq!(lab.file(), BEFORE);
}

/// A person's decision about an earlier staged edit reaches the model with the hook's next
/// answer, once.
#[test]
fn the_next_hook_answer_tells_a_persons_decision_about_an_earlier_staged_edit() {
    let lab = Lab::new();
    let path = lab.root.join("a.txt");
    let first = json!({"file_path": path, "old_string": "two", "new_string": "TWO"});
    let output = hook_in_mode(&lab.root, &lab.home, "stage", &call_input("Edit", &first));
    assert!(
        told(&output).contains("pending-action:edit:1"),
        "{output:?}"
    );
    let reason = "Keep two lowercase.";
    let discard = person(
        &lab.root,
        &lab.home,
        &[
            "discard",
            "--id",
            "pending-action:edit:1",
            "--reason",
            reason,
        ],
    );
    assert!(discard.status.success(), "{discard:?}");
    let second = json!({"file_path": path, "old_string": "three", "new_string": "THREE"});
    let output = hook_in_mode(&lab.root, &lab.home, "stage", &call_input("Edit", &second));
    let text = told(&output);
    assert_contains(&text, "A reviewer discarded pending-action:edit:1");
    assert_contains(&text, reason);
    let third = json!({"file_path": path, "old_string": "one", "new_string": "ONE"});
    let output = hook_in_mode(&lab.root, &lab.home, "stage", &call_input("Edit", &third));
    assert_lacks(&told(&output), reason);
    assert_eq!(lab.file(), BEFORE);
}

/// `--user` writes the user's files, keeping what Claude Code keeps there, and enables the
/// server without a project list.
#[test]
fn setup_for_the_user_merges_into_the_users_files() {
    let lab = Lab::new();
    let state = lab.home.join(".claude.json");
    std::fs::write(
        &state,
        r#"{"projects": {"/p": {"hasTrustDialogAccepted": true}}}"#,
    )
    .unwrap();
    let output = person(
        &lab.root,
        &lab.home,
        &["setup", "claude-code", "--user", "--approve", "auto"],
    );
    assert!(output.status.success(), "{output:?}");
    let state: Value = serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    assert_eq!(state["projects"]["/p"]["hasTrustDialogAccepted"], true);
    assert_eq!(state["mcpServers"]["resolve"]["args"], json!(["mcp"]));
    let settings: Value = serde_json::from_str(
        &std::fs::read_to_string(lab.home.join(".claude/settings.json")).unwrap(),
    )
    .unwrap();
    let command = settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap();
    assert!(
        command.ends_with("hook claude-code --approve auto"),
        "{command}"
    );
    assert!(
        settings.get("enabledMcpjsonServers").is_none(),
        "{settings}"
    );
    assert!(!lab.root.join(".claude").exists() && !lab.root.join(".mcp.json").exists());
}

fn bash_input(event: &str, call: &str, command: &str) -> String {
    json!({"session_id": "s1", "hook_event_name": event, "tool_name": "Bash",
        "tool_use_id": call, "tool_input": {"command": command}})
    .to_string()
}

/// What a shell command changed, which the guard cannot see, is recorded after it ran as an
/// applied entry of the history; the model is told, and `resolve undo` reverts every file.
#[test]
fn what_a_shell_command_changed_is_recorded_and_undone() {
    let lab = Lab::new();
    std::fs::write(lab.root.join("gone.txt"), "bye\n").unwrap();
    let pre = hook(
        &lab.root,
        &lab.home,
        &bash_input("PreToolUse", "toolu_1", "sh tidy.sh"),
    );
    assert!(pre.status.success() && pre.stdout.is_empty(), "{pre:?}");
    // The command runs: it changes a.txt, creates new.txt and removes gone.txt.
    std::fs::write(lab.root.join("a.txt"), "one\nTWO\nthree\n").unwrap();
    std::fs::write(lab.root.join("new.txt"), "new\n").unwrap();
    std::fs::remove_file(lab.root.join("gone.txt")).unwrap();
    let post = hook(
        &lab.root,
        &lab.home,
        &bash_input("PostToolUse", "toolu_1", "sh tidy.sh"),
    );
    assert!(post.status.success(), "{post:?}");
    let answer: Value = serde_json::from_slice(&post.stdout).unwrap();
    let told = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert_eq!(answer["hookSpecificOutput"]["hookEventName"], "PostToolUse");
    for part in [
        "a.txt (changed)",
        "gone.txt (removed)",
        "new.txt (created)",
        "pending-action:shell:1",
        "resolve undo pending-action:shell:1",
    ] {
        assert!(told.contains(part), "{part:?} in {told}");
    }
    let history = log(&lab);
    assert_eq!(history[0]["id"], "pending-action:shell:1", "{history:?}");
    assert_eq!(history[0]["state"], "applied");
    assert!(
        history[0]["preview"].as_str().unwrap().contains("+TWO"),
        "{history:?}"
    );
    assert!(
        history[0]["reason"]
            .as_str()
            .unwrap()
            .contains("sh tidy.sh"),
        "{history:?}"
    );
    let undo = person(&lab.root, &lab.home, &["undo", "pending-action:shell:1"]);
    assert!(undo.status.success(), "{undo:?}");
    assert_eq!(lab.file(), BEFORE);
    assert!(!lab.root.join("new.txt").exists());
    assert_eq!(
        std::fs::read_to_string(lab.root.join("gone.txt")).unwrap(),
        "bye\n"
    );
    // A command that changes nothing is not recorded; nor is one without a snapshot before it
    // (a snapshot that came with a clone is not this user's, and is ignored).
    for (call, planted) in [("toolu_2", false), ("toolu_3", true)] {
        if planted {
            std::fs::create_dir_all(lab.root.join(".resolve/shell")).unwrap();
            std::fs::write(
                lab.root.join(format!(".resolve/shell/{call}.json")),
                r#"{"version":1,"files":{"a.txt":"0000"},"mac":"00"}"#,
            )
            .unwrap();
        } else {
            hook(&lab.root, &lab.home, &bash_input("PreToolUse", call, "ls"));
        }
        let post = hook(&lab.root, &lab.home, &bash_input("PostToolUse", call, "ls"));
        assert!(post.status.success() && post.stdout.is_empty(), "{post:?}");
    }
    assert_eq!(log(&lab).len(), 1);
}
