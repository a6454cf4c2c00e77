//! The three-way line merge: what `git merge-file` (xdiff's merge at its "zealous, alnum"
//! level, conflicts in the plain style) decides for `current`, `base` and `preview`.
//!
//! Both sides are diffed against the base; changes that do not touch (in the base's lines)
//! are taken from their side; touching or overlapping ones are the same change when they
//! replace the same base lines with the same lines, else a conflict. A conflict is then
//! narrowed by diffing its two sides (the lines both put are not in conflict), and two
//! conflicts with at most three lines between them, or only lines without a letter or digit,
//! become one.

use super::line_diff::{Change, diff_lines, split_lines};

/// How a merge region is resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Take {
    /// Both sides changed it differently.
    Conflict,
    /// Only the first side (current) changed it.
    First,
    /// Only the second side (preview) changed it.
    Second,
    /// Both sides put the same lines.
    Same,
}

/// One region of the merge: `[start1, start1 + len1)` of the first side and
/// `[start2, start2 + len2)` of the second, over `[start0, start0 + len0)` of the base. Signed,
/// as xdiff keeps them: the other side's position of a one-sided change is reckoned from a
/// neighbouring change and may fall before the start; such a region always joins a conflict
/// or is only compared, never read.
#[derive(Debug, Clone, Copy)]
struct Region {
    take: Take,
    start0: isize,
    len0: isize,
    start1: isize,
    len1: isize,
    start2: isize,
    len2: isize,
}

impl Region {
    /// The base lines only the first side changes (`c1`); the second side keeps them, from
    /// its line `start2`.
    fn first_only(c1: Signed, start2: isize) -> Self {
        Self {
            take: Take::First,
            start0: c1.start0,
            len0: c1.len0,
            start1: c1.start,
            len1: c1.len,
            start2,
            len2: c1.len0,
        }
    }

    /// The base lines only the second side changes (`c2`); the first side keeps them, from
    /// its line `start1`.
    fn second_only(c2: Signed, start1: isize) -> Self {
        Self {
            take: Take::Second,
            start0: c2.start0,
            len0: c2.len0,
            start1,
            len1: c2.len0,
            start2: c2.start,
            len2: c2.len,
        }
    }
}

/// A conflict of a three-way merge: lines of the current file and of the preview that both
/// replace the same lines of the base differently.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineConflict {
    /// The first line of the conflict in the current file, from 0.
    pub current_start: usize,
    /// The current file's lines there, bytes as they are.
    pub current: Vec<u8>,
    /// The first line of the conflict in the preview, from 0.
    pub preview_start: usize,
    /// The preview's lines there, bytes as they are.
    pub preview: Vec<u8>,
    /// The base's lines both replace, bytes as they are.
    pub base: Vec<u8>,
}

/// What a three-way merge gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineMerge {
    /// The merged bytes: exact when there is no conflict, else with `git`'s conflict markers
    /// (`<<<<<<< current`, `=======`, `>>>>>>> preview`) around each conflict.
    pub merged: Vec<u8>,
    /// The conflicts, in order; empty for a clean merge.
    pub conflicts: Vec<LineConflict>,
}

/// Which side a conflicting hunk takes when a person settles it ([`merge_lines_taking`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeSide {
    /// The current file's lines.
    Current,
    /// The preview's lines.
    Preview,
}

/// Merge the change `base` → `preview` into `current`, deciding as `git merge-file -p
/// current base preview` does.
pub fn merge_lines(current: &[u8], base: &[u8], preview: &[u8]) -> LineMerge {
    merge_resolving(current, base, preview, None)
}

/// [`merge_lines`] with each conflicting hunk taking `side`'s lines instead of conflict markers
/// (as `git merge-file --ours` / `--theirs`); [`LineMerge::conflicts`] still lists the hunks
/// that conflicted.
pub fn merge_lines_taking(
    current: &[u8],
    base: &[u8],
    preview: &[u8],
    side: MergeSide,
) -> LineMerge {
    merge_resolving(current, base, preview, Some(side))
}

