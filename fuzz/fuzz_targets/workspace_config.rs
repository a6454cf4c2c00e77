//! Fuzz target `workspace_config`: see `resolve_fuzz_targets::workspace_config` for the input format and invariants.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| resolve_fuzz_targets::workspace_config(data));
