//! One function per subcommand, over a workspace opened (and recovered) once.

mod agent;
pub(crate) mod amend;
mod check;
mod gc;
mod hook;
mod rebase_state;
mod setup;
mod state;
mod trust;

#[cfg(test)]
mod tool_lists;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use anstyle::{AnsiColor, Style};
use resolve_agent::mcp::{McpConfig, McpHub};
use resolve_core::{
    DecidedBy, ResolveAction, ResolveArgs, ResolveFacts, ResolveOutcome, ToolResult, base_details,
    count_noun, visible_line, visible_text,
};
use resolve_edit::{
    ApprovalMode, ApproveTimeout, AutoApprover, CommandTrust, FileToolOutput, FileTools,
    HistoryRecord, LOCK_TIMEOUT, OpenedWorkspace, Origin, Outcome as HistoryOutcome, ProduceLimits,
    Produced, SpooledChangeSet, Store, StoreError, StoredAction, Workspace, WorkspaceConfig,
    check_report, language_of_path, short_id, shown_addressed_preview, shown_history_preview,
    shown_preview,
};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::Outcome;
use crate::args::{Cli, Command, ProducerArgs};
use crate::output::{Output, in_person_words, next_commands, note, with_person_banner};
use crate::root::Located;

/// Open the workspace, recover, and run the subcommand.
pub(crate) fn run(cli: &Cli, output: Output) -> anyhow::Result<Outcome> {
    let located = match Located::find(cli.global.root.as_deref()) {
        Ok(located) => located,
        // A hook fails closed (exit 2), never with a code that lets its host go on.
        Err(error) if matches!(cli.command, Command::Hook(_)) => {
            note(&format!(
                "resolve hook blocked this call: {error:#}. Nothing was written."
            ));
            return Ok(Outcome::Usage);
        }
        Err(error) => return Err(error),
    };
    let root = located.root();
    // Trust is the person's, kept outside the workspace: no store is opened.
    if let Command::Trust(args) = &cli.command {
        return trust::run(root, args, output);
    }
    // A hook answers its host in the host's protocol and fails closed (exit 2), whatever
    // happens; setup edits the host's files, not the workspace.
    if let Command::Hook(args) = &cli.command {
        return Ok(hook::run(root, args));
    }
    if let Command::Setup(args) = &cli.command {
        return setup::run(root, args, output);
    }
    let workspace = Workspace::open(root)?;
    // What this process resolves is recorded as resolved (and so decided by a person) at the
    // command line; `resolve agent` and `resolve mcp` say otherwise.
    let store = resolve_edit::rebasing_store(workspace).resolved_by(Origin::Cli);
    // A foreign action (not staged by this user's resolve) runs only when a person names it,
    // or picks it in the full-screen review, where it is marked.
    let names_action = match &cli.command {
        Command::Apply(args) => args.id.is_some(),
        Command::Discard(args) => args.id.is_some(),
        Command::Check(args) => args.id.is_some(),
        Command::Undo(args) => args.id.is_some(),
        Command::Review(_) => true,
        _ => false,
    };
    let store = store.accepting_foreign(names_action);
    if let Some(message) = recover(&store, &cli.command)? {
        note(&message);
    }
    // History past the retention (`[gc]` of the configuration) goes at most once a day
    // (`resolve gc` on demand). A failure here is not the command's: the pass is tried again by
    // the next one. While the configuration does not parse the pass waits: keeping less than
    // the person asked for would lose history, and the commands that read the file say why.
    // The configuration is read only when a pass is due (once a day), not by every command.
    let retention = || WorkspaceConfig::read(root, None, None).map(|config| config.retention);
    if !matches!(cli.command, Command::Gc(_))
        && store.gc_is_due().unwrap_or(true)
        && let Ok(retention) = retention()
        && let Err(error) = store.gc_if_due(&retention)
    {
        note(&format!(
            "note: the daily clean-up of old history failed: {error}"
        ));
    }
    match &cli.command {
        Command::AstEdit(args) => produce(&store, args, &located, output),
        Command::Edit(args) => produce(&store, args, &located, output),
        Command::Write(args) => produce(&store, args, &located, output),
        Command::Patch(args) => produce(&store, args, &located, output),
        Command::Pending => pending(&store, output),
        Command::Show(args) => show(
            &store,
            full_id(&store, args.id.as_deref())?.as_deref(),
            output,
        ),
        Command::Check(args) => check::run(&store, args, output),
        Command::Apply(args) => {
            let mut store = store.requiring_check(args.require_check);
            if args.no_rebase {
                store = store.rebasing(None);
            }
            if args.commit {
                // The person's own flag: no file's trust is involved.
                store = store.committing(Some(CommandTrust::Allowed));
            }
            let mut resolve_args = ResolveArgs::new(ResolveAction::Apply, args.reason.clone());
            let mut extra = Map::new();
            let addresses = |typed: &[String]| -> Vec<String> {
                typed
                    .iter()
                    .map(|address| located.address(address))
                    .collect()
            };
            if !args.only.is_empty() {
                extra.insert("only".into(), json!(addresses(&args.only)));
            }
            if !args.except.is_empty() {
                extra.insert("except".into(), json!(addresses(&args.except)));
            }
            if !extra.is_empty() {
                resolve_args = resolve_args.with_extra(extra);
            }
            resolve(
                &store,
                resolve_args,
                full_id(&store, args.id.as_deref())?.as_deref(),
                args.config.as_deref(),
                output,
            )
        }
        Command::Discard(args) => resolve(
            &store,
            ResolveArgs::new(ResolveAction::Discard, args.reason.clone()),
            full_id(&store, args.id.as_deref())?.as_deref(),
            args.config.as_deref(),
            output,
        ),
        Command::Undo(args) => undo(
            &store,
            full_id(&store, args.id.as_deref())?.as_deref(),
            output,
        ),
        Command::Amend(args) => amend::run(&store, args, &located, output),
        Command::Log => log(&store, output),
        Command::Gc(args) => gc::run(&store, args, retention()?, output),
        Command::Review(args) => {
            let (hub_store, config) = (store.clone(), args.config.clone());
            let hub = Arc::new(move || configured_hub(&hub_store, config.as_deref()));
            if args.web {
                let options = crate::review::web::WebOptions {
                    port: args.port.unwrap_or(0),
                    open: args.open,
                };
                return crate::review::web::run(&store, hub, &options);
            }
            crate::review::run(&store, hub, output)
        }
        Command::Agent(args) => agent::run(&store, args, output),
        Command::Mcp(args) => mcp(root, args.approve, args.approve_timeout),
        Command::Trust(args) => trust::run(root, args, output),
        Command::Hook(args) => Ok(hook::run(root, args)),
        Command::Setup(args) => setup::run(root, args, output),
    }
}

