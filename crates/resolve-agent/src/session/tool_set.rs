//! [`ToolSet`]: the tools a session offers the model right now — the registered tools, the
//! session's `check` tool when it has one, their model-facing specs with `resolve` last when it
//! is offered, and lookup by name.
//!
//! Owned here: checking tool names (`resolve` and `check` are reserved: the session provides
//! them) and deciding whether `resolve` is offered. Not owned: which
//! set is active (the session, and plan mode while it lasts) or running a tool (the turn loop).

use std::sync::Arc;

use resolve_core::{
    CHECK_TOOL_NAME, RESOLVE_TOOL_NAME, Tool, ToolRegistry, ToolSpec, needs_resolve_tool,
    resolve_tool_spec,
};

use crate::error::AgentError;

/// The tools offered to the model, with their specs.
pub(crate) struct ToolSet {
    tools: ToolRegistry,
    /// Model-facing specs: the registered tools, then `resolve` when it is offered.
    specs: Vec<ToolSpec>,
    offers_resolve: bool,
}

impl ToolSet {
    /// The set of `tools`, then the session's `check` tool when given, with `resolve` offered
    /// last when some tool may stage a pending action or `offer_resolve` is set. Names must be
    /// unique and neither `resolve` nor `check` (those two only the session provides).
    pub(crate) fn new(
        tools: Vec<Arc<dyn Tool>>,
        check: Option<Arc<dyn Tool>>,
        offer_resolve: bool,
    ) -> Result<Self, AgentError> {
        let mut registry = ToolRegistry::new();
        for tool in tools {
            let name = tool.spec().name;
            if name == RESOLVE_TOOL_NAME || name == CHECK_TOOL_NAME {
                return Err(AgentError::DuplicateTool { name });
            }
            registry
                .register(tool)
                .map_err(|duplicate| AgentError::DuplicateTool {
                    name: duplicate.name,
                })?;
        }
        if let Some(check) = check {
            registry
                .register(check)
                .map_err(|duplicate| AgentError::DuplicateTool {
                    name: duplicate.name,
                })?;
        }
        let mut specs: Vec<ToolSpec> = registry.specs().cloned().collect();
        let offers_resolve = needs_resolve_tool(&specs, offer_resolve);
        if offers_resolve {
            specs.push(resolve_tool_spec().clone());
        }
        Ok(Self {
            tools: registry,
            specs,
            offers_resolve,
        })
    }

    /// The specs sent to the model (`resolve` last, when offered).
    pub(crate) fn specs(&self) -> &[ToolSpec] {
        &self.specs
    }

    /// Whether `resolve` is offered.
    pub(crate) fn offers_resolve(&self) -> bool {
        self.offers_resolve
    }

    /// Whether `name` is sent to the model in the tools array.
    pub(crate) fn is_offered(&self, name: &str) -> bool {
        self.specs.iter().any(|spec| spec.name == name)
    }

    /// The names of the offered companion tools (such as `check`): calling them while a
    /// preview is pending is part of resolving it.
    pub(crate) fn companions(&self) -> Vec<String> {
        self.tools
            .specs()
            .filter(|spec| spec.kind.is_companion())
            .map(|spec| spec.name.clone())
            .collect()
    }

    /// The registered tool named `name` (never `resolve`, which the session dispatches).
    pub(crate) fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.get(name)
    }

    /// The names of the offered tools, in order.
    pub(crate) fn names(&self) -> Vec<&str> {
        self.specs.iter().map(|spec| spec.name.as_str()).collect()
    }
}
