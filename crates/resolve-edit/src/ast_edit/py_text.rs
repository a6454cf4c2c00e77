//! Where a Python text's comments and string literals are, found by lexing it the way
//! tree-sitter-python does: `#` comments, strings with any prefix Python allows (`r`, `u`, `b`,
//! `f`, `t` and their pairs), triple-quoted ones spanning lines, escapes (raw strings included,
//! as far as finding the end goes), and the text of f-strings and t-strings apart from the code of
//! their replacement fields. Besides the ranges it says how far it is sure: every byte before
//! that is in a range exactly when the grammar has it in a comment or a string's text, so a
//! caller may count the brackets and commas outside the ranges as code. Where the grammar could
//! read the text otherwise (a quote, `#` or backslash in a field, a string left open at its line
//! end or the text's, a word before a quote that is no prefix, a backtick), the lexer stops.

use std::ops::Range;

use super::rust_text::{Lexed, line_end};

/// The comments and literals of `text`, in order, and how far the lexer is sure of them (the
/// text's length when it lexed it all; see the module documentation). A comment runs from its
/// `#` to its line's `\n` (a `\r` before it is in the comment, as the grammar has it). A string
/// is one range with its prefix and quotes, unless it is an f-string or a t-string: then each
/// run of its text is one, with the `{` and `}` of its fields and the text of their format specs
/// (`:>` in `{x:>{w}}`, with the braces of the nested field); a field's code is in none. Ranges
/// that touch are joined (`'a''b'` is one).
pub(super) fn comments_and_literals(text: &[u8]) -> Lexed {
    let (ranges, sure_until) = lex(text);
    Lexed { ranges, sure_until }
}

/// The ranges of [`comments_and_literals`], and up to where they are sure.
fn lex(text: &[u8]) -> (Vec<Range<usize>>, usize) {
    let mut found = Vec::new();
    let mut brackets = Vec::new();
    let mut backtick = memchr::memchr(b'`', text);
    let mut at = 0;
    loop {
        let next = memchr::memchr3(b'#', b'\'', b'"', &text[at..]).map(|offset| at + offset);
        // A backtick in code opens a string for the grammar (Python 2's repr), never for Python.
        if backtick.is_some_and(|tick| tick < at) {
            backtick = memchr::memchr(b'`', &text[at..]).map(|offset| at + offset);
        }
        if let Some(tick) = backtick.filter(|&tick| next.is_none_or(|next| tick < next)) {
            return (found, tick);
        }
        let Some(next) = next else {
            return (found, text.len());
        };
        if text[next] == b'#' {
            at = line_end(text, next);
            push(&mut found, next..at);
            continue;
        }
        let (start, string) = match opening(text, next) {
            Ok(opened) => opened,
            Err(word) => return (found, word),
        };
        let (before, last_end) = (found.len(), found.last().map(|last| last.end));
        let body = next + if string.triple { 3 } else { 1 };
        match string.end(text, start, body, &mut found, &mut brackets) {
            Some(end) => at = end,
            None => {
                // Undo the string's ranges, the part of one joined to the last range too.
                found.truncate(before);
                if let (Some(last), Some(end)) = (found.last_mut(), last_end) {
                    last.end = end;
                }
                return (found, start);
            }
        }
    }
}

/// The words that may stand right before a string's quote without being its prefix.
const KEYWORDS: [&[u8]; 16] = [
    b"and", b"assert", b"await", b"elif", b"else", b"from", b"if", b"in", b"is", b"not", b"or",
    b"raise", b"return", b"while", b"with", b"yield",
];

/// The prefixes Python allows (lowercased), one letter or a pair.
const PREFIXES: [&[u8]; 11] = [
    b"r", b"u", b"b", b"f", b"t", b"br", b"rb", b"fr", b"rf", b"tr", b"rt",
];

/// How a string's prefix and opening quotes say it is read.
#[derive(Clone, Copy)]
struct StringKind {
    /// The quote that closes it (`'` or `"`).
    quote: u8,
    /// Whether it opened with three quotes (and so spans lines).
    triple: bool,
    /// Whether a backslash only keeps the next quote or backslash from ending it (`r`).
    raw: bool,
    /// Whether `\N{…}` is no escape in it (`b`).
    bytes: bool,
    /// Whether it has replacement fields (`f` or `t`).
    format: bool,
}

