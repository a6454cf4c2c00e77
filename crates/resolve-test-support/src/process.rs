//! Running a child process in a test: its output with the streams shown when it fails, and
//! with text fed to its standard input.

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// Standard error of `output` as text.
#[must_use]
pub fn stderr_text(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Standard output of `output` as text.
#[must_use]
pub fn stdout_text(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Run `command` to the end, assert it succeeded (printing both streams when it did not) and
/// return its standard output as text.
#[track_caller]
pub fn output_ok(command: &mut Command) -> String {
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "{command:?} exited with {}\n--- stdout\n{}\n--- stderr\n{}",
        output.status,
        stdout_text(&output),
        stderr_text(&output)
    );
    stdout_text(&output)
}

/// Run `command` with `stdin` written to its standard input (then closed) and both output
/// streams captured, and return what it printed once it ends.
#[track_caller]
pub fn output_with_stdin(command: &mut Command, stdin: &str) -> Output {
    command.stdin(Stdio::piped());
    command.stdout(Stdio::piped());
    command.stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.as_bytes()).unwrap();
    drop(input);
    child.wait_with_output().unwrap()
}
