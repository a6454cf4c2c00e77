//! Codex's own `apply_patch` staged by `resolve hook codex` (issue #28 §2), in the real host:
//! the pinned `@openai/codex` (`codex exec`, executable in `RESOLVE_CODEX`) against the scripted
//! Responses model of `resolve-test-support` on 127.0.0.1, after `resolve setup codex` wrote
//! the hook and the `resolve mcp` server into the project's `.codex/config.toml`.
//!
//! Without `RESOLVE_CODEX` those tests fail under CI (`CI` set) and are skipped loudly
//! elsewhere. `resolve setup codex` and `resolve hook codex` are also checked alone, without
//! Codex (merging, dry run, removal; failing closed).

#![allow(clippy::print_stderr, reason = "tests explain skips on stderr")]

use resolve_test_support::process::output_with_stdin;
use resolve_test_support::text::{assert_contains, assert_starts_with};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use super::common::Model;
use crate::host_harness::{Host, codex_mock_provider, person_when_pending, run_host, succeeded};
use resolve_test_support::{MockServer, Recorded, Reply, TestDir, Turn};
use serde_json::json;

/// The model Codex is told it talks to (its catalog entry decides the tools Codex offers).
const MODEL: &str = "gpt-5.1-codex";

/// The Codex executable, or `None` (skip) outside CI.
fn codex() -> Option<PathBuf> {
    Host::Codex.binary()
}

/// A throwaway root (the project) and `HOME` (with `CODEX_HOME` at `~/.codex`).
struct Lab {
    dir: TestDir,
    root: PathBuf,
    home: PathBuf,
}

/// Files in the root are written and read through the test workspace.
impl std::ops::Deref for Lab {
    type Target = TestDir;

    fn deref(&self) -> &TestDir {
        &self.dir
    }
}

impl Lab {
    fn new() -> Self {
        let dir = TestDir::new();
        let root = dir.root().to_path_buf();
        let home = dir.parent().join("home");
        std::fs::create_dir_all(home.join(".codex")).unwrap();
        Self { dir, root, home }
    }

    fn codex_home(&self) -> PathBuf {
        self.home.join(".codex")
    }

    /// The `resolve` binary for this root, under this `HOME`.
    fn resolve(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_resolve"))
            .env("HOME", &self.home)
            .env_remove("CODEX_HOME")
            .arg("--root")
            .arg(&self.root)
            .args(args)
            .output()
            .unwrap()
    }

    /// The user's Codex configuration: the mock model provider, no network beside it, and
    /// the project trusted (Codex loads a project's `.codex/config.toml` only then).
    fn write_user_config(&self, server: &MockServer) {
        let config = format!(
            r#"model = {model}
model_provider = "mock"
approval_policy = "never"
sandbox_mode = "workspace-write"
check_for_update_on_startup = false

{mock_provider}
[projects.{root}]
trust_level = "trusted"
"#,
            model = json!(MODEL),
            mock_provider = codex_mock_provider(&server.openai_base()),
            root = json!(self.root),
        );
        let extra = std::env::var("PROBE_USER_HOOKS").unwrap_or_default();
        std::fs::write(self.codex_home().join("config.toml"), config + &extra).unwrap();
    }
}

/// One `codex exec` run: its exit, output and what it sent the model.
struct CodexRun {
    status: Option<std::process::ExitStatus>,
    stdout: String,
    stderr: String,
    requests: Vec<Recorded>,
    unused_replies: usize,
}

impl CodexRun {
    fn report(&self) -> String {
        let mut out = format!(
            "--- codex exit: {:?}; {} request(s); {} unused repl(ies)\n--- stderr\n{}\n--- stdout\n{}\n",
            self.status,
            self.requests.len(),
            self.unused_replies,
            self.stderr,
            self.stdout
        );
        for (index, request) in self.requests.iter().enumerate() {
            let body = &request.body;
            let tools: Vec<String> = body["tools"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|tool| format!("{}:{}", tool["type"], tool["name"]))
                .collect();
            let newest = body["input"].as_array().and_then(|i| i.last()).cloned();
            out.push_str(&format!(
                "--- request {}: tools {tools:?}\n    newest input: {}\n",
                index + 1,
                newest.unwrap_or_default()
            ));
        }
        out
    }

