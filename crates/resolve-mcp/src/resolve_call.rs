//! One `resolve` tool call under the connection's [`ApprovalMode`]: the model's own decision,
//! the person's decision asked through elicitation (server-initiated `elicitation/create` on
//! protocol 2025-11-25, an input-required result with a sealed `requestState` on 2026-07-28),
//! or a fail-closed answer that leaves the preview pending for a person in a terminal.
//!
//! Every way of deciding is an [`Approver`] ([`FormAnswer`], [`AwaitPerson`]), and every
//! decision lands through the connection's own `resolve` session, so the result texts, the
//! stale check and the history are the same as for the model's own `resolve`; a person's
//! decision is given ahead to the pending action ([`DecisionsAhead`]), which records
//! `decidedBy: person` and keeps the model's reason beside theirs.

use std::sync::Arc;

use resolve_core::{
    DecidedBy, ResolveAction, ResolveArgs, ResolveFacts, ResolveOutcome, ResolveSession, ToolResult,
};
use resolve_edit::{
    ApprovalMode, ApprovalRequest, ApprovalSubject, ApproveTimeout, Approver, AwaitPerson, Decided,
    Decision, DecisionsAhead, Origin, PendingRecord, ResolveRequest, Store, TaskDied, content_hash,
    run_blocking,
};
use rmcp::RoleServer;
use rmcp::model::{
    ElicitRequest, InputRequest, InputRequests, InputRequiredResult, InputResponses,
};
use rmcp::service::RequestContext;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::approval::{
    APPROVAL_INPUT_KEY, FormAnswer, Subject, approved_text, awaiting_person_text,
    person_discarded_text, refused_text,
};
use crate::approval_state::{ApprovalStates, StateRefused};

/// What a `resolve` call answers.
#[derive(Debug)]
pub(crate) enum ResolveReply {
    /// A finished result; its structured content when it is not an error.
    Finished(ToolResult, Option<ResolveFacts>),
    /// The person must answer first (protocol 2026-07-28): the client retries with the answer.
    InputRequired(InputRequiredResult),
}

/// The parts of a connection a `resolve` call needs.
#[derive(Debug)]
pub(crate) struct Resolver {
    /// Who approves an apply.
    pub mode: ApprovalMode,
    /// The connection's store (records `resolvedBy: mcp:<id>`).
    pub store: Store,
    /// The connection's origin.
    pub origin: Origin,
    /// The connection's own session: every decision lands through it.
    pub session: Arc<ResolveSession>,
    /// Where a person's decision, made before the session carries it out, is given to the
    /// session's pending actions.
    pub ahead: DecisionsAhead,
    /// How long a person has to answer an approval.
    pub timeout: ApproveTimeout,
    /// Approval states issued to this connection.
    pub states: ApprovalStates,
}

/// The echoed parts of a retried `tools/call` (protocol 2026-07-28).
#[derive(Debug, Default)]
pub(crate) struct Retry {
    /// `requestState`, as the client sent it back.
    pub request_state: Option<String>,
    /// `inputResponses`.
    pub input_responses: Option<InputResponses>,
}

impl Resolver {
    /// Run `resolve` with `arguments` for the model, under the approval mode, asking the
    /// person through `client` (none: the caller cannot ask, and `ask` fails closed).
    pub(crate) async fn call(
        &self,
        arguments: Value,
        retry: Retry,
        cancel: &CancellationToken,
        client: Option<&RequestContext<RoleServer>>,
    ) -> ResolveReply {
        let args = match ResolveArgs::from_value(&arguments) {
            Ok(args) => args,
            Err(error) => return ResolveReply::Finished(ToolResult::from_error(&error), None),
        };
        // A retry must repeat the call the person was asked about, arguments included.
        let call_digest = content_hash(arguments.to_string().as_bytes());
        if let Some(state) = retry.request_state {
            return self
                .answered(args, &call_digest, &state, retry.input_responses, cancel)
                .await;
        }
        if self.mode == ApprovalMode::Auto || args.action == ResolveAction::Discard {
            return self.by_model(args, cancel).await;
        }
        let Some((subject, record)) = self.head_subject().await else {
            // Nothing pending (or unreadable): the session says so in its own words.
            return self.by_model(args, cancel).await;
        };
        let approver: Box<dyn Approver> = match client {
            Some(context) if self.mode == ApprovalMode::Ask && can_elicit_form(context) => {
                let request = match subject.request(&args.reason) {
                    Ok(request) => request,
                    Err(error) => {
                        tracing::error!(%error, "the approval form does not build");
                        return self
                            .awaiting_person(ApprovalMode::Ask, &args, subject, record, cancel)
                            .await;
                    }
                };
                let legacy = context
                    .protocol_version()
                    .is_none_or(|version| version.has_initialize());
                if !legacy {
                    // The person answers in the retry of this call.
                    let Some(state) = self
                        .states
                        .issue(&state_binding(&subject.binding, &call_digest))
                    else {
                        return self
                            .awaiting_person(ApprovalMode::Ask, &args, subject, record, cancel)
                            .await;
                    };
                    let mut requests = InputRequests::new();
                    requests.insert(
                        APPROVAL_INPUT_KEY.to_owned(),
                        InputRequest::Elicitation(ElicitRequest::new(request)),
                    );
                    return ResolveReply::InputRequired(InputRequiredResult::new(
                        Some(requests),
                        Some(state),
                    ));
                }
                Box::new(FormAnswer::asking(
                    context.peer.clone(),
                    request,
                    self.timeout,
                ))
            }
            Some(_) | None => {
                return self
                    .awaiting_person(self.mode, &args, subject, record, cancel)
                    .await;
            }
        };
        let decided = approver.decide(&approval_request(&args, record)).await;
        self.carry_out(args, &subject.binding, decided, cancel)
            .await
    }

