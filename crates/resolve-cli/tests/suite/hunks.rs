//! Reviewing a preview hunk by hunk through the binary: hunk addresses in `resolve show`,
//! `apply --only`/`--except` with hunks (byte-exact, stale-checked, whole or not at all across
//! a crash), `undo` of what landed, `amend`, and the `--approve ask` prompt's hunk addresses.

use pretty_assertions::assert_eq;
use resolve_test_support::Turn;
use resolve_test_support::process::output_ok;
use resolve_test_support::text::{assert_contains, assert_lacks, marked_numbered_lines};
use serde_json::{Value, json};

use super::common::{
    Model, Workspace, apply_at_every_crash_point, kill_at_spread_instants, run_agent,
};

/// Lines `1` to `count` (`line N`), CRLF-terminated, after a BOM, the last line without a
/// line ending; the lines in `words` read `changed N` instead.
fn crlf_text(count: usize, words: &[usize]) -> Vec<u8> {
    let lines: Vec<String> = (1..=count)
        .map(|n| {
            if words.contains(&n) {
                format!("changed {n}")
            } else {
                format!("line {n}")
            }
        })
        .collect();
    let mut text = "\u{feff}".as_bytes().to_vec();
    text.extend_from_slice(lines.join("\r\n").as_bytes());
    text
}

/// Stage `resolve write PATH --from <file holding new>` in `workspace`.
fn stage_write(workspace: &Workspace, path: &str, new: &[u8]) {
    let scratch = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(scratch.path(), new).unwrap();
    workspace.run_ok(&["write", path, "--from", scratch.path().to_str().unwrap()]);
}

