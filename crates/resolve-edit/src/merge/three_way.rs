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
/// `[start2, start2 + len2)` of the second, over `[start0, start0 + len0)` of the base.
#[derive(Debug, Clone, Copy)]
struct Region {
    take: Take,
    start0: usize,
    len0: usize,
    start1: usize,
    len1: usize,
    start2: usize,
    len2: usize,
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

/// Merge the change `base` → `preview` into `current`, deciding as `git merge-file -p
/// current base preview` does.
pub fn merge_lines(current: &[u8], base: &[u8], preview: &[u8]) -> LineMerge {
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
    let merged = fill(&regions, &first, &second);
    let conflicts = regions
        .iter()
        .filter(|region| region.take == Take::Conflict)
        .map(|region| LineConflict {
            current_start: region.start1,
            current: first[region.start1..region.start1 + region.len1].concat(),
            preview_start: region.start2,
            preview: second[region.start2..region.start2 + region.len2].concat(),
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

/// Walk both change lists in base order and make the regions.
fn pair_changes(
    changes1: &[Change],
    changes2: &[Change],
    first: &[&[u8]],
    second: &[&[u8]],
    base: &[&[u8]],
) -> Vec<Region> {
    let mut regions = Vec::new();
    let (mut next1, mut next2) = (0, 0);
    // Offsets are signed: a side's line for a base line is the base line moved by what that
    // side inserted or removed before it.
    let shift = |change: &Change| change.start2 as isize - change.start1 as isize;
    while let (Some(c1), Some(c2)) = (changes1.get(next1), changes2.get(next2)) {
        if c1.start1 + c1.len1 < c2.start1 {
            append(
                &mut regions,
                Region {
                    take: Take::First,
                    start0: c1.start1,
                    len0: c1.len1,
                    start1: c1.start2,
                    len1: c1.len2,
                    start2: (c1.start1 as isize + shift(c2)) as usize,
                    len2: c1.len1,
                },
            );
            next1 += 1;
            continue;
        }
        if c2.start1 + c2.len1 < c1.start1 {
            append(
                &mut regions,
                Region {
                    take: Take::Second,
                    start0: c2.start1,
                    len0: c2.len1,
                    start1: (c2.start1 as isize + shift(c1)) as usize,
                    len1: c2.len1,
                    start2: c2.start2,
                    len2: c2.len2,
                },
            );
            next2 += 1;
            continue;
        }
        let same = c1.start1 == c2.start1
            && c1.len1 == c2.len1
            && c1.len2 == c2.len2
            && first[c1.start2..c1.start2 + c1.len2] == second[c2.start2..c2.start2 + c2.len2];
        if !same {
            let off = c1.start1 as isize - c2.start1 as isize;
            let ffo = off + c1.len1 as isize - c2.len1 as isize;
            let (mut start0, mut start1, mut start2) =
                (c1.start1 as isize, c1.start2 as isize, c2.start2 as isize);
            if off > 0 {
                start0 -= off;
                start1 -= off;
            } else {
                start2 += off;
            }
            let mut len0 = (c1.start1 + c1.len1) as isize - start0;
            let mut len1 = (c1.start2 + c1.len2) as isize - start1;
            let mut len2 = (c2.start2 + c2.len2) as isize - start2;
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
                    start0: start0 as usize,
                    len0: len0 as usize,
                    start1: start1 as usize,
                    len1: len1 as usize,
                    start2: start2 as usize,
                    len2: len2 as usize,
                },
            );
        }
        let end1 = c1.start1 + c1.len1;
        let end2 = c2.start1 + c2.len1;
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
        append(
            &mut regions,
            Region {
                take: Take::First,
                start0: c1.start1,
                len0: c1.len1,
                start1: c1.start2,
                len1: c1.len2,
                start2: (c1.start1 as isize + grown2) as usize,
                len2: c1.len1,
            },
        );
    }
    for c2 in &changes2[next2..] {
        append(
            &mut regions,
            Region {
                take: Take::Second,
                start0: c2.start1,
                len0: c2.len1,
                start1: (c2.start1 as isize + grown1) as usize,
                len1: c2.len1,
                start2: c2.start2,
                len2: c2.len2,
            },
        );
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
        let side1 = &first[region.start1..region.start1 + region.len1];
        let side2 = &second[region.start2..region.start2 + region.len2];
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
                start1: region.start1 + change.start1,
                len1: change.len1,
                start2: region.start2 + change.start2,
                len2: change.len2,
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
        let between = &first[begin..end.max(begin)];
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

/// The lines `[start, start + len)`, with a `\n` added after the last when `with_newline` and
/// it has none.
fn copy(out: &mut Vec<u8>, lines: &[&[u8]], start: usize, len: usize, with_newline: bool) {
    if len == 0 {
        return;
    }
    for line in &lines[start..start + len] {
        out.extend_from_slice(line);
    }
    if with_newline && lines[start + len - 1].last() != Some(&b'\n') {
        out.push(b'\n');
    }
}

/// The merged bytes, with conflict markers around each conflict.
fn fill(regions: &[Region], first: &[&[u8]], second: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut at = 0;
    for region in regions {
        match region.take {
            Take::Conflict => {
                copy(&mut out, first, at, region.start1 - at, false);
                out.extend_from_slice(b"<<<<<<< current\n");
                copy(&mut out, first, region.start1, region.len1, true);
                out.extend_from_slice(b"=======\n");
                copy(&mut out, second, region.start2, region.len2, true);
                out.extend_from_slice(b">>>>>>> preview\n");
            }
            Take::First => copy(&mut out, first, at, region.start1 + region.len1 - at, false),
            Take::Second => {
                // The second side's line for `at`, and how many lines through the change.
                let from = region.start2 as isize - region.start1 as isize + at as isize;
                let len = (region.start1 + region.len2) as isize - at as isize;
                copy(&mut out, second, from as usize, len as usize, false);
            }
            Take::Same => continue,
        }
        at = region.start1 + region.len1;
    }
    copy(&mut out, first, at, first.len() - at, false);
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
