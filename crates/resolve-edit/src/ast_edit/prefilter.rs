//! The literal prefilter: which texts may hold a match of a pattern, decided without parsing.
//!
//! A pattern's named leaves (identifiers, literals: every leaf that is not a meta-variable or
//! an unnamed token such as `::` or `(`) must appear verbatim in a match, in the pattern's
//! order: ast-grep's default ("smart") matcher compares a named leaf's text exactly and never
//! skips one. [`LiteralFilter`] keeps a text only when those tokens occur in order. Between two
//! tokens the pattern has next to each other, the matched text can hold only what the matcher
//! lets through there: comments (skipped), unnamed tokens (matched by kind, or skipped when the
//! pattern lacks them, like a trailing comma) and whitespace. So such a gap may hold only
//! whitespace, comments (in any language's syntax), characters that are not word characters
//! and the grammar's unnamed tokens (keywords such as `mut` or `as`, matched case-blind), see
//! [`GapRules`]. Where the pattern has a meta-variable between two tokens, anything may come
//! between. Where a node of the pattern ends between them, the matcher lets the source's node
//! carry trailing children the pattern lacks, so anything may come too, unless the grammar puts
//! nothing after the node's last child (the arguments of a call, the field of a field access:
//! see the `node_ends` module); then the gap is an ordinary one, and `$X.foo().bar()` needs
//! `foo` and `bar` with only `().` (and whitespace, comments) between.
//!
//! In Rust and TypeScript, an identifier of the pattern found inside a comment or a literal (see
//! the `rust_text` module, which lexes them as rustc does, and `ts_text`) does not count either:
//! no identifier of a match is there. That drops the files whose only occurrences are in doc
//! comments that hold a `"`, which the look at one line below cannot rule out as the end of a
//! string, or in `/** … */` blocks, which it does not see.
//!
//! A token found on a line that is surely a comment (see [`GapRules`]: in languages where `//`
//! always starts one, a line starting with `//` with nothing after it that could end a string or
//! a block comment the line might be inside of) is not counted, unless the pattern itself holds
//! `//`: the documentation examples of a crate name `.unwrap()` in many files that never call it.
//!
//! An identifier of the pattern (a leaf whose kind the grammar names `…identifier`) is a whole
//! token in a match: the lexer takes every word character next to it into it, so an occurrence
//! with an ASCII letter, digit or `_` right before or after it does not count (`unwrap` in
//! `unwrap_or`).
//!
//! A pattern that starts with an identifier matches only nodes that start with it, and in Rust,
//! Python, JavaScript and TypeScript no node starts at an identifier written right after a `.`
//! (not `..` or `...`), or in Rust a `::` (not `:::`): that identifier is the name part of a
//! path or a member access whose node starts earlier. So such an occurrence of the pattern's
//! first token does not count (`mem::replace($A, $B)` is not found in `std::mem::replace(a, b)`,
//! which it does not match), unless the pattern is that one identifier.
//!
//! Unnamed tokens of the pattern are not required in the text: a grammar may give them no width
//! (an inserted `;`) or a text other than their kind. [`Prefilter::Off`] turns the filter off,
//! which is how tests check it against parsing everything.

use std::cell::OnceCell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::ops::Range;

use ast_grep_core::Pattern;
use ast_grep_core::matcher::PatternNode;
use ast_grep_core::meta_var::MetaVariable;
use ast_grep_core::tree_sitter::{LanguageExt, TSLanguage};
use ast_grep_language::SupportLang;

use super::grammar::AstLang;
use super::node_ends::{ANY_NAMED_CHILD, NodeEnds};
use super::rust_text::{self, covers};
use super::ts_text;
use memchr::memmem;

/// Which files an `ast_edit` search parses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Prefilter {
    /// Only files holding some pattern's literal tokens in its order, with nothing but
    /// whitespace, comments and punctuation or keywords between tokens the pattern has next to
    /// each other (the default; it never drops a file that matches).
    #[default]
    Literals,
    /// Every file of a searched language, to check [`Prefilter::Literals`] against.
    Off,
}

/// The tokens one pattern's matches contain: chains that occur in order, each chain's tokens
/// separated only by a gap [`GapRules`] allows.
pub(super) struct LiteralFilter {
    chains: Vec<Chain>,
    /// Whether tokens on comment lines are left out (not when the pattern holds `//`).
    skip_comment_lines: bool,
    /// Whether the pattern starts with its first token, an identifier, and holds more: no
    /// match starts at an occurrence of it right after a qualifier (see [`GapRules`]).
    starts_with_name: bool,
}

