//! Staging, reviewing, applying, discarding and undoing through the binary.

use pretty_assertions::assert_eq;
use serde_json::Value;

use super::common::Workspace;

/// The model's banner, which `--json` keeps in the result's text.
const BANNER: &str = "Staged as a preview — files are NOT modified yet. Call `resolve` with action \"apply\" to apply it or \"discard\" to drop it.";

/// The person's banner on the command line (issue #32 §7): the new pending id.
fn person_banner(id: &str) -> String {
    format!("Staged as {id} — files are NOT modified yet.\n")
}

const LIB: &str = "fn main() {\n    let a = foo(1);\n    let b = foo(foo(2));\n}\n";

fn rewrite_foo(workspace: &Workspace) -> super::common::Run {
    workspace.run(&["ast-edit", "-p", "foo($A)", "-r", "bar($A)", "src"])
}

#[test]
fn ast_edit_stages_a_preview_and_touches_no_file() {
    let workspace = Workspace::with(&[("src/lib.rs", LIB)]);
    let run = rewrite_foo(&workspace).expect_code(0);
    assert!(
        run.stdout
            .starts_with(&person_banner("pending-action:ast_edit:1")),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("--- a/src/lib.rs"), "{}", run.stdout);
    assert!(
        run.stdout.contains("+    let b = bar(foo(2));"),
        "{}",
        run.stdout
    );
    assert_eq!(workspace.read("src/lib.rs"), LIB);
    let pending = workspace.pending_ids();
    assert_eq!(pending.len(), 1);
    assert!(
        pending[0].starts_with("pending-action:ast_edit:"),
        "{pending:?}"
    );
}

