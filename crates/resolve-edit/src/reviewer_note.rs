//! The words a model reads when a person amended, applied (all or part of) or discarded an
//! action it staged: one `<system-reminder>` block naming the action and its label, what
//! landed, each rejected hunk with its address and reason, each amendment as a diff, and the
//! overall reason. `resolve agent` sends it as its own message before the next request;
//! `resolve mcp` appends it to the next tool result of the connection that staged the action.
//! The same channel tells a model that a file under one of its pending previews moved
//! ([`moved_note_text`]), and [`take_origin_notes`] takes both kinds for an origin.

use resolve_store::{
    HunkReview, LineComment, LineSide, MovedNote, NoteResolution, Origin, Outcome, RebaseState,
    ReviewerNote, Store, StoreError,
};

/// Every note waiting for `origin`, as the model reads them, each taken once: what a person
/// did to its actions ([`reviewer_note_text`]), then its previews whose files moved since
/// ([`moved_note_text`]).
pub fn take_origin_notes(store: &Store, origin: &Origin) -> Result<Vec<String>, StoreError> {
    let mut texts: Vec<String> = store
        .take_reviewer_notes(origin)?
        .iter()
        .map(reviewer_note_text)
        .collect();
    texts.extend(store.take_moved_notes(origin)?.iter().map(moved_note_text));
    Ok(texts)
}

/// The text that tells the model a file under its pending preview moved: which, and whether
/// the preview still rebases cleanly or which of its hunks conflict with which lines.
pub fn moved_note_text(note: &MovedNote) -> String {
    let files = note
        .files
        .iter()
        .map(|path| resolve_core::quote_path(path))
        .collect::<Vec<_>>()
        .join(", ");
    let changed = if note.files.len() == 1 {
        "changed"
    } else {
        "each changed"
    };
    let mut text = format!(
        "<system-reminder>\n{files} {changed} since you staged {} ({}).",
        note.id, note.label
    );
    match &note.state {
        RebaseState::Fresh | RebaseState::Rebases { .. } => text.push_str(
            " Your preview still rebases onto those changes cleanly: applying it lands your change on the file as it is now.",
        ),
        RebaseState::Stale { .. } => text.push_str(
            " Applying your preview now writes nothing (it is stale); discard it and stage the change again from the current file.",
        ),
        RebaseState::Conflicts { files } => {
            text.push_str(
                " Your preview now conflicts with those changes, so applying it writes nothing. The conflicting hunks:",
            );
            for file in files {
                text.push('\n');
                text.push_str(&file.to_string());
            }
            text.push_str(
                "\nDiscard it and stage the change again from the current file (a person can also settle it with `resolve amend --take`).",
            );
        }
    }
    text.push_str("\n</system-reminder>");
    text
}

/// The text that tells the model what the reviewer did (see the module docs).
pub fn reviewer_note_text(note: &ReviewerNote) -> String {
    let action = format!("{} ({})", note.id, note.label);
    let mut text = String::from("<system-reminder>\n");
    match &note.resolution {
        None => text.push_str(&format!(
            "A reviewer amended {action}; it now carries the reviewer's version."
        )),
        Some(resolution) => match resolution.outcome {
            Outcome::Discarded => text.push_str(&format!(
                "A reviewer discarded {action}; nothing was written."
            )),
            Outcome::Applied => {
                text.push_str(&format!("A reviewer resolved {action}: "));
                text.push_str(&landed_clauses(resolution).join("; "));
                text.push('.');
            }
        },
    }
    for amendment in &note.amendments {
        text.push_str(&format!(
            "\nThe reviewer amended {}; the diff from your version to theirs:\n{}",
            amendment.path,
            amendment.diff.trim_end_matches('\n')
        ));
    }
    let comments = note
        .resolution
        .iter()
        .filter_map(|resolution| resolution.review.as_ref())
        .flat_map(|review| &review.comments);
    for comment in comments {
        text.push_str(&format!("\n{}", line_comment_text(comment)));
    }
    if let Some(resolution) = &note.resolution {
        text.push_str(&format!("\nReason: {}", quoted(&resolution.reason)));
    }
    text.push_str("\n</system-reminder>");
    text
}

/// `applied …`, `rejected …`, `dropped …`: what landed and what did not.
fn landed_clauses(resolution: &NoteResolution) -> Vec<String> {
    let hunks: &[HunkReview] = resolution
        .review
        .as_ref()
        .map_or(&[], |review| review.hunks.as_slice());
    let by_hunk = |path: &str| hunks.iter().find(|file| file.path == path);
    let mut applied = Vec::new();
    for path in &resolution.applied_files {
        match by_hunk(path) {
            Some(file) if file.landed.len() < file.hunks => {
                applied.extend(file.landed.iter().map(|hunk| file.address(*hunk)));
            }
            Some(_) | None => applied.push(path.clone()),
        }
    }
    let rejected: Vec<String> = hunks
        .iter()
        .flat_map(|file| {
            file.rejected.iter().map(|rejected| {
                with_reason(file.address(rejected.hunk), rejected.reason.as_deref())
            })
        })
        .collect();
    let file_reason = |path: &str| {
        resolution.review.as_ref().and_then(|review| {
            review
                .rejected_files
                .iter()
                .find(|file| file.path == path)
                .map(|file| file.reason.as_str())
        })
    };
    let dropped: Vec<String> = resolution
        .dropped_files
        .iter()
        .filter(|path| by_hunk(path).is_none())
        .map(|path| with_reason(path.clone(), file_reason(path)))
        .collect();
    let mut clauses = Vec::new();
    if applied.is_empty() {
        clauses.push("applied it".to_owned());
    } else {
        clauses.push(format!("applied {}", applied.join(", ")));
    }
    if !rejected.is_empty() {
        clauses.push(format!("rejected {}", rejected.join(", ")));
    }
    if !dropped.is_empty() {
        clauses.push(format!("dropped {}", dropped.join(", ")));
    }
    clauses
}

