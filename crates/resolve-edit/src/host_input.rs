//! The JSON a host's hook reads on stdin, parsed and checked with no I/O: Claude Code's
//! `PreToolUse`/`PostToolUse` input and its file-edit tool calls (`Edit`, `Write`, `MultiEdit`,
//! `NotebookEdit`, with the text each one makes of a file's current text), and Codex's
//! `PreToolUse` input for `apply_patch`. `resolve hook claude-code|codex` (in `resolve-cli`)
//! reads the file system and stages; the fuzz targets drive these parsers directly.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::apply_patch::ApplyPatchRequest;

/// Why a hook's input cannot be acted on; each message names what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HookInputError {
    /// Not Claude Code's hook JSON.
    #[error("the hook input is not Claude Code's hook JSON: {0}")]
    ClaudeMalformed(String),
    /// A tool event without a session id resolve can name an origin after.
    #[error("the hook input has no usable `session_id`")]
    NoSession,
    /// A file-edit tool's `tool_input` is not the shape Claude Code sends.
    #[error("the {tool} input is not the shape Claude Code sends ({tool}): {reason}")]
    ToolShape {
        /// The tool.
        tool: String,
        /// What did not parse.
        reason: String,
    },
    /// A tool that is not a file edit.
    #[error("`{0}` is not a file edit")]
    NotAFileEdit(String),
    /// One edit of a `MultiEdit` does not match the text.
    #[error("edit {number} of MultiEdit: `old_string` was not found")]
    MultiEditNotFound {
        /// The edit, from 1.
        number: usize,
    },
    /// One edit of a `MultiEdit` matches several times without `replace_all`.
    #[error(
        "edit {number} of MultiEdit: `old_string` occurs {count} times; give more context or set `replace_all`"
    )]
    MultiEditAmbiguous {
        /// The edit, from 1.
        number: usize,
        /// How many matches.
        count: usize,
    },
    /// The notebook a `NotebookEdit` edits is not a notebook.
    #[error("the notebook is not valid JSON: {0}")]
    NotebookMalformed(String),
    /// The notebook has no `cells` array.
    #[error("the notebook has no `cells` array")]
    NotebookNoCells,
    /// `cell_id` names no cell.
    #[error("the notebook has no cell `{0}`")]
    NotebookNoCell(String),
    /// The edit mode needs a cell and none was named (or the mode is unknown).
    #[error("NotebookEdit `{0}` needs a `cell_id` that names a cell")]
    NotebookNeedsCell(String),
    /// Not Codex's `PreToolUse` JSON.
    #[error("The hook input is not Codex's PreToolUse JSON: {0}")]
    CodexMalformed(String),
    /// Another event than `PreToolUse`.
    #[error("The hook input is a `{0}` event; `resolve hook codex` answers `PreToolUse` only.")]
    CodexWrongEvent(String),
    /// Another tool than `apply_patch`.
    #[error(
        "The hook input is a call of `{0}`; `resolve hook codex` stages `apply_patch` only (set the hook's matcher to `^(Bash|apply_patch)$`)."
    )]
    CodexWrongTool(String),
}

/// The part of Claude Code's hook input the hook reads (it sends more).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClaudeHookInput {
    /// The session; names the origin of what is staged.
    pub session_id: String,
    /// `PreToolUse`, `PostToolUse`, or an event the hook has no opinion on.
    pub hook_event_name: String,
    /// The tool called (`Edit`, `Write`, `Bash`, …).
    pub tool_name: String,
    /// The tool's arguments.
    #[serde(default)]
    pub tool_input: Value,
    /// The session's working directory.
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// The call's id (the same in its `PreToolUse` and `PostToolUse`).
    #[serde(default)]
    pub tool_use_id: Option<String>,
}

impl ClaudeHookInput {
    /// Parse the hook's stdin; a tool event (`PreToolUse`, `PostToolUse`) must name a session
    /// without whitespace.
    pub fn parse(input: &str) -> Result<Self, HookInputError> {
        let hook: Self = serde_json::from_str(input)
            .map_err(|error| HookInputError::ClaudeMalformed(error.to_string()))?;
        if hook.is_tool_event()
            && (hook.session_id.is_empty() || hook.session_id.contains(char::is_whitespace))
        {
            return Err(HookInputError::NoSession);
        }
        Ok(hook)
    }

    /// Whether it is an event the hook answers (`PreToolUse` or `PostToolUse`).
    pub fn is_tool_event(&self) -> bool {
        matches!(self.hook_event_name.as_str(), "PreToolUse" | "PostToolUse")
    }

    /// The call id a `Bash` call's snapshot is kept under (`None` when absent or empty).
    pub fn call_id(&self) -> Option<&str> {
        self.tool_use_id.as_deref().filter(|id| !id.is_empty())
    }

    /// The `Bash` call's command, if it has one.
    pub fn command(&self) -> Option<&str> {
        self.tool_input.get("command").and_then(Value::as_str)
    }

