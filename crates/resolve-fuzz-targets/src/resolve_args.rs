//! The `resolve_args` target: raw JSON as the arguments of `resolve` and of every file tool.

use resolve_core::{Error, ResolveAction, ResolveArgs, resolve_tool_spec};
use resolve_edit::file_tool_specs;
use serde_json::Value;

/// Parse `data` as JSON and check it as `resolve` arguments and against every tool's schema.
///
/// Input: any bytes; those that are not JSON are ignored.
///
/// Invariants: no panic; accepted `resolve` arguments are exactly an object with `action`
/// `apply`/`discard`, a string `reason`, an optional object `extra` and nothing else, and they
/// round-trip through [`ResolveArgs::to_value`]; a refusal is an invalid-arguments error whose
/// text names the tool.
pub fn resolve_args(data: &[u8]) {
    let Ok(value) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    match ResolveArgs::from_value(&value) {
        Ok(args) => {
            let object = value.as_object().expect("accepted arguments are an object");
            assert!(
                object
                    .keys()
                    .all(|key| matches!(key.as_str(), "action" | "reason" | "extra")),
                "an unknown key was accepted: {value}"
            );
            let action = match object.get("action").and_then(Value::as_str) {
                Some("apply") => ResolveAction::Apply,
                Some("discard") => ResolveAction::Discard,
                other => panic!("action {other:?} was accepted"),
            };
            assert_eq!(args.action, action);
            assert_eq!(
                Some(args.reason.as_str()),
                object.get("reason").and_then(Value::as_str)
            );
            assert_eq!(
                args.extra.as_ref(),
                object.get("extra").and_then(Value::as_object)
            );
            assert_eq!(
                args.to_value(),
                value,
                "accepted arguments do not round-trip"
            );
            let again = ResolveArgs::from_value(&args.to_value()).expect("a round trip parses");
            assert_eq!(again, args);
        }
        Err(error) => {
            assert!(
                matches!(error, Error::InvalidArguments { .. }),
                "a refusal of another kind: {error:?}"
            );
            assert!(error.to_string().contains("resolve"), "{error}");
        }
    }
    for spec in file_tool_specs().iter().chain([resolve_tool_spec()]) {
        if let Err(error) = spec.validate(&value) {
            assert!(error.to_string().contains(&spec.name), "{error}");
        }
    }
}