    fn check(&self, holds: bool, what: &str) {
        assert!(holds, "{what}\n{}", self.report());
    }
}

/// Run `codex exec` in the lab's root on `prompt`, the model answering with `script`.
fn run_codex(binary: &Path, lab: &Lab, script: Vec<Reply>, prompt: &str) -> CodexRun {
    run_codex_with(binary, lab, script, prompt, None)
}

/// [`run_codex`], with `resolve setup codex SETUP…` run after the user's configuration is
/// written (when `setup` is given; its hook is then run because setup recorded Codex's trust
/// in it, otherwise Codex is told to run untrusted hooks, as the probe needs).
fn run_codex_with(
    binary: &Path,
    lab: &Lab,
    script: Vec<Reply>,
    prompt: &str,
    setup: Option<&[&str]>,
) -> CodexRun {
    let model = Model::replies(script);
    let server = model.server();
    lab.write_user_config(server);
    if let Some(setup) = setup {
        let args = [&["setup", "codex"][..], setup].concat();
        let output = lab.resolve(&args);
        assert!(
            output.status.success(),
            "resolve setup codex failed: {output:?}"
        );
    }
    let (status, stdout, stderr) = run_host(
        Command::new(binary)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &lab.home)
            .env("LANG", "C.UTF-8")
            .env("CODEX_HOME", lab.codex_home())
            .env("RESOLVE_MOCK_KEY", "mock-key-for-127.0.0.1")
            .args(["exec", "--skip-git-repo-check"])
            .args(setup.is_none().then_some("--dangerously-bypass-hook-trust"))
            .arg(prompt),
        &lab.root,
        lab.dir.parent(),
    );
    CodexRun {
        status,
        stdout,
        stderr,
        requests: server.requests(),
        unused_replies: server.unused_replies(),
    }
}

/// Measures what Codex offers the model and sends a hook; run by hand with `--ignored
/// --nocapture` when a new Codex version is pinned. The model patches through
/// `exec_command` (`PROBE_CALL=function` or `custom`: through an `apply_patch` function or
/// freeform tool, which Codex 0.171.0 does not offer it); a project hook dumps its input and
/// denies. `PROBE_USER_HOOKS` appends TOML to the user's configuration (another hook, say one
/// exiting with 1 or 2).
#[test]
#[ignore = "a probe printing the protocol; run by hand"]
fn probe_codex_apply_patch_hook_protocol() {
    let Some(binary) = codex() else {
        return;
    };
    let lab = Lab::new();
    lab.write("a.txt", "one\n");
    let dump = lab.dir.parent().join("hook-input.json");
    let script = lab.dir.parent().join("hook.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ncat > {}\necho '{{\"hookSpecificOutput\":{{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"probe says no\"}}}}'\n",
            dump.display()
        ),
    )
    .unwrap();
    std::fs::create_dir_all(lab.root.join(".codex")).unwrap();
    std::fs::write(
        lab.root.join(".codex/config.toml"),
        format!(
            "[[hooks.PreToolUse]]\nmatcher = \"^(Bash|apply_patch)$\"\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = {}\n",
            json!(format!("sh {}", script.display()))
        ),
    )
    .unwrap();
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** End Patch\n";
    let call = std::env::var("PROBE_CALL").unwrap_or_default();
    let turn = match call.as_str() {
        "function" => Turn::default().and_call(
            "call_patch",
            "apply_patch",
            &json!({"input": patch}).to_string(),
        ),
        "custom" => Turn::default().and_custom_call("call_patch", "apply_patch", patch),
        _ => {
            let cmd = format!("apply_patch <<'EOF'\n{patch}EOF\n");
            Turn::default().and_call(
                "call_patch",
                "exec_command",
                &json!({"cmd": cmd}).to_string(),
            )
        }
    };
    let run = run_codex(
        &binary,
        &lab,
        vec![Reply::Turn(turn), Reply::Turn(Turn::text("Done."))],
        "Patch a.txt.",
    );
    eprintln!("{}", run.report());
    eprintln!(
        "--- hook input: {}",
        std::fs::read_to_string(&dump).unwrap_or_default()
    );
    eprintln!("--- a.txt: {:?}", lab.try_read("a.txt"));
    if let Some(request) = run.requests.get(1) {
        eprintln!("--- request 2 input: {:#}", request.body["input"]);
    }
    if let Some(request) = run.requests.first() {
        for tool in request.body["tools"].as_array().into_iter().flatten() {
            if tool["name"] == "apply_patch" {
                eprintln!("--- apply_patch tool: {tool:#}");
            }
        }
    }
}

