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
//! lone `/`: a regular expression that holds no quote may still hold a bracket. It also stops at
//! a block comment left open (the grammar may read `/*/` as a regular expression). A `#!` line
//! that is the text's first token (after blanks and comments, as the grammar has it) is no code.

use super::rust_text::{Lexed, first_token, line_end};

/// The comments and literals of `text`, in order (see the module documentation): each range
/// covers a whole comment or string with its quotes, a run of a template's text with its
/// backtick or the `${`/`}` around it, or the `#!` line that is the text's first token. A line
/// comment ends at any line terminator (`\r`, U+2028 and U+2029 too, as the grammar has it). A
/// literal left open runs to the end of its line (a string) or of the text (a template); at a
/// block comment left open the lexer stops. It is sure up to the first lone `/` (division or a
/// regular expression), or where it stops.
pub(super) fn comments_and_literals(text: &[u8]) -> Lexed {
    let mut found = Vec::new();
    let mut sure_until = None;
    // For each template whose substitution the scan is in, the braces open in it.
    let mut substitutions: Vec<usize> = Vec::new();
    let mut backticks = NextBacktick::default();
    let mut at = first_token(text, &mut found, line_comment_end, block_comment_end);
    if text[at..].starts_with(b"#!") {
        let end = line_end(text, at);
        found.push(at..end);
        at = end;
    }
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
                    // Left open, it may be no comment for the grammar (`/*/` a regular
                    // expression), so the lexer stops.
                    let Some(end) = block_comment_end(text, at) else {
                        sure_until.get_or_insert(at);
                        break;
                    };
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

/// The end of the block comment at `at`, past its `*/`; `None` when it is left open.
fn block_comment_end(text: &[u8], at: usize) -> Option<usize> {
    memchr::memmem::find(&text[at + 2..], b"*/").map(|close| at + 2 + close + 2)
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
    use ast_grep_language::SupportLang;
    use pretty_assertions::assert_eq;
    use proptest::prelude::*;

    use super::*;
    use crate::ast_edit::lex_oracle::{
        self, Checked, Grammar, Parsed, Verdict, assert_most_parse, check_files, disagreements,
        files_under, joined,
    };
    use crate::ast_edit::rust_text::covers;

    /// TypeScript, as the oracle checks [`comments_and_literals`] against it: comments, strings
    /// and templates (of values and of types) are literals, a substitution's code inside its
    /// `${` and `}` is not.
    const TYPESCRIPT: Grammar = Grammar {
        lang: SupportLang::TypeScript,
        lexer: comments_and_literals,
        // Named: the type `string` is an unnamed `string` too.
        literal: |node: &Parsed<'_>| {
            let kind = node.kind();
            let literal = matches!(
                &*kind,
                "comment"
                    | "hash_bang_line"
                    | "string"
                    | "template_string"
                    | "template_literal_type"
            );
            (literal && node.is_named()).then(|| node.range())
        },
        code: |node: &Parsed<'_>| {
            let range = node.range();
            matches!(&*node.kind(), "template_substitution" | "template_type")
                .then(|| range.start + 2..range.end - 1)
        },
        joins: false,
    };

    /// Where the oracle finds the grammar and the lexer disagree in `text` (see
    /// [`disagreements`]), and whether the lexer was sure of all of it; `None` when the text
    /// does not parse cleanly.
    fn check(text: &str) -> Option<(Vec<String>, bool)> {
        disagreements(&TYPESCRIPT, text).map(|Verdict { wrong, lexed_all }| (wrong, lexed_all))
    }

    /// A statement of generated TypeScript: code with brackets and commas (generics, arrows,
    /// objects, decorators), strings, comments and templates holding quotes, brackets, commas
    /// and slashes, regular expressions that hold them too, division.
    fn statement() -> impl Strategy<Value = String> {
        let fixed = prop::sample::select(vec![
            "a.subscribe(x);",
            "let v = b / c / d;",
            "let w = b / 2; // half 'of it",
            "s.replace(/'/g, \"x\"); e.subscribe(f);",
            "s.split(/[\"`]/).map(g);",
            "u = /\\/\\//.test(h) ? i.j : k;",
            "x.split(/}/);",
            "x.split(/[(,]/);",
            // Left open, `/*` is no comment to the grammar: `/*/` is a regular expression.
            "x = [a, /*/[b]];",
            "let q = 'it\\'s a.subscribe(' + \"say \\\"hi\\\" // no\";",
            "let r = '/* no */' + m.n;",
            "// line 'quote \"x a.subscribe(y)",
            "// brackets ( [ { , in a comment",
            "/* block 'q'\n \"x\" */ o.p();",
            "/* ( [ { , */ f(a, [b], {c});",
            "/** @example a.subscribe('x') } */ z.subscribe();",
            "/**/ /***/ /* * / */ f(a);",
            "let t = `t ${a.b('c')} u`;",
            "let n = `nested ${`in ${d} x`} y ${e}`;",
            "let o = `braces ${ {a: f}.a } and '${'}'}' ${g /* } */}`;",
            "let p = `multi\nline ${h.subscribe()}\n`;",
            "let e = `\\${not (a, substitution}` + `\\`(` + `$` + `{` + `$(`;",
            "let f = `${ {a: [1, 2], b: (3)} }`;",
            "let g = `${a}${b}(${c}, [${d}])`;",
            "let l = 'abc\\\ndef' + i.j;",
            "let c = ['(', \")\", '[', \"]\", '{', \"}\", ',', \"'\", '\"', '\\\\'];",
            "if (k) { l(); } else { m(`${n}`); }",
            "type T = `pre-${string}`;",
            "type U = `(${number}, [${string}])`;",
            "const c = { 'k': v, \"w\": `x` };",
            "function f<A, B>(a: A, b: [B, B]): { a: A } { return { a }; }",
            "const g = <T,>(x: T, y: T[]) => [x, ...y];",
            "let m = new Map<string, Array<[number, string]>>();",
            "class C { @D({ a: 1, b: '(' }) m(@E() p: string) {} }",
            "interface I { [k: string]: (a: number, b: string) => void; }",
            "let o2 = a?.[0]?.(b, c) ?? d;",
            "for (const [k, v] of Object.entries({ a: '}' })) { f(k, v); }",
            "import { a, b as c } from './m';",
            "export { d, e };",
            // A line comment ends at any line terminator: a lone CR, U+2028, U+2029.
            "// c\ra.subscribe(x);",
            "// d\u{2028}b.subscribe(y);",
            "// e\u{2029}c.subscribe(z);",
        ])
        .prop_map(str::to_string);
        let string = (
            prop::sample::select(vec!["'", "\""]),
            prop::collection::vec(
                prop::sample::select(
                    "( ) , [ ] { } ` ${ // /* */ / \\' \\\" \\\\ \\n \\\n \\u{28}"
                        .split(' ')
                        .collect::<Vec<_>>(),
                ),
                0..6,
            ),
            prop::sample::select(vec![", f(g, [h])", ""]),
        )
            .prop_map(|(quote, inside, arguments)| {
                // The other quote unescaped.
                let other = if quote == "'" { "\"" } else { "'" };
                format!(
                    "v = f({quote}{}{other}{quote}{arguments});",
                    inside.concat()
                )
            });
        let template = (
            prop::collection::vec(
                prop::sample::select(
                    "( ) , [ ] { } ' \" $ // /* */ / \\` \\${ \\\\ \n ${a(b,[c])} ${{d:[e]}} \
                     ${`in${f}(`} ${'}'} ${\"{\"} ${/*}*/a}"
                        .split(' ')
                        .collect::<Vec<_>>(),
                ),
                0..6,
            ),
            prop::sample::select(vec![", f(g, [h])", ""]),
        )
            .prop_map(|(inside, arguments)| format!("v = f(`{}`{arguments});", inside.concat()));
        prop_oneof![3 => fixed, 1 => string, 1 => template]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]

        #[test]
        fn before_where_it_is_sure_the_lexer_agrees_with_the_grammar(
            statements in prop::collection::vec(statement(), 0..10),
            separators in prop::collection::vec(prop::sample::select(vec![" ", "\n", "\n  "]), 10),
            crlf in any::<bool>(),
            before in prop::sample::select(vec!["", "", "\u{feff}", " \n\t", "// a (\n", "/* b [ */ "]),
            shebang in prop::sample::select(vec!["", "", "#!/usr/bin/env node\n", "#!node (a, [b]) 'c // d\n"]),
        ) {
            let text = joined(&format!("{before}{shebang}"), &statements, &separators, crlf);
            if let Some((wrong, _)) = check(&text) {
                prop_assert!(wrong.is_empty(), "{wrong:#?} in {text:?}");
            }
        }
    }

    #[test]
    fn the_generated_statements_parse() {
        assert_most_parse(&TYPESCRIPT, statement());
    }

    #[test]
    fn in_real_typescript_the_lexer_agrees_with_the_grammar() {
        let mut files = Vec::new();
        for package in ["puppeteer-core/src", "chromium-bidi/lib"] {
            let Some(dir) = resolve_test_support::installed_npm_dir(package) else {
                return;
            };
            files.extend(files_under(&dir, "ts", &[]));
        }
        let Checked {
            checked,
            unreadable,
            ..
        } = check_files(&TYPESCRIPT, &files);
        assert_eq!(unreadable, 0);
        assert!(
            checked > 100,
            "only {checked} of {} files parse cleanly",
            files.len()
        );
    }

    /// Realistic TypeScript (services, generics, decorators, templates, regular expressions),
    /// as modules split at lines `// ---- module ----`.
    const SAMPLE: &str = include_str!("ts_text_sample.ts");

    #[test]
    #[allow(clippy::print_stderr, reason = "the test reports how much it checked")]
    fn in_a_realistic_sample_the_lexer_agrees_with_the_grammar() {
        let modules: Vec<&str> = SAMPLE.split("// ---- module ----\n").collect();
        assert!(modules.len() > 5);
        // Each module from its start, and all of them as one text: the lexer is sure of each up
        // to its first division or regular expression.
        let mut sure_lines = 0;
        for text in modules.iter().copied().chain([SAMPLE]) {
            let (wrong, _) = check(text).unwrap_or_else(|| panic!("{text} does not parse"));
            assert!(wrong.is_empty(), "{wrong:#?} in {text}");
            let sure = comments_and_literals(text.as_bytes()).sure_until;
            sure_lines += text[..sure].lines().count();
        }
        eprintln!(
            "{} modules and the whole sample ({} lines) checked, sure of {sure_lines} lines",
            modules.len(),
            SAMPLE.lines().count()
        );
        assert!(sure_lines > 200, "sure of only {sure_lines} lines");
    }

    #[test]
    fn the_generated_statements_parse_and_some_names_in_them_are_literals() {
        let text = "let q = 'a.subscribe(';\n/** b.subscribe() */ c.subscribe();\n";
        assert_eq!(check(text), Some((Vec::new(), true)));
        let ranges = comments_and_literals(text.as_bytes()).ranges;
        assert!(covers(&ranges, text.find("a.subscribe").unwrap()));
        assert!(covers(&ranges, text.find("b.subscribe").unwrap()));
        assert!(!covers(&ranges, text.find("c.subscribe").unwrap()));
    }

    /// The comments and literals of `text`, as text.
    fn pieces(text: &str) -> Vec<&str> {
        lex_oracle::pieces(comments_and_literals, text)
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
    fn a_hash_bang_line_is_no_code_and_its_slashes_do_not_stop_the_lexer() {
        let text = "#!/usr/bin/env node (a, 'b\r\nf(c, 'd');";
        let lexed = comments_and_literals(text.as_bytes());
        assert_eq!(pieces(text), vec!["#!/usr/bin/env node (a, 'b\r", "'d'"]);
        assert_eq!(lexed.sure_until, text.len());
        assert_eq!(check(text), Some((Vec::new(), true)));
        // The grammar takes one after blanks and comments too.
        let text = "\u{feff} // a\n/* b */#!node (c\nf('d');";
        assert_eq!(pieces(text), vec!["// a", "/* b */", "#!node (c", "'d'"]);
        assert_eq!(check(text), Some((Vec::new(), true)));
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
        // A block comment left open: the grammar reads `/*/` as a regular expression.
        let text = "'a'; f(b, /*/[c]);";
        assert_eq!(pieces(text), vec!["'a'"]);
        assert_eq!(
            comments_and_literals(text.as_bytes()).sure_until,
            text.find('/').unwrap()
        );
        assert_eq!(check(text), Some((Vec::new(), false)));
    }
}
