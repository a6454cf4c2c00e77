//! A commit per apply: `resolve apply --commit` and `commit = true` in the configuration make
//! each landed change one git commit holding exactly its files, while what the person staged
//! stays staged and out of it; outside git, or when a hook fails, the change lands anyway and
//! the output says why nothing was committed.

use resolve_test_support::process::output_ok;
use resolve_test_support::text::{assert_contains, assert_starts_with};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use resolve_test_support::{McpChild, Turn};

use super::common::{Run, Workspace, edit_and_apply_model, run_agent};

/// The identity every git run of these tests uses (the test's `HOME` has no git config).
const IDENTITY: [(&str, &str); 5] = [
    ("GIT_AUTHOR_NAME", "Tester"),
    ("GIT_AUTHOR_EMAIL", "tester@example.invalid"),
    ("GIT_COMMITTER_NAME", "Tester"),
    ("GIT_COMMITTER_EMAIL", "tester@example.invalid"),
    ("GIT_CONFIG_NOSYSTEM", "1"),
];

/// `git ARGS…` in `dir`, which must succeed; its standard output.
fn git(workspace: &Workspace, args: &[&str]) -> String {
    output_ok(
        Command::new("git")
            .current_dir(workspace.root())
            .env("HOME", workspace.home())
            .envs(IDENTITY)
            .args(["-c", "init.defaultBranch=main"])
            .args(args),
    )
}

/// A git repository holding `files`, committed once.
fn repository(files: &[(&str, &str)]) -> Workspace {
    let workspace = Workspace::with(files);
    git(&workspace, &["init", "-q"]);
    // Also for runs that do not carry the test identity (`run_agent`).
    git(&workspace, &["config", "user.name", "Tester"]);
    git(
        &workspace,
        &["config", "user.email", "tester@example.invalid"],
    );
    git(&workspace, &["add", "-A"]);
    git(&workspace, &["commit", "-q", "-m", "initial"]);
    workspace
}

/// `resolve ARGS…` in `workspace`, with the test identity for git.
fn run(workspace: &Workspace, args: &[&str]) -> Run {
    Run::from(workspace.command(args).envs(IDENTITY).output().unwrap())
}

/// `resolve`, with the test identity, run with `args` to exit 0.
fn run_ok(workspace: &Workspace, args: &[&str]) -> Run {
    run(workspace, args).expect_code(0)
}

/// Stage `a.txt` from `one` to `two` and `apply --commit` it: the file is `two`; the apply's run.
fn edit_and_apply_with_commit(workspace: &Workspace) -> Run {
    run_ok(
        workspace,
        &["edit", "a.txt", "--old", "one", "--new", "two"],
    );
    let applied = run_ok(workspace, &["apply", "--reason", "r", "--commit"]);
    assert_eq!(workspace.read("a.txt"), "two\n");
    applied
}

/// The files the commit `rev` changed.
fn files_of(workspace: &Workspace, rev: &str) -> Vec<String> {
    git(
        workspace,
        &["show", "--name-only", "--format=", "--no-renames", rev],
    )
    .lines()
    .filter(|line| !line.is_empty())
    .map(str::to_owned)
    .collect()
}

fn commit_count(workspace: &Workspace) -> usize {
    git(workspace, &["rev-list", "--count", "HEAD"])
        .trim()
        .parse()
        .unwrap()
}

fn history(workspace: &Workspace) -> Vec<Value> {
    let run = run_ok(workspace, &["--json", "log"]);
    let value: Value = serde_json::from_str(run.stdout.trim()).unwrap();
    value["history"].as_array().unwrap().clone()
}

