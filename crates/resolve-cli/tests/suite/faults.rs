//! Write errors in the middle of a real `resolve apply`: a file-size limit on the process
//! (`ulimit -f`, so writes past it fail with EFBIG, as on a full disk) and a truly full,
//! tiny tmpfs. Every case ends with every file as it was, no temp file or journal left, the
//! preview still pending, and a later apply (with room to write) landing it whole.

use resolve_test_support::text::assert_contains;
use std::path::Path;
use std::process::Command;

use pretty_assertions::assert_eq;

use super::common::{Run, Workspace, resolve};

/// A line of `b.py`; the rewrite makes each one about five times longer.
const LINE: &str = "x = foo(1)\n";
const LONG_NAME: &str = "a_much_longer_function_name_that_grows_the_file";

fn b_original() -> String {
    LINE.repeat(1000)
}

fn b_rewritten() -> String {
    b_original().replace("foo(", &format!("{LONG_NAME}("))
}

/// `a.py` and `b.py` (11 KB) staged for a rewrite that makes `b.py` about 55 KB.
fn staged() -> Workspace {
    let workspace = Workspace::with(&[("a.py", "y = foo(2)\n"), ("b.py", &b_original())]);
    workspace.run_ok(&[
        "ast-edit",
        "-p",
        "foo($A)",
        "-r",
        &format!("{LONG_NAME}($A)"),
        "a.py",
        "b.py",
    ]);
    workspace
}

/// `resolve apply` with writes limited to `kib` KiB per file (SIGXFSZ ignored, so a write
/// past the limit fails with EFBIG instead of killing the process).
fn apply_with_file_size_limit(workspace: &Workspace, kib: u32) -> Run {
    let output = Command::new("bash")
        .arg("-c")
        .arg(format!("trap '' XFSZ; ulimit -f {kib}; exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_resolve"))
        .arg("--root")
        .arg(workspace.root())
        .args(["apply", "--reason", "Limited."])
        .env("HOME", workspace.home())
        .output()
        .unwrap();
    Run::from(output)
}

/// Temp files anywhere in the tree, and anything in the journal directory.
fn leftovers(root: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if entry.file_type().unwrap().is_dir() {
                dirs.push(path);
            } else if name.ends_with(".tmp") || path.parent().unwrap().ends_with(".resolve/journal")
            {
                found.push(path.strip_prefix(root).unwrap().display().to_string());
            }
        }
    }
    found
}

