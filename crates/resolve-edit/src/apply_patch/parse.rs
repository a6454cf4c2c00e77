//! Reading the `apply_patch` format into a [`Patch`]: pure, no file is looked at.
//!
//! The grammar is Codex's:
//!
//! ```text
//! patch   := "*** Begin Patch" LF op+ "*** End Patch" LF?
//! op      := "*** Add File: " path LF ("+" line LF)*
//!          | "*** Delete File: " path LF
//!          | "*** Update File: " path LF ("*** Move to: " path LF)? block+
//! block   := ("@@" | "@@ " anchor) LF (( " " | "-" | "+" ) line LF | LF)+ ("*** End of File" LF)?
//! ```
//!
//! and so are its leniencies: the text is trimmed first, the begin and end markers and the
//! file headers may carry surrounding whitespace, a patch wrapped in a `<<EOF` … `EOF` heredoc
//! is unwrapped, blank lines between change blocks are skipped, the first block of a file may
//! leave out its `@@` line, and an empty line inside a block is an empty context line. Every
//! error names the line of the input it is about (counted from 1).

use crate::error::EditError;

const BEGIN_PATCH: &str = "*** Begin Patch";
const END_PATCH: &str = "*** End Patch";
const ADD_FILE: &str = "*** Add File: ";
const DELETE_FILE: &str = "*** Delete File: ";
const UPDATE_FILE: &str = "*** Update File: ";
const MOVE_TO: &str = "*** Move to: ";
const END_OF_FILE: &str = "*** End of File";
const ANCHOR: &str = "@@ ";
const BARE_ANCHOR: &str = "@@";

/// A parsed patch: its file operations, in the order given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Patch {
    /// The operations, at least one.
    pub ops: Vec<FileOp>,
}

/// One file operation of a patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileOp {
    /// `*** Add File:`: a new file whose every line was given with `+`.
    Add {
        /// The path as written.
        path: String,
        /// The content: each `+` line followed by a newline.
        content: String,
        /// The header's line in the patch.
        line: usize,
    },
    /// `*** Delete File:`.
    Delete {
        /// The path as written.
        path: String,
        /// The header's line in the patch.
        line: usize,
    },
    /// `*** Update File:`, optionally `*** Move to:` another path.
    Update {
        /// The path as written.
        path: String,
        /// Where the file moves, as written.
        move_to: Option<String>,
        /// The change blocks, in file order.
        blocks: Vec<ChangeBlock>,
        /// The header's line in the patch.
        line: usize,
    },
}

/// One line of a change block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlockLine {
    /// ` line` (or an empty line): kept as the file has it.
    Context(String),
    /// `-line`: removed.
    Removed(String),
    /// `+line`: added.
    Added(String),
}

/// One change block of an update: what its lines look like before and after.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeBlock {
    /// The `@@ <anchor>` line, which must occur before the block (after the previous one).
    pub anchor: Option<String>,
    /// The context and `-` lines, in order.
    pub old: Vec<String>,
    /// The context and `+` lines, in order.
    pub new: Vec<String>,
    /// Every line in patch order (what [`ChangeBlock::old`] and [`ChangeBlock::new`] are made
    /// of): placing the block keeps the file's own text of its context lines.
    pub lines: Vec<BlockLine>,
    /// `*** End of File`: the block ends at the end of the file.
    pub end_of_file: bool,
    /// The block's first line in the patch (its `@@` line, if any).
    pub line: usize,
}

impl ChangeBlock {
    /// An empty block starting at patch line `line`.
    pub fn new(anchor: Option<String>, line: usize) -> Self {
        Self {
            anchor,
            old: Vec::new(),
            new: Vec::new(),
            lines: Vec::new(),
            end_of_file: false,
            line,
        }
    }

    /// A block at patch line `line` of diff-like lines (` context`, `-removed`, `+added`).
    #[cfg(test)]
    pub(crate) fn from_diff_lines(anchor: Option<&str>, lines: &[&str], line: usize) -> Self {
        let mut block = Self::new(anchor.map(str::to_owned), line);
        for text in lines {
            let (kind, rest) = text.split_at(1);
            block.push(match kind {
                " " => BlockLine::Context(rest.to_owned()),
                "-" => BlockLine::Removed(rest.to_owned()),
                _ => BlockLine::Added(rest.to_owned()),
            });
        }
        block
    }

