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
//! terminal prompt).
//!
//! `--thinking-budget` (Anthropic) and `--reasoning-effort` (OpenAI-compatible) go to the
//! provider configuration. The run's usage is the last line on stderr, after any failure.

use std::io::{BufRead, IsTerminal, Write};
use std::sync::{Arc, Mutex};

use resolve_agent::{
    AgentEvent, AgentSession, ApiKey, AutoApprove, PlanApprover, PlanDecision, PlanMode,
    PlanReview, ProviderConfig, ProviderKind, ReasoningEffort, StoreReviewerNotes, Usage,
    file_tools,
};
use resolve_core::{RESOLVE_TOOL_NAME, ResolveSession, visible_line, visible_text};
use resolve_edit::{
    ApplyGate, CheckSettings, CheckTool, FileTools, GateDecision, HunkAddress, HunkRejection,
    LiveOutput, Origin, PendingRecord, ReviewDecision, Selection, Store, StorePendingSource,
    shown_addressed_preview,
};
use tokio_util::sync::CancellationToken;

use crate::Outcome;
use crate::args::{
    AgentArgs, ApproveChoice, PlanApproveChoice, ProviderChoice, ReasoningEffortChoice,
};
use crate::output::{Output, err_line, out_line};

/// The system prompt of `resolve agent`.
pub(super) const SYSTEM_PROMPT: &str = "\
You are a careful coding agent working inside one workspace. Use `read`, `ls` and `grep` to look around. \
`ast_edit`, `edit` and `write` do not change files: they stage a preview and show its diff. \
Review the diff, then call `resolve` with action \"apply\" (to write it) or \"discard\" (to drop it) and a one-sentence reason, \
before doing anything else. When the task is done, answer with a short summary.";

/// Appended to the system prompt when the `check` tool is offered.
const CHECK_PROMPT: &str = " \
`check` runs the project's tests against your pending preview and puts every file back; call it before `resolve` when you want to know whether the change passes.";

