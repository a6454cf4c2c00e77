//! The list of preview producers — one line each, its request type — and what the list gives
//! everyone else: [`ProducerRequest`] (a typed request of any producer, which the model's JSON
//! arguments and the CLI's flags both become), [`PRODUCERS`], [`PRODUCER_NAMES`], their specs,
//! and the success text of an apply by the staging tool's name.
//!
//! A producer is its request type implementing [`Produce`] in its own module (its name,
//! description, schema, applied text and the preview itself); adding one is a line here.

use resolve_core::{ToolKind, ToolSpec};
use resolve_store::{ChangeSet, Workspace};
use serde_json::Value;

use crate::apply_patch::ApplyPatchRequest;
use crate::ast_edit::AstEditRequest;
use crate::error::EditError;
use crate::preview::{Produce, ProduceLimits, Produced};
use crate::producer::{Producer, replacements_text_for};
use crate::text_edit::{EditRequest, WriteRequest};

/// Declares the producers: [`ProducerRequest`] with one variant per line, [`PRODUCERS`] and
/// [`PRODUCER_NAMES`] in that order, and the dispatch from a request to its producer.
macro_rules! producers {
    ($($(#[$doc:meta])* $variant:ident($request:ty);)+) => {
        /// A typed request of one of the producers.
        #[derive(Debug, Clone)]
        pub enum ProducerRequest {
            $($(#[$doc])* $variant($request),)+
        }

        /// How many producers there are.
        const PRODUCER_COUNT: usize = [$(stringify!($variant)),+].len();

        /// Every producer, in the order tools are offered.
        pub const PRODUCERS: [Producer; PRODUCER_COUNT] =
            [$(<$request as Produce>::PRODUCER),+];

        /// Every producer's tool name, in the order tools are offered.
        pub const PRODUCER_NAMES: [&str; PRODUCER_COUNT] =
            [$(<$request as Produce>::PRODUCER.name()),+];

        impl ProducerRequest {
            /// The producer this request is for.
            pub fn producer(&self) -> Producer {
                match self {
                    $(Self::$variant(_) => <$request as Produce>::PRODUCER,)+
                }
            }

            /// The request of the producer named `name` from a model's JSON arguments
            /// (checked against its schema first); `None` when `name` is no producer.
            pub fn from_args(name: &str, args: &Value) -> Result<Option<Self>, EditError> {
                $(
                    if name == <$request as Produce>::PRODUCER.name() {
                        return typed::<$request>(args).map(|request| Some(Self::$variant(request)));
                    }
                )+
                Ok(None)
            }

            /// Compute the preview without touching the workspace.
            pub fn produce(
                &self,
                workspace: &Workspace,
                limits: ProduceLimits,
            ) -> Result<Produced, EditError> {
                match self {
                    $(Self::$variant(request) => request.produce(workspace, limits),)+
                }
            }
        }

        /// Every producer's spec, in the order tools are offered.
        pub fn producer_specs() -> Vec<ToolSpec> {
            vec![$(spec::<$request>(),)+]
        }

        $(
            impl From<$request> for ProducerRequest {
                fn from(request: $request) -> Self {
                    Self::$variant(request)
                }
            }
        )+
    };
}

producers! {
    /// `ast_edit`: structural rewrites over many files.
    AstEdit(AstEditRequest);
    /// `edit`: an exact-text replacement in one file.
    Edit(EditRequest);
    /// `write`: one file created or replaced whole.
    Write(WriteRequest);
    /// `apply_patch`: a Codex-format patch adding, deleting, moving and updating files.
    ApplyPatch(ApplyPatchRequest);
}

/// The spec of the producer `R`.
fn spec<R: Produce>() -> ToolSpec {
    ToolSpec {
        name: R::PRODUCER.name().to_owned(),
        description: R::DESCRIPTION.to_owned(),
        input_schema: R::input_schema(),
        hidden: false,
        strict: false,
        kind: ToolKind::Producer,
    }
}

/// `args` checked against the schema of `R`, as `R`.
fn typed<R: Produce>(args: &Value) -> Result<R, EditError> {
    spec::<R>().validate(args)?;
    serde_json::from_value(args.clone()).map_err(|error| {
        EditError::InvalidRequest(format!(
            "Invalid arguments for `{}`: {error}",
            R::PRODUCER.name()
        ))
    })
}

/// The producer named `name`, if it is one.
pub fn producer_named(name: &str) -> Option<Producer> {
    PRODUCERS
        .into_iter()
        .find(|producer| producer.name() == name)
}

/// The success text after applying `paths` of a change set staged by the tool `source_tool`:
/// its producer's ([`Producer::applied_text`]), or the multi-file text for any other tool.
pub(crate) fn applied_text_for(source_tool: &str, paths: &[String], replacements: usize) -> String {
    match producer_named(source_tool) {
        Some(producer) => producer.applied_text(paths, replacements),
        None => replacements_text_for(paths, replacements),
    }
}

/// The success text after applying `applied`, a change set staged by `source_tool`:
/// `Applied 3 replacements in 2 files.`, `Applied edit to <path>.` or `Wrote <path>.`.
pub fn applied_text(source_tool: &str, applied: &ChangeSet) -> String {
    applied_text_for(source_tool, &applied.paths(), applied.total_replacements())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{owned_strings, update_set};
    use resolve_core::RESOLVE_DESCRIPTION;

    #[test]
    fn names_round_trip_are_unique_and_other_tools_are_no_producer() {
        for producer in PRODUCERS {
            assert_eq!(producer_named(producer.name()), Some(producer));
        }
        let specs = producer_specs();
        let names: Vec<&str> = specs.iter().map(|spec| spec.name.as_str()).collect();
        assert_eq!(names, PRODUCER_NAMES);
        assert_eq!(PRODUCER_NAMES, ["ast_edit", "edit", "write", "apply_patch"]);
        assert_eq!(producer_named("custom_tool"), None);
    }

    #[test]
    fn applied_texts_name_one_file_or_count_replacements() {
        let [ast_edit, edit, write, apply_patch] = PRODUCERS;
        let cases: [(Producer, &[&str], usize, &str); 6] = [
            (apply_patch, &["src/a.rs"], 2, "Applied patch to src/a.rs."),
            (
                apply_patch,
                &["a.rs", "b.rs"],
                2,
                "Applied patch to 2 files.",
            ),
            (edit, &["src/a.rs"], 1, "Applied edit to src/a.rs."),
            (write, &["notes.md"], 1, "Wrote notes.md."),
            (ast_edit, &["a.rs"], 1, "Applied 1 replacement in 1 file."),
            (
                ast_edit,
                &["a.rs", "b.rs"],
                3,
                "Applied 3 replacements in 2 files.",
            ),
        ];
        for (producer, files, replacements, text) in cases {
            assert_eq!(
                producer.applied_text(&owned_strings(files), replacements),
                text
            );
        }
        assert_eq!(
            applied_text_for("custom", &owned_strings(&["a.rs", "b.rs"]), 3),
            "Applied 3 replacements in 2 files."
        );
    }

    #[test]
    fn applied_texts_use_singular_and_plural_forms() {
        /// A source tool, the files it changed (path, replacements), and its applied text.
        type Case = (&'static str, &'static [(&'static str, usize)], &'static str);
        let cases: [Case; 4] = [
            (
                "ast_edit",
                &[("a.rs", 1)],
                "Applied 1 replacement in 1 file.",
            ),
            (
                "ast_edit",
                &[("a.rs", 2), ("b.rs", 1)],
                "Applied 3 replacements in 2 files.",
            ),
            ("edit", &[("src/a.rs", 1)], "Applied edit to src/a.rs."),
            ("write", &[("notes.md", 1)], "Wrote notes.md."),
        ];
        for (source_tool, files, text) in cases {
            assert_eq!(applied_text(source_tool, &update_set(files)), text);
        }
    }

    #[test]
    fn the_resolve_description_names_every_producer() {
        for name in PRODUCER_NAMES {
            assert!(
                RESOLVE_DESCRIPTION.contains(&format!("`{name}`")),
                "the `resolve` description does not name `{name}`"
            );
        }
    }

    #[test]
    fn every_producer_schema_is_a_closed_object_without_refs() {
        for spec in producer_specs() {
            assert_eq!(spec.input_schema["type"], "object", "{}", spec.name);
            assert_eq!(
                spec.input_schema["additionalProperties"], false,
                "{}",
                spec.name
            );
            let text = spec.input_schema.to_string();
            assert!(
                !text.contains("$ref") && !text.contains("$schema"),
                "{text}"
            );
        }
    }
}
