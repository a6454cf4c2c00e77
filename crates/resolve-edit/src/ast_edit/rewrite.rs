//! Per-file work: a first look at one file that settles most files unparsed ([`screen_file`]:
//! unreadable, binary, or none of its patterns' literal tokens), then for the rest: read it
//! again, rewrite its text with the ops compiled for its language ([`rewrite_source`]:
//! outermost matches only, overlapping edits of two ops refused, bytes outside the edits
//! kept), and store the new text and diff of a changed file ([`process_file`]), reporting what
//! happened as a [`FileResult`]; [`rewrite_source_noting`] also tells each replaced match
//! (what a re-derivation compares).

use std::cell::RefCell;
use std::ops::Range;

use super::grammar::AstLang;
use ast_grep_core::AstGrep;
use ast_grep_core::replacer::Replacer;
use ast_grep_core::tree_sitter::StrDoc;

use super::anchored::find_anchored;
use super::language::{FileOps, LanguageOps};
use super::packs::{Packs, Spooled};

use crate::diff::{LineCounts, counted_change_diff};
use crate::error::EditError;
use crate::ordered::Screened;
use crate::scope::ScopedFile;
use crate::text_file::split_bom;
use resolve_store::text_of;

/// What happened to one file.
pub(super) enum FileResult {
    /// The diff is rendered and the new text stored here, on the worker's thread, so neither
    /// text outlives the file's turn.
    Changed {
        path: String,
        spooled: Spooled,
        replacements: usize,
        /// The lines its diff adds and removes.
        lines: LineCounts,
    },
    /// The new text could not be stored.
    Failed(EditError),
    Unchanged,
    Skipped {
        path: String,
        reason: String,
        searched: bool,
    },
    Overlap {
        path: String,
        first: usize,
        second: usize,
    },
}

impl FileResult {
    pub(super) fn searched(&self) -> bool {
        match self {
            Self::Changed { .. } | Self::Unchanged | Self::Overlap { .. } | Self::Failed(_) => true,
            Self::Skipped { searched, .. } => *searched,
        }
    }
}

thread_local! {
    /// The worker's read buffer: each file is read into the room the last one left, so a
    /// search of many files allocates for the largest, not for each.
    static READ_ROOM: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// The first look at a file: its result when it cannot be rewritten (unreadable, binary) or
/// holds none of its patterns' literal tokens, else the file and its ops back, weighing its
/// length in bytes, for [`process_file`]. Most files of a search end here unparsed.
pub(super) fn screen_file(
    file: ScopedFile,
    ops: FileOps,
) -> Screened<(ScopedFile, FileOps), FileResult> {
    READ_ROOM.with_borrow_mut(|room| {
        let weight = match text_in(&file, room) {
            Ok(text) if !ops.may_match(split_bom(text).1) => {
                return Screened::Done(FileResult::Unchanged);
            }
            Ok(text) => text.len() as u64,
            Err(reason) => return Screened::Done(skipped(&file, reason)),
        };
        Screened::Later {
            later: (file, ops),
            weight,
        }
    })
}

/// Read, parse and rewrite one file, and store its new text and diff when it changed.
pub(super) fn process_file(file: ScopedFile, ops: &FileOps, packs: &Packs) -> FileResult {
    READ_ROOM.with_borrow_mut(|room| process_file_in(file, ops, packs, room))
}

/// The text of `file`, read into `room`, or why it is not rewritten (unreadable, binary).
fn text_in<'r>(file: &ScopedFile, room: &'r mut Vec<u8>) -> Result<&'r str, String> {
    let bytes = file.read_into(room).map_err(|error| error.to_string())?;
    text_of(bytes).ok_or_else(|| "binary or not valid UTF-8; not rewritten".to_owned())
}

/// `file`, searched and not rewritten for `reason`.
fn skipped(file: &ScopedFile, reason: String) -> FileResult {
    FileResult::Skipped {
        path: file.relative.clone(),
        reason,
        searched: true,
    }
}

