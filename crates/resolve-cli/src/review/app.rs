//! The review's state and what each key does to it: the cursor (action, file, hunk), the
//! decisions, the one-line prompt and help. Pure: a key goes in, the state changes, and what
//! needs the outside world (apply, discard, amend, quit) comes out as an [`Effect`].

use std::collections::HashMap;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use resolve_edit::MergeSide;

use super::model::{ActionView, ApplyRequest, Decision, FileKind, FileView, HunkView, Rejection};

/// What the one-line prompt asks a reason for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptPurpose {
    /// Rejecting the hunk under the cursor (the reason may be left empty).
    Reject,
    /// Applying what is kept (the overall reason).
    Apply,
    /// Discarding the action.
    Discard,
}

/// The one-line prompt: what it asks and what has been typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prompt {
    /// What the answer is for.
    pub purpose: PromptPurpose,
    /// The text typed so far.
    pub input: String,
}

/// What the screen shows besides the review.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// The review itself.
    Browse,
    /// The key help, over the review.
    Help,
    /// A one-line prompt at the bottom.
    Prompt(Prompt),
}

/// What a key asks of the outside world.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Nothing: the state changed, or did not.
    None,
    /// Leave the review without changing anything.
    Quit,
    /// Apply what is kept.
    Apply(ApplyRequest),
    /// Discard the action.
    Discard {
        /// The action.
        id: String,
        /// Why.
        reason: String,
    },
    /// Edit the new content of one file of the action.
    Amend {
        /// The action.
        id: String,
        /// The file, relative to the root.
        path: String,
    },
    /// Settle a file that conflicts since the preview: each conflicting hunk takes `side`.
    Settle {
        /// The action.
        id: String,
        /// The file, relative to the root.
        path: String,
        /// The side its conflicting hunks take.
        side: MergeSide,
    },
}

/// The review's state.
#[derive(Debug, Clone)]
pub struct App {
    /// The pending actions, head first.
    pub actions: Vec<ActionView>,
    /// Index of the action shown.
    pub action: usize,
    /// Index of the file under the cursor in that action.
    pub file: usize,
    /// Index of the hunk under the cursor in that file.
    pub hunk: usize,
    /// Lines scrolled past the cursor hunk's header (PageDown/PageUp).
    pub scroll: usize,
    /// Browsing, help or a prompt.
    pub mode: Mode,
    /// A one-line message for the reviewer (what just happened, or why a key did nothing).
    pub status: Option<String>,
    /// Decided hunks of actions reloaded before their files were computed again, by action
    /// id: they carry over to the same hunks when those files are computed.
    carried: HashMap<String, Vec<HunkView>>,
}

/// Rows of the file list at most.
pub const MAX_FILE_ROWS: usize = 5;

/// The cursor's hunk index when it moved up into a file not computed yet: its last hunk, once
/// the file is computed.
const LAST_HUNK: usize = usize::MAX;

impl App {
    /// A review of `actions`, opened on the first hunk of the first file of the head.
    pub fn new(actions: Vec<ActionView>) -> Self {
        Self {
            actions,
            action: 0,
            file: 0,
            hunk: 0,
            scroll: 0,
            mode: Mode::Browse,
            status: None,
            carried: HashMap::new(),
        }
    }

    /// The rows of the file list shown: the cursor's file and those before it, up to
    /// [`MAX_FILE_ROWS`].
    pub fn shown_files(&self) -> std::ops::Range<usize> {
        let files = self.current_action().map_or(0, |action| action.files.len());
        let rows = files.clamp(1, MAX_FILE_ROWS);
        let first = self.file.saturating_sub(rows - 1);
        first..(first + rows).min(files)
    }

    /// The files of the current action to compute before the next draw: those the file list
    /// shows (the cursor's among them), and all of them while the apply prompt is open (it
    /// counts the hunks kept).
    pub fn files_to_load(&self) -> Vec<usize> {
        let Some(action) = self.current_action() else {
            return Vec::new();
        };
        let all =
            matches!(&self.mode, Mode::Prompt(prompt) if prompt.purpose == PromptPurpose::Apply);
        let shown = self.shown_files();
        action
            .files
            .iter()
            .enumerate()
            .filter(|(index, file)| !file.loaded && (all || shown.contains(index)))
            .map(|(index, _)| index)
            .collect()
    }

