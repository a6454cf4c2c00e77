//! `resolve agent` against a broken or hostile model server (issue #35, item 9): Ctrl-C while
//! the server trickles bytes ends the run at once with `Cancelled.` and exit 1 (a pending
//! preview stays pending, no file is touched), and a line that never ends fails the run with
//! the bound's error while the process's peak memory stays small. Hang checks only (generous
//! bounds, failing the test when the process does not exit), no timing asserts.

use resolve_test_support::text::assert_contains;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use resolve_test_support::{Reply, Turn};
use serde_json::json;

use super::common::{Model, Run, Workspace};

/// `resolve agent` against `model`, running in the background.
fn spawn_agent(workspace: &Workspace, model: &Model) -> Child {
    let base = model.openai_base();
    workspace
        .command(&[
            "agent",
            "--base-url",
            &base,
            "--model",
            "mock",
            "--api-key-env",
            "RESOLVE_TEST_NO_KEY",
            "Change one to uno in a.txt.",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Wait for `child` to exit, failing the test (and killing it) after `bound`. While it runs,
/// `watch` sees its pid now and then.
fn wait_bounded(mut child: Child, bound: Duration, mut watch: impl FnMut(u32)) -> Run {
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return Run::from(child.wait_with_output().unwrap());
        }
        watch(child.id());
        if start.elapsed() > bound {
            let _ = child.kill();
            let run = Run::from(child.wait_with_output().unwrap());
            panic!(
                "`resolve agent` did not exit within {bound:?}\n--- stdout\n{}\n--- stderr\n{}",
                run.stdout, run.stderr
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The peak resident memory of process `pid` so far, in KiB (`VmHWM`), if it can be read.
fn peak_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn ctrl_c_while_the_server_trickles_ends_the_run_and_keeps_the_pending_preview() {
    let workspace = Workspace::with(&[("a.txt", "one\n")]);
    let model = Model::replies(vec![
        Reply::Turn(Turn::call(
            "c1",
            "edit",
            json!({"path": "a.txt", "old_text": "one", "new_text": "uno"}),
        )),
        Reply::Endless {
            content_type: "text/event-stream",
            head: "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Thinking\"}}]}\n\n"
                .to_owned(),
            repeat: "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\".\"}}]}\n\n"
                .to_owned(),
            pause: Some(Duration::from_millis(50)),
        },
    ]);
    let child = spawn_agent(&workspace, &model);
    let pid = child.id();
    let mut interrupted = false;
    let run = wait_bounded(child, Duration::from_secs(60), |_| {
        // Once the second request streams, press Ctrl-C.
        if !interrupted && model.bodies().len() >= 2 {
            std::thread::sleep(Duration::from_millis(200));
            let sent = std::process::Command::new("kill")
                .args(["-INT", &pid.to_string()])
                .status()
                .unwrap();
            assert!(sent.success());
            interrupted = true;
        }
    });
    assert!(interrupted, "the run ended before Ctrl-C: {}", run.stderr);
    let run = run.expect_code(1);
    assert_contains(&run.stderr, "Cancelled.");
    assert_eq!(workspace.read("a.txt"), "one\n", "nothing was written");
    assert_eq!(
        workspace.pending_ids(),
        vec!["pending-action:edit:1".to_owned()],
        "the preview stays pending for the next run"
    );
}

#[test]
fn an_sse_line_that_never_ends_fails_the_run_with_the_bound_and_small_peak_memory() {
    let workspace = Workspace::with(&[("a.txt", "one\n")]);
    let model = Model::replies(vec![Reply::Endless {
        content_type: "text/event-stream",
        head: "data: ".to_owned(),
        repeat: "x".repeat(64 * 1024),
        pause: None,
    }]);
    let child = spawn_agent(&workspace, &model);
    let mut peak = 0;
    let run = wait_bounded(child, Duration::from_secs(120), |pid| {
        peak = peak.max(peak_kib(pid).unwrap_or(0));
    });
    let run = run.expect_code(1);
    assert_contains(
        &run.stderr,
        "sent an SSE line longer than 8 MiB; the response was dropped and not retried.",
    );
    assert_eq!(model.bodies().len(), 1, "not retried");
    assert!(peak < 200 * 1024, "peak resident memory {peak} KiB");
}
