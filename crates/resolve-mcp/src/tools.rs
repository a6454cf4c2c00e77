//! The tools as MCP lists them, and tool results as MCP returns them: text, the error flag,
//! the reminder while a preview is pending, the details under `_meta`, and a `resource_link` to
//! a staged preview.
//!
//! No tool declares an `outputSchema` and no result carries `structuredContent`: Claude Code
//! and Codex hand a model the `structuredContent` JSON *instead of* the text when a result has
//! one (measured with both binaries; the real-host tests keep checking it), and the text is
//! what the model must read — the diff, the reminder, the result sentence, reviewer notes. The
//! machine-readable facts travel under `_meta["resolve/details"]`, which hosts keep from the
//! model and programs read; their shapes are the facts types of `resolve_core::facts`
//! ([`PreviewFacts`], [`ResolveFacts`]) and [`CheckFacts`], whose generated schemas the tools
//! give under `_meta["resolve/detailsSchema"]`.

use std::sync::Arc;

use resolve_core::{
    Facts, PreviewFacts, RESOLVE_REMINDER, ResolveFacts, ToolKind, ToolResult, ToolSpec,
    resolve_tool_spec,
};
use resolve_edit::{CheckFacts, file_tool_specs};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, MetaObject, Tool, ToolAnnotations};
use serde_json::Value;

use crate::resources::pending_link;

/// The `_meta` key under which a result carries its structured details (`pendingId`, `label`,
/// `action`, …). The model reads the text; programs read this.
pub(crate) const DETAILS_META_KEY: &str = "resolve/details";

/// The `_meta` key under which a listed tool gives the JSON Schema of its results' details
/// (the producers and `resolve`), where an `outputSchema` would otherwise be.
pub(crate) const DETAILS_SCHEMA_META_KEY: &str = "resolve/detailsSchema";

/// The `_meta` key under which a producer and `resolve` link the review app
/// (`{"resourceUri": "ui://resolve/review", "visibility": ["model", "app"]}`, MCP Apps), so a
/// host that renders apps shows their results in it.
pub(crate) const UI_META_KEY: &str = "ui";

/// Every built-in file tool (producers first), then `resolve`, as the server lists them
/// without a check command configured ([`mcp_tools_of`] the file tools' specs).
pub fn mcp_tools() -> Vec<Tool> {
    mcp_tools_of(file_tool_specs())
}

/// The tools of `specs` (a connection's registry: the file tools, then `check` when a check
/// command is configured), then `resolve`, as MCP lists them.
///
/// Each has its spec's literal input schema and model-facing description, and annotations
/// derived from its [`ToolKind`]: read-only tools and producers `readOnlyHint: true` (a
/// producer only stages a preview; no file changes), so hosts may run them without a prompt;
/// a companion (`check`) `readOnlyHint: false, destructiveHint: false` (the preview is in place
/// while it runs, and every file is put back); `resolve` `readOnlyHint: false,
/// destructiveHint: true`, so a host with a permission system asks before an apply; any other
/// tool `readOnlyHint: false`. None reaches outside the workspace (`openWorldHint: false`).
/// None has an `outputSchema` (see the module documentation); the producers, the companion
/// (`check`, whose details are [`CheckFacts`]) and `resolve` give the schema of their details
/// under `_meta["resolve/detailsSchema"]`; the producers and `resolve` link the review app
/// under `_meta.ui` (MCP Apps; hosts that render no apps ignore it).
pub fn mcp_tools_of<'a>(specs: impl IntoIterator<Item = &'a ToolSpec>) -> Vec<Tool> {
    specs
        .into_iter()
        .chain(std::iter::once(resolve_tool_spec()))
        .map(mcp_tool)
        .collect()
}

