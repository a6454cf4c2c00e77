//! The adversarial file-system matrix: what happens to a staged preview when the files under
//! it are swapped, removed, locked or strange. Every case proves one of two outcomes: the
//! change lands byte for byte, or it fails with an error naming the file, writes nothing
//! (every other file of the change rolls back), and stays pending.
//!
//! Tests run as root, where permission bits stop no write; an immutable file (`chattr +i`)
//! does, so the "permission denied" case uses that. Disk-full faults need a process with a
//! file-size limit and live in the CLI suite (`faults.rs`).

#![expect(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] functions fail the test by panicking"
)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use pretty_assertions::assert_eq;
use resolve_edit::{
    ChangeSet, EditError, FileChange, FileTools, JOURNAL_DIR, NewAction, Origin, STATE_DIR, Store,
    StoreError, StoredAction, Workspace, content_hash,
};
use serde_json::{Value, json};

/// A workspace root beside a directory outside it.
struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    outside: PathBuf,
    store: Store,
}

impl Fixture {
    fn new(files: &[(&str, &[u8])]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("ws");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        for (path, bytes) in files {
            let path = root.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, bytes).unwrap();
        }
        let store = Store::open(Workspace::open(&root).unwrap())
            .with_record_key(resolve_store::RecordKey::from_bytes([7; 32]));
        Self {
            _dir: dir,
            root,
            outside,
            store,
        }
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }

    fn bytes(&self, relative: &str) -> Vec<u8> {
        std::fs::read(self.path(relative)).unwrap()
    }

    fn tools(&self) -> FileTools {
        FileTools::new(self.store.clone(), Origin::Agent)
    }

    /// Stage through the model-facing tool; the pending id.
    fn call(&self, tool: &str, args: Value) -> String {
        let result = self.tools().call(tool, &args).unwrap();
        let id = result
            .details
            .as_ref()
            .and_then(|details| details.get("pendingId"))
            .and_then(Value::as_str);
        match id {
            Some(id) if !result.is_error => id.to_owned(),
            Some(_) | None => panic!("`{tool}` {args} staged nothing: {}", result.text),
        }
    }

    /// Stage a change set of `changes` (path, change) directly; the pending id.
    fn stage_changes(
        &self,
        changes: impl IntoIterator<Item = (&'static str, FileChange)>,
    ) -> String {
        let mut set = ChangeSet::new();
        for (path, change) in changes {
            set.insert(path, change);
        }
        let action = NewAction {
            origin: Origin::Cli,
            source_tool: "ast_edit".into(),
            label: "test".into(),
            preview_text: "preview".into(),
            details: Value::Null,
        };
        self.store.stage(action, set).unwrap().id
    }

    fn is_pending(&self, id: &str) -> bool {
        matches!(self.store.get(id).unwrap(), StoredAction::Pending(_))
    }

    /// Every file under the root, outside `.resolve/`, with its bytes.
    fn files(&self) -> BTreeMap<String, Vec<u8>> {
        let mut files = BTreeMap::new();
        collect(&self.root, &self.root, &mut files);
        files
    }

    /// Names of leftovers: temp files in the tree and anything in the journal directory.
    fn leftovers(&self) -> Vec<String> {
        let mut found: Vec<String> = self
            .files()
            .into_keys()
            .filter(|path| path.ends_with(".tmp"))
            .collect();
        if let Ok(entries) = std::fs::read_dir(self.root.join(STATE_DIR).join(JOURNAL_DIR)) {
            found.extend(entries.map(|entry| entry.unwrap().file_name().to_string_lossy().into()));
        }
        found
    }
}

fn collect(root: &Path, dir: &Path, files: &mut BTreeMap<String, Vec<u8>>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        let relative = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if relative == STATE_DIR {
            continue;
        }
        let kind = entry.file_type().unwrap();
        if kind.is_dir() {
            collect(root, &path, files);
        } else if kind.is_file() {
            files.insert(relative, std::fs::read(&path).unwrap());
        } else {
            let target = std::fs::read_link(&path).unwrap();
            files.insert(relative, format!("-> {}", target.display()).into_bytes());
        }
    }
}

