//! `resolve review`: a full-screen review of the pending actions, hunk by hunk, and the same
//! review for one action when `resolve agent --approve ask` asks on a terminal.
//!
//! Modules, bottom up: `model` (what is shown), `app` (the state and the keys; pure),
//! `render` (drawing), `terminal` (raw mode and the alternate screen, restored on every way
//! out), and `adapter`, the only one that reads or changes the store. `web` serves the same
//! review to a browser (`resolve review --web`) over the same `model` and `adapter`. The editor is the
//! crate's (`crate::editor`, shared with `resolve amend`). This module runs the loop: draw,
//! read a key, carry out its effect.

mod adapter;
mod app;
mod model;
mod render;
mod terminal;
pub(crate) mod web;

#[cfg(test)]
mod sample;

use std::collections::HashMap;
use std::time::Instant;

use crossterm::event::{self, Event};
use resolve_core::count_noun;
use resolve_edit::{Decision, DraftRejection, MergeSide, Store};

pub(crate) use adapter::HubFactory;
use adapter::ReviewStore;
use app::{App, Effect};
use model::ApplyRequest;
pub(crate) use model::age_text;
use render::Theme;
use terminal::Screen;

use crate::Outcome;
use crate::output::{Output, err_line, out_line};

/// The message when there is no terminal to review on.
pub const NO_TERMINAL: &str = "`resolve review` needs a terminal (standard input and output). \
Without one, apply chosen hunks with `resolve apply --only PATH#N --reason TEXT`, or drop an \
action with `resolve discard --reason TEXT`; `resolve show` prints the hunks with their addresses.";

/// Review every pending action on the terminal; a one-line summary of what was done is printed
/// after the screen is restored.
pub(crate) fn run(store: &Store, hub: HubFactory, output: Output) -> anyhow::Result<Outcome> {
    if !terminal::is_interactive() {
        err_line(&format!("error: {NO_TERMINAL}"));
        return Ok(Outcome::Usage);
    }
    let review = ReviewStore::new(store.clone(), hub);
    let actions = review.load(None)?;
    if actions.is_empty() {
        out_line("No pending actions to review.");
        return Ok(Outcome::Success);
    }
    let mut screen = Screen::enter()?;
    let mut session = Session {
        review: &review,
        app: App::new(actions),
        theme: Theme {
            color: output.is_color(),
        },
        done: Vec::new(),
        deadline: None,
        marks: HashMap::new(),
    };
    let ended = session.resolve_until_done(&mut screen);
    drop(screen);
    ended?;
    out_line(&session.summary());
    Ok(Outcome::Success)
}

/// What the reviewer decided about one action in [`decide`].
#[derive(Debug, Clone, PartialEq, Eq)]
enum Decided {
    /// Apply what is kept.
    Apply(ApplyRequest),
    /// Discard, with the reason.
    Discard(String),
    /// Left without deciding (`q`).
    Quit,
    /// Nothing decided before the deadline; the screen closed itself.
    TimedOut,
}

/// What the terminal review of one apply says when it opens.
const GATE_STATUS: &str =
    "The model asks to apply this: a applies what is kept, d discards, q declines.";

/// The reason recorded when the reviewer discards at a line prompt without giving one.
pub const DECLINED: &str = "The user declined without a reason.";

/// What the model reads when the reviewer leaves the review of its apply with `q`.
pub const LEFT_PENDING: &str = "Not applied: the person left the review without deciding. Nothing was written; the preview stays pending. Call `resolve` again to ask again, or discard it.";

/// The terminal review of `resolve agent --approve ask|review`: review the pending action
/// `id` the model asks to apply, and say what lands (amendments are made at once), with the
/// person's reason for an apply. `q` leaves it pending; at `deadline` the screen closes and
/// nothing is decided (`None`).
pub(crate) fn review_decision(
    store: &Store,
    id: &str,
    color: bool,
    deadline: Option<Instant>,
) -> anyhow::Result<Option<(Decision, Option<String>)>> {
    let review = ReviewStore::deciding(store.clone());
    Ok(Some(match decide(&review, id, color, deadline)? {
        Decided::Apply(request) if request.rejected.is_empty() => {
            (Decision::Apply, Some(request.reason))
        }
        Decided::Apply(request) => (
            Decision::ApplyPart(adapter::review_decision(&request)?),
            Some(request.reason),
        ),
        Decided::Discard(reason) => (Decision::Discard { reason }, None),
        Decided::Quit => (
            Decision::LeavePending {
                why: LEFT_PENDING.to_owned(),
            },
            None,
        ),
        Decided::TimedOut => return Ok(None),
    }))
}