    /// The fail-closed (or `review`) answer: a standing rule leaves the preview for a person in
    /// a terminal ([`AwaitPerson`]).
    async fn awaiting_person(
        &self,
        mode: ApprovalMode,
        args: &ResolveArgs,
        subject: Subject,
        record: PendingRecord,
        cancel: &CancellationToken,
    ) -> ResolveReply {
        let approver = AwaitPerson {
            why: awaiting_person_text(mode, self.store.workspace().root()),
        };
        let decided = approver.decide(&approval_request(args, record)).await;
        self.carry_out(args.clone(), &subject.binding, decided, cancel)
            .await
    }

    /// The retry of an input-required approval: the state is checked (and used up) first,
    /// then the answer is read.
    async fn answered(
        &self,
        args: ResolveArgs,
        call_digest: &str,
        state: &str,
        responses: Option<InputResponses>,
        cancel: &CancellationToken,
    ) -> ResolveReply {
        let subject = self.head_subject().await;
        let binding = subject
            .as_ref()
            .map_or("", |(subject, _)| subject.binding.as_str());
        if let Err(refused) = self
            .states
            .redeem(state, &state_binding(binding, call_digest))
        {
            // The state outlived the time the person had: no decision came in time.
            if refused == StateRefused::Expired
                && let Some((subject, _)) = &subject
            {
                let binding = subject.binding.clone();
                return self
                    .carry_out(args, &binding, self.timeout.left_pending(), cancel)
                    .await;
            }
            let why = match refused {
                StateRefused::NotIssued => "it was not issued by this server",
                StateRefused::Expired => "it expired",
                StateRefused::Used => "it was already answered",
                StateRefused::OtherPreview => {
                    "the preview or the call changed since the person was asked"
                }
                StateRefused::NoKey => "this server cannot check approval states",
            };
            return ResolveReply::Finished(ToolResult::error(refused_text(why)), None);
        }
        // A state redeemed for a binding was issued for the head it names, so it is there.
        let Some((subject, record)) = subject else {
            return ResolveReply::Finished(
                ToolResult::error(refused_text(
                    "the preview changed or was resolved since the person was asked",
                )),
                None,
            );
        };
        let answer = responses
            .as_ref()
            .and_then(|responses| responses.get(APPROVAL_INPUT_KEY));
        let decided = FormAnswer::given(answer)
            .decide(&approval_request(&args, record))
            .await;
        self.carry_out(args, &subject.binding, decided, cancel)
            .await
    }

    /// Carry out `decided` about the preview the decider was shown (`binding`), if it is
    /// still the head and unchanged: through the connection's own session, the decision given
    /// ahead to the pending action it lands on.
    async fn carry_out(
        &self,
        args: ResolveArgs,
        binding: &str,
        decided: Decided,
        cancel: &CancellationToken,
    ) -> ResolveReply {
        let Some((subject, _)) = self
            .head_subject()
            .await
            .filter(|(subject, _)| subject.binding == binding)
        else {
            return ResolveReply::Finished(
                ToolResult::error(refused_text(
                    "the preview changed or was resolved since the person was asked",
                )),
                None,
            );
        };
        let (action, recorded) = match &decided.decision {
            Decision::LeavePending { why } => {
                let outcome = match decided.by {
                    DecidedBy::Policy => ResolveOutcome::AwaitingPerson,
                    DecidedBy::Person | DecidedBy::Model => ResolveOutcome::Declined,
                };
                let content =
                    ResolveFacts::new(outcome, Some(subject.id.clone()), Some(subject.label));
                return ResolveReply::Finished(ToolResult::text(why.clone()), Some(content));
            }
            Decision::Apply | Decision::ApplyPart(_) => (
                ResolveAction::Apply,
                decided.note.clone().unwrap_or_else(|| args.reason.clone()),
            ),
            Decision::Discard { reason } => (ResolveAction::Discard, reason.clone()),
        };
        let person_reason = decided.note.clone();
        let decided_by = decided.by;
        self.ahead.give(&subject.id, decided);
        let session_args = ResolveArgs {
            action,
            reason: args.reason.clone(),
            extra: args.extra.clone(),
        };
        let result = run_session(
            self.session.clone(),
            session_args,
            Some(subject.id.clone()),
            cancel,
        )
        .await;
        // Not taken when the session stopped before the action (it is no longer pending).
        self.ahead.take(&subject.id);
        if result.is_error {
            return ResolveReply::Finished(result, None);
        }
        let mut content = ResolveFacts::from_result(&result, decided_by);
        content.pending_id = Some(subject.id.clone());
        content.reason = Some(recorded.clone());
        content.model_reason = (recorded != args.reason).then(|| args.reason.clone());
        let text = match action {
            ResolveAction::Apply => {
                format!(
                    "{}\n{}",
                    approved_text(person_reason.as_deref()),
                    result.text
                )
            }
            ResolveAction::Discard => person_discarded_text(&subject.label, &recorded),
        };
        ResolveReply::Finished(ToolResult { text, ..result }, Some(content))
    }

