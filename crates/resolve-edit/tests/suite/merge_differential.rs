//! The three-way merge a stale preview is rebased with decides exactly as `git merge-file -p
//! CURRENT BASE PREVIEW` does: the same merged bytes for a clean merge, the same conflicts
//! (markers and all) otherwise, on generated files (CRLF and LF lines, a missing final
//! newline, repeated lines, adjacent and overlapping edits, empty files). Skipped, saying so,
//! when no `git` is on the PATH, except in CI, where it must run.

#![allow(
    clippy::disallowed_methods,
    reason = "tests write the three files for git directly"
)]
#![expect(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] functions fail the test by panicking"
)]

use std::path::Path;
use std::process::Command;

use proptest::prelude::*;
use resolve_edit::merge_lines;

/// `git merge-file -p -L current -L base -L preview` of the three files, with no user or
/// system configuration (a `merge.conflictStyle` there would change what it prints): the
/// printed bytes and how many conflicts it found.
fn git_merge(dir: &Path, current: &[u8], base: &[u8], preview: &[u8]) -> (Vec<u8>, i32) {
    std::fs::write(dir.join("current"), current).unwrap();
    std::fs::write(dir.join("base"), base).unwrap();
    std::fs::write(dir.join("preview"), preview).unwrap();
    let output = Command::new("git")
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CEILING_DIRECTORIES", dir.parent().unwrap())
        .args([
            "merge-file",
            "-p",
            "-L",
            "current",
            "-L",
            "base",
            "-L",
            "preview",
        ])
        .args(["current", "base", "preview"])
        .output()
        .unwrap();
    (output.stdout, output.status.code().unwrap())
}

fn git_available() -> bool {
    let found = Command::new("git").arg("--version").output().is_ok();
    assert!(
        found || std::env::var_os("CI").is_none(),
        "CI runs the differential merge test, and it needs `git`"
    );
    if !found {
        eprintln!("skipped: no `git` on the PATH");
    }
    found
}

/// A line from a small alphabet, so that files share and repeat lines; some end in CRLF, some
/// are punctuation only (which git joins conflicts across).
fn line() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => "[a-e]".prop_map(|s| format!("{s}\n").into_bytes()),
        1 => "[a-c]".prop_map(|s| format!("{s}\r\n").into_bytes()),
        1 => Just(b"}\n".to_vec()),
        1 => Just(b"\n".to_vec()),
        1 => "[x-z]{2}".prop_map(|s| format!("{s}\n").into_bytes()),
    ]
}

/// A file: lines, the last one perhaps without its newline.
fn file() -> impl Strategy<Value = Vec<u8>> {
    (prop::collection::vec(line(), 0..12), any::<bool>()).prop_map(|(lines, cut)| {
        let mut bytes = lines.concat();
        if cut && bytes.last() == Some(&b'\n') {
            bytes.pop();
        }
        bytes
    })
}

/// An edit of `base`: some lines removed, replaced or inserted.
fn edited(base: Vec<u8>) -> impl Strategy<Value = Vec<u8>> {
    let lines: Vec<Vec<u8>> = base
        .split_inclusive(|byte| *byte == b'\n')
        .map(<[u8]>::to_vec)
        .collect();
    let len = lines.len();
    (
        prop::collection::vec(
            (0..=len, 0..3usize, prop::collection::vec(line(), 0..3)),
            0..3,
        ),
        any::<bool>(),
    )
        .prop_map(move |(edits, cut)| {
            let mut lines = lines.clone();
            for (at, remove, insert) in edits {
                let at = at.min(lines.len());
                let end = (at + remove).min(lines.len());
                lines.splice(at..end, insert);
            }
            let mut bytes = lines.concat();
            if cut && bytes.last() == Some(&b'\n') {
                bytes.pop();
            }
            bytes
        })
}

fn three_files() -> impl Strategy<Value = (Vec<u8>, Vec<u8>, Vec<u8>)> {
    file().prop_flat_map(|base| (edited(base.clone()), Just(base.clone()), edited(base)))
}

fn assert_same_as_git(dir: &Path, current: &[u8], base: &[u8], preview: &[u8]) {
    let (git_bytes, git_conflicts) = git_merge(dir, current, base, preview);
    let ours = merge_lines(current, base, preview);
    assert_eq!(
        String::from_utf8_lossy(&ours.merged),
        String::from_utf8_lossy(&git_bytes),
        "merged bytes differ for current {:?}, base {:?}, preview {:?}",
        String::from_utf8_lossy(current),
        String::from_utf8_lossy(base),
        String::from_utf8_lossy(preview),
    );
    assert_eq!(ours.merged, git_bytes);
    assert_eq!(ours.conflicts.len() as i32, git_conflicts);
    // Which side is which does not change a clean result.
    let swapped = merge_lines(preview, base, current);
    assert_eq!(ours.conflicts.is_empty(), swapped.conflicts.is_empty());
    if ours.conflicts.is_empty() {
        assert_eq!(ours.merged, swapped.merged);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn merges_as_git_merge_file_does((current, base, preview) in three_files()) {
        if !git_available() {
            return Ok(());
        }
        let dir = tempfile::tempdir().unwrap();
        assert_same_as_git(dir.path(), &current, &base, &preview);
    }
}

#[test]
fn named_cases_merge_as_git_merge_file_does() {
    if !git_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&str, &str, &str)] = &[
        // Changes apart, CRLF kept.
        (
            "A\r\nb\r\nc\r\nd\r\ne\r\n",
            "a\r\nb\r\nc\r\nd\r\ne\r\n",
            "a\r\nb\r\nc\r\nd\r\nE\r\n",
        ),
        // Adjacent changes conflict.
        ("a\nB\nc\n", "a\nb\nc\n", "a\nb\nC\n"),
        // Overlapping changes conflict.
        ("a\nX\nY\nd\n", "a\nb\nc\nd\n", "a\nb\nZ\nd\n"),
        // No final newline on one side.
        ("a\nb\nc", "a\nb\nc\n", "A\nb\nc\n"),
        // The same change on both sides.
        ("a\nB\nc\n", "a\nb\nc\n", "a\nB\nc\n"),
        // A created file on both sides (empty base).
        ("x\n", "", "y\n"),
        // Everything deleted on one side.
        ("", "a\nb\n", "a\nB\n"),
    ];
    for (current, base, preview) in cases {
        assert_same_as_git(
            dir.path(),
            current.as_bytes(),
            base.as_bytes(),
            preview.as_bytes(),
        );
    }
}