/// Tokens the pattern has next to each other.
struct Chain {
    /// Finds the first of `tokens`.
    first: memmem::Finder<'static>,
    tokens: Vec<Token>,
}

/// A named leaf of the pattern, which a match holds verbatim.
struct Token {
    text: Vec<u8>,
    /// An identifier: the lexer took every word character next to it into it, so in a match no
    /// ASCII letter, digit or `_` stands right before or after it (`unwrap` is not the start
    /// of `unwrap_or`).
    whole_word: bool,
}

/// One step of the walk over a pattern's leaves.
enum Leaf {
    Token(Token),
    /// Anything may come here: a meta-variable, or the end of a node of the pattern.
    Anything,
}

impl LiteralFilter {
    /// The filter of `pattern` (written as `source`) in `lang`: its named leaves, in order,
    /// split where anything may come.
    pub(super) fn of(pattern: &Pattern, source: &str, lang: AstLang) -> Self {
        let kinds = NodeKinds {
            grammar: lang.get_ts_language(),
            ends: NodeEnds::of(&lang.to_string()),
        };
        let mut leaves = Vec::new();
        kinds.collect_leaves(&pattern.node, &mut leaves);
        let mut chains = Vec::new();
        let mut current: Vec<Token> = Vec::new();
        for leaf in leaves.into_iter().chain([Leaf::Anything]) {
            match leaf {
                Leaf::Token(token) => current.push(token),
                Leaf::Anything => {
                    let tokens = std::mem::take(&mut current);
                    if let Some(first) = tokens.first() {
                        chains.push(Chain {
                            first: memmem::Finder::new(&first.text).into_owned(),
                            tokens,
                        });
                    }
                }
            }
        }
        Self {
            chains,
            skip_comment_lines: !source.contains("//"),
            starts_with_name: kinds.starts_with_name(&pattern.node),
        }
    }

    /// Where the first token occurs in `text` (every match covers one of these places), in
    /// ascending order; `None` for a pattern without tokens.
    pub(super) fn anchors(&self, text: &[u8]) -> Option<Vec<usize>> {
        let first = &self.chains.first()?.first;
        Some(first.find_iter(text).collect())
    }

    /// Whether `text` may hold a match: every chain found, each after the previous one.
    pub(super) fn may_match(&self, text: &[u8], gaps: &GapRules) -> bool {
        let literals = Literals {
            lex: gaps.literals,
            found: OnceCell::new(),
        };
        let mut from = 0;
        for (index, chain) in self.chains.iter().enumerate() {
            let found = Occurrence {
                skip_comment_lines: self.skip_comment_lines,
                unqualified: index == 0 && self.starts_with_name,
            };
            let Some(start) = chain.find(text, from, gaps, found, &literals) else {
                return false;
            };
            // The chain's end is at least past its first token; the next chain starts after it.
            from = start + chain.first.needle().len();
        }
        true
    }
}

/// Which occurrences of a chain's first token count.
#[derive(Clone, Copy)]
struct Occurrence {
    /// Not those on a comment line.
    skip_comment_lines: bool,
    /// Not those right after a qualifier (`.`, `::`).
    unqualified: bool,
}

impl Occurrence {
    /// Whether the occurrence of a first token at `at` in `text` counts.
    fn counts(self, text: &[u8], at: usize, gaps: &GapRules) -> bool {
        let on_comment_line = self.skip_comment_lines && gaps.on_comment_line(text, at);
        let qualified = self.unqualified && gaps.qualified(text, at);
        !on_comment_line && !qualified
    }
}

/// What finds a text's comments and literals (see the `rust_text` and `ts_text` modules).
type Lexer = fn(&[u8]) -> Vec<Range<usize>>;

/// A text's comments and literals, in a language whose lexer the prefilter has (Rust,
/// TypeScript), lexed the first time they are asked about.
struct Literals {
    lex: Option<Lexer>,
    found: OnceCell<Vec<Range<usize>>>,
}

impl Literals {
    /// Whether `at` is inside a comment or a literal of `text` (never, without a lexer).
    fn hold(&self, text: &[u8], at: usize) -> bool {
        self.lex
            .is_some_and(|lex| covers(self.found.get_or_init(|| lex(text)), at))
    }
}

