//! Staging, reviewing, applying, discarding and undoing through the binary.

use pretty_assertions::assert_eq;
use resolve_test_support::text::{assert_contains, assert_lacks, assert_starts_with};
use serde_json::Value;

use super::common::{Run, Workspace};

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
    assert_contains(&run.stdout, "--- a/src/lib.rs");
    assert_contains(&run.stdout, "+    let b = bar(foo(2));");
    assert_eq!(workspace.read("src/lib.rs"), LIB);
    let pending = workspace.pending_ids();
    assert_eq!(pending.len(), 1);
    assert_starts_with(&pending[0], "pending-action:ast_edit:");
}

#[test]
fn apply_writes_exactly_the_previewed_bytes_outermost_match_only() {
    let workspace = Workspace::with(&[("src/lib.rs", LIB)]);
    rewrite_foo(&workspace).expect_code(0);
    let run = workspace.run_ok(&["apply", "--reason", "Rename foo to bar."]);
    assert_contains(&run.stdout, "Applied 2 replacements in 1 file.");
    assert_contains(&run.stdout, "Accept: 2 replacements in 1 file ⟦AST Edit⟧");
    assert_contains(&run.stdout, "Rename foo to bar.");
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
    let run = workspace.run_fails(&["apply", "--reason", "Go."]);
    assert_contains(&run.stderr, "Preview is stale:");
    assert_contains(&run.stderr, "src/other.rs");
    assert_lacks(&run.stderr, "Apply failed");
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
    workspace.run_ok(&["edit", "a.txt", "--old", "one", "--new", "uno"]);
    workspace.run_ok(&["edit", "b.txt", "--old", "two", "--new", "dos"]);
    workspace.run_ok(&["edit", "a.txt", "--old", "one", "--new", "eins"]);
    let pending = workspace.pending_ids();
    assert_eq!(pending.len(), 3);

    let run = workspace.run_ok(&["apply", "--reason", "German first."]);
    assert_contains(&run.stdout, "Applied edit to a.txt.");
    assert_eq!(workspace.read("a.txt"), "eins\n");
    assert_eq!(workspace.pending_ids(), pending[1..].to_vec());

    let run = workspace.run_ok(&["apply", "--reason", "Then Spanish."]);
    assert_contains(&run.stdout, "Applied edit to b.txt.");

    let run = workspace.run_fails(&["apply", "--reason", "Then Italian."]);
    assert_contains(&run.stderr, "Preview is stale:");
    assert_contains(&run.stderr, "a.txt");
    assert_eq!(workspace.read("a.txt"), "eins\n");
}

#[test]
fn apply_by_id_picks_that_pending_action() {
    let workspace = Workspace::with(&[("a.txt", "one\n"), ("b.txt", "two\n")]);
    workspace.run_ok(&["edit", "a.txt", "--old", "one", "--new", "uno"]);
    workspace.run_ok(&["edit", "b.txt", "--old", "two", "--new", "dos"]);
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
    let run = workspace.run_ok(&["discard", "--reason", "Wrong function."]);
    assert_contains(
        &run.stdout,
        "Discarded: AST Edit: 2 replacements in 1 file. Reason: Wrong function.",
    );
    assert_contains(&run.stdout, "Discard: 2 replacements in 1 file");
    assert_eq!(workspace.read("src/lib.rs"), LIB);
    assert!(workspace.pending_ids().is_empty());
    let log = workspace.run_ok(&["log"]);
    assert_contains(&log.stdout, "Wrong function.");
}

#[test]
fn restaging_a_discarded_change_says_so_with_the_earlier_reason() {
    let workspace = Workspace::with(&[("src/lib.rs", LIB)]);
    rewrite_foo(&workspace).expect_code(0);
    workspace.run_ok(&["discard", "--reason", "Wrong function."]);
    let run = rewrite_foo(&workspace).expect_code(0);
    assert_contains(&run.stdout, "identical change was discarded earlier");
    assert_contains(&run.stdout, "Wrong function.");
}

#[test]
fn nothing_pending_discard_succeeds_and_apply_fails() {
    let workspace = Workspace::new();
    let run = workspace.run_ok(&["discard", "--reason", "Clean up."]);
    assert_contains(
        &run.stdout,
        "Nothing to discard; no pending action remains.",
    );
    let run = workspace.run_fails(&["apply", "--reason", "Go."]);
    assert_contains(
        &run.stderr,
        "No pending action to resolve. Nothing to apply or discard.",
    );
}

