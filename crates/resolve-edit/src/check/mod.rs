//! Checks: run a command (the project's tests) against the workspace with a pending preview
//! applied, and keep the outcome on the pending action.
//!
//! Two places to run it ([`CheckPlace`]):
//! - **in place**: the store puts the preview in the workspace as a trial transaction, the
//!   command runs in the root, and the store rolls every file of the preview back to its
//!   base (`Store::check_in_place`), also after a `kill -9` (the next recovery does it);
//! - **in a scratch copy**: the workspace is copied to a temporary directory (`.git` and
//!   ignored paths left out unless asked), the store writes the preview into the copy, and the
//!   command runs there; the workspace is never touched.
//!
//! Either way the command's output streams live to the caller's writers, its last lines are
//! kept, and the files it changed are named; whatever it started ends with it, also when
//! `resolve` is interrupted or killed. The settings come from the `[check]` table of the
//! configuration (`settings`); running a command is `command`'s, its process group and the
//! watchdog that ends it `group`'s, walking and copying the tree `tree`'s, putting it together
//! `run`'s, the texts that report an outcome `report`'s, and the model-facing `check` tool
//! `tool`'s.

mod command;
mod group;
mod report;
mod run;
mod settings;
mod tool;
mod tree;

pub use self::command::LiveOutput;
pub use self::report::{changed_files_note, check_report, check_summary, command_line};
pub use self::run::{CheckPlace, CheckRequest, run_check};
pub use self::settings::{CONFIG_PATH, CheckSettings, DEFAULT_CHECK_TIMEOUT};
pub use self::tool::CheckTool;
