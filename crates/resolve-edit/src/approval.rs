//! The one decision pipeline: who may decide a `resolve` the model asks for
//! ([`ApprovalMode`]), what they are asked ([`ApprovalRequest`]), what they answer
//! ([`Decided`]: a [`Decision`] and who made it), the [`Approver`] interface every way of
//! deciding implements, and [`land`], which carries a decision out through the store with the
//! decider recorded as an [`Attribution`]. Every wait on a person is bounded by one
//! [`ApproveTimeout`]: when it passes, the decision is [`Decision::LeavePending`], decided by
//! the policy ([`ApproveTimeout::left_pending`]).
//!
//! Approvers owned here: [`AutoApprover`] (the model's request stands), [`AwaitPerson`] (a
//! standing rule leaves the preview for a person elsewhere) and [`TerminalApprover`] over the
//! [`TerminalReview`] hook a terminal front end implements. Not owned here: the MCP
//! elicitation form (`resolve-mcp`), the terminal screens (`resolve-cli`), plan mode's use of
//! a decision (`resolve-agent`).

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use resolve_core::{DecidedBy, Extra, ResolveAction};
use resolve_store::{
    ApplyOutcome, Attribution, CommandTrust, CommitFact, HistoryRecord, PendingRecord, Store,
};

use crate::blocking::run_blocking;
use crate::error::EditError;
use crate::git_commit::commit_applied;
use crate::review::{ReviewDecision, apply_reviewed_as};
use crate::selection::{HunkRejection, Selection};

/// Who decides an `apply` the model asks for; one type for `resolve agent --approve` and
/// `resolve mcp --approve`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ApprovalMode {
    /// The model's `apply` runs at once (the host's own permission prompt, if any, is the gate).
    #[default]
    Auto,
    /// A person is asked before each apply (a terminal prompt for the agent, an elicitation
    /// form for an MCP client); where nobody can be asked, nothing is applied.
    Ask,
    /// A person reviews each apply hunk by hunk (the terminal review); never applied on the
    /// model's word alone.
    Review,
}

impl ApprovalMode {
    /// Every mode, in the order help texts list them.
    pub const ALL: [Self; 3] = [Self::Auto, Self::Ask, Self::Review];

    /// Its name on the command line: `auto`, `ask` or `review`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Ask => "ask",
            Self::Review => "review",
        }
    }
}

impl fmt::Display for ApprovalMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is not an [`ApprovalMode`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Unknown approval mode `{name}`; use `auto`, `ask` or `review`.")]
pub struct UnknownApprovalMode {
    /// The name given.
    pub name: String,
}

impl FromStr for ApprovalMode {
    type Err = UnknownApprovalMode;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|mode| mode.as_str() == name)
            .ok_or_else(|| UnknownApprovalMode {
                name: name.to_owned(),
            })
    }
}

/// How long a person has to decide an approval (`--approve-timeout`): a duration, or
/// forever. By default ten minutes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApproveTimeout {
    limit: Option<Duration>,
}

/// The default of `--approve-timeout`: ten minutes.
pub const DEFAULT_APPROVE_TIMEOUT: Duration = Duration::from_secs(600);

impl Default for ApproveTimeout {
    fn default() -> Self {
        Self::after(DEFAULT_APPROVE_TIMEOUT)
    }
}

impl ApproveTimeout {
    /// No deadline: wait for the person however long it takes.
    pub const FOREVER: Self = Self { limit: None };

    /// A deadline `limit` after the person is asked; zero means [`Self::FOREVER`].
    pub fn after(limit: Duration) -> Self {
        Self {
            limit: (!limit.is_zero()).then_some(limit),
        }
    }

    /// How long a person has, `None` for forever.
    pub fn limit(self) -> Option<Duration> {
        self.limit
    }

    /// The instant a person asked at `asked` must have decided by, `None` for never.
    pub fn deadline_from(self, asked: Instant) -> Option<Instant> {
        self.limit.and_then(|limit| asked.checked_add(limit))
    }

    /// The decision when no decision came in time: nothing is written, the action stays
    /// pending, and the model reads why.
    pub fn left_pending(self) -> Decided {
        Decided::new(
            Decision::LeavePending {
                why: format!(
                    "Not applied: no decision came in time (a person had {self} to decide; `--approve-timeout`). Nothing was written; it stays pending. Call `resolve` again to ask again, or discard it."
                ),
            },
            DecidedBy::Policy,
        )
    }

