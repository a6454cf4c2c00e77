//! The crash-child harness: a test re-runs its own test binary as a child process that runs one
//! ignored test (the child) with the environment it is given, and reads whether the child
//! aborted at its crash point (a crash point aborts the process: `SIGABRT`).

use std::ffi::OsStr;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Output};

/// The signal a crash point ends the process with.
const SIGABRT: i32 = 6;

/// A child run of this test binary, limited to one ignored test.
#[derive(Debug)]
pub struct CrashChild {
    /// The test binary, told to run only the child test.
    command: Command,
}

impl CrashChild {
    /// A run of the test named `test` in this binary (its full path, as `test_name` gives it).
    #[must_use]
    pub fn new(test: &str) -> Self {
        let mut command = Command::new(std::env::current_exe().unwrap());
        command.args(["--exact", test, "--ignored", "--nocapture"]);
        Self { command }
    }

    /// Set one environment variable of the child.
    #[must_use]
    pub fn env(mut self, key: &str, value: impl AsRef<OsStr>) -> Self {
        self.command.env(key, value);
        self
    }

    /// Run the child to its end and return what it did.
    #[must_use]
    pub fn run(mut self) -> Output {
        self.command.output().unwrap()
    }
}

/// Whether the child aborted at a crash point (rather than finishing or failing).
#[must_use]
pub fn aborted(output: &Output) -> bool {
    output.status.signal() == Some(SIGABRT)
}

/// A test's full name inside its binary from the `module_path!()` of its module (whose first
/// segment is the binary's crate) and its function name.
#[must_use]
pub fn test_name(module_path: &str, name: &str) -> String {
    match module_path.split_once("::") {
        Some((_, path)) => format!("{path}::{name}"),
        None => name.to_owned(),
    }
}

/// The value of the child's environment variable `key`; `None` when the test runs directly (then
/// the child test returns at once).
#[must_use]
pub fn var(key: &str) -> Option<String> {
    std::env::var(key).ok()
}