/// The merge, conflicts marked (`None`) or taking a side.
fn merge_resolving(
    current: &[u8],
    base: &[u8],
    preview: &[u8],
    side: Option<MergeSide>,
) -> LineMerge {
    let base_lines = split_lines(base);
    let first = split_lines(current);
    let second = split_lines(preview);
    let changes1 = diff_lines(&base_lines, &first);
    let changes2 = diff_lines(&base_lines, &second);
    if changes1.is_empty() {
        return clean(preview);
    }
    if changes2.is_empty() {
        return clean(current);
    }
    let mut regions = pair_changes(&changes1, &changes2, &first, &second, &base_lines);
    refine_conflicts(&mut regions, &first, &second);
    join_close_conflicts(&mut regions, &first);
    let merged = fill(&regions, &base_lines, &first, &second, side);
    let conflicts = regions
        .iter()
        .filter(|region| region.take == Take::Conflict)
        .map(|region| LineConflict {
            current_start: usize::try_from(region.start1).unwrap_or(0),
            current: slice(&first, region.start1, region.len1).concat(),
            preview_start: usize::try_from(region.start2).unwrap_or(0),
            preview: slice(&second, region.start2, region.len2).concat(),
            base: base_lines_of(&base_lines, region).concat(),
        })
        .collect();
    LineMerge { merged, conflicts }
}

fn clean(bytes: &[u8]) -> LineMerge {
    LineMerge {
        merged: bytes.to_vec(),
        conflicts: Vec::new(),
    }
}

/// Add a region, joining it to the last one when the two touch on either side.
fn append(regions: &mut Vec<Region>, region: Region) {
    if let Some(last) = regions.last_mut()
        && (region.start1 <= last.start1 + last.len1 || region.start2 <= last.start2 + last.len2)
    {
        if region.take != last.take {
            last.take = Take::Conflict;
        }
        last.len0 = region.start0 + region.len0 - last.start0;
        last.len1 = region.start1 + region.len1 - last.start1;
        last.len2 = region.start2 + region.len2 - last.start2;
        return;
    }
    regions.push(region);
}

/// A change's lines, signed as the regions keep them.
#[derive(Clone, Copy)]
struct Signed {
    start0: isize,
    len0: isize,
    start: isize,
    len: isize,
}

impl From<&Change> for Signed {
    fn from(change: &Change) -> Self {
        Self {
            start0: change.start1 as isize,
            len0: change.len1 as isize,
            start: change.start2 as isize,
            len: change.len2 as isize,
        }
    }
}

/// `lines[start..start + len]`, for a region's lines that are read (never one reckoned before
/// the start).
fn slice<'a, 'b>(lines: &'b [&'a [u8]], start: isize, len: isize) -> &'b [&'a [u8]] {
    let start = usize::try_from(start).unwrap_or(0);
    let len = usize::try_from(len).unwrap_or(0);
    &lines[start..start + len]
}

/// The base's lines of a conflict region; none when its base span is only reckoned.
fn base_lines_of<'a, 'b>(base: &'b [&'a [u8]], region: &Region) -> &'b [&'a [u8]] {
    let (Ok(start), Ok(len)) = (usize::try_from(region.start0), usize::try_from(region.len0))
    else {
        return &[];
    };
    base.get(start..start.saturating_add(len)).unwrap_or(&[])
}

/// Walk both change lists in base order and make the regions.
fn pair_changes(
    changes1: &[Change],
    changes2: &[Change],
    first: &[&[u8]],
    second: &[&[u8]],
    base: &[&[u8]],
) -> Vec<Region> {
    let changes1: Vec<Signed> = changes1.iter().map(Signed::from).collect();
    let changes2: Vec<Signed> = changes2.iter().map(Signed::from).collect();
    let mut regions = Vec::new();
    let (mut next1, mut next2) = (0, 0);
    while let (Some(&c1), Some(&c2)) = (changes1.get(next1), changes2.get(next2)) {
        // Only one side changes these base lines; the other side's position is reckoned from
        // its next change.
        let one_sided = if c1.start0 + c1.len0 < c2.start0 {
            next1 += 1;
            Some(Region::first_only(c1, c2.start - c2.start0 + c1.start0))
        } else if c2.start0 + c2.len0 < c1.start0 {
            next2 += 1;
            Some(Region::second_only(c2, c1.start - c1.start0 + c2.start0))
        } else {
            None
        };
        if let Some(region) = one_sided {
            append(&mut regions, region);
            continue;
        }
        let same = c1.start0 == c2.start0
            && c1.len0 == c2.len0
            && c1.len == c2.len
            && slice(first, c1.start, c1.len) == slice(second, c2.start, c2.len);
        if !same {
            // Both sides change overlapping or touching base lines: one conflict over both.
            let off = c1.start0 - c2.start0;
            let ffo = off + c1.len0 - c2.len0;
            let (mut start0, mut start1, mut start2) = (c1.start0, c1.start, c2.start);
            if off > 0 {
                start0 -= off;
                start1 -= off;
            } else {
                start2 += off;
            }
            let mut len0 = c1.start0 + c1.len0 - start0;
            let mut len1 = c1.start + c1.len - start1;
            let mut len2 = c2.start + c2.len - start2;
            if ffo < 0 {
                len0 -= ffo;
                len1 -= ffo;
            } else {
                len2 += ffo;
            }
            append(
                &mut regions,
                Region {
                    take: Take::Conflict,
                    start0,
                    len0,
                    start1,
                    len1,
                    start2,
                    len2,
                },
            );
        }
        let end1 = c1.start0 + c1.len0;
        let end2 = c2.start0 + c2.len0;
        if end1 >= end2 {
            next2 += 1;
        }
        if end2 >= end1 {
            next1 += 1;
        }
    }
    let grown1 = first.len() as isize - base.len() as isize;
    let grown2 = second.len() as isize - base.len() as isize;
    for c1 in &changes1[next1..] {
        append(&mut regions, Region::first_only(*c1, c1.start0 + grown2));
    }
    for c2 in &changes2[next2..] {
        append(&mut regions, Region::second_only(*c2, c2.start0 + grown1));
    }
    regions
}

