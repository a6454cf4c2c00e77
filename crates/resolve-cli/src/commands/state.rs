//! What `resolve pending` tells a person about each pending action beside its label: how old
//! it is and its state (stale, amended), colored like the producers' output when color is on.

use anstyle::{AnsiColor, Style};
use resolve_core::visible_line;
use resolve_edit::{PendingRecord, Store};

use crate::output::Output;
use crate::review::age_text;

/// A stale preview: a file changed since it was computed.
const STALE: Style = AnsiColor::Red.on_default().bold();
/// A preview a person amended.
const AMENDED: Style = AnsiColor::Yellow.on_default();
/// The age, which matters less.
const AGE: Style = Style::new().dimmed();

/// `  3m ago  ⚠ stale: a.txt changed  amended` for `record` (staged at `created_at`, seconds),
/// seen at `now`.
pub(super) fn pending_state(
    store: &Store,
    record: &PendingRecord,
    now: u64,
    output: Output,
) -> String {
    let mut state = format!(
        "  {}",
        output.paint(&age_text(now.saturating_sub(record.created_at)), AGE)
    );
    // A file that cannot be read (not a regular file, say) makes the action stale too; the
    // apply names why.
    let stale = store
        .stale_files(record)
        .unwrap_or_else(|_| record.change_set.paths());
    if !stale.is_empty() {
        let files = stale
            .iter()
            .map(|path| visible_line(path).into_owned())
            .collect::<Vec<_>>()
            .join(", ");
        state.push_str("  ");
        state.push_str(&output.paint(&format!("⚠ stale: {files} changed"), STALE));
    }
    if !record.amendments.is_empty() {
        state.push_str("  ");
        state.push_str(&output.paint("amended", AMENDED));
    }
    state
}
