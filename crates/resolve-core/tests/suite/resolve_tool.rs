//! The `resolve` tool: schema, argument checks, dispatch outcomes and `run_resolve_invocation`.

use std::sync::atomic::Ordering;

use pretty_assertions::assert_eq;
use resolve_core::schema::SchemaViolation;
use resolve_core::{
    ActionError, Error, NOTHING_TO_DISCARD, PendingAction, ResolveAction, ResolveArgs,
    ResolveSession, ToolResult, resolve_tool_spec, run_resolve_invocation,
};
use serde_json::{Value, json};

use super::common::{
    CallbackCall, Log, apply, counting_edit, discard, extra, recording_action, refused, resolved,
    session, token,
};

const AST_LABEL: &str = "AST Edit: 2 replacements in 1 file";

fn without_descriptions(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(key, _)| key.as_str() != "description")
                .map(|(key, value)| (key.clone(), without_descriptions(value)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_descriptions).collect()),
        other => other.clone(),
    }
}

/// A pending action recording both callbacks; reject returns `reject_result`.
fn two_way_action(
    reject_result: Option<ToolResult>,
) -> (PendingAction, Log<CallbackCall>, Log<CallbackCall>) {
    let (action, applies) =
        recording_action(AST_LABEL, "ast_edit", "Applied 1 replacement in 1 file.");
    let rejects = Log::default();
    let log = rejects.clone();
    let action = action.with_reject(move |reason, extra| {
        log.push(CallbackCall { reason, extra });
        let result = reject_result.clone();
        async move { Ok(result) }
    });
    (action, applies, rejects)
}

/// A session with [`two_way_action`] queued (its reject returning `reject_result`), after a
/// `resolve` call with `args`: the session, the call's result, and the apply and reject logs.
async fn resolve_two_way(
    reject_result: Option<ToolResult>,
    args: &Value,
) -> (
    ResolveSession,
    ToolResult,
    Log<CallbackCall>,
    Log<CallbackCall>,
) {
    let session = session();
    let (action, applies, rejects) = two_way_action(reject_result);
    session.queue_resolve_handler(action).unwrap();
    let result = resolved(&session, args).await;
    (session, result, applies, rejects)
}

fn failing_apply(error: ActionError) -> PendingAction {
    PendingAction::new("Edit: a.rs", "edit", move |_, _| {
        let error = error.clone();
        async move { Err(error) }
    })
}

#[test]
fn schema_requires_exactly_action_and_reason() {
    assert_eq!(
        resolve_tool_spec().input_schema["required"],
        json!(["action", "reason"])
    );
}

#[test]
fn schema_is_exactly_the_documented_one_apart_from_descriptions() {
    let spec = resolve_tool_spec();
    assert_eq!(
        without_descriptions(&spec.input_schema),
        json!({"type":"object","properties":{"action":{"type":"string","enum":["apply","discard"]},"reason":{"type":"string"},"extra":{"type":"object"}},"required":["action","reason"],"additionalProperties":false})
    );
    assert_eq!(spec.name, "resolve");
    assert!(spec.hidden, "resolve is hidden from user-facing tool lists");
    assert!(spec.strict);
    let text = spec.input_schema.to_string();
    assert!(
        !text.contains("$ref") && !text.contains("$schema"),
        "{text}"
    );
}

#[tokio::test]
async fn apply_with_nothing_pending_fails_and_leaves_no_gate() {
    let session = session();
    let outcome = session.execute_resolve(&apply("Ship it."), &token()).await;
    let error = outcome.unwrap_err();
    assert_eq!(error, Error::NothingToApply);
    assert_eq!(
        error.to_string(),
        "No pending action to resolve. Nothing to apply or discard."
    );
    assert!(session.next_tool_choice_directive(|_| true).is_none());
}

#[tokio::test]
async fn discard_with_nothing_pending_succeeds_with_bare_details() {
    let session = session();
    let result = resolved(&session, &discard("Abandoning the staged edit.")).await;
    assert!(!result.is_error);
    assert_eq!(result.text, NOTHING_TO_DISCARD);
    assert_eq!(
        result.text,
        "Nothing to discard; no pending action remains."
    );
    assert_eq!(
        result.details,
        Some(json!({"action": "discard", "reason": "Abandoning the staged edit."}))
    );
}