/// Review the one pending action `id` on the terminal and return the decision without carrying
/// it out (the caller does); amendments are made at once.
fn decide(
    review: &ReviewStore,
    id: &str,
    color: bool,
    deadline: Option<Instant>,
) -> anyhow::Result<Decided> {
    let actions = review.load(Some(id))?;
    if actions.is_empty() {
        anyhow::bail!("{id} is no longer pending");
    }
    let mut screen = Screen::enter()?;
    let mut app = App::new(actions);
    app.status = Some(GATE_STATUS.to_owned());
    let mut session = Session {
        review,
        app,
        theme: Theme { color },
        done: Vec::new(),
        deadline,
        marks: HashMap::new(),
    };
    let decided = session.decide(&mut screen);
    drop(screen);
    decided
}

/// Whether the review can run here: standard input and output are terminals.
pub(crate) fn is_interactive() -> bool {
    terminal::is_interactive()
}

/// One run of the review loop.
struct Session<'a> {
    review: &'a ReviewStore,
    app: App,
    theme: Theme,
    /// What was applied or discarded, in order, for the summary.
    done: Vec<String>,
    /// When the screen closes by itself if nothing was decided (`None`: never).
    deadline: Option<Instant>,
    /// The marks last seen on each action, to save its review in progress when they change.
    marks: HashMap<String, Vec<DraftRejection>>,
}

