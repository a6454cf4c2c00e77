//! `resolve agent`: a coding agent over the workspace, printing the conversation as it streams.
//!
//! All runs in one root share the `agent` origin in the durable store, so a preview left pending
//! by one run is picked up (and reminded) by the next. The tools of the configured MCP servers
//! are offered beside the file tools; a server that fails to start is reported and skipped.
//! When the workspace's configuration names commands and the person has not trusted it
//! (`resolve trust`), the run fails before any model call or server start.
//!
//! With `--plan` the session starts in plan mode (`resolve_agent::PlanMode`): the read-only
//! file tools plus a plan-file `write`, and a plan approver (`--plan-approve`: at once, or a
//! terminal prompt). Every approver comes from `crate::approvers`; the workspace's parts from
//! [`OpenedWorkspace`], the one composition root.
//!
//! `--thinking-budget` (Anthropic) and `--reasoning-effort` (OpenAI-compatible) go to the
//! provider configuration. The run's usage is the last line on stderr, after any failure.

use std::io::{IsTerminal, Write};
use std::sync::{Arc, Mutex};

use resolve_agent::mcp::McpHub;
use resolve_agent::{
    AgentEvent, AgentSession, ApiKey, PlanMode, ProviderConfig, ProviderKind, ReasoningEffort,
    StoreReviewerNotes, Usage, file_tools,
};
use resolve_core::RESOLVE_TOOL_NAME;
use resolve_edit::{ApprovalMode, LiveOutput, OpenedWorkspace, Origin, Store, WorkspaceConfig};
use tokio_util::sync::CancellationToken;

use crate::Outcome;
use crate::approvers;
use crate::args::{AgentArgs, ProviderChoice, ReasoningEffortChoice};
use crate::output::{Output, err_line, out_line};

/// The system prompt of `resolve agent`.
pub(super) const SYSTEM_PROMPT: &str = "\
You are a careful coding agent working inside one workspace. Use `read`, `ls` and `grep` to look around. \
`ast_edit`, `edit`, `write` and `apply_patch` do not change files: they stage a preview and show its diff. \
Review the diff, then call `resolve` with action \"apply\" (to write it) or \"discard\" (to drop it) and a one-sentence reason, \
before doing anything else. When the task is done, answer with a short summary.";

/// Appended to the system prompt when the `check` tool is offered.
const CHECK_PROMPT: &str = " \
`check` runs the project's tests against your pending preview and puts every file back; call it before `resolve` when you want to know whether the change passes.";

/// Run the agent on the task: compose the opened workspace, the provider, the configured MCP
/// servers, the approvers `--approve` and `--plan-approve` name, and the session; then drive
/// it and report.
pub(crate) fn run(store: &Store, args: &AgentArgs, output: Output) -> anyhow::Result<Outcome> {
    resolve_agent::init();
    let root = store.workspace().root();
    let config = WorkspaceConfig::read(root, args.config.as_deref(), None)?;
    // What the model resolves is recorded as resolved by the agent; `[check] require = true`
    // holds for its applies too.
    let opened = OpenedWorkspace::with_store(store.clone(), Origin::Agent, config);
    // A command from a configuration the person has not trusted stops the run before any
    // model call or server start (the error lists every command the file names).
    opened.require_trusted_commands()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let hub = super::mcp_hub(root, opened.config());
    let mcp_tools = runtime.block_on(async {
        hub.start_all().await;
        hub.tools(opened.store(), opened.origin()).await
    });
    let approver = approvers::approver_for(
        args.approve,
        args.approve_timeout,
        opened.store(),
        output.is_color(),
    );
    let resolve = opened.session(approver, Some(Arc::new(hub.clone())));
    let mut builder = AgentSession::builder(provider_config(args));
    let mut system_prompt = SYSTEM_PROMPT.to_owned();
    builder.tools(file_tools(opened.tools()));
    // Offered only when a command is configured; its output streams to stderr.
    if let Some(check) = opened.check() {
        builder.check(
            check
                .clone()
                .with_live_output(|| LiveOutput::merged(std::io::stderr())),
        );
        system_prompt.push_str(CHECK_PROMPT);
    }
    builder
        .tools(mcp_tools)
        .system_prompt(system_prompt)
        .resolve_session(Arc::new(resolve))
        .reviewer_notes(Arc::new(StoreReviewerNotes::new(
            opened.store().clone(),
            Origin::Agent,
        )))
        .max_turns(args.max_turns);
    if args.plan {
        builder.plan_mode(plan_mode(&opened, args, output));
    }
    let session = match builder.build() {
        Ok(session) => session,
        Err(error) => {
            runtime.block_on(hub.shutdown());
            return Err(error.into());
        }
    };
    drive(&runtime, session, &hub, &args.task, output)
}

