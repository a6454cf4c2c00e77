//! Behavior of the preview producers (`ast_edit`, `edit`, `write`) and the read-only tools
//! through the public API, plus a differential test of `ast_edit` against the `ast-grep` CLI.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use pretty_assertions::assert_eq;
use resolve_edit::{
    AstEditOutcome, AstEditRequest, Blobs, ChangeSet, Content, EditError, EditRequest, FileChange,
    GrepRequest, LsRequest, PREVIEW_BANNER, Preview, ReadRequest, StoreError, Workspace,
    WriteRequest, applied_text, content_hash, grep, ls, preview_ast_edit, preview_edit,
    preview_write, read, supported_languages,
};
use serde_json::json;

use super::common::workspace_holding;

// ---------------------------------------------------------------------------------------------
// helpers

#[expect(clippy::unwrap_used, reason = "a test helper panics when setup fails")]
fn write_files(root: &Path, files: &[(&str, &[u8])]) {
    for (path, content) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
}

#[expect(clippy::unwrap_used, reason = "a test helper panics when setup fails")]
fn preview(ws: &Workspace, request: &AstEditRequest) -> Preview {
    match preview_ast_edit(ws, request, None).unwrap() {
        AstEditOutcome::Preview(preview) => *preview,
        AstEditOutcome::NoReplacements { text } => panic!("expected a preview, got: {text}"),
    }
}

#[expect(clippy::unwrap_used, reason = "a test helper panics when setup fails")]
fn no_replacements(ws: &Workspace, request: &AstEditRequest) -> String {
    match preview_ast_edit(ws, request, None).unwrap() {
        AstEditOutcome::NoReplacements { text } => text,
        AstEditOutcome::Preview(preview) => panic!("expected no replacements: {:?}", preview.text),
    }
}

/// The preview's text, read back from the blob store.
#[expect(clippy::unwrap_used, reason = "a test helper panics when setup fails")]
fn text(ws: &Workspace, preview: &Preview) -> String {
    Blobs::of(ws).read_text(&preview.text).unwrap()
}

/// The preview's change set, read back from its spool.
#[expect(clippy::unwrap_used, reason = "a test helper panics when setup fails")]
fn changes(preview: &Preview) -> ChangeSet {
    preview.change_set.load().unwrap()
}

/// The preview's details as its result shows them, the files listed.
#[expect(clippy::unwrap_used, reason = "a test helper panics when setup fails")]
fn details(preview: &Preview) -> serde_json::Value {
    preview.result_details().to_value().unwrap()
}

#[expect(clippy::unwrap_used, reason = "a test helper panics when setup fails")]
fn content(ws: &Workspace, preview: &Preview, path: &str) -> String {
    let changes = changes(preview);
    let content = changes
        .get(path)
        .and_then(FileChange::new_content)
        .unwrap_or_else(|| panic!("{path} is not in the preview"));
    String::from_utf8(Blobs::of(ws).read(content).unwrap().into_owned()).unwrap()
}

fn foo_to_bar() -> [(&'static str, &'static str); 1] {
    [("foo($A)", "bar($A)")]
}

// ---------------------------------------------------------------------------------------------
// ast_edit: labels, counts, texts

#[test]
fn ast_edit_one_replacement_has_exact_label_text_and_details() {
    let (_dir, ws) = workspace_holding(&[("a.rs", b"fn a() { foo(1) }\n")]);
    let preview = preview(&ws, &AstEditRequest::new(&foo_to_bar(), &["a.rs"], None));
    assert_eq!(preview.label, "AST Edit: 1 replacement in 1 file");
    assert_eq!(preview.producer.name(), "ast_edit");
    assert_eq!(
        text(&ws, &preview),
        format!(
            "{PREVIEW_BANNER}\n\n--- a/a.rs\n+++ b/a.rs\n@@ -1 +1 @@\n-fn a() {{ foo(1) }}\n+fn a() {{ bar(1) }}"
        )
    );
    assert_eq!(
        details(&preview),
        json!({
            "totalReplacements": 1,
            "filesTouched": 1,
            "filesSearched": 1,
            "applied": false,
            "fileReplacements": [{"path": "a.rs", "count": 1}],
            "skipped": [],
            "limitReached": false,
            "rewrites": [{"pat": "foo($A)", "out": "bar($A)"}],
            "scopePath": "a.rs",
        })
    );
    assert_eq!(
        applied_text(preview.producer.name(), &changes(&preview)),
        "Applied 1 replacement in 1 file."
    );
}

#[test]
fn ast_edit_three_replacements_in_two_files_are_counted_per_file() {
    let (_dir, ws) = workspace_holding(&[
        ("src/a.rs", b"fn a() { foo(1); foo(2); }\n"),
        ("src/b.rs", b"fn b() { foo(3) }\n"),
        ("src/c.rs", b"fn c() { baz(3) }\n"),
    ]);
    let preview = preview(&ws, &AstEditRequest::new(&foo_to_bar(), &["src"], None));
    assert_eq!(preview.label, "AST Edit: 3 replacements in 2 files");
    assert_eq!(preview.details["totalReplacements"], 3);
    assert_eq!(preview.details["filesTouched"], 2);
    assert_eq!(preview.details["filesSearched"], 3);
    assert_eq!(
        details(&preview)["fileReplacements"],
        json!([{"path": "src/a.rs", "count": 2}, {"path": "src/b.rs", "count": 1}])
    );
    assert_eq!(changes(&preview).paths(), vec!["src/a.rs", "src/b.rs"]);
    assert_eq!(
        applied_text("ast_edit", &changes(&preview)),
        "Applied 3 replacements in 2 files."
    );
}

// Issue #36, item 4: a preview says it is not applied, and
// names its scope root-relative, entries joined with `, ` (`.` for the root).
#[test]
fn ast_edit_preview_details_say_not_applied_and_name_the_scope() {
    let (_dir, ws) = workspace_holding(&[
        ("apps/a.ts", b"foo(1);\n"),
        ("packages/b.ts", b"foo(2);\n"),
        ("c.ts", b"foo(3);\n"),
    ]);
    let many = preview(
        &ws,
        &AstEditRequest::new(&foo_to_bar(), &["apps/**/*.ts", "./packages", "c.ts"], None),
    );
    assert_eq!(many.details["applied"], json!(false));
    assert_eq!(
        many.details["scopePath"],
        json!("apps/**/*.ts, packages, c.ts")
    );
    let root = preview(&ws, &AstEditRequest::new(&foo_to_bar(), &["."], None));
    assert_eq!(root.details["scopePath"], json!("."));
    assert_eq!(root.details["totalReplacements"], json!(3));
    assert_eq!(root.details["applied"], json!(false));
}