#[test]
fn apply_writes_exactly_the_previewed_bytes_outermost_match_only() {
    let workspace = Workspace::with(&[("src/lib.rs", LIB)]);
    rewrite_foo(&workspace).expect_code(0);
    let run = workspace
        .run(&["apply", "--reason", "Rename foo to bar."])
        .expect_code(0);
    assert!(
        run.stdout.contains("Applied 2 replacements in 1 file."),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("Accept: 2 replacements in 1 file ⟦AST Edit⟧"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("Rename foo to bar."), "{}", run.stdout);
    assert_eq!(
        workspace.read("src/lib.rs"),
        "fn main() {\n    let a = bar(1);\n    let b = bar(foo(2));\n}\n"
    );
    assert!(workspace.pending_ids().is_empty());
}

#[test]
fn apply_refuses_a_stale_preview_and_keeps_it_pending() {
    let workspace = Workspace::with(&[
        ("src/lib.rs", LIB),
        ("src/other.rs", "fn x() { foo(3); }\n"),
    ]);
    rewrite_foo(&workspace).expect_code(0);
    workspace.write("src/other.rs", b"fn x() { foo(4); }\n");
    let run = workspace.run(&["apply", "--reason", "Go."]).expect_code(1);
    assert!(run.stderr.contains("Preview is stale:"), "{}", run.stderr);
    assert!(run.stderr.contains("src/other.rs"), "{}", run.stderr);
    assert!(!run.stderr.contains("Apply failed"), "{}", run.stderr);
    assert_eq!(
        workspace.read("src/lib.rs"),
        LIB,
        "no file is written when any file is stale"
    );
    assert_eq!(workspace.read("src/other.rs"), "fn x() { foo(4); }\n");
    assert_eq!(workspace.pending_ids().len(), 1);
}

#[test]
fn stacked_previews_apply_head_first_and_a_second_preview_of_one_file_goes_stale() {
    let workspace = Workspace::with(&[("a.txt", "one\n"), ("b.txt", "two\n")]);
    workspace
        .run(&["edit", "a.txt", "--old", "one", "--new", "uno"])
        .expect_code(0);
    workspace
        .run(&["edit", "b.txt", "--old", "two", "--new", "dos"])
        .expect_code(0);
    workspace
        .run(&["edit", "a.txt", "--old", "one", "--new", "eins"])
        .expect_code(0);
    let pending = workspace.pending_ids();
    assert_eq!(pending.len(), 3);

    let run = workspace
        .run(&["apply", "--reason", "German first."])
        .expect_code(0);
    assert!(
        run.stdout.contains("Applied edit to a.txt."),
        "{}",
        run.stdout
    );
    assert_eq!(workspace.read("a.txt"), "eins\n");
    assert_eq!(workspace.pending_ids(), pending[1..].to_vec());

    let run = workspace
        .run(&["apply", "--reason", "Then Spanish."])
        .expect_code(0);
    assert!(
        run.stdout.contains("Applied edit to b.txt."),
        "{}",
        run.stdout
    );

    let run = workspace
        .run(&["apply", "--reason", "Then Italian."])
        .expect_code(1);
    assert!(
        run.stderr.contains("Preview is stale:") && run.stderr.contains("a.txt"),
        "{}",
        run.stderr
    );
    assert_eq!(workspace.read("a.txt"), "eins\n");
}

#[test]
fn apply_by_id_picks_that_pending_action() {
    let workspace = Workspace::with(&[("a.txt", "one\n"), ("b.txt", "two\n")]);
    workspace
        .run(&["edit", "a.txt", "--old", "one", "--new", "uno"])
        .expect_code(0);
    workspace
        .run(&["edit", "b.txt", "--old", "two", "--new", "dos"])
        .expect_code(0);
    let pending = workspace.pending_ids();
    workspace
        .run(&["apply", "--reason", "Older one.", "--id", &pending[1]])
        .expect_code(0);
    assert_eq!(workspace.read("a.txt"), "uno\n");
    assert_eq!(workspace.read("b.txt"), "two\n");
    assert_eq!(workspace.pending_ids(), vec![pending[0].clone()]);
}

#[test]
fn discard_drops_the_preview_and_records_the_reason() {
    let workspace = Workspace::with(&[("src/lib.rs", LIB)]);
    rewrite_foo(&workspace).expect_code(0);
    let run = workspace
        .run(&["discard", "--reason", "Wrong function."])
        .expect_code(0);
    assert!(
        run.stdout
            .contains("Discarded: AST Edit: 2 replacements in 1 file. Reason: Wrong function."),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("Discard: 2 replacements in 1 file"),
        "{}",
        run.stdout
    );
    assert_eq!(workspace.read("src/lib.rs"), LIB);
    assert!(workspace.pending_ids().is_empty());
    let log = workspace.run(&["log"]).expect_code(0);
    assert!(log.stdout.contains("Wrong function."), "{}", log.stdout);
}

#[test]
fn restaging_a_discarded_change_says_so_with_the_earlier_reason() {
    let workspace = Workspace::with(&[("src/lib.rs", LIB)]);
    rewrite_foo(&workspace).expect_code(0);
    workspace
        .run(&["discard", "--reason", "Wrong function."])
        .expect_code(0);
    let run = rewrite_foo(&workspace).expect_code(0);
    assert!(
        run.stdout
            .contains("identical change was discarded earlier"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("Wrong function."), "{}", run.stdout);
}

#[test]
fn nothing_pending_discard_succeeds_and_apply_fails() {
    let workspace = Workspace::new();
    let run = workspace
        .run(&["discard", "--reason", "Clean up."])
        .expect_code(0);
    assert!(
        run.stdout
            .contains("Nothing to discard; no pending action remains."),
        "{}",
        run.stdout
    );
    let run = workspace.run(&["apply", "--reason", "Go."]).expect_code(1);
    assert!(
        run.stderr
            .contains("No pending action to resolve. Nothing to apply or discard."),
        "{}",
        run.stderr
    );
}

#[test]
fn zero_matches_succeed_with_no_replacements_made_and_stage_nothing() {
    let workspace = Workspace::with(&[("src/lib.rs", LIB)]);
    let run = workspace
        .run(&[
            "ast-edit",
            "-p",
            "nothing_like_this($A)",
            "-r",
            "x($A)",
            "src",
        ])
        .expect_code(0);
    assert!(
        run.stdout.starts_with("No replacements made"),
        "{}",
        run.stdout
    );
    assert!(workspace.pending_ids().is_empty());
}

#[test]
fn an_invalid_pattern_fails_naming_it_and_stages_nothing() {
    let workspace = Workspace::with(&[("src/lib.rs", LIB)]);
    let run = workspace
        .run(&[
            "ast-edit", "-p", "foo(", "-r", "bar()", "--lang", "rust", "src",
        ])
        .expect_code(1);
    assert!(run.stderr.contains("foo("), "{}", run.stderr);
    assert!(workspace.pending_ids().is_empty());
}

#[test]
fn binary_and_non_utf8_files_are_skipped_and_reported() {
    let workspace = Workspace::with(&[("src/lib.rs", LIB)]);
    workspace.write("src/blob.rs", b"fn f() { foo(1); }\0\0\0");
    workspace.write("src/latin1.rs", b"fn f() { foo(1); } // caf\xe9\n");
    let run = rewrite_foo(&workspace).expect_code(0);
    assert!(
        run.stdout.contains("src/blob.rs") && run.stdout.contains("src/latin1.rs"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("--- a/src/blob.rs"), "{}", run.stdout);
    workspace.run(&["apply", "--reason", "Go."]).expect_code(0);
    assert_eq!(
        std::fs::read(workspace.path("src/blob.rs")).unwrap(),
        b"fn f() { foo(1); }\0\0\0"
    );
    assert_eq!(
        std::fs::read(workspace.path("src/latin1.rs")).unwrap(),
        b"fn f() { foo(1); } // caf\xe9\n"
    );
}

#[test]
fn only_applies_the_named_files_and_drops_the_rest() {
    let workspace = Workspace::with(&[
        ("src/a.rs", "fn a() { foo(1); }\n"),
        ("src/b.rs", "fn b() { foo(2); }\n"),
    ]);
    rewrite_foo(&workspace).expect_code(0);
    let run = workspace
        .run(&["apply", "--reason", "Only a.", "--only", "src/a.rs"])
        .expect_code(0);
    assert!(
        run.stdout.contains("Applied 1 replacement in 1 file."),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("Dropped files: src/b.rs"),
        "{}",
        run.stdout
    );
    assert_eq!(workspace.read("src/a.rs"), "fn a() { bar(1); }\n");
    assert_eq!(workspace.read("src/b.rs"), "fn b() { foo(2); }\n");
    assert!(
        workspace.pending_ids().is_empty(),
        "the pending action is consumed"
    );
}

#[test]
fn undo_restores_the_original_bytes_unless_a_file_changed_since() {
    let workspace = Workspace::with(&[("src/lib.rs", LIB)]);
    rewrite_foo(&workspace).expect_code(0);
    workspace.run(&["apply", "--reason", "Go."]).expect_code(0);
    workspace.run(&["undo"]).expect_code(0);
    assert_eq!(workspace.read("src/lib.rs"), LIB);

    rewrite_foo(&workspace).expect_code(0);
    workspace
        .run(&["apply", "--reason", "Again."])
        .expect_code(0);
    workspace.write("src/lib.rs", b"changed by hand\n");
    let run = workspace.run(&["undo"]).expect_code(1);
    assert!(run.stderr.contains("src/lib.rs"), "{}", run.stderr);
    assert_eq!(workspace.read("src/lib.rs"), "changed by hand\n");
}

#[test]
fn show_prints_pending_and_resolved_previews() {
    let workspace = Workspace::with(&[("src/lib.rs", LIB)]);
    rewrite_foo(&workspace).expect_code(0);
    let id = workspace.pending_ids().remove(0);
    let pending = workspace.run(&["show"]).expect_code(0);
    assert!(
        pending.stdout.contains("+    let a = bar(1);"),
        "{}",
        pending.stdout
    );
    workspace
        .run(&["apply", "--reason", "Looks right."])
        .expect_code(0);
    let resolved = workspace.run(&["show", &id]).expect_code(0);
    assert!(
        resolved.stdout.contains("+    let a = bar(1);"),
        "{}",
        resolved.stdout
    );
    assert!(
        resolved.stdout.contains("Looks right."),
        "{}",
        resolved.stdout
    );
    let log = workspace.run(&["log", "--json"]).expect_code(0);
    let log: Value = serde_json::from_str(log.stdout.trim()).unwrap();
    assert_eq!(log["history"][0]["reason"], "Looks right.");
}

#[test]
fn json_output_is_one_object_with_text_error_flag_details_and_pending_id() {
    let workspace = Workspace::with(&[("src/lib.rs", LIB)]);
    let run = workspace
        .run(&[
            "--json", "ast-edit", "-p", "foo($A)", "-r", "bar($A)", "src",
        ])
        .expect_code(0);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 1, "{}", run.stdout);
    let value: Value = serde_json::from_str(lines[0]).unwrap();
    assert_eq!(value["isError"], false);
    assert!(value["text"].as_str().unwrap().starts_with(BANNER));
    assert_eq!(value["pendingId"], value["details"]["pendingId"]);
    assert_eq!(value["details"]["totalReplacements"], 2);

    let run = workspace
        .run(&["apply", "--reason", "Go.", "--json"])
        .expect_code(0);
    let value: Value = serde_json::from_str(run.stdout.trim()).unwrap();
    assert_eq!(value["details"]["action"], "apply");
    assert_eq!(
        value["details"]["label"],
        "AST Edit: 2 replacements in 1 file"
    );
}

#[test]
fn a_preview_of_many_files_lists_them_in_path_order_and_applies_whole() {
    // Enough files that the change set's spool moves from memory to a file; the names mix
    // `-`, `.` and `/`, which string order and a sorted walk order differently.
    let workspace = Workspace::new();
    let mut expected = Vec::new();
    for dir in ["a", "a-b"] {
        for index in 0..300 {
            let path = format!("{dir}/f{index:03}.rs");
            workspace.write(
                &path,
                format!("fn f() {{ foo({index}); foo(0) }}\n").as_bytes(),
            );
            expected.push(path);
        }
    }
    workspace.write("a.rs", b"fn a() { foo(1) }\n");
    expected.push("a.rs".to_owned());
    let run = workspace
        .run(&[
            "--json", "ast-edit", "-p", "foo($A)", "-r", "bar($A)", "a.rs", "a-b", "a", "a.rs",
        ])
        .expect_code(0);
    let value: Value = serde_json::from_str(run.stdout.trim()).unwrap();
    let listed: Vec<(&str, u64)> = value["details"]["fileReplacements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| {
            (
                entry["path"].as_str().unwrap(),
                entry["count"].as_u64().unwrap(),
            )
        })
        .collect();
    let counts: Vec<u64> = expected
        .iter()
        .map(|path| if path == "a.rs" { 1 } else { 2 })
        .collect();
    assert_eq!(
        listed,
        expected
            .iter()
            .map(String::as_str)
            .zip(counts)
            .collect::<Vec<_>>()
    );
    assert_eq!(value["details"]["filesTouched"], 601);
    assert_eq!(value["details"]["totalReplacements"], 1201);
    let text = value["text"].as_str().unwrap();
    let diffs: Vec<&str> = text
        .lines()
        .filter_map(|line| line.strip_prefix("--- a/"))
        .collect();
    assert_eq!(
        diffs, expected,
        "the diffs come in path order, each file once"
    );

    let pending = workspace.run(&["pending", "--json"]).expect_code(0);
    let pending: Value = serde_json::from_str(pending.stdout.trim()).unwrap();
    assert_eq!(pending["pending"][0]["files"], serde_json::json!(expected));
    workspace
        .run(&["apply", "--reason", "All of them."])
        .expect_code(0);
    assert_eq!(
        workspace.read("a-b/f299.rs"),
        "fn f() { bar(299); bar(0) }\n"
    );
    assert_eq!(workspace.read("a.rs"), "fn a() { bar(1) }\n");
    let leftovers: Vec<String> = std::fs::read_dir(workspace.path(".resolve/blobs"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with('.') && name != ".collected")
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}

#[test]
fn global_options_work_after_the_subcommand() {
    let workspace = Workspace::with(&[("src/lib.rs", LIB)]);
    let mut command = super::common::resolve();
    let output = command
        .args([
            "ast-edit", "-p", "foo($A)", "-r", "bar($A)", "src", "--root",
        ])
        .arg(workspace.root())
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(workspace.pending_ids().len(), 1);
}

#[test]
fn usage_errors_exit_with_two() {
    let workspace = Workspace::new();
    workspace.run(&["apply"]).expect_code(2);
    workspace.run(&["no-such-command"]).expect_code(2);
}

#[test]
fn edit_reports_missing_and_ambiguous_text_with_counts() {
    let workspace = Workspace::with(&[("a.txt", "x x x\n")]);
    let run = workspace
        .run(&["edit", "a.txt", "--old", "y", "--new", "z"])
        .expect_code(1);
    assert!(run.stderr.contains("not found"), "{}", run.stderr);
    let run = workspace
        .run(&["edit", "a.txt", "--old", "x", "--new", "z"])
        .expect_code(1);
    assert!(run.stderr.contains("3 times"), "{}", run.stderr);
    workspace
        .run(&["edit", "a.txt", "--old", "x", "--new", "z", "--all"])
        .expect_code(0);
    workspace
        .run(&["apply", "--reason", "All of them."])
        .expect_code(0);
    assert_eq!(workspace.read("a.txt"), "z z z\n");
}

#[test]
fn write_creates_a_file_only_on_apply() {
    let workspace = Workspace::new();
    let run = workspace
        .run(&["write", "notes/todo.md", "--content", "- ship it\n"])
        .expect_code(0);
    assert!(
        run.stdout
            .starts_with(&person_banner("pending-action:write:1")),
        "{}",
        run.stdout
    );
    assert!(!workspace.path("notes/todo.md").exists());
    let run = workspace
        .run(&["apply", "--reason", "Keep notes."])
        .expect_code(0);
    assert!(
        run.stdout.contains("Wrote notes/todo.md."),
        "{}",
        run.stdout
    );
    assert_eq!(workspace.read("notes/todo.md"), "- ship it\n");
}

#[test]
fn color_always_colors_the_diff_and_never_leaves_no_escape_codes() {
    let workspace = Workspace::with(&[("src/lib.rs", LIB)]);
    let colored = workspace
        .run(&[
            "--color", "always", "ast-edit", "-p", "foo($A)", "-r", "bar($A)", "src",
        ])
        .expect_code(0);
    assert!(colored.stdout.contains("\x1b[32m+"), "{}", colored.stdout);
    let plain = workspace
        .run(&["discard", "--reason", "x", "--color", "never"])
        .expect_code(0);
    assert!(!plain.stdout.contains('\x1b'), "{}", plain.stdout);
}

#[test]
fn output_into_a_closed_pipe_ends_quietly_and_the_action_still_lands() {
    let workspace = Workspace::with(&[("a.py", &"y = foo(1)\n".repeat(2000))]);
    // Every subcommand that prints, with its reader gone before it writes (`resolve … | head`).
    for args in [
        &["ast-edit", "-p", "foo($A)", "-r", "bar($A)", "."][..],
        &["show"],
        &["pending"],
        &["apply", "--reason", "Piped."],
        &["log"],
    ] {
        let mut child = workspace
            .command(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let output = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
    assert_eq!(workspace.read("a.py"), "y = bar(1)\n".repeat(2000));
}

// Issue #36, items 3 and 4: a `.tla` file is TLA⁺; the preview shows
// `Start`, one replacement, no parse errors, says it is not applied and names its scope; apply
// writes `Start == x = 0`.
#[test]
fn tla_is_inferred_from_the_extension_previewed_and_applied() {
    const SPEC: &str =
        "---- MODULE Spec ----\nVARIABLE x\nInit == x = 0\nNext == x' = x + 1\n====\n";
    let workspace = Workspace::with(&[("spec/Spec.tla", SPEC)]);
    let run = workspace
        .run(&[
            "--json",
            "ast-edit",
            "-p",
            "Init",
            "-r",
            "Start",
            "spec/Spec.tla",
        ])
        .expect_code(0);
    let value: Value = serde_json::from_str(run.stdout.trim()).unwrap();
    assert!(
        value["text"].as_str().unwrap().contains("+Start == x = 0"),
        "{value}"
    );
    let details = &value["details"];
    assert_eq!(details["totalReplacements"], 1);
    assert_eq!(details["skipped"], serde_json::json!([]), "no parse errors");
    assert_eq!(details["applied"], false);
    assert_eq!(details["scopePath"], "spec/Spec.tla");
    assert_eq!(workspace.read("spec/Spec.tla"), SPEC, "nothing written yet");

    workspace
        .run(&["apply", "--reason", "Rename the initial state."])
        .expect_code(0);
    assert_eq!(
        workspace.read("spec/Spec.tla"),
        SPEC.replace("Init == x = 0", "Start == x = 0")
    );
}
