//! The npm directory `.ci/run` installs for the browser tests (puppeteer-core and what the web
//! tests bundle), which holds real TypeScript sources too.

use std::path::PathBuf;

/// The npm directory: `RESOLVE_PUPPETEER_DIR`, else `~/.cache/resolve-ci-web` (where `.ci/run`
/// installs it).
pub fn web_npm_dir() -> PathBuf {
    std::env::var_os("RESOLVE_PUPPETEER_DIR").map_or_else(
        || {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
                .join(".cache/resolve-ci-web")
        },
        PathBuf::from,
    )
}

/// `dir` under the npm directory's `node_modules` (`puppeteer-core/src`), or `None` when it is
/// not there: a test that needs it then fails under CI (`CI` set), which installs it, and is
/// skipped loudly elsewhere.
#[expect(clippy::print_stderr, reason = "a skipped test says so")]
pub fn installed_npm_dir(dir: &str) -> Option<PathBuf> {
    let path = web_npm_dir().join("node_modules").join(dir);
    if path.is_dir() {
        return Some(path);
    }
    let message = format!(
        "{} is not there (.ci/run installs it; RESOLVE_PUPPETEER_DIR names another npm directory)",
        path.display()
    );
    assert!(std::env::var_os("CI").is_none(), "{message}");
    eprintln!("SKIPPED: {message}");
    None
}
