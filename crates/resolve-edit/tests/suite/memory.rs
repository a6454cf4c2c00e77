//! A preview holds nothing per file it changes: the peak heap of staging an `ast_edit` preview
//! (and of printing its details) is measured with a counting allocator, for a change to a few
//! files and to four times as many, and may not grow with them. The measure is bytes
//! allocated, not time, so a busy machine does not change it.
//!
//! The allocator counts every thread of the process, so the measure runs alone: the test
//! re-runs this binary as a child process that runs only the (ignored) measuring test.

#![allow(
    unsafe_code,
    reason = "a global allocator is implemented with `unsafe`"
)]
#![expect(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] functions fail the test by panicking"
)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use resolve_edit::{FileToolOutput, FileTools, Origin, Store, Workspace};
use resolve_test_support::crash::{self, CrashChild};
use serde_json::json;

/// The system allocator, counting the bytes live now and the most live at once.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(by: usize) {
    let live = LIVE.fetch_add(by, Ordering::Relaxed) + by;
    PEAK.fetch_max(live, Ordering::Relaxed);
}

// SAFETY: every call is passed to `System` unchanged; the counters only observe it.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's guarantees for `layout` are `System`'s.
        let pointer = unsafe { System.alloc(layout) };
        if !pointer.is_null() {
            grew(layout.size());
        }
        pointer
    }

    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        // SAFETY: `pointer` was allocated by `System` with `layout`.
        unsafe { System.dealloc(pointer, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, pointer: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as for `alloc` and `dealloc`.
        let moved = unsafe { System.realloc(pointer, layout, new_size) };
        if !moved.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            grew(new_size);
        }
        moved
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The peak heap, above what was live before, of staging a preview that rewrites every one of
/// `files` files and of writing out its result details (as `resolve ast-edit --json` does).
fn peak_heap_of_a_preview(files: usize) -> usize {
    let dir = tempfile::tempdir().unwrap();
    for index in 0..files {
        let path = dir
            .path()
            .join(format!("src/d{:02}/f{index:05}.rs", index / 500));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, format!("fn f() -> u32 {{\n    foo({index})\n}}\n")).unwrap();
    }
    let store = Store::open(Workspace::open(dir.path()).unwrap())
        .with_record_key(resolve_store::RecordKey::from_bytes([7; 32]));
    let tools = FileTools::new(store, Origin::Cli).with_max_files(None);
    let args = json!({"ops": [{"pat": "foo($A)", "out": "bar($A)"}], "paths": ["src"]});

    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let FileToolOutput::Staged(staged) = tools.run("ast_edit", &args).unwrap() else {
        panic!("nothing was staged");
    };
    serde_json::to_writer(std::io::sink(), &staged.result_details()).unwrap();
    let peak = PEAK.load(Ordering::Relaxed) - before;

    assert_eq!(staged.details["filesTouched"], files);
    drop(staged);
    peak
}

/// Set in the child process that measures.
const MEASURE_ENV: &str = "RESOLVE_TEST_MEASURE_PREVIEW_HEAP";

#[test]
fn a_preview_of_four_times_the_files_takes_no_more_memory() {
    let output = CrashChild::new(&crash::test_name(module_path!(), "measured_alone"))
        .env(MEASURE_ENV, "1")
        .run();
    assert!(
        output.status.success(),
        "the measure failed: {:?}\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("1 passed"),
        "the measure did not run: {}",
        String::from_utf8_lossy(&output.stdout)
    );
}

/// The measure itself, alone in a child process; does nothing when run directly.
#[test]
#[ignore = "run alone in a child process by the test above"]
fn measured_alone() {
    if crash::var(MEASURE_ENV).is_none() {
        return;
    }
    let few = peak_heap_of_a_preview(1500);
    let many = peak_heap_of_a_preview(6000);
    // Keeping a few hundred bytes per changed file (a path, hashes, a details entry), as
    // previews once did, would add well over 1 MB for the 4500 more files.
    let allowed = few + 512 * 1024;
    assert!(
        many <= allowed,
        "peak heap {many} B for 6000 changed files, {few} B for 1500 (allowed {allowed} B)"
    );
}
