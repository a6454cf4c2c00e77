//! Chains: what a pattern's match holds in order between two places where anything may come,
//! and the search for one in a text.
//!
//! A chain starts with a token (a named leaf of the pattern, held verbatim by a match) and goes
//! on with more tokens, each after a gap [`GapRules`] allows, and with brackets: where a node
//! of the pattern starts with an opening bracket and ends with the closer of it, the source's
//! node does too, and what its match holds between them is balanced (every bracket of its code
//! opened inside is closed inside). So the closer is the one that balances the opener, and a
//! meta-variable between them ([`Item::Skip`]) stands for text that ends before that closer:
//! `$X.setdefault($$$A).append($V)` needs `setdefault`, `(`, the `)` that balances it and
//! `append` with only a gap between, where without the brackets anything could come between
//! `setdefault` and `append`.
//!
//! Which brackets are code the language's lexer says (see [`Lexed`]). Where a search meets
//! what the lexer is not sure of, a bracket inside a comment or literal, or brackets that do
//! not balance (a text the grammar parses only with errors), it decides nothing
//! ([`Found::Unsure`]) and the text is kept.

use std::cell::OnceCell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

use memchr::memmem;

use super::gap_rules::{GapRules, Lexer, is_ascii_word_byte};
use super::rust_text::{Lexed, covers};

/// A named leaf of the pattern, which a match holds verbatim.
#[derive(Clone)]
pub(super) struct Token {
    /// The leaf's text.
    pub(super) text: Vec<u8>,
    /// An identifier: the lexer took every word character next to it into it, so in a match no
    /// ASCII letter, digit or `_` stands right before or after it (`unwrap` is not the start
    /// of `unwrap_or`).
    pub(super) whole_word: bool,
}

/// One step of a chain.
pub(super) enum Item {
    /// A token, after a gap.
    Token(Token),
    /// An opening bracket that starts a node of the pattern, after a gap.
    Open(u8),
    /// The closer that balances the innermost open bracket, after a gap.
    Close,
    /// Anything balanced that ends before the closer of the innermost open bracket: a
    /// meta-variable, or the end of a node that may have more children.
    Skip,
    /// One name (an identifier, a tuple field's number), after a gap: a meta-variable the
    /// grammar allows nothing else for (the field of a member access).
    Name,
    /// The one argument of a call, between its brackets: a single meta-variable that is all
    /// the pattern has there matches one node, so the text up to the closer is not blank and
    /// no comma of its own separates two arguments. The closer follows.
    Argument,
}

/// What a chain's search in a text came to.
pub(super) enum Found {
    /// The chain follows from its first token at this offset.
    At(usize),
    /// The chain follows nowhere.
    Nowhere,
    /// The search met what the lexer is not sure of: the text may hold the chain anywhere.
    Unsure,
}

/// Items a match holds in order, starting with a token.
pub(super) struct Chain {
    /// Finds the first token.
    first: memmem::Finder<'static>,
    /// The first token.
    head: Token,
    /// The items after the first token.
    rest: Vec<Item>,
}

impl Chain {
    /// The chain of `items`, or `None` when they do not start with a token.
    pub(super) fn new(mut items: Vec<Item>) -> Option<Self> {
        if !matches!(items.first(), Some(Item::Token(_))) {
            return None;
        }
        let Item::Token(head) = items.remove(0) else {
            return None;
        };
        Some(Self {
            first: memmem::Finder::new(&head.text).into_owned(),
            head,
            rest: items,
        })
    }

    /// Finds the chain's first token.
    pub(super) fn first(&self) -> &memmem::Finder<'static> {
        &self.first
    }

    /// The tokens of the chain, in order.
    #[cfg(test)]
    pub(super) fn tokens(&self) -> Vec<&[u8]> {
        let rest = self.rest.iter().filter_map(|item| match item {
            Item::Token(token) => Some(token.text.as_slice()),
            _ => None,
        });
        std::iter::once(self.head.text.as_slice())
            .chain(rest)
            .collect()
    }

    /// Whether the chain holds a single argument between brackets (see [`Item::Argument`]).
    pub(super) fn has_argument(&self) -> bool {
        self.rest.iter().any(|item| matches!(item, Item::Argument))
    }

    /// The first start at or after `from` where the whole chain follows, its first token
    /// occurring as `found` says; an identifier there counts only outside comments and
    /// literals (no identifier of a match is in one).
    pub(super) fn find(&self, scan: &Scan, from: usize, found: Occurrence) -> Found {
        let Some(haystack) = scan.text.get(from..) else {
            return Found::Nowhere;
        };
        let len = self.head.text.len();
        for start in self.first.find_iter(haystack).map(|at| from + at) {
            if !found.counts(scan.text, start, scan.gaps)
                || !self.head.stands_alone(scan.text, start)
                || (self.head.whole_word && scan.in_literal(start))
            {
                continue;
            }
            match scan.follows(start + len, &self.rest, &mut Vec::new()) {
                Ok(true) => return Found::At(start),
                Ok(false) => {}
                Err(Unsure) => return Found::Unsure,
            }
        }
        Found::Nowhere
    }
}

