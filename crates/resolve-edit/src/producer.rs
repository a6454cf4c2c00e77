//! A preview producer by identity ([`Producer`]: its tool name and the success text once a
//! preview of it is applied). Which producers exist is the producers module's list; producing
//! previews is each producer's own module's.

use std::fmt;
use std::hash::{Hash, Hasher};

use resolve_core::count_noun;

/// The success text after applying `paths` with `replacements` in all.
type AppliedTextFn = fn(&[String], usize) -> String;

/// A tool that produces previews: its name and the text an apply of its previews answers.
#[derive(Debug, Clone, Copy)]
pub struct Producer {
    name: &'static str,
    applied: AppliedTextFn,
}

impl Producer {
    /// The producer named `name` whose applies answer `replacements_text_for` (`Applied 3
    /// replacements in 2 files.`) whatever they touched.
    pub const fn new(name: &'static str) -> Self {
        Self {
            name,
            applied: replacements_text_for,
        }
    }

    /// This producer answering `applied(paths, replacements)` after an apply.
    #[must_use]
    pub const fn with_applied_text(mut self, applied: AppliedTextFn) -> Self {
        self.applied = applied;
        self
    }

    /// The tool's name (`ast_edit`, `edit`, `write`).
    pub const fn name(self) -> &'static str {
        self.name
    }

    /// The success text after applying `paths` (with `replacements` in all) of a preview of
    /// this producer: `Applied edit to <path>.`, `Wrote <path>.`, `Applied patch to <path>.`
    /// (`Applied patch to 2 files.`), or for several files (and for `ast_edit`) `Applied 3
    /// replacements in 2 files.`
    pub fn applied_text(self, paths: &[String], replacements: usize) -> String {
        (self.applied)(paths, replacements)
    }
}

impl PartialEq for Producer {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for Producer {}

impl Hash for Producer {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.name.hash(state);
    }
}

impl fmt::Display for Producer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `Applied 3 replacements in 2 files.`: the success text of a multi-file apply.
pub(crate) fn replacements_text(replacements: usize, files: usize) -> String {
    format!(
        "Applied {} in {}.",
        count_noun(replacements, "replacement"),
        count_noun(files, "file")
    )
}

/// [`replacements_text`] for `paths`.
pub(crate) fn replacements_text_for(paths: &[String], replacements: usize) -> String {
    replacements_text(replacements, paths.len())
}

/// The label of what a partial apply landed, from the pending action's `label`: its source
/// kept, its summary replaced by what was written and how many files were dropped, e.g.
/// `AST Edit: 1 replacement in 1 file, 1 file dropped`. The history keeps the original label.
pub fn applied_label(
    label: &str,
    applied_files: usize,
    replacements: usize,
    dropped: usize,
) -> String {
    let summary = format!(
        "{} in {}, {} dropped",
        count_noun(replacements, "replacement"),
        count_noun(applied_files, "file"),
        count_noun(dropped, "file")
    );
    match label.split_once(": ") {
        Some((source, _)) if !source.is_empty() => format!("{source}: {summary}"),
        Some(_) | None => summary,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partial_apply_is_labelled_with_what_landed_and_what_was_dropped() {
        assert_eq!(
            applied_label("AST Edit: 4 replacements in 2 files", 1, 1, 1),
            "AST Edit: 1 replacement in 1 file, 1 file dropped"
        );
        assert_eq!(
            applied_label("AST Edit: 9 replacements in 5 files", 2, 5, 3),
            "AST Edit: 5 replacements in 2 files, 3 files dropped"
        );
        assert_eq!(
            applied_label("changes", 1, 2, 1),
            "2 replacements in 1 file, 1 file dropped"
        );
    }
}
