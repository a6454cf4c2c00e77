//! `read` and `grep` read what they are asked for: a huge (sparse) file, a line without end and
//! a file that is not UTF-8 far past the lines shown are streamed, not loaded; output is capped
//! with a note; a FIFO is refused before it can block. The peak memory of the same reads in the
//! real binary is measured in `resolve-cli`'s `tests/suite/mcp.rs`.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] functions fail the test by panicking"
)]

use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use pretty_assertions::assert_eq;
use resolve_edit::{
    EditError, GrepRequest, READ_MAX_OUTPUT, READ_SCAN_BUDGET, ReadRequest, Workspace, grep, read,
};
use resolve_test_support::text::assert_starts_with;

fn read_lines(
    workspace: &Workspace,
    path: &str,
    offset: Option<usize>,
    limit: Option<usize>,
) -> Result<String, EditError> {
    read(
        workspace,
        &ReadRequest {
            path: path.into(),
            offset,
            limit,
        },
    )
}

fn grep_for(workspace: &Workspace, pattern: &str, path: &str) -> String {
    grep(
        workspace,
        &GrepRequest {
            pattern: pattern.into(),
            path: Some(path.into()),
        },
    )
    .unwrap()
}

/// `lines` lines of text (more than the 8 KiB sniffed for NUL bytes), then zeros up to `size`
/// bytes without storing them (a sparse file).
fn sparse_file(path: &Path, lines: usize, size: u64) {
    let mut file = File::create(path).unwrap();
    for number in 1..=lines {
        writeln!(
            file,
            "line {number} of the text at the start of a huge file"
        )
        .unwrap();
    }
    file.set_len(size).unwrap();
}

#[test]
fn read_of_a_sparse_3_gib_file_returns_the_first_line_and_a_lower_bound_of_its_lines() {
    let dir = tempfile::tempdir().unwrap();
    sparse_file(&dir.path().join("huge.log"), 300, 3 << 30);
    let workspace = Workspace::open(dir.path()).unwrap();
    let out = read_lines(&workspace, "huge.log", None, Some(1)).unwrap();
    assert_eq!(
        out,
        "     1\tline 1 of the text at the start of a huge file\n\n\
         [Showing lines 1-1 of at least 301 (the rest of the file was not counted). Continue with offset=2.]"
    );
    // Lines past the start are reached by scanning, still without loading the file.
    let later = read_lines(&workspace, "huge.log", Some(300), Some(1)).unwrap();
    assert!(later.starts_with("   300\tline 300 of the text"), "{later}");
}

#[test]
fn a_line_longer_than_the_scan_budget_is_shown_cut_with_a_lower_bound() {
    let dir = tempfile::tempdir().unwrap();
    let long = "x".repeat(usize::try_from(READ_SCAN_BUDGET).unwrap() + 64 * 1024);
    std::fs::write(dir.path().join("one.txt"), format!("{long}\nsecond\n")).unwrap();
    let workspace = Workspace::open(dir.path()).unwrap();
    let out = read_lines(&workspace, "one.txt", None, None).unwrap();
    let expected = format!(
        "     1\t{}… [line cut]\n\n[Showing lines 1-1 of at least 1 (the rest of the file was not counted). Continue with offset=2.]",
        "x".repeat(2000)
    );
    assert_eq!(out, expected);
    // Asked for, the line after it is found.
    assert_eq!(
        read_lines(&workspace, "one.txt", Some(2), None).unwrap(),
        "     2\tsecond"
    );
}

#[test]
fn read_output_is_cut_at_256_kib_on_a_line_boundary_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let text: String = (1..=1000)
        .map(|number| format!("{number:04} {}\n", "y".repeat(995)))
        .collect();
    std::fs::write(dir.path().join("wide.txt"), text).unwrap();
    let workspace = Workspace::open(dir.path()).unwrap();
    let out = read_lines(&workspace, "wide.txt", None, None).unwrap();
    assert!(out.len() <= READ_MAX_OUTPUT + 200, "{}", out.len());
    // 7 + 1000 + 1 bytes a line: 260 lines fit in 256 KiB.
    assert!(
        out.contains("\n   260\t0260 "),
        "the last line that fits is shown"
    );
    assert!(!out.contains("\t0261 "), "no line past the cap is shown");
    assert!(
        out.ends_with(
            "\n\n[Output cut at 256 KiB: showing lines 1-260 of 1000. Continue with offset=261.]"
        ),
        "{}",
        &out[out.len() - 120..]
    );
}

