//! Reviewing a preview hunk by hunk through the binary: hunk addresses in `resolve show`,
//! `apply --only`/`--except` with hunks (byte-exact, stale-checked, whole or not at all across
//! a crash), `undo` of what landed, `amend`, and the `--approve ask` prompt's hunk addresses.

use pretty_assertions::assert_eq;
use resolve_test_support::Turn;
use serde_json::{Value, json};

use super::common::{Model, Workspace, run_agent};

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

/// `n\n` for `1..=count`, the lines in `words` spelled `N!` instead.
fn lines(count: usize, words: &[usize]) -> String {
    (1..=count)
        .map(|n| {
            if words.contains(&n) {
                format!("{n}!\n")
            } else {
                format!("{n}\n")
            }
        })
        .collect()
}

/// Stage `resolve write PATH --from <file holding new>` in `workspace`.
fn stage_write(workspace: &Workspace, path: &str, new: &[u8]) {
    let scratch = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(scratch.path(), new).unwrap();
    workspace
        .run(&["write", path, "--from", scratch.path().to_str().unwrap()])
        .expect_code(0);
}

fn read_bytes(workspace: &Workspace, path: &str) -> Vec<u8> {
    std::fs::read(workspace.path(path)).unwrap()
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
    workspace
        .run(&["ast-edit", "-p", "foo($A)", "-r", "bar($A)", "a.py", "b.py"])
        .expect_code(0);
    workspace
}

#[test]
fn show_prints_each_hunk_header_with_its_address_and_json_lists_the_line_ranges() {
    let workspace = two_file_preview();
    let shown = workspace.run(&["show"]).expect_code(0);
    assert!(
        shown.stdout.contains("@@ -1,4 +1,4 @@ a.py#1\n"),
        "{}",
        shown.stdout
    );
    assert!(
        shown.stdout.contains("@@ -15,4 +15,4 @@ a.py#2\n"),
        "{}",
        shown.stdout
    );
    assert!(
        shown.stdout.contains("@@ -1 +1 @@ b.py#1\n"),
        "{}",
        shown.stdout
    );
    let json = workspace.run(&["--json", "show"]).expect_code(0);
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
        let shown = workspace.run(&["show"]).expect_code(0);
        assert_eq!(
            shown.stdout.matches(" a.txt#").count(),
            3,
            "{}",
            shown.stdout
        );
        let run = workspace
            .run(&["apply", "--reason", "Part of it.", "--only", only])
            .expect_code(0);
        assert_eq!(
            read_bytes(&workspace, "a.txt"),
            crlf_text(30, &kept),
            "{only}: {}",
            run.stdout
        );
        assert!(
            run.stdout.contains(&format!(
                "Applied {} of 3 hunks in a.txt; dropped ",
                kept.len()
            )),
            "{}",
            run.stdout
        );
    }
    // Every hunk named: exactly the previewed bytes.
    let workspace = Workspace::new();
    workspace.write("a.txt", &base);
    stage_write(&workspace, "a.txt", &new);
    workspace
        .run(&["apply", "--reason", "All.", "--only", "a.txt#1,2,3"])
        .expect_code(0);
    assert_eq!(read_bytes(&workspace, "a.txt"), new);
}

#[test]
fn except_applies_everything_but_the_named_hunks_and_files() {
    let workspace = two_file_preview();
    let run = workspace
        .run(&[
            "apply",
            "--reason",
            "Not the second call.",
            "--except",
            "a.py#2",
        ])
        .expect_code(0);
    assert_eq!(
        workspace.read("a.py"),
        "x = bar(1)\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\ny = foo(2)\n"
    );
    assert_eq!(workspace.read("b.py"), "z = bar(3)\n");
    assert!(
        run.stdout
            .contains("Applied 1 of 2 hunks in a.py; dropped a.py#2."),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("1 hunk dropped"),
        "the block says what landed: {}",
        run.stdout
    );

    let workspace = two_file_preview();
    let run = workspace
        .run(&["apply", "--reason", "Only a.", "--except", "b.py"])
        .expect_code(0);
    assert_eq!(workspace.read("b.py"), "z = foo(3)\n");
    assert!(workspace.read("a.py").starts_with("x = bar(1)"));
    assert!(run.stdout.contains("Dropped files: b.py"), "{}", run.stdout);

    let refused = workspace
        .run(&[
            "apply", "--reason", "x", "--only", "a.py", "--except", "b.py",
        ])
        .expect_code(2);
    assert!(refused.stderr.contains("--except"), "{}", refused.stderr);
}

#[test]
fn a_hunk_that_does_not_exist_is_refused_and_nothing_is_written() {
    let workspace = two_file_preview();
    let run = workspace
        .run(&["apply", "--reason", "x", "--only", "a.py#3"])
        .expect_code(1);
    assert!(
        run.stderr
            .contains("`a.py#3` names no hunk of this preview: `a.py` has 2 hunks."),
        "{}",
        run.stderr
    );
    let run = workspace
        .run(&["apply", "--reason", "x", "--only", "a.py#0"])
        // A malformed address is a usage error (issue #32 §13).
        .expect_code(2);
    assert!(run.stderr.contains("numbered from 1"), "{}", run.stderr);
    assert!(workspace.read("a.py").starts_with("x = foo(1)"));
    assert_eq!(workspace.pending_ids().len(), 1);
}

