//! Commands named in a workspace's `.resolve/config.toml` (a clone's, or one a model wrote)
//! run only after `resolve trust` recorded that exact file's hash outside the workspace
//! (issue #35 item 2).

use resolve_edit::{
    Content, McpAction, McpToolCall, NewAction, Origin, Store, Workspace as StoreWorkspace,
};
use resolve_test_support::Turn;
use resolve_test_support::text::assert_contains;
use serde_json::{Value, json};

use super::common::{Model, Run, Workspace, resolve, run_agent};

/// A `[check]` table whose command leaves `marker` in the directory it runs in.
const CHECK_MARKS: &str = "[check]\ncommand = [\"sh\", \"-c\", \"touch marker\"]\n";

/// A workspace as cloned: `a.txt` and a planted configuration, with a preview pending.
fn cloned(config: &str) -> Workspace {
    let workspace = Workspace::with(&[("a.txt", "a\n"), (".resolve/config.toml", config)]);
    workspace.run_ok(&["edit", "a.txt", "--old", "a", "--new", "A"]);
    workspace
}

#[test]
fn a_cloned_check_command_runs_only_after_resolve_trust_and_again_only_after_a_change_is_trusted() {
    let workspace = cloned(CHECK_MARKS);
    let refused = workspace.run_fails(&["check"]);
    assert!(!workspace.path("marker").exists(), "nothing ran");
    assert_contains(&refused.stderr, "is not trusted");
    assert_contains(&refused.stderr, "`sh -c 'touch marker'` ([check])");
    assert_contains(&refused.stderr, "run `resolve trust --root /");

    let trusted = workspace.run_ok(&["trust"]);
    assert_contains(&trusted.stdout, "[check] sh -c 'touch marker'");
    workspace.run_ok(&["check"]);
    assert!(workspace.path("marker").exists(), "the trusted command ran");

    // Any change to the file makes it untrusted again.
    std::fs::remove_file(workspace.path("marker")).unwrap();
    workspace.write(
        ".resolve/config.toml",
        format!("{CHECK_MARKS}timeout_sec = 30\n").as_bytes(),
    );
    let changed = workspace.run_fails(&["check"]);
    assert_contains(&changed.stderr, "changed since it was trusted");
    assert!(!workspace.path("marker").exists(), "nothing ran");
    // The records live outside the workspace.
    assert!(workspace.user_dir().join("trusted.json").is_file());
}

#[test]
fn a_command_given_after_dashes_or_in_a_file_the_person_names_needs_no_trust() {
    let workspace = cloned(CHECK_MARKS);
    workspace.run_ok(&["check", "--", "sh", "-c", "touch given"]);
    assert!(workspace.path("given").exists());
    let mine = tempfile::tempdir().unwrap();
    let file = mine.path().join("check.toml");
    std::fs::write(
        &file,
        "[check]\ncommand = [\"sh\", \"-c\", \"touch named\"]\n",
    )
    .unwrap();
    workspace.run_ok(&["check", "--config", file.to_str().unwrap()]);
    assert!(workspace.path("named").exists());
    // Naming the workspace's own file does not make it trusted.
    let own = workspace.path(".resolve/config.toml");
    let refused = workspace.run_fails(&["check", "--config", own.to_str().unwrap()]);
    assert_contains(&refused.stderr, "run `resolve trust --config /");
    assert!(!workspace.path("marker").exists());
}

#[test]
fn trust_json_list_and_remove_report_and_forget_the_record() {
    let workspace = cloned(CHECK_MARKS);
    let trusted = workspace.run_ok(&["--json", "trust"]);
    let value: Value = serde_json::from_str(trusted.stdout.trim()).unwrap();
    assert_eq!(value["trusted"], true);
    assert_eq!(
        value["commands"],
        json!([{"table": "check", "command": ["sh", "-c", "touch marker"]}])
    );
    let path = value["path"].as_str().unwrap().to_owned();
    assert!(path.ends_with("/.resolve/config.toml"), "{path}");

    let list = workspace.run_ok(&["--json", "trust", "--list"]);
    let value: Value = serde_json::from_str(list.stdout.trim()).unwrap();
    assert_eq!(value["trusted"][0]["path"], path.as_str());
    assert_eq!(value["trusted"][0]["state"], "trusted");
    workspace.write(".resolve/config.toml", b"# edited\n");
    let list = workspace.run_ok(&["trust", "--list"]);
    assert!(list.stdout.starts_with("changed"), "{}", list.stdout);

    workspace.write(".resolve/config.toml", CHECK_MARKS.as_bytes());
    workspace.run_ok(&["check"]);
    let removed = workspace.run_ok(&["--json", "trust", "--remove"]);
    let value: Value = serde_json::from_str(removed.stdout.trim()).unwrap();
    assert_eq!(value["removed"], true);
    std::fs::remove_file(workspace.path("marker")).unwrap();
    workspace.run_fails(&["check"]);
    assert!(!workspace.path("marker").exists());
}