    /// Show the computed `view` of the current action's file `file`: decisions made on its
    /// hunks before a reload carry over, and a cursor that moved up into it lands on its last
    /// hunk.
    pub fn fill_file(&mut self, file: usize, mut view: FileView) {
        let Some(action) = self.actions.get_mut(self.action) else {
            return;
        };
        if let Some(carried) = self.carried.get(&action.id) {
            let carried: Vec<&HunkView> = carried.iter().collect();
            carry_hunk_decisions(&carried, &mut view.hunks);
        }
        let Some(slot) = action.files.get_mut(file) else {
            return;
        };
        *slot = view;
        if file == self.file && self.hunk == LAST_HUNK {
            self.hunk = slot.hunks.len().saturating_sub(1);
        }
    }

    /// The action shown, if any remains.
    pub fn current_action(&self) -> Option<&ActionView> {
        self.actions.get(self.action)
    }

    /// The file under the cursor.
    pub fn current_file(&self) -> Option<&FileView> {
        self.current_action()?.files.get(self.file)
    }

    /// The hunk under the cursor.
    pub fn current_hunk(&self) -> Option<&HunkView> {
        self.current_file()?.hunks.get(self.hunk)
    }

    fn current_file_mut(&mut self) -> Option<&mut FileView> {
        self.actions.get_mut(self.action)?.files.get_mut(self.file)
    }

    fn current_hunk_mut(&mut self) -> Option<&mut HunkView> {
        let hunk = self.hunk;
        self.current_file_mut()?.hunks.get_mut(hunk)
    }

    /// How many hunks the reviewer rejected, over every action's computed files.
    #[cfg(test)]
    pub fn decisions(&self) -> usize {
        self.actions
            .iter()
            .map(|action| {
                let (kept, total) = action.kept_of_total();
                total - kept
            })
            .sum()
    }

