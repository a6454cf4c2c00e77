//! Everything the CLI prints: results as text or JSON, colored diffs, and the resolve block.
//!
//! With `--json`, stdout carries exactly one JSON object per result and nothing else; notes go
//! to stderr either way.

use std::io::{IsTerminal, Write};

use resolve_core::{ColorMode, ToolResult, render_resolve_result};
use serde_json::{Value, json};

use crate::args::{ColorChoice, GlobalArgs};

/// How results are printed.
#[derive(Debug, Clone, Copy)]
pub struct Output {
    json: bool,
    color: bool,
}

impl Output {
    /// Output settings from the global options and the environment.
    pub fn new(global: &GlobalArgs) -> Self {
        let color = match global.color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                    && std::io::stdout().is_terminal()
            }
        };
        Self {
            json: global.json,
            color,
        }
    }

    /// Whether results are printed as JSON.
    pub fn is_json(self) -> bool {
        self.json
    }

    /// Whether output is colored.
    pub fn is_colored(self) -> bool {
        self.color
    }

    /// Print one JSON value as a line on stdout.
    pub fn json_value(self, value: &Value) {
        self.json_line(value);
    }

    fn color_mode(self) -> ColorMode {
        if self.color {
            ColorMode::Ansi
        } else {
            ColorMode::Plain
        }
    }

    /// Print a tool result: its text (diff lines colored), or one JSON object.
    pub fn result(self, result: &ToolResult) {
        if self.json {
            self.json_line(&result_json(result));
            return;
        }
        let text = if self.color {
            colorize_diff(&result.text)
        } else {
            result.text.clone()
        };
        if result.is_error {
            eprintln!("{text}");
        } else {
            println!("{text}");
        }
    }

    /// Print a `resolve` outcome: the result text, then the resolve block.
    pub fn resolve_outcome(self, result: &ToolResult) {
        if self.json {
            self.json_line(&result_json(result));
            return;
        }
        let block = render_resolve_result(
            result.details.as_ref(),
            result.is_error,
            terminal_width(),
            self.color_mode(),
        );
        if result.is_error {
            eprintln!("{}", result.text);
            eprintln!("{block}");
        } else {
            println!("{}", result.text);
            println!("{block}");
        }
    }

    /// Print arbitrary data: JSON as is, or the given human text.
    pub fn data(self, json: &Value, human: &str) {
        if self.json {
            self.json_line(json);
        } else if !human.is_empty() {
            println!("{human}");
        }
    }

    fn json_line(self, value: &Value) {
        let mut stdout = std::io::stdout().lock();
        // A closed pipe is not an error worth reporting.
        let _ = writeln!(stdout, "{value}");
    }
}

/// The stable JSON shape of a result: text, isError, details and the pending id.
pub fn result_json(result: &ToolResult) -> Value {
    let pending_id = result
        .details
        .as_ref()
        .and_then(|d| d.get("pendingId"))
        .cloned()
        .unwrap_or(Value::Null);
    json!({
        "text": result.text,
        "isError": result.is_error,
        "details": result.details.clone().unwrap_or(Value::Null),
        "pendingId": pending_id,
    })
}

/// Print a note (recovery, progress) on stderr.
pub fn note(message: &str) {
    eprintln!("{message}");
}

fn terminal_width() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse().ok())
        .filter(|w| *w >= 20)
        .unwrap_or(80)
}

fn colorize_diff(text: &str) -> String {
    text.lines()
        .map(|line| {
            if line.starts_with("+++") || line.starts_with("---") {
                format!("\x1b[1m{line}\x1b[22m")
            } else if line.starts_with('+') {
                format!("\x1b[32m{line}\x1b[39m")
            } else if line.starts_with('-') {
                format!("\x1b[31m{line}\x1b[39m")
            } else if line.starts_with("@@") {
                format!("\x1b[36m{line}\x1b[39m")
            } else {
                line.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Report a failure: on stderr, and as a JSON error object on stdout with `--json`.
pub fn failure(output: Output, message: &str) {
    if output.json {
        output.json_line(&json!({"text": message, "isError": true, "details": Value::Null, "pendingId": Value::Null}));
    }
    eprintln!("error: {message}");
}

/// The environment variable holding the log filter of `resolve mcp` (`warn` when unset), in
/// `tracing_subscriber::EnvFilter` syntax.
pub const LOG_ENV: &str = "RESOLVE_LOG";

/// Send `tracing` output to stderr, filtered by [`LOG_ENV`]; stdout stays for the protocol.
pub fn init_stderr_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_env(LOG_ENV)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    // A subscriber installed earlier (in tests) stays; that is fine.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
}