/// `a.txt` before the patch, and after (two change blocks).
const A_BEFORE: &str = "alpha\nbeta\ngamma\ndelta\nepsilon\nzeta\neta\ntheta\niota\nkappa\nlambda\nmu\nnu\nxi\nomicron\npi\n";
const A_AFTER: &str = "alpha\nBETA\ngamma\ndelta\nepsilon\nzeta\neta\ntheta\niota\nkappa\nlambda\nmu\nnu\nxi\nOMICRON\npi\n";

/// One update with two change blocks and one added file.
const TWO_FILE_PATCH: &str = "*** Begin Patch\n*** Update File: a.txt\n@@ alpha\n-beta\n+BETA\n gamma\n@@ xi\n-omicron\n+OMICRON\n pi\n*** Add File: b.txt\n+new file\n+second line\n*** End Patch\n";

/// Codex, set up by `resolve setup codex SETUP…`, runs a model that patches a.txt (holding
/// [`A_BEFORE`]) and adds b.txt with [`TWO_FILE_PATCH`], then answers with `then` and ends;
/// the run must end well with one request per reply.
fn run_two_file_patch(binary: &Path, lab: &Lab, then: Vec<Reply>, setup: &[&str]) -> CodexRun {
    lab.write("a.txt", A_BEFORE);
    let mut script = vec![shell_patch("call_patch", TWO_FILE_PATCH)];
    script.extend(then);
    script.push(Reply::Turn(Turn::text("Done.")));
    let replies = script.len();
    let run = run_codex_with(
        binary,
        lab,
        script,
        "Patch a.txt and add b.txt.",
        Some(setup),
    );
    run.check(
        run.status.is_some_and(|status| status.success()) && run.requests.len() == replies,
        &format!("codex should exit 0 after {replies} requests"),
    );
    run
}

/// The model's `exec_command` call running `apply_patch` with `patch` (how Codex 0.171.0 has
/// a model without the `apply_patch` tool patch files).
fn shell_patch(id: &str, patch: &str) -> Reply {
    let cmd = format!("apply_patch <<'EOF'\n{patch}EOF\n");
    Reply::Turn(Turn::default().and_call(id, "exec_command", &json!({"cmd": cmd}).to_string()))
}

/// The output of call `id` as the model reads it in request `number` (from 1).
fn output_of(run: &CodexRun, number: usize, id: &str) -> String {
    let text = run.requests.get(number - 1).and_then(|request| {
        request.body["input"].as_array()?.iter().find_map(|item| {
            (item["type"] == "function_call_output" && item["call_id"] == id).then(|| {
                match &item["output"] {
                    // An MCP tool's output comes as parts.
                    serde_json::Value::Array(parts) => parts
                        .iter()
                        .filter_map(|part| part["text"].as_str())
                        .collect::<Vec<_>>()
                        .join("\n"),
                    output => output.as_str().unwrap_or_default().to_owned(),
                }
            })
        })
    });
    run.check(
        text.is_some(),
        &format!("request {number} should carry the output of `{id}`"),
    );
    text.unwrap_or_default()
}