/// `what` with its reason in parentheses, or a word that none was given (so the model does not
/// read a rejection without one as an oversight of the note).
fn with_reason(what: String, reason: Option<&str>) -> String {
    match reason {
        Some(reason) => format!("{what} ({})", quoted(reason)),
        None => format!("{what} (no reason given)"),
    }
}

/// One line comment as the model reads it: where, the line as the reviewer saw it, and what
/// they said.
pub fn line_comment_text(comment: &LineComment) -> String {
    let version = match comment.side {
        LineSide::New => "",
        LineSide::Old => " (before the change)",
    };
    format!(
        "The reviewer commented on {}:{}{version}, the line `{}`: {}",
        comment.path,
        comment.line,
        comment.text.trim(),
        quoted(&comment.comment)
    )
}

/// `reason` in double quotes (as JSON writes a string, so quotes inside stay readable).
fn quoted(reason: &str) -> String {
    serde_json::to_string(reason).unwrap_or_else(|_| format!("\"{reason}\""))
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use resolve_core::DecidedBy;
    use resolve_store::{
        Amendment, LineComment, LineSide, Origin, RecordVersion, RejectedFile, RejectedHunk, Review,
    };

    use super::*;

    fn note(resolution: Option<NoteResolution>, amendments: Vec<Amendment>) -> ReviewerNote {
        ReviewerNote {
            version: RecordVersion,
            id: "pending-action:edit:4".into(),
            seq: 4,
            origin: Origin::Agent,
            label: "Edit: src/a.rs".into(),
            decided_by: DecidedBy::Person,
            amendments,
            resolution,
        }
    }

    #[test]
    fn a_partial_apply_names_the_landed_and_rejected_hunks_and_the_reasons_or_that_none_was_given()
    {
        let resolution = NoteResolution {
            outcome: Outcome::Applied,
            reason: "Rename inside the module only.".into(),
            applied_files: vec!["src/a.rs".into(), "src/b.rs".into()],
            dropped_files: vec!["src/c.rs".into()],
            review: Some(Review {
                hunks: vec![HunkReview {
                    path: "src/a.rs".into(),
                    hunks: 3,
                    landed: vec![1],
                    rejected: vec![
                        RejectedHunk {
                            hunk: 2,
                            reason: Some("keep the public name".into()),
                        },
                        RejectedHunk {
                            hunk: 3,
                            reason: None,
                        },
                    ],
                }],
                rejected_files: vec![RejectedFile {
                    path: "src/c.rs".into(),
                    reason: "not now".into(),
                }],
                comments: Vec::new(),
            }),
        };
        assert_eq!(
            reviewer_note_text(&note(Some(resolution), Vec::new())),
            "<system-reminder>\nA reviewer resolved pending-action:edit:4 (Edit: src/a.rs): applied src/a.rs#1, src/b.rs; rejected src/a.rs#2 (\"keep the public name\"), src/a.rs#3 (no reason given); dropped src/c.rs (\"not now\").\nReason: \"Rename inside the module only.\"\n</system-reminder>"
        );
    }

    #[test]
    fn a_discard_and_an_amendment_are_told_with_the_diff() {
        let amendment = Amendment {
            path: "src/a.rs".into(),
            diff: "--- a/src/a.rs\n+++ b/src/a.rs\n@@ -1 +1 @@\n-x\n+y\n".into(),
            amended_at: 1,
        };
        let discarded = NoteResolution {
            outcome: Outcome::Discarded,
            reason: "Not this way.".into(),
            applied_files: Vec::new(),
            dropped_files: vec!["src/a.rs".into()],
            review: None,
        };
        assert_eq!(
            reviewer_note_text(&note(Some(discarded), vec![amendment.clone()])),
            "<system-reminder>\nA reviewer discarded pending-action:edit:4 (Edit: src/a.rs); nothing was written.\nThe reviewer amended src/a.rs; the diff from your version to theirs:\n--- a/src/a.rs\n+++ b/src/a.rs\n@@ -1 +1 @@\n-x\n+y\nReason: \"Not this way.\"\n</system-reminder>"
        );
        let pending = reviewer_note_text(&note(None, vec![amendment]));
        assert!(pending.contains("it now carries the reviewer's version."));
        assert!(!pending.contains("Reason:"), "{pending}");
    }

    #[test]
    fn line_comments_reach_the_model_with_their_file_line_and_copied_text() {
        let resolution = NoteResolution {
            outcome: Outcome::Applied,
            reason: "Fine.".into(),
            applied_files: vec!["src/a.rs".into()],
            dropped_files: Vec::new(),
            review: Some(Review {
                comments: vec![LineComment {
                    path: "src/a.rs".into(),
                    line: 7,
                    side: LineSide::New,
                    text: "    let x = bar(1);".into(),
                    comment: "Is bar safe here?".into(),
                }],
                ..Review::default()
            }),
        };
        let text = reviewer_note_text(&note(Some(resolution), Vec::new()));
        assert!(
            text.contains(
                "\nThe reviewer commented on src/a.rs:7, the line `let x = bar(1);`: \"Is bar safe here?\"\nReason: \"Fine.\""
            ),
            "{text}"
        );
    }
}
