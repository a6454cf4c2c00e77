//! `resolve mcp` inside the real hosts people use: Claude Code (`claude -p`) and Codex
//! (`codex exec`), each pointed at a scripted model on 127.0.0.1 (the mock of
//! `resolve-test-support`: Anthropic Messages for Claude Code, OpenAI Responses for Codex). The
//! tests read what the host sends the model after each tool call, because only a host decides
//! which part of an MCP result the model sees: the preview's diff, the reminder and the pending
//! id after an `edit`; the result text after `resolve`; a person's decision made in another
//! process, once.
//!
//! The hosts are the executables in `RESOLVE_CLAUDE` and `RESOLVE_CODEX` (`.ci/run` installs
//! the pinned npm packages); without one, its tests fail under CI (`CI` set) and are skipped
//! loudly elsewhere. Each run gets a throwaway `HOME` (and `CODEX_HOME`), an environment with
//! nothing but what it needs (no proxy, no real key), the mock's base URL, and a time limit; a
//! failed test prints the host's output and what it sent the model.

#![allow(
    clippy::disallowed_methods,
    reason = "tests set up and inspect files directly"
)]
#![allow(
    clippy::unwrap_used,
    clippy::print_stderr,
    reason = "tests fail by panicking and explain skips on stderr"
)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use resolve_test_support::{MockServer, Recorded, Reply, Step, Turn};
use serde_json::{Value, json};

/// How long one host run may take (a run is a few seconds; CI machines are slow and shared).
const HOST_TIMEOUT: Duration = Duration::from_secs(240);

/// The name `resolve mcp` is registered under in both hosts.
const SERVER: &str = "resolve";

/// The reminder ending every tool result while the connection has a pending preview.
const REMINDER: &str = "<system-reminder>\nThis is a preview. Call the `resolve` tool to apply or discard these changes.\n</system-reminder>";

/// The file every test starts from, and what the scripted `edit` makes of it.
const BEFORE: &str = "one\ntwo\nthree\n";
const AFTER: &str = "one\nTWO\nthree\n";

#[derive(Debug, Clone, Copy)]
enum Host {
    /// `@anthropic-ai/claude-code`, `claude -p`.
    ClaudeCode,
    /// `@openai/codex`, `codex exec`.
    Codex,
}