/// The variable in which Claude Code gives the processes it starts (its MCP servers, its
/// hooks) the id of their session.
const CLAUDE_CODE_SESSION_ENV: &str = "CLAUDE_CODE_SESSION_ID";

/// Settle an apply a crash interrupted, saying what was done. Commands that only read go on
/// at once while another resolve holds the lock (they read the records as they stand); any
/// other says at once that it waits for the lock.
fn recover(store: &Store, command: &Command) -> anyhow::Result<Option<String>> {
    let reads_only = matches!(
        command,
        Command::Pending | Command::Show(_) | Command::Log | Command::Review(_)
    );
    match store.recover_now() {
        Err(StoreError::LockTimeout { path, .. }) => {
            if reads_only {
                return Ok(None);
            }
            note(&format!(
                "Waiting for the workspace lock `{}`: another resolve command (a check, an apply) is working in this workspace; giving up after {} s.",
                path.display(),
                LOCK_TIMEOUT.as_secs()
            ));
            Ok(store.recover()?)
        }
        other => Ok(other?),
    }
}

/// `typed` as a full id: a number alone (`18`, as in `pending-action:edit:18`) names the one
/// action, pending or in the history, with that sequence number (numbers are never reused in a
/// root); anything else is taken as it is.
pub(crate) fn full_id(store: &Store, typed: Option<&str>) -> anyhow::Result<Option<String>> {
    let Some(typed) = typed else {
        return Ok(None);
    };
    let Ok(seq) = typed.parse::<u64>() else {
        return Ok(Some(typed.to_owned()));
    };
    let numbered =
        |id: &str| id.rsplit(':').next().and_then(|n| n.parse::<u64>().ok()) == Some(seq);
    let mut ids: Vec<String> = store
        .pending_summaries()?
        .into_iter()
        .map(|record| record.id)
        .filter(|id| numbered(id))
        .collect();
    ids.extend(
        store
            .history()?
            .into_iter()
            .map(|entry| entry.action.id)
            .filter(|id| numbered(id)),
    );
    ids.dedup();
    Ok(Some(match ids.as_slice() {
        [one] => one.clone(),
        _ => typed.to_owned(),
    }))
}

