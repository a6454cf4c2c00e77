//! Applying an update's change blocks to one file's text: pure, no file is looked at.
//!
//! Blocks are placed as Codex places them: each anchor (`@@ line`) and each block's old lines
//! are sought at or after where the previous block ended (see the seek module); a block of
//! only `+` lines is appended at the end of the file (before a last empty line); a block whose
//! old lines end in an empty line is retried without it. Where Codex takes the first of
//! several places, this refuses the block as ambiguous, naming the lines; where the old lines
//! are missing but the new ones are there, the block counts as already applied.
//!
//! The bytes around the changes are kept: a byte-order mark, every untouched line's own ending
//! (LF or CRLF), and a missing final newline. Inserted lines take the ending of the file's
//! first line (LF for a file without any).

use crate::error::EditError;

use super::parse::{BlockLine, ChangeBlock};
use super::seek::{Comparison, all_matches, nearest_candidate, seek};
use crate::text_file::split_bom;

/// A file's new text after its change blocks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UpdatedText {
    /// The whole new text.
    pub text: String,
    /// How many blocks changed it.
    pub applied: usize,
    /// The blocks (numbered from 1) whose new lines were already there.
    pub already_applied: Vec<usize>,
}

/// One line of the original text, without its ending.
struct SourceLine<'a> {
    text: &'a str,
    ending: &'static str,
}

/// A planned replacement: the `old_len` lines at `start` are rewritten by `lines` (context
/// lines keep the file's text and ending, removed ones go, added ones come in).
struct Replacement<'a> {
    start: usize,
    old_len: usize,
    lines: std::borrow::Cow<'a, [BlockLine]>,
    block: usize,
}

/// Apply `blocks` to `original`, the text of `path`.
pub(crate) fn update_text(
    path: &str,
    original: &str,
    blocks: &[ChangeBlock],
) -> Result<UpdatedText, EditError> {
    let (bom, body) = split_bom(original);
    let lines = source_lines(body);
    let texts: Vec<&str> = lines.iter().map(|line| line.text).collect();
    let preferred = lines.first().map_or("\n", |line| line.ending);
    let preferred = if preferred.is_empty() {
        "\n"
    } else {
        preferred
    };
    let mismatch = |message: String| EditError::PatchMismatch {
        path: path.to_owned(),
        message,
    };

    let mut replacements: Vec<Replacement<'_>> = Vec::new();
    let mut already_applied = Vec::new();
    let mut from = 0;
    for (index, block) in blocks.iter().enumerate() {
        let number = index + 1;
        let name = format!("change block {number} (patch line {})", block.line);
        if let Some(anchor) = &block.anchor {
            let wanted = std::slice::from_ref(anchor);
            let Some(found) = seek(&texts, wanted, from, false) else {
                return Err(mismatch(anchor_not_found(&texts, &name, anchor, from)));
            };
            let places = all_matches(&texts, wanted, from, false, found.comparison);
            if places.len() > 1 {
                return Err(mismatch(format!(
                    "the anchor `@@ {anchor}` of {name} matches at lines {}; use an anchor line that occurs once.",
                    line_list(&places)
                )));
            }
            from = found.at + 1;
        }
        if block.old.is_empty() {
            let at = if texts.last().is_some_and(|text| text.is_empty()) {
                texts.len() - 1
            } else {
                texts.len()
            };
            replacements.push(Replacement {
                start: at,
                old_len: 0,
                lines: std::borrow::Cow::Borrowed(&block.lines),
                block: number,
            });
            continue;
        }
        let (mut old, mut new) = (&block.old[..], &block.new[..]);
        let mut ops = std::borrow::Cow::Borrowed(&block.lines[..]);
        let mut found = seek(&texts, old, from, block.end_of_file);
        if found.is_none() && old.last().is_some_and(String::is_empty) {
            // Codex retries without a last empty old line (taken for the file's final newline),
            // and drops it from the new lines only where it ends them too.
            old = &old[..old.len() - 1];
            let ends_new = new.last().is_some_and(String::is_empty);
            if ends_new {
                new = &new[..new.len() - 1];
            }
            ops = std::borrow::Cow::Owned(without_last_old_line(&block.lines, ends_new));
            found = seek(&texts, old, from, block.end_of_file);
        }
        if let Some(found) = found {
            // The new lines already stand where the old ones were found: applied before.
            if new != old
                && new.len() > old.len()
                && found.at + new.len() <= texts.len()
                && texts[found.at..found.at + new.len()]
                    .iter()
                    .zip(new)
                    .all(|(line, wanted)| found.comparison.same(line, wanted))
            {
                already_applied.push(number);
                from = found.at + new.len();
                continue;
            }
            let places = all_matches(&texts, old, from, block.end_of_file, found.comparison);
            if places.len() > 1 {
                return Err(mismatch(format!(
                    "the lines of {name} match at lines {}; add context lines or an `@@` line that make the place unique.",
                    line_list(&places)
                )));
            }
            replacements.push(Replacement {
                start: found.at,
                old_len: old.len(),
                lines: ops,
                block: number,
            });
            from = found.at + old.len();
            continue;
        }
        if block.new != block.old
            && !block.new.is_empty()
            && let Some(present) = seek(&texts, &block.new, from, block.end_of_file)
        {
            already_applied.push(number);
            from = present.at + block.new.len();
            continue;
        }
        return Err(mismatch(block_not_found(
            &texts,
            &name,
            &block.old,
            from,
            block.end_of_file,
        )));
    }

    replacements.sort_by_key(|replacement| replacement.start);
    for pair in replacements.windows(2) {
        if pair[1].start < pair[0].start + pair[0].old_len {
            return Err(mismatch(format!(
                "change block {} overlaps change block {} (both change line {}).",
                pair[1].block,
                pair[0].block,
                pair[1].start + 1
            )));
        }
    }
    let applied = replacements.len();
    Ok(UpdatedText {
        text: join(bom, &lines, &replacements, preferred),
        applied,
        already_applied,
    })
}

