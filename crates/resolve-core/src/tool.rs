//! How a tool describes itself to models and to tool lists.

use serde_json::Value;

/// A tool's name, description, input schema and flags.
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
    /// Stages previews, so `resolve` must be offered alongside it.
    pub deferrable: bool,
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

/// Whether `resolve` must be offered: some tool is deferrable, or plan mode is available.
pub fn needs_resolve_tool(tools: &[ToolSpec], plan_mode: bool) -> bool {
    plan_mode || tools.iter().any(|tool| tool.deferrable)
}
