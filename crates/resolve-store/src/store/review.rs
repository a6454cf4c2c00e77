//! What a reviewer did to a pending action, as its records keep it: an amendment of one
//! file's new content ([`Amendment`]) and which hunks of a partial apply landed and which were
//! rejected and why ([`Review`]). Pure data: what a hunk is and how it is computed is
//! `resolve-edit`'s; here a hunk is its number in its file.

use serde::{Deserialize, Serialize};

/// A reviewer's replacement of one file's new content in a pending action: the diff from the
/// version before (the model's, or an earlier amendment's) to the reviewer's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Amendment {
    /// The amended file, as the change set names it.
    pub path: String,
    /// A unified diff from the version before to the reviewer's version.
    pub diff: String,
    /// When it was made, in Unix seconds.
    pub amended_at: u64,
}

/// A hunk that did not land, with the reviewer's reason when one was given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RejectedHunk {
    /// Its number in its file (from 1).
    pub hunk: usize,
    /// Why it was rejected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The hunks of one file of a partial apply: which landed, which were rejected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HunkReview {
    /// The file, as the change set names it.
    pub path: String,
    /// How many hunks the file's preview has.
    pub hunks: usize,
    /// The numbers of the hunks that landed, ascending (empty: the file was dropped).
    pub landed: Vec<usize>,
    /// The hunks that did not land, ascending.
    pub rejected: Vec<RejectedHunk>,
}

impl HunkReview {
    /// `path#n`, the address of hunk `n` of this file.
    pub fn address(&self, hunk: usize) -> String {
        format!("{}#{hunk}", self.path)
    }
}

/// A whole file left out of an apply, with the reviewer's reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RejectedFile {
    /// The file, as the change set names it.
    pub path: String,
    /// Why it was left out.
    pub reason: String,
}

/// What a selective apply landed, beyond the applied and dropped file lists: the files applied
/// or dropped hunk by hunk, and reasons given for whole files left out.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Review {
    /// Files whose hunks were picked one by one, in path order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hunks: Vec<HunkReview>,
    /// Whole files left out with a reason.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rejected_files: Vec<RejectedFile>,
    /// The reviewer's comments on lines of the preview.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub comments: Vec<LineComment>,
}

impl Review {
    /// Whether it records nothing.
    pub fn is_empty(&self) -> bool {
        self.hunks.is_empty() && self.rejected_files.is_empty() && self.comments.is_empty()
    }
}

/// Which version of a file a line comment's number counts in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LineSide {
    /// The file before the change (a removed line).
    Old,
    /// The file as previewed (an added or unchanged line).
    New,
}

/// A reviewer's comment on one line of a preview. It keeps a copy of the line, so whoever
/// reads it knows the code it is about even when line numbers moved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LineComment {
    /// The file, as the change set names it.
    pub path: String,
    /// The line's number (from 1) in the version `side` names.
    pub line: usize,
    /// The old or the new version of the file.
    pub side: LineSide,
    /// The line's text when the comment was made.
    pub text: String,
    /// What the reviewer said.
    pub comment: String,
}
