//! The bodies of `resolve`'s fuzz targets.
//!
//! Each public function takes the raw bytes of one fuzz input, drives one part of `resolve`
//! with it, and panics when an invariant breaks; returning means the input was handled well.
//! The cargo-fuzz crate in `fuzz/` wraps each one in a `fuzz_target!`, and this crate's tests
//! replay the checked-in corpora and crash reproducers (`fuzz/corpus/<target>/`,
//! `fuzz/regressions/<target>/`) on stable Rust, so every input that once broke something
//! stays a test.
//!
//! | target | what it drives | invariants |
//! |---|---|---|
//! | [`resolve_args`] | `ResolveArgs::from_value`, `ToolSpec::validate` of every tool | no panic; accepted arguments round-trip; refusals name a field |
//! | [`file_tools`] | `FileTools::call(name, args)` in a temp workspace, then apply (or discard) and undo | no panic; nothing outside the workspace changes or leaks; producers write nothing; apply writes exactly the previewed bytes or nothing; undo restores every byte |
//! | [`ast_edit`] | `preview_ast_edit` with a random pattern, rewrite and source | no panic; nothing written; a preview touches only the file, keeps its BOM, and records its base hash |
//! | [`store_readers`] | the store and recovery over a corrupt or truncated journal, pending record, history record or counter | no panic; a corrupt file is reported by name and kept; nothing outside the workspace is touched; an applied action is consumed |
//! | [`apply_patch`] | `parse_patch` and `preview_apply_patch` of a random patch over a one-file workspace | no panic; nothing written; a patch the parser refuses is refused |
//! | [`three_way_merge`] | `merge_lines`, the merge a stale preview is rebased with | no panic; an unchanged side gives the other byte for byte; conflicts quote both files where they say; the result does not depend on which side is which |
//! | [`sse_stream`] | the OpenAI and Anthropic SSE readers | no panic; the outcome does not depend on where the byte stream was split into chunks |
//! | [`hunk_addresses`] | `HunkAddress::parse` and `Selection::only` over typed or sent addresses | no panic, no unbounded range; accepted addresses are well formed and print back to themselves; refusals quote the address |
//! | [`workspace_config`] | `WorkspaceConfig::parse` of a `.resolve/config.toml` | no panic; refusals name the file; accepted servers are usable; parsing is deterministic |
//! | [`claude_hook`] | `ClaudeHookInput::parse`, `file_edit`, and `MultiEdit`/`NotebookEdit` over a file's text (`resolve hook claude-code`'s stdin) | no panic; accepted input round-trips; refusals say what was wrong; edits apply as Claude Code's tools do |
//! | [`codex_hook`] | `parse_codex_pre_tool_use` (`resolve hook codex`'s stdin, and the `apply_patch <<EOF` command) | no panic; the call keeps the input's session and ids; the patch is what the command holds; refusals name the event or tool |
//! | [`reviewer_prompt`] | `ReviewerAnswer::parse`, `reviewer_reason` and the reviewer's note they end in | no panic; words apply or discard, addresses leave out or are quoted in the refusal; the model reads each reason exactly as typed |
//!
//! Input formats are documented on each function; every format is plain text where it can be,
//! so corpus files can be read and written by hand.

#![deny(missing_docs, clippy::print_stdout, clippy::print_stderr)]
#![allow(
    clippy::disallowed_methods,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "fixtures build workspaces (files, symlinks, crafted state) directly, and a fuzz target reports a broken invariant or fixture by panicking"
)]

mod apply_patch;
mod ast_edit;
mod claude_hook;
mod codex_hook;
mod file_tools;
mod fixture;
mod hunk_addresses;
mod resolve_args;
mod reviewer_prompt;
mod sse_stream;
mod store_readers;
mod three_way_merge;
mod workspace_config;

pub use apply_patch::apply_patch;
pub use ast_edit::ast_edit;
pub use claude_hook::claude_hook;
pub use codex_hook::codex_hook;
pub use file_tools::file_tools;
pub use hunk_addresses::hunk_addresses;
pub use resolve_args::resolve_args;
pub use reviewer_prompt::reviewer_prompt;
pub use sse_stream::sse_stream;
pub use store_readers::store_readers;
pub use three_way_merge::three_way_merge;
pub use workspace_config::workspace_config;

/// The names of the fuzz targets, as `fuzz/` and the corpus directories spell them.
pub const TARGETS: &[&str] = &[
    "resolve_args",
    "file_tools",
    "ast_edit",
    "store_readers",
    "sse_stream",
    "apply_patch",
    "three_way_merge",
    "hunk_addresses",
    "workspace_config",
    "claude_hook",
    "codex_hook",
    "reviewer_prompt",
];

/// Run the target called `name` on `data`; `false` when no target has that name.
pub fn run(name: &str, data: &[u8]) -> bool {
    match name {
        "resolve_args" => resolve_args(data),
        "file_tools" => file_tools(data),
        "ast_edit" => ast_edit(data),
        "store_readers" => store_readers(data),
        "sse_stream" => sse_stream(data),
        "apply_patch" => apply_patch(data),
        "three_way_merge" => three_way_merge(data),
        "hunk_addresses" => hunk_addresses(data),
        "workspace_config" => workspace_config(data),
        "claude_hook" => claude_hook(data),
        "codex_hook" => codex_hook(data),
        "reviewer_prompt" => reviewer_prompt(data),
        _ => return false,
    }
    true
}
