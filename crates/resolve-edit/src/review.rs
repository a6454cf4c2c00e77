//! Reviewing a pending action before it lands: its hunks file by file ([`action_hunks`]),
//! applying the parts a reviewer kept with reasons for the rest ([`apply_reviewed`]), and
//! amending a file's new content ([`amend`]). The store does the transactional part: it checks
//! every landing file against its base before any write, and the files, the history record
//! (with what landed and what was rejected) and the reviewer note land together.
//!
//! A hunk's bytes are the base's bytes with the hunk's change: the base is the file itself
//! while it still hashes to the preview's base (so composing outside the lock is safe: the
//! store checks that hash again under the lock before writing).

use std::collections::{BTreeSet, HashMap};

use resolve_core::Extra;
use resolve_store::{
    AmendFile, ApplyOutcome, Attribution, ChangeSet, FileChange, HunkReview, Landing, LineComment,
    PendingRecord, RejectedFile, RejectedHunk, Review, ReviewedApply, Store, StoreError,
    content_hash,
};

use crate::diff::{change_diff, unified_diff};
use crate::error::EditError;
use crate::hunks::{ChangeKind, FileHunks};
use crate::preview::replace_file_diff;
use crate::selection::{HunkAddress, HunkRejection, Selection};

/// The hunks of every file of a pending action, as a reviewer sees them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActionHunks {
    /// The action's id.
    pub id: String,
    /// The version of the action they were computed from ([`PendingRecord::fingerprint`]);
    /// pass it back in [`ReviewDecision::fingerprint`].
    pub fingerprint: String,
    /// Every file of the change set, in path order.
    pub files: Vec<PreviewFile>,
}

impl ActionHunks {
    /// Every file's diff with each hunk's address after its header (see
    /// [`FileHunks::addressed_diff`]); a file that changed since the preview says so instead.
    pub fn addressed_diff(&self) -> String {
        let mut text = String::new();
        for file in &self.files {
            match &file.hunks {
                Some(hunks) => text.push_str(&hunks.addressed_diff()),
                None => text.push_str(&format!(
                    "{}: changed since the preview; its hunks cannot be shown (the preview is stale).\n",
                    file.path
                )),
            }
        }
        text
    }
}

/// One file of a pending action, with its hunks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreviewFile {
    /// The file, relative to the root.
    pub path: String,
    /// Created, updated or deleted.
    pub kind: ChangeKind,
    /// Its hunks; `None` when the file changed since the preview (the preview is stale and
    /// its base is gone, so no hunk can be shown or applied).
    pub hunks: Option<FileHunks>,
}

/// What a reviewer decided about a pending action: which parts land, and why others do not.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReviewDecision {
    /// The parts that land.
    pub selection: Selection,
    /// Reasons for files or hunks left out (a reason for a part that lands is refused).
    pub rejections: Vec<HunkRejection>,
    /// The version reviewed ([`ActionHunks::fingerprint`]): when the action changed since,
    /// nothing lands ([`StoreError::PreviewChanged`]). `None`: the action as it is now.
    pub fingerprint: Option<String>,
}

/// How [`amend`] ended.
#[derive(Debug, Clone, PartialEq)]
pub enum AmendOutcome {
    /// The action now carries the reviewer's version.
    Amended(Box<PendingRecord>),
    /// The content given is the one already previewed; nothing changed.
    Unchanged,
}

/// The hunks of every file of `record`, numbered from 1 per file; a file that changed since
/// the preview shows none (its hunks are of a base it no longer holds; apply rebases it).
pub fn action_hunks(store: &Store, record: &PendingRecord) -> Result<ActionHunks, EditError> {
    let stale = store.stale_files(record)?;
    let mut files = Vec::with_capacity(record.change_set.len());
    for (path, change) in record.change_set.files() {
        let hunks = if stale.iter().any(|changed| changed == path) {
            None
        } else {
            file_hunks(store, path, change)?
        };
        files.push(PreviewFile {
            path: path.to_owned(),
            kind: ChangeKind::of(change),
            hunks,
        });
    }
    Ok(ActionHunks {
        id: record.id.clone(),
        fingerprint: record.fingerprint.clone(),
        files,
    })
}

