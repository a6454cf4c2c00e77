//! `--approve ask` on the 2025-11-25 path with an rmcp client that declares elicitation: what
//! happens when the preview changes while the person is being asked.

use std::sync::{Arc, Mutex};

use resolve_mcp::{ApproveMode, ResolveServer, ServerOptions};
use rmcp::model::{
    CallToolResult, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
    ElicitationAction, Implementation,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::common::{
    Workspace, assert_error_starting, call_tool, edit_args, is_error, resolve_args,
    serve_in_memory, text,
};

type Interlude = Box<dyn Fn() + Send + Sync>;

/// A person who does `interlude` (another process at work) while the form is open, then
/// answers `apply`.
#[derive(Clone)]
struct Person {
    interlude: Arc<Interlude>,
    asked: Arc<Mutex<Vec<String>>>,
}

impl ClientHandler for Person {
    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let ElicitRequestParams::FormElicitationParams { message, .. } = request {
            self.asked.lock().unwrap().push(message);
        }
        (self.interlude)();
        Ok(ElicitResult::new(ElicitationAction::Accept)
            .with_content(json!({"decision": "apply", "reason": "Fine by me."})))
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::builder().enable_elicitation().build(),
            Implementation::new("person", "1"),
        )
    }
}

async fn connect(
    workspace: &Workspace,
    interlude: impl Fn() + Send + Sync + 'static,
) -> (RunningService<RoleClient, Person>, Arc<Mutex<Vec<String>>>) {
    let server = ask_server(workspace);
    let asked = Arc::new(Mutex::new(Vec::new()));
    let person = Person {
        interlude: Arc::new(Box::new(interlude)),
        asked: asked.clone(),
    };
    (person.serve(serve_in_memory(server)).await.unwrap(), asked)
}

/// A server for `workspace` that asks a person before the model's apply (`--approve ask`).
fn ask_server(workspace: &Workspace) -> ResolveServer {
    ResolveServer::with_options(
        workspace.root(),
        ServerOptions {
            approve: ApproveMode::Ask,
            ..ServerOptions::default()
        },
    )
    .unwrap()
}

/// Stage the edit of a.txt (`a` to `A`) through `client`, then apply it; the `resolve` result.
async fn edit_then_apply(client: &RunningService<RoleClient, Person>) -> CallToolResult {
    call_tool(client, "edit", edit_args("a.txt", "a", "A")).await;
    call_tool(client, "resolve", resolve_args("apply", "Go.")).await
}

#[tokio::test]
async fn an_accept_for_a_preview_resolved_while_the_person_looked_writes_nothing() {
    let workspace = Workspace::with(&[("a.txt", "a\n")]);
    let store = workspace.store();
    let (client, asked) = connect(&workspace, move || {
        // Another process discards the preview while the form is open.
        let id = store.pending().unwrap()[0].id.clone();
        store.discard(&id, "Dropped in a terminal.", None).unwrap();
    })
    .await;
    let result = edit_then_apply(&client).await;
    assert_error_starting(
        &result,
        "Not applied: the approval answer was refused (the preview changed or was resolved since the person was asked).",
    );
    assert_eq!(workspace.read("a.txt"), "a\n");
    assert_eq!(asked.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn an_accept_for_a_preview_gone_stale_while_the_person_looked_writes_nothing() {
    let workspace = Workspace::with(&[("a.txt", "a\n")]);
    let root = workspace.root().to_owned();
    let (client, _asked) = connect(&workspace, move || {
        std::fs::write(root.join("a.txt"), "a\nedited by hand\n").unwrap();
    })
    .await;
    let result = edit_then_apply(&client).await;
    assert_error_starting(&result, "Preview is stale: `a.txt` changed");
    assert_eq!(workspace.read("a.txt"), "a\nedited by hand\n");
    assert_eq!(
        workspace.store().pending().unwrap().len(),
        1,
        "still pending"
    );
}

#[tokio::test]
async fn without_a_client_to_ask_an_ask_server_applies_nothing() {
    let workspace = Workspace::with(&[("a.txt", "a\n")]);
    let server = ask_server(&workspace);
    assert_eq!(server.approve_mode(), ApproveMode::Ask);
    let live = CancellationToken::new();
    server
        .run_tool("edit", edit_args("a.txt", "a", "A"), &live)
        .await;
    let result = server
        .run_tool("resolve", resolve_args("apply", "Go."), &live)
        .await;
    assert!(!is_error(&result));
    assert!(
        text(&result).contains(&format!(
            "A person must approve it with `resolve review` or `resolve apply` in a terminal at {}.",
            workspace.root().display()
        )),
        "{}",
        text(&result)
    );
    assert_eq!(
        result
            .meta
            .as_ref()
            .unwrap()
            .get("resolve/details")
            .unwrap()["outcome"],
        "awaiting_person"
    );
    assert_eq!(workspace.read("a.txt"), "a\n");
}
