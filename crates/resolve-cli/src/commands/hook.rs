//! `resolve hook claude-code`: Claude Code's `PreToolUse` and `PostToolUse` hooks, as a thin
//! adapter over `resolve_edit`'s host edits. It reads the hook's JSON, turns `Edit`, `Write`,
//! `MultiEdit` and `NotebookEdit` into a [`HostEdit`] of the session (staged and decided by
//! [`intercept`]), and answers in Claude Code's protocol: a `deny` whose reason is what the
//! model reads (the host's own write never runs). On `Bash` it runs the shell guard, keeps a
//! snapshot of the tree before the command ([`snapshot_tree`]), and after it records what the
//! command changed as an entry of `resolve log` that `resolve undo` reverts
//! ([`changes_since`]); the model reads that in the `PostToolUse` answer.
//!
//! It fails closed: anything it cannot do ends with exit 2 and the reason on stderr, which
//! blocks the tool call. Claude Code runs the tool after any other non-zero exit, so no other
//! one is ever returned, not even on a panic.

use std::io::{Read as _, Write as _};
use std::path::Path;

use anyhow::{Context, anyhow, bail};
use resolve_edit::{
    ClaudeFileEdit, ClaudeHookInput, Content, EditRequest, HookApproval, HookSettings, HostEdit,
    NewAction, ObservedFile, OpenOptions, OpenedWorkspace, Origin, ProducerRequest, Store,
    Workspace, WriteRequest, change_diff, changes_since, intercept, read_regular_file,
    snapshot_tree, visible_shell_writes,
};
use serde_json::{Value, json};

use crate::Outcome;
use crate::args::{HookArgs, HostChoice, ShellWritesChoice};

/// Answer the hook whose JSON is on stdin; the outcome is success (an answer on stdout, or
/// none) or a usage failure (exit 2) with the reason on stderr.
pub(crate) fn run(root: &Path, args: &HookArgs) -> Outcome {
    let answered = std::panic::catch_unwind(|| {
        let mut input = String::new();
        std::io::stdin()
            .read_to_string(&mut input)
            .context("could not read the hook input on stdin")?;
        answer(root, args, &input)
    });
    let answered = answered.unwrap_or_else(|_| Err(anyhow!("internal error (a panic)")));
    match answered {
        Ok(Some(reply)) => {
            let mut stdout = std::io::stdout().lock();
            match writeln!(stdout, "{reply}").and_then(|()| stdout.flush()) {
                Ok(()) => Outcome::Success,
                Err(_) => Outcome::Usage,
            }
        }
        Ok(None) => Outcome::Success,
        Err(error) => {
            let _ = writeln!(
                std::io::stderr(),
                "resolve hook blocked this call: {error:#}. Nothing was written."
            );
            Outcome::Usage
        }
    }
}

/// The hook's answer to `input`: `None` when it has no opinion (the call goes on as usual).
fn answer(root: &Path, args: &HookArgs, input: &str) -> anyhow::Result<Option<Value>> {
    if args.host != HostChoice::ClaudeCode {
        bail!(
            "`resolve hook {:?}` is answered before the workspace opens",
            args.host
        );
    }
    let hook = ClaudeHookInput::parse(input)?;
    if !hook.is_tool_event() {
        return Ok(None);
    }
    let event = hook.hook_event_name.as_str();
    let approval = HookApproval::from(args.approve);
    match (event, hook.tool_name.as_str()) {
        ("PreToolUse", "Bash") => {
            let refuses = args.shell_writes == ShellWritesChoice::Refuse
                && matches!(approval, HookApproval::Stage | HookApproval::Review);
            if refuses && let Some(reason) = shell_guard(root, &hook)? {
                return Ok(Some(deny(&reason)));
            }
            snapshot_before(root, &hook)?;
            Ok(None)
        }
        ("PostToolUse", "Bash") => record_after(root, &hook),
        ("PostToolUse", _) => Ok(None),
        ("PreToolUse", "Edit" | "Write" | "MultiEdit" | "NotebookEdit") => {
            let opened =
                OpenedWorkspace::open(root, session_origin(&hook), &OpenOptions::default())?;
            if let Some(message) = opened.store().recover()? {
                crate::output::note(&message);
            }
            let edit = host_edit(opened.store().workspace(), &hook)?;
            let settings = HookSettings {
                approval,
                review_deadline: args.approve_timeout,
                ..HookSettings::default()
            };
            let reply = intercept(&opened, &edit, &settings)?;
            Ok(Some(deny(reply.text())))
        }
        _ => Ok(None),
    }
}

