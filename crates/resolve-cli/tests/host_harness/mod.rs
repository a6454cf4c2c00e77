//! The real-host harness shared by the host test binaries: the hosts (Claude Code, Codex) and
//! how each is run against the scripted model on 127.0.0.1, a throwaway lab (root and `HOME`),
//! a person's `resolve` in another process, and a run's report.

#![allow(
    dead_code,
    reason = "each host test binary uses the part of the harness it needs"
)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

use crate::suite::common::{Model, external_tool};
use resolve_test_support::{MockServer, Recorded, Reply, TestDir, Turn};
use serde_json::{Value, json};

/// How long one host run may take (a run is a few seconds; CI machines are slow and shared).
pub const HOST_TIMEOUT: Duration = Duration::from_secs(240);

/// The name `resolve mcp` is registered under in both hosts.
pub const SERVER: &str = "resolve";

/// The reminder ending every tool result while the connection has a pending preview.
pub const REMINDER: &str = "<system-reminder>\nThis is a preview. Call the `resolve` tool to apply or discard these changes.\n</system-reminder>";

/// The file every test starts from, and what the scripted `edit` makes of it.
pub const BEFORE: &str = "one\ntwo\nthree\n";
pub const AFTER: &str = "one\nTWO\nthree\n";

#[derive(Debug, Clone, Copy)]
pub enum Host {
    /// `@anthropic-ai/claude-code`, `claude -p`.
    ClaudeCode,
    /// `@openai/codex`, `codex exec`.
    Codex,
}

