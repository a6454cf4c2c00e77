//! The `check` tool over MCP: listed only when a check command is configured, run on the
//! connection's head preview with the configured command, its outcome in the pending
//! resource; `[check] require = true` holding for the model's `resolve`; and a command from a
//! configuration the person has not trusted offered but never run until it is trusted.

use rmcp::model::{ReadResourceRequestParams, ResourceContents};
use serde_json::json;

use super::common::{
    Connection, Workspace, assert_error_containing, details, is_error, pending_id, reminds, text,
};

const CONFIG: &str =
    "[check]\ncommand = [\"sh\", \"-c\", \"grep -q A a.txt && echo tests pass\"]\nrequire = true\n";

async fn tool_names(connection: &Connection) -> Vec<String> {
    connection
        .client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|tool| tool.name.to_string())
        .collect()
}

#[tokio::test]
async fn check_is_listed_only_when_a_command_is_configured() {
    let plain = Workspace::with(&[("a.txt", "a\n")]);
    let connection = Connection::open(&plain).await;
    assert!(!tool_names(&connection).await.contains(&"check".to_owned()));
    let configured = Workspace::with(&[("a.txt", "a\n"), (".resolve/config.toml", CONFIG)]);
    let connection = Connection::open(&configured).await;
    let names = tool_names(&connection).await;
    assert_eq!(names[names.len() - 2..], ["check", "resolve"]);
}

#[tokio::test]
async fn the_model_checks_its_preview_then_applies_it_once_the_check_passed() {
    let workspace = Workspace::with(&[("a.txt", "a\n"), (".resolve/config.toml", CONFIG)]);
    workspace.trust();
    let connection = Connection::open(&workspace).await;
    connection.stage_edit("a.txt", "a", "A").await;
    // `require = true`: the model's apply is refused until a check passes.
    let refused = connection.resolve("apply", "Looks right.").await;
    assert_error_containing(
        &refused,
        "has not been checked, and this apply requires a passing check",
    );
    assert_eq!(workspace.read("a.txt"), "a\n");
    // The model cannot choose the command.
    let chosen = connection
        .call("check", json!({"command": ["touch", "pwned"]}))
        .await;
    assert!(is_error(&chosen), "{}", text(&chosen));
    assert!(!workspace.path("pwned").exists());

    let checked = connection.call("check", json!({})).await;
    assert!(!is_error(&checked), "{}", text(&checked));
    assert!(
        text(&checked).contains("✓ checked: `sh -c 'grep -q A a.txt && echo tests pass'` passed"),
        "{}",
        text(&checked)
    );
    assert!(text(&checked).contains("tests pass"), "{}", text(&checked));
    assert!(reminds(&checked), "the preview is still pending");
    assert_eq!(workspace.read("a.txt"), "a\n", "every file put back");
    let id = pending_id(&checked);
    assert_eq!(details(&checked)["check"]["passed"], true);

    let resource = connection
        .client
        .read_resource(ReadResourceRequestParams::new(format!(
            "resolve://pending/{id}"
        )))
        .await
        .unwrap();
    let ResourceContents::TextResourceContents { text: shown, .. } = &resource.contents[0] else {
        panic!("expected text");
    };
    assert!(shown.contains("✓ checked"), "{shown}");

    let applied = connection.resolve("apply", "The check passed.").await;
    assert!(!is_error(&applied), "{}", text(&applied));
    assert_eq!(workspace.read("a.txt"), "A\n");
}

#[tokio::test]
async fn an_untrusted_check_command_is_a_tool_error_until_the_person_trusts_the_file() {
    let workspace = Workspace::with(&[
        ("a.txt", "a\n"),
        (
            ".resolve/config.toml",
            "[check]\ncommand = [\"sh\", \"-c\", \"touch marker && grep -q A a.txt\"]\n",
        ),
    ]);
    // The server starts and offers the tool; the file is not trusted.
    let connection = Connection::open(&workspace).await;
    assert!(tool_names(&connection).await.contains(&"check".to_owned()));
    connection.stage_edit("a.txt", "a", "A").await;
    let refused = connection.call("check", json!({})).await;
    assert_error_containing(&refused, "is not trusted");
    assert!(
        text(&refused).contains("`sh -c 'touch marker && grep -q A a.txt'` ([check])"),
        "{}",
        text(&refused)
    );
    assert!(
        text(&refused).contains("resolve trust --root"),
        "{}",
        text(&refused)
    );
    assert!(!workspace.path("marker").exists(), "nothing ran");
    // Trusted while the server runs: the next call runs it.
    workspace.trust();
    let checked = connection.call("check", json!({})).await;
    assert!(!is_error(&checked), "{}", text(&checked));
    assert!(workspace.path("marker").exists());
}
