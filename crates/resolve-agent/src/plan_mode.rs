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
//!   shows it to the [`PlanApprover`], and either approves it or returns the person's feedback
//!   in the same tool result; `discard` answers `Discarded: Plan ready for approval. Reason: …`
//!   and plan mode stays;
//! - a text-only stop gets a reminder message and a `required` tool choice labelled
//!   `plan-mode-decision`, at most [`PLAN_MODE_REMINDER_MAX`] times; a `resolve` call resets
//!   the count. After that the run ends, still in plan mode.
//!
//! Locating the plan on `apply` (reference §5.2): `extra.title` is normalized
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

use std::fmt;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use resolve_core::{
    ActionError, BoxFuture, Extra, PendingAction, PushOptions, RESOLVE_TOOL_NAME, ResolveArgs,
    ResolveHandler, ToolChoice, ToolResult, ToolSpec, run_resolve_invocation,
};
use resolve_edit::{FileContent, Workspace};
use serde_json::{Value, json};

use crate::{AgentError, AgentEvent, AgentSession, EventSink, Message, Tool, ToolContext};
use crate::{ToolError, ToolFuture};

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

const PLAN_WRITE_DESCRIPTION: &str = "\
Plan mode: write a plan file. `path` must be `.resolve/plans/<name>.md` relative to the workspace root, \
for example `.resolve/plans/words-counter-plan.md`. The file is written at once (a plan is not a preview); \
any other path is refused, since project files can change only after the plan is approved.";

/// Why a plan title is unusable; the texts are the reference's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PlanTitleError {
    /// Nothing but whitespace (or `.md`).
    #[error("Plan title is required and must not be empty.")]
    Empty,
    /// A `/`, `\` or `..`.
    #[error("Plan title must not contain path separators or '..'.")]
    PathSeparator,
    /// Nothing left once disallowed characters are dropped.
    #[error(
        "Plan title must contain at least one letter, number, underscore, or hyphen after sanitization."
    )]
    NothingLeft,
}

/// Normalize a plan title into a file-name slug: trim; drop a `.md` suffix; whitespace becomes
/// `-`; anything outside `[A-Za-z0-9_-]` is dropped; repeated `-` collapse; leading and trailing
/// `-` go.
///
/// ```
/// use resolve_agent::{PlanTitleError, normalize_plan_title};
/// assert_eq!(normalize_plan_title("  Words counter!.md").unwrap(), "Words-counter");
/// assert_eq!(normalize_plan_title("../x"), Err(PlanTitleError::PathSeparator));
/// ```
pub fn normalize_plan_title(title: &str) -> Result<String, PlanTitleError> {
    let trimmed = title.trim();
    let trimmed = trimmed.strip_suffix(".md").unwrap_or(trimmed).trim();
    if trimmed.is_empty() {
        return Err(PlanTitleError::Empty);
    }
    if trimmed.contains(['/', '\\']) || trimmed.contains("..") {
        return Err(PlanTitleError::PathSeparator);
    }
    let mut slug = String::with_capacity(trimmed.len());
    for ch in trimmed.chars() {
        let ch = if ch.is_whitespace() { '-' } else { ch };
        let allowed = ch.is_ascii_alphanumeric() || ch == '_' || ch == '-';
        if allowed && !(ch == '-' && slug.ends_with('-')) {
            slug.push(ch);
        }
    }
    let slug = slug.trim_matches('-');
    if slug.is_empty() {
        return Err(PlanTitleError::NothingLeft);
    }
    Ok(slug.to_owned())
}

/// The title of a plan: the supplied title, else the plan's first `# ` heading (outside code
/// fences), else its file name, else `plan`. Each candidate is normalized with
/// [`normalize_plan_title`] and loses a trailing `-plan`; an unusable supplied title is an
/// error, an unusable heading or file name falls through to the next candidate.
pub fn resolve_plan_title(
    supplied: Option<&str>,
    content: &str,
    file_name: &str,
) -> Result<String, PlanTitleError> {
    if let Some(supplied) = supplied {
        return normalize_plan_title(supplied).map(|title| plan_slug(&title));
    }
    let from_heading = first_heading(content).and_then(|h| normalize_plan_title(h).ok());
    let from_name = || normalize_plan_title(file_name).ok();
    Ok(from_heading
        .or_else(from_name)
        .map_or_else(|| "plan".to_owned(), |title| plan_slug(&title)))
}

