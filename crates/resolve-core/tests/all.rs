//! Conformance suite of `resolve-core`, through its public API only.
//!
//! One test binary; each module covers one part of the runtime, case by case as the original
//! TypeScript implementation behaves (resolve follows it where the contracts are shared).

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
