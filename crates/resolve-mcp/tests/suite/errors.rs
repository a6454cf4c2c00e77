//! Errors the model should read are `isError` results with the CLI's text, and the server
//! keeps serving after them.

use pretty_assertions::assert_eq;
use resolve_mcp::ResolveServer;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::common::{Workspace, connected, edit_args, is_error, reminds, resolve_args, text};

#[tokio::test]
async fn malformed_resolve_arguments_name_the_field_and_dispatch_nothing() {
    let (workspace, connection) = connected(&[("a.txt", "a\n")]).await;
    connection.stage_edit("a.txt", "a", "A").await;
    for (arguments, expected) in [
        (
            resolve_args("ship", "x"),
            "Invalid arguments for `resolve`: `action` must be \"apply\" or \"discard\" (was \"ship\")",
        ),
        (
            json!({"action": "apply"}),
            "Invalid arguments for `resolve`: `reason` is required",
        ),
        (
            json!({"action": "apply", "reason": "x", "force": true}),
            "Invalid arguments for `resolve`: `force` is not a known field (allowed: action, reason, extra)",
        ),
        (
            json!({"action": "apply", "reason": "x", "extra": "only a"}),
            "Invalid arguments for `resolve`: `extra` must be an object (was string)",
        ),
    ] {
        let result = connection.call("resolve", arguments.clone()).await;
        assert!(is_error(&result), "{arguments}");
        let text = text(&result);
        assert!(text.starts_with(expected), "{arguments}: {text}");
        assert!(reminds(&result), "the preview is still pending");
    }
    assert_eq!(workspace.read("a.txt"), "a\n", "nothing was applied");
    let applied = connection.resolve("apply", "Now properly.").await;
    assert_eq!(text(&applied), "Applied edit to a.txt.");
}

#[tokio::test]
async fn tool_errors_are_results_with_the_cli_text() {
    let (_workspace, connection) = connected(&[("a.rs", "fn a() {}\n")]).await;
    for (name, arguments, expected) in [
        ("nope", json!({}), "Unknown tool `nope`."),
        (
            "edit",
            json!({"old_text": "a", "new_text": "b"}),
            "Invalid arguments for `edit`: `path` is required",
        ),
        (
            "read",
            json!({"path": "../outside.txt"}),
            "`../outside.txt` is outside the workspace root",
        ),
        (
            "grep",
            json!({"pattern": "("}),
            "Invalid regular expression `(`",
        ),
        (
            "ast_edit",
            json!({"ops": [{"pat": "fn (", "out": "x"}], "paths": ["a.rs"], "lang": "rust"}),
            "Invalid pattern `fn (`",
        ),
        (
            "resolve",
            resolve_args("apply", "Nothing staged."),
            "No pending action to resolve. Nothing to apply or discard.",
        ),
    ] {
        let result = connection.call(name, arguments).await;
        assert!(is_error(&result), "{name}: {result:?}");
        assert!(
            text(&result).starts_with(expected),
            "{name}: {}",
            text(&result)
        );
        assert!(!reminds(&result));
    }
    // Still serving.
    let listed = connection.call("ls", json!({})).await;
    assert!(!is_error(&listed));
    assert_eq!(text(&listed), "a.rs");
}

#[tokio::test]
async fn a_cancelled_resolve_is_aborted_and_keeps_the_preview() {
    let workspace = Workspace::with(&[("a.txt", "a\n")]);
    let server = ResolveServer::open(workspace.root()).unwrap();
    let live = CancellationToken::new();
    let staged = server
        .run_tool("edit", edit_args("a.txt", "a", "A"), &live)
        .await;
    assert_eq!(staged.is_error, Some(false));
    let cancelled = CancellationToken::new();
    cancelled.cancel();
    let aborted = server
        .run_tool("resolve", resolve_args("apply", "Too late."), &cancelled)
        .await;
    assert_eq!(aborted.is_error, Some(true));
    assert!(
        text(&aborted).starts_with("Aborted: Cancelled"),
        "{aborted:?}"
    );
    assert!(reminds(&aborted));
    assert_eq!(workspace.read("a.txt"), "a\n");
    let applied = server
        .run_tool("resolve", resolve_args("apply", "Now."), &live)
        .await;
    assert_eq!(text(&applied), "Applied edit to a.txt.");
}