/// `title` without a trailing `-plan` (any case), unless nothing would be left.
fn plan_slug(title: &str) -> String {
    let cut = title.len().saturating_sub("-plan".len());
    match (title.get(..cut), title.get(cut..)) {
        (Some(head), Some(tail)) if !head.is_empty() && tail.eq_ignore_ascii_case("-plan") => {
            head.to_owned()
        }
        _ => title.to_owned(),
    }
}

/// The plan file named by a slug: `<slug>-plan.md`, or `plan.md` for the slug `plan`.
fn plan_file_for(slug: &str) -> String {
    if slug.eq_ignore_ascii_case("plan") {
        "plan.md".to_owned()
    } else {
        format!("{slug}-plan.md")
    }
}

/// The text of the first `# ` heading outside fenced code blocks.
fn first_heading(content: &str) -> Option<&str> {
    let mut in_fence = false;
    for line in content.lines() {
        let line = line.trim_start();
        if line.starts_with("```") || line.starts_with("~~~") {
            in_fence = !in_fence;
            continue;
        }
        if !in_fence && let Some(heading) = line.strip_prefix("# ") {
            return Some(heading.trim());
        }
    }
    None
}

/// `.resolve/plans/<name>`.
fn display_path(name: &str) -> String {
    format!("{PLAN_DIR}/{name}")
}

/// Resolve `.` and `..` lexically; `None` if `..` climbs above the start.
fn normalize_lexically(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Prefix(_) | Component::RootDir => out.push(component.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::Normal(name) => out.push(name),
        }
    }
    Some(out)
}

/// Reading and writing plan files under `<root>/.resolve/plans/`.
#[derive(Debug, Clone)]
struct PlanFiles {
    /// The canonical workspace root.
    root: PathBuf,
}

impl PlanFiles {
    fn dir(&self) -> PathBuf {
        self.root.join(PLAN_DIR)
    }

    /// The plan file name `path` designates, if it is an accepted plan path.
    fn file_name(&self, path: &str) -> Option<String> {
        let given = Path::new(path);
        let normalized = normalize_lexically(given)?;
        let relative = if given.is_absolute() {
            normalized.strip_prefix(&self.root).ok()?.to_path_buf()
        } else {
            normalized
        };
        let parts: Vec<&str> = relative
            .components()
            .map(|component| match component {
                Component::Normal(name) => name.to_str(),
                Component::Prefix(_)
                | Component::RootDir
                | Component::CurDir
                | Component::ParentDir => None,
            })
            .collect::<Option<_>>()?;
        match parts.as_slice() {
            [".resolve", "plans", name]
                if name.len() > ".md".len() && name.ends_with(".md") && !name.starts_with('.') =>
            {
                Some((*name).to_owned())
            }
            _ => None,
        }
    }

    /// The plan directory, created if missing, checked to be where it should be (not a
    /// symlink leading elsewhere).
    fn checked_dir(&self, create: bool) -> Result<Option<PathBuf>, String> {
        let dir = self.dir();
        if create {
            std::fs::create_dir_all(&dir)
                .map_err(|error| format!("Could not create `{PLAN_DIR}`: {error}."))?;
        }
        match dir.canonicalize() {
            Ok(real) if real == dir => Ok(Some(dir)),
            Ok(real) => Err(format!(
                "`{PLAN_DIR}` leads to `{}`, outside the workspace's state directory; remove that link so plans stay in the workspace.",
                real.display()
            )),
            Err(_) if !create => Ok(None),
            Err(error) => Err(format!("Could not open `{PLAN_DIR}`: {error}.")),
        }
    }

    fn write(&self, name: &str, content: &str) -> Result<(), String> {
        let Some(dir) = self.checked_dir(true)? else {
            return Err(format!("Could not create `{PLAN_DIR}`."));
        };
        resolve_edit::atomic_write(&dir.join(name), content.as_bytes())
            .map_err(|error| error.to_string())
    }

    /// The text of plan file `name`; `None` when it does not exist.
    fn read(&self, name: &str) -> Result<Option<String>, String> {
        let Some(dir) = self.checked_dir(false)? else {
            return Ok(None);
        };
        let path = dir.join(name);
        if path
            .canonicalize()
            .is_ok_and(|real| real.parent() != Some(dir.as_path()))
        {
            return Err(format!(
                "`{}` is a link leading out of `{PLAN_DIR}`; write the plan as a regular file.",
                display_path(name)
            ));
        }
        match resolve_edit::read_content(&path).map_err(|error| error.to_string())? {
            None => Ok(None),
            Some(FileContent::Text(text)) => Ok(Some(text)),
            Some(FileContent::Binary(_)) => Err(format!(
                "`{}` is not UTF-8 text; write the plan as Markdown text.",
                display_path(name)
            )),
        }
    }

