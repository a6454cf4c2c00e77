//! A preview whose files moved after it was staged (#29 §1), through the binary: a clean
//! three-way merge lands and says so, a conflict writes nothing and shows both sides,
//! `--no-rebase` keeps the strict check, and undo restores what the file held just before.

use pretty_assertions::assert_eq;
use resolve_test_support::text::assert_contains;

use super::common::{Workspace, apply_at_every_crash_point};

const FIVE: &str = "a\nb\nc\nd\ne\n";

fn edit(workspace: &Workspace, path: &str, old: &str, new: &str) {
    workspace.run_ok(&["edit", path, "--old", old, "--new", new]);
}

#[test]
fn a_clean_rebase_lands_says_so_and_undo_restores_the_bytes_from_just_before() {
    let workspace = Workspace::with(&[("a.txt", FIVE)]);
    edit(&workspace, "a.txt", "b\n", "B\n");
    workspace.write("a.txt", b"a\nb\nc\nd\nE\n");
    let run = workspace.run_ok(&["apply", "--reason", "Take it."]);
    assert_contains(
        &run.stdout,
        "Rebased a.txt onto changes made since the preview.",
    );
    assert_eq!(workspace.read("a.txt"), "a\nB\nc\nd\nE\n");
    assert!(workspace.pending_ids().is_empty());
    workspace.run_ok(&["undo"]);
    assert_eq!(workspace.read("a.txt"), "a\nb\nc\nd\nE\n");
}

/// `a.txt` and `b.txt` of [`FIVE`] lines, and one staged patch turning `b` into `B` in both.
fn both_b_to_upper_staged() -> Workspace {
    let workspace = Workspace::with(&[("a.txt", FIVE), ("b.txt", FIVE)]);
    let patch = workspace.home().join("changes.patch");
    std::fs::write(
        &patch,
        "*** Begin Patch\n*** Update File: a.txt\n@@\n a\n-b\n+B\n c\n*** Update File: b.txt\n@@\n a\n-b\n+B\n c\n*** End Patch\n",
    )
    .unwrap();
    workspace.run_ok(&["patch", patch.to_str().unwrap()]);
    workspace
}

#[test]
fn a_conflict_writes_nothing_keeps_the_action_pending_and_shows_both_sides() {
    // Two files in one action: one rebases cleanly, the other conflicts.
    let workspace = both_b_to_upper_staged();
    assert_eq!(workspace.pending_ids().len(), 1);
    workspace.write("a.txt", b"a\nb\nc\nd\nE\n");
    workspace.write("b.txt", b"a\nX\nc\nd\ne\n");
    let run = workspace.run_fails(&["apply", "--reason", "Go."]);
    assert_contains(&run.stderr, "Preview is stale: `b.txt` changed");
    assert_contains(&run.stderr, "b.txt:2 (preview) against b.txt:2 (current):");
    assert_contains(&run.stderr, "  | X");
    assert_contains(&run.stderr, "  | B");
    assert_eq!(
        workspace.read("a.txt"),
        "a\nb\nc\nd\nE\n",
        "nothing is written"
    );
    assert_eq!(workspace.read("b.txt"), "a\nX\nc\nd\ne\n");
    assert_eq!(workspace.pending_ids().len(), 1);
}

#[test]
fn no_rebase_refuses_a_file_that_moved_even_when_it_would_merge() {
    let workspace = Workspace::with(&[("a.txt", FIVE)]);
    edit(&workspace, "a.txt", "b\n", "B\n");
    workspace.write("a.txt", b"a\nb\nc\nd\nE\n");
    let run = workspace.run_fails(&["apply", "--no-rebase", "--reason", "Strict."]);
    assert_contains(
        &run.stderr,
        "Preview is stale: `a.txt` changed since the preview was staged; nothing was written.",
    );
    assert_eq!(workspace.read("a.txt"), "a\nb\nc\nd\nE\n");
    assert_eq!(workspace.pending_ids().len(), 1);
}

#[test]
fn crlf_and_a_missing_final_newline_are_kept_byte_for_byte() {
    let workspace = Workspace::with(&[("a.txt", "a\r\nb\r\nc\r\nd")]);
    edit(&workspace, "a.txt", "b\r\n", "B\r\n");
    workspace.write("a.txt", b"a\r\nb\r\nc\r\nD");
    workspace.run_ok(&["apply", "--reason", "Keep the line ends."]);
    assert_eq!(workspace.read("a.txt"), "a\r\nB\r\nc\r\nD");
}

#[test]
fn a_created_file_that_now_exists_is_clean_when_equal_and_a_conflict_otherwise() {
    let workspace = Workspace::new();
    workspace.run_ok(&["write", "new.txt", "--content", "hello\n"]);
    workspace.write("new.txt", b"other\n");
    let run = workspace.run_fails(&["apply", "--reason", "Go."]);
    assert_contains(
        &run.stderr,
        "`new.txt` was created since the preview, with other content.",
    );
    assert_eq!(workspace.read("new.txt"), "other\n");
    workspace.write("new.txt", b"hello\n");
    workspace.run_ok(&["apply", "--reason", "Go."]);
    assert_eq!(workspace.read("new.txt"), "hello\n");
    assert!(workspace.pending_ids().is_empty());
}

#[test]
fn pending_and_show_tell_fresh_rebases_and_conflicts_in_text_and_json() {
    let workspace = Workspace::with(&[("a.txt", FIVE)]);
    edit(&workspace, "a.txt", "b\n", "B\n");
    let state = |workspace: &Workspace| -> serde_json::Value {
        let run = workspace.run_ok(&["pending", "--json"]);
        let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        json["pending"][0]["rebase"].clone()
    };
    assert_eq!(state(&workspace), serde_json::json!({"state": "fresh"}));

    workspace.write("a.txt", b"a\nb\nc\nd\nE\n");
    assert_eq!(
        state(&workspace),
        serde_json::json!({"state": "rebases", "rebasedFiles": ["a.txt"]})
    );
    let run = workspace.run_ok(&["pending"]);
    assert_contains(&run.stdout, "↻ rebases");

    workspace.write("a.txt", b"a\nX\nc\nd\ne\n");
    let conflicts = state(&workspace);
    assert_eq!(conflicts["state"], "conflicts");
    assert_eq!(conflicts["conflicts"][0]["path"], "a.txt");
    let run = workspace.run_ok(&["show"]);
    assert_contains(&run.stdout, "conflicts: applying it now writes nothing.");
    assert_contains(&run.stdout, "a.txt:2 (preview) against a.txt:2 (current):");
    let run = workspace.run_ok(&["show", "--json"]);
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(json["rebase"]["state"], "conflicts");
    assert_eq!(
        workspace.read("a.txt"),
        "a\nX\nc\nd\ne\n",
        "looking writes nothing"
    );
}

#[test]
fn a_rebased_apply_killed_at_every_crash_point_lands_every_merged_file_or_none() {
    // Both files moved since the preview; both rebase cleanly.
    let moved = "a\nb\nc\nd\nE\n";
    let merged = "a\nB\nc\nd\nE\n";
    apply_at_every_crash_point(
        || {
            let workspace = both_b_to_upper_staged();
            workspace.write("a.txt", moved.as_bytes());
            workspace.write("b.txt", moved.as_bytes());
            workspace
        },
        &[],
        &[("a.txt", moved, merged), ("b.txt", moved, merged)],
    );
}