/// Where the string whose first quote is at `quote` starts (its prefix included) and how it is
/// read, or the start of the word before the quote when that word is neither a prefix Python
/// allows nor a keyword (which the grammar may read otherwise).
fn opening(text: &[u8], quote: usize) -> Result<(usize, StringKind), usize> {
    let word_start = text[..quote]
        .iter()
        .rposition(|&byte| !(byte.is_ascii_alphanumeric() || byte == b'_' || !byte.is_ascii()))
        .map_or(0, |before| before + 1);
    let word = &text[word_start..quote];
    let start = if word.is_empty() || KEYWORDS.contains(&word) {
        quote
    } else if PREFIXES
        .iter()
        .any(|prefix| prefix.eq_ignore_ascii_case(word))
    {
        word_start
    } else {
        return Err(word_start);
    };
    let has = |letter: u8| {
        text[start..quote]
            .iter()
            .any(|byte| byte.to_ascii_lowercase() == letter)
    };
    let quote_byte = text[quote];
    Ok((
        start,
        StringKind {
            quote: quote_byte,
            triple: text.get(quote + 1..quote + 3) == Some(&[quote_byte, quote_byte][..]),
            raw: has(b'r'),
            bytes: has(b'b'),
            format: has(b'f') || has(b't'),
        },
    ))
}

impl StringKind {
    /// Lexes the string starting at `start` (its prefix) whose text starts at `body` (after its
    /// quotes): pushes its range (or its text's, for a format string) to `found` and returns its
    /// end, or `None` where the lexer is not sure.
    fn end(
        self,
        text: &[u8],
        start: usize,
        body: usize,
        found: &mut Vec<Range<usize>>,
        brackets: &mut Vec<u8>,
    ) -> Option<usize> {
        let quote = self.quote;
        let mut piece = start;
        let mut index = body;
        loop {
            index += if self.format {
                text[index..]
                    .iter()
                    .position(|&byte| byte == quote || matches!(byte, b'\\' | b'\n' | b'{' | b'}'))
            } else if self.triple {
                memchr::memchr2(quote, b'\\', &text[index..])
            } else {
                memchr::memchr3(quote, b'\\', b'\n', &text[index..])
            }?;
            match text[index] {
                b'\\' => index += self.escape_len(text, index)?,
                b'\n' if !self.triple => return None,
                b'\n' => index += 1,
                brace @ (b'{' | b'}') if text.get(index + 1) == Some(&brace) => index += 2,
                b'{' => {
                    push(found, piece..index + 1);
                    piece = field(text, index + 1, self, 0, found, brackets)?;
                    index = piece + 1;
                }
                b'}' => return None,
                _ if !self.triple => break,
                _ if text.get(index + 1..index + 3) == Some(&[quote, quote][..]) => {
                    index += 2;
                    break;
                }
                _ => index += 1,
            }
        }
        push(found, piece..index + 1);
        Some(index + 1)
    }

    /// How many bytes the backslash at `at` takes along with what it escapes (1 when the next
    /// character is read as it would be without it), or `None` where the lexer is not sure.
    fn escape_len(self, text: &[u8], at: usize) -> Option<usize> {
        let next = *text.get(at + 1)?;
        let crlf = next == b'\r' && text.get(at + 2) == Some(&b'\n');
        if self.raw {
            // The grammar steps over a newline after an escaped quote or backslash too, which
            // leaves a one-line string open for Python.
            return Some(match next {
                _ if next == self.quote || next == b'\\' => {
                    let after = text.get(at + 2);
                    if !self.triple && matches!(after, Some(b'\n' | b'\r')) {
                        return None;
                    }
                    2
                }
                b'\n' | b'\r' => 2 + usize::from(crlf),
                _ => 1,
            });
        }
        Some(match next {
            b'{' | b'}' if self.format => 1,
            _ if crlf => 3,
            // `\N{name}`: the grammar takes all up to the next `}` for the name.
            b'N' if !self.bytes && text.get(at + 2) == Some(&b'{') => {
                let name = text[at + 3..].iter().position(|&byte| {
                    matches!(byte, b'}' | b'\n' | b'\r' | b'\\') || byte == self.quote
                })?;
                if name == 0 || text[at + 3 + name] != b'}' {
                    return None;
                }
                3 + name + 1
            }
            _ => 2,
        })
    }
}

