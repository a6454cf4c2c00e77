//! The terminal's approvers: [`TerminalReviewer`], the [`TerminalReview`] hook through which a
//! person at this terminal decides what the model asks (a stored preview in the hunk review,
//! or on a line prompt without a full terminal; a submitted plan on a prompt), and
//! [`approver_for`], the mapping from an [`ApprovalMode`] to the approver that decides.

use std::io::{BufRead, Write};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Instant;

use resolve_core::{visible_line, visible_text};
use resolve_edit::{
    ApprovalMode, ApprovalRequest, ApprovalSubject, ApproveTimeout, Approver, AutoApprover,
    Decision, HunkRejection, PendingRecord, PlanReview, ReviewDecision, ReviewerAnswer, Selection,
    Store, TerminalApprover, TerminalReview, reviewer_reason, shown_addressed_preview,
};

use crate::output::err_line;

/// The approver `mode` names for a run at this terminal: the model's word under `auto`, the
/// person at the terminal under `ask` and `review` (the hunk review when there is a terminal).
/// A person who does not decide within `timeout` leaves the action pending.
pub(crate) fn approver_for(
    mode: ApprovalMode,
    timeout: ApproveTimeout,
    store: &Store,
    color: bool,
) -> Arc<dyn Approver> {
    match mode {
        ApprovalMode::Auto => Arc::new(AutoApprover),
        ApprovalMode::Ask | ApprovalMode::Review => Arc::new(
            TerminalApprover::new(Arc::new(TerminalReviewer::new(store.clone(), color)))
                .with_timeout(timeout),
        ),
    }
}

/// Asks the person at this terminal: the full-screen review of a preview when standard input
/// and output are a terminal, otherwise a line prompt on standard error; a plan on a prompt.
#[derive(Debug)]
pub(crate) struct TerminalReviewer {
    store: Store,
    color: bool,
}

impl TerminalReviewer {
    /// A reviewer over `store`, drawing in color when `color`.
    pub(crate) fn new(store: Store, color: bool) -> Self {
        Self { store, color }
    }
}

impl TerminalReview for TerminalReviewer {
    fn review(&self, request: &ApprovalRequest) -> Decision {
        self.review_until(request, None).map_or_else(
            || ApproveTimeout::FOREVER.left_pending().decision,
            |(decision, _)| decision,
        )
    }

    fn review_until(
        &self,
        request: &ApprovalRequest,
        deadline: Option<Instant>,
    ) -> Option<(Decision, Option<String>)> {
        let mut prompt = Prompt { deadline };
        let decision = match &request.subject {
            ApprovalSubject::Action(record) => self.review_action(record, &mut prompt),
            ApprovalSubject::Plan(plan) => review_plan(plan, &mut prompt).map(|plan| (plan, None)),
        };
        if decision.is_none() {
            let _ = writeln!(
                std::io::stderr(),
                "\n(no answer in time; nothing was decided)"
            );
        }
        decision
    }
}

impl TerminalReviewer {
    /// A preview the model asks to apply: the decision, and the person's reason for an apply
    /// when they typed one; `None` when the deadline passed first.
    fn review_action(
        &self,
        record: &PendingRecord,
        prompt: &mut Prompt,
    ) -> Option<(Decision, Option<String>)> {
        // On a terminal, the full-screen review; otherwise (or if it cannot open) the prompt.
        if crate::review::is_interactive() {
            match crate::review::review_decision(
                &self.store,
                &record.id,
                self.color,
                prompt.deadline,
            ) {
                Ok(decision) => return decision,
                Err(error) => err_line(&format!(
                    "note: the review could not open ({error:#}); asking here instead."
                )),
            }
        }
        let mut stderr = std::io::stderr().lock();
        let _ = writeln!(
            stderr,
            "\nThe model wants to apply {} ({}):",
            visible_line(&record.id),
            visible_line(&record.label)
        );
        // Derived from what the apply writes, with control characters made visible.
        match shown_addressed_preview(&self.store, record) {
            Ok(preview) => {
                let _ = writeln!(stderr, "{}", visible_text(&preview));
            }
            Err(error) => {
                let _ = writeln!(stderr, "(its preview cannot be shown: {error})");
            }
        }
        loop {
            let _ = write!(
                stderr,
                "Apply this change? [a]pply / [d]iscard / or name the hunks or files to leave out (e.g. src/a.rs#2 src/b.rs): "
            );
            let _ = stderr.flush();
            let left_out = match ReviewerAnswer::parse(&prompt.line()?) {
                Ok(ReviewerAnswer::Apply) => return Some((Decision::Apply, None)),
                Ok(ReviewerAnswer::Discard) => {
                    let _ = write!(stderr, "Why discard it (the model reads this)? ");
                    let _ = stderr.flush();
                    let reason = reason_or(prompt.line()?, crate::review::DECLINED);
                    return Some((Decision::Discard { reason }, None));
                }
                Ok(ReviewerAnswer::LeaveOut(left_out)) => left_out,
                Err(error) => {
                    let _ = writeln!(stderr, "{error}");
                    continue;
                }
            };
            let mut rejections = Vec::with_capacity(left_out.len());
            for address in &left_out {
                let _ = write!(stderr, "Why leave out {address} (the model reads this)? ");
                let _ = stderr.flush();
                rejections.push(HunkRejection {
                    address: address.clone(),
                    reason: reason_or(prompt.line()?, "The user left it out without a reason."),
                });
            }
            let part = ReviewDecision {
                selection: Selection::Except(left_out),
                rejections,
                fingerprint: Some(record.fingerprint.clone()),
            };
            return Some((Decision::ApplyPart(part), None));
        }
    }
}

