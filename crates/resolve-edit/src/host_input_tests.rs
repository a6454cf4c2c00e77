//! Tests of the hook-input parsers: Claude Code's hook JSON and file edits, Codex's
//! `apply_patch` call.

use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;

const PATCH: &str = "*** Begin Patch\n*** Add File: b.txt\n+b\n*** End Patch\n";

fn codex(event: &str, tool: &str, tool_input: &Value) -> String {
    json!({"session_id": "019a-session", "turn_id": "t1", "transcript_path": null,
        "cwd": "/work/project", "hook_event_name": event, "model": "gpt-5",
        "permission_mode": "bypassPermissions", "tool_name": tool,
        "tool_input": tool_input, "tool_use_id": "call_patch"})
    .to_string()
}

#[test]
fn an_apply_patch_input_gives_the_session_the_cwd_and_the_patch() {
    let expected = Some(CodexPatchCall {
        session_id: "019a-session".to_owned(),
        cwd: PathBuf::from("/work/project"),
        tool_use_id: "call_patch".to_owned(),
        request: ApplyPatchRequest {
            input: PATCH.to_owned(),
        },
    });
    let tool = codex("PreToolUse", "apply_patch", &json!({"command": PATCH}));
    assert_eq!(parse_codex_pre_tool_use(&tool), Ok(expected.clone()));
    for command in [
        format!("apply_patch <<'EOF'\n{PATCH}EOF\n"),
        format!("apply_patch <<\"PATCH\"\n{PATCH}PATCH"),
        format!("applypatch <<EOF\n{PATCH}EOF\n"),
    ] {
        let shell = codex("PreToolUse", "Bash", &json!({"command": command}));
        assert_eq!(
            parse_codex_pre_tool_use(&shell),
            Ok(expected.clone()),
            "{command}"
        );
    }
}

#[test]
fn other_shell_commands_are_none_of_the_hooks_business() {
    for command in [
        "ls -la",
        "cat <<'EOF' > a.txt\nx\nEOF\n",
        "apply_patch <<'EOF'\n*** Begin Patch\n",
    ] {
        let shell = codex("PreToolUse", "Bash", &json!({"command": command}));
        assert_eq!(parse_codex_pre_tool_use(&shell), Ok(None), "{command}");
    }
}

#[test]
fn other_events_tools_and_shapes_are_refused_with_what_they_are() {
    assert_eq!(
        parse_codex_pre_tool_use(&codex(
            "PostToolUse",
            "apply_patch",
            &json!({"command": PATCH})
        )),
        Err(HookInputError::CodexWrongEvent("PostToolUse".to_owned()))
    );
    assert_eq!(
        parse_codex_pre_tool_use(&codex("PreToolUse", "Write", &json!({"command": "x"}))),
        Err(HookInputError::CodexWrongTool("Write".to_owned()))
    );
    assert!(matches!(
        parse_codex_pre_tool_use(&codex("PreToolUse", "apply_patch", &json!({"input": PATCH}))),
        Err(HookInputError::CodexMalformed(message)) if message.contains("tool_input.command")
    ));
    assert!(matches!(
        parse_codex_pre_tool_use("not json"),
        Err(HookInputError::CodexMalformed(_))
    ));
}

fn claude(tool: &str, tool_input: &Value) -> String {
    json!({"session_id": "s1", "hook_event_name": "PreToolUse", "tool_name": tool,
        "tool_input": tool_input, "cwd": "/work/project", "tool_use_id": "toolu_1"})
    .to_string()
}

#[test]
fn a_claude_edit_reads_as_a_typed_edit_of_its_session() {
    let input = claude(
        "Edit",
        &json!({"file_path": "a.txt", "old_string": "a", "new_string": "b"}),
    );
    let hook = ClaudeHookInput::parse(&input).unwrap();
    assert_eq!(
        (hook.session_id.as_str(), hook.call_id()),
        ("s1", Some("toolu_1"))
    );
    assert_eq!(
        hook.file_edit(),
        Ok(ClaudeFileEdit::Edit(ClaudeEdit {
            file_path: "a.txt".to_owned(),
            old_string: "a".to_owned(),
            new_string: "b".to_owned(),
            replace_all: false,
        }))
    );
}

