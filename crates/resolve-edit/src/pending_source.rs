//! Keeping a `resolve-core` pending stack in step with the durable store: previews staged by
//! any process appear, previews consumed by any process disappear. Each stored preview becomes
//! a pending action whose apply and discard go through the store (and, for stored MCP tool
//! calls, through an [`ExternalActionRunner`]), optionally behind a person's [`ApplyGate`].

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use resolve_core::{
    ActionError, AppliedFacts, Facts, PendingAction, PendingSource, PendingStack, ToolResult,
};
use resolve_store::{ApplyOutcome, Origin, Outcome, PendingRecord, PendingSummary, Store};
use serde_json::{Map, Value, json};

use crate::blocking::run_blocking;
use crate::error::EditError;
use crate::external::ExternalActionRunner;
use crate::producer::{applied_label, applied_text_for};
use crate::review::{ReviewDecision, apply_reviewed, partial_apply_lines};
use crate::selection::{HunkRejection, Selection};

/// A person's say before a stored preview is applied (`resolve agent --approve ask`).
pub trait ApplyGate: Send + Sync + std::fmt::Debug {
    /// Decide whether `record` may be applied. Runs on a blocking thread; may prompt.
    fn review(&self, record: &PendingRecord) -> GateDecision;
}

/// What the person decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GateDecision {
    /// Let the apply go ahead.
    Apply,
    /// Apply part of it, as the person picked it (hunks left out with their reasons); this
    /// replaces the selection the model asked for.
    ApplyPart {
        /// What lands, and why the rest does not.
        decision: ReviewDecision,
    },
    /// Discard the preview instead, with the person's reason.
    Discard {
        /// Why the person discarded it.
        reason: String,
    },
}

/// Keeps a session's pending stack in step with the durable store: previews staged by any
/// process appear, previews consumed by any process disappear.
#[derive(Debug)]
pub struct StorePendingSource {
    store: Store,
    origin: Option<Origin>,
    gate: Option<Arc<dyn ApplyGate>>,
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
            gate: None,
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

    /// This source asking `gate` before every apply. By default applies are not reviewed.
    #[must_use]
    pub fn with_gate(mut self, gate: Arc<dyn ApplyGate>) -> Self {
        self.gate = Some(gate);
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
                self.origin
                    .as_ref()
                    .is_none_or(|origin| &record.origin == origin)
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
                    None => durable_action(&self.store, record, self.gate.clone()),
                    Some(_) => {
                        mcp_action(&self.store, record, self.gate.clone(), self.runner.clone())
                    }
                }),
            };
            stack.register_at(record.id.clone(), record.order, action);
        }
        Ok(())
    }
}

/// The pending action of a stored preview: apply and discard go through the store, under its
/// lock, on a blocking thread (so an abort cannot interrupt a transaction half-way).
fn durable_action(
    store: &Store,
    record: &PendingSummary,
    gate: Option<Arc<dyn ApplyGate>>,
) -> PendingAction {
    let apply_store = store.clone();
    let apply_id = record.id.clone();
    let source_tool = record.source_tool.clone();
    let reject_store = store.clone();
    let reject_id = record.id.clone();
    PendingAction::new(
        record.label.clone(),
        record.source_tool.clone(),
        move |reason, extra| {
            let store = apply_store.clone();
            let id = apply_id.clone();
            let source_tool = source_tool.clone();
            let gate = gate.clone();
            async move {
                let mut decision = ReviewDecision {
                    selection: selection_of(extra.as_ref())?,
                    ..ReviewDecision::default()
                };
                let outcome = run_blocking("apply", move || {
                    // Behind a gate, a person decides; the model's reason stays beside theirs.
                    let store = if gate.is_some() {
                        store.overruling(reason.clone())
                    } else {
                        store
                    };
                    match gate_review(gate.as_ref(), &store, &id)? {
                        None | Some(GateDecision::Apply) => {}
                        Some(GateDecision::Discard { reason }) => {
                            store.discard(&id, &reason, None)?;
                            return Ok(Err(reason));
                        }
                        Some(GateDecision::ApplyPart { decision: picked }) => decision = picked,
                    }
                    let outcome = apply_reviewed(&store, &id, &decision, &reason, extra);
                    if outcome.is_err() {
                        // Keep the failed action at the head for every process.
                        let _ = store.bump_to_head(&id);
                    }
                    outcome.map(|outcome| Ok((outcome, decision)))
                })
                .await??;
                match outcome {
                    Ok((outcome, decision)) => {
                        Ok(applied_result(&source_tool, &outcome, &decision.rejections))
                    }
                    Err(human_reason) => Ok(human_discard_result(&human_reason)),
                }
            }
        },
    )
    .with_reject(move |reason, extra| {
        let store = reject_store.clone();
        let id = reject_id.clone();
        async move {
            run_blocking("discard", move || store.discard(&id, &reason, extra)).await??;
            Ok(None)
        }
    })
}

