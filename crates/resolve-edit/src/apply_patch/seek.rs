//! Finding a change block's lines in a file the way Codex does: at the first place at or after
//! a start line, trying ever looser comparisons — exact, then ignoring trailing whitespace, then
//! ignoring surrounding whitespace, then also treating typographic punctuation (dashes, curly
//! quotes, odd spaces) as its ASCII look-alike — and taking the first hit of the strictest
//! comparison that hits. Also what a diagnostic needs: every place a comparison hits, and the
//! place where most of the lines agree when none hits everywhere.

/// How two lines are compared, strictest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Comparison {
    /// Byte for byte.
    Exact,
    /// Ignoring trailing whitespace.
    TrimEnd,
    /// Ignoring leading and trailing whitespace.
    Trim,
    /// Ignoring surrounding whitespace, with typographic punctuation read as ASCII.
    Punctuation,
}

impl Comparison {
    /// Every comparison, strictest first.
    pub(crate) const ALL: [Comparison; 4] =
        [Self::Exact, Self::TrimEnd, Self::Trim, Self::Punctuation];

    /// Whether `line` (the file's) and `wanted` (the patch's) are the same under this comparison.
    pub(crate) fn same(self, line: &str, wanted: &str) -> bool {
        match self {
            Self::Exact => line == wanted,
            Self::TrimEnd => line.trim_end() == wanted.trim_end(),
            Self::Trim => line.trim() == wanted.trim(),
            Self::Punctuation => line
                .trim()
                .chars()
                .map(ascii_look_alike)
                .eq(wanted.trim().chars().map(ascii_look_alike)),
        }
    }
}

/// The ASCII character a typographic one stands for (itself for any other).
fn ascii_look_alike(c: char) -> char {
    match c {
        '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}'
        | '\u{2212}' => '-',
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => '"',
        '\u{00A0}' | '\u{2002}' | '\u{2003}' | '\u{2004}' | '\u{2005}' | '\u{2006}'
        | '\u{2007}' | '\u{2008}' | '\u{2009}' | '\u{200A}' | '\u{202F}' | '\u{205F}'
        | '\u{3000}' => ' ',
        other => other,
    }
}

/// Where a sequence was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Found {
    /// Index of its first line.
    pub at: usize,
    /// The comparison that found it.
    pub comparison: Comparison,
}

/// The first line index a search for `wanted` may try: `start`, or for a block that must end
/// the file, the one place where it would.
fn search_start(lines: usize, wanted: usize, start: usize, end_of_file: bool) -> usize {
    if end_of_file && lines >= wanted {
        lines - wanted
    } else {
        start
    }
}

/// Whether `wanted` is at `at` under `comparison`.
fn is_at(lines: &[&str], wanted: &[String], at: usize, comparison: Comparison) -> bool {
    lines[at..at + wanted.len()]
        .iter()
        .zip(wanted)
        .all(|(line, wanted)| comparison.same(line, wanted))
}

/// Find `wanted` in `lines` at or after `start` (see the module documentation). An empty
/// `wanted` is found at `start`.
pub(crate) fn seek(
    lines: &[&str],
    wanted: &[String],
    start: usize,
    end_of_file: bool,
) -> Option<Found> {
    if wanted.is_empty() {
        return Some(Found {
            at: start,
            comparison: Comparison::Exact,
        });
    }
    if wanted.len() > lines.len() {
        return None;
    }
    let from = search_start(lines.len(), wanted.len(), start, end_of_file);
    let last = lines.len() - wanted.len();
    Comparison::ALL.into_iter().find_map(|comparison| {
        (from..=last)
            .find(|&at| is_at(lines, wanted, at, comparison))
            .map(|at| Found { at, comparison })
    })
}