/// Lexes the replacement field whose code starts at `from` (after its `{`) in a string read as
/// `kind`, at `nesting` fields deep in format specs: pushes its format spec's text to `found`
/// and returns where its closing `}` is, or `None` where the lexer is not sure. `brackets` holds
/// the brackets open in the code.
fn field(
    text: &[u8],
    from: usize,
    kind: StringKind,
    nesting: usize,
    found: &mut Vec<Range<usize>>,
    brackets: &mut Vec<u8>,
) -> Option<usize> {
    let outer = brackets.len();
    let mut index = from;
    loop {
        match *text.get(index)? {
            open @ (b'(' | b'[' | b'{') => brackets.push(open),
            b'}' if brackets.len() == outer => return Some(index),
            close @ (b')' | b']' | b'}') => {
                let open = if brackets.len() > outer {
                    brackets.pop()
                } else {
                    None
                };
                if open != Some(if close == b')' { b'(' } else { close - 2 }) {
                    return None;
                }
            }
            // The grammar reads `{a:=b}` as a walrus and `{lambda x: y}` as a lambda, Python
            // both as a format spec.
            b':' if brackets.len() == outer => {
                if text.get(index + 1) == Some(&b'=')
                    || memchr::memmem::find(&text[from..index], b"lambda").is_some()
                {
                    return None;
                }
                return format_spec(text, index, kind, nesting, found, brackets);
            }
            b'\n' | b'\r' if !kind.triple => return None,
            b'\'' | b'"' | b'`' | b'#' | b'\\' => return None,
            _ => {}
        }
        index += 1;
    }
}

/// Lexes the format spec whose `:` is at `colon` in a field `nesting` deep: pushes its text
/// (with the braces of the fields nested in it) to `found` and returns where the field's
/// closing `}` is, or `None` where the lexer is not sure.
fn format_spec(
    text: &[u8],
    colon: usize,
    kind: StringKind,
    nesting: usize,
    found: &mut Vec<Range<usize>>,
    brackets: &mut Vec<u8>,
) -> Option<usize> {
    let mut piece = colon;
    let mut index = colon + 1;
    loop {
        match *text.get(index)? {
            // Python nests fields in a format spec only one deep.
            b'{' if nesting == 0 => {
                push(found, piece..index + 1);
                piece = field(text, index + 1, kind, nesting + 1, found, brackets)?;
                index = piece + 1;
            }
            b'}' => {
                push(found, piece..index);
                return Some(index);
            }
            b'{' | b'\'' | b'"' | b'`' | b'\\' | b'\n' | b'\r' => return None,
            _ => index += 1,
        }
    }
}

/// Adds `range` to `found`, joined to the last range when it starts where that one ends (an
/// empty one is left out).
fn push(found: &mut Vec<Range<usize>>, range: Range<usize>) {
    match found.last_mut() {
        _ if range.is_empty() => {}
        Some(last) if last.end == range.start => last.end = range.end,
        _ => found.push(range),
    }
}

#[cfg(test)]
mod tests {
    use ast_grep_language::SupportLang;
    use pretty_assertions::assert_eq;
    use proptest::prelude::*;

    use super::*;
    use crate::ast_edit::lex_oracle::{
        Checked, Grammar, Parsed, Verdict, check_files, disagreements, files_under, joined,
    };