/// Ask `gate` (when there is one) about the pending action `id`; `None` when there is no gate
/// (or nothing pending to show it).
fn gate_review(
    gate: Option<&Arc<dyn ApplyGate>>,
    store: &Store,
    id: &str,
) -> Result<Option<GateDecision>, EditError> {
    let Some(gate) = gate else {
        return Ok(None);
    };
    let Some(record) = store.pending_record(id)? else {
        return Ok(None);
    };
    // Nobody is asked to approve what this store may not run.
    store.refuse_foreign(&record)?;
    Ok(Some(gate.review(&record)))
}

/// The person's reason when `gate` discards the pending action `id` (an MCP tool call is
/// applied whole or not at all, so a partial pick applies it).
fn gate_discards(
    gate: Option<&Arc<dyn ApplyGate>>,
    store: &Store,
    id: &str,
) -> Result<Option<String>, EditError> {
    Ok(match gate_review(gate, store, id)? {
        Some(GateDecision::Discard { reason }) => Some(reason),
        Some(GateDecision::Apply | GateDecision::ApplyPart { .. }) | None => None,
    })
}

/// The pending action of a stored MCP tool call: apply (and discard, when the record has a
/// reject call) make the call through `runner`, under the store's lock, on a blocking thread;
/// the action is consumed only when the call succeeds.
fn mcp_action(
    store: &Store,
    record: &PendingSummary,
    gate: Option<Arc<dyn ApplyGate>>,
    runner: Option<Arc<dyn ExternalActionRunner>>,
) -> PendingAction {
    let apply_store = store.clone();
    let apply_id = record.id.clone();
    let apply_runner = runner.clone();
    let reject_store = store.clone();
    let reject_id = record.id.clone();
    PendingAction::new(
        record.label.clone(),
        record.source_tool.clone(),
        move |reason, extra| {
            let store = apply_store.clone();
            let id = apply_id.clone();
            let runner = apply_runner.clone();
            let gate = gate.clone();
            let handle = tokio::runtime::Handle::current();
            async move {
                run_blocking("apply", move || {
                    let store = if gate.is_some() {
                        store.overruling(reason.clone())
                    } else {
                        store
                    };
                    if let Some(reason) = gate_discards(gate.as_ref(), &store, &id)? {
                        mcp_discard(&store, runner.as_ref(), &handle, &id, &reason, None)?;
                        return Ok(human_discard_result(&reason));
                    }
                    store
                        .resolve_external(
                            &id,
                            Outcome::Applied,
                            &reason,
                            extra.clone(),
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
    )
    .with_reject(move |reason, extra| {
        let store = reject_store.clone();
        let id = reject_id.clone();
        let runner = runner.clone();
        let handle = tokio::runtime::Handle::current();
        async move {
            run_blocking("discard", move || {
                mcp_discard(&store, runner.as_ref(), &handle, &id, &reason, extra)
            })
            .await?
        }
    })
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
    id: &str,
    reason: &str,
    extra: Option<resolve_core::Extra>,
) -> Result<Option<ToolResult>, ActionError> {
    store
        .resolve_external(
            id,
            Outcome::Discarded,
            reason,
            extra.clone(),
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

/// The result the model reads when the person at the gate discarded its preview.
fn human_discard_result(reason: &str) -> ToolResult {
    ToolResult::error(format!(
        "Not applied: the user reviewed this preview and discarded it. Their reason: {reason}"
    ))
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
    let hunks_dropped = dropped_hunks.len();
    let mut details = Value::Object(
        AppliedFacts {
            pending_id: outcome.record.action.id.clone(),
            applied_files: outcome.applied_files.clone(),
            dropped_files: outcome.dropped_files.clone(),
            dropped_hunks,
            total_replacements: outcome.total_replacements,
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
