//! The question put to a person about an `apply` the model asks for (`resolve mcp --approve
//! ask`): what they are shown, the form they answer, how an answer is read ([`FormAnswer`],
//! the elicitation form as an [`Approver`], on both protocol versions), and the texts the model
//! reads afterwards.
//!
//! Only the person's *accept* with the decision `apply` lets an apply run under `ask`; every
//! other answer (decline, cancel, `discard`, a missing or malformed form) writes no file, and
//! `discard` discards with the person's reason. `review` never applies on the model's word.

use std::path::Path;

use resolve_core::{DecidedBy, PreviewFile, quote_path, visible_line};
use resolve_edit::{
    ApprovalMode, ApprovalRequest, ApproveTimeout, Approver, Decided, Decision, DecisionFuture,
    EditError, Origin, PendingRecord, Store, content_hash, preview_files,
};
use rmcp::RoleServer;
use rmcp::model::{ElicitRequestParams, ElicitationSchema};
use rmcp::service::{Peer, ServiceError};
use serde_json::{Value, json};

/// The key of the approval question inside an input-required result.
pub(crate) const APPROVAL_INPUT_KEY: &str = "approval";

/// The pending action a person is asked about, as it is now.
#[derive(Debug, Clone)]
pub(crate) struct Subject {
    /// Its pending id.
    pub id: String,
    /// Its label.
    pub label: String,
    /// Who staged it.
    pub origin: Origin,
    /// Whether this user's resolve did not stage it (see `PendingRecord::foreign`).
    pub foreign: bool,
    /// Its files with their line counts (from the hunk model: what the apply writes).
    pub files: Vec<PreviewFile>,
    /// A digest of everything the person is shown and the apply depends on: the connection,
    /// the pending id, the change set (with each file's base hash) and the preview text.
    pub binding: String,
}

impl Subject {
    /// The pending action `id` of `connection` as it is in the store now, with the record it
    /// was read from (what an [`Approver`] is shown); `None` when it is no longer pending.
    pub(crate) fn read(
        store: &Store,
        connection: &Origin,
        id: &str,
    ) -> Result<Option<(Self, PendingRecord)>, EditError> {
        let Some(record) = store.pending_record(id)? else {
            return Ok(None);
        };
        // Derived from what the apply writes, not the stored text.
        let files = preview_files(store, &record.change_set)?;
        let mut bound = format!("{connection}\n{}\n{}\n", record.id, record.fingerprint);
        for (path, change) in record.change_set.files() {
            bound.push_str(&format!("{path} {}\n", change.base_hash().unwrap_or("-")));
        }
        // Bound to the record as stored (what is shown is derived from it and the bases,
        // whose hashes are bound above), so a base changing is reported as stale.
        bound.push_str(&record.preview_text.hash());
        let subject = Self {
            id: record.id.clone(),
            label: record.label.clone(),
            origin: record.origin.clone(),
            foreign: record.foreign,
            files,
            binding: content_hash(bound.as_bytes()),
        };
        Ok(Some((subject, record)))
    }

    /// The question: label, id, origin, each file with `+added -removed`, the model's reason.
    pub(crate) fn message(&self, model_reason: &str) -> String {
        let mut message = format!(
            "The model asks to apply this change. Apply it?\n\n{} ({}, staged by {})\n",
            visible_line(&self.label),
            visible_line(&self.id),
            visible_line(&self.origin.to_string())
        );
        if self.foreign {
            message.push_str(
                "⚠ FOREIGN: not staged by this user's resolve; it will not be applied from here.\n",
            );
        }
        for file in &self.files {
            message.push_str(&format!(
                "  {}  +{} -{}\n",
                quote_path(&file.path),
                file.added,
                file.removed
            ));
        }
        message.push_str(&format!(
            "\nThe model's reason: {}",
            visible_line(model_reason)
        ));
        message
    }

    /// The elicitation request: the message and the form (a decision and a reason).
    pub(crate) fn request(&self, model_reason: &str) -> Result<ElicitRequestParams, String> {
        let schema: ElicitationSchema =
            serde_json::from_value(form_schema()).map_err(|error| error.to_string())?;
        Ok(ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: self.message(model_reason),
            requested_schema: schema,
        })
    }
}

/// The form: `decision` (`apply` or `discard`, required) and an optional `reason`.
pub(crate) fn form_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "decision": {
                "type": "string",
                "title": "Decision",
                "description": "apply: write the change now; discard: drop it",
                "enum": ["apply", "discard"]
            },
            "reason": {
                "type": "string",
                "title": "Reason",
                "description": "Why (the model reads it; recorded in the history)"
            }
        },
        "required": ["decision"]
    })
}

/// What the person answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Answer {
    /// Accepted with the decision `apply`.
    Apply {
        /// Their reason, when given.
        reason: Option<String>,
    },
    /// Accepted with the decision `discard`.
    Discard {
        /// Their reason, when given.
        reason: Option<String>,
    },
    /// Declined or cancelled the prompt (the word says which).
    Declined(&'static str),
    /// An answer that is not the form filled in (why).
    Unreadable(String),
}