impl Session<'_> {
    /// Draw and read keys, carrying out applies and discards, until `q` or nothing is left.
    fn resolve_until_done(&mut self, screen: &mut Screen) -> anyhow::Result<()> {
        loop {
            let Some(effect) = self.next_effect(screen)? else {
                return Ok(());
            };
            match effect {
                Effect::Quit => return Ok(()),
                Effect::Apply(request) => {
                    let result = self.review.apply(&request);
                    self.after_resolve(result, applied_summary(&request))?;
                }
                Effect::Discard { id, reason } => {
                    let result = self.review.discard(&id, &reason);
                    self.after_resolve(result, format!("discarded {id}"))?;
                }
                Effect::Amend { id, path } => self.amend(screen, &id, &path)?,
                Effect::Settle { id, path, side } => self.settle(&id, &path, side)?,
                Effect::None => {}
            }
            if self.app.actions.is_empty() {
                return Ok(());
            }
        }
    }

    /// Draw and read keys until the reviewer applies, discards or quits.
    fn decide(&mut self, screen: &mut Screen) -> anyhow::Result<Decided> {
        loop {
            let Some(effect) = self.next_effect(screen)? else {
                return Ok(Decided::TimedOut);
            };
            match effect {
                Effect::Quit => return Ok(Decided::Quit),
                Effect::Apply(request) => return Ok(Decided::Apply(request)),
                Effect::Discard { reason, .. } => return Ok(Decided::Discard(reason)),
                Effect::Amend { id, path } => self.amend(screen, &id, &path)?,
                Effect::Settle { id, path, side } => self.settle(&id, &path, side)?,
                Effect::None => {}
            }
        }
    }

    /// Draw the review, then wait for a key and hand it to the state (saving the marks it
    /// changed); `None` when the deadline passed first.
    fn next_effect(&mut self, screen: &mut Screen) -> anyhow::Result<Option<Effect>> {
        self.compute_visible_files()?;
        self.save_marks();
        let (app, theme) = (&self.app, self.theme);
        screen
            .terminal()
            .draw(|frame| render::draw(frame, app, theme))?;
        if let Some(deadline) = self.deadline {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || !event::poll(left)? {
                return Ok(None);
            }
        }
        let effect = match event::read()? {
            Event::Key(key) => self.app.handle_key(key),
            _ => Effect::None,
        };
        self.save_marks();
        Ok(Some(effect))
    }

    /// How many rejected hunks the reviews in progress of the actions still pending keep
    /// (files not computed in this review included).
    fn kept_marks(&self) -> usize {
        self.app
            .actions
            .iter()
            .filter_map(|action| self.review.draft(&action.id).ok().flatten())
            .map(|draft| draft.rejected.len())
            .sum()
    }

    /// Save the current action's marks as its review in progress when they changed since last
    /// seen, so that quitting (or going to the browser) loses none of them.
    fn save_marks(&mut self) {
        let Some(action) = self.app.current_action() else {
            return;
        };
        let marks = adapter::marks_of(action);
        let Some(seen) = self.marks.insert(action.id.clone(), marks.clone()) else {
            return;
        };
        if seen != marks
            && let Err(error) = self.review.save_marks(action)
        {
            self.app.status = Some(format!(
                "Your marks were not saved: {}",
                first_line(&format!("{error:#}"))
            ));
        }
    }

    /// Compute the files the next screen needs (the one under the cursor; all of the action's
    /// at its apply prompt) that are not computed yet. An action that changed meanwhile is
    /// read again.
    fn compute_visible_files(&mut self) -> anyhow::Result<()> {
        for file in self.app.files_to_load() {
            let Some(action) = self.app.current_action() else {
                return Ok(());
            };
            let Some(path) = action.files.get(file).map(|view| view.path.clone()) else {
                continue;
            };
            let (id, version) = (action.id.clone(), action.version.clone());
            match self.review.load_file(&id, &version, &path) {
                Ok(Some(view)) => self.app.fill_file(file, view),
                Ok(None) => {
                    let only = self.app.actions.len() == 1;
                    self.app
                        .replace_actions(self.review.load(only.then_some(&id))?);
                    return Ok(());
                }
                Err(error) => {
                    self.app.status = Some(first_line(&format!("{error:#}")));
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    /// Show the outcome of an apply or discard, and the actions still pending.
    fn after_resolve(
        &mut self,
        result: anyhow::Result<String>,
        done: String,
    ) -> anyhow::Result<()> {
        match result {
            Ok(text) => {
                self.done.push(done);
                self.app.replace_actions(self.review.load(None)?);
                self.app.status = text.lines().next().map(str::to_owned);
            }
            Err(error) => self.app.status = Some(first_line(&format!("{error:#}"))),
        }
        Ok(())
    }

    /// Edit `path` of `id` in the editor with the screen suspended, then amend the action and
    /// show its recomputed hunks.
    fn amend(&mut self, screen: &mut Screen, id: &str, path: &str) -> anyhow::Result<()> {
        let version = self
            .app
            .current_action()
            .map(|action| action.version.clone())
            .unwrap_or_default();
        let content = match self.review.content(id, path) {
            Ok(content) => content,
            Err(error) => {
                self.app.status = Some(first_line(&format!("{error:#}")));
                return Ok(());
            }
        };
        let edited = screen.suspended(|| crate::editor::edit_in_editor(path, &content))?;
        self.app.status = Some(match edited {
            Ok(edited) if edited == content => format!("{path} is unchanged; nothing amended."),
            Ok(edited) => match self.review.amend(id, &version, path, edited) {
                Ok(false) => format!("{path} is unchanged; nothing amended."),
                Ok(true) => {
                    let only = self.app.actions.len() == 1;
                    self.app
                        .replace_actions(self.review.load(only.then_some(id))?);
                    format!("Amended {path}; its hunks are recomputed.")
                }
                Err(error) => first_line(&format!("{error:#}")),
            },
            Err(error) => first_line(&format!("{error:#}")),
        });
        Ok(())
    }

    /// Settle `path` of `id` onto the file as it is now, each conflicting hunk taking `side`,
    /// and show its recomputed hunks.
    fn settle(&mut self, id: &str, path: &str, side: MergeSide) -> anyhow::Result<()> {
        let version = self
            .app
            .current_action()
            .map(|action| action.version.clone())
            .unwrap_or_default();
        self.app.status = Some(match self.review.settle(id, &version, path, side) {
            Ok(text) => {
                let only = self.app.actions.len() == 1;
                self.app
                    .replace_actions(self.review.load(only.then_some(id))?);
                text
            }
            Err(error) => first_line(&format!("{error:#}")),
        });
        Ok(())
    }

    /// What the review did, and the marks it keeps for the next one.
    fn summary(&self) -> String {
        let left = match self.app.actions.len() {
            0 => "nothing is pending".to_owned(),
            1 => "1 action still pending".to_owned(),
            n => format!("{n} actions still pending"),
        };
        let mut summary = if self.done.is_empty() {
            format!("Review ended without changes; {left}.")
        } else {
            let mut done = self.done.join(", ");
            if let Some(first) = done.get_mut(..1) {
                first.make_ascii_uppercase();
            }
            format!("{done}; {left}.")
        };
        let marked = self.kept_marks();
        if marked > 0 {
            summary.push_str(&format!(
                "\nKept for the next review: {}.",
                count_noun(marked, "rejected hunk")
            ));
        }
        summary
    }
}

/// `applied ID` with what landed when hunks were rejected: `applied ID (2 of 3 hunks;
/// rejected src/a.rs#2)`.
fn applied_summary(request: &ApplyRequest) -> String {
    if request.rejected.is_empty() {
        return format!("applied {}", request.id);
    }
    let rejected: Vec<&str> = request
        .rejected
        .iter()
        .map(|rejection| rejection.address.as_str())
        .collect();
    format!("applied {} (rejected {})", request.id, rejected.join(", "))
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or("").to_owned()
}
