//! [`McpHub`]: the MCP servers of one process, started over stdio with rmcp's client.
//!
//! A server that cannot be started, or that exits, is reported through the notice callback and
//! skipped; it never ends a run. The hub is also the [`ExternalActionRunner`] that resolves
//! durable MCP actions: it calls the server this process runs, or starts it from the
//! configuration when this process has not started it (as `resolve apply` does). A server that
//! was running and exited is not restarted within the process: its actions fail to apply and
//! stay pending.
//!
//! Owned here: server processes, their lifetimes and notices, and making calls. Not owned: what
//! the model sees of a server's tools and their results (`tool`), the error texts (`error`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use resolve_core::{BoxFuture, Extra, ToolResult};
use resolve_edit::{ExternalActionRunner, McpToolCall, Origin, Store};
use rmcp::ServiceExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
    JsonObject, Tool as McpToolInfo,
};
use rmcp::service::{Peer, RoleClient, ServiceError};
use rmcp::transport::TokioChildProcess;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::config::{CONFIG_PATH, McpConfig, McpServerConfig};
use super::error::{CallError, StartError};
use super::tool::{CallFuture, ToolCaller, mcp_tools, tool_result};
use resolve_core::Tool;

/// Receives the hub's notices (a server failed to start, or exited).
pub type NoticeFn = Arc<dyn Fn(&str) + Send + Sync>;

/// How long a server may take to start and answer the MCP handshake, by default.
pub const DEFAULT_START_TIMEOUT: Duration = Duration::from_secs(30);

/// How long one tool call may take, by default (`tool_timeout_sec` in a server's configuration
/// changes it).
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(60);

/// How long shutting down one server may take before it is left to the OS.
const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(10);

/// The MCP servers of one process: cheap to clone (clones share the servers).
#[derive(Clone)]
pub struct McpHub {
    inner: Arc<Inner>,
}

struct Inner {
    config: McpConfig,
    root: PathBuf,
    notices: Option<NoticeFn>,
    start_timeout: Duration,
    servers: tokio::sync::Mutex<BTreeMap<String, Arc<Connection>>>,
}

/// One running server.
struct Connection {
    peer: Peer<RoleClient>,
    /// How long one tool call may take.
    call_timeout: Duration,
    tools: Vec<McpToolInfo>,
    stop: CancellationToken,
    stopping: AtomicBool,
    exited: AtomicBool,
    watcher: Mutex<Option<JoinHandle<()>>>,
}

/// Sets up an [`McpHub`].
pub struct McpHubBuilder {
    config: McpConfig,
    root: PathBuf,
    notices: Option<NoticeFn>,
    start_timeout: Duration,
}

impl std::fmt::Debug for McpHubBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpHubBuilder")
            .field("servers", &self.config.servers.keys())
            .field("root", &self.root)
            .field("start_timeout", &self.start_timeout)
            .finish_non_exhaustive()
    }
}

impl McpHubBuilder {
    /// A builder for a hub over `config`'s servers, run with `root` as working directory.
    pub fn new(config: McpConfig, root: impl Into<PathBuf>) -> Self {
        Self {
            config,
            root: root.into(),
            notices: None,
            start_timeout: DEFAULT_START_TIMEOUT,
        }
    }

    /// Report notices (a server failed to start, or exited) to `notices`. By default, notices
    /// are dropped.
    pub fn notices(&mut self, notices: impl Fn(&str) + Send + Sync + 'static) -> &mut Self {
        self.notices = Some(Arc::new(notices));
        self
    }

    /// Give each server `timeout` to start, answer the handshake and list its tools. By
    /// default, [`DEFAULT_START_TIMEOUT`].
    pub fn start_timeout(&mut self, timeout: Duration) -> &mut Self {
        self.start_timeout = timeout;
        self
    }

    /// The hub; no server is started yet.
    pub fn build(&self) -> McpHub {
        McpHub {
            inner: Arc::new(Inner {
                config: self.config.clone(),
                root: self.root.clone(),
                notices: self.notices.clone(),
                start_timeout: self.start_timeout,
                servers: tokio::sync::Mutex::new(BTreeMap::new()),
            }),
        }
    }
}

impl std::fmt::Debug for McpHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpHub")
            .field("servers", &self.inner.config.servers.keys())
            .field("root", &self.inner.root)
            .finish_non_exhaustive()
    }
}

impl McpHub {
    /// A hub for the servers of `config`, which run with `root` (the workspace root) as their
    /// working directory, with default options. Nothing starts until [`McpHub::start_all`] or a
    /// call needs a server.
    pub fn new(config: McpConfig, root: impl Into<PathBuf>) -> Self {
        McpHubBuilder::new(config, root).build()
    }

