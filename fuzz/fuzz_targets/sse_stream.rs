//! Fuzz target `sse_stream`: see `resolve_fuzz_targets::sse_stream` for the input format and invariants.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| resolve_fuzz_targets::sse_stream(data));