    /// The most recently modified plan file, if any.
    fn newest(&self) -> Result<Option<String>, String> {
        let Some(dir) = self.checked_dir(false)? else {
            return Ok(None);
        };
        let entries = std::fs::read_dir(&dir)
            .map_err(|error| format!("Could not list `{PLAN_DIR}`: {error}."))?;
        let newest = entries
            .filter_map(Result::ok)
            .filter_map(|entry| {
                let name = entry.file_name().into_string().ok()?;
                let metadata = entry.metadata().ok()?;
                let accepted =
                    name.ends_with(".md") && !name.starts_with('.') && metadata.is_file();
                accepted.then(|| (metadata.modified().ok(), name))
            })
            .max();
        Ok(newest.map(|(_, name)| name))
    }
}

/// A plan found on `apply`, as the approver sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanReview {
    /// The plan file, relative to the root (`.resolve/plans/words-counter-plan.md`).
    pub path: String,
    /// The plan's title (see [`resolve_plan_title`]).
    pub title: String,
    /// The plan's text.
    pub content: String,
}

/// What the approver decided about a submitted plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanDecision {
    /// Approve: plan mode ends and the run implements the plan.
    Approve,
    /// Ask for changes: the model reads the feedback; plan mode stays.
    Refine {
        /// What should change (may be empty).
        feedback: String,
    },
    /// No decision can be had (for example, nobody can answer): the run ends with this reason.
    Stop {
        /// Why.
        reason: String,
    },
}

/// Decides on submitted plans.
pub trait PlanApprover: Send + Sync + fmt::Debug {
    /// Decide on `plan`. Runs on a blocking thread, so it may prompt a person.
    fn review(&self, plan: &PlanReview) -> PlanDecision;
}

/// Approves every plan at once.
#[derive(Debug, Default, Clone, Copy)]
pub struct AutoApprove;

impl PlanApprover for AutoApprove {
    fn review(&self, _plan: &PlanReview) -> PlanDecision {
        PlanDecision::Approve
    }
}

/// How a session starts in plan mode: where plans go, who approves them, and which tools the
/// model has meanwhile.
#[derive(Clone)]
pub struct PlanMode {
    files: PlanFiles,
    approver: Arc<dyn PlanApprover>,
    tools: Vec<Arc<dyn Tool>>,
}

impl PlanMode {
    /// Plan mode for `workspace`: plans go to `<root>/.resolve/plans/`, every plan is approved
    /// at once ([`AutoApprove`]), and besides the plan `write` and `resolve` no tools are
    /// offered.
    pub fn new(workspace: &Workspace) -> Self {
        Self {
            files: PlanFiles {
                root: workspace.root().to_path_buf(),
            },
            approver: Arc::new(AutoApprove),
            tools: Vec::new(),
        }
    }

    /// Ask `approver` about each submitted plan. By default, [`AutoApprove`].
    #[must_use]
    pub fn with_approver(mut self, approver: Arc<dyn PlanApprover>) -> Self {
        self.approver = approver;
        self
    }

    /// Offer `tools` in plan mode, before the plan `write` (they should change nothing, e.g.
    /// `read`, `ls`, `grep`; none may be named `write`). By default, none.
    #[must_use]
    pub fn with_tools(mut self, tools: impl IntoIterator<Item = Arc<dyn Tool>>) -> Self {
        self.tools.extend(tools);
        self
    }
}

