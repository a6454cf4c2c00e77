//! Issue #31 §3 through the binary: `resolve gc [--dry-run]` removes history past the
//! retention and the stored contents only it needed, and never what a pending action or an
//! apply that can still be undone needs.

use resolve_test_support::text::assert_contains;
use serde_json::Value;

use super::common::Workspace;

fn edit(workspace: &Workspace, path: &str, old: &str, new: &str) {
    workspace.run_ok(&["edit", path, "--old", old, "--new", new]);
}

/// The ids `resolve log` lists, newest first.
fn log_ids(workspace: &Workspace) -> Vec<String> {
    let run = workspace.run_ok(&["log"]);
    run.stdout
        .lines()
        .filter_map(|line| line.split_whitespace().nth(2))
        .filter(|word| word.starts_with("pending-action:"))
        .map(str::to_owned)
        .collect()
}

fn gc_json(workspace: &Workspace, args: &[&str]) -> Value {
    let mut all = vec!["gc", "--json"];
    all.extend_from_slice(args);
    let run = workspace.run_ok(&all);
    serde_json::from_str(run.stdout.trim()).unwrap()
}

/// Set the time of the files `find` finds with `selection` (relative to the root) to `ago`.
fn backdate(workspace: &Workspace, selection: &str, ago: &str) {
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "find {selection} -type f -exec touch -d '{ago}' {{}} +"
        ))
        .current_dir(workspace.root())
        .status()
        .unwrap();
    assert!(status.success());
}

/// Age every stored content file past the grace a fresh one gets.
fn age_blobs(workspace: &Workspace) {
    backdate(workspace, ".resolve/blobs", "3 hours ago");
}

#[test]
fn gc_removes_old_history_but_keeps_what_pending_actions_and_undoable_applies_need() {
    let workspace = Workspace::with(&[("a.txt", "a\n"), ("b.txt", "b\n"), ("c.txt", "c\n")]);
    // 1: applied, then its file changed by hand: it can no longer be undone.
    edit(&workspace, "a.txt", "a", "A");
    workspace.run_ok(&["apply", "--reason", "First."]);
    workspace.write("a.txt", b"A by hand\n");
    // 2: discarded.
    edit(&workspace, "b.txt", "b", "B");
    workspace.run_ok(&["discard", "--reason", "Not now."]);
    // 3: applied and untouched since: it can still be undone.
    edit(&workspace, "c.txt", "c", "C");
    workspace.run_ok(&["apply", "--reason", "Third."]);
    // 4: pending.
    edit(&workspace, "b.txt", "b", "bee");
    age_blobs(&workspace);
    let before = log_ids(&workspace);
    assert_eq!(before.len(), 3);

    let dry = gc_json(
        &workspace,
        &["--dry-run", "--keep-days", "0", "--keep-entries", "0"],
    );
    assert_eq!(dry["dryRun"], true);
    assert_eq!(dry["historyEntries"], 2, "{dry}");
    assert_eq!(dry["keptUndoable"], 1, "{dry}");
    assert!(dry["bytes"].as_u64().unwrap() > 0, "{dry}");
    assert_eq!(log_ids(&workspace), before, "a dry run removes nothing");

    let done = gc_json(&workspace, &["--keep-days", "0", "--keep-entries", "0"]);
    assert_eq!(done["dryRun"], false);
    assert_eq!(done["historyEntries"], 2, "{done}");
    assert_eq!(done["blobs"], dry["blobs"], "{done}");
    assert_eq!(log_ids(&workspace), ["pending-action:edit:5"]);
    // Nothing left to remove.
    let again = gc_json(&workspace, &["--keep-days", "0", "--keep-entries", "0"]);
    assert_eq!(again["historyEntries"], 0, "{again}");
    assert_eq!(again["blobs"], 0, "{again}");

    // What is left still works: the undoable apply undoes, the pending action applies.
    workspace.run_ok(&["undo", "pending-action:edit:5"]);
    assert_eq!(workspace.read("c.txt"), "c\n");
    workspace.run_ok(&["apply", "--reason", "Fourth."]);
    assert_eq!(workspace.read("b.txt"), "bee\n");
}

