//! The line diff a three-way merge is built on, making the decisions `git`'s xdiff makes with
//! its default settings (Myers' algorithm, no whitespace flags, no indent heuristic), so that
//! the merge built on it takes and refuses exactly the hunks `git merge-file` does.
//!
//! A line is a record of bytes up to and including its `\n` (the last one may have none);
//! two lines are equal when their bytes are. The steps are xdiff's: number the distinct lines,
//! skip the common head and tail, set aside lines that cannot take part in a match (and
//! multi-matched lines amid them), run the divide-and-conquer Myers search on the rest, then
//! slide each group of changed lines as far down as it goes and back up to meet a change on
//! the other side, and read off the changes.

use std::collections::HashMap;

/// Past this many matches a line counts as one that matches "many" lines.
const MAX_EQUAL_LIMIT: usize = 1024;
/// How far the scan for a run of unmatched lines looks either way.
const SIMILAR_SCAN_WINDOW: usize = 100;
/// A multi-matched line is set aside when the run around it has this many times more unmatched
/// lines than multi-matched ones.
const DISCARD_RUN_FACTOR: usize = 4;
/// The least edit cost at which the search gives up on the shortest script.
const MAX_COST_MIN: i64 = 256;
/// The edit cost past which a long snake may cut the search short.
const HEURISTIC_MIN_COST: i64 = 256;
/// How long a snake counts as a good one.
const SNAKE_COUNT: i64 = 20;
/// The factor a diagonal's progress must beat the cost by to be taken early.
const HEURISTIC_FACTOR: i64 = 4;
/// A diagonal value beyond any line.
const LINE_MAX: i64 = i64::MAX;

/// The lines of `bytes`, each with its `\n` (the last one without, when the bytes do not end
/// in one).
pub(crate) fn split_lines(bytes: &[u8]) -> Vec<&[u8]> {
    let mut lines = Vec::new();
    let mut start = 0;
    for at in memchr::memchr_iter(b'\n', bytes) {
        lines.push(&bytes[start..=at]);
        start = at + 1;
    }
    if start < bytes.len() {
        lines.push(&bytes[start..]);
    }
    lines
}

/// One change of a line diff: `len1` lines from `start1` on the first side became `len2`
/// lines from `start2` on the second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Change {
    /// The first changed line on the first side (where the change sits, when it has none).
    pub(crate) start1: usize,
    /// The first changed line on the second side.
    pub(crate) start2: usize,
    /// How many lines of the first side it takes.
    pub(crate) len1: usize,
    /// How many lines of the second side it puts.
    pub(crate) len2: usize,
}

/// The changes that turn `first` into `second`, in order.
pub(crate) fn diff_lines<'a>(first: &[&'a [u8]], second: &[&'a [u8]]) -> Vec<Change> {
    let mut classes: HashMap<&'a [u8], usize> = HashMap::new();
    let mut class_of = |line: &'a [u8]| {
        let next = classes.len();
        *classes.entry(line).or_insert(next)
    };
    let ids1: Vec<usize> = first.iter().map(|line| class_of(line)).collect();
    let ids2: Vec<usize> = second.iter().map(|line| class_of(line)).collect();
    let mut side1 = Side::new(ids1);
    let mut side2 = Side::new(ids2);
    set_aside(&mut side1, &mut side2, classes.len());
    search(&mut side1, &mut side2);
    compact(&mut side1, &side2);
    compact(&mut side2, &side1);
    script(&side1, &side2)
}

/// One side of a diff.
struct Side {
    /// Each line's class: equal lines share one.
    ids: Vec<usize>,
    /// Whether each line is changed, with an unchanged sentinel before the first line and
    /// after the last (line `i` is at `i + 1`).
    changed: Vec<bool>,
    /// The lines the search runs on (those not set aside), by line number.
    kept: Vec<usize>,
    /// The classes of the kept lines.
    kept_ids: Vec<usize>,
    /// The first line after the common head.
    start: usize,
    /// One past the last line before the common tail.
    end: usize,
}