#[test]
fn ast_edit_preview_writes_nothing_and_records_base_hashes() {
    let original = b"fn a() { foo(1) }\n";
    let (dir, ws) = workspace_holding(&[("a.rs", original)]);
    let preview = preview(&ws, &AstEditRequest::new(&foo_to_bar(), &["."], None));
    assert_eq!(std::fs::read(dir.path().join("a.rs")).unwrap(), original);
    let changes = changes(&preview);
    let Some(FileChange::Update {
        base_hash,
        content: new,
        replacements: 1,
        ..
    }) = changes.get("a.rs")
    else {
        panic!("not a one-replacement update: {changes:?}");
    };
    assert_eq!(base_hash, &content_hash(original));
    assert_eq!(new.hash(), content_hash(b"fn a() { bar(1) }\n"));
    assert_eq!(content(&ws, &preview, "a.rs"), "fn a() { bar(1) }\n");
}

#[test]
fn ast_edit_rewrites_only_the_outermost_of_nested_matches() {
    let (_dir, ws) = workspace_holding(&[("a.rs", b"fn main() { foo(foo(1)); }\n")]);
    let preview = preview(&ws, &AstEditRequest::new(&foo_to_bar(), &["a.rs"], None));
    assert_eq!(
        content(&ws, &preview, "a.rs"),
        "fn main() { bar(foo(1)); }\n"
    );
    assert_eq!(preview.label, "AST Edit: 1 replacement in 1 file");
}

#[test]
fn ast_edit_ops_all_match_the_original_text() {
    let (_dir, ws) = workspace_holding(&[("a.py", b"x = foo(1)\ny = bar(2)\n")]);
    let preview = preview(
        &ws,
        &AstEditRequest::new(
            &[("foo($A)", "bar($A)"), ("bar($A)", "baz($A)")],
            &["a.py"],
            None,
        ),
    );
    assert_eq!(content(&ws, &preview, "a.py"), "x = bar(1)\ny = baz(2)\n");
}

// ---------------------------------------------------------------------------------------------
// ast_edit: errors

#[test]
fn ast_edit_overlapping_ops_are_an_error_naming_both_patterns() {
    let (_dir, ws) = workspace_holding(&[("a.ts", b"const a = foo(bar(1));\n")]);
    let error = preview_ast_edit(
        &ws,
        &AstEditRequest::new(
            &[("foo($A)", "f($A)"), ("bar($A)", "b($A)")],
            &["a.ts"],
            None,
        ),
        None,
    )
    .unwrap_err();
    assert!(
        matches!(&error, EditError::OverlappingOps { first, second, path }
            if first == "foo($A)" && second == "bar($A)" && path == "a.ts"),
        "{error}"
    );
    assert!(
        error.to_string().contains("`foo($A)` and `bar($A)`"),
        "{error}"
    );
}

#[test]
fn ast_edit_identical_edits_from_two_ops_are_not_an_overlap() {
    let (_dir, ws) = workspace_holding(&[("a.ts", b"const a = foo(1);\n")]);
    let preview = preview(
        &ws,
        &AstEditRequest::new(
            &[("foo($A)", "bar($A)"), ("foo(1)", "bar(1)")],
            &["a.ts"],
            None,
        ),
    );
    assert_eq!(content(&ws, &preview, "a.ts"), "const a = bar(1);\n");
    assert_eq!(preview.details["totalReplacements"], 1);
}

#[test]
fn ast_edit_invalid_pattern_or_rewrite_is_an_error_naming_it() {
    let (_dir, ws) = workspace_holding(&[("a.rs", b"fn a() { foo(1) }\n")]);
    let error = preview_ast_edit(
        &ws,
        &AstEditRequest::new(&[("foo(($A", "bar($A)")], &["a.rs"], None),
        None,
    )
    .unwrap_err();
    assert!(
        matches!(&error, EditError::InvalidPattern { pattern, lang, .. }
            if pattern == "foo(($A" && lang == "Rust"),
        "{error}"
    );
    let error = preview_ast_edit(
        &ws,
        &AstEditRequest::new(&[("foo($A)", "bar(($A")], &["a.rs"], Some("rust")),
        None,
    )
    .unwrap_err();
    assert!(
        matches!(&error, EditError::InvalidPattern { pattern, .. } if pattern == "bar(($A"),
        "{error}"
    );
    assert!(
        error
            .to_string()
            .starts_with("Invalid pattern `bar(($A` for Rust: ")
    );
}

#[test]
fn ast_edit_empty_and_duplicate_patterns_are_invalid_requests_with_the_reference_texts() {
    let (_dir, ws) = workspace_holding(&[("a.rs", b"fn a() {}\n")]);
    let cases = [
        (
            AstEditRequest::new(&[("  ", "x")], &["a.rs"], None),
            "`ops[0].pat` must be a non-empty pattern",
        ),
        (
            AstEditRequest::new(&[], &["a.rs"], None),
            "`ops` must include at least one op entry",
        ),
        (
            AstEditRequest::new(
                &[("foo($A)", "x($A)"), ("foo($A)", "y($A)")],
                &["a.rs"],
                None,
            ),
            "Duplicate rewrite pattern: foo($A)",
        ),
        (
            AstEditRequest::new(&foo_to_bar(), &[], None),
            "`paths` must include at least one path",
        ),
    ];
    for (request, text) in cases {
        let error = preview_ast_edit(&ws, &request, None).unwrap_err();
        assert!(matches!(error, EditError::InvalidRequest(_)), "{error}");
        assert_eq!(error.to_string(), text);
    }
}

#[test]
fn ast_edit_unknown_language_is_an_error_listing_the_supported_ones() {
    let (_dir, ws) = workspace_holding(&[("a.rs", b"fn a() {}\n")]);
    let error = preview_ast_edit(
        &ws,
        &AstEditRequest::new(&foo_to_bar(), &["a.rs"], Some("cobol")),
        None,
    )
    .unwrap_err();
    assert!(
        matches!(error, EditError::UnknownLanguage { .. }),
        "{error}"
    );
    assert!(error.to_string().contains("rust"), "{error}");
}

