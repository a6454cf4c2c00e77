//! Behavior tests of resolve-edit through its public API: one test binary, one module per
//! concern. `memory` installs a counting global allocator for the whole binary; its measure
//! runs alone in a child process.

#![allow(
    clippy::disallowed_methods,
    reason = "tests set up and inspect files directly"
)]

mod suite {
    mod common;

    mod external;
    mod facts;
    mod filesystem;
    mod memory;
    mod merge_differential;
    mod prefilter;
    mod producers;
    mod properties;
    mod read_bounds;
    mod review;
    mod staging;
}
