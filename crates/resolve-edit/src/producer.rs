//! The preview producers by identity: their tool names (each spelled once, here) and the
//! success texts shown once a preview of theirs is applied. Producing previews is the
//! producers' own modules'; this module only names them.

use std::fmt;

use resolve_core::count_noun;

/// Name of the structural rewrite producer.
pub const AST_EDIT_TOOL: &str = "ast_edit";
/// Name of the exact-text edit producer.
pub const EDIT_TOOL: &str = "edit";
/// Name of the whole-file write producer.
pub const WRITE_TOOL: &str = "write";
/// Name of the Codex-format patch producer.
pub const APPLY_PATCH_TOOL: &str = "apply_patch";

/// A tool that produces previews.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Producer {
    /// `ast_edit`: structural rewrites over many files.
    AstEdit,
    /// `edit`: an exact-text replacement in one file.
    Edit,
    /// `write`: one file created or replaced whole.
    Write,
    /// `apply_patch`: a Codex-format patch adding, deleting, moving and updating files.
    ApplyPatch,
}

impl Producer {
    /// Every producer, in the order tools are offered.
    pub const ALL: [Producer; 4] = [Self::AstEdit, Self::Edit, Self::Write, Self::ApplyPatch];

    /// The tool's name (`ast_edit`, `edit`, `write`, `apply_patch`).
    pub fn name(self) -> &'static str {
        match self {
            Self::AstEdit => AST_EDIT_TOOL,
            Self::Edit => EDIT_TOOL,
            Self::Write => WRITE_TOOL,
            Self::ApplyPatch => APPLY_PATCH_TOOL,
        }
    }

    /// The producer named `name`, if it is one.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|producer| producer.name() == name)
    }

    /// The success text after applying `paths` (with `replacements` in all) of a preview of
    /// this producer: `Applied edit to <path>.`, `Wrote <path>.`, `Applied patch to <path>.`
    /// (`Applied patch to 2 files.`), or for several files (and for `ast_edit`) `Applied 3
    /// replacements in 2 files.`
    pub fn applied_text(self, paths: &[String], replacements: usize) -> String {
        match (self, paths) {
            (Self::Edit, [path]) => format!("Applied edit to {path}."),
            (Self::Write, [path]) => format!("Wrote {path}."),
            (Self::ApplyPatch, [path]) => format!("Applied patch to {path}."),
            (Self::ApplyPatch, _) => {
                format!("Applied patch to {}.", count_noun(paths.len(), "file"))
            }
            (Self::AstEdit | Self::Edit | Self::Write, _) => {
                replacements_text(replacements, paths.len())
            }
        }
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

/// The success text after applying `paths` of a change set staged by the tool `source_tool`:
/// its producer's ([`Producer::applied_text`]), or the multi-file text for any other tool.
pub fn applied_text_for(source_tool: &str, paths: &[String], replacements: usize) -> String {
    match Producer::from_name(source_tool) {
        Some(producer) => producer.applied_text(paths, replacements),
        None => replacements_text(replacements, paths.len()),
    }
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

    fn paths(names: &[&str]) -> Vec<String> {
        names.iter().map(|name| (*name).to_owned()).collect()
    }

    #[test]
    fn names_round_trip_and_other_tools_are_no_producer() {
        for producer in Producer::ALL {
            assert_eq!(Producer::from_name(producer.name()), Some(producer));
        }
        assert_eq!(Producer::from_name("custom_tool"), None);
    }

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

    #[test]
    fn applied_texts_name_one_file_or_count_replacements() {
        assert_eq!(
            Producer::Edit.applied_text(&paths(&["src/a.rs"]), 1),
            "Applied edit to src/a.rs."
        );
        assert_eq!(
            Producer::Write.applied_text(&paths(&["notes.md"]), 1),
            "Wrote notes.md."
        );
        assert_eq!(
            Producer::AstEdit.applied_text(&paths(&["a.rs"]), 1),
            "Applied 1 replacement in 1 file."
        );
        assert_eq!(
            Producer::AstEdit.applied_text(&paths(&["a.rs", "b.rs"]), 3),
            "Applied 3 replacements in 2 files."
        );
        assert_eq!(
            Producer::ApplyPatch.applied_text(&paths(&["a.rs", "b.rs"]), 3),
            "Applied patch to 2 files."
        );
        assert_eq!(
            applied_text_for("custom", &paths(&["a.rs", "b.rs"]), 3),
            "Applied 3 replacements in 2 files."
        );
    }
}
