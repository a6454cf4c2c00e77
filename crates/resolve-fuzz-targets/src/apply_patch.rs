//! The `apply_patch` target: a random patch over a small workspace.

use resolve_edit::{
    ApplyPatchOutcome, ApplyPatchRequest, Workspace, parse_patch, preview_apply_patch,
};

/// The file the patch may update, and the separator between it and the patch in an input.
const SEPARATOR: &str = "\n=====\n";

/// Parse the patch and compute its preview in a temporary workspace holding `a.txt`.
///
/// Input: text (bytes that are not UTF-8 are replaced); up to a line `=====` it is the content
/// of `a.txt`, after it the patch (without that line, all of it is the patch, and `a.txt` holds
/// `one\ntwo\nthree\n`).
///
/// Invariants: no panic in the parser or the producer; the preview writes nothing (every
/// byte of the workspace is as before); a patch the parser refuses is refused by the producer.
pub fn apply_patch(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let (content, patch) = text
        .split_once(SEPARATOR)
        .unwrap_or(("one\ntwo\nthree\n", &text));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), content).unwrap();
    let workspace = Workspace::open(dir.path()).unwrap();
    let parsed = parse_patch(patch);
    let request = ApplyPatchRequest {
        input: patch.to_owned(),
    };
    let outcome = preview_apply_patch(&workspace, &request);
    if parsed.is_err() {
        assert!(
            outcome.is_err(),
            "the producer took a patch the parser refuses"
        );
    }
    match outcome {
        Ok(ApplyPatchOutcome::Preview(preview)) => {
            assert!(!preview.label.is_empty());
        }
        Ok(ApplyPatchOutcome::AlreadyApplied { text }) => {
            assert!(text.starts_with("Patch already applied"))
        }
        Err(error) => assert!(!error.to_string().is_empty()),
    }
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        content
    );
    let entries: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name != ".resolve")
        .collect();
    assert_eq!(entries, ["a.txt"], "the preview wrote files");
}
