//! Every checked-in fuzz input is replayed on stable Rust: the seed corpora
//! (`fuzz/corpus/<target>/seed-*`) and every crash reproducer (`fuzz/regressions/<target>/*`).
//! A reproducer stays here after its bug is fixed, so the bug cannot come back unnoticed.

#![allow(
    clippy::disallowed_methods,
    reason = "tests set up and inspect files directly"
)]
#![allow(clippy::unwrap_used, reason = "tests fail by panicking")]

use std::path::{Path, PathBuf};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

/// The checked-in inputs of `target`, by file name.
fn inputs(target: &str) -> Vec<(String, Vec<u8>)> {
    let mut inputs = Vec::new();
    for (dir, seeds_only) in [("corpus", true), ("regressions", false)] {
        let Ok(entries) = std::fs::read_dir(fuzz_dir().join(dir).join(target)) else {
            continue;
        };
        for entry in entries {
            let entry = entry.unwrap();
            let name = entry.file_name().to_string_lossy().into_owned();
            if seeds_only && !name.starts_with("seed-") {
                continue;
            }
            inputs.push((
                format!("{dir}/{target}/{name}"),
                std::fs::read(entry.path()).unwrap(),
            ));
        }
    }
    inputs.sort();
    inputs
}

fn replay(target: &str) {
    let inputs = inputs(target);
    assert!(!inputs.is_empty(), "no checked-in inputs for `{target}`");
    let mut broken = Vec::new();
    for (name, data) in inputs {
        match std::panic::catch_unwind(|| resolve_fuzz_targets::run(target, &data)) {
            Ok(known) => assert!(known, "unknown target `{target}`"),
            Err(_) => broken.push(name),
        }
    }
    assert!(
        broken.is_empty(),
        "these inputs break an invariant of `{target}` (see the panics above): {broken:#?}"
    );
}

#[test]
fn every_target_has_a_fuzz_binary_and_a_corpus() {
    for target in resolve_fuzz_targets::TARGETS {
        assert!(
            fuzz_dir()
                .join(format!("fuzz_targets/{target}.rs"))
                .is_file(),
            "fuzz/fuzz_targets/{target}.rs is missing"
        );
        assert!(!inputs(target).is_empty(), "no seed corpus for `{target}`");
    }
}

#[test]
fn resolve_arguments_from_the_corpus_are_accepted_or_refused_naming_a_field() {
    replay("resolve_args");
}

#[test]
fn file_tool_calls_from_the_corpus_stay_confined_and_apply_exactly_the_preview() {
    replay("file_tools");
}

#[test]
fn ast_edit_patterns_from_the_corpus_preview_without_panicking_or_writing() {
    replay("ast_edit");
}

#[test]
fn corrupt_state_files_from_the_corpus_give_clear_errors_and_lose_nothing() {
    replay("store_readers");
}

#[test]
fn model_streams_from_the_corpus_parse_the_same_however_they_are_split() {
    replay("sse_stream");
}

#[test]
fn patches_from_the_corpus_parse_and_preview_without_panicking_or_writing() {
    replay("apply_patch");
}

#[test]
fn merges_from_the_corpus_keep_bytes_and_do_not_depend_on_the_side() {
    replay("three_way_merge");
}

#[test]
fn hunk_addresses_from_the_corpus_are_well_formed_or_refused_by_name() {
    replay("hunk_addresses");
}

#[test]
fn config_files_from_the_corpus_parse_or_are_refused_naming_the_file() {
    replay("workspace_config");
}

#[test]
fn claude_code_hook_inputs_from_the_corpus_round_trip_or_are_refused_saying_why() {
    replay("claude_hook");
}

#[test]
fn codex_hook_inputs_from_the_corpus_keep_their_session_and_patch_or_name_what_is_refused() {
    replay("codex_hook");
}

#[test]
fn reviewer_answers_and_reasons_from_the_corpus_reach_the_model_as_typed() {
    replay("reviewer_prompt");
}