/// A fixture holding `files` (path, text) and the pending id of a change set that upper-cases
/// each of them and creates each of `created` (path, text).
fn staged_uppercase(
    files: &[(&'static str, &'static str)],
    created: &[(&'static str, &'static str)],
) -> (Fixture, String) {
    let holding: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(path, text)| (*path, text.as_bytes()))
        .collect();
    let fx = Fixture::new(&holding);
    let updates = files
        .iter()
        .map(|(path, text)| (*path, update(text.as_bytes(), &text.to_uppercase())));
    let creations = created.iter().map(|(path, text)| (*path, create(text)));
    let id = fx.stage_changes(updates.chain(creations));
    (fx, id)
}

fn create(content: &str) -> FileChange {
    FileChange::Create {
        content: content.into(),
    }
}

fn update(old: &[u8], new: &str) -> FileChange {
    FileChange::update(content_hash(old), new.into(), 1)
}

#[test]
fn a_symlink_to_outside_swapped_in_after_the_preview_is_refused_and_nothing_is_written() {
    let (fx, id) = staged_uppercase(&[("a.txt", "alpha\n"), ("b.txt", "beta\n")], &[]);
    // Same bytes behind the link, so a hash check alone would pass.
    std::fs::write(fx.outside.join("victim.txt"), "alpha\n").unwrap();
    std::fs::remove_file(fx.path("a.txt")).unwrap();
    std::os::unix::fs::symlink(fx.outside.join("victim.txt"), fx.path("a.txt")).unwrap();
    let before = fx.files();

    let error = fx.store.apply(&id, None, "swap", None).unwrap_err();
    assert!(matches!(error, StoreError::SymlinkEscape { .. }), "{error}");
    assert!(error.to_string().contains("a.txt"), "{error}");
    assert_eq!(
        std::fs::read(fx.outside.join("victim.txt")).unwrap(),
        b"alpha\n"
    );
    assert_eq!(fx.files(), before);
    assert!(fx.is_pending(&id));
}

#[test]
fn a_parent_directory_swapped_for_a_symlink_to_outside_is_refused() {
    let fx = Fixture::new(&[("src/a.txt", b"alpha\n")]);
    let id = fx.call(
        "edit",
        json!({"path": "src/a.txt", "old_text": "alpha", "new_text": "ALPHA"}),
    );
    std::fs::rename(fx.path("src"), fx.path("src.orig")).unwrap();
    std::fs::write(fx.outside.join("a.txt"), "alpha\n").unwrap();
    std::os::unix::fs::symlink(&fx.outside, fx.path("src")).unwrap();

    let error = fx.store.apply(&id, None, "swap", None).unwrap_err();
    assert!(matches!(error, StoreError::SymlinkEscape { .. }), "{error}");
    assert_eq!(std::fs::read(fx.outside.join("a.txt")).unwrap(), b"alpha\n");
    assert_eq!(fx.bytes("src.orig/a.txt"), b"alpha\n");
    assert!(fx.is_pending(&id));
}

#[test]
fn a_symlink_to_another_workspace_file_swapped_in_is_checked_against_that_file() {
    let fx = Fixture::new(&[("a.txt", b"alpha\n"), ("b.txt", b"beta\n")]);
    let id = fx.call(
        "edit",
        json!({"path": "a.txt", "old_text": "alpha", "new_text": "ALPHA"}),
    );
    std::fs::remove_file(fx.path("a.txt")).unwrap();
    std::os::unix::fs::symlink("b.txt", fx.path("a.txt")).unwrap();

    let error = fx.store.apply(&id, None, "swap", None).unwrap_err();
    assert!(matches!(error, StoreError::Stale { .. }), "{error}");
    assert_eq!(fx.bytes("b.txt"), b"beta\n");
    assert!(fx.is_pending(&id));
}

