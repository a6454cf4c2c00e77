//! The read-only tools, which stage nothing and return plain text: `read` (numbered lines of a
//! file), `ls` (the entries of a directory) and `grep` (regex matches as `path:line:text`).
//! Paths are confined like every other path; binary files are refused by `read` and passed
//! over by `grep`. Both stream files through `line_scan` rather than loading them, so a huge
//! file or an endless line costs bounded memory, and neither opens a FIFO or device.

use std::ops::ControlFlow;

use regex::Regex;
use serde::{Deserialize, Serialize};

use resolve_store::{STATE_DIR, Workspace};

use crate::error::EditError;
use crate::line_scan::{LineInfo, LineScanner, ScanStop, utf8_prefix};
use crate::ordered::{default_threads, map_in_order};
use crate::scope::{Scope, ScopedFile};

/// Lines `read` shows when no `limit` is given.
pub const DEFAULT_READ_LIMIT: usize = 2000;

/// Matches `grep` shows at most.
pub const GREP_MAX_MATCHES: usize = 200;

/// Characters of one line shown by `read` and `grep` before it is cut.
const MAX_LINE_CHARS: usize = 2000;

/// Bytes of one line `read` keeps: enough for one character more than it shows, so a cut
/// line is still marked as cut.
const READ_KEEP_BYTES: usize = 4 * (MAX_LINE_CHARS + 1);

/// Bytes `read` returns at most (whole lines), so one call cannot flood a model's context.
pub const READ_MAX_OUTPUT: usize = 256 * 1024;

/// Bytes `read` scans without showing them once it reaches `offset` (the dropped tails of
/// long lines, then the lines counted after the window); past this the line count is a lower
/// bound. Lines before `offset` are always scanned: they were asked for.
pub const READ_SCAN_BUDGET: u64 = 16 * 1024 * 1024;

/// Bytes of one line `grep` matches against; a longer line is matched on its start only.
pub const GREP_LINE_BYTES: usize = 1024 * 1024;

/// Characters of a matching line that `grep` shows.
const GREP_LINE_CHARS: usize = 300;

/// The arguments of `read`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadRequest {
    /// The file, relative to the root.
    pub path: String,
    /// First line to show, 1-based (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<usize>,
    /// How many lines to show (default 2000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
}

/// The arguments of `ls`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LsRequest {
    /// The directory, relative to the root (default: the root).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

/// The arguments of `grep`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrepRequest {
    /// A regular expression (Rust `regex` syntax).
    pub pattern: String,
    /// A file, directory or glob to search (default: the root).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

/// `read`: the lines `offset..offset+limit` of a text file, each as `<number>\t<line>` with the
/// number right-aligned in 6 columns, and a note when lines remain.
///
/// The file is streamed: `read` scans up to the last line it shows, then counts the lines
/// after it for the note, up to [`READ_SCAN_BUDGET`] bytes not shown; past that the note
/// gives a lower bound. What it returns is at most [`READ_MAX_OUTPUT`] bytes (whole lines;
/// the note says where it was cut). The binary rule holds for the bytes scanned: a NUL byte
/// in the first 8 KiB, or bytes that are not UTF-8 anywhere up to where the scan stopped,
/// refuse the file; a file that is not UTF-8 only past that point has its valid lines shown.
/// Anything but a regular file (a FIFO, socket or device) is refused before it is opened.
pub fn read(workspace: &Workspace, request: &ReadRequest) -> Result<String, EditError> {
    let target = workspace.resolve(&request.path)?;
    if target.absolute.is_dir() {
        return Err(EditError::WrongKind {
            path: request.path.clone(),
            found: "a directory",
            expected: "a file (use `ls` for directories)",
        });
    }
    if !target.absolute.exists() {
        return Err(EditError::NotFound {
            path: request.path.clone(),
        });
    }
    let limit = request.limit.unwrap_or(DEFAULT_READ_LIMIT);
    if limit == 0 {
        return Err(EditError::InvalidRequest(
            "`limit` must be at least 1.".to_owned(),
        ));
    }
    let offset = request.offset.unwrap_or(1).max(1);
    let mut scanner = LineScanner::open(&target.relative, &target.real)?;
    let window = read_window(&mut scanner, offset, limit).map_err(|stop| match stop {
        // `read_window` turns a spent budget into a lower bound; only `Binary` reaches here.
        ScanStop::Binary | ScanStop::Budget => EditError::Binary {
            path: target.relative.clone(),
        },
        ScanStop::Io(source) => EditError::io("read", &target.real, source),
    })?;
    let Some(last) = window.last_shown else {
        return match window.total {
            LineCount::Exact(0) => Ok(format!("`{}` is empty.", target.relative)),
            LineCount::Exact(total) | LineCount::AtLeast(total) => {
                Err(EditError::InvalidRequest(format!(
                    "`{}` has {total} lines; offset {offset} is past the end.",
                    target.relative
                )))
            }
        };
    };
    let mut out = window.text;
    let of = match window.total {
        LineCount::Exact(total) if total == last && !window.output_cut => {
            out.pop();
            return Ok(out);
        }
        LineCount::Exact(total) => format!("of {total}"),
        LineCount::AtLeast(total) => {
            format!("of at least {total} (the rest of the file was not counted)")
        }
    };
    let lead = if window.output_cut {
        format!("Output cut at {} KiB: showing", READ_MAX_OUTPUT / 1024)
    } else {
        "Showing".to_owned()
    };
    out.push_str(&format!(
        "\n[{lead} lines {offset}-{last} {of}. Continue with offset={}.]",
        last + 1
    ));
    Ok(out)
}