/// The hunks of the change of `path`; `None` when its base is gone (the file changed).
pub fn file_hunks(
    store: &Store,
    path: &str,
    change: &FileChange,
) -> Result<Option<FileHunks>, EditError> {
    let new = change
        .new_content()
        .map(|content| text_of(path, store.blobs().read(content)?.into_owned()))
        .transpose()?;
    let base = match change.base_hash() {
        None => None,
        Some(_) => match store.base_content(path, change)? {
            Some(bytes) => Some(text_of(path, bytes)?),
            None => return Ok(None),
        },
    };
    Ok(Some(FileHunks::compute(
        path,
        base.as_deref(),
        new.as_deref(),
    )))
}

/// Apply the pending action `id` as `decision` says: whole files, and files composed of the
/// base with exactly the kept hunks (byte for byte). Every landing file is checked against its
/// base first (a changed file is [`StoreError::Stale`] naming every changed file; nothing is
/// written); the apply is one transaction; the history records the hunks that landed and the
/// ones rejected with their reasons.
pub fn apply_reviewed(
    store: &Store,
    id: &str,
    decision: &ReviewDecision,
    reason: &str,
    extra: Option<Extra>,
) -> Result<ApplyOutcome, EditError> {
    let attribution = store.default_attribution();
    let commented = Commented {
        decision,
        comments: Vec::new(),
    };
    apply_reviewed_attributed(store, id, &commented, reason, extra, attribution.as_ref())
}

/// [`apply_reviewed`] with the reviewer's line comments, which the history keeps and the note
/// to the model that staged the action carries.
pub fn apply_reviewed_commented(
    store: &Store,
    id: &str,
    decision: &ReviewDecision,
    comments: Vec<LineComment>,
    reason: &str,
) -> Result<ApplyOutcome, EditError> {
    let attribution = store.default_attribution();
    let commented = Commented { decision, comments };
    apply_reviewed_attributed(store, id, &commented, reason, None, attribution.as_ref())
}

/// A decision and the line comments that go with it.
struct Commented<'a> {
    decision: &'a ReviewDecision,
    comments: Vec<LineComment>,
}

/// [`apply_reviewed`], recording who decided as `attribution` says.
pub fn apply_reviewed_as(
    store: &Store,
    id: &str,
    decision: &ReviewDecision,
    reason: &str,
    extra: Option<Extra>,
    attribution: &Attribution,
) -> Result<ApplyOutcome, EditError> {
    let commented = Commented {
        decision,
        comments: Vec::new(),
    };
    apply_reviewed_attributed(store, id, &commented, reason, extra, Some(attribution))
}

fn apply_reviewed_attributed(
    store: &Store,
    id: &str,
    commented: &Commented<'_>,
    reason: &str,
    extra: Option<Extra>,
    attribution: Option<&Attribution>,
) -> Result<ApplyOutcome, EditError> {
    let decision = commented.decision;
    let apply = |only: Option<&[String]>, extra: Option<Extra>| match attribution {
        Some(attribution) => store.apply_as(id, only, reason, extra, attribution),
        None => store.apply(id, only, reason, extra),
    };
    let whole_files_only = decision.fingerprint.is_none()
        && commented.comments.is_empty()
        && decision.rejections.is_empty()
        && !decision.selection.names_hunks();
    if whole_files_only {
        match &decision.selection {
            Selection::All => return Ok(apply(None, extra)?),
            Selection::Only(addresses) => {
                let paths: Vec<String> = addresses.iter().map(|a| a.path.clone()).collect();
                return Ok(apply(Some(&paths), extra)?);
            }
            Selection::Except(_) => {}
        }
    }
    let record = store
        .pending_record(id)?
        .ok_or_else(|| StoreError::NotPending { id: id.to_owned() })?;
    if let Some(fingerprint) = &decision.fingerprint
        && *fingerprint != record.fingerprint
    {
        return Err(StoreError::PreviewChanged { id: id.to_owned() }.into());
    }
    if record.mcp.is_some() {
        // The store says why such an action is not applied by writing files.
        return Ok(apply(None, extra)?);
    }
    let picks = Picks::of(&record.change_set, decision)?;
    let mut landings = Vec::new();
    let mut review = Review::default();
    let mut stale = Vec::new();
    for (path, change) in record.change_set.files() {
        let pick = picks.files.get(path).unwrap_or(&Pick::Whole);
        if !picks.needs_hunks(path, pick) {
            match pick {
                Pick::Drop => {
                    if let Some(reason) = picks.file_reasons.get(path) {
                        review.rejected_files.push(RejectedFile {
                            path: path.to_owned(),
                            reason: reason.clone(),
                        });
                    }
                }
                Pick::Whole | Pick::Only(_) | Pick::AllBut(_) => landings.push(Landing {
                    path: path.to_owned(),
                    content: None,
                    replacements: change.replacements(),
                }),
            }
            continue;
        }
        let Some(hunks) = file_hunks(store, path, change)? else {
            stale.push(path.to_owned());
            continue;
        };
        let count = hunks.hunks.len();
        let landed = picks.landed(path, pick, count)?;
        if landed.len() == count {
            landings.push(Landing {
                path: path.to_owned(),
                content: None,
                replacements: change.replacements(),
            });
        } else if !landed.is_empty() {
            let composed = hunks
                .compose(&landed)
                .ok_or_else(|| StoreError::NotEditable {
                    path: path.to_owned(),
                })?;
            landings.push(Landing {
                path: path.to_owned(),
                content: Some(composed.into()),
                replacements: landed.len(),
            });
        }
        let rejected = (1..=count)
            .filter(|number| !landed.contains(number))
            .map(|hunk| RejectedHunk {
                hunk,
                reason: picks.reason(path, hunk),
            })
            .collect();
        review.hunks.push(HunkReview {
            path: path.to_owned(),
            hunks: count,
            landed,
            rejected,
        });
    }
    if !stale.is_empty() {
        return Err(stale_error(store, &record.change_set, stale, &landings)?.into());
    }
    review.comments.clone_from(&commented.comments);
    let reviewed = ReviewedApply {
        fingerprint: record.fingerprint,
        landings,
        review: (!review.is_empty()).then_some(review),
    };
    Ok(match attribution {
        Some(attribution) => store.apply_reviewed_as(id, reviewed, reason, extra, attribution)?,
        None => store.apply_reviewed(id, reviewed, reason, extra)?,
    })
}

