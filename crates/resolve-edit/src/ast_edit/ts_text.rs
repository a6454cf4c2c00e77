//! Where a TypeScript text's comments and literals are: line and block comments, strings with
//! escapes, and the text of template literals (not the code of their `${…}` substitutions,
//! which may nest templates of their own). No identifier of a match is in one of these, so the
//! prefilter need not count a pattern's name found there (a `.subscribe(` in a doc comment's
//! example, which the look at a `//` line cannot see inside `/** … */`).
//!
//! TypeScript proper only: in JSX (the JavaScript and TSX grammars) a quote in an element's
//! text starts no string. A `/` alone is division or starts a regular expression, which only
//! the grammar tells apart; a regular expression may hold a quote, a backtick, a brace or a
//! comment opener, and taking one for the real thing would mark code as a literal. Neither can
//! span lines, so when a lone `/` has one of those after it on its line (or any lone `/` inside
//! a substitution, whose braces must balance), the lexer stops: what lies after is counted as
//! code, which drops nothing a match needs. The lexer is sure of its ranges only up to the first
//! lone `/`: a regular expression that holds no quote may still hold a bracket.

use super::rust_text::{Lexed, line_end};

/// The comments and literals of `text`, in order (see the module documentation): each range
/// covers a whole comment or string with its quotes, or a run of a template's text with its
/// backtick or the `${`/`}` around it. A line comment ends at any line terminator (`\r`,
/// U+2028 and U+2029 too, as the grammar has it). A literal left open runs to the end of its
/// line (a string) or of the text (a block comment, a template). It is sure up to the first
/// lone `/` (division or a regular expression), or where it stops.
pub(super) fn comments_and_literals(text: &[u8]) -> Lexed {
    let mut found = Vec::new();
    let mut sure_until = None;
    // For each template whose substitution the scan is in, the braces open in it.
    let mut substitutions: Vec<usize> = Vec::new();
    let mut backticks = NextBacktick::default();
    let mut at = 0;
    while at < text.len() {
        let next = if substitutions.is_empty() {
            let other = memchr::memchr3(b'/', b'"', b'\'', &text[at..]).map(|offset| at + offset);
            match (other, backticks.at_or_after(text, at)) {
                (Some(other), Some(backtick)) => Some(other.min(backtick)),
                (other, backtick) => other.or(backtick),
            }
        } else {
            text[at..]
                .iter()
                .position(|byte| matches!(byte, b'/' | b'"' | b'\'' | b'`' | b'{' | b'}'))
                .map(|offset| at + offset)
        };
        let Some(next) = next else { break };
        at = next;
        match text[at] {
            b'/' => match text.get(at + 1) {
                Some(b'/') => {
                    let end = line_comment_end(text, at);
                    found.push(at..end);
                    at = end;
                }
                Some(b'*') => {
                    let end = memchr::memmem::find(&text[at + 2..], b"*/")
                        .map_or(text.len(), |close| at + 2 + close + 2);
                    found.push(at..end);
                    at = end;
                }
                _ => {
                    sure_until.get_or_insert(at);
                    if !substitutions.is_empty() || ambiguous_after_slash(text, at + 1) {
                        break;
                    }
                    at += 1;
                }
            },
            b'"' | b'\'' => {
                let end = string_end(text, at);
                found.push(at..end);
                at = end;
            }
            b'`' => {
                let (end, opens) = template_text_end(text, at + 1);
                found.push(at..end);
                at = end;
                if opens {
                    substitutions.push(0);
                }
            }
            b'{' => {
                if let Some(open) = substitutions.last_mut() {
                    *open += 1;
                }
                at += 1;
            }
            _ => match substitutions.last_mut() {
                // `}`: closes a brace of the substitution, or the substitution itself, after
                // which the template's text goes on.
                Some(open) if *open > 0 => {
                    *open -= 1;
                    at += 1;
                }
                Some(_) => {
                    substitutions.pop();
                    let (end, opens) = template_text_end(text, at + 1);
                    found.push(at..end);
                    at = end;
                    if opens {
                        substitutions.push(0);
                    }
                }
                None => at += 1,
            },
        }
    }
    Lexed {
        ranges: found,
        sure_until: sure_until.unwrap_or(text.len()),
    }
}

/// Where the next backtick is, looked for again only once the scan is past the last one found
/// (a text with many strings and no template is searched for one once).
#[derive(Default)]
struct NextBacktick {
    /// The last answer: `Some(None)` when there is none after where it was asked from.
    found: Option<Option<usize>>,
}

impl NextBacktick {
    /// The first backtick at or after `from`.
    fn at_or_after(&mut self, text: &[u8], from: usize) -> Option<usize> {
        match self.found {
            Some(Some(at)) if at >= from => Some(at),
            Some(None) => None,
            _ => {
                let found = memchr::memchr(b'`', &text[from..]).map(|offset| from + offset);
                self.found = Some(found);
                found
            }
        }
    }
}