const TLA_SPEC: &str = "---- MODULE Clock ----\nEXTENDS Naturals\nVARIABLE x\n\nInit == x = 0\n\nNext == x' = 1 - x\n\nSpec == Init /\\ [][Next]_x\n====\n";

// Issue #36, item 3: TLA⁺ is inferred from `.tla`, and `Init` → `Start`
// renames the definition (the pattern is the definition's identifier; the use in `Spec` is
// another node kind, as in ast-grep).
#[test]
fn ast_edit_infers_tla_from_the_extension_and_renames_a_definition() {
    let (_dir, ws) = workspace_holding(&[("spec/Clock.tla", TLA_SPEC.as_bytes())]);
    let preview = preview(
        &ws,
        &AstEditRequest::new(&[("Init", "Start")], &["spec"], None),
    );
    assert!(
        text(&ws, &preview).contains("+Start == x = 0"),
        "{}",
        text(&ws, &preview)
    );
    assert_eq!(preview.label, "AST Edit: 1 replacement in 1 file");
    assert_eq!(preview.details["totalReplacements"], json!(1));
    assert_eq!(preview.details["skipped"], json!([]), "no parse errors");
    assert_eq!(
        content(&ws, &preview, "spec/Clock.tla"),
        TLA_SPEC.replace("Init == x = 0", "Start == x = 0")
    );
}

#[test]
fn ast_edit_tla_meta_variables_capture_and_lang_names_tla() {
    let (_dir, ws) = workspace_holding(&[("Clock.spec", TLA_SPEC.as_bytes())]);
    let preview = preview(
        &ws,
        &AstEditRequest::new(
            &[("$A == x = 0", "$A == x = 1")],
            &["Clock.spec"],
            Some("tla"),
        ),
    );
    assert_eq!(preview.details["totalReplacements"], json!(1));
    let new = content(&ws, &preview, "Clock.spec");
    assert!(new.contains("\nInit == x = 1\n"), "{new}");
    assert!(supported_languages().contains(&"tla".to_owned()));
}

#[test]
fn ast_edit_with_zero_matches_makes_no_change_set() {
    let (_dir, ws) = workspace_holding(&[("a.rs", b"fn a() { baz(1) }\n")]);
    assert_eq!(
        no_replacements(&ws, &AstEditRequest::new(&foo_to_bar(), &["."], None)),
        "No replacements made"
    );
    let (_dir, empty) = workspace_holding(&[("notes.txt", b"x")]);
    assert_eq!(
        no_replacements(&empty, &AstEditRequest::new(&foo_to_bar(), &["."], None)),
        "No replacements made\nNo files were searched; check `paths` and `lang`."
    );
}

// ---------------------------------------------------------------------------------------------
// ast_edit: skipped files and preserved bytes

#[test]
fn ast_edit_skips_and_lists_a_file_with_parse_errors() {
    let (_dir, ws) = workspace_holding(&[
        ("good.rs", b"fn a() { foo(1) }\n"),
        ("broken.rs", b"fn ok() {}\nfn b( { foo(2) }\n"),
    ]);
    let preview = preview(&ws, &AstEditRequest::new(&foo_to_bar(), &["."], None));
    assert_eq!(changes(&preview).paths(), vec!["good.rs"]);
    assert_eq!(
        preview.details["skipped"],
        json!([{"path": "broken.rs", "reason": "parse errors (first at line 2); not rewritten"}])
    );
    assert!(
        text(&ws, &preview).ends_with(
            "\n\nSkipped 1 file:\n- broken.rs: parse errors (first at line 2); not rewritten"
        ),
        "{}",
        text(&ws, &preview)
    );
    let only_broken = no_replacements(
        &ws,
        &AstEditRequest::new(&foo_to_bar(), &["broken.rs"], None),
    );
    assert_eq!(
        only_broken,
        "No replacements made\nSkipped 1 file:\n- broken.rs: parse errors (first at line 2); not rewritten"
    );
}

#[test]
fn ast_edit_skips_binary_and_non_utf8_files() {
    let (_dir, ws) = workspace_holding(&[
        ("nul.rs", b"fn a() { foo(1) }\0\n"),
        ("latin1.rs", b"fn a() { foo(\xe9) }\n"),
        ("ok.rs", b"fn a() { foo(1) }\n"),
    ]);
    let preview = preview(&ws, &AstEditRequest::new(&foo_to_bar(), &["."], None));
    assert_eq!(changes(&preview).paths(), vec!["ok.rs"]);
    assert_eq!(
        preview.details["skipped"],
        json!([
            {"path": "latin1.rs", "reason": "binary or not valid UTF-8; not rewritten"},
            {"path": "nul.rs", "reason": "binary or not valid UTF-8; not rewritten"},
        ])
    );
}

#[test]
fn ast_edit_preserves_crlf_bom_and_a_missing_final_newline() {
    let (_dir, ws) = workspace_holding(&[
        ("crlf.rs", b"fn a() {\r\n    foo(1);\r\n}\r\n"),
        ("bom.ts", b"\xef\xbb\xbfconst a = foo(1);\n"),
        ("tail.py", b"x = foo(1)\ny = 2"),
        ("mixed.rs", b"fn a() {\r\n    foo(1);\n}\r\n"),
    ]);
    let preview = preview(&ws, &AstEditRequest::new(&foo_to_bar(), &["."], None));
    assert_eq!(
        content(&ws, &preview, "crlf.rs"),
        "fn a() {\r\n    bar(1);\r\n}\r\n"
    );
    assert_eq!(
        content(&ws, &preview, "bom.ts"),
        "\u{feff}const a = bar(1);\n"
    );
    assert_eq!(content(&ws, &preview, "tail.py"), "x = bar(1)\ny = 2");
    assert_eq!(
        content(&ws, &preview, "mixed.rs"),
        "fn a() {\r\n    bar(1);\n}\r\n"
    );
    assert!(text(&ws, &preview).contains("\n\\ No newline at end of file"));
}

// ---------------------------------------------------------------------------------------------
// ast_edit: scope

