//! `resolve review --web`: the review served to a browser on 127.0.0.1. The server owns the
//! guard (token, host, origin, security headers), the JSON API over the review's adapter (the
//! same decision pipeline as the terminal review) and the page, whose three assets are
//! compiled into the binary so it works without a network.

mod api;
mod guard;
mod json;

use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

use axum::Router;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use resolve_edit::Store;

use super::adapter::{HubFactory, ReviewStore};
use crate::Outcome;
use crate::output::err_line;

/// The page, with `{{TOKEN}}` where its assets' URLs carry the token.
const INDEX_HTML: &str = include_str!("assets/index.html");
/// The page's script.
const APP_JS: &str = include_str!("assets/app.js");
/// The page's style.
const APP_CSS: &str = include_str!("assets/app.css");

/// How `resolve review --web` serves.
#[derive(Debug, Clone, Copy)]
pub struct WebOptions {
    /// The port on 127.0.0.1; 0 for a free one.
    pub port: u16,
    /// Open the page in the default browser.
    pub open: bool,
}

/// Serve the review until interrupted, printing the URL (with its token) first.
pub(crate) fn run(store: &Store, hub: HubFactory, options: &WebOptions) -> anyhow::Result<Outcome> {
    let listener =
        std::net::TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, options.port)))
            .map_err(|error| {
                anyhow::anyhow!("cannot listen on 127.0.0.1:{}: {error}", options.port)
            })?;
    listener.set_nonblocking(true)?;
    let port = listener.local_addr()?.port();
    let guard = guard::Guard::new(guard::new_token()?, port);
    let url = format!("http://127.0.0.1:{port}/?token={}", guard.token());
    let review = Arc::new(ReviewStore::new(store.clone(), hub));
    let app = router(review, Arc::new(guard));
    let mut stdout = std::io::stdout();
    writeln!(stdout, "Review in the browser: {url}")?;
    writeln!(stdout, "Serving on 127.0.0.1 only; press Ctrl-C to stop.")?;
    stdout.flush()?;
    if options.open
        && let Err(error) = open_browser(&url)
    {
        err_line(&format!("warning: could not open a browser: {error}"));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(listener)?;
        axum::serve(listener, app)
            .with_graceful_shutdown(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await
    })?;
    Ok(Outcome::Success)
}

/// The routes, every one behind the guard.
fn router(review: api::Shared, guard: Arc<guard::Guard>) -> Router {
    Router::new()
        .route("/", get(index))
        .route("/app.js", get(script))
        .route("/app.css", get(style))
        .route("/api/actions", get(api::actions))
        .route("/api/version", get(api::version))
        .route("/api/content", get(api::content))
        .route("/api/draft", post(api::draft))
        .route("/api/apply", post(api::apply))
        .route("/api/discard", post(api::discard))
        .route("/api/amend", post(api::amend))
        .route("/api/check", post(api::check))
        .with_state(review)
        .layer(axum::Extension(Arc::new(api::DraftSaves::default())))
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&guard),
            guard::guard,
        ))
        .layer(axum::Extension(guard))
}

async fn index(axum::Extension(guard): axum::Extension<Arc<guard::Guard>>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        INDEX_HTML.replace("{{TOKEN}}", guard.token()),
    )
}

async fn script() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        APP_JS,
    )
}

async fn style() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/css; charset=utf-8")], APP_CSS)
}

/// Open `url` in the default browser.
fn open_browser(url: &str) -> std::io::Result<()> {
    let mut command = if cfg!(target_os = "macos") {
        std::process::Command::new("open")
    } else if cfg!(windows) {
        let mut command = std::process::Command::new("cmd");
        command.args(["/C", "start", ""]);
        command
    } else {
        std::process::Command::new("xdg-open")
    };
    command
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map(drop)
}
