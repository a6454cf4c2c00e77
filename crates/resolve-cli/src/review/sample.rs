//! Sample review data for the unit tests of the state and the rendering.

use super::model::{
    ActionView, Decision, DiffLine, FileKind, FileView, HunkView, LineKind, pair_changed_lines,
};

/// One diff line (`+`/`-`/space prefixed, or the missing-newline marker) as the view model
/// holds it; changed words are left to the caller.
pub fn parse_hunk_line(line: &str) -> Option<DiffLine> {
    let (kind, text) = match line.as_bytes().first()? {
        b' ' => (LineKind::Context, &line[1..]),
        b'+' => (LineKind::Added, &line[1..]),
        b'-' => (LineKind::Removed, &line[1..]),
        b'\\' => (LineKind::NoNewline, line),
        _ => return None,
    };
    Some(DiffLine {
        kind,
        text: text.trim_end_matches(['\n', '\r']).to_owned(),
        changed_words: Vec::new(),
    })
}

/// A hunk of `path` numbered `number` from diff lines (`+`/`-`/space prefixed), with words
/// marked as the adapter marks them.
pub fn hunk(path: &str, number: usize, header: &str, lines: &[&str]) -> HunkView {
    let mut lines: Vec<DiffLine> = lines
        .iter()
        .map(|line| parse_hunk_line(line).unwrap())
        .collect();
    for (removed, added) in pair_changed_lines(&lines) {
        let words = resolve_edit::word_diff(&lines[removed].text, &lines[added].text);
        lines[removed].changed_words = words.removed;
        lines[added].changed_words = words.added;
    }
    HunkView {
        address: format!("{path}#{number}"),
        header: header.to_owned(),
        lines,
        decision: Decision::Kept,
    }
}

/// A file of `hunks`, its counts taken from them.
pub fn file(path: &str, kind: FileKind, hunks: Vec<HunkView>) -> FileView {
    let count = |kind: LineKind| {
        hunks
            .iter()
            .flat_map(|hunk| &hunk.lines)
            .filter(|line| line.kind == kind)
            .count()
    };
    FileView {
        path: path.to_owned(),
        kind,
        added: count(LineKind::Added),
        removed: count(LineKind::Removed),
        stale: false,
        hunks,
        conflicts: Vec::new(),
        loaded: true,
    }
}

/// Two pending actions: the head renames `foo` to `bar` in two files (`src/lib.rs` with two
/// hunks, `src/main.rs` with one); the next creates `notes.txt`.
pub fn two_actions() -> Vec<ActionView> {
    let lib = file(
        "src/lib.rs",
        FileKind::Update,
        vec![
            hunk(
                "src/lib.rs",
                1,
                "@@ -1,4 +1,4 @@",
                &[
                    " //! The library.",
                    "-pub fn foo(x: u32) -> u32 {",
                    "+pub fn bar(x: u32) -> u32 {",
                    "     x + 1",
                    " }",
                ],
            ),
            hunk(
                "src/lib.rs",
                2,
                "@@ -20,5 +20,5 @@",
                &[
                    " fn helper() {",
                    "     let a = 1;",
                    "-    foo(a);",
                    "+    bar(a);",
                    " }",
                ],
            ),
        ],
    );
    let main = file(
        "src/main.rs",
        FileKind::Update,
        vec![hunk(
            "src/main.rs",
            1,
            "@@ -1,3 +1,3 @@",
            &[
                " fn main() {",
                "-    println!(\"{}\", lib::foo(1));",
                "+    println!(\"{}\", lib::bar(1));",
                " }",
            ],
        )],
    );
    let notes = file(
        "notes.txt",
        FileKind::Create,
        vec![hunk(
            "notes.txt",
            1,
            "@@ -0,0 +1,2 @@",
            &["+renamed foo", "+to bar"],
        )],
    );
    vec![
        ActionView {
            id: "pending-action:ast_edit:3".to_owned(),
            version: "v3".to_owned(),
            label: "AST Edit: 3 replacements in 2 files".to_owned(),
            origin: "agent".to_owned(),
            age: "2m ago".to_owned(),
            files: vec![lib, main],
            note: None,
            foreign: false,
            rewrites: Vec::new(),
        },
        ActionView {
            id: "pending-action:write:2".to_owned(),
            version: "v2".to_owned(),
            label: "Write: notes.txt".to_owned(),
            origin: "cli".to_owned(),
            age: "5m ago".to_owned(),
            files: vec![notes],
            note: None,
            foreign: false,
            rewrites: Vec::new(),
        },
    ]
}