impl Side {
    fn new(ids: Vec<usize>) -> Self {
        let len = ids.len();
        Self {
            changed: vec![false; len + 2],
            ids,
            kept: Vec::new(),
            kept_ids: Vec::new(),
            start: 0,
            end: len,
        }
    }

    fn len(&self) -> usize {
        self.ids.len()
    }

    fn is_changed(&self, line: i64) -> bool {
        usize::try_from(line + 1)
            .ok()
            .and_then(|at| self.changed.get(at))
            .copied()
            .unwrap_or(false)
    }

    fn set_changed(&mut self, line: usize, changed: bool) {
        self.changed[line + 1] = changed;
    }
}

/// xdiff's integer square root approximation.
fn rough_sqrt(mut n: usize) -> usize {
    let mut root = 1;
    while n > 0 {
        root <<= 1;
        n >>= 2;
    }
    root
}

/// Skip the common head and tail, then set aside the lines of each side that match no line
/// of the other (they are changed), and the lines that match many amid runs of such lines.
fn set_aside(side1: &mut Side, side2: &mut Side, classes: usize) {
    let shorter = side1.len().min(side2.len());
    let head = (0..shorter)
        .find(|&at| side1.ids[at] != side2.ids[at])
        .unwrap_or(shorter);
    let tail = (0..shorter - head)
        .find(|&back| side1.ids[side1.len() - 1 - back] != side2.ids[side2.len() - 1 - back])
        .unwrap_or(shorter - head);
    side1.start = head;
    side2.start = head;
    side1.end = side1.len() - tail;
    side2.end = side2.len() - tail;
    let mut count1 = vec![0usize; classes];
    let mut count2 = vec![0usize; classes];
    for &id in &side1.ids {
        count1[id] += 1;
    }
    for &id in &side2.ids {
        count2[id] += 1;
    }
    keep_matchable(side1, &count2);
    keep_matchable(side2, &count1);
}

/// Mark which lines of `side` the search runs on, given how often each class occurs on the
/// other side.
fn keep_matchable(side: &mut Side, other_count: &[usize]) {
    let limit = rough_sqrt(side.len()).min(MAX_EQUAL_LIMIT);
    // 0: no match on the other side, 1: some, 2: many.
    let matches: Vec<u8> = (0..side.len())
        .map(|line| {
            if line < side.start || line >= side.end {
                return 0;
            }
            match other_count[side.ids[line]].min(limit) {
                0 => 0,
                count if count >= limit => 2,
                _ => 1,
            }
        })
        .collect();
    for line in side.start..side.end {
        let keep = matches[line] == 1
            || (matches[line] == 2 && !amid_unmatched(&matches, line, side.start, side.end));
        if keep {
            side.kept.push(line);
            side.kept_ids.push(side.ids[line]);
        } else {
            side.set_changed(line, true);
        }
    }
}

/// Whether the multi-matched line `line` sits in a run, on both sides of it, where unmatched
/// lines outnumber multi-matched ones enough to set it aside too.
fn amid_unmatched(matches: &[u8], line: usize, start: usize, end: usize) -> bool {
    let low = start.max(line.saturating_sub(SIMILAR_SCAN_WINDOW));
    let high = (end - 1).min(line + SIMILAR_SCAN_WINDOW);
    let (mut unmatched_before, mut many_before) = (0, 1);
    for at in (low..line).rev() {
        match matches[at] {
            0 => unmatched_before += 1,
            2 => many_before += 1,
            _ => break,
        }
    }
    if unmatched_before == 0 {
        return false;
    }
    let (mut unmatched_after, mut many_after) = (0, 1);
    for &kind in &matches[line + 1..=high.max(line)] {
        match kind {
            0 => unmatched_after += 1,
            2 => many_after += 1,
            _ => break,
        }
    }
    if unmatched_after == 0 {
        return false;
    }
    let unmatched = unmatched_before + unmatched_after;
    let many = many_before + many_after;
    many * DISCARD_RUN_FACTOR < many + unmatched
}

/// The diagonal vectors and limits of one search.
struct Search<'a> {
    ids1: &'a [usize],
    ids2: &'a [usize],
    forward: Vec<i64>,
    backward: Vec<i64>,
    /// Where diagonal 0 is in the vectors.
    offset: i64,
    max_cost: i64,
    changed1: Vec<bool>,
    changed2: Vec<bool>,
}

