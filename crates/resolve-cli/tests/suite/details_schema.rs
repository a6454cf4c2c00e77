//! Every fact a result gives programs matches the schema its tool advertises: a real
//! `resolve mcp` server lists each producer's, `check`'s and `resolve`'s details schema under
//! the tool's `_meta["resolve/detailsSchema"]`, and the details of every kind of result those
//! tools give (a staged preview, nothing staged, a check, an apply whole and in part, a
//! discard, nothing to discard) validate against it. `resolve --json ast-edit` and
//! `resolve --json apply` carry the same facts.

use resolve_test_support::text::numbered_lines;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use pretty_assertions::assert_eq;
use resolve_core::schema::validate;
use resolve_test_support::McpChild;
use serde_json::{Value, json};

/// `resolve` with `HOME` set to `home` (where trust records live).
fn resolve(root: &Path, home: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_resolve"));
    command.arg("--root").arg(root).env("HOME", home);
    command
}

/// A `resolve mcp` process spoken to line by line, and the schemas its tools advertise.
struct Server {
    mcp: McpChild,
    schemas: BTreeMap<String, Value>,
}

impl Server {
    fn start(root: &Path, home: &Path) -> Self {
        let mut command = resolve(root, home);
        command.arg("mcp");
        let mut server = Self {
            mcp: McpChild::start(command, "details-schema"),
            schemas: BTreeMap::new(),
        };
        let listed = server.mcp.request("tools/list", json!({}));
        for tool in listed["tools"].as_array().unwrap() {
            assert!(tool.get("outputSchema").is_none(), "{tool}");
            if let Some(schema) = tool["_meta"].get("resolve/detailsSchema") {
                server
                    .schemas
                    .insert(tool["name"].as_str().unwrap().to_owned(), schema.clone());
            }
        }
        server
    }

    /// Call `tool` with `arguments`; the result must succeed and carry details that validate
    /// against the tool's advertised schema. Returns the details.
    fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let result = self.mcp.call(tool, arguments);
        assert_eq!(result["isError"], json!(false), "{tool}: {result}");
        assert!(result.get("structuredContent").is_none(), "{result}");
        let details = result["_meta"]["resolve/details"].clone();
        let schema = self
            .schemas
            .get(tool)
            .unwrap_or_else(|| panic!("`{tool}` advertises no details schema"));
        if let Err(violation) = validate(schema, &details) {
            panic!("the details of `{tool}` break its schema: {violation}\n{details}\n{schema}");
        }
        details
    }
}

/// Lines `1` to `20`, the lines numbered in `changed` spelled out as words.
fn numbered(changed: &[usize]) -> String {
    numbered_lines(
        20,
        changed,
        |n| n.to_string(),
        |n| format!("line {n} changed"),
    )
}

