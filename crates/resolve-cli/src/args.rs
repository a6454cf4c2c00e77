//! Command-line arguments: the global options and one struct per subcommand.

use std::path::PathBuf;

use anyhow::Context;
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::error::ErrorKind;
use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};

use resolve_edit::{
    ApplyPatchRequest, ApprovalMode, ApproveTimeout, AstEditOp, AstEditRequest, EditRequest,
    HunkAddress, ProducerRequest, WriteRequest,
};

use crate::root::Located;

/// Stage agent edits as previews, review them, and apply or discard them with a reason.
#[derive(Debug, Parser)]
#[command(
    name = "resolve",
    version,
    about = "Stage edits as previews, review them, then apply or discard them with a reason.",
    long_about = "Stage edits as previews, review them, then apply or discard them with a reason.\n\n\
A producer (`ast-edit`, `edit`, `write`, `patch`) computes a change and stores it as a pending action \
under <root>/.resolve/ without touching any file. `resolve apply` writes exactly the previewed \
bytes, all files or none, after checking that no file changed since the preview; \
`resolve discard` drops it. Both record the reason in the history (`resolve log`).",
    after_help = "Exit status: 0 done or nothing to do (`No replacements made`, `Nothing to discard`), 1 the action failed, 2 usage error (an unknown flag or value, an empty --reason, an unknown --lang, a malformed hunk address)."
)]
pub struct Cli {
    /// Global options.
    #[command(flatten)]
    pub global: GlobalArgs,
    /// The subcommand.
    #[command(subcommand)]
    pub command: Command,
}

impl Cli {
    /// Checks clap cannot express (an option that fits only one `--provider`); a failure is a
    /// usage error.
    pub(crate) fn check(&self) -> Result<(), clap::Error> {
        match &self.command {
            Command::Agent(agent) => agent.check(),
            Command::AstEdit(_)
            | Command::Edit(_)
            | Command::Write(_)
            | Command::Patch(_)
            | Command::Pending
            | Command::Show(_)
            | Command::Check(_)
            | Command::Apply(_)
            | Command::Discard(_)
            | Command::Undo(_)
            | Command::Amend(_)
            | Command::Log
            | Command::Gc(_)
            | Command::Review(_)
            | Command::Mcp(_)
            | Command::Hook(_)
            | Command::Setup(_)
            | Command::Trust(_) => Ok(()),
        }
    }
}

/// Options accepted before or after any subcommand.
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// Workspace root; every path must stay inside it and state lives in <ROOT>/.resolve/. By
    /// default the nearest directory upward holding .resolve/, else the git work tree's top,
    /// else the current directory.
    #[arg(long, global = true, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Print one JSON object per result on stdout, and nothing else there.
    #[arg(long, global = true)]
    pub json: bool,
    /// When to color output (NO_COLOR turns `auto` off).
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub color: ColorChoice,
}