impl fmt::Debug for PlanMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PlanMode")
            .field("files", &self.files)
            .field("approver", &self.approver)
            .field(
                "tools",
                &self.tools.iter().map(|t| t.spec().name).collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// Where a plan-mode session stands.
#[derive(Debug)]
enum PlanPhase {
    /// Planning; the plan file written last, if any.
    Planning { last_written: Option<String> },
    /// Approved at this path; the session has not switched tools yet.
    Approved { path: String },
    /// The approver gave up; the run must end.
    Stopped { reason: String },
    /// Over: the session switched tools (or ended the run).
    Done,
}

/// Plan-mode state shared by the plan `write`, the approval handler and the session.
#[derive(Debug)]
struct PlanState {
    phase: Mutex<PlanPhase>,
}

impl PlanState {
    fn phase(&self) -> std::sync::MutexGuard<'_, PlanPhase> {
        self.phase.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn is_planning(&self) -> bool {
        matches!(*self.phase(), PlanPhase::Planning { .. })
    }

    fn last_written(&self) -> Option<String> {
        match &*self.phase() {
            PlanPhase::Planning { last_written } => last_written.clone(),
            PlanPhase::Approved { .. } | PlanPhase::Stopped { .. } | PlanPhase::Done => None,
        }
    }

    fn wrote(&self, name: String) {
        if let PlanPhase::Planning { last_written } = &mut *self.phase() {
            *last_written = Some(name);
        }
    }

    /// Move from planning to `next`; false when no longer planning.
    fn leave_planning(&self, next: PlanPhase) -> bool {
        let mut phase = self.phase();
        if matches!(*phase, PlanPhase::Planning { .. }) {
            *phase = next;
            return true;
        }
        false
    }

    fn take_outcome(&self) -> Option<PlanPhase> {
        let mut phase = self.phase();
        match &*phase {
            PlanPhase::Approved { .. } | PlanPhase::Stopped { .. } => {
                Some(std::mem::replace(&mut *phase, PlanPhase::Done))
            }
            PlanPhase::Planning { .. } | PlanPhase::Done => None,
        }
    }
}

/// The plan `write`: writes plan files at once and refuses every other path.
#[derive(Debug)]
struct PlanWriteTool {
    files: PlanFiles,
    state: Arc<PlanState>,
}

fn plan_write_spec() -> ToolSpec {
    ToolSpec {
        name: "write".to_owned(),
        description: PLAN_WRITE_DESCRIPTION.to_owned(),
        input_schema: json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "`.resolve/plans/<name>.md`"},
                "content": {"type": "string", "description": "the whole plan, in Markdown"}
            },
            "required": ["path", "content"],
            "additionalProperties": false
        }),
        hidden: false,
        strict: false,
        deferrable: false,
    }
}

impl Tool for PlanWriteTool {
    fn spec(&self) -> ToolSpec {
        plan_write_spec()
    }

    fn execute<'a>(&'a self, args: Value, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let path = args["path"].as_str().unwrap_or_default().to_owned();
            let content = args["content"].as_str().unwrap_or_default().to_owned();
            let Some(name) = self.files.file_name(&path) else {
                return Err(ToolError::RespondToModel(format!(
                    "Plan mode: `write` only writes plan files, as `{PLAN_DIR}/<name>.md` (for example `{PLAN_DIR}/words-counter-plan.md`); `{path}` was not written. Project files can change only after the plan is approved."
                )));
            };
            if !self.state.is_planning() {
                return Err(ToolError::RespondToModel(
                    "Plan mode has ended; the plan can no longer be changed.".to_owned(),
                ));
            }
            let files = self.files.clone();
            let target = name.clone();
            let written = content.clone();
            tokio::task::spawn_blocking(move || files.write(&target, &written))
                .await
                .map_err(|error| ToolError::Fatal(format!("the plan write task died: {error}")))?
                .map_err(ToolError::RespondToModel)?;
            self.state.wrote(name.clone());
            let title = resolve_plan_title(None, "", &name).unwrap_or_else(|_| "plan".to_owned());
            Ok(ToolResult::text(format!(
                "Wrote plan {} ({} lines). Plan files are written at once, not staged. When the plan is final, call `resolve` with action \"apply\" and `extra.title` \"{title}\" to submit it for approval.",
                display_path(&name),
                content.lines().count(),
            ))
            .with_details(json!({"planFilePath": display_path(&name)})))
        })
    }
}

/// The plan that `apply` found.
#[derive(Debug)]
struct LocatedPlan {
    name: String,
    title: String,
    content: String,
}

