//! `resolve check` through the binary: a real (shell) test run against a preview, in place and
//! in a scratch copy, the workspace byte-identical afterwards, a SIGKILL during the command
//! rolled back by the next invocation, `--require-check`, and the model's `check` tool.

use resolve_test_support::text::assert_contains;
use std::time::{Duration, Instant};

use resolve_test_support::Turn;
use serde_json::{Value, json};

use super::common::{Model, Workspace, run_agent};

/// The project's "test suite": prints what it sees, passes when the answer is 42.
const TEST_SH: &str = "cat lib.txt\nif grep -q 'answer = 42' lib.txt; then echo 'test answer ... ok'; else echo 'test answer ... FAILED: expected 42' >&2; exit 1; fi\n";

/// A project whose test passes (`answer = 42`), with an ignored build directory.
fn project(answer: u32) -> Workspace {
    Workspace::with(&[
        ("lib.txt", &format!("// the library\nanswer = {answer}\n")),
        ("test.sh", TEST_SH),
        (".gitignore", "target/\n"),
        ("target/cache", "built\n"),
        ("src/other.txt", "untouched\r\nno final newline"),
    ])
}

fn configure(workspace: &Workspace, table: &str) {
    workspace.write(".resolve/config.toml", table.as_bytes());
    workspace.trust();
}

/// Stage a preview setting the answer.
fn stage_answer(workspace: &Workspace, from: u32, to: u32) {
    workspace.run_ok(&[
        "edit",
        "lib.txt",
        "--old",
        &format!("answer = {from}"),
        "--new",
        &format!("answer = {to}"),
    ]);
}

/// Everything under the workspace's root but `.resolve/`: bytes, modes and links.
fn tree(workspace: &Workspace) -> resolve_test_support::Tree {
    workspace.tree_except(&[".resolve"])
}

/// A project whose test passes with its answer 42, with a preview staged that breaks it (42 →
/// 41), and its tree before anything checks the preview.
fn breaking_preview_staged() -> (Workspace, resolve_test_support::Tree) {
    let workspace = project(42);
    stage_answer(&workspace, 42, 41);
    let before = tree(&workspace);
    (workspace, before)
}

fn pending_json(workspace: &Workspace) -> Value {
    let run = workspace.run_ok(&["pending", "--json"]);
    serde_json::from_str(run.stdout.trim()).unwrap()
}

#[test]
fn a_preview_that_breaks_a_test_fails_its_check_and_the_workspace_is_byte_identical() {
    let (workspace, before) = breaking_preview_staged();
    let run = workspace.run_fails(&["check", "--", "sh", "test.sh"]);
    assert_eq!(tree(&workspace), before, "every byte as it was");
    // The test ran against the preview, and its output streamed through.
    assert_contains(&run.stdout, "answer = 41");
    assert_contains(&run.stderr, "FAILED: expected 42");
    assert_contains(
        &run.stdout,
        "pending-action:edit:1 — ✗ check failed: `sh test.sh` failed (exit status 1, in place,",
    );
    let listed = workspace.run_ok(&["pending"]);
    assert_contains(
        &listed.stdout,
        "pending-action:edit:1  Edit: lib.txt  [cli]  ✗ check failed",
    );
    let check = &pending_json(&workspace)["pending"][0]["check"];
    assert_eq!(check["passed"], false);
    assert_eq!(check["exitCode"], 1);
    assert_eq!(check["command"], json!(["sh", "test.sh"]));
    assert_eq!(check["mode"], "in_place");
    assert!(
        check["outputTail"]
            .as_str()
            .unwrap()
            .contains("FAILED: expected 42")
    );
    let shown = workspace.run_ok(&["show"]);
    assert_contains(&shown.stdout, "✗ check failed");
    assert_contains(&shown.stdout, "FAILED: expected 42");
    assert_eq!(workspace.pending_ids(), ["pending-action:edit:1"]);
}

