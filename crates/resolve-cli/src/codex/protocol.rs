//! Codex's `PreToolUse` hook protocol for `apply_patch`, as the pinned Codex 0.171.0 speaks it
//! (measured; see docs/codex.md): the JSON Codex writes on the hook's stdin, and the
//! answer the hook gives on stdout, stderr and its exit code. Pure: no I/O.
//!
//! Measured with Codex 0.171.0 and a model without an `apply_patch` tool in its catalog: the
//! model patches through `exec_command` with `apply_patch <<'EOF' … EOF`, and the hook sees
//! `tool_name` `Bash` with that shell command in `tool_input.command`. A model offered the
//! `apply_patch` tool itself is announced as `apply_patch`, the raw patch in the same field.
//! Both are read here; any other `Bash` command passes untouched.
//!
//! Codex honours two ways of blocking a tool call: exit code 0 with
//! `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny",
//! "permissionDecisionReason":…}}` on stdout, and exit code 2 with the reason on stderr. Every
//! other exit code (1 included) counts as a failed hook and the patch runs: it fails open. So
//! every answer rendered here blocks Codex's own apply, and the reason is what the model reads
//! in the `apply_patch` result.

use std::path::PathBuf;

use resolve_edit::ApplyPatchRequest;
use serde::Deserialize;
use serde_json::{Value, json};

/// The tool name Codex gives `apply_patch` in a hook's input when the model has the tool.
pub(crate) const APPLY_PATCH_TOOL: &str = "apply_patch";

/// The tool name Codex gives a shell command (`exec_command`) in a hook's input.
pub(crate) const SHELL_TOOL: &str = "Bash";

/// The hook's matcher (a regular expression over the tool name).
pub(crate) const HOOK_MATCHER: &str = "^(Bash|apply_patch)$";

/// The event this adapter answers.
const PRE_TOOL_USE: &str = "PreToolUse";

/// Exit code with which Codex blocks the call and shows stderr as the reason.
pub(crate) const EXIT_BLOCK: u8 = 2;

/// One `apply_patch` call Codex is about to run, from a `PreToolUse` hook's stdin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CodexPatchCall {
    /// Codex's session (thread) id; names the origin of what is staged.
    pub(crate) session_id: String,
    /// The session's working directory.
    pub(crate) cwd: PathBuf,
    /// The call's id (`call_id` of the model's tool call).
    pub(crate) tool_use_id: String,
    /// The patch, as the producer takes it.
    pub(crate) request: ApplyPatchRequest,
}

/// Why a hook input is not an `apply_patch` call this adapter can stage.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub(crate) enum CodexInputError {
    /// Not JSON of the expected shape.
    #[error("The hook input is not Codex's PreToolUse JSON: {0}")]
    Malformed(String),
    /// Another event than `PreToolUse`.
    #[error("The hook input is a `{0}` event; `resolve hook codex` answers `PreToolUse` only.")]
    WrongEvent(String),
    /// Another tool than `apply_patch`.
    #[error(
        "The hook input is a call of `{0}`; `resolve hook codex` stages `apply_patch` only (set the hook's matcher to `^(Bash|apply_patch)$`)."
    )]
    WrongTool(String),
}

/// The fields of the hook input this adapter reads (Codex sends more: `turn_id`, `model`,
/// `permission_mode`, `transcript_path`).
#[derive(Debug, Deserialize)]
struct PreToolUseInput {
    session_id: String,
    cwd: PathBuf,
    hook_event_name: String,
    tool_name: String,
    tool_use_id: String,
    tool_input: Value,
}