#[test]
fn a_claude_tool_event_without_a_usable_session_or_shape_is_refused_naming_it() {
    for session in ["", "s 1"] {
        let input = json!({"session_id": session, "hook_event_name": "PreToolUse",
            "tool_name": "Edit"})
        .to_string();
        assert_eq!(
            ClaudeHookInput::parse(&input),
            Err(HookInputError::NoSession)
        );
    }
    let hook = ClaudeHookInput::parse(&claude("Write", &json!({"file_path": "a.txt"}))).unwrap();
    let error = hook.file_edit().unwrap_err().to_string();
    assert!(
        error.contains("not the shape Claude Code sends") && error.contains("content"),
        "{error}"
    );
    let hook = ClaudeHookInput::parse(&claude("Read", &json!({}))).unwrap();
    assert_eq!(
        hook.file_edit(),
        Err(HookInputError::NotAFileEdit("Read".to_owned()))
    );
}

#[test]
fn multi_edits_apply_in_order_and_name_the_edit_that_does_not_match() {
    let edit = |old: &str, new: &str, all: bool| ClaudeOneEdit {
        old_string: old.to_owned(),
        new_string: new.to_owned(),
        replace_all: all,
    };
    let multi = |edits| ClaudeMultiEdit {
        file_path: "a.txt".to_owned(),
        edits,
    };
    assert_eq!(
        multi(vec![edit("a", "b", false), edit("b", "c", true)]).apply_to("a b\n"),
        Ok("c c\n".to_owned())
    );
    assert_eq!(
        multi(vec![edit("", "new\n", false)]).apply_to(""),
        Ok("new\n".to_owned())
    );
    assert_eq!(
        multi(vec![edit("a", "b", false), edit("x", "y", false)]).apply_to("a"),
        Err(HookInputError::MultiEditNotFound { number: 2 })
    );
    assert_eq!(
        multi(vec![edit("a", "b", false)]).apply_to("a a"),
        Err(HookInputError::MultiEditAmbiguous {
            number: 1,
            count: 2
        })
    );
}

#[test]
fn notebook_edits_replace_insert_and_delete_cells_and_refuse_what_is_not_a_notebook() {
    let notebook = json!({"cells": [
        {"id": "c1", "cell_type": "code", "source": "print(1)", "outputs": [1], "execution_count": 3},
    ]})
    .to_string();
    let edit = |cell: Option<&str>, mode: Option<&str>| ClaudeNotebookEdit {
        notebook_path: "n.ipynb".to_owned(),
        cell_id: cell.map(str::to_owned),
        new_source: "x".to_owned(),
        cell_type: None,
        edit_mode: mode.map(str::to_owned),
    };
    let replaced: Value =
        serde_json::from_str(&edit(Some("c1"), None).apply_to(&notebook).unwrap()).unwrap();
    assert_eq!(replaced["cells"][0]["source"], "x");
    assert_eq!(replaced["cells"][0]["outputs"], json!([]));
    let inserted: Value = serde_json::from_str(
        &edit(Some("cell-0"), Some("insert"))
            .apply_to(&notebook)
            .unwrap(),
    )
    .unwrap();
    assert_eq!(inserted["cells"][1]["source"], "x");
    let deleted: Value = serde_json::from_str(
        &edit(Some("c1"), Some("delete"))
            .apply_to(&notebook)
            .unwrap(),
    )
    .unwrap();
    assert_eq!(deleted["cells"], json!([]));
    assert_eq!(
        edit(Some("c9"), None).apply_to(&notebook),
        Err(HookInputError::NotebookNoCell("c9".to_owned()))
    );
    assert_eq!(
        edit(None, Some("delete")).apply_to(&notebook),
        Err(HookInputError::NotebookNeedsCell("delete".to_owned()))
    );
    for not_a_notebook in ["[1]", "3", "{\"cells\": 1}"] {
        assert_eq!(
            edit(Some("cell-0"), None).apply_to(not_a_notebook),
            Err(HookInputError::NotebookNoCells),
            "{not_a_notebook}"
        );
    }
    assert!(matches!(
        edit(Some("cell-0"), None).apply_to("{\"cells\": [1]}"),
        Err(HookInputError::NotebookMalformed(message)) if message.contains("cell 0")
    ));
}
