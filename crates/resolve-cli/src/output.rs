//! Everything the CLI prints: results as text or JSON, colored diffs, and the resolve block.
//!
//! With `--json`, stdout carries exactly one JSON object per result and nothing else; notes go
//! to stderr either way.
//!
//! Whether to color is `anstream`'s decision under `--color auto` (`NO_COLOR`, `CLICOLOR`,
//! `CLICOLOR_FORCE`, a terminal), and colored text goes through its stream, which adapts the
//! escape codes to the console; diff styles are `anstyle` styles. The `resolve` block is
//! rendered by `resolve-core` (its own escape codes, or none).

use std::borrow::Cow;
use std::io::{BufRead, BufReader, IsTerminal, Write};

use anstream::AutoStream;
use anstyle::{AnsiColor, Style};
use resolve_core::{ColorMode, ToolResult, render_resolve_result};
use resolve_edit::{Blobs, EditError, PREVIEW_BANNER, StagedPreview, Workspace};
use serde::Serialize;
use serde_json::Value;

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
                AutoStream::choice(&std::io::stdout()) != anstream::ColorChoice::Never
            }
        };
        Self {
            json: global.json,
            color,
        }
    }

    /// Whether output is colored (`--color`, `NO_COLOR`, a terminal).
    pub fn is_color(self) -> bool {
        self.color
    }

    /// Whether results are printed as JSON.
    pub fn is_json(self) -> bool {
        self.json
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

    /// A progress indicator for work that may take a while, shown on a terminal only and never
    /// with `--json`.
    pub fn progress(self, message: &'static str) -> crate::progress::Progress {
        crate::progress::Progress::start(message, !self.json)
    }

    /// `raw` as this output writes to it: colored text through `anstream` (which passes it on
    /// as it is, or converts it for a console that needs that); plain text passed on byte for
    /// byte, so a previewed file's own bytes are never touched.
    fn stream<W: anstream::stream::RawStream>(self, raw: W) -> AutoStream<W> {
        let choice = if self.color {
            anstream::ColorChoice::Always
        } else {
            anstream::ColorChoice::AlwaysAnsi
        };
        AutoStream::new(raw, choice)
    }

    /// The `resolve` block for a result's `details`, `width` columns wide, colored like this
    /// output. After a partial apply the block names what landed (`sourceResultDetails.
    /// appliedLabel`) instead of the whole preview's label.
    pub fn resolve_block(self, details: Option<&Value>, is_error: bool, width: usize) -> String {
        render_resolve_result(
            shown_details(details).as_deref(),
            is_error,
            width,
            self.color_mode(),
        )
    }

    /// Print a tool result: its text (diff lines colored), or one JSON object. The text is
    /// written as it is, never copied: a preview's text can be large.
    pub fn result(self, result: &ToolResult) {
        if self.json {
            self.json_line(&result_json(result));
            return;
        }
        let written = if result.is_error {
            // Every failure on stderr starts the same way (see [`failure`]).
            self.write_text(
                &mut self.stream(std::io::stderr().lock()),
                &format!("{ERROR_PREFIX}{}", result.text),
            )
        } else {
            self.write_text(&mut self.stream(std::io::stdout().lock()), &result.text)
        };
        // A closed pipe is not an error worth reporting.
        let _ = written;
    }

    /// Write `text` and a newline, diff lines colored when output is colored.
    fn write_text(self, out: &mut impl Write, text: &str) -> std::io::Result<()> {
        let mut out = std::io::BufWriter::new(out);
        self.write_lines(&mut out, text.as_bytes())?;
        out.write_all(b"\n")?;
        out.flush()
    }

    /// Write what `text` reads, line by line, diff lines colored when output is colored.
    fn write_lines(self, out: &mut impl Write, text: impl BufRead) -> std::io::Result<()> {
        for_each_line(text, |line| {
            if self.color {
                write_colored_line(out, line)
            } else {
                out.write_all(line)
            }
        })
    }

    /// Print a staged preview, streaming its text from the store and its details' file list from
    /// the change set's spool (neither is ever held whole): as text with the note after it, or
    /// as one JSON object shaped like [`result_json`]'s.
    pub fn staged_preview(
        self,
        staged: &StagedPreview,
        workspace: &Workspace,
    ) -> Result<(), EditError> {
        let text = BufReader::with_capacity(
            64 * 1024,
            Blobs::of(workspace).open(&staged.record.preview_text)?,
        );
        let mut out = std::io::BufWriter::new(self.stream(std::io::stdout().lock()));
        let note = staged.note.as_ref().map(|note| format!("\n{note}"));
        let written = if self.json {
            let pending_id = Value::String(staged.record.id.clone());
            out.write_all(b"{\"text\":\"")
                .and_then(|()| for_each_line(text, |line| write_json_escaped(&mut out, line)))
                .and_then(|()| match &note {
                    Some(note) => write_json_escaped(&mut out, note.as_bytes()),
                    None => Ok(()),
                })
                .and_then(|()| out.write_all(b"\",\"isError\":false,\"details\":"))
                .and_then(|()| {
                    // The file list of a whole-tree preview is long: it goes from the change
                    // set's spool straight to stdout.
                    serde_json::to_writer(&mut out, &staged.result_details())
                        .map_err(std::io::Error::from)
                })
                .and_then(|()| writeln!(out, ",\"pendingId\":{pending_id}}}"))
        } else {
            // The model's banner (call the `resolve` tool) becomes the person's, with the id
            // (the commands that come next follow the result).
            let mut text = text;
            let id = staged.record.id.as_str();
            person_banner(
                &mut text,
                &mut out,
                &format!("Staged as {id} — files are NOT modified yet."),
            )
            .and_then(|()| self.write_lines(&mut out, text))
            .and_then(|()| out.write_all(note.as_deref().unwrap_or("").as_bytes()))
            .and_then(|()| out.write_all(b"\n"))
        };
        // A closed pipe is not an error worth reporting; a preview cut short otherwise is.
        match written.and_then(|()| out.flush()) {
            Err(error) if error.kind() != std::io::ErrorKind::BrokenPipe => Err(EditError::io(
                "print the preview to",
                "standard output",
                error,
            )),
            Ok(()) | Err(_) => Ok(()),
        }
    }

    /// Print a `resolve` outcome: the result text, then the resolve block.
    pub fn resolve_outcome(self, result: &ToolResult) {
        if self.json {
            self.json_line(&result_json(result));
            return;
        }
        let block = self.resolve_block(result.details.as_ref(), result.is_error, terminal_width());
        // The block is padded to the terminal's width; into a pipe or a file, plain lines end
        // where their text does.
        let to_terminal = if result.is_error {
            std::io::stderr().is_terminal()
        } else {
            std::io::stdout().is_terminal()
        };
        let block = if self.color || to_terminal {
            block
        } else {
            block
                .lines()
                .map(str::trim_end)
                .collect::<Vec<_>>()
                .join("\n")
        };
        let text = if result.is_error {
            format!("{ERROR_PREFIX}{}\n{block}\n", result.text)
        } else {
            format!("{}\n{block}\n", result.text)
        };
        // A closed pipe is not an error worth reporting.
        let _ = if result.is_error {
            self.stream(std::io::stderr().lock())
                .write_all(text.as_bytes())
        } else {
            self.stream(std::io::stdout().lock())
                .write_all(text.as_bytes())
        };
    }

    /// Print arbitrary data: JSON as is, or the given human text (its diff lines colored when
    /// output is colored, as the producers' are).
    pub fn data(self, json: &Value, human: &str) {
        if self.json {
            self.json_line(json);
        } else if self.color {
            // A closed pipe is not an error worth reporting.
            let _ = self.write_text(&mut self.stream(std::io::stdout().lock()), human);
        } else if !human.is_empty() {
            out_line(human);
        }
    }

    /// `text` in `style` when output is colored, else as it is.
    pub fn paint(self, text: &str, style: Style) -> String {
        if self.color {
            format!("{}{text}{}", style.render(), style.render_reset())
        } else {
            text.to_owned()
        }
    }

    /// Print `text` as a line on stdout for a person; nothing with `--json`, whose object
    /// already carries it.
    pub fn human(self, text: &str) {
        if !self.json {
            out_line(text);
        }
    }

    fn json_line(self, value: &impl Serialize) {
        let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
        // A closed pipe is not an error worth reporting.
        let _ = serde_json::to_writer(&mut stdout, value)
            .map_err(std::io::Error::from)
            .and_then(|()| stdout.write_all(b"\n"))
            .and_then(|()| stdout.flush());
    }
}

