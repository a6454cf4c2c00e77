//! `resolve mcp` as MCP hosts run it: the real binary on stdio.
//!
//! The end-to-end suite is a Python script driving the binary with the official MCP Python SDK
//! (`crates/resolve-mcp/tests/python/test_mcp_client.py`). It runs with the interpreter in
//! `RESOLVE_PYTHON` (CI's virtual environment) or `python3`. When the SDK is not importable the
//! test fails under CI (`CI` set) and is skipped loudly elsewhere. A second script
//! (`test_mcp_approval.py`) covers `--approve ask|review`, result details and subscriptions.

#![allow(clippy::print_stderr, reason = "tests explain skips on stderr")]

use resolve_test_support::text::{assert_contains, assert_starts_with};
use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use resolve_test_support::{McpChild, TestDir};
use serde_json::{Value, json};

/// The Python interpreter to drive the SDK with.
/// A turn of the tests that need the machine's cores to themselves: the Python SDK suites
/// (waits with timeouts) and the huge-file scan (seconds of CPU).
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn python() -> OsString {
    std::env::var_os("RESOLVE_PYTHON").unwrap_or_else(|| "python3".into())
}

/// Run the Python SDK script `name` (in crates/resolve-mcp/tests/python) against the binary and
/// require every one of its checks to pass; `what` names the suite in messages. Fails under CI
/// and is skipped loudly elsewhere when the SDK is not importable. The scripts run one at a time:
/// they wait on subscription notifications with timeouts, which two suites at once on two
/// cores can miss (so does a suite beside the huge-file scan below).
fn run_sdk_script(name: &str, what: &str) {
    let _turn = one_at_a_time();
    let python = python();
    let importable = Command::new(&python)
        .args(["-c", "import mcp"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if !importable {
        let message = format!(
            "the MCP Python SDK is not importable from `{}`; install it with `pip install mcp==2.3.0` or point RESOLVE_PYTHON at an interpreter that has it",
            python.to_string_lossy()
        );
        assert!(std::env::var_os("CI").is_none(), "{message}");
        eprintln!("\n!!!!! SKIPPED the {what}: {message} !!!!!\n");
        return;
    }
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../resolve-mcp/tests/python")
        .join(name);
    let output = Command::new(&python)
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_resolve"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the {what} failed\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
    );
    assert_contains(&stdout, " passed, 0 failed");
}

#[test]
fn the_official_python_mcp_sdk_drives_resolve_mcp_end_to_end() {
    run_sdk_script("test_mcp_client.py", "Python MCP client checks");
}

/// `--approve ask|review`, result details and resource subscriptions on protocols
/// 2025-11-25 and 2026-07-28 (`test_mcp_approval.py`).
#[test]
fn a_person_approves_through_the_python_sdk_and_nothing_else_writes() {
    run_sdk_script("test_mcp_approval.py", "Python MCP approval checks");
}

/// A `resolve mcp` process spoken to line by line.
struct RawServer {
    mcp: McpChild,
    root: TestDir,
}

impl RawServer {
    fn start(files: &[(&str, &str)]) -> Self {
        let root = TestDir::with_files(files.iter().copied());
        let mut command = Command::new(env!("CARGO_BIN_EXE_resolve"));
        command.arg("--root").arg(root.root()).arg("mcp");
        Self {
            mcp: McpChild::spawn(command),
            root,
        }
    }

    fn send(&mut self, line: &str) {
        self.mcp.send_line(line);
    }

    /// The next stdout line, which must be a JSON-RPC message.
    fn receive(&self) -> Value {
        let line = self.mcp.next_line();
        let message: Value = serde_json::from_str(&line)
            .unwrap_or_else(|error| panic!("stdout carried a non-JSON line ({error}): {line}"));
        assert_eq!(message["jsonrpc"], "2.0", "{line}");
        message
    }

    /// The response to request `id`, skipping notifications.
    fn response(&self, id: u64) -> Value {
        loop {
            let message = self.receive();
            if message.get("id") == Some(&json!(id)) {
                return message;
            }
            assert!(
                message.get("method").is_some(),
                "unexpected message {message}"
            );
        }
    }
}

#[test]
fn garbage_and_malformed_requests_get_protocol_errors_and_the_server_keeps_serving() {
    let mut server = RawServer::start(&[("a.txt", "a\n")]);
    server.send("this is not json");
    server.send(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#);
    let initialized = server.response(1);
    assert_eq!(initialized["result"]["serverInfo"]["name"], "resolve");
    server.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    server.send("{not json either");

    // Arguments that are not an object: a malformed tools/call, answered with a JSON-RPC error.
    server.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"resolve","arguments":"apply"}}"#);
    let malformed = server.response(2);
    assert!(malformed.get("error").is_some(), "{malformed}");

    // Well-formed but schema-violating arguments: a tool result the model can read.
    server.send(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"resolve","arguments":{"action":"apply"}}}"#);
    let invalid = server.response(3);
    assert_eq!(invalid["result"]["isError"], true, "{invalid}");
    assert_eq!(
        invalid["result"]["content"][0]["text"],
        "Invalid arguments for `resolve`: `reason` is required"
    );

    server.send(r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"edit","arguments":{"path":"a.txt","old_text":"a","new_text":"A"}}}"#);
    let staged = server.response(4);
    assert_eq!(staged["result"]["isError"], false, "{staged}");
    assert_eq!(
        staged["result"]["_meta"]["resolve/details"]["pendingId"],
        "pending-action:edit:1"
    );

    server.send(r#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#);
    let listed = server.response(5);
    assert_eq!(listed["result"]["tools"].as_array().unwrap().len(), 8);

    // Closing stdin ends the server cleanly.
    let status = server.mcp.finish();
    assert!(status.success(), "{status}");
    // Whatever else reached stdout was JSON-RPC too.
    while let Some(line) = server.mcp.line_within(Duration::from_millis(200)) {
        let message: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(message["jsonrpc"], "2.0", "{line}");
    }
}

