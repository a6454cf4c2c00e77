//! The review computes a file's hunks only when it is shown: which files it asks for, and how
//! a computed file takes its place (the cursor, decisions made before a reload).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use pretty_assertions::assert_eq;

use super::*;
use crate::review::sample::{file, hunk, two_actions};

/// The sample actions with every file of the head not computed yet.
fn unloaded() -> (App, Vec<FileView>) {
    let mut actions = two_actions();
    let computed = actions[0].files.clone();
    for file in &mut actions[0].files {
        *file = FileView::unloaded(file.path.clone(), file.kind);
    }
    (App::new(actions), computed)
}

fn press(app: &mut App, keys: &str) {
    for c in keys.chars() {
        app.handle_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    }
}

#[test]
fn only_the_files_the_list_shows_are_asked_for_and_all_of_them_at_the_apply_prompt() {
    let files: Vec<FileView> = (0..12)
        .map(|n| FileView::unloaded(format!("f{n:02}.txt"), FileKind::Update))
        .collect();
    let mut actions = two_actions();
    actions[0].files = files;
    let mut app = App::new(actions);
    assert_eq!(app.files_to_load(), vec![0, 1, 2, 3, 4]);
    app.file = 9;
    assert_eq!(app.files_to_load(), vec![5, 6, 7, 8, 9]);
    press(&mut app, "a");
    assert_eq!(app.files_to_load(), (0..12).collect::<Vec<_>>());
}

#[test]
fn a_computed_file_takes_its_place_and_moving_up_into_one_lands_on_its_last_hunk() {
    let (mut app, computed) = unloaded();
    assert_eq!(app.current_hunk(), None);
    app.fill_file(1, computed[1].clone());
    // k from the first stop of src/main.rs into src/lib.rs, which is not computed yet.
    app.file = 1;
    press(&mut app, "k");
    assert_eq!(app.file, 0);
    app.fill_file(0, computed[0].clone());
    assert_eq!(app.current_hunk().unwrap().address, "src/lib.rs#2");
    assert!(app.files_to_load().is_empty());
}

#[test]
fn decisions_carry_over_a_reload_to_files_computed_after_it() {
    let (mut app, computed) = unloaded();
    app.fill_file(0, computed[0].clone());
    press(&mut app, "j ");
    assert!(app.current_hunk().unwrap().decision.is_rejected());
    // The same version reloads not computed: the computed file is kept as it is.
    let (same, _) = unloaded();
    app.replace_actions(same.actions.clone());
    assert!(app.actions[0].files[0].loaded);
    assert_eq!(app.decisions(), 1);
    // Another version (an amendment of another file): the decision waits for the file.
    let mut amended = same.actions;
    amended[0].version = "v2".to_owned();
    app.replace_actions(amended);
    assert!(!app.actions[0].files[0].loaded);
    app.fill_file(0, computed[0].clone());
    assert!(app.actions[0].files[0].hunks[1].decision.is_rejected());
    assert!(!app.actions[0].files[0].hunks[0].decision.is_rejected());
    // A hunk that changed does not inherit it.
    let changed = file(
        "src/lib.rs",
        FileKind::Update,
        vec![hunk("src/lib.rs", 2, "@@ -9 +9 @@", &["-x", "+y"])],
    );
    app.fill_file(0, changed);
    assert_eq!(app.decisions(), 0);
}
