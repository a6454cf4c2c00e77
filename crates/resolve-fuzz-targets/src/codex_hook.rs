//! The `codex_hook` target: the JSON Codex writes on `resolve hook codex`'s stdin, and the
//! shell command (`apply_patch <<'EOF' … EOF`) a model patches through.

use resolve_edit::{HookInputError, parse_codex_pre_tool_use};
use serde_json::{Value, json};

/// Parse the input as Codex's `PreToolUse` hook JSON; input that is not a JSON object is
/// taken as the command of a `Bash` call and wrapped in the JSON Codex sends for it.
///
/// Input: text (bytes that are not UTF-8 are replaced): the hook JSON (starting with `{`) or a
/// shell command.
///
/// Invariants: no panic; an accepted call keeps the input's session, cwd and call id, and its
/// patch is the whole command of an `apply_patch` call or the lines of a shell command's
/// here-document, which the command holds, followed by the delimiter line; only a `Bash` call
/// is let through without a patch; a refusal names the event or tool it refuses, and the
/// input is refused when its event is not `PreToolUse`.
pub fn codex_hook(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let json = if text.trim_start().starts_with('{') {
        text.into_owned()
    } else {
        json!({"session_id": "019a-session", "turn_id": "t1", "cwd": "/work/project",
            "hook_event_name": "PreToolUse", "model": "gpt-5", "tool_name": "Bash",
            "tool_input": {"command": text}, "tool_use_id": "call_1"})
        .to_string()
    };
    let parsed = parse_codex_pre_tool_use(&json);
    let Ok(input) = serde_json::from_str::<Value>(&json) else {
        assert!(
            matches!(&parsed, Err(HookInputError::CodexMalformed(_))),
            "{parsed:?}"
        );
        return;
    };
    let event = input["hook_event_name"].as_str();
    let tool = input["tool_name"].as_str();
    let command = input["tool_input"]["command"].as_str();
    match parsed {
        Ok(Some(call)) => {
            assert_eq!(event, Some("PreToolUse"));
            assert_eq!(Some(call.session_id.as_str()), input["session_id"].as_str());
            assert_eq!(call.cwd.to_str(), input["cwd"].as_str());
            assert_eq!(
                Some(call.tool_use_id.as_str()),
                input["tool_use_id"].as_str()
            );
            let command = command.expect("a call has a command");
            match tool {
                Some("apply_patch") => assert_eq!(call.request.input, command),
                Some("Bash") => {
                    let start = command.trim_start();
                    assert!(
                        start.starts_with("apply_patch") || start.starts_with("applypatch"),
                        "{command:?}"
                    );
                    let (_, body) = start.split_once('\n').expect("a here-document");
                    let rest = body
                        .strip_prefix(call.request.input.as_str())
                        .expect("the patch is the start of the here-document");
                    let delimiter = rest.split_inclusive('\n').next().unwrap_or_default();
                    assert!(
                        !delimiter.trim_end_matches(['\n', '\r']).is_empty(),
                        "the patch ends at a delimiter line: {command:?}"
                    );
                }
                other => panic!("a call of {other:?} was accepted"),
            }
        }
        Ok(None) => {
            assert_eq!((event, tool), (Some("PreToolUse"), Some("Bash")));
        }
        Err(HookInputError::CodexWrongEvent(named)) => {
            assert_eq!(event, Some(named.as_str()));
            assert_ne!(named, "PreToolUse");
        }
        Err(HookInputError::CodexWrongTool(named)) => {
            assert_eq!(event, Some("PreToolUse"));
            assert_eq!(tool, Some(named.as_str()));
            assert!(named != "Bash" && named != "apply_patch");
        }
        Err(error @ HookInputError::CodexMalformed(_)) => {
            assert!(error.to_string().contains("not Codex's PreToolUse JSON"));
            assert!(
                event != Some("PreToolUse")
                    || command.is_none()
                    || tool.is_none()
                    || input["session_id"].as_str().is_none()
                    || input["cwd"].as_str().is_none()
                    || input["tool_use_id"].as_str().is_none()
                    || input.get("tool_input").is_none()
                    || error.to_string().contains("duplicate field"),
                "a well-formed input was refused as malformed: {error}"
            );
        }
        Err(other) => panic!("refused with {other:?}"),
    }
}