impl Chain {
    /// The first start at or after `from` where the whole chain follows, its first token
    /// occurring as `found` says; an identifier there counts only outside `literals` (no
    /// identifier of a match is in a comment or a literal).
    fn find(
        &self,
        text: &[u8],
        from: usize,
        gaps: &GapRules,
        found: Occurrence,
        literals: &Literals,
    ) -> Option<usize> {
        let haystack = text.get(from..)?;
        let first = self.tokens.first()?;
        self.first
            .find_iter(haystack)
            .map(|at| from + at)
            .find(|&start| {
                found.counts(text, start, gaps)
                    && first.stands_alone(text, start)
                    && follows(
                        text,
                        start + self.first.needle().len(),
                        self.tokens.get(1..).unwrap_or_default(),
                        gaps,
                    )
                    && !(first.whole_word && literals.hold(text, start))
            })
    }
}

impl Token {
    /// Whether the occurrence of the token at `at` in `text` may be the whole token (always,
    /// unless it is an identifier with a word character of the text right next to it).
    fn stands_alone(&self, text: &[u8], at: usize) -> bool {
        if !self.whole_word {
            return true;
        }
        let before = at.checked_sub(1).and_then(|index| text.get(index));
        let after = text.get(at + self.text.len());
        let joined = |edge: Option<&u8>, neighbor: Option<&u8>| {
            edge.is_some_and(|byte| is_ascii_word_byte(*byte))
                && neighbor.is_some_and(|byte| is_ascii_word_byte(*byte))
        };
        !joined(self.text.first(), before) && !joined(self.text.last(), after)
    }
}

/// Whether `tokens` follow from `pos` on, each after a gap the rules allow.
fn follows(text: &[u8], pos: usize, tokens: &[Token], gaps: &GapRules) -> bool {
    let Some((next, after)) = tokens.split_first() else {
        return true;
    };
    // Positions the gap can reach, smallest first; every step moves forward.
    let mut reachable = BinaryHeap::from([Reverse(pos)]);
    let mut last = None;
    while let Some(Reverse(at)) = reachable.pop() {
        if last == Some(at) {
            continue;
        }
        last = Some(at);
        let rest = &text[at..];
        if rest.starts_with(&next.text)
            && next.stands_alone(text, at)
            && follows(text, at + next.text.len(), after, gaps)
        {
            return true;
        }
        gaps.steps(text, at, |to| reachable.push(Reverse(to)));
    }
    false
}

/// What the walk over a pattern needs of its grammar: kind names, and which children end a node.
struct NodeKinds {
    grammar: TSLanguage,
    /// `None` for a language without a table: every node may carry trailing children.
    ends: Option<NodeEnds>,
}

impl NodeKinds {
    /// Walk the pattern's leaves in order: named leaves are tokens, unnamed ones are skipped, a
    /// meta-variable, or the end of an inner node that may have more children, allows anything.
    fn collect_leaves(&self, node: &PatternNode, leaves: &mut Vec<Leaf>) {
        match node {
            PatternNode::MetaVar { .. } => leaves.push(Leaf::Anything),
            PatternNode::Terminal {
                text,
                is_named,
                kind_id,
            } => {
                if *is_named && !text.is_empty() {
                    // Grammars name their identifier tokens `*identifier`; other leaves (a
                    // string's text next to an escape) may have word characters beside them.
                    let whole_word = self
                        .grammar
                        .node_kind_for_id(*kind_id)
                        .is_some_and(|kind| kind.ends_with("identifier"));
                    leaves.push(Leaf::Token(Token {
                        text: text.as_bytes().to_vec(),
                        whole_word,
                    }));
                }
            }
            PatternNode::Internal { kind_id, children } => {
                for child in children {
                    self.collect_leaves(child, leaves);
                }
                // The source's node may have trailing children the pattern's lacks.
                if !self.closes(*kind_id, children.last()) {
                    leaves.push(Leaf::Anything);
                }
            }
        }
    }

    /// Whether `pattern` starts with an identifier and holds more than that one leaf.
    fn starts_with_name(&self, pattern: &PatternNode) -> bool {
        let mut first = pattern;
        while let PatternNode::Internal { children, .. } = first {
            let Some(child) = children.first() else {
                return false;
            };
            first = child;
        }
        let PatternNode::Terminal {
            is_named: true,
            kind_id,
            ..
        } = first
        else {
            return false;
        };
        matches!(pattern, PatternNode::Internal { .. })
            && self
                .grammar
                .node_kind_for_id(*kind_id)
                .is_some_and(|kind| kind.ends_with("identifier"))
    }