    /// Handle one key; key releases and repeats of nothing are ignored.
    pub fn handle_key(&mut self, key: KeyEvent) -> Effect {
        if key.kind == KeyEventKind::Release {
            return Effect::None;
        }
        if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
            return Effect::Quit;
        }
        match self.mode.clone() {
            Mode::Help => {
                self.mode = Mode::Browse;
                Effect::None
            }
            Mode::Prompt(prompt) => self.prompt_key(prompt, key),
            Mode::Browse => self.browse_key(key),
        }
    }

    fn browse_key(&mut self, key: KeyEvent) -> Effect {
        self.status = None;
        match key.code {
            KeyCode::Char('j') | KeyCode::Down => self.next_hunk(),
            KeyCode::Char('k') | KeyCode::Up => self.previous_hunk(),
            KeyCode::Char('J') => self.move_to_file(self.file + 1),
            KeyCode::Char('K') => {
                if let Some(file) = self.file.checked_sub(1) {
                    self.move_to_file(file);
                }
            }
            KeyCode::Char('n') => self.move_to_action(self.action + 1),
            KeyCode::Char('p') => {
                if let Some(action) = self.action.checked_sub(1) {
                    self.move_to_action(action);
                }
            }
            KeyCode::PageDown => self.scroll += 10,
            KeyCode::PageUp => self.scroll = self.scroll.saturating_sub(10),
            KeyCode::Char(' ') => self.toggle_hunk(),
            KeyCode::Char('r') => {
                if let Some(hunk) = self.current_hunk() {
                    // A hunk rejected before (with `space`, or with a reason) gets its reason
                    // here, or has it edited.
                    let given = match &hunk.decision {
                        Decision::Rejected { reason } => reason.clone().unwrap_or_default(),
                        Decision::Kept => String::new(),
                    };
                    self.open_prompt(PromptPurpose::Reject);
                    if let Mode::Prompt(prompt) = &mut self.mode {
                        prompt.input = given;
                    }
                } else {
                    self.status = Some("No hunk under the cursor to reject.".to_owned());
                }
            }
            KeyCode::Char('R') => self.decide_file(true),
            KeyCode::Char('A') => self.decide_file(false),
            KeyCode::Char('e') => return self.amend(),
            KeyCode::Char('C') => return self.settle(MergeSide::Current),
            KeyCode::Char('P') => return self.settle(MergeSide::Preview),
            KeyCode::Char('a') => self.start_apply(),
            KeyCode::Char('d') if self.current_action().is_some() => {
                self.open_prompt(PromptPurpose::Discard);
            }
            KeyCode::Char('?') => self.mode = Mode::Help,
            KeyCode::Char('q') => return Effect::Quit,
            _ => {}
        }
        Effect::None
    }

    fn prompt_key(&mut self, mut prompt: Prompt, key: KeyEvent) -> Effect {
        match key.code {
            KeyCode::Esc => {
                self.mode = Mode::Browse;
                self.status = None;
                return Effect::None;
            }
            KeyCode::Enter => return self.confirm(prompt),
            KeyCode::Backspace => {
                prompt.input.pop();
            }
            KeyCode::Char('u') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                prompt.input.clear();
            }
            KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                prompt.input.push(c);
            }
            _ => {}
        }
        self.mode = Mode::Prompt(prompt);
        Effect::None
    }

    fn confirm(&mut self, prompt: Prompt) -> Effect {
        let reason = resolve_edit::reviewer_reason(&prompt.input);
        let text = reason.clone().unwrap_or_default();
        match prompt.purpose {
            PromptPurpose::Reject => {
                if let Some(hunk) = self.current_hunk_mut() {
                    hunk.decision = Decision::Rejected { reason };
                }
                self.mode = Mode::Browse;
                Effect::None
            }
            PromptPurpose::Apply | PromptPurpose::Discard if text.is_empty() => {
                self.status = Some("Give a reason (Esc cancels).".to_owned());
                self.mode = Mode::Prompt(prompt);
                Effect::None
            }
            PromptPurpose::Apply => {
                self.mode = Mode::Browse;
                match self.apply_request(text) {
                    Some(request) => Effect::Apply(request),
                    None => Effect::None,
                }
            }
            PromptPurpose::Discard => {
                self.mode = Mode::Browse;
                match self.current_action() {
                    Some(action) => Effect::Discard {
                        id: action.id.clone(),
                        reason: text,
                    },
                    None => Effect::None,
                }
            }
        }
    }

    fn open_prompt(&mut self, purpose: PromptPurpose) {
        self.mode = Mode::Prompt(Prompt {
            purpose,
            input: String::new(),
        });
    }

    /// The stops of the cursor in the current action: every hunk of every file, and a file
    /// without hunks as one stop of its own.
    fn stops(&self) -> Vec<(usize, usize)> {
        self.current_action()
            .map(|action| {
                action
                    .files
                    .iter()
                    .enumerate()
                    .flat_map(|(file, view)| (0..view.hunks.len().max(1)).map(move |h| (file, h)))
                    .collect()
            })
            .unwrap_or_default()
    }

    fn next_hunk(&mut self) {
        let stops = self.stops();
        if let Some(at) = stops
            .iter()
            .position(|&stop| stop == (self.file, self.hunk))
            && let Some(&(file, hunk)) = stops.get(at + 1)
        {
            (self.file, self.hunk, self.scroll) = (file, hunk, 0);
        }
    }

    fn previous_hunk(&mut self) {
        let stops = self.stops();
        if let Some(at) = stops
            .iter()
            .position(|&stop| stop == (self.file, self.hunk))
            && let Some(previous) = at.checked_sub(1)
        {
            (self.file, self.hunk) = stops[previous];
            let computed = self.current_file().is_none_or(|file| file.loaded);
            if !computed && self.file != stops[at].0 {
                self.hunk = LAST_HUNK;
            }
            self.scroll = 0;
        }
    }

    fn move_to_file(&mut self, file: usize) {
        let files = self.current_action().map_or(0, |action| action.files.len());
        if file < files {
            (self.file, self.hunk, self.scroll) = (file, 0, 0);
        }
    }

    fn move_to_action(&mut self, action: usize) {
        if action < self.actions.len() {
            (self.action, self.file, self.hunk, self.scroll) = (action, 0, 0, 0);
        }
    }

    fn toggle_hunk(&mut self) {
        match self.current_hunk_mut() {
            Some(hunk) => {
                hunk.decision = if hunk.decision.is_rejected() {
                    Decision::Kept
                } else {
                    Decision::Rejected { reason: None }
                };
            }
            None => self.status = Some("No hunk under the cursor to toggle.".to_owned()),
        }
    }

    /// Reject (`true`) or keep every hunk of the current file; a hunk already rejected keeps
    /// its reason.
    fn decide_file(&mut self, reject: bool) {
        if let Some(file) = self.current_file_mut() {
            for hunk in &mut file.hunks {
                match (reject, hunk.decision.is_rejected()) {
                    (true, false) => hunk.decision = Decision::Rejected { reason: None },
                    (false, true) => hunk.decision = Decision::Kept,
                    (true, true) | (false, false) => {}
                }
            }
        }
    }

    fn amend(&mut self) -> Effect {
        let Some(action) = self.current_action() else {
            return Effect::None;
        };
        match action.files.get(self.file) {
            Some(file) if file.kind == FileKind::Delete => {
                self.status = Some(format!(
                    "{} is deleted by this action; there is no content to edit.",
                    file.path
                ));
                Effect::None
            }
            Some(file) => Effect::Amend {
                id: action.id.clone(),
                path: file.path.clone(),
            },
            None => {
                self.status = Some("This action changes no file to edit.".to_owned());
                Effect::None
            }
        }
    }

    fn settle(&mut self, side: MergeSide) -> Effect {
        let Some(action) = self.current_action() else {
            return Effect::None;
        };
        match action.files.get(self.file) {
            Some(file) if !file.conflicts.is_empty() => Effect::Settle {
                id: action.id.clone(),
                path: file.path.clone(),
                side,
            },
            Some(_) | None => {
                self.status = Some(
                    "Only a file that conflicts with changes made since the preview can take a side."
                        .to_owned(),
                );
                Effect::None
            }
        }
    }

    fn start_apply(&mut self) {
        let Some(action) = self.current_action() else {
            return;
        };
        let (kept, total) = action.kept_of_total();
        if total > 0 && kept == 0 && action.files.iter().all(|file| !file.hunks.is_empty()) {
            self.status = Some("Every hunk is rejected: press d to discard instead.".to_owned());
            return;
        }
        self.open_prompt(PromptPurpose::Apply);
    }

    /// What applying the current action with `reason` asks for.
    fn apply_request(&self, reason: String) -> Option<ApplyRequest> {
        let action = self.current_action()?;
        let rejected: Vec<Rejection> = action
            .files
            .iter()
            .flat_map(|file| &file.hunks)
            .filter_map(|hunk| match &hunk.decision {
                Decision::Kept => None,
                Decision::Rejected { reason } => Some(Rejection {
                    address: hunk.address.clone(),
                    reason: reason.clone(),
                }),
            })
            .collect();
        Some(ApplyRequest {
            id: action.id.clone(),
            version: action.version.clone(),
            rejected,
            reason,
            comments: Vec::new(),
        })
    }

    /// Show `actions` (reloaded after a change) in place of the current ones: decisions
    /// carry over to hunks that are still the same, the cursor stays on the same action id
    /// when it is still pending (otherwise on the action now at its place), and on the same
    /// file and hunk when they still exist.
    pub fn replace_actions(&mut self, mut actions: Vec<ActionView>) {
        let current_id = self.current_action().map(|action| action.id.clone());
        for action in &mut actions {
            if let Some(old) = self.actions.iter().find(|old| old.id == action.id) {
                if old.version == action.version {
                    keep_computed_files(old, action);
                } else {
                    let decided = self.carried.entry(action.id.clone()).or_default();
                    decided.extend(
                        old.files
                            .iter()
                            .flat_map(|file| &file.hunks)
                            .filter(|hunk| hunk.decision != Decision::Kept)
                            .cloned(),
                    );
                }
                carry_decisions(old, action);
            }
        }
        self.carried
            .retain(|id, _| actions.iter().any(|action| &action.id == id));
        let position = current_id.and_then(|id| actions.iter().position(|action| action.id == id));
        self.actions = actions;
        match position {
            Some(action) => {
                self.action = action;
                let files = self.actions[action].files.len();
                if self.file >= files {
                    (self.file, self.hunk) = (0, 0);
                }
                let hunks = self.current_file().map_or(0, |file| file.hunks.len());
                if self.hunk >= hunks {
                    self.hunk = 0;
                }
            }
            None => {
                self.action = self.action.min(self.actions.len().saturating_sub(1));
                (self.file, self.hunk) = (0, 0);
            }
        }
        self.scroll = 0;
    }
}