/// Serve MCP on stdio until the client disconnects; logs go to stderr.
fn mcp(
    root: &std::path::Path,
    approve: ApprovalMode,
    approve_timeout: ApproveTimeout,
) -> anyhow::Result<Outcome> {
    crate::output::init_stderr_tracing();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    // Run by Claude Code, the server resolves as the session, so it resolves what the
    // session's hooks staged (`resolve hook claude-code`).
    let host_session = std::env::var(CLAUDE_CODE_SESSION_ENV)
        .ok()
        .filter(|session| !session.is_empty())
        .map(|session| Origin::HostSession {
            host: "claude-code".to_owned(),
            session,
        });
    let options = resolve_mcp::ServerOptions {
        approve,
        approve_timeout,
        host_session,
        ..resolve_mcp::ServerOptions::default()
    };
    runtime.block_on(resolve_mcp::serve_stdio_with(root, options))?;
    Ok(Outcome::Success)
}

/// The MCP servers of the workspace configuration `config`, started only when needed; their
/// notices go to stderr.
fn mcp_hub(root: &Path, config: &WorkspaceConfig) -> McpHub {
    McpHub::builder(McpConfig::from_workspace(config), root)
        .notices(|message| note(&format!("note: {message}")))
        .build()
}

/// The MCP servers of the configuration `file` names (by default
/// `<root>/.resolve/config.toml`), read once.
fn configured_hub(store: &Store, file: Option<&Path>) -> anyhow::Result<McpHub> {
    let root = store.workspace().root();
    Ok(mcp_hub(root, &WorkspaceConfig::read(root, file, None)?))
}

/// File tools as a person at the CLI uses them: origin `cli`, no file cap (`--max-files`
/// refuses instead, in [`produce`]).
fn cli_tools(store: &Store) -> FileTools {
    FileTools::new(store.clone(), Origin::Cli).with_max_files(None)
}

/// Print a producer's result (a staged preview's text streamed from the store) and turn it
/// into an outcome.
fn staged(
    store: &Store,
    result: Result<FileToolOutput, resolve_edit::EditError>,
    languages_inferred: bool,
    output: Output,
) -> anyhow::Result<Outcome> {
    let result = match result {
        Ok(FileToolOutput::Staged(staged)) => {
            output.staged_preview(&staged, store.workspace())?;
            let mut after = String::new();
            if languages_inferred {
                after = languages_line(&staged.record.change_set)? + "\n";
            }
            output.human(&format!("\n{after}{}", next_commands(&staged.record.id)));
            return Ok(Outcome::Success);
        }
        Ok(FileToolOutput::Result(result)) => result,
        // Nothing to do is done (exit 0); a language that does not exist is a usage error.
        Err(error @ resolve_edit::EditError::NoChange { .. }) => {
            output.result(&ToolResult::text(error.to_string()));
            return Ok(Outcome::Success);
        }
        Err(error @ resolve_edit::EditError::UnknownLanguage { .. }) => {
            crate::output::failure(output, &error.to_string());
            return Ok(Outcome::Usage);
        }
        Err(error) => ToolResult::error(error.to_string()),
    };
    let result = in_person(result);
    output.result(&result);
    Ok(outcome_of(&result))
}

/// `Languages (no --lang given): markdown 1 file, rust 3 files.`: what each changed file was
/// parsed as, so a rewrite reaching an unexpected language shows at once.
fn languages_line(change_set: &SpooledChangeSet) -> anyhow::Result<String> {
    let mut languages: BTreeMap<String, usize> = BTreeMap::new();
    change_set.for_each_file(
        |error| error,
        |path, _| {
            let lang = language_of_path(Path::new(path)).unwrap_or_else(|| "unknown".to_owned());
            *languages.entry(lang).or_insert(0) += 1;
            Ok(())
        },
    )?;
    let listed: Vec<String> = languages
        .iter()
        .map(|(lang, files)| format!("{lang} {}", count_noun(*files, "file")))
        .collect();
    Ok(format!(
        "Languages (no --lang given): {}.",
        listed.join(", ")
    ))
}