impl Token {
    /// Whether the occurrence of the token at `at` in `text` may be the whole token (always,
    /// unless it is an identifier with a word character of the text right next to it).
    fn stands_alone(&self, text: &[u8], at: usize) -> bool {
        !self.whole_word || token_stands_alone(text, at, self.text.len())
    }
}

/// Which occurrences of a chain's first token count.
#[derive(Clone, Copy)]
pub(super) struct Occurrence {
    /// Not those on a comment line.
    pub(super) skip_comment_lines: bool,
    /// Not those right after a qualifier (`.`, `::`).
    pub(super) unqualified: bool,
}

impl Occurrence {
    /// Whether the occurrence of a first token at `at` in `text` counts.
    fn counts(self, text: &[u8], at: usize, gaps: &GapRules) -> bool {
        let on_comment_line = self.skip_comment_lines && gaps.on_comment_line(text, at);
        let qualified = self.unqualified && gaps.qualified(text, at);
        !on_comment_line && !qualified
    }
}

/// The search met what the lexer is not sure of.
pub(super) struct Unsure;

/// One text searched for chains: the text, its language's gap rules and its comments and
/// literals, lexed the first time they are asked about.
pub(super) struct Scan<'t> {
    text: &'t [u8],
    gaps: &'t GapRules,
    lexed: OnceCell<Option<Lexed>>,
}

impl<'t> Scan<'t> {
    /// A search in `text` of a language with `gaps`.
    pub(super) fn new(text: &'t [u8], gaps: &'t GapRules) -> Self {
        Self {
            text,
            gaps,
            lexed: OnceCell::new(),
        }
    }

    /// Whether the language has a lexer of its comments and literals.
    pub(super) fn has_lexer(&self) -> bool {
        self.gaps.literals.is_some()
    }

    fn lexed(&self) -> Option<&Lexed> {
        let lex: Option<Lexer> = self.gaps.literals;
        self.lexed
            .get_or_init(|| lex.map(|lex| lex(self.text)))
            .as_ref()
    }

    /// Whether `at` is inside a comment or a literal (never, without a lexer).
    fn in_literal(&self, at: usize) -> bool {
        self.lexed().is_some_and(|lexed| covers(&lexed.ranges, at))
    }

    /// Whether `items` follow from `pos` on; `closers` holds where the open brackets close,
    /// innermost last.
    fn follows(
        &self,
        pos: usize,
        items: &[Item],
        closers: &mut Vec<usize>,
    ) -> Result<bool, Unsure> {
        let Some((item, rest)) = items.split_first() else {
            return Ok(true);
        };
        let bound = closers.last().copied();
        if let (Item::Argument, Some(close)) = (item, bound) {
            return if self.may_be_one_argument(pos, close) {
                self.follows(close, rest, closers)
            } else {
                Ok(false)
            };
        }
        if let Item::Skip = item {
            let Some(close) = bound else {
                return Ok(true);
            };
            let within = &self.text[pos.min(close)..close];
            // Where the next item may start: at the closer, or anywhere before it holding it.
            let starts: Vec<usize> = match rest.first() {
                None | Some(Item::Close) => vec![close],
                Some(Item::Skip | Item::Argument) => vec![pos],
                Some(Item::Token(token)) => memmem::find_iter(within, &token.text)
                    .map(|at| pos + at)
                    .collect(),
                Some(Item::Open(byte)) => memchr::memchr_iter(*byte, within)
                    .map(|at| pos + at)
                    .collect(),
                Some(Item::Name) => (pos..close).collect(),
            };
            for start in starts {
                if self.follows(start, rest, closers)? {
                    return Ok(true);
                }
            }
            return Ok(false);
        }
        // Positions a gap reaches from `pos`, smallest first; every step moves forward.
        let mut reachable = BinaryHeap::from([Reverse(pos)]);
        let mut last = None;
        while let Some(Reverse(at)) = reachable.pop() {
            if last == Some(at) {
                continue;
            }
            if bound.is_some_and(|close| at > close) {
                break;
            }
            last = Some(at);
            if self.item_at(item, at, rest, closers)? {
                return Ok(true);
            }
            self.gaps
                .steps(self.text, at, |to| reachable.push(Reverse(to)));
        }
        Ok(false)
    }

