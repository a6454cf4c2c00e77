//! Settling a file whose preview conflicts with what changed since (#29 §2), through the
//! binary: `resolve amend --take current|preview` merges the preview onto the file as it is
//! now, each conflicting hunk taking that side, records it as an amendment, and the action then
//! applies as staged.

use pretty_assertions::assert_eq;
use resolve_test_support::process::output_ok;
use resolve_test_support::text::assert_contains;

use super::common::Workspace;

const FIVE: &str = "a\nb\nc\nd\ne\n";
const NINE: &str = "a\nb\nc\nd\ne\nf\ng\nh\ni\n";
const MOVED: &str = "a\nX\nc\nd\nE\nf\ng\nh\ni\n";

/// `a.txt` with a preview changing `b` and `h`, and the file changed since at `b` (a conflict)
/// and at `e` (clean).
fn conflicting() -> Workspace {
    let workspace = Workspace::with(&[("a.txt", NINE)]);
    workspace.run_ok(&["write", "a.txt", "--content", "a\nB\nc\nd\ne\nf\ng\nH\ni\n"]);
    workspace.write("a.txt", MOVED.as_bytes());
    workspace.run_fails(&["apply", "--reason", "Try."]);
    workspace
}

fn state(workspace: &Workspace) -> serde_json::Value {
    let run = workspace.run_ok(&["pending", "--json"]);
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    json["pending"][0]["rebase"]["state"].clone()
}

#[test]
fn take_preview_settles_the_conflict_with_the_previews_lines_and_then_applies_as_staged() {
    let workspace = conflicting();
    assert_eq!(state(&workspace), "conflicts");
    let run = workspace.run_ok(&["amend", "--take", "preview", "a.txt"]);
    assert_contains(
        &run.stdout,
        "1 conflicting hunk took the preview side, merged onto the file as it is now; it is still pending and applies as staged.",
    );
    assert_eq!(workspace.read("a.txt"), MOVED, "amend writes nothing");
    assert_eq!(state(&workspace), "fresh");
    workspace.run_ok(&["apply", "--reason", "Settled."]);
    assert_eq!(workspace.read("a.txt"), "a\nB\nc\nd\nE\nf\ng\nH\ni\n");
    let log = workspace.run_ok(&["log", "--json"]);
    let log: serde_json::Value = serde_json::from_str(&log.stdout).unwrap();
    let entry = &log["history"][0];
    assert_eq!(
        entry["amendments"].as_array().map(Vec::len),
        Some(1),
        "the settlement is an amendment: {entry}"
    );
}

#[test]
fn take_current_keeps_the_current_lines_where_they_conflict_and_the_rest_of_the_preview() {
    let workspace = conflicting();
    workspace.run_ok(&["amend", "--take", "current"]);
    workspace.run_ok(&["apply", "--reason", "Settled."]);
    assert_eq!(workspace.read("a.txt"), "a\nX\nc\nd\nE\nf\ng\nH\ni\n");
}

#[test]
fn a_file_that_rebases_cleanly_has_nothing_to_settle() {
    let workspace = Workspace::with(&[("a.txt", FIVE)]);
    workspace.run_ok(&["edit", "a.txt", "--old", "b\n", "--new", "B\n"]);
    workspace.write("a.txt", b"a\nb\nc\nd\nE\n");
    let run = workspace.run_ok(&["amend", "--take", "current"]);
    assert_contains(
        &run.stdout,
        "a.txt does not conflict with the file as it is now; nothing was amended",
    );
    assert_eq!(state(&workspace), "rebases");
}

#[test]
fn amend_opens_a_conflicting_file_as_the_merge_with_markers_and_the_edited_result_applies() {
    let workspace = conflicting();
    let captured = workspace.home().join("draft.txt");
    let editor = workspace.home().join("editor.sh");
    std::fs::write(
        &editor,
        format!(
            "#!/bin/sh\ncp \"$1\" '{}'\nsed -i -e '/^<<<<<<< current$/d' -e '/^=======$/d' -e '/^>>>>>>> preview$/d' -e 's/^X$/Xb/' -e '/^B$/d' \"$1\"\n",
            captured.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&editor, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    output_ok(
        workspace
            .command(&["amend", "a.txt"])
            .env("VISUAL", &editor),
    );
    assert_eq!(
        std::fs::read_to_string(&captured).unwrap(),
        "a\n<<<<<<< current\nX\n=======\nB\n>>>>>>> preview\nc\nd\nE\nf\ng\nH\ni\n",
        "the draft is the merge onto the current file, the conflict marked"
    );
    assert_eq!(state(&workspace), "fresh");
    workspace.run_ok(&["apply", "--reason", "Resolved by hand."]);
    assert_eq!(workspace.read("a.txt"), "a\nXb\nc\nd\nE\nf\ng\nH\ni\n");
}

#[test]
fn a_result_that_still_holds_conflict_markers_is_refused() {
    let workspace = conflicting();
    let draft = workspace.home().join("draft.txt");
    std::fs::write(
        &draft,
        "a\n<<<<<<< current\nX\n=======\nB\n>>>>>>> preview\n",
    )
    .unwrap();
    let run = workspace.run_fails(&["amend", "a.txt", "--from", draft.to_str().unwrap()]);
    assert_contains(&run.stderr, "still holds conflict markers");
    assert_eq!(state(&workspace), "conflicts");
}
