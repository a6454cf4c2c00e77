//! The `ast_edit` producer: structural rewrites with ast-grep patterns, computed as a preview.
//!
//! Every op is matched against the original text of a file. Within one op a match nested inside
//! another match is left alone and only the outermost is rewritten, exactly as `ast-grep run -U`
//! does (`foo(foo(1))` with `foo($A)` → `bar($A)` gives `bar(foo(1))`). Edits of different ops
//! that overlap at all are an error naming both patterns; identical edits are merged. Files
//! whose tree has parse errors, binary files and files that are not UTF-8 are skipped and
//! listed, never rewritten; outside the rewritten spans every byte (line endings, a byte-order
//! mark, a missing final newline) stays as it was. A file that lacks every pattern's literal
//! text (its longest token, e.g. `unwrap` in `$X.unwrap()`) cannot match and is not parsed, so
//! parse errors are reported only for files that could match. No workspace file is written:
//! the result is a [`Preview`] whose change set names the new contents, each appended to a pack
//! of the blob store (under `.resolve/`) as soon as it is computed, so a preview holds one
//! file's text per thread, never every changed file's. Files are searched in parallel and their
//! results taken in path order as they come (see the ordered module): each diff goes on to the
//! preview text and each change on to the change set's spool at once, so a preview that
//! changes every file of a tree holds no more than one that changes a few.
//!
//! Languages come from file extensions unless `lang` names one. Without `lang`, an op whose
//! pattern or rewrite does not parse in a language is not applied to that language's files; it
//! is an error only when it parses in none of the languages searched. With `lang`, it is always
//! an error, and directories and globs contribute only files of that language (as with
//! `ast-grep --lang`), while files named explicitly are parsed as `lang` whatever their
//! extension. Matches inside macro invocations (Rust token trees) are not found, and HTML files
//! are not searched inside their embedded scripts and styles.

use std::collections::HashMap;
use std::ops::{ControlFlow, Range};
use std::sync::{Arc, Mutex, PoisonError};

use ast_grep_core::replacer::{Replacer, TemplateFix};
use ast_grep_core::tree_sitter::StrDoc;
use ast_grep_core::{AstGrep, Pattern};
use ast_grep_language::{Language, SupportLang};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::blobs::{BlobWriter, Blobs, Pack, PackWriter};
use crate::change_set::{hex, sha256};
use crate::ordered::{default_threads, map_in_order};
use crate::preview::{AST_EDIT_TOOL, PreviewText, count_noun};
use crate::scope::{Scope, ScopedFile};
use crate::spool::ChangeSetWriter;
use crate::text_file::{decode, read_bytes, split_bom};
use crate::{Content, EditError, FileChange, Preview, Workspace, unified_diff};

/// The file cap of model-facing tools: at most this many files changed by one preview.
pub const DEFAULT_MAX_FILES: usize = 1000;

/// The note appended when the file cap cut the preview short.
pub const LIMIT_NOTE: &str = "Limit reached; narrow paths.";

/// The text (first line) of a call that changed nothing.
pub const NO_REPLACEMENTS: &str = "No replacements made";

/// How many skipped files the text lists by name (the details list all).
const SKIPPED_LISTED: usize = 20;

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