    /// A builder for a hub over `config`'s servers, run in `root`.
    pub fn builder(config: McpConfig, root: impl Into<PathBuf>) -> McpHubBuilder {
        McpHubBuilder::new(config, root)
    }

    /// The configuration.
    pub fn config(&self) -> &McpConfig {
        &self.inner.config
    }

    /// Start every configured server that is not running yet, together. A server that fails
    /// to start is reported as a notice and skipped.
    pub async fn start_all(&self) {
        let running: Vec<String> = self.inner.servers.lock().await.keys().cloned().collect();
        let starts = self
            .inner
            .config
            .servers
            .iter()
            .filter(|(name, _)| !running.contains(name))
            .map(|(name, config)| async move { (name, self.connect(name, config).await) });
        for (name, outcome) in futures::future::join_all(starts).await {
            match outcome {
                Ok(connection) => {
                    self.inner
                        .servers
                        .lock()
                        .await
                        .insert(name.clone(), connection);
                }
                Err(problem) => self.notice(&format!(
                    "MCP server `{name}` could not be started: {problem}. Its tools are not offered."
                )),
            }
        }
    }

    /// The tools of the running servers as agent tools named `<server>__<tool>` (their input
    /// schemas forwarded), in server and listing order. Results that stage a pending action
    /// are stored in `store` under `origin`. Tools marked `"resolve/hidden": true` are left
    /// out.
    pub async fn tools(&self, store: &Store, origin: &Origin) -> Vec<Arc<dyn Tool>> {
        let servers = self.inner.servers.lock().await;
        let hub: Arc<dyn ToolCaller> = Arc::new(self.clone());
        let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
        for (server, connection) in servers.iter() {
            tools.extend(mcp_tools(&hub, server, &connection.tools, store, origin));
        }
        tools
    }

    /// Call `tool` of `server` with `arguments`. When `start` is true and this process has
    /// not started the server, it is started from the configuration first. `Err` says why the
    /// call could not be made or did not complete, as a clause that follows a colon (the way
    /// `resolve` reports it: `Apply failed: the MCP server …`).
    pub async fn call_tool(
        &self,
        server: &str,
        tool: &str,
        arguments: JsonObject,
        start: bool,
    ) -> Result<CallToolResult, String> {
        self.call(server, tool, arguments, start)
            .await
            .map_err(|error| error.clause().to_string())
    }

    /// [`McpHub::call_tool`], with the reason a call failed as a [`CallError`].
    async fn call(
        &self,
        server: &str,
        tool: &str,
        arguments: JsonObject,
        start: bool,
    ) -> Result<CallToolResult, CallError> {
        let connection = self.connection(server, start).await?;
        let exited = || CallError::Exited {
            server: server.to_owned(),
        };
        if connection.exited.load(Ordering::SeqCst) {
            return Err(exited());
        }
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        let timeout = connection.call_timeout;
        let Ok(answer) = tokio::time::timeout(timeout, connection.peer.call_tool(params)).await
        else {
            return Err(CallError::NoAnswer {
                server: server.to_owned(),
                tool: tool.to_owned(),
                timeout,
            });
        };
        match answer {
            Ok(result) => Ok(result),
            Err(ServiceError::TransportClosed | ServiceError::TransportSend(_)) => {
                self.report_exit(server, &connection);
                Err(exited())
            }
            Err(ServiceError::McpError(error)) => Err(CallError::Refused {
                server: server.to_owned(),
                tool: tool.to_owned(),
                message: error.message.into_owned(),
            }),
            Err(error) => Err(CallError::Failed {
                server: server.to_owned(),
                tool: tool.to_owned(),
                error,
            }),
        }
    }

    /// Stop every server this process started: close its stdin, wait for it to exit, then
    /// terminate it.
    pub async fn shutdown(&self) {
        let connections: Vec<Arc<Connection>> =
            std::mem::take(&mut *self.inner.servers.lock().await)
                .into_values()
                .collect();
        for connection in connections {
            connection.stopping.store(true, Ordering::SeqCst);
            connection.stop.cancel();
            let watcher = connection
                .watcher
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .take();
            if let Some(watcher) = watcher {
                let _ = tokio::time::timeout(SHUTDOWN_TIMEOUT, watcher).await;
            }
        }
    }

