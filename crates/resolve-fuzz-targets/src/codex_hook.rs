//! The `codex_hook` target: the JSON Codex writes on `resolve hook codex`'s stdin, and the
//! shell command (`apply_patch <<'EOF' … EOF`) a model patches through.

use std::collections::HashSet;
use std::fmt;

use resolve_edit::{HookInputError, parse_codex_pre_tool_use};
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
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
                    || repeats_a_key(&json),
                "a well-formed input was refused as malformed: {error}"
            );
        }
        Err(other) => panic!("refused with {other:?}"),
    }
}

/// Whether an object in the JSON text `json` names a key twice. serde_json's `Value` keeps the
/// last value of such a key, while the hook's parser may stop at the first (`null` where a
/// string belongs), so the two need not agree on such input.
fn repeats_a_key(json: &str) -> bool {
    serde_json::from_str::<RepeatedKey>(json).is_ok_and(|found| found.0)
}

/// A JSON value, read only to find out whether one of its objects repeats a key.
struct RepeatedKey(bool);

impl<'de> Deserialize<'de> for RepeatedKey {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(RepeatedKeyVisitor)
    }
}

struct RepeatedKeyVisitor;

impl<'de> Visitor<'de> for RepeatedKeyVisitor {
    type Value = RepeatedKey;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<RepeatedKey, E> {
        Ok(RepeatedKey(false))
    }

    fn visit_i64<E>(self, _: i64) -> Result<RepeatedKey, E> {
        Ok(RepeatedKey(false))
    }

    fn visit_u64<E>(self, _: u64) -> Result<RepeatedKey, E> {
        Ok(RepeatedKey(false))
    }

    fn visit_f64<E>(self, _: f64) -> Result<RepeatedKey, E> {
        Ok(RepeatedKey(false))
    }

    fn visit_str<E>(self, _: &str) -> Result<RepeatedKey, E> {
        Ok(RepeatedKey(false))
    }

    fn visit_unit<E>(self) -> Result<RepeatedKey, E> {
        Ok(RepeatedKey(false))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RepeatedKey, A::Error> {
        let mut repeated = false;
        while let Some(RepeatedKey(inner)) = seq.next_element()? {
            repeated |= inner;
        }
        Ok(RepeatedKey(repeated))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RepeatedKey, A::Error> {
        let mut keys = HashSet::new();
        let mut repeated = false;
        while let Some(key) = map.next_key::<String>()? {
            repeated |= !keys.insert(key);
            let RepeatedKey(inner) = map.next_value()?;
            repeated |= inner;
        }
        Ok(RepeatedKey(repeated))
    }
}
