//! The command line as a person meets it (issue #32): limits that refuse instead of truncating,
//! the root found from a subdirectory, reads that do not wait on a write, exit codes.
//! See: issue #32, "The command line for people".

use pretty_assertions::assert_eq;
use resolve_test_support::text::{assert_contains, assert_lacks, assert_starts_with};

use super::common::Workspace;

/// Three Rust files, each with one `foo(…)` call.
fn three_files() -> Workspace {
    Workspace::with(&[
        ("src/a.rs", "fn a() { foo(1); }\n"),
        ("src/b.rs", "fn b() { foo(2); }\n"),
        ("src/c.rs", "fn c() { foo(3); }\n"),
    ])
}

#[test]
fn max_files_refuses_a_larger_preview_whole_with_exit_1_and_the_real_count() {
    let workspace = three_files();
    let at_most = |files: &str| {
        let rewrite = ["ast-edit", "-p", "foo($A)", "-r", "bar($A)"];
        workspace.run(&[&rewrite[..], &["--max-files", files, "src"]].concat())
    };
    let run = at_most("2").expect_code(1);
    insta::assert_snapshot!(run.stderr, @"error: The rewrite would change 3 files, more than --max-files 2; nothing was staged. Narrow it with PATH arguments (a directory, a file or a glob) or --lang, or raise --max-files.");
    assert_eq!(run.stdout, "");
    assert!(workspace.pending_ids().is_empty());
    // At the cap it stages all of them.
    at_most("3").expect_code(0);
    assert_eq!(workspace.pending_ids().len(), 1);
}

/// Run `resolve ARGS…` without `--root`, in `dir` (a directory of `workspace`).
fn run_in(workspace: &Workspace, dir: &str, args: &[&str]) -> super::common::Run {
    let output = super::common::resolve()
        .current_dir(workspace.path(dir))
        .args(args)
        .env_remove("NO_COLOR")
        .env("HOME", workspace.home())
        .output()
        .unwrap();
    super::common::Run::from(output)
}

#[test]
fn from_a_subdirectory_the_root_is_the_nearest_directory_holding_resolve() {
    let workspace = three_files();
    workspace.write("src/deeper/d.rs", b"fn d() { foo(4); }\n");
    workspace.run_ok(&["edit", "src/a.rs", "--old", "foo(1)", "--new", "bar(1)"]);
    // `pending` from a subdirectory sees what was staged at the root.
    let pending = run_in(&workspace, "src/deeper", &["pending"]).expect_code(0);
    assert_contains(&pending.stdout, "Edit: src/a.rs");
    // Typed paths are relative to the current directory; the label names them from the root.
    let staged = run_in(
        &workspace,
        "src",
        &["edit", "b.rs", "--old", "foo(2)", "--new", "bar(2)"],
    )
    .expect_code(0);
    assert_contains(&staged.stdout, "--- a/src/b.rs");
    let rewrite = run_in(
        &workspace,
        "src/deeper",
        &["ast-edit", "-p", "foo($A)", "-r", "baz($A)"],
    )
    .expect_code(0);
    assert_contains(&rewrite.stdout, "+++ b/src/deeper/d.rs");
    assert_lacks(&rewrite.stdout, "src/c.rs");
    assert!(!workspace.path("src/.resolve").exists());
    assert!(!workspace.path("src/deeper/.resolve").exists());
    let pending = workspace.pending_ids();
    assert_eq!(pending.len(), 3);
    // `--only` addresses are typed from the current directory too.
    let id = &pending[1];
    run_in(
        &workspace,
        "src",
        &[
            "apply", "--reason", "rename", "--id", id, "--only", "b.rs#1",
        ],
    )
    .expect_code(0);
    assert_eq!(workspace.read("src/b.rs"), "fn b() { bar(2); }\n");
}