/// When to use color.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// Color when stdout is a terminal and NO_COLOR is unset.
    Auto,
    /// Always color.
    Always,
    /// Never color.
    Never,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Stage a structural rewrite (ast-grep pattern → rewrite) as a preview.
    #[command(name = "ast-edit")]
    AstEdit(AstEditArgs),
    /// Stage an exact text replacement in one file as a preview.
    Edit(EditArgs),
    /// Stage creating or overwriting one file as a preview.
    Write(WriteArgs),
    /// Stage a Codex-format patch (`*** Begin Patch` … `*** End Patch`) as one preview.
    Patch(PatchArgs),
    /// List pending actions, head (the one `apply` acts on) first.
    Pending,
    /// Print a preview: a pending action's, or one from the history.
    Show(ShowArgs),
    /// Run a command (the project's tests) against the workspace with a preview applied, then
    /// put every file back; the outcome is kept with the pending action.
    #[command(
        long_about = "Run a command (the project's tests) against the workspace with a pending preview applied, \
then put every file back exactly as it was; the outcome (command, exit status, duration, the last 200 lines \
of output) is kept with the pending action and shown by `resolve pending`, `resolve show` and --json.\n\n\
Without `-- CMD ARGS…`, runs `command` of the `[check]` table in <ROOT>/.resolve/config.toml \
(e.g. command = [\"cargo\", \"test\", \"--quiet\"], timeout_sec = 600), once you trusted that file with \
`resolve trust` (a command given after `--` needs no trust). The command's output streams to \
the terminal while it runs (to stderr with --json). Exit status: 0 when the check passed, 1 when it \
failed or could not run.\n\n\
In place (the default): under the workspace lock, the preview is applied as a trial, the command runs in \
the root, and the trial is rolled back from its journal. Best for incremental builds, which reuse their \
caches. Other resolve commands wait meanwhile; if this process is killed, the next resolve command rolls \
the trial back and says so. Files of the preview the command changed are put back to their base anyway \
(and named); files outside the preview stay as the command left them.\n\n\
--scratch: the workspace is copied to a temporary directory (a clone where the file system can, a copy \
otherwise; .git and ignored paths left out unless --with-ignored), the preview is written there, and the \
command runs there. The workspace is never touched: use it while an editor or a file watcher is running, \
or when a build must not see the change. Slower: no build cache unless --with-ignored copies it."
    )]
    Check(CheckArgs),
    /// Apply the head pending action (or --id ID): writes exactly the previewed bytes.
    Apply(ApplyArgs),
    /// Discard the head pending action (or --id ID) without touching any file.
    Discard(DiscardArgs),
    /// Revert an applied change, if its files are untouched since.
    Undo(UndoArgs),
    /// Replace the previewed new content of one file of a pending action with your version.
    ///
    /// Opens the content in $VISUAL (or $EDITOR), or takes it from --from FILE. The action
    /// keeps its id and base hashes; its preview shows the new diff, and it remembers the
    /// amendment as the diff from the model's version to yours (which the model that staged it
    /// is told). With --take current|preview, a file whose preview conflicts with changes made
    /// since is settled instead: the merge onto the file as it is now, each conflicting hunk
    /// taking that side, becomes its content, and the action applies as staged.
    Amend(AmendArgs),
    /// History of applied and discarded actions, with their reasons, newest first.
    Log,
    /// Remove old history and the stored contents only it needed.
    ///
    /// An entry goes when it is older than --keep-days and not among the newest
    /// --keep-entries; never a pending action, nor an apply that can still be undone (every
    /// file it wrote still holds what it wrote). Safe to interrupt: what is still needed is
    /// removed last, never first.
    Gc(GcArgs),
    /// Review the pending actions full-screen, hunk by hunk: keep or reject hunks (with
    /// reasons), edit a file, then apply what is kept or discard.
    #[command(
        long_about = "Review the pending actions full-screen, hunk by hunk: keep or reject hunks (with \
reasons), edit a file, then apply what is kept or discard.\n\n\
Opens on the head action at its first hunk. Keys: j/↓ k/↑ next/previous hunk, J/K next/previous \
file, space toggle the hunk kept/rejected, r reject with a reason, R/A reject/keep every hunk of \
the file, e edit the file's new content in $VISUAL/$EDITOR, a apply what is kept (asks for the \
reason), d discard (asks for the reason), n/p next/previous action, ? help, q quit without \
changes. Needs a terminal; without one, use `resolve apply --only PATH#N`.\n\n\
--web serves the same review to a browser instead: on 127.0.0.1 only, at a URL with a random \
token that every request must carry (--port N, by default a free one; --open opens the browser)."
    )]
    Review(ReviewArgs),
    /// Serve the tools and `resolve` to an MCP client over stdin/stdout.
    #[command(
        long_about = "Serve the tools and `resolve` to an MCP client over stdin/stdout.\n\n\
The client gets `ast_edit`, `edit`, `write` and `apply_patch` (they stage a preview and change no file), \
`read`, `ls`, `grep`, and `resolve` (apply or discard the connection's most recent preview, \
with a reason). While a preview is pending, every tool result ends with a reminder to call \
`resolve`. Each connection stages under its own origin `mcp:<id>` (run by Claude Code, under \
its session's, `claude-code:<session id>`, so it resolves what `resolve hook claude-code` staged \
in that session); `resolve pending` and `resolve apply` in a terminal see and resolve those \
previews too. A connection's pending \
previews are resources of that connection only (resolve://pending/<id>); the workspace history \
is a resource of every connection (resolve://history/<id>).\n\n\
--approve ask asks a person through MCP elicitation before each apply the model asks for (a \
client that cannot ask gets no apply: a person approves in a terminal); --approve review never \
applies on the model's word.\n\n\
Stdout carries only MCP messages; logs go to stderr (set RESOLVE_LOG, e.g. RESOLVE_LOG=debug)."
    )]
    Mcp(McpArgs),
    /// Run a coding agent on TASK against an OpenAI-compatible or Anthropic endpoint.
    ///
    /// The model reads and searches the workspace and stages edits as previews; each preview
    /// lands only when the model calls `resolve` (with `--approve ask` or `review`, after you agree).
    /// Previews left pending by an earlier run are picked up by the next one. With `--plan`,
    /// the model first writes a plan for approval and implements it once approved.
    ///
    /// The last line on stderr reports the run's usage: model calls (how many forced
    /// `resolve`), input tokens (uncached and cached, as the server reports them) and output
    /// tokens, then the same for the forced calls alone, e.g. `usage: 4 model calls (1
    /// forced), 1000 input tokens (420 uncached, 580 cached), 100 output tokens; forced calls:
    /// 300 input tokens (100 uncached, 200 cached), 30 output tokens`. With `--json` the run
    /// also ends with a `usage` event.
    Agent(AgentArgs),
    /// Trust the workspace's .resolve/config.toml, as it is now, to run the commands it names.
    #[command(
        long_about = "Trust the workspace's .resolve/config.toml, as it is now, to run the commands it names.\n\n\
A repository's .resolve/config.toml may come from a clone, so resolve runs no command it names \
(`[check] command`, the `[mcp_servers.*]` servers) until you trust that exact file: this prints the \
commands it would run and records the file's path and SHA-256 in trusted.json under \
~/.config/resolve, outside every workspace. Any change to the file \
makes it untrusted again: read it, then trust it again. Settings that run nothing (`timeout_sec`, \
`require`) apply without trust.\n\n\
A file you name with --config on another command is yours and needs no trust, unless it is some \
workspace's own .resolve/config.toml. A command you give after `--` (`resolve check -- CMD`) \
needs none either.\n\n\
--list shows every trusted file and whether it is still as trusted; --remove forgets this file."
    )]
    Trust(TrustArgs),
    /// Answer a host's PreToolUse hook: its own file edits become staged previews.
    #[command(
        long_about = "Answer a host's PreToolUse hook: its own file edits become staged previews.\n\n\
Reads the hook's JSON on stdin (`resolve setup claude-code` registers this command). Claude Code's \
Edit, Write, MultiEdit and NotebookEdit are staged as pending actions of the session \
(`claude-code:<session id>`) and the host's own write never runs: with --approve stage the model \
is told the pending id and resolves it with the `resolve` tool of the session's `resolve mcp`; \
with review the hook waits for a person's `resolve review`/`apply`/`discard` (up to \
--approve-timeout) and lands exactly what they approved; with auto it lands at once through \
resolve (history, `resolve undo`). In stage and review, Bash commands that visibly write files \
inside the root (`sed -i`, `>` redirects, `tee`, `cp`/`mv`, `python -c` writing files) are \
refused unless --shell-writes allow.\n\n\
Fails closed: when it cannot stage an edit (malformed input, a path outside the root, a binary \
file, an internal error) it exits 2 with the reason on stderr, which blocks the tool call; it \
never exits with another non-zero code.\n\n\
For codex: Codex's `apply_patch` (which it runs as a shell heredoc) is staged as one preview of \
every file it touches, and Codex is told not to run it; only --approve stage is available yet."
    )]
    Hook(HookArgs),
    /// Make a project (or, with --user, every project) use resolve in a host.
    #[command(
        long_about = "Make a project (or, with --user, every project) use resolve in a host.\n\n\
For claude-code: adds the `resolve hook claude-code` PreToolUse hook, the permission for the \
`resolve` MCP server's tools and its enabling to <ROOT>/.claude/settings.json, and the \
`resolve mcp` server to <ROOT>/.mcp.json (--user: ~/.claude/settings.json and ~/.claude.json), \
merging with what is there. Running it again changes nothing (or only the mode); --dry-run \
prints the change as a diff and writes nothing; --remove takes out exactly what it adds.\n\n\
For codex: adds the `resolve hook codex` PreToolUse hook (with Codex's trust entry for exactly \
that hook) and the `resolve mcp` server to <ROOT>/.codex/config.toml (--user: \
$CODEX_HOME/config.toml, by default ~/.codex/config.toml), keeping comments and order."
    )]
    Setup(SetupArgs),
}