#[test]
fn a_preview_that_fixes_a_test_passes_its_configured_check_and_then_applies_with_require_check() {
    let workspace = project(41);
    configure(
        &workspace,
        "[check]\ncommand = [\"sh\", \"test.sh\"]\ntimeout_sec = 60\n",
    );
    stage_answer(&workspace, 41, 42);
    let before = tree(&workspace);
    let run = workspace.run_ok(&["check", "--json"]);
    assert_eq!(tree(&workspace), before);
    let result: Value = serde_json::from_str(run.stdout.trim()).unwrap();
    assert_eq!(result["id"], "pending-action:edit:1");
    assert_eq!(result["check"]["passed"], true);
    assert_eq!(result["check"]["exitCode"], 0);
    // With --json the command's output goes to stderr, never stdout.
    assert_contains(&run.stderr, "test answer ... ok");
    let listed = workspace.run_ok(&["pending"]);
    assert_contains(&listed.stdout, "✓ checked");
    workspace.run_ok(&["apply", "--require-check", "--reason", "Its check passed."]);
    assert_eq!(workspace.read("lib.txt"), "// the library\nanswer = 42\n");
}

#[test]
fn require_check_refuses_an_unchecked_or_failed_preview_with_a_clear_error() {
    let (workspace, before) = breaking_preview_staged();
    let run = workspace.run_fails(&["apply", "--require-check", "--reason", "Looks fine."]);
    assert_contains(
        &run.stderr,
        "`pending-action:edit:1` has not been checked, and this apply requires a passing check; nothing was written.",
    );
    workspace.run_fails(&["check", "--", "sh", "test.sh"]);
    // `[check] require = true` makes it the default.
    configure(&workspace, "[check]\nrequire = true\n");
    let run = workspace.run_fails(&["apply", "--reason", "Looks fine."]);
    assert_contains(
        &run.stderr,
        "failed its last check (exit status 1), and this apply requires a passing check",
    );
    assert_eq!(tree(&workspace), before);
    assert_eq!(workspace.pending_ids(), ["pending-action:edit:1"]);
}

#[test]
fn a_check_killed_while_its_command_runs_is_rolled_back_by_the_next_invocation() {
    let (workspace, before) = breaking_preview_staged();
    // The command says where it is from outside the workspace, then waits.
    let signals = tempfile::tempdir().unwrap();
    let pid_file = signals.path().join("pid");
    let script = format!("echo $$ > '{}'; exec sleep 60", pid_file.display());
    let (mut child, pid) = check_started(&workspace, &script, &pid_file);
    // The preview is in place while the command runs.
    assert_eq!(workspace.read("lib.txt"), "// the library\nanswer = 41\n");
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    // The command outlives resolve; end it.
    let _ = std::process::Command::new("sh")
        .args(["-c", &format!("kill -9 {pid}")])
        .status();

    let run = workspace.run_ok(&["pending"]);
    assert_contains(
        &run.stderr,
        "Rolled back an interrupted check trial of `pending-action:edit:1` (1 file restored); it is still pending.",
    );
    assert_eq!(tree(&workspace), before, "the tree is at its base");
    assert_eq!(workspace.pending_ids(), ["pending-action:edit:1"]);
    assert!(
        pending_json(&workspace)["pending"][0]["check"].is_null(),
        "a killed check records no outcome"
    );
}

