//! The review's one link to the durable state: it reads pending actions into the view model
//! and carries out what the reviewer decided (apply what is kept, discard, amend a file).
//! Nothing else in the review talks to `resolve-edit` or the store.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Context;
use resolve_agent::mcp::McpHub;
use resolve_core::{ResolveAction, ResolveArgs, ResolveSession, ToolResult};
use resolve_edit::{FileChange, PendingRecord, Store, StorePendingSource};
use serde_json::{Map, json};
use tokio_util::sync::CancellationToken;

use super::app::ApplyRequest;
use super::model::{
    ActionView, Decision, DiffLine, FileKind, FileView, HunkView, LineKind, age_text,
    pair_changed_lines, parse_hunk_line,
};

/// Starts the MCP servers that resolve actions staged by their tools (only called when an
/// action is resolved).
pub type HubFactory = Arc<dyn Fn() -> anyhow::Result<McpHub> + Send + Sync>;

/// The pending actions of one workspace, as the review reads and resolves them.
#[derive(Clone)]
pub struct ReviewStore {
    store: Store,
    hub: HubFactory,
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
        Self { store, hub }
    }

    /// Every pending action, head first; with `only`, just that one (if it is pending).
    pub fn load(&self, only: Option<&str>) -> anyhow::Result<Vec<ActionView>> {
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

    fn action_view(&self, record: &PendingRecord, now: u64) -> anyhow::Result<ActionView> {
        let note = record.mcp.as_ref().map(|mcp| {
            format!(
                "  Calls the tool `{}` of the MCP server `{}` when applied; there is no diff to review.",
                mcp.apply.tool, mcp.server
            )
        });
        let files = record
            .change_set
            .files()
            .map(|(path, change)| self.file_view(path, change))
            .collect::<anyhow::Result<Vec<_>>>()?;
        Ok(ActionView {
            id: record.id.clone(),
            label: record.label.clone(),
            origin: record.origin.to_string(),
            age: age_text(now.saturating_sub(record.created_at)),
            files,
            note,
        })
    }

    fn file_view(&self, path: &str, change: &FileChange) -> anyhow::Result<FileView> {
        let new = change
            .new_content()
            .map(|content| self.store.blobs().read_text(content))
            .transpose()?;
        let (kind, base) = match change {
            FileChange::Create { .. } => (FileKind::Create, None),
            FileChange::Update { .. } => (FileKind::Update, Some(self.base_text(path)?)),
            FileChange::Delete { .. } => (FileKind::Delete, Some(self.base_text(path)?)),
        };
        let diff = resolve_edit::change_diff(path, base.as_deref(), new.as_deref());
        Ok(file_from_diff(path, kind, &diff))
    }

    fn base_text(&self, path: &str) -> anyhow::Result<String> {
        let file = self.store.workspace().root().join(path);
        std::fs::read_to_string(&file).with_context(|| format!("could not read `{path}`"))
    }

    /// Apply what `request` keeps; the result's text, or its error.
    pub fn apply(&self, request: &ApplyRequest) -> anyhow::Result<String> {
        let mut args = ResolveArgs::new(ResolveAction::Apply, request.reason.clone());
        if let Some(only) = &request.only {
            let mut extra = Map::new();
            extra.insert("only".into(), json!(only));
            args = args.with_extra(extra);
        }
        self.resolve(args, &request.id)
    }

    /// Discard the action `id` with `reason`; the result's text, or its error.
    pub fn discard(&self, id: &str, reason: &str) -> anyhow::Result<String> {
        self.resolve(ResolveArgs::new(ResolveAction::Discard, reason), id)
    }

    /// The previewed new content of `path` in the action `id`.
    pub fn content(&self, id: &str, path: &str) -> anyhow::Result<String> {
        let record = self
            .store
            .pending_record(id)?
            .with_context(|| format!("{id} is no longer pending"))?;
        let content = record
            .change_set
            .get(path)
            .and_then(FileChange::new_content)
            .with_context(|| format!("{id} has no new content for `{path}`"))?;
        Ok(self.store.blobs().read_text(content)?)
    }

    /// Replace the new content of `path` in the action `id` with `content`.
    pub fn amend(&self, id: &str, path: &str, _content: &str) -> anyhow::Result<()> {
        anyhow::bail!("amending {path} of {id} is not available yet")
    }

    /// Resolve `id` through the core dispatch, as `resolve apply`/`discard` do.
    fn resolve(&self, args: ResolveArgs, id: &str) -> anyhow::Result<String> {
        let hub = (self.hub)()?;
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

/// The view of one file from its unified diff.
fn file_from_diff(path: &str, kind: FileKind, diff: &str) -> FileView {
    let mut hunks: Vec<HunkView> = Vec::new();
    for line in diff.lines() {
        if line.starts_with("@@") {
            hunks.push(HunkView {
                address: format!("{path}#{}", hunks.len() + 1),
                header: line.to_owned(),
                lines: Vec::new(),
                decision: Decision::Kept,
            });
        } else if let Some(hunk) = hunks.last_mut()
            && let Some(line) = parse_hunk_line(line)
        {
            hunk.lines.push(line);
        }
    }
    for hunk in &mut hunks {
        mark_changed_words(&mut hunk.lines);
    }
    let count = |kind: LineKind| {
        hunks
            .iter()
            .flat_map(|hunk| &hunk.lines)
            .filter(|line| line.kind == kind)
            .count()
    };
    FileView {
        path: path.to_owned(),
        kind,
        added: count(LineKind::Added),
        removed: count(LineKind::Removed),
        hunks,
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