#[test]
fn a_stale_base_refuses_a_hunk_apply_naming_every_changed_file_and_writes_nothing() {
    let workspace = two_file_preview();
    workspace.write("b.py", b"z = foo(30)\n");
    let run = workspace
        .run(&[
            "apply", "--reason", "x", "--only", "a.py#1", "--only", "b.py",
        ])
        .expect_code(1);
    assert!(
        run.stderr.contains("Preview is stale: `b.py` changed"),
        "{}",
        run.stderr
    );
    assert!(workspace.read("a.py").starts_with("x = foo(1)"));
    assert_eq!(workspace.pending_ids().len(), 1, "still pending");

    // The file picked hunk by hunk changed too: both are named.
    workspace.write("a.py", b"x = foo(10)\n");
    let run = workspace
        .run(&[
            "apply", "--reason", "x", "--only", "a.py#1", "--only", "b.py",
        ])
        .expect_code(1);
    assert!(
        run.stderr
            .contains("Preview is stale: `a.py` and `b.py` changed"),
        "{}",
        run.stderr
    );
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
    let mut crashed = 0;
    for point in 1.. {
        let workspace = Workspace::with(&[("a.py", base_a.as_str()), ("b.py", base_b.as_str())]);
        workspace
            .run(&["ast-edit", "-p", "foo($A)", "-r", "bar($A)", "a.py", "b.py"])
            .expect_code(0);
        let output = workspace
            .command(&["apply", "--reason", "Crash test.", "--except", "a.py#2"])
            .env(resolve_edit::CRASH_AT_ENV, point.to_string())
            .output()
            .unwrap();
        let completed = output.status.success();
        // Any invocation recovers first.
        let pending = workspace.pending_ids();
        let (a, b) = (workspace.read("a.py"), workspace.read("b.py"));
        let all_landed = a == landed_a && b == landed_b;
        let none_landed = a == base_a && b == base_b;
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
                .run(&["apply", "--reason", "Again.", "--except", "a.py#2"])
                .expect_code(0);
            assert_eq!(workspace.read("a.py"), landed_a);
        }
        if completed {
            break;
        }
        crashed += 1;
    }
    assert!(crashed >= 8, "only {crashed} crash points were reached");
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
        workspace
            .run(&["ast-edit", "-p", "foo($A)", "-r", "bar($A)", "src"])
            .expect_code(0);
        workspace
    };
    // Leave out the second hunk of every file: each file is composed.
    let mut args = vec!["apply", "--reason", "Crash test.", "--except"];
    let except: Vec<String> = (0..FILES)
        .map(|index| format!("src/f{index}.rs#2"))
        .collect();
    args.extend(except.iter().map(String::as_str));

    let calibration = staged();
    let started = std::time::Instant::now();
    calibration.run(&args).expect_code(0);
    let full = started.elapsed();
    assert_eq!(calibration.read("src/f7.rs"), two_calls(7, true, false));

    let mut rolled_back = 0;
    for round in 0..ROUNDS {
        let workspace = staged();
        let mut child = workspace.command(&args).spawn().unwrap();
        std::thread::sleep(full * round * 5 / (ROUNDS * 4));
        let _ = child.kill();
        let _ = child.wait();
        // Any invocation recovers first.
        let pending = workspace.pending_ids();
        let contents: Vec<String> = (0..FILES)
            .map(|index| workspace.read(&format!("src/f{index}.rs")))
            .collect();
        let landed = (0..FILES).all(|index| contents[index] == two_calls(index, true, false));
        let untouched = (0..FILES).all(|index| contents[index] == two_calls(index, false, false));
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
    }
    eprintln!("a hunk apply takes {full:?}; {rolled_back} of {ROUNDS} rounds rolled back");
}

#[test]
fn undo_reverts_exactly_the_hunks_that_landed_and_the_log_names_them() {
    let workspace = Workspace::with(&[("a.txt", lines(30, &[]).as_str())]);
    stage_write(&workspace, "a.txt", lines(30, &[2, 15, 28]).as_bytes());
    workspace
        .run(&["apply", "--reason", "Keep 15.", "--except", "a.txt#2"])
        .expect_code(0);
    assert_eq!(workspace.read("a.txt"), lines(30, &[2, 28]));
    let log = workspace.run(&["log"]).expect_code(0);
    assert!(
        log.stdout
            .contains("[kept a.txt#1,3; rejected a.txt#2]  — Keep 15."),
        "{}",
        log.stdout
    );
    let log_json = workspace.run(&["--json", "log"]).expect_code(0);
    let value: Value = serde_json::from_str(log_json.stdout.trim()).unwrap();
    assert_eq!(
        value["history"][0]["review"],
        json!({"hunks": [{"path": "a.txt", "hunks": 3, "landed": [1, 3], "rejected": [{"hunk": 2}]}]})
    );
    workspace.run(&["undo"]).expect_code(0);
    assert_eq!(workspace.read("a.txt"), lines(30, &[]));
}

