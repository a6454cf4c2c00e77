//! Where a Rust text's comments and literals are, found by lexing it the way rustc does:
//! line and (nested) block comments, string, byte-string and C-string literals with escapes,
//! raw strings with any number of `#`, and char and byte literals told apart from lifetimes and
//! labels. No identifier of a match is ever in one of these, so the prefilter need not count a
//! pattern's name found there (a `.unwrap()` in a doc comment's example holding a `"`, which a
//! look at the line alone cannot rule out as the end of a string).

use std::ops::Range;

/// Where a lexer found a text's comments and literals, and up to where it is sure of them.
pub(super) struct Lexed {
    /// The comments and literals, in order, none overlapping another.
    pub(super) ranges: Vec<Range<usize>>,
    /// Every byte before this offset is what the grammar has it be: one in a range is in a
    /// comment or literal, one outside every range is code. Past it the lexer was unsure (a
    /// TypeScript `/` that may open a regular expression), and a byte outside the ranges may
    /// still be in a literal.
    pub(super) sure_until: usize,
}

/// The comments and literals of `text` (all of it lexed surely), in order: each range covers
/// one whole comment or literal (its quotes included, a prefix such as `r#` left out). A literal
/// left open runs to the end of the text. Only `/`, `"` and `'` can start one, so the scan jumps
/// between them.
pub(super) fn comments_and_literals(text: &[u8]) -> Lexed {
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(offset) = memchr::memchr3(b'/', b'"', b'\'', &text[at..]) {
        at += offset;
        let end = match text[at] {
            b'/' => match text.get(at + 1) {
                Some(b'/') => Some(line_end(text, at)),
                Some(b'*') => Some(block_comment_end(text, at)),
                _ => None,
            },
            b'"' => Some(string_end(text, at)),
            _ => char_end(text, at),
        };
        match end {
            Some(end) => {
                found.push(at..end);
                at = end;
            }
            None => at += 1,
        }
    }
    Lexed {
        ranges: found,
        sure_until: text.len(),
    }
}

/// Whether `at` is inside one of `ranges` (as [`comments_and_literals`] gives them).
pub(super) fn covers(ranges: &[Range<usize>], at: usize) -> bool {
    let after = ranges.partition_point(|range| range.end <= at);
    ranges.get(after).is_some_and(|range| range.start <= at)
}

/// Whether the byte before `at` belongs to a word (so `at` does not start a token).
fn follows_word(text: &[u8], at: usize) -> bool {
    at.checked_sub(1)
        .and_then(|before| text.get(before))
        .is_some_and(|&byte| byte.is_ascii_alphanumeric() || byte == b'_' || !byte.is_ascii())
}

/// The end of the line `at` is on (its newline is not part of it): where a Rust line comment
/// starting at `at` ends.
pub(super) fn line_end(text: &[u8], at: usize) -> usize {
    memchr::memchr(b'\n', &text[at..]).map_or(text.len(), |newline| at + newline)
}

/// The end of the block comment at `at`, past the `*/` that balances it (they nest).
fn block_comment_end(text: &[u8], at: usize) -> usize {
    let mut depth = 0usize;
    let mut index = at;
    while index < text.len() {
        match (text[index], text.get(index + 1)) {
            (b'/', Some(b'*')) => {
                depth += 1;
                index += 2;
            }
            (b'*', Some(b'/')) => {
                depth -= 1;
                index += 2;
                if depth == 0 {
                    return index;
                }
            }
            _ => index += 1,
        }
    }
    text.len()
}

/// The end of the literal opened by `quote` at `at`: past the next `quote` not escaped by a
/// backslash.
fn quoted_end(text: &[u8], at: usize, quote: u8) -> usize {
    let mut index = at + 1;
    while index < text.len() {
        match text[index] {
            b'\\' => index += 2,
            byte if byte == quote => return index + 1,
            _ => index += 1,
        }
    }
    text.len()
}

/// The end of the char literal at `at`, or `None` when the `'` starts a lifetime or a label:
/// a char literal is an escape, or one character, between quotes.
fn char_end(text: &[u8], at: usize) -> Option<usize> {
    match text.get(at + 1)? {
        b'\\' => Some(quoted_end(text, at, b'\'')),
        b'\'' => None,
        _ => {
            let width = char_width(text, at + 1);
            (text.get(at + 1 + width) == Some(&b'\'')).then_some(at + 2 + width)
        }
    }
}