/// Where a box is split, and whether each half must be searched for the shortest script.
struct Split {
    at1: i64,
    at2: i64,
    minimal_low: bool,
    minimal_high: bool,
}

impl Search<'_> {
    fn fwd(&mut self, diagonal: i64) -> &mut i64 {
        &mut self.forward[(diagonal + self.offset) as usize]
    }

    fn bwd(&mut self, diagonal: i64) -> &mut i64 {
        &mut self.backward[(diagonal + self.offset) as usize]
    }

    fn same(&self, at1: i64, at2: i64) -> bool {
        self.ids1[at1 as usize] == self.ids2[at2 as usize]
    }

    /// Mark the changed lines of the box `[off1, lim1) × [off2, lim2)`.
    fn compare(
        &mut self,
        mut off1: i64,
        mut lim1: i64,
        mut off2: i64,
        mut lim2: i64,
        minimal: bool,
    ) {
        while off1 < lim1 && off2 < lim2 && self.same(off1, off2) {
            off1 += 1;
            off2 += 1;
        }
        while off1 < lim1 && off2 < lim2 && self.same(lim1 - 1, lim2 - 1) {
            lim1 -= 1;
            lim2 -= 1;
        }
        if off1 == lim1 {
            for at in off2..lim2 {
                self.changed2[at as usize] = true;
            }
        } else if off2 == lim2 {
            for at in off1..lim1 {
                self.changed1[at as usize] = true;
            }
        } else {
            let split = self.split(off1, lim1, off2, lim2, minimal);
            self.compare(off1, split.at1, off2, split.at2, split.minimal_low);
            self.compare(split.at1, lim1, split.at2, lim2, split.minimal_high);
        }
    }

    /// Find where the middle snake of the box crosses (or, past the cost limit, a good
    /// enough point), searching forward and backward at once.
    #[expect(
        clippy::too_many_lines,
        reason = "one search loop with its two cut-offs, kept together as xdiff has it"
    )]
    fn split(&mut self, off1: i64, lim1: i64, off2: i64, lim2: i64, minimal: bool) -> Split {
        let (dmin, dmax) = (off1 - lim2, lim1 - off2);
        let (fmid, bmid) = (off1 - off2, lim1 - lim2);
        let odd = (fmid - bmid) & 1 != 0;
        let (mut fmin, mut fmax) = (fmid, fmid);
        let (mut bmin, mut bmax) = (bmid, bmid);
        *self.fwd(fmid) = off1;
        *self.bwd(bmid) = lim1;
        let mut cost = 1;
        loop {
            let mut got_snake = false;
            if fmin > dmin {
                fmin -= 1;
                *self.fwd(fmin - 1) = -1;
            } else {
                fmin += 1;
            }
            if fmax < dmax {
                fmax += 1;
                *self.fwd(fmax + 1) = -1;
            } else {
                fmax -= 1;
            }
            let mut diagonal = fmax;
            while diagonal >= fmin {
                let mut at1 = if *self.fwd(diagonal - 1) >= *self.fwd(diagonal + 1) {
                    *self.fwd(diagonal - 1) + 1
                } else {
                    *self.fwd(diagonal + 1)
                };
                let before = at1;
                let mut at2 = at1 - diagonal;
                while at1 < lim1 && at2 < lim2 && self.same(at1, at2) {
                    at1 += 1;
                    at2 += 1;
                }
                if at1 - before > SNAKE_COUNT {
                    got_snake = true;
                }
                *self.fwd(diagonal) = at1;
                if odd && bmin <= diagonal && diagonal <= bmax && *self.bwd(diagonal) <= at1 {
                    return Split {
                        at1,
                        at2,
                        minimal_low: true,
                        minimal_high: true,
                    };
                }
                diagonal -= 2;
            }
            if bmin > dmin {
                bmin -= 1;
                *self.bwd(bmin - 1) = LINE_MAX;
            } else {
                bmin += 1;
            }
            if bmax < dmax {
                bmax += 1;
                *self.bwd(bmax + 1) = LINE_MAX;
            } else {
                bmax -= 1;
            }
            let mut diagonal = bmax;
            while diagonal >= bmin {
                let mut at1 = if *self.bwd(diagonal - 1) < *self.bwd(diagonal + 1) {
                    *self.bwd(diagonal - 1)
                } else {
                    *self.bwd(diagonal + 1) - 1
                };
                let before = at1;
                let mut at2 = at1 - diagonal;
                while at1 > off1 && at2 > off2 && self.same(at1 - 1, at2 - 1) {
                    at1 -= 1;
                    at2 -= 1;
                }
                if before - at1 > SNAKE_COUNT {
                    got_snake = true;
                }
                *self.bwd(diagonal) = at1;
                if !odd && fmin <= diagonal && diagonal <= fmax && at1 <= *self.fwd(diagonal) {
                    return Split {
                        at1,
                        at2,
                        minimal_low: true,
                        minimal_high: true,
                    };
                }
                diagonal -= 2;
            }
            if minimal {
                cost += 1;
                continue;
            }
            if got_snake && cost > HEURISTIC_MIN_COST {
                if let Some(split) =
                    self.good_forward(fmin, fmax, fmid, cost, (off1, lim1, off2, lim2))
                {
                    return split;
                }
                if let Some(split) =
                    self.good_backward(bmin, bmax, bmid, cost, (off1, lim1, off2, lim2))
                {
                    return split;
                }
            }
            if cost >= self.max_cost {
                return self.furthest(fmin, fmax, bmin, bmax, (off1, lim1, off2, lim2));
            }
            cost += 1;
        }
    }

    /// A forward diagonal that got far along a long snake, if any.
    fn good_forward(
        &mut self,
        fmin: i64,
        fmax: i64,
        fmid: i64,
        cost: i64,
        (off1, lim1, off2, lim2): (i64, i64, i64, i64),
    ) -> Option<Split> {
        let mut best = 0;
        let mut found = None;
        let mut diagonal = fmax;
        while diagonal >= fmin {
            let distance = (diagonal - fmid).abs();
            let at1 = *self.fwd(diagonal);
            let at2 = at1 - diagonal;
            let progress = (at1 - off1) + (at2 - off2) - distance;
            if progress > HEURISTIC_FACTOR * cost
                && progress > best
                && off1 + SNAKE_COUNT <= at1
                && at1 < lim1
                && off2 + SNAKE_COUNT <= at2
                && at2 < lim2
            {
                let mut back = 1;
                while self.same(at1 - back, at2 - back) {
                    if back == SNAKE_COUNT {
                        best = progress;
                        found = Some((at1, at2));
                        break;
                    }
                    back += 1;
                }
            }
            diagonal -= 2;
        }
        found.map(|(at1, at2)| Split {
            at1,
            at2,
            minimal_low: true,
            minimal_high: false,
        })
    }

    /// A backward diagonal that got far along a long snake, if any.
    fn good_backward(
        &mut self,
        bmin: i64,
        bmax: i64,
        bmid: i64,
        cost: i64,
        (off1, lim1, off2, lim2): (i64, i64, i64, i64),
    ) -> Option<Split> {
        let mut best = 0;
        let mut found = None;
        let mut diagonal = bmax;
        while diagonal >= bmin {
            let distance = (diagonal - bmid).abs();
            let at1 = *self.bwd(diagonal);
            let at2 = at1 - diagonal;
            let progress = (lim1 - at1) + (lim2 - at2) - distance;
            if progress > HEURISTIC_FACTOR * cost
                && progress > best
                && off1 < at1
                && at1 <= lim1 - SNAKE_COUNT
                && off2 < at2
                && at2 <= lim2 - SNAKE_COUNT
            {
                let mut ahead = 0;
                while self.same(at1 + ahead, at2 + ahead) {
                    if ahead == SNAKE_COUNT - 1 {
                        best = progress;
                        found = Some((at1, at2));
                        break;
                    }
                    ahead += 1;
                }
            }
            diagonal -= 2;
        }
        found.map(|(at1, at2)| Split {
            at1,
            at2,
            minimal_low: false,
            minimal_high: true,
        })
    }

    /// The furthest-reaching point of either search, once the cost limit is reached.
    fn furthest(
        &mut self,
        fmin: i64,
        fmax: i64,
        bmin: i64,
        bmax: i64,
        (off1, lim1, off2, lim2): (i64, i64, i64, i64),
    ) -> Split {
        let (mut fbest, mut fbest1) = (-1, -1);
        let mut diagonal = fmax;
        while diagonal >= fmin {
            let mut at1 = (*self.fwd(diagonal)).min(lim1);
            let mut at2 = at1 - diagonal;
            if lim2 < at2 {
                at1 = lim2 + diagonal;
                at2 = lim2;
            }
            if fbest < at1 + at2 {
                fbest = at1 + at2;
                fbest1 = at1;
            }
            diagonal -= 2;
        }
        let (mut bbest, mut bbest1) = (LINE_MAX, LINE_MAX);
        let mut diagonal = bmax;
        while diagonal >= bmin {
            let mut at1 = off1.max(*self.bwd(diagonal));
            let mut at2 = at1 - diagonal;
            if at2 < off2 {
                at1 = off2 + diagonal;
                at2 = off2;
            }
            if at1 + at2 < bbest {
                bbest = at1 + at2;
                bbest1 = at1;
            }
            diagonal -= 2;
        }
        if (lim1 + lim2) - bbest < fbest - (off1 + off2) {
            Split {
                at1: fbest1,
                at2: fbest - fbest1,
                minimal_low: true,
                minimal_high: false,
            }
        } else {
            Split {
                at1: bbest1,
                at2: bbest - bbest1,
                minimal_low: false,
                minimal_high: true,
            }
        }
    }
}

