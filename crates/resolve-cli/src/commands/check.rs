//! `resolve check`: run a command against the workspace with a pending preview applied (in
//! place, or in a scratch copy), then report the outcome it kept on the action.
//!
//! The command's output streams as it runs: stdout to stdout and stderr to stderr, or both to
//! stderr with `--json` (stdout then carries only the result object).

use std::time::Duration;

use resolve_core::Facts;
use resolve_edit::{
    CheckFacts, CheckPlace, CheckRequest, EditError, LiveOutput, Store, WorkspaceConfig,
    changed_files_note, check_summary, command_line, run_check,
};
use serde_json::{Map, Value};

use crate::Outcome;
use crate::args::CheckArgs;
use crate::output::{Output, failure, note};

/// Run the check; exit 0 when it passed, 1 when it failed or could not run.
pub(crate) fn run(store: &Store, args: &CheckArgs, output: Output) -> anyhow::Result<Outcome> {
    let settings =
        WorkspaceConfig::read(store.workspace().root(), args.config.as_deref(), None)?.check;
    let command = if args.command.is_empty() {
        // The configured command runs only from a file the person trusted.
        match settings.runnable_command() {
            Ok(Some(command)) => command.to_vec(),
            Ok(None) => {
                failure(output, &EditError::NoCheckCommand.to_string());
                return Ok(Outcome::Failed);
            }
            Err(error) => {
                failure(output, &error.to_string());
                return Ok(Outcome::Failed);
            }
        }
    } else {
        args.command.clone()
    };
    let id = super::full_id(store, args.id.as_deref())?;
    let pending = store.pending()?;
    let record = match &id {
        Some(id) => pending.into_iter().find(|record| &record.id == id),
        None => pending.into_iter().next(),
    };
    let Some(record) = record else {
        let message = match &id {
            Some(id) => {
                format!("`{id}` is not a pending action. Run `resolve pending` to list them.")
            }
            None => "No pending action to check.".to_owned(),
        };
        failure(output, &message);
        return Ok(Outcome::Failed);
    };
    let place = if args.scratch {
        CheckPlace::Scratch {
            with_ignored: args.with_ignored,
        }
    } else {
        CheckPlace::InPlace
    };
    let request = CheckRequest {
        id: record.id.clone(),
        command,
        timeout: args.timeout.map_or(settings.timeout, Duration::from_secs),
        place,
    };
    let live = if output.is_json() {
        LiveOutput::merged(std::io::stderr())
    } else {
        LiveOutput::new(Box::new(std::io::stdout()), Box::new(std::io::stderr()))
    };
    note(&format!(
        "Checking {} ({}) {}: {}",
        record.id,
        record.label,
        match place {
            CheckPlace::InPlace => "in place",
            CheckPlace::Scratch { .. } => "in a scratch copy",
        },
        command_line(&request.command)
    ));
    match run_check(store, &request, live) {
        Ok(outcome) => {
            let mut human = format!("{} — {}", record.id, check_summary(&outcome));
            if let Some(changed) = changed_files_note(&outcome) {
                human.push('\n');
                human.push_str(&changed);
            }
            let passed = outcome.passed;
            // `id` as `resolve pending --json` names an action, then the check tool's facts.
            let mut report = Map::new();
            report.insert("id".into(), record.id.clone().into());
            report.extend(
                CheckFacts {
                    pending_id: record.id.clone(),
                    label: record.label,
                    check: outcome,
                }
                .to_details(),
            );
            output.data(&Value::Object(report), &human);
            Ok(if passed {
                Outcome::Success
            } else {
                Outcome::Failed
            })
        }
        Err(error) => {
            failure(output, &error.to_string());
            Ok(Outcome::Failed)
        }
    }
}
