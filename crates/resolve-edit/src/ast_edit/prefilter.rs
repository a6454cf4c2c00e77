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
//! Where a node of the pattern starts with an opening bracket and ends with the closer of it
//! (a call's arguments), what lies between them is balanced, so a meta-variable there does not
//! let anything come, only text that ends before the closer balancing the opener:
//! `$X.setdefault($$$A).append($V)` needs `setdefault`, `(`, that `)`, then `append`, where
//! the chains split at the meta-variable let any text come between `setdefault` and `append`.
//! The filter searches both: the chains split wherever anything may come, and, in a language
//! whose comments and literals it can lex (a bracket in a string counts for nothing), the same
//! chains joined across their brackets (see the `chain` module).
//!
//! In Rust, Python and TypeScript, an identifier of the pattern found inside a comment or a
//! literal (see the `rust_text` module, which lexes them as rustc does, `py_text` and `ts_text`)
//! does not count either: no identifier of a match is there. That drops the files whose only
//! occurrences are in doc comments that hold a `"`, which the look at one line below cannot
//! rule out as the end of a string, in `/** … */` blocks, which it does not see, or in Python's
//! docstrings.
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

use ast_grep_core::Pattern;
use ast_grep_core::matcher::PatternNode;
use ast_grep_core::meta_var::MetaVariable;
use ast_grep_core::tree_sitter::{LanguageExt, TSLanguage};

use super::chain::{Chain, Found, Item, Occurrence, Scan, Token, are_brackets};
use super::gap_rules::GapRules;
use super::grammar::AstLang;
use super::node_ends::{ANY_NAMED_CHILD, NodeEnds};

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

/// The chains one pattern's matches contain, in order (see the module documentation).
pub(super) struct LiteralFilter {
    /// The chains split wherever anything may come, brackets left out.
    chains: Vec<Chain>,
    /// The chains again, split only where anything may come outside brackets, with the brackets
    /// of the pattern's bracketed nodes in them (see the `chain` module); searched only where
    /// the language has a lexer, and `None` when they tell no more than `chains`.
    bracketed: Option<Vec<Chain>>,
    /// Whether tokens on comment lines are left out (not when the pattern holds `//`).
    skip_comment_lines: bool,
    /// Whether the pattern starts with its first token, an identifier, and holds more: no
    /// match starts at an occurrence of it right after a qualifier (see [`GapRules`]).
    starts_with_name: bool,
}

/// The node kinds of a call's arguments, in the grammars whose commas the prefilter knows
/// (see [`GapRules`]).
const ARGUMENT_LISTS: &[&str] = &["arguments", "argument_list"];

/// One step of the walk over a pattern's leaves.
enum Leaf {
    Token(Token),
    /// Anything may come here: a meta-variable, or the end of a node of the pattern.
    Anything,
    /// The opening bracket of a node of the pattern whose last child is the closer of it.
    Open(u8),
    /// The closer of the innermost [`Leaf::Open`].
    Close,
    /// A single meta-variable that is all a call's arguments hold in the pattern: one argument.
    Argument,
    /// A meta-variable that stands for one name ending its node (the field of `a.$F`).
    Name,
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
        let chains = split_into_chains(&leaves, false);
        let bracketed = split_into_chains(&leaves, true);
        // Brackets tell more only where they join chains or hold one argument; a chain that
        // merely ends in a call's brackets is searched once, without them.
        let tells_more =
            bracketed.len() < chains.len() || bracketed.iter().any(Chain::has_argument);
        Self {
            chains,
            bracketed: tells_more.then_some(bracketed),
            skip_comment_lines: !source.contains("//"),
            starts_with_name: kinds.starts_with_name(&pattern.node),
        }
    }

    /// Where the first token occurs in `text` (every match covers one of these places), in
    /// ascending order; `None` for a pattern without tokens.
    pub(super) fn anchors(&self, text: &[u8]) -> Option<Vec<usize>> {
        let first = self.chains.first()?.first();
        Some(first.find_iter(text).collect())
    }

    /// Whether `text` may hold a match: every chain found, each after the previous one, with
    /// and (where the language has a lexer) without brackets.
    pub(super) fn may_match(&self, text: &[u8], gaps: &GapRules) -> bool {
        let scan = Scan::new(text, gaps);
        self.found_in_order(&self.chains, &scan)
            && match &self.bracketed {
                Some(chains) if scan.has_lexer() => self.found_in_order(chains, &scan),
                _ => true,
            }
    }

    /// Whether every one of `chains` is found in the text, each after the previous one's start
    /// (or the search was unsure).
    fn found_in_order(&self, chains: &[Chain], scan: &Scan) -> bool {
        let mut from = 0;
        for (index, chain) in chains.iter().enumerate() {
            let found = Occurrence {
                skip_comment_lines: self.skip_comment_lines,
                unqualified: index == 0 && self.starts_with_name,
            };
            match chain.find(scan, from, found) {
                // The chain's end is at least past its first token; the next chain starts
                // after it.
                Found::At(start) => from = start + chain.first().needle().len(),
                Found::Nowhere => return false,
                Found::Unsure => return true,
            }
        }
        true
    }
}