/// Read an elicitation result given as JSON (`{action, content}`): only `accept` with a
/// `decision` of `apply` or `discard` is a decision; anything else decides nothing.
pub(crate) fn read_answer(result: Option<&Value>) -> Answer {
    let Some(result) = result else {
        return Answer::Unreadable("no answer to the approval question".to_owned());
    };
    match result.get("action").and_then(Value::as_str) {
        Some("accept") => read_form(result.get("content")),
        Some("decline") => Answer::Declined("declined"),
        Some("cancel") => Answer::Declined("cancelled"),
        Some(_) | None => Answer::Unreadable("the answer has no valid `action`".to_owned()),
    }
}

fn read_form(content: Option<&Value>) -> Answer {
    let Some(Value::Object(form)) = content else {
        return Answer::Unreadable("the accepted answer has no form content".to_owned());
    };
    let reason = match form.get("reason") {
        None | Some(Value::Null) => None,
        Some(Value::String(reason)) => Some(reason.trim().to_owned()).filter(|r| !r.is_empty()),
        Some(_) => return Answer::Unreadable("`reason` is not text".to_owned()),
    };
    match form.get("decision").and_then(Value::as_str) {
        Some("apply") => Answer::Apply { reason },
        Some("discard") => Answer::Discard { reason },
        Some(other) => Answer::Unreadable(format!("unknown decision `{other}`")),
        None => Answer::Unreadable("the form has no `decision`".to_owned()),
    }
}

/// The person's answer to the approval form, as an [`Approver`]: asked through the client
/// (`elicitation/create`, protocol 2025-11-25), or given in the retry of an input-required
/// result (2026-07-28). Only an accepted form decides; a decline, a cancel or an unreadable
/// answer leaves the preview pending.
pub struct FormAnswer {
    source: FormSource,
}

enum FormSource {
    /// Ask now, through the client, waiting at most `timeout` (then the request is
    /// cancelled at the client).
    Ask {
        peer: Peer<RoleServer>,
        request: Box<ElicitRequestParams>,
        timeout: ApproveTimeout,
    },
    /// The answer came with the call (`None`: no answer was sent).
    Given(Option<Value>),
}

impl std::fmt::Debug for FormAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let source = match &self.source {
            FormSource::Ask { .. } => "ask",
            FormSource::Given(_) => "given",
        };
        f.debug_struct("FormAnswer")
            .field("source", &source)
            .finish()
    }
}

impl FormAnswer {
    /// Ask `request` through the client `peer`; past `timeout` the request is cancelled and
    /// the preview stays pending ([`ApproveTimeout::left_pending`]).
    pub fn asking(
        peer: Peer<RoleServer>,
        request: ElicitRequestParams,
        timeout: ApproveTimeout,
    ) -> Self {
        Self {
            source: FormSource::Ask {
                peer,
                request: Box::new(request),
                timeout,
            },
        }
    }

    /// The answer the client sent back (`{action, content}`), if any.
    pub fn given(answer: Option<&Value>) -> Self {
        Self {
            source: FormSource::Given(answer.cloned()),
        }
    }

    /// What `answer` decides: apply (with the person's reason recorded instead of the
    /// model's), discard (with theirs, or a stock reason), or nothing.
    fn decided(answer: &Answer) -> Decided {
        match answer {
            Answer::Apply { reason } => {
                Decided::new(Decision::Apply, DecidedBy::Person).with_note(reason.clone())
            }
            Answer::Discard { reason } => Decided::new(
                Decision::Discard {
                    reason: reason
                        .clone()
                        .unwrap_or_else(|| NO_PERSON_REASON.to_owned()),
                },
                DecidedBy::Person,
            ),
            Answer::Declined(_) | Answer::Unreadable(_) => Decided::new(
                Decision::LeavePending {
                    why: declined_text(answer),
                },
                DecidedBy::Person,
            ),
        }
    }
}

impl Approver for FormAnswer {
    fn decide<'a>(&'a self, _request: &'a ApprovalRequest) -> DecisionFuture<'a> {
        Box::pin(async move {
            let answer = match &self.source {
                FormSource::Ask {
                    peer,
                    request,
                    timeout,
                } => {
                    match peer
                        .create_elicitation_with_timeout((**request).clone(), timeout.limit())
                        .await
                    {
                        Ok(result) => read_answer(serde_json::to_value(result).ok().as_ref()),
                        Err(ServiceError::Timeout { .. }) => return timeout.left_pending(),
                        Err(error) => {
                            Answer::Unreadable(format!("the client did not answer: {error}"))
                        }
                    }
                }
                FormSource::Given(answer) => read_answer(answer.as_ref()),
            };
            Self::decided(&answer)
        })
    }
}

