//! The read-only file tools by identity ([`ReadTool`]: `read`, `ls`, `grep`): their names
//! (each spelled once, here), descriptions and schemas, and running one from JSON arguments.
//! What each one does is the read_tools module's.

use resolve_core::{ToolKind, ToolSpec};
use resolve_store::Workspace;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::error::EditError;
use crate::read_tools::{self, GrepRequest, LsRequest, ReadRequest};

const READ_DESCRIPTION: &str = "\
Read a text file with line numbers. `offset` is the first line (1-based), `limit` the number of lines.";

const LS_DESCRIPTION: &str =
    "List a directory of the workspace (default: the root); directories end with `/`.";

const GREP_DESCRIPTION: &str = "\
Search files for a regular expression (`.gitignore` is honored). `path` limits the search to a file or directory. Output lines are `path:line:text`.";

/// A read-only file tool: it changes nothing and answers with text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReadTool {
    /// `read`: numbered lines of a file.
    Read,
    /// `ls`: the entries of a directory.
    Ls,
    /// `grep`: regex matches as `path:line:text`.
    Grep,
}

impl ReadTool {
    /// Every read-only tool, in the order tools are offered.
    pub const ALL: [ReadTool; 3] = [Self::Read, Self::Ls, Self::Grep];

    /// The tool's name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Ls => "ls",
            Self::Grep => "grep",
        }
    }

    /// The read-only tool named `name`, if it is one.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|tool| tool.name() == name)
    }

    /// The spec offered to models.
    pub fn spec(self) -> ToolSpec {
        let (description, input_schema) = match self {
            Self::Read => (
                READ_DESCRIPTION,
                json!({
                    "type": "object",
                    "properties": {
                        "path": {"type": "string"},
                        "offset": {"type": "integer", "minimum": 1},
                        "limit": {"type": "integer", "minimum": 1}
                    },
                    "required": ["path"],
                    "additionalProperties": false
                }),
            ),
            Self::Ls => (
                LS_DESCRIPTION,
                json!({
                    "type": "object",
                    "properties": {"path": {"type": "string"}},
                    "additionalProperties": false
                }),
            ),
            Self::Grep => (
                GREP_DESCRIPTION,
                json!({
                    "type": "object",
                    "properties": {"pattern": {"type": "string"}, "path": {"type": "string"}},
                    "required": ["pattern"],
                    "additionalProperties": false
                }),
            ),
        };
        ToolSpec {
            name: self.name().to_owned(),
            description: description.to_owned(),
            input_schema,
            hidden: false,
            strict: false,
            kind: ToolKind::ReadOnly,
        }
    }

    /// Run the tool with `args` (checked against its schema first).
    pub fn run(self, workspace: &Workspace, args: &Value) -> Result<String, EditError> {
        self.spec().validate(args)?;
        match self {
            Self::Read => read_tools::read(workspace, &parse::<ReadRequest>(self, args)?),
            Self::Ls => read_tools::ls(workspace, &parse::<LsRequest>(self, args)?),
            Self::Grep => read_tools::grep(workspace, &parse::<GrepRequest>(self, args)?),
        }
    }
}

/// Arguments already checked against the schema, as the tool's request type.
fn parse<T: DeserializeOwned>(tool: ReadTool, args: &Value) -> Result<T, EditError> {
    serde_json::from_value(args.clone()).map_err(|error| {
        EditError::InvalidRequest(format!("Invalid arguments for `{}`: {error}", tool.name()))
    })
}
