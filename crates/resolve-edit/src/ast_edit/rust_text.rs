//! Where a Rust text's comments and literals are, found by lexing it the way rustc does:
//! line and (nested) block comments, string, byte-string and C-string literals with escapes,
//! raw strings with any number of `#`, and char and byte literals told apart from lifetimes and
//! labels, and a shebang line. No identifier of a match is ever in one of these, so the
//! prefilter need not count a pattern's name found there (a `.unwrap()` in a doc comment's
//! example holding a `"`, which a look at the line alone cannot rule out as the end of a
//! string). Where tree-sitter-rust reads a text otherwise than rustc (`//*` in a block comment
//! opens no nested one for it, `''` is a char literal to it), the lexer follows the grammar, in
//! whose tree matches are found.

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
/// one whole comment or literal (its quotes included, a prefix such as `r#` left out), or the
/// shebang line that is the text's first token (its newline left out). A literal left open runs
/// to the end of the text. Only `/`, `"` and `'` can start one, so the scan jumps between them.
pub(super) fn comments_and_literals(text: &[u8]) -> Lexed {
    let mut found = Vec::new();
    let mut at = first_token(text, &mut found, line_end, |text, at| {
        Some(block_comment_end(text, at))
    });
    if let Some(end) = shebang_end(text, at) {
        found.push(at..end);
        at = end;
    }
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

/// Where `text`'s first token starts: past a byte-order mark, blanks and the comments before it
/// (pushed to `found`), a line comment ending where `line_comment_end` says and a block comment
/// where `block_comment_end` does (`None`: left open, and the first token is its start). Rust
/// and TypeScript both read a shebang only there.
pub(super) fn first_token(
    text: &[u8],
    found: &mut Vec<Range<usize>>,
    line_comment_end: fn(&[u8], usize) -> usize,
    block_comment_end: fn(&[u8], usize) -> Option<usize>,
) -> usize {
    let mut at = if text.starts_with("\u{feff}".as_bytes()) {
        3
    } else {
        0
    };
    loop {
        at += text[at..]
            .iter()
            .take_while(|byte| byte.is_ascii_whitespace() || **byte == 0x0B)
            .count();
        let end = match text.get(at..at + 2) {
            Some(b"//") => line_comment_end(text, at),
            Some(b"/*") => match block_comment_end(text, at) {
                Some(end) => end,
                None => return at,
            },
            _ => return at,
        };
        found.push(at..end);
        at = end;
    }
}

/// Where the shebang line whose `#!` is at `at` ends (at its newline), as the grammar reads one
/// when it is the first token: `#!` not followed by `[` (an inner attribute), on a line that
/// ends.
fn shebang_end(text: &[u8], at: usize) -> Option<usize> {
    if !text[at..].starts_with(b"#!") || text.get(at + 2) == Some(&b'[') {
        return None;
    }
    memchr::memchr(b'\n', &text[at..]).map(|newline| at + newline)
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

/// The end of the block comment at `at`, past the `*/` that balances it (they nest). As the
/// grammar has it, a `/` right after a `/` opens nothing (`//*` nests for rustc, not for it).
fn block_comment_end(text: &[u8], at: usize) -> usize {
    let mut depth = 0usize;
    let mut index = at;
    while index < text.len() {
        match (text[index], text.get(index + 1)) {
            (b'/', Some(b'/')) => index += 2,
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
/// a char literal is an escape, or one character, between quotes, or nothing (`''`, which
/// rustc rejects and the grammar reads as a char literal).
fn char_end(text: &[u8], at: usize) -> Option<usize> {
    match text.get(at + 1)? {
        b'\\' => Some(quoted_end(text, at, b'\'')),
        b'\'' => Some(at + 2),
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
    use ast_grep_language::SupportLang;
    use pretty_assertions::assert_eq;
    use proptest::prelude::*;

    use super::*;
    use crate::ast_edit::lex_oracle::{
        self, Checked, Grammar, Parsed, Verdict, assert_most_parse, check_files, disagreements,
        files_under, joined,
    };

    /// The bytes a node of tree-sitter-rust has in a comment or literal, as the lexer has them:
    /// a doc comment's newline (which the grammar puts in it) and a literal's prefix left out.
    fn literal(node: &Parsed<'_>) -> Option<Range<usize>> {
        let range = node.range();
        match &*node.kind() {
            "line_comment" => {
                Some(range.start..range.end - usize::from(node.text().ends_with('\n')))
            }
            "block_comment" => Some(range),
            "shebang" => Some(range.start..range.end - 1),
            "string_literal" | "raw_string_literal" | "char_literal" => {
                let quote = node.text().find(['"', '\''])?;
                Some(range.start + quote..range.end)
            }
            _ => None,
        }
    }

    /// Rust, as the oracle checks [`comments_and_literals`] against it.
    const RUST: Grammar = Grammar {
        lang: SupportLang::Rust,
        lexer: comments_and_literals,
        literal,
        code: |_| None,
        joins: false,
    };

    /// A statement of generated Rust: code with brackets and commas (macros, closures,
    /// turbofish, attributes), lifetimes and labels next to brackets, strings of every kind
    /// holding quotes, brackets and escapes, char and byte literals, nested block comments and
    /// doc comments holding brackets and quotes.
    fn statement() -> impl Strategy<Value = String> {
        let fixed = prop::sample::select(vec![
            "let v = vec![(1, 2)];",
            "let v = vec![[a, b], [c, d]];",
            "m!(r#\"x\"# 'a' b\"y\" [1, 2] {3});",
            "macro_rules! n { ($a:expr, $($b:tt),*) => { ($a, [$($b),*]) }; }",
            "let s = r#\"a \"quoted\" (b, [c\"#;",
            "let t = r\"(\"; let u = br##\"x\"# ]\"##;",
            "let r = r\"\\\"; let q = r#\"\\\"#; let p = cr\"{\";",
            "let b = b\"(,\\\"[\"; let c = c\"}\\\\\";",
            "let ch = ['(', ')', '[', ']', '{', '}', ',', '\\'', '\"', '\\\\'];",
            "let bc = (b')', b'\\'', b'\\\\', b'\"', b'(');",
            "let e = ('\\u{1F600}', '\\x41', 'é', '\\n', '/', '*');",
            "fn f<'a>(x: &'a [u8], y: &'a str) -> &'a [u8] { x }",
            "fn k<'a>(x: &'a u8) -> (char, &'a u8) { ('x', x) }",
            "impl<'a, T: Tr<'a>> S<'a, T> where T: 'a {}",
            "struct P<'a> { r: &'a [u8], s: [u8; 4], t: (&'a str, u8) }",
            "'l: loop { break 'l; }",
            "'outer: for i in 0..n { 'inner: while c { continue 'outer; } }",
            "let w = 'b: { if c { break 'b (1, 2); } [3] };",
            "/* a /* nested ( */ \" ' [ */ g(h);",
            "/* one /* two /* three { */ */ , */ g(h);",
            "/// doc with `x(\"y\")` and 'q [\nfn d() {}",
            "//! inner doc (\n",
            "/** doc ( ' */ fn e() {}",
            "/*! inner ] \" */",
            "/***/ /**/ k(l, m);",
            "// line ( ' \" , [",
            "let m = f::<A, B>(c, d);",
            "let n = Vec::<(u8, char)>::with_capacity(2);",
            "let g = |a, b| (a, b);",
            "let h = |(a, b): (u8, u8), [c, d]: [u8; 2]| a;",
            "#[derive(Debug, Clone)]\nstruct Q { r: [u8; 2] }",
            "#[cfg(all(test, feature = \"x(\"))]\nfn t() {}",
            "let s = \"line\\\n    continued (\";",
            "let s = \"multi\nline [ string\";",
            "f('',')');",
            "let x = a / b / c; // div (",
            "match x { Some('a') => (), Some(',') | None => {} _ => [] }",
            "let t: Vec<(u8, char)> = vec![(1, '('), (2, ')')];",
            "let z = \"// not a comment (\"; let w = \"/* nor this [\";",
            "let y = '/'; let q = b'/'; let p = \"/*\";",
            "s.chars().filter(|&c| c != '\\'' && c != '\"').count();",
            "let r#type = (r#fn, br, cr, r);",
            "m!(ab\"c\" br\"d\" xr#\"e\"#);",
        ])
        .prop_map(str::to_string);
        let escaped = "( ) , [ ] { } ' / /* */ // # \\\" \\\\ \\n \\' \\u{28} \\\n \n";
        let raw = "( ) , [ ] { } ' / /* */ // # \\ \n";
        let string = (
            prop::sample::select(vec!["", "b", "c", "r", "r#", "br##", "cr#", "r###"]),
            prop::collection::vec(0..16usize, 0..6),
            prop::sample::select(vec![", f(g, [h])", ""]),
            prop::sample::select(vec!["  // i('", ""]),
        )
            .prop_map(move |(prefix, picks, arguments, comment)| {
                let hashes = prefix.matches('#').count();
                let mut fragments: Vec<&str> = if prefix.contains('r') {
                    raw.split(' ').collect()
                } else {
                    escaped.split(' ').collect()
                };
                // A quote ends a raw string only when as many `#` as it opened with follow it.
                if hashes > 0 {
                    fragments.extend(["\"", "\"a", "\" #"]);
                }
                if hashes > 1 {
                    fragments.push("\"#");
                }
                let inside: String = picks
                    .iter()
                    .map(|pick| fragments[pick % fragments.len()])
                    .collect();
                let (open, close) = (format!("{prefix}\""), format!("\"{}", "#".repeat(hashes)));
                format!("let v = ({open}{inside}{close}{arguments});{comment}")
            });
        let char = (
            prop::sample::select(vec!["", "b"]),
            prop::sample::select(
                "( ) [ ] { } , \" / * # \\' \\\\ \\n \\u{28}"
                    .split(' ')
                    .collect::<Vec<_>>(),
            ),
        )
            .prop_map(|(prefix, inside)| format!("let c = [{prefix}'{inside}', 'a'];"));
        // Block comments with openers and closers in every order (those left open or closed
        // early do not parse, and are left out).
        let comment = prop::collection::vec(
            prop::sample::select("/* */ / * ** ( ) , ' \" \n".split(' ').collect::<Vec<_>>()),
            0..8,
        )
        .prop_map(|inside| format!("/*{}*/ f(a, [b]);", inside.concat()));
        prop_oneof![4 => fixed, 4 => string, 2 => char, 1 => comment]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]

        #[test]
        fn the_lexer_agrees_with_the_grammar(
            statements in prop::collection::vec(statement(), 0..8),
            separators in prop::collection::vec(prop::sample::select(vec!["\n", " ", "\n    "]), 8),
            crlf in any::<bool>(),
            before in prop::sample::select(vec!["", "", "\u{feff}", " \n\t", "// a (\n", "/* b [ */ "]),
            shebang in prop::sample::select(vec!["", "", "#!/usr/bin/env run-cargo-script\n", "#!cargo (a, [b]) \"c\n", "#! [x]\n"]),
        ) {
            let text = joined(&format!("{before}{shebang}"), &statements, &separators, crlf);
            if let Some(Verdict { wrong, .. }) = disagreements(&RUST, &text) {
                prop_assert!(wrong.is_empty(), "{wrong:#?} in {text:?}");
            }
        }
    }

    #[test]
    fn the_generated_statements_parse() {
        assert_most_parse(&RUST, statement());
    }

    #[test]
    fn in_real_rust_the_lexer_agrees_with_the_grammar() {
        // The workspace's own crates, and tokio's sources when cargo's registry holds them.
        let crates = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut files = files_under(&crates, "rs", &["target"]);
        if let Some(tokio) = resolve_test_support::registry_tokio() {
            files.extend(files_under(&tokio, "rs", &[]));
        }
        let Checked {
            checked,
            to_the_end,
            ..
        } = check_files(&RUST, &files);
        assert!(
            checked > 100,
            "only {checked} of {} files parse cleanly",
            files.len()
        );
        assert_eq!(to_the_end, checked);
    }

    /// The comments and literals of `text`, as text.
    fn pieces(text: &str) -> Vec<&str> {
        lex_oracle::pieces(comments_and_literals, text)
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
        // `//*` in a block comment opens no nested one for the grammar; `///*` does.
        assert_eq!(pieces("/*//**/ f(a, [b]);"), ["/*//**/"]);
        assert_eq!(pieces("/* ///* */ */ f(a, [b]);"), ["/* ///* */ */"]);
        // An empty char literal, which the grammar reads as one: the `','` after it is code.
        assert_eq!(pieces("f('',')');"), ["''", "')'"]);
    }

    #[test]
    fn a_shebang_line_is_no_code_and_an_inner_attribute_is() {
        assert_eq!(
            pieces("#!cargo (a, [b]) \"c\nf(d, \"e\");"),
            ["#!cargo (a, [b]) \"c", "\"e\""]
        );
        assert_eq!(pieces("#![allow(a)]\nf(\"b\");"), ["\"b\""]);
        // The grammar takes a shebang after blanks and comments too, and `#! [` for one.
        assert_eq!(
            pieces("\u{feff} // a\n/* b */#! [c] 'd\nf(e);"),
            ["// a", "/* b */", "#! [c] 'd"]
        );
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
