//! The terminal's approvers: [`TerminalReviewer`], the [`TerminalReview`] hook through which a
//! person at this terminal decides what the model asks (a stored preview in the hunk review,
//! or on a line prompt without a full terminal; a submitted plan on a prompt), and
//! [`approver_for`], the mapping from an [`ApprovalMode`] to the approver that decides.

use std::io::{BufRead, Write};
use std::sync::Arc;

use resolve_core::{visible_line, visible_text};
use resolve_edit::{
    ApprovalMode, ApprovalRequest, ApprovalSubject, Approver, AutoApprover, Decision, HunkAddress,
    HunkRejection, PendingRecord, PlanReview, ReviewDecision, Selection, Store, TerminalApprover,
    TerminalReview, shown_addressed_preview,
};

use crate::output::err_line;

/// The approver `mode` names for a run at this terminal: the model's word under `auto`, the
/// person at the terminal under `ask` and `review` (the hunk review when there is a terminal).
pub(crate) fn approver_for(mode: ApprovalMode, store: &Store, color: bool) -> Arc<dyn Approver> {
    match mode {
        ApprovalMode::Auto => Arc::new(AutoApprover),
        ApprovalMode::Ask | ApprovalMode::Review => Arc::new(TerminalApprover::new(Arc::new(
            TerminalReviewer::new(store.clone(), color),
        ))),
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
        self.review_noted(request).0
    }

    fn review_noted(&self, request: &ApprovalRequest) -> (Decision, Option<String>) {
        match &request.subject {
            ApprovalSubject::Action(record) => self.review_action(record),
            ApprovalSubject::Plan(plan) => (review_plan(plan), None),
        }
    }
}

impl TerminalReviewer {
    /// A preview the model asks to apply: the decision, and the person's reason for an apply
    /// when they typed one.
    fn review_action(&self, record: &PendingRecord) -> (Decision, Option<String>) {
        // On a terminal, the full-screen review; otherwise (or if it cannot open) the prompt.
        if crate::review::is_interactive() {
            match crate::review::review_decision(&self.store, &record.id, self.color) {
                Ok(decided) => return decided,
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
            let answer = read_line();
            let answer = answer.trim();
            let word = answer.to_ascii_lowercase();
            if ["a", "apply", "y", "yes"].contains(&word.as_str()) {
                return (Decision::Apply, None);
            }
            if ["", "d", "discard", "n", "no"].contains(&word.as_str()) {
                let _ = write!(stderr, "Why discard it (the model reads this)? ");
                let _ = stderr.flush();
                return (
                    Decision::Discard {
                        reason: reason_or(read_line(), crate::review::DECLINED),
                    },
                    None,
                );
            }
            let left_out: Result<Vec<HunkAddress>, _> =
                answer.split_whitespace().map(HunkAddress::parse).collect();
            let left_out = match left_out {
                Ok(left_out) => left_out,
                Err(error) => {
                    let _ = writeln!(stderr, "{error}");
                    continue;
                }
            };
            let rejections = left_out
                .iter()
                .map(|address| {
                    let _ = write!(stderr, "Why leave out {address} (the model reads this)? ");
                    let _ = stderr.flush();
                    HunkRejection {
                        address: address.clone(),
                        reason: reason_or(read_line(), "The user left it out without a reason."),
                    }
                })
                .collect();
            return (
                Decision::ApplyPart(ReviewDecision {
                    selection: Selection::Except(left_out),
                    rejections,
                    fingerprint: Some(record.fingerprint.clone()),
                }),
                None,
            );
        }
    }
}

/// A submitted plan: approve ([`Decision::Apply`]), or refine with feedback the model reads
/// ([`Decision::LeavePending`]); when standard input is closed the run stops
/// ([`Decision::Discard`]).
fn review_plan(plan: &PlanReview) -> Decision {
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
    let Some(answer) = read_answer() else {
        return Decision::Discard {
            reason: "standard input closed before the plan was approved or refined. Use `--plan-approve auto` to approve plans without asking.".to_owned(),
        };
    };
    if answer.trim().to_ascii_lowercase().starts_with('a') {
        return Decision::Apply;
    }
    let _ = write!(stderr, "What should change (the model reads this)? ");
    let _ = stderr.flush();
    Decision::LeavePending {
        why: read_answer().unwrap_or_default().trim().to_owned(),
    }
}

/// `answer` trimmed, or `fallback` when it is empty.
fn reason_or(answer: String, fallback: &str) -> String {
    let reason = answer.trim();
    if reason.is_empty() {
        fallback.to_owned()
    } else {
        reason.to_owned()
    }
}

/// A line from standard input; `None` at its end.
fn read_answer() -> Option<String> {
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line),
    }
}

fn read_line() -> String {
    read_answer().unwrap_or_default()
}
