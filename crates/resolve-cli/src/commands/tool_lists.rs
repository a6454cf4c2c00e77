//! Tests that the agent and the MCP server offer one tool list (the built-in registry of
//! `resolve-edit`), and that every text listing tools names each of them.

use clap::CommandFactory;
use pretty_assertions::assert_eq;
use resolve_agent::{AgentSession, ProviderConfig, ProviderKind, file_tools};
use resolve_core::{RESOLVE_DESCRIPTION, ToolKind};
use resolve_edit::{
    CheckTool, FileTools, Origin, PRODUCER_NAMES, ReadTool, Store, Workspace, WorkspaceConfig,
};
use resolve_mcp::{INSTRUCTIONS, ResolveServer};

use crate::args::Cli;

/// The agent's offered tools as `(name, kind)`, for a workspace whose configuration may name
/// a check command.
fn agent_tools(root: &std::path::Path) -> Vec<(String, ToolKind)> {
    let store = Store::open(Workspace::open(root).unwrap());
    let settings = WorkspaceConfig::read(root, None, None).unwrap().check;
    let config = ProviderConfig::new(ProviderKind::OpenAi, "http://127.0.0.1:9/v1", "model");
    let mut builder = AgentSession::builder(config);
    builder.tools(file_tools(&FileTools::new(store.clone(), Origin::Agent)));
    if let Some(check) = CheckTool::new(store, Origin::Agent, &settings) {
        builder.check(check);
    }
    let session = builder.build().unwrap();
    session
        .tool_specs()
        .iter()
        .map(|spec| (spec.name.clone(), spec.kind))
        .collect()
}

/// The MCP server's tools as `(name, kind)`: its registry, then `resolve`; and the names it
/// lists.
fn mcp_tools(root: &std::path::Path) -> (Vec<(String, ToolKind)>, Vec<String>) {
    let server = ResolveServer::open(root).unwrap();
    let mut tools: Vec<(String, ToolKind)> = server
        .tool_registry()
        .specs()
        .map(|spec| (spec.name.clone(), spec.kind))
        .collect();
    tools.push(("resolve".to_owned(), ToolKind::Resolve));
    let listed = server
        .listed_tools()
        .iter()
        .map(|tool| tool.name.to_string())
        .collect();
    (tools, listed)
}

#[test]
fn the_agent_and_the_mcp_server_offer_the_same_tools_in_the_same_order_with_the_same_kinds() {
    let dir = tempfile::tempdir().unwrap();
    for with_check in [false, true] {
        if with_check {
            std::fs::create_dir_all(dir.path().join(".resolve")).unwrap();
            std::fs::write(
                dir.path().join(".resolve/config.toml"),
                "[check]\ncommand = [\"true\"]\n",
            )
            .unwrap();
        }
        let agent = agent_tools(dir.path());
        let (mcp, listed) = mcp_tools(dir.path());
        assert_eq!(agent, mcp, "with a check command: {with_check}");
        let names: Vec<String> = agent.iter().map(|(name, _)| name.clone()).collect();
        assert_eq!(names, listed);
        let mut expected: Vec<&str> = PRODUCER_NAMES.to_vec();
        expected.extend(ReadTool::ALL.map(ReadTool::name));
        if with_check {
            expected.push("check");
        }
        expected.push("resolve");
        assert_eq!(names, expected);
    }
}

/// The tools a text must name: every producer, and with `read_only` every read-only tool.
fn assert_names_tools(what: &str, text: &str, read_only: bool) {
    let mut names: Vec<&str> = PRODUCER_NAMES.to_vec();
    if read_only {
        names.extend(ReadTool::ALL.map(ReadTool::name));
    }
    for name in names {
        assert!(
            text.contains(&format!("`{name}`")),
            "{what} does not name `{name}`:\n{text}"
        );
    }
}

#[test]
fn every_text_that_lists_tools_names_every_producer() {
    assert_names_tools("the `resolve` description", RESOLVE_DESCRIPTION, false);
    assert_names_tools("the MCP instructions", INSTRUCTIONS, false);
    assert_names_tools(
        "the agent's system prompt",
        super::agent::SYSTEM_PROMPT,
        true,
    );
    let mut cli = Cli::command();
    let help = cli
        .find_subcommand_mut("mcp")
        .unwrap()
        .render_long_help()
        .to_string();
    assert_names_tools("`resolve mcp --help`", &help, true);
}