/// Every place at or after `start` where `wanted` (not empty) is under `comparison`.
pub(crate) fn all_matches(
    lines: &[&str],
    wanted: &[String],
    start: usize,
    end_of_file: bool,
    comparison: Comparison,
) -> Vec<usize> {
    if wanted.is_empty() || wanted.len() > lines.len() {
        return Vec::new();
    }
    let from = search_start(lines.len(), wanted.len(), start, end_of_file);
    (from..=lines.len() - wanted.len())
        .filter(|&at| is_at(lines, wanted, at, comparison))
        .collect()
}

/// The place where the most lines of `wanted` agree with the file (loosest comparison), for
/// a block that matches nowhere: `(at, agreeing lines, first disagreeing index of wanted)`.
/// Ties go to the place nearest `start`. `None` when no line agrees anywhere.
pub(crate) fn nearest_candidate(
    lines: &[&str],
    wanted: &[String],
    start: usize,
) -> Option<(usize, usize, usize)> {
    let mut best: Option<(usize, usize, usize)> = None;
    for at in 0..lines.len() {
        let agreeing = wanted
            .iter()
            .enumerate()
            .filter(|(index, wanted)| {
                lines
                    .get(at + index)
                    .is_some_and(|line| Comparison::Punctuation.same(line, wanted))
            })
            .count();
        if agreeing == 0 {
            continue;
        }
        let better = match best {
            None => true,
            Some((best_at, best_agreeing, _)) => {
                agreeing > best_agreeing
                    || (agreeing == best_agreeing && at.abs_diff(start) < best_at.abs_diff(start))
            }
        };
        if better {
            let differs = (0..wanted.len())
                .find(|index| {
                    !lines
                        .get(at + index)
                        .is_some_and(|line| Comparison::Punctuation.same(line, &wanted[*index]))
                })
                .unwrap_or(wanted.len());
            best = Some((at, agreeing, differs));
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::owned_strings as owned;

    #[test]
    fn the_strictest_comparison_that_hits_wins_then_the_first_place() {
        let lines = ["a  ", "b", "  a", "b", "a", "b"];
        let found = seek(&lines, &owned(&["a", "b"]), 0, false).unwrap();
        assert_eq!((found.at, found.comparison), (4, Comparison::Exact));
        let found = seek(&lines, &owned(&["a", "b"]), 0, false);
        assert!(found.is_some());
        let lines = ["a  ", "b", "  a", "b"];
        let found = seek(&lines, &owned(&["a", "b"]), 0, false).unwrap();
        assert_eq!((found.at, found.comparison), (0, Comparison::TrimEnd));
        let found = seek(&lines, &owned(&["a", "b"]), 1, false).unwrap();
        assert_eq!((found.at, found.comparison), (2, Comparison::Trim));
    }

    #[test]
    fn typographic_punctuation_matches_its_ascii_look_alike_last() {
        let lines = ["let s = \u{201C}x\u{201D}; // a\u{2014}b\u{00A0}c"];
        let found = seek(&lines, &owned(&["let s = \"x\"; // a-b c"]), 0, false).unwrap();
        assert_eq!(found.comparison, Comparison::Punctuation);
    }

    #[test]
    fn an_end_of_file_block_is_only_tried_at_the_end() {
        let lines = ["x", "y", "x", "y"];
        assert_eq!(seek(&lines, &owned(&["x", "y"]), 0, true).unwrap().at, 2);
        assert_eq!(seek(&lines, &owned(&["x"]), 0, true), None);
        assert_eq!(
            seek(&lines, &owned(&["a", "b", "c", "d", "e"]), 0, false),
            None
        );
        assert_eq!(seek(&lines, &[], 3, false).unwrap().at, 3);
    }

    #[test]
    fn all_matches_and_the_nearest_candidate() {
        let lines = ["fn a() {", "    1", "}", "fn b() {", "    2", "}"];
        assert_eq!(
            all_matches(&lines, &owned(&["}"]), 0, false, Comparison::Exact),
            vec![2, 5]
        );
        assert_eq!(
            nearest_candidate(&lines, &owned(&["fn b() {", "    3", "}"]), 0),
            Some((3, 2, 1))
        );
        assert_eq!(nearest_candidate(&lines, &owned(&["zzz"]), 0), None);
    }
}
