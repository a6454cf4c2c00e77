//! Real sources already on the machine (tokio in cargo's registry, Python's standard library),
//! for tests that check a lexer or the prefilter against real code.

use std::path::{Path, PathBuf};

/// The `src/` of the newest tokio 1.x in cargo's registry (`CARGO_HOME`, else `~/.cargo`), if
/// there is one.
pub fn registry_tokio() -> Option<PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".cargo")))?;
    let mut found: Vec<PathBuf> = std::fs::read_dir(home.join("registry/src"))
        .ok()?
        .flatten()
        .flat_map(|index| {
            std::fs::read_dir(index.path())
                .into_iter()
                .flatten()
                .flatten()
        })
        .map(|krate| krate.path())
        .filter(|path| {
            path.file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| name.starts_with("tokio-1."))
                && path.join("src").is_dir()
        })
        .collect();
    found.sort();
    found.pop().map(|krate| krate.join("src"))
}

/// The standard library of the `python3` on `PATH` (CI has one).
pub fn python_stdlib() -> PathBuf {
    let output = std::process::Command::new("python3")
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['stdlib'])",
        ])
        .output()
        .expect("python3 runs");
    assert!(
        output.status.success(),
        "python3 did not name its standard library"
    );
    PathBuf::from(String::from_utf8_lossy(&output.stdout).trim())
}
