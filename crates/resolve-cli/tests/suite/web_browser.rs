//! `resolve review --web` in a real browser: Chromium (the system's, `RESOLVE_CHROMIUM`) driven
//! by puppeteer-core (`RESOLVE_PUPPETEER_DIR`) through `tests/web/review_page.cjs`. Without them
//! the tests fail under CI (`CI` set) and are skipped loudly elsewhere. Screenshots of the main
//! screens go to `RESOLVE_SCREENSHOTS` (CI keeps them as artifacts).

use resolve_test_support::text::{assert_contains, assert_starts_with};
use std::path::{Path, PathBuf};
use std::process::Command;

use pretty_assertions::assert_eq;
use resolve_test_support::McpChild;
use serde_json::{Value, json};

use super::common::Workspace;
use super::web::WebReview;

/// The browser and puppeteer-core, or `None` (skipped) outside CI when one is missing.
fn browser_tools() -> Option<(PathBuf, PathBuf)> {
    browser_tools_with(&["puppeteer-core"])
}

/// The browser and the npm directory holding `packages`, or `None` (skipped) outside CI when
/// one is missing.
pub(super) fn browser_tools_with(packages: &[&str]) -> Option<(PathBuf, PathBuf)> {
    let chromium = std::env::var_os("RESOLVE_CHROMIUM")
        .map_or_else(|| PathBuf::from("/usr/bin/chromium"), PathBuf::from);
    let npm = resolve_test_support::web_npm_dir();
    let node = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success());
    let modules = npm.join("node_modules");
    let installed = packages
        .iter()
        .all(|package| modules.join(package).is_dir());
    if chromium.is_file() && installed && node {
        return Some((chromium, npm));
    }
    let message = format!(
        "the browser tests need node, Chromium at {} and {} under {} (see .ci/run)",
        chromium.display(),
        packages.join(", "),
        npm.display()
    );
    assert!(std::env::var_os("CI").is_none(), "{message}");
    eprintln!("SKIPPED: {message}");
    None
}

