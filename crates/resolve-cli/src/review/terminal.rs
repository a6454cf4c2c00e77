//! The terminal while the review runs: raw mode and the alternate screen on entry, both undone
//! on every way out (return, error, panic) and around the editor. Ctrl-C arrives as a key in
//! raw mode, so it ends the review through the same path as `q`.

use std::io::{IsTerminal, Stdout};
use std::sync::Once;

use crossterm::cursor::Show;
use crossterm::execute;
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

/// Whether standard input and output are both terminals, as the review needs.
pub fn is_interactive() -> bool {
    std::io::stdin().is_terminal() && std::io::stdout().is_terminal()
}

/// The review's terminal; dropping it restores the screen as it was.
pub struct Screen {
    terminal: Terminal<CrosstermBackend<Stdout>>,
}

impl Screen {
    /// Enter raw mode and the alternate screen, and make sure a panic restores them before its
    /// message is printed.
    pub fn enter() -> std::io::Result<Self> {
        install_panic_hook();
        enter_raw()?;
        match Terminal::new(CrosstermBackend::new(std::io::stdout())) {
            Ok(terminal) => Ok(Self { terminal }),
            Err(error) => {
                restore();
                Err(error)
            }
        }
    }

    /// The terminal to draw on.
    pub fn terminal(&mut self) -> &mut Terminal<CrosstermBackend<Stdout>> {
        &mut self.terminal
    }

    /// Give the terminal back for `run` (an editor), then take it again and redraw from
    /// scratch.
    pub fn suspended<T>(&mut self, run: impl FnOnce() -> T) -> std::io::Result<T> {
        restore();
        let result = run();
        enter_raw()?;
        self.terminal.clear()?;
        Ok(result)
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        restore();
    }
}

fn enter_raw() -> std::io::Result<()> {
    enable_raw_mode()?;
    if let Err(error) = execute!(std::io::stdout(), EnterAlternateScreen) {
        let _ = disable_raw_mode();
        return Err(error);
    }
    Ok(())
}

/// Leave the alternate screen and raw mode and show the cursor; harmless when already done.
fn restore() {
    let _ = execute!(std::io::stdout(), LeaveAlternateScreen, Show);
    let _ = disable_raw_mode();
}

/// Chain a panic hook that restores the terminal first, so the panic message is readable and
/// the shell is usable afterwards. Installed once per process.
fn install_panic_hook() {
    static INSTALLED: Once = Once::new();
    INSTALLED.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            previous(info);
        }));
    });
}
