//! Two agents on one file (#29 §2, §3): MCP connections, each its own origin, stage edits to
//! one file at once; the first applies; the second is told once, at its next tool result, that
//! its preview's file moved and still rebases, then applies and rebases cleanly; a third whose
//! preview touched the same lines is told which hunk now conflicts, and its apply reports the
//! conflict and writes nothing.

use serde_json::json;

use super::common::{Connection, Workspace, assert_error_starting, is_error, pending_id, text};

const NINE: &str = "a\nb\nc\nd\ne\nf\ng\nh\ni\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_connections_land_edits_to_one_file_and_a_third_on_the_same_lines_conflicts() {
    let workspace = Workspace::with(&[("a.txt", NINE)]);
    let (first, second, third) = tokio::join!(
        Connection::open(&workspace),
        Connection::open(&workspace),
        Connection::open(&workspace)
    );
    // All three stage at once, against the same bytes.
    let (one, two, three) = tokio::join!(
        first.stage_edit("a.txt", "b\n", "B\n"),
        second.stage_edit("a.txt", "h\n", "H\n"),
        third.stage_edit("a.txt", "b\n", "bee\n"),
    );
    for staged in [&one, &two, &three] {
        assert!(!is_error(staged), "{}", text(staged));
    }

    let applied = first.resolve("apply", "Mine first.").await;
    assert_eq!(text(&applied), "Applied edit to a.txt.");

    // The second hears that its file moved, once, before it applies.
    let told = second.call("ls", json!({})).await;
    assert!(
        text(&told).contains(&format!(
            "a.txt changed since you staged {} (Edit: a.txt). Your preview still rebases onto those changes cleanly",
            pending_id(&two)
        )),
        "{}",
        text(&told)
    );
    let again = second.call("ls", json!({})).await;
    assert!(
        !text(&again).contains("changed since you staged"),
        "told once: {}",
        text(&again)
    );
    let rebased = second.resolve("apply", "Mine second.").await;
    assert!(!is_error(&rebased), "{}", text(&rebased));
    assert!(
        text(&rebased).contains("Rebased a.txt onto changes made since the preview."),
        "{}",
        text(&rebased)
    );
    assert_eq!(workspace.read("a.txt"), "a\nB\nc\nd\ne\nf\ng\nH\ni\n");

    // The third hears which of its hunks conflicts, with which lines.
    let told = third.call("ls", json!({})).await;
    for expected in [
        &format!(
            "a.txt changed since you staged {} (Edit: a.txt). Your preview now conflicts with those changes",
            pending_id(&three)
        ),
        "a.txt:2 (preview) against a.txt:2 (current):",
        "  | B",
        "  | bee",
    ] {
        assert!(
            text(&told).contains(expected),
            "{expected}\n{}",
            text(&told)
        );
    }
    let refused = third.resolve("apply", "Mine third.").await;
    assert_error_starting(&refused, "Preview is stale: `a.txt` changed");
    assert!(
        !text(&refused).contains("changed since you staged"),
        "told once: {}",
        text(&refused)
    );
    assert_eq!(
        workspace.read("a.txt"),
        "a\nB\nc\nd\ne\nf\ng\nH\ni\n",
        "the conflict writes nothing"
    );
    assert_eq!(workspace.store().pending().unwrap().len(), 1);
}
