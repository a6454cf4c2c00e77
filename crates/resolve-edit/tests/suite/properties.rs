//! Properties of staging and resolving, over random file sets (any line endings, BOMs, empty
//! files, non-ASCII text, nested directories) and random edit sets:
//!
//! - preview → apply writes exactly the previewed bytes and touches nothing else;
//! - preview → discard leaves every byte untouched;
//! - apply → undo restores every original byte;
//!
//! both for multi-file change sets (create, update and delete together) staged directly and
//! for chains of `edit`/`write` calls through the model-facing `FileTools::call`.

#![expect(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] functions fail the test by panicking"
)]

use std::collections::BTreeMap;
use std::path::Path;

use proptest::prelude::*;
use resolve_edit::{
    ChangeSet, FileChange, FileTools, NewAction, Origin, STATE_DIR, Store, StoredAction,
    content_hash,
};
use serde_json::{Value, json};

use resolve_test_support::TestDir;

use super::common::store_with_files;

/// Files by relative path, with their bytes.
type Tree = BTreeMap<String, Vec<u8>>;

/// Paths the file sets draw from (nested, with spaces and non-ASCII names).
const PATHS: &[&str] = &[
    "a.txt",
    "b.rs",
    "src/c.py",
    "src/deep/d.md",
    "e f.txt",
    "ü/ñ.txt",
];

/// Paths for files that do not exist yet (one needs new directories).
const NEW_PATHS: &[&str] = &["new.txt", "src/new.rs", "fresh/dir/n.txt"];

fn line_ending() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["\n", "\r\n", "\r", ""])
}

/// Text with mixed line endings, maybe a BOM, maybe empty, maybe no final newline.
fn text() -> impl Strategy<Value = String> {
    (
        any::<bool>(),
        prop::collection::vec(("[a-zé€𝄞 \t(){};]{0,12}", line_ending()), 0..7),
    )
        .prop_map(|(bom, lines)| {
            let mut text = if bom {
                "\u{feff}".to_owned()
            } else {
                String::new()
            };
            for (line, ending) in lines {
                text.push_str(&line);
                text.push_str(ending);
            }
            text
        })
}

fn file_set() -> impl Strategy<Value = BTreeMap<String, String>> {
    prop::collection::btree_map(
        prop::sample::select(PATHS.to_vec()).prop_map(str::to_owned),
        text(),
        1..PATHS.len(),
    )
}

/// What happens to one file of a multi-file change set.
#[derive(Debug, Clone)]
enum Plan {
    Update(String),
    Delete,
    Create(&'static str, String),
}

fn plans() -> impl Strategy<Value = Vec<(usize, Plan)>> {
    let plan = prop_oneof![
        4 => text().prop_map(Plan::Update),
        1 => Just(Plan::Delete),
        2 => (prop::sample::select(NEW_PATHS.to_vec()), text())
            .prop_map(|(path, content)| Plan::Create(path, content)),
    ];
    prop::collection::vec((any::<usize>(), plan), 1..5)
}

/// Every file under `root` except the state directory, with its bytes.
fn files(root: &Path) -> Tree {
    fn walk(dir: &Path, prefix: &str, tree: &mut Tree) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let name = entry.file_name().to_string_lossy().into_owned();
            if prefix.is_empty() && name == STATE_DIR {
                continue;
            }
            let relative = if prefix.is_empty() {
                name
            } else {
                format!("{prefix}/{name}")
            };
            if entry.file_type().unwrap().is_dir() {
                walk(&entry.path(), &relative, tree);
            } else {
                tree.insert(relative, std::fs::read(entry.path()).unwrap());
            }
        }
    }
    let mut tree = Tree::new();
    walk(root, "", &mut tree);
    tree
}

/// The change set of `plans` over `files`: base hashes of the current contents.
fn change_set(files: &BTreeMap<String, String>, plans: &[(usize, Plan)]) -> ChangeSet {
    let existing: Vec<(&String, &String)> = files.iter().collect();
    let mut set = ChangeSet::new();
    for (index, plan) in plans {
        let (path, old) = existing[index % existing.len()];
        match plan {
            Plan::Update(content) => set.insert(
                path.clone(),
                FileChange::update(content_hash(old.as_bytes()), content.clone().into(), 1),
            ),
            Plan::Delete => set.insert(
                path.clone(),
                FileChange::Delete {
                    base_hash: content_hash(old.as_bytes()),
                },
            ),
            Plan::Create(path, content) => set.insert(
                *path,
                FileChange::Create {
                    content: content.clone().into(),
                },
            ),
        }
    }
    set
}

/// `before` with `set` applied.
fn expected_after(store: &Store, before: &Tree, set: &ChangeSet) -> Tree {
    let mut after = before.clone();
    for (path, change) in set.files() {
        match change.new_content() {
            Some(content) => after.insert(
                path.to_owned(),
                store.blobs().read(content).unwrap().into_owned(),
            ),
            None => after.remove(path),
        };
    }
    after
}