    /// The call as a typed file edit (`Edit`, `Write`, `MultiEdit`, `NotebookEdit`).
    pub fn file_edit(&self) -> Result<ClaudeFileEdit, HookInputError> {
        let tool = self.tool_name.as_str();
        let shape = |error: serde_json::Error| HookInputError::ToolShape {
            tool: tool.to_owned(),
            reason: error.to_string(),
        };
        let input = self.tool_input.clone();
        Ok(match tool {
            "Edit" => ClaudeFileEdit::Edit(serde_json::from_value(input).map_err(shape)?),
            "Write" => ClaudeFileEdit::Write(serde_json::from_value(input).map_err(shape)?),
            "MultiEdit" => ClaudeFileEdit::MultiEdit(serde_json::from_value(input).map_err(shape)?),
            "NotebookEdit" => {
                ClaudeFileEdit::NotebookEdit(serde_json::from_value(input).map_err(shape)?)
            }
            other => return Err(HookInputError::NotAFileEdit(other.to_owned())),
        })
    }
}

/// One of Claude Code's file-edit tool calls, typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClaudeFileEdit {
    /// `Edit`.
    Edit(ClaudeEdit),
    /// `Write`.
    Write(ClaudeWrite),
    /// `MultiEdit`.
    MultiEdit(ClaudeMultiEdit),
    /// `NotebookEdit`.
    NotebookEdit(ClaudeNotebookEdit),
}

/// `Edit` arguments (Claude Code's names).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClaudeEdit {
    /// The file.
    pub file_path: String,
    /// The text replaced (empty: the file is created).
    pub old_string: String,
    /// Its replacement.
    pub new_string: String,
    /// Replace every occurrence.
    #[serde(default)]
    pub replace_all: bool,
}

/// `Write` arguments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClaudeWrite {
    /// The file.
    pub file_path: String,
    /// Its whole new content.
    pub content: String,
}

/// `MultiEdit` arguments (a tool of older Claude Code versions).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClaudeMultiEdit {
    /// The file.
    pub file_path: String,
    /// The edits, applied in order.
    pub edits: Vec<ClaudeOneEdit>,
}

/// One edit of a `MultiEdit`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClaudeOneEdit {
    /// The text replaced.
    pub old_string: String,
    /// Its replacement.
    pub new_string: String,
    /// Replace every occurrence.
    #[serde(default)]
    pub replace_all: bool,
}

/// `NotebookEdit` arguments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClaudeNotebookEdit {
    /// The notebook.
    pub notebook_path: String,
    /// The cell (its `id`, or `cell-<index>`).
    #[serde(default)]
    pub cell_id: Option<String>,
    /// The cell's new source.
    pub new_source: String,
    /// `code` or `markdown`.
    #[serde(default)]
    pub cell_type: Option<String>,
    /// `replace` (the default), `insert` or `delete`.
    #[serde(default)]
    pub edit_mode: Option<String>,
}

impl ClaudeMultiEdit {
    /// The text after every edit, in order, over `text` (the file's current text, empty when
    /// it does not exist), each matching as an `Edit` must.
    pub fn apply_to(&self, text: &str) -> Result<String, HookInputError> {
        let mut text = text.to_owned();
        for (number, edit) in self.edits.iter().enumerate() {
            let number = number + 1;
            let count = if edit.old_string.is_empty() {
                0
            } else {
                text.matches(edit.old_string.as_str()).count()
            };
            match count {
                0 if edit.old_string.is_empty() && text.is_empty() => {
                    text.clone_from(&edit.new_string);
                }
                0 => return Err(HookInputError::MultiEditNotFound { number }),
                1 => text = text.replacen(edit.old_string.as_str(), &edit.new_string, 1),
                _ if edit.replace_all => {
                    text = text.replace(edit.old_string.as_str(), &edit.new_string);
                }
                _ => return Err(HookInputError::MultiEditAmbiguous { number, count }),
            }
        }
        Ok(text)
    }
}

