//! A private `tmux` server driving the binary in a real 80×24 terminal, shared by the terminal
//! review tests: start a command in a session, send keys, read the screen.

#![allow(
    dead_code,
    reason = "each test binary that includes the harness uses a part of it"
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// A private tmux server (its own socket) with one 80×24 session; killed when dropped.
pub struct Tmux {
    socket: String,
}

impl Tmux {
    /// Start `command` (a shell command line) in a new 80×24 session; it should not exit
    /// before the test has read the screen (the session goes with the server).
    pub fn start(command: &str) -> Self {
        static SESSIONS: AtomicUsize = AtomicUsize::new(0);
        let tmux = Self {
            socket: format!(
                "resolve-review-test-{}-{}",
                std::process::id(),
                SESSIONS.fetch_add(1, Ordering::Relaxed)
            ),
        };
        let output = tmux
            .command()
            .args(["new-session", "-d", "-s", "review", "-x", "80", "-y", "24"])
            .arg(command)
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
        tmux
    }

    pub fn command(&self) -> Command {
        let mut command = Command::new("tmux");
        command.args(["-L", &self.socket, "-f", "/dev/null"]);
        command
    }

    pub fn run(&self, args: &[&str]) -> String {
        let output = self.command().args(args).output().unwrap();
        assert!(
            output.status.success(),
            "tmux {args:?}: {}",
            stderr(&output)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Send keys by tmux name (`j`, `Enter`, `Escape`).
    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "review"];
        args.extend_from_slice(keys);
        self.run(&args);
    }

    /// Type `text` literally.
    pub fn type_text(&self, text: &str) {
        self.run(&["send-keys", "-t", "review", "-l", text]);
    }

    /// Once the screen shows `prompt`, type `text` and press Enter.
    pub fn answer(&self, prompt: &str, text: &str) {
        self.wait_for(prompt, |screen| screen.contains(prompt));
        self.type_text(text);
        self.keys(&["Enter"]);
    }

    /// The screen as text.
    pub fn screen(&self) -> String {
        self.run(&["capture-pane", "-p", "-t", "review"])
    }

    /// The screen with its colors and attributes as escape sequences.
    pub fn screen_with_styles(&self) -> String {
        self.run(&["capture-pane", "-p", "-e", "-t", "review"])
    }

    /// Whether the pane shows the alternate screen.
    pub fn in_alternate_screen(&self) -> bool {
        self.run(&["display-message", "-p", "-t", "review", "#{alternate_on}"])
            .trim()
            == "1"
    }

    /// The screen once `ready` holds for it; fails with the last screen after 20 s.
    pub fn wait_for(&self, what: &str, ready: impl Fn(&str) -> bool) -> String {
        self.wait_for_within(
            what,
            Duration::from_secs(20),
            Duration::from_millis(50),
            ready,
        )
    }

    /// The screen once `ready` holds for it, looking every `poll`; fails with the last screen
    /// after `limit`.
    pub fn wait_for_within(
        &self,
        what: &str,
        limit: Duration,
        poll: Duration,
        ready: impl Fn(&str) -> bool,
    ) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if ready(&screen) {
                return screen;
            }
            assert!(
                start.elapsed() < limit,
                "timed out waiting for {what}; the screen:\n{screen}"
            );
            std::thread::sleep(poll);
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.command().arg("kill-server").output();
    }
}

/// A shell command run in tmux that writes its exit code to a scratch file when it ends, then
/// sleeps so the screen stays readable; the tmux calls go through `Deref`.
pub struct TmuxRun {
    tmux: Tmux,
    /// Where the shell writes the exit code.
    exit_file: PathBuf,
    /// Holds `exit_file`, and whatever else the test puts there.
    scratch: tempfile::TempDir,
}

impl TmuxRun {
    /// Start `command` (a shell command line, which may use files in the scratch directory
    /// handed to it) in a new 80×24 session.
    pub fn start(command: impl FnOnce(&Path) -> String) -> Self {
        let scratch = tempfile::tempdir().unwrap();
        let exit_file = scratch.path().join("exit");
        let command = format!(
            "{}; echo $? > '{}'; sleep 600",
            command(scratch.path()),
            exit_file.display()
        );
        Self {
            tmux: Tmux::start(&command),
            exit_file,
            scratch,
        }
    }

    /// Start `ENVIRONMENT resolve --root ROOT ARGS` (`args` as shell words).
    pub fn resolve(environment: &str, root: &Path, args: &str) -> Self {
        Self::start(|_| resolve_command(environment, root, args))
    }

    /// The scratch directory (it holds the exit file).
    pub fn scratch(&self) -> &Path {
        self.scratch.path()
    }

    /// Whether the shell wrote the exit code (`echo $? > file` creates the file before it
    /// writes, so its existence alone is not enough).
    pub fn exited(&self) -> bool {
        std::fs::read_to_string(&self.exit_file).is_ok_and(|code| code.ends_with('\n'))
    }

    /// Wait (as `what`) for the command to end and return its exit code.
    pub fn wait_exit(&self, what: &str) -> String {
        self.wait_for(what, |_| self.exited());
        std::fs::read_to_string(&self.exit_file)
            .unwrap()
            .trim()
            .to_owned()
    }
}

impl std::ops::Deref for TmuxRun {
    type Target = Tmux;

    fn deref(&self) -> &Tmux {
        &self.tmux
    }
}

/// Run `resolve --root ROOT ARGS…` to success (both streams shown when it fails); its standard
/// output.
pub fn resolve_ok(root: &Path, args: &[&str]) -> String {
    resolve_test_support::process::output_ok(
        Command::new(env!("CARGO_BIN_EXE_resolve"))
            .arg("--root")
            .arg(root)
            .args(args),
    )
}

/// The shell command line `ENVIRONMENT 'resolve' --root 'ROOT' ARGS` (`args` as shell words).
pub fn resolve_command(environment: &str, root: &Path, args: &str) -> String {
    format!(
        "{environment} '{resolve}' --root '{root}' {args}",
        resolve = env!("CARGO_BIN_EXE_resolve"),
        root = root.display(),
    )
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Whether `tmux` runs here; when it does not, the test fails under CI and is skipped
/// (saying so) elsewhere.
pub fn tmux_available() -> bool {
    let available = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|output| output.status.success());
    if !available {
        let message = "tmux is not installed; install it (Debian: `apt-get install tmux`) to run the terminal review test";
        assert!(std::env::var_os("CI").is_none(), "{message}");
        eprintln!("\n!!!!! SKIPPED the `resolve review` terminal test: {message} !!!!!\n");
    }
    available
}
