//! `apply_patch` over MCP: one patch, one preview of every file, landed whole by `resolve`.

use pretty_assertions::assert_eq;
use resolve_edit::PREVIEW_BANNER;
use serde_json::json;

use super::common::{assert_error_containing, connected, details, is_error, reminds, text};

const PATCH: &str = "*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n+2\n*** Add File: b/new.txt\n+hello\n*** Delete File: gone.txt\n*** End Patch\n";

#[tokio::test]
async fn apply_patch_stages_every_file_as_one_preview_and_resolve_lands_them_whole() {
    let (workspace, connection) =
        connected(&[("a.txt", "one\ntwo\n"), ("gone.txt", "bye\n")]).await;
    let staged = connection
        .call("apply_patch", json!({"input": PATCH}))
        .await;
    assert!(!is_error(&staged), "{staged:?}");
    assert!(
        text(&staged).starts_with(PREVIEW_BANNER),
        "{}",
        text(&staged)
    );
    for diff in ["+++ b/a.txt", "+++ b/b/new.txt", "--- a/gone.txt"] {
        assert!(text(&staged).contains(diff), "{diff}: {}", text(&staged));
    }
    assert!(reminds(&staged));
    assert_eq!(
        details(&staged)["pendingId"],
        "pending-action:apply_patch:1"
    );
    assert_eq!(details(&staged)["label"], "Patch: 3 files");
    assert_eq!(workspace.read("a.txt"), "one\ntwo\n");
    assert!(!workspace.path("b/new.txt").exists());

    let applied = connection.resolve("apply", "As asked.").await;
    assert!(!is_error(&applied), "{applied:?}");
    assert_eq!(text(&applied), "Applied patch to 3 files.");
    assert_eq!(workspace.read("a.txt"), "one\n2\n");
    assert_eq!(workspace.read("b/new.txt"), "hello\n");
    assert!(!workspace.path("gone.txt").exists());
}

#[tokio::test]
async fn a_patch_that_does_not_match_is_an_error_result_naming_the_line_and_stages_nothing() {
    let (_workspace, connection) = connected(&[("a.txt", "one\ntwo\nthree\n")]).await;
    let refused = connection
        .call(
            "apply_patch",
            json!({"input": "*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-too\n+2\n*** End Patch"}),
        )
        .await;
    assert_error_containing(&refused, "Nearest candidate: line 1");
    assert_error_containing(&refused, "where the file has `two` (line 2)");
    let malformed = connection
        .call(
            "apply_patch",
            json!({"input": "*** Begin Patch\n*** Update File: a.txt\n"}),
        )
        .await;
    assert!(is_error(&malformed));
    assert_eq!(
        text(&malformed),
        "Invalid patch at line 2: the last line must be `*** End Patch`."
    );
    let unknown = connection
        .call("apply_patch", json!({"patch": PATCH}))
        .await;
    assert!(is_error(&unknown));
    assert!(!reminds(&unknown), "{}", text(&unknown));
}
