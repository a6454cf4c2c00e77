//! Which children end a node: for each node kind of a grammar, the kinds of child after which
//! the grammar puts nothing more inside that node.
//!
//! ast-grep's default matcher lets a node of the source carry trailing children its pattern
//! lacks, so after the last child of a pattern node the prefilter has to allow anything, unless
//! that child is one the grammar never lets anything follow (the arguments of a Rust call, the
//! field of a field access): then only what may stand between any two tokens can come there.
//! The table (`node_ends.json`) is derived from the grammars' own `grammar.json` by
//! `scripts/node_ends.py`, which CI runs to check it; a kind missing from it ends nothing.

use std::collections::HashMap;

/// Every language's table, one line each (`"Rust":{...},`), keyed by the language's display
/// name.
const TABLES: &str = include_str!("node_ends.json");

/// The end that stands for any named child: no named child of the kind is ever followed, so a
/// meta-variable (which matches one named node) may end it.
pub(super) const ANY_NAMED_CHILD: &str = "$";

/// One language's table: node kind → the child kinds that end it.
pub(super) struct NodeEnds {
    by_kind: HashMap<String, Vec<String>>,
}

impl NodeEnds {
    /// The table of the language displayed as `lang`; `None` when there is none.
    pub(super) fn of(lang: &str) -> Option<Self> {
        // Only the asked language's line is parsed (the whole file is 230 KB of JSON, and
        // scanning it all cost a pattern's compilation more than the rest).
        let key = format!("{}:", serde_json::to_string(lang).ok()?);
        let table = TABLES
            .lines()
            .find_map(|line| line.strip_prefix(key.as_str()))?;
        let by_kind = serde_json::from_str(table.strip_suffix(',').unwrap_or(table)).ok()?;
        Some(Self { by_kind })
    }

    /// Whether a node of `kind` holds nothing after a child of kind `last` (or, for
    /// [`ANY_NAMED_CHILD`], after any named child).
    pub(super) fn closes(&self, kind: &str, last: &str) -> bool {
        self.by_kind
            .get(kind)
            .is_some_and(|ends| ends.iter().any(|end| end == last))
    }

    /// Whether what comes right after the token `qualifier` in a node of `kind` is always one
    /// name (an identifier or an integer token) that ends the node: the field of `a.b`.
    pub(super) fn name_after(&self, kind: &str, qualifier: &str) -> bool {
        self.by_kind.get(kind).is_some_and(|ends| {
            ends.iter()
                .any(|end| end.strip_prefix(NAME_AFTER) == Some(qualifier))
        })
    }
}

/// The prefix of the entries that say a name comes after a qualifier (`$name.`).
const NAME_AFTER: &str = "$name";

#[cfg(test)]
mod tests {
    use ast_grep_language::SupportLang;

    use super::*;
    use crate::ast_edit::grammar::AstLang;

    #[test]
    fn every_language_has_a_table() {
        let mut langs: Vec<AstLang> = SupportLang::all_langs()
            .iter()
            .copied()
            .map(AstLang::Builtin)
            .collect();
        langs.push(AstLang::Tla);
        for lang in langs {
            assert!(NodeEnds::of(&lang.to_string()).is_some(), "{lang}");
        }
    }

    #[test]
    fn calls_and_field_accesses_end_where_their_grammars_say() {
        let rust = NodeEnds::of("Rust").unwrap();
        assert!(rust.closes("call_expression", "arguments"));
        assert!(rust.closes("field_expression", "field_identifier"));
        assert!(rust.closes("arguments", ")"));
        // `a.b` may be the start of `a.b.c`, and `mem` of `mem::replace`.
        assert!(!rust.closes("call_expression", "field_expression"));
        assert!(!rust.closes("scoped_identifier", "identifier"));
        assert!(!rust.closes("no_such_kind", "arguments"));
        let python = NodeEnds::of("Python").unwrap();
        assert!(python.closes("call", "argument_list"));
        assert!(python.closes("attribute", "identifier"));
        assert!(python.name_after("attribute", "."));
        assert!(!python.name_after("call", "."));
        let typescript = NodeEnds::of("TypeScript").unwrap();
        assert!(typescript.closes("call_expression", "arguments"));
        assert!(typescript.closes("member_expression", "property_identifier"));
        assert!(typescript.name_after("member_expression", "."));
        assert!(typescript.name_after("member_expression", "?."));
        // A tuple field (`x.0`) is an integer literal, which may also start `0.foo()`.
        assert!(!rust.name_after("field_expression", "."));
        assert!(NodeEnds::of("Klingon").is_none());
    }
}