#[test]
fn resolve_agent_refuses_an_untrusted_mcp_server_before_any_model_call_or_start() {
    let workspace = Workspace::with(&[
        ("a.txt", "a\n"),
        (
            ".resolve/config.toml",
            "[mcp_servers.evil]\ncommand = \"sh\"\nargs = [\"-c\", \"touch marker\"]\n",
        ),
    ]);
    let model = Model::start(vec![Turn::text("Done.")]);
    let run = run_agent(&workspace, &model, &[], "Do it.", "").expect_code(1);
    assert_contains(&run.stderr, "`sh -c 'touch marker'` ([mcp_servers.evil])");
    assert_contains(&run.stderr, "resolve trust");
    assert!(model.bodies().is_empty(), "no model call was made");
    assert!(!workspace.path("marker").exists(), "no server was started");
}

#[test]
fn resolve_agent_refuses_an_untrusted_check_command_before_any_model_call() {
    let workspace = Workspace::with(&[("a.txt", "a\n"), (".resolve/config.toml", CHECK_MARKS)]);
    let model = Model::start(vec![Turn::text("Done.")]);
    let run = run_agent(&workspace, &model, &[], "Do it.", "").expect_code(1);
    assert_contains(&run.stderr, "is not trusted");
    assert!(model.bodies().is_empty(), "no model call was made");
}

#[test]
fn applying_a_planted_mcp_pending_action_starts_no_untrusted_server() {
    let workspace = Workspace::with(&[(
        ".resolve/config.toml",
        "[mcp_servers.evil]\ncommand = \"sh\"\nargs = [\"-c\", \"touch marker\"]\n",
    )]);
    let store = Store::open(StoreWorkspace::open(workspace.root()).unwrap());
    store
        .stage_mcp(
            NewAction {
                origin: Origin::Agent,
                source_tool: "evil__stage".to_owned(),
                label: "Evil: stage".to_owned(),
                preview_text: Content::Text("A note.".to_owned()),
                details: Value::Null,
            },
            McpAction {
                server: "evil".to_owned(),
                apply: McpToolCall {
                    tool: "apply".to_owned(),
                    arguments: serde_json::Map::new(),
                },
                reject: Some(McpToolCall {
                    tool: "reject".to_owned(),
                    arguments: serde_json::Map::new(),
                }),
            },
        )
        .unwrap();
    // The planted record is foreign (signed by no key of this user's), so only a person naming
    // it gets this far; even then its server does not start untrusted.
    let id = workspace.pending_ids()[0].clone();
    for args in [
        &["apply", "--reason", "Go.", "--id", &id][..],
        &["discard", "--reason", "No.", "--id", &id][..],
    ] {
        let run = workspace.run(args).expect_code(1);
        assert_contains(&run.stderr, "is not trusted");
        assert_contains(&run.stderr, "`sh -c 'touch marker'` ([mcp_servers.evil])");
        assert!(!workspace.path("marker").exists(), "no server was started");
        assert_eq!(workspace.pending_ids().len(), 1, "the action stays pending");
    }
}

#[test]
fn a_nested_roots_configuration_written_inside_the_outer_root_is_untrusted() {
    // What a model could write through the outer root's tools: a file in a subdirectory.
    let workspace = Workspace::with(&[
        ("sub/a.txt", "a\n"),
        ("sub/.resolve/config.toml", CHECK_MARKS),
    ]);
    // Trusting the outer root's (absent) configuration trusts nothing below it.
    workspace.run_fails(&["trust"]);
    let in_sub = |args: &[&str]| {
        Run::from(
            resolve()
                .arg("--root")
                .arg(workspace.path("sub"))
                .args(args)
                .env("HOME", workspace.home())
                .output()
                .unwrap(),
        )
    };
    in_sub(&["edit", "a.txt", "--old", "a", "--new", "A"]).expect_code(0);
    let refused = in_sub(&["check"]).expect_code(1);
    assert_contains(&refused.stderr, "is not trusted");
    assert_contains(&refused.stderr, "/sub/.resolve/config.toml");
    assert!(!workspace.path("sub/marker").exists());
}
