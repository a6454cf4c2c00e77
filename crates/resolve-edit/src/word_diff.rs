//! Word-level differences between a removed line and the added line that replaces it, for a
//! reviewer's eye: which words of each line changed. Pure: no I/O, nothing about terminals.

use std::ops::Range;

use similar::{ChangeTag, TextDiff};

/// The changed words of a pair of lines, as byte ranges into each line.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WordDiff {
    /// Ranges of the old line that the new line does not have.
    pub removed: Vec<Range<usize>>,
    /// Ranges of the new line that the old line does not have.
    pub added: Vec<Range<usize>>,
}

/// Which words differ between `old` and `new` (one line each, without its newline). Runs of
/// whitespace count as words, so indentation changes show too; neighbouring changed words are
/// merged into one range, also across the spaces between them. When the two lines share no word but whitespace, nothing is marked:
/// the whole line changed, and marking all of it says nothing more.
pub fn word_diff(old: &str, new: &str) -> WordDiff {
    let diff = TextDiff::from_words(old, new);
    let mut result = WordDiff::default();
    let (mut old_at, mut new_at) = (0, 0);
    let mut shares_a_word = false;
    for change in diff.iter_all_changes() {
        let len = change.value().len();
        match change.tag() {
            ChangeTag::Equal => {
                shares_a_word |= !change.value().trim().is_empty();
                old_at += len;
                new_at += len;
            }
            ChangeTag::Delete => {
                push_merged(&mut result.removed, old_at..old_at + len);
                old_at += len;
            }
            ChangeTag::Insert => {
                push_merged(&mut result.added, new_at..new_at + len);
                new_at += len;
            }
        }
    }
    if !shares_a_word {
        return WordDiff::default();
    }
    WordDiff {
        removed: join_across_spaces(old, result.removed),
        added: join_across_spaces(new, result.added),
    }
}

/// Join ranges of `line` separated by nothing but whitespace: `b c` replaced reads as one
/// change, not two.
fn join_across_spaces(line: &str, ranges: Vec<Range<usize>>) -> Vec<Range<usize>> {
    let mut joined: Vec<Range<usize>> = Vec::with_capacity(ranges.len());
    for range in ranges {
        match joined.last_mut() {
            Some(last) if line[last.end..range.start].trim().is_empty() => last.end = range.end,
            _ => joined.push(range),
        }
    }
    joined
}

/// Add `range` to `ranges`, extending the last one when they touch.
fn push_merged(ranges: &mut Vec<Range<usize>>, range: Range<usize>) {
    match ranges.last_mut() {
        Some(last) if last.end == range.start => last.end = range.end,
        _ => ranges.push(range),
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn marked<'a>(line: &'a str, ranges: &[Range<usize>]) -> Vec<&'a str> {
        ranges.iter().map(|range| &line[range.clone()]).collect()
    }

    /// The words `word_diff` marks in `old` (removed) and in `new` (added).
    fn marked_words<'a>(old: &'a str, new: &'a str) -> (Vec<&'a str>, Vec<&'a str>) {
        let diff = word_diff(old, new);
        (marked(old, &diff.removed), marked(new, &diff.added))
    }

    #[test]
    fn a_renamed_call_marks_only_the_changed_word_on_each_side() {
        assert_eq!(
            marked_words("    let x = foo(1);", "    let x = bar(1);"),
            (vec!["foo(1);"], vec!["bar(1);"])
        );
    }

    #[test]
    fn neighbouring_changed_words_make_one_range() {
        assert_eq!(
            marked_words("a b c d", "a x y d"),
            (vec!["b c"], vec!["x y"])
        );
    }

    #[test]
    fn an_added_word_marks_nothing_on_the_old_side() {
        let (old, new) = ("pub fn run()", "pub async fn run()");
        let diff = word_diff(old, new);
        assert_eq!(diff.removed, Vec::<Range<usize>>::new());
        assert_eq!(marked(new, &diff.added), vec!["async "]);
    }

    #[test]
    fn lines_sharing_no_word_mark_nothing() {
        assert_eq!(word_diff("alpha beta", "gamma delta"), WordDiff::default());
    }

    #[test]
    fn ranges_fall_on_character_boundaries_of_multibyte_text() {
        assert_eq!(
            marked_words("naïve café", "naïve tea"),
            (vec!["café"], vec!["tea"])
        );
    }
}
