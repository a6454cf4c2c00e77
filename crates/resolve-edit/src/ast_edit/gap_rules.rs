//! What a gap between two tokens a pattern has next to each other may hold in one language's
//! text (whitespace, comments in any language's syntax, characters that are not word
//! characters, the grammar's unnamed tokens such as `mut` or `as`), which lines are surely
//! comments, what makes an identifier the name part of a path or member access, and which
//! lexer finds the language's comments and literals.

use ast_grep_core::tree_sitter::LanguageExt;
use ast_grep_language::SupportLang;
use memchr::memmem;

use super::grammar::AstLang;
use super::rust_text::{self, Lexed};
use super::{py_text, ts_text};

/// What finds a text's comments and literals (see the `rust_text`, `ts_text` and `py_text`
/// modules).
pub(super) type Lexer = fn(&[u8]) -> Lexed;

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
    pub(super) literals: Option<Lexer>,
    /// What, written right before an identifier, makes it the name part of a path or a member
    /// access: a node that starts earlier, so none but the identifier starts at it. Empty
    /// where that is not known of the language.
    qualifiers: &'static [&'static [u8]],
    /// What, written at the top level of one argument of a call, may have a comma of that
    /// argument after it (a lambda's or a closure's parameters, type arguments); `None` where
    /// the prefilter does not know which commas separate arguments.
    pub(super) argument_commas: Option<&'static [&'static [u8]]>,
}

/// Rust strings end with `"` (raw ones with `"#`); there is no interpolation.
const RUST_STRING_ENDS: &[u8] = b"\"";
/// Quotes of any kind, and what starts or ends an interpolation or an escaped line end.
const C_FAMILY_STRING_ENDS: &[u8] = b"\"'`$\\{}";

/// Rust's path separator and field access.
const RUST_QUALIFIERS: &[&[u8]] = &[b"::", b"."];
/// Member access (an attribute in Python).
const MEMBER_ACCESS: &[&[u8]] = &[b"."];

/// Rust: a closure's parameters, type arguments (`<` may be less-than too).
const RUST_ARGUMENT_COMMAS: &[&[u8]] = &[b"|", b"<"];
/// Python: a lambda's parameters.
const PYTHON_ARGUMENT_COMMAS: &[&[u8]] = &[b"lambda"];
/// TypeScript: type arguments and type parameters (`<` may be less-than too); an arrow
/// function's parameters are in brackets of their own.
const TYPESCRIPT_ARGUMENT_COMMAS: &[&[u8]] = &[b"<"];

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
            AstLang::Builtin(SupportLang::Python) => Some(py_text::comments_and_literals),
            _ => None,
        };
        let argument_commas = match lang {
            AstLang::Builtin(SupportLang::Rust) => Some(RUST_ARGUMENT_COMMAS),
            AstLang::Builtin(SupportLang::Python) => Some(PYTHON_ARGUMENT_COMMAS),
            AstLang::Builtin(SupportLang::TypeScript) => Some(TYPESCRIPT_ARGUMENT_COMMAS),
            _ => None,
        };
        Self {
            keywords,
            comment_line_breakers,
            literals,
            qualifiers,
            argument_commas,
        }
    }

    /// Whether the token at `at` comes right after a qualifier that is not the end of a longer
    /// run of its last character (`.` but not `..` or `...`, `::` but not `:::`).
    pub(super) fn qualified(&self, text: &[u8], at: usize) -> bool {
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
    pub(super) fn on_comment_line(&self, text: &[u8], at: usize) -> bool {
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
    pub(super) fn steps(&self, text: &[u8], at: usize, mut to: impl FnMut(usize)) {
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
pub(super) fn is_ascii_word_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_'
}

#[cfg(test)]
mod tests {
    use super::*;

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
