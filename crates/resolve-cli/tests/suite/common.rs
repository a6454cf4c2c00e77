//! A fresh workspace per test and a way to run `resolve` in it.

use std::path::{Path, PathBuf};
use std::process::Output;

use std::process::Command;

use resolve_test_support::TestDir;
use resolve_test_support::process::output_with_stdin;

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

    /// A file's bytes under the root; panics, naming the file, when it cannot be read.
    pub fn bytes(&self, relative: &str) -> Vec<u8> {
        self.read_bytes(relative)
            .unwrap_or_else(|| panic!("cannot read {relative}"))
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
        self.run_ok(&["trust"]);
    }

    /// Absolute path of `relative`.
    pub fn path(&self, relative: &str) -> PathBuf {
        self.root().join(relative)
    }

    /// Run `resolve --root <root> ARGS…`.
    pub fn run(&self, args: &[&str]) -> Run {
        Run::from(self.command(args).output().unwrap())
    }

    /// Run `resolve --root <root> ARGS…` and assert it exited 0 (showing both streams when not).
    #[track_caller]
    pub fn run_ok(&self, args: &[&str]) -> Run {
        self.run(args).expect_code(0)
    }

    /// Run `resolve --root <root> ARGS…` and assert it exited 1, a failure (showing both
    /// streams when not).
    #[track_caller]
    pub fn run_fails(&self, args: &[&str]) -> Run {
        self.run(args).expect_code(1)
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
        let run = self.run_ok(&["pending", "--json"]);
        let value: serde_json::Value = serde_json::from_str(run.stdout.trim()).unwrap();
        value["pending"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["id"].as_str().unwrap().to_owned())
            .collect()
    }
}

/// `resolve ast-edit` turning every `.unwrap()` under `src` into `.expect("checked")`.
pub const UNWRAP_TO_EXPECT: [&str; 6] = [
    "ast-edit",
    "-p",
    "$X.unwrap()",
    "-r",
    "$X.expect(\"checked\")",
    "src",
];

/// The external tool a test drives, from the environment variable `variable`; without it the
/// test fails under CI (`CI` set) and is skipped loudly elsewhere (`what`: the test skipped,
/// `install`: how to get the tool).
pub fn external_tool(variable: &str, install: &str, what: &str) -> Option<PathBuf> {
    let path = std::env::var_os(variable).map(PathBuf::from);
    if path.is_none() {
        let message = format!("{variable} is not set; point it at {install}");
        assert!(std::env::var_os("CI").is_none(), "{message}");
        #[expect(clippy::print_stderr, reason = "a skipped test says so")]
        {
            eprintln!("\n!!!!! SKIPPED {what}: {message} !!!!!\n");
        }
    }
    path
}

/// The lines of `text`, each parsed as JSON (a `--json` run's events, a JSON-lines log).
pub fn json_lines(text: &str) -> Vec<serde_json::Value> {
    text.lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
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

    /// The server itself.
    pub fn server(&self) -> &resolve_test_support::MockServer {
        &self.server
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

/// The reminder the agent adds after a preview's tool result.
pub const REMINDER: &str = "<system-reminder>\nThis is a preview. Call the `resolve` tool to apply or discard these changes.\n</system-reminder>";

/// How many messages of a request body are the preview reminder.
pub fn reminders(body: &serde_json::Value) -> usize {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user" && m["content"] == REMINDER)
        .count()
}

/// The model's call `c1`: `edit` of `a.txt`, `one` to `uno`.
pub fn edit_call() -> resolve_test_support::Turn {
    resolve_test_support::Turn::call(
        "c1",
        "edit",
        serde_json::json!({"path": "a.txt", "old_text": "one", "new_text": "uno"}),
    )
}

/// The model's call `c2`: `resolve` with `action` and `reason`.
pub fn resolve_call(action: &str, reason: &str) -> resolve_test_support::Turn {
    resolve_test_support::Turn::call(
        "c2",
        "resolve",
        serde_json::json!({"action": action, "reason": reason}),
    )
}

/// A model that edits `a.txt` (`one` to `uno`), asks to apply it ("Matches the task."), then
/// answers `then`.
pub fn edit_and_apply_model(then: resolve_test_support::Turn) -> Model {
    Model::start(vec![
        edit_call(),
        resolve_call("apply", "Matches the task."),
        then,
    ])
}

/// The arguments `agent --base-url <base> --model mock --api-key-env RESOLVE_TEST_NO_KEY EXTRA…`
/// (no key is needed by the mock model).
pub fn agent_args<'a>(base: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "agent",
        "--base-url",
        base,
        "--model",
        "mock",
        "--api-key-env",
        "RESOLVE_TEST_NO_KEY",
    ];
    args.extend_from_slice(extra);
    args
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
    let base = model.server.openai_base();
    let mut args = agent_args(&base, extra);
    args.push(task);
    Run::from(output_with_stdin(&mut workspace.command(&args), stdin))
}