/// How many lines a file has, as far as `read` counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LineCount {
    /// Exactly this many.
    Exact(usize),
    /// At least this many; counting stopped at [`READ_SCAN_BUDGET`].
    AtLeast(usize),
}

/// The lines `read` shows, rendered, and what it learned about the rest.
#[derive(Debug)]
struct Window {
    /// The shown lines, each `<number>\t<line>\n`.
    text: String,
    /// The number of the last line shown; `None` when none was.
    last_shown: Option<usize>,
    /// Whether [`READ_MAX_OUTPUT`] stopped the window before `limit` lines.
    output_cut: bool,
    /// The file's line count.
    total: LineCount,
}

/// Scan to line `offset`, render up to `limit` lines, then count the rest within the budget.
fn read_window(scanner: &mut LineScanner, offset: usize, limit: usize) -> Result<Window, ScanStop> {
    let mut kept = Vec::new();
    let mut window = Window {
        text: String::new(),
        last_shown: None,
        output_cut: false,
        total: LineCount::Exact(0),
    };
    // Lines before the window are scanned in full, however long: the model asked for them.
    let mut unbounded = u64::MAX;
    let mut seen = 0usize;
    while seen + 1 < offset {
        match scanner.next_line(0, &mut kept, &mut unbounded)? {
            Some(_) => seen += 1,
            None => {
                window.total = LineCount::Exact(seen);
                return Ok(window);
            }
        }
    }
    let mut budget = READ_SCAN_BUDGET;
    // `limit` comes from the model and may be as large as `usize::MAX`.
    let last_wanted = (offset - 1).saturating_add(limit);
    while seen < last_wanted {
        let (info, stopped) = match scanner.next_line(READ_KEEP_BYTES, &mut kept, &mut budget) {
            Ok(Some(info)) => (info, false),
            Ok(None) => {
                window.total = LineCount::Exact(seen);
                return Ok(window);
            }
            // A line longer than the budget: shown cut, and nothing after it is known.
            Err(ScanStop::Budget) => (LineInfo { cut: true }, true),
            Err(stop) => return Err(stop),
        };
        seen += 1;
        let text = utf8_prefix(&kept);
        let text = if info.cut {
            text
        } else {
            text.strip_suffix('\r').unwrap_or(text)
        };
        let line = format!("{seen:>6}\t{}\n", cut(text, MAX_LINE_CHARS));
        if window.text.len() + line.len() > READ_MAX_OUTPUT && window.last_shown.is_some() {
            window.output_cut = true;
            break;
        }
        window.text.push_str(&line);
        window.last_shown = Some(seen);
        if stopped {
            window.total = LineCount::AtLeast(seen);
            return Ok(window);
        }
    }
    loop {
        match scanner.next_line(0, &mut kept, &mut budget) {
            Ok(Some(_)) => seen += 1,
            Ok(None) => {
                window.total = LineCount::Exact(seen);
                return Ok(window);
            }
            Err(ScanStop::Budget) => {
                window.total = LineCount::AtLeast(seen + 1);
                return Ok(window);
            }
            Err(stop) => return Err(stop),
        }
    }
}

/// `ls`: the entries of a directory sorted by name, one per line, directories with a trailing
/// `/`; `.resolve` is not shown.
pub fn ls(workspace: &Workspace, request: &LsRequest) -> Result<String, EditError> {
    let given = request.path.as_deref().unwrap_or(".");
    let target = workspace.resolve(given)?;
    let metadata = std::fs::metadata(&target.absolute).map_err(|_| EditError::NotFound {
        path: given.to_owned(),
    })?;
    if !metadata.is_dir() {
        return Err(EditError::WrongKind {
            path: given.to_owned(),
            found: "a file",
            expected: "a directory (use `read` for files)",
        });
    }
    let entries = std::fs::read_dir(&target.absolute)
        .map_err(|source| EditError::io("list", &target.absolute, source))?;
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| EditError::io("list", &target.absolute, source))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if target.relative == "." && name == STATE_DIR {
            continue;
        }
        let is_dir = std::fs::metadata(entry.path()).is_ok_and(|metadata| metadata.is_dir());
        names.push(if is_dir { format!("{name}/") } else { name });
    }
    names.sort();
    if names.is_empty() {
        return Ok(format!("`{}` is empty.", target.relative));
    }
    Ok(names.join("\n"))
}

