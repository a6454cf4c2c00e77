//! Fuzz target `file_tools`: see `resolve_fuzz_targets::file_tools` for the input format and invariants.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| resolve_fuzz_targets::file_tools(data));