/// In `stage`, Codex's patch of two files is staged as one preview, the tree is unchanged, the
/// model reads the pending id, and `resolve apply` lands both files byte-exactly.
#[test]
fn codex_patch_is_staged_as_one_preview_and_applies_byte_exactly() {
    let Some(binary) = codex() else {
        return;
    };
    let lab = Lab::new();
    let run = run_two_file_patch(&binary, &lab, vec![], &[]);
    let text = output_of(&run, 2, "call_patch");
    run.check(
        text.contains("resolve staged this patch as pending-action:apply_patch:1")
            && text.contains("no file was written yet"),
        &format!("the model should read the pending id; it read:\n{text}"),
    );
    run.check(
        lab.try_read("a.txt").as_deref() == Some(A_BEFORE) && lab.try_read("b.txt").is_none(),
        "the tree must not change before an apply",
    );
    let pending = lab.resolve(&["--json", "pending"]);
    let listed = String::from_utf8_lossy(&pending.stdout);
    run.check(
        listed.matches("pending-action:").count() == 1
            && listed.contains("pending-action:apply_patch:1")
            && listed.contains("mcp:codex-"),
        &format!("one pending preview of the Codex session: {listed}"),
    );
    let applied = lab.resolve(&["apply", "--reason", "The patch is right."]);
    run.check(applied.status.success(), &format!("apply: {applied:?}"));
    run.check(
        lab.try_read("a.txt").as_deref() == Some(A_AFTER)
            && lab.try_read("b.txt").as_deref() == Some("new file\nsecond line\n"),
        &format!(
            "both files land byte-exactly: a.txt {:?}, b.txt {:?}",
            lab.try_read("a.txt"),
            lab.try_read("b.txt")
        ),
    );
}

/// In `stage`, the session's own `resolve` tool (its `resolve mcp` learns the session from the
/// call) applies the patch its hook staged; both files land byte-exactly.
#[test]
fn codex_sessions_resolve_tool_applies_the_patch_its_hook_staged() {
    let Some(binary) = codex() else {
        return;
    };
    let lab = Lab::new();
    let run = run_two_file_patch(
        &binary,
        &lab,
        vec![Reply::Turn(Turn::default().and_namespaced_call(
            "call_resolve",
            "mcp__resolve",
            "resolve",
            &json!({"action": "apply", "reason": "The patch is what the task asks."}).to_string(),
        ))],
        &[],
    );
    let applied = output_of(&run, 3, "call_resolve");
    run.check(
        applied.contains("Applied patch to"),
        &format!("the session's resolve should apply the hook's preview; it read:\n{applied}"),
    );
    run.check(
        lab.try_read("a.txt").as_deref() == Some(A_AFTER)
            && lab.try_read("b.txt").as_deref() == Some("new file\nsecond line\n"),
        "both files land byte-exactly",
    );
}

/// In `auto`, Codex's patch lands at once through resolve (both files, byte-exactly, in the
/// history under the session), and the model reads that it landed.
#[test]
fn codex_auto_mode_lands_the_patch_through_resolve() {
    let Some(binary) = codex() else {
        return;
    };
    let lab = Lab::new();
    let run = run_two_file_patch(&binary, &lab, vec![], &["--approve", "auto"]);
    let text = output_of(&run, 2, "call_patch");
    run.check(
        text.contains("Landed through resolve as pending-action:apply_patch:1"),
        &format!("the model should read that the patch landed; it read:\n{text}"),
    );
    run.check(
        lab.try_read("a.txt").as_deref() == Some(A_AFTER)
            && lab.try_read("b.txt").as_deref() == Some("new file\nsecond line\n"),
        "both files land byte-exactly",
    );
    let log = lab.resolve(&["--json", "log"]);
    let log = String::from_utf8_lossy(&log.stdout);
    run.check(
        log.contains("pending-action:apply_patch:1") && log.contains("mcp:codex-"),
        &format!("the history has the patch under the session: {log}"),
    );
}

