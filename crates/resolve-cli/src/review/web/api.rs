//! The review page's JSON API: read the pending actions (and a cheap version to poll), read
//! and amend a file, apply what is kept or discard. Every change goes through the review's
//! adapter, the same pipeline as the terminal review.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use resolve_edit::LineComment;
use serde::Deserialize;
use serde_json::{Value, json};

use super::json;
use crate::review::adapter::ReviewStore;
use crate::review::model::{ApplyRequest, Rejection};

/// What the handlers share: the review's link to the store.
pub type Shared = Arc<ReviewStore>;

/// An API failure: the first line of the error, as JSON, with a status.
pub struct ApiError(StatusCode, String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.0, Json(json!({ "error": self.1 }))).into_response()
    }
}

impl From<anyhow::Error> for ApiError {
    fn from(error: anyhow::Error) -> Self {
        Self(StatusCode::CONFLICT, format!("{error:#}"))
    }
}

/// Run `work` on the store off the server's threads (it blocks, and may start its own
/// runtime to reach MCP servers).
async fn blocking<T: Send + 'static>(
    review: &Shared,
    work: impl FnOnce(&ReviewStore) -> anyhow::Result<T> + Send + 'static,
) -> Result<T, ApiError> {
    let review = Arc::clone(review);
    match tokio::task::spawn_blocking(move || work(&review)).await {
        Ok(result) => Ok(result?),
        Err(error) => Err(ApiError(
            StatusCode::INTERNAL_SERVER_ERROR,
            error.to_string(),
        )),
    }
}

/// `GET /api/actions`: every pending action with its files and hunks, and the reviews in
/// progress saved for them (`drafts`, by id).
pub async fn actions(State(review): State<Shared>) -> Result<Json<Value>, ApiError> {
    let value = blocking(&review, |review| {
        let version = review.version()?;
        let actions = review.load_all(None)?;
        let mut drafts = serde_json::Map::new();
        for action in &actions {
            if let Some(draft) = review.draft(&action.id)? {
                drafts.insert(action.id.clone(), serde_json::to_value(draft)?);
            }
        }
        let mut value = json::actions(&version, &actions);
        value["drafts"] = Value::Object(drafts);
        Ok(value)
    })
    .await?;
    Ok(Json(value))
}

/// The body of `POST /api/draft`: the marks made so far on one action, and which save of which
/// page this is.
#[derive(Debug, Deserialize)]
pub struct DraftBody {
    id: String,
    version: String,
    /// A random id the page drew when it loaded.
    page: String,
    /// Counts the page's saves: a later save has a greater number.
    sequence: u64,
    #[serde(default)]
    rejected: Vec<RejectionBody>,
    #[serde(default)]
    comments: Vec<LineComment>,
}

/// The last save kept of each page's review in progress of each action, by (page, action id).
///
/// A page sends its saves without waiting for the one before (the last as the page is left
/// cannot wait), and the server takes them on several threads, so two saves of one page may
/// arrive in either order. Each carries the whole review in progress, so the one with the
/// greater number wins: an older save arriving last is ignored instead of undoing the newer.
#[derive(Debug, Default)]
pub struct DraftSaves(Mutex<HashMap<(String, String), u64>>);

/// `POST /api/draft`: keep the review in progress of one action, so that leaving the page (or
/// going to the terminal review) loses nothing. Answers `{"saved": false}` for a save older than
/// one already kept from the same page.
pub async fn draft(
    State(review): State<Shared>,
    Extension(saves): Extension<Arc<DraftSaves>>,
    Json(body): Json<DraftBody>,
) -> Result<Json<Value>, ApiError> {
    let draft = resolve_edit::ReviewDraft {
        action_version: body.version,
        rejected: body
            .rejected
            .into_iter()
            .map(|rejection| resolve_edit::DraftRejection {
                address: rejection.address,
                reason: rejection.reason.filter(|reason| !reason.trim().is_empty()),
            })
            .collect(),
        comments: body.comments,
    };
    let key = (body.page, body.id);
    let sequence = body.sequence;
    let saved = blocking(&review, move |review| {
        // One lock around the check and the write: two saves of one page never interleave.
        let mut kept = saves.0.lock().unwrap_or_else(PoisonError::into_inner);
        if kept.get(&key).is_some_and(|last| *last >= sequence) {
            return Ok(false);
        }
        review.save_draft(&key.1, &draft)?;
        kept.insert(key, sequence);
        Ok(true)
    })
    .await?;
    Ok(Json(json!({ "saved": saved })))
}

/// `GET /api/version`: changes when an action is staged, resolved or amended anywhere.
pub async fn version(State(review): State<Shared>) -> Result<Json<Value>, ApiError> {
    let version = blocking(&review, ReviewStore::version).await?;
    Ok(Json(json!({ "version": version })))
}

/// The query of `GET /api/content`.
#[derive(Debug, Deserialize)]
struct ContentQuery {
    id: String,
    path: String,
}

/// `GET /api/content?id=…&path=…`: the previewed new content of one file.
pub async fn content(
    State(review): State<Shared>,
    request: Request,
) -> Result<Json<Value>, ApiError> {
    let query = request.uri().query().unwrap_or("");
    let ContentQuery { id, path } = parse_query(query)?;
    let content = blocking(&review, move |review| review.content(&id, &path)).await?;
    Ok(Json(json!({ "content": content })))
}