#[test]
fn invalid_utf8_within_the_scanned_part_refuses_the_file_but_past_it_does_not() {
    let dir = tempfile::tempdir().unwrap();
    // Small: the whole file is scanned (lines are counted to the end), as before streaming.
    std::fs::write(dir.path().join("small.txt"), b"one\ntwo\n\xff\xfe\n").unwrap();
    // Large: the invalid bytes lie past the budget of bytes counted after the window.
    let filler = "z".repeat(1023) + "\n";
    let mut large = String::from("first\n");
    for _ in 0..(READ_SCAN_BUDGET / 1024 + 64) {
        large.push_str(&filler);
    }
    let mut large = large.into_bytes();
    large.extend_from_slice(b"\xff\xfe\n");
    std::fs::write(dir.path().join("large.txt"), large).unwrap();
    let workspace = Workspace::open(dir.path()).unwrap();

    let small = read_lines(&workspace, "small.txt", None, Some(1)).unwrap_err();
    assert!(matches!(small, EditError::Binary { .. }), "{small}");
    let large = read_lines(&workspace, "large.txt", None, Some(1)).unwrap();
    assert_starts_with(&large, "     1\tfirst\n\n[Showing lines 1-1 of at least ");
    // Reading up to the invalid line scans it, and refuses the file.
    let error = read_lines(&workspace, "large.txt", Some(20_000), None).unwrap_err();
    assert!(matches!(error, EditError::Binary { .. }), "{error}");
}

#[test]
fn read_keeps_crlf_bom_and_multibyte_lines_as_before() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("a.txt"),
        "\u{feff}é one\r\n\r\nthree€".as_bytes(),
    )
    .unwrap();
    std::fs::write(dir.path().join("bom.txt"), "\u{feff}").unwrap();
    let workspace = Workspace::open(dir.path()).unwrap();
    assert_eq!(
        read_lines(&workspace, "a.txt", None, None).unwrap(),
        "     1\té one\n     2\t\n     3\tthree€"
    );
    assert_eq!(
        read_lines(&workspace, "bom.txt", None, None).unwrap(),
        "`bom.txt` is empty."
    );
    let past = read_lines(&workspace, "a.txt", Some(4), None).unwrap_err();
    assert_eq!(
        past.to_string(),
        "`a.txt` has 3 lines; offset 4 is past the end."
    );
}

#[cfg(unix)]
#[test]
fn read_and_grep_refuse_a_fifo_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let workspace = Workspace::open(dir.path()).unwrap();
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let read = read_lines(&workspace, "pipe", None, None);
        let grep = grep_for(&workspace, "x", "pipe");
        let _ = sender.send((read, grep));
    });
    // A hang check, not a speed check: opening a FIFO without a writer blocks forever.
    let (read, grep) = receiver
        .recv_timeout(Duration::from_secs(20))
        .expect("read and grep of a FIFO return instead of blocking");
    let error = read.unwrap_err();
    assert!(matches!(error, EditError::NotRegularFile { .. }), "{error}");
    assert_eq!(
        error.to_string(),
        "`pipe` is not a regular file (a FIFO, socket or device); `read` and `grep` only read regular files."
    );
    assert_eq!(grep, "No matches for `x`.");
}

#[test]
fn grep_streams_a_file_with_an_endless_line_and_reports_its_matches() {
    let dir = tempfile::tempdir().unwrap();
    sparse_file(&dir.path().join("huge.log"), 300, 1 << 30);
    let workspace = Workspace::open(dir.path()).unwrap();
    let out = grep_for(&workspace, "^line 29[89] ", "huge.log");
    assert_eq!(
        out,
        "huge.log:298:line 298 of the text at the start of a huge file\n\
         huge.log:299:line 299 of the text at the start of a huge file"
    );
}

#[test]
fn grep_passes_over_a_file_that_is_not_utf8_after_its_matches() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = b"needle\n".to_vec();
    bytes.extend(std::iter::repeat_n(b'a', 100_000));
    bytes.extend_from_slice(b"\n\xc3\x28\n");
    std::fs::write(dir.path().join("late.bin"), bytes).unwrap();
    std::fs::write(dir.path().join("ok.txt"), "a needle\n").unwrap();
    let workspace = Workspace::open(dir.path()).unwrap();
    assert_eq!(grep_for(&workspace, "needle", "."), "ok.txt:1:a needle");
}

#[test]
fn grep_reports_no_empty_line_after_a_final_newline() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "x\n\ny\n").unwrap();
    let workspace = Workspace::open(dir.path()).unwrap();
    assert_eq!(grep_for(&workspace, "^$", "a.txt"), "a.txt:2:");
}