#[test]
fn ast_edit_directory_scope_honors_gitignore_outside_git_and_skips_hidden_and_state() {
    let (_dir, ws) = workspace_holding(&[
        (".gitignore", b"gen/\n"),
        ("src/a.rs", b"fn a() { foo(1) }\n"),
        ("gen/b.rs", b"fn b() { foo(2) }\n"),
        (".hidden/c.rs", b"fn c() { foo(3) }\n"),
        (".resolve/d.rs", b"fn d() { foo(4) }\n"),
    ]);
    let preview = preview(&ws, &AstEditRequest::new(&foo_to_bar(), &["."], None));
    assert_eq!(changes(&preview).paths(), vec!["src/a.rs"]);
    assert_eq!(preview.details["filesSearched"], 1);
}

#[test]
fn ast_edit_glob_scope_matches_in_scope_files_only() {
    let (_dir, ws) = workspace_holding(&[
        (".gitignore", b"apps/ignored.ts\n"),
        ("apps/root.ts", b"foo(1);\n"),
        ("apps/nested/child.ts", b"foo(2);\n"),
        ("apps/ignored.ts", b"foo(3);\n"),
        ("apps/script.js", b"foo(4);\n"),
        ("other/out.ts", b"foo(5);\n"),
        (".resolve/pending.ts", b"foo(6);\n"),
    ]);
    let preview = preview(
        &ws,
        &AstEditRequest::new(&foo_to_bar(), &["apps/**/*.ts"], None),
    );
    assert_eq!(
        changes(&preview).paths(),
        vec!["apps/nested/child.ts", "apps/root.ts"]
    );
    let everywhere = preview_ast_edit(
        &ws,
        &AstEditRequest::new(&foo_to_bar(), &["**/*.ts"], None),
        None,
    );
    let AstEditOutcome::Preview(everywhere) = everywhere.unwrap() else {
        panic!("expected a preview");
    };
    assert_eq!(
        changes(&everywhere).paths(),
        vec!["apps/nested/child.ts", "apps/root.ts", "other/out.ts"]
    );
}

#[test]
fn ast_edit_paths_outside_the_workspace_are_refused() {
    let (_dir, ws) = workspace_holding(&[("a.rs", b"fn a() {}\n")]);
    for path in ["../x", "../**/*.rs", "/etc"] {
        let error = preview_ast_edit(
            &ws,
            &AstEditRequest::new(&foo_to_bar(), &[path], None),
            None,
        )
        .unwrap_err();
        assert!(
            matches!(error, EditError::Store(StoreError::OutsideWorkspace { .. })),
            "{path}: {error}"
        );
    }
    let error = preview_ast_edit(
        &ws,
        &AstEditRequest::new(&foo_to_bar(), &[".resolve"], None),
        None,
    )
    .unwrap_err();
    assert!(
        matches!(error, EditError::Store(StoreError::StateDir { .. })),
        "{error}"
    );
}

#[test]
fn ast_edit_file_cap_keeps_the_first_files_and_says_limit_reached() {
    let (_dir, ws) = workspace_holding(&[
        ("a.rs", b"fn a() { foo(1) }\n"),
        ("b.rs", b"fn b() { foo(2) }\n"),
        ("c.rs", b"fn c() { foo(3) }\n"),
    ]);
    let outcome = preview_ast_edit(
        &ws,
        &AstEditRequest::new(&foo_to_bar(), &["."], None),
        Some(2),
    )
    .unwrap();
    let AstEditOutcome::Preview(preview) = outcome else {
        panic!("expected a preview");
    };
    assert_eq!(changes(&preview).paths(), vec!["a.rs", "b.rs"]);
    assert_eq!(preview.label, "AST Edit: 2 replacements in 2 files");
    assert_eq!(preview.details["limitReached"], true);
    assert!(
        text(&ws, &preview).ends_with("\n\nLimit reached; narrow paths."),
        "{}",
        text(&ws, &preview)
    );
    let outcome = preview_ast_edit(
        &ws,
        &AstEditRequest::new(&foo_to_bar(), &["."], None),
        Some(3),
    )
    .unwrap();
    let AstEditOutcome::Preview(preview) = outcome else {
        panic!("expected a preview");
    };
    assert_eq!(preview.details["limitReached"], false);
}

#[test]
fn ast_edit_lang_override_parses_named_files_and_filters_walks() {
    let (_dir, ws) = workspace_holding(&[
        ("snippet.txt", b"const a = foo(1);\n"),
        ("src/a.ts", b"const b = foo(2);\n"),
        ("src/b.py", b"c = foo(3)\n"),
    ]);
    // Without `lang`, a .txt file named explicitly has no language and is listed.
    let text = no_replacements(
        &ws,
        &AstEditRequest::new(&foo_to_bar(), &["snippet.txt"], None),
    );
    assert!(
        text.contains("snippet.txt: no supported language"),
        "{text}"
    );
    let preview = preview(
        &ws,
        &AstEditRequest::new(&foo_to_bar(), &["snippet.txt", "src"], Some("typescript")),
    );
    assert_eq!(changes(&preview).paths(), vec!["snippet.txt", "src/a.ts"]);
}

#[test]
fn ast_edit_without_lang_applies_an_op_only_where_it_parses() {
    // `fn $F() {}` is Rust, not JSON or Python: those files are not searched for it.
    let (_dir, ws) = workspace_holding(&[
        ("a.rs", b"fn old() {}\n"),
        ("package.json", b"{\"a\": 1}\n"),
        ("b.py", b"x = 1\n"),
    ]);
    let preview = preview(
        &ws,
        &AstEditRequest::new(&[("fn old() {}", "fn new() {}")], &["."], None),
    );
    assert_eq!(content(&ws, &preview, "a.rs"), "fn new() {}\n");
    // An op that parses in no language searched is an error.
    let error = preview_ast_edit(
        &ws,
        &AstEditRequest::new(&[("foo(($A", "x")], &["."], None),
        None,
    )
    .unwrap_err();
    assert!(matches!(error, EditError::InvalidPattern { .. }), "{error}");
}

// ---------------------------------------------------------------------------------------------
// edit and write