/// Replace the new content of `path` in the pending action `id` with `content`, the
/// reviewer's version: the action keeps its id and base hashes, its preview text shows the
/// new diff, and it remembers the amendment as the diff from the previewed version to the
/// reviewer's. `fingerprint`, when given, is the version the reviewer edited.
pub fn amend(
    store: &Store,
    id: &str,
    path: &str,
    content: String,
    fingerprint: Option<&str>,
) -> Result<AmendOutcome, EditError> {
    let record = pending_at(store, id, fingerprint)?;
    let path = amend_target(&record, Some(path))?;
    let previewed = previewed_content(store, &record, &path)?;
    if previewed == content {
        return Ok(AmendOutcome::Unchanged);
    }
    // A file that moved since the preview is amended onto what it holds now: the person's
    // version is the result of resolving the change against it.
    let moved = moved_bytes(store, &record, &path)?;
    let base = match (
        &moved,
        record
            .change_set
            .get(&path)
            .filter(|change| change.base_hash().is_some()),
    ) {
        (Some(current), _) => Some(text_of(&path, current.clone())?),
        (None, None) => None,
        (None, Some(change)) => match store.base_content(&path, change)? {
            Some(bytes) => Some(text_of(&path, bytes)?),
            None => {
                return Err(StoreError::Stale { files: vec![path] }.into());
            }
        },
    };
    let preview = store.blobs().read_text(&record.preview_text)?;
    let preview_text = replace_file_diff(
        &preview,
        &path,
        &change_diff(&path, base.as_deref(), Some(&content)),
    );
    let diff = unified_diff(&path, &previewed, &content);
    let amended = store.amend(
        id,
        AmendFile {
            fingerprint: record.fingerprint,
            path,
            content: content.into(),
            preview_text: preview_text.into(),
            diff,
            rebased_onto: moved,
        },
    )?;
    Ok(AmendOutcome::Amended(Box::new(amended)))
}

/// The bytes `path` of `record` holds now when it is a file the preview updates and it moved
/// since the preview; `None` otherwise.
pub(crate) fn moved_bytes(
    store: &Store,
    record: &PendingRecord,
    path: &str,
) -> Result<Option<Vec<u8>>, EditError> {
    let Some(FileChange::Update { base_hash, .. }) = record.change_set.get(path) else {
        return Ok(None);
    };
    let real = store.workspace().resolve(path)?.real;
    Ok(resolve_store::read_regular_file(&real)?.filter(|bytes| content_hash(bytes) != *base_hash))
}

