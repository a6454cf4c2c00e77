//! Behavior tests of resolve-store through its public API: one test binary, one module per
//! concern.

#![allow(
    clippy::disallowed_methods,
    reason = "tests set up and inspect files directly"
)]

mod suite {
    mod common;

    mod check;
    mod corrupt_state;
    mod decisions;
    mod drafts;
    mod foreign;
    mod rebase;
    mod rederive;
    mod retention;
    mod store;
    mod store_crash;
    mod untrusted_state;
}