    /// `deciding`, or [`Self::left_pending`] if it has not decided within the limit (the
    /// future is dropped then).
    pub async fn bound(self, deciding: impl Future<Output = Decided>) -> Decided {
        match self.limit {
            None => deciding.await,
            Some(limit) => tokio::time::timeout(limit, deciding)
                .await
                .unwrap_or_else(|_| self.left_pending()),
        }
    }
}

impl fmt::Display for ApproveTimeout {
    /// `0` for forever, else the largest whole unit: `10m`, `90s`, `1500ms`, `2h`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(limit) = self.limit else {
            return f.write_str("0");
        };
        let millis = limit.as_millis();
        let units: [(u128, &str); 4] = [(3_600_000, "h"), (60_000, "m"), (1000, "s"), (1, "ms")];
        let (size, unit) = units
            .into_iter()
            .find(|(size, _)| millis % size == 0)
            .unwrap_or((1, "ms"));
        write!(f, "{}{unit}", millis / size)
    }
}

/// A `--approve-timeout` value that is not a duration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "Invalid duration `{given}`; use a whole number with a unit, `ms`, `s`, `m` or `h` (`90s`, `10m`), or `0` to wait forever."
)]
pub struct InvalidApproveTimeout {
    /// What was given.
    pub given: String,
}

impl FromStr for ApproveTimeout {
    type Err = InvalidApproveTimeout;

    /// `0` (forever), or a whole number followed by `ms`, `s`, `m` or `h`; a bare number is
    /// seconds.
    fn from_str(given: &str) -> Result<Self, Self::Err> {
        let invalid = || InvalidApproveTimeout {
            given: given.to_owned(),
        };
        let text = given.trim();
        let digits = text
            .find(|character: char| !character.is_ascii_digit())
            .unwrap_or(text.len());
        let (number, unit) = text.split_at(digits);
        let number: u64 = number.parse().map_err(|_| invalid())?;
        let limit = match unit {
            "ms" => Duration::from_millis(number),
            "" | "s" => Duration::from_secs(number),
            "m" => Duration::from_secs(number.checked_mul(60).ok_or_else(invalid)?),
            "h" => Duration::from_secs(number.checked_mul(3600).ok_or_else(invalid)?),
            _ => return Err(invalid()),
        };
        Ok(Self::after(limit))
    }
}

/// What was decided about one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Land what the model asked for (all of it, or the part its `extra` selected); for a
    /// plan, approve it.
    Apply,
    /// Land part of it as the decider picked it (hunks left out with their reasons); this
    /// replaces the selection the model asked for.
    ApplyPart(ReviewDecision),
    /// Drop it, with the decider's reason.
    Discard {
        /// Why.
        reason: String,
    },
    /// Decide nothing now: nothing is written and the preview stays pending (for a plan: plan
    /// mode stays, and the model reads why).
    LeavePending {
        /// What the model reads: why nothing happened and what comes next.
        why: String,
    },
}

/// A decision and who made it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decided {
    /// What was decided.
    pub decision: Decision,
    /// Who decided it.
    pub by: DecidedBy,
    /// The decider's own words about an apply (a person's reason), recorded instead of the
    /// model's reason; `None` keeps the model's.
    pub note: Option<String>,
}

impl Decided {
    /// `decision`, made by `by`, with no words of the decider's own.
    pub fn new(decision: Decision, by: DecidedBy) -> Self {
        Self {
            decision,
            by,
            note: None,
        }
    }

    /// This decision with the decider's own words about it.
    #[must_use]
    pub fn with_note(mut self, note: Option<String>) -> Self {
        self.note = note;
        self
    }

    /// What the store records about who decided `request`: the requester alone when it
    /// decided its own request, else the decider with the requester's reason beside.
    pub fn attribution(&self, request: &ResolveRequest) -> Attribution {
        if self.by == request.asked_by {
            Attribution {
                decided_by: self.by,
                model_reason: None,
            }
        } else {
            Attribution::over_model(self.by, request.reason.clone())
        }
    }
}