/// Stage the preview of a producer subcommand (`ast-edit`, `edit`, `write`, `patch`) from its
/// typed request, and print it. A preview changing more files than `--max-files` allows is
/// refused whole: nothing is staged and the message gives the real count.
fn produce(
    store: &Store,
    args: &dyn ProducerArgs,
    located: &Located,
    output: Output,
) -> anyhow::Result<Outcome> {
    let request = args.request(located)?;
    let progress = args.progress().map(|text| output.progress(text));
    let tools = cli_tools(store);
    let result = match args.max_files() {
        None => tools.produce(&request),
        Some(cap) => match request.produce(store.workspace(), ProduceLimits { max_files: None }) {
            Ok(Produced::Preview(preview)) if preview.change_set.len() > cap => {
                drop(progress);
                crate::output::failure(output, &too_many_files(preview.change_set.len(), cap));
                return Ok(Outcome::Failed);
            }
            Ok(Produced::Preview(preview)) => tools.stage(*preview),
            Ok(Produced::Nothing(text)) => Ok(FileToolOutput::Result(ToolResult::text(text))),
            Err(error) => Err(error),
        },
    };
    drop(progress);
    staged(store, result, args.infers_languages(), output)
}

/// The refusal of a preview over `--max-files`.
fn too_many_files(count: usize, cap: usize) -> String {
    format!(
        "The rewrite would change {count} files, more than --max-files {cap}; nothing was staged. \
Narrow it with PATH arguments (a directory, a file or a glob) or --lang, or raise --max-files."
    )
}

/// Apply or discard through the core dispatch, over every origin's pending actions, as the
/// person's own decision. An action staged by an MCP server's tool calls that server, started
/// from the configuration (whose `[check] require` holds for the apply).
fn resolve(
    store: &Store,
    args: ResolveArgs,
    id: Option<&str>,
    config: Option<&Path>,
    output: Output,
) -> anyhow::Result<Outcome> {
    let root = store.workspace().root();
    let opened = OpenedWorkspace::with_store(
        store.clone(),
        Origin::Cli,
        WorkspaceConfig::read(root, config, None)?,
    );
    let hub = mcp_hub(root, opened.config());
    let session = opened.session(Arc::new(AutoApprover), Some(Arc::new(hub.clone())));
    let store = opened.store();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    let cancel = CancellationToken::new();
    let progress = match args.action {
        ResolveAction::Apply => output.progress("Applying…"),
        ResolveAction::Discard => output.progress("Discarding…"),
    };
    let outcome = runtime.block_on(async {
        let outcome = session.resolve_with(args.clone(), id, &cancel).await;
        hub.shutdown().await;
        outcome
    });
    drop(progress);
    let result = match outcome {
        // A person at a terminal decided; the facts are those MCP's `resolve` gives.
        Ok(result) => {
            let mut facts = ResolveFacts::from_result(&result, DecidedBy::Person);
            if facts.outcome != ResolveOutcome::NothingPending && facts.pending_id.is_none() {
                facts.pending_id = id.map(str::to_owned);
            }
            result.with_facts(&facts)
        }
        Err(error) => failed_result(store, &error, &args, id),
    };
    let result = in_person(result);
    output.resolve_outcome(&result);
    Ok(outcome_of(&result))
}

/// `result` with its text in the words a person reads ([`in_person_words`]).
fn in_person(result: ToolResult) -> ToolResult {
    ToolResult {
        text: in_person_words(&result.text),
        ..result
    }
}

/// [`Outcome::Failed`] for an error result, [`Outcome::Success`] otherwise.
fn outcome_of(result: &ToolResult) -> Outcome {
    if result.is_error {
        Outcome::Failed
    } else {
        Outcome::Success
    }
}

