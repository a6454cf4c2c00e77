//! Languages and ops compiled for them: which languages this build parses
//! ([`COMPILED_LANGUAGES`], and TLA⁺), the language of a file or of a `lang` name, and every op of a
//! request compiled once per language ([`LanguageOps`]), with the literal prefilter of each
//! (see the prefilter module) and the errors of ops that do not compile, and which of those ops
//! are searched in one file ([`FileOps`]: its own language's and, in HTML, those of the code
//! its `<script>` and `<style>` elements embed).
//!
//! It reads no file and knows nothing of previews.

use std::collections::HashMap;
use std::sync::Arc;

use ast_grep_core::replacer::TemplateFix;
use ast_grep_core::tree_sitter::{LanguageExt, StrDoc};
use ast_grep_core::{AstGrep, Language, Pattern};
use ast_grep_language::SupportLang;

use super::gap_rules::GapRules;
use super::grammar::AstLang;
use super::prefilter::{LiteralFilter, Prefilter};
use super::request::AstEditOp;
use crate::error::EditError;

/// Languages whose grammars this build compiles (the default features of `ast-grep-language`
/// compile them all). Parsing a language whose grammar feature is off panics, so every language
/// chosen by extension or by name is checked against this list; narrow it together with the
/// features.
const COMPILED_LANGUAGES: &[SupportLang] = &[
    SupportLang::Bash,
    SupportLang::C,
    SupportLang::Cpp,
    SupportLang::CSharp,
    SupportLang::Css,
    SupportLang::Dart,
    SupportLang::Elixir,
    SupportLang::Go,
    SupportLang::Haskell,
    SupportLang::Hcl,
    SupportLang::Html,
    SupportLang::Java,
    SupportLang::JavaScript,
    SupportLang::Json,
    SupportLang::Kotlin,
    SupportLang::Lua,
    SupportLang::Markdown,
    SupportLang::Nix,
    SupportLang::Php,
    SupportLang::Python,
    SupportLang::Ruby,
    SupportLang::Rust,
    SupportLang::Scala,
    SupportLang::Solidity,
    SupportLang::Swift,
    SupportLang::Tsx,
    SupportLang::TypeScript,
    SupportLang::Yaml,
    SupportLang::Zig,
];

/// Whether `lang`'s grammar is compiled into this build.
fn is_compiled(lang: AstLang) -> bool {
    match lang {
        AstLang::Builtin(lang) => COMPILED_LANGUAGES.contains(&lang),
        AstLang::Tla => true,
    }
}

/// The compiled language named `name`, if it is known and compiled in.
pub(super) fn parse_language(name: &str) -> Result<AstLang, EditError> {
    AstLang::named(name)
        .filter(|lang| is_compiled(*lang))
        .ok_or_else(|| EditError::UnknownLanguage {
            lang: name.to_owned(),
            supported: supported_languages().join(", "),
        })
}

/// The names `lang` accepts, one per compiled language.
pub fn supported_languages() -> Vec<String> {
    COMPILED_LANGUAGES
        .iter()
        .map(|lang| AstLang::Builtin(*lang))
        .chain([AstLang::Tla])
        .map(|lang| lang.to_string().to_lowercase())
        .collect()
}

/// The compiled language of a path, from its extension.
pub(super) fn language_of(path: &std::path::Path) -> Option<AstLang> {
    AstLang::of_path(path).filter(|lang| is_compiled(*lang))
}

/// The compiled languages whose code files of `host` embed and ast-grep searches too, in the
/// order ast-grep lists them: for HTML, CSS, JavaScript, TypeScript and TSX (the `<script>` and
/// `<style>` elements, by their `lang` attribute); for every other language, none.
pub(super) fn embedded_languages(host: AstLang) -> Vec<AstLang> {
    let mut languages: Vec<AstLang> = Vec::new();
    for name in host.injectable_languages().unwrap_or_default() {
        if let Some(lang) = AstLang::named(name).filter(|lang| is_compiled(*lang))
            && !languages.contains(&lang)
        {
            languages.push(lang);
        }
    }
    languages
}

/// The ops searched in one file: those of the language it is parsed as (none when a `lang` was
/// given that the file only embeds) and those of each language embedded in it.
pub(super) struct FileOps {
    /// The language the file is parsed as.
    pub(super) lang: AstLang,
    /// The ops matched against the file's own tree.
    pub(super) own: Option<Arc<LanguageOps>>,
    /// The ops matched inside each embedded language's regions.
    pub(super) embedded: Vec<(AstLang, Arc<LanguageOps>)>,
}

