//! `kill -9` during a real apply, at many instants: after recovery every file is either
//! original or new — never a mix — and the pending action is consumed exactly when the change
//! landed.

use super::common::{Workspace, kill_at_spread_instants};

const FILES: usize = 300;

fn original(index: usize) -> String {
    format!("fn f{index}() {{\n    let v = foo({index});\n}}\n")
}

fn rewritten(index: usize) -> String {
    format!("fn f{index}() {{\n    let v = bar({index});\n}}\n")
}

const ROUNDS: u32 = 24;

/// A workspace with a staged preview rewriting every file.
fn staged() -> Workspace {
    let workspace = Workspace::new();
    for index in 0..FILES {
        workspace.write(&format!("src/f{index}.rs"), original(index).as_bytes());
    }
    workspace.run_ok(&["ast-edit", "-p", "foo($A)", "-r", "bar($A)", "src"]);
    workspace
}

#[test]
fn an_apply_killed_at_any_instant_lands_whole_or_not_at_all() {
    // Kills are spread from the start of a whole apply to past its end.
    let mut landed = 0;
    let mut rolled_back = 0;
    let (full, _) = kill_at_spread_instants(
        staged,
        &["apply", "--reason", "Crash test."],
        ROUNDS,
        FILES,
        |round, workspace, pending, contents| {
            let all_new = contents
                .iter()
                .enumerate()
                .all(|(index, text)| *text == rewritten(index));
            let all_old = contents
                .iter()
                .enumerate()
                .all(|(index, text)| *text == original(index));
            assert!(
                all_new || all_old,
                "round {round}: a mix of old and new files after recovery"
            );
            if all_new {
                landed += 1;
                assert!(
                    pending.is_empty(),
                    "round {round}: landed but still pending"
                );
            } else {
                rolled_back += 1;
                assert_eq!(
                    pending.len(),
                    1,
                    "round {round}: rolled back but not pending"
                );
                // The preview is intact: applying it now works.
                workspace.run_ok(&["apply", "--reason", "After the crash."]);
                assert_eq!(workspace.read("src/f0.rs"), rewritten(0));
            }
        },
    );
    eprintln!("apply takes {full:?}; {landed} rounds landed, {rolled_back} rolled back");
}