/// Run the agent on the task.
pub(crate) fn run(store: &Store, args: &AgentArgs, output: Output) -> anyhow::Result<Outcome> {
    resolve_agent::init();
    let settings = CheckSettings::discover(store.workspace().root(), args.config.as_deref())?;
    // A command from a configuration the person has not trusted stops the run before any
    // model call or server start (the error lists every command the file names).
    if settings.command.is_some() {
        settings.trust.check()?;
    }
    // What the model resolves is recorded as resolved by the agent, decided by the model;
    // `[check] require = true` holds for its applies too.
    let store = &store
        .clone()
        .resolved_by(Origin::Agent)
        .requiring_check(settings.require);
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

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let hub = super::mcp_hub(store, args.config.as_deref())?;
    if !hub.config().is_empty() {
        hub.config().trust.check()?;
    }
    let mcp_tools = runtime.block_on(async {
        hub.start_all().await;
        hub.tools(store, &Origin::Agent).await
    });

    let mut source = StorePendingSource::new(store.clone(), Some(Origin::Agent))
        .with_external_runner(Arc::new(hub.clone()));
    if args.approve == ApproveChoice::Ask {
        source = source.with_gate(Arc::new(TerminalGate {
            store: store.clone(),
            color: output.is_color(),
        }));
    }
    let resolve = ResolveSession::new()
        .with_id_allocator(Arc::new(store.clone()))
        .with_pending_source(Arc::new(source));
    let tools = FileTools::new(store.clone(), Origin::Agent);
    let mut builder = AgentSession::builder(config);
    let mut system_prompt = SYSTEM_PROMPT.to_owned();
    builder.tools(file_tools(&tools));
    // Offered only when a command is configured; its output streams to stderr.
    if let Some(check) = CheckTool::new(store.clone(), Origin::Agent, &settings) {
        builder.check(check.with_live_output(|| LiveOutput::merged(std::io::stderr())));
        system_prompt.push_str(CHECK_PROMPT);
    }
    builder
        .tools(mcp_tools)
        .system_prompt(system_prompt)
        .resolve_session(Arc::new(resolve))
        .reviewer_notes(Arc::new(StoreReviewerNotes::new(
            store.clone(),
            Origin::Agent,
        )))
        .max_turns(args.max_turns);
    if args.plan {
        builder.plan_mode(plan_mode(store, &tools, args.plan_approve));
    }
    let mut session = match builder.build() {
        Ok(session) => session,
        Err(error) => {
            runtime.block_on(hub.shutdown());
            return Err(error.into());
        }
    };
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
        let outcome = session.run(&args.task, &mut sink, &cancel).await;
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

/// Plan mode over `tools`' read-only tools, approved as `--plan-approve` says (by default:
/// ask when standard input is a terminal).
fn plan_mode(store: &Store, tools: &FileTools, approve: Option<PlanApproveChoice>) -> PlanMode {
    let approve = approve.unwrap_or(if std::io::stdin().is_terminal() {
        PlanApproveChoice::Ask
    } else {
        PlanApproveChoice::Auto
    });
    let approver: Arc<dyn PlanApprover> = match approve {
        PlanApproveChoice::Auto => Arc::new(AutoApprove),
        PlanApproveChoice::Ask => Arc::new(TerminalPlanApprover),
    };
    let read_only = file_tools(tools)
        .into_iter()
        .filter(|tool| tool.spec().kind.is_read_only());
    PlanMode::new(store.workspace())
        .with_approver(approver)
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

/// Asks the person at the terminal before an apply the model requested: in the full-screen
/// review when standard input and output are a terminal, otherwise on a line prompt.
#[derive(Debug)]
struct TerminalGate {
    store: Store,
    color: bool,
}

impl ApplyGate for TerminalGate {
    fn review(&self, record: &PendingRecord) -> GateDecision {
        // On a terminal, the full-screen review; otherwise (or if it cannot open) the prompt.
        if crate::review::is_interactive() {
            match crate::review::gate_decision(&self.store, &record.id, self.color) {
                Ok(decision) => return decision,
                Err(error) => err_line(&format!(
                    "note: the review could not open ({error:#}); asking here instead."
                )),
            }
        }
        let mut stderr = std::io::stderr().lock();
        let _ = writeln!(
            stderr,
            "\nThe model wants to apply {} ({}):",
            visible_line(&record.id),
            visible_line(&record.label)
        );
        // Derived from what the apply writes, with control characters made visible.
        match shown_addressed_preview(&self.store, record) {
            Ok(preview) => {
                let _ = writeln!(stderr, "{}", visible_text(&preview));
            }
            Err(error) => {
                let _ = writeln!(stderr, "(its preview cannot be shown: {error})");
            }
        }
        loop {
            let _ = write!(
                stderr,
                "Apply this change? [a]pply / [d]iscard / or name the hunks or files to leave out (e.g. src/a.rs#2 src/b.rs): "
            );
            let _ = stderr.flush();
            let answer = read_line();
            let answer = answer.trim();
            let word = answer.to_ascii_lowercase();
            if ["a", "apply", "y", "yes"].contains(&word.as_str()) {
                return GateDecision::Apply;
            }
            if ["", "d", "discard", "n", "no"].contains(&word.as_str()) {
                let _ = write!(stderr, "Why discard it (the model reads this)? ");
                let _ = stderr.flush();
                return GateDecision::Discard {
                    reason: reason_or(read_line(), crate::review::DECLINED),
                };
            }
            let left_out: Result<Vec<HunkAddress>, _> =
                answer.split_whitespace().map(HunkAddress::parse).collect();
            let left_out = match left_out {
                Ok(left_out) => left_out,
                Err(error) => {
                    let _ = writeln!(stderr, "{error}");
                    continue;
                }
            };
            let rejections = left_out
                .iter()
                .map(|address| {
                    let _ = write!(stderr, "Why leave out {address} (the model reads this)? ");
                    let _ = stderr.flush();
                    HunkRejection {
                        address: address.clone(),
                        reason: reason_or(read_line(), "The user left it out without a reason."),
                    }
                })
                .collect();
            return GateDecision::ApplyPart {
                decision: ReviewDecision {
                    selection: Selection::Except(left_out),
                    rejections,
                    fingerprint: Some(record.fingerprint.clone()),
                },
            };
        }
    }
}

/// `answer` trimmed, or `fallback` when it is empty.
fn reason_or(answer: String, fallback: &str) -> String {
    let reason = answer.trim();
    if reason.is_empty() {
        fallback.to_owned()
    } else {
        reason.to_owned()
    }
}

/// Shows a submitted plan to the person at the terminal: approve, or refine with feedback.
#[derive(Debug)]
struct TerminalPlanApprover;

impl PlanApprover for TerminalPlanApprover {
    fn review(&self, plan: &PlanReview) -> PlanDecision {
        let mut stderr = std::io::stderr().lock();
        let _ = writeln!(
            stderr,
            "\nThe model submitted a plan for approval: {} (title `{}`)\n\n{}\n",
            plan.path,
            plan.title,
            plan.content.trim_end()
        );
        let _ = write!(stderr, "Approve this plan? [a]pprove / [r]efine: ");
        let _ = stderr.flush();
        let Some(answer) = read_answer() else {
            return PlanDecision::Stop {
                reason: "standard input closed before the plan was approved or refined. Use `--plan-approve auto` to approve plans without asking.".to_owned(),
            };
        };
        if answer.trim().to_ascii_lowercase().starts_with('a') {
            return PlanDecision::Approve;
        }
        let _ = write!(stderr, "What should change (the model reads this)? ");
        let _ = stderr.flush();
        PlanDecision::Refine {
            feedback: read_answer().unwrap_or_default().trim().to_owned(),
        }
    }
}

/// A line from standard input; `None` at its end.
fn read_answer() -> Option<String> {
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line),
    }
}

fn read_line() -> String {
    let mut line = String::new();
    let _ = std::io::stdin().lock().read_line(&mut line);
    line
}
