//! The MCP server through the protocol: an rmcp client talks to [`resolve_mcp::serve`] over an
//! in-memory duplex pipe, as an MCP host would over stdio.

#![allow(
    clippy::disallowed_methods,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests set up and inspect files directly, and fail by panicking"
)]

mod suite {
    pub mod common;

    mod app;
    mod approval;
    mod approver_contract;
    mod check;
    mod errors;
    mod notes_bound;
    mod origins;
    mod patch;
    mod resources;
    mod staging;
    mod tools;
    mod two_agents;
}