#[tokio::test]
async fn discard_passes_the_reason_to_reject_and_its_text_through() {
    let (session, result, applies, rejects) = resolve_two_way(
        Some(ToolResult::text("Rejected pending preview.")),
        &discard("Wrong pattern."),
    )
    .await;
    assert_eq!(result.text, "Rejected pending preview.");
    assert_eq!(
        rejects.all(),
        vec![CallbackCall {
            reason: "Wrong pattern.".to_owned(),
            extra: None
        }]
    );
    assert_eq!(applies.len(), 0);
    assert_eq!(
        result.details,
        Some(json!({
            "action": "discard",
            "reason": "Wrong pattern.",
            "sourceToolName": "ast_edit",
            "label": AST_LABEL
        }))
    );
    assert!(!session.queue().pending().has_pending());
}

#[tokio::test]
async fn apply_passes_the_reason_to_apply_and_its_text_through() {
    let (_session, result, applies, rejects) =
        resolve_two_way(None, &apply("Rename is safe.")).await;
    assert_eq!(result.text, "Applied 1 replacement in 1 file.");
    assert!(!result.is_error);
    assert_eq!(
        applies.all(),
        vec![CallbackCall {
            reason: "Rename is safe.".to_owned(),
            extra: None
        }]
    );
    assert_eq!(rejects.len(), 0);
    assert_eq!(
        result.details,
        Some(json!({
            "action": "apply",
            "reason": "Rename is safe.",
            "sourceToolName": "ast_edit",
            "label": AST_LABEL
        }))
    );
}

#[tokio::test]
async fn reject_returning_none_gives_the_default_discard_text() {
    let (_session, result, _, rejects) = resolve_two_way(None, &discard("Not needed.")).await;
    assert_eq!(rejects.len(), 1, "reject still ran");
    assert_eq!(
        result.text,
        "Discarded: AST Edit: 2 replacements in 1 file. Reason: Not needed."
    );
    assert_eq!(
        result.details,
        Some(json!({
            "action": "discard",
            "reason": "Not needed.",
            "sourceToolName": "ast_edit",
            "label": AST_LABEL
        }))
    );
}

#[tokio::test]
async fn discard_without_reject_inserts_an_empty_reason_verbatim() {
    let (action, applies) = recording_action("Write: notes.md", "write", "Wrote notes.md.");
    let result = run_resolve_invocation(&ResolveArgs::new(ResolveAction::Discard, ""), &action)
        .await
        .unwrap();
    assert_eq!(result.text, "Discarded: Write: notes.md. Reason: ");
    assert_eq!(applies.len(), 0);
}

#[tokio::test]
async fn extra_reaches_both_callbacks_and_the_details_untouched() {
    let given = extra(json!({"title": "words-counter", "nested": {"n": [1, 2.5, null]}}));
    for action in [ResolveAction::Apply, ResolveAction::Discard] {
        let (pending, applies, rejects) = two_way_action(None);
        let args = ResolveArgs::new(action, "With metadata.").with_extra(given.clone());
        let result = run_resolve_invocation(&args, &pending).await.unwrap();
        let seen = match action {
            ResolveAction::Apply => applies.all(),
            ResolveAction::Discard => rejects.all(),
        };
        assert_eq!(
            seen,
            vec![CallbackCall {
                reason: "With metadata.".to_owned(),
                extra: Some(given.clone())
            }]
        );
        assert_eq!(
            result.details.unwrap()["extra"],
            Value::Object(given.clone())
        );
    }
}

#[tokio::test]
async fn source_result_details_appear_only_for_non_null_callback_details() {
    let cases = [
        (Some(json!({"totalReplacements": 2})), true),
        (Some(Value::Null), false),
        (None, false),
    ];
    for (details, present) in cases {
        let pending = PendingAction::new(AST_LABEL, "ast_edit", move |_, _| {
            let mut result = ToolResult::text("Applied.");
            result.details = details.clone();
            async move { Ok(result) }
        });
        let result =
            run_resolve_invocation(&ResolveArgs::new(ResolveAction::Apply, "ok"), &pending)
                .await
                .unwrap();
        let got = result.details.unwrap();
        assert_eq!(got.get("sourceResultDetails").is_some(), present, "{got}");
        if present {
            assert_eq!(got["sourceResultDetails"], json!({"totalReplacements": 2}));
        }
    }
}

#[tokio::test]
async fn apply_result_flags_pass_through_and_still_consume_the_action() {
    let session = session();
    let pending = PendingAction::new(AST_LABEL, "ast_edit", |_, _| async {
        Ok(ToolResult::error("Preview is stale: a.rs changed."))
    });
    session.queue_resolve_handler(pending).unwrap();
    let result = resolved(&session, &apply("Go.")).await;
    assert!(result.is_error);
    assert_eq!(result.text, "Preview is stale: a.rs changed.");
    assert!(!session.queue().pending().has_pending());
}