/// [`process_file`], reading into `room`.
fn process_file_in(
    file: ScopedFile,
    ops: &FileOps,
    packs: &Packs,
    room: &mut Vec<u8>,
) -> FileResult {
    let old = match text_in(&file, room) {
        Ok(old) => old,
        Err(reason) => return skipped(&file, reason),
    };
    match rewrite_source(old, ops) {
        Ok(None) => FileResult::Unchanged,
        Ok(Some(rewritten)) => {
            let (diff, lines) =
                counted_change_diff(&file.relative, Some(old), Some(&rewritten.text));
            let spooled = match packs.put(&rewritten.text, &diff, old) {
                Ok(spooled) => spooled,
                Err(error) => return FileResult::Failed(error),
            };
            FileResult::Changed {
                path: file.relative,
                spooled,
                replacements: rewritten.replacements,
                lines,
            }
        }
        Err(SourceProblem::ParseErrors { line }) => skipped(
            &file,
            format!("parse errors (first at line {line}); not rewritten"),
        ),
        Err(SourceProblem::Unparsable(reason)) => skipped(
            &file,
            format!("could not be parsed ({reason}); not rewritten"),
        ),
        Err(SourceProblem::Overlap { first, second }) => FileResult::Overlap {
            path: file.relative,
            first,
            second,
        },
    }
}

/// Why a source was not rewritten.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum SourceProblem {
    /// The tree has ERROR or MISSING nodes; `line` is 1-based.
    ParseErrors { line: usize },
    /// The parser gave up.
    Unparsable(String),
    /// Edits of ops `first` and `second` overlap.
    Overlap { first: usize, second: usize },
}

/// A rewritten source.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Rewritten {
    /// The new text.
    pub(super) text: String,
    /// How many matches were replaced.
    pub(super) replacements: usize,
}

/// One replacement: bytes `range` of the source (after any byte-order mark) become `text`.
struct Span {
    range: Range<usize>,
    text: Vec<u8>,
    op: usize,
}

/// Rewrite `source` with every usable op; `None` when nothing would change.
fn rewrite_source(source: &str, ops: &FileOps) -> Result<Option<Rewritten>, SourceProblem> {
    rewrite_source_noting(source, ops, |_, _| {})
}

/// [`rewrite_source`], calling `note` with each replaced match, in order: its offset in
/// `source` and its original bytes.
pub(super) fn rewrite_source_noting(
    source: &str,
    ops: &FileOps,
    mut note: impl FnMut(usize, &[u8]),
) -> Result<Option<Rewritten>, SourceProblem> {
    let (bom, body) = split_bom(source);
    // A match contains its pattern's literal tokens; a file lacking them all is not parsed.
    if !ops.may_match(body) {
        return Ok(None);
    }
    let mut spans = matched_spans(body, ops)?;
    spans.sort_by(|a, b| {
        (a.range.start, a.range.end, &a.text).cmp(&(b.range.start, b.range.end, &b.text))
    });
    spans.dedup_by(|later, earlier| later.range == earlier.range && later.text == earlier.text);
    for pair in spans.windows(2) {
        if let [earlier, later] = pair
            && (later.range.start < earlier.range.end || later.range.start == earlier.range.start)
        {
            return Err(SourceProblem::Overlap {
                first: earlier.op.min(later.op),
                second: earlier.op.max(later.op),
            });
        }
    }

    let body_bytes = body.as_bytes();
    // The exact length, so the new text never over-allocates.
    let new_len = spans.iter().fold(source.len(), |len, span| {
        (len + span.text.len()).saturating_sub(span.range.len())
    });
    let mut out = Vec::with_capacity(new_len);
    out.extend_from_slice(bom.as_bytes());
    let mut cursor = 0;
    let mut replacements = 0;
    for span in &spans {
        let Some(original) = body_bytes.get(span.range.clone()) else {
            continue;
        };
        if original == span.text.as_slice() {
            continue;
        }
        note(bom.len() + span.range.start, original);
        out.extend_from_slice(&body_bytes[cursor..span.range.start]);
        out.extend_from_slice(&span.text);
        cursor = span.range.end;
        replacements += 1;
    }
    if replacements == 0 {
        return Ok(None);
    }
    out.extend_from_slice(&body_bytes[cursor..]);
    let text = String::from_utf8(out)
        .map_err(|_| SourceProblem::Unparsable("the rewrite produced invalid UTF-8".to_owned()))?;
    Ok(Some(Rewritten { text, replacements }))
}

