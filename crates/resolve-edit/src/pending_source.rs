//! Keeping a `resolve-core` pending stack in step with the durable store: previews staged by
//! any process appear, previews consumed by any process disappear. Each stored preview becomes
//! a pending action whose apply and discard go through the decision pipeline: the source's
//! [`Approver`] (or a decision made ahead, [`DecisionsAhead`]) decides, and the decision lands
//! through the store (for stored MCP tool calls, through an [`ExternalActionRunner`]).

use std::collections::HashSet;
use std::future::Future;
use std::sync::{Arc, Mutex};

use resolve_core::{
    ActionError, AppliedFacts, Extra, Facts, PendingAction, PendingSource, PendingStack,
    ResolveAction, ToolResult,
};
use resolve_store::{
    ApplyOutcome, Attribution, Origin, Outcome, PendingRecord, PendingSummary, Store,
    default_decider,
};
use serde_json::{Map, Value, json};

use crate::approval::{
    ApprovalRequest, ApprovalSubject, Approver, AutoApprover, Decided, Decision, DecisionsAhead,
    Landed, ResolveRequest, decide, land,
};
use crate::blocking::run_blocking;
use crate::error::EditError;
use crate::external::ExternalActionRunner;
use crate::git_commit::commit_line;
use crate::producer::applied_label;
use crate::producers::applied_text_for;
use crate::review::partial_apply_lines;
use crate::selection::{HunkRejection, Selection};

/// The origins a session resolves besides its own, learnt while it runs: a Codex session's
/// `resolve mcp` learns the session from each call, and then resolves what that session's
/// hook staged (`mcp:codex-<session>`). Shared by clones.
#[derive(Debug, Clone, Default)]
pub struct AdoptedOrigins(Arc<Mutex<Vec<Origin>>>);

impl AdoptedOrigins {
    /// Resolve `origin`'s pending actions too, from now on.
    pub fn adopt(&self, origin: Origin) {
        let mut adopted = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if !adopted.contains(&origin) {
            adopted.push(origin);
        }
    }

    /// Whether `origin` was adopted.
    pub fn contains(&self, origin: &Origin) -> bool {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .contains(origin)
    }
}

/// Keeps a session's pending stack in step with the durable store: previews staged by any
/// process appear, previews consumed by any process disappear.
#[derive(Debug)]
pub struct StorePendingSource {
    store: Store,
    origin: Option<Origin>,
    adopted: AdoptedOrigins,
    deciders: Deciders,
    runner: Option<Arc<dyn ExternalActionRunner>>,
    known: Mutex<HashSet<String>>,
}

impl StorePendingSource {
    /// A source of the pending actions of `origin` (`None`: every origin, as a person at the
    /// CLI sees them).
    pub fn new(store: Store, origin: Option<Origin>) -> Self {
        Self {
            store,
            origin,
            adopted: AdoptedOrigins::default(),
            deciders: Deciders {
                approver: Arc::new(AutoApprover),
                ahead: DecisionsAhead::new(),
            },
            runner: None,
            known: Mutex::new(HashSet::new()),
        }
    }

    /// This source resolving stored MCP tool calls through `runner`. By default there is no
    /// runner, and applying such an action fails with a message saying so (it stays pending).
    #[must_use]
    pub fn with_external_runner(mut self, runner: Arc<dyn ExternalActionRunner>) -> Self {
        self.runner = Some(runner);
        self
    }

    /// This source asking `approver` about every apply the model asks for. By default
    /// [`AutoApprover`]: the model's request stands.
    #[must_use]
    pub fn with_approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.deciders.approver = approver;
        self
    }

    /// This source also giving the pending actions of the origins `adopted` holds (see
    /// [`AdoptedOrigins`]).
    #[must_use]
    pub fn with_adopted(mut self, adopted: AdoptedOrigins) -> Self {
        self.adopted = adopted;
        self
    }

    /// This source carrying out the decisions given to `ahead` for an action instead of
    /// asking its approver (a person answered before the call reached the store). By default
    /// none are given.
    #[must_use]
    pub fn with_decisions_ahead(mut self, ahead: DecisionsAhead) -> Self {
        self.deciders.ahead = ahead;
        self
    }
}