/// Run the Myers search on the kept lines and mark the changed ones.
fn search(side1: &mut Side, side2: &mut Side) {
    let (len1, len2) = (side1.kept.len(), side2.kept.len());
    let diagonals = len1 + len2 + 3;
    let mut search = Search {
        ids1: &side1.kept_ids,
        ids2: &side2.kept_ids,
        forward: vec![0; diagonals],
        backward: vec![0; diagonals],
        offset: len2 as i64 + 1,
        max_cost: (rough_sqrt(diagonals) as i64).max(MAX_COST_MIN),
        changed1: vec![false; len1],
        changed2: vec![false; len2],
    };
    search.compare(0, len1 as i64, 0, len2 as i64, false);
    let (changed1, changed2) = (search.changed1, search.changed2);
    for (at, changed) in changed1.into_iter().enumerate() {
        if changed {
            let line = side1.kept[at];
            side1.set_changed(line, true);
        }
    }
    for (at, changed) in changed2.into_iter().enumerate() {
        if changed {
            let line = side2.kept[at];
            side2.set_changed(line, true);
        }
    }
}

/// A run of changed lines `[start, end)` (empty between two unchanged lines).
#[derive(Clone, Copy)]
struct Group {
    start: i64,
    end: i64,
}

impl Group {
    fn first(side: &Side) -> Self {
        let mut end = 0;
        while side.is_changed(end) {
            end += 1;
        }
        Self { start: 0, end }
    }

