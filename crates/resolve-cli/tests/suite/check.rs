//! `resolve check` through the binary: a real (shell) test run against a preview, in place and
//! in a scratch copy, the workspace byte-identical afterwards, a SIGKILL during the command
//! rolled back by the next invocation, `--require-check`, and the model's `check` tool.

use std::collections::BTreeMap;
use std::path::Path;
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
    workspace
        .run(&[
            "edit",
            "lib.txt",
            "--old",
            &format!("answer = {from}"),
            "--new",
            &format!("answer = {to}"),
        ])
        .expect_code(0);
}

/// Every file under the root outside `.resolve/`, with its bytes and permissions.
fn tree(root: &Path) -> BTreeMap<String, (Vec<u8>, u32)> {
    use std::os::unix::fs::PermissionsExt;
    let mut files = BTreeMap::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let relative = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if relative == ".resolve" {
                continue;
            }
            let metadata = std::fs::symlink_metadata(&path).unwrap();
            if metadata.is_symlink() {
                let target = std::fs::read_link(&path).unwrap();
                files.insert(
                    format!("{relative}@"),
                    (target.into_os_string().into_encoded_bytes(), 0),
                );
            } else if metadata.is_dir() {
                files.insert(format!("{relative}/"), (Vec::new(), 0));
                dirs.push(path);
            } else {
                let mode = metadata.permissions().mode();
                files.insert(relative, (std::fs::read(&path).unwrap(), mode));
            }
        }
    }
    files
}

fn pending_json(workspace: &Workspace) -> Value {
    let run = workspace.run(&["pending", "--json"]).expect_code(0);
    serde_json::from_str(run.stdout.trim()).unwrap()
}

