//! The `ast_edit` producer: structural rewrites with ast-grep patterns, computed as a preview.
//!
//! Every op is matched against the original text of a file. Within one op a match nested inside
//! another match is left alone and only the outermost is rewritten, exactly as `ast-grep run -U`
//! does (`foo(foo(1))` with `foo($A)` → `bar($A)` gives `bar(foo(1))`). Edits of different ops
//! that overlap at all are an error naming both patterns; identical edits are merged. Files
//! whose tree has parse errors, binary files and files that are not UTF-8 are skipped and
//! listed, never rewritten; outside the rewritten spans every byte (line endings, a byte-order
//! mark, a missing final newline) stays as it was. A file that lacks every pattern's literal
//! tokens in the pattern's order (`mem` and `replace` with only `::`, whitespace or comments
//! between, for `mem::replace($A, $B)`) cannot match and is not parsed, so parse errors are
//! reported only for files that could match. No workspace file is written:
//! the result is a [`Preview`](crate::Preview) whose change set names the new contents, each appended to a pack
//! of the blob store (under `.resolve/`) as soon as it is computed, so a preview holds one
//! file's text per thread, never every changed file's. Files are searched in parallel and their
//! results taken in path order as they come (see the ordered module): each diff goes on to the
//! preview text and each change on to the change set's spool at once, so a preview that
//! changes every file of a tree holds no more than one that changes a few.
//!
//! Languages come from file extensions (`.tla` is TLA⁺) unless `lang` names one. Without `lang`, an op whose
//! pattern or rewrite does not parse in a language is not applied to that language's files; it
//! is an error only when it parses in none of the languages searched. With `lang`, it is always
//! an error, and directories and globs contribute only files of that language (as with
//! `ast-grep --lang`), while files named explicitly are parsed as `lang` whatever their
//! extension. As with ast-grep, the code an HTML file embeds in `<script>` and `<style>` elements is
//! searched in its own language (JavaScript, TypeScript or CSS, by the element's `lang`), both
//! without `lang` and when `lang` names that language; unlike `ast-grep run -U`, which writes
//! only the last element's rewrites, every element's rewrites land. Matches inside macro
//! invocations (Rust token trees) are not found.
//!
//! The parts, each using only those listed before it: `grammar` (the languages parsed:
//! ast-grep's own and TLA⁺), `request` (the call's arguments, outcome and contract texts),
//! `node_ends` (which children end a node, per grammar), `rust_text`, `ts_text` and `py_text`
//! (where a Rust, TypeScript or Python text's comments and literals are; `lex_oracle`, in
//! tests, checks them against the grammars), `gap_rules` (what may stand between two tokens a
//! pattern has next to each other, per language), `chain` (the search of a text for tokens and
//! brackets a match holds in order), `prefilter` (which texts may hold a match of a pattern,
//! without parsing), `anchored` (finding matches by visiting only nodes that
//! cover an occurrence of the pattern's first token), `language` (languages and ops compiled per
//! language), `census` (how many files the prefilter keeps, for benchmarks),
//! `packs` (where changed files' texts and diffs are stored), `rewrite` (one file: read,
//! rewrite, store), `rederive` (the same request run again on a file that moved, at apply) and
//! `assembly` (the preview, put together in path order). This module checks the request and
//! runs the search. Which files are searched (the scope module), the blob store, the change
//! set's spool and the preview text are not owned here.

mod anchored;
mod assembly;
mod census;
mod chain;
mod gap_rules;
mod grammar;
mod language;
#[cfg(test)]
mod lex_oracle;
mod node_ends;
mod packs;
mod prefilter;
mod py_text;
mod rederive;
mod request;
mod rewrite;
mod rust_text;
mod ts_text;

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::{Arc, Mutex, PoisonError};

use self::grammar::AstLang;

use self::assembly::Assembly;
use self::language::{FileOps, LanguageOps, parse_language, unusable_op_error};
use self::packs::Packs;
use self::rewrite::{FileResult, process_file, screen_file};
use resolve_store::{Blobs, Content, Workspace};
use serde_json::{Value, json};