#[test]
fn edit_replaces_the_one_occurrence_with_label_and_diff() {
    let (_dir, ws) = workspace_holding(&[("src/a.txt", b"alpha\nbeta\ngamma\n")]);
    let preview = preview_edit(
        &ws,
        &EditRequest {
            path: "./src/a.txt".into(),
            old_text: "beta".into(),
            new_text: "BETA".into(),
            replace_all: false,
        },
    )
    .unwrap();
    assert_eq!(preview.label, "Edit: src/a.txt");
    assert_eq!(preview.producer.name(), "edit");
    assert_eq!(
        text(&ws, &preview),
        format!(
            "{PREVIEW_BANNER}\n\n--- a/src/a.txt\n+++ b/src/a.txt\n@@ -1,3 +1,3 @@\n alpha\n-beta\n+BETA\n gamma"
        )
    );
    assert_eq!(content(&ws, &preview, "src/a.txt"), "alpha\nBETA\ngamma\n");
    assert_eq!(
        applied_text("edit", &changes(&preview)),
        "Applied edit to src/a.txt."
    );
}

#[test]
fn edit_not_found_and_ambiguous_are_errors() {
    let (_dir, ws) = workspace_holding(&[("a.txt", b"x x x\n")]);
    let edit = |old: &str, all: bool| {
        preview_edit(
            &ws,
            &EditRequest {
                path: "a.txt".into(),
                old_text: old.into(),
                new_text: "y".into(),
                replace_all: all,
            },
        )
    };
    let error = edit("z", false).unwrap_err();
    assert!(matches!(error, EditError::EditNotFound { .. }), "{error}");
    let error = edit("x", false).unwrap_err();
    assert!(
        matches!(error, EditError::EditAmbiguous { count: 3, .. }),
        "{error}"
    );
    assert!(error.to_string().contains("occurs 3 times"), "{error}");
    let preview = edit("x", true).unwrap();
    assert_eq!(content(&ws, &preview, "a.txt"), "y y y\n");
    assert_eq!(changes(&preview).total_replacements(), 3);
}

#[test]
fn write_creates_a_missing_file_and_overwrites_an_existing_one() {
    let (dir, ws) = workspace_holding(&[("old.txt", b"before\n")]);
    let created = preview_write(
        &ws,
        &WriteRequest {
            path: "docs/new.md".into(),
            content: "# New\n".into(),
        },
    )
    .unwrap();
    assert_eq!(created.label, "Write: docs/new.md");
    assert_eq!(
        changes(&created).get("docs/new.md"),
        Some(&FileChange::Create {
            content: Content::Stored {
                blob: content_hash(b"# New\n")
            }
        })
    );
    assert!(
        text(&ws, &created).contains("--- /dev/null\n+++ b/docs/new.md\n@@ -0,0 +1 @@\n+# New")
    );
    assert_eq!(
        applied_text("write", &changes(&created)),
        "Wrote docs/new.md."
    );
    assert!(!dir.path().join("docs/new.md").exists());

    let overwritten = preview_write(
        &ws,
        &WriteRequest {
            path: "old.txt".into(),
            content: "after\n".into(),
        },
    )
    .unwrap();
    assert_eq!(overwritten.label, "Write: old.txt");
    assert_eq!(
        changes(&overwritten).get("old.txt"),
        Some(&FileChange::update(
            content_hash(b"before\n"),
            Content::Stored {
                blob: content_hash(b"after\n")
            },
            1
        ))
    );
    assert_eq!(
        std::fs::read(dir.path().join("old.txt")).unwrap(),
        b"before\n"
    );
}

#[test]
fn write_and_edit_refuse_binary_targets() {
    let (_dir, ws) = workspace_holding(&[("img.bin", b"\x89PNG\0\0"), ("latin1.txt", b"caf\xe9")]);
    let error = preview_write(
        &ws,
        &WriteRequest {
            path: "img.bin".into(),
            content: "text".into(),
        },
    )
    .unwrap_err();
    assert!(matches!(error, EditError::Binary { .. }), "{error}");
    let error = preview_edit(
        &ws,
        &EditRequest {
            path: "latin1.txt".into(),
            old_text: "caf".into(),
            new_text: "cafe".into(),
            replace_all: false,
        },
    )
    .unwrap_err();
    assert!(matches!(error, EditError::Binary { .. }), "{error}");
}

#[test]
fn edit_and_write_refuse_paths_outside_the_workspace() {
    let (_dir, ws) = workspace_holding(&[]);
    let error = preview_write(
        &ws,
        &WriteRequest {
            path: "../x".into(),
            content: "x".into(),
        },
    )
    .unwrap_err();
    assert!(
        matches!(error, EditError::Store(StoreError::OutsideWorkspace { .. })),
        "{error}"
    );
    let error = preview_edit(
        &ws,
        &EditRequest {
            path: "../x".into(),
            old_text: "a".into(),
            new_text: "b".into(),
            replace_all: false,
        },
    )
    .unwrap_err();
    assert!(
        matches!(error, EditError::Store(StoreError::OutsideWorkspace { .. })),
        "{error}"
    );
    let error = preview_write(
        &ws,
        &WriteRequest {
            path: ".resolve/x".into(),
            content: "x".into(),
        },
    )
    .unwrap_err();
    assert!(
        matches!(error, EditError::Store(StoreError::StateDir { .. })),
        "{error}"
    );
}

// ---------------------------------------------------------------------------------------------
// read, ls, grep

fn read_request(path: &str, offset: Option<usize>, limit: Option<usize>) -> ReadRequest {
    ReadRequest {
        path: path.into(),
        offset,
        limit,
    }
}

#[test]
fn read_numbers_lines_and_honors_offset_and_limit() {
    let (_dir, ws) = workspace_holding(&[("a.txt", b"one\r\ntwo\nthree\nfour")]);
    assert_eq!(
        read(&ws, &read_request("a.txt", None, None)).unwrap(),
        "     1\tone\n     2\ttwo\n     3\tthree\n     4\tfour"
    );
    assert_eq!(
        read(&ws, &read_request("a.txt", Some(2), Some(2))).unwrap(),
        "     2\ttwo\n     3\tthree\n\n[Showing lines 2-3 of 4. Continue with offset=4.]"
    );
    let error = read(&ws, &read_request("a.txt", Some(9), None)).unwrap_err();
    assert_eq!(
        error.to_string(),
        "`a.txt` has 4 lines; offset 9 is past the end."
    );
}

