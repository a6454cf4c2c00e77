//! Drawing the review: the action's header, its file list with counts, the current file's
//! hunks (the one under the cursor marked, changed words highlighted), a status or prompt line,
//! the key footer, and the `?` help over it all. Colors only when the theme says so; without
//! them, markers and modifiers (bold, underline, reverse) carry the same information.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use resolve_core::{quote_path, visible_line};
use unicode_width::UnicodeWidthChar;

use super::app::{App, Mode, PromptPurpose};
use super::model::{ActionView, Decision, DiffLine, FileKind, FileView, HunkView, LineKind};

/// Whether to color.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    /// Colors on; off under `NO_COLOR` or `--color never`.
    pub color: bool,
}

impl Theme {
    fn colored(self, color: Color) -> Style {
        if self.color {
            Style::new().fg(color)
        } else {
            Style::new()
        }
    }

    fn line_style(self, kind: LineKind) -> Style {
        match kind {
            LineKind::Added => self.colored(Color::Green),
            LineKind::Removed => self.colored(Color::Red),
            LineKind::Context => Style::new(),
            LineKind::NoNewline => Style::new().add_modifier(Modifier::DIM),
        }
    }

    /// Changed words: reversed in the line's color, or underlined and bold without color.
    fn word_style(self, kind: LineKind) -> Style {
        if self.color {
            self.line_style(kind).add_modifier(Modifier::REVERSED)
        } else {
            Style::new().add_modifier(Modifier::UNDERLINED | Modifier::BOLD)
        }
    }
}

/// The key footer, two lines; every key of the contract is on it.
pub const FOOTER: [&str; 2] = [
    "j/k hunk  J/K file  space keep/reject  r reject+reason  R/A reject/keep file",
    "e edit file  a apply kept  d discard  n/p action  ? help  q quit",
];

/// The `?` help: each key and what it does.
pub const HELP: &[(&str, &str)] = &[
    ("j / ↓", "next hunk"),
    ("k / ↑", "previous hunk"),
    ("J / K", "next / previous file"),
    ("space", "toggle the hunk: kept / rejected"),
    ("r", "reject the hunk, with a reason"),
    ("R / A", "reject / keep every hunk of the file"),
    ("e", "edit the file's new content in $VISUAL/$EDITOR"),
    ("C / P", "a conflict: take the current / preview lines"),
    ("a", "apply the kept hunks, with a reason"),
    ("d", "discard the action, with a reason"),
    ("n / p", "next / previous pending action"),
    ("PgDn / PgUp", "scroll the diff"),
    ("q / Ctrl-C", "quit; the marks are kept for next time"),
    ("Enter / Esc", "confirm / cancel a prompt"),
];

/// Draw the whole review.
pub fn draw(frame: &mut Frame<'_>, app: &App, theme: Theme) {
    let area = frame.area();
    let Some(action) = app.current_action() else {
        frame.render_widget(Paragraph::new("No pending actions."), area);
        return;
    };
    let file_rows = app.shown_files().len().max(1);
    let [header, files, rule, diff, status, footer] = Layout::vertical([
        Constraint::Length(2),
        Constraint::Length(u16::try_from(file_rows).unwrap_or(1)),
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(1),
        Constraint::Length(2),
    ])
    .areas(area);
    frame.render_widget(header_lines(app, action, theme), header);
    frame.render_widget(file_list(app, action), files);
    frame.render_widget(diff_rule(app.current_file(), rule.width), rule);
    frame.render_widget(diff_view(app, action, diff, theme), diff);
    frame.render_widget(status_line(app, theme), status);
    frame.render_widget(
        Paragraph::new(FOOTER.map(Line::from).to_vec())
            .style(Style::new().add_modifier(Modifier::DIM)),
        footer,
    );
    if let Mode::Prompt(prompt) = &app.mode {
        let typed = prompt_text(prompt.purpose, app).chars().count() + prompt.input.chars().count();
        let at = status
            .x
            .saturating_add(u16::try_from(typed).unwrap_or(u16::MAX));
        frame.set_cursor_position((at.min(status.right().saturating_sub(1)), status.y));
    }
    if app.mode == Mode::Help {
        help(frame, area);
    }
}

