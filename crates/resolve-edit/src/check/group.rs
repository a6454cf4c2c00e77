//! The process group a check command runs in, and its end: every process of the group is
//! killed when the check ends, when it runs past its time, and when `resolve` itself ends
//! without cleaning up (Ctrl-C, SIGTERM, SIGKILL).
//!
//! The last case is the [`GroupWatchdog`]'s: a small `sh` process, started before the command
//! in a process group of its own and deaf to terminal signals, that reads the command's group
//! id and then waits on a pipe only this process holds open. However this process ends, the
//! kernel closes that pipe; the watchdog reads its end and kills the group. A check that ends
//! normally tells the watchdog `done` first, so it leaves without killing anything.
//!
//! Platforms: on Unix (Linux, macOS, the BSDs) all of the above. Elsewhere the command is not
//! put in a group of its own; at its time limit the command itself is killed, and what it
//! started, or the command after `resolve` is killed, is left to the system.

use std::process::Child;

/// What the watchdog runs: ignore terminal signals, read the group id, wait for `done` or the
/// end of its input, and kill the group only at the end of its input.
#[cfg(unix)]
const WATCHDOG_SCRIPT: &str = "trap '' INT TERM HUP QUIT
read group || exit 0
while read line; do [ \"$line\" = done ] && exit 0; done
kill -s KILL -- \"-$group\" 2>/dev/null
";

/// Kills a check command's process group if this process ends before the check does.
#[derive(Debug)]
pub(crate) struct GroupWatchdog {
    #[cfg(unix)]
    process: Option<Child>,
}

impl GroupWatchdog {
    /// Start a watchdog, before the command it watches; when `sh` cannot start, the check
    /// runs without one (the time limit and the normal end still kill the group).
    #[cfg(unix)]
    pub(crate) fn start() -> Self {
        use std::os::unix::process::CommandExt;
        use std::process::{Command, Stdio};
        let process = Command::new("sh")
            .args(["-c", WATCHDOG_SCRIPT])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .ok();
        Self { process }
    }

    /// No watchdog where there are no process groups.
    #[cfg(not(unix))]
    pub(crate) fn start() -> Self {
        Self {}
    }

    /// Watch the group `command` leads.
    #[cfg(unix)]
    pub(crate) fn watch(&mut self, command: &Child) {
        self.say(&format!("{}\n", command.id()));
    }

    /// Nothing to watch where there are no process groups.
    #[cfg(not(unix))]
    pub(crate) fn watch(&mut self, command: &Child) {
        let _ = command;
    }

    /// The check ended and its group was killed here: the watchdog leaves without killing.
    #[cfg(unix)]
    pub(crate) fn dismiss(mut self) {
        self.say("done\n");
        if let Some(mut process) = self.process.take() {
            drop(process.stdin.take());
            let _ = process.wait();
        }
    }

    /// Nothing to dismiss where there are no process groups.
    #[cfg(not(unix))]
    pub(crate) fn dismiss(self) {}

    #[cfg(unix)]
    fn say(&mut self, line: &str) {
        use std::io::Write;
        if let Some(stdin) = self
            .process
            .as_mut()
            .and_then(|process| process.stdin.as_mut())
        {
            // A watchdog that died cannot be told; the normal end still kills the group.
            let _ = stdin
                .write_all(line.as_bytes())
                .and_then(|()| stdin.flush());
        }
    }
}

/// Kill the process group the command leads (it was started as its own group).
#[cfg(unix)]
pub(crate) fn kill_group(child: &mut Child) {
    let group = rustix::process::Pid::from_child(child);
    // Nothing left in the group is the usual case.
    let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
}

/// Kill the command itself (there are no process groups here).
#[cfg(not(unix))]
pub(crate) fn kill_group(child: &mut Child) {
    let _ = child.kill();
}