#[test]
fn read_shows_2000_lines_by_default() {
    let text: String = (1..=2500).map(|n| format!("line {n}\n")).collect();
    let (_dir, ws) = workspace_holding(&[("big.txt", text.as_bytes())]);
    let out = read(&ws, &read_request("big.txt", None, None)).unwrap();
    assert!(out.contains("  2000\tline 2000\n"));
    assert!(!out.contains("line 2001\n"));
    assert!(out.ends_with("[Showing lines 1-2000 of 2500. Continue with offset=2001.]"));
}

#[test]
fn read_refuses_binary_files_directories_and_escapes() {
    let (_dir, ws) = workspace_holding(&[("a.bin", b"\0\x01"), ("src/a.txt", b"a")]);
    assert!(matches!(
        read(&ws, &read_request("a.bin", None, None)).unwrap_err(),
        EditError::Binary { .. }
    ));
    assert!(matches!(
        read(&ws, &read_request("src", None, None)).unwrap_err(),
        EditError::WrongKind { .. }
    ));
    assert!(matches!(
        read(&ws, &read_request("../x", None, None)).unwrap_err(),
        EditError::Store(StoreError::OutsideWorkspace { .. })
    ));
}

#[test]
fn ls_sorts_entries_marks_directories_and_hides_the_state_dir() {
    let (_dir, ws) = workspace_holding(&[
        ("b.txt", b""),
        ("a/x.txt", b""),
        (".gitignore", b""),
        (".resolve/lock", b""),
    ]);
    assert_eq!(
        ls(&ws, &LsRequest::default()).unwrap(),
        ".gitignore\na/\nb.txt"
    );
    assert_eq!(
        ls(
            &ws,
            &LsRequest {
                path: Some("a".into())
            }
        )
        .unwrap(),
        "x.txt"
    );
    assert!(matches!(
        ls(
            &ws,
            &LsRequest {
                path: Some("../".into())
            }
        )
        .unwrap_err(),
        EditError::Store(StoreError::OutsideWorkspace { .. })
    ));
}

#[test]
fn grep_lists_path_line_text_and_honors_gitignore() {
    let (_dir, ws) = workspace_holding(&[
        (".gitignore", b"ignored/\n"),
        ("src/b.rs", b"fn b() {}\nlet needle = 1;\r\n"),
        ("src/a.rs", b"// needle here\n"),
        ("ignored/c.rs", b"needle\n"),
        ("data.bin", b"needle\0"),
        (".resolve/p.json", b"needle"),
    ]);
    let out = grep(
        &ws,
        &GrepRequest {
            pattern: "need(le)".into(),
            path: None,
        },
    )
    .unwrap();
    assert_eq!(out, "src/a.rs:1:// needle here\nsrc/b.rs:2:let needle = 1;");
    let none = grep(
        &ws,
        &GrepRequest {
            pattern: "absent".into(),
            path: Some("src".into()),
        },
    )
    .unwrap();
    assert_eq!(none, "No matches for `absent`.");
    let error = grep(
        &ws,
        &GrepRequest {
            pattern: "(".into(),
            path: None,
        },
    )
    .unwrap_err();
    assert!(matches!(error, EditError::InvalidRegex { .. }), "{error}");
}

#[test]
fn grep_stops_at_200_matches_with_a_note() {
    let text: String = (1..=150).map(|n| format!("hit {n}\n")).collect();
    let (_dir, ws) = workspace_holding(&[("a.txt", text.as_bytes()), ("b.txt", text.as_bytes())]);
    let out = grep(
        &ws,
        &GrepRequest {
            pattern: "hit".into(),
            path: Some(".".into()),
        },
    )
    .unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 201);
    assert_eq!(lines[199], "b.txt:50:hit 50");
    assert_eq!(
        lines[200],
        "[Stopped at 200 matches; narrow the pattern or path.]"
    );
}

// ---------------------------------------------------------------------------------------------
// differential test against the ast-grep CLI

/// The `ast-grep` binary: `$AST_GREP_BIN`, else `ast-grep` on `PATH`.
fn ast_grep_binary() -> Option<PathBuf> {
    if let Some(bin) = std::env::var_os("AST_GREP_BIN") {
        return Some(PathBuf::from(bin));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("ast-grep"))
        .find(|candidate| candidate.is_file())
}

/// Every file under `root` (relative path → bytes).
#[expect(clippy::unwrap_used, reason = "a test helper panics when setup fails")]
fn snapshot(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.ends_with(resolve_edit::STATE_DIR) {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else {
                let relative = path
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                files.insert(relative, std::fs::read(&path).unwrap());
            }
        }
    }
    files
}

const RUST_MAIN: &str = r#"fn main() {
    let a = foo(foo(1));
    let b = foo(bar(foo(2)), foo(3));
    if foo(4) > 0 {
        println!("{}", foo(5));
    }
    let c = x.unwrap();
    let d = y.unwrap().unwrap();
    let e = Some(foo(
        z.unwrap(),
    ));
}
"#;

const RUST_LIB: &str = "pub fn lib() -> i32 {\r\n    foo(foo(foo(7))) + w.unwrap()\r\n}\r\n";

const RUST_TAIL: &str = "fn tail() {\n    let v = foo(9).unwrap();\n    foo(10)\n}";

const PYTHON_MAIN: &str = r#"def f():
    x = foo(foo(1))
    if foo(2):
        return foo(3, foo(4))
    print(foo(5))

class K:
    def m(self):
        print("a", foo(6))
"#;

const PYTHON_TAIL: &str = "y = [foo(i) for i in range(3)]\r\nprint(y)";

const TS_MAIN: &str = r#"const a = foo(foo(1));
function g() {
  return foo(2) + foo(3);
}
console.log(foo(4), foo(foo(5)));
export class C {
  m() {
    if (foo(6)) {
      console.log("x");
    }
  }
}
"#;

const TS_TAIL: &str = "function h(x: number) {\r\n  return foo(x, foo(x));\r\n}";

