//! Fuzz target `resolve_args`: see `resolve_fuzz_targets::resolve_args` for the input format and invariants.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| resolve_fuzz_targets::resolve_args(data));