    /// Whether `item` is at `at` and `rest` follows it.
    fn item_at(
        &self,
        item: &Item,
        at: usize,
        rest: &[Item],
        closers: &mut Vec<usize>,
    ) -> Result<bool, Unsure> {
        match item {
            Item::Token(token) => {
                if self.text[at..].starts_with(&token.text) && token.stands_alone(self.text, at) {
                    self.follows(at + token.text.len(), rest, closers)
                } else {
                    Ok(false)
                }
            }
            Item::Open(byte) => {
                if self.text.get(at) != Some(byte) {
                    return Ok(false);
                }
                closers.push(self.closer_of(at)?);
                let found = self.follows(at + 1, rest, closers);
                closers.pop();
                found
            }
            Item::Close => {
                if closers.last() != Some(&at) {
                    return Ok(false);
                }
                closers.pop();
                let found = self.follows(at + 1, rest, closers);
                closers.push(at);
                found
            }
            Item::Name => {
                let run = self.text[at..]
                    .iter()
                    .take_while(|&&byte| is_name_byte(byte))
                    .count();
                for end in at + 1..=at + run {
                    if self.follows(end, rest, closers)? {
                        return Ok(true);
                    }
                }
                Ok(false)
            }
            Item::Skip | Item::Argument => Ok(false),
        }
    }

    /// Whether the code from `from` to the closer at `close` may be one argument: not blank,
    /// and any comma at its top level (outside its own brackets, comments and literals) either
    /// ends it (a trailing comma, maybe before a comment) or comes after what may hold a comma
    /// of one argument (a lambda's or closure's parameters, type arguments; see
    /// [`GapRules`]).
    fn may_be_one_argument(&self, from: usize, close: usize) -> bool {
        let (Some(lexed), Some(shields)) = (self.lexed(), self.gaps.argument_commas) else {
            return true;
        };
        let text = &self.text[..close];
        if text[from.min(close)..].trim_ascii().is_empty() {
            return false;
        }
        let mut depth = 0usize;
        for (at, byte) in code_bytes(text, lexed, from, close) {
            if closer(byte).is_some() {
                depth += 1;
            } else if matches!(byte, b')' | b']' | b'}') {
                depth = depth.saturating_sub(1);
            } else if depth == 0 {
                if byte == b',' {
                    let after = text[at + 1..].trim_ascii_start();
                    return after.is_empty() || after.starts_with(b"#") || after.starts_with(b"/");
                }
                if shields.iter().any(|shield| {
                    text[at..].starts_with(shield) && token_stands_alone(text, at, shield.len())
                }) {
                    return true;
                }
            }
        }
        true
    }

    /// Where the bracket of code at `open` closes: the closer that balances it, counting only
    /// brackets outside comments and literals.
    fn closer_of(&self, open: usize) -> Result<usize, Unsure> {
        let lexed = self.lexed().ok_or(Unsure)?;
        let end = lexed.sure_until.min(self.text.len());
        if open >= end || covers(&lexed.ranges, open) {
            return Err(Unsure);
        }
        let mut expected = vec![closer(self.text[open]).ok_or(Unsure)?];
        for (at, byte) in code_bytes(self.text, lexed, open + 1, end) {
            if let Some(closer) = closer(byte) {
                expected.push(closer);
            } else if matches!(byte, b')' | b']' | b'}') {
                if expected.pop() != Some(byte) {
                    return Err(Unsure);
                }
                if expected.is_empty() {
                    return Ok(at);
                }
            }
        }
        Err(Unsure)
    }
}

/// The bytes of `text` from `from` to `end` that lie outside `lexed`'s comments and literals,
/// with their offsets.
fn code_bytes<'t>(
    text: &'t [u8],
    lexed: &'t Lexed,
    from: usize,
    end: usize,
) -> impl Iterator<Item = (usize, u8)> + 't {
    let mut next_range = lexed.ranges.partition_point(|range| range.end <= from);
    let mut at = from;
    std::iter::from_fn(move || {
        while let Some(range) = lexed.ranges.get(next_range)
            && range.start <= at
        {
            at = at.max(range.end);
            next_range += 1;
        }
        let byte = *text.get(at).filter(|_| at < end)?;
        at += 1;
        Some((at - 1, byte))
    })
}

/// Whether the text at `at..at + len` is not part of a longer word (where it starts or ends
/// with a word character).
fn token_stands_alone(text: &[u8], at: usize, len: usize) -> bool {
    let word = |index: Option<usize>| {
        index
            .and_then(|index| text.get(index))
            .is_some_and(|byte| is_ascii_word_byte(*byte))
    };
    let end = at + len;
    let joined_before = word(Some(at)) && word(at.checked_sub(1));
    let joined_after = word(end.checked_sub(1)) && word(Some(end));
    !joined_before && !joined_after
}

/// Whether `byte` may be part of a name: anything but whitespace, a qualifier, brackets,
/// separators and quotes (a name may hold non-ASCII letters, `$`, `#` (`r#type`, `#private`),
/// `-` (a JSX name), escapes).
fn is_name_byte(byte: u8) -> bool {
    !byte.is_ascii_whitespace() && !b".()[],;:?'\"`".contains(&byte)
}

/// The closer of an opening bracket.
fn closer(open: u8) -> Option<u8> {
    match open {
        b'(' => Some(b')'),
        b'[' => Some(b']'),
        b'{' => Some(b'}'),
        _ => None,
    }
}

/// Whether `open` and `close` are a bracket pair.
pub(super) fn are_brackets(open: u8, close: u8) -> bool {
    closer(open) == Some(close)
}