fn mcp_tool(spec: &ToolSpec) -> Tool {
    let (annotations, details_schema) = match spec.kind {
        ToolKind::Resolve => (
            ToolAnnotations::new().read_only(false).destructive(true),
            Some(ResolveFacts::schema()),
        ),
        ToolKind::Producer => (
            ToolAnnotations::new().read_only(true),
            Some(PreviewFacts::schema()),
        ),
        ToolKind::Companion => (
            ToolAnnotations::new().read_only(false).destructive(false),
            Some(CheckFacts::schema()),
        ),
        ToolKind::ReadOnly => (ToolAnnotations::new().read_only(true), None),
        ToolKind::Other => (ToolAnnotations::new().read_only(false), None),
    };
    let mut tool = Tool::new(
        spec.name.clone(),
        spec.description.clone(),
        Arc::new(schema_object(&spec.input_schema)),
    )
    .with_annotations(annotations.open_world(false));
    let renders_review = matches!(spec.kind, ToolKind::Producer | ToolKind::Resolve);
    tool.meta = details_schema.map(|schema| {
        let mut meta = MetaObject::new();
        meta.insert(DETAILS_SCHEMA_META_KEY.to_owned(), schema);
        if renders_review {
            meta.insert(UI_META_KEY.to_owned(), crate::app::tool_ui_meta());
        }
        meta
    });
    tool
}

/// A schema as the JSON object MCP wants. Our schemas are always objects; anything else (a
/// bug) becomes the empty schema, which accepts any arguments, and our own checks still run.
fn schema_object(schema: &Value) -> JsonObject {
    match schema {
        Value::Object(map) => map.clone(),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) | Value::Array(_) => {
            JsonObject::new()
        }
    }
}

/// The result of a tool of `kind` as an MCP tool result ([`plain_result`]); a producer's
/// non-error result carries its [`PreviewFacts`] in its details (those of "nothing staged"
/// when it staged nothing) and, when it staged a preview, a `resource_link` to it.
pub(crate) fn call_tool_result(
    kind: Option<ToolKind>,
    result: ToolResult,
    notes: &[String],
    pending: bool,
) -> CallToolResult {
    if result.is_error || kind != Some(ToolKind::Producer) {
        return plain_result(result, notes, pending);
    }
    let facts = PreviewFacts::from_details(result.details.as_ref())
        .unwrap_or_else(PreviewFacts::nothing_staged);
    let link = facts
        .pending_id
        .as_deref()
        .map(|id| pending_link(id, facts.label.as_deref().unwrap_or(id)));
    let mut mcp = plain_result(result.with_facts(&facts), notes, pending);
    mcp.content.extend(link.map(ContentBlock::resource_link));
    mcp
}

/// A `resolve` result as an MCP tool result ([`plain_result`]); a non-error one carries what it
/// came to ([`ResolveFacts`]) in its details.
pub(crate) fn resolve_result(
    result: ToolResult,
    facts: Option<ResolveFacts>,
    notes: &[String],
    pending: bool,
) -> CallToolResult {
    let result = match facts {
        Some(facts) if !result.is_error => result.with_facts(&facts),
        Some(_) | None => result,
    };
    plain_result(result, notes, pending)
}

/// `result` as an MCP tool result: its text, then each reviewer note (what a person did to a
/// preview this connection staged), then, while `pending`, the reminder, which ends the text
/// (also for errors and read-only tools), so a model that cannot be forced is at least told.
pub(crate) fn plain_result(result: ToolResult, notes: &[String], pending: bool) -> CallToolResult {
    let mut text = result.text;
    for note in notes {
        text = appended(&text, note);
    }
    if pending {
        text = with_reminder(&text);
    }
    let content = vec![ContentBlock::text(text)];
    let mcp = if result.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    match result.details {
        Some(details) if !is_empty_details(&details) => {
            let mut meta = MetaObject::new();
            meta.insert(DETAILS_META_KEY.to_owned(), details);
            mcp.with_meta(Some(meta))
        }
        Some(_) | None => mcp,
    }
}

/// `text`, then a blank line, then the reminder, which ends the result exactly.
pub(crate) fn with_reminder(text: &str) -> String {
    appended(text, RESOLVE_REMINDER)
}

/// `text`, then a blank line, then `block` (just `block` after an empty text).
fn appended(text: &str, block: &str) -> String {
    if text.is_empty() {
        block.to_owned()
    } else {
        format!("{text}\n\n{block}")
    }
}

