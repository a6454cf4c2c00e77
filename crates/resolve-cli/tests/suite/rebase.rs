//! A preview whose files moved after it was staged (#29 §1), through the binary: a clean
//! three-way merge lands and says so, a conflict writes nothing and shows both sides,
//! `--no-rebase` keeps the strict check, and undo restores what the file held just before.

use pretty_assertions::assert_eq;

use super::common::Workspace;

const FIVE: &str = "a\nb\nc\nd\ne\n";

fn edit(workspace: &Workspace, path: &str, old: &str, new: &str) {
    workspace
        .run(&["edit", path, "--old", old, "--new", new])
        .expect_code(0);
}

#[test]
fn a_clean_rebase_lands_says_so_and_undo_restores_the_bytes_from_just_before() {
    let workspace = Workspace::with(&[("a.txt", FIVE)]);
    edit(&workspace, "a.txt", "b\n", "B\n");
    workspace.write("a.txt", b"a\nb\nc\nd\nE\n");
    let run = workspace
        .run(&["apply", "--reason", "Take it."])
        .expect_code(0);
    assert!(
        run.stdout
            .contains("Rebased a.txt onto changes made since the preview."),
        "{}",
        run.stdout
    );
    assert_eq!(workspace.read("a.txt"), "a\nB\nc\nd\nE\n");
    assert!(workspace.pending_ids().is_empty());
    workspace.run(&["undo"]).expect_code(0);
    assert_eq!(workspace.read("a.txt"), "a\nb\nc\nd\nE\n");
}

