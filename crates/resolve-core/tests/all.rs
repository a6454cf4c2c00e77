//! Conformance suite of `resolve-core`, through its public API only.
//!
//! One test binary; each module covers one part of the runtime and names the reference
//! checklist items (`spec/reference-behavior.md` §9) it ports.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers, like the tests themselves, fail by panicking"
)]

mod suite {
    pub mod common;

    mod pending;
    mod pending_model;
    mod queue;
    mod render;
    mod resolve_tool;
    mod session;
    mod soft_gate;
}
