//! The `apply_patch` producer: a patch in Codex's format (`*** Begin Patch` … `*** End Patch`)
//! becomes one [`Preview`] of every file it adds, deletes, moves or updates.
//!
//! Parsing (the parse module) and placing change blocks in a file's text (the update and
//! seek modules) are pure; this module reads the files a patch names and plays its
//! operations in order over them, so a patch may touch a file twice (add it, then update it),
//! and turns what differs from the disk into a change set. Paths may be relative to the root or
//! absolute inside it; anything outside is refused by the workspace.
//!
//! Where this differs from Codex's own applier, on purpose: nothing is written until the
//! preview is applied, and then all files land or none; `*** Add File:` and `*** Move to:`
//! never replace an existing file; an anchor or block that matches in several places is
//! refused with the line numbers instead of taking the first; a block whose new lines are
//! already there is reported as already applied and skipped; a byte-order mark and a missing
//! final newline are kept.

mod parse;
mod seek;
mod update;

use std::collections::BTreeMap;

use resolve_store::{ChangeSet, FileChange, Workspace, path_order};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::diff::{LineCounts, counted_change_diff};
use crate::error::EditError;
use crate::preview::{Preview, PreviewText, Produce, ProduceLimits, Produced, closed_object};
use crate::producer::Producer;
use crate::text_edit::read_text;
use resolve_core::count_noun;

pub use parse::{ChangeBlock, FileOp, Patch, parse_patch};

/// The arguments of `apply_patch`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApplyPatchRequest {
    /// The whole patch, from `*** Begin Patch` to `*** End Patch`.
    pub input: String,
}

const APPLY_PATCH_DESCRIPTION: &str = "\
Add, delete, move and update files with one patch, staged as one preview: nothing is written until you call `resolve`.
`input` is the whole patch:
*** Begin Patch
*** Add File: <path>        (every line of the new file starts with `+`)
*** Delete File: <path>
*** Update File: <path>
*** Move to: <new path>     (optional, right after Update File)
@@ <a line that occurs once before the change, e.g. `fn main() {`>   (or a bare `@@`)
 context line (starts with a space)
-removed line
+added line
*** End of File             (optional: the block ends the file)
*** End Patch
Paths are relative to the workspace root (or absolute inside it). Give about 3 lines of context around each change; no line numbers.";

/// The `apply_patch` producer: `Applied patch to <path>.` (`Applied patch to 2 files.`).
const APPLY_PATCH: Producer =
    Producer::new("apply_patch").with_applied_text(|paths, _replacements| match paths {
        [path] => format!("Applied patch to {path}."),
        _ => format!("Applied patch to {}.", count_noun(paths.len(), "file")),
    });

impl Produce for ApplyPatchRequest {
    const PRODUCER: Producer = APPLY_PATCH;
    const DESCRIPTION: &'static str = APPLY_PATCH_DESCRIPTION;

    fn input_schema() -> Value {
        let input = "the whole patch, from `*** Begin Patch` to `*** End Patch`";
        closed_object(
            json!({"input": {"type": "string", "description": input}}),
            &["input"],
        )
    }

    fn produce(&self, workspace: &Workspace, _: ProduceLimits) -> Result<Produced, EditError> {
        Ok(match preview_apply_patch(workspace, self)? {
            ApplyPatchOutcome::Preview(preview) => Produced::Preview(preview),
            ApplyPatchOutcome::AlreadyApplied { text } => Produced::Nothing(text),
        })
    }
}

/// What an `apply_patch` call comes to.
#[derive(Debug)]
pub enum ApplyPatchOutcome {
    /// A preview to stage.
    Preview(Box<Preview>),
    /// Every change of the patch is already in the files: nothing to stage.
    AlreadyApplied {
        /// The result text, naming the files.
        text: String,
    },
}

/// One file as the patch's operations leave it.
#[derive(Debug)]
struct TrackedFile {
    /// Its base hash and text on disk, `None` when it does not exist.
    base: Option<(String, String)>,
    /// Its text after the operations so far, `None` when it does not exist.
    current: Option<String>,
    /// Change blocks that changed it.
    replacements: usize,
}

/// The files a patch touches, by root-relative path, read once each.
struct Tree<'a> {
    workspace: &'a Workspace,
    files: BTreeMap<String, TrackedFile>,
}

impl Tree<'_> {
    /// The root-relative path of `given`, reading the file the first time it is named.
    fn load(&mut self, given: &str) -> Result<String, EditError> {
        let target = self.workspace.resolve(given)?;
        if !self.files.contains_key(&target.relative) {
            let base = read_text(given, &target)?;
            let current = base.as_ref().map(|(_, text)| text.clone());
            self.files.insert(
                target.relative.clone(),
                TrackedFile {
                    base,
                    current,
                    replacements: 0,
                },
            );
        }
        Ok(target.relative)
    }

    /// The file at `path` (already loaded).
    fn file(&mut self, path: &str) -> Result<&mut TrackedFile, EditError> {
        self.files.get_mut(path).ok_or_else(|| EditError::NotFound {
            path: path.to_owned(),
        })
    }
}