#[test]
fn zero_matches_succeed_with_no_replacements_made_and_stage_nothing() {
    let workspace = Workspace::with(&[("src/lib.rs", LIB)]);
    let run = workspace.run_ok(&[
        "ast-edit",
        "-p",
        "nothing_like_this($A)",
        "-r",
        "x($A)",
        "src",
    ]);
    assert_starts_with(&run.stdout, "No replacements made");
    assert!(workspace.pending_ids().is_empty());
}

#[test]
fn an_invalid_pattern_fails_naming_it_and_stages_nothing() {
    let workspace = Workspace::with(&[("src/lib.rs", LIB)]);
    let run = workspace.run_fails(&[
        "ast-edit", "-p", "foo(", "-r", "bar()", "--lang", "rust", "src",
    ]);
    assert_contains(&run.stderr, "foo(");
    assert!(workspace.pending_ids().is_empty());
}

#[test]
fn binary_and_non_utf8_files_are_skipped_and_reported() {
    let workspace = Workspace::with(&[("src/lib.rs", LIB)]);
    workspace.write("src/blob.rs", b"fn f() { foo(1); }\0\0\0");
    workspace.write("src/latin1.rs", b"fn f() { foo(1); } // caf\xe9\n");
    let run = rewrite_foo(&workspace).expect_code(0);
    assert_contains(&run.stdout, "src/blob.rs");
    assert_contains(&run.stdout, "src/latin1.rs");
    assert_lacks(&run.stdout, "--- a/src/blob.rs");
    workspace.run_ok(&["apply", "--reason", "Go."]);
    assert_eq!(workspace.bytes("src/blob.rs"), b"fn f() { foo(1); }\0\0\0");
    assert_eq!(
        workspace.bytes("src/latin1.rs"),
        b"fn f() { foo(1); } // caf\xe9\n"
    );
}

#[test]
fn a_directory_preview_skips_what_gits_global_excludes_file_ignores_unless_a_nearer_rule_keeps_it()
{
    let workspace = Workspace::with(&[
        ("src/a.rs", "fn a() { foo(1); }\n"),
        ("src/out.gen.rs", "fn b() { foo(2); }\n"),
        ("src/keep.gen.rs", "fn c() { foo(3); }\n"),
        ("src/.ignore", "!keep.gen.rs\n"),
    ]);
    let global = workspace.home().join(".config/git/ignore");
    std::fs::create_dir_all(global.parent().unwrap()).unwrap();
    std::fs::write(&global, "*.gen.rs\n").unwrap();
    let run = Run::from(
        workspace
            .command(&["ast-edit", "-p", "foo($A)", "-r", "bar($A)", "src"])
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("GIT_CONFIG_GLOBAL")
            .current_dir(workspace.root())
            .output()
            .unwrap(),
    )
    .expect_code(0);
    assert_contains(&run.stdout, "--- a/src/a.rs");
    assert_contains(&run.stdout, "--- a/src/keep.gen.rs");
    assert_lacks(&run.stdout, "out.gen.rs");
}

#[test]
fn only_applies_the_named_files_and_drops_the_rest() {
    let workspace = Workspace::with(&[
        ("src/a.rs", "fn a() { foo(1); }\n"),
        ("src/b.rs", "fn b() { foo(2); }\n"),
    ]);
    rewrite_foo(&workspace).expect_code(0);
    let run = workspace.run_ok(&["apply", "--reason", "Only a.", "--only", "src/a.rs"]);
    assert_contains(&run.stdout, "Applied 1 replacement in 1 file.");
    assert_contains(&run.stdout, "Dropped files: src/b.rs");
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
    workspace.run_ok(&["apply", "--reason", "Go."]);
    workspace.run_ok(&["undo"]);
    assert_eq!(workspace.read("src/lib.rs"), LIB);

    rewrite_foo(&workspace).expect_code(0);
    workspace.run_ok(&["apply", "--reason", "Again."]);
    workspace.write("src/lib.rs", b"changed by hand\n");
    let run = workspace.run_fails(&["undo"]);
    assert_contains(&run.stderr, "src/lib.rs");
    assert_eq!(workspace.read("src/lib.rs"), "changed by hand\n");
}

