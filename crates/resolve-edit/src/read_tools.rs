//! The read-only tools, which stage nothing and return plain text: `read` (numbered lines of a
//! file), `ls` (the entries of a directory) and `grep` (regex matches as `path:line:text`).
//! Paths are confined like every other path; binary files are refused by `read` and passed
//! over by `grep`.

use std::ops::ControlFlow;

use regex::Regex;
use serde::{Deserialize, Serialize};

use resolve_store::{STATE_DIR, Workspace};

use crate::error::EditError;
use crate::ordered::{default_threads, map_in_order};
use crate::scope::{Scope, ScopedFile};
use crate::text_file::{decode, read_bytes, split_bom};

/// Lines `read` shows when no `limit` is given.
pub const DEFAULT_READ_LIMIT: usize = 2000;

/// Matches `grep` shows at most.
pub const GREP_MAX_MATCHES: usize = 200;

/// Characters of one line shown by `read` and `grep` before it is cut.
const MAX_LINE_CHARS: usize = 2000;

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
    let text = decode(read_bytes(&target.absolute)?).ok_or_else(|| EditError::Binary {
        path: target.relative.clone(),
    })?;
    let (_, body) = split_bom(&text);
    if body.is_empty() {
        return Ok(format!("`{}` is empty.", target.relative));
    }
    let lines: Vec<&str> = body
        .strip_suffix('\n')
        .unwrap_or(body)
        .split('\n')
        .map(|line| line.strip_suffix('\r').unwrap_or(line))
        .collect();
    let total = lines.len();
    if offset > total {
        return Err(EditError::InvalidRequest(format!(
            "`{}` has {total} lines; offset {offset} is past the end.",
            target.relative
        )));
    }
    // `limit` comes from the model and may be as large as `usize::MAX`.
    let last = (offset - 1).saturating_add(limit).min(total);
    let mut out = String::new();
    for (index, line) in lines[offset - 1..last].iter().enumerate() {
        out.push_str(&format!(
            "{:>6}\t{}\n",
            offset + index,
            cut(line, MAX_LINE_CHARS)
        ));
    }
    if last < total {
        out.push_str(&format!(
            "\n[Showing lines {offset}-{last} of {total}. Continue with offset={}.]",
            last + 1
        ));
    } else if out.ends_with('\n') {
        out.pop();
    }
    Ok(out)
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
        |file: ScopedFile| grep_file(&regex, &file),
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

/// The first [`GREP_MAX_MATCHES`] matching lines of one file; none for binary files.
fn grep_file(regex: &Regex, file: &ScopedFile) -> Vec<(String, usize, String)> {
    let Some(text) = read_bytes(&file.absolute).ok().and_then(decode) else {
        return Vec::new();
    };
    let (_, body) = split_bom(&text);
    body.split('\n')
        .enumerate()
        .map(|(index, line)| (index, line.strip_suffix('\r').unwrap_or(line)))
        .filter(|(_, line)| regex.is_match(line))
        .take(GREP_MAX_MATCHES)
        .map(|(index, line)| (file.relative.clone(), index + 1, cut(line, GREP_LINE_CHARS)))
        .collect()
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

    #[test]
    fn a_limit_as_large_as_usize_max_reads_to_the_end_instead_of_overflowing() {
        // Found by the `file_tools` fuzz target: `offset - 1 + limit` overflowed and panicked.
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "one\ntwo\nthree\n").unwrap();
        let workspace = Workspace::open(dir.path()).unwrap();
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