/// The hosts `resolve hook` and `resolve setup` know.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HostChoice {
    /// Claude Code (`claude`).
    ClaudeCode,
    /// Codex (`codex`): its `apply_patch`, which it runs as a shell heredoc.
    Codex,
}

/// How a hook decides the edits it stages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HookApprovalChoice {
    /// Nothing is written; the model (or a person) resolves the staged edit later.
    Stage,
    /// The hook waits for a person's decision in `resolve review` or `resolve apply`/`discard`.
    Review,
    /// The edit lands at once through resolve, with history and undo.
    Auto,
}

impl From<HookApprovalChoice> for resolve_edit::HookApproval {
    fn from(choice: HookApprovalChoice) -> Self {
        match choice {
            HookApprovalChoice::Stage => Self::Stage,
            HookApprovalChoice::Review => Self::Review,
            HookApprovalChoice::Auto => Self::Auto,
        }
    }
}

/// Whether the hook's shell guard refuses commands that visibly write files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ShellWritesChoice {
    /// Refuse them in stage and review modes.
    Refuse,
    /// Let them run.
    Allow,
}

/// `resolve hook`.
#[derive(Debug, Args)]
pub struct HookArgs {
    /// The host whose hook JSON arrives on stdin.
    #[arg(value_enum)]
    pub host: HostChoice,
    /// How staged edits are decided.
    #[arg(long, value_enum, default_value_t = HookApprovalChoice::Stage, value_name = "MODE")]
    pub approve: HookApprovalChoice,
    /// Whether shell commands that visibly write files are refused (stage and review modes).
    #[arg(long, value_enum, default_value_t = ShellWritesChoice::Refuse, value_name = "WHAT")]
    pub shell_writes: ShellWritesChoice,
    /// How long `--approve review` waits for a person (`90s`, `10m`, `1h`; `0` waits
    /// forever); then the edit stays staged.
    #[arg(long, value_name = "DURATION", default_value = "10m")]
    pub approve_timeout: ApproveTimeout,
}

