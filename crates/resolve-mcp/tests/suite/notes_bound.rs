//! Issue #31 §3: reviewer notes for an MCP connection do not outlive it. A note waits for the
//! connection's model; once the connection ends, nobody will be told, so it is dropped.

use resolve_edit::Origin;
use resolve_mcp::{ResolveServer, ServerOptions};
use rmcp::ServiceExt;

use super::common::{Workspace, call_tool, edit_args};

fn notes(workspace: &Workspace) -> usize {
    std::fs::read_dir(workspace.path(".resolve/notes")).map_or(0, |entries| entries.count())
}

#[tokio::test]
async fn a_connection_that_ends_drops_the_reviewer_notes_nobody_will_be_told() {
    let workspace = Workspace::with(&[("a.txt", "a\n"), ("b.txt", "b\n")]);
    let options = |id: &str| ServerOptions {
        connection_id: id.to_owned(),
        user_dir: Some(workspace.user_dir().to_path_buf()),
        ..ServerOptions::default()
    };
    let server = ResolveServer::with_options(workspace.root(), options("ending")).unwrap();
    let other = ResolveServer::with_options(workspace.root(), options("staying")).unwrap();
    let (server_end, client_end) = tokio::io::duplex(1 << 20);
    let serving = tokio::spawn(resolve_mcp::serve(server, server_end));
    let client = ().serve(client_end).await.unwrap();
    call_tool(&client, "edit", edit_args("a.txt", "a", "A")).await;
    let live = tokio_util::sync::CancellationToken::new();
    other
        .run_tool("edit", edit_args("b.txt", "b", "B"), &live)
        .await;
    // A person discards both at the command line: each connection has a note waiting.
    let person = workspace.store().resolved_by(Origin::Cli);
    for record in person.pending().unwrap() {
        person.discard(&record.id, "Not this.", None).unwrap();
    }
    assert_eq!(notes(&workspace), 2);

    client.cancel().await.unwrap();
    serving.await.unwrap().unwrap();
    assert_eq!(
        notes(&workspace),
        1,
        "the ended connection's note is dropped"
    );
    let kept = workspace
        .store()
        .take_reviewer_notes(&Origin::Mcp("staying".into()))
        .unwrap();
    assert_eq!(kept.len(), 1, "another connection's note stays");
}