/// Find the plan for an `apply` (see the module docs for the order).
fn locate(
    files: &PlanFiles,
    supplied: Option<&str>,
    last_written: Option<&str>,
) -> Result<LocatedPlan, String> {
    let slug = supplied
        .map(|title| normalize_plan_title(title).map(|title| plan_slug(&title)))
        .transpose()
        .map_err(|error| error.to_string())?;
    let by_title = slug.as_deref().map(plan_file_for);
    let mut candidates: Vec<String> = by_title.iter().cloned().collect();
    candidates.extend(last_written.map(str::to_owned));
    for name in candidates.into_iter().chain(files.newest()?) {
        if let Some(content) = files.read(&name)? {
            let title =
                resolve_plan_title(slug.as_deref(), &content, &name).map_err(|e| e.to_string())?;
            return Ok(LocatedPlan {
                name,
                title,
                content,
            });
        }
    }
    let target = display_path(by_title.as_deref().or(last_written).unwrap_or("plan.md"));
    Err(format!(
        "Plan file not found at {target}. Write the finalized plan to {target} before requesting approval."
    ))
}

/// Run `f` on a blocking thread.
async fn blocking<T: Send + 'static>(
    what: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ActionError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|error| ActionError::Failed(format!("the {what} task died: {error}")))
}

/// The apply of the plan-approval handler.
async fn submit_plan(
    files: PlanFiles,
    state: Arc<PlanState>,
    approver: Arc<dyn PlanApprover>,
    extra: Option<Extra>,
) -> Result<ToolResult, ActionError> {
    if !state.is_planning() {
        return Err(ActionError::Tool("Plan mode is not active.".to_owned()));
    }
    let supplied = match extra.as_ref().and_then(|extra| extra.get("title")) {
        None | Some(Value::Null) => None,
        Some(Value::String(title)) => Some(title.clone()),
        Some(_) => {
            return Err(ActionError::Tool(format!(
                "`extra.title` must be a string naming the plan, e.g. \"words-counter\" for `{PLAN_DIR}/words-counter-plan.md`."
            )));
        }
    };
    let last_written = state.last_written();
    let plan = blocking("plan lookup", move || {
        locate(&files, supplied.as_deref(), last_written.as_deref())
    })
    .await?
    .map_err(ActionError::Tool)?;
    let review = PlanReview {
        path: display_path(&plan.name),
        title: plan.title,
        content: plan.content,
    };
    let asked = review.clone();
    let decision = blocking("plan approval", move || approver.review(&asked)).await?;
    let mut details = json!({
        "planFilePath": review.path,
        "title": review.title,
        "planExists": true,
    });
    match decision {
        PlanDecision::Approve => {
            if !state.leave_planning(PlanPhase::Approved {
                path: review.path.clone(),
            }) {
                return Err(ActionError::Tool("Plan mode is not active.".to_owned()));
            }
            details["approved"] = true.into();
            Ok(ToolResult::text(format!(
                "Plan approved at {}. Plan mode exited; proceed with the implementation.\n\nThe approved plan:\n\n{}",
                review.path,
                review.content.trim_end()
            ))
            .with_details(details))
        }
        PlanDecision::Refine { feedback } => {
            let feedback = feedback.trim().trim_end_matches('.').trim_end();
            details["approved"] = false.into();
            details["feedback"] = feedback.into();
            let requested = if feedback.is_empty() {
                "Plan refinement requested".to_owned()
            } else {
                format!("Plan refinement requested: {feedback}")
            };
            Ok(ToolResult::text(format!(
                "{requested}. Update the plan file, then call `resolve` with action \"apply\" again when ready."
            ))
            .with_details(details))
        }
        PlanDecision::Stop { reason } => {
            state.leave_planning(PlanPhase::Stopped {
                reason: reason.clone(),
            });
            Err(ActionError::Tool(format!(
                "Plan approval stopped: {reason}"
            )))
        }
    }
}

/// The standing handler: plan approval through [`run_resolve_invocation`].
fn approval_handler(plan: &PlanMode, state: &Arc<PlanState>) -> ResolveHandler {
    let files = plan.files.clone();
    let approver = Arc::clone(&plan.approver);
    let state = Arc::clone(state);
    let action = Arc::new(PendingAction::new(
        PLAN_APPROVAL_LABEL,
        PLAN_APPROVAL_TOOL,
        move |_reason, extra| {
            submit_plan(
                files.clone(),
                Arc::clone(&state),
                Arc::clone(&approver),
                extra,
            )
        },
    ));
    Arc::new(
        move |args: ResolveArgs| -> BoxFuture<Result<ToolResult, resolve_core::Error>> {
            let action = Arc::clone(&action);
            Box::pin(async move { run_resolve_invocation(&args, &action).await })
        },
    )
}

