//! The tools as MCP lists them, and tool results as MCP returns them: text, the error flag,
//! the reminder while a preview is pending, the details under `_meta`, and a `resource_link` to
//! a staged preview.
//!
//! No tool declares an `outputSchema` and no result carries `structuredContent`: Claude Code
//! and Codex hand a model the `structuredContent` JSON *instead of* the text when a result has
//! one (measured with both binaries; the real-host tests keep checking it), and the text is
//! what the model must read — the diff, the reminder, the result sentence, reviewer notes. The
//! machine-readable facts travel under `_meta["resolve/details"]`, which hosts keep from the
//! model and programs read; their shapes are the schemas of the structured module.

use std::sync::Arc;

use resolve_core::{
    CHECK_TOOL_NAME, RESOLVE_REMINDER, RESOLVE_TOOL_NAME, ToolResult, ToolSpec, resolve_tool_spec,
};
use resolve_edit::file_tool_specs;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, MetaObject, Tool, ToolAnnotations};
use serde_json::Value;

use crate::resources::pending_link;
use crate::structured::{
    ResolveContent, producer_content, producer_details_schema, resolve_details_schema,
};

/// The `_meta` key under which a result carries its structured details (`pendingId`, `label`,
/// `action`, …). The model reads the text; programs read this.
pub(crate) const DETAILS_META_KEY: &str = "resolve/details";

/// The `_meta` key under which a listed tool gives the JSON Schema of its results' details
/// (the producers and `resolve`), where an `outputSchema` would otherwise be.
pub(crate) const DETAILS_SCHEMA_META_KEY: &str = "resolve/detailsSchema";

/// Every tool the server lists: the file tools (producers first), then `resolve`.
///
/// Each has its spec's literal input schema and model-facing description, and annotations:
/// the read-only tools and the producers `readOnlyHint: true` (a producer only stages a
/// preview; no file changes), so hosts may run them without a prompt; `resolve`
/// `readOnlyHint: false, destructiveHint: true`, so a host with a permission system asks before
/// an apply. None reaches outside the workspace (`openWorldHint: false`). None has an
/// `outputSchema` (see the module documentation); the producers and `resolve` give the schema
/// of their details under `_meta["resolve/detailsSchema"]`.
pub fn mcp_tools() -> Vec<Tool> {
    mcp_tools_with_check(None)
}

/// [`mcp_tools`], with the `check` tool of `check` (when a check command is configured)
/// before `resolve`: `readOnlyHint: false` (the preview is in place while it runs),
/// `destructiveHint: false` (every file is put back).
pub fn mcp_tools_with_check(check: Option<&ToolSpec>) -> Vec<Tool> {
    file_tool_specs()
        .iter()
        .chain(check)
        .chain(std::iter::once(resolve_tool_spec()))
        .map(mcp_tool)
        .collect()
}

fn mcp_tool(spec: &ToolSpec) -> Tool {
    let (annotations, details_schema) = if spec.name == RESOLVE_TOOL_NAME {
        (
            ToolAnnotations::new().read_only(false).destructive(true),
            Some(resolve_details_schema()),
        )
    } else if spec.deferrable {
        (
            ToolAnnotations::new().read_only(true),
            Some(producer_details_schema()),
        )
    } else if spec.name == CHECK_TOOL_NAME {
        (
            ToolAnnotations::new().read_only(false).destructive(false),
            None,
        )
    } else {
        (ToolAnnotations::new().read_only(true), None)
    };
    let mut tool = Tool::new(
        spec.name.clone(),
        spec.description.clone(),
        Arc::new(schema_object(&spec.input_schema)),
    )
    .with_annotations(annotations.open_world(false));
    tool.meta = details_schema.map(|schema| {
        let mut meta = MetaObject::new();
        meta.insert(DETAILS_SCHEMA_META_KEY.to_owned(), schema);
        meta
    });
    tool
}

/// Whether `name` is a producer (a tool that stages previews).
fn is_producer(name: &str) -> bool {
    file_tool_specs()
        .iter()
        .any(|spec| spec.deferrable && spec.name == name)
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

/// The result of the file tool `name` as an MCP tool result ([`plain_result`]); a producer's
/// non-error result also carries its summary ([`producer_content`]) in its details and, when it
/// staged a preview, a `resource_link` to it.
pub(crate) fn call_tool_result(
    name: &str,
    result: ToolResult,
    notes: &[String],
    pending: bool,
) -> CallToolResult {
    if result.is_error || !is_producer(name) {
        return plain_result(result, notes, pending);
    }
    let content = producer_content(result.details.as_ref(), &result.text);
    let link = content["pendingId"]
        .as_str()
        .map(|id| pending_link(id, content["label"].as_str().unwrap_or(id)));
    let mut mcp = plain_result(with_summary(result, content), notes, pending);
    mcp.content.extend(link.map(ContentBlock::resource_link));
    mcp
}

/// A `resolve` result as an MCP tool result ([`plain_result`]); a non-error one carries what it
/// came to ([`ResolveContent`]) in its details.
pub(crate) fn resolve_result(
    result: ToolResult,
    content: Option<ResolveContent>,
    notes: &[String],
    pending: bool,
) -> CallToolResult {
    let result = match content {
        Some(content) if !result.is_error => with_summary(result, content.to_json()),
        Some(_) | None => result,
    };
    plain_result(result, notes, pending)
}

/// `result` with the fields of `summary` (an object) added to its details, replacing details
/// of the same name.
fn with_summary(mut result: ToolResult, summary: Value) -> ToolResult {
    let mut details = match result.details.take() {
        Some(Value::Object(map)) => map,
        Some(_) | None => serde_json::Map::new(),
    };
    if let Value::Object(summary) = summary {
        details.extend(summary);
    }
    result.details = Some(Value::Object(details));
    result
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
            names,
            [
                "ast_edit",
                "edit",
                "write",
                "apply_patch",
                "read",
                "ls",
                "grep",
                "resolve"
            ]
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