impl Host {
    fn name(self) -> &'static str {
        match self {
            Self::ClaudeCode => "Claude Code",
            Self::Codex => "Codex",
        }
    }

    /// The host's executable from its environment variable; `None` (skip) outside CI.
    fn binary(self) -> Option<PathBuf> {
        let (variable, install) = match self {
            Self::ClaudeCode => (
                "RESOLVE_CLAUDE",
                "`npm install @anthropic-ai/claude-code@2.1.332`, then node_modules/.bin/claude",
            ),
            Self::Codex => (
                "RESOLVE_CODEX",
                "`npm install @openai/codex@0.171.0`, then node_modules/.bin/codex",
            ),
        };
        let path = std::env::var_os(variable).map(PathBuf::from);
        if path.is_none() {
            let message = format!(
                "{variable} is not set; point it at {} ({install})",
                self.name()
            );
            assert!(std::env::var_os("CI").is_none(), "{message}");
            eprintln!("\n!!!!! SKIPPED a real-host test: {message} !!!!!\n");
        }
        path
    }

    /// A model turn calling the `resolve mcp` tool `tool`, as this host offers it: Claude Code
    /// as `mcp__resolve__<tool>`, Codex as `<tool>` inside its namespace tool `mcp__resolve`.
    fn call(self, id: &str, tool: &str, arguments: &Value) -> Reply {
        let namespace = format!("mcp__{SERVER}");
        Reply::Turn(match self {
            Self::ClaudeCode => Turn::call(id, &format!("{namespace}__{tool}"), arguments.clone()),
            Self::Codex => {
                Turn::default().and_namespaced_call(id, &namespace, tool, &arguments.to_string())
            }
        })
    }

    /// The text of call `id`'s tool result in a request `body`, as the model reads it.
    fn tool_result(self, body: &Value, id: &str) -> Option<String> {
        let (items, kind, id_key, content_key) = match self {
            Self::ClaudeCode => {
                let blocks = body["messages"]
                    .as_array()?
                    .iter()
                    .filter_map(|message| message["content"].as_array())
                    .flatten()
                    .cloned()
                    .collect::<Vec<Value>>();
                (blocks, "tool_result", "tool_use_id", "content")
            }
            Self::Codex => (
                body["input"].as_array()?.clone(),
                "function_call_output",
                "call_id",
                "output",
            ),
        };
        let item = items
            .iter()
            .find(|item| item["type"] == kind && item[id_key] == id)?;
        Some(match &item[content_key] {
            Value::String(text) => text.clone(),
            Value::Array(parts) => parts
                .iter()
                .map(|part| part["text"].as_str().unwrap_or_default())
                .collect::<Vec<_>>()
                .join("\n"),
            other => other.to_string(),
        })
    }

    /// The host's command for one prompt against the mock at `server`, with `resolve mcp` for
    /// the lab's root registered as `resolve`.
    fn command(self, binary: &Path, lab: &Lab, server: &MockServer, prompt: &str) -> Command {
        let resolve = env!("CARGO_BIN_EXE_resolve");
        let mut command = Command::new(binary);
        command
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &lab.home)
            .env("LANG", "C.UTF-8");
        match self {
            Self::ClaudeCode => {
                let config = lab.dir.path().join("mcp.json");
                let servers = json!({"mcpServers": {SERVER: {"type": "stdio", "command": resolve,
                    "args": ["--root", lab.root, "mcp"], "env": {"HOME": lab.home}}}});
                std::fs::write(&config, servers.to_string()).unwrap();
                let allowed = ["edit", "resolve", "ls", "read"]
                    .map(|tool| format!("mcp__{SERVER}__{tool}"))
                    .join(",");
                command
                    .env("ANTHROPIC_BASE_URL", server.anthropic_base())
                    .env("ANTHROPIC_API_KEY", "mock-key-for-127.0.0.1")
                    // Without this, Claude Code 2.1 defers MCP tools behind a search tool and
                    // leaves them out of the request's `tools`.
                    .env("ENABLE_TOOL_SEARCH", "false")
                    .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
                    .env("DISABLE_TELEMETRY", "1")
                    .env("DISABLE_AUTOUPDATER", "1")
                    .env("DISABLE_ERROR_REPORTING", "1")
                    .env("DISABLE_BUG_COMMAND", "1")
                    .arg("-p")
                    .arg(prompt)
                    .arg("--mcp-config")
                    .arg(&config)
                    .args(["--strict-mcp-config", "--allowedTools", &allowed])
                    .args(["--model", "claude-sonnet-4-5", "--output-format", "json"]);
            }
            Self::Codex => {
                let codex_home = lab.home.join(".codex");
                std::fs::create_dir_all(&codex_home).unwrap();
                let quoted = |value: &dyn AsRef<Path>| json!(value.as_ref()).to_string();
                let config = format!(
                    r#"model = "gpt-5"
model_provider = "mock"
approval_policy = "never"
sandbox_mode = "read-only"
check_for_update_on_startup = false

# Without these two tables Codex 0.171 looks up chatgpt.com (metrics) and runs
# `git ls-remote https://github.com/openai/plugins.git` (plugins) at start; with them, a run
# under strace connects to 127.0.0.1 only.
[analytics]
enabled = false

[features]
plugins = false

[model_providers.mock]
name = "mock"
base_url = {base}
wire_api = "responses"
env_key = "RESOLVE_MOCK_KEY"
request_max_retries = 0
stream_max_retries = 0

[mcp_servers.{SERVER}]
command = {resolve}
args = ["--root", {root}, "mcp"]
env = {{ HOME = {home} }}

# `resolve` is destructive; under approval_policy "never" Codex refuses it unless approved here.
[mcp_servers.{SERVER}.tools.resolve]
approval_mode = "approve"
"#,
                    base = json!(server.openai_base()),
                    resolve = quoted(&resolve),
                    root = quoted(&lab.root),
                    home = quoted(&lab.home),
                );
                std::fs::write(codex_home.join("config.toml"), config).unwrap();
                command
                    .env("CODEX_HOME", &codex_home)
                    .env("RESOLVE_MOCK_KEY", "mock-key-for-127.0.0.1")
                    .args(["exec", "--skip-git-repo-check", prompt]);
            }
        }
        command
    }

    /// Run this host once on `prompt`, its model answering with `script`.
    fn run(self, binary: &Path, lab: &Lab, script: Vec<Reply>, prompt: &str) -> HostRun {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let server = runtime.block_on(MockServer::start(script));
        let stdout_path = lab.dir.path().join("host-stdout.txt");
        let stderr_path = lab.dir.path().join("host-stderr.txt");
        let mut child = self
            .command(binary, lab, &server, prompt)
            .current_dir(&lab.root)
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&stdout_path).unwrap())
            .stderr(std::fs::File::create(&stderr_path).unwrap())
            .spawn()
            .unwrap_or_else(|error| panic!("could not start {}: {error}", binary.display()));
        let started = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break Some(status);
            }
            if started.elapsed() > HOST_TIMEOUT {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        HostRun {
            host: self,
            status,
            stdout: std::fs::read_to_string(&stdout_path).unwrap_or_default(),
            stderr: std::fs::read_to_string(&stderr_path).unwrap_or_default(),
            requests: server.requests(),
            unused_replies: server.unused_replies(),
        }
    }
}