/// The replacements of every op's matches in `body`, unordered. The trees are gone when this
/// returns, so the new text is built without a file's tree (many times its size) still held.
fn matched_spans(body: &str, ops: &FileOps) -> Result<Vec<Span>, SourceProblem> {
    let root =
        AstGrep::<StrDoc<AstLang>>::try_new(body, ops.lang).map_err(SourceProblem::Unparsable)?;
    refuse_parse_errors(&root)?;
    let mut spans = Vec::new();
    if let Some(own) = &ops.own {
        find_spans(&root, own, body, &mut spans);
    }
    if !ops.embedded.is_empty() {
        // Each `<script>` or `<style>` element is a tree of its own over the file's bytes, so
        // its matches' offsets are the file's.
        let regions = root.get_injections(|name| {
            AstLang::named(name).filter(|lang| ops.embedded_ops(*lang).is_some())
        });
        for region in &regions {
            let Some(region_ops) = ops.embedded_ops(*region.lang()) else {
                continue;
            };
            if region_ops.may_match(region_text(region, body)) {
                refuse_parse_errors(region)?;
                find_spans(region, region_ops, body, &mut spans);
            }
        }
    }
    Ok(spans)
}

/// A tree with ERROR or MISSING nodes is not rewritten: [`SourceProblem::ParseErrors`] with the
/// first one's line.
fn refuse_parse_errors(root: &AstGrep<StrDoc<AstLang>>) -> Result<(), SourceProblem> {
    let top = root.root();
    if !top.get_inner_node().has_error() {
        return Ok(());
    }
    let line = top
        .dfs()
        .find(|node| node.is_error() || node.is_missing())
        .map_or(1, |node| node.start_pos().line() + 1);
    Err(SourceProblem::ParseErrors { line })
}

/// The bytes of `body` an embedded region's tree covers.
fn region_text<'b>(region: &AstGrep<StrDoc<AstLang>>, body: &'b str) -> &'b str {
    body.get(region.root().range()).unwrap_or(body)
}

