//! A workspace per test and MCP connections to a server for it.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use resolve_core::RESOLVE_REMINDER;
use resolve_mcp::{ResolveServer, ServerOptions};
use rmcp::model::{CallToolRequestParams, CallToolResult, ClientConfig};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::io::DuplexStream;

use resolve_test_support::TestDir;

/// A temporary workspace root, and a per-user directory of its own for trust records.
pub struct Workspace {
    dir: TestDir,
    user: tempfile::TempDir,
}

/// A file written or read in the workspace goes through the test workspace of
/// `resolve-test-support` (`write` creates directories, `read` gives the text).
impl std::ops::Deref for Workspace {
    type Target = TestDir;

    fn deref(&self) -> &TestDir {
        &self.dir
    }
}

impl Workspace {
    /// A workspace with `files` (path, content).
    pub fn with(files: &[(&str, &str)]) -> Self {
        let workspace = Self {
            dir: TestDir::new(),
            user: tempfile::tempdir().unwrap(),
        };
        for (path, content) in files {
            workspace.write(path, content);
        }
        workspace
    }

    /// The root.
    pub fn root(&self) -> &Path {
        self.dir.root()
    }

    /// The per-user directory (trust records) of this test.
    pub fn user_dir(&self) -> &Path {
        self.user.path()
    }

    /// Trust the workspace's `.resolve/config.toml` as it is now, as `resolve trust` does.
    pub fn trust(&self) {
        let config = resolve_edit::ConfigFile::read_with(self.root(), None, Some(self.user_dir()))
            .unwrap()
            .unwrap();
        resolve_edit::TrustedFiles::load_in(self.user_dir())
            .unwrap()
            .trust(&config, 1)
            .unwrap();
    }

    /// Absolute path of `relative`.
    pub fn path(&self, relative: &str) -> PathBuf {
        self.root().join(relative)
    }

    /// The durable store, as another process (say `resolve apply` in a terminal) sees it.
    pub fn store(&self) -> resolve_edit::Store {
        resolve_edit::Store::open(resolve_edit::Workspace::open(self.root()).unwrap())
    }
}

/// Counts `notifications/resources/list_changed`, and wakes whoever waits for a count.
#[derive(Clone)]
pub struct Recorder {
    list_changed: Arc<tokio::sync::watch::Sender<usize>>,
}

impl Default for Recorder {
    fn default() -> Self {
        Self {
            list_changed: Arc::new(tokio::sync::watch::Sender::new(0)),
        }
    }
}

impl ClientHandler for Recorder {
    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed.send_modify(|count| *count += 1);
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::default()
    }
}

/// One MCP connection to a fresh server for a workspace.
pub struct Connection {
    pub client: RunningService<RoleClient, Recorder>,
    recorder: Recorder,
    pub connection_id: String,
}

impl Connection {
    /// Connect to a new server (its own connection id) for `workspace`.
    pub async fn open(workspace: &Workspace) -> Self {
        let server = ResolveServer::with_options(
            workspace.root(),
            ServerOptions {
                user_dir: Some(workspace.user_dir().to_path_buf()),
                ..ServerOptions::default()
            },
        )
        .unwrap();
        let connection_id = server.connection_id().to_owned();
        let recorder = Recorder::default();
        let client = recorder
            .clone()
            .serve(serve_in_memory(server))
            .await
            .unwrap();
        Self {
            client,
            recorder,
            connection_id,
        }
    }

    /// Call `name` with `arguments` (an object).
    pub async fn call(&self, name: &str, arguments: Value) -> CallToolResult {
        call_tool(&self.client, name, arguments).await
    }

    /// Stage an `edit` of `path` replacing `old_text` with `new_text`.
    pub async fn stage_edit(&self, path: &str, old_text: &str, new_text: &str) -> CallToolResult {
        self.call("edit", edit_args(path, old_text, new_text)).await
    }