fn header_lines<'a>(app: &App, action: &'a ActionView, theme: Theme) -> Paragraph<'a> {
    let (kept, total) = action.kept_of_total();
    let position = format!("  ({} of {} pending)", app.action + 1, app.actions.len());
    let mut first = vec![
        Span::styled(
            visible_line(&action.id).into_owned(),
            Style::new().add_modifier(Modifier::BOLD),
        ),
        Span::raw(position),
    ];
    first.push(Span::styled(
        format!(
            "  {}, staged by {}",
            action.age,
            visible_line(&action.origin)
        ),
        theme.colored(Color::Blue),
    ));
    if action.foreign {
        first.push(Span::styled(
            "  ⚠ FOREIGN: not staged by your resolve",
            theme
                .colored(Color::Red)
                .add_modifier(Modifier::BOLD | Modifier::REVERSED),
        ));
    }
    let unread = action.files.iter().filter(|file| !file.loaded).count();
    let unread = match unread {
        0 => String::new(),
        1 => " (1 file not read yet)".to_owned(),
        n => format!(" ({n} files not read yet)"),
    };
    let second = Line::from(vec![
        Span::raw(visible_line(&action.label).into_owned()),
        Span::styled(
            format!("  ·  {kept} of {total} hunks kept{unread}"),
            Style::new().add_modifier(Modifier::DIM),
        ),
    ]);
    Paragraph::new(vec![Line::from(first), second])
}

fn file_list<'a>(app: &App, action: &'a ActionView) -> Paragraph<'a> {
    let shown = app.shown_files();
    let (first, rows) = (shown.start, shown.len());
    let width = action
        .files
        .iter()
        .map(|file| quote_path(&file.path).chars().count())
        .max()
        .unwrap_or(0)
        .min(40);
    let lines: Vec<Line<'_>> = action
        .files
        .iter()
        .enumerate()
        .skip(first)
        .take(rows)
        .map(|(index, file)| {
            let selected = index == app.file;
            let text = format!(
                "{} {:width$}  {}",
                if selected { '▸' } else { ' ' },
                quote_path(&file.path),
                file_counts(file)
            );
            let style = if selected {
                Style::new().add_modifier(Modifier::REVERSED)
            } else {
                Style::new()
            };
            Line::styled(text, style)
        })
        .collect();
    if lines.is_empty() {
        return Paragraph::new("  (no files: the action calls a tool)");
    }
    Paragraph::new(lines)
}

/// A file whose preview conflicts with what changed since: each conflicting hunk, the base's
/// lines, the current file's and the preview's, and the keys that settle it.
fn conflict_view(file: &FileView) -> Paragraph<'static> {
    let mut text = String::from(
        "  The file changed since the preview, and these hunks conflict with that change.\n  C: take the current lines   P: take the preview's   (the rest merges; then a applies)",
    );
    for (index, conflict) in file.conflicts.iter().enumerate() {
        text.push_str(&format!("\n\n  conflict {}: base:", index + 1));
        push_side(&mut text, &conflict.base);
        text.push_str(&format!("\n  current (line {}):", conflict.current_line));
        push_side(&mut text, &conflict.current);
        text.push_str(&format!("\n  preview (line {}):", conflict.preview_line));
        push_side(&mut text, &conflict.preview);
    }
    Paragraph::new(text)
}

/// A conflict's lines, each behind `  | `, made printable.
fn push_side(text: &mut String, lines: &str) {
    if lines.is_empty() {
        text.push_str("\n  | (no lines)");
    }
    for line in lines.lines() {
        text.push_str("\n  | ");
        text.push_str(&printable(line));
    }
}

/// `+3 -2  2 hunks, 1 rejected` (`new`/`deleted` for whole-file changes).
fn file_counts(file: &FileView) -> String {
    let kind = match file.kind {
        FileKind::Create => "new, ",
        FileKind::Delete => "deleted, ",
        FileKind::Update => "",
    };
    if !file.loaded {
        return format!("{kind}not read yet");
    }
    if file.stale && !file.conflicts.is_empty() {
        return format!("conflicts since the preview ({})", file.conflicts.len());
    }
    if file.stale {
        return "changed since the preview".to_owned();
    }
    let hunks = match file.hunks.len() {
        1 => "1 hunk".to_owned(),
        n => format!("{n} hunks"),
    };
    let rejected = match file.rejected() {
        0 => String::new(),
        n => format!(", {n} rejected"),
    };
    format!("+{} -{}  {kind}{hunks}{rejected}", file.added, file.removed)
}