/// The chains of a pattern's `leaves`: split at every [`Leaf::Anything`] with brackets left
/// out, or (`bracketed`) only at those outside the brackets kept, where an [`Leaf::Anything`]
/// inside is an [`Item::Skip`]. A bracket is kept only inside a chain that has begun (a chain
/// starts with a token) and inside brackets kept.
fn split_into_chains(leaves: &[Leaf], bracketed: bool) -> Vec<Chain> {
    let mut chains = Vec::new();
    let mut current: Vec<Item> = Vec::new();
    // For each bracket open in the walk: whether it is kept.
    let mut open: Vec<bool> = Vec::new();
    let flush = |current: &mut Vec<Item>, chains: &mut Vec<Chain>| {
        chains.extend(Chain::new(std::mem::take(current)));
    };
    for leaf in leaves {
        match leaf {
            Leaf::Token(token) => current.push(Item::Token(token.clone())),
            Leaf::Open(byte) => {
                let kept = bracketed && !current.is_empty() && open.iter().all(|&kept| kept);
                open.push(kept);
                if kept {
                    current.push(Item::Open(*byte));
                }
            }
            Leaf::Close => {
                if open.pop() == Some(true) {
                    current.push(Item::Close);
                }
            }
            Leaf::Argument if open.last() == Some(&true) => current.push(Item::Argument),
            // A chain starts with a token: a name before one is anything.
            Leaf::Name if !current.is_empty() => current.push(Item::Name),
            Leaf::Anything | Leaf::Argument | Leaf::Name => {
                if open.last() == Some(&true) {
                    if !matches!(current.last(), Some(Item::Skip)) {
                        current.push(Item::Skip);
                    }
                } else {
                    flush(&mut current, &mut chains);
                }
            }
        }
    }
    flush(&mut current, &mut chains);
    chains
}

