//! The `resolve` tool: its schema and description, argument parsing, and
//! [`run_resolve_invocation`], which runs a pending action's callback and shapes the result
//! ([`ResolveCallDetails`]), and what a result came to ([`ResolveFacts::from_result`]).

use std::sync::{Arc, LazyLock};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::facts::{AppliedFacts, DecidedBy, Facts, ResolveFacts, ResolveOutcome};
use crate::pending::{BoxFuture, Extra, PendingAction};
use crate::{ActionError, Error, RESOLVE_TOOL_NAME, ToolKind, ToolResult, ToolSpec};

/// What `resolve` does with the pending action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ResolveAction {
    /// Make the change land.
    Apply,
    /// Drop the change.
    Discard,
}

impl ResolveAction {
    /// `apply` or `discard`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Apply => "apply",
            Self::Discard => "discard",
        }
    }
}

/// Checked arguments of a `resolve` call.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolveArgs {
    /// Apply or discard.
    pub action: ResolveAction,
    /// Why; passed through verbatim (may be empty).
    pub reason: String,
    /// Free-form metadata passed through to the callbacks untouched.
    pub extra: Option<Extra>,
}

impl ResolveArgs {
    /// Arguments for `action` with `reason` and no `extra`.
    pub fn new(action: ResolveAction, reason: impl Into<String>) -> Self {
        Self {
            action,
            reason: reason.into(),
            extra: None,
        }
    }

    /// These arguments with `extra`.
    #[must_use]
    pub fn with_extra(mut self, extra: Extra) -> Self {
        self.extra = Some(extra);
        self
    }

    /// Parse and validate raw tool arguments against the schema.
    pub fn from_value(value: &Value) -> Result<Self, Error> {
        resolve_tool_spec().validate(value)?;
        let action = match value.get("action").and_then(Value::as_str) {
            Some("apply") => ResolveAction::Apply,
            _ => ResolveAction::Discard,
        };
        let reason = value
            .get("reason")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let extra = value.get("extra").and_then(Value::as_object).cloned();
        Ok(Self {
            action,
            reason,
            extra,
        })
    }

    /// The arguments as JSON.
    pub fn to_value(&self) -> Value {
        let mut map = Map::new();
        map.insert("action".into(), self.action.as_str().into());
        map.insert("reason".into(), self.reason.clone().into());
        if let Some(extra) = &self.extra {
            map.insert("extra".into(), Value::Object(extra.clone()));
        }
        Value::Object(map)
    }
}

/// The details every `resolve` result starts from: the call's arguments, the action's tool
/// and label, and the details of the action's own result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResolveCallDetails {
    /// Apply or discard.
    pub action: ResolveAction,
    /// The reason given.
    pub reason: String,
    /// The call's free-form metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<Extra>,
    /// The tool that staged the action.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_tool_name: Option<String>,
    /// The action's label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The details of the apply's or discard's own result (for a file apply,
    /// [`AppliedFacts`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_result_details: Option<Value>,
}

impl Facts for ResolveCallDetails {}

impl ResolveFacts {
    /// What a successful `resolve` result of a session came to, read from its details
    /// ([`ResolveCallDetails`], with [`AppliedFacts`] when an apply landed), as decided by
    /// `decided_by`: a discard without a label had nothing pending, so nobody decided.
    pub fn from_result(result: &ToolResult, decided_by: DecidedBy) -> Self {
        let call = ResolveCallDetails::from_details(result.details.as_ref());
        let applied = call
            .as_ref()
            .and_then(|call| AppliedFacts::from_details(call.source_result_details.as_ref()));
        let (action, reason, label) = match call {
            Some(call) => (Some(call.action), Some(call.reason), call.label),
            None => (None, None, None),
        };
        let outcome = match (action, &label) {
            (Some(ResolveAction::Apply), _) => ResolveOutcome::Applied,
            (Some(ResolveAction::Discard) | None, Some(_)) => ResolveOutcome::Discarded,
            (Some(ResolveAction::Discard) | None, None) => ResolveOutcome::NothingPending,
        };
        let mut facts = Self::new(outcome, None, label);
        facts.decided_by = (outcome != ResolveOutcome::NothingPending).then_some(decided_by);
        facts.reason = reason;
        if let Some(applied) = applied {
            facts.pending_id = Some(applied.pending_id);
            facts.applied_files = applied.applied_files;
            facts.dropped_files = applied.dropped_files;
            facts.dropped_hunks = applied.dropped_hunks;
            facts.rebased_files = applied.rebased_files;
            facts.commit = applied.commit;
            facts.not_committed = applied.not_committed;
        }
        facts
    }
}