#[test]
fn a_file_replaced_by_a_directory_makes_the_preview_stale_and_writes_nothing() {
    let (fx, id) = staged_uppercase(
        &[("a.txt", "alpha\n"), ("b.txt", "beta\n")],
        &[("c.txt", "new\n")],
    );
    std::fs::remove_file(fx.path("b.txt")).unwrap();
    std::fs::create_dir(fx.path("b.txt")).unwrap();
    std::fs::create_dir(fx.path("c.txt")).unwrap();

    let error = fx.store.apply(&id, None, "dir", None).unwrap_err();
    match &error {
        StoreError::Stale { files } => assert_eq!(files, &["b.txt", "c.txt"]),
        other => panic!("expected a stale preview, got {other}"),
    }
    assert_eq!(fx.bytes("a.txt"), b"alpha\n");
    assert!(fx.path("b.txt").is_dir() && fx.path("c.txt").is_dir());
    assert!(fx.is_pending(&id));
    assert_eq!(fx.leftovers(), Vec::<String>::new());
}

/// Makes a file immutable (`chattr +i`) until dropped; even root cannot replace it.
struct Immutable(PathBuf);

impl Immutable {
    /// `None` when this file system or machine cannot do it.
    fn set(path: &Path) -> Option<Self> {
        let done = Command::new("chattr").arg("+i").arg(path).status();
        match done {
            Ok(status) if status.success() => Some(Self(path.to_owned())),
            Ok(_) | Err(_) => None,
        }
    }
}

impl Drop for Immutable {
    fn drop(&mut self) {
        let _ = Command::new("chattr").arg("-i").arg(&self.0).status();
    }
}

#[test]
fn permission_denied_on_one_file_rolls_back_the_files_already_written() {
    let (fx, id) = staged_uppercase(
        &[
            ("a.txt", "alpha\n"),
            ("b.txt", "beta\n"),
            ("c.txt", "gamma\n"),
        ],
        &[],
    );
    let before = fx.files();
    let Some(_locked) = Immutable::set(&fx.path("b.txt")) else {
        eprintln!("skipped: `chattr +i` is not available here");
        return;
    };

    // `a.txt` is renamed into place first; renaming onto the immutable `b.txt` fails.
    let error = fx.store.apply(&id, None, "locked", None).unwrap_err();
    assert!(matches!(error, StoreError::Io { .. }), "{error}");
    assert!(error.to_string().contains("b.txt"), "{error}");
    assert_eq!(fx.files(), before, "a.txt was not rolled back");
    assert!(fx.is_pending(&id));
    assert_eq!(fx.leftovers(), Vec::<String>::new());

    drop(_locked);
    fx.store.apply(&id, None, "unlocked", None).unwrap();
    assert_eq!(fx.bytes("b.txt"), b"BETA\n");
}

#[test]
fn a_new_file_whose_directory_became_a_file_fails_and_rolls_back_the_others() {
    let (fx, id) = staged_uppercase(&[("a.txt", "alpha\n")], &[("new/b.txt", "b\n")]);
    std::fs::write(fx.path("new"), "in the way\n").unwrap();
    let before = fx.files();

    let error = fx.store.apply(&id, None, "blocked", None).unwrap_err();
    assert!(error.to_string().contains("new"), "{error}");
    assert_eq!(fx.files(), before);
    assert!(fx.is_pending(&id));
    assert_eq!(fx.leftovers(), Vec::<String>::new());
}

#[test]
fn a_file_deleted_under_a_pending_preview_makes_it_stale_and_discard_still_works() {
    let (fx, id) = staged_uppercase(&[("a.txt", "alpha\n"), ("b.txt", "beta\n")], &[]);
    std::fs::remove_file(fx.path("a.txt")).unwrap();

    let error = fx.store.apply(&id, None, "deleted", None).unwrap_err();
    assert_eq!(
        error.to_string(),
        "Preview is stale: `a.txt` changed since the preview was staged; nothing was written. Discard this preview and stage the change again."
    );
    assert!(!fx.path("a.txt").exists(), "the deleted file came back");
    assert_eq!(fx.bytes("b.txt"), b"beta\n");
    assert!(fx.is_pending(&id));
    fx.store.discard(&id, "gone", None).unwrap();
    assert_eq!(fx.bytes("b.txt"), b"beta\n");
}