/// `resolve setup`.
#[derive(Debug, Args)]
pub struct SetupArgs {
    /// The host to set up.
    #[arg(value_enum)]
    pub host: HostChoice,
    /// How the hook decides staged edits.
    #[arg(long, value_enum, default_value_t = HookApprovalChoice::Stage, value_name = "MODE")]
    pub approve: HookApprovalChoice,
    /// Write the user's settings (~/.claude/settings.json, ~/.claude.json) instead of the
    /// project's.
    #[arg(long)]
    pub user: bool,
    /// Print the change as a diff; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Take out what setup adds instead.
    #[arg(long)]
    pub remove: bool,
}

/// `resolve trust`.
#[derive(Debug, Args)]
pub struct TrustArgs {
    /// The configuration to trust (or forget); by default <ROOT>/.resolve/config.toml.
    #[arg(long, value_name = "FILE", conflicts_with = "list")]
    pub config: Option<PathBuf>,
    /// List the trusted files instead, each as still trusted, changed or missing.
    #[arg(long, conflicts_with = "remove")]
    pub list: bool,
    /// Forget the file's trust instead: its commands stop running until it is trusted again.
    #[arg(long)]
    pub remove: bool,
}

/// Which wire format the model server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProviderChoice {
    /// OpenAI Chat Completions and compatible servers (llama.cpp, vLLM, Ollama, …).
    Openai,
    /// Anthropic Messages.
    Anthropic,
}

/// How hard an OpenAI-compatible reasoning model thinks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReasoningEffortChoice {
    /// `"reasoning_effort": "low"`.
    Low,
    /// `"reasoning_effort": "medium"`.
    Medium,
    /// `"reasoning_effort": "high"`.
    High,
}

/// Options of `resolve mcp`.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// Who approves an apply the model asks for.
    #[arg(long, value_parser = approval_modes(&MCP_APPROVE), default_value = "auto", value_name = "MODE")]
    pub approve: ApprovalMode,
    /// How long a person has to decide an apply the model asks for (`--approve ask` or
    /// `review`): past it nothing is written, the action stays pending and the model reads that
    /// no decision came in time. A whole number with a unit (`90s`, `10m`, `1h`); `0` waits
    /// forever.
    #[arg(long, value_name = "DURATION", default_value = "10m")]
    pub approve_timeout: ApproveTimeout,
}

/// The values of `resolve mcp --approve`, each with its help.
const MCP_APPROVE: [(ApprovalMode, &str); 3] = [
    (
        ApprovalMode::Auto,
        "The model's `resolve` applies at once (the host's own permission prompt is the gate)",
    ),
    (
        ApprovalMode::Ask,
        "Ask the person through the client (MCP elicitation); without it, nothing is applied and a person approves in a terminal",
    ),
    (
        ApprovalMode::Review,
        "Never apply on the model's word: a person reviews in a terminal (`resolve review`)",
    ),
];