#[test]
fn every_producer_check_and_resolve_result_matches_its_advertised_details_schema() {
    let root = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("src")).unwrap();
    std::fs::create_dir_all(root.path().join(".resolve")).unwrap();
    std::fs::write(root.path().join("a.txt"), numbered(&[])).unwrap();
    std::fs::write(
        root.path().join("src/b.rs"),
        "fn a() { foo(1) }\nfn b() { foo(2) }\n",
    )
    .unwrap();
    std::fs::write(
        root.path().join(".resolve/config.toml"),
        "[check]\ncommand = [\"sh\", \"-c\", \"echo checked\"]\n",
    )
    .unwrap();
    let trusted = resolve(root.path(), home.path())
        .arg("trust")
        .output()
        .unwrap();
    assert!(trusted.status.success(), "{trusted:?}");
    let mut server = Server::start(root.path(), home.path());
    assert_eq!(
        server.schemas.keys().collect::<Vec<_>>(),
        [
            "apply_patch",
            "ast_edit",
            "check",
            "edit",
            "resolve",
            "write"
        ],
        "the producers, check and resolve advertise a schema; read, ls and grep none"
    );

    // A preview of two hunks: its facts come from the hunk model.
    let staged = server.call(
        "write",
        json!({"path": "a.txt", "content": numbered(&[2, 19])}),
    );
    let id = staged["pendingId"].as_str().unwrap().to_owned();
    assert_eq!(
        (
            &staged["resource"],
            &staged["applied"],
            &staged["scopePath"]
        ),
        (
            &json!(format!("resolve://pending/{id}")),
            &json!(false),
            &Value::Null
        )
    );
    assert_eq!(
        staged["files"],
        json!([{"path": "a.txt", "added": 2, "removed": 2, "hunks": ["a.txt#1", "a.txt#2"]}])
    );
    // It is checked, then applied in part: the hunk left out is named.
    let checked = server.call("check", json!({}));
    assert_eq!(
        (&checked["pendingId"], &checked["check"]["passed"]),
        (&json!(id), &json!(true))
    );
    let applied = server.call(
        "resolve",
        json!({"action": "apply", "reason": "The first hunk only.", "extra": {"only": ["a.txt#1"]}}),
    );
    assert_eq!(
        (
            &applied["outcome"],
            &applied["pendingId"],
            &applied["decidedBy"],
            &applied["appliedFiles"],
            &applied["droppedHunks"]
        ),
        (
            &json!("applied"),
            &json!(id),
            &json!("model"),
            &json!(["a.txt"]),
            &json!(["a.txt#2"])
        )
    );

    // ast_edit names the scope it searched; the preview is discarded.
    let rewritten = server.call(
        "ast_edit",
        json!({"ops": [{"pat": "foo($X)", "out": "bar($X)"}], "paths": ["src/b.rs"], "lang": "rust"}),
    );
    assert_eq!(rewritten["scopePath"], "src/b.rs");
    assert_eq!(
        (&rewritten["added"], &rewritten["removed"]),
        (&json!(2), &json!(2))
    );
    let discarded = server.call(
        "resolve",
        json!({"action": "discard", "reason": "Not now."}),
    );
    assert_eq!(
        (&discarded["outcome"], &discarded["decidedBy"]),
        (&json!("discarded"), &json!("model"))
    );

    // apply_patch lists what it does to each file beside the facts' files.
    let patched = server.call(
        "apply_patch",
        json!({"input": "*** Begin Patch\n*** Add File: c.txt\n+one\n*** Update File: src/b.rs\n@@\n-fn a() { foo(1) }\n+fn a() { foo(10) }\n*** End Patch\n"}),
    );
    assert_eq!(
        patched["changes"],
        json!([{"path": "c.txt", "change": "add"}, {"path": "src/b.rs", "change": "update"}])
    );
    assert_eq!(
        patched["files"],
        json!([
            {"path": "c.txt", "added": 1, "removed": 0, "hunks": ["c.txt#1"]},
            {"path": "src/b.rs", "added": 1, "removed": 1, "hunks": ["src/b.rs#1"]}
        ])
    );
    server.call(
        "resolve",
        json!({"action": "discard", "reason": "Not now."}),
    );

    // Nothing staged, and nothing to discard.
    let nothing = server.call(
        "ast_edit",
        json!({"ops": [{"pat": "missing($X)", "out": "x($X)"}], "paths": ["src"], "lang": "rust"}),
    );
    assert_eq!(
        (&nothing["pendingId"], &nothing["files"]),
        (&Value::Null, &json!([]))
    );
    let none = server.call("resolve", json!({"action": "discard", "reason": "Tidy."}));
    assert_eq!(
        (&none["outcome"], &none["decidedBy"]),
        (&json!("nothing_pending"), &Value::Null)
    );

    // An empty file created is one hunk to take or leave, as the hunk model numbers it.
    let created = server.call("write", json!({"path": "empty.txt", "content": ""}));
    assert_eq!(
        created["files"],
        json!([{"path": "empty.txt", "added": 0, "removed": 0, "hunks": ["empty.txt#1"]}])
    );
    let applied = server.call(
        "resolve",
        json!({"action": "apply", "reason": "Create it.", "extra": {"only": ["empty.txt#1"]}}),
    );
    assert_eq!(applied["appliedFiles"], json!(["empty.txt"]));
    assert_eq!(std::fs::read(root.path().join("empty.txt")).unwrap(), b"");

    let edited = server.call(
        "edit",
        json!({"path": "src/b.rs", "old_text": "foo(1)", "new_text": "one()"}),
    );
    assert_eq!(edited["files"][0]["hunks"], json!(["src/b.rs#1"]));

    // The CLI's `--json` gives the same facts for the same kind of preview.
    let schema = server.schemas["ast_edit"].clone();
    let resolve_schema = server.schemas["resolve"].clone();
    drop(server);
    let cli = resolve(root.path(), home.path())
        .args([
            "--json", "ast-edit", "-p", "foo($X)", "-r", "bar($X)", "src/b.rs",
        ])
        .output()
        .unwrap();
    assert!(cli.status.success(), "{cli:?}");
    let printed: Value = serde_json::from_slice(&cli.stdout).unwrap();
    validate(&schema, &printed["details"]).unwrap();
    assert_eq!(printed["details"]["pendingId"], printed["pendingId"]);
    assert!(
        printed["pendingId"]
            .as_str()
            .unwrap()
            .starts_with("pending-action:ast_edit:"),
        "{printed}"
    );
    assert_eq!(
        printed["details"]["files"],
        json!([{"path": "src/b.rs", "added": 2, "removed": 2, "hunks": ["src/b.rs#1"]}])
    );

    // And the CLI's apply gives what `resolve` gives, decided by a person.
    let applied = resolve(root.path(), home.path())
        .args(["--json", "apply", "--reason", "Rename it."])
        .output()
        .unwrap();
    assert!(applied.status.success(), "{applied:?}");
    let printed_apply: Value = serde_json::from_slice(&applied.stdout).unwrap();
    let details = &printed_apply["details"];
    validate(&resolve_schema, details).unwrap();
    assert_eq!(
        (
            &details["outcome"],
            &details["pendingId"],
            &details["decidedBy"],
            &details["appliedFiles"]
        ),
        (
            &json!("applied"),
            &printed["pendingId"],
            &json!("person"),
            &json!(["src/b.rs"])
        )
    );
}
