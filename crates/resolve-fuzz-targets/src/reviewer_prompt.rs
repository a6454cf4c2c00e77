//! The `reviewer_prompt` target: what a person types at a review's prompts (the line prompt's
//! answer and the reasons after it; the review's `Apply, reason:`, `Discard, reason:` and a
//! rejected hunk's reason), up to the note the model reads.

use resolve_core::DecidedBy;
use resolve_edit::{
    HunkReview, NoteResolution, Origin, Outcome, RejectedHunk, Review, ReviewerAnswer,
    ReviewerNote, reviewer_note_text, reviewer_reason,
};
use resolve_store::RecordVersion;

/// Read the first line as the answer to "Apply this change?" and each later line as a reason
/// typed after it, then write the reviewer's note the model reads.
///
/// Input: text (bytes that are not UTF-8 are replaced): the answer line, then one reason per
/// line.
///
/// Invariants: no panic; `a`/`apply`/`y`/`yes` apply and blanks, `d`/`discard`/`n`/`no`
/// discard (in any case); any other answer leaves out one well-formed address per word, or is
/// refused quoting a word of it; a reason is the line trimmed and never empty; the note is one
/// `<system-reminder>` block that ends with the overall reason, which reads back exactly as
/// typed, and, leaving hunks out, quotes every rejected hunk's reason.
pub fn reviewer_prompt(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut lines = text.split('\n');
    let answer = lines.next().unwrap_or_default();
    let reasons: Vec<Option<String>> = lines.map(reviewer_reason).collect();
    for (line, reason) in text.split('\n').skip(1).zip(&reasons) {
        match reason {
            Some(reason) => {
                assert!(!reason.is_empty() && line.contains(reason.as_str()));
                assert_eq!(reason.trim(), reason);
            }
            None => assert!(line.trim().is_empty()),
        }
    }
    let word = answer.trim().to_ascii_lowercase();
    let overall = reasons
        .iter()
        .flatten()
        .next_back()
        .cloned()
        .unwrap_or_else(|| "no reason".to_owned());
    let parsed = ReviewerAnswer::parse(answer);
    let left_out = matches!(parsed, Ok(ReviewerAnswer::LeaveOut(_)));
    let resolution = match parsed {
        Ok(ReviewerAnswer::Apply) => {
            assert!(
                ["a", "apply", "y", "yes"].contains(&word.as_str()),
                "{answer:?}"
            );
            NoteResolution {
                outcome: Outcome::Applied,
                reason: overall.clone(),
                applied_files: vec!["a.txt".to_owned()],
                dropped_files: Vec::new(),
                review: None,
            }
        }
        Ok(ReviewerAnswer::Discard) => {
            assert!(
                ["", "d", "discard", "n", "no"].contains(&word.as_str()),
                "{answer:?}"
            );
            NoteResolution {
                outcome: Outcome::Discarded,
                reason: overall.clone(),
                applied_files: Vec::new(),
                dropped_files: vec!["a.txt".to_owned()],
                review: None,
            }
        }
        Ok(ReviewerAnswer::LeaveOut(addresses)) => {
            assert_eq!(addresses.len(), answer.split_whitespace().count());
            for (address, typed) in addresses.iter().zip(answer.split_whitespace()) {
                let printed = address.to_string();
                assert_eq!(
                    resolve_edit::HunkAddress::parse(&printed).ok().as_ref(),
                    Some(address),
                    "{typed:?} printed as {printed:?}"
                );
            }
            let rejected: Vec<RejectedHunk> = (1..)
                .zip(&reasons)
                .map(|(hunk, reason)| RejectedHunk {
                    hunk,
                    reason: reason.clone(),
                })
                .collect();
            NoteResolution {
                outcome: Outcome::Applied,
                reason: overall.clone(),
                applied_files: vec!["a.txt".to_owned()],
                dropped_files: Vec::new(),
                review: Some(Review {
                    hunks: vec![HunkReview {
                        path: "a.txt".to_owned(),
                        hunks: rejected.len() + 1,
                        landed: vec![rejected.len() + 1],
                        rejected,
                    }],
                    rejected_files: Vec::new(),
                    comments: Vec::new(),
                }),
            }
        }
        Err(error) => {
            let error = error.to_string();
            assert!(
                answer
                    .split_whitespace()
                    .any(|word| error.contains(&format!("`{word}`"))),
                "{answer:?}: {error}"
            );
            return;
        }
    };
    let note = ReviewerNote {
        version: RecordVersion,
        id: "pending-action:edit:1".to_owned(),
        seq: 1,
        origin: Origin::Agent,
        label: "Edit: a.txt".to_owned(),
        decided_by: DecidedBy::Person,
        amendments: Vec::new(),
        resolution: Some(resolution),
    };
    let note = reviewer_note_text(&note);
    let body = note
        .strip_prefix("<system-reminder>\n")
        .and_then(|body| body.strip_suffix("\n</system-reminder>"))
        .expect("one system-reminder block");
    let (_, last) = body.rsplit_once("\nReason: ").expect("the overall reason");
    let read: String = serde_json::from_str(last).expect("the reason is quoted as JSON");
    assert_eq!(read, overall);
    // Leaving hunks out, each rejected hunk's reason is quoted in the note.
    if left_out {
        for reason in reasons.iter().flatten() {
            let quoted = serde_json::to_string(reason).expect("a string prints");
            assert!(note.contains(&quoted), "{reason:?} is not in {note}");
        }
    }
}
