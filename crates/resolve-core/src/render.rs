//! The terminal block for a `resolve` call and its result.
//!
//! Call and result merge into one block: `Accept`, `Discard` or `Failed`, the label's summary
//! with its source as a `⟦badge⟧`, and the reason. Functions return strings; printing is the
//! caller's job. In [`ColorMode::Ansi`] each line is a solid colored bar with exactly one
//! foreground reset; [`ColorMode::Plain`] has no escape codes at all. Widths are display
//! columns (a CJK character or an emoji takes two), so a bar never outgrows the terminal.

use serde_json::Value;
use unicode_width::UnicodeWidthStr;

use crate::ResolveAction;
use crate::resolve::ResolveArgs;

/// Whether rendered text carries ANSI escape codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColorMode {
    /// Colored, with ANSI escape codes.
    Ansi,
    /// No escape codes.
    Plain,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Color {
    Green,
    Yellow,
    Red,
}

impl Color {
    fn code(self) -> &'static str {
        match self {
            Self::Green => "\x1b[32m",
            Self::Yellow => "\x1b[33m",
            Self::Red => "\x1b[31m",
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Emphasis {
    Normal,
    Bold,
    Italic,
}

struct Span {
    text: String,
    emphasis: Emphasis,
}

fn span(text: impl Into<String>, emphasis: Emphasis) -> Span {
    Span {
        text: text.into(),
        emphasis,
    }
}

/// Longest reason shown on the call line, in display columns.
const CALL_REASON_COLUMNS: usize = 72;

/// The longest prefix of `text` at most `columns` display columns wide, and its width. A
/// character that would straddle the limit (a wide one in the last column) is left out.
fn fit(text: &str, columns: usize) -> (&str, usize) {
    let mut fitted = (0, 0);
    for (start, character) in text.char_indices() {
        let end = start + character.len_utf8();
        let width = text[..end].width();
        if width > columns {
            break;
        }
        fitted = (end, width);
    }
    (&text[..fitted.0], fitted.1)
}

/// The one-line status shown while a `resolve` call runs.
pub fn render_resolve_call(args: &ResolveArgs, mode: ColorMode) -> String {
    let (badge, color) = match args.action {
        ResolveAction::Apply => ("proposed -> resolved", Color::Green),
        ResolveAction::Discard => ("proposed -> rejected", Color::Yellow),
    };
    let (reason, _) = fit(args.reason.trim(), CALL_REASON_COLUMNS);
    let mut line = match mode {
        ColorMode::Ansi => format!(
            "… \x1b[1mResolve\x1b[22m {} {}{badge}\x1b[39m",
            args.action.as_str(),
            color.code()
        ),
        ColorMode::Plain => format!("… Resolve {} {badge}", args.action.as_str()),
    };
    if !reason.is_empty() {
        match mode {
            ColorMode::Ansi => line.push_str(&format!(" \x1b[2m{reason}\x1b[22m")),
            ColorMode::Plain => line.push_str(&format!(" {reason}")),
        }
    }
    line
}

/// The merged block for a finished `resolve` call, `width` columns wide, lines joined by `\n`.
///
/// `details` are the result's details (empty or missing for a thrown error, which renders as
/// `Failed: pending action` / `No reason provided`).
pub fn render_resolve_result(
    details: Option<&Value>,
    is_error: bool,
    width: usize,
    mode: ColorMode,
) -> String {
    let field = |key: &str| details.and_then(|d| d.get(key)).and_then(Value::as_str);
    // An empty label falls back like a missing one; line breaks would split the block.
    let label = field("label")
        .filter(|label| !label.is_empty())
        .unwrap_or("pending action")
        .replace('\t', "  ")
        .replace(['\n', '\r'], " ");
    let reason = match field("reason").map(str::trim) {
        Some(reason) if !reason.is_empty() => reason.replace(['\n', '\r'], " "),
        _ => "No reason provided".to_owned(),
    };
    let is_apply = field("action").unwrap_or("apply") == "apply";
    let (icon, verb, color) = match (is_apply, is_error) {
        (true, false) => ("✓", "Accept", Color::Green),
        (true, true) => ("✘", "Failed", Color::Red),
        (false, false) => ("✘", "Discard", Color::Yellow),
        (false, true) => ("✘", "Discard", Color::Red),
    };
    let (summary, badge) = match label.find(": ") {
        Some(index) if index > 0 => (
            label[index + 2..].to_owned(),
            Some(label[..index].to_owned()),
        ),
        Some(_) | None => (label.clone(), None),
    };
    let mut title = vec![
        span(format!("{icon} "), Emphasis::Normal),
        span(format!("{verb}:"), Emphasis::Bold),
    ];
    title.push(span(format!(" {summary}"), Emphasis::Normal));
    if let Some(badge) = badge {
        title.push(span(" ", Emphasis::Normal));
        title.push(span(format!("⟦{badge}⟧"), Emphasis::Bold));
    }
    let lines = [
        vec![],
        title,
        vec![],
        vec![span(reason, Emphasis::Italic)],
        vec![],
    ];
    lines
        .iter()
        .map(|spans| bar(spans, width, color, mode))
        .collect::<Vec<_>>()
        .join("\n")
}

/// One full-width line: content truncated to `width - 2` columns, a space on each side, padded
/// to `width` columns.
fn bar(spans: &[Span], width: usize, color: Color, mode: ColorMode) -> String {
    let mut room = width.saturating_sub(2);
    let mut body = String::from(" ");
    let mut used = 0;
    for span in spans {
        let (text, columns) = fit(&span.text, room);
        room -= columns;
        used += columns;
        match (mode, span.emphasis) {
            (ColorMode::Ansi, Emphasis::Bold) => body.push_str(&format!("\x1b[1m{text}\x1b[22m")),
            (ColorMode::Ansi, Emphasis::Italic) => body.push_str(&format!("\x1b[3m{text}\x1b[23m")),
            (ColorMode::Ansi | ColorMode::Plain, Emphasis::Normal)
            | (ColorMode::Plain, Emphasis::Bold | Emphasis::Italic) => {
                body.push_str(text);
            }
        }
    }
    body.push_str(&" ".repeat(width.saturating_sub(used + 1)));
    match mode {
        ColorMode::Ansi => format!("\x1b[7m{}{body}\x1b[39m\x1b[27m", color.code()),
        ColorMode::Plain => body,
    }
}