    /// Append one line.
    pub fn push(&mut self, line: BlockLine) {
        match &line {
            BlockLine::Context(text) => {
                self.old.push(text.clone());
                self.new.push(text.clone());
            }
            BlockLine::Removed(text) => self.old.push(text.clone()),
            BlockLine::Added(text) => self.new.push(text.clone()),
        }
        self.lines.push(line);
    }
}

/// Parse `input`, a whole patch from `*** Begin Patch` to `*** End Patch`.
pub fn parse_patch(input: &str) -> Result<Patch, EditError> {
    let trimmed = input.trim();
    // Lines of the input before the trimmed text starts, so errors count from the input's top.
    let skipped = input[..input.len() - input.trim_start().len()]
        .matches('\n')
        .count();
    let lines: Vec<&str> = trimmed.lines().collect();
    let (first_body_line, body) = patch_body(&lines)?;
    let mut parser = Parser {
        lines: body,
        at: 0,
        first_line: skipped + first_body_line + 1,
    };
    let mut ops = Vec::new();
    while parser.at < parser.lines.len() {
        ops.push(parser.op()?);
    }
    if ops.is_empty() {
        return Err(invalid(
            skipped + first_body_line + 1,
            "the patch has no file operation; give at least one `*** Add File:`, `*** Delete File:` or `*** Update File:`",
        ));
    }
    Ok(Patch { ops })
}

/// The lines between the begin and end markers, and the index of the first of them in `lines`;
/// a heredoc wrapper (`<<EOF`, `<<'EOF'`, `<<"EOF"` … `EOF`) is taken off first when the
/// markers are not the first and last lines.
fn patch_body<'a>(lines: &'a [&'a str]) -> Result<(usize, &'a [&'a str]), EditError> {
    let bare = markers(lines, 0);
    if bare.is_ok() {
        return bare;
    }
    if let [first, inner @ .., last] = lines
        && matches!(*first, "<<EOF" | "<<'EOF'" | "<<\"EOF\"")
        && last.ends_with("EOF")
        && inner.len() >= 2
    {
        return markers(inner, 1);
    }
    bare
}

/// `lines` must start with `*** Begin Patch` and end with `*** End Patch`; `offset` is the
/// index of `lines[0]` in the trimmed input.
fn markers<'a>(lines: &'a [&'a str], offset: usize) -> Result<(usize, &'a [&'a str]), EditError> {
    match lines {
        [first, ..] if first.trim() != BEGIN_PATCH => Err(invalid(
            offset + 1,
            "the first line must be `*** Begin Patch`",
        )),
        [_, body @ .., last] if last.trim() == END_PATCH => Ok((offset + 1, body)),
        _ => Err(invalid(
            offset + lines.len().max(1),
            "the last line must be `*** End Patch`",
        )),
    }
}

/// An [`EditError::InvalidPatch`] at `line`.
fn invalid(line: usize, message: impl Into<String>) -> EditError {
    EditError::InvalidPatch {
        line,
        message: message.into(),
    }
}

/// A cursor over the lines between the markers.
struct Parser<'a> {
    lines: &'a [&'a str],
    at: usize,
    /// The input line number of `lines[0]`.
    first_line: usize,
}