/// A plan the model submitted for approval (plan mode), as the approver sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanReview {
    /// The plan file, relative to the root (`.resolve/plans/words-counter-plan.md`).
    pub path: String,
    /// The plan's title.
    pub title: String,
    /// The plan's text.
    pub content: String,
}

/// What the model asks to resolve.
#[derive(Debug, Clone, PartialEq)]
pub enum ApprovalSubject {
    /// A stored pending action, as it is in the store now.
    Action(Box<PendingRecord>),
    /// A submitted plan.
    Plan(PlanReview),
}

/// A `resolve` request, checked: the model's (or, at the command line, a person's own).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolveRequest {
    /// Apply or discard.
    pub action: ResolveAction,
    /// The requester's reason.
    pub reason: String,
    /// The part it asked to apply (`extra.only` / `extra.except`).
    pub selection: Selection,
    /// Who asks: the model, or a person at the command line (whose request is their decision).
    pub asked_by: DecidedBy,
}

impl ResolveRequest {
    /// The model's request to `action` with `reason`, on the whole action.
    pub fn model(action: ResolveAction, reason: impl Into<String>) -> Self {
        Self {
            action,
            reason: reason.into(),
            selection: Selection::All,
            asked_by: DecidedBy::Model,
        }
    }
}

/// What an [`Approver`] is asked: the subject and the model's request about it.
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalRequest {
    /// What is to be resolved.
    pub subject: ApprovalSubject,
    /// What the model asked.
    pub model: ResolveRequest,
}

impl ResolveRequest {
    /// The decision that grants this request as asked.
    pub fn as_asked(&self) -> Decision {
        match self.action {
            ResolveAction::Apply => Decision::Apply,
            ResolveAction::Discard => Decision::Discard {
                reason: self.reason.clone(),
            },
        }
    }
}

impl ApprovalRequest {
    /// The decision that grants the model's request as it asked.
    pub fn as_asked(&self) -> Decision {
        self.model.as_asked()
    }
}

/// The future an [`Approver`] returns.
pub type DecisionFuture<'a> = Pin<Box<dyn Future<Output = Decided> + Send + 'a>>;

/// Decides a model's `resolve` request: every way of deciding (at once, an elicitation form, a
/// terminal review, a plan prompt) implements this one interface.
pub trait Approver: Send + Sync + fmt::Debug {
    /// Decide `request`. May wait for a person; never writes anything itself.
    fn decide<'a>(&'a self, request: &'a ApprovalRequest) -> DecisionFuture<'a>;
}

/// The request stands, decided by whoever asked (`--approve auto`: the model; at the command
/// line: the person).
#[derive(Debug, Default, Clone, Copy)]
pub struct AutoApprover;

impl Approver for AutoApprover {
    fn decide<'a>(&'a self, request: &'a ApprovalRequest) -> DecisionFuture<'a> {
        Box::pin(async move { Decided::new(request.as_asked(), request.model.asked_by) })
    }
}

/// A standing rule leaves every apply pending for a person to decide elsewhere (for example,
/// `resolve mcp --approve review`, or `ask` with a client that cannot ask).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AwaitPerson {
    /// What the model reads.
    pub why: String,
}

impl Approver for AwaitPerson {
    fn decide<'a>(&'a self, _request: &'a ApprovalRequest) -> DecisionFuture<'a> {
        let why = self.why.clone();
        Box::pin(async move { Decided::new(Decision::LeavePending { why }, DecidedBy::Policy) })
    }
}

/// The hook a terminal front end implements to ask the person in front of it (`resolve-cli`
/// shows the hunk review, a line prompt, or the plan).
pub trait TerminalReview: Send + Sync + fmt::Debug {
    /// Ask the person about `request`. Runs on a blocking thread, so it may prompt.
    fn review(&self, request: &ApprovalRequest) -> Decision;

    /// Ask the person about `request`, giving up at `deadline` (`None`: never) with `None`:
    /// then nothing was decided and the screen or prompt is closed. Besides the decision, the
    /// person's own words about an apply (the reason typed at the review's apply prompt), which
    /// the history records instead of the model's reason (kept as `modelReason`). Runs on a
    /// blocking thread. By default [`Self::review`] with no words of their own, for a front end
    /// that always answers at once.
    fn review_until(
        &self,
        request: &ApprovalRequest,
        deadline: Option<Instant>,
    ) -> Option<(Decision, Option<String>)> {
        let _ = deadline;
        Some((self.review(request), None))
    }
}

