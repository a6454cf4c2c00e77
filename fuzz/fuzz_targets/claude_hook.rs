//! Fuzz target `claude_hook`: see `resolve_fuzz_targets::claude_hook` for the input format and invariants.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| resolve_fuzz_targets::claude_hook(data));
