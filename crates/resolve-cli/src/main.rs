//! The `resolve` binary; everything happens in [`resolve_cli::run`].

use std::process::ExitCode;

fn main() -> ExitCode {
    resolve_cli::run(std::env::args_os())
}
