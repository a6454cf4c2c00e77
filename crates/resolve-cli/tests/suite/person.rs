//! The command line as a person meets it (issue #32): limits that refuse instead of truncating,
//! the root found from a subdirectory, reads that do not wait on a write, exit codes.
//! See: issue #32, "The command line for people".

use pretty_assertions::assert_eq;

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
    let run = workspace
        .run(&[
            "ast-edit",
            "-p",
            "foo($A)",
            "-r",
            "bar($A)",
            "--max-files",
            "2",
            "src",
        ])
        .expect_code(1);
    insta::assert_snapshot!(run.stderr, @"error: The rewrite would change 3 files, more than --max-files 2; nothing was staged. Narrow it with PATH arguments (a directory, a file or a glob) or --lang, or raise --max-files.");
    assert_eq!(run.stdout, "");
    assert!(workspace.pending_ids().is_empty());
    // At the cap it stages all of them.
    workspace
        .run(&[
            "ast-edit",
            "-p",
            "foo($A)",
            "-r",
            "bar($A)",
            "--max-files",
            "3",
            "src",
        ])
        .expect_code(0);
    assert_eq!(workspace.pending_ids().len(), 1);
}