    /// Whether a source node of kind `kind_id` whose children match up to `last` (the pattern
    /// node's last child) can have no child after it.
    fn closes(&self, kind_id: u16, last: Option<&PatternNode>) -> bool {
        let (Some(ends), Some(kind)) = (&self.ends, self.grammar.node_kind_for_id(kind_id)) else {
            return false;
        };
        let last = match last {
            Some(PatternNode::Terminal { kind_id, .. } | PatternNode::Internal { kind_id, .. }) => {
                self.grammar.node_kind_for_id(*kind_id)
            }
            // A single meta-variable that only matches named nodes; `$$A` and `$$$` may match
            // unnamed ones, or several nodes.
            Some(PatternNode::MetaVar {
                meta_var: MetaVariable::Capture(_, true) | MetaVariable::Dropped(true),
            }) => Some(ANY_NAMED_CHILD),
            _ => None,
        };
        last.is_some_and(|last| ends.closes(kind, last))
    }
}

/// What the prefilter knows of one language's text: what a gap between two adjacent tokens
/// may hold (whitespace, comments, non-word characters and the grammar's unnamed tokens), and
/// which lines are surely comments.
pub(super) struct GapRules {
    /// The grammar's unnamed tokens that hold a word character, lowercased, by first byte.
    keywords: Vec<Vec<Vec<u8>>>,
    /// In a language where `//` always starts a comment, the bytes that may end a string (or an
    /// interpolation in one) spanning lines: a line starting with `//` and holding none of these
    /// (nor `*/`) before a position is a comment there.
    comment_line_breakers: Option<&'static [u8]>,
    /// The lexer of the language's comments and literals, where the prefilter has one.
    literals: Option<Lexer>,
    /// What, written right before an identifier, makes it the name part of a path or a member
    /// access: a node that starts earlier, so none but the identifier starts at it. Empty
    /// where that is not known of the language.
    qualifiers: &'static [&'static [u8]],
}

/// Rust strings end with `"` (raw ones with `"#`); there is no interpolation.
const RUST_STRING_ENDS: &[u8] = b"\"";
/// Quotes of any kind, and what starts or ends an interpolation or an escaped line end.
const C_FAMILY_STRING_ENDS: &[u8] = b"\"'`$\\{}";

/// Rust's path separator and field access.
const RUST_QUALIFIERS: &[&[u8]] = &[b"::", b"."];
/// Member access (an attribute in Python).
const MEMBER_ACCESS: &[&[u8]] = &[b"."];

/// Line comments of the languages searched (any of them is allowed in any language: more
/// allowed in a gap keeps more files, never fewer).
const LINE_COMMENTS: &[&[u8]] = &[b"//", b"#", b"--", b"\\*"];

/// Block comments: opener and closer. Nesting ones end at their first closer or at the one that
/// balances them, whichever the language means.
const BLOCK_COMMENTS: &[(&[u8], &[u8])] = &[
    (b"/*", b"*/"),
    (b"{-", b"-}"),
    (b"<!--", b"-->"),
    (b"=begin", b"=end"),
    (b"--[[", b"]]"),
    (b"--[=[", b"]=]"),
    (b"--[==[", b"]==]"),
    (b"(*", b"*)"),
];

impl GapRules {
    /// The rules of `lang`, from its grammar's unnamed node kinds.
    pub(super) fn of(lang: AstLang) -> Self {
        let grammar = lang.get_ts_language();
        let mut keywords = vec![Vec::new(); 256];
        for id in 0..grammar.node_kind_count() {
            let Ok(id) = u16::try_from(id) else { break };
            if grammar.node_kind_is_named(id) || !grammar.node_kind_is_visible(id) {
                continue;
            }
            let Some(kind) = grammar.node_kind_for_id(id) else {
                continue;
            };
            let kind = kind.to_ascii_lowercase().into_bytes();
            if kind.iter().any(|&byte| is_word_byte(byte))
                && let Some(&first) = kind.first()
            {
                let slot: &mut Vec<Vec<u8>> = &mut keywords[usize::from(first)];
                if !slot.contains(&kind) {
                    slot.push(kind);
                }
            }
        }
        let comment_line_breakers = match lang {
            AstLang::Builtin(SupportLang::Rust) => Some(RUST_STRING_ENDS),
            AstLang::Builtin(SupportLang::C)
            | AstLang::Builtin(SupportLang::Cpp)
            | AstLang::Builtin(SupportLang::CSharp)
            | AstLang::Builtin(SupportLang::Dart)
            | AstLang::Builtin(SupportLang::Go)
            | AstLang::Builtin(SupportLang::Java)
            | AstLang::Builtin(SupportLang::Kotlin)
            | AstLang::Builtin(SupportLang::Scala)
            | AstLang::Builtin(SupportLang::Solidity)
            | AstLang::Builtin(SupportLang::Swift)
            | AstLang::Builtin(SupportLang::TypeScript)
            | AstLang::Builtin(SupportLang::Zig) => Some(C_FAMILY_STRING_ENDS),
            // `//` is an operator (Python, Nix), a regular expression (Ruby) or text (JSX,
            // PHP's HTML) there, or the language has no `//` comments.
            _ => None,
        };
        let qualifiers = match lang {
            AstLang::Builtin(SupportLang::Rust) => RUST_QUALIFIERS,
            AstLang::Builtin(
                SupportLang::Python
                | SupportLang::JavaScript
                | SupportLang::TypeScript
                | SupportLang::Tsx,
            ) => MEMBER_ACCESS,
            _ => &[],
        };
        let literals: Option<Lexer> = match lang {
            AstLang::Builtin(SupportLang::Rust) => Some(rust_text::comments_and_literals),
            // Not JavaScript or TSX: a quote in JSX text starts no string.
            AstLang::Builtin(SupportLang::TypeScript) => Some(ts_text::comments_and_literals),
            _ => None,
        };
        Self {
            keywords,
            comment_line_breakers,
            literals,
            qualifiers,
        }
    }

