//! The one composition root: [`OpenedWorkspace`] opens a workspace for one origin (the
//! command line, `resolve agent`, an MCP connection) the same way everywhere: its state
//! checked, its configuration read once ([`WorkspaceConfig`]), the store resolving as that
//! origin (requiring a check, and asking for a git commit per apply, when the configuration
//! says so), the file tools, the check tool when a command is configured, and the `resolve`
//! session whose pending actions are decided by the given [`Approver`] (or by a decision made
//! ahead, [`DecisionsAhead`]).
//!
//! Not owned here: what each front end adds (the agent's MCP servers and provider, the MCP
//! server's protocol, the terminal's screens).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use resolve_core::ResolveSession;
use resolve_store::{Origin, Rebase, Rebased, Rederived, Store, Workspace};
use serde_json::Value;

use crate::approval::{Approver, DecisionsAhead};
use crate::ast_edit::rederive;
use crate::check::CheckTool;
use crate::config::WorkspaceConfig;
use crate::error::EditError;
use crate::external::ExternalActionRunner;
use crate::merge::LineRebase;
use crate::pending_source::{AdoptedOrigins, StorePendingSource};
use crate::tools::FileTools;

/// How to open a workspace.
#[derive(Debug, Clone, Default)]
pub struct OpenOptions {
    /// The configuration file the person named (`--config`); by default
    /// `<root>/.resolve/config.toml` when it exists.
    pub config_file: Option<PathBuf>,
    /// The per-user directory whose trust records decide (tests and embedders keep their
    /// own); by default the person's.
    pub user_dir: Option<PathBuf>,
}

/// A workspace opened for one origin: store, configuration, tools, check and session parts.
#[derive(Debug, Clone)]
pub struct OpenedWorkspace {
    store: Store,
    origin: Origin,
    config: WorkspaceConfig,
    tools: FileTools,
    check: Option<CheckTool>,
    ahead: DecisionsAhead,
    adopted: AdoptedOrigins,
}

impl OpenedWorkspace {
    /// Open the workspace at `root` for `origin`: its state directory is checked before its
    /// configuration is read (a `.resolve/` from a clone may hold links).
    pub fn open(root: &Path, origin: Origin, options: &OpenOptions) -> Result<Self, EditError> {
        let workspace = Workspace::open(root)?;
        let config = WorkspaceConfig::read(
            root,
            options.config_file.as_deref(),
            options.user_dir.as_deref(),
        )?;
        Ok(Self::with_store(rebasing_store(workspace), origin, config))
    }

    /// Compose the parts over a `store` the caller already opened (and recovered), for
    /// `origin`, under `config`: the store resolves as `origin` and requires a passing check
    /// when `[check] require` says so (or the store already did).
    pub fn with_store(store: Store, origin: Origin, config: WorkspaceConfig) -> Self {
        let require = store.requires_check() || config.check.require;
        let mut store = store.resolved_by(origin.clone()).requiring_check(require);
        // The person's own `--commit` stands; else the file's `commit = true`, with its trust.
        if store.commit_request().is_none() && config.commit {
            store = store.committing(Some(config.trust.clone()));
        }
        let tools = FileTools::new(store.clone(), origin.clone());
        let check = CheckTool::new(store.clone(), origin.clone(), &config.check);
        Self {
            store,
            origin,
            config,
            tools,
            check,
            ahead: DecisionsAhead::new(),
            adopted: AdoptedOrigins::default(),
        }
    }

    /// The store, resolving as this origin.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The origin previews are staged under and resolved as.
    pub fn origin(&self) -> &Origin {
        &self.origin
    }

    /// The configuration, as read once.
    pub fn config(&self) -> &WorkspaceConfig {
        &self.config
    }

    /// The file tools of this origin.
    pub fn tools(&self) -> &FileTools {
        &self.tools
    }

    /// The `check` tool, when a command is configured.
    pub fn check(&self) -> Option<&CheckTool> {
        self.check.as_ref()
    }

    /// Where a decision made ahead of the `resolve` call that carries it out is given (see
    /// [`DecisionsAhead`]); the sessions of this workspace take it from there.
    pub fn decisions_ahead(&self) -> &DecisionsAhead {
        &self.ahead
    }

    /// Refuse to go on when the configuration names commands (a check command, MCP servers)
    /// from a file the person has not trusted; the error lists every command it names.
    pub fn require_trusted_commands(&self) -> Result<(), EditError> {
        if self.config.names_commands() {
            self.config.trust.check()?;
        }
        Ok(())
    }

    /// The origins its sessions resolve besides its own, learnt as it runs.
    pub fn adopted(&self) -> &AdoptedOrigins {
        &self.adopted
    }

    /// The `resolve` session of this origin: its pending actions (every origin's at the
    /// command line) decided by `approver` unless a decision was made ahead, stored MCP tool
    /// calls made through `runner` when given.
    pub fn session(
        &self,
        approver: Arc<dyn Approver>,
        runner: Option<Arc<dyn ExternalActionRunner>>,
    ) -> ResolveSession {
        let pending_origin = match &self.origin {
            Origin::Cli => None,
            Origin::Agent | Origin::Mcp(_) | Origin::HostSession { .. } => {
                Some(self.origin.clone())
            }
        };
        let mut source = StorePendingSource::new(self.store.clone(), pending_origin)
            .with_approver(approver)
            .with_decisions_ahead(self.ahead.clone())
            .with_adopted(self.adopted.clone());
        if let Some(runner) = runner {
            source = source.with_external_runner(runner);
        }
        ResolveSession::new()
            .with_id_allocator(Arc::new(self.store.clone()))
            .with_pending_source(Arc::new(source))
    }
}

/// The store of `workspace` as every `resolve` front end opens it: rebasing, at apply, each
/// file that changed since its preview with [`ProducerRebase`] (see [`Store::rebasing`]).
pub fn rebasing_store(workspace: Workspace) -> Store {
    Store::open(workspace).rebasing(Some(Arc::new(ProducerRebase)))
}

/// The store's rebase as the producers make it: an `ast_edit` preview re-derived on the
/// file's current bytes ([`rederive`]) when its matches are still the preview's, else the
/// three-way merge by lines ([`LineRebase`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct ProducerRebase;

impl Rebase for ProducerRebase {
    fn rebase(&self, base: &[u8], current: &[u8], preview: &[u8]) -> Rebased {
        LineRebase.rebase(base, current, preview)
    }

    fn rederive(
        &self,
        request: &Value,
        path: &str,
        base: &[u8],
        current: &[u8],
        preview: &[u8],
    ) -> Option<Rederived> {
        rederive(request, path, base, current, preview)
    }
}
