//! Behavior tests of resolve-edit through its public API: one test binary, one module per
//! concern (`memory.rs` stays a binary of its own: its counting allocator sees every thread of
//! the process, so it must be the only test running in it).

mod suite {
    mod common;

    mod external;
    mod facts;
    mod filesystem;
    mod merge_differential;
    mod prefilter;
    mod producers;
    mod properties;
    mod read_bounds;
    mod review;
    mod staging;
}
