//! `resolve hook codex`: Codex's `PreToolUse` hook for `apply_patch`. It reads the hook input
//! on stdin, stages the patch as one preview in the root's store (origin naming the Codex
//! session), and answers Codex with a `deny` whose reason tells the model the patch is staged
//! as `<id>`, so Codex never writes the patch itself. Every failure blocks the call (exit code
//! 2, the reason on stderr): the hook never fails open.

use std::io::{Read as _, Write as _};
use std::path::Path;

use resolve_edit::{
    ApproveTimeout, FileToolOutput, FileTools, HookApproval, HookReply, HookSettings, HostEdit,
    OpenOptions, OpenedWorkspace, ProducerRequest, Store, Workspace, codex_session_origin,
    intercept,
};

use super::protocol::{
    CodexPatchCall, HookAnswer, HostReply, block_with, parse_pre_tool_use, render,
};

/// The most hook input read from stdin (a patch rewriting a large file fits many times).
const MAX_INPUT: u64 = 64 * 1024 * 1024;

/// Run the hook for `root`: read stdin, answer on stdout/stderr, return the exit code (0, or
/// 2 when the call is blocked without a decision).
pub(crate) fn run(root: &Path, mode: HookApproval, review_deadline: ApproveTimeout) -> u8 {
    let mut input = String::new();
    let answer = match std::io::stdin().take(MAX_INPUT).read_to_string(&mut input) {
        // A panic would exit with 101, which Codex takes for a failed hook and runs the patch.
        Ok(_) => std::panic::catch_unwind(|| answer(root, mode, review_deadline, &input))
            .unwrap_or_else(|_| {
                block_with("resolve hook codex failed unexpectedly (a bug); nothing was written.")
            }),
        Err(error) => block_with(&format!(
            "resolve hook codex could not read the hook input: {error}; nothing was written."
        )),
    };
    let _ = std::io::stdout().write_all(answer.stdout.as_bytes());
    let _ = std::io::stderr().write_all(answer.stderr.as_bytes());
    answer.exit_code
}

/// The answer to one hook input.
fn answer(
    root: &Path,
    mode: HookApproval,
    review_deadline: ApproveTimeout,
    input: &str,
) -> HookAnswer {
    let call = match parse_pre_tool_use(input) {
        Ok(Some(call)) => call,
        // Another shell command: no decision, Codex goes on as without the hook.
        Ok(None) => return HookAnswer::default(),
        Err(error) => return block_with(&format!("{error} Nothing was written.")),
    };
    match mode {
        HookApproval::Stage => render(&stage_patch(root, &call)),
        HookApproval::Review | HookApproval::Auto => {
            render(&decide_patch(root, &call, mode, review_deadline))
        }
    }
}

/// Stage `call`'s patch and decide it as `mode` says, through the same pipeline as Claude
/// Code's edits ([`intercept`]): `auto` lands it at once, `review` waits (up to
/// `review_deadline`) for a person's decision in `resolve review` or `resolve apply`/`discard`
/// from another terminal. Past the deadline it stays staged, as in `stage`.
fn decide_patch(
    root: &Path,
    call: &CodexPatchCall,
    mode: HookApproval,
    review_deadline: ApproveTimeout,
) -> HostReply {
    let decided = OpenedWorkspace::open(
        root,
        codex_session_origin(&call.session_id),
        &OpenOptions::default(),
    )
    .and_then(|opened| {
        opened.store().recover()?;
        let edit = HostEdit {
            tool: "apply_patch".to_owned(),
            request: ProducerRequest::ApplyPatch(call.request.clone()),
            reason: format!("Codex apply_patch (session {})", call.session_id),
        };
        let settings = HookSettings {
            approval: mode,
            review_deadline,
            ..HookSettings::default()
        };
        intercept(&opened, &edit, &settings)
    });
    match decided {
        // No person decided by the deadline: it waits, as in `stage`.
        Ok(HookReply::Staged { id, .. }) => HostReply::Staged {
            id,
            summary: format!("No person decided within {review_deadline}."),
        },
        Ok(reply @ (HookReply::Landed { .. } | HookReply::Discarded { .. })) => {
            HostReply::Decided {
                text: reply.text().to_owned(),
            }
        }
        Err(error) => HostReply::Refused {
            diagnostic: error.to_string(),
        },
    }
}

/// Stage `call`'s patch as a preview in `root`'s store, for the Codex session's origin.
fn stage_patch(root: &Path, call: &CodexPatchCall) -> HostReply {
    let staged = Workspace::open(root)
        .map_err(|error| error.to_string())
        .and_then(|workspace| {
            let store = Store::open(workspace);
            store.recover().map_err(|error| error.to_string())?;
            let tools = FileTools::new(store, codex_session_origin(&call.session_id));
            tools
                .produce(&ProducerRequest::ApplyPatch(call.request.clone()))
                .map_err(|error| error.to_string())
        });
    match staged {
        Ok(FileToolOutput::Staged(staged)) => HostReply::Staged {
            id: staged.record.id.clone(),
            summary: format!(
                "{} (+{} -{} lines)",
                staged.record.label, staged.facts.added, staged.facts.removed
            ),
        },
        Ok(FileToolOutput::Result(result)) if !result.is_error => {
            HostReply::Unchanged { text: result.text }
        }
        Ok(FileToolOutput::Result(result)) => HostReply::Refused {
            diagnostic: result.text,
        },
        Err(diagnostic) => HostReply::Refused { diagnostic },
    }
}
