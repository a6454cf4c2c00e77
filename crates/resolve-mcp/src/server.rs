//! [`ResolveServer`]: one MCP connection's origin, file tools, `resolve` session and resource
//! bookkeeping, and its [`ServerHandler`] implementation (written by hand, so the schemas are
//! our literal JSON).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use resolve_core::{RESOLVE_TOOL_NAME, ToolContext, ToolError, ToolRegistry, ToolResult};
use resolve_edit::{
    AdoptedOrigins, ApprovalMode, ApproveTimeout, AutoApprover, LiveOutput, OpenedWorkspace,
    Origin, Store, Workspace, WorkspaceConfig, builtin_tools, codex_session_origin, run_blocking,
    take_origin_notes,
};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, ServerCapabilities,
    ServerConfig, SubscribeRequestParams, SubscriptionFilter, Tool, UnsubscribeRequestParams,
};
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::approval_state::ApprovalStates;
use crate::resolve_call::{ResolveReply, Resolver, Retry};
use crate::resources;
use crate::subscriptions::Watches;
use crate::tools::{call_tool_result, mcp_tools_of, resolve_result};

/// What the server tells a client about itself at initialization.
pub const INSTRUCTIONS: &str = "\
File changes made with this server are staged as previews: `ast_edit`, `edit`, `write` and `apply_patch` return a unified diff and change no file. \
Nothing lands until you call `resolve` with action \"apply\" (or \"discard\") and a one-sentence reason; it acts on your most recent pending preview first. \
While a preview is pending, every tool result ends with a reminder to resolve it. \
Your pending previews are resources of this connection (resolve://pending/<id>); the history of the workspace is too (resolve://history/<id>).";

/// A fresh connection id, unique across processes: process id, the time in nanoseconds and a
/// per-process counter (`4242-18c2f0a1b2c3d4e5-0`).
pub fn new_connection_id() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos());
    format!(
        "{}-{nanos:x}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// How a server is set up: its connection id and who approves an apply.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// The connection id; its origin is `mcp:<connection_id>`. Two servers with the same id
    /// share their pending actions, so give each connection its own.
    pub connection_id: String,
    /// Who approves an `apply` the model asks for.
    pub approve: ApprovalMode,
    /// How long a person has to answer an approval (`--approve ask`), asked through the
    /// client or through an input-required result; past it the action stays pending.
    pub approve_timeout: ApproveTimeout,
    /// The per-user directory whose trust records decide whether the workspace
    /// configuration's `[check] command` may run (`None`: `resolve_edit`'s per-user directory
    /// from the environment). An untrusted command is still offered as the `check` tool, whose
    /// every call is then a tool error saying how to trust it.
    pub user_dir: Option<PathBuf>,
    /// The host session this server runs in (Claude Code's `CLAUDE_CODE_SESSION_ID`): when
    /// set, the server stages and resolves as that origin instead of `mcp:<connection_id>`,
    /// so its `resolve` resolves what the session's hooks staged (`resolve hook`).
    pub host_session: Option<Origin>,
}

impl Default for ServerOptions {
    /// A fresh connection id ([`new_connection_id`]), `auto` approval, the default
    /// [`ApproveTimeout`] (ten minutes).
    fn default() -> Self {
        Self {
            connection_id: new_connection_id(),
            approve: ApprovalMode::Auto,
            approve_timeout: ApproveTimeout::default(),
            user_dir: None,
            host_session: None,
        }
    }
}

/// The MCP server of one connection: its origin `mcp:<connection id>`, the file tools staging
/// for that origin, and the `resolve` session acting on that origin's pending actions.
///
/// Cloning gives another handle to the same connection state.
#[derive(Clone)]
pub struct ResolveServer {
    inner: Arc<Inner>,
}

struct Inner {
    connection_id: String,
    store: Store,
    /// The built-in tools (the file tools, then `check` when a check command is configured):
    /// the registry the agent offers too. `resolve` is dispatched apart.
    tools: ToolRegistry,
    /// Tool calls so far, for each call's id.
    calls: AtomicU64,
    /// The `resolve` tool under the approval mode (holds the connection's session).
    resolver: Resolver,
    tool_list: Vec<Tool>,
    /// The resource URIs the client was last told about (or listed itself).
    listed: Mutex<Vec<String>>,
    /// Resource subscriptions and listen streams.
    watches: Arc<Watches>,
    /// The host sessions whose hook-staged actions this connection resolves too (a Codex
    /// session, learnt from its calls' `_meta.sessionId`); `None` when the connection already
    /// resolves as a host session.
    adopted: Option<AdoptedOrigins>,
}

