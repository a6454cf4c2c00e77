//! The oracle the lexers' tests share (`rust_text`, `ts_text`, `py_text`): a lexer's ranges and
//! how far it is sure, checked against the tree its language's grammar parses from the same text.

use std::collections::HashSet;
use std::ops::Range;

use ast_grep_core::tree_sitter::StrDoc;
use ast_grep_core::{AstGrep, Node};
use ast_grep_language::SupportLang;
use proptest::strategy::{Strategy, ValueTree};

use super::grammar::AstLang;
use super::rust_text::Lexed;

/// A node of a parsed text.
pub(super) type Parsed<'r> = Node<'r, StrDoc<AstLang>>;

/// How one language's grammar marks what its lexer finds, for [`disagreements`].
pub(super) struct Grammar {
    /// The language the text is parsed as.
    pub(super) lang: SupportLang,
    /// The lexer checked.
    pub(super) lexer: fn(&[u8]) -> Lexed,
    /// The bytes a node has in a comment or a literal's text, if it is one.
    pub(super) literal: fn(&Parsed<'_>) -> Option<Range<usize>>,
    /// The bytes a node takes back out of the literal around it as code (a substitution's or a
    /// field's code, its braces left in), if it is one.
    pub(super) code: fn(&Parsed<'_>) -> Option<Range<usize>>,
    /// Whether the lexer joins ranges that touch into one.
    pub(super) joins: bool,
}

/// What [`disagreements`] found in a text that parses cleanly.
pub(super) struct Verdict {
    /// Where the grammar and the lexer disagree (the first few, as messages).
    pub(super) wrong: Vec<String>,
    /// Whether the lexer was sure of the whole text.
    pub(super) lexed_all: bool,
}

/// Where `grammar`'s parse of `text` and its lexer disagree, or `None` when the grammar finds an
/// error in the text. Checked: (a) no identifier the grammar sees starts in a range (anywhere:
/// a lexer may go on past where it is sure); before where the lexer is sure, (b) every bracket
/// or comma outside the ranges is a code token of the grammar (an unnamed leaf of that kind, or
/// code it keeps in no leaf), and every such token is outside them unless the grammar has it in
/// a literal (the braces around a substitution), and (c) a byte is in a range exactly when the
/// grammar has it in a comment or a literal's text. The ranges are in order, not empty, apart
/// (when the lexer joins those that touch), and none straddles where the lexer is sure.
pub(super) fn disagreements(grammar: &Grammar, text: &str) -> Option<Verdict> {
    let grep = AstGrep::<StrDoc<AstLang>>::try_new(text, AstLang::Builtin(grammar.lang)).ok()?;
    let root = grep.root();
    if root.dfs().any(|node| node.is_error() || node.is_missing()) {
        return None;
    }
    let bytes = text.as_bytes();
    let Lexed { ranges, sure_until } = (grammar.lexer)(bytes);
    let sure = sure_until;
    let at = |offset: usize| {
        let around = &bytes[offset.saturating_sub(12)..(offset + 12).min(bytes.len())];
        format!("{offset} in {:?}", String::from_utf8_lossy(around))
    };
    let mut wrong = Vec::new();
    if sure > bytes.len()
        || ranges
            .windows(2)
            .any(|pair| pair[0].end + usize::from(grammar.joins) > pair[1].start)
        || ranges.iter().any(|range| {
            range.is_empty() || range.end > bytes.len() || (range.start < sure && sure < range.end)
        })
    {
        wrong.push(format!("ranges out of order or across {sure}: {ranges:?}"));
        return Some(Verdict {
            wrong,
            lexed_all: false,
        });
    }
    let (mut covered, mut literal) = (vec![false; bytes.len()], vec![false; bytes.len()]);
    for range in &ranges {
        covered[range.clone()].fill(true);
    }
    // Pre-order: a substitution's code is marked after the literal around it, a literal in it
    // after it.
    for node in root.dfs() {
        if let Some(range) = (grammar.literal)(&node) {
            literal[range].fill(true);
        }
        if let Some(range) = (grammar.code)(&node) {
            literal[range].fill(false);
        }
    }
    let (mut code_tokens, mut in_leaf) = (HashSet::new(), vec![false; bytes.len()]);
    for node in root.dfs().filter(|node| node.is_leaf()) {
        let (kind, range) = (node.kind(), node.range());
        in_leaf[range.clone()].fill(true);
        if kind.ends_with("identifier") && covered[range.start] {
            wrong.push(format!("{kind} in a range at {}", at(range.start)));
        }
        if range.start >= sure
            || node.is_named()
            || !matches!(&*kind, "(" | ")" | "[" | "]" | "{" | "}" | ",")
        {
            continue;
        }
        if covered[range.start] != literal[range.start] {
            wrong.push(format!(
                "{kind} (in a literal: {}) at {}",
                literal[range.start],
                at(range.start)
            ));
        }
        code_tokens.insert(range.start);
    }
    for offset in 0..sure {
        let bracket = matches!(
            bytes[offset],
            b'(' | b')' | b'[' | b']' | b'{' | b'}' | b','
        );
        // Code the grammar keeps in no token of its tree (the separator of a Rust macro's
        // `$(…),*`) is in no leaf and no literal.
        let hidden_code = !in_leaf[offset] && !literal[offset];
        if bracket && !covered[offset] && !code_tokens.contains(&offset) && !hidden_code {
            wrong.push(format!("no code token at {}", at(offset)));
        }
        if covered[offset] != literal[offset] {
            wrong.push(format!("in a range: {} at {}", covered[offset], at(offset)));
        }
    }
    wrong.truncate(5);
    Some(Verdict {
        wrong,
        lexed_all: sure == bytes.len(),
    })
}

/// A generated text: `before` (a byte-order mark, a shebang, or nothing), then `statements`,
/// each followed by its separator, with CRLF line ends when `crlf`.
pub(super) fn joined(
    before: &str,
    statements: &[String],
    separators: &[&str],
    crlf: bool,
) -> String {
    let text: String = statements
        .iter()
        .zip(separators)
        .map(|(statement, separator)| format!("{statement}{separator}"))
        .collect();
    let text = format!("{before}{text}");
    if crlf {
        text.replace('\n', "\r\n")
    } else {
        text
    }
}

/// Asserts that more than 9 in 10 of the statements `statement` generates parse cleanly in
/// `grammar`'s language, so a property test over them cannot pass by skipping them.
pub(super) fn assert_most_parse(grammar: &Grammar, statement: impl Strategy<Value = String>) {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let (mut parsed, total) = (0, 300);
    for _ in 0..total {
        let Ok(tree) = statement.new_tree(&mut runner) else {
            continue;
        };
        parsed += usize::from(disagreements(grammar, &tree.current()).is_some());
    }
    assert!(parsed * 10 > total * 9, "only {parsed} of {total} parse");
}

/// The comments and literals `lexer` finds in `text`, as text.
pub(super) fn pieces(lexer: fn(&[u8]) -> Lexed, text: &str) -> Vec<&str> {
    lexer(text.as_bytes())
        .ranges
        .into_iter()
        .map(|range| &text[range])
        .collect()
}

/// What [`check_files`] checked.
pub(super) struct Checked {
    /// The files that parse cleanly (each checked).
    pub(super) checked: usize,
    /// Those the lexer was sure of to the end.
    pub(super) to_the_end: usize,
    /// How many of their bytes lie before where the lexer is sure.
    pub(super) sure_bytes: usize,
    /// Their bytes.
    pub(super) bytes: usize,
    /// The files that could not be read as UTF-8 text (passed over).
    pub(super) unreadable: usize,
}

/// Checks `grammar`'s lexer against its grammar on every readable file of `files` that parses
/// cleanly (see [`disagreements`]), failing on the first that disagrees, and reports on stderr
/// how much it checked.
#[allow(clippy::print_stderr, reason = "the test reports how much it checked")]
pub(super) fn check_files(grammar: &Grammar, files: &[std::path::PathBuf]) -> Checked {
    let mut found = Checked {
        checked: 0,
        to_the_end: 0,
        sure_bytes: 0,
        bytes: 0,
        unreadable: 0,
    };
    for file in files {
        let Ok(text) = std::fs::read_to_string(file) else {
            found.unreadable += 1;
            continue;
        };
        if let Some(Verdict { wrong, lexed_all }) = disagreements(grammar, &text) {
            assert!(wrong.is_empty(), "{wrong:#?} in {}", file.display());
            found.checked += 1;
            found.to_the_end += usize::from(lexed_all);
            found.sure_bytes += (grammar.lexer)(text.as_bytes()).sure_until;
            found.bytes += text.len();
        }
    }
    eprintln!(
        "{} of {} files checked, {} lexed to the end, sure of {} of their {} bytes",
        found.checked,
        files.len(),
        found.to_the_end,
        found.sure_bytes,
        found.bytes
    );
    found
}

/// Every file under `dir` whose name ends with `.{ext}`, in order (directories named in `skip`
/// left out).
pub(super) fn files_under(
    dir: &std::path::Path,
    ext: &str,
    skip: &[&str],
) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                if !skip.iter().any(|name| path.ends_with(name)) {
                    dirs.push(path);
                }
            } else if path.extension().is_some_and(|found| found == ext) {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}