/// Where the screenshots go.
pub(super) fn screenshots() -> PathBuf {
    let dir = std::env::var_os("RESOLVE_SCREENSHOTS").map_or_else(
        || PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("review-web-screenshots"),
        PathBuf::from,
    );
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Run the page script for `scenario` against `web`; its JSON line of measurements.
fn drive(workspace: &Workspace, web: &WebReview, scenario: &str) -> Value {
    let tools = browser_tools().expect("checked by the caller");
    node_script(
        "review_page.cjs",
        &tools,
        (workspace.root(), workspace.home()),
        &[("REVIEW_URL", &web.url), ("SCENARIO", scenario)],
    )
}

/// Run `tests/web/SCRIPT` under node with the browser `tools` (Chromium, the npm directory),
/// the binary, the workspace `root` and `HOME` (`at`), the screenshot directory and `env`; it
/// must succeed; its last line of output as JSON.
pub(super) fn node_script(
    script: &str,
    (chromium, npm): &(PathBuf, PathBuf),
    (root, home): (&Path, &Path),
    env: &[(&str, &str)],
) -> Value {
    let output = Command::new("node")
        .arg(
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("tests/web")
                .join(script),
        )
        .env("RESOLVE_CHROMIUM", chromium)
        .env("RESOLVE_PUPPETEER_DIR", npm)
        .env("SCREENSHOTS", screenshots())
        .env("RESOLVE_BIN", env!("CARGO_BIN_EXE_resolve"))
        .env("RESOLVE_ROOT", root)
        .env("HOME", home)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the script {script} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(stdout.lines().last().unwrap_or("")).unwrap()
}

/// A `resolve mcp` connection of `workspace` (the model's), handshake done.
pub(super) struct Connection(McpChild);

impl Connection {
    pub(super) fn open(workspace: &Workspace) -> Self {
        Self(McpChild::start(workspace.command(&["mcp"]), "web-test"))
    }

    /// The text of a tool call's result.
    pub(super) fn tool(&mut self, name: &str, arguments: Value) -> String {
        let result = self.0.call(name, arguments);
        result["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("{result}"))
            .to_owned()
    }
}

#[test]
fn a_review_in_the_browser_lands_what_the_reviewer_chose_and_the_model_hears_it() {
    if browser_tools().is_none() {
        return;
    }
    let workspace = Workspace::with(&[
        ("src/main.rs", "fn main() { foo(1); }\n"),
        (
            "src/lib.rs",
            "fn f() { foo(2); }\n\n\n\n\n\n\n\n\nfn g() { foo(3); }\n",
        ),
        ("other.rs", "fn h() { baz(1); }\n"),
    ]);
    let mut model = Connection::open(&workspace);
    let staged = model.tool(
        "ast_edit",
        json!({"ops": [{"pat": "foo($A)", "out": "bar($A)"}], "paths": ["src"]}),
    );
    assert!(staged.starts_with("Staged as a preview"), "{staged}");
    let web = WebReview::start(&workspace);

    let measured = drive(&workspace, &web, "flow");
    assert_starts_with(measured["applied"].as_str().unwrap(), "Applied");

    assert_eq!(
        workspace.bytes("src/main.rs"),
        b"fn main() { bar(1); println!(\"amended\"); }\n"
    );
    assert_eq!(
        workspace.bytes("src/lib.rs"),
        b"fn f() { bar(2); }\n\n\n\n\n\n\n\n\nfn g() { foo(3); }\n"
    );
    let log = workspace.run_ok(&["log"]).stdout;
    assert!(
        log.contains("[kept src/lib.rs#1, src/main.rs#1; rejected src/lib.rs#2]")
            || log.contains("rejected src/lib.rs#2"),
        "{log}"
    );
    assert_contains(&log, "amended src/main.rs");
    assert_contains(&log, "Keep g; f and main move.");
    assert_contains(&log, "commented src/main.rs:1, src/lib.rs:1");
    let history = workspace.run_ok(&["log", "--json"]).stdout;
    let history: Value = serde_json::from_str(history.trim()).unwrap();
    let comments = history["history"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|entry| entry.pointer("/review/comments"))
        .unwrap_or_else(|| panic!("no comments kept: {history}"));
    assert_eq!(
        comments,
        &json!([
            {"path": "src/main.rs", "line": 1, "side": "new", "text": "fn main() { bar(1); }", "comment": "Why main?"},
            {"path": "src/lib.rs", "line": 1, "side": "new", "text": "fn f() { bar(2); }", "comment": "Is bar safe here?"}
        ])
    );

    // The staging connection's next tool result carries the reviewer's note.
    let next = model.tool("ls", json!({}));
    assert_contains(&next, "rejected src/lib.rs#2");
    assert_contains(&next, "g stays on foo.");
    assert_contains(&next, "The reviewer amended src/main.rs");
    assert_contains(&next, "Keep g; f and main move.");
    assert_contains(
        &next,
        "The reviewer commented on src/lib.rs:1, the line `fn f() { bar(2); }`: \"Is bar safe here?\"",
    );
}

#[test]
fn a_review_in_progress_in_the_browser_survives_closing_the_page() {
    if browser_tools().is_none() {
        return;
    }
    let workspace = Workspace::with(&[
        ("a.txt", "a\n"),
        ("b.txt", "b\n"),
        (
            "change.patch",
            "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** Update File: b.txt\n@@\n-b\n+B\n*** End Patch\n",
        ),
    ]);
    let patch = workspace.path("change.patch");
    workspace.run_ok(&["patch", patch.to_str().unwrap()]);
    let web = WebReview::start(&workspace);
    assert_eq!(drive(&workspace, &web, "resume"), json!({"resumed": true}));
    // The marks are saved in the store, not in the page: nothing landed.
    assert_eq!(workspace.bytes("b.txt"), b"b\n");
    let drafts: Vec<_> = std::fs::read_dir(workspace.path(".resolve/reviews"))
        .unwrap()
        .collect();
    assert_eq!(drafts.len(), 1, "one review in progress, of the one action");
}

#[test]
fn a_preview_of_two_thousand_files_shows_without_freezing_the_page() {
    if browser_tools().is_none() {
        return;
    }
    let files: Vec<(String, String)> = (0..2000)
        .map(|n| {
            (
                format!("src/m{n:04}.rs"),
                format!("fn f{n}() {{ foo({n}); }}\n"),
            )
        })
        .collect();
    let borrowed: Vec<(&str, &str)> = files
        .iter()
        .map(|(path, text)| (path.as_str(), text.as_str()))
        .collect();
    let workspace = Workspace::with(&borrowed);
    workspace.run_ok(&[
        "ast-edit",
        "-p",
        "foo($A)",
        "-r",
        "bar($A)",
        "--max-files",
        "5000",
        "src",
    ]);
    let web = WebReview::start(&workspace);
    let measured = drive(&workspace, &web, "large");
    eprintln!("2,000-file page: {measured}");
}
