//! The `file_tools` target: any tool name and any JSON arguments through
//! `FileTools::call`, the entry point the model drives; then the staged preview (if any) is
//! applied or discarded, and an apply is undone.

use std::collections::BTreeSet;
use std::time::Duration;

use resolve_edit::{Blobs, FileTools, Origin, Store, StoredAction};
use serde_json::Value;

use crate::fixture::{Entry, Fixture, Tree, files_only};

/// The files every `file_tools` input starts from: plain text, CRLF, a BOM, no final newline,
/// empty, binary, source files for `ast_edit`, and a nested directory.
const FILES: &[(&str, &[u8])] = &[
    ("a.txt", b"alpha\nbeta\n"),
    ("crlf.txt", b"one\r\ntwo\r\nthree"),
    ("mixed.txt", b"lf\ncrlf\r\ncr\rend"),
    (
        "bom.rs",
        "\u{feff}fn main() {\r\n    foo(1);\r\n}\r\n".as_bytes(),
    ),
    ("empty.txt", b""),
    ("bin.dat", b"\x00\x01\x02\xff"),
    ("latin1.txt", b"caf\xe9\n"),
    ("src/lib.rs", b"fn f() -> u8 {\n    foo(1).unwrap()\n}\n"),
    ("src/app.py", b"print(foo(1))\nx = foo(foo(2))"),
    (
        "src/deep/web.ts",
        b"const a = foo(1);\nlet b = foo(bar(2));\n",
    ),
];

/// Run one tool call, then resolve what it staged, checking every step.
///
/// Input: the tool name, a newline, then the JSON arguments (e.g. `edit\n{"path": "a.txt",
/// "old_text": "alpha", "new_text": "ALPHA"}`). An input of odd length discards the staged
/// preview instead of applying it.
///
/// Invariants: the call never panics; nothing outside the workspace changes, appears or shows
/// up in any output; the call itself writes nothing in the workspace; an apply leaves every
/// touched file holding exactly its previewed bytes (or absent, for a delete) and changes
/// nothing else, and consumes the action; since nothing changed since the preview, the apply
/// succeeds (were it to fail, it must still change nothing and keep the action pending); a
/// discard changes nothing; an undo restores every file byte for byte.
pub fn file_tools(data: &[u8]) {
    let Some(newline) = data.iter().position(|byte| *byte == b'\n') else {
        return;
    };
    let (Ok(name), Ok(args)) = (
        std::str::from_utf8(&data[..newline]),
        serde_json::from_slice::<Value>(&data[newline + 1..]),
    ) else {
        return;
    };
    let fixture = Fixture::new(FILES);
    let store = Store::open(fixture.workspace()).with_lock_timeout(Duration::from_secs(5));
    let tools = FileTools::new(store.clone(), Origin::Agent);
    let before = fixture.snapshot();

    let result = tools.call(name, &args);
    fixture.assert_outside_untouched();
    assert_eq!(
        fixture.snapshot(),
        before,
        "`{name}` changed the workspace before any resolve"
    );
    let text = match &result {
        Ok(result) => result.text.clone(),
        Err(error) => error.to_string(),
    };
    assert!(!text.is_empty(), "`{name}` gave an empty result");
    assert!(
        !text.contains(fixture.secret()),
        "`{name}` leaked a file outside the workspace: {text}"
    );
    let Some(id) = result.ok().and_then(|result| {
        result
            .details?
            .get("pendingId")
            .and_then(Value::as_str)
            .map(str::to_owned)
    }) else {
        return;
    };
    let Ok(StoredAction::Pending(record)) = store.get(&id) else {
        panic!("`{id}` was reported staged but is not pending");
    };
    let change_set = record.change_set;

    if data.len() % 2 == 1 {
        store
            .discard(&id, "fuzz", None)
            .expect("a discard succeeds");
        assert_eq!(
            fixture.snapshot(),
            before,
            "a discard changed the workspace"
        );
        fixture.assert_outside_untouched();
        return;
    }

    // Where each change lands: through an inner symlink, on its target.
    let mut allowed = BTreeSet::new();
    for path in change_set.paths() {
        let absolute = fixture.root().join(&path);
        if let Ok(real) = absolute.canonicalize()
            && let Ok(relative) = real.strip_prefix(
                fixture
                    .root()
                    .canonicalize()
                    .expect("a canonical workspace root"),
            )
        {
            allowed.insert(relative.to_string_lossy().into_owned());
        }
        allowed.insert(path);
    }

    match store.apply(&id, None, "fuzz", None) {
        Ok(_outcome) => {
            fixture.assert_outside_untouched();
            for (path, change) in change_set.files() {
                let absolute = fixture.root().join(path);
                match change.new_content() {
                    Some(content) => assert_eq!(
                        std::fs::read(&absolute).ok(),
                        Some(
                            Blobs::of(&fixture.workspace())
                                .read(content)
                                .expect("an applied content reads back")
                                .into_owned()
                        ),
                        "`{path}` does not hold the previewed bytes after apply"
                    ),
                    None => assert!(!absolute.exists(), "`{path}` survived its delete"),
                }
            }
            let after = fixture.snapshot();
            for path in changed_paths(&before, &after) {
                let inside_allowed = allowed.contains(&path)
                    || (matches!(after.get(&path), Some(Entry::Dir))
                        && allowed
                            .iter()
                            .any(|target| target.starts_with(&format!("{path}/"))));
                assert!(
                    inside_allowed,
                    "apply changed `{path}`, outside its preview"
                );
            }
            assert!(
                matches!(store.get(&id), Ok(StoredAction::Resolved(_))),
                "an applied action is not in the history"
            );
            assert!(
                store.pending().expect("pending lists").is_empty(),
                "an applied action is still pending"
            );
            store.undo(&id).expect("an untouched apply can be undone");
            assert_eq!(
                files_only(&fixture.snapshot()),
                files_only(&before),
                "undo did not restore every byte"
            );
            fixture.assert_outside_untouched();
        }
        Err(error) => {
            assert_eq!(
                fixture.snapshot(),
                before,
                "a failed apply ({error}) changed the workspace"
            );
            fixture.assert_outside_untouched();
            assert!(
                matches!(store.get(&id), Ok(StoredAction::Pending(_))),
                "a failed apply consumed the action"
            );
            // Nothing changed since the preview, so nothing excuses the failure: a preview
            // that can never be applied is a bug.
            panic!("an untouched preview failed to apply: {error}");
        }
    }
}

/// Paths whose entry differs between two trees (added, removed or changed).
fn changed_paths(before: &Tree, after: &Tree) -> Vec<String> {
    let mut paths: BTreeSet<String> = BTreeSet::new();
    for (path, entry) in before {
        if after.get(path) != Some(entry) {
            paths.insert(path.clone());
        }
    }
    for (path, entry) in after {
        if before.get(path) != Some(entry) {
            paths.insert(path.clone());
        }
    }
    paths.into_iter().collect()
}
