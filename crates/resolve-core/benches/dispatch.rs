//! What a `resolve` call costs in the runtime itself: validating the arguments, finding the
//! head pending action (queue lookup), running its callback and merging the details, and
//! removing it — with 1 and with 10,000 actions stacked under it. Also prints what 10,000
//! stacked pending actions cost in memory.
//!
//! Run: `cargo bench -p resolve-core --bench dispatch` (not part of `cargo test`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group};
use resolve_core::{PendingAction, ResolveSession, ToolResult};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// A pending action like the durable ones: its callbacks capture an id and a path.
fn action(index: usize) -> PendingAction {
    let id = format!("pending-action:ast_edit:{index}");
    let path = format!("src/module_{index}/file.rs");
    let reject_id = id.clone();
    PendingAction::new(
        format!("AST Edit: {index} replacements in 3 files"),
        "ast_edit",
        move |_reason, _extra| {
            let details = json!({"pendingId": id, "appliedFiles": [path], "totalReplacements": 3});
            async move {
                Ok(ToolResult::text("Applied 3 replacements in 3 files.").with_details(details))
            }
        },
    )
    .with_reject(move |_reason, _extra| {
        let _ = &reject_id;
        async move { Ok(None) }
    })
}

/// A session with `depth` actions already stacked.
fn stacked(depth: usize) -> ResolveSession {
    let session = ResolveSession::new();
    for index in 0..depth {
        session.queue_resolve_handler(action(index)).unwrap();
    }
    session
}

fn dispatch(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let cancel = CancellationToken::new();
    let args: Vec<(&str, Value)> = vec![
        (
            "apply",
            json!({"action": "apply", "reason": "Reviewed the diff.", "extra": {"ticket": 7}}),
        ),
        (
            "discard",
            json!({"action": "discard", "reason": "Not needed."}),
        ),
    ];
    let mut group = c.benchmark_group("resolve_dispatch");
    for depth in [0usize, 10_000] {
        for (name, call) in &args {
            let session = stacked(depth);
            let head = action(depth);
            group.bench_function(format!("{name}_head_over_{depth}_stacked"), |b| {
                b.iter(|| {
                    session.queue_resolve_handler(head.clone()).unwrap();
                    let result = runtime
                        .block_on(session.execute_resolve(black_box(call), &cancel))
                        .unwrap();
                    black_box(result)
                });
            });
        }
    }
    group.finish();
}

criterion_group!(benches, dispatch);

/// Resident memory of this process in KiB (Linux), read from `/proc/self/status`.
#[allow(clippy::disallowed_methods)] // the bench, not the I/O-free library, reads it
fn resident_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn report_stack_memory() {
    const DEPTH: usize = 10_000;
    let before = resident_kib();
    let session = stacked(DEPTH);
    let after = resident_kib();
    assert_eq!(session.queue().pending().len(), DEPTH);
    if let (Some(before), Some(after)) = (before, after) {
        println!(
            "memory: {DEPTH} stacked pending actions cost {:.2} MB of resident memory",
            after.saturating_sub(before) as f64 / 1024.0
        );
    }
    drop(session);
}

fn main() {
    report_stack_memory();
    benches();
    Criterion::default().configure_from_args().final_summary();
}