#[test]
fn mcp_help_explains_the_server() {
    let output = Command::new(env!("CARGO_BIN_EXE_resolve"))
        .args(["mcp", "--help"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let help = String::from_utf8_lossy(&output.stdout);
    assert_contains(&help, "MCP client over stdin/stdout");
    assert_contains(&help, "reminder");
    assert_contains(&help, "RESOLVE_LOG");
}

/// The text of tool result `id`.
fn result_text(server: &RawServer, id: u64) -> String {
    let response = server.response(id);
    response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {response}"))
        .to_owned()
}

/// `lines` lines of text, then zeros up to `size` bytes without storing them (a sparse file).
fn sparse_file(path: &std::path::Path, lines: usize, size: u64) {
    let file = std::fs::File::create(path).unwrap();
    let mut writer = std::io::BufWriter::new(&file);
    for number in 1..=lines {
        writeln!(
            writer,
            "line {number} of the text at the start of a huge file"
        )
        .unwrap();
    }
    writer.flush().unwrap();
    drop(writer);
    file.set_len(size).unwrap();
}

/// Issue #35, item 8: `read {"limit": 1}` of a 2 GiB file peaked at 2.1 GB. Over MCP, `read`
/// of a sparse 3 GiB file and `grep` of a sparse 512 MiB one (which it scans to the end) keep
/// the server's peak resident memory (`VmHWM`, read from `/proc` while it still runs) under
/// 200 MiB.
#[cfg(target_os = "linux")]
#[test]
fn huge_sparse_files_read_and_grepped_over_mcp_keep_the_server_under_200_mib() {
    let _turn = one_at_a_time();
    let mut server = RawServer::start(&[]);
    sparse_file(&server.root.path().join("huge.log"), 300, 3 << 30);
    sparse_file(&server.root.path().join("big.log"), 300, 512 << 20);

    server.send(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#);
    server.response(1);
    server.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    server.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read","arguments":{"path":"huge.log","limit":1}}}"#);
    let read = result_text(&server, 2);
    assert_starts_with(
        &read,
        "     1\tline 1 of the text at the start of a huge file\n\n[Showing lines 1-1 of at least 301",
    );
    server.send(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"grep","arguments":{"pattern":"^line 300 ","path":"big.log"}}}"#);
    assert_eq!(
        result_text(&server, 3),
        "big.log:300:line 300 of the text at the start of a huge file"
    );

    let status = std::fs::read_to_string(format!("/proc/{}/status", server.mcp.id())).unwrap();
    let peak_kib: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|number| number.parse().ok())
        .unwrap();
    assert!(peak_kib < 200 * 1024, "peak resident memory {peak_kib} KiB");
    assert!(server.mcp.finish().success());
}
