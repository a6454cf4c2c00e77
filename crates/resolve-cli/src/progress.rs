//! A progress spinner on stderr (`indicatif`) for work that takes more than a second: a long
//! preview or apply. It is drawn only when stderr is a terminal and never with `--json`, and it
//! erases itself when the work ends.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How long work runs before the spinner appears (quick work shows nothing).
const DELAY: Duration = Duration::from_secs(1);
/// How often the spinner is redrawn.
const TICK: Duration = Duration::from_millis(250);

/// Shows a message with a spinner and the elapsed time until dropped.
pub struct Progress {
    bar: ProgressBar,
    stop: Option<mpsc::Sender<()>>,
    shower: Option<JoinHandle<()>>,
}

impl Progress {
    /// Start the spinner for `message`; `visible: false` (with `--json`) keeps it hidden, as
    /// does a stderr that is not a terminal.
    pub fn start(message: &'static str, visible: bool) -> Self {
        let bar = ProgressBar::hidden().with_message(message);
        if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} {elapsed}") {
            bar.set_style(style);
        }
        // The real stderr target hides itself when stderr is not a terminal.
        let target = ProgressDrawTarget::stderr();
        if !visible || target.is_hidden() {
            return Self {
                bar,
                stop: None,
                shower: None,
            };
        }
        let (stop, stopped) = mpsc::channel::<()>();
        let shown = bar.clone();
        let shower = std::thread::spawn(move || {
            // Stops on a message or when the sender is dropped.
            if let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(DELAY) {
                shown.set_draw_target(target);
                shown.enable_steady_tick(TICK);
            }
        });
        Self {
            bar,
            stop: Some(stop),
            shower: Some(shower),
        }
    }

    /// Whether the spinner is kept from ever drawing.
    #[cfg(test)]
    fn is_hidden(&self) -> bool {
        self.shower.is_none()
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(shower) = self.shower.take() {
            let _ = shower.join();
        }
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_output_never_shows_progress() {
        assert!(Progress::start("Scanning files…", false).is_hidden());
    }

    #[test]
    fn progress_is_hidden_when_stderr_is_not_a_terminal() {
        use std::io::IsTerminal;
        // Under `cargo test` stderr is usually captured; on a terminal there is nothing to check.
        if !std::io::stderr().is_terminal() {
            assert!(Progress::start("Applying…", true).is_hidden());
        }
    }
}
