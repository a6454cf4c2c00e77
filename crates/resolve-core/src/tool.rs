//! How a tool describes itself to models and to tool lists: [`ToolSpec`] and its [`ToolKind`].

use serde_json::Value;

/// What a tool does to the workspace, as everything that treats tools differently asks it.
///
/// The kind, not the name, decides: whether `resolve` must be offered beside a tool
/// ([`ToolKind::may_stage`]), which tools plan mode keeps ([`ToolKind::is_read_only`]), which
/// calls a soft requirement accepts beside `resolve` ([`ToolKind::is_companion`]), and the MCP
/// annotations of a listed tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ToolKind {
    /// Stages previews (pending actions) and changes nothing until `resolve` applies them.
    Producer,
    /// Reads and changes nothing.
    ReadOnly,
    /// Works on a pending preview without resolving it (the `check` tool): calling it while a
    /// preview is pending is part of resolving it, not a detour.
    Companion,
    /// The `resolve` tool itself.
    Resolve,
    /// Anything else, such as a tool of an external MCP server: it may stage a pending action
    /// or change things, so it is treated defensively.
    Other,
}

impl ToolKind {
    /// Whether a call may leave a pending action behind, so `resolve` must be offered beside
    /// the tool: producers, and (defensively) other tools.
    pub fn may_stage(self) -> bool {
        match self {
            Self::Producer | Self::Other => true,
            Self::ReadOnly | Self::Companion | Self::Resolve => false,
        }
    }

    /// Whether the tool reads and changes nothing (what plan mode keeps).
    pub fn is_read_only(self) -> bool {
        match self {
            Self::ReadOnly => true,
            Self::Producer | Self::Companion | Self::Resolve | Self::Other => false,
        }
    }

    /// Whether calling the tool while a preview is pending is part of resolving it.
    pub fn is_companion(self) -> bool {
        match self {
            Self::Companion => true,
            Self::Producer | Self::ReadOnly | Self::Resolve | Self::Other => false,
        }
    }
}

/// A tool's name, description, input schema, flags and kind.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// Wire name.
    pub name: String,
    /// Description written for models.
    pub description: String,
    /// JSON Schema of the arguments (no `$ref`, no `$schema`).
    pub input_schema: Value,
    /// Left out of user-facing tool lists; still sent to the model.
    pub hidden: bool,
    /// Asks providers for strict schema mode where their rules accept the schema.
    pub strict: bool,
    /// What the tool does to the workspace (see [`ToolKind`]).
    pub kind: ToolKind,
}

impl ToolSpec {
    /// Check `args` against the input schema; the error names the offending field.
    pub fn validate(&self, args: &Value) -> Result<(), crate::Error> {
        crate::schema::validate(&self.input_schema, args).map_err(|violation| {
            crate::Error::InvalidArguments {
                tool: self.name.clone(),
                violation,
            }
        })
    }
}

/// Whether `resolve` must be offered: some tool may stage a pending action
/// ([`ToolKind::may_stage`]), or plan mode is available.
pub fn needs_resolve_tool(tools: &[ToolSpec], plan_mode: bool) -> bool {
    plan_mode || tools.iter().any(|tool| tool.kind.may_stage())
}