impl FileOps {
    /// What to search in the file at `path` (named on the command line when `explicit`), with
    /// the request's `lang` if any (`forced`), as `ast-grep run` does: without `lang`, the
    /// file's language from its extension and every language it embeds; with it, that language
    /// in files of that language or named explicitly (parsed as `lang` whatever their
    /// extension), and in the regions of files that embed it. `ops_of` gives the ops compiled
    /// for a language. `None` when nothing in the file is searched.
    pub(super) fn of_file(
        path: &std::path::Path,
        explicit: bool,
        forced: Option<AstLang>,
        ops_of: impl Fn(AstLang) -> Arc<LanguageOps>,
    ) -> Option<Self> {
        let detected = language_of(path);
        match (forced, detected) {
            (Some(lang), Some(detected)) if detected != lang => {
                if embedded_languages(detected).contains(&lang) {
                    return Some(Self {
                        lang: detected,
                        own: None,
                        embedded: vec![(lang, ops_of(lang))],
                    });
                }
                explicit.then(|| Self::own(lang, ops_of(lang)))
            }
            (Some(lang), Some(_)) => Some(Self::own(lang, ops_of(lang))),
            (Some(lang), None) => explicit.then(|| Self::own(lang, ops_of(lang))),
            (None, detected) => {
                let lang = detected?;
                Some(Self {
                    lang,
                    own: Some(ops_of(lang)),
                    embedded: embedded_languages(lang)
                        .into_iter()
                        .map(|embedded| (embedded, ops_of(embedded)))
                        .collect(),
                })
            }
        }
    }

    fn own(lang: AstLang, ops: Arc<LanguageOps>) -> Self {
        Self {
            lang,
            own: Some(ops),
            embedded: Vec::new(),
        }
    }

    /// Whether at least one op applies to the file.
    pub(super) fn usable(&self) -> bool {
        self.own.as_ref().is_some_and(|ops| ops.usable())
            || self.embedded.iter().any(|(_, ops)| ops.usable())
    }

    /// Whether `text` may hold a match of any op searched (see [`LanguageOps::may_match`]).
    pub(super) fn may_match(&self, text: &str) -> bool {
        self.own.as_ref().is_some_and(|ops| ops.may_match(text))
            || self.embedded.iter().any(|(_, ops)| ops.may_match(text))
    }

    /// The ops searched in regions of the embedded language `lang`.
    pub(super) fn embedded_ops(&self, lang: AstLang) -> Option<&LanguageOps> {
        self.embedded
            .iter()
            .find(|(embedded, _)| *embedded == lang)
            .map(|(_, ops)| ops.as_ref())
    }
}

/// The language `ast_edit` parses `path` as when no `lang` is given (its lowercase name, as
/// `lang` takes it), from the extension; `None` when it parses no such file.
pub fn language_of_path(path: &std::path::Path) -> Option<String> {
    AstLang::of_path(path)
        .filter(|lang| is_compiled(*lang))
        .map(|lang| lang.to_string().to_lowercase())
}

/// An op compiled for one language.
pub(super) struct CompiledOp {
    pub(super) pattern: Pattern,
    pub(super) fixer: TemplateFix,
    /// The literal tokens every match contains.
    filter: LiteralFilter,
}

/// Why an op does not compile for a language.
pub(super) struct InvalidOp {
    /// The pattern or rewrite that failed.
    text: String,
    reason: String,
}

/// Every op of a request, compiled (once per call) for one language.
pub(super) struct LanguageOps {
    pub(super) ops: Vec<Result<CompiledOp, InvalidOp>>,
    /// `None` with [`Prefilter::Off`]: every file may match.
    gaps: Option<GapRules>,
}

impl LanguageOps {
    pub(super) fn compile(lang: AstLang, ops: &[AstEditOp], prefilter: Prefilter) -> Self {
        Self {
            ops: ops.iter().map(|op| compile_op(op, lang)).collect(),
            gaps: match prefilter {
                Prefilter::Literals => Some(GapRules::of(lang)),
                Prefilter::Off => None,
            },
        }
    }

    /// Whether at least one op applies in this language.
    pub(super) fn usable(&self) -> bool {
        self.ops.iter().any(Result::is_ok)
    }

    /// The error of the first op that does not compile.
    pub(super) fn first_error(&self, lang: AstLang) -> Option<EditError> {
        self.ops.iter().find_map(|op| match op {
            Ok(_) => None,
            Err(invalid) => Some(invalid_pattern(invalid, lang)),
        })
    }

    /// Where in `text` the first literal token of `op` occurs, which every match of it covers;
    /// `None` when any node may match (no token, or [`Prefilter::Off`]).
    pub(super) fn anchors(&self, op: &CompiledOp, text: &str) -> Option<Vec<usize>> {
        self.gaps.as_ref()?;
        op.filter.anchors(text.as_bytes())
    }

    /// Whether `text` may hold a match: a match contains its pattern's literal tokens in
    /// order, so a text lacking those of every usable op cannot match (and need not be parsed).
    pub(super) fn may_match(&self, text: &str) -> bool {
        let Some(gaps) = &self.gaps else {
            return true;
        };
        self.ops.iter().any(|op| {
            op.as_ref()
                .is_ok_and(|op| op.filter.may_match(text.as_bytes(), gaps))
        })
    }
}

fn invalid_pattern(invalid: &InvalidOp, lang: AstLang) -> EditError {
    EditError::InvalidPattern {
        pattern: invalid.text.clone(),
        lang: lang.to_string(),
        reason: invalid.reason.clone(),
    }
}

