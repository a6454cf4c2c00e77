//! The facts of a staged preview come from the hunk model: each file's counts and hunk
//! addresses are those of its hunks (the ones `resolve show` addresses and `extra.only`
//! takes), whatever the changed lines look like, and the details validate against the
//! generated schema.

use pretty_assertions::assert_eq;
use resolve_core::schema::validate;
use resolve_core::{Facts, PreviewFacts, PreviewFile};
use resolve_edit::{
    FileHunks, FileTools, Origin, Store, StoredAction, Workspace, action_hunks, preview_files,
    shown_addressed_preview,
};
use resolve_test_support::text::lines_replacing;
use serde_json::json;

fn file(path: &str, added: usize, removed: usize, hunks: &[&str]) -> PreviewFile {
    PreviewFile {
        path: path.to_owned(),
        added,
        removed,
        hunks: hunks.iter().map(|hunk| (*hunk).to_owned()).collect(),
    }
}

/// Lines `1` to `20`, with the numbered ones replaced by the given text.
fn numbered(replaced: &[(usize, &str)]) -> String {
    lines_replacing(20, replaced)
}

#[test]
fn a_file_change_lists_its_counts_and_hunk_addresses_from_its_hunks() {
    // Changed lines that look like diff headers are lines, not headers.
    let old = numbered(&[]);
    let new = numbered(&[(2, "--- not a header"), (19, "+++ nor this")]);
    assert_eq!(
        FileHunks::compute("src/a.rs", Some(&old), Some(&new)).facts(),
        file("src/a.rs", 2, 2, &["src/a.rs#1", "src/a.rs#2"])
    );
    assert_eq!(
        FileHunks::compute("new.txt", None, Some("new\n")).facts(),
        file("new.txt", 1, 0, &["new.txt#1"])
    );
    assert_eq!(
        FileHunks::compute("gone.txt", Some("one\n+++ two\n"), None).facts(),
        file("gone.txt", 0, 2, &["gone.txt#1"])
    );
    assert_eq!(
        FileHunks::compute("empty.txt", None, Some("")).facts(),
        file("empty.txt", 0, 0, &["empty.txt#1"]),
        "an empty file created is still one hunk to take or leave"
    );
}

#[test]
fn a_staged_preview_carries_the_facts_of_its_hunks_and_they_match_the_schema() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), numbered(&[])).unwrap();
    let store = Store::open(Workspace::open(dir.path()).unwrap())
        .with_record_key(resolve_store::RecordKey::from_bytes([7; 32]));
    let tools = FileTools::new(store.clone(), Origin::Cli);
    let result = tools
        .call(
            "write",
            &json!({"path": "a.txt", "content": numbered(&[(3, "three"), (18, "eighteen")])}),
        )
        .unwrap();
    let details = result.details.unwrap();
    validate(&PreviewFacts::schema(), &details).unwrap();
    let facts = PreviewFacts::from_details(Some(&details)).unwrap();
    let id = facts.pending_id.clone().unwrap();
    assert_eq!(
        facts,
        PreviewFacts::staged(
            id.clone(),
            "Write: a.txt",
            None,
            vec![file("a.txt", 2, 2, &["a.txt#1", "a.txt#2"])]
        )
    );

    // The same addresses a reviewer is shown, from the same hunks.
    let StoredAction::Pending(record) = store.get(&id).unwrap() else {
        panic!("{id} is not pending");
    };
    assert_eq!(
        preview_files(&store, &record.change_set).unwrap(),
        facts.files
    );
    let hunks = action_hunks(&store, &record).unwrap();
    let addresses: Vec<String> = hunks
        .files
        .iter()
        .flat_map(|file| {
            let hunks = file.hunks.as_ref().unwrap();
            hunks.hunks.iter().map(|hunk| hunks.address(hunk.number))
        })
        .collect();
    assert_eq!(addresses, facts.files[0].hunks);
    let shown = shown_addressed_preview(&store, &record).unwrap();
    for address in &addresses {
        assert!(shown.contains(&format!("@@ {address}\n")), "{shown}");
    }
}

