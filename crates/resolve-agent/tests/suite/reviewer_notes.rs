//! What a person did to an action the model staged reaches the model once, as its own message
//! before the next request (user role; a text block in the user turn for Anthropic), and only
//! for the origin that staged it.

use std::sync::Arc;

use pretty_assertions::assert_eq;
use resolve_agent::{
    AgentEvent, AgentSession, ProviderKind, StoreReviewerNotes, Tool, ToolContext, ToolFuture,
};
use resolve_core::{ToolResult, ToolSpec};
use resolve_edit::{
    FileTools, HunkAddress, HunkRejection, Origin, ReviewDecision, Selection, Store, Workspace,
    apply_reviewed,
};
use resolve_test_support::text::marked_numbered_lines;
use resolve_test_support::{MockServer, Reply};
use serde_json::{Value, json};

use super::support::{Events, config, no_arguments_spec, run_recording};
use crate::both_providers;

/// Stage a `write` of `path` for `origin`; its pending id.
fn stage_write(store: &Store, origin: Origin, path: &str, content: &str) -> String {
    let result = FileTools::new(store.clone(), origin)
        .call("write", &json!({"path": path, "content": content}))
        .unwrap();
    result.details.unwrap()["pendingId"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// A tool with which the test plays the person in another terminal: running it discards the
/// action `id` as a person would (`resolve discard`).
#[derive(Debug)]
struct PersonDiscards {
    store: Store,
    id: String,
}

impl Tool for PersonDiscards {
    fn spec(&self) -> ToolSpec {
        no_arguments_spec("wait", "Wait a moment.")
    }

    fn execute<'a>(&'a self, _args: Value, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            self.store
                .clone()
                .resolved_by(Origin::Cli)
                .discard(&self.id, "Not in this change.", None)
                .unwrap();
            Ok(ToolResult::text("waited"))
        })
    }
}

/// Every text the request carries in the user role (plain contents and text blocks).
fn user_texts(body: &Value) -> Vec<String> {
    let mut texts = Vec::new();
    for message in body["messages"].as_array().unwrap() {
        if message["role"] != "user" {
            continue;
        }
        match &message["content"] {
            Value::String(text) => texts.push(text.clone()),
            Value::Array(blocks) => texts.extend(
                blocks
                    .iter()
                    .filter(|block| block["type"] == "text")
                    .map(|block| block["text"].as_str().unwrap().to_owned()),
            ),
            _ => {}
        }
    }
    texts
}