/// The stable JSON shape of a result: text, isError, details and the pending id.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResultJson<'a> {
    text: &'a str,
    is_error: bool,
    details: &'a Value,
    pending_id: &'a Value,
}

/// The JSON shape of `result`, borrowing its text (serialized without copying it).
pub fn result_json(result: &ToolResult) -> ResultJson<'_> {
    let details = result.details.as_ref().unwrap_or(&Value::Null);
    ResultJson {
        text: &result.text,
        is_error: result.is_error,
        details,
        pending_id: details.get("pendingId").unwrap_or(&Value::Null),
    }
}

/// Write `text` and a newline to stdout. A closed pipe (`resolve log | head`) is not an error
/// worth reporting, nor a reason to panic as `println!` does.
pub fn out_line(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.write_all(b"\n"));
}

/// Write `text` and a newline to stderr, like [`out_line`].
pub fn err_line(text: &str) {
    let mut stderr = std::io::stderr().lock();
    let _ = stderr
        .write_all(text.as_bytes())
        .and_then(|()| stderr.write_all(b"\n"));
}

/// Print a note (recovery, progress) on stderr.
pub fn note(message: &str) {
    err_line(message);
}

fn terminal_width() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse().ok())
        .filter(|w| *w >= 20)
        .unwrap_or(80)
}