impl PendingSource for StorePendingSource {
    fn refresh(&self, stack: &mut PendingStack) -> Result<(), resolve_core::Error> {
        let records = self
            .store
            .pending_summaries()
            .map_err(|e| resolve_core::Error::PendingSource(e.to_string()))?;
        let records: Vec<PendingSummary> = records
            .into_iter()
            .filter(|record| {
                self.origin.as_ref().is_none_or(|origin| {
                    &record.origin == origin || self.adopted.contains(&record.origin)
                })
            })
            .collect();
        let live: HashSet<String> = records.iter().map(|record| record.id.clone()).collect();
        let mut known = self
            .known
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for gone in known.difference(&live) {
            stack.remove(gone);
        }
        known.retain(|id| live.contains(id));
        // Each at its own order, so the stack interleaves them with in-memory actions by when
        // they were staged. One missing from the stack (dropped while the store could not be
        // read) comes back; one whose order changed (bumped to the head by a failed apply in
        // any process) moves.
        for record in &records {
            known.insert(record.id.clone());
            if stack
                .get(&record.id)
                .is_some_and(|entry| entry.order == record.order)
            {
                continue;
            }
            let action = match stack.get(&record.id) {
                Some(entry) => Arc::clone(&entry.action),
                None => Arc::new(match record.mcp {
                    None => durable_action(&self.store, record, self.deciders.clone()),
                    Some(_) => mcp_action(
                        &self.store,
                        record,
                        self.deciders.clone(),
                        self.runner.clone(),
                    ),
                }),
            };
            stack.register_at(record.id.clone(), record.order, action);
        }
        Ok(())
    }
}

/// Who decides a source's actions: a decision made ahead for an action, else the approver.
#[derive(Debug, Clone)]
struct Deciders {
    approver: Arc<dyn Approver>,
    ahead: DecisionsAhead,
}

impl Deciders {
    /// The decision about the model's `request` on the stored action `id`: one made ahead,
    /// else the pipeline's ([`decide`]) with the record as it is now. When the action is no
    /// longer pending nobody is asked (the model's request stands, and the store says why it
    /// cannot be carried out); nobody is asked about an action this store may not run.
    async fn decide(
        &self,
        store: &Store,
        id: &str,
        model: ResolveRequest,
    ) -> Result<Decided, ActionError> {
        if let Some(decided) = self.ahead.take(id) {
            return Ok(decided);
        }
        let reader = store.clone();
        let read_id = id.to_owned();
        let record = run_blocking("pending record", move || {
            let record = reader.pending_record(&read_id)?;
            if let Some(record) = &record {
                reader.refuse_foreign(record)?;
            }
            Ok::<_, EditError>(record)
        })
        .await??;
        let Some(record) = record else {
            return Ok(Decided::new(model.as_asked(), model.asked_by));
        };
        let request = ApprovalRequest {
            subject: ApprovalSubject::Action(Box::new(record)),
            model,
        };
        Ok(decide(self.approver.as_ref(), &request).await)
    }
}

/// The request to `action` with `reason` on a whole action, from whoever resolves through
/// `store`: a person at the command line, the model anywhere else.
fn requester(store: &Store, action: ResolveAction, reason: String) -> ResolveRequest {
    ResolveRequest {
        action,
        reason,
        selection: Selection::All,
        asked_by: default_decider(store.resolver()),
    }
}