/// `id` and `path` from a query string (percent-decoded).
fn parse_query(query: &str) -> Result<ContentQuery, ApiError> {
    let mut id = None;
    let mut path = None;
    for pair in query.split('&') {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        match name {
            "id" => id = Some(percent_decode(value)),
            "path" => path = Some(percent_decode(value)),
            _ => {}
        }
    }
    match (id, path) {
        (Some(id), Some(path)) => Ok(ContentQuery { id, path }),
        _ => Err(ApiError(
            StatusCode::BAD_REQUEST,
            "id and path are required".to_owned(),
        )),
    }
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let byte = bytes[at];
        let hex = bytes
            .get(at + 1..at + 3)
            .and_then(|pair| std::str::from_utf8(pair).ok())
            .and_then(|pair| u8::from_str_radix(pair, 16).ok());
        match (byte, hex) {
            (b'%', Some(decoded)) => {
                out.push(decoded);
                at += 3;
            }
            (b'+', _) => {
                out.push(b' ');
                at += 1;
            }
            _ => {
                out.push(byte);
                at += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The body of `POST /api/apply`.
#[derive(Debug, Deserialize)]
pub struct ApplyBody {
    id: String,
    version: String,
    reason: String,
    #[serde(default)]
    rejected: Vec<RejectionBody>,
    /// Line comments: `{path, line, side: "old"|"new", text, comment}`.
    #[serde(default)]
    comments: Vec<LineComment>,
}

/// One rejected hunk of an apply.
#[derive(Debug, Deserialize)]
pub struct RejectionBody {
    address: String,
    #[serde(default)]
    reason: Option<String>,
}

/// `POST /api/apply`: apply what is kept, with the reasons given.
pub async fn apply(
    State(review): State<Shared>,
    Json(body): Json<ApplyBody>,
) -> Result<Json<Value>, ApiError> {
    let request = ApplyRequest {
        id: body.id,
        version: body.version,
        reason: required_reason(body.reason)?,
        rejected: body
            .rejected
            .into_iter()
            .map(|rejection| Rejection {
                address: rejection.address,
                reason: rejection.reason.filter(|reason| !reason.trim().is_empty()),
            })
            .collect(),
        comments: body
            .comments
            .into_iter()
            .filter(|comment| !comment.comment.trim().is_empty())
            .collect(),
    };
    let text = blocking(&review, move |review| review.apply(&request)).await?;
    Ok(Json(json!({ "text": text })))
}

/// The body of `POST /api/discard`.
#[derive(Debug, Deserialize)]
pub struct DiscardBody {
    id: String,
    reason: String,
    /// Line comments; a discard keeps them in its reason (the note to the model says it).
    #[serde(default)]
    comments: Vec<LineComment>,
}

/// `POST /api/discard`: discard an action with the reason.
pub async fn discard(
    State(review): State<Shared>,
    Json(body): Json<DiscardBody>,
) -> Result<Json<Value>, ApiError> {
    let mut reason = required_reason(body.reason)?;
    for comment in body
        .comments
        .iter()
        .filter(|c| !c.comment.trim().is_empty())
    {
        reason.push('\n');
        reason.push_str(&resolve_edit::line_comment_text(comment));
    }
    let id = body.id;
    let text = blocking(&review, move |review| review.discard(&id, &reason)).await?;
    Ok(Json(json!({ "text": text })))
}

/// The body of `POST /api/amend`.
#[derive(Debug, Deserialize)]
pub struct AmendBody {
    id: String,
    version: String,
    path: String,
    content: String,
}

/// `POST /api/amend`: replace the new content of one file of an action.
pub async fn amend(
    State(review): State<Shared>,
    Json(body): Json<AmendBody>,
) -> Result<Json<Value>, ApiError> {
    let amended = blocking(&review, move |review| {
        review.amend(&body.id, &body.version, &body.path, body.content)
    })
    .await?;
    Ok(Json(json!({ "amended": amended })))
}

/// The body of `POST /api/check`.
#[derive(Debug, Deserialize)]
pub struct CheckBody {
    id: String,
}

/// `POST /api/check`: run the workspace's trusted check command against an action.
pub async fn check(
    State(review): State<Shared>,
    Json(body): Json<CheckBody>,
) -> Result<Json<Value>, ApiError> {
    let text = blocking(&review, move |review| review.check(&body.id)).await?;
    Ok(Json(json!({ "text": text })))
}

fn required_reason(reason: String) -> Result<String, ApiError> {
    let reason = reason.trim().to_owned();
    if reason.is_empty() {
        return Err(ApiError(
            StatusCode::BAD_REQUEST,
            "a reason is required".to_owned(),
        ));
    }
    Ok(reason)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_values_are_percent_decoded() {
        let query = parse_query("id=pending-action%3Aedit%3A1&path=src%2Fa%20b.rs")
            .ok()
            .unwrap();
        assert_eq!(query.id, "pending-action:edit:1");
        assert_eq!(query.path, "src/a b.rs");
    }
}