/// `resolve check -- sh -c SCRIPT` started (its output dropped), once the script has written a
/// line to `written` (within 30 s); the child and that line.
fn check_started(
    workspace: &Workspace,
    script: &str,
    written: &std::path::Path,
) -> (std::process::Child, String) {
    let child = workspace
        .command(&["check", "--", "sh", "-c", script])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let line = loop {
        if let Ok(line) = std::fs::read_to_string(written)
            && line.ends_with('\n')
        {
            break line.trim().to_owned();
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the command never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    (child, line)
}

/// Whether any process of the process group `group` is alive (a zombie waiting for its new
/// parent to reap it is not).
fn group_alive(group: &str) -> bool {
    let listing = std::process::Command::new("ps")
        .args(["-eo", "pgid=,stat="])
        .output()
        .unwrap();
    String::from_utf8_lossy(&listing.stdout)
        .lines()
        .any(|line| {
            let mut fields = line.split_whitespace();
            fields.next() == Some(group) && fields.next().is_some_and(|stat| !stat.starts_with('Z'))
        })
}

/// Issue #31 §1: a SIGKILL of `resolve` mid-check ends every process the command started.
#[test]
fn a_sigkill_of_resolve_mid_check_ends_the_whole_process_group_before_a_grandchild_writes() {
    ending_resolve_mid_check_ends_its_group("KILL");
}

/// Issue #31 §1: so does a SIGTERM (or a Ctrl-C: the command is not in the terminal's group).
#[test]
fn a_sigterm_of_resolve_mid_check_ends_the_whole_process_group_before_a_grandchild_writes() {
    ending_resolve_mid_check_ends_its_group("TERM");
}

/// Send `signal` to `resolve check` while its command's grandchild sleeps: no process of the
/// group outlives resolve, the grandchild never writes, and the tree is at its base again.
fn ending_resolve_mid_check_ends_its_group(signal: &str) {
    let (workspace, before) = breaking_preview_staged();
    let signals = tempfile::tempdir().unwrap();
    let group_file = signals.path().join("group");
    // The command (its group's leader) starts a grandchild that sleeps, then writes into the
    // workspace and outside it; the command itself waits.
    let script = format!(
        "(sleep 2; echo late > late.txt; echo late > '{outside}') & echo $$ > '{group}'; wait",
        outside = signals.path().join("late").display(),
        group = group_file.display(),
    );
    let (mut child, group) = check_started(&workspace, &script, &group_file);
    assert!(group_alive(&group), "the command runs in its own group");
    let sent = std::process::Command::new("kill")
        .args(["-s", signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    child.wait().unwrap();

    let killed = Instant::now();
    while group_alive(&group) {
        assert!(
            killed.elapsed() < Duration::from_secs(1),
            "a process of the check's group outlived resolve: {}",
            String::from_utf8_lossy(
                &std::process::Command::new("ps")
                    .args(["-eo", "pid,ppid,pgid,stat,args"])
                    .output()
                    .unwrap()
                    .stdout
            )
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // Past the grandchild's sleep: had it lived, it would have written by now.
    std::thread::sleep(Duration::from_millis(2500));
    assert!(
        !signals.path().join("late").exists(),
        "the grandchild wrote outside the workspace"
    );
    workspace.run_ok(&["pending"]);
    assert_eq!(tree(&workspace), before, "every byte as it was");
    assert_eq!(workspace.pending_ids(), ["pending-action:edit:1"]);
}

/// Issue #35 item 7: an absolute link in the workspace (to a file, or to the root itself)
/// must not let a scratch check write into the real workspace.
#[test]
fn a_scratch_check_cannot_write_into_the_workspace_through_an_absolute_link() {
    let workspace = project(42);
    let root = workspace.root().canonicalize().unwrap();
    std::os::unix::fs::symlink(root.join("lib.txt"), workspace.path("abs")).unwrap();
    std::os::unix::fs::symlink(&root, workspace.path("src/whole")).unwrap();
    std::os::unix::fs::symlink(root.join("not-yet.txt"), workspace.path("dangling")).unwrap();
    stage_answer(&workspace, 42, 41);
    let before = tree(&workspace);
    // The links lead to the copy: the preview is seen through them, and writes land there.
    let script = "grep -q 'answer = 41' abs; saw=$?; echo pwned > abs; echo pwned > src/whole/test.sh; echo new > src/whole/created; echo new > dangling; exit $saw";
    let run = workspace.run(&["check", "--scratch", "--", "sh", "-c", script]);
    assert_eq!(tree(&workspace), before, "every byte as it was");
    // It passed: `abs` showed the preview's copy of lib.txt.
    run.expect_code(0);
    assert!(!workspace.path("created").exists());
    assert!(!workspace.path("not-yet.txt").exists());
}

#[test]
fn a_scratch_check_never_changes_the_workspace() {
    let (workspace, before) = breaking_preview_staged();
    // The command sees the preview, no ignored files, and writes where it runs.
    let script = "test \"$(pwd)\" != \"$ROOT\" && grep -q 'answer = 41' lib.txt && test ! -e target/cache && test -e src/other.txt && echo made > made-by-check";
    let run = workspace
        .command(&["check", "--scratch", "--", "sh", "-c", script])
        .env("ROOT", workspace.root())
        .output()
        .unwrap();
    let run = super::common::Run::from(run).expect_code(0);
    assert_contains(&run.stdout, "in a scratch copy");
    assert_contains(
        &run.stdout,
        "The command changed made-by-check in the scratch copy",
    );
    assert_eq!(tree(&workspace), before, "every byte as it was");
    // --with-ignored copies the ignored build directory too.
    workspace.run_ok(&[
        "check",
        "--scratch",
        "--with-ignored",
        "--",
        "test",
        "-e",
        "target/cache",
    ]);
    assert_eq!(tree(&workspace), before);
    assert_eq!(
        pending_json(&workspace)["pending"][0]["check"]["mode"],
        "scratch"
    );
}

#[test]
fn a_check_without_a_command_or_of_a_stale_preview_refuses_and_runs_nothing() {
    let workspace = project(42);
    stage_answer(&workspace, 42, 41);
    let run = workspace.run_fails(&["check"]);
    assert_contains(&run.stderr, "No check command: give one after `--`");
    workspace.write("lib.txt", b"changed by hand\n");
    let run = workspace.run_fails(&["check", "--", "sh", "-c", "echo ran > ran.txt"]);
    assert_contains(&run.stderr, "Preview is stale:");
    assert!(!workspace.path("ran.txt").exists());
}

fn check_call(id: &str, arguments: Value) -> Turn {
    Turn::call(id, "check", arguments)
}

#[test]
fn the_agent_checks_between_staging_and_resolve_with_no_forced_turn() {
    let workspace = project(41);
    configure(&workspace, "[check]\ncommand = [\"sh\", \"test.sh\"]\n");
    let model = Model::start(vec![
        Turn::call(
            "c1",
            "edit",
            json!({"path": "lib.txt", "old_text": "answer = 41", "new_text": "answer = 42"}),
        ),
        // The model may not choose the command.
        check_call("c2", json!({"command": ["rm", "-rf", "."]})),
        check_call("c3", json!({})),
        Turn::call(
            "c4",
            "resolve",
            json!({"action": "apply", "reason": "The check passed."}),
        ),
        Turn::text("Done."),
    ]);
    let run = run_agent(&workspace, &model, &[], "Fix the answer.", "").expect_code(0);
    assert_eq!(workspace.read("lib.txt"), "// the library\nanswer = 42\n");
    assert!(workspace.read("test.sh") == TEST_SH);
    let bodies = model.bodies();
    assert_eq!(bodies.len(), 5, "{}", run.stderr);
    assert!(
        bodies.iter().all(|body| body.get("tool_choice").is_none()),
        "no request forced a tool"
    );
    let tools: Vec<&str> = bodies[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["function"]["name"].as_str().unwrap())
        .collect();
    assert!(tools.contains(&"check"), "{tools:?}");
    let results: Vec<String> = bodies[4]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] == "tool")
        .map(|message| message["content"].as_str().unwrap().to_owned())
        .collect();
    assert!(
        results
            .iter()
            .all(|text| !text.contains("was not executed")),
        "nothing was skipped: {results:#?}"
    );
    assert_contains(&results[1], "command");
    assert_contains(&results[2], "✓ checked: `sh test.sh` passed");
    assert_contains(&results[2], "test answer ... ok");
}

#[test]
fn a_misspelt_table_is_refused_by_every_command_that_reads_the_configuration() {
    let workspace = project(42);
    configure(&workspace, "[chekc]\ncommand = [\"sh\", \"test.sh\"]\n");
    stage_answer(&workspace, 42, 43);
    for command in [
        &["check"][..],
        &["apply", "--reason", "Go."][..],
        &["agent", "--base-url", "http://127.0.0.1:9/v1", "Do it."][..],
    ] {
        let run = workspace.run(command);
        assert_ne!(run.code, 0, "{command:?}");
        assert!(
            run.stderr.contains(
                "is invalid: unknown table `[chekc]`; resolve reads only the tables `[check]`, `[mcp_servers.<name>]` and `[gc]`. Remove it or correct its name."
            ),
            "{command:?}: {}",
            run.stderr
        );
    }
    assert_eq!(workspace.pending_ids().len(), 1);
}
