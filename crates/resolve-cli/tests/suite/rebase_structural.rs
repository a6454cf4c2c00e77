//! An `ast_edit` preview whose file moved after it was staged (#29 §2), through the binary: the
//! rewrite runs again on the current bytes and lands when it finds the same matches, even where
//! a merge by lines would conflict; when matches appeared or vanished, the merge by lines
//! decides, and a conflict names them.

use pretty_assertions::assert_eq;
use resolve_test_support::text::assert_contains;

use super::common::Workspace;

const TWO_CALLS: &str = "fn main() {\n    foo(1);\n    foo(2);\n}\n";

/// A workspace whose `a.rs` holds two `foo` calls, with their rewrite to `bar` staged.
fn two_calls_rewrite_staged() -> Workspace {
    let workspace = Workspace::with(&[("a.rs", TWO_CALLS)]);
    workspace.run_ok(&["ast-edit", "-p", "foo($A)", "-r", "bar($A)", "a.rs"]);
    workspace
}

#[test]
fn a_reformatted_file_takes_its_rewrite_where_the_line_merge_would_conflict() {
    let workspace = two_calls_rewrite_staged();
    // Every line re-indented, and a blank line between the calls: each changed line of the
    // preview changed differently since, so a merge by lines conflicts.
    let reformatted = "fn main()\n{\n\tfoo(1);\n\n\tfoo(2);\n}\n";
    workspace.write("a.rs", reformatted.as_bytes());
    assert_eq!(
        resolve_edit::merge_lines(
            reformatted.as_bytes(),
            TWO_CALLS.as_bytes(),
            b"fn main() {\n    bar(1);\n    bar(2);\n}\n"
        )
        .conflicts
        .len(),
        1,
        "the merge by lines alone conflicts"
    );
    let pending = workspace.run_ok(&["pending", "--json"]);
    let json: serde_json::Value = serde_json::from_str(&pending.stdout).unwrap();
    assert_eq!(
        json["pending"][0]["rebase"],
        serde_json::json!({"state": "rebases", "rebasedFiles": ["a.rs"]})
    );
    let run = workspace.run_ok(&["apply", "--reason", "Rename the calls."]);
    assert_contains(
        &run.stdout,
        "Rebased a.rs onto changes made since the preview (the rewrite ran again on its current content and found the same matches).",
    );
    assert_eq!(
        workspace.read("a.rs"),
        "fn main()\n{\n\tbar(1);\n\n\tbar(2);\n}\n"
    );
    assert!(workspace.pending_ids().is_empty());
}

#[test]
fn a_match_that_appeared_falls_back_to_the_line_merge_which_lands_when_clean() {
    let workspace = two_calls_rewrite_staged();
    workspace.write(
        "a.rs",
        b"fn main() {\n    foo(1);\n    foo(2);\n}\nfn more() { foo(9); }\n",
    );
    let run = workspace.run_ok(&["apply", "--reason", "Go."]);
    assert_contains(
        &run.stdout,
        "Rebased a.rs onto changes made since the preview.",
    );
    // The line merge keeps the new call as it was written: the preview never saw it.
    assert_eq!(
        workspace.read("a.rs"),
        "fn main() {\n    bar(1);\n    bar(2);\n}\nfn more() { foo(9); }\n"
    );
}

#[test]
fn a_conflict_after_matches_moved_names_those_that_appeared_and_vanished() {
    let workspace = two_calls_rewrite_staged();
    let moved = "fn main() {\n\tfoo(1);\n\tfoo(3);\n}\n";
    workspace.write("a.rs", moved.as_bytes());
    let run = workspace.run_fails(&["apply", "--reason", "Go."]);
    for expected in [
        "`a.rs`: the rewrite no longer finds the preview's matches, so it was merged by lines.",
        "  appeared: `foo(3)` at line 3",
        "  vanished: `foo(2)` at line 3",
        "a.rs:2 (preview) against a.rs:2 (current):",
    ] {
        assert!(run.stderr.contains(expected), "{expected}\n{}", run.stderr);
    }
    assert_eq!(workspace.read("a.rs"), moved, "nothing is written");
    assert_eq!(workspace.pending_ids().len(), 1);
}
