//! The one error type of `resolve-mcp`: what can stop the server as a whole. Errors of single
//! tool calls are tool results, never this.

/// Why the MCP server could not start or stopped abnormally.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// The workspace root cannot be opened (missing, not a directory, unreadable).
    #[error(transparent)]
    OpenWorkspace(#[from] resolve_edit::StoreError),
    /// The configuration (its `[check]` table) cannot be read or is invalid.
    #[error(transparent)]
    Config(resolve_edit::EditError),
    /// Two tools of the connection's registry have one name (a bug in the built-in list).
    #[error(transparent)]
    Tools(#[from] resolve_core::DuplicateToolName),
    /// The MCP handshake with the client failed.
    #[error("The MCP handshake with the client failed.")]
    Initialize(#[source] Box<rmcp::service::ServerInitializeError>),
    /// The task serving the connection panicked or was aborted.
    #[error("The MCP server task ended abnormally.")]
    Task(#[source] tokio::task::JoinError),
}
