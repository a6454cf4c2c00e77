//! [`PlanMode`]: how a session starts in plan mode — where plans go, who approves them, and
//! which tools the model has meanwhile.
//!
//! Owned here: the configuration and its defaults. Not owned: entering and leaving plan mode
//! (`runtime`).

use std::fmt;
use std::sync::Arc;

use resolve_edit::{Approver, AutoApprover, Workspace};

use super::files::PlanFiles;
use resolve_core::Tool;

/// How a session starts in plan mode: where plans go, who approves them, and which tools the
/// model has meanwhile.
#[derive(Clone)]
pub struct PlanMode {
    pub(super) files: PlanFiles,
    pub(super) approver: Arc<dyn Approver>,
    pub(super) tools: Vec<Arc<dyn Tool>>,
}

impl PlanMode {
    /// Plan mode for `workspace`: plans go to `<root>/.resolve/plans/`, every plan is approved
    /// at once ([`AutoApprover`]), and besides the plan `write` and `resolve` no tools are
    /// offered.
    pub fn new(workspace: &Workspace) -> Self {
        Self {
            files: PlanFiles::new(workspace.root().to_path_buf()),
            approver: Arc::new(AutoApprover),
            tools: Vec::new(),
        }
    }

    /// Ask `approver` about each submitted plan (an [`resolve_edit::ApprovalSubject::Plan`]).
    /// By default, [`AutoApprover`].
    #[must_use]
    pub fn with_approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = approver;
        self
    }

    /// Offer `tools` in plan mode, before the plan `write` (they should change nothing, e.g.
    /// `read`, `ls`, `grep`; none may be named `write`). By default, none.
    #[must_use]
    pub fn with_tools(mut self, tools: impl IntoIterator<Item = Arc<dyn Tool>>) -> Self {
        self.tools.extend(tools);
        self
    }
}

impl fmt::Debug for PlanMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PlanMode")
            .field("files", &self.files)
            .field("approver", &self.approver)
            .field(
                "tools",
                &self.tools.iter().map(|t| t.spec().name).collect::<Vec<_>>(),
            )
            .finish()
    }
}