/// The pending record `seq` as stored.
fn pending_record(workspace: &Workspace, seq: u64) -> Value {
    let text =
        std::fs::read_to_string(workspace.path(&format!(".resolve/pending/{seq}.json"))).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// One preview of two files: `a.py` (18 lines) with its first and last lines rewritten (two
/// hunks), `b.py` with its one line rewritten.
fn two_file_preview() -> Workspace {
    let workspace = Workspace::with(&[
        (
            "a.py",
            "x = foo(1)\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\ny = foo(2)\n",
        ),
        ("b.py", "z = foo(3)\n"),
    ]);
    workspace.run_ok(&["ast-edit", "-p", "foo($A)", "-r", "bar($A)", "a.py", "b.py"]);
    workspace
}

#[test]
fn show_prints_each_hunk_header_with_its_address_and_json_lists_the_line_ranges() {
    let workspace = two_file_preview();
    let shown = workspace.run_ok(&["show"]);
    assert_contains(&shown.stdout, "@@ -1,4 +1,4 @@ a.py#1\n");
    assert_contains(&shown.stdout, "@@ -15,4 +15,4 @@ a.py#2\n");
    assert_contains(&shown.stdout, "@@ -1 +1 @@ b.py#1\n");
    let json = workspace.run_ok(&["--json", "show"]);
    let value: Value = serde_json::from_str(json.stdout.trim()).unwrap();
    let files = value["files"].as_array().unwrap();
    assert_eq!(files.len(), 2);
    assert_eq!(files[0]["path"], "a.py");
    assert_eq!(files[0]["kind"], "update");
    assert_eq!(files[0]["stale"], false);
    assert_eq!(
        files[0]["hunks"][1],
        json!({
            "address": "a.py#2", "number": 2, "header": "@@ -15,4 +15,4 @@",
            "oldStart": 15, "oldLines": 4, "newStart": 15, "newLines": 4,
            "added": 1, "removed": 1
        })
    );
    assert_eq!(files[1]["hunks"][0]["address"], "b.py#1");
}

#[test]
fn a_hunk_apply_is_byte_exact_with_crlf_a_bom_no_final_newline_and_adjacent_hunks() {
    // Lines 1, 9 and 30 change: three hunks; the first two have a single unchanged line (5)
    // between their contexts, and the last is the file's last line, without a line ending.
    let base = crlf_text(30, &[]);
    let new = crlf_text(30, &[1, 9, 30]);
    for (only, kept) in [
        ("a.txt#1,3", vec![1, 30]),
        ("a.txt#2", vec![9]),
        ("a.txt#1-2", vec![1, 9]),
        ("a.txt#3", vec![30]),
    ] {
        let workspace = Workspace::new();
        workspace.write("a.txt", &base);
        stage_write(&workspace, "a.txt", &new);
        let shown = workspace.run_ok(&["show"]);
        assert_eq!(
            shown.stdout.matches(" a.txt#").count(),
            3,
            "{}",
            shown.stdout
        );
        let run = workspace.run_ok(&["apply", "--reason", "Part of it.", "--only", only]);
        assert_eq!(
            workspace.bytes("a.txt"),
            crlf_text(30, &kept),
            "{only}: {}",
            run.stdout
        );
        assert_contains(
            &run.stdout,
            &format!("Applied {} of 3 hunks in a.txt; dropped ", kept.len()),
        );
    }
    // Every hunk named: exactly the previewed bytes.
    let workspace = Workspace::new();
    workspace.write("a.txt", &base);
    stage_write(&workspace, "a.txt", &new);
    workspace.run_ok(&["apply", "--reason", "All.", "--only", "a.txt#1,2,3"]);
    assert_eq!(workspace.bytes("a.txt"), new);
}

#[test]
fn except_applies_everything_but_the_named_hunks_and_files() {
    let workspace = two_file_preview();
    let run = workspace.run_ok(&[
        "apply",
        "--reason",
        "Not the second call.",
        "--except",
        "a.py#2",
    ]);
    assert_eq!(
        workspace.read("a.py"),
        "x = bar(1)\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\ny = foo(2)\n"
    );
    assert_eq!(workspace.read("b.py"), "z = bar(3)\n");
    assert_contains(&run.stdout, "Applied 1 of 2 hunks in a.py; dropped a.py#2.");
    assert!(
        run.stdout.contains("1 hunk dropped"),
        "the block says what landed: {}",
        run.stdout
    );

    let workspace = two_file_preview();
    let run = workspace.run_ok(&["apply", "--reason", "Only a.", "--except", "b.py"]);
    assert_eq!(workspace.read("b.py"), "z = foo(3)\n");
    assert!(workspace.read("a.py").starts_with("x = bar(1)"));
    assert_contains(&run.stdout, "Dropped files: b.py");

    let refused = workspace
        .run(&[
            "apply", "--reason", "x", "--only", "a.py", "--except", "b.py",
        ])
        .expect_code(2);
    assert_contains(&refused.stderr, "--except");
}

#[test]
fn a_hunk_that_does_not_exist_is_refused_and_nothing_is_written() {
    let workspace = two_file_preview();
    let run = workspace.run_fails(&["apply", "--reason", "x", "--only", "a.py#3"]);
    assert_contains(
        &run.stderr,
        "`a.py#3` names no hunk of this preview: `a.py` has 2 hunks.",
    );
    let run = workspace
        .run(&["apply", "--reason", "x", "--only", "a.py#0"])
        // A malformed address is a usage error (issue #32 §13).
        .expect_code(2);
    assert_contains(&run.stderr, "numbered from 1");
    assert!(workspace.read("a.py").starts_with("x = foo(1)"));
    assert_eq!(workspace.pending_ids().len(), 1);
}

#[test]
fn a_stale_base_refuses_a_hunk_apply_naming_every_changed_file_and_writes_nothing() {
    let workspace = two_file_preview();
    let refused = || {
        let only = ["--only", "a.py#1", "--only", "b.py"];
        workspace
            .run(&[&["apply", "--reason", "x"][..], &only].concat())
            .expect_code(1)
    };
    workspace.write("b.py", b"z = foo(30)\n");
    let run = refused();
    assert_contains(&run.stderr, "Preview is stale: `b.py` changed");
    assert!(workspace.read("a.py").starts_with("x = foo(1)"));
    assert_eq!(workspace.pending_ids().len(), 1, "still pending");

    // The file picked hunk by hunk changed too: both are named.
    workspace.write("a.py", b"x = foo(10)\n");
    let run = refused();
    assert_contains(&run.stderr, "Preview is stale: `a.py` and `b.py` changed");
    assert_eq!(workspace.read("a.py"), "x = foo(10)\n");
    assert_eq!(workspace.read("b.py"), "z = foo(30)\n");
    assert_eq!(workspace.pending_ids().len(), 1);
}

/// Python lines `1..=count`: `v{n} = foo({n})` where `n` is in `calls`, `v{n} = {n}` elsewhere;
/// `bar` instead of `foo` where `n` is in `rewritten`.
fn calls(count: usize, calls: &[usize], rewritten: &[usize]) -> String {
    (1..=count)
        .map(|n| {
            if rewritten.contains(&n) {
                format!("v{n} = bar({n})\n")
            } else if calls.contains(&n) {
                format!("v{n} = foo({n})\n")
            } else {
                format!("v{n} = {n}\n")
            }
        })
        .collect()
}

#[test]
fn a_hunk_apply_killed_at_every_crash_point_lands_all_selected_hunks_or_none() {
    let base_a = calls(30, &[2, 15, 28], &[]);
    let base_b = calls(10, &[5], &[]);
    let landed_a = calls(30, &[2, 15, 28], &[2, 28]);
    let landed_b = calls(10, &[5], &[5]);
    apply_at_every_crash_point(
        || {
            let workspace =
                Workspace::with(&[("a.py", base_a.as_str()), ("b.py", base_b.as_str())]);
            workspace.run_ok(&["ast-edit", "-p", "foo($A)", "-r", "bar($A)", "a.py", "b.py"]);
            workspace
        },
        &["--except", "a.py#2"],
        &[("a.py", &base_a, &landed_a), ("b.py", &base_b, &landed_b)],
    );
}

/// A Rust file with two calls of `foo` far enough apart to make two hunks; `first` and
/// `second` say which of them read `bar`.
fn two_calls(index: usize, first: bool, second: bool) -> String {
    let call = |rewritten: bool| if rewritten { "bar" } else { "foo" };
    format!(
        "fn f{index}() {{\n    let v = {}({index});\n{}    let w = {}({index});\n}}\n",
        call(first),
        "    // filler\n".repeat(10),
        call(second)
    )
}

#[test]
fn a_hunk_apply_killed_with_sigkill_at_any_instant_lands_every_kept_hunk_or_none() {
    const FILES: usize = 200;
    const ROUNDS: u32 = 12;
    let staged = || {
        let workspace = Workspace::new();
        for index in 0..FILES {
            workspace.write(
                &format!("src/f{index}.rs"),
                two_calls(index, false, false).as_bytes(),
            );
        }
        workspace.run_ok(&["ast-edit", "-p", "foo($A)", "-r", "bar($A)", "src"]);
        workspace
    };
    // Leave out the second hunk of every file: each file is composed.
    let mut args = vec!["apply", "--reason", "Crash test.", "--except"];
    let except: Vec<String> = (0..FILES)
        .map(|index| format!("src/f{index}.rs#2"))
        .collect();
    args.extend(except.iter().map(String::as_str));

    let mut rolled_back = 0;
    let (full, calibration) = kill_at_spread_instants(
        staged,
        &args,
        ROUNDS,
        FILES,
        |round, _, pending, contents| {
            let landed = (0..FILES).all(|index| contents[index] == two_calls(index, true, false));
            let untouched =
                (0..FILES).all(|index| contents[index] == two_calls(index, false, false));
            assert!(
                landed || untouched,
                "round {round}: a mix of old and new files after recovery"
            );
            assert_eq!(
                pending.is_empty(),
                landed,
                "round {round}: pending iff rolled back"
            );
            rolled_back += usize::from(untouched);
        },
    );
    assert_eq!(calibration.read("src/f7.rs"), two_calls(7, true, false));
    eprintln!("a hunk apply takes {full:?}; {rolled_back} of {ROUNDS} rounds rolled back");
}

#[test]
fn undo_reverts_exactly_the_hunks_that_landed_and_the_log_names_them() {
    let workspace = Workspace::with(&[("a.txt", marked_numbered_lines(30, &[]).as_str())]);
    stage_write(
        &workspace,
        "a.txt",
        marked_numbered_lines(30, &[2, 15, 28]).as_bytes(),
    );
    workspace.run_ok(&["apply", "--reason", "Keep 15.", "--except", "a.txt#2"]);
    assert_eq!(workspace.read("a.txt"), marked_numbered_lines(30, &[2, 28]));
    let log = workspace.run_ok(&["log"]);
    assert_contains(
        &log.stdout,
        "[kept a.txt#1,3; rejected a.txt#2]  — Keep 15.",
    );
    let log_json = workspace.run_ok(&["--json", "log"]);
    let value: Value = serde_json::from_str(log_json.stdout.trim()).unwrap();
    assert_eq!(
        value["history"][0]["review"],
        json!({"hunks": [{"path": "a.txt", "hunks": 3, "landed": [1, 3], "rejected": [{"hunk": 2}]}]})
    );
    workspace.run_ok(&["undo"]);
    assert_eq!(workspace.read("a.txt"), marked_numbered_lines(30, &[]));
}

#[test]
fn amend_from_a_file_keeps_the_id_and_base_hashes_and_the_apply_writes_the_amended_bytes() {
    let workspace = Workspace::with(&[("a.txt", "one\r\ntwo\r\nthree")]);
    workspace.run_ok(&["edit", "a.txt", "--old", "two", "--new", "TWO"]);
    let id = workspace.pending_ids()[0].clone();
    let before = pending_record(&workspace, 1);
    let reviewer = workspace.path("reviewer.txt");
    std::fs::write(&reviewer, "one\r\nTwo, amended\r\nthree").unwrap();
    let run = workspace.run_ok(&["amend", "--from", reviewer.to_str().unwrap()]);
    assert_contains(&run.stdout, &format!("Amended a.txt in {id}"));
    assert_contains(&run.stdout, "-TWO\r\n+Two, amended\r\n");
    assert_eq!(workspace.pending_ids(), [id], "same id, still pending");
    let after = pending_record(&workspace, 1);
    assert_eq!(
        after["changeSet"]["files"]["a.txt"]["base_hash"],
        before["changeSet"]["files"]["a.txt"]["base_hash"]
    );
    assert_ne!(after["fingerprint"], before["fingerprint"]);
    assert_eq!(after["amendments"][0]["path"], "a.txt");
    let shown = workspace.run_ok(&["show"]);
    assert_contains(&shown.stdout, "+Two, amended\r\n");
    assert_lacks(&shown.stdout, "+TWO");
    assert_eq!(
        workspace.read("a.txt"),
        "one\r\ntwo\r\nthree",
        "nothing written yet"
    );

    workspace.run_ok(&["apply", "--reason", "With my wording."]);
    assert_eq!(workspace.bytes("a.txt"), b"one\r\nTwo, amended\r\nthree");
    let log = workspace.run_ok(&["log"]);
    assert_contains(&log.stdout, "[amended a.txt]");
}

#[test]
fn amend_opens_the_editor_and_asks_which_file_when_the_action_changes_several() {
    let workspace = two_file_preview();
    let run = workspace.run_fails(&["amend"]);
    assert_contains(
        &run.stderr,
        "changes 2 files; name the one to amend: a.py, b.py.",
    );
    // The editor: a script that writes the reviewer's version into the file it is given.
    let editor = workspace.path("editor.sh");
    std::fs::write(&editor, "#!/bin/sh\nprintf 'z = baz(3)\\n' > \"$1\"\n").unwrap();
    let id = workspace.pending_ids()[0].clone();
    output_ok(
        workspace
            .command(&["amend", &id, "b.py"])
            .env("VISUAL", format!("sh {}", editor.display())),
    );
    let shown = workspace.run_ok(&["show"]);
    assert_contains(&shown.stdout, "+z = baz(3)");
    // A PATH alone means the head action.
    let run = workspace
        .command(&["amend", "b.py"])
        .env("VISUAL", "true")
        .output()
        .unwrap();
    assert_contains(
        &String::from_utf8_lossy(&run.stdout),
        "b.py is unchanged; nothing was amended.",
    );
    let run = workspace
        .command(&["amend", "b.py"])
        .env_remove("VISUAL")
        .env_remove("EDITOR")
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1));
    assert_contains(
        &String::from_utf8_lossy(&run.stderr),
        "Set $VISUAL or $EDITOR",
    );
    workspace.run_ok(&["apply", "--reason", "ok"]);
    assert_eq!(workspace.read("b.py"), "z = baz(3)\n");
}

#[test]
fn the_approval_prompt_takes_hunk_addresses_to_leave_out_with_reasons_the_model_reads() {
    let workspace = Workspace::with(&[("a.txt", marked_numbered_lines(20, &[]).as_str())]);
    let model = Model::start(vec![
        Turn::call(
            "c1",
            "write",
            json!({"path": "a.txt", "content": marked_numbered_lines(20, &[2, 19])}),
        ),
        Turn::call(
            "c2",
            "resolve",
            json!({"action": "apply", "reason": "Both lines."}),
        ),
        Turn::text("Done."),
    ]);
    let run = run_agent(
        &workspace,
        &model,
        &["--approve", "ask"],
        "Mark lines 2 and 19.",
        "a.txt#2\nLine 19 stays as it is.\n",
    )
    .expect_code(0);
    assert_contains(&run.stderr, "a.txt#2");
    assert_eq!(workspace.read("a.txt"), marked_numbered_lines(20, &[2]));
    let tool_result = model.last_tool_result();
    assert_contains(
        &tool_result,
        "Applied 1 of 2 hunks in a.txt; dropped a.txt#2.",
    );
    assert_contains(
        &tool_result,
        "The user left out a.txt#2: Line 19 stays as it is.",
    );
}