/// The values of `resolve agent --approve`, each with its help.
const AGENT_APPROVE: [(ApprovalMode, &str); 3] = [
    (ApprovalMode::Auto, "The model's `resolve` applies at once"),
    (
        ApprovalMode::Ask,
        "Show the diff and ask; a discard asks for a reason, which the model receives",
    ),
    (
        ApprovalMode::Review,
        "Review each apply hunk by hunk in the terminal review (a line prompt without a terminal); what you leave out and why reaches the model",
    ),
];

/// The values of `resolve agent --plan-approve`, each with its help.
const PLAN_APPROVE: [(ApprovalMode, &str); 2] = [
    (
        ApprovalMode::Auto,
        "Approve at once; the run goes on to implement the plan",
    ),
    (
        ApprovalMode::Ask,
        "Show the plan and ask: approve, or refine with feedback the model receives (plan mode stays on until a plan is approved)",
    ),
];

/// A parser of the approval modes `values` offers (each with its help), into [`ApprovalMode`].
fn approval_modes(
    values: &[(ApprovalMode, &'static str)],
) -> impl TypedValueParser<Value = ApprovalMode> {
    PossibleValuesParser::new(
        values
            .iter()
            .map(|(mode, help)| PossibleValue::new(mode.as_str()).help(*help)),
    )
    // Only the names offered get here, and each is a mode.
    .map(|name| name.parse::<ApprovalMode>().unwrap_or_default())
}

/// `resolve agent`.
#[derive(Debug, Args)]
pub struct AgentArgs {
    /// Wire format of the model server.
    #[arg(long, value_enum, default_value_t = ProviderChoice::Openai)]
    pub provider: ProviderChoice,
    /// Base URL as the official SDKs take it: OpenAI-compatible bases include `/v1`
    /// (http://127.0.0.1:8080/v1); Anthropic bases do not (https://api.anthropic.com).
    /// By default the provider's official URL.
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Model name. By default `gpt-4.1-mini` (openai) or `claude-sonnet-4-5` (anthropic).
    #[arg(long, value_name = "M")]
    pub model: Option<String>,
    /// Environment variable holding the API key. By default OPENAI_API_KEY or
    /// ANTHROPIC_API_KEY; without a key, requests go unauthenticated (fine for local servers).
    #[arg(long, value_name = "VAR")]
    pub api_key_env: Option<String>,
    /// Stop after N model calls (exit 1). By default there is no limit.
    #[arg(long, value_name = "N")]
    pub max_turns: Option<u32>,
    /// MCP servers whose tools the model may use, as `[mcp_servers.NAME]` tables (command,
    /// args, env). By default <ROOT>/.resolve/config.toml, when it exists; its commands (and
    /// `[check] command`) run only once trusted (`resolve trust`), else the run stops before
    /// anything starts. A file named here is yours and needs no trust.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Who approves an apply the model asks for.
    #[arg(long, value_parser = approval_modes(&AGENT_APPROVE), default_value = "auto", value_name = "MODE")]
    pub approve: ApprovalMode,
    /// How long a person has to decide an apply the model asks for (`--approve ask` or
    /// `review`): past it nothing is written, the action stays pending and the model reads that
    /// no decision came in time. A whole number with a unit (`90s`, `10m`, `1h`); `0` waits
    /// forever.
    #[arg(long, value_name = "DURATION", default_value = "10m")]
    pub approve_timeout: ApproveTimeout,
    /// Start in plan mode: until a plan is approved, the model can only look around (`read`,
    /// `ls`, `grep`) and write plan files under <ROOT>/.resolve/plans/ (written at once, not
    /// staged; any other path is refused); `ast_edit` and `edit` are not offered. It submits
    /// the plan with `resolve` (action "apply", `extra.title`); once the plan is approved, every
    /// tool is offered and the run goes on to implement it. Exits 1 if the run ends without an
    /// approved plan.
    #[arg(long)]
    pub plan: bool,
    /// Who approves the plan in plan mode. By default `ask` when standard input is a terminal,
    /// otherwise `auto`.
    #[arg(long, value_parser = approval_modes(&PLAN_APPROVE), value_name = "MODE", requires = "plan")]
    pub plan_approve: Option<ApprovalMode>,
    /// Anthropic extended thinking with a budget of N tokens (at least 1024; with
    /// `--provider anthropic` only): requests carry `"thinking": {"type": "enabled",
    /// "budget_tokens": N}`, and thinking blocks are kept and sent back as the API requires.
    /// The API forces no tool while thinking, so a declined preview gets the reminder alone.
    /// By default thinking is off.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1024..))]
    pub thinking_budget: Option<u32>,
    /// Send `reasoning_effort` to an OpenAI-compatible reasoning model (with
    /// `--provider openai` only). By default none is sent.
    #[arg(long, value_enum, value_name = "LEVEL")]
    pub reasoning_effort: Option<ReasoningEffortChoice>,
    /// What the agent should do.
    #[arg(value_name = "TASK")]
    pub task: String,
}

impl AgentArgs {
    /// `--thinking-budget` is Anthropic's, `--reasoning-effort` OpenAI's.
    fn check(&self) -> Result<(), clap::Error> {
        let message = match self.provider {
            ProviderChoice::Openai if self.thinking_budget.is_some() => {
                "`--thinking-budget` needs `--provider anthropic`; OpenAI-compatible servers take `--reasoning-effort LEVEL`"
            }
            ProviderChoice::Anthropic if self.reasoning_effort.is_some() => {
                "`--reasoning-effort` is for OpenAI-compatible servers; with `--provider anthropic` use `--thinking-budget N`"
            }
            ProviderChoice::Openai | ProviderChoice::Anthropic => return Ok(()),
        };
        Err(Cli::command().error(ErrorKind::ArgumentConflict, message))
    }
}

/// A `--reason`: every decision needs one, so an empty (or blank) reason is a usage error.
fn reason_given(text: &str) -> Result<String, String> {
    if text.trim().is_empty() {
        Err("give a reason: every apply and discard is recorded with why".to_owned())
    } else {
        Ok(text.to_owned())
    }
}

/// A `--only`/`--except` entry, `PATH` or `PATH#N,…`; a malformed one is a usage error.
fn hunk_address(text: &str) -> Result<String, String> {
    HunkAddress::parse(text)
        .map(|_| text.to_owned())
        .map_err(|error| error.to_string())
}

/// `resolve ast-edit`.
#[derive(Debug, Args)]
pub struct AstEditArgs {
    /// ast-grep pattern to match, e.g. '$X.unwrap()'.
    #[arg(short = 'p', long, value_name = "PATTERN")]
    pub pattern: String,
    /// Replacement; metavariables of the pattern may be used, e.g. '$X.expect("todo")'.
    #[arg(short = 'r', long, value_name = "REWRITE")]
    pub rewrite: String,
    /// Language of the files (rust, python, typescript, …); by default from each file's extension.
    #[arg(long, value_name = "L")]
    pub lang: Option<String>,
    /// Refuse to stage a preview touching more than N files. By default there is no cap.
    #[arg(long, value_name = "N")]
    pub max_files: Option<usize>,
    /// Files, directories or globs to rewrite, relative to the current directory (to the root
    /// when run outside it). By default the current directory.
    #[arg(value_name = "PATH")]
    pub paths: Vec<String>,
}

/// `resolve edit`.
#[derive(Debug, Args)]
pub struct EditArgs {
    /// The file to edit, relative to the current directory (to the root when run outside it).
    #[arg(value_name = "PATH")]
    pub path: String,
    /// The exact text to replace; it must occur once unless --all is given.
    #[arg(long = "old", value_name = "TEXT", allow_hyphen_values = true)]
    pub old_text: String,
    /// The replacement text.
    #[arg(long = "new", value_name = "TEXT", allow_hyphen_values = true)]
    pub new_text: String,
    /// Replace every occurrence.
    #[arg(long)]
    pub all: bool,
}

/// `resolve write`.
#[derive(Debug, Args)]
pub struct WriteArgs {
    /// The file to create or overwrite, relative to the current directory (to the root when run
    /// outside it).
    #[arg(value_name = "PATH")]
    pub path: String,
    /// The new content.
    #[arg(
        long,
        value_name = "TEXT",
        allow_hyphen_values = true,
        conflicts_with = "from",
        required_unless_present = "from"
    )]
    pub content: Option<String>,
    /// Read the new content from FILE (`-` for standard input).
    #[arg(long, value_name = "FILE")]
    pub from: Option<PathBuf>,
}