/// A session's plan mode while it lasts: its state and the tools to restore on approval.
pub(crate) struct PlanRuntime {
    state: Arc<PlanState>,
    after_tools: Vec<Arc<dyn Tool>>,
    after_specs: Vec<ToolSpec>,
    after_offers_resolve: bool,
}

impl AgentSession {
    /// Switch a freshly built session into plan mode: offer the plan tools, install the
    /// approval handler and extend the system prompt.
    pub(crate) fn enter_plan_mode(&mut self, plan: &PlanMode) -> Result<(), AgentError> {
        let state = Arc::new(PlanState {
            phase: Mutex::new(PlanPhase::Planning { last_written: None }),
        });
        let mut tools = plan.tools.clone();
        tools.push(Arc::new(PlanWriteTool {
            files: plan.files.clone(),
            state: Arc::clone(&state),
        }));
        let (specs, offers_resolve) = crate::session::offered_specs(&tools, true)?;
        self.resolve
            .set_standing_resolve_handler(Some(approval_handler(plan, &state)));
        if !self.system_prompt.is_empty() {
            self.system_prompt.push_str("\n\n");
        }
        self.system_prompt.push_str(PLAN_MODE_PROMPT);
        self.plan = Some(PlanRuntime {
            state,
            after_tools: std::mem::replace(&mut self.tools, tools),
            after_specs: std::mem::replace(&mut self.specs, specs),
            after_offers_resolve: std::mem::replace(&mut self.offers_resolve, offers_resolve),
        });
        Ok(())
    }

    /// Whether the session is in plan mode (no plan approved yet).
    pub fn in_plan_mode(&self) -> bool {
        self.plan.is_some()
    }

    /// The approved plan's path relative to the root, once plan mode has ended with approval.
    pub fn approved_plan(&self) -> Option<&str> {
        self.approved_plan.as_deref()
    }

    /// Before each model call: if the plan was approved, leave plan mode (restore the tools,
    /// clear the handler and any queued plan-mode directive); if approval stopped, end the run.
    pub(crate) fn sync_plan_mode(&mut self, sink: &mut dyn EventSink) -> Result<(), AgentError> {
        let Some(outcome) = self
            .plan
            .as_ref()
            .and_then(|plan| plan.state.take_outcome())
        else {
            return Ok(());
        };
        let Some(plan) = self.plan.take() else {
            return Ok(());
        };
        self.resolve.set_standing_resolve_handler(None);
        self.resolve.queue().remove_by_label(PLAN_MODE_DECISION);
        match outcome {
            PlanPhase::Approved { path } => {
                self.tools = plan.after_tools;
                self.specs = plan.after_specs;
                self.offers_resolve = plan.after_offers_resolve;
                sink.emit(AgentEvent::PlanApproved {
                    plan_path: path.clone(),
                });
                self.approved_plan = Some(path);
                Ok(())
            }
            PlanPhase::Stopped { reason } => Err(AgentError::PlanApprovalStopped { reason }),
            // take_outcome yields only the two phases above.
            PlanPhase::Planning { .. } | PlanPhase::Done => Ok(()),
        }
    }

    /// On a text-only stop: in plan mode and under the cap, append the reminder, queue the
    /// `required` directive and return true (the run goes on); otherwise false.
    pub(crate) fn remind_plan_mode(
        &mut self,
        reminders: &mut u32,
        sink: &mut dyn EventSink,
    ) -> bool {
        if self.plan.is_none() || *reminders >= PLAN_MODE_REMINDER_MAX {
            return false;
        }
        *reminders += 1;
        sink.emit(AgentEvent::PlanModeReminder {
            text: PLAN_MODE_REMINDER.to_owned(),
            number: *reminders,
        });
        self.transcript.push(Message::Reminder {
            text: PLAN_MODE_REMINDER.to_owned(),
        });
        self.resolve.queue().push_once(
            ToolChoice::Required,
            PushOptions::new().label(PLAN_MODE_DECISION),
        );
        true
    }

    /// In plan mode, the label of the pending preview a `resolve` call would act on instead of
    /// the plan.
    pub(crate) fn preview_ahead_of_plan(&self) -> Option<String> {
        self.plan.as_ref()?;
        // A source that cannot be read is reported by the dispatch itself.
        let _ = self.resolve.refresh_pending();
        let queue = self.resolve.queue();
        queue
            .pending()
            .peek()
            .map(|entry| entry.action.label.clone())
    }

