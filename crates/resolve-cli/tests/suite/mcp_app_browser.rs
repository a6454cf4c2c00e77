//! The review MCP App (`ui://resolve/review`) in a real browser, inside a minimal host page
//! built on the official MCP Apps SDK (`@modelcontextprotocol/ext-apps`' AppBridge), relaying
//! the app's calls to a real `resolve mcp` child: `tests/web/mcp_app_host.cjs` stages a 2-file
//! preview, renders the app with that tool result (through a sandbox proxy of another origin,
//! under the CSP built from the resource's `_meta.ui.csp`, as the specification asks of a web
//! host), rejects one hunk with a reason and applies with a reason. Chromium is the system's (`RESOLVE_CHROMIUM`), driven by puppeteer-core from
//! `RESOLVE_PUPPETEER_DIR`, where `.ci/run` also installs the SDK and esbuild (which bundles
//! the AppBridge for the page from node_modules). Without them the test fails under CI (`CI`
//! set) and is skipped loudly elsewhere. Screenshots go to `RESOLVE_SCREENSHOTS`.

use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value, json};

use super::web_browser::{browser_tools_with, node_script};
use resolve_test_support::text::assert_starts_with;

/// Chromium and the npm directory with puppeteer-core, esbuild and the MCP Apps SDK.
fn browser_tools() -> Option<(PathBuf, PathBuf)> {
    browser_tools_with(&[
        "puppeteer-core",
        "esbuild",
        "@modelcontextprotocol/ext-apps",
    ])
}

#[test]
fn the_review_app_in_an_sdk_host_rejects_a_hunk_with_a_reason_and_applies_the_rest() {
    let Some(tools) = browser_tools() else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    let numbers: String = (1..=12).map(|n| format!("{n}\n")).collect();
    std::fs::write(root.path().join("a.txt"), &numbers).unwrap();
    std::fs::write(root.path().join("b.txt"), "b\n").unwrap();
    let home = tempfile::tempdir().unwrap();

    let run = node_script("mcp_app_host.cjs", &tools, (root.path(), home.path()), &[]);

    // The server and the tool name the app; the host read it as an MCP App page.
    assert_eq!(
        run["serverExtensions"]["io.modelcontextprotocol/ui"],
        json!({"mimeTypes": ["text/html;profile=mcp-app"]})
    );
    assert_eq!(run["resourceUri"], "ui://resolve/review");
    assert_eq!(run["mimeType"], "text/html;profile=mcp-app");
    // The view ran inside a sandbox proxy of another origin than the host page's.
    assert!(
        run["sandboxOrigin"]
            .as_str()
            .unwrap()
            .starts_with("http://localhost:"),
        "{run}"
    );
    // The app rendered the tool result: its files and hunk addresses.
    assert_eq!(run["files"], json!(["a.txt", "b.txt"]));
    assert_eq!(run["addresses"], json!(["a.txt#1", "a.txt#2", "b.txt#1"]));
    // Its one decision went through the host to `resolve`, with the rejected hunk left out.
    let calls: Vec<&Value> = run["relayed"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|call| call["method"] == "tools/call")
        .collect();
    assert_eq!(calls.len(), 1, "{run}");
    assert_eq!(calls[0]["name"], "resolve");
    assert_eq!(calls[0]["arguments"]["action"], "apply");
    assert_eq!(
        calls[0]["arguments"]["extra"],
        json!({"id": "pending-action:apply_patch:1", "except": ["a.txt#2"]})
    );
    let reason = "Words read better. Rejected a.txt#2 (Keep the number.).";
    assert_eq!(calls[0]["arguments"]["reason"], reason);
    assert_starts_with(run["status"].as_str().unwrap(), "Done: applied");
    assert_eq!(run["decideHidden"], true);
    // After the decision the page shows what `resolve` returned.
    assert_eq!(
        run["resultText"],
        "Applied patch to 2 files.\nApplied 1 of 2 hunks in a.txt; dropped a.txt#2."
    );
    assert!(
        run["modelContext"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("applied"),
        "{run}"
    );
    assert!(
        run["summary"].as_str().unwrap().ends_with(" · applied"),
        "{run}"
    );
    assert_eq!(run["external"], json!([]), "nothing came from outside");
    assert_eq!(
        run["cspViolations"],
        json!([]),
        "the page runs under the default CSP"
    );

    // The files, byte for byte: the first hunk of a.txt and b.txt landed, a.txt#2 did not.
    assert_eq!(
        std::fs::read_to_string(root.path().join("a.txt")).unwrap(),
        numbers.replacen("1\n", "one\n", 1)
    );
    assert_eq!(
        std::fs::read_to_string(root.path().join("b.txt")).unwrap(),
        "B\n"
    );

    // The history says who decided, why, and what was left out.
    let log = Command::new(env!("CARGO_BIN_EXE_resolve"))
        .args(["log", "--json", "--root"])
        .arg(root.path())
        .env("HOME", home.path())
        .output()
        .unwrap();
    assert!(
        log.status.success(),
        "{}",
        String::from_utf8_lossy(&log.stderr)
    );
    let log: Value = serde_json::from_slice(&log.stdout).unwrap();
    let entry = &log["history"][0];
    assert_eq!(log["history"].as_array().unwrap().len(), 1, "{log}");
    assert_eq!(entry["id"], run["pendingId"], "{entry}");
    assert_eq!(entry["state"], "applied", "{entry}");
    assert_eq!(entry["appliedFiles"], json!(["a.txt", "b.txt"]), "{entry}");
    assert_eq!(
        entry["review"]["hunks"],
        json!([{"path": "a.txt", "hunks": 2, "landed": [1], "rejected": [{"hunk": 2}]}]),
        "{entry}"
    );
    // The server cannot tell the app's `resolve` from the model's: MCP Apps gives no marker.
    assert_eq!(entry["decidedBy"], "model", "{entry}");
    assert_eq!(entry["reason"], reason, "{entry}");
    assert_eq!(
        entry["extra"],
        json!({"id": "pending-action:apply_patch:1", "except": ["a.txt#2"]}),
        "{entry}"
    );
    assert_starts_with(entry["resolvedBy"].as_str().unwrap(), "mcp:");
}