/// Compute the `apply_patch` preview of `request`.
pub fn preview_apply_patch(
    workspace: &Workspace,
    request: &ApplyPatchRequest,
) -> Result<ApplyPatchOutcome, EditError> {
    let patch = parse_patch(&request.input)?;
    let mut tree = Tree {
        workspace,
        files: BTreeMap::new(),
    };
    let mut notes = Vec::new();
    let mut already_applied = Vec::new();
    let mut moves = Vec::new();
    for op in &patch.ops {
        match op {
            FileOp::Add { path, content, .. } => {
                let path = tree.load(path)?;
                let file = tree.file(&path)?;
                match &file.current {
                    Some(existing) if existing == content => already_applied.push(path),
                    Some(_) => return Err(EditError::PatchTargetExists { path }),
                    None => file.current = Some(content.clone()),
                }
            }
            FileOp::Delete { path, .. } => {
                let path = tree.load(path)?;
                let file = tree.file(&path)?;
                if file.current.take().is_none() {
                    return Err(EditError::NotFound { path });
                }
            }
            FileOp::Update {
                path,
                move_to,
                blocks,
                ..
            } => {
                let path = tree.load(path)?;
                let file = tree.file(&path)?;
                let Some(current) = &file.current else {
                    return Err(EditError::NotFound { path });
                };
                let updated = update::update_text(&path, current, blocks)?;
                for block in &updated.already_applied {
                    notes.push(format!(
                        "Already applied, skipped: change block {block} of `{path}` (its new lines are already there)."
                    ));
                }
                if updated.applied == 0 && move_to.is_none() {
                    already_applied.push(path.clone());
                }
                file.replacements += updated.applied;
                let destination = match move_to {
                    Some(to) => tree.load(to)?,
                    None => path.clone(),
                };
                if destination == path {
                    tree.file(&path)?.current = Some(updated.text);
                    continue;
                }
                let target = tree.file(&destination)?;
                if target.current.is_some() {
                    return Err(EditError::PatchTargetExists { path: destination });
                }
                target.current = Some(updated.text);
                target.replacements += updated.applied;
                tree.file(&path)?.current = None;
                moves.push(json!({"from": path, "to": destination}));
                notes.push(format!("Moved `{path}` to `{destination}`."));
            }
        }
    }
    let mut files: Vec<(String, TrackedFile)> = tree.files.into_iter().collect();
    files.sort_by(|a, b| path_order(&a.0, &b.0));

    let mut change_set = ChangeSet::new();
    let mut text = PreviewText::start(Vec::new()).map_err(write_failed)?;
    let mut listed = Vec::new();
    let mut lines = LineCounts::default();
    for (path, file) in &files {
        let (change, kind) = match (&file.base, &file.current) {
            (None, None) => continue,
            (Some((_, old)), Some(new)) if old == new => continue,
            (None, Some(new)) => (
                FileChange::Create {
                    content: new.clone().into(),
                },
                "add",
            ),
            (Some((base_hash, _)), None) => (
                FileChange::Delete {
                    base_hash: base_hash.clone(),
                },
                "delete",
            ),
            (Some((base_hash, _)), Some(new)) => (
                FileChange::update(
                    base_hash.clone(),
                    new.clone().into(),
                    file.replacements.max(1),
                ),
                "update",
            ),
        };
        let old = file.base.as_ref().map(|(_, text)| text.as_str());
        let (diff, counts) = counted_change_diff(path, old, file.current.as_deref());
        text.diff(diff.as_bytes()).map_err(write_failed)?;
        lines += counts;
        change_set.insert(path.clone(), change);
        listed.push(json!({"path": path, "change": kind}));
    }

    if change_set.is_empty() {
        if already_applied.is_empty() && notes.is_empty() {
            let path = files
                .first()
                .map(|(path, _)| path.clone())
                .unwrap_or_default();
            return Err(EditError::NoChange { path });
        }
        let mut named: Vec<String> = files.iter().map(|(path, _)| format!("`{path}`")).collect();
        named.dedup();
        return Ok(ApplyPatchOutcome::AlreadyApplied {
            text: format!(
                "Patch already applied: its changes are already present in {}; nothing was staged.",
                named.join(", ")
            ),
        });
    }
    for path in &already_applied {
        notes.push(format!(
            "Already applied, skipped: `{path}` (its new content is already there)."
        ));
    }
    let text = text.finish(&notes).map_err(write_failed)?;
    let text = String::from_utf8(text)
        .unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into_owned());
    let paths = change_set.paths();
    let label = match paths.as_slice() {
        [one] => format!("Patch: {}", resolve_core::quote_path(one)),
        more => format!("Patch: {} files", more.len()),
    };
    Ok(ApplyPatchOutcome::Preview(Box::new(Preview {
        change_set: change_set.into_spooled(workspace)?,
        producer: APPLY_PATCH,
        label,
        lines,
        text: text.into(),
        details: json!({"changes": listed, "moves": moves, "alreadyApplied": already_applied}),
        files_key: None,
        rederive: None,
    })))
}

/// Writing a preview text to memory cannot fail; if it ever did, say so.
fn write_failed(error: std::io::Error) -> EditError {
    EditError::DetailsUnlisted {
        reason: error.to_string(),
    }
}
