//! The `claude_hook` target: the JSON Claude Code writes on `resolve hook claude-code`'s
//! stdin, and the file text its `MultiEdit` and `NotebookEdit` calls are applied to.

use resolve_edit::{ClaudeFileEdit, ClaudeHookInput, HookInputError};
use serde_json::Value;

/// Parse the input as Claude Code's hook JSON, type its file edit, and apply a `MultiEdit` or
/// `NotebookEdit` to the given file text.
///
/// Input: text (bytes that are not UTF-8 are replaced): the hook JSON, optionally followed by
/// `\n=====\n` and the current text of the file it edits.
///
/// Invariants: no panic; an accepted input names a usable session when it is a tool event,
/// and prints as JSON that parses back to the same input; a refused input's error says what
/// was wrong (not Claude Code's JSON, no usable session, the tool's shape naming the tool);
/// a typed edit prints and parses back to itself; a `MultiEdit` that fails names one of its
/// edits, and one that succeeds with a single unique match is that replacement; a
/// `NotebookEdit` gives a notebook whose cells grew, shrank or stayed as its mode says, with
/// the new source in place.
pub fn claude_hook(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let (json, current) = match text.split_once("\n=====\n") {
        Some((json, current)) => (json, Some(current)),
        None => (text.as_ref(), None),
    };
    let hook = match ClaudeHookInput::parse(json) {
        Ok(hook) => hook,
        Err(error @ HookInputError::ClaudeMalformed(_)) => {
            assert!(
                serde_json::from_str::<ClaudeHookInput>(json).is_err(),
                "{error}"
            );
            assert!(error.to_string().contains("not Claude Code's hook JSON"));
            return;
        }
        Err(HookInputError::NoSession) => {
            let hook: ClaudeHookInput = serde_json::from_str(json).expect("it parsed as JSON");
            assert!(hook.is_tool_event());
            assert!(hook.session_id.is_empty() || hook.session_id.contains(char::is_whitespace));
            return;
        }
        Err(other) => panic!("parsing refused with {other:?}"),
    };
    if hook.is_tool_event() {
        assert!(!hook.session_id.is_empty() && !hook.session_id.contains(char::is_whitespace));
    }
    let printed = serde_json::to_string(&hook).expect("a parsed input prints");
    let again = ClaudeHookInput::parse(&printed).expect("a printed input parses");
    assert_eq!(
        (
            &again.session_id,
            &again.hook_event_name,
            &again.tool_name,
            &again.cwd,
            &again.tool_use_id
        ),
        (
            &hook.session_id,
            &hook.hook_event_name,
            &hook.tool_name,
            &hook.cwd,
            &hook.tool_use_id
        ),
    );
    assert!(same_json(&again.tool_input, &hook.tool_input), "{printed}");
    if let Some(id) = hook.call_id() {
        assert!(!id.is_empty());
    }
    let edit = match hook.file_edit() {
        Ok(edit) => edit,
        Err(HookInputError::NotAFileEdit(tool)) => {
            assert_eq!(tool, hook.tool_name);
            assert!(!matches!(
                tool.as_str(),
                "Edit" | "Write" | "MultiEdit" | "NotebookEdit"
            ));
            return;
        }
        Err(error @ HookInputError::ToolShape { .. }) => {
            assert!(error.to_string().contains(&hook.tool_name), "{error}");
            return;
        }
        Err(other) => panic!("typing the edit refused with {other:?}"),
    };
    round_trips(&edit);
    let Some(current) = current else {
        return;
    };
    match &edit {
        ClaudeFileEdit::MultiEdit(multi) => match multi.apply_to(current) {
            Ok(after) => {
                if let [one] = multi.edits.as_slice()
                    && !one.old_string.is_empty()
                    && current.matches(&one.old_string).count() == 1
                {
                    assert_eq!(after, current.replacen(&one.old_string, &one.new_string, 1));
                }
            }
            Err(
                HookInputError::MultiEditNotFound { number }
                | HookInputError::MultiEditAmbiguous { number, .. },
            ) => assert!((1..=multi.edits.len()).contains(&number)),
            Err(other) => panic!("MultiEdit refused with {other:?}"),
        },
        ClaudeFileEdit::NotebookEdit(notebook) => {
            let Ok(after) = notebook.apply_to(current) else {
                return;
            };
            let before: Value = serde_json::from_str(current).expect("it was applied");
            let after: Value = serde_json::from_str(&after).expect("a notebook edit gives JSON");
            let count = |notebook: &Value| notebook["cells"].as_array().map(Vec::len);
            let (before_cells, after_cells) = (
                count(&before).expect("it had cells"),
                count(&after).expect("it keeps cells"),
            );
            let new_source = Value::String(notebook.new_source.clone());
            match notebook.edit_mode.as_deref().unwrap_or("replace") {
                "insert" => {
                    assert_eq!(after_cells, before_cells + 1);
                    let cells = after["cells"].as_array().expect("cells");
                    assert!(cells.iter().any(|cell| cell["source"] == new_source));
                }
                "delete" => assert_eq!(after_cells + 1, before_cells),
                _ => {
                    assert_eq!(after_cells, before_cells);
                    let cells = after["cells"].as_array().expect("cells");
                    assert!(cells.iter().any(|cell| cell["source"] == new_source));
                }
            }
        }
        ClaudeFileEdit::Edit(_) | ClaudeFileEdit::Write(_) => {}
    }
}

/// A typed edit prints as the JSON Claude Code sends and parses back to itself.
fn round_trips(edit: &ClaudeFileEdit) {
    let (tool, input) = match edit {
        ClaudeFileEdit::Edit(input) => ("Edit", serde_json::to_value(input)),
        ClaudeFileEdit::Write(input) => ("Write", serde_json::to_value(input)),
        ClaudeFileEdit::MultiEdit(input) => ("MultiEdit", serde_json::to_value(input)),
        ClaudeFileEdit::NotebookEdit(input) => ("NotebookEdit", serde_json::to_value(input)),
    };
    let hook = ClaudeHookInput {
        session_id: "s".to_owned(),
        hook_event_name: "PreToolUse".to_owned(),
        tool_name: tool.to_owned(),
        tool_input: input.expect("a typed edit prints"),
        cwd: None,
        tool_use_id: None,
    };
    assert_eq!(hook.file_edit().as_ref(), Ok(edit));
}

/// Whether two JSON values are the same, numbers compared as `serde_json` reads them back
/// (a float may move by its last bit through print and parse).
fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            x == y
                || match (x.as_f64(), y.as_f64()) {
                    (Some(x), Some(y)) => {
                        (x - y).abs() <= f64::EPSILON * x.abs().max(y.abs()) * 4.0
                    }
                    _ => false,
                }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_json(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(key, x)| y.get(key).is_some_and(|y| same_json(x, y)))
        }
        _ => a == b,
    }
}