/// The files of `old` already computed, in place of the same files of `new` not computed yet
/// (the action is the same version: they did not change).
fn keep_computed_files(old: &ActionView, new: &mut ActionView) {
    for (file, old_file) in new.files.iter_mut().zip(&old.files) {
        if !file.loaded && old_file.loaded && file.path == old_file.path {
            file.clone_from(old_file);
        }
    }
}

/// Copy the decisions of `old` onto the hunks of `new` that are unchanged (same address,
/// header and lines).
fn carry_decisions(old: &ActionView, new: &mut ActionView) {
    let old_hunks: Vec<&HunkView> = old.files.iter().flat_map(|file| &file.hunks).collect();
    for file in &mut new.files {
        carry_hunk_decisions(&old_hunks, &mut file.hunks);
    }
}

/// Copy the decisions of `old` onto the hunks of `new` that are unchanged.
fn carry_hunk_decisions(old: &[&HunkView], new: &mut [HunkView]) {
    for hunk in new {
        if let Some(previous) = old.iter().find(|previous| {
            previous.address == hunk.address
                && previous.header == hunk.header
                && previous.lines == hunk.lines
        }) {
            hunk.decision = previous.decision.clone();
        }
    }
}

#[cfg(test)]
#[path = "app_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "app_lazy_tests.rs"]
mod lazy_tests;