/// The error of applying an action whose apply fails with `error`.
async fn apply_error(error: ActionError) -> Error {
    run_resolve_invocation(
        &ResolveArgs::new(ResolveAction::Apply, "Go."),
        &failing_apply(error),
    )
    .await
    .unwrap_err()
}

#[tokio::test]
async fn non_tool_apply_errors_are_wrapped_as_apply_failed() {
    let error = apply_error(ActionError::Failed("disk full".to_owned())).await;
    assert_eq!(error, Error::ApplyFailed("disk full".to_owned()));
    assert_eq!(error.to_string(), "Apply failed: disk full");
}

#[tokio::test]
async fn tool_errors_from_apply_pass_unchanged() {
    let error = apply_error(ActionError::Tool("Preview is stale: a.rs".to_owned())).await;
    assert_eq!(error.to_string(), "Preview is stale: a.rs");
}

#[tokio::test]
async fn reject_errors_are_not_wrapped_and_keep_the_action_pending() {
    for error in [
        ActionError::Failed("cleanup crashed".to_owned()),
        ActionError::Tool("cleanup refused".to_owned()),
    ] {
        let session = session();
        let expected = error.to_string();
        let pending = recording_action("Edit: a.rs", "edit", "ok")
            .0
            .with_reject(move |_, _| {
                let error = error.clone();
                async move { Err(error) }
            });
        let id = session.queue_resolve_handler(pending).unwrap();
        let outcome = refused(&session, &discard("No.")).await;
        assert_eq!(outcome.to_string(), expected);
        assert!(!outcome.to_string().starts_with("Apply failed"));
        assert!(session.queue().pending().contains(&id));
    }
}

/// Runs `args` against a session with one pending action; returns the error and apply count.
async fn invalid_call(args: Value) -> (Error, usize, bool) {
    let session = session();
    let (pending, applies) = recording_action("Edit: a.rs", "edit", "ok");
    let id = session.queue_resolve_handler(pending).unwrap();
    let error = refused(&session, &args).await;
    let still_pending = session.queue().pending().contains(&id);
    (error, applies.len(), still_pending)
}

fn field_of(error: &Error) -> &str {
    match error {
        Error::InvalidArguments { tool, violation } => {
            assert_eq!(tool, "resolve");
            &violation.path
        }
        other => panic!("expected InvalidArguments, got {other:?}"),
    }
}

#[tokio::test]
async fn wrong_action_is_rejected_naming_action_and_nothing_is_consumed() {
    let (error, applies, pending) = invalid_call(json!({"action": "foo", "reason": "x"})).await;
    assert_eq!(field_of(&error), "action");
    assert_eq!(
        error.to_string(),
        "Invalid arguments for `resolve`: `action` must be \"apply\" or \"discard\" (was \"foo\")"
    );
    assert_eq!((applies, pending), (0, true));
}

#[tokio::test]
async fn missing_reason_is_rejected_naming_reason_and_nothing_is_consumed() {
    let (error, applies, pending) = invalid_call(json!({"action": "apply"})).await;
    assert_eq!(field_of(&error), "reason");
    assert!(
        error.to_string().contains("`reason` is required"),
        "{error}"
    );
    assert_eq!((applies, pending), (0, true));
}

#[tokio::test]
async fn non_object_extra_is_rejected_naming_extra_and_nothing_is_consumed() {
    let (error, applies, pending) =
        invalid_call(json!({"action": "apply", "reason": "x", "extra": ["only", "a.rs"]})).await;
    assert_eq!(
        error,
        Error::InvalidArguments {
            tool: "resolve".to_owned(),
            violation: SchemaViolation {
                path: "extra".to_owned(),
                problem: "must be an object (was array)".to_owned()
            }
        }
    );
    assert_eq!((applies, pending), (0, true));
}

#[tokio::test]
async fn unknown_key_is_rejected_naming_the_key_and_nothing_is_consumed() {
    let (error, applies, pending) =
        invalid_call(json!({"action": "apply", "reason": "x", "force": true})).await;
    assert_eq!(field_of(&error), "force");
    assert!(error.to_string().contains("`force`"), "{error}");
    assert_eq!((applies, pending), (0, true));
}

#[tokio::test]
async fn empty_reason_is_accepted_verbatim() {
    let session = session();
    let (action, calls) =
        counting_edit(|reason| async move { Ok(ToolResult::text(format!("reason=[{reason}]"))) });
    session.queue_resolve_handler(action).unwrap();
    let result = resolved(&session, &apply("")).await;
    assert_eq!(result.text, "reason=[]");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}
