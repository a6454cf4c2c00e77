//! Fuzz target `ast_edit`: see `resolve_fuzz_targets::ast_edit` for the input format and invariants.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| resolve_fuzz_targets::ast_edit(data));