/// In `review`, the hook waits for a person: they reject the second hunk of a.txt with a
/// reason and apply the rest from another terminal; the rest lands, and the model reads the
/// rejected hunk's address and the reason.
#[test]
fn codex_review_mode_lands_what_a_person_approved_and_tells_the_model_why() {
    let Some(binary) = codex() else {
        return;
    };
    let lab = Lab::new();
    let person = person_when_pending(
        &lab.root,
        &lab.home,
        "pending-action:",
        &[
            "apply",
            "--reason",
            "Keep omicron as it is.",
            "--except",
            "a.txt#2",
        ],
    );
    let run = run_two_file_patch(&binary, &lab, vec![], &["--approve", "review"]);
    let applied = person.join().unwrap();
    run.check(
        succeeded(&applied),
        &format!("the person's apply: {applied:?}"),
    );
    run.check(
        lab.try_read("a.txt").as_deref() == Some(&A_AFTER.replace("OMICRON", "omicron"))
            && lab.try_read("b.txt").as_deref() == Some("new file\nsecond line\n"),
        &format!("the approved hunks land: a.txt {:?}", lab.try_read("a.txt")),
    );
    let text = output_of(&run, 2, "call_patch");
    run.check(
        text.contains("a person reviewed it")
            && text.contains("a.txt#2")
            && text.contains("Keep omicron as it is."),
        &format!("the model should read the rejected hunk and why; it read:\n{text}"),
    );
}

/// A patch whose change block does not match is refused with the diagnostic; nothing is
/// written and nothing is pending.
#[test]
fn codex_malformed_patch_is_refused_with_the_diagnostic_and_writes_nothing() {
    let Some(binary) = codex() else {
        return;
    };
    let lab = Lab::new();
    lab.write("a.txt", A_BEFORE);
    let broken = "*** Begin Patch\n*** Update File: a.txt\n@@\n-no such line\n+x\n*** End Patch\n";
    let run = run_codex_with(
        &binary,
        &lab,
        vec![
            shell_patch("call_patch", broken),
            Reply::Turn(Turn::text("Done.")),
        ],
        "Patch a.txt.",
        Some(&[]),
    );
    let text = output_of(&run, 2, "call_patch");
    run.check(
        text.contains("resolve refused this patch; nothing was written.") && text.contains("a.txt"),
        &format!("the model should read the diagnostic; it read:\n{text}"),
    );
    run.check(
        lab.try_read("a.txt").as_deref() == Some(A_BEFORE),
        "a refused patch writes nothing",
    );
    let pending = lab.resolve(&["--json", "pending"]);
    run.check(
        !String::from_utf8_lossy(&pending.stdout).contains("pending-action:"),
        "nothing is pending",
    );
}

/// `resolve setup codex` for this lab's root with `args` (no Codex needed).
fn setup_codex(lab: &Lab, args: &[&str]) -> String {
    let output = lab.resolve(&[&["setup", "codex"][..], args].concat());
    assert!(output.status.success(), "setup codex {args:?}: {output:?}");
    String::from_utf8(output.stdout).unwrap()
}

/// Setup merges into both files (the hook in the project's, Codex's trust in the user's),
/// `--dry-run` shows that as diffs and writes nothing, a second run changes nothing, and
/// `--remove` puts both files back byte for byte.
#[test]
fn setup_codex_merges_is_idempotent_dry_runs_and_removes_exactly_what_it_added() {
    let lab = Lab::new();
    let project = lab.root.join(".codex/config.toml");
    let user = lab.codex_home().join("config.toml");
    std::fs::create_dir_all(project.parent().unwrap()).unwrap();
    let project_before = "# the team's settings\nmodel = \"gpt-5\"\n";
    let user_before = "[projects.\"/elsewhere\"]\ntrust_level = \"trusted\"\n";
    std::fs::write(&project, project_before).unwrap();
    std::fs::write(&user, user_before).unwrap();
    let read = |path: &Path| std::fs::read_to_string(path).unwrap();

    let shown = setup_codex(&lab, &["--dry-run"]);
    assert_contains(&shown, "+[[hooks.PreToolUse]]");
    assert_contains(&shown, "+trusted_hash = \"sha256:");
    assert_eq!(
        (read(&project), read(&user)),
        (project_before.into(), user_before.into())
    );

    setup_codex(&lab, &[]);
    let (project_set, user_set) = (read(&project), read(&user));
    assert!(project_set.starts_with(project_before), "{project_set}");
    assert_contains(&project_set, "hook codex --approve stage");
    assert!(user_set.starts_with(user_before), "{user_set}");
    let root = lab.root.canonicalize().unwrap();
    let key = format!(
        "[hooks.state.\"{}:pre_tool_use:0:0\"]",
        root.join(".codex/config.toml").display()
    );
    assert_contains(&user_set, &key);

    let again = setup_codex(&lab, &[]);
    assert!(again.matches("nothing to change").count() == 2, "{again}");
    assert_eq!(
        (read(&project), read(&user)),
        (project_set.clone(), user_set.clone())
    );

    setup_codex(&lab, &["--approve", "review"]);
    assert_eq!(
        read(&project),
        project_set.replace("--approve stage", "--approve review")
    );
    assert_ne!(
        read(&user),
        user_set,
        "another command has another trusted hash"
    );

    setup_codex(&lab, &["--remove"]);
    assert_eq!(
        (read(&project), read(&user)),
        (project_before.into(), user_before.into())
    );
}