use crate::error::EditError;
use crate::ordered::{Screened, default_threads, map_in_order_screened};
use crate::preview::{Produce, ProduceLimits, Produced, closed_object};
use crate::producer::Producer;
use crate::scope::{Scope, ScopedFile};

/// Files longer than this (bytes) are parsed by one thread only, so one at a time: a syntax
/// tree takes about 20 times its file's length, and the allocator keeps each thread's room for
/// the largest tree it built, so a preview's peak memory was about one large tree per thread.
const LARGE_FILE: u64 = 64 * 1024;

pub use self::census::PrefilterCensus;
pub use self::language::{language_of_path, supported_languages};
pub use self::prefilter::Prefilter;
pub use self::rederive::rederive;
pub use self::request::{
    AstEditOp, AstEditOutcome, AstEditRequest, DEFAULT_MAX_FILES, LIMIT_NOTE, NO_REPLACEMENTS,
};

const AST_EDIT_DESCRIPTION: &str = "\
Structural search-and-rewrite with ast-grep patterns, staged as a preview: nothing is written until you call `resolve`.
- `ops`: [{`pat`, `out`}]. `pat` is code in the target language with metavariables: `$X` matches one node, `$$$ARGS` any number of nodes. `out` is the replacement and may use the same metavariables. All ops match the original text; only the outermost of nested matches is rewritten.
- `paths`: files, directories or globs relative to the workspace root (`.gitignore` is honored).
- `lang` (optional): language name (rust, python, typescript, tsx, javascript, go, …); by default from each file's extension.
Patterns do not match inside macro invocations such as `println!(…)`. The result is a unified diff of the staged change.";

impl Produce for AstEditRequest {
    const PRODUCER: Producer = self::request::AST_EDIT;
    const DESCRIPTION: &'static str = AST_EDIT_DESCRIPTION;

    fn input_schema() -> Value {
        let op = closed_object(
            json!({
                "pat": {"type": "string", "description": "ast-grep pattern"},
                "out": {"type": "string", "description": "replacement"}
            }),
            &["pat", "out"],
        );
        let properties = json!({
            "ops": {"type": "array", "minItems": 1, "description": "rewrite operations", "items": op},
            "paths": {"type": "array", "minItems": 1, "items": {"type": "string"}, "description": "files, directories or globs"},
            "lang": {"type": "string", "description": "language name; default: from file extensions"}
        });
        closed_object(properties, &["ops", "paths"])
    }

    fn produce(&self, workspace: &Workspace, limits: ProduceLimits) -> Result<Produced, EditError> {
        Ok(match preview_ast_edit(workspace, self, limits.max_files)? {
            AstEditOutcome::NoReplacements { text } => Produced::Nothing(text),
            AstEditOutcome::Preview(preview) => Produced::Preview(preview),
        })
    }
}

/// Compute the `ast_edit` preview of `request`, reading files but writing none.
///
/// `max_files` caps the files changed ([`DEFAULT_MAX_FILES`] for model-facing tools): every file
/// is still searched, the files kept are the first in path order, and the text ends with
/// [`LIMIT_NOTE`].
pub fn preview_ast_edit(
    workspace: &Workspace,
    request: &AstEditRequest,
    max_files: Option<usize>,
) -> Result<AstEditOutcome, EditError> {
    preview_ast_edit_with(workspace, request, max_files, Prefilter::Literals)
}

/// How precise the prefilter is for `request`: the files it searches, those the prefilter keeps
/// for parsing, and those the preview changes, with their bytes (the preview's texts land in
/// the workspace's blob store, as any preview's do; nothing is staged).
pub fn prefilter_census(
    workspace: &Workspace,
    request: &AstEditRequest,
) -> Result<PrefilterCensus, EditError> {
    let mut census = census::count_kept(workspace, request)?;
    if let AstEditOutcome::Preview(preview) = preview_ast_edit(workspace, request, None)? {
        for (_, change) in preview.change_set.load()?.files() {
            census.matching += 1;
            // An `ast_edit` preview packs every original it changes.
            census.matching_bytes += match change.kept_base() {
                Some(Content::Packed { len, .. }) => len,
                _ => 0,
            };
        }
    }
    Ok(census)
}