/// A corpus of Rust, Python and TypeScript files with nested and repeated matches, CRLF line
/// endings, missing final newlines, a byte-order mark and non-ASCII text, plus a file of another
/// language that must stay untouched.
fn corpus(root: &Path) {
    write_files(
        root,
        &[
            ("src/main.rs", RUST_MAIN.as_bytes()),
            ("src/lib/mod.rs", RUST_LIB.as_bytes()),
            ("src/tail.rs", RUST_TAIL.as_bytes()),
            ("py/main.py", PYTHON_MAIN.as_bytes()),
            ("py/pkg/tail.py", PYTHON_TAIL.as_bytes()),
            ("web/main.ts", TS_MAIN.as_bytes()),
            ("web/lib/tail.ts", TS_TAIL.as_bytes()),
            (
                "web/bom.ts",
                "\u{feff}const z = foo(foo(\"ü\"));\n".as_bytes(),
            ),
            (
                "src/unicode.rs",
                "fn u() {\n    let s = \"héllo → wörld\";\n    foo(\"ü\", s).unwrap();\n}\n"
                    .as_bytes(),
            ),
            ("README.md", b"foo(1) is documented here\n"),
        ],
    );
}

#[test]
fn ast_edit_matches_the_ast_grep_cli_byte_for_byte() {
    let Some(binary) = ast_grep_binary() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "the ast-grep CLI is required in CI: set AST_GREP_BIN or put `ast-grep` on PATH \
             (pip install ast-grep-cli)"
        );
        eprintln!(
            "\n!!!!!!!! SKIPPED ast_edit_matches_the_ast_grep_cli_byte_for_byte: no ast-grep \
             binary (set AST_GREP_BIN or put `ast-grep` on PATH; pip install ast-grep-cli) \
             !!!!!!!!\n"
        );
        return;
    };
    let cases: &[(&str, &str, &str)] = &[
        ("rust", "foo($A)", "bar($A)"),
        ("rust", "foo($$$ARGS)", "baz($$$ARGS)"),
        ("rust", "$X.unwrap()", "$X.expect(\"todo\")"),
        ("rust", "let $A = $B;", "let $A =\n    $B;"),
        ("rust", "Some($A)", "Ok(\n    $A\n)"),
        ("python", "foo($$$A)", "bar($$$A)"),
        ("python", "print($$$A)", "log(\n    $$$A\n)"),
        ("python", "return $E", "return wrap($E)"),
        ("typescript", "foo($A)", "bar($A)"),
        ("typescript", "foo($$$A)", "qux($$$A)"),
        ("typescript", "console.log($$$A)", "logger.info($$$A)"),
        (
            "typescript",
            "if ($C) { $$$B }",
            "if (!($C)) {\n  return;\n}\n$$$B",
        ),
    ];
    let mut compared = 0;
    for (lang, pat, out) in cases {
        let theirs = tempfile::tempdir().unwrap();
        let ours = tempfile::tempdir().unwrap();
        corpus(theirs.path());
        corpus(ours.path());

        let status = Command::new(&binary)
            .args(["run", "-p", pat, "-r", out, "-U", "--lang", lang])
            .arg(theirs.path())
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "ast-grep failed for {lang} `{pat}`");

        let ws = Workspace::open(ours.path()).unwrap();
        let outcome = preview_ast_edit(
            &ws,
            &AstEditRequest::new(&[(pat, out)], &["."], Some(lang)),
            None,
        )
        .unwrap();
        let AstEditOutcome::Preview(preview) = outcome else {
            panic!("no replacements for {lang} `{pat}`");
        };
        assert_eq!(preview.details["skipped"], json!([]), "{lang} `{pat}`");
        for (path, change) in changes(&preview).files() {
            let new = Blobs::of(&ws)
                .read(change.new_content().unwrap())
                .unwrap()
                .into_owned();
            std::fs::write(ours.path().join(path), new).unwrap();
        }

        let (expected, actual) = (snapshot(theirs.path()), snapshot(ours.path()));
        assert_eq!(
            expected.keys().collect::<Vec<_>>(),
            actual.keys().collect::<Vec<_>>()
        );
        for (path, bytes) in &expected {
            assert_eq!(
                String::from_utf8_lossy(&actual[path]),
                String::from_utf8_lossy(bytes),
                "{path} differs from ast-grep for {lang} `{pat}` → `{out}`"
            );
        }
        assert_ne!(snapshot(theirs.path()), {
            let pristine = tempfile::tempdir().unwrap();
            corpus(pristine.path());
            snapshot(pristine.path())
        });
        compared += 1;
    }
    assert_eq!(compared, cases.len());
}

/// Files of the languages a tree mixes besides code: Markdown, HTML, YAML and JSON, each with
/// text that looks like the patterns below.
fn mixed_corpus(root: &Path) {
    corpus(root);
    write_files(
        root,
        &[
            (
                "docs/guide.md",
                b"# Guide\n\nCall `x.unwrap()` only in tests; foo(2) is the old name.\n\n- y.unwrap()\n",
            ),
            (
                "web/page.html",
                b"<html><body><p>a.unwrap() and foo(3)</p></body></html>\n",
            ),
            ("ci/build.yaml", b"steps:\n  - run: z.unwrap()\n  - name: foo(4)\n"),
            ("data/config.json", b"{\"call\": \"w.unwrap()\", \"old\": \"foo(5)\"}\n"),
            (
                "web/app.html",
                b"<html>\n<head><style>\np { color: red; }\n</style></head>\n<body>\n\
<p>v.unwrap() and foo(6)</p>\n<script>\nconst a = foo(7);\nconsole.log(u.unwrap(), foo(8));\n\
</script>\n</body>\n</html>\n",
            ),
        ],
    );
}

/// See: issue #32 §5. Without `lang`, each file is parsed in the language of its extension, and
/// the code of an HTML page's `<script>` element in its own, as `ast-grep run` does without
/// `--lang`.
#[test]
fn ast_edit_without_lang_matches_the_ast_grep_cli_on_a_mixed_language_tree() {
    let Some(binary) = ast_grep_binary() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "the ast-grep CLI is required in CI: set AST_GREP_BIN or put `ast-grep` on PATH"
        );
        eprintln!("\n!!!!!!!! SKIPPED: no ast-grep binary (set AST_GREP_BIN) !!!!!!!!\n");
        return;
    };
    for (pat, out) in [
        ("$X.unwrap()", "$X.expect(\"todo\")"),
        ("foo($A)", "bar($A)"),
    ] {
        let theirs = tempfile::tempdir().unwrap();
        let ours = tempfile::tempdir().unwrap();
        mixed_corpus(theirs.path());
        mixed_corpus(ours.path());
        let status = Command::new(&binary)
            .args(["run", "-p", pat, "-r", out, "-U"])
            .arg(theirs.path())
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "ast-grep failed for `{pat}`");
        let ws = Workspace::open(ours.path()).unwrap();
        let outcome =
            preview_ast_edit(&ws, &AstEditRequest::new(&[(pat, out)], &["."], None), None).unwrap();
        let AstEditOutcome::Preview(preview) = outcome else {
            panic!("no replacements for `{pat}`");
        };
        for (path, change) in changes(&preview).files() {
            let new = Blobs::of(&ws)
                .read(change.new_content().unwrap())
                .unwrap()
                .into_owned();
            std::fs::write(ours.path().join(path), new).unwrap();
        }
        let (expected, actual) = (snapshot(theirs.path()), snapshot(ours.path()));
        for (path, bytes) in &expected {
            assert_eq!(
                String::from_utf8_lossy(&actual[path]),
                String::from_utf8_lossy(bytes),
                "{path} differs from ast-grep without --lang for `{pat}` → `{out}`"
            );
        }
        assert_eq!(expected.len(), actual.len());
    }
}