/// Run `apply --reason … EXTRA…` killed at each crash point in turn
/// (`resolve_edit::CRASH_AT_ENV`), each time in a fresh workspace from `staged`, until one run
/// completes. After each, every file of `files` (path, before, after) holds its `after` with
/// nothing pending, or every one its `before` with the action still pending (then applying it
/// again lands them all). Asserts that at least 8 crash points were reached.
pub fn apply_at_every_crash_point(
    staged: impl Fn() -> Workspace,
    extra: &[&str],
    files: &[(&str, &str, &str)],
) {
    let mut crashed = 0;
    for point in 1.. {
        let workspace = staged();
        let output = workspace
            .command(&[&["apply", "--reason", "Crash test."], extra].concat())
            .env(resolve_edit::CRASH_AT_ENV, point.to_string())
            .output()
            .unwrap();
        let completed = output.status.success();
        // Any invocation recovers first.
        let pending = workspace.pending_ids();
        let now: Vec<String> = files
            .iter()
            .map(|(path, ..)| workspace.read(path))
            .collect();
        let all_landed = files
            .iter()
            .zip(&now)
            .all(|((.., after), now)| now.as_str() == *after);
        let none_landed = files
            .iter()
            .zip(&now)
            .all(|((_, before, _), now)| now.as_str() == *before);
        assert!(
            all_landed || none_landed,
            "crash point {point}: a mix after recovery:\n{}",
            now.join("\n")
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
            workspace.run_ok(&[&["apply", "--reason", "Again."], extra].concat());
            for (path, _, after) in files {
                assert_eq!(workspace.read(path), *after);
            }
        }
        if completed {
            break;
        }
        crashed += 1;
    }
    assert!(crashed >= 8, "only {crashed} crash points were reached");
}

/// Time `args` (an apply) on a workspace from `staged`, then for each of `rounds` rounds run
/// it on a fresh one and SIGKILL it at an instant spread from its start to past its end. After
/// each kill, recovery runs (`pending`) and `check` judges the round from the pending ids and
/// the texts of `src/f0.rs` … `src/f{files - 1}.rs`. The calibrated duration and workspace.
pub fn kill_at_spread_instants(
    staged: impl Fn() -> Workspace,
    args: &[&str],
    rounds: u32,
    files: usize,
    mut check: impl FnMut(u32, &Workspace, Vec<String>, Vec<String>),
) -> (std::time::Duration, Workspace) {
    let calibration = staged();
    let started = std::time::Instant::now();
    calibration.run_ok(args);
    let full = started.elapsed();
    for round in 0..rounds {
        let workspace = staged();
        let mut child = workspace.command(args).spawn().unwrap();
        std::thread::sleep(full * round * 5 / (rounds * 4));
        let _ = child.kill();
        let _ = child.wait();
        // Any invocation recovers first.
        let pending = workspace.pending_ids();
        let contents: Vec<String> = (0..files)
            .map(|index| workspace.read(&format!("src/f{index}.rs")))
            .collect();
        check(round, &workspace, pending, contents);
    }
    (full, calibration)
}
