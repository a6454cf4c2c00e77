//! Settling a conflict in `resolve review` through a real terminal (#29 §2): a preview whose
//! file changed since shows each conflicting hunk with the base's lines, the current ones and the preview's; `P`
//! takes the preview's side (an amendment, as `resolve amend --take preview`), the file then
//! shows its hunks, and `a` applies it cleanly.
//!
//! Without `tmux` the test fails under CI (`CI` set) and is skipped loudly elsewhere.

#![allow(clippy::print_stderr, reason = "tests explain skips on stderr")]

use crate::tmux_harness::{TmuxRun, resolve_ok, tmux_available};

#[test]
fn a_conflicting_hunk_shows_base_current_and_preview_and_p_settles_it_so_it_applies() {
    if !tmux_available() {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let nine = "a\nb\nc\nd\ne\nf\ng\nh\ni\n";
    std::fs::write(root.path().join("a.txt"), nine).unwrap();
    resolve_ok(
        root.path(),
        &["write", "a.txt", "--content", "a\nB\nc\nd\ne\nf\ng\nH\ni\n"],
    );
    // Since the preview, `b` changed differently (a conflict) and `e` changed (clean).
    std::fs::write(root.path().join("a.txt"), "a\nX\nc\nd\nE\nf\ng\nh\ni\n").unwrap();

    let tmux = TmuxRun::resolve("", root.path(), "review");
    let screen = tmux.wait_for("the conflict", |screen| {
        screen.contains("current (line 2):")
    });
    for expected in [
        "a.txt  conflicts since the preview (1)",
        "C: take the current lines   P: take the preview's",
        "conflict 1: base:",
        "  | b",
        "  | X",
        "preview (line 2):",
        "  | B",
    ] {
        assert!(screen.contains(expected), "{expected}\n{screen}");
    }

    tmux.keys(&["P"]);
    tmux.wait_for("the settled file", |screen| {
        screen.contains("Settled a.txt: 1 conflicting hunk took the preview side")
    });
    assert_eq!(
        std::fs::read_to_string(root.path().join("a.txt")).unwrap(),
        "a\nX\nc\nd\nE\nf\ng\nh\ni\n",
        "settling writes nothing"
    );
    tmux.keys(&["a"]);
    tmux.answer("reason", "Take the preview's b.");
    tmux.wait_exit("the review to end");
    assert_eq!(
        std::fs::read_to_string(root.path().join("a.txt")).unwrap(),
        "a\nB\nc\nd\nE\nf\ng\nH\ni\n"
    );
    let log: serde_json::Value =
        serde_json::from_str(&resolve_ok(root.path(), &["log", "--json"])).unwrap();
    assert_eq!(log["history"][0]["state"], "applied");
    assert_eq!(
        log["history"][0]["amendments"].as_array().map(Vec::len),
        Some(1)
    );
}
