//! The facts a tool result carries for programs, as serde types: a staged preview's
//! ([`PreviewFacts`]), what an apply landed ([`AppliedFacts`]) and what a `resolve` call came
//! to ([`ResolveFacts`]). Each JSON key is spelled once, here (by the types' field names and
//! `rename_all`), and each type's JSON Schema is generated from the type ([`Facts::schema`]).
//!
//! Facts travel in a result's details ([`ToolResult::with_facts`]), so the agent's tool
//! results, an MCP result's `_meta["resolve/details"]` and the CLI's `--json` output carry the
//! same values, and a reader gets them back with [`Facts::from_details`].

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, SchemaGenerator};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::ToolResult;

/// The URI of a pending action as an MCP resource is this prefix and its id.
pub const PENDING_RESOURCE_PREFIX: &str = "resolve://pending/";

/// A set of facts a result's details carry: serialized into the details, read back from
/// them, and described by a JSON Schema generated from the type.
pub trait Facts: Serialize + DeserializeOwned + JsonSchema {
    /// The JSON Schema of these facts (draft 2020-12, every subschema inline, no `$ref`).
    fn schema() -> Value {
        let generator = SchemaGenerator::new(
            SchemaSettings::draft2020_12()
                .for_serialize()
                .with(|settings| settings.inline_subschemas = true),
        );
        generator.into_root_schema_for::<Self>().to_value()
    }

    /// These facts as the fields of a details object (an object always; these types
    /// serialize to one).
    fn to_details(&self) -> Map<String, Value> {
        match serde_json::to_value(self) {
            Ok(Value::Object(map)) => map,
            Ok(Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_))
            | Ok(Value::Array(_))
            | Err(_) => Map::new(),
        }
    }

    /// The facts `details` carry, or `None` when they carry none (or other fields by the
    /// same names).
    fn from_details(details: Option<&Value>) -> Option<Self> {
        details.and_then(|details| Self::deserialize(details).ok())
    }
}

impl ToolResult {
    /// This result with the fields of `facts` added to its details (an object), replacing
    /// fields of the same name; other fields stay.
    #[must_use]
    pub fn with_facts(mut self, facts: &impl Facts) -> Self {
        let mut details = match self.details.take() {
            Some(Value::Object(map)) => map,
            Some(Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_))
            | Some(Value::Array(_))
            | None => Map::new(),
        };
        details.extend(facts.to_details());
        self.details = Some(Value::Object(details));
        self
    }
}

/// A staged preview: the pending action, its files with their hunk addresses, and that
/// nothing was applied. The details of every producer (`ast_edit`, `edit`, `write`, `apply_patch`).
///
/// `Files` is how the files are held: a list ([`PreviewFile`]s, the default), or a value that
/// lists them as it is serialized (a large preview's, read from its change set file by file);
/// `()` for none yet ([`PreviewFacts::with_files`] adds them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PreviewFacts<Files = Vec<PreviewFile>> {
    /// The staged pending action; null when nothing was staged.
    pub pending_id: Option<String>,
    /// Its label.
    pub label: Option<String>,
    /// The pending action as an MCP resource, `resolve://pending/<id>`.
    pub resource: Option<String>,
    /// Always false: a preview writes nothing until `resolve` applies it.
    pub applied: bool,
    /// ast_edit: the paths searched, relative to the root and joined with ", " (`.` is the
    /// root); null for edit and write.
    pub scope_path: Option<String>,
    /// Every file of the change, in path order.
    pub files: Files,
    /// Lines added in all.
    pub added: usize,
    /// Lines removed in all.
    pub removed: usize,
}

impl PreviewFacts {
    /// The facts of the staged action `pending_id` labelled `label`, with `files`; the
    /// totals are the files' sums.
    pub fn staged(
        pending_id: impl Into<String>,
        label: impl Into<String>,
        scope_path: Option<String>,
        files: Vec<PreviewFile>,
    ) -> Self {
        let added = files.iter().map(|file| file.added).sum();
        let removed = files.iter().map(|file| file.removed).sum();
        PreviewFacts::totals(pending_id, label, scope_path, (added, removed)).with_files(files)
    }

    /// The facts of a producer call that staged nothing (no change).
    pub fn nothing_staged() -> Self {
        Self {
            pending_id: None,
            label: None,
            resource: None,
            applied: false,
            scope_path: None,
            files: Vec::new(),
            added: 0,
            removed: 0,
        }
    }
}

impl PreviewFacts<()> {
    /// The facts of the staged action `pending_id` labelled `label`, with the lines it adds
    /// and removes in all, its files not listed yet.
    pub fn totals(
        pending_id: impl Into<String>,
        label: impl Into<String>,
        scope_path: Option<String>,
        (added, removed): (usize, usize),
    ) -> Self {
        let pending_id = pending_id.into();
        Self {
            resource: Some(format!("{PENDING_RESOURCE_PREFIX}{pending_id}")),
            pending_id: Some(pending_id),
            label: Some(label.into()),
            applied: false,
            scope_path,
            files: (),
            added,
            removed,
        }
    }
}

