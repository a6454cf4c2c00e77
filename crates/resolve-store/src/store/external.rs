//! Resolving a pending action whose payload is an MCP tool call: the caller makes the call
//! under the store's lock, and the action moves to the history only when it succeeded. A
//! marker names the call while it is made, so a process killed during it leaves a trace the
//! next try reports instead of calling again unknowingly.

use resolve_core::Extra;
use serde::{Deserialize, Serialize};

use super::Store;
use super::notes::NoteResolution;
use super::records::{Attribution, Outcome, PendingRecord, write_json};
use crate::error::StoreError;
use crate::fs;
use crate::layout::{RecordKind, call_marker};
use crate::transaction::Purpose;

/// The MCP call in flight for a pending action, as its marker file records it.
#[derive(Clone, Serialize, Deserialize)]
struct McpCallMarker {
    server: String,
    tool: String,
}

impl Store {
    /// Resolve a pending action whose payload is not a change set: under the store's lock,
    /// `perform` does the work (an MCP tool call, say) on the current record, and only when it
    /// succeeds does the action move to history as `outcome`. So two processes can never both
    /// perform one action. When `perform` fails, the action stays pending; a failed apply moves
    /// it to the head of the stack. No file is written either way.
    ///
    /// While the MCP call is made, a marker names it (`pending/<seq>.calling`); it goes with the
    /// move to history, or when the call fails. A marker found here was left by a process that
    /// stopped during its call (the lock is ours): the call may have run, so this try makes no
    /// call and fails with [`StoreError::InterruptedCall`], and the next one calls again.
    pub fn resolve_external<T, E>(
        &self,
        id: &str,
        outcome: Outcome,
        reason: &str,
        extra: Option<Extra>,
        perform: impl FnOnce(&PendingRecord) -> Result<T, E>,
    ) -> Result<Result<T, E>, StoreError> {
        let attribution = self.default_attribution();
        self.resolve_external_attributed(id, outcome, reason, extra, attribution.as_ref(), perform)
    }

    /// [`Store::resolve_external`], recording who decided as `attribution` says.
    pub fn resolve_external_as<T, E>(
        &self,
        id: &str,
        outcome: Outcome,
        reason: &str,
        extra: Option<Extra>,
        attribution: &Attribution,
        perform: impl FnOnce(&PendingRecord) -> Result<T, E>,
    ) -> Result<Result<T, E>, StoreError> {
        self.resolve_external_attributed(id, outcome, reason, extra, Some(attribution), perform)
    }

    fn resolve_external_attributed<T, E>(
        &self,
        id: &str,
        outcome: Outcome,
        reason: &str,
        extra: Option<Extra>,
        attribution: Option<&Attribution>,
        perform: impl FnOnce(&PendingRecord) -> Result<T, E>,
    ) -> Result<Result<T, E>, StoreError> {
        let _lock = self.session()?;
        let mut record = self.require_pending(id)?;
        let marker_name = call_marker(record.seq);
        let marker = self.workspace.layout().join(&marker_name);
        let call = record.mcp.as_ref().and_then(|action| {
            let call = match outcome {
                Outcome::Applied => Some(&action.apply),
                Outcome::Discarded => action.reject.as_ref(),
            }?;
            Some(McpCallMarker {
                server: action.server.clone(),
                tool: call.tool.clone(),
            })
        });
        if call.is_some() {
            // Calling a tool a foreign record names is running its payload.
            self.refuse_foreign(&record)?;
        }
        if let Some(bytes) = fs::read_state_file(&marker, fs::STATE_FILE_MAX_LEN)? {
            // The marker names the call that was made (it may be the other of apply and reject).
            let interrupted = serde_json::from_slice::<McpCallMarker>(&bytes)
                .ok()
                .or_else(|| call.clone());
            fs::remove_file(&marker)?;
            fs::sync_dir(&fs::parent_of(&marker))?;
            let (server, tool) = interrupted.map_or_else(
                || ("(unknown)".to_owned(), "(unknown)".to_owned()),
                |call| (call.server, call.tool),
            );
            return Err(StoreError::InterruptedCall {
                id: id.to_owned(),
                server,
                tool,
            });
        }
        if let Some(call) = &call {
            fs::atomic_write_json(&marker, call)?;
        }
        let performed = perform(&record);
        let note = match &performed {
            Ok(_) => self.resolution_note(
                &record,
                attribution,
                NoteResolution {
                    outcome,
                    reason: reason.to_owned(),
                    applied_files: Vec::new(),
                    dropped_files: Vec::new(),
                    review: None,
                },
            )?,
            Err(_) => None,
        };
        let also_remove = call.map(|_| marker_name);
        match (&performed, outcome) {
            (Ok(_), Outcome::Applied | Outcome::Discarded) => {
                record.order = self.take_seq()?;
                let history = self.resolved_now(record, outcome, reason, extra, attribution);
                let purpose = match outcome {
                    Outcome::Applied => Purpose::Apply,
                    Outcome::Discarded => Purpose::Discard,
                };
                self.commit_noting(purpose, Vec::new(), &history, also_remove, note.as_ref())?;
            }
            (Err(_), _) => {
                if outcome == Outcome::Applied {
                    record.order = self.take_seq()?;
                    self.sign_pending(&mut record)?;
                    write_json(&self.record_path(RecordKind::Pending, record.seq), &record)?;
                }
                if also_remove.is_some() {
                    fs::remove_file(&marker)?;
                }
            }
        }
        Ok(performed)
    }
}
