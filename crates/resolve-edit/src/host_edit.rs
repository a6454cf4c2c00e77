//! A host's own file edit, caught by the host's hook before it runs, made one more front end of
//! the one pipeline: the edit (already a typed [`ProducerRequest`]) is staged through the
//! producers and the store like any preview, then decided as the hook's [`HookApproval`] says
//! (left staged, waited on for a person, or landed at once through [`land`]), and the answer is
//! the text the host's model reads instead of its tool's own result ([`HookReply`]).
//!
//! Resolve is the only writer: the host's own write never runs, whatever the mode. An edit that
//! lands, lands through the store's transactional apply (base hash checked, history, undo), and
//! the host is told to skip its tool call with a reply saying what happened. (Letting the host
//! write the approved bytes instead would make the store a bookkeeper after the fact, with a
//! window where its history and the disk disagree whenever the host's write fails.)
//!
//! Host-independent: a host adapter (`resolve hook claude-code` in `resolve-cli`) turns its
//! hook's JSON into a [`HostEdit`] and the [`HookReply`] into its hook's answer. Codex's
//! `apply_patch` (through Codex's `PreToolUse` hook) reuses all of this with a thin adapter:
//! its patch is a [`ProducerRequest::ApplyPatch`] and its answer is a block with the reply's
//! text. [`shell_writes`](crate::shell_writes) is the shell guard both adapters share.

use std::time::{Duration, Instant};

use resolve_core::{DecidedBy, ResolveAction};
use resolve_store::{Blobs, Origin, Outcome, StoredAction};

use crate::approval::{ApproveTimeout, Decided, Decision, Landed, ResolveRequest, land};
use crate::error::EditError;
use crate::git_commit::commit_line;
use crate::opened::OpenedWorkspace;
use crate::preview::PREVIEW_BANNER;
use crate::producers::{ProducerRequest, applied_text};
use crate::reviewer_note::reviewer_note_text;
use crate::tools::{FileToolOutput, StagedPreview};

/// How a hook decides the edits it stages (`resolve hook … --approve stage|review|auto`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HookApproval {
    /// Nothing is written: the edit waits as a pending action until `resolve` applies it (the
    /// session's `resolve` tool, or a person).
    #[default]
    Stage,
    /// The hook waits for a person to decide in `resolve review`, `resolve apply` or `resolve
    /// discard` (until the deadline), and the model reads the decision.
    Review,
    /// The edit lands at once through resolve, decided by the model's own call.
    Auto,
}

impl HookApproval {
    /// Every mode, in the order help texts list them.
    pub const ALL: [Self; 3] = [Self::Stage, Self::Review, Self::Auto];

    /// Its name on the command line: `stage`, `review` or `auto`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Stage => "stage",
            Self::Review => "review",
            Self::Auto => "auto",
        }
    }
}

/// A file edit the host was about to make, as a producer request of the host's session.
#[derive(Debug, Clone)]
pub struct HostEdit {
    /// The host's name of its tool (`Edit`, `Write`), for texts.
    pub tool: String,
    /// The same change, as one of resolve's producers computes it.
    pub request: ProducerRequest,
    /// What the history records as the model's reason when it lands on the model's word.
    pub reason: String,
}

/// How a hook waits and decides.
#[derive(Debug, Clone, Copy)]
pub struct HookSettings {
    /// How the edit is decided.
    pub approval: HookApproval,
    /// How long `review` waits for a person before it leaves the edit staged (the one
    /// deadline every wait on a person shares).
    pub review_deadline: ApproveTimeout,
    /// How often `review` looks at the store while it waits.
    pub poll_interval: Duration,
}

impl Default for HookSettings {
    /// `stage`, a ten-minute review deadline, polling five times a second.
    fn default() -> Self {
        Self {
            approval: HookApproval::Stage,
            review_deadline: ApproveTimeout::default(),
            poll_interval: Duration::from_millis(200),
        }
    }
}

/// The origin of what a Codex session's hook stages: `mcp:codex-<session id>`. The session's
/// `resolve mcp` learns the id from each call (Codex sends `_meta.sessionId`) and adopts it.
pub fn codex_session_origin(session_id: &str) -> Origin {
    Origin::Mcp(format!("codex-{session_id}"))
}

