//! Why an MCP server could not be started ([`StartError`]) and why a call to one of its tools
//! could not be made or did not complete ([`CallError`]).
//!
//! Owned here: these texts, written whole by each error: [`CallError`]'s `Display` is the
//! sentence the model reads, [`CallError::clause`] the same words after a colon
//! (`Apply failed: the MCP server …`). Not owned: making calls or starting servers (`hub`),
//! turning results into tool results (`tool`).

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use rmcp::service::{ClientInitializeError, ServiceError};

/// Why an MCP server could not be started; `Display` completes `… could not be started: `.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StartError {
    /// The server's command could not be run.
    #[error("`{command}` could not be run ({error})")]
    Spawn {
        /// The configured command.
        command: String,
        /// Why it could not be run.
        error: std::io::Error,
    },
    /// The server did not answer the handshake (or list its tools) in time.
    #[error("it did not answer the MCP handshake within {} s", .timeout.as_secs_f64())]
    TooSlow {
        /// The start timeout.
        timeout: Duration,
    },
    /// The MCP handshake failed.
    #[error("the MCP handshake failed ({error})")]
    Handshake {
        /// What failed (boxed: it is large).
        error: Box<ClientInitializeError>,
    },
    /// Listing the server's tools failed.
    #[error("listing its tools failed ({error})")]
    ListTools {
        /// What failed.
        error: ServiceError,
    },
    /// Its command comes from a workspace configuration the person has not trusted; nothing
    /// was run.
    #[error("{}", AsClause(.error))]
    Untrusted {
        /// The refusal, naming the file, what it would run and how to trust it.
        error: resolve_edit::StoreError,
    },
}

/// A sentence as a clause that follows a colon: its first letter lowercase, no final period.
struct AsClause<'a>(&'a resolve_edit::StoreError);

impl fmt::Display for AsClause<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sentence = self.0.to_string();
        let sentence = sentence.strip_suffix('.').unwrap_or(&sentence);
        let mut chars = sentence.chars();
        if let Some(first) = chars.next() {
            write!(f, "{}{}", first.to_lowercase(), chars.as_str())?;
        }
        Ok(())
    }
}

/// Why a call to a tool of an MCP server could not be made or did not complete.
///
/// `Display` writes the sentence the model reads (`The MCP server `notes` is not running.`);
/// [`CallError::clause`] writes the same words to follow a colon.
#[derive(Debug)]
pub(crate) enum CallError {
    /// No server of that name is configured.
    NotConfigured {
        /// The server.
        server: String,
        /// The configuration file that would name it.
        config: PathBuf,
    },
    /// The server is not running, and the call may not start it.
    NotRunning {
        /// The server.
        server: String,
    },
    /// The server had to be started for the call, and could not be.
    NotStarted {
        /// The server.
        server: String,
        /// Why it could not be started.
        problem: StartError,
    },
    /// The server was running and has exited.
    Exited {
        /// The server.
        server: String,
    },
    /// The server did not answer within the call timeout.
    NoAnswer {
        /// The server.
        server: String,
        /// The tool called.
        tool: String,
        /// The call timeout (`tool_timeout_sec`).
        timeout: Duration,
    },
    /// The server answered the call with an MCP error.
    Refused {
        /// The server.
        server: String,
        /// The tool called.
        tool: String,
        /// The server's message.
        message: String,
    },
    /// The call failed otherwise.
    Failed {
        /// The server.
        server: String,
        /// The tool called.
        tool: String,
        /// What failed.
        error: ServiceError,
    },
}

