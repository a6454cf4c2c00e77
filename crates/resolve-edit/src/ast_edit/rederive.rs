//! Re-deriving an `ast_edit` preview on a file that moved since it was staged: the request is
//! kept in the pending record ([`request_json`]), and at apply [`rederive`] runs the same ops
//! on the file's current bytes. When the matches found there are the preview's (same count,
//! same matched text, in order), the re-derived text lands; otherwise the matches that
//! appeared or vanished are named and the merge by lines decides.

use std::path::Path;
use std::sync::Arc;

use resolve_store::Rederived;
use serde_json::{Value, json};

use super::grammar::AstLang;
use super::language::{FileOps, LanguageOps, parse_language};
use super::prefilter::Prefilter;
use super::request::AstEditRequest;
use super::rewrite::rewrite_source_noting;

/// The key of a record's `rederive` that holds an `ast_edit` request.
const AST_EDIT_KEY: &str = "ast_edit";

/// What a pending record keeps to re-derive `request`'s change: `{"ast_edit": request}`.
pub(super) fn request_json(request: &AstEditRequest) -> Value {
    json!({ AST_EDIT_KEY: request })
}

/// One replaced match: its first line (from 1) and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Match {
    line: usize,
    text: String,
}

impl Match {
    /// `` `foo(1)` at line 7 `` (the first line of a longer match, then `…`).
    fn describe(&self) -> String {
        let mut lines = self.text.lines();
        let first = lines.next().unwrap_or_default();
        let more = if lines.next().is_some() { "…" } else { "" };
        format!("`{first}{more}` at line {}", self.line)
    }
}

/// `source` rewritten by `ops` and its replaced matches; `None` when it does not parse.
fn rewrite(source: &str, ops: &FileOps) -> Option<(String, Vec<Match>)> {
    let mut matches = Vec::new();
    let rewritten = rewrite_source_noting(source, ops, |offset, original| {
        let line = 1 + source.as_bytes().get(..offset).map_or(0, |before| {
            before.iter().filter(|byte| **byte == b'\n').count()
        });
        matches.push(Match {
            line,
            text: String::from_utf8_lossy(original).into_owned(),
        });
    })
    .ok()?;
    let text = rewritten.map_or_else(|| source.to_owned(), |rewritten| rewritten.text);
    Some((text, matches))
}

/// Re-derive the preview of `path` on `current` with a record's `rederive` request: `None`
/// when the request is not an `ast_edit` one, when it does not give `preview` from `base`
/// (the file was amended, or only some of its hunks are applied), or when either text does
/// not parse.
pub fn rederive(
    request: &Value,
    path: &str,
    base: &[u8],
    current: &[u8],
    preview: &[u8],
) -> Option<Rederived> {
    let request: AstEditRequest =
        serde_json::from_value(request.get(AST_EDIT_KEY)?.clone()).ok()?;
    let forced = request
        .lang
        .as_deref()
        .map(parse_language)
        .transpose()
        .ok()?;
    let ops = FileOps::of_file(Path::new(path), true, forced, |lang: AstLang| {
        Arc::new(LanguageOps::compile(
            lang,
            &request.ops,
            Prefilter::Literals,
        ))
    })?;
    let (derived, staged) = rewrite(std::str::from_utf8(base).ok()?, &ops)?;
    if derived.as_bytes() != preview {
        return None;
    }
    let (rederived, found) = rewrite(std::str::from_utf8(current).ok()?, &ops)?;
    let same = staged.len() == found.len()
        && staged
            .iter()
            .zip(&found)
            .all(|(staged, found)| staged.text == found.text);
    if same {
        return Some(Rederived::Clean(rederived.into_bytes()));
    }
    // Each text counted once per occurrence: what the current bytes have beyond the preview's
    // matches appeared, what they lack vanished.
    let mut vanished: Vec<&Match> = staged.iter().collect();
    let mut appeared = Vec::new();
    for found in &found {
        match vanished.iter().position(|staged| staged.text == found.text) {
            Some(index) => {
                vanished.remove(index);
            }
            None => appeared.push(found.describe()),
        }
    }
    Some(Rederived::Mismatch {
        appeared,
        vanished: vanished.into_iter().map(Match::describe).collect(),
    })
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::ast_edit::AstEditOp;

    fn request() -> Value {
        request_json(&AstEditRequest {
            ops: vec![AstEditOp {
                pat: "foo($A)".to_owned(),
                out: "bar($A)".to_owned(),
            }],
            paths: vec![".".to_owned()],
            lang: None,
        })
    }

    /// The base of the preview `rederived_on` re-derives.
    const BASE: &[u8] = b"fn main() {\n    foo(1);\n    foo(2);\n}\n";

    /// The preview of `request()` on [`BASE`], re-derived on `current`.
    fn rederived_on(current: &[u8]) -> Option<Rederived> {
        let preview = b"fn main() {\n    bar(1);\n    bar(2);\n}\n";
        rederive(&request(), "a.rs", BASE, current, preview)
    }

    #[test]
    fn the_same_matches_on_reformatted_bytes_give_the_rewrite_of_those_bytes() {
        assert_eq!(
            rederived_on(b"fn main()\n{\n\tfoo(1);\n\n\tfoo(2);\n}\n"),
            Some(Rederived::Clean(
                b"fn main()\n{\n\tbar(1);\n\n\tbar(2);\n}\n".to_vec()
            ))
        );
    }

    #[test]
    fn matches_that_appeared_or_vanished_are_named() {
        assert_eq!(
            rederived_on(b"fn main() {\n    foo(1);\n    foo(3);\n}\n"),
            Some(Rederived::Mismatch {
                appeared: vec!["`foo(3)` at line 3".to_owned()],
                vanished: vec!["`foo(2)` at line 3".to_owned()],
            })
        );
    }

    #[test]
    fn a_preview_the_request_does_not_give_from_its_base_is_not_rederived() {
        let base = b"fn main() { foo(1); }\n";
        let amended = b"fn main() { baz(1); }\n";
        assert_eq!(
            rederive(
                &request(),
                "a.rs",
                base,
                b"fn main() {\n foo(1); }\n",
                amended
            ),
            None
        );
        assert_eq!(
            rederive(&json!({"edit": {}}), "a.rs", base, base, amended),
            None
        );
    }
}