    /// Move to the next group; `false` at the end of the side.
    fn next(&mut self, side: &Side) -> bool {
        if self.end == side.len() as i64 {
            return false;
        }
        self.start = self.end + 1;
        self.end = self.start;
        while side.is_changed(self.end) {
            self.end += 1;
        }
        true
    }

    /// Move to the previous group; `false` at the start of the side.
    fn previous(&mut self, side: &Side) -> bool {
        if self.start == 0 {
            return false;
        }
        self.end = self.start - 1;
        self.start = self.end;
        while side.is_changed(self.start - 1) {
            self.start -= 1;
        }
        true
    }

    /// Slide one line down when the line after equals the first; join a group it meets.
    fn slide_down(&mut self, side: &mut Side) -> bool {
        let len = side.len() as i64;
        if self.end < len && side.ids[self.start as usize] == side.ids[self.end as usize] {
            side.set_changed(self.start as usize, false);
            side.set_changed(self.end as usize, true);
            self.start += 1;
            self.end += 1;
            while side.is_changed(self.end) {
                self.end += 1;
            }
            true
        } else {
            false
        }
    }

    /// Slide one line up when the line before equals the last; join a group it meets.
    fn slide_up(&mut self, side: &mut Side) -> bool {
        if self.start > 0
            && side.ids[(self.start - 1) as usize] == side.ids[(self.end - 1) as usize]
        {
            self.start -= 1;
            self.end -= 1;
            side.set_changed(self.start as usize, true);
            side.set_changed(self.end as usize, false);
            while side.is_changed(self.start - 1) {
                self.start -= 1;
            }
            true
        } else {
            false
        }
    }
}