/// What happened to an intercepted edit; its text is what the host's model reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookReply {
    /// Staged and left pending (`stage`, or `review` past its deadline).
    Staged {
        /// The pending action.
        id: String,
        /// What the model reads.
        text: String,
    },
    /// Landed through resolve (`auto`, or a person's apply in `review`).
    Landed {
        /// The history record.
        id: String,
        /// What the model reads.
        text: String,
    },
    /// A person discarded it (`review`): nothing was written.
    Discarded {
        /// The history record.
        id: String,
        /// What the model reads.
        text: String,
    },
}

impl HookReply {
    /// What the host's model reads.
    pub fn text(&self) -> &str {
        match self {
            Self::Staged { text, .. }
            | Self::Landed { text, .. }
            | Self::Discarded { text, .. } => text,
        }
    }

    /// This reply with `notes` (what the model is told about a person's decisions) after it.
    #[must_use]
    pub fn with_notes(mut self, notes: &[String]) -> Self {
        if !notes.is_empty() {
            let (Self::Staged { text, .. }
            | Self::Landed { text, .. }
            | Self::Discarded { text, .. }) = &mut self;
            text.push('\n');
            text.push_str(&notes.join("\n"));
        }
        self
    }

    /// The pending action or history record it is about.
    pub fn id(&self) -> &str {
        match self {
            Self::Staged { id, .. } | Self::Landed { id, .. } | Self::Discarded { id, .. } => id,
        }
    }
}

/// Stage `edit` in `opened` (whose origin is the host's session) and decide it as `settings`
/// say. Nothing is written unless it lands through the store. An edit that cannot be staged
/// (a path outside the root, a binary file, no match) is an error: the adapter blocks the
/// host's call with it.
pub fn intercept(
    opened: &OpenedWorkspace,
    edit: &HostEdit,
    settings: &HookSettings,
) -> Result<HookReply, EditError> {
    let staged = match opened.tools().produce(&edit.request)? {
        FileToolOutput::Staged(staged) => *staged,
        FileToolOutput::Result(result) => {
            return Err(EditError::InvalidRequest(format!(
                "{} would change nothing: {}",
                edit.tool, result.text
            )));
        }
    };
    let summary = StagedSummary::of(&staged, opened)?;
    let reply = decide(opened, edit, summary, settings)?;
    // What a person decided about the session's earlier edits since it last heard (a stage
    // mode edit resolved in a terminal) reaches the model here too, once.
    let notes = opened.store().take_reviewer_notes(opened.origin())?;
    Ok(reply.with_notes(&notes.iter().map(reviewer_note_text).collect::<Vec<_>>()))
}

/// Decide the staged edit as `settings` say, through the pipeline's [`land`]: `stage` leaves
/// it pending (a policy's decision), `auto` applies it as the model's own request, and
/// `review` waits for a person's decision, which their `resolve` lands through [`land`] too.
fn decide(
    opened: &OpenedWorkspace,
    edit: &HostEdit,
    summary: StagedSummary,
    settings: &HookSettings,
) -> Result<HookReply, EditError> {
    let decided = match settings.approval {
        HookApproval::Review => return await_person(opened, &edit.tool, summary, settings),
        HookApproval::Stage => Decided::new(
            Decision::LeavePending {
                why: "staged by the hook's `stage` mode".to_owned(),
            },
            DecidedBy::Policy,
        ),
        HookApproval::Auto => Decided::new(Decision::Apply, DecidedBy::Model),
    };
    let request = ResolveRequest::model(ResolveAction::Apply, edit.reason.clone());
    match land(opened.store(), &summary.id, decided, &request, None)? {
        Landed::Applied { outcome, .. } => {
            let mut done = applied_text(
                &outcome.record.action.source_tool,
                &outcome.record.action.change_set,
            );
            if let Some(line) = commit_line(&outcome.record) {
                done = format!("{done} {line}");
            }
            Ok(HookReply::Landed {
                text: format!(
                    "{done} Landed through resolve as {id} ({label}); your {tool} call itself did not run and need not be repeated: the file already holds exactly this change. `resolve undo {id}` reverts it.\n\n{diff}",
                    id = summary.id,
                    label = summary.label,
                    tool = edit.tool,
                    diff = summary.diff,
                ),
                id: summary.id,
            })
        }
        Landed::LeftPending { .. } | Landed::Discarded { .. } => {
            Ok(summary.left_staged(&edit.tool, None))
        }
    }
}