async fn a_persons_decisions_reach_the_model_once_before_its_next_request(kind: ProviderKind) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), marked_numbered_lines(20, &[])).unwrap();
    std::fs::write(dir.path().join("b.txt"), "b\n").unwrap();
    let store = Store::open(Workspace::open(dir.path()).unwrap());
    let person = store.clone().resolved_by(Origin::Cli);
    // Left pending by an earlier run; a person applies part of it in a terminal.
    let partial = stage_write(
        &store,
        Origin::Agent,
        "a.txt",
        &marked_numbered_lines(20, &[2, 19]),
    );
    let decision = ReviewDecision {
        selection: Selection::Except(vec![HunkAddress::hunk("a.txt", 2)]),
        rejections: vec![HunkRejection {
            address: HunkAddress::hunk("a.txt", 2),
            reason: "keep line 19".into(),
        }],
        fingerprint: None,
    };
    apply_reviewed(&person, &partial, &decision, "Only line 2.", None).unwrap();
    // Another origin's decision is not this model's business.
    let other = stage_write(&store, Origin::Mcp("c1".into()), "b.txt", "B\n");
    person.discard(&other, "Not yours to hear.", None).unwrap();
    // Discarded by the person while the run goes on.
    let later = stage_write(&store, Origin::Agent, "b.txt", "bee\n");

    let server = MockServer::start(vec![
        Reply::call("c1", "wait", json!({})),
        Reply::text("Understood."),
    ])
    .await;
    let mut builder = AgentSession::builder(config(&server, kind));
    builder
        .tool(Arc::new(PersonDiscards {
            store: store.clone(),
            id: later.clone(),
        }))
        .reviewer_notes(Arc::new(StoreReviewerNotes::new(
            store.clone(),
            Origin::Agent,
        )));
    let mut session = builder.build().unwrap();
    let events = Events::default();
    run_recording(&mut session, "Go on.", &events)
        .await
        .unwrap();

    let first_note = format!(
        "<system-reminder>\nA reviewer resolved {partial} (Write: a.txt): applied a.txt#1; rejected a.txt#2 (\"keep line 19\").\nReason: \"Only line 2.\"\n</system-reminder>"
    );
    let second_note = format!(
        "<system-reminder>\nA reviewer discarded {later} (Write: b.txt); nothing was written.\nReason: \"Not in this change.\"\n</system-reminder>"
    );
    let bodies = server.bodies();
    assert_eq!(bodies.len(), 2);
    assert_eq!(
        user_texts(&bodies[0]),
        ["Go on.".to_owned(), first_note.clone()],
        "the first request carries the note as its own message after the task"
    );
    let texts = user_texts(&bodies[1]);
    assert_eq!(
        texts.iter().filter(|text| **text == first_note).count(),
        1,
        "told once: {texts:?}"
    );
    assert_eq!(texts.last(), Some(&second_note), "{texts:?}");
    assert!(
        texts
            .iter()
            .all(|text| !text.contains("Not yours to hear.")),
        "{texts:?}"
    );
    let told: Vec<String> = events.picked(|event| match event {
        AgentEvent::ReviewerNote { text } => Some(text),
        _ => None,
    });
    assert_eq!(told, [first_note, second_note]);
    assert!(
        store
            .take_reviewer_notes(&Origin::Mcp("c1".into()))
            .unwrap()
            .len()
            == 1,
        "the other origin's note waits for it"
    );
}
both_providers!(a_persons_decisions_reach_the_model_once_before_its_next_request);

#[test]
fn a_file_that_moved_under_a_pending_preview_is_told_to_its_origin_once_with_its_conflict() {
    use resolve_agent::ReviewerNotes;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "a\nb\nc\nd\ne\nf\n").unwrap();
    let store = resolve_edit::rebasing_store(Workspace::open(dir.path()).unwrap());
    let id = stage_write(&store, Origin::Agent, "a.txt", "a\nB\nc\nd\ne\nf\n");
    let agent = StoreReviewerNotes::new(store.clone(), Origin::Agent);
    let other = StoreReviewerNotes::new(store, Origin::Mcp("c1".into()));
    assert_eq!(
        agent.take().unwrap(),
        Vec::<String>::new(),
        "nothing moved yet"
    );
    std::fs::write(dir.path().join("a.txt"), "a\nX\nc\nd\ne\nf\n").unwrap();
    assert_eq!(
        other.take().unwrap(),
        Vec::<String>::new(),
        "only its origin"
    );
    let told = agent.take().unwrap();
    assert_eq!(told.len(), 1, "{told:?}");
    for expected in [
        format!("a.txt changed since you staged {id} (Write: a.txt). Your preview now conflicts"),
        "a.txt:2 (preview) against a.txt:2 (current):".to_owned(),
        "  | X".to_owned(),
        "  | B".to_owned(),
    ] {
        assert!(told[0].contains(&expected), "{expected}\n{}", told[0]);
    }
    assert_eq!(agent.take().unwrap(), Vec::<String>::new(), "told once");
    std::fs::write(dir.path().join("a.txt"), "a\nb\nc\nd\ne\nF\n").unwrap();
    let again = agent.take().unwrap();
    assert_eq!(again.len(), 1, "a further move is news: {again:?}");
    assert!(
        again[0].contains("still rebases onto those changes cleanly"),
        "{}",
        again[0]
    );
}