#[test]
fn without_resolve_dir_the_root_is_the_git_top_and_root_overrides() {
    let workspace = three_files();
    std::fs::create_dir(workspace.path(".git")).unwrap();
    run_in(
        &workspace,
        "src",
        &["edit", "c.rs", "--old", "foo(3)", "--new", "bar(3)"],
    )
    .expect_code(0);
    assert!(workspace.path(".resolve").is_dir());
    assert!(!workspace.path("src/.resolve").exists());
    assert_eq!(workspace.pending_ids().len(), 1);
    // `--root` wins over the search: the subdirectory is a root of its own, with nothing pending.
    let own = run_in(&workspace, "src", &["--root", ".", "pending"]).expect_code(0);
    assert_eq!(own.stdout.trim(), "No pending actions.");
}

#[test]
fn reads_do_not_wait_while_a_check_holds_the_lock_and_a_writer_says_it_waits() {
    let workspace = three_files();
    workspace.run_ok(&["edit", "src/a.rs", "--old", "foo(1)", "--new", "bar(1)"]);
    let started = workspace.path("started");
    let mut check = workspace
        .command(&[
            "check",
            "--",
            "sh",
            "-c",
            &format!("touch '{}'; sleep 4", started.display()),
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let waiting = std::time::Instant::now();
    while !started.exists() {
        assert!(
            waiting.elapsed() < std::time::Duration::from_secs(20),
            "the check never ran"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    for args in [&["pending"][..], &["log"], &["show"]] {
        let before = std::time::Instant::now();
        let run = workspace.run(args).expect_code(0);
        assert!(
            before.elapsed() < std::time::Duration::from_secs(2),
            "`resolve {args:?}` waited {:?}",
            before.elapsed()
        );
        assert_lacks(&run.stderr, "lock");
        if args != ["log"] {
            assert_contains(&run.stdout, "Edit: src/a.rs");
        }
    }
    // A writer waits for the check, and says so at once.
    let discard = workspace.run_ok(&["discard", "--reason", "not now"]);
    assert_contains(&discard.stderr, "Waiting for the workspace lock");
    assert!(check.wait().unwrap().success());
    assert!(workspace.pending_ids().is_empty());
}

#[test]
fn ast_edit_without_lang_names_the_languages_it_rewrote() {
    let workspace = Workspace::with(&[
        ("src/a.rs", "fn a() { x.unwrap(); }\n"),
        ("src/b.rs", "fn b() { y.unwrap(); }\n"),
        ("tool.py", "z = w.unwrap()\n"),
    ]);
    let run = workspace.run_ok(&["ast-edit", "-p", "$X.unwrap()", "-r", "$X.expect(\"x\")"]);
    assert!(
        run.stdout
            .lines()
            .any(|line| line == "Languages (no --lang given): python 1 file, rust 2 files."),
        "{}",
        run.stdout
    );
    workspace.run_ok(&["discard", "--reason", "again with --lang"]);
    let run = workspace.run_ok(&[
        "ast-edit",
        "-p",
        "$X.unwrap()",
        "-r",
        "$X.expect(\"x\")",
        "--lang",
        "rust",
    ]);
    assert_lacks(&run.stdout, "Languages");
}

/// See: issue #32, "Exit codes": 0 done or nothing to do, 1 the action failed, 2 usage.
#[test]
fn exit_codes_are_one_table_done_or_nothing_to_do_failed_usage() {
    let workspace = Workspace::with(&[("a.txt", "abc\n"), ("src/a.rs", "fn a() {}\n")]);
    let table: &[(&[&str], i32)] = &[
        // 0: done, or nothing to do.
        (&["edit", "a.txt", "--old", "abc", "--new", "abc"], 0),
        (&["write", "a.txt", "--content", "abc\n"], 0),
        (
            &["ast-edit", "-p", "zzz($A)", "-r", "y($A)", "--lang", "rust"],
            0,
        ),
        (&["undo"], 0),
        (&["discard", "--reason", "nothing there"], 0),
        // 1: the action failed.
        (&["edit", "a.txt", "--old", "zzz", "--new", "y"], 1),
        (&["apply", "--reason", "nothing there"], 1),
        // 2: usage.
        (&["ast-edit", "-p", "x", "-r", "y", "--lang", "klingon"], 2),
        (&["apply", "--reason", ""], 2),
        (&["discard", "--reason", "  "], 2),
        (&["apply", "--reason", "r", "--only", "a.txt#"], 2),
        (&["apply", "--reason", "r", "--except", "a.txt#0"], 2),
    ];
    for (args, code) in table {
        let run = workspace.run(args);
        assert_eq!(
            run.code, *code,
            "resolve {args:?}\n--- stdout\n{}\n--- stderr\n{}",
            run.stdout, run.stderr
        );
    }
    assert!(workspace.pending_ids().is_empty());
    assert_eq!(workspace.read("a.txt"), "abc\n");
}

#[test]
fn an_empty_reason_is_refused_before_anything_is_decided() {
    let workspace = three_files();
    workspace.run_ok(&["edit", "src/a.rs", "--old", "foo(1)", "--new", "bar(1)"]);
    let run = workspace.run(&["apply", "--reason", ""]).expect_code(2);
    assert_contains(&run.stderr, "give a reason");
    assert_eq!(workspace.pending_ids().len(), 1);
    assert_eq!(workspace.read("src/a.rs"), "fn a() { foo(1); }\n");
}

#[test]
fn an_id_may_be_given_as_its_number_alone() {
    let workspace = three_files();
    workspace.run_ok(&["edit", "src/a.rs", "--old", "foo(1)", "--new", "bar(1)"]);
    workspace.run_ok(&["edit", "src/b.rs", "--old", "foo(2)", "--new", "bar(2)"]);
    let ids = workspace.pending_ids();
    let older = ids[1].rsplit(':').next().unwrap().to_owned();
    let show = workspace.run_ok(&["show", &older]);
    assert!(show.stdout.starts_with(&ids[1]), "{}", show.stdout);
    workspace.run_ok(&["apply", "--reason", "the older one", "--id", &older]);
    assert_eq!(workspace.read("src/a.rs"), "fn a() { bar(1); }\n");
    assert_eq!(workspace.read("src/b.rs"), "fn b() { foo(2); }\n");
    // From the history too.
    let show = workspace.run_ok(&["show", &older]);
    assert_contains(&show.stdout, &ids[1]);
    workspace.run_ok(&["undo", &older]);
    assert_eq!(workspace.read("src/a.rs"), "fn a() { foo(1); }\n");
    // A number nothing has is an unknown id.
    workspace.run_fails(&["show", "999"]);
}

#[test]
fn undo_of_many_files_summarizes_and_json_lists_them_all() {
    let workspace = Workspace::new();
    for n in 0..12 {
        workspace.write(&format!("src/f{n:02}.rs"), b"fn f() { foo(1); }\n");
    }
    workspace.run_ok(&["ast-edit", "-p", "foo($A)", "-r", "bar($A)", "src"]);
    workspace.run_ok(&["apply", "--reason", "rename"]);
    let ids = workspace.run_ok(&["log", "--json"]);
    let log: serde_json::Value = serde_json::from_str(&ids.stdout).unwrap();
    let id = log["history"][0]["id"].as_str().unwrap().to_owned();
    let run = workspace.run_ok(&["undo"]);
    assert_eq!(
        run.stdout.trim(),
        format!(
            "Undid {id}: restored 12 files: src/f00.rs, src/f01.rs, src/f02.rs, src/f03.rs, src/f04.rs and 7 more (--json lists all)."
        )
    );
    assert_eq!(workspace.read("src/f11.rs"), "fn f() { foo(1); }\n");
}

/// See: issue #32 §7, "Written for the model, shown to a person".
#[test]
fn producers_speak_in_flags_and_commands_on_the_command_line() {
    let workspace = Workspace::with(&[("a.txt", "one one\n")]);
    let run = workspace.run_fails(&["edit", "a.txt", "--old", "two", "--new", "2"]);
    insta::assert_snapshot!(run.stderr.trim_end(), @"error: --old TEXT was not found in `a.txt`; read the file and copy the text exactly.");
    let run = workspace.run_fails(&["edit", "a.txt", "--old", "one", "--new", "1"]);
    insta::assert_snapshot!(run.stderr.trim_end(), @"error: --old TEXT occurs 2 times in `a.txt`; add surrounding lines to make it unique, or pass --all.");
    let run = workspace.run_ok(&["edit", "a.txt", "--old", "one", "--new", "1", "--all"]);
    assert!(
        run.stdout
            .starts_with("Staged as pending-action:edit:1 — files are NOT modified yet.\n"),
        "{}",
        run.stdout
    );
    assert_lacks(&run.stdout, "Call `resolve`");
    assert!(
        run.stdout.trim_end().ends_with(
            "Next: `resolve review` (or `resolve show 1`), then `resolve apply --id 1 --reason \"…\"` or `resolve discard --id 1 --reason \"…\"`."
        ),
        "{}",
        run.stdout
    );
    // `show` of a pending action, and of an applied one: truthful headings.
    let show = workspace.run_ok(&["show"]);
    assert_contains(&show.stdout, "Files are NOT modified yet.");
    workspace.run_ok(&["apply", "--reason", "both"]);
    let shown = workspace.run_ok(&["show", "1"]);
    assert_lacks(&shown.stdout, "NOT modified");
    assert_contains(&shown.stdout, "The preview as it was staged:");
}

#[test]
fn the_result_block_is_not_padded_into_a_pipe() {
    let workspace = Workspace::with(&[("a.txt", "one\n")]);
    workspace.run_ok(&["edit", "a.txt", "--old", "one", "--new", "1"]);
    let run = workspace.run_ok(&["apply", "--reason", "short"]);
    for line in run.stdout.lines() {
        assert_eq!(line, line.trim_end(), "{:?}", run.stdout);
    }
}

/// See: issue #32 §8: `show`, `pending` and `log` colored like the producers; each pending
/// action's age and state.
#[test]
fn pending_shows_age_and_state_and_listings_are_colored_when_asked() {
    let workspace = three_files();
    workspace.run_ok(&["edit", "src/a.rs", "--old", "foo(1)", "--new", "bar(1)"]);
    workspace.run_ok(&["edit", "src/b.rs", "--old", "foo(2)", "--new", "bar(2)"]);
    workspace.write("amended.rs", b"fn b() { baz(2); }\n");
    workspace.run_ok(&[
        "amend",
        "src/b.rs",
        "--from",
        workspace.path("amended.rs").to_str().unwrap(),
    ]);
    workspace.write("src/a.rs", b"fn a() { changed(1); }\n");
    let plain = workspace.run_ok(&["pending"]);
    let lines: Vec<&str> = plain.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{}", plain.stdout);
    assert_starts_with(lines[0], "pending-action:edit:2  Edit: src/b.rs  [cli]  ");
    assert!(lines[0].ends_with("s ago  amended"), "{}", plain.stdout);
    assert!(
        lines[1].ends_with("s ago  ✗ conflicts: src/a.rs changed"),
        "{}",
        plain.stdout
    );
    assert!(!plain.stdout.contains('\u{1b}'), "{:?}", plain.stdout);

    let colored = |run: &super::common::Run| run.stdout.contains("\u{1b}[");
    assert!(colored(
        &workspace.run_ok(&["pending", "--color", "always"])
    ));
    assert!(colored(&workspace.run_ok(&["show", "--color", "always"])));
    let forced = workspace
        .command(&["pending"])
        .env("CLICOLOR_FORCE", "1")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&forced.stdout).contains("\u{1b}["));
    let no_color = workspace
        .command(&["pending"])
        .env("CLICOLOR_FORCE", "1")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&no_color.stdout).contains("\u{1b}["));
    workspace.run_ok(&["discard", "--reason", "stale", "--id", "1"]);
    assert!(colored(&workspace.run_ok(&["log", "--color", "always"])));
    assert!(!colored(&workspace.run_ok(&["log", "--color", "never"])));
}