/// A person at the terminal decides, through a [`TerminalReview`], within an
/// [`ApproveTimeout`].
#[derive(Debug, Clone)]
pub struct TerminalApprover {
    review: Arc<dyn TerminalReview>,
    timeout: ApproveTimeout,
}

impl TerminalApprover {
    /// An approver asking through `review`, within the default [`ApproveTimeout`].
    pub fn new(review: Arc<dyn TerminalReview>) -> Self {
        Self {
            review,
            timeout: ApproveTimeout::default(),
        }
    }

    /// This approver, with `timeout` for the person to decide.
    #[must_use]
    pub fn with_timeout(mut self, timeout: ApproveTimeout) -> Self {
        self.timeout = timeout;
        self
    }
}

impl Approver for TerminalApprover {
    fn decide<'a>(&'a self, request: &'a ApprovalRequest) -> DecisionFuture<'a> {
        let review = Arc::clone(&self.review);
        let asked = request.clone();
        let timeout = self.timeout;
        // The front end closes itself at the deadline, so no screen outlives the decision.
        let deadline = timeout.deadline_from(Instant::now());
        Box::pin(async move {
            match run_blocking("terminal review", move || {
                review.review_until(&asked, deadline)
            })
            .await
            {
                Ok(Some((decision, note))) => {
                    Decided::new(decision, DecidedBy::Person).with_note(note)
                }
                Ok(None) => timeout.left_pending(),
                Err(error) => Decided::new(
                    Decision::LeavePending {
                        why: format!(
                            "Not applied: the terminal review did not finish ({error}). Nothing was written; the preview stays pending."
                        ),
                    },
                    DecidedBy::Policy,
                ),
            }
        })
    }
}

/// Decisions a person made ahead of the `resolve` call that carries them out (an MCP client's
/// form answered before the call reaches the store), by pending id; each is taken once.
#[derive(Debug, Clone, Default)]
pub struct DecisionsAhead {
    decided: Arc<Mutex<HashMap<String, Decided>>>,
}

impl DecisionsAhead {
    /// No decisions yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Remember `decided` for the pending action `id`, replacing any earlier one.
    pub fn give(&self, id: &str, decided: Decided) {
        self.lock().insert(id.to_owned(), decided);
    }

