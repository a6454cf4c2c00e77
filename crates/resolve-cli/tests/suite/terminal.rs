//! Colors as the conventions of the terminal ask: `--color`, `NO_COLOR`, `CLICOLOR_FORCE`.

use super::common::Workspace;

const LIB: &str = "fn main() { foo(1); }\n";

fn preview_with(workspace: &Workspace, env: &[(&str, &str)]) -> String {
    let mut command = workspace.command(&["ast-edit", "-p", "foo($A)", "-r", "bar($A)", "."]);
    for (key, value) in env {
        command.env(key, value);
    }
    let output = command.output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn clicolor_force_colors_the_diff_and_the_block_even_into_a_pipe() {
    let workspace = Workspace::with(&[("a.rs", LIB)]);
    let preview = preview_with(&workspace, &[("CLICOLOR_FORCE", "1")]);
    assert!(
        preview.contains("\x1b[32m+fn main() { bar(1); }"),
        "{preview:?}"
    );
    assert!(
        preview.contains("\x1b[31m-fn main() { foo(1); }"),
        "{preview:?}"
    );
    let output = workspace
        .command(&["apply", "--reason", "Go."])
        .env("CLICOLOR_FORCE", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("\x1b[7m"),
        "the block is colored: {stdout:?}"
    );
}

#[test]
fn no_color_wins_over_clicolor_force_and_a_pipe_is_plain() {
    let workspace = Workspace::with(&[("a.rs", LIB)]);
    let preview = preview_with(&workspace, &[("NO_COLOR", "1"), ("CLICOLOR_FORCE", "1")]);
    assert!(!preview.contains('\x1b'), "{preview:?}");
    let preview = preview_with(&workspace, &[]);
    assert!(!preview.contains('\x1b'), "{preview:?}");
}

#[test]
fn color_always_beats_no_color() {
    let workspace = Workspace::with(&[("a.rs", LIB)]);
    let output = workspace
        .command(&[
            "--color", "always", "ast-edit", "-p", "foo($A)", "-r", "bar($A)", ".",
        ])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("\x1b[32m+"), "{stdout:?}");
}

#[test]
fn plain_output_passes_a_file_s_own_escape_bytes_through_unchanged() {
    let workspace = Workspace::with(&[("a.py", "x = foo('\x1b[1m')\n")]);
    let output = workspace
        .command(&["ast-edit", "-p", "foo($A)", "-r", "bar($A)", "."])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("+x = bar('\x1b[1m')"), "{stdout:?}");
}
