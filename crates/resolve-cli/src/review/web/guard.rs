//! Who may talk to the review server: every request carries the token printed with the URL
//! and names the server's own host (no DNS rebinding); every request that changes something
//! comes from the page itself (its `Origin`); every response forbids loading anything from
//! elsewhere (a strict Content Security Policy).

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

/// The Content Security Policy of every response: the page's own script, style and API, and
/// nothing else.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; \
form-action 'none'; frame-ancestors 'none'";

/// The header an API request may carry the token in (the page sends it on every call).
pub const TOKEN_HEADER: &str = "x-resolve-token";

/// The checks of one server: its token and the port it listens on.
#[derive(Debug, Clone)]
pub struct Guard {
    token: String,
    port: u16,
}

impl Guard {
    /// The guard of a server on `port` whose URL carries `token`.
    pub fn new(token: String, port: u16) -> Self {
        Self { token, port }
    }

    /// The random token of the URL.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// Why `request` is refused, if it is.
    fn refusal(
        &self,
        method: &Method,
        uri_query: Option<&str>,
        headers: &HeaderMap,
    ) -> Option<&'static str> {
        let host = headers
            .get(header::HOST)
            .and_then(|host| host.to_str().ok());
        if !host.is_some_and(|host| self.is_own_host(host)) {
            return Some("the Host header does not name this server");
        }
        let given = uri_query.and_then(token_in_query).or_else(|| {
            headers
                .get(TOKEN_HEADER)
                .and_then(|value| value.to_str().ok())
        });
        if !given.is_some_and(|given| resolve_edit::same_secret(given, &self.token)) {
            return Some("the token of the printed URL is missing or wrong");
        }
        if method != Method::GET && method != Method::HEAD {
            let origin = headers
                .get(header::ORIGIN)
                .and_then(|value| value.to_str().ok());
            let own_origin = origin
                .and_then(|origin| origin.strip_prefix("http://"))
                .is_some_and(|host| self.is_own_host(host));
            if !own_origin {
                return Some("a change must come from the review page itself");
            }
            let site = headers
                .get("sec-fetch-site")
                .and_then(|value| value.to_str().ok());
            if site.is_some_and(|site| site != "same-origin") {
                return Some("a change must come from the review page itself");
            }
        }
        None
    }

    fn is_own_host(&self, host: &str) -> bool {
        let port = self.port.to_string();
        ["127.0.0.1", "localhost"].iter().any(|name| {
            host.strip_prefix(name)
                .and_then(|rest| rest.strip_prefix(':'))
                == Some(&port)
        })
    }
}

/// The value of `token=` in a query string.
fn token_in_query(query: &str) -> Option<&str> {
    query
        .split('&')
        .find_map(|pair| pair.strip_prefix("token="))
}

/// A fresh random token: 32 bytes as hex.
pub fn new_token() -> anyhow::Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)
        .map_err(|error| anyhow::anyhow!("no randomness for the token: {error}"))?;
    Ok(resolve_edit::hex(&bytes))
}

/// Refuse what the guard refuses (403), and put the security headers on every response.
pub async fn guard(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    let refusal = guard.refusal(request.method(), request.uri().query(), request.headers());
    let mut response = match refusal {
        Some(why) => (StatusCode::FORBIDDEN, format!("Forbidden: {why}.\n")).into_response(),
        None => next.run(request).await,
    };
    let headers = response.headers_mut();
    for (name, value) in [
        ("content-security-policy", CONTENT_SECURITY_POLICY),
        ("x-content-type-options", "nosniff"),
        ("referrer-policy", "no-referrer"),
        ("x-frame-options", "DENY"),
        ("cross-origin-resource-policy", "same-origin"),
        ("cache-control", "no-store"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn a_request_needs_the_token_and_the_own_host() {
        let guard = Guard::new("abc".to_owned(), 4000);
        let own = headers(&[("host", "127.0.0.1:4000")]);
        assert_eq!(guard.refusal(&Method::GET, Some("token=abc"), &own), None);
        assert!(guard.refusal(&Method::GET, None, &own).is_some());
        assert!(
            guard
                .refusal(&Method::GET, Some("token=abd"), &own)
                .is_some()
        );
        let rebound = headers(&[("host", "evil.example:4000")]);
        assert!(
            guard
                .refusal(&Method::GET, Some("token=abc"), &rebound)
                .is_some()
        );
        let local = headers(&[("host", "localhost:4000"), (TOKEN_HEADER, "abc")]);
        assert_eq!(guard.refusal(&Method::GET, None, &local), None);
    }

    #[test]
    fn a_change_must_come_from_the_page() {
        let guard = Guard::new("abc".to_owned(), 4000);
        let mut own = headers(&[("host", "127.0.0.1:4000"), (TOKEN_HEADER, "abc")]);
        assert!(
            guard.refusal(&Method::POST, None, &own).is_some(),
            "no Origin"
        );
        own.insert("origin", HeaderValue::from_static("http://evil.example"));
        assert!(guard.refusal(&Method::POST, None, &own).is_some());
        own.insert("origin", HeaderValue::from_static("http://127.0.0.1:4000"));
        assert_eq!(guard.refusal(&Method::POST, None, &own), None);
        own.insert("sec-fetch-site", HeaderValue::from_static("cross-site"));
        assert!(guard.refusal(&Method::POST, None, &own).is_some());
    }
}
