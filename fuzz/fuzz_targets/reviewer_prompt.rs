//! Fuzz target `reviewer_prompt`: see `resolve_fuzz_targets::reviewer_prompt` for the input format and invariants.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| resolve_fuzz_targets::reviewer_prompt(data));