/// Wait until a person resolved the staged action (or the deadline passed), then tell what
/// they decided, in the words the model reads about any person's decision.
fn await_person(
    opened: &OpenedWorkspace,
    tool: &str,
    summary: StagedSummary,
    settings: &HookSettings,
) -> Result<HookReply, EditError> {
    let started = Instant::now();
    let record = loop {
        match opened.store().get(&summary.id)? {
            StoredAction::Resolved(record) => break record,
            StoredAction::Pending(_) => {}
        }
        if let Some(limit) = settings.review_deadline.limit()
            && started.elapsed() >= limit
        {
            let waited = format!("No person decided within {}.", settings.review_deadline);
            return Ok(summary.left_staged(tool, Some(&waited)));
        }
        std::thread::sleep(settings.poll_interval);
    };
    // The note the person's decision left for this session is told here, once.
    let notes = opened.store().take_reviewer_notes(opened.origin())?;
    let mut told: Vec<String> = notes.iter().map(reviewer_note_text).collect();
    if told.is_empty() {
        told.push(format!(
            "A person resolved {} ({}): {}.",
            summary.id, record.action.label, record.reason
        ));
    }
    let told = told.join("\n");
    let id = summary.id;
    Ok(match record.outcome {
        Outcome::Applied => HookReply::Landed {
            text: format!(
                "Your {tool} call itself did not run: a person reviewed it and resolve landed what they approved, exactly. Read the file again before editing it further.\n{told}"
            ),
            id,
        },
        Outcome::Discarded => HookReply::Discarded {
            text: format!(
                "Your {tool} call did not run: a person rejected it, and nothing was written.\n{told}"
            ),
            id,
        },
    })
}

/// What the model is told about a staged preview.
struct StagedSummary {
    id: String,
    label: String,
    added: usize,
    removed: usize,
    diff: String,
    origin: Origin,
}

impl StagedSummary {
    fn of(staged: &StagedPreview, opened: &OpenedWorkspace) -> Result<Self, EditError> {
        let text = Blobs::of(opened.store().workspace()).read_text(&staged.record.preview_text)?;
        // The diff alone: the banner speaks of the `resolve` tool, which the reply words for
        // the hook's case itself.
        let diff = text
            .strip_prefix(PREVIEW_BANNER)
            .unwrap_or(&text)
            .trim_start_matches('\n')
            .to_owned();
        Ok(Self {
            id: staged.record.id.clone(),
            label: staged.record.label.clone(),
            added: staged.facts.added,
            removed: staged.facts.removed,
            diff,
            origin: opened.origin().clone(),
        })
    }

    /// The reply for an edit left pending, `why` first when given.
    fn left_staged(self, tool: &str, why: Option<&str>) -> HookReply {
        let why = why.map(|why| format!("{why} ")).unwrap_or_default();
        HookReply::Staged {
            text: format!(
                "{why}Your {tool} call did not run: resolve staged it as {id} ({label}, +{added} -{removed} lines), and the file is NOT modified yet. It lands only when `resolve` applies it: call the `resolve` tool of the `resolve` MCP server with action \"apply\" (or \"discard\") and a reason, or a person runs `resolve apply --id {id}` or `resolve review`. Only this session ({origin}) or a person can resolve it.\n\n{diff}",
                id = self.id,
                label = self.label,
                added = self.added,
                removed = self.removed,
                origin = self.origin,
                diff = self.diff,
            ),
            id: self.id,
        }
    }
}

#[cfg(test)]
mod tests {
    use resolve_test_support::TestDir;

    use super::*;
    use crate::opened::OpenOptions;
    use crate::text_edit::EditRequest;

    fn session(dir: &TestDir) -> OpenedWorkspace {
        let origin = Origin::HostSession {
            host: "claude-code".into(),
            session: "s1".into(),
        };
        let options = OpenOptions {
            user_dir: Some(dir.parent().join("user")),
            ..OpenOptions::default()
        };
        OpenedWorkspace::open(dir.root(), origin, &options).unwrap()
    }

