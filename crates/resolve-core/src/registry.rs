//! [`ToolRegistry`]: an ordered set of [`Tool`]s with unique names — the one list the agent's
//! session and the MCP server both offer and dispatch through.
//!
//! Owned here: order, uniqueness of names, lookup by name, the specs in order and selecting
//! tools by [`ToolKind`]. Not owned: `resolve` (every user adds it as its one special case,
//! from [`resolve_tool_spec`](crate::resolve_tool_spec)), or running a tool.

use std::fmt;
use std::sync::Arc;

use crate::{Tool, ToolKind, ToolSpec};

/// Tools in the order they are offered, each with a name no other has.
///
/// ```
/// use std::sync::Arc;
/// use resolve_core::{Tool, ToolContext, ToolFuture, ToolKind, ToolRegistry, ToolResult, ToolSpec};
/// use serde_json::{Value, json};
///
/// struct Look;
///
/// impl Tool for Look {
///     fn spec(&self) -> ToolSpec {
///         ToolSpec {
///             name: "look".into(),
///             description: "Look around.".into(),
///             input_schema: json!({"type": "object"}),
///             hidden: false,
///             strict: false,
///             kind: ToolKind::ReadOnly,
///         }
///     }
///
///     fn execute<'a>(&'a self, _args: Value, _ctx: &'a ToolContext) -> ToolFuture<'a> {
///         Box::pin(async { Ok(ToolResult::text("nothing new")) })
///     }
/// }
///
/// let mut registry = ToolRegistry::new();
/// registry.register(Arc::new(Look)).unwrap();
/// assert!(registry.register(Arc::new(Look)).is_err());
/// assert_eq!(registry.names(), ["look"]);
/// assert!(registry.get("look").is_some());
/// assert!(registry.of_kind(ToolKind::Producer).is_empty());
/// ```
#[derive(Clone, Default)]
pub struct ToolRegistry {
    /// Each tool with its spec, taken once when it was registered.
    entries: Vec<(ToolSpec, Arc<dyn Tool>)>,
}

impl fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

/// A tool was registered under a name another tool of the registry already has.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("A tool named `{name}` is already registered.")]
pub struct DuplicateToolName {
    /// The name registered twice.
    pub name: String,
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add `tool` after the others; refused when its name is taken.
    pub fn register(&mut self, tool: Arc<dyn Tool>) -> Result<(), DuplicateToolName> {
        let spec = tool.spec();
        if self.get(&spec.name).is_some() {
            return Err(DuplicateToolName { name: spec.name });
        }
        self.entries.push((spec, tool));
        Ok(())
    }

    /// The tool named `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.entries
            .iter()
            .find(|(spec, _)| spec.name == name)
            .map(|(_, tool)| tool)
    }

    /// The spec of the tool named `name`.
    pub fn spec(&self, name: &str) -> Option<&ToolSpec> {
        self.entries
            .iter()
            .map(|(spec, _)| spec)
            .find(|spec| spec.name == name)
    }

    /// Every tool's spec, in order.
    pub fn specs(&self) -> impl Iterator<Item = &ToolSpec> {
        self.entries.iter().map(|(spec, _)| spec)
    }

    /// Every tool's name, in order.
    pub fn names(&self) -> Vec<&str> {
        self.specs().map(|spec| spec.name.as_str()).collect()
    }

    /// Every tool, in order.
    pub fn tools(&self) -> impl Iterator<Item = &Arc<dyn Tool>> {
        self.entries.iter().map(|(_, tool)| tool)
    }

    /// The tools of `kind`, in order.
    pub fn of_kind(&self, kind: ToolKind) -> Vec<Arc<dyn Tool>> {
        self.filter(|spec| spec.kind == kind)
    }

    /// The tools whose spec passes `keep`, in order.
    pub fn filter(&self, keep: impl Fn(&ToolSpec) -> bool) -> Vec<Arc<dyn Tool>> {
        self.entries
            .iter()
            .filter(|(spec, _)| keep(spec))
            .map(|(_, tool)| Arc::clone(tool))
            .collect()
    }

    /// How many tools there are.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl IntoIterator for ToolRegistry {
    type Item = Arc<dyn Tool>;
    type IntoIter = std::iter::Map<
        std::vec::IntoIter<(ToolSpec, Arc<dyn Tool>)>,
        fn((ToolSpec, Arc<dyn Tool>)) -> Arc<dyn Tool>,
    >;

    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter().map(|(_, tool)| tool)
    }
}