/// `lines` without its last context or removed line (an empty one); a context line that is
/// also the new lines' last stays as an added line unless `ends_new`.
fn without_last_old_line(lines: &[BlockLine], ends_new: bool) -> Vec<BlockLine> {
    let mut lines = lines.to_vec();
    if let Some(last_old) = lines
        .iter()
        .rposition(|line| matches!(line, BlockLine::Context(_) | BlockLine::Removed(_)))
    {
        match lines.remove(last_old) {
            BlockLine::Context(text) if !ends_new => lines.insert(last_old, BlockLine::Added(text)),
            BlockLine::Context(_) | BlockLine::Removed(_) | BlockLine::Added(_) => {}
        }
    }
    lines
}

/// The lines of `body` with their endings; a last line without a newline has the ending "".
fn source_lines(body: &str) -> Vec<SourceLine<'_>> {
    let mut lines: Vec<SourceLine<'_>> = body
        .split_inclusive('\n')
        .map(|line| match line.strip_suffix("\r\n") {
            Some(text) => SourceLine {
                text,
                ending: "\r\n",
            },
            None => match line.strip_suffix('\n') {
                Some(text) => SourceLine { text, ending: "\n" },
                None => SourceLine {
                    text: line,
                    ending: "",
                },
            },
        })
        .collect();
    if lines
        .last()
        .is_some_and(|line| line.text.is_empty() && line.ending.is_empty())
    {
        lines.pop();
    }
    lines
}