/// HTML pages whose code sits in several `<script>` and `<style>` elements, some marked
/// TypeScript, one with a match in the page's own text.
fn html_corpus(root: &Path) {
    write_files(
        root,
        &[
            (
                "site/index.html",
                b"<!DOCTYPE html>\n<html>\n<head>\n<style>\na { color: red; }\n</style>\n\
<script>\nconsole.log(x.unwrap());\nlet y = foo(foo(1)).unwrap();\n</script>\n</head>\n\
<body><p>x.unwrap() and foo(2)</p>\n<script type=\"module\">\nbar.unwrap()\n</script>\n\
<script lang=\"ts\">\nconst z: number = baz.unwrap() + foo(3);\nconsole.log(z);\n</script>\n\
</body>\n</html>\n",
            ),
            (
                "site/plain.html",
                b"<html><body><script>\n  if (ok) { console.log(w.unwrap()); }\n</script></body></html>\n",
            ),
            ("site/app.js", b"console.log(q.unwrap());\n"),
        ],
    );
}

/// What ast-grep's `--json` output says `root`'s files become: each file's reported
/// replacements applied to its bytes, outermost first, a match nested in an applied one left
/// alone (what `ast-grep run -U` writes when a file has one region of matches).
#[expect(
    clippy::unwrap_used,
    reason = "a test helper panics when ast-grep's output is not what it documents"
)]
fn ast_grep_reported(binary: &Path, root: &Path, args: &[&str]) -> BTreeMap<String, Vec<u8>> {
    let output = Command::new(binary)
        .args(["run", "--json=compact"])
        .args(args)
        .arg(root)
        .output()
        .unwrap();
    assert!(output.status.success(), "ast-grep {args:?} failed");
    let matches: Vec<serde_json::Value> = serde_json::from_slice(&output.stdout).unwrap();
    let mut by_file: BTreeMap<String, Vec<(usize, usize, String)>> = BTreeMap::new();
    for found in &matches {
        let file = Path::new(found["file"].as_str().unwrap());
        let relative = file.strip_prefix(root).unwrap_or(file);
        let offsets = &found["replacementOffsets"];
        by_file
            .entry(relative.to_string_lossy().into_owned())
            .or_default()
            .push((
                offsets["start"].as_u64().unwrap() as usize,
                offsets["end"].as_u64().unwrap() as usize,
                found["replacement"].as_str().unwrap().to_owned(),
            ));
    }
    let mut files = snapshot(root);
    for (path, mut replacements) in by_file {
        replacements.sort();
        let old = files[&path].clone();
        let mut new = Vec::new();
        let mut cursor = 0;
        for (start, end, text) in replacements {
            if start < cursor {
                continue;
            }
            new.extend_from_slice(&old[cursor..start]);
            new.extend_from_slice(text.as_bytes());
            cursor = end;
        }
        new.extend_from_slice(&old[cursor..]);
        files.insert(path, new);
    }
    files
}

/// See: issue #32 §5. The code an HTML page embeds is rewritten wherever ast-grep finds a
/// match, without `lang` and with it. `ast-grep run -U` writes only the last element's rewrites
/// of a page with several (each element is a document of its own, written over the others);
/// `ast_edit` keeps every one, so the expected bytes are ast-grep's reported matches applied.
#[test]
fn ast_edit_rewrites_the_code_html_embeds_where_ast_grep_reports_matches() {
    let Some(binary) = ast_grep_binary() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "the ast-grep CLI is required in CI: set AST_GREP_BIN or put `ast-grep` on PATH"
        );
        eprintln!("\n!!!!!!!! SKIPPED: no ast-grep binary (set AST_GREP_BIN) !!!!!!!!\n");
        return;
    };
    for (pat, out, lang) in [
        ("$X.unwrap()", "$X.expect(\"todo\")", None),
        ("foo($A)", "bar($A)", None),
        ("$X.unwrap()", "$X.expect(\"todo\")", Some("javascript")),
        ("console.log($$$A)", "logger.info($$$A)", Some("typescript")),
    ] {
        let ours = tempfile::tempdir().unwrap();
        html_corpus(ours.path());
        let pristine = snapshot(ours.path());
        let mut args = vec!["-p", pat, "-r", out];
        if let Some(lang) = lang {
            args.extend(["-l", lang]);
        }
        let expected = ast_grep_reported(&binary, ours.path(), &args);
        assert_ne!(expected, pristine, "ast-grep matched nothing for `{pat}`");
        let ws = Workspace::open(ours.path()).unwrap();
        let AstEditOutcome::Preview(preview) =
            preview_ast_edit(&ws, &AstEditRequest::new(&[(pat, out)], &["."], lang), None).unwrap()
        else {
            panic!("no replacements for `{pat}` ({lang:?})");
        };
        assert_eq!(preview.details["skipped"], json!([]), "`{pat}` ({lang:?})");
        let mut actual = pristine.clone();
        for (path, change) in changes(&preview).files() {
            let new = Blobs::of(&ws)
                .read(change.new_content().unwrap())
                .unwrap()
                .into_owned();
            actual.insert(path.to_owned(), new);
        }
        for (path, bytes) in &expected {
            assert_eq!(
                String::from_utf8_lossy(&actual[path]),
                String::from_utf8_lossy(bytes),
                "{path} differs from ast-grep's matches for `{pat}` → `{out}` ({lang:?})"
            );
        }
    }
}
