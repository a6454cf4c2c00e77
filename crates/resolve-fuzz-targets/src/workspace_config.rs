//! The `workspace_config` target: `.resolve/config.toml`, which may come with a cloned
//! repository.

use std::path::Path;

use resolve_edit::WorkspaceConfig;

/// Parse the input as a workspace's configuration file.
///
/// Input: text (bytes that are not UTF-8 are replaced): the file.
///
/// Invariants: no panic; a refusal names the file; an accepted file's servers have usable names
/// and time limits, and parsing it again gives the same configuration.
pub fn workspace_config(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let path = Path::new("fuzz/config.toml");
    match WorkspaceConfig::parse(&text, path) {
        Ok(config) => {
            for (name, server) in &config.mcp_servers {
                assert!(!name.is_empty(), "an unnamed server");
                assert_ne!(server.tool_timeout_sec, Some(0), "{name}");
            }
            assert_eq!(
                WorkspaceConfig::parse(&text, path).ok(),
                Some(config),
                "parsing is deterministic"
            );
        }
        Err(error) => assert!(error.to_string().contains("fuzz/config.toml"), "{error}"),
    }
}
