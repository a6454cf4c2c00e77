//! What a person reads, pinned as snapshots (#33 §2): a producer's staged block, `pending`,
//! `show`, the apply, discard and failed blocks, `log`, and `--help`. The root, times and ages
//! are redacted, so a snapshot changes only when the words do.

use super::common::{Run, UNWRAP_TO_EXPECT, Workspace};

const SOURCE: &str =
    "fn main() {\n    let x = compute().unwrap();\n    let y = other().unwrap();\n}\n";

/// `text` with the workspace root, `YYYY-MM-DD HH:MM:SS` times and `12s ago` ages replaced.
fn redact(workspace: &Workspace, text: &str) -> String {
    let text = text.replace(&workspace.root().display().to_string(), "[ROOT]");
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let words: Vec<String> = line.split(' ').map(redact_word).collect();
        out.push_str(&words.join(" "));
        out.push('\n');
    }
    out.replace("[TIME] [TIME]", "[TIME]")
}

/// One space-separated word: a date, a time of day or an age's number become placeholders.
fn redact_word(word: &str) -> String {
    let shape: String = word
        .chars()
        .map(|c| if c.is_ascii_digit() { '9' } else { c })
        .collect();
    let age = word
        .strip_suffix(['s', 'm', 'h', 'd'])
        .is_some_and(|number| !number.is_empty() && number.chars().all(|c| c.is_ascii_digit()));
    match shape.as_str() {
        "9999-99-99" | "99:99:99" => "[TIME]".to_owned(),
        _ if age => "[AGE]".to_owned(),
        _ => word.to_owned(),
    }
}

/// Both streams of `run`, redacted, with its exit code.
fn shown(workspace: &Workspace, run: &Run) -> String {
    format!(
        "exit {}\n--- stdout\n{}--- stderr\n{}",
        run.code,
        redact(workspace, &run.stdout),
        redact(workspace, &run.stderr)
    )
}

fn staged() -> Workspace {
    let workspace = Workspace::with(&[("src/main.rs", SOURCE)]);
    let run = workspace.run(&UNWRAP_TO_EXPECT);
    insta::assert_snapshot!("staged", shown(&workspace, &run));
    workspace
}

#[test]
fn a_staged_preview_reads_for_a_person_in_pending_show_apply_and_log() {
    let workspace = staged();
    insta::assert_snapshot!("pending", shown(&workspace, &workspace.run(&["pending"])));
    insta::assert_snapshot!("show", shown(&workspace, &workspace.run(&["show", "1"])));
    let apply = workspace.run(&["apply", "--only", "src/main.rs#1", "--reason", "Only x."]);
    insta::assert_snapshot!("apply_part", shown(&workspace, &apply));
    insta::assert_snapshot!("log", shown(&workspace, &workspace.run(&["log"])));
}

#[test]
fn a_discard_and_a_failed_apply_read_for_a_person() {
    let workspace = staged();
    std::fs::write(
        workspace.path("src/main.rs"),
        "fn main() {\n    let x = compute().unwrap_or(0);\n    let y = other().unwrap();\n}\n",
    )
    .unwrap();
    let failed = workspace.run(&["apply", "--reason", "Both."]);
    insta::assert_snapshot!("apply_conflict", shown(&workspace, &failed));
    let discard = workspace.run(&["discard", "--reason", "The file moved."]);
    insta::assert_snapshot!("discard", shown(&workspace, &discard));
    let nothing = workspace.run(&["apply", "--reason", "Again."]);
    insta::assert_snapshot!("nothing_pending", shown(&workspace, &nothing));
}

#[test]
fn the_help_a_person_reads_first() {
    let workspace = Workspace::new();
    for (name, args) in [
        ("help", &["--help"][..]),
        ("help_apply", &["apply", "--help"][..]),
        ("help_review", &["review", "--help"][..]),
    ] {
        insta::assert_snapshot!(name, shown(&workspace, &workspace.run(args)));
    }
}