/// The pending record `id`, which must still be the version `fingerprint` names when given.
pub(crate) fn pending_at(
    store: &Store,
    id: &str,
    fingerprint: Option<&str>,
) -> Result<PendingRecord, EditError> {
    let record = store
        .pending_record(id)?
        .ok_or_else(|| StoreError::NotPending { id: id.to_owned() })?;
    if fingerprint.is_some_and(|fingerprint| fingerprint != record.fingerprint) {
        return Err(StoreError::PreviewChanged { id: id.to_owned() }.into());
    }
    Ok(record)
}

/// The file of `record` to amend: `path` (normalized, and part of the preview), or, when no
/// path is given, the action's only file that can be amended.
pub fn amend_target(record: &PendingRecord, path: Option<&str>) -> Result<String, EditError> {
    let editable: Vec<&str> = record
        .change_set
        .files()
        .filter(|(_, change)| change.new_content().is_some())
        .map(|(path, _)| path)
        .collect();
    match path {
        Some(path) => {
            let path = path.trim_start_matches("./");
            match record.change_set.get(path) {
                None => Err(StoreError::NotInPreview {
                    path: path.to_owned(),
                    touched: record.change_set.paths(),
                }
                .into()),
                Some(FileChange::Delete { .. }) => Err(StoreError::NotEditable {
                    path: path.to_owned(),
                }
                .into()),
                Some(_) => Ok(path.to_owned()),
            }
        }
        None => match editable.as_slice() {
            [only] => Ok((*only).to_owned()),
            [] => Err(EditError::InvalidRequest(format!(
                "`{}` changes no file that can be amended.",
                record.id
            ))),
            several => Err(EditError::InvalidRequest(format!(
                "`{}` changes {} files; name the one to amend: {}.",
                record.id,
                several.len(),
                several.join(", ")
            ))),
        },
    }
}

/// The new content of `path` in `record`, as previewed now (amendments included).
pub fn previewed_content(
    store: &Store,
    record: &PendingRecord,
    path: &str,
) -> Result<String, EditError> {
    let content = record
        .change_set
        .get(path)
        .and_then(FileChange::new_content)
        .ok_or_else(|| StoreError::NotEditable {
            path: path.to_owned(),
        })?;
    text_of(path, store.blobs().read(content)?.into_owned())
}

/// One line per file applied hunk by hunk without all its hunks:
/// `Applied 2 of 3 hunks in src/a.rs; dropped src/a.rs#2.`
pub fn partial_apply_lines(review: &Review) -> Vec<String> {
    review
        .hunks
        .iter()
        .filter(|file| file.landed.len() < file.hunks)
        .map(|file| {
            let dropped: Vec<String> = file
                .rejected
                .iter()
                .map(|rejected| file.address(rejected.hunk))
                .collect();
            format!(
                "Applied {} of {} {} in {}; dropped {}.",
                file.landed.len(),
                file.hunks,
                if file.hunks == 1 { "hunk" } else { "hunks" },
                file.path,
                dropped.join(", ")
            )
        })
        .collect()
}

/// How one file of a selection lands, before its hunks are counted.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Pick {
    /// Every hunk.
    Whole,
    /// No hunk.
    Drop,
    /// These hunks.
    Only(BTreeSet<usize>),
    /// Every hunk but these.
    AllBut(BTreeSet<usize>),
}

impl Pick {
    /// This pick with `address` (a whole file, or some of its hunks) also landing when
    /// `lands`, else also left out.
    fn and(self, address: &HunkAddress, lands: bool) -> Self {
        let (whole, listed): (Self, fn(BTreeSet<usize>) -> Self) = if lands {
            (Self::Whole, Self::Only)
        } else {
            (Self::Drop, Self::AllBut)
        };
        if self == whole || address.is_whole_file() {
            return whole;
        }
        let mut hunks = match self {
            Self::Only(hunks) if lands => hunks,
            Self::AllBut(hunks) if !lands => hunks,
            _ => BTreeSet::new(),
        };
        hunks.extend(&address.hunks);
        listed(hunks)
    }
}

/// A decision resolved against the files of a change set.
struct Picks {
    files: HashMap<String, Pick>,
    file_reasons: HashMap<String, String>,
    hunk_reasons: HashMap<(String, usize), String>,
}

