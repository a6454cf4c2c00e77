//! Behavior tests of resolve-agent through its public API and a real HTTP client against a
//! scripted mock model server.

#![allow(
    clippy::disallowed_methods,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests set up and inspect files directly, and they and their helpers (mock server, fixtures) fail by panicking"
)]

mod suite;