impl std::fmt::Debug for ResolveServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResolveServer")
            .field("origin", &self.inner.resolver.origin)
            .field("approve", &self.inner.resolver.mode)
            .field("root", &self.inner.store.workspace().root())
            .finish_non_exhaustive()
    }
}

impl ResolveServer {
    /// A server for the workspace at `root`, under a fresh connection id
    /// ([`new_connection_id`]).
    pub fn open(root: &Path) -> Result<Self, crate::McpError> {
        Self::with_options(root, ServerOptions::default())
    }

    /// A server for the workspace at `root` whose origin is `mcp:<connection_id>`. Two servers
    /// with the same id share their pending actions, so give each connection its own.
    pub fn with_connection_id(
        root: &Path,
        connection_id: impl Into<String>,
    ) -> Result<Self, crate::McpError> {
        Self::with_options(
            root,
            ServerOptions {
                connection_id: connection_id.into(),
                ..ServerOptions::default()
            },
        )
    }

    /// A server for the workspace at `root` set up by `options`.
    pub fn with_options(root: &Path, options: ServerOptions) -> Result<Self, crate::McpError> {
        let ServerOptions {
            connection_id,
            approve,
            approve_timeout,
            user_dir,
            host_session,
        } = options;
        let adopts_sessions = host_session.is_none();
        let origin = host_session.unwrap_or_else(|| Origin::Mcp(connection_id.clone()));
        // Opening the workspace checks its state directory (a `.resolve/` from a clone may hold
        // links) before its configuration is read.
        let workspace = Workspace::open(root)?;
        let config = WorkspaceConfig::read(root, None, user_dir.as_deref())
            .map_err(crate::McpError::Config)?;
        // What this connection resolves is recorded as resolved by it; `[check] require =
        // true` holds for its applies too. The model's own decisions stand; a person's is
        // given ahead (see `Resolver`).
        let opened = OpenedWorkspace::with_store(
            resolve_edit::rebasing_store(workspace),
            origin.clone(),
            config,
        );
        let store = opened.store().clone();
        let tools = opened.tools().clone();
        // Offered only when a command is configured; its output goes to the log (stderr).
        let check = opened
            .check()
            .cloned()
            .map(|check| check.with_live_output(|| LiveOutput::merged(std::io::stderr())));
        let session = opened.session(Arc::new(AutoApprover), None);
        let tools = builtin_tools(&tools, check)?;
        let listed = resources::list(&store, &origin)
            .map(|listed| resources::uris(&listed))
            .unwrap_or_else(|error| {
                tracing::warn!(%error, "could not list the pending store");
                Vec::new()
            });
        Ok(Self {
            inner: Arc::new(Inner {
                connection_id,
                watches: Arc::new(Watches::new(store.clone())),
                resolver: Resolver {
                    mode: approve,
                    store: store.clone(),
                    origin,
                    session: Arc::new(session),
                    ahead: opened.decisions_ahead().clone(),
                    timeout: approve_timeout,
                    states: ApprovalStates::within(approve_timeout),
                },
                store,
                tool_list: mcp_tools_of(tools.specs()),
                tools,
                calls: AtomicU64::new(0),
                listed: Mutex::new(listed),
                adopted: adopts_sessions.then(|| opened.adopted().clone()),
            }),
        })
    }

    /// The tools this connection offers besides `resolve`: the built-in registry (the file
    /// tools, then `check` when a check command is configured), in the order it lists them.
    pub fn tool_registry(&self) -> &ToolRegistry {
        &self.inner.tools
    }

    /// The tools as `tools/list` answers: the registry's, then `resolve`.
    pub fn listed_tools(&self) -> &[Tool] {
        &self.inner.tool_list
    }

    /// The connection id.
    pub fn connection_id(&self) -> &str {
        &self.inner.connection_id
    }

    /// The origin this connection stages under and resolves: `mcp:<connection id>`.
    pub fn origin(&self) -> &Origin {
        &self.inner.resolver.origin
    }