#[test]
fn a_file_created_where_a_preview_creates_one_makes_it_stale() {
    let fx = Fixture::new(&[]);
    let id = fx.call("write", json!({"path": "new.txt", "content": "mine\n"}));
    std::fs::write(fx.path("new.txt"), "theirs\n").unwrap();
    let error = fx.store.apply(&id, None, "raced", None).unwrap_err();
    assert!(matches!(error, StoreError::Stale { .. }), "{error}");
    assert_eq!(fx.bytes("new.txt"), b"theirs\n");
}

#[test]
fn very_long_lines_are_edited_and_applied_byte_for_byte() {
    // One 4 MiB line without a final newline, the token in its middle.
    let half = "x".repeat(2 << 20);
    let original = format!("{half}MIDDLE{half}");
    let fx = Fixture::new(&[("long.txt", original.as_bytes())]);
    let id = fx.call(
        "edit",
        json!({"path": "long.txt", "old_text": "MIDDLE", "new_text": "centre"}),
    );
    fx.store.apply(&id, None, "long", None).unwrap();
    assert_eq!(
        fx.bytes("long.txt"),
        format!("{half}centre{half}").into_bytes()
    );

    // A 200 000-call JavaScript line through ast_edit.
    let calls: Vec<String> = (0..20_000).map(|i| format!("foo({i})")).collect();
    let source = format!("const a = [{}];", calls.join(", "));
    std::fs::write(fx.path("long.js"), &source).unwrap();
    let id = fx.call(
        "ast_edit",
        json!({"ops": [{"pat": "foo($A)", "out": "bar($A)"}], "paths": ["long.js"]}),
    );
    fx.store.apply(&id, None, "long", None).unwrap();
    assert_eq!(
        fx.bytes("long.js"),
        source.replace("foo(", "bar(").into_bytes()
    );
}

/// Files with every line-ending and boundary oddity, each holding the token `foo(1)`.
const ODD_FILES: &[(&str, &str)] = &[
    ("crlf.js", "x = foo(1);\r\ny = 2;\r\n"),
    ("mixed.js", "a = 1;\nx = foo(1);\r\nb = 2;\rc = 3;\n"),
    ("bom_crlf.js", "\u{feff}x = foo(1);\r\n"),
    ("no_newline.js", "x = foo(1)"),
    ("only_crlf.js", "\r\nx = foo(1);\r\n\r\n"),
    ("trailing_cr.js", "x = foo(1);\r"),
];

#[test]
fn line_endings_boms_and_missing_final_newlines_survive_edit_and_ast_edit_byte_for_byte() {
    let files: Vec<(&str, &[u8])> = ODD_FILES
        .iter()
        .map(|(path, text)| (*path, text.as_bytes()))
        .collect();
    for tool in ["edit", "ast_edit"] {
        let fx = Fixture::new(&files);
        for (path, _) in ODD_FILES {
            let args = match tool {
                "edit" => json!({"path": path, "old_text": "foo(1)", "new_text": "bar(1)"}),
                _ => json!({"ops": [{"pat": "foo($A)", "out": "bar($A)"}], "paths": [path]}),
            };
            let id = fx.call(tool, args);
            fx.store.apply(&id, None, "odd", None).unwrap();
        }
        for (path, text) in ODD_FILES {
            assert_eq!(
                String::from_utf8(fx.bytes(path)).unwrap(),
                text.replace("foo(1)", "bar(1)"),
                "{tool} on {path}"
            );
        }
    }
}