impl CallError {
    /// The error as a clause that follows a colon (`Apply failed: the MCP server …`), as the
    /// hub reports it to callers that embed it in their own sentence.
    pub(crate) fn clause(&self) -> Clause<'_> {
        Clause(self)
    }

    /// The words of the error, starting with `the` (spelled as given).
    fn write_words(&self, f: &mut fmt::Formatter<'_>, the: &str) -> fmt::Result {
        match self {
            Self::NotConfigured { server, config } => write!(
                f,
                "{the} MCP server `{server}` is not configured; add `[mcp_servers.{server}]` to `{}`",
                config.display()
            ),
            Self::NotRunning { server } => write!(f, "{the} MCP server `{server}` is not running"),
            Self::NotStarted { server, problem } => write!(
                f,
                "{the} MCP server `{server}` could not be started: {problem}"
            ),
            Self::Exited { server } => write!(
                f,
                "{the} MCP server `{server}` has exited, so its tools cannot be called in this run (`resolve apply` in a later process starts it afresh)"
            ),
            Self::NoAnswer {
                server,
                tool,
                timeout,
            } => write!(
                f,
                "{the} MCP server `{server}` did not answer the call to `{tool}` within {} s (`tool_timeout_sec`); the call may still complete on the server, so check before trying again",
                timeout.as_secs()
            ),
            Self::Refused {
                server,
                tool,
                message,
            } => write!(
                f,
                "{the} MCP server `{server}` refused the call to `{tool}`: {message}"
            ),
            Self::Failed {
                server,
                tool,
                error,
            } => write!(
                f,
                "{the} call to `{tool}` on the MCP server `{server}` failed: {error}"
            ),
        }
    }

    /// Whether the words already end with a period (a server's message may).
    fn ends_with_period(&self) -> bool {
        match self {
            Self::Refused { message, .. } => message.ends_with('.'),
            Self::Failed { error, .. } => error.to_string().ends_with('.'),
            Self::NotConfigured { .. }
            | Self::NotRunning { .. }
            | Self::NotStarted { .. }
            | Self::Exited { .. }
            | Self::NoAnswer { .. } => false,
        }
    }
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_words(f, "The")?;
        if self.ends_with_period() {
            Ok(())
        } else {
            f.write_str(".")
        }
    }
}

impl std::error::Error for CallError {}

/// A [`CallError`] as a clause that follows a colon (see [`CallError::clause`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Clause<'a>(&'a CallError);

impl fmt::Display for Clause<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.write_words(f, "the")
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    /// How the sentence was made before these errors: the clause, capitalized, with a period
    /// unless it had one.
    fn capitalized(clause: &str) -> String {
        let mut chars = clause.chars();
        let mut text: String = match chars.next() {
            Some(first) => first.to_uppercase().chain(chars).collect(),
            None => String::new(),
        };
        if !text.ends_with('.') {
            text.push('.');
        }
        text
    }

    fn every_kind() -> Vec<CallError> {
        let server = || "notes".to_owned();
        let tool = || "add".to_owned();
        vec![
            CallError::NotConfigured {
                server: server(),
                config: PathBuf::from("/w/.resolve/config.toml"),
            },
            CallError::NotRunning { server: server() },
            CallError::NotStarted {
                server: server(),
                problem: StartError::Spawn {
                    command: "python3".to_owned(),
                    error: std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
                },
            },
            CallError::NotStarted {
                server: server(),
                problem: StartError::TooSlow {
                    timeout: Duration::from_millis(500),
                },
            },
            CallError::NotStarted {
                server: server(),
                problem: StartError::ListTools {
                    error: ServiceError::UnexpectedResponse,
                },
            },
            CallError::Exited { server: server() },
            CallError::NoAnswer {
                server: server(),
                tool: tool(),
                timeout: Duration::from_secs(60),
            },
            CallError::Refused {
                server: server(),
                tool: tool(),
                message: "the notebook is full".to_owned(),
            },
            CallError::Refused {
                server: server(),
                tool: tool(),
                message: "The notebook is full.".to_owned(),
            },
            CallError::Failed {
                server: server(),
                tool: tool(),
                error: ServiceError::UnexpectedResponse,
            },
        ]
    }

    #[test]
    fn the_sentence_is_the_clause_capitalized_with_one_period() {
        for error in every_kind() {
            assert_eq!(
                error.to_string(),
                capitalized(&error.clause().to_string()),
                "{error:?}"
            );
        }
    }

    #[test]
    fn sentences_and_clauses_read_as_before() {
        let errors = every_kind();
        assert_eq!(
            errors[1].to_string(),
            "The MCP server `notes` is not running."
        );
        assert_eq!(
            errors[1].clause().to_string(),
            "the MCP server `notes` is not running"
        );
        assert_eq!(
            errors[0].to_string(),
            "The MCP server `notes` is not configured; add `[mcp_servers.notes]` to `/w/.resolve/config.toml`."
        );
        assert_eq!(
            errors[3].to_string(),
            "The MCP server `notes` could not be started: it did not answer the MCP handshake within 0.5 s."
        );
        assert_eq!(
            errors[6].clause().to_string(),
            "the MCP server `notes` did not answer the call to `add` within 60 s (`tool_timeout_sec`); the call may still complete on the server, so check before trying again"
        );
        assert_eq!(
            errors[8].to_string(),
            "The MCP server `notes` refused the call to `add`: The notebook is full."
        );
        assert_eq!(
            errors[9].to_string(),
            "The call to `add` on the MCP server `notes` failed: Unexpected response type."
        );
    }
}
