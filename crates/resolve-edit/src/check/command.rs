//! Running a check command: in a directory, with no standard input, in its own process group
//! (so a time limit, its end or the end of `resolve` kills everything it started: `group`),
//! its output streamed live to the caller's writers and its last lines kept.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use resolve_store::{CHECK_TAIL_LINES, CheckRun};

use super::group::{GroupWatchdog, kill_group};
use crate::error::EditError;

/// How often a running command is polled for its end.
const POLL_INTERVAL: Duration = Duration::from_millis(20);

/// How long the output readers get, once the command ended, to drain what it wrote.
const DRAIN_WAIT: Duration = Duration::from_secs(2);

/// One output stream of the command, as it is read.
type Source = Box<dyn Read + Send>;

/// Where one output stream is copied to as it comes.
type Sink = Box<dyn Write + Send>;

/// Where a check command's output goes while it runs (besides the kept tail).
pub struct LiveOutput {
    stdout: Sink,
    stderr: Sink,
}

impl std::fmt::Debug for LiveOutput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveOutput").finish_non_exhaustive()
    }
}

impl LiveOutput {
    /// The command's stdout to `stdout`, its stderr to `stderr`.
    pub fn new(stdout: Box<dyn Write + Send>, stderr: Box<dyn Write + Send>) -> Self {
        Self { stdout, stderr }
    }

    /// Both streams to `writer` (for a process whose own stdout is taken: `--json`, MCP).
    pub fn merged(writer: impl Write + Send + 'static) -> Self {
        let shared = SharedWriter(Arc::new(Mutex::new(writer)));
        Self {
            stdout: Box::new(shared.clone()),
            stderr: Box::new(shared),
        }
    }

    /// Nowhere: only the tail is kept.
    pub fn quiet() -> Self {
        Self::new(Box::new(std::io::sink()), Box::new(std::io::sink()))
    }
}

/// One writer behind two handles.
struct SharedWriter<W>(Arc<Mutex<W>>);

impl<W> Clone for SharedWriter<W> {
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

impl<W: Write> Write for SharedWriter<W> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        lock(&self.0).write(bytes)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        lock(&self.0).flush()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The last [`CHECK_TAIL_LINES`] lines of both streams, and how many there were.
#[derive(Default)]
struct Tail {
    lines: VecDeque<String>,
    count: u64,
}

impl Tail {
    fn push(&mut self, line: &[u8]) {
        self.count += 1;
        if self.lines.len() == CHECK_TAIL_LINES {
            self.lines.pop_front();
        }
        self.lines
            .push_back(String::from_utf8_lossy(line).into_owned());
    }

    fn text(&self) -> String {
        let mut text = String::new();
        for line in &self.lines {
            text.push_str(line);
            text.push('\n');
        }
        text
    }
}

/// Run `command` in `dir` for at most `timeout`, streaming its output to `live`.
///
/// When the command ends (or is killed at the time limit), whatever it left running in its
/// process group is killed too: a check ends with its command. If this process ends first
/// (interrupted, or killed), a watchdog kills the group.
pub(crate) fn run_command(
    command: &[String],
    dir: &Path,
    timeout: Duration,
    live: LiveOutput,
) -> Result<CheckRun, EditError> {
    let (program, args) = command.split_first().ok_or(EditError::NoCheckCommand)?;
    let mut process = Command::new(program);
    process
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        process.process_group(0);
    }
    let mut watchdog = GroupWatchdog::start();
    let started = Instant::now();
    let mut child = match process.spawn() {
        Ok(child) => child,
        Err(source) => {
            watchdog.dismiss();
            return Err(EditError::CheckCommand {
                program: program.clone(),
                source,
            });
        }
    };
    watchdog.watch(&child);
    let tail = Arc::new(Mutex::new(Tail::default()));
    let (drained, readers_done) = mpsc::channel();
    let streams: [(Option<Source>, Sink); 2] = [
        (
            child
                .stdout
                .take()
                .map(|out| Box::new(out) as Box<dyn Read + Send>),
            live.stdout,
        ),
        (
            child
                .stderr
                .take()
                .map(|err| Box::new(err) as Box<dyn Read + Send>),
            live.stderr,
        ),
    ];
    let mut readers = 0;
    for (source, sink) in streams {
        if let Some(source) = source {
            let tail = Arc::clone(&tail);
            let drained = drained.clone();
            readers += 1;
            std::thread::spawn(move || {
                tee(source, sink, &tail);
                let _ = drained.send(());
            });
        }
    }
    let deadline = started + timeout;
    let mut timed_out = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) => {}
            Err(_) => break None,
        }
        if Instant::now() >= deadline {
            timed_out = true;
            kill_group(&mut child);
            break child.wait().ok();
        }
        std::thread::sleep(POLL_INTERVAL);
    };
    let duration = started.elapsed();
    // Stragglers (a server the tests started, a `sleep &`) would hold the pipes open.
    kill_group(&mut child);
    watchdog.dismiss();
    for _ in 0..readers {
        if readers_done.recv_timeout(DRAIN_WAIT).is_err() {
            break;
        }
    }
    let tail = lock(&tail);
    Ok(CheckRun {
        command: command.to_vec(),
        exit_code: status.and_then(|status| status.code()),
        signal: status.and_then(signal_of),
        timed_out,
        duration_ms: u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
        output_tail: tail.text(),
        output_lines: tail.count,
        changed_files: Vec::new(),
    })
}