/// `grep`: every line matching `pattern` in the text files of `path`, as `path:line:text`
/// in path order, line by line, at most [`GREP_MAX_MATCHES`] with a note when there are more.
/// `.gitignore` and the hidden-file rule apply to directories and globs.
pub fn grep(workspace: &Workspace, request: &GrepRequest) -> Result<String, EditError> {
    let regex = Regex::new(&request.pattern).map_err(|error| EditError::InvalidRegex {
        pattern: request.pattern.clone(),
        reason: error.to_string(),
    })?;
    let path = request.path.clone().unwrap_or_else(|| ".".to_owned());
    let scope = Scope::resolve(workspace, std::slice::from_ref(&path))?;
    // Files come back in path order with their lines in order: the first matches are final,
    // and the search stops once there is one more than can be shown.
    let mut found: Vec<(String, usize, String)> = Vec::new();
    map_in_order(
        scope.files(workspace),
        default_threads(),
        |file: ScopedFile| grep_file(workspace, &regex, &file),
        |matches| {
            found.extend(matches);
            if found.len() > GREP_MAX_MATCHES {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        },
    );
    if found.is_empty() {
        return Ok(format!("No matches for `{}`.", request.pattern));
    }
    let more = found.len() > GREP_MAX_MATCHES;
    found.truncate(GREP_MAX_MATCHES);
    let mut out: Vec<String> = found
        .into_iter()
        .map(|(path, line, text)| format!("{path}:{line}:{text}"))
        .collect();
    if more {
        out.push(format!(
            "[Stopped at {GREP_MAX_MATCHES} matches; narrow the pattern or path.]"
        ));
    }
    Ok(out.join("\n"))
}

/// The first [`GREP_MAX_MATCHES`] matching lines of one file; none for binary files and
/// anything but regular files. The file is streamed line by line (each line matched on its
/// first [`GREP_LINE_BYTES`]), and scanned to its end so that a file that is not UTF-8 past its
/// first matches is still passed over, as a binary file.
fn grep_file(
    workspace: &Workspace,
    regex: &Regex,
    file: &ScopedFile,
) -> Vec<(String, usize, String)> {
    let Ok(real) = workspace.real_path(&file.absolute) else {
        return Vec::new();
    };
    let Ok(mut scanner) = LineScanner::open(&file.relative, &real) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    let mut kept = Vec::new();
    let mut unbounded = u64::MAX;
    let mut number = 0usize;
    loop {
        match scanner.next_line(GREP_LINE_BYTES, &mut kept, &mut unbounded) {
            Ok(Some(info)) => {
                number += 1;
                if found.len() >= GREP_MAX_MATCHES {
                    continue;
                }
                let text = utf8_prefix(&kept);
                let text = if info.cut {
                    text
                } else {
                    text.strip_suffix('\r').unwrap_or(text)
                };
                if regex.is_match(text) {
                    found.push((file.relative.clone(), number, cut(text, GREP_LINE_CHARS)));
                }
            }
            Ok(None) => return found,
            Err(ScanStop::Binary | ScanStop::Budget | ScanStop::Io(_)) => return Vec::new(),
        }
    }
}

/// `line` cut to `max` characters, marked when cut.
fn cut(line: &str, max: usize) -> String {
    match line.char_indices().nth(max) {
        Some((end, _)) => format!("{}… [line cut]", &line[..end]),
        None => line.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::test_support::workspace_holding;

    #[test]
    fn a_limit_as_large_as_usize_max_reads_to_the_end_instead_of_overflowing() {
        // Found by the `file_tools` fuzz target: `offset - 1 + limit` overflowed and panicked.
        let (_dir, workspace) = workspace_holding(&[("a.txt", b"one\ntwo\nthree\n")]);
        let request = ReadRequest {
            path: "a.txt".into(),
            offset: Some(2),
            limit: Some(usize::MAX),
        };
        assert_eq!(
            read(&workspace, &request).unwrap(),
            "     2\ttwo\n     3\tthree"
        );
    }

    #[test]
    fn long_lines_are_cut_on_a_character_boundary() {
        assert_eq!(cut("ééé", 2), "éé… [line cut]");
        assert_eq!(cut("ab", 2), "ab");
    }
}
