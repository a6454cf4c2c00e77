//! Behavior tests of resolve-agent through its public API and a real HTTP client against a
//! scripted mock model server.

#![allow(
    clippy::disallowed_methods,
    reason = "tests set up and inspect files directly"
)]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test support (mock server, helpers) panics on broken fixtures, like the tests"
)]

mod suite;
