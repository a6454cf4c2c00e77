//! [`ResolveServer`]: one MCP connection's origin, file tools, `resolve` session and resource
//! bookkeeping, and its [`ServerHandler`] implementation (written by hand, so the schemas are
//! our literal JSON).

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use resolve_core::{CHECK_TOOL_NAME, RESOLVE_TOOL_NAME, ResolveSession, ToolResult};
use resolve_edit::{
    CheckSettings, CheckTool, FileTools, LiveOutput, Origin, Store, TaskDied, Workspace,
    reviewer_note_text, run_blocking,
};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, ServerCapabilities,
    ServerConfig, SubscriptionFilter, Tool,
};
use rmcp::service::{RequestContext, SubscriptionContext, SubscriptionSink};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::resources;
use crate::tools::{call_tool_result, mcp_tools_with_check};

/// What the server tells a client about itself at initialization.
pub const INSTRUCTIONS: &str = "\
File changes made with this server are staged as previews: `ast_edit`, `edit` and `write` return a unified diff and change no file. \
Nothing lands until you call `resolve` with action \"apply\" (or \"discard\") and a one-sentence reason; it acts on your most recent pending preview first. \
While a preview is pending, every tool result ends with a reminder to resolve it. \
Pending previews and the history are resources: resolve://pending/<id> and resolve://history/<id>.";

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
    origin: Origin,
    store: Store,
    tools: FileTools,
    /// The `check` tool, when a check command is configured.
    check: Option<CheckTool>,
    session: Arc<ResolveSession>,
    tool_list: Vec<Tool>,
    /// The resource URIs the client was last told about (or listed itself).
    listed: Mutex<Vec<String>>,
    /// Live `subscriptions/listen` streams (protocol 2026-07-28 and later).
    subscriptions: Mutex<Vec<SubscriptionSink>>,
}

impl std::fmt::Debug for ResolveServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResolveServer")
            .field("origin", &self.inner.origin)
            .field("root", &self.inner.store.workspace().root())
            .finish_non_exhaustive()
    }
}

impl ResolveServer {
    /// A server for the workspace at `root`, under a fresh connection id
    /// ([`new_connection_id`]).
    pub fn open(root: &Path) -> Result<Self, crate::McpError> {
        Self::with_connection_id(root, new_connection_id())
    }

    /// A server for the workspace at `root` whose origin is `mcp:<connection_id>`. Two servers
    /// with the same id share their pending actions, so give each connection its own.
    pub fn with_connection_id(
        root: &Path,
        connection_id: impl Into<String>,
    ) -> Result<Self, crate::McpError> {
        let connection_id = connection_id.into();
        let origin = Origin::Mcp(connection_id.clone());
        // What this connection resolves is recorded as resolved by it.
        let settings = CheckSettings::discover(root, None).map_err(crate::McpError::Config)?;
        let store = Store::open(Workspace::open(root)?)
            .resolved_by(origin.clone())
            .requiring_check(settings.require);
        let tools = FileTools::new(store.clone(), origin.clone());
        // Offered only when a command is configured; its output goes to the log (stderr).
        let check = CheckTool::new(store.clone(), origin.clone(), &settings)
            .map(|check| check.with_live_output(|| LiveOutput::merged(std::io::stderr())));
        let session = ResolveSession::new()
            .with_id_allocator(Arc::new(store.clone()))
            .with_pending_source(Arc::new(tools.pending_source()));
        let listed = resources::list(&store, &origin)
            .map(|listed| resources::uris(&listed))
            .unwrap_or_else(|error| {
                tracing::warn!(%error, "could not list the pending store");
                Vec::new()
            });
        Ok(Self {
            inner: Arc::new(Inner {
                connection_id,
                origin,
                store,
                tools,
                session: Arc::new(session),
                tool_list: mcp_tools_with_check(check.as_ref().map(CheckTool::spec).as_ref()),
                check,
                listed: Mutex::new(listed),
                subscriptions: Mutex::new(Vec::new()),
            }),
        })
    }

