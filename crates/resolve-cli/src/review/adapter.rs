//! The review's one link to the durable state: it reads pending actions into the view model
//! and carries out what the reviewer decided (apply what is kept, discard, amend a file, settle
//! a conflicting file).
//! Nothing else in the review talks to `resolve-edit` or the store.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Context;
use resolve_agent::mcp::McpHub;
use resolve_core::{ResolveAction, ResolveArgs, ResolveSession, ToolResult};
use resolve_edit::{
    AmendOutcome, ChangeKind, CheckPlace, CheckRequest, Hunk, HunkAddress, HunkRejection,
    LiveOutput, MergeSide, PendingRecord, PreviewFile, RebaseState, ReviewDecision, Selection,
    SettleOutcome, Store, StorePendingSource, WorkspaceConfig,
};
use tokio_util::sync::CancellationToken;

use super::model::{
    ActionView, ApplyRequest, ConflictView, Decision, DiffLine, FileKind, FileView, HunkView,
    LineKind, NO_NEWLINE, age_text, pair_changed_lines,
};

/// Starts the MCP servers that resolve actions staged by their tools (only called when an
/// action is resolved).
pub type HubFactory = Arc<dyn Fn() -> anyhow::Result<McpHub> + Send + Sync>;

/// The pending actions of one workspace, as the review reads and resolves them.
#[derive(Clone)]
pub struct ReviewStore {
    store: Store,
    /// `None` when the review only decides (the caller resolves).
    hub: Option<HubFactory>,
    /// The records of the actions last loaded, by id: [`ReviewStore::load_file`] computes
    /// their files one by one without reading them again.
    records: Arc<Mutex<HashMap<String, PendingRecord>>>,
}

impl std::fmt::Debug for ReviewStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReviewStore")
            .field("store", &self.store)
            .finish_non_exhaustive()
    }
}

impl ReviewStore {
    /// Review the actions of `store`; `hub` gives the MCP servers that resolve actions staged
    /// by their tools.
    pub fn new(store: Store, hub: HubFactory) -> Self {
        Self {
            store,
            hub: Some(hub),
            records: Arc::default(),
        }
    }

    /// Review the actions of `store` only to decide: applies and discards are the caller's.
    pub fn deciding(store: Store) -> Self {
        Self {
            store,
            hub: None,
            records: Arc::default(),
        }
    }

