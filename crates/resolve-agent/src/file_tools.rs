//! The file tools of `resolve-edit` (`ast_edit`, `edit`, `write`, `read`, `ls`, `grep`) as a
//! list of agent tools: producers stage previews in the durable store under the session's
//! origin; the session's pending source picks them up before the next model call.
//!
//! Owned here: nothing but the list's shape. The tools and their adapters to
//! [`Tool`](resolve_core::Tool) are `resolve-edit`'s ([`builtin_tools`]), the same registry
//! the MCP server dispatches through.

use std::sync::Arc;

use resolve_core::Tool;
use resolve_edit::{FileTools, builtin_tools};

/// Every file tool over `tools`, producers first: the built-in registry without `check`
/// (which a session offers with `AgentSessionBuilder::check`).
pub fn file_tools(tools: &FileTools) -> Vec<Arc<dyn Tool>> {
    // The built-in tools' names are distinct (a resolve-edit test holds it), so this
    // registry is never refused.
    builtin_tools(tools, None)
        .map(|registry| registry.into_iter().collect())
        .unwrap_or_default()
}
