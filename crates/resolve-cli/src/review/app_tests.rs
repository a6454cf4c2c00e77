use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use pretty_assertions::assert_eq;

use super::*;
use crate::review::sample::two_actions;

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn press(app: &mut App, keys: &str) -> Effect {
    let mut effect = Effect::None;
    for c in keys.chars() {
        effect = app.handle_key(key(KeyCode::Char(c)));
    }
    effect
}

/// Press each of `steps` in turn and check the hunk under the cursor after it against
/// `addresses`.
fn walk(app: &mut App, steps: &[&str], addresses: &[&str]) {
    assert_eq!(steps.len(), addresses.len());
    for (keys, address) in steps.iter().zip(addresses) {
        press(app, keys);
        assert_eq!(
            app.current_hunk().unwrap().address,
            *address,
            "after {keys:?}"
        );
    }
}

/// Press Enter.
fn enter(app: &mut App) -> Effect {
    app.handle_key(key(KeyCode::Enter))
}

/// A rejection with `reason`.
fn rejected(reason: &str) -> Decision {
    Decision::Rejected {
        reason: Some(reason.to_owned()),
    }
}

/// The apply of the head action of [`two_actions`] with `rejected` and `reason`, no comments.
fn apply_head(rejected: Vec<Rejection>, reason: &str) -> Effect {
    Effect::Apply(ApplyRequest {
        id: "pending-action:ast_edit:3".to_owned(),
        version: "v3".to_owned(),
        rejected,
        reason: reason.to_owned(),
        comments: Vec::new(),
    })
}

/// The review after `keys`, once the head action is resolved elsewhere and the actions are
/// reloaded: the cursor is on the first hunk of the action now first.
fn head_resolved_after(keys: &str) -> App {
    let mut app = App::new(two_actions());
    press(&mut app, keys);
    let mut reloaded = two_actions();
    reloaded.remove(0);
    app.replace_actions(reloaded);
    assert_eq!(cursor(&app), (0, 0, 0));
    assert_eq!(app.current_action().unwrap().id, "pending-action:write:2");
    app
}

fn cursor(app: &App) -> (usize, usize, usize) {
    (app.action, app.file, app.hunk)
}

fn decision(app: &App, file: usize, hunk: usize) -> Decision {
    app.actions[app.action].files[file].hunks[hunk]
        .decision
        .clone()
}

#[test]
fn the_review_opens_on_the_first_hunk_of_the_first_file_of_the_head() {
    let app = App::new(two_actions());
    assert_eq!(cursor(&app), (0, 0, 0));
    assert_eq!(app.current_hunk().unwrap().address, "src/lib.rs#1");
}

#[test]
fn j_and_k_walk_hunks_across_files_and_stop_at_the_ends() {
    let mut app = App::new(two_actions());
    walk(
        &mut app,
        &["j", "j", "j", "k"],
        &[
            "src/lib.rs#2",
            "src/main.rs#1",
            "src/main.rs#1",
            "src/lib.rs#2",
        ],
    );
    app.handle_key(key(KeyCode::Up));
    app.handle_key(key(KeyCode::Up));
    assert_eq!(app.current_hunk().unwrap().address, "src/lib.rs#1");
    app.handle_key(key(KeyCode::Down));
    assert_eq!(app.current_hunk().unwrap().address, "src/lib.rs#2");
}

#[test]
fn shift_j_and_shift_k_move_to_the_first_hunk_of_the_next_and_previous_file() {
    let mut app = App::new(two_actions());
    walk(
        &mut app,
        &["jJ", "J", "K"],
        &["src/main.rs#1", "src/main.rs#1", "src/lib.rs#1"],
    );
}

#[test]
fn n_and_p_move_between_pending_actions() {
    let mut app = App::new(two_actions());
    press(&mut app, "jn");
    assert_eq!(cursor(&app), (1, 0, 0));
    assert_eq!(app.current_hunk().unwrap().address, "notes.txt#1");
    press(&mut app, "n");
    assert_eq!(cursor(&app), (1, 0, 0));
    press(&mut app, "p");
    assert_eq!(cursor(&app), (0, 0, 0));
}