#[test]
fn every_producers_totals_are_the_sums_of_its_files_hunk_counts() {
    let dir = tempfile::tempdir().unwrap();
    let write = |path: &str, text: &str| std::fs::write(dir.path().join(path), text).unwrap();
    // Calls far enough apart to make hunks of their own, and two in one hunk.
    let calls: String = (1..=20)
        .map(|line| match line {
            2 | 10 | 19 => format!("    foo({line});\n"),
            _ => format!("    x({line});\n"),
        })
        .collect();
    write("a.rs", &format!("fn main() {{\n{calls}}}\n"));
    write("b.rs", "fn b() {\n    foo(4);\n    foo(5);\n}\n");
    write("c.txt", &numbered(&[]));
    write("gone.txt", "one\ntwo\n");
    let store = Store::open(Workspace::open(dir.path()).unwrap())
        .with_record_key(resolve_store::RecordKey::from_bytes([7; 32]));
    let tools = FileTools::new(store, Origin::Cli);
    let calls = [
        (
            "ast_edit",
            json!({"ops": [{"pat": "foo($A)", "out": "bar(\n    $A,\n)"}], "paths": ["."], "lang": "rust"}),
        ),
        (
            "edit",
            json!({"path": "c.txt", "old_text": "\n4\n5\n", "new_text": "\nfour\n"}),
        ),
        ("write", json!({"path": "new.txt", "content": "x\ny\nz"})),
        (
            "apply_patch",
            json!({"input": "*** Begin Patch\n*** Delete File: gone.txt\n*** Add File: added.txt\n+hello\n*** Update File: c.txt\n@@\n 11\n-12\n+twelve\n+and more\n*** End Patch\n"}),
        ),
    ];
    for (tool, arguments) in calls {
        let result = tools.call(tool, &arguments).unwrap();
        let Some(details) = result.details else {
            panic!("{tool} staged nothing: {}", result.text);
        };
        let facts = PreviewFacts::from_details(Some(&details)).unwrap();
        let added: usize = facts.files.iter().map(|file| file.added).sum();
        let removed: usize = facts.files.iter().map(|file| file.removed).sum();
        assert!(
            added > 0 && removed > 0 || tool == "write",
            "{tool}: {facts:?}"
        );
        assert_eq!(
            (facts.added, facts.removed),
            (added, removed),
            "{tool}: {facts:?}"
        );
    }
}

#[test]
fn a_preview_of_many_files_lists_every_files_facts_in_path_order() {
    // Enough files that their hunks are built on several threads, with runs of several files.
    let dir = tempfile::tempdir().unwrap();
    for index in 0..150 {
        let calls: String = (0..=index % 7)
            .map(|call| format!("    foo({call});\n{}", "    x();\n".repeat(8)))
            .collect();
        let path = dir.path().join(format!("d{}/f{index}.rs", index % 4));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, format!("fn f() {{\n{calls}}}\n")).unwrap();
    }
    let store = Store::open(Workspace::open(dir.path()).unwrap());
    let tools = FileTools::new(store.clone(), Origin::Cli);
    let result = tools
        .call(
            "ast_edit",
            &json!({"ops": [{"pat": "foo($A)", "out": "bar($A)"}], "paths": ["."], "lang": "rust"}),
        )
        .unwrap();
    let facts = PreviewFacts::from_details(result.details.as_ref()).unwrap();
    let StoredAction::Pending(record) = store.get(facts.pending_id.as_deref().unwrap()).unwrap()
    else {
        panic!("not pending");
    };
    assert_eq!(facts.files.len(), 150);
    let paths: Vec<&str> = facts.files.iter().map(|file| file.path.as_str()).collect();
    let mut sorted = paths.clone();
    sorted.sort_by(|a, b| resolve_store::path_order(a, b));
    assert_eq!(paths, sorted);
    assert_eq!(
        facts.files,
        preview_files(&store, &record.change_set).unwrap()
    );
    assert!(facts.files.iter().any(|file| file.hunks.len() > 1));
}