/// `decided` about a discard the model asked for: never an apply (nobody applies what the
/// model asked to drop), which is refused with nothing written.
fn refuse_apply_on_discard(decided: Decided) -> Result<Decided, ActionError> {
    match decided.decision {
        Decision::Apply | Decision::ApplyPart(_) => Err(ActionError::Tool(
            "Not discarded: the decision about this discard was to apply it; nothing was written and the preview stays pending.".to_owned(),
        )),
        Decision::Discard { .. } | Decision::LeavePending { .. } => Ok(decided),
    }
}

/// What a callback of a stored action takes, a copy per call: the store, the action's id and
/// the decision pipeline.
#[derive(Debug, Clone)]
struct Callback(Store, String, Deciders);

impl Callback {
    fn of(store: &Store, record: &PendingSummary, deciders: Deciders) -> Self {
        Self(store.clone(), record.id.clone(), deciders)
    }

    /// The pending action of `record`: its apply runs `apply`, its reject `reject`, each with
    /// a copy of these parts.
    fn action<A, AF, R, RF>(self, record: &PendingSummary, apply: A, reject: R) -> PendingAction
    where
        A: Fn(Self, String, Option<Extra>) -> AF + Send + Sync + 'static,
        AF: Future<Output = Result<ToolResult, ActionError>> + Send + 'static,
        R: Fn(Self, String, Option<Extra>) -> RF + Send + Sync + 'static,
        RF: Future<Output = Result<Option<ToolResult>, ActionError>> + Send + 'static,
    {
        let parts = self.clone();
        PendingAction::new(
            record.label.clone(),
            record.source_tool.clone(),
            move |reason, extra| apply(parts.clone(), reason, extra),
        )
        .with_reject(move |reason, extra| reject(self.clone(), reason, extra))
    }
}

/// The pending action of a stored preview: the decision pipeline decides, and the decision
/// lands through the store, under its lock, on a blocking thread (so an abort cannot
/// interrupt a transaction half-way).
fn durable_action(store: &Store, record: &PendingSummary, deciders: Deciders) -> PendingAction {
    let source_tool = record.source_tool.clone();
    Callback::of(store, record, deciders).action(
        record,
        move |Callback(store, id, deciders), reason, extra| {
            let source_tool = source_tool.clone();
            async move {
                check_named(extra.as_ref(), &id, "applied")?;
                let model = ResolveRequest {
                    selection: selection_of(extra.as_ref())?,
                    ..requester(&store, ResolveAction::Apply, reason)
                };
                let decided = deciders.decide(&store, &id, model.clone()).await?;
                let landed = run_blocking("apply", move || {
                    let landed = land(&store, &id, decided, &model, extra);
                    if landed.is_err() {
                        // Keep the failed action at the head for every process.
                        let _ = store.bump_to_head(&id);
                    }
                    landed
                })
                .await??;
                match landed {
                    Landed::Applied {
                        outcome,
                        rejections,
                    } => Ok(applied_result(&source_tool, &outcome, &rejections)),
                    Landed::Discarded { record } => Ok(human_discard_result(&record.reason)),
                    Landed::LeftPending { why } => Err(ActionError::Tool(why)),
                }
            }
        },
        |Callback(store, id, deciders), reason, extra| async move {
            check_named(extra.as_ref(), &id, "discarded")?;
            let model = requester(&store, ResolveAction::Discard, reason);
            let decided =
                refuse_apply_on_discard(deciders.decide(&store, &id, model.clone()).await?)?;
            let landed = run_blocking("discard", move || land(&store, &id, decided, &model, extra))
                .await??;
            match landed {
                Landed::Discarded { .. } => Ok(None),
                Landed::LeftPending { why } => Err(ActionError::Tool(why)),
                Landed::Applied { .. } => Err(ActionError::Failed(
                    "a discard was carried out as an apply".to_owned(),
                )),
            }
        },
    )
}

