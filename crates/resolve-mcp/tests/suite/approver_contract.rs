//! `approver_contract`: every approver — the model's word ([`AutoApprover`]), the MCP
//! elicitation form ([`FormAnswer`]), the terminal review ([`TerminalApprover`] over its
//! [`TerminalReview`] hook) and the standing rule ([`AwaitPerson`]) — is driven through apply,
//! apply part, discard and leave-pending, and each decision must land the same way through
//! the one pipeline: the same files written, the same history, the decider recorded.
//!
//! An approver that by its nature never gives one of the decisions (the model's word never
//! leaves a preview pending; the standing rule never decides) is checked to never give it.

use std::sync::Arc;

use pretty_assertions::assert_eq;
use resolve_core::{DecidedBy, ResolveAction, ResolveArgs};
use resolve_edit::{
    ApprovalRequest, ApprovalSubject, Approver, AutoApprover, AwaitPerson, Decision,
    OpenedWorkspace, Origin, Outcome, PlanReview, RecordKey, ResolveRequest, ReviewDecision,
    Selection, Store, TerminalApprover, TerminalReview, Workspace as StoreWorkspace,
    WorkspaceConfig,
};
use resolve_mcp::FormAnswer;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::common::Workspace;

/// The four decisions of the contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Case {
    Apply,
    ApplyPart,
    Discard,
    LeavePending,
}

const CASES: [Case; 4] = [
    Case::Apply,
    Case::ApplyPart,
    Case::Discard,
    Case::LeavePending,
];

/// What the model asks, and the approver set to answer `case` to it.
struct Drive {
    model: ResolveArgs,
    approver: Arc<dyn Approver>,
    by: DecidedBy,
}

const MODEL_REASON: &str = "The model wants both files.";
const PERSON_REASON: &str = "Not this one.";

fn model_apply(only: Option<&[&str]>) -> ResolveArgs {
    let args = ResolveArgs::new(ResolveAction::Apply, MODEL_REASON);
    match only {
        Some(only) => {
            let mut extra = serde_json::Map::new();
            extra.insert("only".into(), json!(only));
            args.with_extra(extra)
        }
        None => args,
    }
}

/// A terminal whose person answers with `decision`.
#[derive(Debug)]
struct ScriptedTerminal(Decision);

impl TerminalReview for ScriptedTerminal {
    fn review(&self, request: &ApprovalRequest) -> Decision {
        assert!(
            matches!(request.subject, ApprovalSubject::Action(_)),
            "the person is shown the stored action"
        );
        self.0.clone()
    }
}

fn form(answer: Value) -> Arc<dyn Approver> {
    Arc::new(FormAnswer::given(Some(&answer)))
}

fn terminal(decision: Decision) -> Arc<dyn Approver> {
    Arc::new(TerminalApprover::new(Arc::new(ScriptedTerminal(decision))))
}

/// The model's word: it applies what the model asks (part of it when the model's `extra`
/// selects part) and discards when the model discards; it never leaves a preview pending.
fn auto(case: Case) -> Option<Drive> {
    let model = match case {
        Case::Apply => model_apply(None),
        Case::ApplyPart => model_apply(Some(&[A])),
        Case::Discard => ResolveArgs::new(ResolveAction::Discard, PERSON_REASON),
        Case::LeavePending => return None,
    };
    Some(Drive {
        model,
        approver: Arc::new(AutoApprover),
        by: DecidedBy::Model,
    })
}

/// The elicitation form: accept with `apply` lands what the model asked (its selection
/// included), `discard` drops it with the person's reason, a decline leaves it pending.
fn mcp_form(case: Case) -> Option<Drive> {
    let (model, answer) = match case {
        Case::Apply => (
            model_apply(None),
            json!({"action": "accept", "content": {"decision": "apply"}}),
        ),
        Case::ApplyPart => (
            model_apply(Some(&[A])),
            json!({"action": "accept", "content": {"decision": "apply"}}),
        ),
        Case::Discard => (
            model_apply(None),
            json!({"action": "accept", "content": {"decision": "discard", "reason": PERSON_REASON}}),
        ),
        Case::LeavePending => (model_apply(None), json!({"action": "decline"})),
    };
    Some(Drive {
        model,
        approver: form(answer),
        by: DecidedBy::Person,
    })
}

/// The terminal review: the person's own pick replaces the model's request.
fn terminal_review(case: Case) -> Option<Drive> {
    let decision = match case {
        Case::Apply => Decision::Apply,
        Case::ApplyPart => Decision::ApplyPart(ReviewDecision {
            selection: Selection::only(&[A.to_owned()]).unwrap(),
            ..ReviewDecision::default()
        }),
        Case::Discard => Decision::Discard {
            reason: PERSON_REASON.to_owned(),
        },
        Case::LeavePending => Decision::LeavePending {
            why: "The person will decide later.".to_owned(),
        },
    };
    Some(Drive {
        model: model_apply(None),
        approver: terminal(decision),
        by: DecidedBy::Person,
    })
}

/// The standing rule: it only ever leaves a preview for a person elsewhere.
fn await_person(case: Case) -> Option<Drive> {
    (case == Case::LeavePending).then(|| Drive {
        model: model_apply(None),
        approver: Arc::new(AwaitPerson {
            why: "A person reviews every apply in a terminal.".to_owned(),
        }),
        by: DecidedBy::Policy,
    })
}