/// The session's origin in the store.
fn session_origin(hook: &ClaudeHookInput) -> Origin {
    Origin::HostSession {
        host: "claude-code".to_owned(),
        session: hook.session_id.clone(),
    }
}

/// The store of the root, resolving as the session.
fn session_store(root: &Path, hook: &ClaudeHookInput) -> anyhow::Result<Store> {
    let store =
        resolve_edit::rebasing_store(Workspace::open(root)?).resolved_by(session_origin(hook));
    if let Some(message) = store.recover()? {
        crate::output::note(&message);
    }
    Ok(store)
}

/// Before a `Bash` call: keep the tree as the command will find it. A tree too large to copy
/// is not captured (the command still runs).
fn snapshot_before(root: &Path, hook: &ClaudeHookInput) -> anyhow::Result<()> {
    let Some(call) = hook.call_id() else {
        return Ok(());
    };
    let store = session_store(root, hook)?;
    if let Ok(snapshot) = snapshot_tree(&store)? {
        store.keep_snapshot(call, &snapshot)?;
    }
    Ok(())
}

/// After a `Bash` call: record what the command changed as an applied entry of the history
/// (reverted by `resolve undo`), and tell the model; `None` when it changed nothing or no
/// snapshot was kept before it.
fn record_after(root: &Path, hook: &ClaudeHookInput) -> anyhow::Result<Option<Value>> {
    let Some(call) = hook.call_id() else {
        return Ok(None);
    };
    let store = session_store(root, hook)?;
    let Some(before) = store.take_snapshot(call)? else {
        return Ok(None);
    };
    let Ok(changes) = changes_since(&store, &before)? else {
        return Ok(None);
    };
    if changes.is_empty() {
        return Ok(None);
    }
    let command = hook.command().unwrap_or_default();
    let one_line: String = command.split_whitespace().collect::<Vec<_>>().join(" ");
    let short: String = one_line.chars().take(60).collect();
    let action = NewAction {
        origin: session_origin(hook),
        source_tool: "shell".to_owned(),
        label: format!("Shell: {short}"),
        preview_text: observed_diff(&store, &changes).into(),
        details: json!({"command": command}),
    };
    let reason = format!(
        "Claude Code ran a shell command (session {}): {one_line}",
        hook.session_id
    );
    let summary: Vec<String> = changes
        .iter()
        .map(|change| {
            let what = match (&change.before, &change.after) {
                (None, _) => "created",
                (_, None) => "removed",
                _ => "changed",
            };
            format!("{} ({what})", resolve_core::quote_path(&change.path))
        })
        .collect();
    let record = store.record_observed(action, changes, &reason)?;
    let id = record.action.id;
    Ok(Some(json!({"hookSpecificOutput": {
        "hookEventName": "PostToolUse",
        "additionalContext": format!(
            "This command changed files in the workspace, which resolve did not stage for review: {}. resolve recorded it as {id} in `resolve log`; a person can revert it with `resolve undo {id}`. Make file changes with Edit or Write instead: they are staged as previews.",
            summary.join(", ")
        ),
    }})))
}