/// A throwaway directory with the workspace root (holding `a.txt`) and the host's `HOME`.
struct Lab {
    dir: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
}

impl Lab {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        let home = dir.path().join("home");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(root.join("a.txt"), BEFORE).unwrap();
        Self { dir, root, home }
    }

    fn file(&self) -> String {
        std::fs::read_to_string(self.root.join("a.txt")).unwrap()
    }
}

/// A person at a terminal: the `resolve` binary with `args` for `root`, under the same `HOME`
/// as the host's `resolve mcp` (so both find the same per-user state).
fn person(root: &Path, home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_resolve"))
        .env("HOME", home)
        .arg("--root")
        .arg(root)
        .args(args)
        .output()
        .unwrap()
}

/// One host run: how it ended, what it printed, and what it sent the model.
struct HostRun {
    host: Host,
    /// `None`: killed after [`HOST_TIMEOUT`].
    status: Option<ExitStatus>,
    stdout: String,
    stderr: String,
    requests: Vec<Recorded>,
    unused_replies: usize,
}

impl HostRun {
    /// Fail with `what` and the whole story unless `holds`.
    fn check(&self, holds: bool, what: &str) {
        assert!(holds, "{what}\n{}", self.report());
    }

    /// The run ended well, and the model was asked exactly once per scripted reply.
    fn check_finished(&self, replies: usize) {
        self.check(
            self.status.is_some_and(|status| status.success())
                && self.unused_replies == 0
                && self.requests.len() == replies,
            &format!(
                "{} should exit 0 after {replies} model requests",
                self.host.name()
            ),
        );
    }

    /// The text of call `id`'s result as the model read it in request `number` (from 1).
    fn result(&self, number: usize, id: &str) -> String {
        let text = self
            .requests
            .get(number - 1)
            .and_then(|request| self.host.tool_result(&request.body, id));
        self.check(
            text.is_some(),
            &format!("request {number} should carry the result of call `{id}`"),
        );
        text.unwrap_or_default()
    }

    /// The host's exit, output and, per model request, the tools offered and the newest input.
    fn report(&self) -> String {
        let mut out = format!(
            "--- {} exit: {}; {} model request(s); {} scripted repl(ies) unused\n--- stderr\n{}\n--- stdout\n{}\n",
            self.host.name(),
            self.status.map_or_else(
                || format!("killed after {HOST_TIMEOUT:?}"),
                |s| s.to_string()
            ),
            self.requests.len(),
            self.unused_replies,
            tail(&self.stderr, 6000),
            tail(&self.stdout, 3000),
        );
        for (index, request) in self.requests.iter().enumerate() {
            let body = &request.body;
            let mut tools = Vec::new();
            for tool in body["tools"].as_array().into_iter().flatten() {
                tools.push(tool["name"].as_str().unwrap_or("?").to_owned());
                for inner in tool["tools"].as_array().into_iter().flatten() {
                    tools.push(format!("  {}", inner["name"].as_str().unwrap_or("?")));
                }
            }
            let newest = match self.host {
                Host::ClaudeCode => body["messages"].as_array().and_then(|m| m.last()),
                Host::Codex => body["input"].as_array().and_then(|i| i.last()),
            };
            let newest = newest.map(Value::to_string).unwrap_or_default();
            let _ = write!(
                out,
                "--- request {} to {}: tools [{}]\n    newest input: {}\n",
                index + 1,
                request.path,
                tools.join(", "),
                tail(&newest, 4000)
            );
        }
        out
    }
}