/// A handler `resolve` can dispatch to: an in-flight directive's invoker or a standing handler.
pub type ResolveHandler =
    Arc<dyn Fn(ResolveArgs) -> BoxFuture<Result<ToolResult, Error>> + Send + Sync>;

/// Text of a successful discard when nothing is pending.
pub const NOTHING_TO_DISCARD: &str = "Nothing to discard; no pending action remains.";

/// The model-facing description of `resolve`.
pub const RESOLVE_DESCRIPTION: &str = "\
Finish a pending action by applying it or throwing it away. Only valid while something is pending (a staged preview such as an `ast_edit`, `edit`, `write` or `apply_patch`, or an approval gate); apply fails when nothing is pending.
- `action` (required): \"apply\" makes the change land / submits it; \"discard\" drops it.
- `reason` (required): one short sentence saying why.
- `extra` (optional): free-form metadata. For a plan-approval gate, give `extra.title` (a kebab-case or PascalCase slug naming the approved plan file). Previews ignore it, except `{\"only\": [paths]}` to apply just those files of a multi-file preview.";

static RESOLVE_SPEC: LazyLock<ToolSpec> = LazyLock::new(|| ToolSpec {
    name: RESOLVE_TOOL_NAME.to_owned(),
    description: RESOLVE_DESCRIPTION.to_owned(),
    input_schema: json!({
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["apply", "discard"], "description": "apply makes the pending change land; discard drops it"},
            "reason": {"type": "string", "description": "one short sentence explaining why"},
            "extra": {"type": "object", "description": "free-form metadata"}
        },
        "required": ["action", "reason"],
        "additionalProperties": false
    }),
    hidden: true,
    strict: true,
    kind: ToolKind::Resolve,
});

/// The `resolve` tool's spec: name, description, exact schema, `hidden` and `strict`.
pub fn resolve_tool_spec() -> &'static ToolSpec {
    &RESOLVE_SPEC
}

/// The details every resolve result carries: `{action, reason, extra?, sourceToolName?, label?}`
/// ([`ResolveCallDetails`]).
pub fn base_details(
    args: &ResolveArgs,
    source_tool: Option<&str>,
    label: Option<&str>,
) -> Map<String, Value> {
    call_details(args, source_tool, label).to_details()
}

fn call_details(
    args: &ResolveArgs,
    source_tool: Option<&str>,
    label: Option<&str>,
) -> ResolveCallDetails {
    ResolveCallDetails {
        action: args.action,
        reason: args.reason.clone(),
        extra: args.extra.clone(),
        source_tool_name: source_tool.map(str::to_owned),
        label: label.map(str::to_owned),
        source_result_details: None,
    }
}

/// Run `action`'s apply or reject callback for `args` and shape the result.
///
/// - apply: a tool error passes unchanged; any other error becomes `Apply failed: <message>`;
/// - discard: a reject error passes unwrapped; no reject callback, or one returning `None`,
///   gives `Discarded: <label>. Reason: <reason>`;
/// - the result's details become the base details plus `sourceResultDetails` when the
///   callback's own details are present and not null.
pub async fn run_resolve_invocation(
    args: &ResolveArgs,
    action: &PendingAction,
) -> Result<ToolResult, Error> {
    let base = call_details(args, Some(&action.source_tool), Some(&action.label));
    let returned = match args.action {
        ResolveAction::Apply => match (action.apply)(args.reason.clone(), args.extra.clone()).await
        {
            Ok(result) => Some(result),
            Err(ActionError::Tool(message)) => return Err(Error::Tool(message)),
            Err(ActionError::Failed(message)) => return Err(Error::ApplyFailed(message)),
        },
        ResolveAction::Discard => match &action.reject {
            Some(reject) => reject(args.reason.clone(), args.extra.clone())
                .await
                .map_err(|e| Error::Tool(e.to_string()))?,
            None => None,
        },
    };
    Ok(match returned {
        Some(result) => with_resolve_details(result, base),
        None => ToolResult::text(format!(
            "Discarded: {}. Reason: {}",
            action.label, args.reason
        ))
        .with_details(Value::Object(base.to_details())),
    })
}

fn with_resolve_details(mut result: ToolResult, mut base: ResolveCallDetails) -> ToolResult {
    base.source_result_details = result.details.take().filter(|details| !details.is_null());
    result.details = Some(Value::Object(base.to_details()));
    result
}