/// Narrow each conflict whose sides both have lines to the changes between its two sides;
/// one whose sides are equal is no conflict.
fn refine_conflicts(regions: &mut Vec<Region>, first: &[&[u8]], second: &[&[u8]]) {
    let mut refined = Vec::with_capacity(regions.len());
    for region in regions.drain(..) {
        if region.take != Take::Conflict || region.len1 == 0 || region.len2 == 0 {
            refined.push(region);
            continue;
        }
        let side1 = slice(first, region.start1, region.len1);
        let side2 = slice(second, region.start2, region.len2);
        // The sides are diffed as text of their own: their lines are re-read from the bytes,
        // which gives the same lines.
        let changes = diff_lines(side1, side2);
        if changes.is_empty() {
            refined.push(Region {
                take: Take::Same,
                ..region
            });
            continue;
        }
        for (index, change) in changes.iter().enumerate() {
            let (start0, len0) = if index == 0 {
                (region.start0, region.len0)
            } else {
                (region.start0, 0)
            };
            refined.push(Region {
                take: Take::Conflict,
                start0,
                len0,
                start1: region.start1 + change.start1 as isize,
                len1: change.len1 as isize,
                start2: region.start2 + change.start2 as isize,
                len2: change.len2 as isize,
            });
        }
    }
    *regions = refined;
}

/// Join two conflicts when at most three lines lie between them, or only lines with no ASCII
/// letter or digit.
fn join_close_conflicts(regions: &mut Vec<Region>, first: &[&[u8]]) {
    let mut at = 0;
    while at + 1 < regions.len() {
        let (this, next) = (regions[at], regions[at + 1]);
        let begin = this.start1 + this.len1;
        let end = next.start1;
        let between = slice(first, begin, (end - begin).max(0));
        let keep_apart = this.take != Take::Conflict
            || next.take != Take::Conflict
            || (end - begin > 3
                && between
                    .iter()
                    .any(|line| line.iter().any(u8::is_ascii_alphanumeric)));
        if keep_apart {
            at += 1;
        } else {
            regions[at].len1 = next.start1 + next.len1 - this.start1;
            regions[at].len2 = next.start2 + next.len2 - this.start2;
            regions.remove(at + 1);
        }
    }
}

/// The lines `[start, start + len)`, with `eol` added after the last when given and it has no
/// `\n`.
fn copy(out: &mut Vec<u8>, lines: &[&[u8]], start: isize, len: isize, eol: Option<&[u8]>) {
    let lines = slice(lines, start, len.max(0));
    for line in lines {
        out.extend_from_slice(line);
    }
    if let Some(eol) = eol
        && let Some(last) = lines.last()
        && last.last() != Some(&b'\n')
    {
        out.extend_from_slice(eol);
    }
}

/// Whether line `at` of `lines` ends in CRLF, judged as git does for a last line without a
/// newline (by the line before it); `None` when it cannot tell.
fn ends_in_crlf(lines: &[&[u8]], at: usize) -> Option<bool> {
    let crlf = |line: &[u8]| line.len() > 1 && line[line.len() - 2] == b'\r';
    if at + 1 < lines.len() {
        return Some(crlf(lines[at]));
    }
    let last = lines.get(at)?;
    if last.last() == Some(&b'\n') {
        return Some(crlf(last));
    }
    if at == 0 {
        return None;
    }
    Some(crlf(lines[at - 1]))
}