#[track_caller]
fn assert_rolled_back(workspace: &Workspace, run: &Run) {
    assert_eq!(
        run.code, 1,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    assert!(
        run.stderr.contains("File too large") || run.stderr.contains("No space left"),
        "{}",
        run.stderr
    );
    assert_eq!(workspace.read("a.py"), "y = foo(2)\n");
    assert_eq!(workspace.read("b.py"), b_original());
    assert_eq!(
        workspace.pending_ids().len(),
        1,
        "the preview is no longer pending"
    );
    assert_eq!(leftovers(workspace.root()), Vec::<String>::new());
}

#[track_caller]
fn assert_lands_afterwards(workspace: &Workspace) {
    workspace.run_ok(&["apply", "--reason", "Room again."]);
    assert_eq!(workspace.read("a.py"), format!("y = {LONG_NAME}(2)\n"));
    assert_eq!(workspace.read("b.py"), b_rewritten());
    assert!(workspace.pending_ids().is_empty());
}

#[test]
fn a_write_error_under_a_tiny_file_size_limit_rolls_back_and_leaves_nothing_behind() {
    // Backups are hard links and records name contents by hash, so the journal fits; the first
    // write that fails is the new `b.py`, after `a.py`'s was written.
    let workspace = staged();
    let run = apply_with_file_size_limit(&workspace, 8);
    assert_rolled_back(&workspace, &run);
    assert_contains(&run.stderr, ".b.py.resolve-");
    assert_lands_afterwards(&workspace);
}

#[test]
fn a_write_error_while_journaling_writes_no_file() {
    // 400 small files: every new content fits, the journal (one entry per file) does not.
    let names: Vec<String> = (0..400).map(|i| format!("f{i:03}.py")).collect();
    let files: Vec<(&str, &str)> = names
        .iter()
        .map(|name| (name.as_str(), "y = foo(2)\n"))
        .collect();
    let workspace = Workspace::with(&files);
    workspace.run_ok(&["ast-edit", "-p", "foo($A)", "-r", "bar($A)", "."]);
    let run = apply_with_file_size_limit(&workspace, 16);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_contains(&run.stderr, "File too large");
    assert_contains(&run.stderr, ".resolve/journal/");
    for name in &names {
        assert_eq!(workspace.read(name), "y = foo(2)\n", "{name}");
    }
    assert_eq!(workspace.pending_ids().len(), 1);
    assert_eq!(leftovers(workspace.root()), Vec::<String>::new());
    workspace.run_ok(&["apply", "--reason", "Room again."]);
    assert_eq!(workspace.read("f399.py"), "y = bar(2)\n");
}

/// A tmpfs mounted for one test; unmounted when dropped.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    /// `None` when mounting is not allowed here.
    fn mount(kib: u32) -> Option<Self> {
        let dir = tempfile::tempdir().unwrap();
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={kib}k"), "tmpfs"])
            .arg(dir.path())
            .status()
            .ok()?;
        status.success().then_some(Self { dir })
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

/// Round `bytes` up to whole 4 KiB pages, as tmpfs allocates them.
fn pages(bytes: u64) -> usize {
    usize::try_from(bytes.div_ceil(4096) * 4096).unwrap()
}

#[test]
fn a_full_disk_mid_apply_rolls_back_every_file_and_keeps_the_preview() {
    let Some(tmpfs) = Tmpfs::mount(1024) else {
        eprintln!("skipped: mounting a tmpfs is not allowed here");
        return;
    };
    let root = tmpfs.dir.path();
    let run = |args: &[&str], crash_at: Option<&str>| {
        let mut command = resolve();
        command.arg("--root").arg(root).args(args);
        if let Some(step) = crash_at {
            command.env(resolve_edit::CRASH_AT_ENV, step);
        }
        Run::from(command.output().unwrap())
    };
    std::fs::write(root.join("a.py"), "y = foo(2)\n").unwrap();
    std::fs::write(root.join("b.py"), b_original()).unwrap();
    let rewrite = format!("{LONG_NAME}($A)");
    run(
        &["ast-edit", "-p", "foo($A)", "-r", &rewrite, "a.py", "b.py"],
        None,
    )
    .expect_code(0);

    // Measure the journal: stop an apply right after writing it, then let recovery roll back.
    run(&["apply", "--reason", "Measure."], Some("journal"));
    let journal = std::fs::metadata(root.join(".resolve/journal/journal.json"))
        .unwrap()
        .len();
    run(&["pending"], None).expect_code(0);
    assert_eq!(leftovers(root), Vec::<String>::new());

    // Fill the disk, then free room for the backups, the journal, the new `a.py` and some
    // slack, but not for the new `b.py` (55 KB).
    let filler = root.join("filler.bin");
    let mut full = 1024 * 1024;
    while std::fs::write(&filler, vec![0u8; full]).is_err() {
        full -= 4096;
        assert!(full > 0, "nothing fits on the tmpfs");
    }
    let room = pages(journal) + pages(11_000) + 3 * 4096 + 24 * 1024;
    std::fs::write(&filler, vec![0u8; full - room]).unwrap();

    let failed = run(&["apply", "--reason", "Full."], None);
    assert_eq!(failed.code, 1, "{}", failed.stderr);
    assert_contains(&failed.stderr, "No space left");
    assert_eq!(
        std::fs::read_to_string(root.join("a.py")).unwrap(),
        "y = foo(2)\n"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("b.py")).unwrap(),
        b_original()
    );
    let mut left = leftovers(root);
    left.retain(|name| name != "filler.bin");
    assert_eq!(left, Vec::<String>::new());
    assert_eq!(
        run(&["pending"], None)
            .expect_code(0)
            .stdout
            .lines()
            .count(),
        1
    );

    std::fs::remove_file(&filler).unwrap();
    run(&["apply", "--reason", "Room again."], None).expect_code(0);
    assert_eq!(
        std::fs::read_to_string(root.join("b.py")).unwrap(),
        b_rewritten()
    );
}