/// The model's names for what a person types on the command line: tool arguments and tools,
/// each with the flag or command that stands for it.
const PERSON_WORDS: &[(&str, &str)] = &[
    ("`old_text`", "--old TEXT"),
    ("`new_text`", "--new TEXT"),
    ("set `replace_all`", "pass --all"),
    ("unless `replace_all` is true", "unless --all is given"),
    ("`ops[0].pat`", "-p PATTERN"),
    ("`ops[0].out`", "-r REWRITE"),
    (
        "check `paths` and `lang`",
        "check the PATH arguments and --lang",
    ),
    ("`paths`", "PATH arguments"),
    ("pass `lang`", "pass --lang"),
    ("use `write` to", "use `resolve write` to"),
    (", or the `check` tool)", ")"),
];

/// A producer's message (written for the model) in the words of the command line: the flags
/// and commands a person types instead of the tools' argument names.
pub fn in_person_words(text: &str) -> String {
    PERSON_WORDS
        .iter()
        .fold(text.to_owned(), |text, (model, person)| {
            text.replace(model, person)
        })
}

/// Copy the first line of `text` to `out`, replaced by `banner` when it is the model's preview
/// banner ([`PREVIEW_BANNER`]).
fn person_banner(
    text: &mut impl BufRead,
    out: &mut impl Write,
    banner: &str,
) -> std::io::Result<()> {
    let mut first = Vec::new();
    text.read_until(b'\n', &mut first)?;
    let line = first.strip_suffix(b"\n").unwrap_or(&first);
    if line == PREVIEW_BANNER.as_bytes() {
        out.write_all(banner.as_bytes())?;
        out.write_all(&first[line.len()..])
    } else {
        out.write_all(&first)
    }
}