#[test]
fn a_conflict_writes_nothing_keeps_the_action_pending_and_shows_both_sides() {
    let workspace = Workspace::with(&[("a.txt", FIVE), ("b.txt", FIVE)]);
    // Two files in one action: one rebases cleanly, the other conflicts.
    let patch = workspace.home().join("changes.patch");
    std::fs::write(
        &patch,
        "*** Begin Patch\n*** Update File: a.txt\n@@\n a\n-b\n+B\n c\n*** Update File: b.txt\n@@\n a\n-b\n+B\n c\n*** End Patch\n",
    )
    .unwrap();
    workspace
        .run(&["patch", patch.to_str().unwrap()])
        .expect_code(0);
    assert_eq!(workspace.pending_ids().len(), 1);
    workspace.write("a.txt", b"a\nb\nc\nd\nE\n");
    workspace.write("b.txt", b"a\nX\nc\nd\ne\n");
    let run = workspace.run(&["apply", "--reason", "Go."]).expect_code(1);
    assert!(
        run.stderr.contains("Preview is stale: `b.txt` changed"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("b.txt:2 (preview) against b.txt:2 (current):"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("  | X"), "{}", run.stderr);
    assert!(run.stderr.contains("  | B"), "{}", run.stderr);
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
    let run = workspace
        .run(&["apply", "--no-rebase", "--reason", "Strict."])
        .expect_code(1);
    assert!(
        run.stderr.contains(
            "Preview is stale: `a.txt` changed since the preview was staged; nothing was written."
        ),
        "{}",
        run.stderr
    );
    assert_eq!(workspace.read("a.txt"), "a\nb\nc\nd\nE\n");
    assert_eq!(workspace.pending_ids().len(), 1);
}

#[test]
fn crlf_and_a_missing_final_newline_are_kept_byte_for_byte() {
    let workspace = Workspace::with(&[("a.txt", "a\r\nb\r\nc\r\nd")]);
    edit(&workspace, "a.txt", "b\r\n", "B\r\n");
    workspace.write("a.txt", b"a\r\nb\r\nc\r\nD");
    workspace
        .run(&["apply", "--reason", "Keep the line ends."])
        .expect_code(0);
    assert_eq!(workspace.read("a.txt"), "a\r\nB\r\nc\r\nD");
}

#[test]
fn a_created_file_that_now_exists_is_clean_when_equal_and_a_conflict_otherwise() {
    let workspace = Workspace::new();
    workspace
        .run(&["write", "new.txt", "--content", "hello\n"])
        .expect_code(0);
    workspace.write("new.txt", b"other\n");
    let run = workspace.run(&["apply", "--reason", "Go."]).expect_code(1);
    assert!(
        run.stderr
            .contains("`new.txt` was created since the preview, with other content."),
        "{}",
        run.stderr
    );
    assert_eq!(workspace.read("new.txt"), "other\n");
    workspace.write("new.txt", b"hello\n");
    workspace.run(&["apply", "--reason", "Go."]).expect_code(0);
    assert_eq!(workspace.read("new.txt"), "hello\n");
    assert!(workspace.pending_ids().is_empty());
}

#[test]
fn pending_and_show_tell_fresh_rebases_and_conflicts_in_text_and_json() {
    let workspace = Workspace::with(&[("a.txt", FIVE)]);
    edit(&workspace, "a.txt", "b\n", "B\n");
    let state = |workspace: &Workspace| -> serde_json::Value {
        let run = workspace.run(&["pending", "--json"]).expect_code(0);
        let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        json["pending"][0]["rebase"].clone()
    };
    assert_eq!(state(&workspace), serde_json::json!({"state": "fresh"}));

    workspace.write("a.txt", b"a\nb\nc\nd\nE\n");
    assert_eq!(
        state(&workspace),
        serde_json::json!({"state": "rebases", "rebasedFiles": ["a.txt"]})
    );
    let run = workspace.run(&["pending"]).expect_code(0);
    assert!(run.stdout.contains("↻ rebases"), "{}", run.stdout);

    workspace.write("a.txt", b"a\nX\nc\nd\ne\n");
    let conflicts = state(&workspace);
    assert_eq!(conflicts["state"], "conflicts");
    assert_eq!(conflicts["conflicts"][0]["path"], "a.txt");
    let run = workspace.run(&["show"]).expect_code(0);
    assert!(
        run.stdout
            .contains("conflicts: applying it now writes nothing."),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("a.txt:2 (preview) against a.txt:2 (current):"),
        "{}",
        run.stdout
    );
    let run = workspace.run(&["show", "--json"]).expect_code(0);
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
    let mut crashed = 0;
    for point in 1.. {
        let workspace = Workspace::with(&[("a.txt", FIVE), ("b.txt", FIVE)]);
        let patch = workspace.home().join("changes.patch");
        std::fs::write(
            &patch,
            "*** Begin Patch\n*** Update File: a.txt\n@@\n a\n-b\n+B\n c\n*** Update File: b.txt\n@@\n a\n-b\n+B\n c\n*** End Patch\n",
        )
        .unwrap();
        workspace
            .run(&["patch", patch.to_str().unwrap()])
            .expect_code(0);
        workspace.write("a.txt", moved.as_bytes());
        workspace.write("b.txt", moved.as_bytes());
        let output = workspace
            .command(&["apply", "--reason", "Crash test."])
            .env(resolve_edit::CRASH_AT_ENV, point.to_string())
            .output()
            .unwrap();
        let completed = output.status.success();
        // Any invocation recovers first.
        let pending = workspace.pending_ids();
        let (a, b) = (workspace.read("a.txt"), workspace.read("b.txt"));
        let all_landed = a == merged && b == merged;
        let none_landed = a == moved && b == moved;
        assert!(
            all_landed || none_landed,
            "crash point {point}: a mix after recovery:\n{a}\n{b}"
        );
        if all_landed {
            assert!(
                pending.is_empty(),
                "crash point {point}: landed but pending"
            );
        } else {
            assert_eq!(
                pending.len(),
                1,
                "crash point {point}: rolled back but gone"
            );
            workspace
                .run(&["apply", "--reason", "Again."])
                .expect_code(0);
            assert_eq!(workspace.read("a.txt"), merged);
            assert_eq!(workspace.read("b.txt"), merged);
        }
        if completed {
            break;
        }
        crashed += 1;
    }
    assert!(crashed >= 8, "only {crashed} crash points were reached");
}
