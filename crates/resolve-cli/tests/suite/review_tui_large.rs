//! A large preview in `resolve review` through a real terminal (#31 §4): one `resolve patch`
//! of 2,000 files with 5 hunks each opens with only the files it shows computed, and moving
//! file by file to the last one shows that file's own hunks, the last of them under the
//! cursor after `j`. Marks saved on files a review never computed survive it.
//!
//! Without `tmux` the test fails under CI (`CI` set) and is skipped loudly elsewhere.

#![allow(clippy::print_stderr, reason = "tests explain skips on stderr")]

use resolve_test_support::text::{assert_contains, assert_lacks};
use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use crate::tmux_harness::{Tmux, TmuxRun, resolve_ok, tmux_available};

/// Files in the preview.
const FILES: usize = 2_000;

/// Hunks in each file.
const HUNKS: usize = 5;

/// Write `files` files of 60 lines and the patch that changes lines 5, 15, … 45 of each (one
/// hunk per changed line); the patch's path.
fn large_preview(root: &Path, files: usize) -> std::path::PathBuf {
    std::fs::create_dir(root.join("d")).unwrap();
    let mut patch = String::from("*** Begin Patch\n");
    for file in 0..files {
        let name = format!("d/f{file:04}.txt");
        let text: String = (1..=60)
            .map(|line| format!("{name} line {line}\n"))
            .collect();
        std::fs::write(root.join(&name), text).unwrap();
        writeln!(patch, "*** Update File: {name}").unwrap();
        for hunk in 0..HUNKS {
            let line = hunk * 10 + 5;
            writeln!(
                patch,
                "@@\n {name} line {}\n-{name} line {line}\n+{name} LINE {line}\n {name} line {}",
                line - 1,
                line + 1
            )
            .unwrap();
        }
    }
    patch.push_str("*** End Patch\n");
    let path = root.join("large.patch");
    std::fs::write(&path, patch).unwrap();
    path
}

/// The screen once `ready` holds for it: 2,000 keys take a debug build on a loaded machine
/// longer than the harness's 20 s (this is no timing assertion).
fn wait_long(tmux: &Tmux, what: &str, ready: impl Fn(&str) -> bool) -> String {
    tmux.wait_for_within(
        what,
        Duration::from_secs(300),
        Duration::from_millis(200),
        ready,
    )
}

/// A workspace holding one staged preview of `files` files, and its root.
fn staged(files: usize) -> (tempfile::TempDir, std::path::PathBuf) {
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().join("root");
    std::fs::create_dir(&root).unwrap();
    let patch = large_preview(&root, files);
    resolve_ok(&root, &["patch", patch.to_str().unwrap()]);
    std::fs::remove_file(&patch).unwrap();
    (scratch, root)
}

/// A review of `root` in tmux, ended with the summary on the screen.
fn review(root: &Path) -> TmuxRun {
    TmuxRun::resolve("", root, "review")
}

/// See: #30 §1 with #31 §4. A mark saved on a file the next review never computes survives
/// that review's own marks being saved, and shows when the cursor reaches its file.
#[test]
fn marks_on_files_a_review_did_not_compute_are_kept_when_it_saves_its_own() {
    if !tmux_available() {
        return;
    }
    let (_scratch, root) = staged(20);
    let first = review(&root);
    first.wait_for("the review", |screen| screen.contains("▶ d/f0000.txt#1"));
    first.type_text(&"J".repeat(12));
    first.wait_for("file 12", |screen| screen.contains("▶ d/f0012.txt#1"));
    first.keys(&["Space", "q"]);
    first.wait_for("the summary", |screen| {
        screen.contains("Kept for the next review: 1 rejected hunk.")
    });

    // f0012 is not computed in this review: rejecting a hunk of f0000 saves that mark beside it.
    let second = review(&root);
    let screen = second.wait_for("the review", |screen| screen.contains("▶ d/f0000.txt#1"));
    assert_contains(&screen, "not read yet");
    second.keys(&["Space", "q"]);
    second.wait_for("the summary", |screen| {
        screen.contains("Kept for the next review: 2 rejected hunks.")
    });

    let third = review(&root);
    let screen = third.wait_for("the review", |screen| {
        screen.contains("▶ d/f0000.txt#1") && screen.contains("✗ rejected")
    });
    assert_contains(&screen, "▶ d/f0000.txt#1");
    third.type_text(&"J".repeat(12));
    let screen = third.wait_for("file 12, its mark kept", |screen| {
        screen.contains("▶ d/f0012.txt#1") && screen.contains("✗ rejected")
    });
    assert_contains(&screen, "d/f0012.txt#1");
    third.keys(&["q"]);
}

#[test]
fn a_preview_of_2000_files_opens_and_the_last_file_shows_its_own_last_hunk() {
    if !tmux_available() {
        return;
    }
    let (_scratch, root) = staged(FILES);

    let tmux = review(&root);
    let screen = tmux.wait_for("the review", |screen| screen.contains("▶ d/f0000.txt#1"));
    eprintln!("--- the review opens (80×24):\n{screen}");
    // Only the files the list shows are computed; the rest wait for the cursor.
    assert_contains(&screen, "1995 files not read yet");
    assert_contains(&screen, "d/f0000.txt  +5 -5  5 hunks");
    assert_contains(&screen, "-d/f0000.txt line 5");

    // J to the last file, 100 keys at a time, each batch seen to land before the next (a
    // terminal drops keys typed far ahead of the program reading them).
    let last = format!("d/f{:04}.txt", FILES - 1);
    let mut at = 0;
    let mut screen = String::new();
    while at < FILES - 1 {
        let batch = (FILES - 1 - at).min(100);
        tmux.type_text(&"J".repeat(batch));
        at += batch;
        let file = format!("▶ d/f{at:04}.txt#1");
        screen = wait_long(&tmux, &file, |screen| screen.contains(&file));
    }
    assert_contains(&screen, &format!("{last}  +5 -5  5 hunks"));
    assert_contains(&screen, &format!("-{last} line 5"));

    // Its last hunk is its own: line 45 of that file.
    tmux.type_text(&"j".repeat(HUNKS - 1));
    let screen = tmux.wait_for("the last hunk", |screen| {
        screen.contains(&format!("▶ {last}#{HUNKS}"))
    });
    eprintln!("--- the last hunk of the last file:\n{screen}");
    assert_contains(&screen, &format!("-{last} line 45"));
    assert_contains(&screen, &format!("+{last} LINE 45"));
    // Past the last hunk of the last file the cursor stays.
    tmux.type_text("j");
    let screen = tmux.wait_for("the cursor to stay", |screen| {
        screen.contains(&format!("▶ {last}#{HUNKS}"))
    });
    // Every file was shown on the way, so every file is computed now.
    assert_contains(
        &screen,
        &format!("{} of {} hunks kept", FILES * HUNKS, FILES * HUNKS),
    );
    assert_lacks(&screen, "not read yet");
    tmux.keys(&["q"]);
}
