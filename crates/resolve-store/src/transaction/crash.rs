//! The fault-injection hook of transactions: the process aborts right after the step named by
//! [`CRASH_AT_ENV`], so the crash tests can reach every instant of a transaction. Owns the
//! step names' list; the steps themselves are the transaction's.

/// Environment variable naming the crash point at which to abort (tests only).
pub const CRASH_AT_ENV: &str = "RESOLVE_TEST_CRASH_AT";

/// The crash points of a transaction, in order; `<n>` counts from 1.
pub const CRASH_STEPS: &[&str] = &[
    "begin",
    "backup:<n>",
    "journal",
    "staged:<n>",
    "renamed:<n>",
    "synced",
    "trial",
    "committed",
    "state:<n>",
    "journal-removed",
];

/// Aborts the process at the point named by [`CRASH_AT_ENV`]: a step name (`renamed:2`) or the
/// ordinal of a point counted from 1 (`7`).
pub(super) struct CrashHook {
    target: Option<String>,
    reached: usize,
}

impl CrashHook {
    /// The hook the environment asks for (none when [`CRASH_AT_ENV`] is unset or empty).
    pub(super) fn from_env() -> Self {
        Self {
            target: std::env::var(CRASH_AT_ENV)
                .ok()
                .filter(|target| !target.is_empty()),
            reached: 0,
        }
    }

    /// A hook that never fires (recovery runs without one).
    pub(super) fn disabled() -> Self {
        Self {
            target: None,
            reached: 0,
        }
    }

    /// The step `step` is done: abort here when it is the target.
    pub(super) fn point(&mut self, step: &str) {
        self.reached += 1;
        if let Some(target) = &self.target
            && (target == step || target.parse::<usize>() == Ok(self.reached))
        {
            std::process::abort();
        }
    }
}