#[test]
fn space_toggles_the_hunk_under_the_cursor_and_leaves_the_cursor_there() {
    let mut app = App::new(two_actions());
    press(&mut app, "j ");
    assert_eq!(cursor(&app), (0, 0, 1));
    assert_eq!(decision(&app, 0, 1), Decision::Rejected { reason: None });
    assert_eq!(decision(&app, 0, 0), Decision::Kept);
    press(&mut app, " ");
    assert_eq!(decision(&app, 0, 1), Decision::Kept);
}

#[test]
fn r_rejects_with_the_reason_typed_on_the_prompt_and_leaves_the_cursor_there() {
    let mut app = App::new(two_actions());
    press(&mut app, "jr");
    assert!(matches!(app.mode, Mode::Prompt(_)));
    press(&mut app, "keep foo");
    app.handle_key(key(KeyCode::Backspace));
    press(&mut app, "o");
    enter(&mut app);
    assert_eq!(app.mode, Mode::Browse);
    assert_eq!(cursor(&app), (0, 0, 1));
    assert_eq!(decision(&app, 0, 1), rejected("keep foo"));
}

/// Issue #31 §2: a hunk rejected with `space` gets its reason later with `r`, and `r` on a
/// hunk rejected with a reason opens the prompt on that reason.
#[test]
fn r_on_a_hunk_rejected_with_space_gives_it_a_reason_later() {
    let mut app = App::new(two_actions());
    press(&mut app, "j ");
    assert_eq!(decision(&app, 0, 1), Decision::Rejected { reason: None });
    press(&mut app, "r");
    press(&mut app, "a proper name");
    enter(&mut app);
    assert_eq!(decision(&app, 0, 1), rejected("a proper name"));
    press(&mut app, "r");
    let Mode::Prompt(prompt) = &app.mode else {
        panic!("the reason prompt is open");
    };
    assert_eq!(prompt.input, "a proper name");
    press(&mut app, "!");
    enter(&mut app);
    assert_eq!(decision(&app, 0, 1), rejected("a proper name!"));
}

#[test]
fn escape_cancels_the_reject_prompt_without_rejecting() {
    let mut app = App::new(two_actions());
    press(&mut app, "rnot this");
    app.handle_key(key(KeyCode::Esc));
    assert_eq!(app.mode, Mode::Browse);
    assert_eq!(decision(&app, 0, 0), Decision::Kept);
}

#[test]
fn shift_r_and_shift_a_reject_and_keep_every_hunk_of_the_current_file_only() {
    let mut app = App::new(two_actions());
    press(&mut app, "R");
    assert!(decision(&app, 0, 0).is_rejected() && decision(&app, 0, 1).is_rejected());
    assert_eq!(decision(&app, 1, 0), Decision::Kept);
    press(&mut app, "A");
    assert_eq!(decision(&app, 0, 0), Decision::Kept);
    assert_eq!(decision(&app, 0, 1), Decision::Kept);
}

#[test]
fn a_applies_everything_when_nothing_is_rejected() {
    let mut app = App::new(two_actions());
    press(&mut app, "a");
    let effect = press(&mut app, "looks right");
    assert_eq!(effect, Effect::None);
    let effect = enter(&mut app);
    assert_eq!(effect, apply_head(vec![], "looks right"));
}

#[test]
fn a_applies_all_but_the_rejected_hunks_and_names_each_rejection_with_its_reason() {
    let mut app = App::new(two_actions());
    press(&mut app, "jrcallers use foo");
    enter(&mut app);
    press(&mut app, "aonly the library");
    let effect = enter(&mut app);
    let rejected = vec![Rejection {
        address: "src/lib.rs#2".to_owned(),
        reason: Some("callers use foo".to_owned()),
    }];
    assert_eq!(effect, apply_head(rejected, "only the library"));
}

