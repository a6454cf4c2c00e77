//! The data of an `ast_edit` call: its arguments ([`AstEditRequest`], [`AstEditOp`]), its
//! outcome ([`AstEditOutcome`]) and the texts and the file cap that are part of its contract.
//!
//! Plain data only, so every other part of the producer can use it; it uses none of them.

use serde::{Deserialize, Serialize};

use crate::preview::Preview;
use crate::producer::Producer;

/// The `ast_edit` producer.
pub(crate) const AST_EDIT: Producer = Producer::new("ast_edit");

/// The file cap of model-facing tools: at most this many files changed by one preview.
pub const DEFAULT_MAX_FILES: usize = 1000;

/// The note appended when the file cap cut the preview short.
pub const LIMIT_NOTE: &str = "Limit reached; narrow paths.";

/// The text (first line) of a call that changed nothing.
pub const NO_REPLACEMENTS: &str = "No replacements made";

/// One rewrite: every match of `pat` becomes `out`, with its meta-variables filled in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AstEditOp {
    /// The ast-grep pattern, e.g. `foo($A)`.
    pub pat: String,
    /// The rewrite template, e.g. `bar($A)`; empty deletes the match.
    pub out: String,
}

/// The arguments of `ast_edit`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AstEditRequest {
    /// The rewrites, all matched against the original text (at least one).
    pub ops: Vec<AstEditOp>,
    /// Files, directories or globs, relative to the root (at least one).
    pub paths: Vec<String>,
    /// A language name (`rust`, `ts`, `python`, …) instead of inferring it from extensions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lang: Option<String>,
}

impl AstEditRequest {
    /// A request for the `(pattern, rewrite)` pairs of `ops` over `paths`, in `lang` when given
    /// (else each file's language comes from its extension).
    #[must_use]
    pub fn new(ops: &[(&str, &str)], paths: &[&str], lang: Option<&str>) -> Self {
        Self {
            ops: ops
                .iter()
                .map(|(pat, out)| AstEditOp {
                    pat: (*pat).to_owned(),
                    out: (*out).to_owned(),
                })
                .collect(),
            paths: paths.iter().map(|path| (*path).to_owned()).collect(),
            lang: lang.map(str::to_owned),
        }
    }
}

/// What an `ast_edit` call produced.
#[derive(Debug)]
pub enum AstEditOutcome {
    /// Nothing matched (or nothing would change): no change set, nothing to stage.
    NoReplacements {
        /// `No replacements made`, then notes on skipped files.
        text: String,
    },
    /// A preview to stage as a pending action.
    Preview(Box<Preview>),
}
