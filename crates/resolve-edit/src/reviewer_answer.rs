//! What a person types at a review's prompts, read without I/O: the answer to the line
//! prompt "Apply this change?" (apply, discard, or the hunks and files to leave out) and a
//! reason (the review's `Apply, reason:`, `Discard, reason:` and a rejected hunk's reason, the
//! line prompt's "Why …?"), which the model reads in the reviewer's note.

use crate::error::EditError;
use crate::selection::HunkAddress;

/// The words that apply the whole change at the line prompt.
const APPLY_WORDS: [&str; 4] = ["a", "apply", "y", "yes"];

/// The words (and the empty answer) that discard it.
const DISCARD_WORDS: [&str; 5] = ["", "d", "discard", "n", "no"];

/// A person's answer at the line prompt "Apply this change?".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReviewerAnswer {
    /// Apply it all (`a`, `apply`, `y`, `yes`, in any case).
    Apply,
    /// Discard it (`d`, `discard`, `n`, `no`, or nothing).
    Discard,
    /// Apply it without these hunks or files (one address per word).
    LeaveOut(Vec<HunkAddress>),
}

impl ReviewerAnswer {
    /// Read one answer line; an address that does not parse is refused, quoting it.
    pub fn parse(line: &str) -> Result<Self, EditError> {
        let answer = line.trim();
        let word = answer.to_ascii_lowercase();
        if APPLY_WORDS.contains(&word.as_str()) {
            return Ok(Self::Apply);
        }
        if DISCARD_WORDS.contains(&word.as_str()) {
            return Ok(Self::Discard);
        }
        answer
            .split_whitespace()
            .map(HunkAddress::parse)
            .collect::<Result<Vec<_>, _>>()
            .map(Self::LeaveOut)
    }
}

/// The reason typed on `line`, trimmed; `None` when nothing but blanks was typed.
pub fn reviewer_reason(line: &str) -> Option<String> {
    let reason = line.trim();
    (!reason.is_empty()).then(|| reason.to_owned())
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn words_apply_or_discard_and_addresses_leave_hunks_out() {
        for apply in ["a", " Apply\n", "YES"] {
            assert_eq!(ReviewerAnswer::parse(apply).unwrap(), ReviewerAnswer::Apply);
        }
        for discard in ["", "\n", "d", "No"] {
            assert_eq!(
                ReviewerAnswer::parse(discard).unwrap(),
                ReviewerAnswer::Discard
            );
        }
        assert_eq!(
            ReviewerAnswer::parse("src/a.rs#2 src/b.rs\n").unwrap(),
            ReviewerAnswer::LeaveOut(vec![
                HunkAddress::parse("src/a.rs#2").unwrap(),
                HunkAddress::parse("src/b.rs").unwrap(),
            ])
        );
        let error = ReviewerAnswer::parse("src/a.rs#0").unwrap_err().to_string();
        assert!(error.contains("`src/a.rs#0`"), "{error}");
    }

    #[test]
    fn a_reason_is_trimmed_and_blanks_are_no_reason() {
        assert_eq!(
            reviewer_reason("  not now \r\n"),
            Some("not now".to_owned())
        );
        assert_eq!(reviewer_reason(" \t\n"), None);
    }
}