/// The new text: `bom`, the lines with `replacements` made, every line ended (inserted ones
/// with `preferred`) except a last one that had no newline before.
fn join(
    bom: &str,
    lines: &[SourceLine<'_>],
    replacements: &[Replacement<'_>],
    preferred: &str,
) -> String {
    let final_newline = lines.last().is_none_or(|line| !line.ending.is_empty());
    let mut result: Vec<(&str, &str)> = Vec::with_capacity(lines.len());
    let mut next = 0;
    for replacement in replacements {
        result.extend(
            lines[next..replacement.start]
                .iter()
                .map(|line| (line.text, line.ending)),
        );
        let mut at = replacement.start;
        for line in replacement.lines.iter() {
            match line {
                BlockLine::Context(_) => {
                    if let Some(kept) = lines.get(at) {
                        result.push((kept.text, kept.ending));
                    }
                    at += 1;
                }
                BlockLine::Removed(_) => at += 1,
                BlockLine::Added(text) => result.push((text.as_str(), preferred)),
            }
        }
        next = replacement.start + replacement.old_len;
    }
    result.extend(lines[next..].iter().map(|line| (line.text, line.ending)));
    let count = result.len();
    let mut text = String::from(bom);
    for (index, (line, ending)) in result.into_iter().enumerate() {
        text.push_str(line);
        let ending = match (index + 1 == count, final_newline, ending.is_empty()) {
            (true, false, _) => "",
            (_, _, true) => preferred,
            (_, _, false) => ending,
        };
        text.push_str(ending);
    }
    text
}

/// `3, 17 and 30`: 1-based line numbers of 0-based indexes.
fn line_list(indexes: &[usize]) -> String {
    let numbers: Vec<String> = indexes
        .iter()
        .map(|index| (index + 1).to_string())
        .collect();
    match numbers.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        Some((last, _)) => last.clone(),
        None => String::new(),
    }
}

/// Why an anchor was not found after `from`: it occurs only before, or nowhere.
fn anchor_not_found(texts: &[&str], name: &str, anchor: &str, from: usize) -> String {
    let wanted = [anchor.to_owned()];
    let before: Vec<usize> = Comparison::ALL
        .into_iter()
        .map(|comparison| all_matches(texts, &wanted, 0, false, comparison))
        .find(|places| !places.is_empty())
        .unwrap_or_default();
    if before.is_empty() {
        format!("the anchor `@@ {anchor}` of {name} occurs nowhere in the file.")
    } else {
        format!(
            "the anchor `@@ {anchor}` of {name} was not found after line {from}; it occurs only at line{} {}, before the previous change block (change blocks must come in file order).",
            if before.len() == 1 { "" } else { "s" },
            line_list(&before)
        )
    }
}

/// Why a block's old lines were not found after `from`: where they are (before), or the
/// nearest candidate and its first line that differs.
fn block_not_found(
    texts: &[&str],
    name: &str,
    old: &[String],
    from: usize,
    end_of_file: bool,
) -> String {
    let searched = if end_of_file {
        "at the end of the file (`*** End of File`)".to_owned()
    } else if from == 0 {
        "in the file".to_owned()
    } else {
        format!("after line {from}")
    };
    let mut message = format!("the lines of {name} were not found {searched}.");
    if let Some(found) = seek(texts, old, 0, false) {
        message.push_str(&format!(
            " They occur at line {}{}.",
            found.at + 1,
            if end_of_file {
                ", not at the end of the file"
            } else {
                ", before the previous change block or anchor (change blocks must come in file order)"
            }
        ));
        return message;
    }
    match nearest_candidate(texts, old, from) {
        Some((at, agreeing, differs)) => {
            let file_has = texts.get(at + differs).map_or_else(
                || "the end of the file".to_owned(),
                |line| format!("`{line}`"),
            );
            message.push_str(&format!(
                " Nearest candidate: line {}, where {agreeing} of {} lines agree; the first that differs is block line {} `{}`, where the file has {file_has} (line {}).",
                at + 1,
                old.len(),
                differs + 1,
                old.get(differs).map_or("", String::as_str),
                at + differs + 1,
            ));
        }
        None => message.push_str(
            " None of its lines occurs in the file; read the file and copy its lines exactly.",
        ),
    }
    message
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    /// A block of diff-like lines (` context`, `-removed`, `+added`) at patch line 3.
    fn block(anchor: Option<&str>, lines: &[&str]) -> ChangeBlock {
        ChangeBlock::from_diff_lines(anchor, lines, 3)
    }

    fn apply(original: &str, blocks: &[ChangeBlock]) -> String {
        update_text("f.txt", original, blocks).unwrap().text
    }

    fn refusal(original: &str, blocks: &[ChangeBlock]) -> String {
        match update_text("f.txt", original, blocks).unwrap_err() {
            EditError::PatchMismatch { message, .. } => message,
            other => panic!("{other}"),
        }
    }

    #[test]
    fn line_endings_bom_and_a_missing_final_newline_are_kept() {
        let change = [block(None, &[" a", "-b", "+B", "+B2"])];
        assert_eq!(apply("a\r\nb\r\nc\r\n", &change), "a\r\nB\r\nB2\r\nc\r\n");
        assert_eq!(apply("a\nb\r\nc", &change), "a\nB\nB2\nc");
        assert_eq!(apply("\u{feff}a\nb\n", &change), "\u{feff}a\nB\nB2\n");
        let last = [block(None, &["-c", "+C"])];
        assert_eq!(apply("a\nb\nc", &last), "a\nb\nC");
        let append = [block(None, &["+d"])];
        assert_eq!(apply("a\nc", &append), "a\nc\nd");
        assert_eq!(apply("", &append), "d\n");
        assert_eq!(apply("a\n\n", &append), "a\nd\n\n");
    }

    #[test]
    fn whitespace_fallbacks_find_lines_and_context_lines_keep_the_files_text() {
        let change = [block(None, &[" a", "-b", "+x"])];
        assert_eq!(apply("a   \r\nb\t\nc  \n", &change), "a   \r\nx\r\nc  \n");
        assert_eq!(apply("  a\n  b\n", &change), "  a\nx\n");
        let trailing_empty = [block(None, &[" b", " ", "+c"])];
        assert_eq!(apply("a\nb\n", &trailing_empty), "a\nb\n\nc\n");
    }

    #[test]
    fn anchors_narrow_the_search_and_blocks_follow_each_other() {
        let text = "fn a() {\n    x\n}\nfn b() {\n    x\n}\n";
        let change = [block(Some("fn b() {"), &["-    x", "+    y"])];
        assert_eq!(
            apply(text, &change),
            "fn a() {\n    x\n}\nfn b() {\n    y\n}\n"
        );
        let two = [
            block(None, &[" fn a() {", "-    x", "+    1"]),
            block(None, &["-    x", "+    2"]),
        ];
        assert_eq!(
            apply(text, &two),
            "fn a() {\n    1\n}\nfn b() {\n    2\n}\n"
        );
    }

    #[test]
    fn an_ambiguous_block_or_anchor_is_refused_with_its_lines() {
        let text = "fn a() {\n    x\n}\nfn b() {\n    x\n}\n";
        assert_eq!(
            refusal(text, &[block(None, &["-    x", "+    y"])]),
            "the lines of change block 1 (patch line 3) match at lines 2 and 5; add context lines or an `@@` line that make the place unique."
        );
        assert_eq!(
            refusal(text, &[block(Some("}"), &["-fn b() {", "+fn c() {"])]),
            "the anchor `@@ }` of change block 1 (patch line 3) matches at lines 3 and 6; use an anchor line that occurs once."
        );
    }

    #[test]
    fn a_missing_block_names_the_nearest_candidate_and_its_first_differing_line() {
        let text = "one\ntwo\nthree\nfour\n";
        assert_eq!(
            refusal(text, &[block(None, &["-two", "-3", "-four", "+2"])]),
            "the lines of change block 1 (patch line 3) were not found in the file. Nearest candidate: line 2, where 2 of 3 lines agree; the first that differs is block line 2 `3`, where the file has `three` (line 3)."
        );
        assert!(
            refusal(text, &[block(None, &["-zzz", "+y"])]).contains("None of its lines occurs")
        );
        let message = refusal(
            text,
            &[block(None, &["-three", "+3"]), block(None, &["-one", "+1"])],
        );
        assert!(
            message.contains("were not found after line 3. They occur at line 1"),
            "{message}"
        );
        assert!(refusal(text, &[block(Some("nope"), &["-one", "+1"])]).contains("occurs nowhere"));
    }

    #[test]
    fn a_block_whose_new_lines_are_present_is_already_applied() {
        let updated = update_text(
            "f.txt",
            "a\nB\nc\n",
            &[block(None, &[" a", "-b", "+B"]), block(None, &["-c", "+C"])],
        )
        .unwrap();
        assert_eq!(updated.text, "a\nB\nC\n");
        assert_eq!((updated.applied, updated.already_applied), (1, vec![1]));
    }

    #[test]
    fn an_end_of_file_block_matches_only_at_the_end() {
        let mut last = block(None, &["-x", "+y"]);
        last.end_of_file = true;
        assert_eq!(apply("x\na\nx\n", std::slice::from_ref(&last)), "x\na\ny\n");
        assert!(refusal("x\na\n", &[last]).contains("at the end of the file"));
    }
}