/// Add to `spans` the replacements of every usable op of `ops` under `root`. Matches come in
/// pre-order; one starting before the end of the previous rewritten match of the same op is
/// nested in it and left alone, as `ast-grep run -U` does.
fn find_spans(
    root: &AstGrep<StrDoc<AstLang>>,
    ops: &LanguageOps,
    body: &str,
    spans: &mut Vec<Span>,
) {
    let top = root.root();
    for (index, op) in ops.ops.iter().enumerate() {
        let Ok(op) = op else { continue };
        let mut cursor = 0;
        let found = match ops.anchors(op, body) {
            Some(anchors) => find_anchored(&top, &op.pattern, &anchors),
            None => top.find_all(&op.pattern).collect(),
        };
        for found in found {
            let range = op.fixer.get_replaced_range(&found, &op.pattern);
            if range.start < cursor {
                continue;
            }
            cursor = range.end;
            spans.push(Span {
                text: op.fixer.generate_replacement(&found),
                range,
                op: index,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::embedded_tests::file_ops;
    use super::*;

    const FOO_TO_BAR: &[(&str, &str)] = &[("foo($A)", "bar($A)")];

    /// `source`, the file `path`, rewritten with `pairs`: `None` when nothing changes.
    fn rewrite(source: &str, path: &str, pairs: &[(&str, &str)]) -> Option<String> {
        rewrite_source(source, &file_ops(path, None, pairs))
            .unwrap()
            .map(|rewritten| rewritten.text)
    }

    #[test]
    fn only_the_outermost_of_nested_matches_is_rewritten() {
        let ops = file_ops("a.rs", None, FOO_TO_BAR);
        let rewritten = rewrite_source("fn main() { foo(foo(1)); }\n", &ops)
            .unwrap()
            .unwrap();
        assert_eq!(rewritten.text, "fn main() { bar(foo(1)); }\n");
        assert_eq!(rewritten.replacements, 1);
    }

    #[test]
    fn several_ops_rewrite_the_original_text_together() {
        let pairs = [("foo($A)", "bar($A)"), ("baz($A)", "qux($A)")];
        assert_eq!(
            rewrite("x = foo(1)\ny = baz(2)\n", "a.py", &pairs).as_deref(),
            Some("x = bar(1)\ny = qux(2)\n")
        );
    }

    #[test]
    fn overlapping_edits_of_two_ops_are_a_problem_naming_both() {
        let ops = file_ops("a.ts", None, &[("foo($A)", "f($A)"), ("bar($A)", "b($A)")]);
        let problem = rewrite_source("let a = foo(bar(1));\n", &ops).unwrap_err();
        assert_eq!(
            problem,
            SourceProblem::Overlap {
                first: 0,
                second: 1
            }
        );
    }

    #[test]
    fn identical_edits_of_two_ops_are_merged_not_an_overlap() {
        let ops = file_ops(
            "a.ts",
            None,
            &[("foo($A)", "bar($A)"), ("foo(1)", "bar(1)")],
        );
        let rewritten = rewrite_source("let a = foo(1);\n", &ops).unwrap().unwrap();
        assert_eq!(rewritten.text, "let a = bar(1);\n");
        assert_eq!(rewritten.replacements, 1);
    }

    #[test]
    fn crlf_bom_and_missing_final_newline_survive_byte_for_byte() {
        let source = "\u{feff}fn a() {\r\n    foo(1);\r\n}\r\nfn b() { foo(2) }";
        assert_eq!(
            rewrite(source, "a.rs", FOO_TO_BAR).as_deref(),
            Some("\u{feff}fn a() {\r\n    bar(1);\r\n}\r\nfn b() { bar(2) }")
        );
    }

    #[test]
    fn a_tree_with_parse_errors_is_a_problem_with_its_line() {
        let ops = file_ops("a.rs", None, FOO_TO_BAR);
        let problem = rewrite_source("fn ok() {}\nfn broken( { foo(1) }\n", &ops).unwrap_err();
        assert!(
            matches!(problem, SourceProblem::ParseErrors { line: 2 }),
            "{problem:?}"
        );
    }

    #[test]
    fn a_source_without_the_patterns_literal_text_is_not_parsed() {
        // Broken, but without `foo` it cannot match: no parse error is reported.
        let ops = file_ops("a.rs", None, FOO_TO_BAR);
        assert_eq!(rewrite_source("fn broken( {\n", &ops), Ok(None));
    }

    /// `ast-grep run -U` replaces a matched node's whole range, with trailing punctuation its
    /// pattern lacks (`let a: i32 = 1` without its `;`, a Markdown heading without its line
    /// break); the range replaced here ends where the pattern does, so nothing it did not
    /// name is lost.
    #[test]
    fn trailing_punctuation_the_pattern_does_not_name_is_kept() {
        let typed = [("let $A = $B", "let $A: i32 = $B")];
        assert_eq!(
            rewrite("fn main() {\n    let a = 1;\n}\n", "a.rs", &typed).as_deref(),
            Some("fn main() {\n    let a: i32 = 1;\n}\n")
        );
        assert_eq!(
            rewrite("# foo\n# bar baz\n", "h.md", &[("# $T", "## $T")]).as_deref(),
            Some("## foo\n## bar baz\n")
        );
    }

    #[test]
    fn a_rewrite_equal_to_the_match_changes_nothing() {
        assert_eq!(rewrite("foo(1)\n", "a.py", &[("foo($A)", "foo($A)")]), None);
    }
}

#[cfg(test)]
mod embedded_tests {
    use std::path::Path;
    use std::sync::Arc;

    use pretty_assertions::assert_eq;

    use super::*;
    use crate::ast_edit::AstEditOp;
    use crate::ast_edit::grammar::AstLang;
    use crate::ast_edit::prefilter::Prefilter;

    const PAGE: &str = "<!DOCTYPE html>\n<html>\n<head>\n<style>\na { color: red; }\n</style>\n\
<script>\nconsole.log(x.unwrap());\nlet y = foo.unwrap();\n</script>\n</head>\n\
<body><p>x.unwrap()</p>\n<script type=\"module\">\nbar.unwrap()\n</script>\n\
<script lang=\"ts\">\nconst z: number = baz.unwrap();\n</script>\n</body>\n</html>\n";

    /// The ops searched in `path` for `pairs`, with `lang` if given.
    pub(super) fn file_ops(path: &str, lang: Option<&str>, pairs: &[(&str, &str)]) -> FileOps {
        let ops: Vec<AstEditOp> = pairs
            .iter()
            .map(|(pat, out)| AstEditOp {
                pat: (*pat).to_owned(),
                out: (*out).to_owned(),
            })
            .collect();
        let forced = lang.map(|name| AstLang::named(name).unwrap());
        FileOps::of_file(Path::new(path), false, forced, |lang| {
            Arc::new(LanguageOps::compile(lang, &ops, Prefilter::Literals))
        })
        .unwrap()
    }

    #[test]
    fn every_script_element_of_an_html_file_is_rewritten_in_its_own_language() {
        let rewritten = rewrite_source(
            PAGE,
            &file_ops("page.html", None, &[("$X.unwrap()", "$X.expect(\"k\")")]),
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            rewritten.text,
            PAGE.replace("x.unwrap());", "x.expect(\"k\"));")
                .replace("foo.unwrap()", "foo.expect(\"k\")")
                .replace("bar.unwrap()", "bar.expect(\"k\")")
                .replace("baz.unwrap()", "baz.expect(\"k\")")
        );
        assert_eq!(rewritten.replacements, 4);
    }

    #[test]
    fn with_lang_only_the_elements_of_that_language_are_searched() {
        let rewritten = rewrite_source(
            PAGE,
            &file_ops(
                "page.html",
                Some("javascript"),
                &[("$X.unwrap()", "$X.expect(\"k\")")],
            ),
        )
        .unwrap()
        .unwrap();
        assert_eq!(rewritten.replacements, 3);
        assert!(
            rewritten.text.contains("baz.unwrap()"),
            "{}",
            rewritten.text
        );
        assert!(rewritten.text.contains("<p>x.unwrap()</p>"));
    }

    #[test]
    fn a_script_element_with_a_syntax_error_keeps_the_whole_file_as_it_is() {
        let page = "<html>\n<script>\nok.unwrap();\n</script>\n<script>\nlet = x.unwrap(;\n</script>\n</html>\n";
        let problem = rewrite_source(
            page,
            &file_ops("page.html", None, &[("$X.unwrap()", "$X.expect(\"k\")")]),
        )
        .unwrap_err();
        assert_eq!(problem, SourceProblem::ParseErrors { line: 6 });
    }

    #[test]
    fn html_embeds_css_and_the_script_languages_only() {
        let embedded = |name: &str| {
            super::super::language::embedded_languages(AstLang::named(name).unwrap())
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
        };
        assert_eq!(embedded("html"), ["Css", "JavaScript", "TypeScript", "Tsx"]);
        assert!(embedded("rust").is_empty());
    }
}
