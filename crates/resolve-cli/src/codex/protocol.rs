//! Codex's `PreToolUse` hook protocol for `apply_patch`, as the pinned Codex 0.171.0 speaks it
//! (measured; see docs/codex.md): the JSON Codex writes on the hook's stdin, and the
//! answer the hook gives on stdout, stderr and its exit code. Pure: no I/O. The input's parser
//! lives in `resolve_edit` (`parse_codex_pre_tool_use`), where the fuzz targets reach it.
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

use serde_json::json;

pub(crate) use resolve_edit::{
    CODEX_HOOK_MATCHER as HOOK_MATCHER, CodexPatchCall,
    parse_codex_pre_tool_use as parse_pre_tool_use,
};

/// The event this adapter answers.
const PRE_TOOL_USE: &str = "PreToolUse";

/// Exit code with which Codex blocks the call and shows stderr as the reason.
pub(crate) const EXIT_BLOCK: u8 = 2;

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

    use serde_json::Value;

    use super::*;

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
