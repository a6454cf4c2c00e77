//! The documentation against the binary: README's quickstart runs as written, and every link
//! between the pages of `docs/` (and README) lands on a file and a heading that exist.

use resolve_test_support::copy_tree;
use resolve_test_support::text::assert_contains;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::common::resolve;

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The shell lines of the fenced block under `heading` in `page`.
fn block_under(page: &str, heading: &str) -> Vec<String> {
    let text = std::fs::read_to_string(repository().join(page)).unwrap();
    let after = text
        .split_once(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("{page} has no heading {heading:?}"))
        .1;
    let body = after.split_once("```sh\n").unwrap().1;
    let body = body.split_once("```").unwrap().0;
    body.lines().map(str::to_owned).collect()
}

#[test]
fn the_readme_quickstart_runs_as_written_on_a_copy_of_the_demo() {
    let lines = block_under("README.md", "## Ten lines to try it");
    assert_eq!(
        lines[0], "cd examples/demo",
        "the quickstart starts in the demo"
    );
    let sandbox = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let demo = sandbox.path().join("examples/demo");
    copy_tree(&repository().join("examples/demo"), &demo, &[".resolve"]);
    let original = std::fs::read(demo.join("src/main.rs")).unwrap();
    let binary = PathBuf::from(env!("CARGO_BIN_EXE_resolve"));
    let path = format!(
        "{}:{}",
        binary.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    assert_eq!(
        resolve().arg("--version").output().unwrap().status.code(),
        Some(0)
    );

    let mut ran = Vec::new();
    for line in &lines[1..] {
        let command = line.split("  # ").next().unwrap().trim();
        assert!(command.starts_with("resolve "), "{command}");
        if command == "resolve review" {
            // Full-screen and interactive: the terminal tests drive it in tmux.
            continue;
        }
        let output = Command::new("sh")
            .arg("-c")
            .arg(command)
            .current_dir(&demo)
            .env("PATH", &path)
            .env("HOME", home.path())
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        assert_eq!(
            output.status.code(),
            Some(0),
            "`{command}` failed:\n{}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        if command.starts_with("resolve apply") {
            let landed = std::fs::read_to_string(demo.join("src/main.rs")).unwrap();
            assert_contains(&landed, "serving on");
        }
        ran.push(command.to_owned());
    }
    assert!(ran.iter().any(|c| c.starts_with("resolve undo")), "{ran:?}");
    assert_eq!(
        std::fs::read(demo.join("src/main.rs")).unwrap(),
        original,
        "the quickstart ends with undo: the demo is as it was"
    );
}

/// GitHub's anchor for a heading.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == '-' || *c == ' ' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

fn anchors_of(text: &str) -> Vec<String> {
    let mut in_fence = false;
    let mut anchors = Vec::new();
    for line in text.lines() {
        if line.starts_with("```") {
            in_fence = !in_fence;
        } else if !in_fence && line.starts_with('#') {
            anchors.push(anchor(line.trim_start_matches('#')));
        }
    }
    anchors
}

#[test]
fn every_link_of_readme_and_docs_lands_on_a_file_and_heading_that_exist() {
    let mut pages = vec![repository().join("README.md")];
    for entry in std::fs::read_dir(repository().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            pages.push(path);
        }
    }
    let mut checked = 0;
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        for (_, rest) in text.match_indices("](").map(|(i, _)| ((), &text[i + 2..])) {
            let Some(target) = rest.split(')').next() else {
                continue;
            };
            if target.starts_with("http") || target.contains(' ') || target.is_empty() {
                continue;
            }
            let (file, heading) = target.split_once('#').unwrap_or((target, ""));
            let linked = if file.is_empty() {
                page.clone()
            } else {
                page.parent().unwrap().join(file)
            };
            assert!(
                linked.exists(),
                "{} links to {target}: no such file",
                page.display()
            );
            if !heading.is_empty() {
                let text = std::fs::read_to_string(&linked).unwrap();
                assert!(
                    anchors_of(&text).iter().any(|a| a == heading),
                    "{} links to {target}: no such heading",
                    page.display()
                );
            }
            checked += 1;
        }
    }
    assert!(checked > 20, "only {checked} links found");
}