    /// Every pending action, head first, with its files named but not computed (see
    /// [`ReviewStore::load_file`]); with `only`, just that one (if it is pending).
    pub fn load(&self, only: Option<&str>) -> anyhow::Result<Vec<ActionView>> {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_secs());
        let records: Vec<PendingRecord> = self
            .store
            .pending()?
            .into_iter()
            .filter(|record| only.is_none_or(|id| record.id == id))
            .collect();
        let views = records
            .iter()
            .map(|record| lazy_action_view(record, now))
            .collect();
        *self.kept_records() = records
            .into_iter()
            .map(|record| (record.id.clone(), record))
            .collect();
        Ok(views)
    }

    /// The records kept by the last [`ReviewStore::load`].
    fn kept_records(&self) -> std::sync::MutexGuard<'_, HashMap<String, PendingRecord>> {
        self.records
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Every pending action with every file's hunks computed (the browser review sends them
    /// all at once); with `only`, just that one.
    pub fn load_all(&self, only: Option<&str>) -> anyhow::Result<Vec<ActionView>> {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_secs());
        self.store
            .pending()?
            .iter()
            .filter(|record| only.is_none_or(|id| record.id == id))
            .map(|record| self.action_view(record, now))
            .collect()
    }

    /// The file `path` of the action `id` as it was at `version`, its hunks computed; `None`
    /// when the action is gone or changed since (a reload shows it as it is now). The action's
    /// record is the one [`ReviewStore::load`] read (read again only when it changed); only
    /// this file is checked against its base.
    pub fn load_file(
        &self,
        id: &str,
        version: &str,
        path: &str,
    ) -> anyhow::Result<Option<FileView>> {
        let mut records = self.kept_records();
        if records
            .get(id)
            .is_none_or(|record| record.fingerprint != version)
        {
            match self.store.pending_record(id)? {
                Some(record) if record.fingerprint == version => {
                    records.insert(id.to_owned(), record);
                }
                _ => return Ok(None),
            }
        }
        let Some(record) = records.get(id) else {
            return Ok(None);
        };
        let Some((_, change)) = record.change_set.files().find(|(file, _)| *file == path) else {
            return Ok(None);
        };
        let hunks = if self.store.is_stale(path, change)? {
            None
        } else {
            resolve_edit::file_hunks(&self.store, path, change)?
        };
        let mut file = file_view(PreviewFile {
            path: path.to_owned(),
            kind: ChangeKind::of(change),
            hunks,
        });
        if file.stale {
            file.conflicts = conflict_views(&self.store, record)
                .into_iter()
                .find(|(conflicting, _)| conflicting == path)
                .map(|(_, conflicts)| conflicts)
                .unwrap_or_default();
        }
        if let Some(draft) = self.store.review_draft(id)?
            && draft.action_version == version
        {
            adopt_marks(&mut file, &draft);
        }
        Ok(Some(file))
    }

    /// The review in progress of the action `id`, if one was saved (in this review or
    /// another, terminal or browser).
    pub fn draft(&self, id: &str) -> anyhow::Result<Option<resolve_edit::ReviewDraft>> {
        Ok(self.store.review_draft(id)?)
    }

    /// Keep `draft` as the review in progress of the action `id` (an empty one removes it).
    pub fn save_draft(&self, id: &str, draft: &resolve_edit::ReviewDraft) -> anyhow::Result<()> {
        Ok(self.store.save_review_draft(id, draft)?)
    }

    /// Keep the hunks rejected in `action` as its review in progress, with the line comments
    /// a browser review of it saved and the marks saved on files not computed here yet.
    pub fn save_marks(&self, action: &ActionView) -> anyhow::Result<()> {
        let mut draft = resolve_edit::ReviewDraft {
            action_version: action.version.clone(),
            rejected: marks_of(action),
            comments: Vec::new(),
        };
        if let Some(saved) = self.draft(&action.id)? {
            draft.comments = saved.comments;
            if saved.action_version == action.version {
                let unloaded = |address: &str| {
                    HunkAddress::parse(address).is_ok_and(|address| {
                        action
                            .files
                            .iter()
                            .any(|file| !file.loaded && file.path == address.path)
                    })
                };
                draft.rejected.extend(
                    saved
                        .rejected
                        .into_iter()
                        .filter(|mark| unloaded(&mark.address)),
                );
            }
        }
        self.save_draft(&action.id, &draft)
    }

    /// A short text that changes when the pending actions do (one staged, resolved or
    /// amended), cheap enough to poll.
    pub fn version(&self) -> anyhow::Result<String> {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::hash::DefaultHasher::new();
        for record in self.store.pending()? {
            (&record.id, &record.fingerprint, record.amendments.len()).hash(&mut hasher);
        }
        Ok(format!("{:016x}", hasher.finish()))
    }

    fn action_view(&self, record: &PendingRecord, now: u64) -> anyhow::Result<ActionView> {
        let note = mcp_note(record);
        let hunks = resolve_edit::action_hunks(&self.store, record)?;
        let mut files: Vec<FileView> = hunks.files.into_iter().map(file_view).collect();
        if files.iter().any(|file| file.stale) {
            for (path, conflicts) in conflict_views(&self.store, record) {
                if let Some(file) = files.iter_mut().find(|file| file.path == path) {
                    file.conflicts = conflicts;
                }
            }
        }
        Ok(ActionView {
            id: record.id.clone(),
            version: hunks.fingerprint,
            label: record.label.clone(),
            origin: record.origin.to_string(),
            age: age_text(now.saturating_sub(record.created_at)),
            files,
            note,
            foreign: record.foreign,
            rewrites: rewrites(&record.details),
        })
    }

    /// Settle `path` of the action `id` (at `version`), each conflicting hunk taking `side`
    /// (`resolve amend --take`); what to tell the reviewer.
    pub fn settle(
        &self,
        id: &str,
        version: &str,
        path: &str,
        side: MergeSide,
    ) -> anyhow::Result<String> {
        let name = match side {
            MergeSide::Current => "current",
            MergeSide::Preview => "preview",
        };
        Ok(
            match resolve_edit::settle(&self.store, id, Some(path), side, Some(version))? {
                SettleOutcome::Settled { hunks, .. } => format!(
                    "Settled {path}: {hunks} conflicting {} took the {name} side; apply (a) to land it.",
                    if hunks == 1 { "hunk" } else { "hunks" }
                ),
                SettleOutcome::Clean { .. } => {
                    format!("{path} does not conflict; nothing to settle.")
                }
            },
        )
    }

    /// Apply what `request` keeps: everything but the rejected hunks, each rejection with its
    /// reason; the result's text, or its error.
    pub fn apply(&self, request: &ApplyRequest) -> anyhow::Result<String> {
        let record = self
            .store
            .pending_record(&request.id)?
            .with_context(|| format!("{} is no longer pending", request.id))?;
        if record.mcp.is_some() {
            // An MCP tool call has no hunks: the server applies it, as `resolve apply` does.
            return self.resolve(
                ResolveArgs::new(ResolveAction::Apply, request.reason.clone()),
                &request.id,
            );
        }
        let decision = review_decision(request)?;
        let outcome = resolve_edit::apply_reviewed_commented(
            &self.store,
            &request.id,
            &decision,
            request.comments.clone(),
            &request.reason,
        )?;
        let mut lines = vec![format!(
            "Applied {} to {}.",
            request.id,
            outcome.applied_files.join(", ")
        )];
        if let Some(review) = &outcome.record.review {
            lines.extend(resolve_edit::partial_apply_lines(review));
        }
        Ok(lines.join(" "))
    }

    /// Discard the action `id` with `reason`; the result's text, or its error.
    pub fn discard(&self, id: &str, reason: &str) -> anyhow::Result<String> {
        self.resolve(ResolveArgs::new(ResolveAction::Discard, reason), id)
    }

    /// The previewed new content of `path` in the action `id` (amendments included).
    pub fn content(&self, id: &str, path: &str) -> anyhow::Result<String> {
        let record = self
            .store
            .pending_record(id)?
            .with_context(|| format!("{id} is no longer pending"))?;
        // A file that conflicts since the preview opens as the merge with conflict markers.
        if let Some(draft) = resolve_edit::conflict_draft(&self.store, &record, path)? {
            return Ok(draft);
        }
        Ok(resolve_edit::previewed_content(&self.store, &record, path)?)
    }

    /// Replace the new content of `path` in the action `id` (as it was at `version`) with
    /// `content`; whether anything changed.
    pub fn amend(
        &self,
        id: &str,
        version: &str,
        path: &str,
        content: String,
    ) -> anyhow::Result<bool> {
        if resolve_edit::has_conflict_markers(&content) {
            anyhow::bail!(
                "{path} still holds conflict markers; nothing was amended (C / P take a side)"
            );
        }
        let outcome = resolve_edit::amend(&self.store, id, path, content, Some(version))?;
        Ok(matches!(outcome, AmendOutcome::Amended(_)))
    }

    /// Run the workspace's configured check command (only from a `config.toml` the person
    /// trusted; never a command the caller names) against the pending action `id`, in place, as
    /// `resolve check` does; the verdict, then the end of what the command printed.
    pub fn check(&self, id: &str) -> anyhow::Result<String> {
        let settings = WorkspaceConfig::read(self.store.workspace().root(), None, None)?.check;
        let Some(command) = settings.runnable_command()? else {
            anyhow::bail!("{}", resolve_edit::EditError::NoCheckCommand);
        };
        let request = CheckRequest {
            id: id.to_owned(),
            command: command.to_vec(),
            timeout: settings.timeout,
            place: CheckPlace::InPlace,
        };
        let printed = Arc::new(Mutex::new(Vec::new()));
        let live = LiveOutput::merged(Tail(Arc::clone(&printed)));
        let outcome = resolve_edit::run_check(&self.store, &request, live)?;
        let mut text = resolve_edit::check_summary(&outcome);
        if let Some(changed) = resolve_edit::changed_files_note(&outcome) {
            text.push('\n');
            text.push_str(&changed);
        }
        let printed = printed
            .lock()
            .map(|bytes| bytes.clone())
            .unwrap_or_default();
        let printed = String::from_utf8_lossy(&printed);
        if !printed.trim().is_empty() {
            text.push_str("\n\n");
            text.push_str(printed.trim_end());
        }
        Ok(text)
    }

    /// Resolve `id` through the core dispatch, as `resolve apply`/`discard` do.
    fn resolve(&self, args: ResolveArgs, id: &str) -> anyhow::Result<String> {
        let hub = match &self.hub {
            Some(hub) => hub()?,
            None => anyhow::bail!("this review only decides; it resolves nothing itself"),
        };
        let source = StorePendingSource::new(self.store.clone(), None)
            .with_external_runner(Arc::new(hub.clone()));
        let session = ResolveSession::new()
            .with_id_allocator(Arc::new(self.store.clone()))
            .with_pending_source(Arc::new(source));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let cancel = CancellationToken::new();
        let outcome = runtime.block_on(async {
            let outcome = session.resolve_with(args, Some(id), &cancel).await;
            hub.shutdown().await;
            outcome
        });
        let result = outcome.unwrap_or_else(|error| ToolResult::from_error(&error));
        if result.is_error {
            anyhow::bail!("{}", result.text);
        }
        Ok(result.text)
    }
}