    /// The decision made ahead for `id`, taken (so it is used once).
    pub fn take(&self, id: &str) -> Option<Decided> {
        self.lock().remove(id)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Decided>> {
        self.decided
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The pipeline's decision about `request`: a requester may always drop a preview, so a
/// discard is never put to `approver`; an apply is.
pub async fn decide(approver: &dyn Approver, request: &ApprovalRequest) -> Decided {
    match request.model.action {
        ResolveAction::Discard => AutoApprover.decide(request).await,
        ResolveAction::Apply => approver.decide(request).await,
    }
}

/// How [`land`] carried a decision out.
#[derive(Debug, Clone)]
pub enum Landed {
    /// Applied (whole or in part).
    Applied {
        /// What the store wrote.
        outcome: Box<ApplyOutcome>,
        /// The parts a person left out, with their reasons (empty when nobody picked).
        rejections: Vec<HunkRejection>,
    },
    /// Discarded.
    Discarded {
        /// The history record written.
        record: Box<HistoryRecord>,
    },
    /// Nothing was written; the preview stays pending.
    LeftPending {
        /// Why (what the model reads).
        why: String,
    },
}

/// Carry `decided` out on the stored pending action `id` (whose change set the store writes),
/// as requested by `model` with `extra`: the history records who decided and, when someone
/// else did, the model's reason beside theirs.
pub fn land(
    store: &Store,
    id: &str,
    decided: Decided,
    model: &ResolveRequest,
    extra: Option<Extra>,
) -> Result<Landed, EditError> {
    let attribution = decided.attribution(model);
    let review = match decided.decision {
        Decision::LeavePending { why } => return Ok(Landed::LeftPending { why }),
        Decision::Discard { reason } => {
            // A discard decided over the model's apply keeps none of the apply's `extra`.
            let extra = match model.action {
                ResolveAction::Discard => extra,
                ResolveAction::Apply => None,
            };
            let record = store.discard_as(id, &reason, extra, &attribution)?;
            return Ok(Landed::Discarded {
                record: Box::new(record),
            });
        }
        Decision::Apply => ReviewDecision {
            selection: model.selection.clone(),
            ..ReviewDecision::default()
        },
        Decision::ApplyPart(review) => review,
    };
    let reason = decided.note.as_deref().unwrap_or(&model.reason);
    let mut outcome = apply_reviewed_as(store, id, &review, reason, extra, &attribution)?;
    if let Some(trust) = store.commit_request() {
        commit_landed(store, trust, &mut outcome);
    }
    Ok(Landed::Applied {
        outcome: Box::new(outcome),
        rejections: review.rejections,
    })
}

/// Make the commit asked for after `outcome` landed (see [`commit_applied`]) and record what
/// came of it in the history and in `outcome`. A configuration's `commit = true` counts only
/// once its file is trusted (committing runs the repository's hooks); the person's own
/// `--commit` always does. The apply stands whatever happens here.
fn commit_landed(store: &Store, trust: &CommandTrust, outcome: &mut ApplyOutcome) {
    let fact = match (trust.check(), trust) {
        (Ok(()), _) => commit_applied(store, &outcome.record),
        (Err(_), CommandTrust::Refused(untrusted)) => CommitFact::NotCommitted {
            reason: format!(
                "`{}` asks for a commit per apply (`commit = true`), but it is not trusted, and a commit runs the repository's hooks; read it and run `resolve trust`, or apply with `--commit`",
                untrusted.path.display()
            ),
        },
        (Err(error), CommandTrust::Allowed) => CommitFact::NotCommitted {
            reason: error.to_string(),
        },
    };
    outcome.record.set_commit(&fact);
    if let Err(error) = store.record_commit(&outcome.record.action.id, &fact) {
        let note = format!("the history could not record what came of the commit ({error})");
        outcome.record.not_committed = Some(match outcome.record.not_committed.take() {
            Some(why) => format!("{why}; {note}"),
            None => note,
        });
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn approve_timeouts_parse_with_a_unit_and_zero_means_forever() {
        let parsed = |text: &str| {
            text.parse::<ApproveTimeout>()
                .map(|timeout| timeout.limit())
        };
        assert_eq!(parsed("10m"), Ok(Some(Duration::from_secs(600))));
        assert_eq!(parsed("90s"), Ok(Some(Duration::from_secs(90))));
        assert_eq!(parsed("90"), Ok(Some(Duration::from_secs(90))));
        assert_eq!(parsed("250ms"), Ok(Some(Duration::from_millis(250))));
        assert_eq!(parsed("2h"), Ok(Some(Duration::from_secs(7200))));
        assert_eq!(parsed("0"), Ok(None));
        assert_eq!(parsed("0m"), Ok(None));
        for wrong in ["", "m", "10 minutes", "-1s", "1.5m", "10d"] {
            let error = wrong.parse::<ApproveTimeout>().unwrap_err();
            assert!(error.to_string().contains(&format!("`{wrong}`")), "{error}");
        }
        assert_eq!(ApproveTimeout::default().to_string(), "10m");
        assert_eq!(ApproveTimeout::FOREVER.to_string(), "0");
        assert_eq!(
            "1500ms".parse::<ApproveTimeout>().unwrap().to_string(),
            "1500ms"
        );
    }

    #[tokio::test]
    async fn a_decision_past_the_timeout_leaves_the_action_pending_by_policy() {
        let timeout = ApproveTimeout::after(Duration::from_millis(50));
        let never = std::future::pending::<Decided>();
        let decided = timeout.bound(never).await;
        assert_eq!(decided.by, DecidedBy::Policy);
        let Decision::LeavePending { why } = decided.decision else {
            panic!("{decided:?}");
        };
        assert!(why.contains("no decision came in time"), "{why}");
        assert!(why.contains("50ms"), "{why}");
        let quick = async { Decided::new(Decision::Apply, DecidedBy::Person) };
        assert_eq!(timeout.bound(quick).await.decision, Decision::Apply);
    }
}
