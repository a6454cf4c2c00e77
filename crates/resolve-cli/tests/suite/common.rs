//! A fresh workspace per test and a way to run `resolve` in it.

use std::path::{Path, PathBuf};
use std::process::Output;

use std::process::Command;

use resolve_test_support::TestDir;

/// A temporary workspace root, and a home directory of its own (`HOME` of every run) so trust
/// records and record keys never touch the real home.
pub struct Workspace {
    dir: TestDir,
    home: tempfile::TempDir,
}

/// What one `resolve` invocation did.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// Collect a finished process's output.
    pub fn from(output: Output) -> Self {
        Self {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// Assert the exit code, showing both streams when it differs.
    #[track_caller]
    pub fn expect_code(self, code: i32) -> Self {
        assert_eq!(
            self.code, code,
            "exit code\n--- stdout\n{}\n--- stderr\n{}",
            self.stdout, self.stderr
        );
        self
    }
}

/// A file written or read in the workspace goes through the test workspace of
/// `resolve-test-support` (`write` creates directories, `read` gives the text).
impl std::ops::Deref for Workspace {
    type Target = TestDir;

    fn deref(&self) -> &TestDir {
        &self.dir
    }
}

impl Workspace {
    /// An empty workspace.
    pub fn new() -> Self {
        Self {
            dir: TestDir::new(),
            home: tempfile::tempdir().unwrap(),
        }
    }

    /// A workspace with `files` (path, content).
    pub fn with(files: &[(&str, &str)]) -> Self {
        let workspace = Self::new();
        for (path, content) in files {
            workspace.write(path, content.as_bytes());
        }
        workspace
    }

    /// The root.
    pub fn root(&self) -> &Path {
        self.dir.root()
    }

    /// The `HOME` of every run.
    pub fn home(&self) -> &Path {
        self.home.path()
    }

    /// The per-user directory of every run (`<home>/.config/resolve`): trust records and the
    /// record key.
    pub fn user_dir(&self) -> PathBuf {
        self.home().join(".config/resolve")
    }

    /// Trust the workspace's `.resolve/config.toml` as it is now (`resolve trust`).
    pub fn trust(&self) {
        self.run(&["trust"]).expect_code(0);
    }

    /// Absolute path of `relative`.
    pub fn path(&self, relative: &str) -> PathBuf {
        self.root().join(relative)
    }

    /// Run `resolve --root <root> ARGS…`.
    pub fn run(&self, args: &[&str]) -> Run {
        Run::from(self.command(args).output().unwrap())
    }

    /// The command for `resolve --root <root> ARGS…`, to adjust before running.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = resolve();
        command
            .arg("--root")
            .arg(self.root())
            .args(args)
            .env_remove("NO_COLOR")
            .env("HOME", self.home())
            .env("COLUMNS", "80");
        command
    }

    /// Ids of the pending actions, head first.
    pub fn pending_ids(&self) -> Vec<String> {
        let run = self.run(&["pending", "--json"]).expect_code(0);
        let value: serde_json::Value = serde_json::from_str(run.stdout.trim()).unwrap();
        value["pending"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["id"].as_str().unwrap().to_owned())
            .collect()
    }
}

/// A command running the built `resolve` binary.
pub fn resolve() -> Command {
    Command::new(env!("CARGO_BIN_EXE_resolve"))
}

/// A mock model server kept alive by its own runtime while the binary talks to it.
pub struct Model {
    _runtime: tokio::runtime::Runtime,
    server: resolve_test_support::MockServer,
}

impl Model {
    /// A server answering with `script`, one turn per request.
    pub fn start(script: Vec<resolve_test_support::Turn>) -> Self {
        Self::replies(
            script
                .into_iter()
                .map(resolve_test_support::Reply::Turn)
                .collect(),
        )
    }

    /// A server answering with `script`, one reply per request.
    pub fn replies(script: Vec<resolve_test_support::Reply>) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let server = runtime.block_on(resolve_test_support::MockServer::start(script));
        Self {
            _runtime: runtime,
            server,
        }
    }

    /// The bodies of every request so far.
    pub fn bodies(&self) -> Vec<serde_json::Value> {
        self.server.bodies()
    }

    /// The content of the last tool result the model was sent.
    pub fn last_tool_result(&self) -> String {
        self.server.last_tool_result()
    }

    /// The OpenAI-compatible base URL (with `/v1`).
    pub fn openai_base(&self) -> String {
        self.server.openai_base()
    }
}

/// `resolve agent --base-url <mock> --model mock EXTRA… TASK`, with `stdin` piped in (so it is
/// never a terminal).
pub fn run_agent(
    workspace: &Workspace,
    model: &Model,
    extra: &[&str],
    task: &str,
    stdin: &str,
) -> Run {
    use std::io::Write;
    use std::process::Stdio;
    let base = model.server.openai_base();
    let mut args = vec![
        "agent",
        "--base-url",
        base.as_str(),
        "--model",
        "mock",
        "--api-key-env",
        "RESOLVE_TEST_NO_KEY",
    ];
    args.extend_from_slice(extra);
    args.push(task);
    let mut child = workspace
        .command(&args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    Run::from(child.wait_with_output().unwrap())
}