fn is_empty_details(details: &Value) -> bool {
    match details {
        Value::Null => true,
        Value::Object(map) => map.is_empty(),
        Value::Bool(_) | Value::Number(_) | Value::String(_) | Value::Array(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn lists_the_file_tools_then_resolve_with_literal_schemas() {
        let tools = mcp_tools();
        let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
        assert_eq!(
            names.join(" "),
            "ast_edit edit write apply_patch read ls grep resolve"
        );
        let resolve = tools.iter().find(|tool| tool.name == "resolve").unwrap();
        let mut schema = Value::Object(resolve.input_schema.as_ref().clone());
        for property in ["action", "reason", "extra"] {
            schema["properties"][property]
                .as_object_mut()
                .unwrap()
                .remove("description");
        }
        assert_eq!(
            schema,
            json!({"type":"object","properties":{"action":{"type":"string","enum":["apply","discard"]},"reason":{"type":"string"},"extra":{"type":"object"}},"required":["action","reason"],"additionalProperties":false})
        );
        for tool in &tools {
            let text = serde_json::to_string(&tool.input_schema).unwrap();
            assert!(
                !text.contains("$ref") && !text.contains("$schema"),
                "{text}"
            );
            assert!(tool.output_schema.is_none(), "{}", tool.name);
            let gives_details_schema = !matches!(tool.name.as_ref(), "read" | "ls" | "grep");
            assert_eq!(
                tool.meta
                    .as_ref()
                    .and_then(|meta| meta.get(DETAILS_SCHEMA_META_KEY))
                    .is_some_and(Value::is_object),
                gives_details_schema,
                "{}",
                tool.name
            );
            assert!(tool.description.as_deref().is_some_and(|d| !d.is_empty()));
        }
    }

    #[test]
    fn annotations_mark_read_only_tools_and_producers_read_only_and_resolve_destructive() {
        for tool in mcp_tools() {
            let annotations = tool.annotations.clone().unwrap();
            let (read_only, destructive) = match tool.name.as_ref() {
                "read" | "ls" | "grep" => (Some(true), None),
                "ast_edit" | "edit" | "write" | "apply_patch" => (Some(true), None),
                "resolve" => (Some(false), Some(true)),
                other => panic!("unexpected tool {other}"),
            };
            assert_eq!(annotations.read_only_hint, read_only, "{}", tool.name);
            assert_eq!(annotations.destructive_hint, destructive, "{}", tool.name);
            assert_eq!(annotations.open_world_hint, Some(false), "{}", tool.name);
        }
    }

    #[test]
    fn a_pending_result_ends_with_the_exact_reminder_even_when_it_is_an_error() {
        for result in [
            ToolResult::text("1: a"),
            ToolResult::error("Preview is stale: …"),
        ] {
            let mcp = plain_result(result.clone(), &[], true);
            let text = &mcp.content[0].as_text().unwrap().text;
            assert!(text.starts_with(&result.text));
            assert!(text.ends_with(RESOLVE_REMINDER), "{text}");
            assert_eq!(mcp.is_error, Some(result.is_error));
            let plain = plain_result(result.clone(), &[], false);
            assert_eq!(plain.content[0].as_text().unwrap().text, result.text);
        }
    }

    #[test]
    fn reviewer_notes_follow_the_result_and_the_reminder_still_ends_it() {
        let notes = ["<system-reminder>\nA reviewer discarded x.\n</system-reminder>".to_owned()];
        let mcp = plain_result(ToolResult::text("1: a"), &notes, true);
        assert_eq!(
            mcp.content[0].as_text().unwrap().text,
            format!("1: a\n\n{}\n\n{RESOLVE_REMINDER}", notes[0])
        );
        let alone = plain_result(ToolResult::text(""), &notes, false);
        assert_eq!(alone.content[0].as_text().unwrap().text, notes[0]);
    }

    #[test]
    fn details_travel_in_meta_and_empty_details_are_left_out() {
        let staged =
            ToolResult::text("preview").with_details(json!({"pendingId": "pending-action:edit:1"}));
        let mcp = plain_result(staged, &[], false);
        assert_eq!(
            mcp.meta.unwrap().get(DETAILS_META_KEY),
            Some(&json!({"pendingId": "pending-action:edit:1"}))
        );
        let error = ToolResult::from_error(&resolve_core::Error::NothingToApply);
        assert!(plain_result(error, &[], false).meta.is_none());
    }
}