#[test]
fn gc_keeps_the_newest_entries_and_the_recent_ones_by_default() {
    let workspace = Workspace::with(&[("a.txt", "a\n")]);
    edit(&workspace, "a.txt", "a", "A");
    workspace.run_ok(&["discard", "--reason", "No."]);
    let run = workspace.run_ok(&["gc"]);
    assert_eq!(
        run.stdout.trim(),
        "Removed 0 history entries, 0 reviewer notes and 0 stored content files, freeing 0 B."
    );
    assert_eq!(log_ids(&workspace).len(), 1);
    // The newest entry is kept whatever its age.
    let kept = gc_json(&workspace, &["--keep-days", "0", "--keep-entries", "1"]);
    assert_eq!(kept["historyEntries"], 0, "{kept}");
    assert_eq!(log_ids(&workspace).len(), 1);
}

#[test]
fn the_gc_table_of_the_config_sets_what_gc_and_the_daily_pass_keep() {
    let workspace = Workspace::with(&[("a.txt", "a\n"), ("b.txt", "b\n")]);
    workspace.write(
        ".resolve/config.toml",
        b"[gc]\nkeep_days = 0\nkeep_entries = 0\n",
    );
    edit(&workspace, "a.txt", "a", "A");
    workspace.run_ok(&["discard", "--reason", "No."]);
    // The daily pass (its last run made a day old) keeps what the table says; the default
    // would keep a fresh entry.
    assert_eq!(log_ids(&workspace), ["pending-action:edit:1"]);
    backdate(&workspace, ".resolve/history -name '.*'", "25 hours ago");
    assert_eq!(log_ids(&workspace), Vec::<String>::new());
    for (path, new) in [("a.txt", "A"), ("b.txt", "B")] {
        edit(&workspace, path, &path[..1], new);
        workspace.run_ok(&["discard", "--reason", "Not this either."]);
    }
    // `resolve gc` reads the table too; its arguments win over it.
    let configured = gc_json(&workspace, &["--dry-run"]);
    assert_eq!(configured["historyEntries"], 2, "{configured}");
    let argued = gc_json(&workspace, &["--dry-run", "--keep-entries", "1"]);
    assert_eq!(argued["historyEntries"], 1, "{argued}");
}

#[test]
fn gc_refuses_a_gc_table_it_cannot_read_and_removes_nothing() {
    let workspace = Workspace::with(&[("a.txt", "a\n")]);
    edit(&workspace, "a.txt", "a", "A");
    workspace.run_ok(&["discard", "--reason", "No."]);
    workspace.write(".resolve/config.toml", b"[gc]\nkeep_day = 0\n");
    let run = workspace.run_fails(&["gc", "--keep-entries", "0"]);
    assert_contains(&run.stderr, "config.toml");
    assert_contains(&run.stderr, "keep_day");
    std::fs::remove_file(workspace.root().join(".resolve/config.toml")).unwrap();
    assert_eq!(log_ids(&workspace).len(), 1);
}

#[test]
fn the_log_of_a_discard_whose_contents_gc_removed_still_reads() {
    let workspace = Workspace::with(&[("a.txt", "a\n")]);
    edit(&workspace, "a.txt", "a", "A");
    workspace.run_ok(&["discard", "--reason", "No."]);
    age_blobs(&workspace);
    gc_json(&workspace, &[]);
    let blobs = std::fs::read_dir(workspace.root().join(".resolve/blobs"))
        .unwrap()
        .count();
    for args in [
        &["log"][..],
        &["show", "pending-action:edit:1"][..],
        &["show", "pending-action:edit:1", "--json"][..],
    ] {
        let run = workspace.run(args).expect_code(0);
        assert_contains(&run.stdout, "pending-action:edit:1");
    }
    let run = workspace.run_ok(&["log", "--json"]);
    let log: Value = serde_json::from_str(run.stdout.trim()).unwrap();
    let entry = &log["history"][0];
    // The contents went; the preview it was staged with stays, and says so.
    assert_eq!(
        entry["contentsKept"], false,
        "{entry} ({blobs} blob files left)"
    );
    let preview = entry["preview"].as_str().unwrap();
    assert_contains(preview, "-a");
    assert_contains(preview, "+A");
}