/// A submitted plan: approve ([`Decision::Apply`]), or refine with feedback the model reads
/// ([`Decision::LeavePending`]); when standard input is closed the run stops
/// ([`Decision::Discard`]).
/// `None` when the deadline passed first.
fn review_plan(plan: &PlanReview, prompt: &mut Prompt) -> Option<Decision> {
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(
        stderr,
        "\nThe model submitted a plan for approval: {} (title `{}`)\n\n{}\n",
        plan.path,
        plan.title,
        plan.content.trim_end()
    );
    let _ = write!(stderr, "Approve this plan? [a]pprove / [r]efine: ");
    let _ = stderr.flush();
    let Some(answer) = prompt.answer()? else {
        return Some(Decision::Discard {
            reason: "standard input closed before the plan was approved or refined. Use `--plan-approve auto` to approve plans without asking.".to_owned(),
        });
    };
    if answer.trim().to_ascii_lowercase().starts_with('a') {
        return Some(Decision::Apply);
    }
    let _ = write!(stderr, "What should change (the model reads this)? ");
    let _ = stderr.flush();
    Some(Decision::LeavePending {
        why: prompt.answer()?.unwrap_or_default().trim().to_owned(),
    })
}

/// `answer` trimmed, or `fallback` when it is empty.
fn reason_or(answer: String, fallback: &str) -> String {
    reviewer_reason(&answer).unwrap_or_else(|| fallback.to_owned())
}

/// Questions on standard error answered on standard input, until a deadline.
struct Prompt {
    /// When to stop waiting for an answer (`None`: never).
    deadline: Option<Instant>,
}

impl Prompt {
    /// The next line of standard input: `Some(None)` at its end, `None` when the deadline
    /// passed first.
    fn answer(&mut self) -> Option<Option<String>> {
        stdin_line_until(self.deadline)
    }

    /// The next line, empty at the end of standard input; `None` when the deadline passed.
    fn line(&mut self) -> Option<String> {
        self.answer().map(Option::unwrap_or_default)
    }
}

/// A line of standard input being read on its own thread (`None` in the channel: its end).
type LineReader = mpsc::Receiver<Option<String>>;

/// The line read still under way when a prompt stopped waiting: the next prompt takes its
/// answer, so no line is read twice or lost.
static UNDER_WAY: Mutex<Option<LineReader>> = Mutex::new(None);

/// The next line of standard input, waiting until `deadline` at most (`None` when it passed;
/// `Some(None)` at the end of the input). The line is read on a thread of its own, which a
/// prompt that stops waiting leaves to the next one.
fn stdin_line_until(deadline: Option<Instant>) -> Option<Option<String>> {
    let mut under_way = UNDER_WAY
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let reader = under_way.take().unwrap_or_else(|| {
        let (line, reader) = mpsc::channel();
        std::thread::spawn(move || {
            let mut text = String::new();
            let read = match std::io::stdin().lock().read_line(&mut text) {
                Ok(0) | Err(_) => None,
                Ok(_) => Some(text),
            };
            let _ = line.send(read);
        });
        reader
    });
    let received = match deadline {
        None => reader
            .recv()
            .map_err(|_| mpsc::RecvTimeoutError::Disconnected),
        Some(deadline) => reader.recv_timeout(deadline.saturating_duration_since(Instant::now())),
    };
    match received {
        Ok(line) => Some(line),
        Err(mpsc::RecvTimeoutError::Disconnected) => Some(None),
        Err(mpsc::RecvTimeoutError::Timeout) => {
            *under_way = Some(reader);
            None
        }
    }
}