/// The provider configuration the arguments name.
fn provider_config(args: &AgentArgs) -> ProviderConfig {
    let kind = match args.provider {
        ProviderChoice::Openai => ProviderKind::OpenAi,
        ProviderChoice::Anthropic => ProviderKind::Anthropic,
    };
    let model = args.model.clone().unwrap_or_else(|| {
        match kind {
            ProviderKind::OpenAi => "gpt-4.1-mini",
            ProviderKind::Anthropic => "claude-sonnet-4-5",
        }
        .to_owned()
    });
    let base_url = args
        .base_url
        .clone()
        .unwrap_or_else(|| kind.default_base_url().to_owned());
    let mut config = ProviderConfig::new(kind, base_url, model);
    config.api_key = ApiKey::from_env(args.api_key_env.as_deref().unwrap_or(kind.api_key_env()));
    config
        .thinking_budget(args.thinking_budget)
        .reasoning_effort(args.reasoning_effort.map(|effort| match effort {
            ReasoningEffortChoice::Low => ReasoningEffort::Low,
            ReasoningEffortChoice::Medium => ReasoningEffort::Medium,
            ReasoningEffortChoice::High => ReasoningEffort::High,
        }));
    config
}

/// Run `session` on `task` until it ends (or Ctrl-C), printing its events, then shut the MCP
/// servers down and report the outcome and the usage.
fn drive(
    runtime: &tokio::runtime::Runtime,
    mut session: AgentSession,
    hub: &McpHub,
    task: &str,
    output: Output,
) -> anyhow::Result<Outcome> {
    let cancel = CancellationToken::new();
    let printer = Arc::new(Mutex::new(Printer::new(output)));
    let outcome = runtime.block_on(async {
        let on_interrupt = cancel.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                on_interrupt.cancel();
            }
        });
        let sink_printer = Arc::clone(&printer);
        let mut sink = move |event: AgentEvent| {
            sink_printer
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .event(event);
        };
        let outcome = session.run(task, &mut sink, &cancel).await;
        hub.shutdown().await;
        outcome
    });
    let usage = {
        let mut printer = printer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        printer.finish();
        printer.usage
    };
    let result = match outcome {
        Ok(_) if session.in_plan_mode() => {
            crate::output::failure(
                output,
                "The run ended in plan mode: no plan was approved, so nothing was implemented.",
            );
            Ok(Outcome::Failed)
        }
        Ok(_) => Ok(Outcome::Success),
        Err(error) => {
            crate::output::failure(output, &error.to_string());
            Ok(Outcome::Failed)
        }
    };
    if let Some(usage) = usage {
        err_line(&usage.summary_line());
    }
    result
}

/// Plan mode over the workspace's read-only tools, approved as `--plan-approve` says (by
/// default: ask when standard input is a terminal), within `--approve-timeout`.
fn plan_mode(opened: &OpenedWorkspace, args: &AgentArgs, output: Output) -> PlanMode {
    let approve = args
        .plan_approve
        .unwrap_or(if std::io::stdin().is_terminal() {
            ApprovalMode::Ask
        } else {
            ApprovalMode::Auto
        });
    let read_only = file_tools(opened.tools())
        .into_iter()
        .filter(|tool| tool.spec().kind.is_read_only());
    PlanMode::new(opened.store().workspace())
        .with_approver(approvers::approver_for(
            approve,
            args.approve_timeout,
            opened.store(),
            output.is_color(),
        ))
        .with_tools(read_only)
}

/// Prints events: JSON lines with `--json`, otherwise the conversation.
struct Printer {
    output: Output,
    in_text: bool,
    /// The run's usage, from its last event; printed after the outcome.
    usage: Option<Usage>,
}

impl Printer {
    fn new(output: Output) -> Self {
        Self {
            output,
            in_text: false,
            usage: None,
        }
    }

    fn event(&mut self, event: AgentEvent) {
        if let AgentEvent::Usage(usage) = &event {
            self.usage = Some(*usage);
        }
        if self.output.is_json() {
            if let Ok(value) = serde_json::to_value(&event) {
                self.output.json_value(&value);
            }
            return;
        }
        match event {
            AgentEvent::TextDelta { text } => {
                let mut stdout = std::io::stdout().lock();
                let _ = stdout
                    .write_all(text.as_bytes())
                    .and_then(|()| stdout.flush());
                self.in_text = true;
            }
            AgentEvent::ToolCall {
                name, arguments, ..
            } => {
                self.end_text();
                out_line(&format!("→ {name} {arguments}"));
            }
            AgentEvent::ToolResult {
                name,
                text,
                is_error,
                details,
                executed,
                ..
            } => {
                self.end_text();
                if name == RESOLVE_TOOL_NAME && executed {
                    out_line(&text);
                    out_line(&self.output.resolve_block(details.as_ref(), is_error, 80));
                } else if is_error {
                    out_line(&format!("✘ {text}"));
                } else {
                    out_line(&text);
                }
            }
            AgentEvent::Notice { message } => {
                self.end_text();
                err_line(&format!("note: {message}"));
            }
            AgentEvent::ModelCall { .. }
            | AgentEvent::AssistantText { .. }
            | AgentEvent::Reminder { .. }
            | AgentEvent::ReviewerNote { .. }
            | AgentEvent::PlanModeReminder { .. }
            | AgentEvent::PlanApproved { .. }
            | AgentEvent::Usage(_) => {}
            _ => {}
        }
    }

    fn end_text(&mut self) {
        if self.in_text {
            out_line("");
            self.in_text = false;
        }
    }

    fn finish(&mut self) {
        self.end_text();
    }
}
