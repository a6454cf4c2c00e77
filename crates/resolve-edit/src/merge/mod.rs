//! Rebasing a preview onto a file that moved since it was staged: a three-way merge by lines
//! that decides as `git merge-file` does ([`merge_lines`]), and [`LineRebase`], the
//! [`Rebase`] the store calls at apply.
//!
//! The merge works on bytes: a line is what ends at a `\n` (or the end), so CRLF line ends, a
//! missing final newline, a BOM and bytes that are not UTF-8 are kept as they are.

mod line_diff;
mod three_way;

use resolve_store::{Rebase, RebaseConflict, Rebased};

pub use self::three_way::{LineConflict, LineMerge, MergeSide, merge_lines, merge_lines_taking};

/// The store's rebase: [`merge_lines`] of the current file, the base and the preview.
#[derive(Debug, Clone, Copy, Default)]
pub struct LineRebase;

impl Rebase for LineRebase {
    fn rebase(&self, base: &[u8], current: &[u8], preview: &[u8]) -> Rebased {
        let merge = merge_lines(current, base, preview);
        if merge.conflicts.is_empty() {
            return Rebased::Clean(merge.merged);
        }
        Rebased::Conflicts(
            merge
                .conflicts
                .into_iter()
                .map(|conflict| RebaseConflict {
                    current_line: conflict.current_start + 1,
                    current: conflict.current,
                    preview_line: conflict.preview_start + 1,
                    preview: conflict.preview,
                    base: conflict.base,
                })
                .collect(),
        )
    }
}