impl Parser<'_> {
    /// The input line number of `lines[index]`.
    fn line_number(&self, index: usize) -> usize {
        self.first_line + index
    }

    /// One file operation, starting at its header.
    fn op(&mut self) -> Result<FileOp, EditError> {
        let line = self.line_number(self.at);
        let header = self.lines[self.at].trim();
        self.at += 1;
        if let Some(path) = header.strip_prefix(ADD_FILE) {
            let path = self.path(path, line)?;
            let mut content = String::new();
            while let Some(added) = self.lines.get(self.at).and_then(|l| l.strip_prefix('+')) {
                content.push_str(added);
                content.push('\n');
                self.at += 1;
            }
            return Ok(FileOp::Add {
                path,
                content,
                line,
            });
        }
        if let Some(path) = header.strip_prefix(DELETE_FILE) {
            let path = self.path(path, line)?;
            return Ok(FileOp::Delete { path, line });
        }
        if let Some(path) = header.strip_prefix(UPDATE_FILE) {
            let path = self.path(path, line)?;
            let move_to = match self
                .lines
                .get(self.at)
                .and_then(|l| l.strip_prefix(MOVE_TO))
            {
                Some(to) => {
                    let to_line = self.line_number(self.at);
                    self.at += 1;
                    Some(self.path(to, to_line)?)
                }
                None => None,
            };
            let mut blocks = Vec::new();
            while let Some(next) = self.lines.get(self.at) {
                if next.trim().is_empty() {
                    self.at += 1;
                    continue;
                }
                if next.starts_with('*') {
                    break;
                }
                blocks.push(self.block(blocks.is_empty())?);
            }
            if blocks.is_empty() {
                return Err(invalid(
                    line,
                    format!(
                        "`*** Update File: {path}` has no change block; give `@@` and the lines to change, or leave the file out"
                    ),
                ));
            }
            return Ok(FileOp::Update {
                path,
                move_to,
                blocks,
                line,
            });
        }
        Err(invalid(
            line,
            format!(
                "`{header}` is not a file header; expected `*** Add File: <path>`, `*** Delete File: <path>` or `*** Update File: <path>` (every line of an added file starts with `+`)"
            ),
        ))
    }

    /// A header's path, which must not be empty.
    fn path(&self, path: &str, line: usize) -> Result<String, EditError> {
        let path = path.trim();
        if path.is_empty() {
            return Err(invalid(line, "the file header names no path"));
        }
        Ok(path.to_owned())
    }

    /// One change block; `first` allows it to start without its `@@` line.
    fn block(&mut self, first: bool) -> Result<ChangeBlock, EditError> {
        let start = self.at;
        let head = self.lines[start];
        let anchor = if head == BARE_ANCHOR {
            self.at += 1;
            None
        } else if let Some(anchor) = head.strip_prefix(ANCHOR) {
            self.at += 1;
            Some(anchor.to_owned())
        } else if first {
            None
        } else {
            return Err(invalid(
                self.line_number(start),
                format!("expected a change block starting with `@@`, found `{head}`"),
            ));
        };
        let mut block = ChangeBlock::new(anchor, self.line_number(start));
        let mut count = 0;
        while let Some(&line) = self.lines.get(self.at) {
            if line == END_OF_FILE {
                if count == 0 {
                    break;
                }
                block.end_of_file = true;
                self.at += 1;
                break;
            }
            match line.chars().next() {
                None => block.push(BlockLine::Context(String::new())),
                Some(' ') => block.push(BlockLine::Context(line[1..].to_owned())),
                Some('-') => block.push(BlockLine::Removed(line[1..].to_owned())),
                Some('+') => block.push(BlockLine::Added(line[1..].to_owned())),
                Some(_) if count == 0 => {
                    return Err(invalid(
                        self.line_number(self.at),
                        format!(
                            "`{line}` is not a line of a change block; each starts with ` ` (context), `-` (removed) or `+` (added)"
                        ),
                    ));
                }
                Some(_) => break,
            }
            count += 1;
            self.at += 1;
        }
        if count == 0 {
            return Err(invalid(
                self.line_number(self.at.max(start + 1) - 1),
                "the change block has no lines",
            ));
        }
        Ok(block)
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    /// A block of diff-like lines (` context`, `-removed`, `+added`).
    fn block(anchor: Option<&str>, lines: &[&str], line: usize) -> ChangeBlock {
        ChangeBlock::from_diff_lines(anchor, lines, line)
    }

    fn error(input: &str) -> (usize, String) {
        match parse_patch(input).unwrap_err() {
            EditError::InvalidPatch { line, message } => (line, message),
            other => panic!("not a patch error: {other}"),
        }
    }

    #[test]
    fn every_operation_parses() {
        let patch = parse_patch(
            "*** Begin Patch\n*** Add File: docs/new.md\n+# New\n+\n+text\n*** Delete File: old.txt\n*** Update File: src/a.rs\n*** Move to: src/b.rs\n@@ fn main() {\n-    old();\n+    new();\n     done();\n@@\n-x\n+y\n*** End of File\n*** End Patch\n",
        )
        .unwrap();
        let mut last = block(None, &["-x", "+y"], 13);
        last.end_of_file = true;
        assert_eq!(
            patch.ops,
            vec![
                FileOp::Add {
                    path: "docs/new.md".into(),
                    content: "# New\n\ntext\n".into(),
                    line: 2
                },
                FileOp::Delete {
                    path: "old.txt".into(),
                    line: 6
                },
                FileOp::Update {
                    path: "src/a.rs".into(),
                    move_to: Some("src/b.rs".into()),
                    blocks: vec![
                        block(
                            Some("fn main() {"),
                            &["-    old();", "+    new();", "     done();"],
                            9
                        ),
                        last
                    ],
                    line: 7
                },
            ]
        );
    }

    #[test]
    fn the_first_block_may_omit_its_anchor_line_and_blank_lines_are_context() {
        let patch = parse_patch(
            "*** Begin Patch\n*** Update File: a.py\n import os\n\n+x = 1\n*** End Patch",
        )
        .unwrap();
        assert_eq!(
            patch.ops,
            vec![FileOp::Update {
                path: "a.py".into(),
                move_to: None,
                blocks: vec![block(None, &[" import os", " ", "+x = 1"], 3)],
                line: 2
            }]
        );
    }

    #[test]
    fn whitespace_crlf_and_a_heredoc_wrapper_are_tolerated() {
        let plain = parse_patch("*** Begin Patch\n*** Delete File: a\n*** End Patch").unwrap();
        for input in [
            "\n\n  *** Begin Patch  \n*** Delete File: a\n  *** End Patch  \n\n",
            "*** Begin Patch\r\n*** Delete File: a\r\n*** End Patch\r\n",
            "<<'EOF'\n*** Begin Patch\n*** Delete File: a\n*** End Patch\nEOF\n",
        ] {
            let parsed = parse_patch(input).unwrap();
            assert_eq!(parsed.ops.len(), plain.ops.len(), "{input:?}");
            assert!(matches!(&parsed.ops[0], FileOp::Delete { path, .. } if path == "a"));
        }
        assert_eq!(
            parse_patch("\n\n*** Begin Patch\n*** Delete File: a\n*** End Patch")
                .unwrap()
                .ops,
            vec![FileOp::Delete {
                path: "a".into(),
                line: 4
            }]
        );
    }

    #[test]
    fn missing_markers_are_named() {
        assert_eq!(
            error("*** Update File: a\n*** End Patch"),
            (1, "the first line must be `*** Begin Patch`".into())
        );
        assert_eq!(
            error("*** Begin Patch\n*** Delete File: a\n"),
            (2, "the last line must be `*** End Patch`".into())
        );
        assert_eq!(error("").0, 1);
        assert!(
            error("*** Begin Patch\n*** End Patch")
                .1
                .contains("no file operation")
        );
    }

    #[test]
    fn a_bad_header_names_its_line() {
        let (line, message) = error("*** Begin Patch\n*** Add File: a\n+x\ny\n*** End Patch");
        assert_eq!(line, 4);
        assert!(message.starts_with("`y` is not a file header"), "{message}");
        let (line, message) = error("*** Begin Patch\n*** Rename File: a\n*** End Patch");
        assert_eq!(line, 2);
        assert!(message.contains("*** Update File: <path>"), "{message}");
        let (line, message) =
            error("*** Begin Patch\n*** Update File: a\n*** Move to:   \n@@\n-x\n*** End Patch");
        assert_eq!(
            (line, message.as_str()),
            (3, "the file header names no path")
        );
    }

    #[test]
    fn an_update_without_blocks_or_with_a_bad_block_is_refused() {
        const UPDATE_A: &str = "*** Begin Patch\n*** Update File: a\n";
        for (rest, line, part) in [
            ("*** End Patch", 2, "has no change block"),
            (
                "-x\n+y\nnext\n*** End Patch",
                5,
                "expected a change block starting with `@@`",
            ),
        ] {
            let (at, message) = error(&format!("{UPDATE_A}{rest}"));
            assert_eq!(at, line, "{rest:?}");
            assert!(message.contains(part), "{message}");
        }
        for (rest, line) in [
            ("@@\n-x\n+y\n@@\n*** End Patch", 6),
            ("@@\n*** End of File\n*** End Patch", 3),
        ] {
            let refusal = error(&format!("{UPDATE_A}{rest}"));
            assert_eq!(
                refusal,
                (line, "the change block has no lines".to_owned()),
                "{rest:?}"
            );
        }
        let (line, message) = error(&format!("{UPDATE_A}@@\nnot a line\n*** End Patch"));
        assert_eq!(line, 4);
        assert!(message.starts_with("`not a line` is not a line of a change block"));
    }

    #[test]
    fn a_block_ends_at_a_line_of_another_kind() {
        let patch = parse_patch(
            "*** Begin Patch\n*** Update File: a\n@@ one\n-1\n+one\n@@ two\n-2\n+two\n*** Add File: b\n+b\n*** End Patch",
        )
        .unwrap();
        let FileOp::Update { blocks, .. } = &patch.ops[0] else {
            panic!("{patch:?}");
        };
        assert_eq!(
            blocks,
            &vec![
                block(Some("one"), &["-1", "+one"], 3),
                block(Some("two"), &["-2", "+two"], 6)
            ]
        );
        assert_eq!(patch.ops.len(), 2);
    }
}
