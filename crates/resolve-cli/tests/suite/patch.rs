//! `resolve patch`: a Codex-format patch from a file or stdin staged as one preview, landed
//! byte-exactly by `resolve apply`; and the same patches run through Codex's own applier (the
//! pinned `codex` from npm, in `RESOLVE_CODEX`) on a copy of the same tree, compared byte for
//! byte wherever Codex succeeds.

use resolve_test_support::process::output_with_stdin;
use resolve_test_support::text::assert_contains;
use std::collections::BTreeMap;
use std::path::Path;

use pretty_assertions::assert_eq;

use super::common::{Run, Workspace};
use crate::host_harness::Host;

/// `resolve patch -` with `patch` on stdin.
fn patch_stdin(workspace: &Workspace, patch: &str) -> Run {
    Run::from(output_with_stdin(
        &mut workspace.command(&["patch", "-"]),
        patch,
    ))
}

#[test]
fn a_patch_on_stdin_stages_one_preview_and_apply_lands_every_file_byte_exactly() {
    let workspace = Workspace::new();
    workspace.write("crlf.txt", b"one\r\ntwo\r\nthree\r\n");
    workspace.write("bom.txt", b"\xef\xbb\xbfalpha\nbeta\n");
    workspace.write("open.txt", b"x\ny\nz");
    workspace.write("old/name.rs", b"fn a() {}\n");
    workspace.write("gone.txt", b"bye\n");
    let absolute = workspace.path("crlf.txt");
    let patch = format!(
        "*** Begin Patch\n*** Update File: {}\n@@\n one\n-two\n+2\n+2b\n three\n*** Update File: bom.txt\n@@\n-alpha\n+ALPHA\n*** Update File: open.txt\n@@\n y\n-z\n+Z\n*** End of File\n*** Update File: old/name.rs\n*** Move to: new/name.rs\n@@\n-fn a() {{}}\n+fn b() {{}}\n*** Add File: added.md\n+# Added\n*** Delete File: gone.txt\n*** End Patch\n",
        absolute.display()
    );
    let run = patch_stdin(&workspace, &patch).expect_code(0);
    assert_contains(&run.stdout, "--- a/old/name.rs\n+++ /dev/null");
    assert_contains(&run.stdout, "Moved `old/name.rs` to `new/name.rs`.");
    assert_eq!(workspace.pending_ids(), ["pending-action:apply_patch:1"]);
    assert_eq!(workspace.bytes("crlf.txt"), b"one\r\ntwo\r\nthree\r\n");
    assert!(workspace.path("gone.txt").exists());

    let run = workspace.run_ok(&["apply", "--reason", "Patched."]);
    assert_contains(&run.stdout, "Applied patch to 7 files.");
    assert_eq!(workspace.bytes("crlf.txt"), b"one\r\n2\r\n2b\r\nthree\r\n");
    assert_eq!(workspace.bytes("bom.txt"), b"\xef\xbb\xbfALPHA\nbeta\n");
    assert_eq!(workspace.bytes("open.txt"), b"x\ny\nZ");
    assert_eq!(workspace.bytes("new/name.rs"), b"fn b() {}\n");
    assert_eq!(workspace.bytes("added.md"), b"# Added\n");
    assert!(!workspace.path("old/name.rs").exists());
    assert!(!workspace.path("gone.txt").exists());
}

