//! One MCP child-process helper: a server process (say `resolve mcp`) spoken to over its stdin
//! and stdout, one JSON-RPC message a line, its stdout read on a thread of its own.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

/// How long a test waits for the next line of the server.
const ANSWER_WITHIN: Duration = Duration::from_secs(30);

/// The protocol version the helper's handshake asks for.
const PROTOCOL_VERSION: &str = "2025-11-25";

/// A running MCP server process; closing its stdin and waiting for it when dropped.
#[derive(Debug)]
pub struct McpChild {
    /// The server process (stdin and stdout piped, stderr dropped).
    child: Child,
    /// The server's stdout, line by line.
    lines: mpsc::Receiver<String>,
    /// The id of the last request sent.
    last_id: u64,
}

impl McpChild {
    /// Start `command` with piped stdin and stdout (stderr dropped); no handshake yet.
    #[must_use]
    pub fn spawn(mut command: Command) -> Self {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        Self {
            child,
            lines,
            last_id: 0,
        }
    }

    /// Start `command` and complete the handshake (`initialize`, then `notifications/initialized`)
    /// as the client named `client`.
    #[must_use]
    pub fn start(command: Command, client: &str) -> Self {
        let mut server = Self::spawn(command);
        server.request(
            "initialize",
            json!({"protocolVersion": PROTOCOL_VERSION, "capabilities": {},
                "clientInfo": {"name": client, "version": "0"}}),
        );
        server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    /// Write one line to the server's stdin.
    pub fn send_line(&mut self, line: &str) {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// Send one JSON-RPC message.
    pub fn send(&mut self, message: &Value) {
        self.send_line(&message.to_string());
    }

    /// The server's next stdout line; panics when none comes in time.
    #[must_use]
    pub fn next_line(&self) -> String {
        self.lines
            .recv_timeout(ANSWER_WITHIN)
            .expect("the server answers")
    }

    /// The server's next stdout line if one comes within `timeout`.
    #[must_use]
    pub fn line_within(&self, timeout: Duration) -> Option<String> {
        self.lines.recv_timeout(timeout).ok()
    }

    /// Send the request `method` with `params` and return its response's `result`,
    /// notifications skipped.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.last_id += 1;
        let id = self.last_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let line = self.next_line();
            let message: Value = serde_json::from_str(&line).unwrap();
            if message.get("id") == Some(&json!(id)) {
                return message["result"].clone();
            }
        }
    }

    /// The server's process id.
    #[must_use]
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Close the server's stdin and wait for it to end; how it ended.
    pub fn finish(&mut self) -> ExitStatus {
        drop(self.child.stdin.take());
        self.child.wait().unwrap()
    }

    /// Call the tool `name` with `arguments`; its result.
    pub fn call(&mut self, name: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({"name": name, "arguments": arguments}))
    }
}

impl Drop for McpChild {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}