    /// Whether the token at `at` comes right after a qualifier that is not the end of a longer
    /// run of its last character (`.` but not `..` or `...`, `::` but not `:::`).
    fn qualified(&self, text: &[u8], at: usize) -> bool {
        let before = &text[..at];
        self.qualifiers.iter().any(|qualifier| {
            before.strip_suffix(*qualifier).is_some_and(|rest| {
                qualifier
                    .last()
                    .is_none_or(|last| rest.last() != Some(last))
            })
        })
    }

    /// Whether the text at `at` is surely inside a `//` comment that starts its line.
    fn on_comment_line(&self, text: &[u8], at: usize) -> bool {
        let Some(breakers) = self.comment_line_breakers else {
            return false;
        };
        let line_start = memchr::memrchr(b'\n', &text[..at]).map_or(0, |newline| newline + 1);
        let Some(comment) = text[line_start..at].trim_ascii_start().strip_prefix(b"//") else {
            return false;
        };
        !comment.iter().any(|byte| breakers.contains(byte))
            && memmem::find(comment, b"*/").is_none()
    }

    /// Call `to` with every position one gap item starting at `at` ends at (each past `at`).
    fn steps(&self, text: &[u8], at: usize, mut to: impl FnMut(usize)) {
        let rest = &text[at..];
        let Some(&byte) = rest.first() else { return };
        for opener in LINE_COMMENTS {
            if rest.starts_with(opener) {
                to(memchr::memchr(b'\n', rest).map_or(text.len(), |end| at + end + 1));
            }
        }
        for (opener, closer) in BLOCK_COMMENTS {
            if rest.starts_with(opener) {
                block_comment_ends(rest, opener, closer, |end| to(at + end));
            }
        }
        if byte.is_ascii() {
            if !is_word_byte(byte) {
                to(at + 1);
            }
        } else if let Some(ch) = first_char(rest)
            && !ch.is_alphanumeric()
        {
            // Unicode whitespace, a byte-order mark, symbols.
            to(at + ch.len_utf8());
        }
        for keyword in &self.keywords[usize::from(byte.to_ascii_lowercase())] {
            if rest.len() >= keyword.len() && rest[..keyword.len()].eq_ignore_ascii_case(keyword) {
                to(at + keyword.len());
            }
        }
    }
}

/// Where a block comment at the start of `text` may end: after its first closer, and after the
/// closer that balances nested openers.
fn block_comment_ends(text: &[u8], opener: &[u8], closer: &[u8], mut to: impl FnMut(usize)) {
    let Some(first) = memmem::find(&text[opener.len()..], closer) else {
        return;
    };
    to(opener.len() + first + closer.len());
    let mut depth = 1usize;
    let mut at = opener.len();
    while at < text.len() {
        if text[at..].starts_with(closer) {
            depth -= 1;
            at += closer.len();
            if depth == 0 {
                to(at);
                return;
            }
        } else if text[at..].starts_with(opener) {
            depth += 1;
            at += opener.len();
        } else {
            at += 1;
        }
    }
}

fn first_char(bytes: &[u8]) -> Option<char> {
    let prefix = &bytes[..bytes.len().min(4)];
    let valid = match std::str::from_utf8(prefix) {
        Ok(text) => text,
        Err(error) => std::str::from_utf8(&prefix[..error.valid_up_to()]).ok()?,
    };
    valid.chars().next()
}

