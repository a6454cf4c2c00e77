//! `resolve mcp --approve ask|review`, structured results and resource subscriptions through a
//! client nobody here wrote: the official MCP Python SDK drives the real binary
//! (`crates/resolve-mcp/tests/python/test_mcp_approval.py`) on protocols 2025-11-25 and
//! 2026-07-28. It runs with the interpreter in `RESOLVE_PYTHON` (CI's virtual environment) or
//! `python3`; when the SDK is not importable the test fails under CI (`CI` set) and is skipped
//! loudly elsewhere.

#![allow(
    clippy::unwrap_used,
    clippy::print_stderr,
    reason = "tests fail by panicking and explain skips on stderr"
)]

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::{Command, Stdio};

fn python() -> OsString {
    std::env::var_os("RESOLVE_PYTHON").unwrap_or_else(|| "python3".into())
}

#[test]
fn a_person_approves_through_the_python_sdk_and_nothing_else_writes() {
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
        eprintln!("\n!!!!! SKIPPED the Python MCP SDK approval test: {message} !!!!!\n");
        return;
    }
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../resolve-mcp/tests/python/test_mcp_approval.py");
    let output = Command::new(&python)
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_resolve"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the Python MCP approval checks failed\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
    );
    assert!(stdout.contains(" passed, 0 failed"), "{stdout}");
}