/// The opening bracket of a node whose first child is one and whose last the closer of it
/// (both unnamed tokens), and the children between them.
fn bracket_pair(children: &[PatternNode]) -> Option<(u8, &[PatternNode])> {
    let bracket = |node: &PatternNode| match node {
        PatternNode::Terminal {
            text,
            is_named: false,
            ..
        } => match text.as_bytes() {
            [byte] => Some(*byte),
            _ => None,
        },
        _ => None,
    };
    let [first, inner @ .., last] = children else {
        return None;
    };
    let (open, close) = (bracket(first)?, bracket(last)?);
    are_brackets(open, close).then_some((open, inner))
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
                if let Some(before) = self.ends_with_name(*kind_id, children) {
                    // The name ends the node: nothing may come after it.
                    for child in before {
                        self.collect_leaves(child, leaves);
                    }
                    leaves.push(Leaf::Name);
                    return;
                }
                match bracket_pair(children) {
                    Some((open, inner)) => {
                        leaves.push(Leaf::Open(open));
                        if self.is_one_argument(*kind_id, inner) {
                            leaves.push(Leaf::Argument);
                        } else {
                            for child in inner {
                                self.collect_leaves(child, leaves);
                            }
                        }
                        leaves.push(Leaf::Close);
                    }
                    None => {
                        for child in children {
                            self.collect_leaves(child, leaves);
                        }
                    }
                }
                // The source's node may have trailing children the pattern's lacks.
                if !self.closes(*kind_id, children.last()) {
                    leaves.push(Leaf::Anything);
                }
            }
        }
    }

    /// The children before the last of a node of kind `kind_id` whose last child is a single
    /// meta-variable right after a qualifier its grammar puts only a name after, ending the
    /// node (`a.$F`); `None` for any other node.
    fn ends_with_name<'p>(
        &self,
        kind_id: u16,
        children: &'p [PatternNode],
    ) -> Option<&'p [PatternNode]> {
        let [
            before @ ..,
            PatternNode::Terminal {
                text: qualifier,
                is_named: false,
                ..
            },
            PatternNode::MetaVar {
                meta_var: MetaVariable::Capture(_, true) | MetaVariable::Dropped(true),
            },
        ] = children
        else {
            return None;
        };
        let ends = self.ends.as_ref()?;
        let kind = self.grammar.node_kind_for_id(kind_id)?;
        ends.name_after(kind, qualifier)
            .then_some(&children[..before.len() + 1])
    }

    /// Whether a node of kind `kind_id` is a call's arguments and what its brackets hold,
    /// `inner`, is one meta-variable that matches one named node.
    fn is_one_argument(&self, kind_id: u16, inner: &[PatternNode]) -> bool {
        let one_named = matches!(
            inner,
            [PatternNode::MetaVar {
                meta_var: MetaVariable::Capture(_, true) | MetaVariable::Dropped(true),
            }]
        );
        one_named
            && self
                .grammar
                .node_kind_for_id(kind_id)
                .is_some_and(|kind| ARGUMENT_LISTS.contains(&kind))
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
            .map(|chain| chain.tokens().into_iter().map(text).collect())
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
        // A pattern holding `//` counts tokens on every line.
        assert!(!filter("f(\"//\", $A)", rust).skip_comment_lines);
        assert!(filter("f(\"/\", $A)", rust).skip_comment_lines);
    }

    #[test]
    fn a_meta_variable_between_brackets_ends_at_the_closer_that_balances_the_opener() {
        let pattern = "$X.foo($$$A).bar()";
        for (lang, source, matching) in [
            (
                SupportLang::Rust,
                "fn f() { x.foo(a, (b), [c]).bar(); }",
                true,
            ),
            (
                SupportLang::Rust,
                "fn f() { x.foo(\")\", ')').bar(); }",
                true,
            ),
            (
                SupportLang::Rust,
                "fn f() { x.foo(a /* ) */)\n  .bar(); }",
                true,
            ),
            (SupportLang::Rust, "fn f() { x.foo(a); y(b).bar(); }", false),
            (
                SupportLang::Rust,
                "fn f() { x.foo(a).baz(b).bar(); }",
                false,
            ),
            (
                SupportLang::Rust,
                "fn f() { x.foo(g(a)).h(b).bar(); }",
                false,
            ),
            (
                SupportLang::Python,
                "y = x.foo(\")\", [a, (b)]).bar()\n",
                true,
            ),
            (
                SupportLang::Python,
                "y = (x.foo('(',  # )\n  a)\n  .bar())\n",
                true,
            ),
            (SupportLang::Python, "y = x.foo(f\"{a(b)}\").bar()\n", true),
            (SupportLang::Python, "x.foo(a)\ny(b).bar()\n", false),
            (
                SupportLang::Python,
                "d.foo(k, []).append(v)\nz.bar()\n",
                false,
            ),
            (
                SupportLang::TypeScript,
                "x.foo(\")\", [a, (b)]).bar();\n",
                true,
            ),
            (SupportLang::TypeScript, "x.foo(`${a(')')}`).bar();\n", true),
            (SupportLang::TypeScript, "x.foo(a); y(b).bar();\n", false),
            // A regular expression may hold a bracket: past the first `/` the lexer is unsure,
            // and the text is kept.
            (SupportLang::TypeScript, "x.foo(/[(]/).bar();\n", true),
            (
                SupportLang::TypeScript,
                "s.split(/,/);\nx.foo(a); y(b).bar();\n",
                false,
            ),
        ] {
            let lang = AstLang::Builtin(lang);
            let kept = matching || source.contains("split(/");
            assert_eq!(matches(pattern, lang, source), matching, "{lang}: {source}");
            assert_eq!(keeps(pattern, lang, source), kept, "{lang}: {source}");
        }
    }

    #[test]
    fn brackets_are_kept_only_in_a_chain_that_has_begun_and_only_where_they_tell_more() {
        let rust = AstLang::Builtin(SupportLang::Rust);
        let bracketed = |pattern: &str| {
            filter(pattern, rust).bracketed.map(|chains| {
                chains
                    .iter()
                    .map(|chain| chain.tokens().len())
                    .collect::<Vec<_>>()
            })
        };
        // `foo` and `bar` in one chain, across the brackets and the meta-variable in them.
        assert_eq!(bracketed("$X.foo($$$A).bar()"), Some(vec![2]));
        assert_eq!(chains("$X.foo($$$A).bar()", rust), [["foo"], ["bar"]]);
        // The parentheses before the first token are left out, `foo`'s are kept, and tell
        // more only when they hold one argument.
        assert_eq!(bracketed("($A).foo($B)"), Some(vec![1]));
        assert_eq!(bracketed("($A).foo($$$B)"), None);
        assert_eq!(bracketed("($A)"), None);
        // A chain that only ends in a call's brackets is searched without them.
        assert_eq!(bracketed("$X.unwrap()"), None);
        assert_eq!(bracketed("$X.subscribe($$$A)"), None);
    }

    #[test]
    fn a_single_meta_variable_between_a_calls_brackets_is_one_argument() {
        let pattern = "$X.get($K)";
        for (lang, source, matching) in [
            (SupportLang::Rust, "fn f() { x.get(a); }", true),
            (SupportLang::Rust, "fn f() { x.get(a,); }", true),
            (SupportLang::Rust, "fn f() { x.get(\",\"); }", true),
            (SupportLang::Rust, "fn f() { x.get((a, b)); }", true),
            (SupportLang::Rust, "fn f() { x.get(a /* , b */); }", true),
            (SupportLang::Rust, "fn f() { x.get(|a, b| a); }", true),
            (SupportLang::Rust, "fn f() { x.get(g::<A, B>()); }", true),
            (SupportLang::Rust, "fn f() { x.get(a, b); x.get(); }", false),
            (SupportLang::Python, "d.get(a)\n", true),
            (SupportLang::Python, "d.get(',')\n", true),
            (SupportLang::Python, "d.get(a,  # c\n)\n", true),
            (SupportLang::Python, "d.get(lambda a, b: 0)\n", true),
            (
                SupportLang::Python,
                "d.get(a, b)\nd.get()\nd.get(\n)\n",
                false,
            ),
            (SupportLang::TypeScript, "x.get(a);\n", true),
            (SupportLang::TypeScript, "x.get(g<A, B>(c));\n", true),
            (SupportLang::TypeScript, "x.get((a, b) => a);\n", true),
            (SupportLang::TypeScript, "x.get(a, b); x.get();\n", false),
        ] {
            let lang = AstLang::Builtin(lang);
            assert_eq!(matches(pattern, lang, source), matching, "{lang}: {source}");
            assert_eq!(keeps(pattern, lang, source), matching, "{lang}: {source}");
        }
    }

    #[test]
    fn a_meta_variable_its_grammar_allows_only_a_name_for_is_one_word() {
        for (pattern, lang, source, matching) in [
            (
                "self.$A.append($B)",
                SupportLang::Python,
                "self.x.append(1)\n",
                true,
            ),
            (
                "self.$A.append($B)",
                SupportLang::Python,
                "y = (self\n  .x  # c\n  .append(1))\n",
                true,
            ),
            (
                "self.$A.append($B)",
                SupportLang::Python,
                "self.é.append(1)\n",
                true,
            ),
            (
                "self.$A.append($B)",
                SupportLang::Python,
                "self.x.y.append(1)\nself.append(4)\n",
                false,
            ),
            (
                "this.$A.push($B)",
                SupportLang::TypeScript,
                "this.a.push(1);\n",
                true,
            ),
            (
                "this.$A.push($B)",
                SupportLang::TypeScript,
                "this.#a.push(1);\n",
                true,
            ),
            (
                "this.$A.push($B)",
                SupportLang::TypeScript,
                "this.$a.push(1);\n",
                true,
            ),
            (
                "this.$A.push($B)",
                SupportLang::TypeScript,
                "this.a.b.push(1); this.push(2);\n",
                false,
            ),
        ] {
            let lang = AstLang::Builtin(lang);
            assert_eq!(matches(pattern, lang, source), matching, "{lang}: {source}");
            assert_eq!(keeps(pattern, lang, source), matching, "{lang}: {source}");
        }
        let python = AstLang::Builtin(SupportLang::Python);
        assert_eq!(chains("self.$A.append($B)", python), [["self", "append"]]);
    }
}