    /// A call from a Codex session names it (`_meta.sessionId`, which Codex sends with every
    /// `tools/call`): from then on `resolve` also resolves what that session's hook staged
    /// (`resolve hook codex`), as it resolves the connection's own previews.
    fn adopt_host_session(&self, context: &RequestContext<RoleServer>) {
        let Some(adopted) = &self.inner.adopted else {
            return;
        };
        let session = context.meta.get("sessionId").and_then(Value::as_str);
        if let Some(session) = session.filter(|session| {
            !session.is_empty()
                && session.len() <= 128
                && session
                    .bytes()
                    .all(|byte| byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_')
        }) {
            adopted.adopt(codex_session_origin(session));
        }
    }

    /// The connection ended: drop the reviewer notes nobody will be told now (its origin is
    /// its own, and no later connection shares it).
    pub async fn end_connection(&self) {
        let store = self.inner.store.clone();
        let origin = self.origin().clone();
        match run_blocking("drop reviewer notes", move || {
            store.drop_reviewer_notes(&origin)
        })
        .await
        {
            Ok(Ok(_)) => {}
            Ok(Err(error)) => {
                tracing::warn!(%error, "could not drop the connection's reviewer notes")
            }
            Err(error) => tracing::warn!(%error, "could not drop the connection's reviewer notes"),
        }
    }

    /// Who approves an `apply` the model asks for.
    pub fn approve_mode(&self) -> ApprovalMode {
        self.inner.resolver.mode
    }

    /// Run the tool `name` with `arguments` as a `tools/call` would from a client that cannot
    /// elicit, without notifying the client: validate, dispatch (blocking work runs on the
    /// blocking pool), and shape the result, with the reminder at the end while this
    /// connection has pending actions. Under `--approve ask` an apply fails closed here.
    ///
    /// Every failure the model should read, an unknown tool included, is an `isError` result.
    pub async fn run_tool(
        &self,
        name: &str,
        arguments: Value,
        cancel: &CancellationToken,
    ) -> CallToolResult {
        match self
            .dispatch(name, arguments, Retry::default(), cancel, None)
            .await
        {
            CallToolResponse::Complete(result) => result,
            // Without a client to ask, nothing asks for input.
            _ => CallToolResult::error(vec![rmcp::model::ContentBlock::text(
                "Internal error: an approval was asked without a client.",
            )]),
        }
    }

    /// The reviewer notes waiting for this connection (what a person did to its previews, in
    /// any process, and which of its previews' files moved since), as the model reads them;
    /// each is taken from the store, so told once.
    async fn take_reviewer_notes(&self) -> Vec<String> {
        let store = self.inner.store.clone();
        let origin = self.inner.resolver.origin.clone();
        let taken =
            run_blocking("reviewer notes", move || take_origin_notes(&store, &origin)).await;
        match taken {
            Ok(Ok(notes)) => notes,
            Ok(Err(error)) => {
                tracing::warn!(%error, "could not read the reviewer notes");
                Vec::new()
            }
            Err(error) => {
                tracing::warn!(%error, "the reviewer notes check failed");
                Vec::new()
            }
        }
    }

    /// Run a tool call: `resolve` under the approval mode (asking through `client` when
    /// given), any other tool through the connection's registry of built-in tools.
    async fn dispatch(
        &self,
        name: &str,
        arguments: Value,
        retry: Retry,
        cancel: &CancellationToken,
        client: Option<&RequestContext<RoleServer>>,
    ) -> CallToolResponse {
        if name == RESOLVE_TOOL_NAME {
            let reply = self
                .inner
                .resolver
                .call(arguments, retry, cancel, client)
                .await;
            return match reply {
                ResolveReply::InputRequired(input) => CallToolResponse::InputRequired(input),
                ResolveReply::Finished(result, content) => {
                    let pending = self.has_pending().await;
                    let notes = self.take_reviewer_notes().await;
                    CallToolResponse::Complete(resolve_result(result, content, &notes, pending))
                }
            };
        }
        let result = match self.inner.tools.get(name) {
            Some(tool) => {
                let call = self.inner.calls.fetch_add(1, Ordering::Relaxed);
                let context = ToolContext::new(
                    self.inner.resolver.session.clone(),
                    cancel.clone(),
                    format!("mcp-call-{call}"),
                );
                match tool.execute(arguments, &context).await {
                    Ok(result) => result,
                    Err(ToolError::RespondToModel(text)) => ToolResult::error(text),
                    Err(ToolError::Fatal(message)) => {
                        tracing::error!(%message, "the tool `{name}` failed");
                        ToolResult::error(format!(
                            "Internal error: the tool did not finish ({message}). Nothing was changed by this call unless the history says so."
                        ))
                    }
                }
            }
            None => ToolResult::error(format!("Unknown tool `{name}`.")),
        };
        let kind = self.inner.tools.spec(name).map(|spec| spec.kind);
        let pending = self.has_pending().await;
        let notes = self.take_reviewer_notes().await;
        CallToolResponse::Complete(call_tool_result(kind, result, &notes, pending))
    }

    /// Whether this connection has pending actions, as the store says now.
    async fn has_pending(&self) -> bool {
        let session = self.inner.resolver.session.clone();
        run_blocking("pending check", move || {
            if let Err(error) = session.refresh_pending() {
                tracing::warn!(%error, "could not read the pending store");
            }
            session.queue().pending().has_pending()
        })
        .await
        .unwrap_or_else(|error| {
            tracing::warn!(%error, "the pending check failed");
            false
        })
    }

    /// The current resources, read on the blocking pool.
    async fn resources(&self) -> Result<Vec<rmcp::model::Resource>, ErrorData> {
        let store = self.inner.store.clone();
        let origin = self.inner.resolver.origin.clone();
        run_blocking("resource list", move || resources::list(&store, &origin))
            .await
            .map_err(|error| ErrorData::internal_error(error.to_string(), None))?
            .map_err(|error| ErrorData::internal_error(error.to_string(), None))
    }

    /// Tell the client when the resource list differs from what it last saw.
    async fn notify_if_changed(&self, context: &RequestContext<RoleServer>) {
        let current = match self.resources().await {
            Ok(current) => resources::uris(&current),
            Err(error) => {
                tracing::warn!(%error.message, "could not list resources after a tool call");
                return;
            }
        };
        let changed = {
            let mut listed = lock(&self.inner.listed);
            let changed = *listed != current;
            *listed = current;
            changed
        };
        if !changed {
            return;
        }
        // Sessions that began with `initialize` take notifications at any time; newer ones only
        // on their `subscriptions/listen` streams.
        let legacy = context
            .protocol_version()
            .is_none_or(|version| version.has_initialize());
        if legacy && let Err(error) = context.peer.notify_resource_list_changed().await {
            tracing::debug!(%error, "could not send notifications/resources/list_changed");
        }
        for sink in self.inner.watches.sinks() {
            if let Err(error) = sink.notify_resource_list_changed().await {
                tracing::debug!(%error, "could not notify a resource subscription");
            }
        }
    }
}

impl ServerHandler for ResolveServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_resources_list_changed()
                .enable_resources_subscribe()
                .enable_extensions_with(crate::app::extensions())
                .build(),
        )
        .with_server_info(
            Implementation::new("resolve", env!("CARGO_PKG_VERSION"))
                .with_title("resolve: staged, reviewable file edits"),
        )
        .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(
            self.inner.tool_list.clone(),
        ))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.adopt_host_session(&context);
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let retry = Retry {
            request_state: request.request_state,
            input_responses: request.input_responses,
        };
        let response = self
            .dispatch(&request.name, arguments, retry, &context.ct, Some(&context))
            .await;
        self.notify_if_changed(&context).await;
        self.inner.watches.check().await;
        Ok(response)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let current = self.resources().await?;
        *lock(&self.inner.listed) = resources::uris(&current);
        Ok(ListResourcesResult::with_all_items(current))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(
            resources::templates(),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let store = self.inner.store.clone();
        let contents = run_blocking("resource read", move || {
            resources::read(&store, &request.uri)
        })
        .await
        .map_err(|error| ErrorData::internal_error(error.to_string(), None))??;
        Ok(ReadResourceResult::new(vec![contents]).into())
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let ours: Vec<String> = requested
            .resource_subscriptions
            .iter()
            .flatten()
            .filter(|uri| Watches::is_ours(uri))
            .cloned()
            .collect();
        self.inner.watches.remember_accepted(&ours);
        Some(
            SubscriptionFilter::builder()
                .resources_list_changed()
                .resource_subscriptions(ours)
                .build(),
        )
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let sink = context.sink().clone();
        self.inner.watches.add_sink(sink.clone()).await;
        context.cancelled().await;
        self.inner.watches.remove_sink(&sink);
        Ok(())
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if !Watches::is_ours(&request.uri) {
            return Err(ErrorData::resource_not_found(
                format!("Unknown resource `{}`.", request.uri),
                None,
            ));
        }
        self.inner
            .watches
            .subscribe(request.uri, context.peer.clone())
            .await;
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.inner.watches.unsubscribe(&request.uri);
        Ok(())
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