#[test]
fn apply_commit_makes_one_commit_of_the_actions_files_with_label_reason_and_trailers() {
    let workspace = repository(&[("a.txt", "one\n"), ("b.txt", "bee\n")]);
    // Changes of the person's own that the commit must not take.
    workspace.write("b.txt", b"bee, unstaged\n");
    workspace.write("loose.txt", b"untracked\n");
    run(
        &workspace,
        &["edit", "a.txt", "--old", "one", "--new", "ONE"],
    )
    .expect_code(0);
    let applied = run(
        &workspace,
        &["apply", "--reason", "Capitalise the first word", "--commit"],
    )
    .expect_code(0);
    assert_eq!(workspace.read("a.txt"), "ONE\n");
    assert_eq!(commit_count(&workspace), 2);
    assert_eq!(files_of(&workspace, "HEAD"), ["a.txt"]);
    let head = git(&workspace, &["rev-parse", "HEAD"]).trim().to_owned();
    assert_contains(&applied.stdout, &format!("Committed {}.", &head[..7]));
    let message = git(&workspace, &["log", "-1", "--format=%B"]);
    assert_eq!(
        message.trim_end(),
        "Edit: a.txt\n\nCapitalise the first word\n\nResolve-Id: pending-action:edit:1\nResolve-Origin: cli\nResolve-Decided-By: person"
    );
    let trailers = git(
        &workspace,
        &["log", "-1", "--format=%(trailers:key=Resolve-Id,valueonly)"],
    );
    assert_eq!(trailers.trim(), "pending-action:edit:1");
    // The person's own changes are as they were.
    assert_eq!(workspace.read("b.txt"), "bee, unstaged\n");
    assert_eq!(
        git(&workspace, &["status", "--porcelain"]),
        " M b.txt\n?? loose.txt\n"
    );
    let log = run_ok(&workspace, &["log"]);
    assert_contains(&log.stdout, &format!("[commit {}]", &head[..7]));
    assert_eq!(history(&workspace)[0]["commit"], json!(head));
}

#[test]
fn what_the_person_staged_stays_staged_and_out_of_the_commit() {
    let workspace = repository(&[
        ("a.txt", "first\n2\n3\n4\n5\n6\nlast\n"),
        ("b.txt", "bee\n"),
    ]);
    // Staged: a change to another file and one to the action's file (far from its change);
    // then unstaged changes on top of both.
    workspace.write("b.txt", b"bee, staged\n");
    workspace.write("a.txt", b"first\n2\n3\n4\n5\n6\nlast, staged\n");
    git(&workspace, &["add", "a.txt", "b.txt"]);
    workspace.write("b.txt", b"bee, staged\nunstaged\n");
    workspace.write("a.txt", b"first\n2\n3\n4\n5\n6\nlast, staged\nunstaged\n");
    let staged_before = git(&workspace, &["diff", "--cached"]);
    run(
        &workspace,
        &["edit", "a.txt", "--old", "first", "--new", "FIRST"],
    )
    .expect_code(0);
    run_ok(&workspace, &["apply", "--reason", "shout", "--commit"]);
    assert_eq!(commit_count(&workspace), 2);
    assert_eq!(files_of(&workspace, "HEAD"), ["a.txt"]);
    // The commit holds the action's change alone.
    assert_eq!(
        git(&workspace, &["show", "HEAD:a.txt"]),
        "FIRST\n2\n3\n4\n5\n6\nlast\n"
    );
    // Still staged, exactly as before (the applied change merged under it).
    assert_eq!(
        git(&workspace, &["diff", "--cached"])
            .lines()
            .filter(|line| line.starts_with(['+', '-']))
            .collect::<Vec<_>>(),
        staged_before
            .lines()
            .filter(|line| line.starts_with(['+', '-']))
            .collect::<Vec<_>>()
    );
    assert_eq!(
        git(&workspace, &["show", ":b.txt"]),
        "bee, staged\n",
        "the other file's staged version"
    );
    // The work tree: the apply, and every change of the person's.
    assert_eq!(
        workspace.read("a.txt"),
        "FIRST\n2\n3\n4\n5\n6\nlast, staged\nunstaged\n"
    );
    assert_eq!(workspace.read("b.txt"), "bee, staged\nunstaged\n");
    assert_eq!(
        git(&workspace, &["status", "--porcelain"]),
        "MM a.txt\nMM b.txt\n"
    );
}

#[test]
fn outside_git_the_apply_lands_and_says_why_nothing_was_committed() {
    let workspace = Workspace::with(&[("a.txt", "one\n")]);
    let applied = edit_and_apply_with_commit(&workspace);
    assert_contains(&applied.stdout, "Not committed:");
    assert_contains(&applied.stdout, "is not in a git repository");
    let entry = &history(&workspace)[0];
    assert_eq!(entry["commit"], Value::Null);
    assert!(
        entry["notCommitted"]
            .as_str()
            .unwrap()
            .contains("not in a git repository"),
        "{entry}"
    );
    let log = run_ok(&workspace, &["log"]);
    assert_contains(&log.stdout, "[not committed: ");
}