#[test]
fn amend_from_a_file_keeps_the_id_and_base_hashes_and_the_apply_writes_the_amended_bytes() {
    let workspace = Workspace::with(&[("a.txt", "one\r\ntwo\r\nthree")]);
    workspace
        .run(&["edit", "a.txt", "--old", "two", "--new", "TWO"])
        .expect_code(0);
    let id = workspace.pending_ids()[0].clone();
    let before = pending_record(&workspace, 1);
    let reviewer = workspace.path("reviewer.txt");
    std::fs::write(&reviewer, "one\r\nTwo, amended\r\nthree").unwrap();
    let run = workspace
        .run(&["amend", "--from", reviewer.to_str().unwrap()])
        .expect_code(0);
    assert!(
        run.stdout.contains(&format!("Amended a.txt in {id}")),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("-TWO\r\n+Two, amended\r\n"),
        "{}",
        run.stdout
    );
    assert_eq!(workspace.pending_ids(), [id], "same id, still pending");
    let after = pending_record(&workspace, 1);
    assert_eq!(
        after["changeSet"]["files"]["a.txt"]["base_hash"],
        before["changeSet"]["files"]["a.txt"]["base_hash"]
    );
    assert_ne!(after["fingerprint"], before["fingerprint"]);
    assert_eq!(after["amendments"][0]["path"], "a.txt");
    let shown = workspace.run(&["show"]).expect_code(0);
    assert!(
        shown.stdout.contains("+Two, amended\r\n"),
        "{}",
        shown.stdout
    );
    assert!(!shown.stdout.contains("+TWO"), "{}", shown.stdout);
    assert_eq!(
        workspace.read("a.txt"),
        "one\r\ntwo\r\nthree",
        "nothing written yet"
    );

    workspace
        .run(&["apply", "--reason", "With my wording."])
        .expect_code(0);
    assert_eq!(
        read_bytes(&workspace, "a.txt"),
        b"one\r\nTwo, amended\r\nthree"
    );
    let log = workspace.run(&["log"]).expect_code(0);
    assert!(log.stdout.contains("[amended a.txt]"), "{}", log.stdout);
}

#[test]
fn amend_opens_the_editor_and_asks_which_file_when_the_action_changes_several() {
    let workspace = two_file_preview();
    let run = workspace.run(&["amend"]).expect_code(1);
    assert!(
        run.stderr
            .contains("changes 2 files; name the one to amend: a.py, b.py."),
        "{}",
        run.stderr
    );
    // The editor: a script that writes the reviewer's version into the file it is given.
    let editor = workspace.path("editor.sh");
    std::fs::write(&editor, "#!/bin/sh\nprintf 'z = baz(3)\\n' > \"$1\"\n").unwrap();
    let id = workspace.pending_ids()[0].clone();
    let run = workspace
        .command(&["amend", &id, "b.py"])
        .env("VISUAL", format!("sh {}", editor.display()))
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let shown = workspace.run(&["show"]).expect_code(0);
    assert!(shown.stdout.contains("+z = baz(3)"), "{}", shown.stdout);
    // A PATH alone means the head action.
    let run = workspace
        .command(&["amend", "b.py"])
        .env("VISUAL", "true")
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&run.stdout).contains("b.py is unchanged; nothing was amended."),
        "{}",
        String::from_utf8_lossy(&run.stdout)
    );
    let run = workspace
        .command(&["amend", "b.py"])
        .env_remove("VISUAL")
        .env_remove("EDITOR")
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&run.stderr).contains("Set $VISUAL or $EDITOR"),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    workspace.run(&["apply", "--reason", "ok"]).expect_code(0);
    assert_eq!(workspace.read("b.py"), "z = baz(3)\n");
}

#[test]
fn the_approval_prompt_takes_hunk_addresses_to_leave_out_with_reasons_the_model_reads() {
    let workspace = Workspace::with(&[("a.txt", lines(20, &[]).as_str())]);
    let model = Model::start(vec![
        Turn::call(
            "c1",
            "write",
            json!({"path": "a.txt", "content": lines(20, &[2, 19])}),
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
    assert!(run.stderr.contains("a.txt#2"), "{}", run.stderr);
    assert_eq!(workspace.read("a.txt"), lines(20, &[2]));
    let last = model.bodies().pop().unwrap();
    let tool_result = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "tool")
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        tool_result.contains("Applied 1 of 2 hunks in a.txt; dropped a.txt#2."),
        "{tool_result}"
    );
    assert!(
        tool_result.contains("The user left out a.txt#2: Line 19 stays as it is."),
        "{tool_result}"
    );
}
