//! Fuzz target `hunk_addresses`: see `resolve_fuzz_targets::hunk_addresses` for the input format and invariants.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| resolve_fuzz_targets::hunk_addresses(data));
