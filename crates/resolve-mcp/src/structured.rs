//! The facts programs read from a result without parsing text, carried under
//! `_meta["resolve/details"]` (never as `structuredContent`, see the tools module): their JSON
//! Schemas for the producers and `resolve`, the summaries that conform to them, and the
//! per-file counts and hunk addresses read from a preview's diff.

use serde_json::{Value, json};

/// The schema of the details of `ast_edit`, `edit` and `write`: the staged preview's id (`null` when
/// nothing was staged), label, resource URI, that nothing was applied, the scope searched
/// (`ast_edit`), and per file the lines added and removed and its hunk addresses (`path#1`,
/// `path#2`, … in diff order).
pub(crate) fn producer_details_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "pendingId": nullable(json!({"type": "string", "description": "the staged pending action; null when nothing was staged"})),
            "label": nullable(json!({"type": "string"})),
            "resource": nullable(json!({"type": "string", "description": "resolve://pending/<id>"})),
            "applied": {"type": "boolean", "description": "always false: a preview writes nothing until `resolve` applies it"},
            "scopePath": nullable(json!({"type": "string", "description": "ast_edit: the paths searched, relative to the root and joined with \", \" (`.` is the root); null for edit and write"})),
            "files": files_schema(),
            "added": {"type": "integer", "minimum": 0},
            "removed": {"type": "integer", "minimum": 0}
        },
        "required": ["pendingId", "label", "resource", "applied", "scopePath", "files", "added", "removed"]
    })
}

/// The schema of the details of `resolve`: what happened (`outcome`), to which action, who decided,
/// the reason recorded, and what landed.
pub(crate) fn resolve_details_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "outcome": {
                "type": "string",
                "enum": ["applied", "discarded", "nothing_pending", "declined", "awaiting_person"],
                "description": "applied or discarded: it is in the history; nothing_pending: there was nothing to discard; declined: the person declined to decide, it stays pending; awaiting_person: a person must approve it in a terminal, it stays pending"
            },
            "pendingId": nullable(json!({"type": "string"})),
            "label": nullable(json!({"type": "string"})),
            "decidedBy": nullable(json!({"type": "string", "enum": ["model", "person"]})),
            "reason": nullable(json!({"type": "string", "description": "the reason recorded (the person's when a person decided)"})),
            "modelReason": nullable(json!({"type": "string", "description": "the model's reason when a person decided with another"})),
            "appliedFiles": {"type": "array", "items": {"type": "string"}},
            "droppedFiles": {"type": "array", "items": {"type": "string"}}
        },
        "required": ["outcome", "pendingId", "label", "decidedBy", "reason", "appliedFiles", "droppedFiles"]
    })
}

/// `schema` or `null`, spelled with `anyOf` (a `type` array is less portable across hosts).
fn nullable(schema: Value) -> Value {
    json!({"anyOf": [schema, {"type": "null"}]})
}

fn files_schema() -> Value {
    json!({
        "type": "array",
        "items": {
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "added": {"type": "integer", "minimum": 0},
                "removed": {"type": "integer", "minimum": 0},
                "hunks": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["path", "added", "removed", "hunks"]
        }
    })
}

/// One file of a preview's diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileDiff {
    /// The file (the new name; the old one for a deletion).
    pub path: String,
    /// Lines added.
    pub added: usize,
    /// Lines removed.
    pub removed: usize,
    /// How many hunks its diff has.
    pub hunks: usize,
}

impl FileDiff {
    fn to_json(&self) -> Value {
        let hunks: Vec<String> = (1..=self.hunks)
            .map(|n| format!("{}#{n}", self.path))
            .collect();
        json!({"path": self.path, "added": self.added, "removed": self.removed, "hunks": hunks})
    }
}

/// The files of the unified diffs in `preview`, in order. A hunk's lines are counted from its
/// `@@ -a,b +c,d @@` header, so a changed line that itself starts with `---` or `+++` is not
/// taken for a file header.
pub(crate) fn diff_files(preview: &str) -> Vec<FileDiff> {
    let mut files: Vec<FileDiff> = Vec::new();
    let mut lines = preview.lines().peekable();
    let mut old_name: Option<&str> = None;
    while let Some(line) = lines.next() {
        if let Some(name) = line.strip_prefix("--- ") {
            old_name = Some(name);
            continue;
        }
        if let Some(name) = line.strip_prefix("+++ ") {
            let path = match (name, old_name.take()) {
                ("/dev/null", Some(old)) => strip_side(old),
                (new, _) => strip_side(new),
            };
            files.push(FileDiff {
                path: path.to_owned(),
                added: 0,
                removed: 0,
                hunks: 0,
            });
            continue;
        }
        let (Some(file), Some((mut old_left, mut new_left))) = (files.last_mut(), hunk_sizes(line))
        else {
            continue;
        };
        file.hunks += 1;
        while old_left + new_left > 0 {
            let Some(body) = lines.next() else { break };
            match body.as_bytes().first() {
                Some(b'+') => {
                    file.added += 1;
                    new_left = new_left.saturating_sub(1);
                }
                Some(b'-') => {
                    file.removed += 1;
                    old_left = old_left.saturating_sub(1);
                }
                Some(b'\\') => {}
                _ => {
                    old_left = old_left.saturating_sub(1);
                    new_left = new_left.saturating_sub(1);
                }
            }
        }
    }
    files
}