/// The view of `record` with its files named but not computed.
fn lazy_action_view(record: &PendingRecord, now: u64) -> ActionView {
    ActionView {
        id: record.id.clone(),
        version: record.fingerprint.clone(),
        label: record.label.clone(),
        origin: record.origin.to_string(),
        age: age_text(now.saturating_sub(record.created_at)),
        files: record
            .change_set
            .files()
            .map(|(path, change)| {
                FileView::unloaded(path.to_owned(), file_kind(ChangeKind::of(change)))
            })
            .collect(),
        note: mcp_note(record),
        foreign: record.foreign,
        rewrites: rewrites(&record.details),
    }
}

/// What an MCP tool call shows instead of a diff.
fn mcp_note(record: &PendingRecord) -> Option<String> {
    record.mcp.as_ref().map(|mcp| {
        format!(
            "  Calls the tool `{}` of the MCP server `{}` when applied; there is no diff to review.",
            mcp.apply.tool, mcp.server
        )
    })
}

/// The `rewrites` an `ast_edit` preview's details name (`[{pat, out}]`); none for the others.
fn rewrites(details: &serde_json::Value) -> Vec<(String, String)> {
    let Some(rewrites) = details
        .get("rewrites")
        .and_then(serde_json::Value::as_array)
    else {
        return Vec::new();
    };
    rewrites
        .iter()
        .filter_map(|rewrite| {
            let pattern = rewrite.get("pat")?.as_str()?;
            let out = rewrite.get("out")?.as_str()?;
            Some((pattern.to_owned(), out.to_owned()))
        })
        .collect()
}