#[test]
fn a_failing_pre_commit_hook_means_no_commit_but_the_apply_lands() {
    let workspace = repository(&[("a.txt", "one\n")]);
    let hook = workspace.path(".git/hooks/pre-commit");
    std::fs::write(&hook, "#!/bin/sh\necho 'lint: tabs found' >&2\nexit 1\n").unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    let applied = edit_and_apply_with_commit(&workspace);
    assert_eq!(commit_count(&workspace), 1);
    assert_contains(
        &applied.stdout,
        "Not committed: the pre-commit hook failed (with exit status 1): lint: tabs found",
    );
    assert!(
        history(&workspace)[0]["notCommitted"]
            .as_str()
            .unwrap()
            .contains("pre-commit"),
    );
}

#[test]
fn commit_true_in_a_trusted_configuration_commits_every_plain_apply() {
    let workspace = repository(&[("a.txt", "one\n")]);
    workspace.write(".resolve/config.toml", b"commit = true\n");
    run(
        &workspace,
        &["edit", "a.txt", "--old", "one", "--new", "two"],
    )
    .expect_code(0);
    // Untrusted, it asks for nothing: a commit runs the repository's hooks.
    let untrusted = run_ok(&workspace, &["apply", "--reason", "r"]);
    assert_eq!(commit_count(&workspace), 1);
    assert_contains(&untrusted.stdout, "not trusted");
    assert_contains(&untrusted.stdout, "resolve trust");
    // The person commits that change by hand; then trusts the file.
    git(&workspace, &["commit", "-q", "-a", "-m", "by hand"]);
    workspace.trust();
    run(
        &workspace,
        &["edit", "a.txt", "--old", "two", "--new", "three"],
    )
    .expect_code(0);
    let trusted = run_ok(&workspace, &["apply", "--reason", "count on"]);
    assert_contains(&trusted.stdout, "Committed ");
    assert_eq!(commit_count(&workspace), 3);
    assert_eq!(git(&workspace, &["show", "HEAD:a.txt"]), "three\n");
    assert_eq!(
        git(&workspace, &["log", "-1", "--format=%s"]).trim(),
        "Edit: a.txt"
    );
}

#[test]
fn resolve_mcp_honours_commit_true_and_the_details_name_the_commit() {
    let workspace = repository(&[("a.txt", "one\n")]);
    workspace.write(".resolve/config.toml", b"commit = true\n");
    workspace.trust();
    let mut command = workspace.command(&["mcp"]);
    command.envs(IDENTITY);
    let mut mcp = McpChild::start(command, "t");
    let staged = mcp.call(
        "edit",
        json!({"path": "a.txt", "old_text": "one", "new_text": "two"}),
    );
    assert_eq!(staged["isError"], json!(false), "{staged}");
    let resolved = mcp.call(
        "resolve",
        json!({"action": "apply", "reason": "the model's reason"}),
    );
    mcp.finish();
    assert_eq!(resolved["isError"], json!(false), "{resolved}");
    let head = git(&workspace, &["rev-parse", "HEAD"]).trim().to_owned();
    let details = &resolved["_meta"]["resolve/details"];
    assert_eq!(details["commit"], json!(head), "{resolved}");
    assert_contains(&resolved.to_string(), &format!("Committed {}.", &head[..7]));
    let message = git(&workspace, &["log", "-1", "--format=%B"]);
    assert_starts_with(&message, "Edit: a.txt\n\nthe model's reason\n");
    assert_contains(&message, "Resolve-Origin: mcp:");
    assert_contains(&message, "Resolve-Decided-By: model");
    assert_eq!(files_of(&workspace, "HEAD"), ["a.txt"]);
    assert!(Path::new(&workspace.path("a.txt")).exists());
}

