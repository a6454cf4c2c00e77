//! The `three_way_merge` target: the line merge a stale preview is rebased with, over three
//! random files.

use resolve_edit::merge_lines;

/// The line between the three files of an input.
const SEPARATOR: &[u8] = b"\n=====\n";

/// Merge the preview's change into the current file, as an apply after the file moved does.
///
/// Input: bytes (any, not only UTF-8): the current file, the base and the preview, separated by
/// the line `=====` (missing parts are empty).
///
/// Invariants: no panic; a side that did not change gives the other side byte for byte; equal
/// sides merge cleanly to themselves; each conflict's lines are the lines of the current file
/// and of the preview where it says; swapping the sides gives the same clean result, or
/// conflicts on both.
pub fn three_way_merge(data: &[u8]) {
    let mut parts = split(data, SEPARATOR).into_iter();
    let current = parts.next().unwrap_or_default();
    let base = parts.next().unwrap_or_default();
    let preview = parts.next().unwrap_or_default();
    let merge = merge_lines(current, base, preview);
    if current == base {
        assert!(merge.conflicts.is_empty());
        assert_eq!(
            merge.merged, preview,
            "an unchanged current file takes the preview"
        );
    }
    if preview == base || preview == current {
        assert!(merge.conflicts.is_empty());
        assert_eq!(
            merge.merged, current,
            "an unchanged preview keeps the current file"
        );
    }
    for conflict in &merge.conflicts {
        assert!(starts_line_at(
            current,
            conflict.current_start,
            &conflict.current
        ));
        assert!(starts_line_at(
            preview,
            conflict.preview_start,
            &conflict.preview
        ));
    }
    let swapped = merge_lines(preview, base, current);
    assert_eq!(merge.conflicts.is_empty(), swapped.conflicts.is_empty());
    if merge.conflicts.is_empty() {
        assert_eq!(
            merge.merged, swapped.merged,
            "a clean merge does not depend on the side"
        );
    }
}

/// `data` cut at each `separator`.
fn split<'a>(data: &'a [u8], separator: &[u8]) -> Vec<&'a [u8]> {
    let mut parts = Vec::new();
    let mut rest = data;
    while let Some(at) = rest
        .windows(separator.len())
        .position(|window| window == separator)
    {
        parts.push(&rest[..at]);
        rest = &rest[at + separator.len()..];
    }
    parts.push(rest);
    parts
}

/// Whether `lines` sit in `file` from line `line` (from 0) on.
fn starts_line_at(file: &[u8], line: usize, lines: &[u8]) -> bool {
    let mut start = 0;
    for _ in 0..line {
        match file[start..].iter().position(|byte| *byte == b'\n') {
            Some(at) => start += at + 1,
            None => return lines.is_empty(),
        }
    }
    file[start..].starts_with(lines)
}