/// `text` with its first line, when it is the model's preview banner, replaced by `banner`.
pub fn with_person_banner(text: &str, banner: &str) -> String {
    match text.strip_prefix(PREVIEW_BANNER) {
        Some(rest) => format!("{banner}{rest}"),
        None => text.to_owned(),
    }
}

/// What a person does next with the pending action `id`.
pub fn next_commands(id: &str) -> String {
    let number = id.rsplit(':').next().unwrap_or(id);
    format!(
        "Next: `resolve review` (or `resolve show {number}`), then `resolve apply --id {number} --reason \"…\"` or `resolve discard --id {number} --reason \"…\"`."
    )
}

/// Call `each` with every line `text` reads, its newline included, one at a time.
fn for_each_line(
    mut text: impl BufRead,
    mut each: impl FnMut(&[u8]) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut line = Vec::new();
    loop {
        line.clear();
        if text.read_until(b'\n', &mut line)? == 0 {
            return Ok(());
        }
        each(&line)?;
    }
}

/// File headers of a diff (`---`, `+++`).
const HEADER: Style = Style::new().bold();
/// Added lines.
const ADDED: Style = AnsiColor::Green.on_default();
/// Removed lines.
const REMOVED: Style = AnsiColor::Red.on_default();
/// Hunk headers (`@@`).
const HUNK: Style = AnsiColor::Cyan.on_default();

/// The style of a diff line: headers bold, additions green, removals red, hunk lines cyan.
fn diff_style(line: &[u8]) -> Style {
    if line.starts_with(b"+++") || line.starts_with(b"---") {
        HEADER
    } else if line.starts_with(b"+") {
        ADDED
    } else if line.starts_with(b"-") {
        REMOVED
    } else if line.starts_with(b"@@") {
        HUNK
    } else {
        Style::new()
    }
}

/// Write one line (its newline, if any, kept) colored as a diff line (see [`diff_style`]).
fn write_colored_line(out: &mut impl Write, line: &[u8]) -> std::io::Result<()> {
    let (body, newline) = match line.strip_suffix(b"\n") {
        Some(body) => (body, &b"\n"[..]),
        None => (line, &b""[..]),
    };
    let style = diff_style(body);
    write!(out, "{}", style.render())?;
    out.write_all(body)?;
    write!(out, "{}", style.render_reset())?;
    out.write_all(newline)
}

/// The details a `resolve` block is rendered from: `details` as they are, or, after a partial
/// apply, with the label of what landed in place of the preview's.
fn shown_details(details: Option<&Value>) -> Option<Cow<'_, Value>> {
    let details = details?;
    let applied = details
        .get("sourceResultDetails")
        .and_then(|source| source.get("appliedLabel"))
        .and_then(Value::as_str);
    Some(match applied {
        Some(applied) => {
            let mut shown = details.clone();
            if let Some(fields) = shown.as_object_mut() {
                fields.insert("label".into(), Value::from(applied));
            }
            Cow::Owned(shown)
        }
        None => Cow::Borrowed(details),
    })
}

/// Write `text` escaped as the inside of a JSON string.
fn write_json_escaped(out: &mut impl Write, text: &[u8]) -> std::io::Result<()> {
    let quoted = serde_json::to_string(&String::from_utf8_lossy(text))?;
    out.write_all(&quoted.as_bytes()[1..quoted.len() - 1])
}

/// Report a failure: on stderr, and as a JSON error object on stdout with `--json`.
pub fn failure(output: Output, message: &str) {
    if output.json {
        output.json_line(&ResultJson {
            text: message,
            is_error: true,
            details: &Value::Null,
            pending_id: &Value::Null,
        });
    }
    err_line(&format!("{ERROR_PREFIX}{message}"));
}

/// What every failure printed on stderr starts with.
const ERROR_PREFIX: &str = "error: ";

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