/// Whether what follows a lone `/` on its line, from `from`, holds what a regular expression
/// could hold that the lexer would take for the start of a literal or a comment.
fn ambiguous_after_slash(text: &[u8], from: usize) -> bool {
    let rest = &text[from..line_end(text, from)];
    rest.iter().any(|byte| matches!(byte, b'"' | b'\'' | b'`'))
        || memchr::memmem::find(rest, b"/*").is_some()
        || memchr::memmem::find(rest, b"//").is_some()
}

/// The end of the line comment at `at`: its first line terminator (a `\n`, a `\r`, U+2028 or
/// U+2029), which is not part of it.
fn line_comment_end(text: &[u8], at: usize) -> usize {
    let mut from = at;
    // U+2028 and U+2029 are E2 80 A8 and E2 80 A9 in UTF-8.
    while let Some(offset) = memchr::memchr3(b'\n', b'\r', 0xE2, &text[from..]) {
        let found = from + offset;
        if text[found] != 0xE2
            || (text.get(found + 1) == Some(&0x80)
                && matches!(text.get(found + 2), Some(0xA8 | 0xA9)))
        {
            return found;
        }
        from = found + 1;
    }
    text.len()
}

/// The end of the string opened by the quote at `at`: past the next such quote not escaped by a
/// backslash, or at the end of the line when it is left open.
fn string_end(text: &[u8], at: usize) -> usize {
    let quote = text[at];
    let mut index = at + 1;
    while index < text.len() {
        match text[index] {
            // An escape; a backslash before a line break continues the string on the next line.
            b'\\' if text.get(index + 1) == Some(&b'\r') && text.get(index + 2) == Some(&b'\n') => {
                index += 3;
            }
            b'\\' => index += 2,
            b'\n' => return index,
            byte if byte == quote => return index + 1,
            _ => index += 1,
        }
    }
    text.len()
}

/// The end of a template's text that starts at `from` (after a backtick or a substitution's
/// `}`): past its closing backtick (`false`), or past the `${` of a substitution (`true`).
fn template_text_end(text: &[u8], from: usize) -> (usize, bool) {
    let mut index = from;
    while index < text.len() {
        match text[index] {
            b'\\' => index += 2,
            b'`' => return (index + 1, false),
            b'$' if text.get(index + 1) == Some(&b'{') => return (index + 2, true),
            _ => index += 1,
        }
    }
    (text.len(), false)
}

#[cfg(test)]
mod tests {
    use ast_grep_core::AstGrep;
    use ast_grep_core::tree_sitter::StrDoc;
    use ast_grep_language::SupportLang;
    use pretty_assertions::assert_eq;
    use proptest::prelude::*;

    use super::*;
    use crate::ast_edit::grammar::AstLang;
    use crate::ast_edit::rust_text::covers;

    /// The identifiers the TypeScript grammar finds in `text` that [`comments_and_literals`]
    /// covers (each by its text and offset), or `None` when the text does not parse cleanly.
    fn identifiers_taken_for_literals(text: &str) -> Option<Vec<(String, usize)>> {
        let root =
            AstGrep::<StrDoc<AstLang>>::try_new(text, AstLang::Builtin(SupportLang::TypeScript))
                .ok()?;
        let root = root.root();
        if root.dfs().any(|node| node.is_error() || node.is_missing()) {
            return None;
        }
        let ranges = comments_and_literals(text.as_bytes()).ranges;
        Some(
            root.dfs()
                .filter(|node| node.is_leaf() && node.kind().ends_with("identifier"))
                .filter(|node| covers(&ranges, node.range().start))
                .map(|node| (node.text().to_string(), node.range().start))
                .collect(),
        )
    }