    /// Python, as the oracle checks [`comments_and_literals`] against it: comments and strings
    /// are literals, the code of an f-string's field (up to its format spec or its `}`) is not.
    const PYTHON: Grammar = Grammar {
        lang: SupportLang::Python,
        lexer: comments_and_literals,
        literal: |node: &Parsed<'_>| {
            matches!(&*node.kind(), "comment" | "string").then(|| node.range())
        },
        code: |node: &Parsed<'_>| {
            if !matches!(&*node.kind(), "interpolation" | "format_expression") {
                return None;
            }
            let range = node.range();
            let children: Vec<_> = node.children().collect();
            let code_end = children
                .iter()
                .find(|child| child.kind() == "format_specifier")
                .or(children.last())
                .map_or(range.end, |child| child.range().start);
            Some(range.start + 1..code_end)
        },
        joins: true,
    };

    /// A statement of generated Python: code with brackets and commas, strings of every kind
    /// holding quotes, brackets, `#`, escapes and line breaks, comments, f-strings with fields
    /// (some the lexer stops at).
    fn statement() -> impl Strategy<Value = String> {
        let fixed = prop::sample::select(vec![
            "d.get(a, b)",
            "x.setdefault(k, []).append(v)",
            "y = {'k': [1, (2, 3)], \"v\": {4}}[a:b], c",
            "w = a + \\\n    b(c)",
            "s = 'it\\'s (a, [b' + \"say \\\"hi\\\" # no {\" + u'}' + U\"{\"",
            "s = r'\\'' + R\"\\\\\" + rb'\\'' + bR\"\\\"\" + Br'[' + b'\\\\' + '\\\\'",
            "s = 'a\\\nb(c, d)' + r'a\\\nb(c)' + f'a\\\n{b}'",
            "s = '''one ' \" two\n(three, ''\n''' + \"\"\"a \"\" b\n' c # d\n\"\"\"",
            "s = '''a\\'''' + \"\"\"\\\"\"\"\"",
            "# comment 'with \"quotes (and [brackets, {",
            "x = '#' + \"#\"  # trailing ) comment '",
            "x = f'a{b}c' + F\"{d(e, [f])}\" + f'{{g}}' + f'{a}}}{{' + f'{a,}' + f'{ a , b }'",
            "x = f'{a:>{w}} {b!r:#x} {c=}' + f'{a:{{1}}}' + f'{x:{y}.{z}f}' + f'{a:%H:%M}'",
            "x = rf'\\{a}' + fR\"\\\\{b}\" + t'{a} (b)' + Tr'\\{c}'",
            "x = f'''{\n a(b)\n}'''",
            "x = f'\\N{DASH} {a}' + '\\N{EM DASH}(' + b'\\N{' + '\\x41(' + \"\\u0041[\"",
            "x = f\"{a['k']}\"",
            "x = f\"{a:'^10}\"",
            "x = f\"{a(f'{b}')}\"",
            "x = f'{a:=1}'",
            "x = f'{lambda y: 1}' + f'{(lambda y: y)(1)}'",
            "return\"x\" if\"b\"in c else d",
            "def f(a, b=(1, 2)):\n    return [a, b]",
            "class C:\n    '''doc (x'''\n    def m(self): pass",
            "x = '' + \"\" + '''''' + \"\"\"\"\"\" + 'a' 'b'\"c\"",
            "x = [\n    a,  # c)\n    b,\n]",
            "x = (a,\n     'b(' \\\n     'c')",
            "print(f'{x!r:^{w}}', end='')",
        ])
        .prop_map(str::to_string);
        let fragments = "( ) , [ # x ' \" \\' \\\" \\\\ \\\n \n {{ }} {a} {b(c,[d])} {e:>{w}} {f!r:#x} \
                         \\N{DASH} \\{a}";
        let generated = (
            prop::sample::select(
                "_ r R u b Br rb f F rf fR t Rt"
                    .split(' ')
                    .collect::<Vec<_>>(),
            ),
            prop::sample::select(vec!["'", "\"", "'''", "\"\"\""]),
            prop::collection::vec(
                prop::sample::select(fragments.split(' ').collect::<Vec<_>>()),
                0..6,
            ),
            prop::sample::select(vec![", f(g, [h])", "  # i('", ""]),
        )
            .prop_map(|(prefix, quote, inside, after)| {
                let prefix = prefix.trim_start_matches('_');
                format!("v = {prefix}{quote}{}{quote}{after}", inside.concat())
            });
        prop_oneof![fixed, generated]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn before_where_it_is_sure_the_lexer_agrees_with_the_grammar(
            statements in prop::collection::vec(statement(), 0..8),
            separators in prop::collection::vec(prop::sample::select(vec!["\n", "\n", "; "]), 8),
            crlf in any::<bool>(),
        ) {
            let text = joined("", &statements, &separators, crlf);
            if let Some(Verdict { wrong, .. }) = disagreements(&PYTHON, &text) {
                prop_assert!(wrong.is_empty(), "{wrong:#?} in {text:?}");
            }
        }
    }

    #[test]
    fn in_the_standard_library_the_lexer_agrees_with_the_grammar() {
        let files = files_under(
            &resolve_test_support::python_stdlib(),
            "py",
            &["site-packages"],
        );
        let Checked {
            checked,
            to_the_end,
            ..
        } = check_files(&PYTHON, &files);
        assert!(
            checked > 500,
            "only {checked} of {} files parse cleanly",
            files.len()
        );
        // It stops at a quote in an f-string's field, which few files hold.
        assert!(
            to_the_end * 10 > checked * 9,
            "{to_the_end} of {checked} lexed to the end"
        );
    }

    /// The comments and literals of `text`, as text, and the rest of it from where the lexer
    /// stopped.
    fn pieces(text: &str) -> (Vec<&str>, &str) {
        let (ranges, sure) = lex(text.as_bytes());
        (
            ranges.into_iter().map(|range| &text[range]).collect(),
            &text[sure..],
        )
    }

    #[test]
    fn comments_and_strings_are_found_whole() {
        let text = "a(b, 'c(') # d 'e\ns = \"f\\\"g\" + 'h\\'' + \"\\\\\" + '\\N{EM DASH}'";
        let found = [
            "'c('",
            "# d 'e",
            "\"f\\\"g\"",
            "'h\\''",
            "\"\\\\\"",
            "'\\N{EM DASH}'",
        ];
        assert_eq!(pieces(text), (found.to_vec(), ""));
        // A comment runs to the `\n`, through a `\r` as the grammar has it.
        assert_eq!(
            pieces("a # b\r\nc # d\re(f)"),
            (vec!["# b\r", "# d\re(f)"], "")
        );
        let text = "s = '''a ' \"\n(b''' + '''c\\'''' + 'd\\\ne(f)'";
        assert_eq!(
            pieces(text),
            (vec!["'''a ' \"\n(b'''", "'''c\\''''", "'d\\\ne(f)'"], "")
        );
        // Strings that touch make one range.
        assert_eq!(
            pieces("x = 'a''b' \"\"\"\"\"\""),
            (vec!["'a''b'", "\"\"\"\"\"\""], "")
        );
    }

    #[test]
    fn prefixes_are_part_of_the_string_and_backslashes_escape_in_raw_strings_too() {
        let text = "s = r'\\'' + Rb\"\\\\\" + bR'(' + U\"x\" + tr'y'";
        let found = ["r'\\''", "Rb\"\\\\\"", "bR'('", "U\"x\"", "tr'y'"];
        assert_eq!(pieces(text), (found.to_vec(), ""));
        // A keyword before a quote is no prefix; a word that is no prefix stops the lexer.
        assert_eq!(
            pieces("return'a' if\"b\"in c else d"),
            (vec!["'a'", "\"b\""], "")
        );
        assert_eq!(pieces("a = 'b'; c = xr'd'"), (vec!["'b'"], "xr'd'"));
        assert_eq!(pieces("a = ub'b'"), (vec![], "ub'b'"));
    }

    #[test]
    fn an_f_strings_text_is_a_literal_and_its_fields_code_is_not() {
        assert_eq!(pieces("f\"a{x}b\""), (vec!["f\"a{", "}b\""], ""));
        let text = "f'{a(b, [c])}' + F'{{d}} {e!r:#x}'";
        assert_eq!(pieces(text), (vec!["f'{", "}'", "F'{{d}} {", ":#x}'"], ""));
        // A nested field's code is code, the spec's text and the nested field's braces are not.
        assert_eq!(pieces("f'{x:>{w}}'"), (vec!["f'{", ":>{", "}}'"], ""));
        let text = "rf'\\{a}' + f'\\N{DASH}{b}' + t'''{\n c\n}'''";
        let found = ["rf'\\{", "}'", "f'\\N{DASH}{", "}'", "t'''{", "}'''"];
        assert_eq!(pieces(text), (found.to_vec(), ""));
    }

    #[test]
    fn the_lexer_stops_where_the_grammar_may_read_the_text_otherwise() {
        // A quote in a field or its format spec; the string before is found.
        assert_eq!(
            pieces("'a'; f\"{b['c']}\" + 'd'"),
            (vec!["'a'"], "f\"{b['c']}\" + 'd'")
        );
        assert_eq!(pieces("f\"{b:'^10}\""), (vec![], "f\"{b:'^10}\""));
        // An unbalanced bracket or a `#` in a field; a walrus or a lambda, which Python reads
        // as a format spec and the grammar does not.
        for text in [
            "f'{a(]}'",
            "f'{a)}'",
            "f'''{a # b\n}'''",
            "f'{a:=1}'",
            "f'{lambda x: 1}'",
        ] {
            assert_eq!(pieces(text), (vec![], text));
        }
        // A one-line string left open at its line end (an escaped backslash in a raw one does
        // not continue it), a string open at the end of the text.
        assert_eq!(pieces("'a' # b\n'c\nd()"), (vec!["'a'", "# b"], "'c\nd()"));
        assert_eq!(
            pieces("a = r'\\\\\nb' + '''c"),
            (vec![], "r'\\\\\nb' + '''c")
        );
        assert_eq!(pieces("a = '''b"), (vec![], "'''b"));
        // A backtick in code opens a string for the grammar only; one in a string is text.
        assert_eq!(
            pieces("'`' # `\na = `b(c)`"),
            (vec!["'`'", "# `"], "`b(c)`")
        );
    }
}