impl ClaudeNotebookEdit {
    /// The notebook's JSON after the cell edit (replace, insert after, or delete), over the
    /// notebook's current `text`.
    pub fn apply_to(&self, text: &str) -> Result<String, HookInputError> {
        let mut notebook: Value = serde_json::from_str(text)
            .map_err(|error| HookInputError::NotebookMalformed(error.to_string()))?;
        let cells = notebook
            .get_mut("cells")
            .and_then(Value::as_array_mut)
            .ok_or(HookInputError::NotebookNoCells)?;
        let index = match &self.cell_id {
            None => None,
            Some(id) => Some(
                cells
                    .iter()
                    .position(|cell| cell["id"].as_str() == Some(id.as_str()))
                    .or_else(|| {
                        id.strip_prefix("cell-")
                            .and_then(|number| number.parse::<usize>().ok())
                            .filter(|number| *number < cells.len())
                    })
                    .ok_or_else(|| HookInputError::NotebookNoCell(id.clone()))?,
            ),
        };
        let mode = self.edit_mode.as_deref().unwrap_or("replace");
        match (mode, index) {
            ("replace", Some(index)) => {
                let cell = &mut cells[index];
                if !cell.is_object() {
                    return Err(HookInputError::NotebookMalformed(format!(
                        "cell {index} is not an object"
                    )));
                }
                cell["source"] = json!(self.new_source);
                if let Some(kind) = &self.cell_type {
                    cell["cell_type"] = json!(kind);
                }
                if cell["cell_type"] == "code" {
                    cell["execution_count"] = Value::Null;
                    cell["outputs"] = json!([]);
                }
            }
            ("insert", at) => {
                let kind = self.cell_type.as_deref().unwrap_or("code");
                let mut cell =
                    json!({"cell_type": kind, "metadata": {}, "source": self.new_source});
                if kind == "code" {
                    cell["execution_count"] = Value::Null;
                    cell["outputs"] = json!([]);
                }
                cells.insert(at.map_or(0, |index| index + 1), cell);
            }
            ("delete", Some(index)) => {
                cells.remove(index);
            }
            (mode, _) => return Err(HookInputError::NotebookNeedsCell(mode.to_owned())),
        }
        let mut bytes = Vec::new();
        let formatter = serde_json::ser::PrettyFormatter::with_indent(b" ");
        let mut serializer = serde_json::Serializer::with_formatter(&mut bytes, formatter);
        Serialize::serialize(&notebook, &mut serializer)
            .map_err(|error| HookInputError::NotebookMalformed(error.to_string()))?;
        bytes.push(b'\n');
        String::from_utf8(bytes)
            .map_err(|error| HookInputError::NotebookMalformed(error.to_string()))
    }
}

/// The tool name Codex gives `apply_patch` in a hook's input when the model has the tool.
pub const CODEX_APPLY_PATCH_TOOL: &str = "apply_patch";

/// The tool name Codex gives a shell command (`exec_command`) in a hook's input.
pub const CODEX_SHELL_TOOL: &str = "Bash";

/// The Codex hook's matcher (a regular expression over the tool name).
pub const CODEX_HOOK_MATCHER: &str = "^(Bash|apply_patch)$";

/// One `apply_patch` call Codex is about to run, from a `PreToolUse` hook's stdin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodexPatchCall {
    /// Codex's session (thread) id; names the origin of what is staged.
    pub session_id: String,
    /// The session's working directory.
    pub cwd: PathBuf,
    /// The call's id (`call_id` of the model's tool call).
    pub tool_use_id: String,
    /// The patch, as the producer takes it.
    pub request: ApplyPatchRequest,
}

/// The fields of Codex's hook input read (Codex sends more: `turn_id`, `model`,
/// `permission_mode`, `transcript_path`).
#[derive(Debug, Deserialize)]
struct CodexPreToolUse {
    session_id: String,
    cwd: PathBuf,
    hook_event_name: String,
    tool_name: String,
    tool_use_id: String,
    tool_input: Value,
}

/// Parse a Codex `PreToolUse` hook's stdin into the `apply_patch` call it announces; `None`
/// for a shell command that is not an `apply_patch` invocation (none of the hook's business).
pub fn parse_codex_pre_tool_use(stdin: &str) -> Result<Option<CodexPatchCall>, HookInputError> {
    let input: CodexPreToolUse = serde_json::from_str(stdin)
        .map_err(|error| HookInputError::CodexMalformed(error.to_string()))?;
    if input.hook_event_name != "PreToolUse" {
        return Err(HookInputError::CodexWrongEvent(input.hook_event_name));
    }
    let command = input
        .tool_input
        .get("command")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            HookInputError::CodexMalformed("`tool_input.command` is missing".to_owned())
        })?;
    let patch = match input.tool_name.as_str() {
        CODEX_APPLY_PATCH_TOOL => command.to_owned(),
        CODEX_SHELL_TOOL => match patch_of_shell_command(command) {
            Some(patch) => patch,
            None => return Ok(None),
        },
        other => return Err(HookInputError::CodexWrongTool(other.to_owned())),
    };
    Ok(Some(CodexPatchCall {
        session_id: input.session_id,
        cwd: input.cwd,
        tool_use_id: input.tool_use_id,
        request: ApplyPatchRequest { input: patch },
    }))
}

/// The patch of a shell command `apply_patch <<'DELIM'` … `DELIM` (the delimiter quoted or
/// not), as the model writes it; `None` for any other command.
pub fn patch_of_shell_command(command: &str) -> Option<String> {
    let command = command.trim_start();
    let (first, body) = command.split_once('\n')?;
    let rest = first
        .strip_prefix("apply_patch")
        .or_else(|| first.strip_prefix("applypatch"))?
        .trim_start();
    let delimiter = rest.strip_prefix("<<")?.trim_start_matches('-').trim();
    let delimiter = delimiter.trim_matches(|c| c == '\'' || c == '"');
    if delimiter.is_empty() || delimiter.contains(char::is_whitespace) {
        return None;
    }
    let mut patch = String::new();
    for line in body.split_inclusive('\n') {
        if line.trim_end_matches(['\n', '\r']) == delimiter {
            return Some(patch);
        }
        patch.push_str(line);
    }
    None
}

#[cfg(test)]
#[path = "host_input_tests.rs"]
mod tests;