/// The width in bytes of the UTF-8 character starting at `at` (1 for a stray byte).
fn char_width(text: &[u8], at: usize) -> usize {
    match text.get(at) {
        Some(byte) if *byte >= 0xF0 => 4,
        Some(byte) if *byte >= 0xE0 => 3,
        Some(byte) if *byte >= 0xC0 => 2,
        _ => 1,
    }
}

/// The end of the string literal whose opening `"` is at `quote`: a raw one (`r"…"`,
/// `r#"…"#`, `br##"…"##`, `cr"…"`) ends at the first `"` followed by as many `#` as it opened
/// with, any other (`"…"`, `b"…"`, `c"…"`) at the next `"` not escaped by a backslash.
fn string_end(text: &[u8], quote: usize) -> usize {
    let hashes = text[..quote]
        .iter()
        .rev()
        .take_while(|&&byte| byte == b'#')
        .count();
    let raw = quote
        .checked_sub(hashes + 1)
        .filter(|&r| text[r] == b'r')
        .map(|r| match r.checked_sub(1).map(|before| text[before]) {
            Some(b'b' | b'c') => r - 1,
            _ => r,
        })
        .is_some_and(|prefix| !follows_word(text, prefix));
    if !raw {
        return quoted_end(text, quote, b'"');
    }
    let mut search = quote + 1;
    while let Some(found) = memchr::memchr(b'"', &text[search..]) {
        let close = search + found + 1;
        if text[close..]
            .iter()
            .take(hashes)
            .filter(|&&byte| byte == b'#')
            .count()
            == hashes
        {
            return close + hashes;
        }
        search = close;
    }
    text.len()
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    /// The comments and literals of `text`, as text.
    fn pieces(text: &str) -> Vec<&str> {
        comments_and_literals(text.as_bytes())
            .ranges
            .into_iter()
            .map(|range| &text[range])
            .collect()
    }

    #[test]
    fn comments_strings_and_chars_are_found_whole() {
        assert_eq!(
            pieces("let a = \"x // y\"; // c \"\nlet b = '\"'; /* a /* b */ c */ d"),
            ["\"x // y\"", "// c \"", "'\"'", "/* a /* b */ c */"]
        );
        assert_eq!(pieces(r#"let s = "a\"b\\"; x"#), [r#""a\"b\\""#]);
        // A prefix (`r##`, `br#`, `c`, `b`) is left out of the range.
        assert_eq!(
            pieces(r####"let r = r##"a "# b"##; let t = br#"c\"#; let u = c"d";"####),
            [r####""a "# b"##"####, r##""c\"#"##, "\"d\""]
        );
        assert_eq!(
            pieces("let b = b'x'; let e = '\\''; let u = 'é';"),
            ["'x'", "'\\''", "'é'"]
        );
        // A `#` before a string that is not raw is not part of it.
        assert_eq!(pieces("m!(#\"a\\\"\");"), ["\"a\\\"\""]);
    }

    #[test]
    fn lifetimes_labels_and_raw_identifiers_are_code() {
        assert_eq!(
            pieces("fn f<'a>(x: &'a str) -> &'a str { 'outer: loop { break 'outer; } }"),
            Vec::<&str>::new()
        );
        assert_eq!(
            pieces("let r#type = 1; let bar = r; let br = 2;"),
            Vec::<&str>::new()
        );
        // A `b`, `c` or `r` ending a word does not start a literal.
        assert_eq!(pieces("let x = ab\"c\";"), ["\"c\""]);
    }

    #[test]
    fn a_doc_comment_holding_quotes_is_one_comment_and_code_after_a_string_is_code() {
        let text = "/// let a = \"1\".parse().unwrap();\nlet s = \"\n// x\n\"; x.unwrap();";
        let ranges = comments_and_literals(text.as_bytes()).ranges;
        let at = |needle: &str, nth: usize| text.match_indices(needle).nth(nth).unwrap().0;
        assert!(covers(&ranges, at("unwrap", 0)));
        assert!(covers(&ranges, at("x", 0)));
        assert!(!covers(&ranges, at("unwrap", 1)));
    }
}