/// The first line of the result after the person approved.
pub(crate) fn approved_text(person_reason: Option<&str>) -> String {
    match person_reason {
        Some(reason) => format!("A person approved this apply. Their reason: {reason}"),
        None => "A person approved this apply.".to_owned(),
    }
}

/// The result after the person discarded the preview instead.
pub(crate) fn person_discarded_text(label: &str, reason: &str) -> String {
    format!("Not applied: a person discarded {label} instead. Their reason: {reason}")
}

/// The reason recorded when the person discards without giving one.
pub(crate) const NO_PERSON_REASON: &str = "Discarded at the approval prompt; no reason given.";

/// The result after the person declined or cancelled the prompt, or answered unreadably.
pub(crate) fn declined_text(answer: &Answer) -> String {
    let why = match answer {
        Answer::Declined(word) => format!("the person {word} the approval prompt"),
        Answer::Unreadable(why) => format!("the approval answer could not be read: {why}"),
        Answer::Apply { .. } | Answer::Discard { .. } => "the person did not decide".to_owned(),
    };
    format!(
        "Not applied: {why}. Nothing was written; the preview stays pending. Ask the person what they want, or discard it."
    )
}

/// The result when a person must decide in a terminal: under `review`, or under `ask` with a
/// client that cannot ask.
pub(crate) fn awaiting_person_text(mode: ApprovalMode, root: &Path) -> String {
    let why = match mode {
        ApprovalMode::Review => "in this session a person reviews every apply",
        ApprovalMode::Ask | ApprovalMode::Auto => {
            "this server asks a person before every apply, and this MCP client cannot show them the question (it declared no elicitation form support)"
        }
    };
    format!(
        "Not applied: {why}. A person must approve it with `resolve review` or `resolve apply` in a terminal at {}. Nothing was written; the preview stays pending until they decide.",
        root.display()
    )
}

/// The (error) result when an echoed approval state is refused.
pub(crate) fn refused_text(why: &str) -> String {
    format!(
        "Not applied: the approval answer was refused ({why}). Nothing was written; the preview stays pending. Call `resolve` again to ask the person anew."
    )
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn the_form_message_shows_control_characters_and_quotes_odd_paths_and_marks_foreign() {
        let subject = Subject {
            id: "pending-action:write:1".into(),
            label: "Write: a\r\u{1b}[2Kb".into(),
            origin: Origin::Agent,
            foreign: true,
            files: vec![PreviewFile {
                path: "evil\nThe model's reason: fine".into(),
                added: 1,
                removed: 0,
                hunks: vec!["evil\nThe model's reason: fine#1".into()],
            }],
            binding: String::new(),
        };
        let message = subject.message("ok\u{1b}[2J");
        assert!(
            !message.contains('\r') && !message.contains('\u{1b}'),
            "{message:?}"
        );
        assert!(message.contains("Write: a␍␛[2Kb"), "{message}");
        assert!(
            message.contains("  \"evil\\nThe model's reason: fine\"  +1 -0\n"),
            "{message}"
        );
        assert!(message.contains("⚠ FOREIGN"), "{message}");
        assert!(message.ends_with("The model's reason: ok␛[2J"), "{message}");
    }

    #[test]
    fn only_an_accepted_form_decides_and_everything_else_is_no_decision() {
        let answer = |value: Value| read_answer(Some(&value));
        assert_eq!(
            answer(
                json!({"action": "accept", "content": {"decision": "apply", "reason": " Fine. "}})
            ),
            Answer::Apply {
                reason: Some("Fine.".into())
            }
        );
        assert_eq!(
            answer(json!({"action": "accept", "content": {"decision": "discard"}})),
            Answer::Discard { reason: None }
        );
        assert_eq!(
            answer(json!({"action": "decline"})),
            Answer::Declined("declined")
        );
        assert_eq!(
            answer(json!({"action": "cancel"})),
            Answer::Declined("cancelled")
        );
        for malformed in [
            json!({"action": "accept"}),
            json!({"action": "accept", "content": {"decision": "APPLY"}}),
            json!({"action": "accept", "content": {"decision": "apply", "reason": 3}}),
            json!({"action": "accept", "content": "apply"}),
            json!({"action": "yes"}),
            json!({}),
        ] {
            assert!(
                matches!(answer(malformed.clone()), Answer::Unreadable(_)),
                "{malformed}"
            );
        }
        assert!(matches!(read_answer(None), Answer::Unreadable(_)));
    }

    #[test]
    fn the_form_is_a_valid_elicitation_schema() {
        let schema: ElicitationSchema = serde_json::from_value(form_schema()).unwrap();
        let back = serde_json::to_value(&schema).unwrap();
        assert_eq!(
            back["properties"]["decision"]["enum"],
            json!(["apply", "discard"])
        );
        assert_eq!(back["required"], json!(["decision"]));
    }
}
