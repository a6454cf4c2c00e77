//! Fuzz target `three_way_merge`: see `resolve_fuzz_targets::three_way_merge` for the input format and invariants.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| resolve_fuzz_targets::three_way_merge(data));
