//! Editing text in the person's editor: `$VISUAL`, else `$EDITOR`, run through the shell (so
//! `EDITOR="code --wait"` works) on a temporary file named after the file being edited (so the
//! editor picks its syntax), read back when the editor exits. `resolve amend` and the review's
//! `e` both use it.

use std::io::Write;
use std::path::Path;
use std::process::Command;

use anyhow::Context;

/// Open `content` (the previewed new content of `path`) in `$VISUAL`, else `$EDITOR`, and
/// return what the person saved. The scratch file is a temporary file named after `path`
/// (so the editor picks its syntax), removed afterwards.
pub(crate) fn edit_in_editor(path: &str, content: &str) -> anyhow::Result<String> {
    let editor = ["VISUAL", "EDITOR"]
        .iter()
        .find_map(|name| std::env::var(name).ok().filter(|value| !value.trim().is_empty()))
        .context(
            "Set $VISUAL or $EDITOR to the editor to use, or give the new content with --from FILE.",
        )?;
    edit_with(&editor, path, content)
}

/// [`edit_in_editor`] with the editor command given.
fn edit_with(editor: &str, path: &str, content: &str) -> anyhow::Result<String> {
    let name = Path::new(path).file_name().map_or_else(
        || "file".to_owned(),
        |name| name.to_string_lossy().into_owned(),
    );
    let mut scratch = tempfile::Builder::new()
        .prefix("resolve-amend-")
        .suffix(&format!("-{name}"))
        .tempfile()
        .context("could not create a temporary file for the editor")?;
    scratch
        .write_all(content.as_bytes())
        .and_then(|()| scratch.flush())
        .context("could not write the temporary file for the editor")?;
    // The editor may carry arguments (`code --wait`), so a shell splits it.
    let status = Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("sh")
        .arg(scratch.path())
        .status()
        .with_context(|| format!("could not start the editor `{editor}`"))?;
    if !status.success() {
        anyhow::bail!("The editor `{editor}` exited with {status}; nothing was amended.");
    }
    std::fs::read_to_string(scratch.path()).context("could not read what the editor saved")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_editor_edits_a_file_named_like_the_original_and_its_failure_amends_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("edit.sh");
        std::fs::write(
            &script,
            "#!/bin/sh\ncase \"$1\" in *-lib.rs) sed -i 's/foo/bar/' \"$1\";; *) exit 3;; esac\n",
        )
        .unwrap();
        let editor = format!("sh {}", script.display());
        assert_eq!(edit_with(&editor, "src/lib.rs", "foo\n").unwrap(), "bar\n");
        let failed = edit_with(&editor, "src/other.rs", "foo\n").unwrap_err();
        assert!(
            failed.to_string().contains("nothing was amended"),
            "{failed}"
        );
    }
}
