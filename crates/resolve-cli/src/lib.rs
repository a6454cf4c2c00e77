//! The `resolve` command: one module per job, thin over `resolve-edit` and `resolve-core`.
//!
//! [`run`] parses arguments, opens the workspace (recovering any interrupted apply first and
//! saying so on stderr), runs the subcommand and maps the outcome to an exit code: 0 done or
//! nothing to do, 1 the action failed, 2 usage error.

// Unit tests set up and inspect files directly.
#![cfg_attr(test, allow(clippy::disallowed_methods))]

use std::ffi::OsString;
use std::io::Write as _;
use std::process::ExitCode;

use clap::Parser;

mod approvers;
mod args;
mod codex;
mod commands;
mod editor;
mod output;
mod progress;
mod review;
mod root;

pub use args::Cli;

/// Exit code of a successful run.
const EXIT_OK: u8 = 0;
/// Exit code when the action failed.
const EXIT_FAILED: u8 = 1;
/// Exit code of a usage error.
const EXIT_USAGE: u8 = 2;

/// What a subcommand reports: success, or a failure already printed.
pub(crate) enum Outcome {
    /// The job succeeded.
    Success,
    /// The job failed; its message was printed.
    Failed,
    /// The job cannot run as asked (a usage error); its message was printed.
    Usage,
}

/// Run `resolve` with `args` (including the program name) and return its exit code.
pub fn run(args: impl IntoIterator<Item = impl Into<OsString> + Clone>) -> ExitCode {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(error) => {
            let code = if error.use_stderr() {
                EXIT_USAGE
            } else {
                EXIT_OK
            };
            let _ = error.print();
            return ExitCode::from(code);
        }
    };
    if let Err(error) = cli.check() {
        let _ = error.print();
        return ExitCode::from(EXIT_USAGE);
    }
    // A hook answers its host on stdout and with its own exit codes (see `codex::hook`).
    if let args::Command::Hook(hook) = &cli.command
        && hook.host == args::HostChoice::Codex
    {
        let Ok(located) = root::Located::find(cli.global.root.as_deref()) else {
            let _ = writeln!(
                std::io::stderr(),
                "resolve hook codex blocked this call: the workspace root could not be found. Nothing was written."
            );
            return ExitCode::from(EXIT_USAGE);
        };
        return ExitCode::from(codex::hook::run(
            located.root(),
            resolve_edit::HookApproval::from(hook.approve),
            hook.approve_timeout,
        ));
    }
    let output = output::Output::new(&cli.global);
    match commands::run(&cli, output) {
        Ok(Outcome::Success) => ExitCode::from(EXIT_OK),
        Ok(Outcome::Failed) => ExitCode::from(EXIT_FAILED),
        Ok(Outcome::Usage) => ExitCode::from(EXIT_USAGE),
        Err(error) => {
            output::failure(output, &format!("{error:#}"));
            ExitCode::from(EXIT_FAILED)
        }
    }
}