#[test]
fn a_patch_file_that_does_not_apply_fails_naming_the_problem_and_stages_nothing() {
    let workspace = Workspace::with(&[("a.txt", "one\ntwo\nthree\n"), ("b.txt", "b\n")]);
    let cases = [
        (
            "*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-2\n+TWO\n*** End Patch",
            "Nearest candidate: line 1, where 1 of 2 lines agree; the first that differs is block line 2 `2`, where the file has `two` (line 2).",
        ),
        (
            "*** Begin Patch\n*** Add File: b.txt\n+x\n*** End Patch",
            "`b.txt` already exists",
        ),
        (
            "*** Begin Patch\n*** Delete File: none.txt\n*** End Patch",
            "`none.txt` does not exist.",
        ),
        (
            "*** Begin Patch\n*** Frobnicate: a.txt\n*** End Patch",
            "Invalid patch at line 2: `*** Frobnicate: a.txt` is not a file header",
        ),
        (
            "*** Begin Patch\n*** Add File: ../outside.txt\n+x\n*** End Patch",
            "outside",
        ),
    ];
    for (patch, expected) in cases {
        let file = workspace.path("p.patch");
        std::fs::write(&file, patch).unwrap();
        let run = workspace.run_fails(&["patch", file.to_str().unwrap()]);
        let output = format!("{}{}", run.stdout, run.stderr);
        assert!(output.contains(expected), "{patch}\n{output}");
        assert!(workspace.pending_ids().is_empty(), "{patch}");
    }
    assert_eq!(workspace.read("a.txt"), "one\ntwo\nthree\n");
    assert!(!workspace.path("../outside.txt").exists());
}

#[test]
fn a_patch_already_present_is_reported_as_applied_and_stages_nothing() {
    let workspace = Workspace::with(&[("a.txt", "one\n2\nthree\n")]);
    let run = patch_stdin(
        &workspace,
        "*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n+2\n three\n*** End Patch\n",
    )
    .expect_code(0);
    assert_contains(
        &run.stdout,
        "Patch already applied: its changes are already present in `a.txt`; nothing was staged.",
    );
    assert!(workspace.pending_ids().is_empty());
}

// ---------------------------------------------------------------------------------------------
// Differential: our apply against Codex's on generated trees and patches.

/// A small deterministic generator (xorshift), so a failing case can be replayed by its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

/// Lines of generated files: a small vocabulary, so some lines repeat.
const WORDS: [&str; 12] = [
    "fn main() {",
    "}",
    "    let x = 1;",
    "    return x;",
    "",
    "// note",
    "    if ready {",
    "        go();",
    "    }",
    "use std::io;",
    "struct Point;",
    "    let y = x + 1;",
];

/// A generated tree (path → lines, and whether it uses CRLF) and a patch over it.
fn generate(seed: u64) -> (BTreeMap<String, Vec<u8>>, String) {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut tree = BTreeMap::new();
    let mut files: Vec<(String, Vec<String>, bool)> = Vec::new();
    for index in 0..3 {
        let lines: Vec<String> = (0..6 + rng.below(14))
            .map(|_| WORDS[rng.below(WORDS.len())].to_owned())
            .collect();
        let crlf = rng.chance(20);
        let ending = if crlf { "\r\n" } else { "\n" };
        let text: String = lines.iter().map(|line| format!("{line}{ending}")).collect();
        let path = format!("src/f{index}.rs");
        tree.insert(path.clone(), text.into_bytes());
        files.push((path, lines, crlf));
    }
    let mut patch = String::from("*** Begin Patch\n");
    let mut added = 0;
    let mut new_line = |rng: &mut Rng| {
        added += 1;
        format!("    added_{added}_{}();", rng.below(1000))
    };
    for (index, (path, lines, _)) in files.iter().enumerate() {
        match rng.below(10) {
            0 if index > 0 => patch.push_str(&format!("*** Delete File: {path}\n")),
            1 | 2 => {}
            kind => {
                patch.push_str(&format!("*** Update File: {path}\n"));
                if kind == 3 {
                    patch.push_str(&format!("*** Move to: moved/f{index}.rs\n"));
                }
                let mut at = 0;
                for _ in 0..1 + rng.below(2) {
                    if at + 2 >= lines.len() {
                        break;
                    }
                    let start = at + rng.below((lines.len() - at - 2).max(1));
                    if start > 0 && rng.chance(30) {
                        patch.push_str(&format!("@@ {}\n", lines[start - 1]));
                    } else {
                        patch.push_str("@@\n");
                    }
                    let context = 1 + rng.below(2);
                    let removed = rng.below(3);
                    let end = (start + context + removed).min(lines.len());
                    for (offset, line) in lines[start..end].iter().enumerate() {
                        let line = if rng.chance(10) {
                            format!("{line}  ")
                        } else {
                            line.clone()
                        };
                        if offset < context {
                            patch.push_str(&format!(" {line}\n"));
                        } else {
                            patch.push_str(&format!("-{line}\n"));
                        }
                    }
                    for _ in 0..rng.below(3) {
                        patch.push_str(&format!("+{}\n", new_line(&mut rng)));
                    }
                    if rng.chance(10) {
                        patch.push_str(" this line is in no file\n");
                    }
                    at = end;
                }
            }
        }
    }
    if rng.chance(50) {
        patch.push_str("*** Add File: src/new.rs\n+fn new() {}\n+\n");
    }
    patch.push_str("*** End Patch\n");
    (tree, patch)
}

