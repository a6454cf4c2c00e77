//! Editing text in the reviewer's editor: `$VISUAL`, else `$EDITOR`, else `vi`, run through
//! the shell (so `EDITOR="code --wait"` works) on a temporary file named like the original
//! (so the editor picks its syntax), which is read back when the editor exits.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, bail};

/// The editor command: `$VISUAL`, else `$EDITOR`, else `vi`.
pub fn editor_command() -> String {
    ["VISUAL", "EDITOR"]
        .iter()
        .filter_map(|name| std::env::var(name).ok())
        .find(|value| !value.trim().is_empty())
        .unwrap_or_else(|| "vi".to_owned())
}

/// Let the person edit `text` (the content of `path`, relative to the root) and return what
/// they saved. The editor owns the terminal until it exits; the caller gives it up first.
pub fn edit_text(path: &str, text: &str) -> anyhow::Result<String> {
    edit_text_with(&editor_command(), path, text)
}

/// [`edit_text`] with the editor command given.
fn edit_text_with(editor: &str, path: &str, text: &str) -> anyhow::Result<String> {
    let dir = tempfile::Builder::new()
        .prefix("resolve-amend-")
        .tempdir()
        .context("could not create a temporary directory for the editor")?;
    let name = Path::new(path)
        .file_name()
        .map_or_else(|| "content".into(), |name| name.to_os_string());
    let file = dir.path().join(name);
    resolve_edit::atomic_write(&file, text.as_bytes())
        .with_context(|| format!("could not write `{}` for the editor", file.display()))?;
    let status = Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("sh")
        .arg(&file)
        .status()
        .with_context(|| format!("could not start the editor `{editor}`"))?;
    if !status.success() {
        bail!("the editor `{editor}` exited with {status}; nothing was amended");
    }
    std::fs::read_to_string(&file)
        .with_context(|| format!("could not read back `{}` after editing", file.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_editor_edits_a_file_named_like_the_original_and_its_failure_amends_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("upper.sh");
        std::fs::write(
            &script,
            "#!/bin/sh\ncase \"$1\" in */lib.rs) sed -i 's/foo/bar/' \"$1\";; *) exit 3;; esac\n",
        )
        .unwrap();
        let edited = edit_text_with(&format!("sh {}", script.display()), "src/lib.rs", "foo\n");
        assert_eq!(edited.unwrap(), "bar\n");
        let failed = edit_text_with(&format!("sh {}", script.display()), "src/other.rs", "foo\n");
        assert!(
            failed
                .unwrap_err()
                .to_string()
                .contains("nothing was amended")
        );
    }
}
