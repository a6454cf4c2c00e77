//! Tool choices, the per-turn directive, and the soft requirement with its reminder.

/// A tool choice in provider-neutral form; provider adapters translate it to their wire shape.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ToolChoice {
    /// The model decides.
    Auto,
    /// The model must not call tools.
    None,
    /// The model must call some tool (Anthropic `any`).
    Any,
    /// The model must call some tool (OpenAI `required`).
    Required,
    /// The model must call the named tool.
    Tool(String),
}

impl ToolChoice {
    /// The forced tool's name, for a named choice.
    pub fn tool_name(&self) -> Option<&str> {
        match self {
            Self::Tool(name) => Some(name),
            Self::Auto | Self::None | Self::Any | Self::Required => None,
        }
    }
}

/// The exact reminder text injected after a preview (a contract: hosts and tests match it exactly).
pub const RESOLVE_REMINDER: &str = "<system-reminder>\nThis is a preview. Call the `resolve` tool to apply or discard these changes.\n</system-reminder>";

/// Name of the `resolve` tool.
pub const RESOLVE_TOOL_NAME: &str = "resolve";

/// A hidden message the agent appends so the model knows a preview waits for `resolve`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReminderMessage {
    /// Kind of custom message; always `resolve-reminder` for previews.
    pub custom_type: String,
    /// The reminder text the model reads.
    pub content: String,
    /// The tool that staged the pending action (not shown to the model).
    pub source_tool: String,
}

impl ReminderMessage {
    /// The reminder for a pending action staged by `source_tool`.
    pub fn resolve(source_tool: &str) -> Self {
        Self {
            custom_type: "resolve-reminder".to_owned(),
            content: RESOLVE_REMINDER.to_owned(),
            source_tool: source_tool.to_owned(),
        }
    }
}

/// "Call `tool_name` before doing anything else", without forcing the choice up front.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SoftToolRequirement {
    /// Identity of the requirement (the pending head's id); a new id re-injects the reminder.
    pub id: String,
    /// The tool the model is expected to call.
    pub tool_name: String,
    /// Messages to inject once per id.
    pub reminder: Vec<ReminderMessage>,
}

/// What the host wants for the next model call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolChoiceDirective {
    /// A consumed hard choice: send it as the request's tool choice.
    Hard(ToolChoice),
    /// A soft requirement: remind, and force only if the model declines.
    Soft(SoftToolRequirement),
}
