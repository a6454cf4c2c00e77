//! One `resolve` tool call under the connection's [`ApproveMode`]: the model's own decision,
//! the person's decision asked through elicitation (server-initiated `elicitation/create` on
//! protocol 2025-11-25, an input-required result with a sealed `requestState` on 2026-07-28),
//! or a fail-closed answer that leaves the preview pending for a person in a terminal.
//!
//! Whatever the way, the decision lands through a `resolve` session on the store, so the
//! result texts, the stale check and the history are the same as for the model's own
//! `resolve`; a person's decision goes through a store that records `decidedBy: person` and
//! keeps the model's reason beside theirs.

use std::sync::Arc;

use resolve_core::{
    DecidedBy, ResolveAction, ResolveArgs, ResolveFacts, ResolveOutcome, ResolveSession, ToolResult,
};
use resolve_edit::{FileTools, Origin, Store, TaskDied, content_hash, run_blocking};
use rmcp::RoleServer;
use rmcp::model::{
    ElicitRequest, InputRequest, InputRequests, InputRequiredResult, InputResponses,
};
use rmcp::service::RequestContext;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::approval::{
    APPROVAL_INPUT_KEY, Answer, ApproveMode, NO_PERSON_REASON, Subject, approved_text,
    awaiting_person_text, declined_text, person_discarded_text, read_answer, refused_text,
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
    pub mode: ApproveMode,
    /// The connection's store (records `resolvedBy: mcp:<id>`, `decidedBy: model`).
    pub store: Store,
    /// The connection's origin.
    pub origin: Origin,
    /// The connection's own session: the model's decisions.
    pub session: Arc<ResolveSession>,
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
        if self.mode == ApproveMode::Auto || args.action == ResolveAction::Discard {
            return self.by_model(args, cancel).await;
        }
        let Some(subject) = self.head_subject().await else {
            // Nothing pending (or unreadable): the session says so in its own words.
            return self.by_model(args, cancel).await;
        };
        let context = match client {
            Some(context) if self.mode == ApproveMode::Ask && can_elicit_form(context) => context,
            Some(_) | None => return awaiting_person(self.mode, &self.store, &subject),
        };
        let request = match subject.request(&args.reason) {
            Ok(request) => request,
            Err(error) => {
                tracing::error!(%error, "the approval form does not build");
                return awaiting_person(ApproveMode::Ask, &self.store, &subject);
            }
        };
        let legacy = context
            .protocol_version()
            .is_none_or(|version| version.has_initialize());
        if legacy {
            let answer = match context.peer.create_elicitation(request).await {
                Ok(result) => read_answer(serde_json::to_value(result).ok().as_ref()),
                Err(error) => Answer::Unreadable(format!("the client did not answer: {error}")),
            };
            return self.decide(args, &subject.binding, answer, cancel).await;
        }
        let Some(state) = self
            .states
            .issue(&state_binding(&subject.binding, &call_digest))
        else {
            return awaiting_person(ApproveMode::Ask, &self.store, &subject);
        };
        let mut requests = InputRequests::new();
        requests.insert(
            APPROVAL_INPUT_KEY.to_owned(),
            InputRequest::Elicitation(ElicitRequest::new(request)),
        );
        ResolveReply::InputRequired(InputRequiredResult::new(Some(requests), Some(state)))
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
        let binding = subject.as_ref().map_or("", |subject| &subject.binding);
        if let Err(refused) = self
            .states
            .redeem(state, &state_binding(binding, call_digest))
        {
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
        let answer = read_answer(
            responses
                .as_ref()
                .and_then(|responses| responses.get(APPROVAL_INPUT_KEY)),
        );
        self.decide(args, binding, answer, cancel).await
    }

    /// Act on the person's `answer` about the preview they were shown (`binding`), if it is
    /// still the head and unchanged.
    async fn decide(
        &self,
        args: ResolveArgs,
        binding: &str,
        answer: Answer,
        cancel: &CancellationToken,
    ) -> ResolveReply {
        let Some(subject) = self
            .head_subject()
            .await
            .filter(|subject| subject.binding == binding)
        else {
            return ResolveReply::Finished(
                ToolResult::error(refused_text(
                    "the preview changed or was resolved since the person was asked",
                )),
                None,
            );
        };
        let (action, person_reason) = match answer {
            Answer::Apply { reason } => (ResolveAction::Apply, reason),
            Answer::Discard { reason } => (ResolveAction::Discard, reason),
            Answer::Declined(_) | Answer::Unreadable(_) => {
                let content = ResolveFacts::new(
                    ResolveOutcome::Declined,
                    Some(subject.id.clone()),
                    Some(subject.label.clone()),
                );
                return ResolveReply::Finished(
                    ToolResult::text(declined_text(&answer)),
                    Some(content),
                );
            }
        };
        let recorded = match (&action, &person_reason) {
            (_, Some(reason)) => reason.clone(),
            (ResolveAction::Apply, None) => args.reason.clone(),
            (ResolveAction::Discard, None) => NO_PERSON_REASON.to_owned(),
        };
        let person_args = ResolveArgs {
            action,
            reason: recorded.clone(),
            extra: args.extra.clone(),
        };
        let store = self.store.clone().overruling(args.reason.clone());
        let session = ResolveSession::new()
            .with_id_allocator(Arc::new(store.clone()))
            .with_pending_source(Arc::new(
                FileTools::new(store, self.origin.clone()).pending_source(),
            ));
        let result = run_session(
            Arc::new(session),
            person_args,
            Some(subject.id.clone()),
            cancel,
        )
        .await;
        if result.is_error {
            return ResolveReply::Finished(result, None);
        }
        let mut content = ResolveFacts::from_result(&result, DecidedBy::Person);
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

    /// The head pending action as the person would be shown it now.
    async fn head_subject(&self) -> Option<Subject> {
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

/// What an approval state is bound to: the preview as the person was shown it, and the call
/// (its arguments) they were asked about.
fn state_binding(subject_binding: &str, call_digest: &str) -> String {
    format!("{subject_binding} {call_digest}")
}

/// The fail-closed (or `review`) result: nothing written, a person decides in a terminal.
fn awaiting_person(mode: ApproveMode, store: &Store, subject: &Subject) -> ResolveReply {
    let content = ResolveFacts::new(
        ResolveOutcome::AwaitingPerson,
        Some(subject.id.clone()),
        Some(subject.label.clone()),
    );
    ResolveReply::Finished(
        ToolResult::text(awaiting_person_text(mode, store.workspace().root())),
        Some(content),
    )
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