impl Picks {
    fn of(change_set: &ChangeSet, decision: &ReviewDecision) -> Result<Self, EditError> {
        let known = |address: &HunkAddress| -> Result<(), EditError> {
            match change_set.get(&address.path) {
                Some(_) => Ok(()),
                None => Err(StoreError::NotInPreview {
                    path: address.path.clone(),
                    touched: change_set.paths(),
                }
                .into()),
            }
        };
        let mut files = HashMap::new();
        match &decision.selection {
            Selection::All => {}
            Selection::Only(addresses) | Selection::Except(addresses) => {
                let lands = matches!(decision.selection, Selection::Only(_));
                if lands {
                    for (path, _) in change_set.files() {
                        files.insert(path.to_owned(), Pick::Drop);
                    }
                }
                let unnamed = if lands { Pick::Drop } else { Pick::Whole };
                for address in addresses {
                    known(address)?;
                    let pick = files.entry(address.path.clone()).or_insert(unnamed.clone());
                    *pick = std::mem::replace(pick, Pick::Drop).and(address, lands);
                }
            }
        }
        let mut file_reasons = HashMap::new();
        let mut hunk_reasons = HashMap::new();
        for rejection in &decision.rejections {
            known(&rejection.address)?;
            let path = &rejection.address.path;
            if rejection.address.is_whole_file() {
                file_reasons.insert(path.clone(), rejection.reason.clone());
            }
            for hunk in &rejection.address.hunks {
                hunk_reasons.insert((path.clone(), *hunk), rejection.reason.clone());
            }
        }
        Ok(Self {
            files,
            file_reasons,
            hunk_reasons,
        })
    }

    /// Whether the file's hunks must be counted: some are picked, or some have reasons.
    fn needs_hunks(&self, path: &str, pick: &Pick) -> bool {
        match pick {
            Pick::Only(_) | Pick::AllBut(_) => true,
            Pick::Whole | Pick::Drop => self.hunk_reasons.keys().any(|(file, _)| file == path),
        }
    }

    /// The hunks of `path` (which has `count`) that land, checking every number named.
    fn landed(&self, path: &str, pick: &Pick, count: usize) -> Result<Vec<usize>, EditError> {
        let check = |number: usize| {
            if number <= count {
                Ok(())
            } else {
                Err(EditError::NoSuchHunk {
                    address: HunkAddress::hunk(path, number).to_string(),
                    path: path.to_owned(),
                    count,
                })
            }
        };
        let landed: Vec<usize> = match pick {
            Pick::Whole => (1..=count).collect(),
            Pick::Drop => Vec::new(),
            Pick::Only(hunks) => {
                hunks.iter().try_for_each(|hunk| check(*hunk))?;
                hunks.iter().copied().collect()
            }
            Pick::AllBut(hunks) => {
                hunks.iter().try_for_each(|hunk| check(*hunk))?;
                (1..=count).filter(|hunk| !hunks.contains(hunk)).collect()
            }
        };
        for (file, hunk) in self.hunk_reasons.keys() {
            if file == path {
                check(*hunk)?;
                if landed.contains(hunk) {
                    return Err(EditError::InvalidRequest(format!(
                        "`{}` has a reason for rejecting it, but it is selected to land; leave it out or drop the reason.",
                        HunkAddress::hunk(path, *hunk)
                    )));
                }
            }
        }
        Ok(landed)
    }

    /// The reason given for rejecting hunk `hunk` of `path` (or the whole file).
    fn reason(&self, path: &str, hunk: usize) -> Option<String> {
        self.hunk_reasons
            .get(&(path.to_owned(), hunk))
            .or_else(|| self.file_reasons.get(path))
            .cloned()
    }
}

/// [`StoreError::Stale`] naming `stale` and every other landing file that changed since the
/// preview, in path order.
fn stale_error(
    store: &Store,
    change_set: &ChangeSet,
    mut stale: Vec<String>,
    landings: &[Landing],
) -> Result<StoreError, EditError> {
    for landing in landings {
        let changed = match change_set
            .get(&landing.path)
            .filter(|change| change.base_hash().is_some())
        {
            Some(change) => store.base_content(&landing.path, change)?.is_none(),
            None => store.workspace().resolve(&landing.path)?.absolute.exists(),
        };
        if changed {
            stale.push(landing.path.clone());
        }
    }
    stale.sort_by(|a, b| resolve_store::path_order(a, b));
    Ok(StoreError::Stale { files: stale })
}

fn text_of(path: &str, bytes: Vec<u8>) -> Result<String, EditError> {
    String::from_utf8(bytes).map_err(|_| EditError::Binary {
        path: path.to_owned(),
    })
}