fn is_word_byte(byte: u8) -> bool {
    is_ascii_word_byte(byte) || !byte.is_ascii()
}

/// An ASCII letter, digit or `_`: what every grammar's identifiers take in.
fn is_ascii_word_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_'
}

#[cfg(test)]
mod tests {
    use ast_grep_core::tree_sitter::StrDoc;
    use ast_grep_core::{AstGrep, Pattern};
    use ast_grep_language::SupportLang;

    use super::*;

    fn filter(pattern: &str, lang: AstLang) -> LiteralFilter {
        LiteralFilter::of(&Pattern::try_new(pattern, lang).unwrap(), pattern, lang)
    }

    /// The chains of tokens, as text.
    fn chains(pattern: &str, lang: AstLang) -> Vec<Vec<String>> {
        let text = |bytes: &[u8]| String::from_utf8(bytes.to_vec()).unwrap();
        filter(pattern, lang)
            .chains
            .iter()
            .map(|chain| chain.tokens.iter().map(|token| text(&token.text)).collect())
            .collect()
    }

    fn keeps(pattern: &str, lang: AstLang, source: &str) -> bool {
        filter(pattern, lang).may_match(source.as_bytes(), &GapRules::of(lang))
    }

    fn matches(pattern: &str, lang: AstLang, source: &str) -> bool {
        let root = AstGrep::<StrDoc<AstLang>>::try_new(source, lang).unwrap();
        let pattern = Pattern::try_new(pattern, lang).unwrap();
        root.root().find_all(&pattern).next().is_some()
    }

    #[test]
    fn named_leaves_are_tokens_and_meta_variables_or_open_node_ends_split_chains() {
        let rust = AstLang::Builtin(SupportLang::Rust);
        assert_eq!(chains("mem::replace($A, $B)", rust), [["mem", "replace"]]);
        assert_eq!(chains("Poll::Ready($V)", rust), [["Poll", "Ready"]]);
        assert_eq!(chains("$X.unwrap()", rust), [["unwrap"]]);
        assert_eq!(chains("foo($A, 1)", rust), [["foo"], ["1"]]);
        assert!(chains("$A", rust).is_empty());
        // A path's last segment may be followed by more (`mem` of `mem::replace`).
        assert_eq!(
            chains("Foo::bar.baz", rust),
            [vec!["Foo", "bar"], vec!["baz"]]
        );
        // `let` may carry a type or an `else` the pattern lacks.
        assert_eq!(chains("let a = b", rust), [vec!["a", "b"]]);
    }

    #[test]
    fn a_node_that_ends_where_its_grammar_allows_nothing_more_does_not_split_a_chain() {
        // A field access ends at its field, a call at its arguments: nothing of the source can
        // come after them inside the node, so `foo` and `bar` are one chain.
        for lang in [
            SupportLang::Rust,
            SupportLang::Python,
            SupportLang::TypeScript,
        ] {
            let lang = AstLang::Builtin(lang);
            assert_eq!(chains("$X.foo().bar()", lang), [["foo", "bar"]], "{lang}");
            assert_eq!(chains("a.b.c", lang), [["a", "b", "c"]], "{lang}");
            // `$$$A` may stand for several nodes, and is followed by `)` anyway.
            assert_eq!(
                chains("$X.foo($$$A).bar()", lang),
                [["foo"], ["bar"]],
                "{lang}"
            );
        }
    }

    #[test]
    fn a_pattern_starting_with_a_name_is_not_found_right_after_a_qualifier() {
        let rust = AstLang::Builtin(SupportLang::Rust);
        let python = AstLang::Builtin(SupportLang::Python);
        let typescript = AstLang::Builtin(SupportLang::TypeScript);
        for (pattern, lang, source, matching) in [
            (
                "mem::replace($A, $B)",
                rust,
                "fn f() { std::mem::replace(a, b); }",
                false,
            ),
            (
                "mem::replace($A, $B)",
                rust,
                "fn f() { mem::replace(a, b); }",
                true,
            ),
            // A range's `..` is not a qualifier.
            (
                "mem::replace($A, $B)",
                rust,
                "fn f() { let r = ..mem::replace(a, b); }",
                true,
            ),
            (
                "Poll::Ready($V)",
                rust,
                "fn f() { task::Poll::Ready(v) }",
                false,
            ),
            ("foo($A)", rust, "fn f() { x.foo(1); }", false),
            ("foo.bar($A)", python, "y = a.foo.bar(1)\n", false),
            ("foo.bar($A)", python, "y = 1.\nfoo.bar(1)\n", true),
            ("foo.bar($A)", typescript, "this.foo.bar(1);\n", false),
            ("foo.bar($A)", typescript, "a?.foo.bar(1);\n", false),
            // A spread's `...` is not a qualifier.
            ("foo.bar($A)", typescript, "f(...foo.bar(1));\n", true),
            // A pattern that is the one identifier matches it anywhere.
            ("replace", rust, "fn f() { std::mem::replace(a, b); }", true),
            // A pattern that starts with `::` holds it.
            (
                "::std::mem::take($A)",
                rust,
                "fn f() { ::std::mem::take(a); }",
                true,
            ),
        ] {
            assert_eq!(
                matches(pattern, lang, source),
                matching,
                "{pattern} in {source}"
            );
            assert_eq!(
                keeps(pattern, lang, source),
                matching,
                "{pattern} in {source}"
            );
        }
    }

