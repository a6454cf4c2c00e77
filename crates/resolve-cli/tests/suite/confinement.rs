//! Paths outside the workspace, and `.resolve/`, are refused with a clear error.

use super::common::Workspace;
use resolve_test_support::text::assert_contains;

#[test]
fn paths_leaving_the_workspace_are_refused_and_nothing_is_staged() {
    let workspace = Workspace::with(&[("a.txt", "a\n")]);
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "secret\n").unwrap();
    std::os::unix::fs::symlink(outside.path(), workspace.path("link")).unwrap();
    let outside_file = outside.path().join("secret.txt");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["edit", "../escape.txt", "--old", "a", "--new", "b"],
            "outside the workspace",
        ),
        (
            vec!["write", "../escape.txt", "--content", "x"],
            "outside the workspace",
        ),
        (
            vec![
                "edit",
                outside_file.to_str().unwrap(),
                "--old",
                "secret",
                "--new",
                "b",
            ],
            "outside the workspace",
        ),
        (
            vec!["edit", "link/secret.txt", "--old", "secret", "--new", "b"],
            "symlink",
        ),
        (
            vec!["write", ".resolve/lock", "--content", "x"],
            ".resolve/",
        ),
        (
            vec!["ast-edit", "-p", "a", "-r", "b", "--lang", "rust", "../"],
            "outside the workspace",
        ),
    ];
    for (args, expected) in cases {
        let run = workspace.run_fails(&args);
        assert!(run.stderr.contains(expected), "{args:?}: {}", run.stderr);
    }
    assert!(workspace.pending_ids().is_empty());
    assert_eq!(std::fs::read_to_string(outside_file).unwrap(), "secret\n");
}

#[test]
fn the_lock_makes_a_second_process_wait_then_fail_naming_it() {
    let workspace = Workspace::with(&[("a.txt", "a\n")]);
    workspace.run_ok(&["write", "b.txt", "--content", "b\n"]);
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(workspace.path(".resolve/lock"))
        .unwrap();
    lock.lock().unwrap();
    let started = std::time::Instant::now();
    // A writer waits (reads do not: issue #32, `person::reads_do_not_wait_…`).
    let run = workspace.run_fails(&["discard", "--reason", "r"]);
    assert!(
        started.elapsed() >= std::time::Duration::from_secs(9),
        "waited {:?}",
        started.elapsed()
    );
    assert_contains(&run.stderr, ".resolve/lock");
    drop(lock);
    workspace.run_ok(&["pending"]);
}

#[test]
fn an_eighty_link_chain_leading_outside_is_refused_and_the_file_there_keeps_its_bytes() {
    let workspace = Workspace::with(&[("a.txt", "a\n")]);
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim.txt");
    std::fs::write(&victim, "mine\n").unwrap();
    // l0 -> l1 -> … -> l79 -> victim: past the kernel's 40 hops, not "inside" by default.
    for hop in 0..80 {
        let target = if hop == 79 {
            victim.clone()
        } else {
            workspace.path(&format!("l{}", hop + 1))
        };
        std::os::unix::fs::symlink(target, workspace.path(&format!("l{hop}"))).unwrap();
    }
    for (args, expected) in [
        (
            &["write", "l0", "--content", "pwned\n"][..],
            "too many symlinks",
        ),
        (
            &["edit", "l0", "--old", "mine", "--new", "pwned"][..],
            "too many symlinks",
        ),
        // Forty hops from the end the kernel follows the chain, and it leads outside.
        (
            &["write", "l40", "--content", "pwned\n"][..],
            "outside the workspace root",
        ),
    ] {
        let run = workspace.run(args).expect_code(1);
        assert!(run.stderr.contains(expected), "{args:?}: {}", run.stderr);
    }
    assert!(workspace.pending_ids().is_empty(), "nothing was staged");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "mine\n");
}