    async fn connection(&self, server: &str, start: bool) -> Result<Arc<Connection>, CallError> {
        let mut servers = self.inner.servers.lock().await;
        if let Some(connection) = servers.get(server) {
            return Ok(Arc::clone(connection));
        }
        let config_path = self
            .inner
            .config
            .source
            .clone()
            .unwrap_or_else(|| self.inner.root.join(CONFIG_PATH));
        let Some(config) = self.inner.config.servers.get(server) else {
            return Err(CallError::NotConfigured {
                server: server.to_owned(),
                config: config_path,
            });
        };
        if !start {
            return Err(CallError::NotRunning {
                server: server.to_owned(),
            });
        }
        let connection =
            self.connect(server, config)
                .await
                .map_err(|problem| CallError::NotStarted {
                    server: server.to_owned(),
                    problem,
                })?;
        servers.insert(server.to_owned(), Arc::clone(&connection));
        Ok(connection)
    }

    /// Spawn `config`'s command, run the MCP handshake and list its tools.
    async fn connect(
        &self,
        server: &str,
        config: &McpServerConfig,
    ) -> Result<Arc<Connection>, StartError> {
        // Nothing from a configuration the person has not trusted is spawned.
        self.inner
            .config
            .trust
            .check()
            .map_err(|error| StartError::Untrusted { error })?;
        let program = program_path(&config.command, &self.inner.root);
        let mut command = tokio::process::Command::new(&program);
        command
            .args(&config.args)
            .envs(&config.env)
            .current_dir(&self.inner.root)
            .kill_on_drop(true);
        let (transport, _stderr) = TokioChildProcess::builder(command)
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|error| StartError::Spawn {
                command: config.command.clone(),
                error,
            })?;
        let stop = CancellationToken::new();
        let info = ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("resolve", env!("CARGO_PKG_VERSION")),
        );
        let timeout = self.inner.start_timeout;
        let too_slow = || StartError::TooSlow { timeout };
        let running = tokio::time::timeout(timeout, info.serve_with_ct(transport, stop.clone()))
            .await
            .map_err(|_| too_slow())?
            .map_err(|error| StartError::Handshake {
                error: Box::new(error),
            })?;
        let tools = match tokio::time::timeout(timeout, running.list_all_tools()).await {
            Ok(Ok(tools)) => tools,
            Ok(Err(error)) => {
                let _ = running.cancel().await;
                return Err(StartError::ListTools { error });
            }
            Err(_) => {
                let _ = running.cancel().await;
                return Err(too_slow());
            }
        };
        let connection = Arc::new(Connection {
            peer: running.peer().clone(),
            call_timeout: config
                .tool_timeout_sec
                .map_or(DEFAULT_TOOL_TIMEOUT, Duration::from_secs),
            tools,
            stop,
            stopping: AtomicBool::new(false),
            exited: AtomicBool::new(false),
            watcher: Mutex::new(None),
        });
        let hub = self.clone();
        let watched = Arc::clone(&connection);
        let name = server.to_owned();
        let watcher = tokio::spawn(async move {
            let _ = running.waiting().await;
            hub.report_exit(&name, &watched);
        });
        *connection
            .watcher
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(watcher);
        Ok(connection)
    }

    /// Mark `connection` exited and say so once, unless the hub is stopping it.
    fn report_exit(&self, server: &str, connection: &Connection) {
        if connection.stopping.load(Ordering::SeqCst) {
            return;
        }
        if !connection.exited.swap(true, Ordering::SeqCst) {
            self.notice(&format!(
                "MCP server `{server}` exited; its tools are unavailable for the rest of this run."
            ));
        }
    }

    fn notice(&self, message: &str) {
        if let Some(notices) = &self.inner.notices {
            notices(message);
        }
    }
}

impl ExternalActionRunner for McpHub {
    fn call(
        &self,
        server: &str,
        call: &McpToolCall,
        reason: &str,
        extra: Option<&Extra>,
    ) -> BoxFuture<Result<ToolResult, String>> {
        let hub = self.clone();
        let server = server.to_owned();
        let tool = call.tool.clone();
        let arguments = call.arguments_with(reason, extra);
        Box::pin(async move {
            let result = hub.call_tool(&server, &tool, arguments, true).await?;
            Ok(tool_result(&result))
        })
    }
}

impl ToolCaller for McpHub {
    fn call_running<'a>(
        &'a self,
        server: &'a str,
        tool: &'a str,
        arguments: JsonObject,
    ) -> CallFuture<'a> {
        Box::pin(self.call(server, tool, arguments, false))
    }
}

/// The program to run: a relative path with a directory part is taken from the root.
fn program_path(command: &str, root: &Path) -> PathBuf {
    let path = Path::new(command);
    if path.is_relative() && path.components().count() > 1 {
        root.join(path)
    } else {
        path.to_path_buf()
    }
}
