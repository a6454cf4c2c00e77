//! Behavior of the `resolve` binary, driven as a person (or a script) would drive it.

#![allow(
    clippy::disallowed_methods,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests set up and inspect files directly, and fail by panicking"
)]

mod host_harness;
mod tmux_harness;

mod suite {
    pub mod common;

    mod agent;
    mod agent_providers;
    mod check;
    mod commit;
    mod concurrency;
    mod confinement;
    mod crash;
    mod custom_tools;
    mod deadlines;
    mod details_schema;
    mod docs;
    mod faults;
    mod gc;
    mod hostile_model;
    mod hosts;
    mod hosts_claude_hooks;
    mod hosts_codex_hooks;
    mod hunks;
    mod mcp;
    mod mcp_app_browser;
    mod mcp_inspector;
    mod patch;
    mod person;
    mod plan;
    mod rebase;
    mod rebase_settle;
    mod rebase_structural;
    mod review;
    mod review_tui;
    mod review_tui_conflict;
    mod review_tui_large;
    mod shown;
    mod snapshots;
    mod staging;
    mod terminal;
    mod trust;
    mod untrusted_state;
    mod web;
    mod web_browser;
    mod web_parity;
}