/// The last `limit` bytes of `text` (on a character boundary).
fn tail(text: &str, limit: usize) -> &str {
    let mut start = text.len().saturating_sub(limit);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

fn edit_call(host: Host) -> Reply {
    host.call(
        "call_edit",
        "edit",
        &json!({"path": "a.txt", "old_text": "two\n", "new_text": "TWO\n"}),
    )
}

fn done() -> Reply {
    Reply::Turn(Turn::text("Done."))
}

/// After `edit`, the model reads the staged sentence, the unified diff (real lines), the
/// pending id and the reminder; the file is untouched.
fn edit_result_carries_the_diff_the_reminder_and_the_pending_id(host: Host) {
    let Some(binary) = host.binary() else {
        return;
    };
    let lab = Lab::new();
    let run = host.run(
        &binary,
        &lab,
        vec![edit_call(host), done()],
        "In a.txt, change two to TWO.",
    );
    run.check_finished(2);
    let text = run.result(2, "call_edit");
    for part in [
        "Staged as a preview",
        "@@ -1,3 +1,3 @@",
        "\n one\n-two\n+TWO\n three",
        "pending-action:edit:1",
        REMINDER,
    ] {
        run.check(
            text.contains(part),
            &format!("the edit result should carry {part:?}; it is:\n{text}"),
        );
    }
    run.check(
        lab.file() == BEFORE,
        "a.txt must not change before an apply",
    );
}

/// After `resolve` with `apply`, the model reads the result text (no reminder: nothing is
/// pending), and the file holds exactly the previewed bytes.
fn resolve_apply_result_carries_the_applied_text_and_the_file_holds_the_preview(host: Host) {
    let Some(binary) = host.binary() else {
        return;
    };
    let lab = Lab::new();
    let apply = json!({"action": "apply", "reason": "The task asks for TWO."});
    let run = host.run(
        &binary,
        &lab,
        vec![
            edit_call(host),
            host.call("call_resolve", "resolve", &apply),
            done(),
        ],
        "In a.txt, change two to TWO, then apply it.",
    );
    run.check_finished(3);
    let text = run.result(3, "call_resolve");
    run.check(
        text.contains("Applied edit to a.txt.") && !text.contains(REMINDER),
        &format!("the resolve result should say `Applied edit to a.txt.` without the reminder; it is:\n{text}"),
    );
    let file = lab.file();
    run.check(
        file == AFTER,
        &format!("a.txt should hold the previewed bytes {AFTER:?}, not {file:?}"),
    );
}

/// A person discards the model's preview from a terminal (another process) while the model
/// "thinks"; the model's next tool result carries the reviewer note with the person's reason,
/// and the one after it does not repeat it.
fn a_persons_decision_in_another_process_reaches_the_model_once(host: Host) {
    let Some(binary) = host.binary() else {
        return;
    };
    let lab = Lab::new();
    let reason = "Keep it lowercase; TWO is a reserved word here.";
    let decided: Arc<Mutex<Option<Output>>> = Arc::default();
    let person = {
        let decided = decided.clone();
        let (root, home) = (lab.root.clone(), lab.home.clone());
        Step::new(move |_request| {
            let args = [
                "discard",
                "--id",
                "pending-action:edit:1",
                "--reason",
                reason,
            ];
            *decided.lock().unwrap() = Some(person(&root, &home, &args));
            host.call("call_ls", "ls", &json!({}))
        })
    };
    let run = host.run(
        &binary,
        &lab,
        vec![
            edit_call(host),
            Reply::Step(person),
            host.call("call_read", "read", &json!({"path": "a.txt"})),
            done(),
        ],
        "In a.txt, change two to TWO, then look around.",
    );
    let decided = decided.lock().unwrap().take();
    run.check(
        decided
            .as_ref()
            .is_some_and(|output| output.status.success()),
        &format!("the person's `resolve discard` should succeed: {decided:?}"),
    );
    run.check_finished(4);
    let note = run.result(3, "call_ls");
    for part in [
        "A reviewer discarded pending-action:edit:1 (Edit: a.txt); nothing was written.",
        &format!("Reason: {}", json!(reason)),
    ] {
        run.check(
            note.contains(part),
            &format!("the next tool result should carry {part:?}; it is:\n{note}"),
        );
    }
    let after = run.result(4, "call_read");
    run.check(
        !after.contains("A reviewer") && !after.contains(reason),
        &format!("the note should arrive once; the result after it is:\n{after}"),
    );
    run.check(lab.file() == BEFORE, "a discarded preview writes nothing");
}

#[test]
fn claude_code_edit_result_carries_the_diff_the_reminder_and_the_pending_id() {
    edit_result_carries_the_diff_the_reminder_and_the_pending_id(Host::ClaudeCode);
}

#[test]
fn claude_code_resolve_apply_result_carries_the_applied_text_and_the_file_holds_the_preview() {
    resolve_apply_result_carries_the_applied_text_and_the_file_holds_the_preview(Host::ClaudeCode);
}

#[test]
fn claude_code_shows_a_persons_decision_in_another_process_to_the_model_once() {
    a_persons_decision_in_another_process_reaches_the_model_once(Host::ClaudeCode);
}

#[test]
fn codex_edit_result_carries_the_diff_the_reminder_and_the_pending_id() {
    edit_result_carries_the_diff_the_reminder_and_the_pending_id(Host::Codex);
}

#[test]
fn codex_resolve_apply_result_carries_the_applied_text_and_the_file_holds_the_preview() {
    resolve_apply_result_carries_the_applied_text_and_the_file_holds_the_preview(Host::Codex);
}

#[test]
fn codex_shows_a_persons_decision_in_another_process_to_the_model_once() {
    a_persons_decision_in_another_process_reaches_the_model_once(Host::Codex);
}
