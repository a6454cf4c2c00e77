//! What `resolve pending` tells a person about each pending action beside its label: how old
//! it is and its state (rebases, conflicts or stale since a file changed; amended), colored like the producers' output when color is on.

use anstyle::{AnsiColor, Style};
use resolve_core::visible_line;
use resolve_edit::{PendingRecord, RebaseState};

use crate::output::Output;
use crate::review::age_text;

/// A preview that does not apply as staged: a file changed since it was computed and it
/// conflicts (or no rebase is made).
const STALE: Style = AnsiColor::Red.on_default().bold();
/// A preview whose files changed since, which rebases onto them cleanly.
const REBASES: Style = AnsiColor::Yellow.on_default().bold();
/// A preview a person amended.
const AMENDED: Style = AnsiColor::Yellow.on_default();
/// The age, which matters less.
const AGE: Style = Style::new().dimmed();

/// `  3m ago  ✗ conflicts: a.txt changed  amended` for `record` (staged at `created_at`,
/// seconds), seen at `now`, in its rebase state (`None`: its files could not be read, which
/// makes it stale; the apply names why).
pub(super) fn pending_state(
    record: &PendingRecord,
    rebase: Option<&RebaseState>,
    now: u64,
    output: Output,
) -> String {
    let mut state = format!(
        "  {}",
        output.paint(&age_text(now.saturating_sub(record.created_at)), AGE)
    );
    let listed = |files: &mut dyn Iterator<Item = &str>| {
        files
            .map(|path| visible_line(path).into_owned())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let changed = match rebase {
        None => Some((
            "⚠ stale",
            listed(&mut record.change_set.paths().iter().map(String::as_str)),
            STALE,
        )),
        Some(RebaseState::Fresh) => None,
        Some(RebaseState::Rebases { files }) => Some((
            "↻ rebases",
            listed(&mut files.iter().map(String::as_str)),
            REBASES,
        )),
        Some(RebaseState::Conflicts { files }) => Some((
            "✗ conflicts",
            listed(&mut files.iter().map(|file| file.path.as_str())),
            STALE,
        )),
        Some(RebaseState::Stale { files }) => Some((
            "⚠ stale",
            listed(&mut files.iter().map(String::as_str)),
            STALE,
        )),
    };
    if let Some((mark, files, style)) = changed {
        state.push_str("  ");
        state.push_str(&output.paint(&format!("{mark}: {files} changed"), style));
    }
    if !record.amendments.is_empty() {
        state.push_str("  ");
        state.push_str(&output.paint("amended", AMENDED));
    }
    state
}