impl<Files> PreviewFacts<Files> {
    /// These facts with `files` as the file list (the totals as they are).
    pub fn with_files<Listed>(self, files: Listed) -> PreviewFacts<Listed> {
        PreviewFacts {
            pending_id: self.pending_id,
            label: self.label,
            resource: self.resource,
            applied: self.applied,
            scope_path: self.scope_path,
            files,
            added: self.added,
            removed: self.removed,
        }
    }
}

impl Facts for PreviewFacts {}

/// The preview facts a producer gives in its own details, before its preview is staged:
/// that nothing was applied, and the scope it searched (`ast_edit`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProducerFacts {
    /// As [`PreviewFacts::applied`]: always false.
    #[serde(default)]
    pub applied: bool,
    /// As [`PreviewFacts::scope_path`].
    #[serde(default)]
    pub scope_path: Option<String>,
}

impl ProducerFacts {
    /// The facts of a preview that searched `scope_path`.
    pub fn searched(scope_path: impl Into<String>) -> Self {
        Self {
            applied: false,
            scope_path: Some(scope_path.into()),
        }
    }

    /// The scope a producer's own details name (`ast_edit`'s), if any.
    pub fn scope_of(details: &Value) -> Option<String> {
        Self::from_details(Some(details)).and_then(|facts| facts.scope_path)
    }
}

impl Facts for ProducerFacts {}

/// One file of a staged preview.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PreviewFile {
    /// The file, relative to the root.
    pub path: String,
    /// Lines added.
    pub added: usize,
    /// Lines removed.
    pub removed: usize,
    /// Its hunks' addresses (`path#1`, `path#2`, … in diff order), as `extra.only` and
    /// `extra.except` of `resolve` take them.
    pub hunks: Vec<String>,
}

/// What an apply landed: the details of the apply's own result (a `resolve` result's
/// `sourceResultDetails`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AppliedFacts {
    /// The action applied.
    pub pending_id: String,
    /// Files written, whole or in part.
    pub applied_files: Vec<String>,
    /// Files of the change set not written.
    pub dropped_files: Vec<String>,
    /// Hunks left out of files that landed in part (`path#n`); absent when none were.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dropped_hunks: Vec<String>,
    /// Replacements applied.
    pub total_replacements: usize,
    /// Files that changed since the preview and received it rebased onto their changes;
    /// absent when none did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rebased_files: Vec<String>,
    /// The git commit made for this apply (`resolve apply --commit`, `commit = true`);
    /// absent when none was asked for or none was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// Why no commit was made although one was asked for; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_committed: Option<String>,
}

impl Facts for AppliedFacts {}

/// What a `resolve` call came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ResolveOutcome {
    /// The files landed; it is in the history.
    Applied,
    /// Dropped with a reason; it is in the history.
    Discarded,
    /// A discard with nothing pending.
    NothingPending,
    /// The person declined to decide; it stays pending.
    Declined,
    /// A person must approve it in a terminal; it stays pending.
    AwaitingPerson,
}

/// Who decided a pending action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DecidedBy {
    /// The model, with its `resolve` call.
    Model,
    /// A person (an approval form, a terminal review, the CLI).
    Person,
    /// A configured policy, without asking anyone.
    Policy,
}

impl std::fmt::Display for DecidedBy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Model => "model",
            Self::Person => "person",
            Self::Policy => "policy",
        })
    }
}

/// What a `resolve` call came to, for the action it concerned: the details of `resolve`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResolveFacts {
    /// What happened.
    pub outcome: ResolveOutcome,
    /// The action it concerned; null when nothing was pending.
    pub pending_id: Option<String>,
    /// Its label.
    pub label: Option<String>,
    /// Who decided; null while it stays pending.
    pub decided_by: Option<DecidedBy>,
    /// The reason recorded (the person's when a person decided).
    pub reason: Option<String>,
    /// The model's reason, when a person decided with another.
    pub model_reason: Option<String>,
    /// Files written, whole or in part.
    pub applied_files: Vec<String>,
    /// Files of the change set not written.
    pub dropped_files: Vec<String>,
    /// Hunks left out of files that landed in part (`path#n`).
    pub dropped_hunks: Vec<String>,
    /// Files that received the preview rebased onto changes made since it was staged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rebased_files: Vec<String>,
    /// The git commit made for this apply (`resolve apply --commit`, `commit = true`);
    /// absent when none was asked for or none was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// Why no commit was made although one was asked for; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_committed: Option<String>,
}

