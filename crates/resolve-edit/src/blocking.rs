//! Running blocking work (store I/O under the lock, a prompt, a producer's walk) from async
//! code: the one helper every crate above uses, and the one error for a task that died.

/// A blocking task panicked (or the runtime shut down) before it finished.
#[derive(Debug, thiserror::Error)]
#[error("the {task} task died: {source}")]
pub struct TaskDied {
    /// What the task was doing (`apply`, `discard`, `file tool`, …).
    pub task: &'static str,
    /// Why it did not finish.
    #[source]
    pub source: tokio::task::JoinError,
}

/// Run `work` on the runtime's blocking pool and wait for it; `task` names it in the error.
pub async fn run_blocking<T: Send + 'static>(
    task: &'static str,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, TaskDied> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|source| TaskDied { task, source })
}

impl From<TaskDied> for resolve_core::ActionError {
    fn from(error: TaskDied) -> Self {
        Self::Failed(error.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_task_that_panics_is_named_in_the_error() {
        assert_eq!(run_blocking("sum", || 1 + 1).await.unwrap(), 2);
        let error = run_blocking("apply", || -> () { panic!("boom") })
            .await
            .unwrap_err();
        assert!(
            error.to_string().starts_with("the apply task died: "),
            "{error}"
        );
    }
}