#[test]
fn resolve_agent_honours_commit_true_and_the_model_reads_the_commit() {
    let workspace = repository(&[("a.txt", "one\n")]);
    workspace.write(".resolve/config.toml", b"commit = true\n");
    workspace.trust();
    let model = edit_and_apply_model(Turn::text("Done."));
    run_agent(&workspace, &model, &[], "Change one to uno.", "").expect_code(0);
    assert_eq!(commit_count(&workspace), 2);
    let head = git(&workspace, &["rev-parse", "HEAD"]).trim().to_owned();
    let message = git(&workspace, &["log", "-1", "--format=%B"]);
    assert_starts_with(&message, "Edit: a.txt\n\nMatches the task.\n");
    assert_contains(&message, "Resolve-Origin: agent");
    let last = model.bodies().last().unwrap().to_string();
    assert_contains(&last, &format!("Committed {}.", &head[..7]));
}

#[test]
fn the_message_names_what_was_not_taken_and_ignored_files_stay_out() {
    let workspace = repository(&[
        ("a.txt", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n"),
        (".gitignore", "*.log\n"),
    ]);
    run(
        &workspace,
        &[
            "write",
            "a.txt",
            "--content",
            "ONE\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\nTWELVE\n",
        ],
    )
    .expect_code(0);
    run(
        &workspace,
        &[
            "apply",
            "--reason",
            "the first only",
            "--except",
            "a.txt#2",
            "--commit",
        ],
    )
    .expect_code(0);
    let message = git(&workspace, &["log", "-1", "--format=%B"]);
    assert!(
        message.starts_with(
            "Write: a.txt\n\nthe first only\n\nNot taken:\n- a.txt#2: left out\n\nResolve-Id: "
        ),
        "{message}"
    );
    assert_eq!(
        git(&workspace, &["show", "HEAD:a.txt"]),
        "ONE\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n"
    );
    // An ignored file the apply writes is applied, not committed.
    run_ok(&workspace, &["write", "run.log", "--content", "x\n"]);
    let applied = run_ok(&workspace, &["apply", "--reason", "r", "--commit"]);
    assert_eq!(workspace.read("run.log"), "x\n");
    assert_contains(
        &applied.stdout,
        "Not committed: git ignores the applied files",
    );
    assert_eq!(commit_count(&workspace), 2);
}

#[test]
fn without_a_git_identity_the_apply_lands_and_says_so() {
    let workspace = repository(&[("a.txt", "one\n")]);
    // No identity from the environment or a guess: only configured ones, and there are none.
    git(&workspace, &["config", "--unset", "user.name"]);
    git(&workspace, &["config", "--unset", "user.email"]);
    git(&workspace, &["config", "user.useConfigOnly", "true"]);
    run(
        &workspace,
        &["edit", "a.txt", "--old", "one", "--new", "two"],
    )
    .expect_code(0);
    let applied = workspace
        .command(&["apply", "--reason", "r", "--commit"])
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    let applied = Run::from(applied).expect_code(0);
    assert_eq!(workspace.read("a.txt"), "two\n");
    assert_contains(&applied.stdout, "Not committed: git has no user identity");
    assert_eq!(commit_count(&workspace), 1);
}

#[test]
fn a_commit_made_meanwhile_is_kept_and_the_apply_commits_on_top_of_it() {
    let workspace = repository(&[("a.txt", "one\n")]);
    // The first time it runs, the hook makes a commit of its own: HEAD moves under resolve.
    let hook = workspace.path(".git/hooks/pre-commit");
    std::fs::write(
        &hook,
        "#!/bin/sh\n[ -e .git/intruded ] && exit 0\ntouch .git/intruded\nenv -u GIT_INDEX_FILE git commit -q --allow-empty -m intruder\n",
    )
    .unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    run(
        &workspace,
        &["edit", "a.txt", "--old", "one", "--new", "two"],
    )
    .expect_code(0);
    let applied = run_ok(&workspace, &["apply", "--reason", "r", "--commit"]);
    assert_contains(&applied.stdout, "Committed ");
    assert_eq!(
        git(&workspace, &["log", "--format=%s"]),
        "Edit: a.txt\nintruder\ninitial\n"
    );
    assert_eq!(files_of(&workspace, "HEAD"), ["a.txt"]);
}