/// The last [`TAIL_BYTES`] bytes written to it.
struct Tail(Arc<Mutex<Vec<u8>>>);

/// How much of a check's output the review keeps to show.
const TAIL_BYTES: usize = 16 * 1024;

impl std::io::Write for Tail {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        if let Ok(mut kept) = self.0.lock() {
            kept.extend_from_slice(bytes);
            let over = kept.len().saturating_sub(TAIL_BYTES);
            kept.drain(..over);
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The decision that applies `request`: everything but the rejected hunks, for the version
/// reviewed.
pub fn review_decision(request: &ApplyRequest) -> anyhow::Result<ReviewDecision> {
    let mut rejected = Vec::with_capacity(request.rejected.len());
    let mut rejections = Vec::new();
    for rejection in &request.rejected {
        let address = HunkAddress::parse(&rejection.address)?;
        if let Some(reason) = &rejection.reason {
            rejections.push(HunkRejection {
                address: address.clone(),
                reason: reason.clone(),
            });
        }
        rejected.push(address);
    }
    Ok(ReviewDecision {
        selection: if rejected.is_empty() {
            Selection::All
        } else {
            Selection::Except(rejected)
        },
        rejections,
        fingerprint: Some(request.version.clone()),
    })
}

/// The view of one file of an action.
fn file_view(file: PreviewFile) -> FileView {
    let kind = file_kind(file.kind);
    let Some(file_hunks) = file.hunks else {
        return FileView {
            path: file.path,
            kind,
            added: 0,
            removed: 0,
            stale: true,
            hunks: Vec::new(),
            conflicts: Vec::new(),
            loaded: true,
        };
    };
    let hunks: Vec<HunkView> = file_hunks
        .hunks
        .iter()
        .map(|hunk| hunk_view(&file.path, hunk))
        .collect();
    let (added, removed) = file_hunks.hunks.iter().fold((0, 0), |(a, r), hunk| {
        let (added, removed) = hunk.counts();
        (a + added, r + removed)
    });
    FileView {
        path: file.path,
        kind,
        added,
        removed,
        stale: false,
        hunks,
        conflicts: Vec::new(),
        loaded: true,
    }
}

/// How a file changes, as the review names it.
fn file_kind(kind: ChangeKind) -> FileKind {
    match kind {
        ChangeKind::Create => FileKind::Create,
        ChangeKind::Update => FileKind::Update,
        ChangeKind::Delete => FileKind::Delete,
    }
}

/// The conflicting hunks of each file of `record` that moved since the preview, by path.
fn conflict_views(store: &Store, record: &PendingRecord) -> Vec<(String, Vec<ConflictView>)> {
    let Ok(RebaseState::Conflicts { files }) = store.rebase_state(record) else {
        return Vec::new();
    };
    files
        .iter()
        .map(|file| {
            let hunks = file
                .reason
                .hunks()
                .iter()
                .map(|hunk| ConflictView {
                    current_line: hunk.current_line,
                    current: String::from_utf8_lossy(&hunk.current).into_owned(),
                    preview_line: hunk.preview_line,
                    preview: String::from_utf8_lossy(&hunk.preview).into_owned(),
                    base: String::from_utf8_lossy(&hunk.base).into_owned(),
                })
                .collect();
            (file.path.clone(), hunks)
        })
        .collect()
}

/// The view of one hunk: its lines (a line without a final newline followed by the marker),
/// changed words marked.
fn hunk_view(path: &str, hunk: &Hunk) -> HunkView {
    let mut lines = Vec::with_capacity(hunk.lines.len());
    for line in &hunk.lines {
        lines.push(DiffLine {
            kind: match line.kind {
                resolve_edit::LineKind::Context => LineKind::Context,
                resolve_edit::LineKind::Added => LineKind::Added,
                resolve_edit::LineKind::Removed => LineKind::Removed,
            },
            text: line.content().to_owned(),
            changed_words: Vec::new(),
        });
        if !line.has_newline() {
            lines.push(DiffLine {
                kind: LineKind::NoNewline,
                text: NO_NEWLINE.to_owned(),
                changed_words: Vec::new(),
            });
        }
    }
    mark_changed_words(&mut lines);
    HunkView {
        address: HunkAddress::hunk(path, hunk.number).to_string(),
        header: hunk.header.clone(),
        lines,
        decision: Decision::Kept,
    }
}

/// Mark the changed words of each removed line and the added line paired with it.
fn mark_changed_words(lines: &mut [DiffLine]) {
    for (removed, added) in pair_changed_lines(lines) {
        let words = resolve_edit::word_diff(&lines[removed].text, &lines[added].text);
        lines[removed].changed_words = words.removed;
        lines[added].changed_words = words.added;
    }
}

/// The hunks rejected in `action`, as a review in progress keeps them.
pub fn marks_of(action: &ActionView) -> Vec<resolve_edit::DraftRejection> {
    action
        .files
        .iter()
        .flat_map(|file| &file.hunks)
        .filter_map(|hunk| match &hunk.decision {
            Decision::Rejected { reason } => Some(resolve_edit::DraftRejection {
                address: hunk.address.clone(),
                reason: reason.clone(),
            }),
            Decision::Kept => None,
        })
        .collect()
}

/// Mark the hunks of `file` that `draft` rejected.
fn adopt_marks(file: &mut FileView, draft: &resolve_edit::ReviewDraft) {
    for hunk in &mut file.hunks {
        if let Some(mark) = draft
            .rejected
            .iter()
            .find(|mark| mark.address == hunk.address)
        {
            hunk.decision = Decision::Rejected {
                reason: mark.reason.clone(),
            };
        }
    }
}