    /// The model decides: the connection's session runs `args` on the head.
    async fn by_model(&self, args: ResolveArgs, cancel: &CancellationToken) -> ResolveReply {
        let head = self.head_id().await;
        let result = run_session(self.session.clone(), args, None, cancel).await;
        if result.is_error {
            return ResolveReply::Finished(result, None);
        }
        let mut content = ResolveFacts::from_result(&result, DecidedBy::Model);
        if content.outcome != ResolveOutcome::NothingPending && content.pending_id.is_none() {
            content.pending_id = head;
        }
        ResolveReply::Finished(result, Some(content))
    }

    /// The id of the connection's head pending action, as the store says now.
    async fn head_id(&self) -> Option<String> {
        let session = self.session.clone();
        run_blocking("pending head", move || {
            if let Err(error) = session.refresh_pending() {
                tracing::warn!(%error, "could not read the pending store");
            }
            session.queue().pending().peek_head().map(|head| head.id)
        })
        .await
        .ok()
        .flatten()
    }

    /// The head pending action as the person would be shown it now, with its record.
    async fn head_subject(&self) -> Option<(Subject, PendingRecord)> {
        let session = self.session.clone();
        let store = self.store.clone();
        let origin = self.origin.clone();
        run_blocking("approval subject", move || {
            if let Err(error) = session.refresh_pending() {
                tracing::warn!(%error, "could not read the pending store");
            }
            let head = session.queue().pending().peek_head()?;
            Subject::read(&store, &origin, &head.id)
                .map_err(|error| tracing::warn!(%error, "could not read the pending action"))
                .ok()
                .flatten()
        })
        .await
        .ok()
        .flatten()
    }
}

/// What an approver is asked: the model's `apply` of `record`.
fn approval_request(args: &ResolveArgs, record: PendingRecord) -> ApprovalRequest {
    ApprovalRequest {
        subject: ApprovalSubject::Action(Box::new(record)),
        model: ResolveRequest::model(args.action, args.reason.clone()),
    }
}

/// What an approval state is bound to: the preview as the person was shown it, and the call
/// (its arguments) they were asked about.
fn state_binding(subject_binding: &str, call_digest: &str) -> String {
    format!("{subject_binding} {call_digest}")
}

/// Whether the client said it can show an elicitation form (an empty `elicitation`
/// capability means form, as before modes existed).
fn can_elicit_form(context: &RequestContext<RoleServer>) -> bool {
    context
        .client_capabilities()
        .and_then(|capabilities| capabilities.elicitation)
        .is_some_and(|elicitation| elicitation.form.is_some() || elicitation.url.is_none())
}

/// Dispatch `args` through `session` (on `target`, or the head), on the blocking pool: the
/// pending source reads the store and the apply takes its lock.
pub(crate) async fn run_session(
    session: Arc<ResolveSession>,
    args: ResolveArgs,
    target: Option<String>,
    cancel: &CancellationToken,
) -> ToolResult {
    let runtime = tokio::runtime::Handle::current();
    let cancel = cancel.clone();
    run_blocking("resolve", move || {
        runtime
            .block_on(session.resolve_with(args, target.as_deref(), &cancel))
            .unwrap_or_else(|error| ToolResult::from_error(&error))
    })
    .await
    .unwrap_or_else(|error| task_failed("`resolve`", &error))
}

/// The error result of a tool task that panicked or was cancelled.
pub(crate) fn task_failed(what: &str, error: &TaskDied) -> ToolResult {
    tracing::error!(%error, "{what} task ended abnormally");
    ToolResult::error(format!(
        "Internal error: {what} did not finish ({}). Nothing was changed by this call unless the history says so.",
        error.source
    ))
}