/// The line end of a conflict's markers: CRLF when the lines before it on both sides and the
/// base's first line end in CRLF (or cannot tell), as git writes them.
fn marker_eol(region: &Region, base: &[&[u8]], first: &[&[u8]], second: &[&[u8]]) -> &'static [u8] {
    let checks = [
        ends_in_crlf(first, usize::try_from(region.start1 - 1).unwrap_or(0)),
        ends_in_crlf(second, usize::try_from(region.start2 - 1).unwrap_or(0)),
        ends_in_crlf(base, 0),
    ];
    let mut needs_cr = None;
    for check in checks {
        needs_cr = check;
        if needs_cr == Some(false) {
            break;
        }
    }
    if needs_cr == Some(true) {
        b"\r\n"
    } else {
        b"\n"
    }
}

/// The merged bytes, with conflict markers around each conflict.
fn fill(
    regions: &[Region],
    base: &[&[u8]],
    first: &[&[u8]],
    second: &[&[u8]],
    side: Option<MergeSide>,
) -> Vec<u8> {
    let mut out = Vec::new();
    let mut at = 0;
    for region in regions {
        match (region.take, side) {
            (Take::Conflict, Some(MergeSide::Current)) => {
                copy(&mut out, first, at, region.start1 + region.len1 - at, None);
            }
            (Take::Conflict, Some(MergeSide::Preview)) => {
                copy(&mut out, first, at, region.start1 - at, None);
                copy(&mut out, second, region.start2, region.len2, None);
            }
            (Take::Conflict, None) => {
                let eol = marker_eol(region, base, first, second);
                copy(&mut out, first, at, region.start1 - at, None);
                out.extend_from_slice(b"<<<<<<< current");
                out.extend_from_slice(eol);
                copy(&mut out, first, region.start1, region.len1, Some(eol));
                out.extend_from_slice(b"=======");
                out.extend_from_slice(eol);
                copy(&mut out, second, region.start2, region.len2, Some(eol));
                out.extend_from_slice(b">>>>>>> preview");
                out.extend_from_slice(eol);
            }
            (Take::First, _) => {
                copy(&mut out, first, at, region.start1 + region.len1 - at, None);
            }
            (Take::Second, _) => {
                // The second side's line for `at`, and how many lines through the change.
                let from = region.start2 - region.start1 + at;
                let len = region.start1 + region.len2 - at;
                copy(&mut out, second, from, len, None);
            }
            (Take::Same, _) => continue,
        }
        at = region.start1 + region.len1;
    }
    copy(&mut out, first, at, first.len() as isize - at, None);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn merge(current: &str, base: &str, preview: &str) -> (String, usize) {
        let merged = merge_lines(current.as_bytes(), base.as_bytes(), preview.as_bytes());
        (
            String::from_utf8(merged.merged).unwrap(),
            merged.conflicts.len(),
        )
    }

    #[test]
    fn a_settled_conflict_takes_one_side_and_keeps_the_clean_changes() {
        let base = b"a\nb\nc\nd\ne\nf\ng\n";
        let current = b"a\nX\nc\nd\ne\nf\nG\n";
        let preview = b"A\nY\nc\nd\ne\nf\ng\n";
        let ours = merge_lines_taking(current, base, preview, MergeSide::Current);
        assert_eq!(ours.conflicts.len(), 1);
        assert_eq!(
            ours.conflicts[0].base, b"a\nb\n",
            "the base lines both replace"
        );
        assert_eq!(ours.merged, b"a\nX\nc\nd\ne\nf\nG\n");
        let theirs = merge_lines_taking(current, base, preview, MergeSide::Preview);
        assert_eq!(theirs.merged, b"A\nY\nc\nd\ne\nf\nG\n");
    }

    #[test]
    fn changes_apart_merge_and_the_same_change_on_both_sides_is_taken_once() {
        let base = "a\nb\nc\nd\ne\n";
        assert_eq!(
            merge("A\nb\nc\nd\ne\n", base, "a\nb\nc\nd\nE\n"),
            ("A\nb\nc\nd\nE\n".to_owned(), 0)
        );
        assert_eq!(
            merge("a\nB\nc\nd\ne\n", base, "a\nB\nc\nd\ne\n"),
            ("a\nB\nc\nd\ne\n".to_owned(), 0)
        );
    }

    #[test]
    fn adjacent_changes_conflict_as_git_decides() {
        let (merged, conflicts) = merge("a\nB\nc\n", "a\nb\nc\n", "a\nb\nC\n");
        assert_eq!(conflicts, 1);
        assert_eq!(
            merged,
            "a\n<<<<<<< current\nB\nc\n=======\nb\nC\n>>>>>>> preview\n"
        );
    }
}