/// The arguments of a subcommand that stages a producer's preview: they become the producer's
/// typed request, the same the model's JSON arguments become.
pub trait ProducerArgs {
    /// The typed request (reading any file or standard input the arguments name), with the
    /// paths typed read against `located`.
    fn request(&self, located: &Located) -> anyhow::Result<ProducerRequest>;

    /// The cap on files one preview may change. By default there is none.
    fn max_files(&self) -> Option<usize> {
        None
    }

    /// Whether the producer infers each file's language (`ast-edit` without `--lang`), so the
    /// languages it rewrote are worth naming. By default not.
    fn infers_languages(&self) -> bool {
        false
    }

    /// What to show while the producer runs. By default nothing.
    fn progress(&self) -> Option<&'static str> {
        None
    }
}

impl ProducerArgs for AstEditArgs {
    fn request(&self, located: &Located) -> anyhow::Result<ProducerRequest> {
        let paths = if self.paths.is_empty() {
            vec![located.path(".")]
        } else {
            self.paths.iter().map(|path| located.path(path)).collect()
        };
        Ok(AstEditRequest {
            ops: vec![AstEditOp {
                pat: self.pattern.clone(),
                out: self.rewrite.clone(),
            }],
            paths,
            lang: self.lang.clone(),
        }
        .into())
    }