/// Parse a `PreToolUse` hook's stdin into the `apply_patch` call it announces; `None` for a
/// shell command that is not an `apply_patch` invocation (it is none of this hook's business).
pub(crate) fn parse_pre_tool_use(stdin: &str) -> Result<Option<CodexPatchCall>, CodexInputError> {
    let input: PreToolUseInput = serde_json::from_str(stdin)
        .map_err(|error| CodexInputError::Malformed(error.to_string()))?;
    if input.hook_event_name != PRE_TOOL_USE {
        return Err(CodexInputError::WrongEvent(input.hook_event_name));
    }
    let command = input
        .tool_input
        .get("command")
        .and_then(Value::as_str)
        .ok_or_else(|| CodexInputError::Malformed("`tool_input.command` is missing".to_owned()))?;
    let patch = match input.tool_name.as_str() {
        APPLY_PATCH_TOOL => command.to_owned(),
        SHELL_TOOL => match patch_of_shell_command(command) {
            Some(patch) => patch,
            None => return Ok(None),
        },
        other => return Err(CodexInputError::WrongTool(other.to_owned())),
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
fn patch_of_shell_command(command: &str) -> Option<String> {
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

/// What to tell Codex (and through it the model) about one `apply_patch` call. Every variant
/// blocks Codex's own apply: resolve writes the files, or nothing is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HostReply {
    /// The patch waits as pending action `id`; `summary` is its diff summary.
    Staged {
        /// The pending id.
        id: String,
        /// What the preview changes (its label and diff summary).
        summary: String,
    },
    /// Nothing to stage: every change of the patch is already in the files.
    Unchanged {
        /// The producer's text, naming the files.
        text: String,
    },
    /// resolve could not stage the patch (malformed, outside the root, an internal error).
    Refused {
        /// What went wrong, as the model can act on it.
        diagnostic: String,
    },
    /// The patch was decided at once (`auto`) or by a person (`review`): landed through
    /// resolve, or rejected with nothing written; `text` says which, with the reasons.
    Decided {
        /// What the model reads.
        text: String,
    },
}

impl HostReply {
    /// The text the model reads as the `apply_patch` result.
    pub(crate) fn reason(&self) -> String {
        match self {
            Self::Staged { id, summary } => format!(
                "resolve staged this patch as {id}; no file was written yet. It lands when you call the `resolve` tool of the `resolve` MCP server with action \"apply\" (or \"discard\") and a reason, or when a person applies it with resolve (`resolve review` or `resolve apply`); until then the files keep their old content.\n{summary}"
            ),
            Self::Unchanged { text } => {
                format!("resolve has nothing to stage for this patch; no file was written.\n{text}")
            }
            Self::Refused { diagnostic } => {
                format!("resolve refused this patch; nothing was written.\n{diagnostic}")
            }
            Self::Decided { text } => text.clone(),
        }
    }
}

/// A hook's answer: what it prints and how it exits (by default nothing and 0: no decision).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct HookAnswer {
    /// Printed on stdout.
    pub(crate) stdout: String,
    /// Printed on stderr.
    pub(crate) stderr: String,
    /// The exit code (0 or [`EXIT_BLOCK`], never one that fails open).
    pub(crate) exit_code: u8,
}

/// Render `reply` as Codex's hook output: a `deny` decision whose reason the model reads, on
/// stdout with exit code 0.
pub(crate) fn render(reply: &HostReply) -> HookAnswer {
    let output = json!({"hookSpecificOutput": {
        "hookEventName": PRE_TOOL_USE,
        "permissionDecision": "deny",
        "permissionDecisionReason": reply.reason(),
    }});
    HookAnswer {
        stdout: format!("{output}\n"),
        stderr: String::new(),
        exit_code: 0,
    }
}

/// The answer when even rendering is not possible (the hook input could not be read, say):
/// exit code 2 with `message` on stderr, which Codex shows as the reason. Fails closed.
pub(crate) fn block_with(message: &str) -> HookAnswer {
    let message = if message.trim().is_empty() {
        "resolve hook codex failed without a message; nothing was written."
    } else {
        message
    };
    HookAnswer {
        stdout: String::new(),
        stderr: format!("{message}\n"),
        exit_code: EXIT_BLOCK,
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    const PATCH: &str = "*** Begin Patch\n*** Add File: b.txt\n+b\n*** End Patch\n";

    fn input(event: &str, tool: &str, tool_input: &Value) -> String {
        json!({"session_id": "019a-session", "turn_id": "t1", "transcript_path": null,
            "cwd": "/work/project", "hook_event_name": event, "model": "gpt-5",
            "permission_mode": "bypassPermissions", "tool_name": tool,
            "tool_input": tool_input, "tool_use_id": "call_patch"})
        .to_string()
    }

    #[test]
    fn an_apply_patch_input_gives_the_session_the_cwd_and_the_patch() {
        let expected = Some(CodexPatchCall {
            session_id: "019a-session".to_owned(),
            cwd: PathBuf::from("/work/project"),
            tool_use_id: "call_patch".to_owned(),
            request: ApplyPatchRequest {
                input: PATCH.to_owned(),
            },
        });
        let tool = input("PreToolUse", "apply_patch", &json!({"command": PATCH}));
        assert_eq!(parse_pre_tool_use(&tool), Ok(expected.clone()));
        for command in [
            format!("apply_patch <<'EOF'\n{PATCH}EOF\n"),
            format!("apply_patch <<\"PATCH\"\n{PATCH}PATCH"),
            format!("applypatch <<EOF\n{PATCH}EOF\n"),
        ] {
            let shell = input("PreToolUse", "Bash", &json!({"command": command}));
            assert_eq!(
                parse_pre_tool_use(&shell),
                Ok(expected.clone()),
                "{command}"
            );
        }
    }

    #[test]
    fn other_shell_commands_are_none_of_the_hooks_business() {
        for command in [
            "ls -la",
            "cat <<'EOF' > a.txt\nx\nEOF\n",
            "apply_patch <<'EOF'\n*** Begin Patch\n",
        ] {
            let shell = input("PreToolUse", "Bash", &json!({"command": command}));
            assert_eq!(parse_pre_tool_use(&shell), Ok(None), "{command}");
        }
    }

    #[test]
    fn other_events_tools_and_shapes_are_refused_with_what_they_are() {
        assert_eq!(
            parse_pre_tool_use(&input(
                "PostToolUse",
                "apply_patch",
                &json!({"command": PATCH})
            )),
            Err(CodexInputError::WrongEvent("PostToolUse".to_owned()))
        );
        assert_eq!(
            parse_pre_tool_use(&input("PreToolUse", "Write", &json!({"command": "x"}))),
            Err(CodexInputError::WrongTool("Write".to_owned()))
        );
        assert!(matches!(
            parse_pre_tool_use(&input("PreToolUse", "apply_patch", &json!({"input": PATCH}))),
            Err(CodexInputError::Malformed(message)) if message.contains("tool_input.command")
        ));
        assert!(matches!(
            parse_pre_tool_use("not json"),
            Err(CodexInputError::Malformed(_))
        ));
    }

    #[test]
    fn every_reply_is_a_deny_whose_reason_the_model_reads() {
        let replies = [
            (
                HostReply::Staged {
                    id: "pending-action:apply_patch:1".to_owned(),
                    summary: "Patch: 2 files".to_owned(),
                },
                "resolve staged this patch as pending-action:apply_patch:1; no file was written yet.",
            ),
            (
                HostReply::Unchanged {
                    text: "Patch already applied: a.txt.".to_owned(),
                },
                "resolve has nothing to stage for this patch; no file was written.\nPatch already applied: a.txt.",
            ),
            (
                HostReply::Refused {
                    diagnostic: "Change block 1 of `a.txt` does not match.".to_owned(),
                },
                "resolve refused this patch; nothing was written.\nChange block 1 of `a.txt` does not match.",
            ),
        ];
        for (reply, start) in replies {
            let answer = render(&reply);
            assert_eq!((answer.exit_code, answer.stderr.as_str()), (0, ""));
            let output: Value = serde_json::from_str(&answer.stdout).unwrap();
            assert_eq!(output["hookSpecificOutput"]["hookEventName"], "PreToolUse");
            assert_eq!(output["hookSpecificOutput"]["permissionDecision"], "deny");
            let reason = output["hookSpecificOutput"]["permissionDecisionReason"]
                .as_str()
                .unwrap();
            assert!(reason.starts_with(start), "{reason}");
        }
    }

    #[test]
    fn a_failure_blocks_with_exit_code_2_and_a_reason_on_stderr() {
        assert_eq!(
            block_with("The store is locked."),
            HookAnswer {
                stdout: String::new(),
                stderr: "The store is locked.\n".to_owned(),
                exit_code: 2,
            }
        );
        assert!(!block_with("  ").stderr.trim().is_empty());
    }
}
