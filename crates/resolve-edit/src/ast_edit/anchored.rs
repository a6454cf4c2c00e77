//! Finding a pattern's matches in a parsed file without visiting every node: a match contains
//! the pattern's first literal token, so only nodes whose bytes cover a place where that token
//! occurs in the text (an anchor) can match, and a subtree covering no anchor is skipped whole.
//! [`find_anchored`] gives the same matches, in the same (pre-)order, as ast-grep's `find_all`.

use super::grammar::AstLang;
use ast_grep_core::matcher::MatcherExt;
use ast_grep_core::tree_sitter::StrDoc;
use ast_grep_core::{Matcher, Node, NodeMatch, Pattern};

/// A node of a parsed file.
type FileNode<'t> = Node<'t, StrDoc<AstLang>>;

/// The matches of `pattern` under `top` (itself included), in pre-order, visiting only nodes
/// that cover one of `anchors` (byte offsets, ascending) where every match holds one.
pub(super) fn find_anchored<'t>(
    top: &FileNode<'t>,
    pattern: &Pattern,
    anchors: &[usize],
) -> Vec<NodeMatch<'t, StrDoc<AstLang>>> {
    let kinds = pattern.potential_kinds();
    let covers_anchor = |node: &FileNode<'t>| {
        let range = node.range();
        let first = anchors.partition_point(|&anchor| anchor < range.start);
        anchors.get(first).is_some_and(|&anchor| anchor < range.end)
    };
    let mut found = Vec::new();
    // Nodes still to visit, the next one last.
    let mut pending = vec![top.clone()];
    while let Some(node) = pending.pop() {
        if !covers_anchor(&node) {
            continue;
        }
        let kind_may_match = kinds
            .as_ref()
            .is_none_or(|kinds| kinds.contains(node.kind_id().into()));
        let children_from = pending.len();
        pending.extend(node.children());
        pending[children_from..].reverse();
        if kind_may_match && let Some(matched) = pattern.match_node(node) {
            found.push(matched);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use ast_grep_core::AstGrep;
    use ast_grep_language::SupportLang;

    use super::*;

    fn ranges(source: &str, pattern: &str, anchored: bool) -> Vec<std::ops::Range<usize>> {
        let lang = AstLang::Builtin(SupportLang::Rust);
        let root = AstGrep::<StrDoc<AstLang>>::try_new(source, lang).unwrap();
        let pattern = Pattern::try_new(pattern, lang).unwrap();
        let top = root.root();
        if anchored {
            let anchors: Vec<usize> = source.match_indices("foo").map(|(at, _)| at).collect();
            find_anchored(&top, &pattern, &anchors)
                .iter()
                .map(|found| found.range())
                .collect()
        } else {
            top.find_all(&pattern).map(|found| found.range()).collect()
        }
    }

    #[test]
    fn anchored_search_finds_what_find_all_finds_in_the_same_order() {
        let source = "fn a() { foo(foo(1)); bar(2); }\n// foo(3)\nfn b() { x.foo(foo(foo(4))) }\n";
        for pattern in ["foo($A)", "$X.foo($A)", "fn $F() { $$$B }"] {
            let everything = ranges(source, pattern, false);
            assert_eq!(ranges(source, pattern, true), everything, "{pattern}");
        }
        assert_eq!(ranges(source, "foo($A)", true).len(), 4);
    }
}
