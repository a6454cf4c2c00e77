//! `--approve ask` on the 2025-11-25 path with an rmcp client that declares elicitation: what
//! happens when the preview changes while the person is being asked.

use std::sync::{Arc, Mutex};

use resolve_mcp::{ApproveMode, ResolveServer, ServerOptions};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ElicitRequestParams,
    ElicitResult, ElicitationAction, Implementation,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::common::{Workspace, is_error, text};

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
    let server = ResolveServer::with_options(
        workspace.root(),
        ServerOptions {
            approve: ApproveMode::Ask,
            ..ServerOptions::default()
        },
    )
    .unwrap();
    let (server_end, client_end) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        resolve_mcp::serve(server, server_end).await.unwrap();
    });
    let asked = Arc::new(Mutex::new(Vec::new()));
    let person = Person {
        interlude: Arc::new(Box::new(interlude)),
        asked: asked.clone(),
    };
    (person.serve(client_end).await.unwrap(), asked)
}

async fn call(
    client: &RunningService<RoleClient, Person>,
    name: &str,
    args: Value,
) -> CallToolResult {
    let Value::Object(args) = args else {
        panic!("arguments must be an object")
    };
    client
        .call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(args))
        .await
        .unwrap()
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
    call(
        &client,
        "edit",
        json!({"path": "a.txt", "old_text": "a", "new_text": "A"}),
    )
    .await;
    let result = call(
        &client,
        "resolve",
        json!({"action": "apply", "reason": "Go."}),
    )
    .await;
    assert!(is_error(&result), "{result:?}");
    assert!(
        text(&result).starts_with("Not applied: the approval answer was refused (the preview changed or was resolved since the person was asked)."),
        "{}",
        text(&result)
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
    call(
        &client,
        "edit",
        json!({"path": "a.txt", "old_text": "a", "new_text": "A"}),
    )
    .await;
    let result = call(
        &client,
        "resolve",
        json!({"action": "apply", "reason": "Go."}),
    )
    .await;
    assert!(is_error(&result), "{result:?}");
    assert!(
        text(&result).starts_with("Preview is stale: `a.txt` changed"),
        "{}",
        text(&result)
    );
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
    let server = ResolveServer::with_options(
        workspace.root(),
        ServerOptions {
            approve: ApproveMode::Ask,
            ..ServerOptions::default()
        },
    )
    .unwrap();
    assert_eq!(server.approve_mode(), ApproveMode::Ask);
    let live = CancellationToken::new();
    server
        .run_tool(
            "edit",
            json!({"path": "a.txt", "old_text": "a", "new_text": "A"}),
            &live,
        )
        .await;
    let result = server
        .run_tool(
            "resolve",
            json!({"action": "apply", "reason": "Go."}),
            &live,
        )
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
