//! `resolve mcp` driven by the MCP Inspector's command-line mode (npm
//! `@modelcontextprotocol/inspector`, `--cli`), a client nobody here wrote: it lists the tools
//! with their annotations (and its `--strict` schema portability check passes), stages with
//! `edit`, reads the pending resource, and gets a bad argument back as an `isError` result.
//!
//! The inspector is the executable in `RESOLVE_INSPECTOR` (`.ci/run` installs it); without it
//! the test fails under CI (`CI` set) and is skipped loudly elsewhere.

#![allow(clippy::print_stderr, reason = "tests explain skips on stderr")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

use super::common::external_tool;
use resolve_test_support::text::{assert_contains, assert_starts_with};

fn inspector() -> Option<PathBuf> {
    external_tool(
        "RESOLVE_INSPECTOR",
        "the MCP Inspector (`npm install @modelcontextprotocol/inspector`, then node_modules/.bin/mcp-inspector)",
        "the MCP Inspector test",
    )
}

/// One inspector run against a fresh `resolve mcp` for `root`: `--cli resolve mcp --root ROOT`
/// then `args`.
fn inspect(inspector: &Path, root: &Path, args: &[&str]) -> Output {
    Command::new(inspector)
        .arg("--cli")
        .arg(env!("CARGO_BIN_EXE_resolve"))
        .args(["mcp", "--root"])
        .arg(root)
        .args(args)
        .output()
        .unwrap()
}

fn stdout_json(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|error| {
        panic!(
            "not JSON ({error}):\n{}\n--- stderr\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

#[test]
fn the_mcp_inspector_cli_lists_stages_reads_and_gets_bad_arguments_as_error_results() {
    let Some(inspector) = inspector() else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("a.txt"), "one\ntwo\n").unwrap();

    let listed = inspect(
        &inspector,
        root.path(),
        &["--method", "tools/list", "--strict"],
    );
    assert!(
        listed.status.success(),
        "{}",
        String::from_utf8_lossy(&listed.stderr)
    );
    let tools = stdout_json(&listed)["tools"].as_array().unwrap().clone();
    let tool = |name: &str| {
        tools
            .iter()
            .find(|tool| tool["name"] == name)
            .unwrap()
            .clone()
    };
    for producer in ["ast_edit", "edit", "write", "apply_patch"] {
        assert_eq!(
            tool(producer)["annotations"],
            json!({"readOnlyHint": true, "openWorldHint": false}),
            "{producer}"
        );
        assert!(tool(producer).get("outputSchema").is_none(), "{producer}");
    }
    assert_eq!(
        tool("resolve")["annotations"],
        json!({"readOnlyHint": false, "destructiveHint": true, "openWorldHint": false})
    );
    assert!(tool("resolve").get("outputSchema").is_none());

    let edit_a = [
        "--method",
        "tools/call",
        "--tool-name",
        "edit",
        "--tool-arg",
        "path=a.txt",
    ];
    let staged = inspect(
        &inspector,
        root.path(),
        &[&edit_a[..], &["old_text=two", "new_text=TWO"]].concat(),
    );
    assert!(staged.status.success());
    let staged = stdout_json(&staged);
    assert_eq!(staged["isError"], json!(false));
    assert!(staged.get("structuredContent").is_none(), "{staged}");
    let details = &staged["_meta"]["resolve/details"];
    let pending_id = details["pendingId"].as_str().unwrap();
    let uri = format!("resolve://pending/{pending_id}");
    let link = &staged["content"][1];
    assert_eq!(
        (&link["type"], link["uri"].as_str()),
        (&json!("resource_link"), Some(uri.as_str()))
    );
    assert_eq!(
        details["files"],
        json!([{"path": "a.txt", "added": 1, "removed": 1, "hunks": ["a.txt#1"]}])
    );
    assert_eq!(
        std::fs::read_to_string(root.path().join("a.txt")).unwrap(),
        "one\ntwo\n"
    );

    let read = inspect(
        &inspector,
        root.path(),
        &["--method", "resources/read", "--uri", &uri],
    );
    assert!(read.status.success());
    let contents = &stdout_json(&read)["contents"][0];
    let text = contents["text"].as_str().unwrap();
    assert_starts_with(text, &format!("{pending_id} — pending (mcp:"));
    assert_contains(text, "-two\n+TWO");

    let bad = inspect(&inspector, root.path(), &edit_a);
    assert!(!bad.status.success(), "an isError result exits non-zero");
    let bad = stdout_json(&bad);
    assert_eq!(bad["isError"], json!(true));
    assert_eq!(
        bad["content"][0]["text"],
        json!("Invalid arguments for `edit`: `old_text` is required")
    );
}