#[test]
fn write_keeps_exact_bytes_for_empty_files_boms_and_crlf() {
    let fx = Fixture::new(&[("empty.txt", b""), ("full.txt", b"full\r\n")]);
    let cases = [
        ("empty.txt", "now\r\nfull"),
        ("full.txt", ""),
        ("bom.txt", "\u{feff}\r\n\r"),
        ("new/empty.txt", ""),
    ];
    for (path, content) in cases {
        let id = fx.call("write", json!({"path": path, "content": content}));
        fx.store.apply(&id, None, "write", None).unwrap();
        assert_eq!(fx.bytes(path), content.as_bytes(), "{path}");
    }
    // An empty file cannot match an edit; nothing is staged.
    let error = fx
        .tools()
        .call(
            "edit",
            &json!({"path": "full.txt", "old_text": "x", "new_text": "y"}),
        )
        .unwrap_err();
    assert!(matches!(error, EditError::EditNotFound { .. }), "{error}");
    assert!(fx.store.pending().unwrap().is_empty());
}

#[test]
fn a_file_named_twice_through_an_inner_symlink_is_applied_once() {
    // `ast_edit` over a file and a symlink to it previews both names; they are one file.
    let fx = Fixture::new(&[("a.js", b"x = foo(1);\n")]);
    std::os::unix::fs::symlink("a.js", fx.path("alias.js")).unwrap();
    let id = fx.call(
        "ast_edit",
        json!({"ops": [{"pat": "foo($A)", "out": "bar($A)"}], "paths": ["a.js", "alias.js"]}),
    );
    fx.store.apply(&id, None, "twice", None).unwrap();
    assert_eq!(fx.bytes("a.js"), b"x = bar(1);\n");
    assert_eq!(
        std::fs::read_link(fx.path("alias.js")).unwrap(),
        Path::new("a.js")
    );
    assert_eq!(fx.leftovers(), Vec::<String>::new());
    fx.store.undo(&id).unwrap();
    assert_eq!(fx.bytes("a.js"), b"x = foo(1);\n");
}

#[test]
fn a_file_name_at_the_length_limit_can_be_written_and_applied() {
    // 255 bytes is the longest name most file systems allow; the temp file beside it must fit.
    let fx = Fixture::new(&[]);
    let name = format!("{}.txt", "n".repeat(251));
    let id = fx.call("write", json!({"path": name, "content": "long\n"}));
    fx.store.apply(&id, None, "long name", None).unwrap();
    assert_eq!(fx.bytes(&name), b"long\n");
    let id = fx.call("write", json!({"path": name, "content": "longer\n"}));
    fx.store.apply(&id, None, "long name", None).unwrap();
    assert_eq!(fx.bytes(&name), b"longer\n");
    assert_eq!(fx.leftovers(), Vec::<String>::new());
}

#[test]
fn a_dangling_symlink_to_outside_is_refused_and_one_inside_is_written_through() {
    // Before the fix, the outside link counted as inside (its target did not exist), and
    // apply replaced the link by a file, which undo then removed: the link was lost.
    let fx = Fixture::new(&[]);
    std::os::unix::fs::symlink(fx.outside.join("new.txt"), fx.path("out.txt")).unwrap();
    let error = fx
        .tools()
        .call("write", &json!({"path": "out.txt", "content": "x\n"}))
        .unwrap_err();
    assert!(
        matches!(error, EditError::Store(StoreError::SymlinkEscape { .. })),
        "{error}"
    );
    assert!(!fx.outside.join("new.txt").exists());

    std::os::unix::fs::symlink("src/lib.rs", fx.path("alias.rs")).unwrap();
    let id = fx.call(
        "write",
        json!({"path": "alias.rs", "content": "fn f() {}\n"}),
    );
    fx.store.apply(&id, None, "through", None).unwrap();
    assert_eq!(fx.bytes("src/lib.rs"), b"fn f() {}\n");
    assert_eq!(
        std::fs::read_link(fx.path("alias.rs")).unwrap(),
        Path::new("src/lib.rs")
    );
    fx.store.undo(&id).unwrap();
    assert!(!fx.path("src/lib.rs").exists());
    assert_eq!(
        std::fs::read_link(fx.path("alias.rs")).unwrap(),
        Path::new("src/lib.rs")
    );
}
