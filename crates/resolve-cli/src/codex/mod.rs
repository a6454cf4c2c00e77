//! Codex as a front-end of resolve: `resolve hook codex` stages Codex's own `apply_patch`
//! calls as previews (hook), speaking Codex's hook protocol (protocol), and `resolve setup
//! codex` writes the hook and the `resolve mcp` server into Codex's configuration (setup),
//! with Codex's trust in that hook (hook_trust).

pub(crate) mod hook;
pub(crate) mod hook_trust;
pub(crate) mod protocol;
pub(crate) mod setup;
