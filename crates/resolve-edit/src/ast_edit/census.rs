//! How precise the literal prefilter is on a tree: of the files a request searches, how many it
//! keeps for parsing, and how many really match, and the bytes of each (what parsing costs
//! follows the bytes: a few large files kept in vain weigh more than many small ones). For
//! benchmarks (`cargo bench -p resolve-edit --bench prefilter`, `bench/run.py`); a preview does
//! not call it.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use resolve_store::Workspace;

use super::grammar::AstLang;
use super::language::{FileOps, LanguageOps, parse_language};
use super::prefilter::Prefilter;
use super::request::AstEditRequest;
use crate::error::EditError;
use crate::scope::Scope;
use crate::text_file::{decode, split_bom};

/// What the literal prefilter does with a request's files.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PrefilterCensus {
    /// Files of a searched language (text or not).
    pub searched: usize,
    /// Files whose text may hold a match, which a preview parses.
    pub kept: usize,
    /// Files the preview changes: those that really hold a match.
    pub matching: usize,
    /// The bytes of the files searched.
    pub searched_bytes: u64,
    /// The bytes of the files kept.
    pub kept_bytes: u64,
    /// The bytes of the files that match (as they were before the preview).
    pub matching_bytes: u64,
}

/// Count the files of `request`'s scope the prefilter keeps, and their bytes, reading each file
/// once, in turn (`matching` is left at 0: the caller runs the preview).
pub(super) fn count_kept(
    workspace: &Workspace,
    request: &AstEditRequest,
) -> Result<PrefilterCensus, EditError> {
    let forced = request.lang.as_deref().map(parse_language).transpose()?;
    let scope = Scope::resolve(workspace, &request.paths)?;
    let compiled: RefCell<HashMap<AstLang, Arc<LanguageOps>>> = RefCell::default();
    let mut census = PrefilterCensus::default();
    for file in scope.files(workspace) {
        let ops_of = |lang: AstLang| {
            Arc::clone(compiled.borrow_mut().entry(lang).or_insert_with(|| {
                Arc::new(LanguageOps::compile(
                    lang,
                    &request.ops,
                    Prefilter::Literals,
                ))
            }))
        };
        let Some(ops) = FileOps::of_file(&file.absolute, file.explicit, forced, ops_of) else {
            continue;
        };
        if !ops.usable() {
            continue;
        }
        census.searched += 1;
        let bytes = file.read().ok();
        let len = bytes.as_ref().map_or(0, |bytes| bytes.len() as u64);
        census.searched_bytes += len;
        if bytes
            .and_then(decode)
            .is_some_and(|text| ops.may_match(split_bom(&text).1))
        {
            census.kept += 1;
            census.kept_bytes += len;
        }
    }
    Ok(census)
}