impl Host {
    pub fn name(self) -> &'static str {
        match self {
            Self::ClaudeCode => "Claude Code",
            Self::Codex => "Codex",
        }
    }

    /// The host's executable from its environment variable; `None` (skip) outside CI.
    pub fn binary(self) -> Option<PathBuf> {
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
        external_tool(
            variable,
            &format!("{} ({install})", self.name()),
            "a real-host test",
        )
    }

    /// A model turn calling the `resolve mcp` tool `tool`, as this host offers it: Claude Code
    /// as `mcp__resolve__<tool>`, Codex as `<tool>` inside its namespace tool `mcp__resolve`.
    pub fn call(self, id: &str, tool: &str, arguments: &Value) -> Reply {
        let namespace = format!("mcp__{SERVER}");
        Reply::Turn(match self {
            Self::ClaudeCode => Turn::call(id, &format!("{namespace}__{tool}"), arguments.clone()),
            Self::Codex => {
                Turn::default().and_namespaced_call(id, &namespace, tool, &arguments.to_string())
            }
        })
    }

    /// The text of call `id`'s tool result in a request `body`, as the model reads it.
    pub fn tool_result(self, body: &Value, id: &str) -> Option<String> {
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
    pub fn command(self, binary: &Path, lab: &Lab, server: &MockServer, prompt: &str) -> Command {
        let resolve = env!("CARGO_BIN_EXE_resolve");
        let mut command = lab.host_command(binary);
        match self {
            Self::ClaudeCode => {
                let config = lab.dir.parent().join("mcp.json");
                let servers = json!({"mcpServers": {SERVER: {"type": "stdio", "command": resolve,
                    "args": ["--root", lab.root, "mcp"], "env": {"HOME": lab.home}}}});
                std::fs::write(&config, servers.to_string()).unwrap();
                let allowed = ["edit", "resolve", "ls", "read"]
                    .map(|tool| format!("mcp__{SERVER}__{tool}"))
                    .join(",");
                claude_code_against(&mut command, server, prompt);
                command.arg("--mcp-config").arg(&config).args([
                    "--strict-mcp-config",
                    "--allowedTools",
                    &allowed,
                ]);
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

{mock_provider}
[mcp_servers.{SERVER}]
command = {resolve}
args = ["--root", {root}, "mcp"]
env = {{ HOME = {home} }}

# `resolve` is destructive; under approval_policy "never" Codex refuses it unless approved here.
[mcp_servers.{SERVER}.tools.resolve]
approval_mode = "approve"
"#,
                    mock_provider = codex_mock_provider(&server.openai_base()),
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
    pub fn run(self, binary: &Path, lab: &Lab, script: Vec<Reply>, prompt: &str) -> HostRun {
        self.run_command(lab, script, |server| {
            self.command(binary, lab, server, prompt)
        })
    }

    /// Run the command `build` makes for the mock at its argument (this host, set up by the
    /// caller), its model answering with `script`.
    pub fn run_command(
        self,
        lab: &Lab,
        script: Vec<Reply>,
        build: impl FnOnce(&MockServer) -> Command,
    ) -> HostRun {
        let model = Model::replies(script);
        let server = model.server();
        let (status, stdout, stderr) = run_host(&mut build(server), &lab.root, lab.dir.parent());
        HostRun {
            host: self,
            status,
            stdout,
            stderr,
            requests: server.requests(),
            unused_replies: server.unused_replies(),
        }
    }
}

/// Run a host's `command` in `cwd` (its standard input empty, its output through files in
/// `scratch`) until it ends or [`HOST_TIMEOUT`] passes, when it is killed: its exit status
/// (`None`: killed), standard output and standard error.
pub fn run_host(
    command: &mut Command,
    cwd: &Path,
    scratch: &Path,
) -> (Option<ExitStatus>, String, String) {
    let stdout_path = scratch.join("host-stdout.txt");
    let stderr_path = scratch.join("host-stderr.txt");
    let program = command.get_program().to_owned();
    let mut child = command
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&stdout_path).unwrap())
        .stderr(std::fs::File::create(&stderr_path).unwrap())
        .spawn()
        .unwrap_or_else(|error| panic!("could not start {}: {error}", program.display()));
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
    (
        status,
        std::fs::read_to_string(&stdout_path).unwrap_or_default(),
        std::fs::read_to_string(&stderr_path).unwrap_or_default(),
    )
}

/// A throwaway directory with the workspace root (holding `a.txt`) and the host's `HOME`.
pub struct Lab {
    /// The test workspace holding the root; `HOME` is beside it.
    pub dir: TestDir,
    pub root: PathBuf,
    pub home: PathBuf,
}

impl Lab {
    pub fn new() -> Self {
        let dir = TestDir::with_files([("a.txt", BEFORE)]);
        let root = dir.root().to_path_buf();
        let home = dir.parent().join("home");
        std::fs::create_dir_all(&home).unwrap();
        Self { dir, root, home }
    }

    /// A command for the host `binary` with nothing but what it needs in its environment:
    /// `PATH`, this lab's `HOME` and a UTF-8 locale.
    pub fn host_command(&self, binary: &Path) -> Command {
        let mut command = Command::new(binary);
        command
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("LANG", "C.UTF-8");
        command
    }

    pub fn file(&self) -> String {
        std::fs::read_to_string(self.root.join("a.txt")).unwrap()
    }
}

/// Point a Claude Code `command` at the mock `server` for one print-mode `prompt`: no real
/// key, no traffic but to the mock, MCP tools offered in the request, JSON output.
pub fn claude_code_against(command: &mut Command, server: &MockServer, prompt: &str) {
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
        .args(["--model", "claude-sonnet-4-5", "--output-format", "json"]);
}

/// A person at a terminal: the `resolve` binary with `args` for `root`, under the same `HOME`
/// as the host's `resolve mcp` (so both find the same per-user state).
pub fn person(root: &Path, home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_resolve"))
        .env("HOME", home)
        .arg("--root")
        .arg(root)
        .args(args)
        .output()
        .unwrap()
}

/// A person in another process, while a host's hook waits: once `resolve pending --json` of
/// `root` names `pending` (within [`HOST_TIMEOUT`]), run `resolve ARGS…` there; its output, or
/// `None` when nothing came pending in time.
pub fn person_when_pending(
    root: &Path,
    home: &Path,
    pending: &str,
    args: &[&str],
) -> std::thread::JoinHandle<Option<Output>> {
    let (root, home, pending) = (root.to_owned(), home.to_owned(), pending.to_owned());
    let args: Vec<String> = args.iter().map(|arg| (*arg).to_owned()).collect();
    std::thread::spawn(move || {
        let started = Instant::now();
        while started.elapsed() < HOST_TIMEOUT {
            let listed = person(&root, &home, &["pending", "--json"]);
            if String::from_utf8_lossy(&listed.stdout).contains(&pending) {
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                return Some(person(&root, &home, &args));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        None
    })
}

/// Whether a person's command ran (`Some`, as [`person_when_pending`] gives it) and succeeded.
pub fn succeeded(decided: &Option<Output>) -> bool {
    decided
        .as_ref()
        .is_some_and(|output| output.status.success())
}

/// One host run: how it ended, what it printed, and what it sent the model.
pub struct HostRun {
    pub host: Host,
    /// `None`: killed after [`HOST_TIMEOUT`].
    pub status: Option<ExitStatus>,
    pub stdout: String,
    pub stderr: String,
    pub requests: Vec<Recorded>,
    pub unused_replies: usize,
}

impl HostRun {
    /// Fail with `what` and the whole story unless `holds`.
    pub fn check(&self, holds: bool, what: &str) {
        assert!(holds, "{what}\n{}", self.report());
    }

    /// The run ended well, and the model was asked exactly once per scripted reply.
    pub fn check_finished(&self, replies: usize) {
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
    pub fn result(&self, number: usize, id: &str) -> String {
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
    pub fn report(&self) -> String {
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
pub fn tail(text: &str, limit: usize) -> &str {
    let mut start = text.len().saturating_sub(limit);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

/// The Codex configuration tables that point the `mock` model provider at `base` (the mock
/// server's OpenAI base URL) without retries, and turn off what would reach the network.
pub fn codex_mock_provider(base: &str) -> String {
    format!(
        r#"# Without these two tables Codex 0.171 looks up chatgpt.com (metrics) and runs
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
"#,
        base = json!(base),
    )
}