/// A project configuration setup created holds only what it added: `--remove` takes the file
/// away again.
#[test]
fn setup_codex_remove_deletes_a_file_it_created() {
    let lab = Lab::new();
    let project = lab.root.join(".codex/config.toml");
    setup_codex(&lab, &[]);
    assert!(project.is_file());
    setup_codex(&lab, &["--remove"]);
    assert!(!project.exists(), "the file setup created is gone");
}

/// `resolve hook codex` on `stdin` for the lab's root: exit code, stdout, stderr.
fn hook(lab: &Lab, stdin: &str) -> (Option<i32>, String, String) {
    let output = output_with_stdin(
        Command::new(env!("CARGO_BIN_EXE_resolve"))
            .env("HOME", &lab.home)
            .arg("--root")
            .arg(&lab.root)
            .args(["hook", "codex"]),
        stdin,
    );
    (
        output.status.code(),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

/// The hook never exits with a code that lets Codex run the patch: unreadable input blocks
/// with exit code 2 and the reason on stderr; another shell command gets no decision (exit 0,
/// nothing printed); a patch outside the root is refused and writes nothing.
#[test]
fn hook_codex_fails_closed_and_leaves_other_shell_commands_alone() {
    let lab = Lab::new();
    lab.write("a.txt", A_BEFORE);
    let input = |tool: &str, command: &str| {
        json!({"session_id": "s1", "turn_id": "t1", "transcript_path": null,
            "cwd": lab.root, "hook_event_name": "PreToolUse", "model": "m",
            "permission_mode": "bypassPermissions", "tool_name": tool,
            "tool_input": {"command": command}, "tool_use_id": "c1"})
        .to_string()
    };

    let (code, stdout, stderr) = hook(&lab, "{not json");
    assert_eq!((code, stdout.as_str()), (Some(2), ""));
    assert_contains(&stderr, "is not Codex's PreToolUse JSON");

    let (code, stdout, stderr) = hook(&lab, &input("Write", "x"));
    assert_eq!((code, stdout.as_str()), (Some(2), ""));
    assert_contains(&stderr, "stages `apply_patch` only");

    assert_eq!(
        hook(&lab, &input("Bash", "ls -la")),
        (Some(0), String::new(), String::new())
    );

    let outside = "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: ../outside.txt\n+x\n*** End Patch\nEOF\n";
    let (code, stdout, _) = hook(&lab, &input("Bash", outside));
    assert_eq!(code, Some(0));
    let reason = serde_json::from_str::<serde_json::Value>(&stdout).unwrap()["hookSpecificOutput"]
        ["permissionDecisionReason"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_starts_with(&reason, "resolve refused this patch; nothing was written.");
    assert!(!lab.dir.parent().join("outside.txt").exists());
    assert_eq!(lab.try_read("a.txt").as_deref(), Some(A_BEFORE));
}