    fn edit() -> HostEdit {
        edit_of("a.txt")
    }

    /// Claude Code's `Edit` of `path`, `two` to `TWO`.
    fn edit_of(path: &str) -> HostEdit {
        HostEdit {
            tool: "Edit".into(),
            request: EditRequest {
                path: path.into(),
                old_text: "two".into(),
                new_text: "TWO".into(),
                replace_all: false,
            }
            .into(),
            reason: "Claude Code Edit (session s1)".into(),
        }
    }

    /// A test directory whose root holds `a.txt` ("one\ntwo\n"), and the host session on it.
    fn lab() -> (TestDir, OpenedWorkspace) {
        let dir = TestDir::with_files([("a.txt", "one\ntwo\n")]);
        let opened = session(&dir);
        (dir, opened)
    }

    /// [`lab`] and the reply to intercepting [`edit`] there under `approval`.
    fn intercepted(approval: HookApproval) -> (TestDir, OpenedWorkspace, HookReply) {
        let (dir, opened) = lab();
        let reply = intercept(&opened, &edit(), &settings(approval)).unwrap();
        (dir, opened, reply)
    }

    fn settings(approval: HookApproval) -> HookSettings {
        HookSettings {
            approval,
            review_deadline: ApproveTimeout::after(Duration::from_millis(50)),
            poll_interval: Duration::from_millis(10),
        }
    }

    #[test]
    fn stage_leaves_the_file_and_pends_under_the_session() {
        let (dir, opened, reply) = intercepted(HookApproval::Stage);
        assert!(matches!(reply, HookReply::Staged { .. }), "{reply:?}");
        let text = reply.text();
        assert!(
            text.contains("staged it as pending-action:edit:1"),
            "{text}"
        );
        assert!(text.contains("+TWO") && !text.contains(PREVIEW_BANNER));
        assert_eq!(dir.read("a.txt"), "one\ntwo\n");
        let pending = opened.store().pending_for(opened.origin()).unwrap();
        assert_eq!(pending.len(), 1);
    }

    #[test]
    fn auto_lands_through_the_store_with_the_hosts_reason() {
        let (dir, opened, reply) = intercepted(HookApproval::Auto);
        assert!(matches!(reply, HookReply::Landed { .. }), "{reply:?}");
        let text = reply.text();
        assert!(text.starts_with("Applied edit to a.txt."), "{text}");
        assert_eq!(dir.read("a.txt"), "one\nTWO\n");
        let history = opened.store().history().unwrap();
        assert_eq!(history[0].reason, "Claude Code Edit (session s1)");
    }

    #[test]
    fn the_sessions_resolve_applies_a_staged_edit_and_says_to_read_the_file_again() {
        let (_dir, opened, _reply) = intercepted(HookApproval::Stage);
        let session = opened.session(std::sync::Arc::new(crate::approval::AutoApprover), None);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let result = runtime
            .block_on(session.execute_resolve(
                &serde_json::json!({"action": "apply", "reason": "As asked."}),
                &tokio_util::sync::CancellationToken::new(),
            ))
            .unwrap();
        let text = &result.text;
        assert!(text.starts_with("Applied edit to a.txt."), "{text}");
        assert!(
            text.contains(
                "Read a.txt again before you edit it further: resolve wrote it, not your edit tool."
            ),
            "{text}"
        );
    }

    #[test]
    fn review_without_a_decision_by_the_deadline_leaves_it_staged() {
        let (dir, _opened, reply) = intercepted(HookApproval::Review);
        assert!(matches!(reply, HookReply::Staged { .. }), "{reply:?}");
        let text = reply.text();
        assert!(text.starts_with("No person decided within"), "{text}");
        assert_eq!(dir.read("a.txt"), "one\ntwo\n");
    }

    #[test]
    fn an_edit_outside_the_root_is_an_error_and_stages_nothing() {
        let (_dir, opened) = lab();
        let outside = edit_of("../a.txt");
        assert!(intercept(&opened, &outside, &settings(HookApproval::Auto)).is_err());
        assert!(opened.store().pending().unwrap().is_empty());
    }
}
