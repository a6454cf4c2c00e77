//! The fault-injection hook of transactions and of [`Store::gc`](crate::Store::gc): the process
//! aborts right after the step named by [`CRASH_AT_ENV`], so the crash tests can reach every
//! instant of either. Owns the step names' lists; the steps themselves are the transaction's
//! and the clean-up's.

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

/// The crash points of a history clean-up ([`Store::gc`](crate::Store::gc)), in order:
/// after the reviewer notes of the actions that go, after each history entry removed, after
/// the contents nothing needs any more.
pub const GC_CRASH_STEPS: &[&str] = &["gc-notes", "gc-history:<n>", "gc-blobs"];

/// Aborts the process at the point named by [`CRASH_AT_ENV`]: a step name (`renamed:2`) or the
/// ordinal of a point counted from 1 (`7`).
pub(crate) struct CrashHook {
    target: Option<String>,
    reached: usize,
}

impl CrashHook {
    /// The hook the environment asks for (none when [`CRASH_AT_ENV`] is unset or empty).
    pub(crate) fn from_env() -> Self {
        Self {
            target: std::env::var(CRASH_AT_ENV)
                .ok()
                .filter(|target| !target.is_empty()),
            reached: 0,
        }
    }

    /// A hook that never fires (recovery runs without one).
    pub(crate) fn disabled() -> Self {
        Self {
            target: None,
            reached: 0,
        }
    }

    /// The step `step` is done: abort here when it is the target.
    pub(crate) fn point(&mut self, step: &str) {
        self.reached += 1;
        if let Some(target) = &self.target
            && (target == step || target.parse::<usize>() == Ok(self.reached))
        {
            std::process::abort();
        }
    }
}
