//! Fuzz target `store_readers`: see `resolve_fuzz_targets::store_readers` for the input format and invariants.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| resolve_fuzz_targets::store_readers(data));