/// The pending action of a stored MCP tool call: the decision pipeline decides; apply (and
/// discard, when the record has a reject call) make the call through `runner`, under the
/// store's lock, on a blocking thread; the action is consumed only when the call succeeds. An
/// MCP tool call is applied whole or not at all, so a decision to apply part of it applies it.
fn mcp_action(
    store: &Store,
    record: &PendingSummary,
    deciders: Deciders,
    runner: Option<Arc<dyn ExternalActionRunner>>,
) -> PendingAction {
    let apply_runner = runner.clone();
    Callback::of(store, record, deciders).action(
        record,
        move |Callback(store, id, deciders), reason, extra| {
            let runner = apply_runner.clone();
            let handle = tokio::runtime::Handle::current();
            async move {
                check_named(extra.as_ref(), &id, "applied")?;
                let model = requester(&store, ResolveAction::Apply, reason);
                let decided = deciders.decide(&store, &id, model.clone()).await?;
                let attribution = decided.attribution(&model);
                run_blocking("apply", move || {
                    let reason = decided.note.clone().unwrap_or(model.reason);
                    match decided.decision {
                        Decision::LeavePending { why } => return Err(ActionError::Tool(why)),
                        Decision::Discard { reason } => {
                            mcp_discard(
                                &store,
                                runner.as_ref(),
                                &handle,
                                (&id, &reason, None),
                                &attribution,
                            )?;
                            return Ok(human_discard_result(&reason));
                        }
                        Decision::Apply | Decision::ApplyPart(_) => {}
                    }
                    store
                        .resolve_external_as(
                            &id,
                            Outcome::Applied,
                            &reason,
                            extra.clone(),
                            &attribution,
                            |record| {
                                mcp_call(
                                    runner.as_ref(),
                                    &handle,
                                    record,
                                    Step::Apply,
                                    &reason,
                                    extra.as_ref(),
                                )
                            },
                        )?
                        .map_err(ActionError::Failed)
                })
                .await?
            }
        },
        move |Callback(store, id, deciders), reason, extra| {
            let runner = runner.clone();
            let handle = tokio::runtime::Handle::current();
            async move {
                check_named(extra.as_ref(), &id, "discarded")?;
                let model = requester(&store, ResolveAction::Discard, reason);
                let decided =
                    refuse_apply_on_discard(deciders.decide(&store, &id, model.clone()).await?)?;
                let attribution = decided.attribution(&model);
                let reason = match decided.decision {
                    Decision::LeavePending { why } => return Err(ActionError::Tool(why)),
                    Decision::Discard { reason } => reason,
                    Decision::Apply | Decision::ApplyPart(_) => model.reason,
                };
                run_blocking("discard", move || {
                    mcp_discard(
                        &store,
                        runner.as_ref(),
                        &handle,
                        (&id, &reason, extra),
                        &attribution,
                    )
                })
                .await?
            }
        },
    )
}

/// Which call of an MCP action to make.
#[derive(Debug, Clone, Copy)]
enum Step {
    Apply,
    Reject,
}

/// Discard a stored MCP action: call its reject tool when it has one (the result is the
/// discard's result), else call nothing (`None`: the default discard text).
fn mcp_discard(
    store: &Store,
    runner: Option<&Arc<dyn ExternalActionRunner>>,
    handle: &tokio::runtime::Handle,
    (id, reason, extra): (&str, &str, Option<resolve_core::Extra>),
    attribution: &Attribution,
) -> Result<Option<ToolResult>, ActionError> {
    store
        .resolve_external_as(
            id,
            Outcome::Discarded,
            reason,
            extra.clone(),
            attribution,
            |record| match record
                .mcp
                .as_ref()
                .and_then(|action| action.reject.as_ref())
            {
                None => Ok(None),
                Some(_) => {
                    mcp_call(runner, handle, record, Step::Reject, reason, extra.as_ref()).map(Some)
                }
            },
        )?
        .map_err(ActionError::Tool)
}

