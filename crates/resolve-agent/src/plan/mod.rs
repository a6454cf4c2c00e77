//! Plan mode: the model explores and writes a plan before it may change anything.
//!
//! A session built with [`AgentSessionBuilder::plan_mode`](crate::AgentSessionBuilder::plan_mode)
//! starts in plan mode. Until a plan is approved:
//!
//! - the model is offered only the [`PlanMode`]'s tools (the read-only ones, say `read`, `ls`
//!   and `grep`), a `write` that writes **plan files** and nothing else, and `resolve`;
//!   producers are not offered;
//! - a plan file lands at once (it is the plan, not a change to the project: no preview, no
//!   pending action). Accepted paths are `.resolve/plans/<name>.md` relative to the workspace
//!   root (`.`/`..` segments are resolved first, so `./.resolve/plans/x.md` works) or the same
//!   file as an absolute path inside the root; `<name>` is one file name (no subdirectory, not
//!   starting with `.`) ending in `.md`. Any other path is refused and nothing is written;
//! - a standing resolve handler (source tool `plan_approval`, label `Plan ready for approval`)
//!   takes `resolve` calls that no pending action claims. `apply` locates the plan (below),
//!   shows it to the plan mode's [`Approver`](resolve_edit::Approver), and either approves it or returns the person's feedback
//!   in the same tool result; `discard` answers `Discarded: Plan ready for approval. Reason: …`
//!   and plan mode stays;
//! - a text-only stop gets a reminder message and a `required` tool choice labelled
//!   `plan-mode-decision`, at most [`PLAN_MODE_REMINDER_MAX`] times; a `resolve` call resets
//!   the count. After that the run ends, still in plan mode.
//!
//! Locating the plan on `apply`: `extra.title` is normalized
//! ([`normalize_plan_title`], with a trailing `-plan` dropped) and names
//! `.resolve/plans/<title>-plan.md` (`plan.md` for the title `plan`); if that file does not
//! exist, the plan file written last in this session is used, then the newest plan file on
//! disk; if there is none, the result is `Plan file not found at <target>. Write the finalized
//! plan to <target> before requesting approval.` The plan's title is the supplied title, else
//! its first `# ` heading, else its file name, else `plan` ([`resolve_plan_title`]).
//!
//! On approval plan mode ends: the standing handler is cleared, the session's own tools
//! (producers included) are offered from the next model call on — the only time the tools
//! array changes within a run — and the result, `Plan approved at <path>. Plan mode exited;
//! proceed with the implementation.` followed by the approved plan, keeps the plan in context.
//!
//! While a preview is pending, `resolve` acts on the preview first (the dispatch order); the
//! result then says that the plan was not submitted.
//!
//! Owned here: the plan-mode constants the model and the CLI see, and the layout of this module:
//! titles (`title`), plan files (`files`), the plan `write` (`write`), approval (`approval`),
//! the configuration ([`PlanMode`], `mode`) and a session's plan mode while it lasts
//! (`runtime`). Not owned: the session and its turn loop, which call into `runtime` at the
//! moments listed above; plan never reaches back into them.

mod approval;
mod files;
mod mode;
mod runtime;
mod state;
mod title;
mod write;

pub use mode::PlanMode;
pub(crate) use runtime::{PlanRuntime, note_preview_ahead_of_plan};
pub use title::{PlanTitleError, normalize_plan_title, resolve_plan_title};

/// Where plan files live, relative to the workspace root.
pub const PLAN_DIR: &str = ".resolve/plans";

/// Source tool name of the plan-approval handler's results.
pub const PLAN_APPROVAL_TOOL: &str = "plan_approval";

/// Label of the plan-approval handler's results.
pub const PLAN_APPROVAL_LABEL: &str = "Plan ready for approval";

/// Label of the hard `required` directive pushed when the model stops in plan mode.
pub const PLAN_MODE_DECISION: &str = "plan-mode-decision";

/// How many text-only stops in a row get a reminder before the run ends in plan mode.
pub const PLAN_MODE_REMINDER_MAX: u32 = 3;

/// Appended to the system prompt of a session that starts in plan mode.
pub const PLAN_MODE_PROMPT: &str = "\
You start in plan mode. Until your plan is approved you can only look around with the read-only tools and write plan files: \
`write` with a path `.resolve/plans/<title>-plan.md` (for example `.resolve/plans/words-counter-plan.md`) writes the plan at once \
(plan files are not previews; project files cannot change yet). When the plan is final, call `resolve` with action \"apply\", \
a one-sentence reason and `extra.title` set to the plan's title (for example \"words-counter\") to submit it for approval. \
If changes are requested, update the plan file and submit it again. Once the plan is approved, plan mode ends, \
every tool becomes available, and you implement the plan.";

/// The reminder appended (as a user message) when the model stops in plan mode without
/// calling `resolve`.
pub const PLAN_MODE_REMINDER: &str = "<system-reminder>\n\
You are in plan mode and ended your turn without submitting a plan. Write the plan to `.resolve/plans/<title>-plan.md` with `write`, \
then call `resolve` with action \"apply\", a reason and `extra.title` to submit it for approval \
(or action \"discard\" to withdraw a submission). Do not end your turn without calling `resolve`.\n\
</system-reminder>";