    /// The connection id.
    pub fn connection_id(&self) -> &str {
        &self.inner.connection_id
    }

    /// The origin this connection stages under and resolves: `mcp:<connection id>`.
    pub fn origin(&self) -> &Origin {
        &self.inner.origin
    }

    /// Run the tool `name` with `arguments` as a `tools/call` would, without notifying the
    /// client: validate, dispatch (blocking work runs on the blocking pool), and shape the
    /// result, with the reminder at the end while this connection has pending actions.
    ///
    /// Every failure the model should read, an unknown tool included, is an `isError` result.
    pub async fn run_tool(
        &self,
        name: &str,
        arguments: Value,
        cancel: &CancellationToken,
    ) -> CallToolResult {
        let result = if name == RESOLVE_TOOL_NAME {
            self.resolve(arguments, cancel.clone()).await
        } else if name == CHECK_TOOL_NAME
            && let Some(check) = self.inner.check.clone()
        {
            run_blocking("check", move || {
                check
                    .call(&arguments)
                    .unwrap_or_else(|error| ToolResult::error(error.to_string()))
            })
            .await
            .unwrap_or_else(|error| task_failed("the check", &error))
        } else {
            let tools = self.inner.tools.clone();
            let name = name.to_owned();
            run_blocking("tool", move || {
                tools
                    .call(&name, &arguments)
                    .unwrap_or_else(|error| ToolResult::error(error.to_string()))
            })
            .await
            .unwrap_or_else(|error| task_failed("the tool", &error))
        };
        let pending = self.has_pending().await;
        let notes = self.take_reviewer_notes().await;
        call_tool_result(result, &notes, pending)
    }

    /// The reviewer notes waiting for this connection (what a person did to its previews, in
    /// any process), as the model reads them; each is taken from the store, so told once.
    async fn take_reviewer_notes(&self) -> Vec<String> {
        let store = self.inner.store.clone();
        let origin = self.inner.origin.clone();
        let taken = run_blocking("reviewer notes", move || {
            store
                .take_reviewer_notes(&origin)
                .map(|notes| notes.iter().map(reviewer_note_text).collect())
        })
        .await;
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

    /// Dispatch `resolve` through the connection's session, on the blocking pool (the pending
    /// source reads the store, the apply takes its lock).
    async fn resolve(&self, arguments: Value, cancel: CancellationToken) -> ToolResult {
        let session = self.inner.session.clone();
        let runtime = tokio::runtime::Handle::current();
        run_blocking("resolve", move || {
            runtime
                .block_on(session.execute_resolve(&arguments, &cancel))
                .unwrap_or_else(|error| ToolResult::from_error(&error))
        })
        .await
        .unwrap_or_else(|error| task_failed("`resolve`", &error))
    }

    /// Whether this connection has pending actions, as the store says now.
    async fn has_pending(&self) -> bool {
        let session = self.inner.session.clone();
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
        let origin = self.inner.origin.clone();
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
        let sinks = lock(&self.inner.subscriptions).clone();
        for sink in sinks {
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
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let result = self.run_tool(&request.name, arguments, &context.ct).await;
        self.notify_if_changed(&context).await;
        Ok(result.into())
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
        _requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(
            SubscriptionFilter::builder()
                .resources_list_changed()
                .build(),
        )
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let sink = context.sink().clone();
        let id = sink.id().clone();
        lock(&self.inner.subscriptions).push(sink);
        context.cancelled().await;
        lock(&self.inner.subscriptions).retain(|sink| sink.id() != &id);
        Ok(())
    }
}

/// The error result of a tool task that panicked or was cancelled.
fn task_failed(what: &str, error: &TaskDied) -> ToolResult {
    tracing::error!(%error, "{what} task ended abnormally");
    ToolResult::error(format!(
        "Internal error: {what} did not finish ({}). Nothing was changed by this call unless the history says so.",
        error.source
    ))
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
