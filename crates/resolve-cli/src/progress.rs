//! A progress line on stderr for work that takes more than a second, shown only when stderr is
//! a terminal; it erases itself when the work ends.

use std::io::{IsTerminal, Write};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long work runs before the progress line appears.
const DELAY: Duration = Duration::from_secs(1);
/// How often the line is redrawn.
const TICK: Duration = Duration::from_millis(250);

/// Shows `message` with the elapsed time until dropped.
pub struct Progress {
    stop: Option<mpsc::Sender<()>>,
    painter: Option<JoinHandle<()>>,
}

impl Progress {
    /// Start the progress line for `message` (nothing is shown off a terminal).
    pub fn start(message: &'static str) -> Self {
        if !std::io::stderr().is_terminal() {
            return Self {
                stop: None,
                painter: None,
            };
        }
        let (stop, stopped) = mpsc::channel::<()>();
        let painter = std::thread::spawn(move || {
            let started = Instant::now();
            let mut shown = false;
            let mut wait = DELAY;
            // A message or a hang-up (the `Progress` was dropped) ends the line.
            while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(wait) {
                let _ = write!(
                    std::io::stderr(),
                    "\r{message} {:.0}s",
                    started.elapsed().as_secs_f64()
                );
                shown = true;
                wait = TICK;
            }
            if shown {
                let _ = write!(std::io::stderr(), "\r\x1b[2K");
            }
        });
        Self {
            stop: Some(stop),
            painter: Some(painter),
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(painter) = self.painter.take() {
            let _ = painter.join();
        }
    }
}