    /// Call `resolve` to `action` the head preview for `reason`.
    pub async fn resolve(&self, action: &str, reason: &str) -> CallToolResult {
        self.call("resolve", resolve_args(action, reason)).await
    }

    /// The URIs of every resource listed, in order.
    pub async fn resource_uris(&self) -> Vec<String> {
        let listed = self.client.list_all_resources().await.unwrap();
        listed.into_iter().map(|resource| resource.uri).collect()
    }

    /// How many `list_changed` notifications arrived so far.
    pub fn list_changed(&self) -> usize {
        *self.recorder.list_changed.borrow()
    }

    /// Wait until at least `count` notifications arrived: woken by each one, never polling
    /// (the minute is only a failsafe against a hang).
    pub async fn wait_list_changed(&self, count: usize) {
        let mut arrivals = self.recorder.list_changed.subscribe();
        let waited = tokio::time::timeout(
            Duration::from_secs(60),
            arrivals.wait_for(|arrived| *arrived >= count),
        )
        .await;
        assert!(
            waited.is_ok_and(|arrived| arrived.is_ok()),
            "expected {count} list_changed notifications, got {}",
            self.list_changed()
        );
    }
}

/// Serve `server` on a task over an in-memory pipe, as a host would over stdio; the client's end.
pub fn serve_in_memory(server: ResolveServer) -> DuplexStream {
    let (server_end, client_end) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        resolve_mcp::serve(server, server_end).await.unwrap();
    });
    client_end
}

/// Call `name` with `arguments` (an object) through `client`.
pub async fn call_tool<H: ClientHandler>(
    client: &RunningService<RoleClient, H>,
    name: &str,
    arguments: Value,
) -> CallToolResult {
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be an object");
    };
    client
        .call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(arguments))
        .await
        .unwrap()
}

/// The arguments of an `edit` of `path` replacing `old_text` with `new_text`.
pub fn edit_args(path: &str, old_text: &str, new_text: &str) -> Value {
    json!({"path": path, "old_text": old_text, "new_text": new_text})
}

/// The arguments of a `resolve` to `action` the head preview for `reason`.
pub fn resolve_args(action: &str, reason: &str) -> Value {
    json!({"action": action, "reason": reason})
}

/// A workspace with `files` and one connection to a server for it.
pub async fn connected(files: &[(&str, &str)]) -> (Workspace, Connection) {
    let workspace = Workspace::with(files);
    let connection = Connection::open(&workspace).await;
    (workspace, connection)
}

/// The result is an error whose text starts with `prefix`.
pub fn assert_error_starting(result: &CallToolResult, prefix: &str) {
    assert!(is_error(result), "{result:?}");
    assert!(text(result).starts_with(prefix), "{}", text(result));
}

/// The result is an error whose text contains `part`.
pub fn assert_error_containing(result: &CallToolResult, part: &str) {
    assert!(is_error(result), "{result:?}");
    assert!(text(result).contains(part), "{}", text(result));
}

/// The id of the pending action a producer's result staged.
pub fn pending_id(result: &CallToolResult) -> String {
    details(result)["pendingId"].as_str().unwrap().to_owned()
}

/// The single text block of a result (a producer's `resource_link` beside it is not text).
pub fn text(result: &CallToolResult) -> &str {
    let texts: Vec<&str> = result
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|text| text.text.as_str()))
        .collect();
    assert_eq!(texts.len(), 1, "{result:?}");
    texts[0]
}

/// Whether the result ends with the reminder.
pub fn reminds(result: &CallToolResult) -> bool {
    text(result).ends_with(RESOLVE_REMINDER)
}

/// The result's `isError` flag.
pub fn is_error(result: &CallToolResult) -> bool {
    result.is_error == Some(true)
}

/// The details the result carries under `_meta`.
pub fn details(result: &CallToolResult) -> Value {
    result
        .meta
        .as_ref()
        .and_then(|meta| meta.get("resolve/details"))
        .cloned()
        .unwrap_or(Value::Null)
}