/// The result of a failed `resolve`: the error's text, with details naming what failed (the
/// action's label and tool, the action and the reason given) so the block shows them. A failed
/// resolve leaves its action pending: the one asked for, or the head. When nothing was pending,
/// the details carry no label.
fn failed_result(
    store: &Store,
    error: &resolve_core::Error,
    args: &ResolveArgs,
    id: Option<&str>,
) -> ToolResult {
    let target = match error {
        resolve_core::Error::NothingToApply | resolve_core::Error::NotPending { .. } => None,
        _ => store.pending_summaries().ok().and_then(|pending| {
            pending
                .into_iter()
                .find(|record| id.is_none_or(|id| record.id == id))
        }),
    };
    let details = base_details(
        args,
        target.as_ref().map(|record| record.source_tool.as_str()),
        target.as_ref().map(|record| record.label.as_str()),
    );
    ToolResult::from_error(error).with_details(Value::Object(details))
}

/// An action's id in a listing.
const ID: Style = Style::new().bold();
/// A passed check, an applied action.
const PASSED: Style = AnsiColor::Green.on_default();
/// A failed check.
const FAILED: Style = AnsiColor::Red.on_default();
/// A discarded or undone action.
const DROPPED: Style = AnsiColor::Yellow.on_default();

fn pending(store: &Store, output: Output) -> anyhow::Result<Outcome> {
    let records = store.pending()?;
    let states = records
        .iter()
        .map(|record| rebase_state::state_of(store, record))
        .collect::<Vec<_>>();
    let json = json!(
        records
            .iter()
            .zip(&states)
            .map(|(record, state)| json!({
                "rebase": rebase_state::state_json(state.as_ref()),
                "id": record.id,
                "label": record.label,
                "origin": record.origin.to_string(),
                "sourceTool": record.source_tool,
                "files": record.change_set.paths(),
                "createdAt": record.created_at,
                "check": record.last_check(),
                "foreign": record.foreign,
            }))
            .collect::<Vec<_>>()
    );
    let now = chrono::Utc::now().timestamp().try_into().unwrap_or(0);
    // Ages and states (which read every file's base) only for a person.
    let human = if output.is_json() {
        String::new()
    } else if records.is_empty() {
        "No pending actions.".to_owned()
    } else {
        records
            .iter()
            .zip(&states)
            .map(|(record, state)| {
                let mark = match record.last_check() {
                    Some(check) if check.passed => output.paint("  ✓ checked", PASSED),
                    Some(_) => output.paint("  ✗ check failed", FAILED),
                    None => String::new(),
                };
                let state = state::pending_state(record, state.as_ref(), now, output);
                let foreign = if record.foreign {
                    format!("\n    {}", foreign_warning(&record.id))
                } else {
                    String::new()
                };
                format!(
                    "{}  {}  [{}]{mark}{state}{foreign}",
                    output.paint(&visible_line(&record.id), ID),
                    visible_line(&record.label),
                    visible_line(&record.origin.to_string())
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    output.data(&json!({"pending": json}), &human);
    Ok(Outcome::Success)
}

fn show(store: &Store, id: Option<&str>, output: Output) -> anyhow::Result<Outcome> {
    let id = match id {
        Some(id) => id.to_owned(),
        None => match store.pending()?.into_iter().next() {
            Some(record) => record.id,
            None => {
                crate::output::failure(
                    output,
                    "No pending action to show. Give an id from `resolve log` to show a resolved one.",
                );
                return Ok(Outcome::Failed);
            }
        },
    };
    let (json, human) = match store.get(&id)? {
        StoredAction::Pending(record) => {
            // What is shown is derived from what applying it writes, never the stored text.
            let check = record
                .last_check()
                .map(|check| format!("\n{}", check_report(check)))
                .unwrap_or_default();
            let foreign = if record.foreign {
                format!("\n{}", foreign_warning(&record.id))
            } else {
                String::new()
            };
            let rebase = rebase_state::state_of(store, &record);
            let human = format!(
                "{} — pending ({}): {}{foreign}{check}{}\n\n{}\n\n{}",
                visible_line(&record.id),
                visible_line(&record.origin.to_string()),
                visible_line(&record.label),
                visible_text(&rebase_state::state_text(rebase.as_ref())),
                visible_text(&with_person_banner(
                    &shown_addressed_preview(store, &record)?,
                    "Files are NOT modified yet."
                )),
                next_commands(&record.id)
            );
            let preview = if output.is_json() {
                shown_preview(store, &record)?
            } else {
                String::new()
            };
            // Hunks (which read every base) only for JSON output.
            let hunks = if output.is_json() {
                amend::hunks_json(store, &record)?
            } else {
                Value::Null
            };
            (
                json!({"id": record.id, "state": "pending", "label": record.label, "origin": record.origin.to_string(), "foreign": record.foreign, "check": record.last_check(), "preview": preview, "files": hunks, "amendments": record.amendments, "rebase": rebase_state::state_json(rebase.as_ref())}),
                human,
            )
        }
        StoredAction::Resolved(entry) => {
            let (preview, _) = shown_history_preview(store, &entry.action)?;
            (
                history_json(&entry, store)?,
                format!(
                    "{}\n\n{}",
                    history_line(&entry, output),
                    visible_text(&with_person_banner(
                        &preview,
                        "The preview as it was staged:"
                    ))
                ),
            )
        }
    };
    output.data(&json, &human);
    Ok(Outcome::Success)
}

fn undo(store: &Store, id: Option<&str>, output: Output) -> anyhow::Result<Outcome> {
    let id = match id {
        Some(id) => id.to_owned(),
        None => match store
            .history()?
            .into_iter()
            .find(|entry| entry.outcome == HistoryOutcome::Applied && !entry.undone)
        {
            Some(entry) => entry.action.id,
            None => {
                // Nothing to do is done, as `Nothing to discard` is.
                let text = "Nothing to undo: no applied change in the history.";
                output.data(&json!({"text": text, "isError": false}), text);
                return Ok(Outcome::Success);
            }
        },
    };
    match store.undo(&id) {
        Ok(entry) => {
            let text = format!(
                "Undid {}: restored {}.",
                entry.action.id,
                listed_files(&entry.applied_files)
            );
            output.data(
                &json!({"text": text, "isError": false, "details": history_json(&entry, store)?}),
                &text,
            );
            Ok(Outcome::Success)
        }
        Err(error) => {
            crate::output::failure(output, &error.to_string());
            Ok(Outcome::Failed)
        }
    }
}

/// How many paths a line names before it summarizes the rest.
const LISTED_PATHS: usize = 5;

/// `a, b, c` for a few files; `909 files: a, b, c, d, e and 904 more (--json lists all)` for
/// many, so one line stays readable.
fn listed_files(paths: &[String]) -> String {
    if paths.len() <= LISTED_PATHS {
        return paths.join(", ");
    }
    format!(
        "{} files: {} and {} more (--json lists all)",
        paths.len(),
        paths[..LISTED_PATHS].join(", "),
        paths.len() - LISTED_PATHS
    )
}

fn log(store: &Store, output: Output) -> anyhow::Result<Outcome> {
    let history = store.history()?;
    let human = if history.is_empty() {
        "No applied or discarded actions yet.".to_owned()
    } else {
        history
            .iter()
            .map(|entry| history_line(entry, output))
            .collect::<Vec<_>>()
            .join("\n")
    };
    // Previews are read from the store only for JSON output.
    let json = if output.is_json() {
        let entries = history
            .iter()
            .map(|entry| history_json(entry, store))
            .collect::<Result<Vec<Value>, _>>()?;
        json!({ "history": entries })
    } else {
        Value::Null
    };
    output.data(&json, &human);
    Ok(Outcome::Success)
}

/// One line of `resolve log`: when it was resolved (local time), id, outcome, label, where it
/// was staged and where resolved, and the reason.
fn history_line(entry: &HistoryRecord, output: Output) -> String {
    let (outcome, style) = match (entry.outcome, entry.undone) {
        (HistoryOutcome::Applied, false) => ("applied", PASSED),
        (HistoryOutcome::Applied, true) => ("applied, undone", DROPPED),
        (HistoryOutcome::Discarded, _) => ("discarded", DROPPED),
    };
    let resolved_by = entry
        .resolved_by
        .as_ref()
        .map_or_else(|| "unknown".to_owned(), ToString::to_string);
    let decided_by = entry
        .decided_by
        .map_or_else(|| "unknown".to_owned(), |decider| decider.to_string());
    let model_reason = entry
        .model_reason
        .as_ref()
        .map_or_else(String::new, |reason| format!(" (model: {reason})"));
    let foreign = if entry.action.foreign {
        "  [FOREIGN: not staged by this user's resolve]"
    } else {
        ""
    };
    let commit = match (&entry.commit, &entry.not_committed) {
        (Some(commit), _) => format!("  [commit {}]", short_id(commit)),
        (None, Some(why)) => format!("  [not committed: {why}]"),
        (None, None) => String::new(),
    };
    // Made visible before it is painted, so the color codes stay codes.
    let rest = format!(
        "{}  (staged: {}, resolved: {resolved_by}, decided: {decided_by}){}{foreign}{commit}  — {}{model_reason}",
        entry.action.label,
        entry.action.origin,
        review_summary(entry),
        entry.reason
    );
    format!(
        "{}  {}  {}  {}",
        local_time(entry.resolved_at),
        output.paint(&visible_line(&entry.action.id), ID),
        output.paint(outcome, style),
        visible_line(&rest)
    )
}

/// The loud line under a foreign pending action in `pending` and `show`.
fn foreign_warning(id: &str) -> String {
    format!(
        "⚠ FOREIGN: not staged by this user's resolve (a cloned repository may have planted it). A model cannot apply it; review it with `resolve show {id}` and apply it only with `resolve apply --id {id} --reason …`.",
        id = visible_line(id)
    )
}

/// What a log line says about a review: ` [kept src/a.rs#1,3; rejected src/a.rs#2; amended
/// src/a.rs; commented src/a.rs:4]`, or nothing when the action was neither picked hunk by hunk nor amended.
fn review_summary(entry: &HistoryRecord) -> String {
    let mut parts = Vec::new();
    for file in entry.review.iter().flat_map(|review| &review.hunks) {
        if file.landed.len() == file.hunks {
            continue;
        }
        let numbers = |hunks: &mut dyn Iterator<Item = usize>| {
            hunks
                .map(|hunk| hunk.to_string())
                .collect::<Vec<_>>()
                .join(",")
        };
        if !file.landed.is_empty() {
            parts.push(format!(
                "kept {}#{}",
                file.path,
                numbers(&mut file.landed.iter().copied())
            ));
        }
        parts.push(format!(
            "rejected {}#{}",
            file.path,
            numbers(&mut file.rejected.iter().map(|rejected| rejected.hunk))
        ));
    }
    let mut amended: Vec<&str> = entry
        .action
        .amendments
        .iter()
        .map(|amendment| amendment.path.as_str())
        .collect();
    amended.dedup();
    if !amended.is_empty() {
        parts.push(format!("amended {}", amended.join(", ")));
    }
    let commented: Vec<String> = entry
        .review
        .iter()
        .flat_map(|review| &review.comments)
        .map(|comment| format!("{}:{}", comment.path, comment.line))
        .collect();
    if !commented.is_empty() {
        parts.push(format!("commented {}", commented.join(", ")));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!(" [{}]", parts.join("; "))
    }
}

/// Unix seconds as local time, `2026-12-03 14:05:09` (the seconds themselves when out of
/// range).
fn local_time(seconds: u64) -> String {
    i64::try_from(seconds)
        .ok()
        .and_then(|seconds| chrono::DateTime::from_timestamp(seconds, 0))
        .map_or_else(
            || seconds.to_string(),
            |utc| {
                utc.with_timezone(&chrono::Local)
                    .format("%Y-%m-%d %H:%M:%S")
                    .to_string()
            },
        )
}

/// The JSON shape of a history entry in `log`, `show` and `undo`.
fn history_json(entry: &HistoryRecord, store: &Store) -> anyhow::Result<Value> {
    let (preview, contents_kept) = shown_history_preview(store, &entry.action)?;
    Ok(json!({
        "id": entry.action.id,
        "state": match entry.outcome { HistoryOutcome::Applied => "applied", HistoryOutcome::Discarded => "discarded" },
        "label": entry.action.label,
        "origin": entry.action.origin.to_string(),
        "reason": entry.reason,
        "extra": entry.extra,
        "appliedFiles": entry.applied_files,
        "droppedFiles": entry.dropped_files,
        "undone": entry.undone,
        "resolvedAt": entry.resolved_at,
        "resolvedBy": entry.resolved_by.as_ref().map(ToString::to_string),
        "review": entry.review,
        "amendments": entry.action.amendments,
        "check": entry.action.last_check(),
        "decidedBy": entry.decided_by.map(|decider| decider.to_string()),
        "modelReason": entry.model_reason,
        "foreign": entry.action.foreign,
        "commit": entry.commit,
        "notCommitted": entry.not_committed,
        "preview": preview,
        "contentsKept": contents_kept,
    }))
}
