//! The outcome of checking a pending action: a command (the project's tests) run against the
//! workspace with the preview applied, kept on the pending record as data. Running the command
//! is not this crate's (see `resolve-edit`'s check module); putting the preview in place and
//! taking it back is the store's (`Store::check_in_place`, `Store::write_preview_into`).
//! A result reporting a check carries [`CheckFacts`].

use resolve_core::Facts;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How many lines of a check's output are kept: the last ones.
pub const CHECK_TAIL_LINES: usize = 200;

/// What a check command did, as its runner saw it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CheckRun {
    /// The program and its arguments.
    pub command: Vec<String>,
    /// Its exit status; `None` when a signal ended it (or it was killed at the time limit).
    pub exit_code: Option<i32>,
    /// The signal that ended it, if one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// Whether it ran out of time and was killed.
    #[serde(default)]
    pub timed_out: bool,
    /// How long it ran, in milliseconds.
    pub duration_ms: u64,
    /// The last [`CHECK_TAIL_LINES`] lines of its output (stdout and stderr as they came).
    pub output_tail: String,
    /// How many lines it wrote in all.
    pub output_lines: u64,
    /// Files the command itself changed (a formatter, generated code), relative to the root:
    /// in place, the preview's files among them were put back to their base regardless.
    #[serde(default)]
    pub changed_files: Vec<String>,
}

impl CheckRun {
    /// Whether the command succeeded: exit status 0 within its time.
    pub fn passed(&self) -> bool {
        self.exit_code == Some(0) && !self.timed_out
    }
}

/// Where a check ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CheckMode {
    /// In the workspace, the preview applied as a trial and rolled back afterwards.
    InPlace,
    /// In a copy of the workspace with the preview written into it; the workspace untouched.
    Scratch,
}

impl CheckMode {
    /// `in place` or `in a scratch copy`.
    pub fn describe(self) -> &'static str {
        match self {
            Self::InPlace => "in place",
            Self::Scratch => "in a scratch copy",
        }
    }
}

/// The last check of a pending action, as its record keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CheckOutcome {
    /// What the command did.
    #[serde(flatten)]
    pub run: CheckRun,
    /// Whether it passed ([`CheckRun::passed`]), kept for readers of the JSON.
    pub passed: bool,
    /// Where it ran.
    pub mode: CheckMode,
    /// The fingerprint of the change set it ran on; an amended preview's check no longer counts.
    pub fingerprint: String,
    /// When it finished, in Unix seconds.
    pub checked_at: u64,
}

impl CheckOutcome {
    /// The outcome of `run` on the change set with `fingerprint`, finished at `checked_at`.
    pub fn new(run: CheckRun, mode: CheckMode, fingerprint: String, checked_at: u64) -> Self {
        Self {
            passed: run.passed(),
            run,
            mode,
            fingerprint,
            checked_at,
        }
    }

    /// `exit status 1`, `killed by signal 9`, `timed out` or `exit status 0`.
    pub fn status_text(&self) -> String {
        match (self.run.timed_out, self.run.exit_code, self.run.signal) {
            (true, _, _) => "timed out".to_owned(),
            (false, Some(code), _) => format!("exit status {code}"),
            (false, None, Some(signal)) => format!("killed by signal {signal}"),
            (false, None, None) => "ended without an exit status".to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn an_outcome_is_flat_camel_case_json_and_passes_only_on_status_zero_in_time() {
        let run = CheckRun {
            command: vec!["make".into(), "test".into()],
            exit_code: Some(0),
            duration_ms: 12,
            output_tail: "ok\n".into(),
            output_lines: 1,
            ..CheckRun::default()
        };
        let outcome = CheckOutcome::new(run.clone(), CheckMode::InPlace, "f".into(), 7);
        assert!(outcome.passed);
        let json = serde_json::to_value(&outcome).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "command": ["make", "test"], "exitCode": 0, "timedOut": false, "durationMs": 12,
                "outputTail": "ok\n", "outputLines": 1, "changedFiles": [], "passed": true,
                "mode": "in_place", "fingerprint": "f", "checkedAt": 7
            })
        );
        assert_eq!(
            serde_json::from_value::<CheckOutcome>(json).unwrap(),
            outcome
        );
        let timed_out = CheckRun {
            timed_out: true,
            ..run.clone()
        };
        assert!(!timed_out.passed());
        let failed = CheckRun {
            exit_code: Some(1),
            ..run
        };
        assert!(!failed.passed());
        assert_eq!(
            CheckOutcome::new(failed, CheckMode::Scratch, "f".into(), 7).status_text(),
            "exit status 1"
        );
    }
}

/// The check of a pending action as a result reports it: which action, and what its check
/// came to. The details of the `check` tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CheckFacts {
    /// The action checked.
    pub pending_id: String,
    /// Its label.
    pub label: String,
    /// What the check came to.
    pub check: CheckOutcome,
}

impl Facts for CheckFacts {}
