//! The languages `ast_edit` parses ([`AstLang`]): every language `ast-grep-language` ships, and
//! TLA⁺ (`.tla`), a tree-sitter grammar of its own registered as a custom ast-grep language.
//!
//! TLA⁺ identifiers are ASCII letters, digits and `_`, so a meta-variable's `$` is spelled `_`
//! while a pattern is parsed (`$A` is read as the identifier `_A`, as ast-grep does for Nix and
//! Zig); an identifier of the pattern that starts with `_` and an upper-case letter is therefore
//! a meta-variable too.
//!
//! Owned here: the language type and what ast-grep asks of it. Not owned: which language a
//! file has or which names `lang` accepts (the language module).

use std::borrow::Cow;
use std::fmt;
use std::path::Path;

use ast_grep_core::matcher::PatternBuilder;
use ast_grep_core::tree_sitter::{LanguageExt, StrDoc, TSLanguage, TSRange};
use ast_grep_core::{Language, Node, Pattern, PatternError};
use ast_grep_language::SupportLang;

/// The character a TLA⁺ pattern's meta-variables are spelled with while it is parsed.
const TLA_EXPANDO: char = '_';

/// A language `ast_edit` can parse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum AstLang {
    /// One of the languages `ast-grep-language` ships.
    Builtin(SupportLang),
    /// TLA⁺, from `tree-sitter-tlaplus`.
    Tla,
}

impl From<SupportLang> for AstLang {
    fn from(lang: SupportLang) -> Self {
        Self::Builtin(lang)
    }
}

impl fmt::Display for AstLang {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Builtin(lang) => lang.fmt(f),
            Self::Tla => f.write_str("Tla"),
        }
    }
}

impl AstLang {
    /// The language of `path` from its extension (`.tla` is TLA⁺).
    pub(super) fn of_path(path: &Path) -> Option<Self> {
        if path.extension().is_some_and(|extension| extension == "tla") {
            return Some(Self::Tla);
        }
        SupportLang::from_path(path).map(Self::Builtin)
    }

    /// The language a `lang` name stands for: `tla`, `tlaplus` or `tla+`, else an
    /// `ast-grep-language` name or alias.
    pub(super) fn named(name: &str) -> Option<Self> {
        match name.to_ascii_lowercase().as_str() {
            "tla" | "tlaplus" | "tla+" => Some(Self::Tla),
            _ => name.parse::<SupportLang>().ok().map(Self::Builtin),
        }
    }
}

/// `query` with the `$` of each meta-variable (`$A`, `$$A`, `$$$A`, `$$$`) spelled `expando`;
/// any other `$` is kept.
fn spell_meta_variables(query: &str, expando: char) -> String {
    let mut spelled = String::with_capacity(query.len());
    let mut dollars = 0;
    for character in query.chars() {
        if character == '$' {
            dollars += 1;
            continue;
        }
        let starts_variable = character.is_ascii_uppercase() || character == '_';
        let sigil = if dollars > 0 && (starts_variable || dollars == 3) {
            expando
        } else {
            '$'
        };
        spelled.extend(std::iter::repeat_n(sigil, dollars));
        dollars = 0;
        spelled.push(character);
    }
    let sigil = if dollars == 3 { expando } else { '$' };
    spelled.extend(std::iter::repeat_n(sigil, dollars));
    spelled
}

impl Language for AstLang {
    fn pre_process_pattern<'q>(&self, query: &'q str) -> Cow<'q, str> {
        match self {
            Self::Builtin(lang) => lang.pre_process_pattern(query),
            Self::Tla => Cow::Owned(spell_meta_variables(query, TLA_EXPANDO)),
        }
    }

    fn meta_var_char(&self) -> char {
        match self {
            Self::Builtin(lang) => lang.meta_var_char(),
            Self::Tla => '$',
        }
    }

    fn expando_char(&self) -> char {
        match self {
            Self::Builtin(lang) => lang.expando_char(),
            Self::Tla => TLA_EXPANDO,
        }
    }

    // `extract_meta_var` keeps ast-grep's default, which reads meta-variables spelled with
    // `expando_char` (as every built-in language does).

    fn from_path<P: AsRef<Path>>(path: P) -> Option<Self> {
        Self::of_path(path.as_ref())
    }

    fn kind_to_id(&self, kind: &str) -> u16 {
        match self {
            Self::Builtin(lang) => lang.kind_to_id(kind),
            Self::Tla => self.get_ts_language().id_for_node_kind(kind, true),
        }
    }

    fn field_to_id(&self, field: &str) -> Option<u16> {
        match self {
            Self::Builtin(lang) => lang.field_to_id(field),
            Self::Tla => self
                .get_ts_language()
                .field_id_for_name(field)
                .map(|id| id.get()),
        }
    }

    fn build_pattern(&self, builder: &PatternBuilder) -> Result<Pattern, PatternError> {
        match self {
            Self::Builtin(lang) => lang.build_pattern(builder),
            Self::Tla => builder.build(|source| StrDoc::try_new(source, *self)),
        }
    }
}

impl LanguageExt for AstLang {
    fn get_ts_language(&self) -> TSLanguage {
        match self {
            Self::Builtin(lang) => lang.get_ts_language(),
            Self::Tla => tree_sitter_tlaplus::LANGUAGE.into(),
        }
    }

    fn injectable_languages(&self) -> Option<&'static [&'static str]> {
        match self {
            Self::Builtin(lang) => lang.injectable_languages(),
            Self::Tla => None,
        }
    }

    fn extract_injections<L: LanguageExt>(
        &self,
        root: Node<StrDoc<L>>,
    ) -> Vec<(String, Vec<TSRange>)> {
        match self {
            Self::Builtin(lang) => lang.extract_injections(root),
            Self::Tla => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use ast_grep_core::AstGrep;

    use super::*;

    #[test]
    fn meta_variables_are_spelled_with_the_expando_and_other_dollars_kept() {
        assert_eq!(
            spell_meta_variables("$A == $$B + $$$ARGS + $$$ + $x + $", '_'),
            "_A == __B + ___ARGS + ___ + $x + $"
        );
    }

    #[test]
    fn tla_files_and_names_are_tla_and_others_builtin() {
        assert_eq!(
            AstLang::of_path(Path::new("spec/Clock.tla")),
            Some(AstLang::Tla)
        );
        assert_eq!(
            AstLang::of_path(Path::new("src/main.rs")),
            Some(AstLang::Builtin(SupportLang::Rust))
        );
        assert_eq!(AstLang::of_path(Path::new("notes.unknown")), None);
        for name in ["tla", "TLA+", "tlaplus"] {
            assert_eq!(AstLang::named(name), Some(AstLang::Tla), "{name}");
        }
        assert_eq!(
            AstLang::named("rust"),
            Some(AstLang::Builtin(SupportLang::Rust))
        );
    }

    #[test]
    fn a_tla_module_parses_without_errors() {
        let source =
            "---- MODULE Clock ----\nVARIABLE x\nInit == x = 0\nNext == x' = 1 - x\n====\n";
        let root = AstGrep::<StrDoc<AstLang>>::try_new(source, AstLang::Tla).unwrap();
        assert!(!root.root().get_inner_node().has_error());
    }
}
