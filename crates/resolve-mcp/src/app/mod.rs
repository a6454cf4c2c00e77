//! The review as an MCP App (the `io.modelcontextprotocol/ui` extension, SEP-1865): the
//! `ui://resolve/review` resource (`text/html;profile=mcp-app`, one self-contained page compiled
//! into the binary), its `_meta.ui` (an empty CSP: the page loads nothing and connects nowhere),
//! the `_meta.ui` link a producer or `resolve` tool declares, and the extension's server
//! capability.
//!
//! The page is rendered by hosts that render apps, with the tool's result; it decides through
//! the existing `resolve` tool called through the host (so the connection's approval mode and
//! the one decision pipeline apply). Hosts that render no apps ignore all of it.

use rmcp::ErrorData;
use rmcp::model::{ExtensionCapabilities, JsonObject, MetaObject, Resource, ResourceContents};
use serde_json::{Value, json};

/// URI of the review app: the page a host renders with a producer's or `resolve`'s result.
pub const REVIEW_APP_URI: &str = "ui://resolve/review";

/// MIME type of an MCP App's HTML page.
pub const APP_MIME: &str = "text/html;profile=mcp-app";

/// Identifier of the MCP Apps extension, as capabilities and `_meta` name it.
pub const UI_EXTENSION_ID: &str = "io.modelcontextprotocol/ui";

/// The page itself: HTML with its CSS and script inline.
const REVIEW_APP_HTML: &str = include_str!("review.html");

/// The review app as `resources/list` gives it.
pub(crate) fn review_resource() -> Resource {
    Resource::new(REVIEW_APP_URI, "review")
        .with_title("Review pending previews")
        .with_description(
            "An MCP App (io.modelcontextprotocol/ui): the previews a tool result names, their files and hunks; keep or reject each hunk with a reason, then apply or discard through `resolve`.",
        )
        .with_mime_type(APP_MIME)
        .with_meta(resource_ui_meta())
}

/// The review app as `resources/read` gives it: the page, with its `_meta.ui`.
pub(crate) fn read_review() -> ResourceContents {
    ResourceContents::text(REVIEW_APP_HTML, REVIEW_APP_URI)
        .with_mime_type(APP_MIME)
        .with_meta(resource_ui_meta())
}

/// Whether `uri` is the review app's.
pub(crate) fn is_review_uri(uri: &str) -> bool {
    uri == REVIEW_APP_URI
}

/// `_meta.ui` of the resource: no external origin of any kind (the host's restrictive
/// default), and a border around it.
fn resource_ui_meta() -> MetaObject {
    let mut meta = MetaObject::new();
    meta.insert(
        "ui".to_owned(),
        json!({
            "csp": {"connectDomains": [], "resourceDomains": [], "frameDomains": [], "baseUriDomains": []},
            "prefersBorder": true
        }),
    );
    meta
}

/// The `ui` entry of a producer's or `resolve`'s `_meta`: render results with the review app;
/// both the model and the app may call the tool.
pub(crate) fn tool_ui_meta() -> Value {
    json!({"resourceUri": REVIEW_APP_URI, "visibility": ["model", "app"]})
}

/// The server's `extensions` capability: MCP Apps, with the one MIME type it serves.
pub(crate) fn extensions() -> ExtensionCapabilities {
    let mut settings = JsonObject::new();
    settings.insert("mimeTypes".to_owned(), json!([APP_MIME]));
    let mut extensions = ExtensionCapabilities::new();
    extensions.insert(UI_EXTENSION_ID.to_owned(), settings);
    extensions
}

/// A `resources/read` error for an unknown `ui://` URI.
pub(crate) fn unknown_ui(uri: &str) -> ErrorData {
    ErrorData::resource_not_found(
        format!("Unknown resource `{uri}`; the app is `{REVIEW_APP_URI}`."),
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_loads_nothing_from_anywhere() {
        let page = REVIEW_APP_HTML.to_ascii_lowercase();
        assert!(page.starts_with("<!doctype html>"));
        for external in ["http://", "https://", "//cdn", " src=", "@import", "url("] {
            assert!(!page.contains(external), "{external}");
        }
    }
}