impl ResolveFacts {
    /// An outcome about `pending_id`/`label` with no files and nobody's decision yet.
    pub fn new(outcome: ResolveOutcome, pending_id: Option<String>, label: Option<String>) -> Self {
        Self {
            outcome,
            pending_id,
            label,
            decided_by: None,
            reason: None,
            model_reason: None,
            applied_files: Vec::new(),
            dropped_files: Vec::new(),
            dropped_hunks: Vec::new(),
            rebased_files: Vec::new(),
            commit: None,
            not_committed: None,
        }
    }
}

impl Facts for ResolveFacts {}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;
    use crate::schema::validate;

    #[test]
    fn preview_facts_name_the_resource_sum_the_files_and_match_their_schema() {
        let facts = PreviewFacts::staged(
            "pending-action:edit:4",
            "Edit: src/a.rs",
            None,
            vec![PreviewFile {
                path: "src/a.rs".into(),
                added: 2,
                removed: 1,
                hunks: vec!["src/a.rs#1".into(), "src/a.rs#2".into()],
            }],
        );
        let details = ToolResult::text("preview")
            .with_details(json!({"totalReplacements": 1, "applied": true}))
            .with_facts(&facts)
            .details
            .unwrap();
        assert_eq!(
            details,
            json!({"totalReplacements": 1, "applied": false, "pendingId": "pending-action:edit:4",
                "label": "Edit: src/a.rs", "resource": "resolve://pending/pending-action:edit:4",
                "scopePath": null, "files": [{"path": "src/a.rs", "added": 2, "removed": 1,
                "hunks": ["src/a.rs#1", "src/a.rs#2"]}], "added": 2, "removed": 1})
        );
        assert_eq!(PreviewFacts::from_details(Some(&details)), Some(facts));
        let schema = PreviewFacts::schema();
        validate(&schema, &details).unwrap();
        validate(
            &schema,
            &Value::Object(PreviewFacts::nothing_staged().to_details()),
        )
        .unwrap();
        let mut wrong = details.clone();
        wrong["files"][0]["hunks"] = json!("src/a.rs#1");
        assert!(validate(&schema, &wrong).is_err(), "{schema}");
        wrong = details;
        wrong.as_object_mut().unwrap().remove("pendingId");
        assert!(validate(&schema, &wrong).is_err(), "{schema}");
    }

    #[test]
    fn resolve_facts_read_a_session_result() {
        let applied = ToolResult::text("Applied").with_details(json!({
            "action": "apply", "reason": "ok", "sourceToolName": "edit", "label": "Edit: a",
            "sourceResultDetails": {"pendingId": "p:1", "appliedFiles": ["a"], "droppedFiles": ["b"],
                "droppedHunks": ["a#2"], "totalReplacements": 1, "review": {}}}));
        let facts = ResolveFacts::from_result(&applied, DecidedBy::Model);
        assert_eq!(
            serde_json::to_value(&facts).unwrap(),
            json!({"outcome": "applied", "pendingId": "p:1", "label": "Edit: a", "decidedBy": "model",
                "reason": "ok", "modelReason": null, "appliedFiles": ["a"], "droppedFiles": ["b"],
                "droppedHunks": ["a#2"]})
        );
        validate(
            &ResolveFacts::schema(),
            &serde_json::to_value(&facts).unwrap(),
        )
        .unwrap();
        let discarded = ToolResult::text("Discarded")
            .with_details(json!({"action": "discard", "reason": "r", "label": "Edit: a"}));
        let facts = ResolveFacts::from_result(&discarded, DecidedBy::Person);
        assert_eq!(
            (facts.outcome, facts.decided_by),
            (ResolveOutcome::Discarded, Some(DecidedBy::Person))
        );
        let nothing =
            ToolResult::text("Nothing").with_details(json!({"action": "discard", "reason": "r"}));
        let facts = ResolveFacts::from_result(&nothing, DecidedBy::Model);
        assert_eq!(
            (facts.outcome, facts.decided_by),
            (ResolveOutcome::NothingPending, None)
        );
    }

    #[test]
    fn the_schemas_describe_every_key_and_require_the_ones_always_there() {
        let schema = ResolveFacts::schema();
        let text = schema.to_string();
        assert!(!text.contains("$ref"), "{text}");
        assert_eq!(
            schema["required"],
            json!([
                "outcome",
                "pendingId",
                "label",
                "decidedBy",
                "reason",
                "modelReason",
                "appliedFiles",
                "droppedFiles",
                "droppedHunks"
            ])
        );
        for (key, property) in schema["properties"].as_object().unwrap() {
            assert!(property.get("description").is_some(), "{key}: {property}");
        }
        let outcome = ToolResult::text("x")
            .with_facts(&ResolveFacts::new(
                ResolveOutcome::AwaitingPerson,
                None,
                None,
            ))
            .details
            .unwrap();
        validate(&schema, &outcome).unwrap();
        let mut wrong = outcome;
        wrong["outcome"] = json!("maybe");
        assert!(validate(&schema, &wrong).is_err(), "{schema}");
    }
}