/// `a/src/x.rs` → `src/x.rs` (the `a/`/`b/` side prefix of a git-style header).
fn strip_side(name: &str) -> &str {
    name.strip_prefix("a/")
        .or_else(|| name.strip_prefix("b/"))
        .unwrap_or(name)
}

/// The old and new line counts of a hunk header `@@ -a,b +c,d @@` (a missing count is 1).
fn hunk_sizes(line: &str) -> Option<(usize, usize)> {
    let rest = line.strip_prefix("@@ -")?;
    let (ranges, _) = rest.split_once(" @@")?;
    let (old, new) = ranges.split_once(" +")?;
    let count = |range: &str| -> Option<usize> {
        match range.split_once(',') {
            Some((_, count)) => count.parse().ok(),
            None => range.parse::<usize>().ok().map(|_| 1),
        }
    };
    Some((count(old)?, count(new)?))
}

/// The summary of a producer result, added to its details: from its details (`pendingId`, `label`,
/// `scopePath`) and its preview text; `applied` is false, as for every preview.
pub(crate) fn producer_content(details: Option<&Value>, preview: &str) -> Value {
    let field = |name: &str| {
        details
            .and_then(|details| details.get(name))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let pending_id = field("pendingId");
    let files = diff_files(preview);
    let added: usize = files.iter().map(|file| file.added).sum();
    let removed: usize = files.iter().map(|file| file.removed).sum();
    json!({
        "pendingId": pending_id,
        "label": field("label"),
        "resource": pending_id.as_ref().map(|id| format!("{}{id}", crate::resources::PENDING_URI_PREFIX)),
        "applied": false,
        "scopePath": field("scopePath"),
        "files": files.iter().map(FileDiff::to_json).collect::<Vec<_>>(),
        "added": added,
        "removed": removed,
    })
}

/// What a `resolve` call came to, for its details.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ResolveOutcome {
    /// The files landed.
    Applied,
    /// Dropped with a reason.
    Discarded,
    /// A discard with nothing pending.
    NothingPending,
    /// The person declined or cancelled; it stays pending.
    Declined,
    /// A person must approve it in a terminal; it stays pending.
    AwaitingPerson,
}

impl ResolveOutcome {
    fn as_str(self) -> &'static str {
        match self {
            Self::Applied => "applied",
            Self::Discarded => "discarded",
            Self::NothingPending => "nothing_pending",
            Self::Declined => "declined",
            Self::AwaitingPerson => "awaiting_person",
        }
    }
}

/// The summary of a `resolve` result, added to its details.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ResolveContent {
    /// What happened.
    pub outcome: ResolveOutcome,
    /// The action it concerned.
    pub pending_id: Option<String>,
    /// Its label.
    pub label: Option<String>,
    /// `model` or `person` once resolved; `None` while it stays pending.
    pub decided_by: Option<&'static str>,
    /// The reason recorded.
    pub reason: Option<String>,
    /// The model's reason, when a person decided with another.
    pub model_reason: Option<String>,
    /// Files written.
    pub applied_files: Vec<String>,
    /// Files of the change set not written.
    pub dropped_files: Vec<String>,
}

