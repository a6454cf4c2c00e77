//! The texts that report a check's outcome: one summary line (`✓ checked` / `✗ check
//! failed`), the files the command changed, and the output's tail.

use resolve_core::count_noun;
use resolve_store::{CheckMode, CheckOutcome, shell_words};

/// The command as one line, each word quoted when it needs to be (`sh -c 'exit 1'`).
pub fn command_line(command: &[String]) -> String {
    shell_words(command)
}

/// Seconds with one decimal: `0.4 s`, `12.0 s`.
fn seconds(duration_ms: u64) -> String {
    let tenths = duration_ms.div_ceil(100);
    format!("{}.{} s", tenths / 10, tenths % 10)
}

/// One line saying how a check went, the way `resolve pending` marks it: `✓ checked` or
/// `✗ check failed`, then the command, its status, where it ran and how long it took.
///
/// `✓ checked: `make test` passed (exit status 0, in place, 0.4 s)`
pub fn check_summary(outcome: &CheckOutcome) -> String {
    let (mark, verdict) = if outcome.passed {
        ("✓ checked", "passed")
    } else {
        ("✗ check failed", "failed")
    };
    format!(
        "{mark}: `{}` {verdict} ({}, {}, {})",
        command_line(&outcome.run.command),
        outcome.status_text(),
        outcome.mode.describe(),
        seconds(outcome.run.duration_ms)
    )
}

/// The files the command changed, as a sentence, or `None` when it changed none.
pub fn changed_files_note(outcome: &CheckOutcome) -> Option<String> {
    if outcome.run.changed_files.is_empty() {
        return None;
    }
    let put_back = match outcome.mode {
        CheckMode::InPlace => {
            "; the preview's files among them were put back to their base, the others stay as the command left them"
        }
        CheckMode::Scratch => " in the scratch copy, which is gone",
    };
    Some(format!(
        "The command changed {}{put_back}.",
        outcome.run.changed_files.join(", ")
    ))
}

/// The summary, the changed files and the output's tail, as `resolve show` and the model's
/// `check` tool give them.
pub fn check_report(outcome: &CheckOutcome) -> String {
    let mut text = check_summary(outcome);
    if let Some(note) = changed_files_note(outcome) {
        text.push('\n');
        text.push_str(&note);
    }
    let kept = outcome.run.output_tail.lines().count();
    if kept == 0 {
        text.push_str("\nNo output.");
    } else {
        let total = usize::try_from(outcome.run.output_lines).unwrap_or(usize::MAX);
        let of = if kept < total {
            format!("last {kept} of {}", count_noun(total, "line"))
        } else {
            count_noun(kept, "line")
        };
        text.push_str(&format!("\nOutput ({of}):\n{}", outcome.run.output_tail));
    }
    text
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use resolve_store::CheckRun;

    use super::*;

    #[test]
    fn commands_are_quoted_only_where_needed() {
        let words = |words: &[&str]| words.iter().map(|w| (*w).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            command_line(&words(&["cargo", "test", "--quiet"])),
            "cargo test --quiet"
        );
        assert_eq!(
            command_line(&words(&["sh", "-c", "grep -q 'x' a.txt"])),
            r"sh -c 'grep -q '\''x'\'' a.txt'"
        );
    }

    #[test]
    fn a_summary_marks_a_pass_or_a_failure_with_the_status_place_and_time() {
        let run = CheckRun {
            command: vec!["make".into(), "test".into()],
            exit_code: Some(0),
            duration_ms: 380,
            output_tail: "ok\n".into(),
            output_lines: 1,
            ..CheckRun::default()
        };
        let passed = CheckOutcome::new(run.clone(), CheckMode::InPlace, "f".into(), 1);
        assert_eq!(
            check_summary(&passed),
            "✓ checked: `make test` passed (exit status 0, in place, 0.4 s)"
        );
        let failed = CheckOutcome::new(
            CheckRun {
                exit_code: Some(2),
                changed_files: vec!["src/a.rs".into()],
                ..run
            },
            CheckMode::Scratch,
            "f".into(),
            1,
        );
        assert_eq!(
            check_report(&failed),
            "✗ check failed: `make test` failed (exit status 2, in a scratch copy, 0.4 s)\n\
             The command changed src/a.rs in the scratch copy, which is gone.\n\
             Output (1 line):\nok\n"
        );
    }
}