/// The diff of what a command changed, for the record's preview text (a file that is not
/// text is named without a diff).
fn observed_diff(store: &Store, changes: &[ObservedFile]) -> String {
    let text = |hash: &Option<String>| -> Option<Option<String>> {
        match hash {
            None => Some(None),
            Some(hash) => {
                let kept = Content::Stored { blob: hash.clone() };
                let bytes = store.blobs().read(&kept).ok()?.into_owned();
                String::from_utf8(bytes).ok().map(Some)
            }
        }
    };
    let mut diff = String::new();
    for change in changes {
        let after = change
            .after
            .as_ref()
            .and_then(Content::blob_name)
            .map(str::to_owned);
        match (text(&change.before), text(&after)) {
            (Some(old), Some(new)) => {
                diff.push_str(&change_diff(&change.path, old.as_deref(), new.as_deref()));
            }
            _ => diff.push_str(&format!("{}: changed (not text)\n", change.path)),
        }
    }
    diff
}

/// Claude Code's answer that skips the tool call; the model reads `reason` as its result.
fn deny(reason: &str) -> Value {
    json!({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": reason,
    }})
}

/// Why a Bash command is refused, if it visibly writes files inside the root.
fn shell_guard(root: &Path, hook: &ClaudeHookInput) -> anyhow::Result<Option<String>> {
    let command = hook
        .command()
        .ok_or_else(|| anyhow!("the Bash call has no `command`"))?;
    let root = Workspace::open(root)?.root().to_path_buf();
    let cwd = hook
        .cwd
        .as_deref()
        .and_then(|cwd| cwd.canonicalize().ok())
        .unwrap_or_else(|| root.clone());
    let writes = visible_shell_writes(command, &cwd, &root);
    if writes.is_empty() {
        return Ok(None);
    }
    Ok(Some(format!(
        "Refused by resolve: this command writes files inside the workspace ({}), and shell writes cannot be staged for review. Make file changes with Edit or Write (they are staged as previews); use Bash for commands that only read, build or test.",
        writes.join(", ")
    )))
}

/// The tool call as a producer request with Claude Code's semantics.
fn host_edit(workspace: &Workspace, hook: &ClaudeHookInput) -> anyhow::Result<HostEdit> {
    let tool = hook.tool_name.clone();
    let request: ProducerRequest = match hook.file_edit()? {
        ClaudeFileEdit::Edit(input) if input.old_string.is_empty() => {
            // Claude Code creates a file with an empty `old_string`, when there is none.
            if current_text(workspace, &input.file_path)?.is_some() {
                bail!(
                    "`old_string` is empty but `{}` exists; Edit creates files only",
                    input.file_path
                );
            }
            WriteRequest {
                path: input.file_path,
                content: input.new_string,
            }
            .into()
        }
        ClaudeFileEdit::Edit(input) => EditRequest {
            path: input.file_path,
            old_text: input.old_string,
            new_text: input.new_string,
            replace_all: input.replace_all,
        }
        .into(),
        ClaudeFileEdit::Write(input) => WriteRequest {
            path: input.file_path,
            content: input.content,
        }
        .into(),
        ClaudeFileEdit::MultiEdit(input) => {
            let current = current_text(workspace, &input.file_path)?.unwrap_or_default();
            let content = input.apply_to(&current)?;
            WriteRequest {
                path: input.file_path,
                content,
            }
            .into()
        }
        ClaudeFileEdit::NotebookEdit(input) => {
            let current = current_text(workspace, &input.notebook_path)?
                .ok_or_else(|| anyhow!("the notebook `{}` does not exist", input.notebook_path))?;
            let content = input.apply_to(&current)?;
            WriteRequest {
                path: input.notebook_path,
                content,
            }
            .into()
        }
    };
    Ok(HostEdit {
        reason: format!(
            "Claude Code {tool} (session {session})",
            session = hook.session_id
        ),
        tool,
        request,
    })
}

/// The text of the file at `path` (confined to the root), `None` when it does not exist.
fn current_text(workspace: &Workspace, path: &str) -> anyhow::Result<Option<String>> {
    let target = workspace.resolve(path)?;
    match read_regular_file(&target.absolute)? {
        None => Ok(None),
        Some(bytes) => String::from_utf8(bytes).map(Some).map_err(|_| {
            anyhow!(
                "`{}` is not UTF-8 text; resolve stages text files",
                target.relative
            )
        }),
    }
}