    /// After a run: drop a plan-mode directive the run did not get to use.
    pub(crate) fn finish_plan_run(&self) {
        if self.plan.is_some() {
            self.resolve.queue().remove_by_label(PLAN_MODE_DECISION);
        }
    }
}

/// Say in a `resolve` result that it acted on the pending preview `label`, not on the plan.
pub(crate) fn note_preview_ahead_of_plan(mut result: ToolResult, label: &str) -> ToolResult {
    let source = result
        .details
        .as_ref()
        .and_then(|details| details.get("sourceToolName"))
        .and_then(Value::as_str);
    if source != Some(PLAN_APPROVAL_TOOL) {
        result.text.push_str(&format!(
            "\n\nThis resolved the pending preview `{label}`, not the plan; call `{RESOLVE_TOOL_NAME}` again to submit the plan."
        ));
    }
    result
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn normalization_trims_drops_md_and_keeps_only_slug_characters() {
        assert_eq!(
            normalize_plan_title("words-counter").unwrap(),
            "words-counter"
        );
        assert_eq!(
            normalize_plan_title("  WordsCounter.md ").unwrap(),
            "WordsCounter"
        );
        assert_eq!(
            normalize_plan_title("Words  counter: v2!").unwrap(),
            "Words-counter-v2"
        );
        assert_eq!(normalize_plan_title("--a -- b--").unwrap(), "a-b");
        assert_eq!(normalize_plan_title("snake_case").unwrap(), "snake_case");
    }

    #[test]
    fn an_empty_title_is_refused_with_the_reference_text() {
        for title in ["", "   ", ".md", " .md "] {
            let error = normalize_plan_title(title).unwrap_err();
            assert_eq!(error, PlanTitleError::Empty, "{title:?}");
            assert_eq!(
                error.to_string(),
                "Plan title is required and must not be empty."
            );
        }
    }

    #[test]
    fn a_title_with_a_path_separator_or_dot_dot_is_refused_with_the_reference_text() {
        for title in ["a/b", "a\\b", "../etc", "x..y"] {
            let error = normalize_plan_title(title).unwrap_err();
            assert_eq!(error, PlanTitleError::PathSeparator, "{title:?}");
            assert_eq!(
                error.to_string(),
                "Plan title must not contain path separators or '..'."
            );
        }
    }

    #[test]
    fn a_title_with_nothing_usable_is_refused_with_the_reference_text() {
        for title in ["!!!", "---", "日本語", "* *"] {
            let error = normalize_plan_title(title).unwrap_err();
            assert_eq!(error, PlanTitleError::NothingLeft, "{title:?}");
            assert_eq!(
                error.to_string(),
                "Plan title must contain at least one letter, number, underscore, or hyphen after sanitization."
            );
        }
    }

    #[test]
    fn the_supplied_title_wins_and_loses_a_trailing_plan_suffix() {
        let content = "# Something Else\n";
        assert_eq!(
            resolve_plan_title(Some("words-counter"), content, "x-plan.md").unwrap(),
            "words-counter"
        );
        assert_eq!(
            resolve_plan_title(Some("words-counter-plan"), content, "x.md").unwrap(),
            "words-counter"
        );
        assert_eq!(
            resolve_plan_title(Some("a/b"), content, "x.md"),
            Err(PlanTitleError::PathSeparator)
        );
    }

    #[test]
    fn without_a_supplied_title_the_first_heading_outside_code_is_used() {
        let content = "intro\n```sh\n# not a heading\n```\n## Sub\n# Words Counter\n# Later\n";
        assert_eq!(
            resolve_plan_title(None, content, "x-plan.md").unwrap(),
            "Words-Counter"
        );
    }

    #[test]
    fn without_a_usable_heading_the_file_name_is_used_then_plan() {
        assert_eq!(
            resolve_plan_title(None, "no heading\n# !!!\n", "words-counter-plan.md").unwrap(),
            "words-counter"
        );
        assert_eq!(resolve_plan_title(None, "", "plan.md").unwrap(), "plan");
        assert_eq!(resolve_plan_title(None, "", "!!!.md").unwrap(), "plan");
    }

    #[test]
    fn a_slug_names_its_plan_file() {
        assert_eq!(plan_file_for("words-counter"), "words-counter-plan.md");
        assert_eq!(plan_file_for("plan"), "plan.md");
        assert_eq!(plan_slug("plan"), "plan");
        assert_eq!(plan_slug("Words-Plan"), "Words");
    }

    fn files() -> (tempfile::TempDir, PlanFiles) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        (dir, PlanFiles { root })
    }

    #[test]
    fn plan_paths_are_accepted_relative_dotted_or_absolute_inside_the_root() {
        let (_dir, files) = files();
        let name = Some("words-counter-plan.md".to_owned());
        assert_eq!(
            files.file_name(".resolve/plans/words-counter-plan.md"),
            name
        );
        assert_eq!(
            files.file_name("./.resolve/plans/words-counter-plan.md"),
            name
        );
        assert_eq!(
            files.file_name("src/../.resolve/plans/words-counter-plan.md"),
            name
        );
        let absolute = files.root.join(".resolve/plans/words-counter-plan.md");
        assert_eq!(files.file_name(absolute.to_str().unwrap()), name);
    }

    #[test]
    fn other_paths_are_not_plan_paths() {
        let (_dir, files) = files();
        for path in [
            "a.txt",
            "plans/x.md",
            ".resolve/plans/x.txt",
            ".resolve/plans/.md",
            ".resolve/plans/.hidden.md",
            ".resolve/plans/sub/x.md",
            ".resolve/plans/../pending/1.json",
            ".resolve/plans/../../src/x.md",
            "../.resolve/plans/x.md",
            "/etc/.resolve/plans/x.md",
        ] {
            assert_eq!(files.file_name(path), None, "{path}");
        }
    }

    #[test]
    fn a_plan_is_found_by_title_then_last_written_then_newest() {
        let (_dir, files) = files();
        files.write("words-counter-plan.md", "# Words\n").unwrap();
        let found = locate(&files, Some("words-counter"), None).unwrap();
        assert_eq!(
            (found.name.as_str(), found.title.as_str()),
            ("words-counter-plan.md", "words-counter")
        );

        files.write("other-plan.md", "# Other Thing\n").unwrap();
        let found = locate(&files, Some("ghost"), Some("other-plan.md")).unwrap();
        assert_eq!(found.name, "other-plan.md");
        assert_eq!(found.title, "ghost", "the supplied title still names it");

        let found = locate(&files, None, None).unwrap();
        assert!(
            ["words-counter-plan.md", "other-plan.md"].contains(&found.name.as_str()),
            "{found:?}"
        );
        let found = locate(&files, None, Some("words-counter-plan.md")).unwrap();
        assert_eq!(found.title, "Words", "from the heading");
    }

    #[test]
    fn a_missing_plan_names_where_to_write_it() {
        let (_dir, files) = files();
        assert_eq!(
            locate(&files, Some("ghost"), None).unwrap_err(),
            "Plan file not found at .resolve/plans/ghost-plan.md. Write the finalized plan to .resolve/plans/ghost-plan.md before requesting approval."
        );
        assert_eq!(
            locate(&files, None, None).unwrap_err(),
            "Plan file not found at .resolve/plans/plan.md. Write the finalized plan to .resolve/plans/plan.md before requesting approval."
        );
        assert_eq!(
            locate(&files, Some("!!"), None).unwrap_err(),
            "Plan title must contain at least one letter, number, underscore, or hyphen after sanitization."
        );
    }

    #[test]
    fn a_plan_directory_linked_outside_the_workspace_is_refused() {
        let (_dir, files) = files();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(files.root.join(".resolve")).unwrap();
        std::os::unix::fs::symlink(outside.path(), files.root.join(PLAN_DIR)).unwrap();
        let error = files.write("x-plan.md", "# X\n").unwrap_err();
        assert!(error.contains("outside the workspace"), "{error}");
        assert!(std::fs::read_dir(outside.path()).unwrap().next().is_none());
    }

    #[test]
    fn a_preview_note_is_added_unless_the_plan_handler_answered() {
        let preview = ToolResult::text("Applied edit to a.txt.")
            .with_details(json!({"sourceToolName": "edit", "label": "Edit: a.txt"}));
        assert_eq!(
            note_preview_ahead_of_plan(preview, "Edit: a.txt").text,
            "Applied edit to a.txt.\n\nThis resolved the pending preview `Edit: a.txt`, not the plan; call `resolve` again to submit the plan."
        );
        let plan = ToolResult::text("Plan approved at x.")
            .with_details(json!({"sourceToolName": PLAN_APPROVAL_TOOL}));
        assert_eq!(
            note_preview_ahead_of_plan(plan, "Edit: a.txt").text,
            "Plan approved at x."
        );
    }
}