/// Make the apply or reject call of `record` and wait for it (on this blocking thread). An
/// error result, like a call that could not be made, is an `Err` with a message naming the
/// server and the tool.
fn mcp_call(
    runner: Option<&Arc<dyn ExternalActionRunner>>,
    handle: &tokio::runtime::Handle,
    record: &PendingRecord,
    step: Step,
    reason: &str,
    extra: Option<&resolve_core::Extra>,
) -> Result<ToolResult, String> {
    let Some(action) = &record.mcp else {
        return Err(format!("`{}` is not an MCP tool call.", record.id));
    };
    let call = match step {
        Step::Apply => &action.apply,
        Step::Reject => action
            .reject
            .as_ref()
            .ok_or_else(|| format!("`{}` has no reject call.", record.id))?,
    };
    let Some(runner) = runner else {
        return Err(format!(
            "`{}` calls the tool `{}` of the MCP server `{}`, and no MCP client is set up in this process.",
            record.id, call.tool, action.server
        ));
    };
    let result = handle.block_on(runner.call(&action.server, call, reason, extra))?;
    if result.is_error {
        return Err(format!(
            "the tool `{}` of the MCP server `{}` returned an error: {}",
            call.tool, action.server, result.text
        ));
    }
    Ok(result)
}

/// The result the model reads when the person asked discarded its preview instead.
fn human_discard_result(reason: &str) -> ToolResult {
    ToolResult::error(format!(
        "Not applied: the user reviewed this preview and discarded it. Their reason: {reason}"
    ))
}

/// When `extra.id` names a pending action, it must be `id`, the one being decided: whoever saw
/// one preview (a review page inside a host) never lands or drops another staged since.
fn check_named(
    extra: Option<&Map<String, Value>>,
    id: &str,
    done: &str,
) -> Result<(), ActionError> {
    match extra.and_then(|extra| extra.get("id")) {
        None => Ok(()),
        Some(Value::String(named)) if named == id => Ok(()),
        Some(Value::String(named)) => Err(ActionError::Tool(format!(
            "Not {done}: `extra.id` names `{named}`, but the pending action `resolve` decides now is `{id}`, staged since. Nothing was written; decide `{id}` first, or call `resolve` without `extra.id`."
        ))),
        Some(_) => Err(ActionError::Tool(
            "`extra.id` must be the id of the pending action to decide (`pending-action:edit:3`)."
                .to_owned(),
        )),
    }
}