    #[test]
    fn method_chains_across_lines_and_comments_are_kept_and_other_calls_dropped() {
        let pattern = "$X.foo().bar()";
        for (lang, source, matching) in [
            (SupportLang::Rust, "fn f() { x.foo().bar(); }", true),
            (
                SupportLang::Rust,
                "fn f() {
    x
        .foo()
        // why
        .bar();
}",
                true,
            ),
            (
                SupportLang::Rust,
                "fn f() { x.foo() /* c */ . /* d */ bar(); }",
                true,
            ),
            (SupportLang::Rust, "fn f() { x.foo().bar().baz(); }", true),
            (
                SupportLang::Rust,
                "fn f() { x.foo();
    y.bar(); }",
                false,
            ),
            (SupportLang::Rust, "fn f() { x.foo(1).bar(); }", false),
            (SupportLang::Rust, "fn f() { x.foo().baz().bar(); }", false),
            (SupportLang::Rust, "fn f() { foo(); x.bar(); }", false),
            (
                SupportLang::Python,
                "y = (x
    .foo()  # why
    .bar())
",
                true,
            ),
            (
                SupportLang::Python,
                "y = x.foo() \
  .bar()
",
                true,
            ),
            (
                SupportLang::Python,
                "x.foo()
y.bar()
",
                false,
            ),
            (
                SupportLang::Python,
                "x.foo(a).bar()
",
                false,
            ),
            (
                SupportLang::TypeScript,
                "x
  .foo() // why
  .bar();
",
                true,
            ),
            (
                SupportLang::TypeScript,
                "x.foo() /* c */ .bar();
",
                true,
            ),
            (
                SupportLang::TypeScript,
                "x.foo();
y.bar();
",
                false,
            ),
            (
                SupportLang::TypeScript,
                "x.foo().then(y).bar();
",
                false,
            ),
        ] {
            let lang = AstLang::Builtin(lang);
            assert_eq!(matches(pattern, lang, source), matching, "{lang}: {source}");
            assert_eq!(keeps(pattern, lang, source), matching, "{lang}: {source}");
        }
    }

    #[test]
    fn adjacent_tokens_allow_whitespace_comments_punctuation_and_keywords_between() {
        let rust = AstLang::Builtin(SupportLang::Rust);
        for source in [
            "mem::replace(a, b)",
            "mem\n    ::\n    replace(a, b)",
            "mem /* a comment with words */ :: // and another\n replace(a, b)",
            "mem /* nested /* comment */ words */ :: replace(a, b)",
        ] {
            assert!(keeps("mem::replace($A, $B)", rust, source), "{source}");
            assert!(matches("mem::replace($A, $B)", rust, source), "{source}");
        }
        assert!(keeps("$A as u32", rust, "x as /* c */ u32"));
    }

    #[test]
    fn tokens_out_of_order_or_apart_are_dropped() {
        let rust = AstLang::Builtin(SupportLang::Rust);
        for source in [
            "use std::mem;\nfn f() { s.replace(1, 2) }",
            "fn f() { replace(mem, 1) }",
            "fn f() { mem::other::replace(a, b) }",
            "fn f() { let mem = 1; }",
        ] {
            assert!(!keeps("mem::replace($A, $B)", rust, source), "{source}");
            assert!(!matches("mem::replace($A, $B)", rust, source), "{source}");
        }
    }

    #[test]
    fn skipped_unnamed_tokens_and_trailing_children_are_kept() {
        // A trailing comma the pattern lacks, and a Python line continuation.
        for (pattern, lang, source) in [
            (
                "foo(a, b)",
                AstLang::Builtin(SupportLang::Rust),
                "fn f() { foo(a, b,) }",
            ),
            (
                "foo(a, b)",
                AstLang::Builtin(SupportLang::TypeScript),
                "foo(a,\n  b,\n)",
            ),
            (
                "x = foo.bar",
                AstLang::Builtin(SupportLang::Python),
                "x = foo \\\n  .bar\n",
            ),
            (
                "Foo { a: 1 }",
                AstLang::Builtin(SupportLang::Rust),
                "fn f() { Foo { a: 1, } }",
            ),
            // An `if` may carry an `else` after its block: the gap before `z` is open.
            (
                "foo(if $C { 1 }, z)",
                AstLang::Builtin(SupportLang::Rust),
                "fn f() { foo(if c { 1 } else { 2 }, z); }",
            ),
        ] {
            assert!(matches(pattern, lang, source), "{pattern} in {source}");
            assert!(keeps(pattern, lang, source), "{pattern} in {source}");
        }
    }

    #[test]
    fn an_identifier_counts_only_as_a_whole_word() {
        let rust = AstLang::Builtin(SupportLang::Rust);
        for (source, matching) in [
            ("fn f() { x.unwrap(); }", true),
            ("fn f() { x.unwrap_or(1); y.try_unwrap(); }", false),
            ("fn f() { let unwrapped = x.unwrap2(); }", false),
        ] {
            assert_eq!(matches("$X.unwrap()", rust, source), matching, "{source}");
            assert_eq!(keeps("$X.unwrap()", rust, source), matching, "{source}");
        }
        // A string's text may have word characters next to it (an escape): not a whole word.
        let typescript = AstLang::Builtin(SupportLang::TypeScript);
        let source = "foo(\"a\\nb\");\n";
        assert!(matches("foo(\"a\\nb\")", typescript, source));
        assert!(keeps("foo(\"a\\nb\")", typescript, source));
    }

    #[test]
    fn a_later_chain_must_follow_an_earlier_one() {
        let rust = AstLang::Builtin(SupportLang::Rust);
        assert!(keeps("foo($A, 1)", rust, "foo(x, 1)"));
        assert!(!keeps("foo($A, 1)", rust, "let a = 1; foo(x, y)"));
    }

    #[test]
    fn a_token_on_a_comment_line_does_not_count() {
        let rust = AstLang::Builtin(SupportLang::Rust);
        for source in [
            "/// let a = b.unwrap();\nfn f() {}\n",
            "fn f() {\n    // b.unwrap() would panic\n}\n",
            "fn f() {\n    /* a\n    // b.unwrap() */\n}\n",
        ] {
            assert!(!matches("$X.unwrap()", rust, source), "{source}");
            assert!(!keeps("$X.unwrap()", rust, source), "{source}");
        }
        // The same line is code after a string or a block comment ends on it.
        for source in [
            "fn f() { let s = \"a\n// \"; b.unwrap(); }",
            "fn f() { /* a\n// b */ c.unwrap(); }",
        ] {
            assert!(matches("$X.unwrap()", rust, source), "{source}");
            assert!(keeps("$X.unwrap()", rust, source), "{source}");
        }
        // `//` is floor division in Python; a pattern holding `//` counts every line.
        let python = "x = (a\n    // b.unwrap())\n";
        assert!(matches(
            "$X.unwrap()",
            AstLang::Builtin(SupportLang::Python),
            python
        ));
        assert!(keeps(
            "$X.unwrap()",
            AstLang::Builtin(SupportLang::Python),
            python
        ));
        let template = "const s = `a\n// ${b.unwrap()}`;\n";
        assert!(matches(
            "$X.unwrap()",
            AstLang::Builtin(SupportLang::TypeScript),
            template
        ));
        assert!(keeps(
            "$X.unwrap()",
            AstLang::Builtin(SupportLang::TypeScript),
            template
        ));
        let quoted = "fn f() {\n    // f(\"//\", a)\n}";
        assert!(keeps("f(\"//\", $A)", rust, quoted));
    }

    #[test]
    fn block_comments_end_at_their_first_closer_or_the_balancing_one() {
        let mut ends = Vec::new();
        block_comment_ends(b"/* a /* b */ c */ d", b"/*", b"*/", |end| ends.push(end));
        assert_eq!(ends, [12, 17]);
        ends.clear();
        block_comment_ends(b"/* never closed", b"/*", b"*/", |end| ends.push(end));
        assert!(ends.is_empty());
    }
}