    fn max_files(&self) -> Option<usize> {
        self.max_files
    }

    fn infers_languages(&self) -> bool {
        self.lang.is_none()
    }

    fn progress(&self) -> Option<&'static str> {
        Some("Scanning files…")
    }
}

impl ProducerArgs for EditArgs {
    fn request(&self, located: &Located) -> anyhow::Result<ProducerRequest> {
        Ok(EditRequest {
            path: located.path(&self.path),
            old_text: self.old_text.clone(),
            new_text: self.new_text.clone(),
            replace_all: self.all,
        }
        .into())
    }
}

impl ProducerArgs for WriteArgs {
    fn request(&self, located: &Located) -> anyhow::Result<ProducerRequest> {
        let content = match (&self.content, &self.from) {
            (Some(content), _) => content.clone(),
            (None, Some(from)) if from.as_os_str() == "-" => {
                std::io::read_to_string(std::io::stdin())
                    .context("could not read the content from standard input")?
            }
            (None, Some(from)) => std::fs::read_to_string(from)
                .with_context(|| format!("could not read `{}`", from.display()))?,
            (None, None) => anyhow::bail!("give the content with --content TEXT or --from FILE"),
        };
        Ok(WriteRequest {
            path: located.path(&self.path),
            content,
        }
        .into())
    }
}

impl ProducerArgs for PatchArgs {
    fn request(&self, _located: &Located) -> anyhow::Result<ProducerRequest> {
        let input = match &self.file {
            Some(file) if file.as_os_str() != "-" => std::fs::read_to_string(file)
                .with_context(|| format!("could not read `{}`", file.display()))?,
            Some(_) | None => std::io::read_to_string(std::io::stdin())
                .context("could not read the patch from standard input")?,
        };
        Ok(ApplyPatchRequest { input }.into())
    }
}

/// `resolve patch`.
#[derive(Debug, Args)]
pub struct PatchArgs {
    /// The patch file (`-` or nothing: standard input). Paths in it are relative to the root,
    /// or absolute inside it.
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
}

/// `resolve show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// Pending or historical id (the number alone will do: 18); by default the head pending
    /// action.
    #[arg(value_name = "ID")]
    pub id: Option<String>,
}

/// `resolve apply`.
#[derive(Debug, Args)]
pub struct ApplyArgs {
    /// Why the change should land; recorded in the history. Must not be empty.
    #[arg(long, value_name = "TEXT", value_parser = reason_given)]
    pub reason: String,
    /// Apply this pending action instead of the head (the number alone will do: 18).
    #[arg(long, value_name = "ID")]
    pub id: Option<String>,
    /// Apply only these files and hunks of the preview (`src/a.rs`, `src/a.rs#1,3`, as `resolve
    /// show` numbers them); the rest are dropped with it.
    #[arg(long, value_name = "PATH[#N,…]", num_args = 1.., value_parser = hunk_address)]
    pub only: Vec<String>,
    /// Apply all but these files and hunks of the preview (`src/a.rs#2`, `src/b.rs`).
    #[arg(
        long,
        value_name = "PATH[#N,…]",
        num_args = 1..,
        conflicts_with = "only",
        value_parser = hunk_address
    )]
    pub except: Vec<String>,
    /// Refuse to apply unless the preview's last check (`resolve check`) passed. `[check]
    /// require = true` in the configuration makes this the default for every apply, the
    /// model's included.
    #[arg(long)]
    pub require_check: bool,
    /// Refuse any file that changed since the preview, instead of rebasing the preview onto
    /// it (a three-way merge by lines, as `git merge-file` makes it).
    #[arg(long)]
    pub no_rebase: bool,
    /// Make the applied change one git commit: exactly the action's files, its label as the
    /// subject, the reason as the body (and the hunks left out, with their reasons), and
    /// `Resolve-Id`, `Resolve-Origin`, `Resolve-Decided-By` trailers. What you staged stays
    /// staged and out of the commit (it is built from a temporary index); the pre-commit and
    /// commit-msg hooks run. Outside a git repository, or when a hook fails, the change still
    /// lands and the output says why nothing was committed. `commit = true` in
    /// .resolve/config.toml makes this the default (once the file is trusted).
    #[arg(long)]
    pub commit: bool,
    /// Where the MCP servers are configured, for actions staged by their tools (and the
    /// `[check]` table). By default <ROOT>/.resolve/config.toml, whose commands run only once
    /// trusted (`resolve trust`); a file named here is yours and needs no trust.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