/// What `extra` selects: `only` (these files and hunks) or `except` (all but these), each a
/// non-empty list of file paths and hunk addresses (`src/a.rs#2`); neither: all of it.
fn selection_of(extra: Option<&Map<String, Value>>) -> Result<Selection, ActionError> {
    let list = |key: &str| -> Result<Option<Vec<String>>, ActionError> {
        let Some(value) = extra.and_then(|extra| extra.get(key)) else {
            return Ok(None);
        };
        let entries = value.as_array().and_then(|items| {
            items
                .iter()
                .map(|item| item.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
        });
        match entries {
            Some(entries) if !entries.is_empty() => Ok(Some(entries)),
            Some(_) | None => Err(ActionError::Tool(format!(
                "`extra.{key}` must be a non-empty array of file paths or hunk addresses (`src/a.rs#2`) from the preview."
            ))),
        }
    };
    let selection = match (list("only")?, list("except")?) {
        (Some(_), Some(_)) => {
            return Err(ActionError::Tool(
                "Give `extra.only` or `extra.except`, not both.".to_owned(),
            ));
        }
        (Some(only), None) => Selection::only(&only),
        (None, Some(except)) => Selection::except(&except),
        (None, None) => Ok(Selection::All),
    };
    selection.map_err(ActionError::from)
}

/// The line a result gives for a file that received its preview rebased (`rederived`: by
/// running its rewrite again on its current bytes).
fn rebased_line(path: &str, rederived: bool) -> String {
    let how = if rederived {
        " (the rewrite ran again on its current content and found the same matches)"
    } else {
        ""
    };
    format!(
        "Rebased {} onto changes made since the preview{how}.",
        resolve_core::quote_path(path)
    )
}

/// The line an apply's result gives when a host's own edit tool staged the action (through
/// its hook): the host remembers what the model last read of each file and refuses an edit of a
/// file written since, so the model is told to read them first instead of finding out by a
/// failed edit.
fn reread_line(paths: &[String]) -> String {
    let quoted: Vec<String> = paths
        .iter()
        .map(|path| resolve_core::quote_path(path).into_owned())
        .collect();
    let (them, were) = if paths.len() == 1 {
        ("it", "wrote it")
    } else {
        ("them", "wrote them")
    };
    format!(
        "Read {} again before you edit {them} further: resolve {were}, not your edit tool.",
        quoted.join(", ")
    )
}

/// The success text and details of an apply: the producer's text, a line per file applied
/// hunk by hunk, the applied and dropped files when some were dropped, and the person's
/// reasons for parts they left out.
fn applied_result(
    source_tool: &str,
    outcome: &ApplyOutcome,
    rejections: &[HunkRejection],
) -> ToolResult {
    let mut text = applied_text_for(
        source_tool,
        &outcome.applied_files,
        outcome.total_replacements,
    );
    for path in &outcome.rebased_files {
        text.push('\n');
        text.push_str(&rebased_line(path, outcome.rederived_files.contains(path)));
    }
    if let Some(review) = &outcome.record.review {
        for line in partial_apply_lines(review) {
            text.push('\n');
            text.push_str(&line);
        }
    }
    for rejection in rejections {
        text.push_str(&format!(
            "\nThe user left out {}: {}",
            rejection.address, rejection.reason
        ));
    }
    if matches!(outcome.record.action.origin, Origin::HostSession { .. })
        && !outcome.applied_files.is_empty()
    {
        text.push('\n');
        text.push_str(&reread_line(&outcome.applied_files));
    }
    if !outcome.dropped_files.is_empty() {
        text.push_str(&format!(
            "\nApplied files: {}\nDropped files: {}",
            outcome.applied_files.join(", "),
            outcome.dropped_files.join(", ")
        ));
    }
    // Hunks left out of files that landed in part.
    let dropped_hunks: Vec<String> = outcome
        .record
        .review
        .iter()
        .flat_map(|review| &review.hunks)
        .filter(|file| !file.landed.is_empty())
        .flat_map(|file| file.rejected.iter().map(|hunk| file.address(hunk.hunk)))
        .collect();
    if let Some(line) = commit_line(&outcome.record) {
        text.push('\n');
        text.push_str(&line);
    }
    let hunks_dropped = dropped_hunks.len();
    let mut details = Value::Object(
        AppliedFacts {
            pending_id: outcome.record.action.id.clone(),
            applied_files: outcome.applied_files.clone(),
            dropped_files: outcome.dropped_files.clone(),
            dropped_hunks,
            total_replacements: outcome.total_replacements,
            rebased_files: outcome.rebased_files.clone(),
            commit: outcome.record.commit.clone(),
            not_committed: outcome.record.not_committed.clone(),
        }
        .to_details(),
    );
    if let Some(review) = &outcome.record.review {
        details["review"] = json!(review);
    }
    // What landed, for the person reading the result; the history keeps the original label.
    let mut label = (!outcome.dropped_files.is_empty()).then(|| {
        applied_label(
            &outcome.record.action.label,
            outcome.applied_files.len(),
            outcome.total_replacements,
            outcome.dropped_files.len(),
        )
    });
    if hunks_dropped > 0 {
        let label = label.get_or_insert_with(|| outcome.record.action.label.clone());
        label.push_str(&format!(
            ", {hunks_dropped} {} dropped",
            if hunks_dropped == 1 { "hunk" } else { "hunks" }
        ));
    }
    if let Some(label) = label {
        details["appliedLabel"] = json!(label);
    }
    ToolResult::text(text).with_details(details)
}