#[test]
fn show_prints_pending_and_resolved_previews() {
    let workspace = Workspace::with(&[("src/lib.rs", LIB)]);
    rewrite_foo(&workspace).expect_code(0);
    let id = workspace.pending_ids().remove(0);
    let pending = workspace.run_ok(&["show"]);
    assert_contains(&pending.stdout, "+    let a = bar(1);");
    workspace.run_ok(&["apply", "--reason", "Looks right."]);
    let resolved = workspace.run_ok(&["show", &id]);
    assert_contains(&resolved.stdout, "+    let a = bar(1);");
    assert_contains(&resolved.stdout, "Looks right.");
    let log = workspace.run_ok(&["log", "--json"]);
    let log: Value = serde_json::from_str(log.stdout.trim()).unwrap();
    assert_eq!(log["history"][0]["reason"], "Looks right.");
}

#[test]
fn json_output_is_one_object_with_text_error_flag_details_and_pending_id() {
    let workspace = Workspace::with(&[("src/lib.rs", LIB)]);
    let run = workspace.run_ok(&[
        "--json", "ast-edit", "-p", "foo($A)", "-r", "bar($A)", "src",
    ]);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 1, "{}", run.stdout);
    let value: Value = serde_json::from_str(lines[0]).unwrap();
    assert_eq!(value["isError"], false);
    assert!(value["text"].as_str().unwrap().starts_with(BANNER));
    assert_eq!(value["pendingId"], value["details"]["pendingId"]);
    assert_eq!(value["details"]["totalReplacements"], 2);

    let run = workspace.run_ok(&["apply", "--reason", "Go.", "--json"]);
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
    let run = workspace.run_ok(&[
        "--json", "ast-edit", "-p", "foo($A)", "-r", "bar($A)", "a.rs", "a-b", "a", "a.rs",
    ]);
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

    let pending = workspace.run_ok(&["pending", "--json"]);
    let pending: Value = serde_json::from_str(pending.stdout.trim()).unwrap();
    assert_eq!(pending["pending"][0]["files"], serde_json::json!(expected));
    workspace.run_ok(&["apply", "--reason", "All of them."]);
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
    let run = workspace.run_fails(&["edit", "a.txt", "--old", "y", "--new", "z"]);
    assert_contains(&run.stderr, "not found");
    let run = workspace.run_fails(&["edit", "a.txt", "--old", "x", "--new", "z"]);
    assert_contains(&run.stderr, "3 times");
    workspace.run_ok(&["edit", "a.txt", "--old", "x", "--new", "z", "--all"]);
    workspace.run_ok(&["apply", "--reason", "All of them."]);
    assert_eq!(workspace.read("a.txt"), "z z z\n");
}

#[test]
fn write_creates_a_file_only_on_apply() {
    let workspace = Workspace::new();
    let run = workspace.run_ok(&["write", "notes/todo.md", "--content", "- ship it\n"]);
    assert!(
        run.stdout
            .starts_with(&person_banner("pending-action:write:1")),
        "{}",
        run.stdout
    );
    assert!(!workspace.path("notes/todo.md").exists());
    let run = workspace.run_ok(&["apply", "--reason", "Keep notes."]);
    assert_contains(&run.stdout, "Wrote notes/todo.md.");
    assert_eq!(workspace.read("notes/todo.md"), "- ship it\n");
}

#[test]
fn color_always_colors_the_diff_and_never_leaves_no_escape_codes() {
    let workspace = Workspace::with(&[("src/lib.rs", LIB)]);
    let colored = workspace.run_ok(&[
        "--color", "always", "ast-edit", "-p", "foo($A)", "-r", "bar($A)", "src",
    ]);
    assert_contains(&colored.stdout, "\x1b[32m+");
    let plain = workspace.run_ok(&["discard", "--reason", "x", "--color", "never"]);
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
    let run = workspace.run_ok(&[
        "--json",
        "ast-edit",
        "-p",
        "Init",
        "-r",
        "Start",
        "spec/Spec.tla",
    ]);
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

    workspace.run_ok(&["apply", "--reason", "Rename the initial state."]);
    assert_eq!(
        workspace.read("spec/Spec.tla"),
        SPEC.replace("Init == x = 0", "Start == x = 0")
    );
}
