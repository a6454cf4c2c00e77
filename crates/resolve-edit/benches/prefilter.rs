//! How precise the literal prefilter is and what it buys: for each pattern, the files the
//! prefilter keeps for parsing beside those that really match (of the files searched), and the
//! median wall time of a whole preview with the prefilter and without it (every file parsed).
//!
//! Run: `cargo bench -p resolve-edit --bench prefilter`. The corpus is this workspace's
//! `crates/` unless `RESOLVE_BENCH_CORPUS` names another directory (in the language
//! `RESOLVE_BENCH_LANG`, default rust, with the patterns of `RESOLVE_BENCH_PATTERNS`, one per
//! line, when it is not Rust). The corpus is copied to a temporary directory first: a preview
//! writes its texts under the root's `.resolve/`. `bench/run.py` sets the same counts beside
//! ast-grep's times on larger corpora.

#![allow(
    clippy::expect_used,
    clippy::disallowed_methods,
    reason = "a benchmark: it copies its corpus with std::fs and stops at the first failure"
)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use resolve_edit::{AstEditRequest, Prefilter, Workspace, prefilter_census, preview_ast_edit_with};
use resolve_test_support::{TestDir, copy_tree};

/// The Rust patterns: selective, method chains, medium, dense.
const RUST_PATTERNS: &[&str] = &[
    "mem::replace($A, $B)",
    "$X.as_ref().unwrap()",
    "$X.iter().map($F)",
    "Poll::Ready($V)",
    "$X.unwrap()",
];
const RUNS: usize = 3;

fn main() {
    let corpus = std::env::var_os("RESOLVE_BENCH_CORPUS").map_or_else(
        || {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("..")
                .canonicalize()
                .expect("crates/")
        },
        PathBuf::from,
    );
    let lang = std::env::var("RESOLVE_BENCH_LANG").unwrap_or_else(|_| "rust".to_owned());
    let patterns: Vec<String> = match std::env::var("RESOLVE_BENCH_PATTERNS") {
        Ok(lines) => lines.lines().map(str::to_owned).collect(),
        Err(_) => RUST_PATTERNS.iter().map(|p| (*p).to_owned()).collect(),
    };
    let copy = TestDir::new();
    copy_tree(&corpus, copy.root(), &["target", ".git", ".resolve"]);
    let workspace = Workspace::open(copy.root()).expect("open the copy as a workspace");
    println!(
        "corpus: {} ({lang}), median of {RUNS} previews each",
        corpus.display()
    );
    println!(
        "| pattern | files kept / matching / searched | bytes kept / matching, of those searched | preview | without prefilter |"
    );
    println!("|---|---|---|---|---|");
    for pattern in patterns {
        let request = AstEditRequest::new(&[(&pattern, "")], &["."], Some(&lang));
        let census = prefilter_census(&workspace, &request).expect("census");
        let with = median_preview(&workspace, &request, Prefilter::Literals);
        let without = median_preview(&workspace, &request, Prefilter::Off);
        let share = |bytes: u64| bytes as f64 / census.searched_bytes.max(1) as f64;
        println!(
            "| `{pattern}` | {} / {} / {} | {:.2} / {:.2} | {:.1} ms | {:.1} ms |",
            census.kept,
            census.matching,
            census.searched,
            share(census.kept_bytes),
            share(census.matching_bytes),
            with.as_secs_f64() * 1e3,
            without.as_secs_f64() * 1e3
        );
    }
}

/// The median wall time of [`RUNS`] previews of `request`.
fn median_preview(
    workspace: &Workspace,
    request: &AstEditRequest,
    prefilter: Prefilter,
) -> Duration {
    let mut times: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            preview_ast_edit_with(workspace, request, None, prefilter).expect("preview");
            start.elapsed()
        })
        .collect();
    times.sort();
    times[RUNS / 2]
}