/// `resolve check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The pending action to check (the number alone will do: 18); by default the head.
    #[arg(value_name = "ID")]
    pub id: Option<String>,
    /// Run in a temporary copy of the workspace instead of in place; the workspace is never
    /// touched.
    #[arg(long)]
    pub scratch: bool,
    /// With --scratch: copy ignored paths too (build caches, node_modules, …).
    #[arg(long, requires = "scratch")]
    pub with_ignored: bool,
    /// Seconds the command may run before it (and all it started) is killed. By default
    /// `[check] timeout_sec`, else 600.
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout: Option<u64>,
    /// The configuration with the `[check]` table. By default <ROOT>/.resolve/config.toml,
    /// whose command runs only once trusted (`resolve trust`); a file named here is yours.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The command and its arguments, after `--` (run directly, not through a shell; needs no
    /// trust). By default `[check] command`.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

/// `resolve discard`.
#[derive(Debug, Args)]
pub struct DiscardArgs {
    /// Why the change is dropped; recorded in the history. Must not be empty.
    #[arg(long, value_name = "TEXT", value_parser = reason_given)]
    pub reason: String,
    /// Discard this pending action instead of the head (the number alone will do: 18).
    #[arg(long, value_name = "ID")]
    pub id: Option<String>,
    /// Where the MCP servers are configured, for actions staged by their tools. By default
    /// <ROOT>/.resolve/config.toml.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

/// `resolve review`.
#[derive(Debug, Args)]
pub struct ReviewArgs {
    /// Where the MCP servers are configured, for actions staged by their tools. By default
    /// <ROOT>/.resolve/config.toml.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Review in the browser instead: serve the review on 127.0.0.1 and print its URL (with a
    /// random token the server asks of every request).
    #[arg(long)]
    pub web: bool,
    /// The port to serve on (with --web); by default a free one.
    #[arg(long, value_name = "N", requires = "web")]
    pub port: Option<u16>,
    /// Open the page in the default browser (with --web).
    #[arg(long, requires = "web")]
    pub open: bool,
}

/// `resolve amend`.
#[derive(Debug, Args)]
pub struct AmendArgs {
    /// `[ID] [PATH]`: the pending action (by default the head) and the file to amend (may be
    /// left out when the action changes one file). A first value that is not a pending id
    /// (`pending-action:…`) is taken as the PATH.
    #[arg(value_name = "ID|PATH", num_args = 0..=2)]
    pub targets: Vec<String>,
    /// Take the new content from FILE (`-` for standard input) instead of an editor.
    #[arg(long, value_name = "FILE", conflicts_with = "take")]
    pub from: Option<PathBuf>,
    /// Settle a file that conflicts with changes made since the preview: merge the preview
    /// onto the file as it is now, each conflicting hunk taking the current file's lines or
    /// the preview's.
    #[arg(long, value_enum, value_name = "SIDE")]
    pub take: Option<TakeSide>,
}

/// The side `resolve amend --take` gives each conflicting hunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TakeSide {
    /// The file's lines as they are now.
    Current,
    /// The preview's lines.
    Preview,
}

/// `resolve gc`.
#[derive(Debug, Args)]
pub struct GcArgs {
    /// Say what would be removed and how much it would free; remove nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Keep every entry resolved within this many days [default: `[gc] keep_days` of
    /// .resolve/config.toml, else 30].
    #[arg(long, value_name = "DAYS")]
    pub keep_days: Option<u64>,
    /// Keep the newest this many entries, whatever their age [default: `[gc] keep_entries` of
    /// .resolve/config.toml, else 1000].
    #[arg(long, value_name = "N")]
    pub keep_entries: Option<usize>,
}

/// `resolve undo`.
#[derive(Debug, Args)]
pub struct UndoArgs {
    /// The applied action to revert (the number alone will do: 18); by default the most recent
    /// applied one.
    #[arg(value_name = "ID")]
    pub id: Option<String>,
}