#[test]
fn a_preview_that_breaks_a_test_fails_its_check_and_the_workspace_is_byte_identical() {
    let workspace = project(42);
    stage_answer(&workspace, 42, 41);
    let before = tree(workspace.root());
    let run = workspace
        .run(&["check", "--", "sh", "test.sh"])
        .expect_code(1);
    assert_eq!(tree(workspace.root()), before, "every byte as it was");
    // The test ran against the preview, and its output streamed through.
    assert!(run.stdout.contains("answer = 41"), "{}", run.stdout);
    assert!(run.stderr.contains("FAILED: expected 42"), "{}", run.stderr);
    assert!(
        run.stdout.contains(
            "pending-action:edit:1 — ✗ check failed: `sh test.sh` failed (exit status 1, in place,"
        ),
        "{}",
        run.stdout
    );
    let listed = workspace.run(&["pending"]).expect_code(0);
    assert!(
        listed
            .stdout
            .contains("pending-action:edit:1  Edit: lib.txt  [cli]  ✗ check failed"),
        "{}",
        listed.stdout
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
    let shown = workspace.run(&["show"]).expect_code(0);
    assert!(
        shown.stdout.contains("✗ check failed") && shown.stdout.contains("FAILED: expected 42"),
        "{}",
        shown.stdout
    );
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
    let before = tree(workspace.root());
    let run = workspace.run(&["check", "--json"]).expect_code(0);
    assert_eq!(tree(workspace.root()), before);
    let result: Value = serde_json::from_str(run.stdout.trim()).unwrap();
    assert_eq!(result["id"], "pending-action:edit:1");
    assert_eq!(result["check"]["passed"], true);
    assert_eq!(result["check"]["exitCode"], 0);
    // With --json the command's output goes to stderr, never stdout.
    assert!(run.stderr.contains("test answer ... ok"), "{}", run.stderr);
    let listed = workspace.run(&["pending"]).expect_code(0);
    assert!(listed.stdout.contains("✓ checked"), "{}", listed.stdout);
    workspace
        .run(&["apply", "--require-check", "--reason", "Its check passed."])
        .expect_code(0);
    assert_eq!(workspace.read("lib.txt"), "// the library\nanswer = 42\n");
}

#[test]
fn require_check_refuses_an_unchecked_or_failed_preview_with_a_clear_error() {
    let workspace = project(42);
    stage_answer(&workspace, 42, 41);
    let before = tree(workspace.root());
    let run = workspace
        .run(&["apply", "--require-check", "--reason", "Looks fine."])
        .expect_code(1);
    assert!(
        run.stderr.contains(
            "`pending-action:edit:1` has not been checked, and this apply requires a passing check; nothing was written."
        ),
        "{}",
        run.stderr
    );
    workspace
        .run(&["check", "--", "sh", "test.sh"])
        .expect_code(1);
    // `[check] require = true` makes it the default.
    configure(&workspace, "[check]\nrequire = true\n");
    let run = workspace
        .run(&["apply", "--reason", "Looks fine."])
        .expect_code(1);
    assert!(
        run.stderr.contains(
            "failed its last check (exit status 1), and this apply requires a passing check"
        ),
        "{}",
        run.stderr
    );
    assert_eq!(tree(workspace.root()), before);
    assert_eq!(workspace.pending_ids(), ["pending-action:edit:1"]);
}

#[test]
fn a_check_killed_while_its_command_runs_is_rolled_back_by_the_next_invocation() {
    let workspace = project(42);
    stage_answer(&workspace, 42, 41);
    let before = tree(workspace.root());
    // The command says where it is from outside the workspace, then waits.
    let signals = tempfile::tempdir().unwrap();
    let pid_file = signals.path().join("pid");
    let script = format!("echo $$ > '{}'; exec sleep 60", pid_file.display());
    let mut child = workspace
        .command(&["check", "--", "sh", "-c", &script])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let pid = loop {
        if let Ok(pid) = std::fs::read_to_string(&pid_file)
            && pid.ends_with('\n')
        {
            break pid.trim().to_owned();
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the command never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    // The preview is in place while the command runs.
    assert_eq!(workspace.read("lib.txt"), "// the library\nanswer = 41\n");
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    // The command outlives resolve; end it.
    let _ = std::process::Command::new("sh")
        .args(["-c", &format!("kill -9 {pid}")])
        .status();

    let run = workspace.run(&["pending"]).expect_code(0);
    assert!(
        run.stderr.contains(
            "Rolled back an interrupted check trial of `pending-action:edit:1` (1 file restored); it is still pending."
        ),
        "{}",
        run.stderr
    );
    assert_eq!(tree(workspace.root()), before, "the tree is at its base");
    assert_eq!(workspace.pending_ids(), ["pending-action:edit:1"]);
    assert!(
        pending_json(&workspace)["pending"][0]["check"].is_null(),
        "a killed check records no outcome"
    );
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
    let workspace = project(42);
    stage_answer(&workspace, 42, 41);
    let before = tree(workspace.root());
    let signals = tempfile::tempdir().unwrap();
    let group_file = signals.path().join("group");
    // The command (its group's leader) starts a grandchild that sleeps, then writes into the
    // workspace and outside it; the command itself waits.
    let script = format!(
        "(sleep 2; echo late > late.txt; echo late > '{outside}') & echo $$ > '{group}'; wait",
        outside = signals.path().join("late").display(),
        group = group_file.display(),
    );
    let mut child = workspace
        .command(&["check", "--", "sh", "-c", &script])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let group = loop {
        if let Ok(group) = std::fs::read_to_string(&group_file)
            && group.ends_with('\n')
        {
            break group.trim().to_owned();
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the command never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
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
    workspace.run(&["pending"]).expect_code(0);
    assert_eq!(tree(workspace.root()), before, "every byte as it was");
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
    let before = tree(workspace.root());
    // The links lead to the copy: the preview is seen through them, and writes land there.
    let script = "grep -q 'answer = 41' abs; saw=$?; echo pwned > abs; echo pwned > src/whole/test.sh; echo new > src/whole/created; echo new > dangling; exit $saw";
    let run = workspace.run(&["check", "--scratch", "--", "sh", "-c", script]);
    assert_eq!(tree(workspace.root()), before, "every byte as it was");
    // It passed: `abs` showed the preview's copy of lib.txt.
    run.expect_code(0);
    assert!(!workspace.path("created").exists());
    assert!(!workspace.path("not-yet.txt").exists());
}

#[test]
fn a_scratch_check_never_changes_the_workspace() {
    let workspace = project(42);
    stage_answer(&workspace, 42, 41);
    let before = tree(workspace.root());
    // The command sees the preview, no ignored files, and writes where it runs.
    let script = "test \"$(pwd)\" != \"$ROOT\" && grep -q 'answer = 41' lib.txt && test ! -e target/cache && test -e src/other.txt && echo made > made-by-check";
    let run = workspace
        .command(&["check", "--scratch", "--", "sh", "-c", script])
        .env("ROOT", workspace.root())
        .output()
        .unwrap();
    let run = super::common::Run::from(run).expect_code(0);
    assert!(run.stdout.contains("in a scratch copy"), "{}", run.stdout);
    assert!(
        run.stdout
            .contains("The command changed made-by-check in the scratch copy"),
        "{}",
        run.stdout
    );
    assert_eq!(tree(workspace.root()), before, "every byte as it was");
    // --with-ignored copies the ignored build directory too.
    workspace
        .run(&[
            "check",
            "--scratch",
            "--with-ignored",
            "--",
            "test",
            "-e",
            "target/cache",
        ])
        .expect_code(0);
    assert_eq!(tree(workspace.root()), before);
    assert_eq!(
        pending_json(&workspace)["pending"][0]["check"]["mode"],
        "scratch"
    );
}

#[test]
fn a_check_without_a_command_or_of_a_stale_preview_refuses_and_runs_nothing() {
    let workspace = project(42);
    stage_answer(&workspace, 42, 41);
    let run = workspace.run(&["check"]).expect_code(1);
    assert!(
        run.stderr.contains("No check command: give one after `--`"),
        "{}",
        run.stderr
    );
    workspace.write("lib.txt", b"changed by hand\n");
    let run = workspace
        .run(&["check", "--", "sh", "-c", "echo ran > ran.txt"])
        .expect_code(1);
    assert!(run.stderr.contains("Preview is stale:"), "{}", run.stderr);
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
    assert!(results[1].contains("command"), "{}", results[1]);
    assert!(
        results[2].contains("✓ checked: `sh test.sh` passed")
            && results[2].contains("test answer ... ok"),
        "{}",
        results[2]
    );
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