/// The success text after applying: `Applied 3 replacements in 2 files.`
pub fn ast_edit_applied_text(replacements: usize, files: usize) -> String {
    format!(
        "Applied {} in {}.",
        count_noun(replacements, "replacement"),
        count_noun(files, "file")
    )
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
    validate(request)?;
    let forced = request.lang.as_deref().map(parse_language).transpose()?;
    let forced_ops = match forced {
        Some(lang) => {
            let compiled = LanguageOps::compile(lang, &request.ops);
            if let Some(error) = compiled.first_error(lang) {
                return Err(error);
            }
            Some(Arc::new(compiled))
        }
        None => None,
    };
    let scope = Scope::resolve(workspace, &request.paths)?;
    let packs = Packs::new(Blobs::of(workspace));
    let compiled: Mutex<HashMap<SupportLang, Arc<LanguageOps>>> = Mutex::new(HashMap::new());
    let file_counts: Mutex<HashMap<SupportLang, usize>> = Mutex::new(HashMap::new());
    let mut assembly = Assembly::new(workspace, max_files);

    // Each file is searched on a worker thread; its result reaches the assembly in path order.
    let search = |file: ScopedFile| -> Option<FileResult> {
        let lang = match forced {
            Some(lang) if file.explicit => Some(lang),
            Some(lang) => detect_language(&file).filter(|detected| *detected == lang),
            None => detect_language(&file),
        };
        let Some(lang) = lang else {
            return file.explicit.then(|| FileResult::Skipped {
                path: file.relative,
                reason: "no supported language for this extension; pass `lang`".to_owned(),
                searched: false,
            });
        };
        *file_counts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(lang)
            .or_insert(0) += 1;
        let ops = match &forced_ops {
            Some(ops) => Arc::clone(ops),
            None => Arc::clone(
                compiled
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .entry(lang)
                    .or_insert_with(|| Arc::new(LanguageOps::compile(lang, &request.ops))),
            ),
        };
        ops.usable().then(|| process_file(file, lang, &ops, &packs))
    };
    map_in_order(
        scope.files(workspace),
        default_threads(),
        search,
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

/// The compiled language named `name`, if it is known and compiled in.
fn parse_language(name: &str) -> Result<SupportLang, EditError> {
    name.parse::<SupportLang>()
        .ok()
        .filter(|lang| COMPILED_LANGUAGES.contains(lang))
        .ok_or_else(|| EditError::UnknownLanguage {
            lang: name.to_owned(),
            supported: supported_languages().join(", "),
        })
}

/// The names `lang` accepts, one per compiled language.
pub fn supported_languages() -> Vec<String> {
    COMPILED_LANGUAGES
        .iter()
        .map(|lang| lang.to_string().to_lowercase())
        .collect()
}

/// The compiled language of a file, from its extension.
fn detect_language(file: &ScopedFile) -> Option<SupportLang> {
    SupportLang::from_path(&file.absolute).filter(|lang| COMPILED_LANGUAGES.contains(lang))
}

/// An op compiled for one language.
struct CompiledOp {
    pattern: Pattern,
    fixer: TemplateFix,
    /// Text every match contains (the pattern's longest literal token), possibly empty.
    needle: String,
}

/// Why an op does not compile for a language.
struct InvalidOp {
    /// The pattern or rewrite that failed.
    text: String,
    reason: String,
}

/// Every op of a request, compiled (once per call) for one language.
struct LanguageOps {
    ops: Vec<Result<CompiledOp, InvalidOp>>,
}

impl LanguageOps {
    fn compile(lang: SupportLang, ops: &[AstEditOp]) -> Self {
        Self {
            ops: ops.iter().map(|op| compile_op(op, lang)).collect(),
        }
    }

    /// Whether at least one op applies in this language.
    fn usable(&self) -> bool {
        self.ops.iter().any(Result::is_ok)
    }

    /// The error of the first op that does not compile.
    fn first_error(&self, lang: SupportLang) -> Option<EditError> {
        self.ops.iter().find_map(|op| match op {
            Ok(_) => None,
            Err(invalid) => Some(invalid_pattern(invalid, lang)),
        })
    }
}

fn invalid_pattern(invalid: &InvalidOp, lang: SupportLang) -> EditError {
    EditError::InvalidPattern {
        pattern: invalid.text.clone(),
        lang: lang.to_string(),
        reason: invalid.reason.clone(),
    }
}

fn compile_op(op: &AstEditOp, lang: SupportLang) -> Result<CompiledOp, InvalidOp> {
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
    let needle = pattern.fixed_string().into_owned();
    Ok(CompiledOp {
        pattern,
        fixer,
        needle,
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
fn parses_cleanly(source: &str, lang: SupportLang) -> Result<(), String> {
    let processed = lang.pre_process_pattern(source);
    if processed.trim().is_empty() {
        return Ok(());
    }
    let root = AstGrep::<StrDoc<SupportLang>>::try_new(&processed, lang)?;
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
fn unusable_op_error(
    compiled: &HashMap<SupportLang, Arc<LanguageOps>>,
    counts: &HashMap<SupportLang, usize>,
    op_count: usize,
) -> Option<EditError> {
    let mut languages: Vec<SupportLang> = compiled.keys().copied().collect();
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

/// What happened to one file.
enum FileResult {
    /// The diff is rendered and the new text stored here, on the worker's thread, so neither
    /// text outlives the file's turn.
    Changed {
        path: String,
        base_hash: [u8; 32],
        spooled: Spooled,
        replacements: usize,
    },
    /// The new text could not be stored.
    Failed(EditError),
    Unchanged,
    Skipped {
        path: String,
        reason: String,
        searched: bool,
    },
    Overlap {
        path: String,
        first: usize,
        second: usize,
    },
}

impl FileResult {
    fn searched(&self) -> bool {
        match self {
            Self::Changed { .. } | Self::Unchanged | Self::Overlap { .. } | Self::Failed(_) => true,
            Self::Skipped { searched, .. } => *searched,
        }
    }
}

fn process_file(
    file: ScopedFile,
    lang: SupportLang,
    ops: &LanguageOps,
    packs: &Packs,
) -> FileResult {
    let skipped = |reason: String| FileResult::Skipped {
        path: file.relative.clone(),
        reason,
        searched: true,
    };
    let bytes = match read_bytes(&file.absolute) {
        Ok(bytes) => bytes,
        Err(error) => return skipped(error.to_string()),
    };
    let Some(old) = decode(bytes) else {
        return skipped("binary or not valid UTF-8; not rewritten".to_owned());
    };
    match rewrite_source(&old, lang, ops) {
        Ok(None) => FileResult::Unchanged,
        Ok(Some(rewritten)) => {
            let diff = unified_diff(&file.relative, &old, &rewritten.text);
            let spooled = match packs.put(&rewritten.text, &diff) {
                Ok(spooled) => spooled,
                Err(error) => return FileResult::Failed(error),
            };
            FileResult::Changed {
                base_hash: sha256(old.as_bytes()),
                path: file.relative,
                spooled,
                replacements: rewritten.replacements,
            }
        }
        Err(SourceProblem::ParseErrors { line }) => skipped(format!(
            "parse errors (first at line {line}); not rewritten"
        )),
        Err(SourceProblem::Unparsable(reason)) => {
            skipped(format!("could not be parsed ({reason}); not rewritten"))
        }
        Err(SourceProblem::Overlap { first, second }) => FileResult::Overlap {
            path: file.relative,
            first,
            second,
        },
    }
}

/// Why a source was not rewritten.
#[derive(Debug, PartialEq, Eq)]
enum SourceProblem {
    /// The tree has ERROR or MISSING nodes; `line` is 1-based.
    ParseErrors { line: usize },
    /// The parser gave up.
    Unparsable(String),
    /// Edits of ops `first` and `second` overlap.
    Overlap { first: usize, second: usize },
}

/// A rewritten source.
#[derive(Debug, PartialEq, Eq)]
struct Rewritten {
    text: String,
    replacements: usize,
}

/// One replacement: bytes `range` of the source (after any byte-order mark) become `text`.
struct Span {
    range: Range<usize>,
    text: Vec<u8>,
    op: usize,
}

/// Rewrite `source` with every usable op; `None` when nothing would change.
fn rewrite_source(
    source: &str,
    lang: SupportLang,
    ops: &LanguageOps,
) -> Result<Option<Rewritten>, SourceProblem> {
    let (bom, body) = split_bom(source);
    // A match contains its pattern's literal tokens; a file lacking them all is not parsed.
    let may_match = ops.ops.iter().any(|op| {
        op.as_ref()
            .is_ok_and(|op| op.needle.is_empty() || body.contains(op.needle.as_str()))
    });
    if !may_match {
        return Ok(None);
    }
    let root =
        AstGrep::<StrDoc<SupportLang>>::try_new(body, lang).map_err(SourceProblem::Unparsable)?;
    let top = root.root();
    if top.get_inner_node().has_error() {
        let line = top
            .dfs()
            .find(|node| node.is_error() || node.is_missing())
            .map_or(1, |node| node.start_pos().line() + 1);
        return Err(SourceProblem::ParseErrors { line });
    }

    let mut spans = Vec::new();
    for (index, op) in ops.ops.iter().enumerate() {
        let Ok(op) = op else { continue };
        // Matches come in pre-order; one starting before the end of the previous rewritten
        // match is nested in it and left alone, as `ast-grep run -U` does.
        let mut cursor = 0;
        for found in top.find_all(&op.pattern) {
            let range = op.fixer.get_replaced_range(&found, &op.pattern);
            if range.start < cursor {
                continue;
            }
            cursor = range.end;
            spans.push(Span {
                text: op.fixer.generate_replacement(&found),
                range,
                op: index,
            });
        }
    }
    spans.sort_by(|a, b| {
        (a.range.start, a.range.end, &a.text).cmp(&(b.range.start, b.range.end, &b.text))
    });
    spans.dedup_by(|later, earlier| later.range == earlier.range && later.text == earlier.text);
    for pair in spans.windows(2) {
        if let [earlier, later] = pair
            && (later.range.start < earlier.range.end || later.range.start == earlier.range.start)
        {
            return Err(SourceProblem::Overlap {
                first: earlier.op.min(later.op),
                second: earlier.op.max(later.op),
            });
        }
    }

    let body_bytes = body.as_bytes();
    // The exact length, so the new text never over-allocates.
    let new_len = spans.iter().fold(source.len(), |len, span| {
        (len + span.text.len()).saturating_sub(span.range.len())
    });
    let mut out = Vec::with_capacity(new_len);
    out.extend_from_slice(bom.as_bytes());
    let mut cursor = 0;
    let mut replacements = 0;
    for span in &spans {
        let Some(original) = body_bytes.get(span.range.clone()) else {
            continue;
        };
        if original == span.text.as_slice() {
            continue;
        }
        out.extend_from_slice(&body_bytes[cursor..span.range.start]);
        out.extend_from_slice(&span.text);
        cursor = span.range.end;
        replacements += 1;
    }
    if replacements == 0 {
        return Ok(None);
    }
    out.extend_from_slice(&body_bytes[cursor..]);
    let text = String::from_utf8(out)
        .map_err(|_| SourceProblem::Unparsable("the rewrite produced invalid UTF-8".to_owned()))?;
    Ok(Some(Rewritten { text, replacements }))
}

/// The preview, put together from the files' results as they come in path order: a changed
/// file's diff goes on to the preview text and its change on to the change set's spool at once,
/// so what is held does not grow with the files changed. Only the skipped files are kept (they
/// are listed at the end).
struct Assembly<'a> {
    workspace: &'a Workspace,
    max_files: Option<usize>,
    searched: usize,
    /// Files changed, also those past the cap.
    changed: usize,
    /// The text and the change set, from the first change on.
    written: Option<(PreviewText<BlobWriter>, ChangeSetWriter)>,
    skipped: Vec<(String, String)>,
    /// The first overlap: the file and the two ops.
    overlap: Option<(String, usize, usize)>,
    /// The first change that could not be stored.
    failure: Option<EditError>,
}

impl<'a> Assembly<'a> {
    fn new(workspace: &'a Workspace, max_files: Option<usize>) -> Self {
        Self {
            workspace,
            max_files,
            searched: 0,
            changed: 0,
            written: None,
            skipped: Vec::new(),
            overlap: None,
            failure: None,
        }
    }

    /// Take the result of the next file in path order.
    fn add(&mut self, result: FileResult) {
        if result.searched() {
            self.searched += 1;
        }
        match result {
            FileResult::Unchanged => {}
            FileResult::Changed {
                path,
                base_hash,
                spooled,
                replacements,
            } => {
                self.changed += 1;
                let within_cap = self.max_files.is_none_or(|cap| self.changed <= cap);
                if within_cap && self.failure.is_none() {
                    let written = self.write(&path, base_hash, &spooled, replacements);
                    self.failure = written.err();
                }
            }
            FileResult::Skipped { path, reason, .. } => self.skipped.push((path, reason)),
            FileResult::Overlap {
                path,
                first,
                second,
            } => {
                self.overlap.get_or_insert((path, first, second));
            }
            FileResult::Failed(error) => {
                self.failure.get_or_insert(error);
            }
        }
    }

    /// Append a changed file's diff to the text and its change to the change set.
    fn write(
        &mut self,
        path: &str,
        base_hash: [u8; 32],
        spooled: &Spooled,
        replacements: usize,
    ) -> Result<(), EditError> {
        let (text, change_set) = match &mut self.written {
            Some(written) => written,
            None => self.written.insert((
                PreviewText::start(Blobs::of(self.workspace).writer()?)?,
                ChangeSetWriter::new(self.workspace),
            )),
        };
        let diff_len = usize::try_from(spooled.diff_len).map_err(|_| too_large(path))?;
        text.diff(
            &spooled
                .pack
                .read(spooled.offset + spooled.new_len, diff_len)?,
        )?;
        change_set.push(
            path,
            FileChange::Update {
                base_hash: hex(&base_hash),
                content: Content::Packed {
                    pack: spooled.pack.name().to_owned(),
                    offset: spooled.offset,
                    len: spooled.new_len,
                    hash: hex(&spooled.new_hash),
                },
                replacements,
            },
        )
    }

    /// The outcome: an error, no replacements, or the preview with its label and details.
    fn finish(self, request: &AstEditRequest) -> Result<AstEditOutcome, EditError> {
        if let Some(error) = self.failure {
            return Err(error);
        }
        if let Some((path, first, second)) = self.overlap {
            let pattern = |index: usize| {
                request
                    .ops
                    .get(index)
                    .map_or_else(String::new, |op| op.pat.clone())
            };
            return Err(EditError::OverlappingOps {
                first: pattern(first),
                second: pattern(second),
                path,
            });
        }
        let limit_reached = self.max_files.is_some_and(|cap| self.changed > cap);
        let mut notes = Vec::new();
        if !self.skipped.is_empty() {
            notes.push(skipped_note(&self.skipped));
        }
        if limit_reached {
            notes.push(LIMIT_NOTE.to_owned());
        }
        let Some((text, change_set)) = self.written else {
            let mut text = NO_REPLACEMENTS.to_owned();
            if self.searched == 0 {
                text.push_str("\nNo files were searched; check `paths` and `lang`.");
            }
            for note in &notes {
                text.push('\n');
                text.push_str(note);
            }
            return Ok(AstEditOutcome::NoReplacements { text });
        };
        let text = text.finish(&notes)?.finish()?;
        let change_set = change_set.finish()?;
        let total = change_set.total_replacements();
        let files = change_set.len();
        let label = format!(
            "AST Edit: {} in {}",
            count_noun(total, "replacement"),
            count_noun(files, "file")
        );
        let skipped: Vec<Value> = self
            .skipped
            .iter()
            .map(|(path, reason)| json!({"path": path, "reason": reason}))
            .collect();
        Ok(AstEditOutcome::Preview(Box::new(Preview {
            change_set,
            source_tool: AST_EDIT_TOOL.to_owned(),
            label,
            text: Content::Stored { blob: text },
            details: json!({
                "totalReplacements": total,
                "filesTouched": files,
                "filesSearched": self.searched,
                "skipped": skipped,
                "limitReached": limit_reached,
            }),
            files_key: Some(FILE_REPLACEMENTS),
        })))
    }
}

/// The details key listing every changed file with its replacements.
const FILE_REPLACEMENTS: &str = "fileReplacements";

/// The packs of one preview: each worker thread appends the new text and the diff of every file
/// it changes to a pack of its own (see [`PackWriter`]), so a preview holds neither; the
/// assembly reads each diff back for the text.
struct Packs {
    blobs: Blobs,
    /// Packs no thread is writing.
    idle: Mutex<Vec<PackWriter>>,
}

/// Where a changed file's new text and then its diff went, back to back, in one pack.
struct Spooled {
    pack: Arc<Pack>,
    /// Where the new text starts; the diff follows it.
    offset: u64,
    new_len: u64,
    new_hash: [u8; 32],
    diff_len: u64,
}

impl Packs {
    fn new(blobs: Blobs) -> Self {
        Self {
            blobs,
            idle: Mutex::new(Vec::new()),
        }
    }

    /// Append a changed file's new text, then its diff, to a pack.
    fn put(&self, new: &str, diff: &str) -> Result<Spooled, EditError> {
        let taken = self
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        let mut pack = match taken {
            Some(pack) => pack,
            None => self.blobs.create_pack()?,
        };
        let appended = pack.append(new.as_bytes()).and_then(|offset| {
            pack.append(diff.as_bytes())?;
            Ok(Spooled {
                pack: Arc::clone(pack.pack()),
                offset,
                new_len: new.len() as u64,
                new_hash: sha256(new.as_bytes()),
                diff_len: diff.len() as u64,
            })
        });
        self.idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(pack);
        appended
    }
}

/// The error for a diff too large to read back into memory on this machine.
fn too_large(path: &str) -> EditError {
    EditError::InvalidRequest(format!("the diff of `{path}` is too large to show"))
}

/// `Skipped 2 files:` and one `- path: reason` line per file (at most 20 named).
fn skipped_note(skipped: &[(String, String)]) -> String {
    let mut note = format!("Skipped {}:", count_noun(skipped.len(), "file"));
    for (path, reason) in skipped.iter().take(SKIPPED_LISTED) {
        note.push_str(&format!("\n- {path}: {reason}"));
    }
    if skipped.len() > SKIPPED_LISTED {
        note.push_str(&format!(
            "\n- … and {} more",
            skipped.len() - SKIPPED_LISTED
        ));
    }
    note
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn ops(lang: SupportLang, pairs: &[(&str, &str)]) -> LanguageOps {
        let ops: Vec<AstEditOp> = pairs
            .iter()
            .map(|(pat, out)| AstEditOp {
                pat: (*pat).to_owned(),
                out: (*out).to_owned(),
            })
            .collect();
        LanguageOps::compile(lang, &ops)
    }

    fn rewrite(source: &str, lang: SupportLang, pairs: &[(&str, &str)]) -> Option<String> {
        rewrite_source(source, lang, &ops(lang, pairs))
            .unwrap()
            .map(|rewritten| rewritten.text)
    }

    #[test]
    fn only_the_outermost_of_nested_matches_is_rewritten() {
        let rewritten = rewrite_source(
            "fn main() { foo(foo(1)); }\n",
            SupportLang::Rust,
            &ops(SupportLang::Rust, &[("foo($A)", "bar($A)")]),
        )
        .unwrap()
        .unwrap();
        assert_eq!(rewritten.text, "fn main() { bar(foo(1)); }\n");
        assert_eq!(rewritten.replacements, 1);
    }

    #[test]
    fn several_ops_rewrite_the_original_text_together() {
        assert_eq!(
            rewrite(
                "x = foo(1)\ny = baz(2)\n",
                SupportLang::Python,
                &[("foo($A)", "bar($A)"), ("baz($A)", "qux($A)")]
            )
            .as_deref(),
            Some("x = bar(1)\ny = qux(2)\n")
        );
    }

    #[test]
    fn overlapping_edits_of_two_ops_are_a_problem_naming_both() {
        let problem = rewrite_source(
            "let a = foo(bar(1));\n",
            SupportLang::TypeScript,
            &ops(
                SupportLang::TypeScript,
                &[("foo($A)", "f($A)"), ("bar($A)", "b($A)")],
            ),
        )
        .unwrap_err();
        assert_eq!(
            problem,
            SourceProblem::Overlap {
                first: 0,
                second: 1
            }
        );
    }

    #[test]
    fn identical_edits_of_two_ops_are_merged_not_an_overlap() {
        let rewritten = rewrite_source(
            "let a = foo(1);\n",
            SupportLang::TypeScript,
            &ops(
                SupportLang::TypeScript,
                &[("foo($A)", "bar($A)"), ("foo(1)", "bar(1)")],
            ),
        )
        .unwrap()
        .unwrap();
        assert_eq!(rewritten.text, "let a = bar(1);\n");
        assert_eq!(rewritten.replacements, 1);
    }

    #[test]
    fn crlf_bom_and_missing_final_newline_survive_byte_for_byte() {
        let source = "\u{feff}fn a() {\r\n    foo(1);\r\n}\r\nfn b() { foo(2) }";
        assert_eq!(
            rewrite(source, SupportLang::Rust, &[("foo($A)", "bar($A)")]).as_deref(),
            Some("\u{feff}fn a() {\r\n    bar(1);\r\n}\r\nfn b() { bar(2) }")
        );
    }

    #[test]
    fn a_tree_with_parse_errors_is_a_problem_with_its_line() {
        let problem = rewrite_source(
            "fn ok() {}\nfn broken( { foo(1) }\n",
            SupportLang::Rust,
            &ops(SupportLang::Rust, &[("foo($A)", "bar($A)")]),
        )
        .unwrap_err();
        assert!(
            matches!(problem, SourceProblem::ParseErrors { line: 2 }),
            "{problem:?}"
        );
    }

    #[test]
    fn a_source_without_the_patterns_literal_text_is_not_parsed() {
        // Broken, but without `foo` it cannot match: no parse error is reported.
        assert_eq!(
            rewrite_source(
                "fn broken( {\n",
                SupportLang::Rust,
                &ops(SupportLang::Rust, &[("foo($A)", "bar($A)")]),
            ),
            Ok(None)
        );
    }

    #[test]
    fn a_rewrite_equal_to_the_match_changes_nothing() {
        assert_eq!(
            rewrite("foo(1)\n", SupportLang::Python, &[("foo($A)", "foo($A)")]),
            None
        );
    }

    #[test]
    fn common_patterns_parse_cleanly() {
        for (pat, lang) in [
            ("$X.unwrap()", SupportLang::Rust),
            ("foo($A)", SupportLang::Rust),
            ("let $A = $B;", SupportLang::Rust),
            ("fn $F($$$P) { $$$B }", SupportLang::Rust),
            ("print($$$ARGS)", SupportLang::Python),
            ("console.log($$$A)", SupportLang::TypeScript),
            ("if err != nil { return $E }", SupportLang::Go),
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
        let reason = parses_cleanly("foo(($A", SupportLang::Rust).unwrap_err();
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

    #[test]
    fn applied_text_has_singular_and_plural_forms() {
        assert_eq!(
            ast_edit_applied_text(1, 1),
            "Applied 1 replacement in 1 file."
        );
        assert_eq!(
            ast_edit_applied_text(3, 2),
            "Applied 3 replacements in 2 files."
        );
    }
}
