//! Making text safe to show a person on a terminal or in a form: control characters and bidi
//! overrides, which can rewrite or hide what a reviewer sees (`curl … | sh \r\x1b[2K+make all`
//! shows as `+make all`), made visible; and quoting paths that contain them. Owns no I/O and
//! no wording beyond the escapes.
//!
//! What is escaped: every C0 control but tab (and, in multi-line text, the newline and a
//! carriage return right before it: a CRLF line ending, which can hide nothing), DEL, every C1 control, the
//! bidi embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069), the bidi marks
//! (U+200E, U+200F, U+061C) and the line and paragraph separators (U+2028, U+2029). C0
//! controls become their control pictures (`␍` for `\r`, `␛` for ESC, `␊` for a newline in
//! one-line text), DEL `␡`, and the others `<U+202E>`.

use std::borrow::Cow;

/// Whether `c` is shown escaped (see the module doc); tab and newline are not decided here.
fn is_hidden(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{1f}'
        | '\u{7f}'..='\u{9f}'
        | '\u{202a}'..='\u{202e}'
        | '\u{2066}'..='\u{2069}'
        | '\u{200e}' | '\u{200f}' | '\u{061c}'
        | '\u{2028}' | '\u{2029}')
        && c != '\t'
}

/// Whether `text` holds anything [`visible_text`] or [`visible_line`] would escape, or a newline.
pub fn has_hidden_characters(text: &str) -> bool {
    text.chars().any(|c| c == '\n' || is_hidden(c))
}

/// Push the visible form of the hidden character `c`.
fn push_escaped(out: &mut String, c: char) {
    match c {
        '\u{0}'..='\u{1f}' => {
            // The control pictures block maps C0 one to one from U+2400.
            out.push(char::from_u32(0x2400 + u32::from(c)).unwrap_or('\u{fffd}'));
        }
        '\u{7f}' => out.push('\u{2421}'),
        other => {
            out.push_str(&format!("<U+{:04X}>", u32::from(other)));
        }
    }
}

/// `text` (several lines) with every control character and bidi override made visible; tabs,
/// newlines and the `\r` of a CRLF line ending are kept. Borrowed when nothing needed escaping.
pub fn visible_text(text: &str) -> Cow<'_, str> {
    escape(text, true)
}

/// `text` as one line: [`visible_text`], with newlines (and every `\r`) escaped too. For
/// labels, ids, reasons and other values shown inside a line.
pub fn visible_line(text: &str) -> Cow<'_, str> {
    escape(text, false)
}

fn escape(text: &str, multiline: bool) -> Cow<'_, str> {
    // In multi-line text a newline is kept, and so is a `\r` right before one (a CRLF line
    // ending): it moves the cursor only for the line to end, so it can hide nothing.
    let escaped = |c: char, next: Option<char>| match c {
        '\n' => !multiline,
        '\r' if multiline && next == Some('\n') => false,
        c => is_hidden(c),
    };
    let mut chars = text.chars().peekable();
    let mut needs = false;
    while let Some(c) = chars.next() {
        if escaped(c, chars.peek().copied()) {
            needs = true;
            break;
        }
    }
    if !needs {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if escaped(c, chars.peek().copied()) {
            push_escaped(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `path` as it is when it holds no control character, newline or bidi override; otherwise in
/// double quotes with those (and `"` and `\`) escaped, git style: `"a\nb"`, `"x\x1b[2K"`,
/// `"\u{202e}txt"`. So a path cannot break the line or the form it is shown in.
pub fn quote_path(path: &str) -> Cow<'_, str> {
    if !path.chars().any(|c| c == '\n' || c == '\t' || is_hidden(c)) {
        return Cow::Borrowed(path);
    }
    let mut quoted = String::with_capacity(path.len() + 8);
    quoted.push('"');
    for c in path.chars() {
        match c {
            '"' => quoted.push_str("\\\""),
            '\\' => quoted.push_str("\\\\"),
            '\n' => quoted.push_str("\\n"),
            '\t' => quoted.push_str("\\t"),
            '\r' => quoted.push_str("\\r"),
            c if is_hidden(c) && u32::from(c) < 0x80 => {
                quoted.push_str(&format!("\\x{:02x}", u32::from(c)));
            }
            c if is_hidden(c) => quoted.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
            c => quoted.push(c),
        }
    }
    quoted.push('"');
    Cow::Owned(quoted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_carriage_return_and_escape_sequence_cannot_hide_a_line() {
        let shown = visible_text("+curl x | sh \r\u{1b}[2K+make all\n");
        assert_eq!(shown, "+curl x | sh \u{240d}\u{241b}[2K+make all\n");
        assert!(!shown.contains('\r') && !shown.contains('\u{1b}'));
    }

    #[test]
    fn tabs_newlines_and_crlf_endings_are_kept_in_text_but_not_in_a_line() {
        assert!(matches!(visible_text("a\tb\r\nc\n"), Cow::Borrowed(_)));
        assert_eq!(visible_text("a\rb\r\n"), "a\u{240d}b\r\n");
        assert_eq!(visible_line("a\tb\r\nc"), "a\tb\u{240d}\u{240a}c");
    }

    #[test]
    fn c1_controls_bidi_overrides_and_del_are_shown_by_code_point() {
        assert_eq!(
            visible_text("a\u{202e}b\u{2066}c\u{9b}d\u{7f}"),
            "a<U+202E>b<U+2066>c<U+009B>d\u{2421}"
        );
    }

    #[test]
    fn paths_with_control_characters_are_quoted_and_others_left_alone() {
        assert_eq!(quote_path("src/main.rs"), "src/main.rs");
        assert_eq!(quote_path("a\nb"), "\"a\\nb\"");
        assert_eq!(quote_path("x\u{1b}[2K\"q\\"), "\"x\\x1b[2K\\\"q\\\\\"");
        assert_eq!(quote_path("\u{202e}txt"), "\"\\u{202e}txt\"");
        assert!(has_hidden_characters("a\nb") && !has_hidden_characters("a\tb"));
    }
}