/// [`preview_ast_edit`] with a chosen [`Prefilter`]: with [`Prefilter::Off`] every file of a
/// searched language is parsed, which gives the same changes, only slower.
pub fn preview_ast_edit_with(
    workspace: &Workspace,
    request: &AstEditRequest,
    max_files: Option<usize>,
    prefilter: Prefilter,
) -> Result<AstEditOutcome, EditError> {
    validate(request)?;
    let forced = request.lang.as_deref().map(parse_language).transpose()?;
    let forced_ops = match forced {
        Some(lang) => {
            let compiled = LanguageOps::compile(lang, &request.ops, prefilter);
            if let Some(error) = compiled.first_error(lang) {
                return Err(error);
            }
            Some(Arc::new(compiled))
        }
        None => None,
    };
    let scope = Scope::resolve(workspace, &request.paths)?;
    let packs = Packs::new(Blobs::of(workspace));
    let compiled: Mutex<HashMap<AstLang, Arc<LanguageOps>>> = Mutex::new(HashMap::new());
    let file_counts: Mutex<HashMap<AstLang, usize>> = Mutex::new(HashMap::new());
    let mut assembly = Assembly::new(workspace, max_files, scope.display(), &request.ops);

    // Each file is screened, and then parsed if it may match, on a worker thread; its result
    // reaches the assembly in path order.
    let screen = |file: ScopedFile| -> Screened<(ScopedFile, FileOps), Option<FileResult>> {
        let ops_of = |lang: AstLang| match &forced_ops {
            Some(ops) => Arc::clone(ops),
            None => Arc::clone(
                compiled
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .entry(lang)
                    .or_insert_with(|| {
                        Arc::new(LanguageOps::compile(lang, &request.ops, prefilter))
                    }),
            ),
        };
        let Some(ops) = FileOps::of_file(&file.absolute, file.explicit, forced, ops_of) else {
            return Screened::Done(file.explicit.then(|| FileResult::Skipped {
                path: file.relative,
                reason: "no supported language for this extension; pass `lang`".to_owned(),
                searched: false,
            }));
        };
        *file_counts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(ops.lang)
            .or_insert(0) += 1;
        if !ops.usable() {
            return Screened::Done(None);
        }
        screen_file(file, ops).map_done(Some)
    };
    map_in_order_screened(
        scope.files(workspace),
        default_threads(),
        screen,
        |(file, ops): (ScopedFile, FileOps)| Some(process_file(file, &ops, &packs)),
        LARGE_FILE,
        |result| {
            if let Some(result) = result {
                assembly.add(result);
            }
            ControlFlow::Continue(())
        },
    );

    if forced.is_none() {
        let compiled = compiled
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        let counts = file_counts
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(error) = unusable_op_error(&compiled, &counts, request.ops.len()) {
            return Err(error);
        }
    }
    assembly.finish(request)
}

/// Check what the schema cannot: non-empty patterns, no duplicate pattern, at least one op and
/// one path.
fn validate(request: &AstEditRequest) -> Result<(), EditError> {
    for (index, op) in request.ops.iter().enumerate() {
        if op.pat.trim().is_empty() {
            return Err(EditError::InvalidRequest(format!(
                "`ops[{index}].pat` must be a non-empty pattern"
            )));
        }
    }
    if request.ops.is_empty() {
        return Err(EditError::InvalidRequest(
            "`ops` must include at least one op entry".to_owned(),
        ));
    }
    for (index, op) in request.ops.iter().enumerate() {
        if request.ops[..index].iter().any(|other| other.pat == op.pat) {
            return Err(EditError::InvalidRequest(format!(
                "Duplicate rewrite pattern: {}",
                op.pat
            )));
        }
    }
    if request.paths.is_empty() {
        return Err(EditError::InvalidRequest(
            "`paths` must include at least one path".to_owned(),
        ));
    }
    Ok(())
}