#[test]
fn an_apply_or_discard_needs_a_reason_and_the_prompt_stays_open_without_one() {
    let mut app = App::new(two_actions());
    press(&mut app, "a");
    assert_eq!(enter(&mut app), Effect::None);
    assert!(matches!(app.mode, Mode::Prompt(_)));
    assert_eq!(app.status.as_deref(), Some("Give a reason (Esc cancels)."));
}

#[test]
fn apply_is_refused_when_every_hunk_is_rejected() {
    let mut app = App::new(two_actions());
    press(&mut app, "RJRa");
    assert_eq!(app.mode, Mode::Browse);
    assert_eq!(
        app.status.as_deref(),
        Some("Every hunk is rejected: press d to discard instead.")
    );
}

#[test]
fn d_discards_the_action_shown_with_the_reason_typed() {
    let mut app = App::new(two_actions());
    press(&mut app, "ndnot now");
    let effect = enter(&mut app);
    assert_eq!(
        effect,
        Effect::Discard {
            id: "pending-action:write:2".to_owned(),
            reason: "not now".to_owned()
        }
    );
}

#[test]
fn e_amends_the_file_under_the_cursor() {
    let mut app = App::new(two_actions());
    assert_eq!(
        press(&mut app, "Je"),
        Effect::Amend {
            id: "pending-action:ast_edit:3".to_owned(),
            path: "src/main.rs".to_owned()
        }
    );
}

#[test]
fn q_and_ctrl_c_quit_even_from_a_prompt() {
    let mut app = App::new(two_actions());
    assert_eq!(press(&mut app, "q"), Effect::Quit);
    press(&mut app, "r");
    assert_eq!(
        app.handle_key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)),
        Effect::Quit
    );
}

#[test]
fn question_mark_opens_help_and_any_key_closes_it_without_acting() {
    let mut app = App::new(two_actions());
    press(&mut app, "?");
    assert_eq!(app.mode, Mode::Help);
    assert_eq!(press(&mut app, "q"), Effect::None);
    assert_eq!(app.mode, Mode::Browse);
}

#[test]
fn reloaded_actions_keep_decisions_on_unchanged_hunks_and_the_cursor_on_the_same_action() {
    let app = head_resolved_after("n ");
    assert!(decision(&app, 0, 0).is_rejected());
}

#[test]
fn when_the_action_shown_is_resolved_the_review_moves_on_to_the_one_in_its_place() {
    let mut app = head_resolved_after("j");
    app.replace_actions(Vec::new());
    assert!(app.current_action().is_none());
}

#[test]
fn q_quits_at_once_with_or_without_decisions() {
    // The marks are the session's to keep (as the action's review in progress), so quitting
    // loses nothing and asks nothing.
    let mut app = App::new(two_actions());
    assert_eq!(press(&mut app, "q"), Effect::Quit);
    let mut app = App::new(two_actions());
    press(&mut app, " ");
    assert_eq!(press(&mut app, "q"), Effect::Quit);
    assert!(decision(&app, 0, 0).is_rejected());
}

#[test]
fn c_and_p_settle_a_conflicting_file_and_only_that() {
    let mut actions = two_actions();
    let mut app = App::new(actions.clone());
    assert_eq!(
        press(&mut app, "P"),
        Effect::None,
        "no conflict under the cursor"
    );
    assert!(app.status.is_some());
    actions[0].files[0].stale = true;
    actions[0].files[0].hunks.clear();
    actions[0].files[0].conflicts = vec![crate::review::model::ConflictView {
        current_line: 1,
        current: "a\n".to_owned(),
        preview_line: 1,
        preview: "b\n".to_owned(),
        base: "c\n".to_owned(),
    }];
    let mut app = App::new(actions);
    let id = app.actions[0].id.clone();
    assert_eq!(
        press(&mut app, "P"),
        Effect::Settle {
            id: id.clone(),
            path: "src/lib.rs".to_owned(),
            side: resolve_edit::MergeSide::Preview
        }
    );
    assert_eq!(
        press(&mut app, "C"),
        Effect::Settle {
            id,
            path: "src/lib.rs".to_owned(),
            side: resolve_edit::MergeSide::Current
        }
    );
}