fn diff_rule(file: Option<&FileView>, width: u16) -> Paragraph<'static> {
    let title = file.map_or_else(String::new, |file| format!(" {} ", file.path));
    let rest = usize::from(width).saturating_sub(title.chars().count() + 3);
    Paragraph::new(format!("───{title}{}", "─".repeat(rest)))
        .style(Style::new().add_modifier(Modifier::DIM))
}

/// The current file's hunks, each diff line wrapped to the area's width (see [`wrapped`]), the
/// cursor hunk's header at the top when the rest fits.
fn diff_view<'a>(app: &'a App, action: &'a ActionView, area: Rect, theme: Theme) -> Paragraph<'a> {
    let Some(file) = app.current_file() else {
        return Paragraph::new(action.note.clone().unwrap_or_default());
    };
    if !file.loaded {
        return Paragraph::new("  (its hunks are computed when the cursor reaches it)");
    }
    if file.stale && !file.conflicts.is_empty() {
        return conflict_view(file);
    }
    if file.stale {
        return Paragraph::new(
            "  The file changed since the preview: its hunks cannot be shown or applied.\n  Discard this action (d) and stage it again.",
        );
    }
    if file.hunks.is_empty() {
        return Paragraph::new("  (no lines: an empty file)");
    }
    let mut lines = Vec::new();
    let mut cursor_at = 0;
    for (index, hunk) in file.hunks.iter().enumerate() {
        let under_cursor = index == app.hunk;
        if under_cursor {
            cursor_at = lines.len();
        }
        lines.push(hunk_header(hunk, under_cursor, theme));
        let gutter = if under_cursor { "│" } else { " " };
        for line in &hunk.lines {
            lines.extend(diff_line(
                line,
                gutter,
                hunk.decision.is_rejected(),
                theme,
                usize::from(area.width),
            ));
        }
    }
    // The cursor hunk at the top, unless the rest of the file fits below an earlier start.
    let last_top = lines.len().saturating_sub(usize::from(area.height));
    let top = (cursor_at + app.scroll).min(last_top);
    Paragraph::new(lines).scroll((u16::try_from(top).unwrap_or(u16::MAX), 0))
}

fn hunk_header(hunk: &HunkView, under_cursor: bool, theme: Theme) -> Line<'static> {
    let marker = if under_cursor { "▶ " } else { "  " };
    let decision = match &hunk.decision {
        Decision::Kept => "kept".to_owned(),
        Decision::Rejected { reason: None } => "✗ rejected".to_owned(),
        Decision::Rejected {
            reason: Some(reason),
        } => format!("✗ rejected: {}", printable(reason)),
    };
    let mut header = theme.colored(Color::Cyan);
    if under_cursor {
        header = header.add_modifier(Modifier::BOLD);
    }
    let decision_style = if hunk.decision.is_rejected() {
        theme.colored(Color::Yellow).add_modifier(Modifier::BOLD)
    } else {
        Style::new().add_modifier(Modifier::DIM)
    };
    Line::from(vec![
        Span::styled(marker, header),
        Span::styled(format!("{} {}  ", hunk.address, hunk.header), header),
        Span::styled(decision, decision_style),
    ])
}

/// One diff line as screen rows: the gutter, its `-`/`+` sign and its text, changed words
/// highlighted, wrapped at `width` columns.
fn diff_line(
    line: &DiffLine,
    gutter: &'static str,
    rejected: bool,
    theme: Theme,
    width: usize,
) -> Vec<Line<'static>> {
    let prefix = match line.kind {
        LineKind::Added => "+",
        LineKind::Removed => "-",
        LineKind::Context => " ",
        LineKind::NoNewline => "",
    };
    let mut base = theme.line_style(line.kind);
    if rejected {
        base = base.add_modifier(Modifier::DIM | Modifier::CROSSED_OUT);
    }
    let mut text = Vec::new();
    let mut at = 0;
    for range in &line.changed_words {
        let (Some(before), Some(word)) =
            (line.text.get(at..range.start), line.text.get(range.clone()))
        else {
            continue;
        };
        text.push(Span::styled(printable(before), base));
        text.push(Span::styled(
            printable(word),
            base.patch(theme.word_style(line.kind)),
        ));
        at = range.end;
    }
    text.push(Span::styled(
        printable(line.text.get(at..).unwrap_or("")),
        base,
    ));
    let gutter = Span::styled(gutter, theme.colored(Color::Cyan));
    wrapped(
        [gutter.clone(), Span::styled(format!(" {prefix}"), base)],
        [gutter, Span::styled(format!(" {CONTINUATION}"), base)],
        text,
        width,
    )
}