/// A workspace holding `files` and a store over it, with the change set `plans` make staged.
struct Staged {
    dir: TestDir,
    store: Store,
    /// The workspace's files before staging.
    before: Tree,
    set: ChangeSet,
    /// The pending id.
    id: String,
}

fn stage_plans(files: &BTreeMap<String, String>, plans: &[(usize, Plan)]) -> Staged {
    let (dir, store) = store_with_files(files);
    let before = self::files(dir.path());
    let set = change_set(files, plans);
    let action = NewAction {
        origin: Origin::Agent,
        source_tool: "ast_edit".into(),
        label: "prop".into(),
        preview_text: "preview".into(),
        details: Value::Null,
    };
    let id = store.stage(action, set.clone()).unwrap().id;
    Staged {
        dir,
        store,
        before,
        set,
        id,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn preview_then_apply_writes_exactly_the_previewed_bytes_and_nothing_else(
        files in file_set(),
        plans in plans(),
    ) {
        let Staged { dir, store, before, set, id } = stage_plans(&files, &plans);
        prop_assert_eq!(&self::files(dir.path()), &before, "staging wrote a file");
        let outcome = store.apply(&id, None, "prop", None).unwrap();
        prop_assert_eq!(outcome.applied_files, set.paths());
        prop_assert_eq!(self::files(dir.path()), expected_after(&store, &before, &set));
        prop_assert!(store.pending().unwrap().is_empty());
    }

    #[test]
    fn preview_then_discard_leaves_every_byte_untouched(
        files in file_set(),
        plans in plans(),
    ) {
        let Staged { dir, store, before, id, .. } = stage_plans(&files, &plans);
        store.discard(&id, "prop", None).unwrap();
        prop_assert_eq!(self::files(dir.path()), before);
        let discarded = matches!(store.get(&id).unwrap(), StoredAction::Resolved(_));
        prop_assert!(discarded);
    }

    #[test]
    fn apply_then_undo_restores_the_original_bytes(
        files in file_set(),
        plans in plans(),
    ) {
        let Staged { dir, store, before, id, .. } = stage_plans(&files, &plans);
        store.apply(&id, None, "prop", None).unwrap();
        store.undo(&id).unwrap();
        prop_assert_eq!(self::files(dir.path()), before);
    }

    #[test]
    fn edit_and_write_calls_apply_exactly_their_previews_and_undo_back_to_the_start(
        files in file_set(),
        calls in prop::collection::vec((any::<bool>(), any::<usize>(), any::<usize>(), any::<usize>(), text(), any::<bool>()), 1..6),
    ) {
        let (dir, store) = store_with_files(&files);
        let tools = FileTools::new(store.clone(), Origin::Agent);
        let start = self::files(dir.path());
        let mut applied = Vec::new();
        for (is_edit, pick, from, span, new_text, discard) in calls {
            let before = self::files(dir.path());
            let args = if is_edit {
                let Some(args) = edit_args(&before, pick, from, span, &new_text) else { continue };
                args
            } else {
                let paths: Vec<&str> = PATHS.iter().chain(NEW_PATHS).copied().collect();
                json!({"path": paths[pick % paths.len()], "content": new_text})
            };
            let name = if is_edit { "edit" } else { "write" };
            let Ok(result) = tools.call(name, &args) else { continue };
            prop_assert_eq!(&self::files(dir.path()), &before, "a producer wrote a file");
            let id = result.details.as_ref().unwrap()["pendingId"].as_str().unwrap().to_owned();
            let StoredAction::Pending(record) = store.get(&id).unwrap() else {
                panic!("{id} is not pending after staging");
            };
            if discard {
                store.discard(&id, "prop", None).unwrap();
                prop_assert_eq!(&self::files(dir.path()), &before);
                continue;
            }
            store.apply(&id, None, "prop", None).unwrap();
            prop_assert_eq!(self::files(dir.path()), expected_after(&store, &before, &record.change_set));
            applied.push(id);
        }
        for id in applied.iter().rev() {
            store.undo(id).unwrap();
        }
        prop_assert_eq!(self::files(dir.path()), start);
    }
}

/// `edit` arguments replacing a span of an existing text file (at character boundaries).
fn edit_args(tree: &Tree, pick: usize, from: usize, span: usize, new_text: &str) -> Option<Value> {
    let candidates: Vec<(&String, &str)> = tree
        .iter()
        .filter_map(|(path, bytes)| Some((path, std::str::from_utf8(bytes).ok()?)))
        .filter(|(_, text)| !text.is_empty())
        .collect();
    let (path, text) = candidates.get(pick % candidates.len().max(1))?;
    let boundaries: Vec<usize> = text
        .char_indices()
        .map(|(index, _)| index)
        .chain([text.len()])
        .collect();
    let start = boundaries[from % (boundaries.len() - 1)];
    let rest: Vec<usize> = boundaries
        .into_iter()
        .filter(|index| *index > start)
        .collect();
    let end = rest[span % rest.len()];
    Some(json!({
        "path": path,
        "old_text": &text[start..end],
        "new_text": new_text,
        "replace_all": true,
    }))
}