fn compile_op(op: &AstEditOp, lang: AstLang) -> Result<CompiledOp, InvalidOp> {
    let invalid = |text: &str, reason: String| InvalidOp {
        text: text.to_owned(),
        reason,
    };
    parses_cleanly(&op.pat, lang).map_err(|reason| invalid(&op.pat, reason))?;
    let pattern =
        Pattern::try_new(&op.pat, lang).map_err(|error| invalid(&op.pat, error.to_string()))?;
    parses_cleanly(&op.out, lang).map_err(|reason| invalid(&op.out, reason))?;
    let fixer = TemplateFix::try_new(&op.out, &lang)
        .map_err(|error| invalid(&op.out, error.to_string()))?;
    let filter = LiteralFilter::of(&pattern, &op.pat, lang);
    Ok(CompiledOp {
        pattern,
        fixer,
        filter,
    })
}

/// Whether `source` (a pattern or rewrite, meta-variables allowed) parses without an ERROR
/// node in `lang`; an empty text does.
///
/// Only the node the text stands for is checked: like ast-grep, start at the root and descend
/// while a node has a single child (a second child that is MISSING does not count). Grammars
/// wrap a lone fragment in an ERROR node where their top level does not allow it (Rust parses
/// `foo($A)` as `(source_file (ERROR (call_expression …)))`); such a wrapper is not a syntax
/// error of the fragment, while an ERROR at or below that node is.
fn parses_cleanly(source: &str, lang: AstLang) -> Result<(), String> {
    let processed = lang.pre_process_pattern(source);
    if processed.trim().is_empty() {
        return Ok(());
    }
    let root = AstGrep::<StrDoc<AstLang>>::try_new(&processed, lang)?;
    let mut node = root.root();
    loop {
        let children: Vec<_> = node.children().collect();
        let only = match children.as_slice() {
            [only] => only.clone(),
            [first, second] if second.is_missing() || second.kind().is_empty() => first.clone(),
            _ => break,
        };
        node = only;
    }
    let Some(error) = node.dfs().find(|node| node.is_error()) else {
        return Ok(());
    };
    let mut snippet: String = error.text().chars().take(60).collect();
    if lang.expando_char() != lang.meta_var_char() {
        snippet = snippet.replace(lang.expando_char(), &lang.meta_var_char().to_string());
    }
    Err(format!(
        "its parse tree has an ERROR node at `{snippet}` (line {})",
        error.start_pos().line() + 1
    ))
}

/// With languages inferred: the error for an op that compiled in none of the languages
/// searched, reported for the language with the most files.
pub(super) fn unusable_op_error(
    compiled: &HashMap<AstLang, Arc<LanguageOps>>,
    counts: &HashMap<AstLang, usize>,
    op_count: usize,
) -> Option<EditError> {
    let mut languages: Vec<AstLang> = compiled.keys().copied().collect();
    languages.sort_by_key(|lang| {
        (
            std::cmp::Reverse(counts.get(lang).copied().unwrap_or(0)),
            lang.to_string(),
        )
    });
    let main = *languages.first()?;
    (0..op_count).find_map(|index| {
        let usable_somewhere = languages
            .iter()
            .any(|lang| compiled[lang].ops.get(index).is_some_and(Result::is_ok));
        if usable_somewhere {
            return None;
        }
        match compiled[&main].ops.get(index) {
            Some(Err(invalid)) => Some(invalid_pattern(invalid, main)),
            Some(Ok(_)) | None => None,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_patterns_parse_cleanly() {
        for (pat, lang) in [
            ("$X.unwrap()", AstLang::Builtin(SupportLang::Rust)),
            ("foo($A)", AstLang::Builtin(SupportLang::Rust)),
            ("let $A = $B;", AstLang::Builtin(SupportLang::Rust)),
            ("fn $F($$$P) { $$$B }", AstLang::Builtin(SupportLang::Rust)),
            ("print($$$ARGS)", AstLang::Builtin(SupportLang::Python)),
            (
                "console.log($$$A)",
                AstLang::Builtin(SupportLang::TypeScript),
            ),
            (
                "if err != nil { return $E }",
                AstLang::Builtin(SupportLang::Go),
            ),
        ] {
            assert!(parses_cleanly(pat, lang).is_ok(), "{pat} in {lang}");
            assert!(
                compile_op(
                    &AstEditOp {
                        pat: pat.into(),
                        out: pat.into()
                    },
                    lang
                )
                .is_ok()
            );
        }
    }

    #[test]
    fn a_pattern_with_an_error_node_is_rejected_with_a_reason() {
        let reason = parses_cleanly("foo(($A", AstLang::Builtin(SupportLang::Rust)).unwrap_err();
        assert!(reason.contains("ERROR node"), "{reason}");
    }

    #[test]
    fn every_supported_language_name_parses_back() {
        for name in supported_languages() {
            assert!(parse_language(&name).is_ok(), "{name}");
        }
        assert!(matches!(
            parse_language("cobol").unwrap_err(),
            EditError::UnknownLanguage { .. }
        ));
    }
}