/// The mark that starts a row continuing the diff line above it, in place of its sign.
pub const CONTINUATION: char = '↪';

/// `text` cut into rows of at most `width` columns: the first row starts with `first`, every
/// further row with `continued` (the same width), so no changed column is ever past the right
/// edge.
fn wrapped(
    first: [Span<'static>; 2],
    continued: [Span<'static>; 2],
    text: Vec<Span<'static>>,
    width: usize,
) -> Vec<Line<'static>> {
    let lead = first.iter().map(Span::width).sum::<usize>();
    // At least one column of text per row, however narrow the terminal.
    let room = width.saturating_sub(lead).max(1);
    let mut rows = Vec::new();
    let mut row = Vec::from(first);
    let mut used = 0;
    for span in text {
        let mut piece = String::new();
        for character in span.content.chars() {
            let columns = UnicodeWidthChar::width(character).unwrap_or(0);
            if used + columns > room && used > 0 {
                if !piece.is_empty() {
                    row.push(Span::styled(std::mem::take(&mut piece), span.style));
                }
                rows.push(std::mem::replace(&mut row, Vec::from(continued.clone())));
                used = 0;
            }
            piece.push(character);
            used += columns;
        }
        if !piece.is_empty() {
            row.push(Span::styled(piece, span.style));
        }
    }
    rows.push(row);
    rows.into_iter().map(Line::from).collect()
}

/// `text` safe to draw: tabs as four spaces, other control characters and bidi overrides
/// made visible ([`visible_line`]: `\r` as `␍`, ESC as `␛`).
fn printable(text: &str) -> String {
    visible_line(text).replace('\t', "    ")
}

/// The prompt's question, before what is typed.
fn prompt_text(purpose: PromptPurpose, app: &App) -> String {
    match purpose {
        PromptPurpose::Reject => format!(
            "Reject {}, reason (optional): ",
            app.current_hunk().map_or("", |hunk| hunk.address.as_str())
        ),
        PromptPurpose::Apply => {
            let (kept, total) = app
                .current_action()
                .map_or((0, 0), ActionView::kept_of_total);
            if kept == total {
                "Apply, reason: ".to_owned()
            } else {
                format!("Apply {kept} of {total} hunks, reason: ")
            }
        }
        PromptPurpose::Discard => "Discard, reason: ".to_owned(),
    }
}

fn status_line<'a>(app: &'a App, theme: Theme) -> Paragraph<'a> {
    match &app.mode {
        Mode::Prompt(prompt) => {
            let mut spans = vec![
                Span::styled(
                    prompt_text(prompt.purpose, app),
                    Style::new().add_modifier(Modifier::BOLD),
                ),
                Span::raw(prompt.input.as_str()),
            ];
            if let Some(status) = &app.status {
                spans.push(Span::styled(
                    format!("   {status}"),
                    theme.colored(Color::Yellow),
                ));
            }
            Paragraph::new(Line::from(spans))
        }
        Mode::Browse | Mode::Help => {
            Paragraph::new(app.status.as_deref().unwrap_or("")).style(theme.colored(Color::Yellow))
        }
    }
}

fn help(frame: &mut Frame<'_>, area: Rect) {
    let width = area.width.min(64);
    let height = (HELP.len() as u16 + 3).min(area.height);
    let popup = Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + (area.height - height) / 2,
        width,
        height,
    };
    let mut lines: Vec<Line<'_>> = HELP
        .iter()
        .map(|(keys, what)| Line::from(format!(" {keys:<12} {what}")))
        .collect();
    lines.push(Line::styled(
        " any key closes this help",
        Style::new().add_modifier(Modifier::DIM),
    ));
    frame.render_widget(Clear, popup);
    frame.render_widget(
        Paragraph::new(lines).block(Block::default().borders(Borders::ALL).title(" Keys ")),
        popup,
    );
}

#[cfg(test)]
#[path = "render_tests.rs"]
mod tests;