/// Copy `source` to `sink` as it comes, keeping its lines in `tail`.
fn tee(mut source: Source, mut sink: Sink, tail: &Mutex<Tail>) {
    let mut buffer = [0u8; 8192];
    let mut partial: Vec<u8> = Vec::new();
    loop {
        let read = match source.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(read) => read,
        };
        let chunk = &buffer[..read];
        // A terminal that went away must not stop the check.
        let _ = sink.write_all(chunk).and_then(|()| sink.flush());
        partial.extend_from_slice(chunk);
        let mut tail = lock(tail);
        while let Some(end) = partial.iter().position(|byte| *byte == b'\n') {
            let line: Vec<u8> = partial.drain(..=end).collect();
            tail.push(line.strip_suffix(b"\n").unwrap_or(&line));
        }
    }
    if !partial.is_empty() {
        lock(tail).push(&partial);
    }
}

#[cfg(unix)]
fn signal_of(status: std::process::ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    status.signal()
}

#[cfg(not(unix))]
fn signal_of(_status: std::process::ExitStatus) -> Option<i32> {
    None
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn sh(script: &str) -> Vec<String> {
        vec!["sh".into(), "-c".into(), script.into()]
    }

    /// Run `command` in a fresh temporary directory within `timeout`, streaming to `live`.
    fn run_in_temp(
        command: &[String],
        timeout: Duration,
        live: LiveOutput,
    ) -> Result<CheckRun, EditError> {
        let dir = tempfile::tempdir().unwrap();
        run_command(command, dir.path(), timeout, live)
    }

    /// Run the shell `script` in a fresh temporary directory within 30 s, quietly.
    fn run_sh(script: &str) -> CheckRun {
        run_in_temp(&sh(script), Duration::from_secs(30), LiveOutput::quiet()).unwrap()
    }

    #[test]
    fn the_exit_status_and_both_streams_are_kept() {
        let run = run_sh("echo out; echo err >&2; exit 3");
        assert_eq!(run.exit_code, Some(3));
        assert!(!run.passed());
        assert_eq!(run.output_lines, 2);
        assert!(run.output_tail.contains("out\n"), "{}", run.output_tail);
        assert!(run.output_tail.contains("err\n"), "{}", run.output_tail);
    }

    #[test]
    fn only_the_last_two_hundred_lines_are_kept_and_every_line_is_counted() {
        let run =
            run_sh("i=1; while [ $i -le 250 ]; do echo line $i; i=$((i+1)); done; printf end");
        assert!(run.passed());
        assert_eq!(run.output_lines, 251);
        let lines: Vec<&str> = run.output_tail.lines().collect();
        assert_eq!(lines.len(), 200);
        assert_eq!(lines[0], "line 52");
        assert_eq!(lines[199], "end");
    }

    #[test]
    fn output_streams_live_to_the_writer() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        run_in_temp(
            &sh("echo live"),
            Duration::from_secs(30),
            LiveOutput::merged(SharedWriter(Arc::clone(&seen))),
        )
        .unwrap();
        assert_eq!(lock(&seen).as_slice(), b"live\n");
    }

    #[test]
    fn a_command_past_its_time_is_killed_with_what_it_started() {
        let started = Instant::now();
        let run = run_in_temp(
            &sh("sleep 30 & sleep 30"),
            Duration::from_millis(300),
            LiveOutput::quiet(),
        )
        .unwrap();
        assert!(run.timed_out);
        assert!(!run.passed());
        assert_eq!(run.signal, Some(9));
        // The background `sleep` held the pipes; it was killed too, or this would wait 30 s.
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn a_program_that_does_not_exist_is_an_error_naming_it() {
        let error = run_in_temp(
            &["no-such-program-resolve".into()],
            Duration::from_secs(5),
            LiveOutput::quiet(),
        )
        .unwrap_err();
        assert!(
            error.to_string().contains("no-such-program-resolve"),
            "{error}"
        );
    }
}