    /// A statement of generated TypeScript: code, strings, comments and templates holding
    /// quotes, braces and slashes, regular expressions that hold them too, division.
    fn statement() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec![
            "a.subscribe(x);",
            "let v = b / c / d;",
            "let w = b / 2; // half 'of it",
            "s.replace(/'/g, \"x\"); e.subscribe(f);",
            "s.split(/[\"`]/).map(g);",
            "u = /\\/\\//.test(h) ? i.j : k;",
            "x.split(/}/);",
            "let q = 'it\\'s a.subscribe(' + \"say \\\"hi\\\" // no\";",
            "let r = '/* no */' + m.n;",
            "// line 'quote \"x a.subscribe(y)",
            "/* block 'q'\n \"x\" */ o.p();",
            "/** @example a.subscribe('x') } */ z.subscribe();",
            "let t = `t ${a.b('c')} u`;",
            "let n = `nested ${`in ${d} x`} y ${e}`;",
            "let o = `braces ${ {a: f}.a } and '${'}'}' ${g /* } */}`;",
            "let p = `multi\nline ${h.subscribe()}\n`;",
            "let l = 'abc\\\ndef' + i.j;",
            "if (k) { l(); } else { m(`${n}`); }",
            "type T = `pre-${string}`;",
            "const c = { 'k': v, \"w\": `x` };",
            // A line comment ends at any line terminator: a lone CR, U+2028, U+2029.
            "// c\ra.subscribe(x);",
            "// d\u{2028}b.subscribe(y);",
            "// e\u{2029}c.subscribe(z);",
        ])
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        #[test]
        fn no_identifier_the_grammar_sees_is_taken_for_a_comment_or_literal(
            statements in prop::collection::vec(statement(), 0..10),
            separators in prop::collection::vec(prop::sample::select(vec![" ", "\n", "\n  "]), 10),
        ) {
            let text: String = statements
                .iter()
                .zip(&separators)
                .map(|(statement, separator)| format!("{statement}{separator}"))
                .collect();
            if let Some(taken) = identifiers_taken_for_literals(&text) {
                prop_assert!(taken.is_empty(), "{taken:?} in {text}");
            }
        }
    }

    /// Every `.ts` file under `dir`.
    fn typescript_files(dir: &std::path::Path, found: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                typescript_files(&path, found);
            } else if path.extension().is_some_and(|ext| ext == "ts") {
                found.push(path);
            }
        }
    }

    #[test]
    fn in_real_typescript_no_identifier_is_taken_for_a_comment_or_literal() {
        let mut files = Vec::new();
        for package in ["puppeteer-core/src", "chromium-bidi/lib"] {
            let Some(dir) = resolve_test_support::installed_npm_dir(package) else {
                return;
            };
            typescript_files(&dir, &mut files);
        }
        let mut checked = 0;
        for file in &files {
            let text = std::fs::read_to_string(file).unwrap();
            if let Some(taken) = identifiers_taken_for_literals(&text) {
                assert!(taken.is_empty(), "{taken:?} in {}", file.display());
                checked += 1;
            }
        }
        assert!(
            checked > 100,
            "only {checked} of {} files parse cleanly",
            files.len()
        );
    }

    #[test]
    fn the_generated_statements_parse_and_some_names_in_them_are_literals() {
        let text = "let q = 'a.subscribe(';\n/** b.subscribe() */ c.subscribe();\n";
        assert_eq!(identifiers_taken_for_literals(text), Some(Vec::new()));
        let ranges = comments_and_literals(text.as_bytes()).ranges;
        assert!(covers(&ranges, text.find("a.subscribe").unwrap()));
        assert!(covers(&ranges, text.find("b.subscribe").unwrap()));
        assert!(!covers(&ranges, text.find("c.subscribe").unwrap()));
    }

    /// The comments and literals of `text`, as text.
    fn pieces(text: &str) -> Vec<&str> {
        comments_and_literals(text.as_bytes())
            .ranges
            .into_iter()
            .map(|range| &text[range])
            .collect()
    }

    #[test]
    fn comments_and_strings_are_found_whole() {
        assert_eq!(
            pieces("a.b(); // x.y('\nc(\"d\\\"e\", 'f\\'g') /* h\n* i.subscribe() */ j;"),
            vec![
                "// x.y('",
                "\"d\\\"e\"",
                "'f\\'g'",
                "/* h\n* i.subscribe() */"
            ]
        );
    }

    #[test]
    fn a_templates_text_is_a_literal_and_its_substitutions_are_code() {
        let text = "x = `a ${b.c(`d ${e} f`, { g: 'h' })} i` + j;";
        assert_eq!(pieces(text), vec!["`a ${", "`d ${", "} f`", "'h'", "} i`"]);
    }

    #[test]
    fn a_line_comment_ends_at_a_carriage_return_or_a_unicode_line_separator() {
        assert_eq!(pieces("// a\rb('c');"), vec!["// a", "'c'"]);
        assert_eq!(
            pieces("// a\u{2028}b('c'); // d\u{2029}e"),
            vec!["// a", "'c'", "// d"]
        );
        assert_eq!(pieces("// a\u{20ac}b\nc"), vec!["// a\u{20ac}b"]);
    }

    #[test]
    fn a_string_left_open_ends_at_its_line() {
        assert_eq!(pieces("a = 'b\nc.d();"), vec!["'b"]);
    }

    #[test]
    fn division_is_code_and_a_slash_that_may_open_a_regex_with_a_quote_stops_the_lexer() {
        assert_eq!(pieces("a = b / c / d;\ne('f');"), vec!["'f'"]);
        // `/'/` is a regular expression: its quote opens nothing, so nothing after is marked.
        assert_eq!(
            pieces("g('h'); s.replace(/'/g, x); k.subscribe(); 'l';"),
            vec!["'h'"]
        );
        assert_eq!(pieces("a = b / 2; // c\n'd';"), Vec::<&str>::new());
        // Inside a substitution any lone slash stops it (a regex may hold a brace).
        assert_eq!(pieces("`a ${ b.replace(/}/g, c) } d`; 'e';"), vec!["`a ${"]);
    }
}
