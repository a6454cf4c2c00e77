//! The review model as the page reads it: JSON with each diff line cut into segments, the
//! changed words marked (so the page never counts bytes of UTF-8 text).

use serde_json::{Value, json};

use crate::review::model::{ActionView, DiffLine, FileKind, FileView, HunkView, LineKind};

/// The pending actions, with the version the page polls for.
pub fn actions(version: &str, actions: &[ActionView]) -> Value {
    json!({
        "version": version,
        "actions": actions.iter().map(action).collect::<Vec<_>>(),
    })
}

fn action(action: &ActionView) -> Value {
    json!({
        "id": action.id,
        "version": action.version,
        "label": action.label,
        "origin": action.origin,
        "age": action.age,
        "note": action.note,
        "foreign": action.foreign,
        "rewrites": action
            .rewrites
            .iter()
            .map(|(pattern, out)| json!({ "pat": pattern, "out": out }))
            .collect::<Vec<_>>(),
        "files": action.files.iter().map(file).collect::<Vec<_>>(),
    })
}

fn file(file: &FileView) -> Value {
    json!({
        "path": file.path,
        "kind": match file.kind {
            FileKind::Create => "create",
            FileKind::Update => "update",
            FileKind::Delete => "delete",
        },
        "added": file.added,
        "removed": file.removed,
        "stale": file.stale,
        "hunks": file.hunks.iter().map(hunk).collect::<Vec<_>>(),
    })
}

fn hunk(hunk: &HunkView) -> Value {
    json!({
        "address": hunk.address,
        "header": hunk.header,
        "lines": hunk.lines.iter().map(line).collect::<Vec<_>>(),
    })
}

fn line(line: &DiffLine) -> Value {
    json!({
        "kind": match line.kind {
            LineKind::Context => "context",
            LineKind::Added => "added",
            LineKind::Removed => "removed",
            LineKind::NoNewline => "nonewline",
        },
        "segments": segments(&line.text, &line.changed_words),
    })
}

/// `text` cut at the changed ranges: `[[text, changed], …]`, in order, covering all of it.
fn segments(text: &str, changed: &[std::ops::Range<usize>]) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut at = 0;
    for range in changed {
        let (Some(before), Some(inside)) = (text.get(at..range.start), text.get(range.clone()))
        else {
            continue;
        };
        if !before.is_empty() {
            out.push((before.to_owned(), false));
        }
        if !inside.is_empty() {
            out.push((inside.to_owned(), true));
        }
        at = range.end;
    }
    if let Some(rest) = text.get(at..)
        && (!rest.is_empty() || out.is_empty())
    {
        out.push((rest.to_owned(), false));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_cover_the_line_and_mark_the_changed_words() {
        let changed = [9..12, 16..16];
        let cut = segments("let é = foo(1);", &changed);
        assert_eq!(
            cut,
            vec![
                ("let é = ".to_owned(), false),
                ("foo".to_owned(), true),
                ("(1);".to_owned(), false)
            ]
        );
        assert_eq!(segments("", &[]), vec![(String::new(), false)]);
    }
}