impl ResolveContent {
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
        }
    }

    /// Read from the details of a successful `resolve` result of the session (`action`,
    /// `reason`, `label`, `sourceResultDetails.{pendingId, appliedFiles, droppedFiles}`), as
    /// decided by `decided_by`.
    pub fn from_details(details: Option<&Value>, decided_by: &'static str) -> Self {
        let get = |name: &str| details.and_then(|details| details.get(name));
        let text = |value: Option<&Value>| value.and_then(Value::as_str).map(str::to_owned);
        let source = get("sourceResultDetails");
        let list = |name: &str| -> Vec<String> {
            source
                .and_then(|source| source.get(name))
                .and_then(Value::as_array)
                .map(|items| {
                    items
                        .iter()
                        .filter_map(|item| item.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default()
        };
        let action = text(get("action"));
        let label = text(get("label"));
        let outcome = match (action.as_deref(), &label) {
            (Some("apply"), _) => ResolveOutcome::Applied,
            (_, Some(_)) => ResolveOutcome::Discarded,
            (_, None) => ResolveOutcome::NothingPending,
        };
        Self {
            outcome,
            pending_id: text(source.and_then(|source| source.get("pendingId")))
                .or_else(|| text(get("pendingId"))),
            label,
            decided_by: (outcome != ResolveOutcome::NothingPending).then_some(decided_by),
            reason: text(get("reason")),
            model_reason: None,
            applied_files: list("appliedFiles"),
            dropped_files: list("droppedFiles"),
        }
    }

    /// As JSON, conforming to [`resolve_details_schema`].
    pub fn to_json(&self) -> Value {
        json!({
            "outcome": self.outcome.as_str(),
            "pendingId": self.pending_id,
            "label": self.label,
            "decidedBy": self.decided_by,
            "reason": self.reason,
            "modelReason": self.model_reason,
            "appliedFiles": self.applied_files,
            "droppedFiles": self.dropped_files,
        })
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    const PREVIEW: &str = "Staged as a preview — files are NOT modified yet.\n\n\
--- a/src/a.rs\n+++ b/src/a.rs\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n@@ -10,2 +10,3 @@\n x\n+--- not a header\n y\n\
--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+new\n\
--- a/gone.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-one\n-+++ two\n";

    #[test]
    fn counts_lines_and_numbers_hunks_per_file_from_the_hunk_headers() {
        let files = diff_files(PREVIEW);
        let summary: Vec<(&str, usize, usize, usize)> = files
            .iter()
            .map(|file| (file.path.as_str(), file.added, file.removed, file.hunks))
            .collect();
        assert_eq!(
            summary,
            [
                ("src/a.rs", 2, 1, 2),
                ("new.txt", 1, 0, 1),
                ("gone.txt", 0, 2, 1),
            ]
        );
    }

    #[test]
    fn producer_content_names_the_pending_resource_and_hunk_addresses() {
        let details = json!({"pendingId": "pending-action:edit:4", "label": "Edit: src/a.rs"});
        let content = producer_content(Some(&details), PREVIEW);
        assert_eq!(
            content["resource"],
            "resolve://pending/pending-action:edit:4"
        );
        assert_eq!(
            content["files"][0]["hunks"],
            json!(["src/a.rs#1", "src/a.rs#2"])
        );
        assert_eq!(
            (content["added"].clone(), content["removed"].clone()),
            (json!(3), json!(3))
        );
        assert_eq!(content["applied"], json!(false));
        assert_eq!(content["scopePath"], Value::Null, "edit has no scope");
        let nothing = producer_content(None, "No changes.");
        assert_eq!(nothing["pendingId"], Value::Null);
        assert_eq!(nothing["files"], json!([]));
    }

    #[test]
    fn producer_content_carries_the_ast_edit_scope_and_has_every_required_key() {
        let details = json!({"pendingId": "pending-action:ast_edit:2", "label": "AST Edit: 1 replacement in 1 file",
            "applied": false, "scopePath": "src, tests/**/*.rs"});
        let content = producer_content(Some(&details), PREVIEW);
        assert_eq!(content["scopePath"], json!("src, tests/**/*.rs"));
        assert_eq!(content["applied"], json!(false));
        let schema = producer_details_schema();
        for key in schema["required"].as_array().unwrap() {
            let key = key.as_str().unwrap();
            assert!(content.get(key).is_some(), "missing {key}");
            assert!(schema["properties"].get(key).is_some(), "undeclared {key}");
        }
        for key in content.as_object().unwrap().keys() {
            assert!(schema["properties"].get(key).is_some(), "undeclared {key}");
        }
    }

    #[test]
    fn resolve_content_reads_the_session_details() {
        let applied = ResolveContent::from_details(
            Some(
                &json!({"action": "apply", "reason": "ok", "label": "Edit: a",
                "sourceResultDetails": {"pendingId": "p:1", "appliedFiles": ["a"], "droppedFiles": []}}),
            ),
            "model",
        );
        assert_eq!(
            applied.to_json(),
            json!({"outcome": "applied", "pendingId": "p:1", "label": "Edit: a", "decidedBy": "model",
                "reason": "ok", "modelReason": null, "appliedFiles": ["a"], "droppedFiles": []})
        );
        let nothing = ResolveContent::from_details(
            Some(&json!({"action": "discard", "reason": "r"})),
            "model",
        );
        assert_eq!(nothing.outcome, ResolveOutcome::NothingPending);
        assert_eq!(nothing.decided_by, None);
    }
}
