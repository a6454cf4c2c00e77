//! The workspace lock: an OS advisory lock (`flock`) on `<root>/.resolve/lock` that every store
//! operation holds while it reads or changes state, so two processes never consume one action.
//!
//! A second taker polls for up to [`LOCK_TIMEOUT`], then fails with
//! [`StoreError::LockTimeout`]. The lock is released when the [`StoreLock`] is dropped, and by
//! the kernel when the holding process dies, so a crash never leaves it stuck.

use std::fs::{File, TryLockError};
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use crate::error::StoreError;
use crate::fs;
use crate::workspace::Workspace;

/// How long a store operation waits for the lock by default.
pub const LOCK_TIMEOUT: Duration = Duration::from_secs(10);

/// How often a waiting taker retries.
const POLL_INTERVAL: Duration = Duration::from_millis(20);

/// The held workspace lock; released on drop.
#[derive(Debug)]
pub struct StoreLock {
    file: File,
    path: PathBuf,
}

impl StoreLock {
    /// Take the lock of `workspace`, waiting up to [`LOCK_TIMEOUT`]; blocks the thread.
    pub fn acquire(workspace: &Workspace) -> Result<Self, StoreError> {
        Self::acquire_with_timeout(workspace, LOCK_TIMEOUT)
    }

    /// Take the lock of `workspace`, waiting up to `timeout`; blocks the thread.
    ///
    /// Creates `<root>/.resolve/` (with its `.gitignore`) when it does not exist yet.
    pub fn acquire_with_timeout(
        workspace: &Workspace,
        timeout: Duration,
    ) -> Result<Self, StoreError> {
        workspace.layout().ensure()?;
        let path = workspace.layout().lock_file();
        let file = fs::open_lock_file(&path)?;
        let deadline = Instant::now() + timeout;
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(Self { file, path }),
                Err(TryLockError::WouldBlock) => {}
                Err(TryLockError::Error(source)) => {
                    return Err(StoreError::io("lock", &path, source));
                }
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(StoreError::LockTimeout {
                    path,
                    seconds: timeout.as_secs(),
                });
            }
            thread::sleep(POLL_INTERVAL.min(deadline - now));
        }
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for StoreLock {
    fn drop(&mut self) {
        // Closing the file releases the lock too; unlocking first just makes it immediate.
        let _unlocked = self.file.unlock();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::LOCK_FILE;
    use crate::test_support::temp_workspace;

    #[test]
    fn a_second_lock_waits_then_times_out_naming_the_lock() {
        let (_dir, ws) = temp_workspace();
        let _held = StoreLock::acquire(&ws).unwrap();
        let started = Instant::now();
        let err = StoreLock::acquire_with_timeout(&ws, Duration::from_millis(300)).unwrap_err();
        assert!(started.elapsed() >= Duration::from_millis(300));
        match &err {
            StoreError::LockTimeout { path, .. } => {
                assert_eq!(path, &ws.state_dir().join(LOCK_FILE));
            }
            other => panic!("expected a lock timeout, got {other}"),
        }
        assert!(err.to_string().contains(".resolve/lock"), "{err}");
    }

    #[test]
    fn a_waiting_lock_is_granted_when_the_holder_lets_go() {
        let (_dir, ws) = temp_workspace();
        let held = StoreLock::acquire(&ws).unwrap();
        let releaser = thread::spawn(move || {
            thread::sleep(Duration::from_millis(150));
            drop(held);
        });
        let started = Instant::now();
        let second = StoreLock::acquire_with_timeout(&ws, Duration::from_secs(5)).unwrap();
        assert!(started.elapsed() >= Duration::from_millis(100));
        assert_eq!(second.path(), ws.state_dir().join(LOCK_FILE));
        releaser.join().unwrap();
    }

    #[test]
    fn taking_the_lock_creates_the_state_directory_ignored_by_git() {
        let (_dir, ws) = temp_workspace();
        let _lock = StoreLock::acquire(&ws).unwrap();
        assert_eq!(
            std::fs::read_to_string(ws.state_dir().join(".gitignore")).unwrap(),
            "*\n"
        );
    }
}
