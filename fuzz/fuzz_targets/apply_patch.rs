//! Fuzz target `apply_patch`: see `resolve_fuzz_targets::apply_patch` for the input format and invariants.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| resolve_fuzz_targets::apply_patch(data));