type Approvers = [(&'static str, fn(Case) -> Option<Drive>); 4];

const APPROVERS: Approvers = [
    ("auto", auto),
    ("mcp form", mcp_form),
    ("terminal", terminal_review),
    ("await person", await_person),
];

const A: &str = "src/a.rs";
const B: &str = "src/b.rs";
const A_BEFORE: &str = "fn a() { x.unwrap(); }\n";
const B_BEFORE: &str = "fn b() { y.unwrap(); }\n";
const A_AFTER: &str = "fn a() { x.expect(\"checked\"); }\n";
const B_AFTER: &str = "fn b() { y.expect(\"checked\"); }\n";

/// Stage one preview of two files for the agent, drive `drive` through the pipeline (the
/// agent's session over the opened workspace), and check the files and the history against
/// `case`.
async fn check(name: &str, case: Case, drive: Drive) {
    let workspace = Workspace::with(&[(A, A_BEFORE), (B, B_BEFORE)]);
    let store = Store::open(StoreWorkspace::open(workspace.root()).unwrap())
        .with_record_key(RecordKey::from_bytes([7; 32]));
    let opened = OpenedWorkspace::with_store(store, Origin::Agent, WorkspaceConfig::default());
    opened
        .tools()
        .call(
            "ast_edit",
            &json!({"ops": [{"pat": "$X.unwrap()", "out": "$X.expect(\"checked\")"}], "paths": ["src"]}),
        )
        .unwrap();
    let session = opened.session(drive.approver, None);
    let result = session
        .resolve_with(drive.model.clone(), None, &CancellationToken::new())
        .await;
    let files = (
        std::fs::read_to_string(workspace.path(A)).unwrap(),
        std::fs::read_to_string(workspace.path(B)).unwrap(),
    );
    let files = (files.0.as_str(), files.1.as_str());
    let history = opened.store().history().unwrap();
    let what = format!("{name} {case:?}: {result:?}");
    let pending = opened.store().pending().unwrap().len();
    if case == Case::LeavePending {
        // The model reads why nothing happened, as the tool's error.
        assert!(
            matches!(&result, Err(resolve_core::Error::Tool(why)) if !why.is_empty()),
            "{what}"
        );
        assert!(history.is_empty(), "{what}");
        assert_eq!(pending, 1, "{what}");
        assert_eq!(files, (A_BEFORE, B_BEFORE), "{what}");
        return;
    }
    assert!(result.is_ok(), "{what}");
    assert_eq!(pending, 0, "{what}");
    let [entry] = history.as_slice() else {
        panic!("one history record: {what}");
    };
    assert_eq!(entry.decided_by, Some(drive.by), "{what}");
    // Someone else deciding over the model keeps the model's reason beside theirs.
    let model_reason = (drive.by != DecidedBy::Model && entry.reason != MODEL_REASON)
        .then(|| MODEL_REASON.to_owned());
    assert_eq!(entry.model_reason, model_reason, "{what}");
    match case {
        Case::Apply => {
            assert_eq!(entry.outcome, Outcome::Applied, "{what}");
            assert_eq!(files, (A_AFTER, B_AFTER), "{what}");
            assert_eq!(entry.applied_files, [A, B], "{what}");
        }
        Case::ApplyPart => {
            assert_eq!(entry.outcome, Outcome::Applied, "{what}");
            assert_eq!(files, (A_AFTER, B_BEFORE), "{what}");
            assert_eq!(entry.applied_files, [A], "{what}");
            assert_eq!(entry.dropped_files, [B], "{what}");
        }
        Case::Discard => {
            assert_eq!(entry.outcome, Outcome::Discarded, "{what}");
            assert_eq!(files, (A_BEFORE, B_BEFORE), "{what}");
            assert_eq!(entry.reason, PERSON_REASON, "{what}");
        }
        Case::LeavePending => unreachable!("returned above"),
    }
}

/// The model's word never leaves a preview pending, and the standing rule never decides:
/// whatever the model asks.
#[tokio::test]
async fn the_model_s_word_always_decides_and_the_standing_rule_never_does() {
    let rule = AwaitPerson {
        why: "A person decides.".to_owned(),
    };
    for action in [ResolveAction::Apply, ResolveAction::Discard] {
        let request = ApprovalRequest {
            subject: ApprovalSubject::Plan(PlanReview {
                path: ".resolve/plans/p.md".to_owned(),
                title: "p".to_owned(),
                content: "# p\n".to_owned(),
            }),
            model: ResolveRequest::model(action, MODEL_REASON),
        };
        let decided = AutoApprover.decide(&request).await;
        assert_eq!(decided.decision, request.as_asked());
        assert_eq!(decided.by, DecidedBy::Model);
        let decided = rule.decide(&request).await;
        assert!(
            matches!(decided.decision, Decision::LeavePending { .. }),
            "{decided:?}"
        );
        assert_eq!(decided.by, DecidedBy::Policy);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_approver_lands_each_decision_through_the_one_pipeline() {
    for (name, drive) in APPROVERS {
        for case in CASES {
            if let Some(drive) = drive(case) {
                check(name, case, drive).await;
            }
        }
    }
}
