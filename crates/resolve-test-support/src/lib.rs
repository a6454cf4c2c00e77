//! Test support for resolve's test suites: a test workspace ([`TestDir`]: files in, a tree
//! snapshot out), the crash-child harness ([`crash`]), an MCP child process ([`McpChild`]),
//! running a child process with its output shown when it fails ([`process`]), assertions on
//! text and numbered-line fixtures ([`text`]), the npm directory CI installs ([`web_npm_dir`]),
//! and, behind the `model` feature, a scripted mock model server (so store and edit tests do not
//! build the HTTP server).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    reason = "test support panics on broken fixtures and touches files directly, like the tests using it"
)]

pub mod crash;
mod dir;
mod mcp;
#[cfg(feature = "model")]
mod model;
mod npm;
pub mod process;
mod real_code;
pub mod text;

pub use dir::{Entry, TestDir, Tree, copy_tree};
pub use mcp::McpChild;
#[cfg(feature = "model")]
pub use model::*;
pub use npm::{installed_npm_dir, web_npm_dir};
pub use real_code::{python_stdlib, registry_tokio};