/// Every file under `root` but `.resolve/`, with its bytes (shown as text, `\r` escaped).
fn snapshot(root: &Path) -> BTreeMap<String, String> {
    let mut files = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let relative = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            if relative == ".resolve" || relative.ends_with(".patch") {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else {
                let bytes = std::fs::read(&path).unwrap();
                files.insert(
                    relative,
                    String::from_utf8(bytes).unwrap().replace('\r', "\\r"),
                );
            }
        }
    }
    files
}

#[test]
fn patches_land_byte_for_byte_as_codex_lands_them_wherever_codex_succeeds() {
    let Some(codex) = Host::Codex.binary() else {
        return;
    };
    let (mut compared, mut refused_as_ambiguous, mut both_failed) = (0, 0, 0);
    for seed in 1..=40 {
        let (tree, patch) = generate(seed);
        let ours = Workspace::new();
        let theirs = tempfile::tempdir().unwrap();
        for (path, bytes) in &tree {
            ours.write(path, bytes);
            let target = theirs.path().join(path);
            std::fs::create_dir_all(target.parent().unwrap()).unwrap();
            std::fs::write(target, bytes).unwrap();
        }
        let codex_run = std::process::Command::new(&codex)
            .arg("--codex-run-as-apply-patch")
            .arg(&patch)
            .current_dir(theirs.path())
            .env("HOME", ours.home())
            .output()
            .unwrap();
        let staged = patch_stdin(&ours, &patch);
        let context = format!(
            "seed {seed}\n--- patch\n{patch}--- codex\n{}{}--- resolve\n{}{}",
            String::from_utf8_lossy(&codex_run.stdout),
            String::from_utf8_lossy(&codex_run.stderr),
            staged.stdout,
            staged.stderr
        );
        if !codex_run.status.success() {
            assert_eq!(staged.code, 1, "Codex failed, resolve did not\n{context}");
            both_failed += 1;
            continue;
        }
        let ambiguous = [
            "; add context lines or an `@@` line that make the place unique.",
            "; use an anchor line that occurs once.",
        ];
        if staged.code == 1
            && ambiguous
                .iter()
                .any(|refusal| staged.stderr.contains(refusal))
        {
            // Deliberate: Codex takes the first of several places; resolve asks for context.
            refused_as_ambiguous += 1;
            continue;
        }
        assert_eq!(staged.code, 0, "{context}");
        ours.run_ok(&["apply", "--reason", "Differential."]);
        assert_eq!(snapshot(ours.root()), snapshot(theirs.path()), "{context}");
        compared += 1;
    }
    eprintln!(
        "compared {compared}, refused as ambiguous {refused_as_ambiguous}, both failed {both_failed}"
    );
    assert!(compared >= 15, "too few cases compared: {compared}");
    assert!(both_failed >= 1, "no failing case generated");
}