/// Slide each group of changed lines of `side` as far down as it goes, joining groups it
/// meets, then back up to line up with a change on the `other` side where it can.
fn compact(side: &mut Side, other: &Side) {
    let mut group = Group::first(side);
    let mut other_group = Group::first(other);
    loop {
        if group.end != group.start {
            let mut earliest_end;
            let mut end_matching_other;
            loop {
                let size = group.end - group.start;
                end_matching_other = -1;
                while group.slide_up(side) {
                    other_group.previous(other);
                }
                earliest_end = group.end;
                if other_group.end > other_group.start {
                    end_matching_other = group.end;
                }
                while group.slide_down(side) {
                    other_group.next(other);
                    if other_group.end > other_group.start {
                        end_matching_other = group.end;
                    }
                }
                if size == group.end - group.start {
                    break;
                }
            }
            if group.end != earliest_end && end_matching_other != -1 {
                while other_group.end == other_group.start {
                    group.slide_up(side);
                    other_group.previous(other);
                }
            }
        }
        if !group.next(side) {
            break;
        }
        other_group.next(other);
    }
}

/// Read the changes off the marks.
fn script(side1: &Side, side2: &Side) -> Vec<Change> {
    let mut changes = Vec::new();
    let (mut at1, mut at2) = (side1.len() as i64, side2.len() as i64);
    while at1 >= 0 || at2 >= 0 {
        if side1.is_changed(at1 - 1) || side2.is_changed(at2 - 1) {
            let (end1, end2) = (at1, at2);
            while side1.is_changed(at1 - 1) {
                at1 -= 1;
            }
            while side2.is_changed(at2 - 1) {
                at2 -= 1;
            }
            changes.push(Change {
                start1: at1 as usize,
                start2: at2 as usize,
                len1: (end1 - at1) as usize,
                len2: (end2 - at2) as usize,
            });
        }
        at1 -= 1;
        at2 -= 1;
    }
    changes.reverse();
    changes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diff(a: &str, b: &str) -> Vec<(usize, usize, usize, usize)> {
        diff_lines(&split_lines(a.as_bytes()), &split_lines(b.as_bytes()))
            .into_iter()
            .map(|c| (c.start1, c.len1, c.start2, c.len2))
            .collect()
    }

    #[test]
    fn lines_keep_their_newlines_and_a_last_line_without_one() {
        assert_eq!(split_lines(b"a\r\nb\nc"), [&b"a\r\n"[..], b"b\n", b"c"]);
        assert!(split_lines(b"").is_empty());
    }

    #[test]
    fn a_replaced_line_is_one_change_and_equal_files_have_none() {
        assert_eq!(diff("a\nb\nc\n", "a\nB\nc\n"), [(1, 1, 1, 1)]);
        assert!(diff("a\nb\n", "a\nb\n").is_empty());
        assert_eq!(diff("", "x\n"), [(0, 0, 0, 1)]);
        assert_eq!(diff("a\nb", "a\nb\n"), [(1, 1, 1, 1)]);
    }

    #[test]
    fn an_inserted_copy_of_a_line_slides_down_as_git_shows_it() {
        // git shows the second `a` as added, after the first.
        assert_eq!(diff("a\nb\n", "a\na\nb\n"), [(1, 0, 1, 1)]);
    }
}
