//! `resolve review --web`: the server refuses requests without the token, changes from other
//! origins and other hosts, listens on loopback only, and decides through the same pipeline as
//! the terminal review. The browser half (`web_browser`) drives the page in Chromium.

use resolve_test_support::text::assert_contains;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::common::Workspace;

/// A running `resolve review --web --port 0`; killed when dropped.
pub struct WebReview {
    child: Child,
    /// Its standard output, kept open so the server can still print.
    _stdout: BufReader<std::process::ChildStdout>,
    /// The URL printed, token included.
    pub url: String,
    /// The port it listens on.
    pub port: u16,
    /// The token of the URL.
    pub token: String,
}

impl WebReview {
    /// Start the server for `workspace` and read its URL from the first line it prints.
    pub fn start(workspace: &Workspace) -> Self {
        let mut child = workspace
            .command(&["review", "--web", "--port", "0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut line = String::new();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        stdout.read_line(&mut line).unwrap();
        let url = line
            .split_whitespace()
            .find(|word| word.starts_with("http://"))
            .unwrap_or_else(|| panic!("no URL in {line:?}"))
            .to_owned();
        let rest = url.strip_prefix("http://127.0.0.1:").unwrap();
        let (port, token) = rest.split_once("/?token=").unwrap();
        Self {
            port: port.parse().unwrap(),
            token: token.to_owned(),
            url,
            child,
            _stdout: stdout,
        }
    }

    /// One HTTP/1.1 request to the server: the status, the headers (lower-cased) and the body.
    pub fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&Value>,
    ) -> (u16, String, String) {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        let body = body.map(Value::to_string).unwrap_or_default();
        let mut head = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
        if !headers
            .iter()
            .any(|(name, _)| name.eq_ignore_ascii_case("host"))
        {
            head.push_str(&format!("Host: 127.0.0.1:{}\r\n", self.port));
        }
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        if method == "POST" {
            head.push_str(&format!(
                "Content-Type: application/json\r\nContent-Length: {}\r\n",
                body.len()
            ));
        }
        head.push_str("\r\n");
        stream.write_all(head.as_bytes()).unwrap();
        stream.write_all(body.as_bytes()).unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
        let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
        (status, head.to_ascii_lowercase(), dechunk(body))
    }

    /// A POST from the page itself (its origin and the token).
    pub fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        let origin = format!("http://127.0.0.1:{}", self.port);
        let (status, _, body) = self.request(
            "POST",
            path,
            &[("Origin", &origin), ("X-Resolve-Token", &self.token)],
            Some(body),
        );
        (status, serde_json::from_str(&body).unwrap_or(Value::Null))
    }

    /// A GET of the API with the token.
    pub fn get(&self, path: &str) -> Value {
        let (status, _, body) =
            self.request("GET", path, &[("X-Resolve-Token", &self.token)], None);
        assert_eq!(status, 200, "{body}");
        serde_json::from_str(&body).unwrap()
    }
}

impl Drop for WebReview {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The body of a chunked response, joined (a plain body as it is).
fn dechunk(body: &str) -> String {
    let mut out = String::new();
    let mut rest = body;
    loop {
        let Some((size, after)) = rest.split_once("\r\n") else {
            return body.to_owned();
        };
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            return body.to_owned();
        };
        if size == 0 {
            return out;
        }
        let Some(chunk) = after.get(..size) else {
            return body.to_owned();
        };
        out.push_str(chunk);
        rest = after[size..].trim_start_matches("\r\n");
    }
}

/// `token` with its first digit changed.
fn wrong_token(token: &str) -> String {
    let first = if token.starts_with('0') { '1' } else { '0' };
    format!("{first}{}", &token[1..])
}

/// Two files, three hunks: `src/lib.rs` with two far apart, `src/main.rs` with one.
pub fn two_file_preview() -> Workspace {
    let workspace = Workspace::with(&[
        ("src/main.rs", "fn main() { foo(1); }\n"),
        (
            "src/lib.rs",
            "fn f() { foo(2); }\n\n\n\n\n\n\n\n\nfn g() { foo(3); }\n",
        ),
    ]);
    workspace.run_ok(&["ast-edit", "-p", "foo($A)", "-r", "bar($A)", "src"]);
    workspace
}

#[test]
fn a_request_without_the_token_or_from_another_host_is_refused() {
    let workspace = two_file_preview();
    let web = WebReview::start(&workspace);
    for path in ["/", "/app.js", "/app.css", "/api/actions", "/api/version"] {
        let (status, _, _) = web.request("GET", path, &[], None);
        assert_eq!(status, 403, "{path} without the token");
        let (status, _, _) = web.request(
            "GET",
            &format!("{path}?token={}", wrong_token(&web.token)),
            &[],
            None,
        );
        assert_eq!(status, 403, "{path} with a wrong token");
    }
    let (status, head, body) = web.request("GET", &format!("/?token={}", web.token), &[], None);
    assert_eq!(status, 200);
    assert_contains(
        &head,
        "content-security-policy: default-src 'none'; script-src 'self'",
    );
    assert_contains(&head, "referrer-policy: no-referrer");
    assert_contains(&body, &format!("/app.js?token={}", web.token));
    assert!(
        !body.contains("http://") && !body.contains("https://"),
        "nothing from outside: {body}"
    );
    // DNS rebinding: a page of another name that resolves to 127.0.0.1 sends its own Host.
    let rebound = format!("evil.example:{}", web.port);
    let (status, _, _) = web.request(
        "GET",
        &format!("/?token={}", web.token),
        &[("Host", &rebound)],
        None,
    );
    assert_eq!(status, 403);
}

#[test]
fn a_cross_origin_post_is_refused_and_changes_nothing() {
    let workspace = two_file_preview();
    let web = WebReview::start(&workspace);
    let id = workspace.pending_ids()[0].clone();
    let discard = json!({ "id": id, "reason": "No." });
    for origin in [Some("http://evil.example"), Some("null"), None] {
        let mut headers = vec![("X-Resolve-Token", web.token.as_str())];
        if let Some(origin) = origin {
            headers.push(("Origin", origin));
        }
        let (status, _, _) = web.request("POST", "/api/discard", &headers, Some(&discard));
        assert_eq!(status, 403, "Origin {origin:?}");
    }
    assert_eq!(workspace.pending_ids(), vec![id]);
    let (status, body) = web.post("/api/discard", &discard);
    assert_eq!(status, 200, "{body}");
    assert!(workspace.pending_ids().is_empty());
}

#[test]
fn the_server_listens_on_loopback_only() {
    let workspace = two_file_preview();
    let web = WebReview::start(&workspace);
    assert!(web.url.starts_with("http://127.0.0.1:"), "{}", web.url);
    // Every listening socket on the port is bound to 127.0.0.1 (0100007F in /proc/net/tcp).
    let port = format!(":{:04X} ", web.port);
    let tables = ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|table| std::fs::read_to_string(table).ok())
        .collect::<String>();
    let listening: Vec<&str> = tables
        .lines()
        .filter(|line| line.contains(&port) && line.split_whitespace().nth(3) == Some("0A"))
        .map(|line| line.split_whitespace().nth(1).unwrap())
        .collect();
    if cfg!(target_os = "linux") {
        assert_eq!(
            listening,
            vec![format!("0100007F{}", port.trim_end())],
            "{tables}"
        );
    }
    // And from another address of this machine nothing answers.
    let outward = std::net::UdpSocket::bind("0.0.0.0:0")
        .and_then(|socket| socket.connect("192.0.2.1:9").map(|()| socket))
        .and_then(|socket| socket.local_addr());
    if let Ok(address) = outward
        && !address.ip().is_loopback()
        && !address.ip().is_unspecified()
    {
        let refused = TcpStream::connect((address.ip(), web.port));
        assert!(refused.is_err(), "{} answered", address.ip());
    }
}

#[test]
fn an_apply_through_the_page_api_lands_the_kept_hunks_and_logs_the_rejection() {
    let workspace = two_file_preview();
    let web = WebReview::start(&workspace);
    let actions = web.get("/api/actions");
    let action = &actions["actions"][0];
    assert_eq!(action["label"], "AST Edit: 3 replacements in 2 files");
    let addresses: Vec<&str> = action["files"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|file| file["hunks"].as_array().unwrap())
        .map(|hunk| hunk["address"].as_str().unwrap())
        .collect();
    assert_eq!(addresses, ["src/lib.rs#1", "src/lib.rs#2", "src/main.rs#1"]);
    let (status, body) = web.post(
        "/api/apply",
        &json!({
            "id": action["id"], "version": action["version"], "reason": "Keep g.",
            "rejected": [{ "address": "src/lib.rs#2", "reason": "g stays on foo." }],
        }),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(workspace.read("src/main.rs"), "fn main() { bar(1); }\n");
    assert_eq!(
        workspace.read("src/lib.rs"),
        "fn f() { bar(2); }\n\n\n\n\n\n\n\n\nfn g() { foo(3); }\n"
    );
    let log = workspace.run_ok(&["log"]).stdout;
    assert_contains(&log, "[kept src/lib.rs#1; rejected src/lib.rs#2]");
    assert_eq!(web.get("/api/actions")["actions"], json!([]));
}

#[test]
fn the_check_runs_only_the_trusted_command_and_says_how_it_went() {
    let workspace = two_file_preview();
    let web = WebReview::start(&workspace);
    let id = workspace.pending_ids()[0].clone();
    let (status, body) = web.post("/api/check", &json!({ "id": id }));
    assert_eq!(status, 409, "no command configured: {body}");
    workspace.write(
        ".resolve/config.toml",
        b"[check]\ncommand = [\"sh\", \"-c\", \"grep bar src/main.rs\"]\n",
    );
    let (status, body) = web.post("/api/check", &json!({ "id": id }));
    assert_eq!(status, 409, "an untrusted command does not run: {body}");
    workspace.trust();
    let (status, body) = web.post("/api/check", &json!({ "id": id }));
    assert_eq!(status, 200, "{body}");
    let text = body["text"].as_str().unwrap();
    assert!(text.starts_with("✓ checked"), "{text}");
    assert!(
        text.contains("fn main() { bar(1); }"),
        "the command's output: {text}"
    );
    assert_eq!(
        workspace.read("src/main.rs"),
        "fn main() { foo(1); }\n",
        "put back"
    );
}

#[test]
fn a_discard_keeps_the_line_comments_in_its_reason() {
    let workspace = two_file_preview();
    let web = WebReview::start(&workspace);
    let id = workspace.pending_ids()[0].clone();
    let comment = json!({"path": "src/main.rs", "line": 1, "side": "new", "text": "fn main() { bar(1); }", "comment": "Not bar."});
    let (status, body) = web.post(
        "/api/discard",
        &json!({ "id": id, "reason": "Wrong rename.", "comments": [comment] }),
    );
    assert_eq!(status, 200, "{body}");
    let log = workspace.run_ok(&["log", "--json"]).stdout;
    let log: Value = serde_json::from_str(log.trim()).unwrap();
    assert_eq!(
        log["history"][0]["reason"],
        "Wrong rename.\nThe reviewer commented on src/main.rs:1, the line `fn main() { bar(1); }`: \"Not bar.\""
    );
}

#[test]
fn a_save_of_the_review_in_progress_older_than_one_kept_from_the_same_page_is_ignored() {
    let workspace = two_file_preview();
    let web = WebReview::start(&workspace);
    let action = web.get("/api/actions")["actions"][0].clone();
    let save = |page: &str, sequence: u64, reason: &str| {
        let (status, body) = web.post(
            "/api/draft",
            &json!({
                "id": action["id"], "version": action["version"], "page": page,
                "sequence": sequence,
                "rejected": [{ "address": "src/lib.rs#2", "reason": reason }],
            }),
        );
        assert_eq!(status, 200, "{body}");
        body["saved"].clone()
    };
    let reason_kept = || {
        let drafts = web.get("/api/actions")["drafts"].clone();
        drafts[action["id"].as_str().unwrap()]["rejected"][0]["reason"].clone()
    };
    assert_eq!(save("page-a", 2, "Newer."), json!(true));
    assert_eq!(save("page-a", 1, "Older."), json!(false), "arrived last");
    assert_eq!(reason_kept(), json!("Newer."));
    assert_eq!(save("page-a", 2, "Same number."), json!(false));
    assert_eq!(
        save("page-b", 1, "Another page."),
        json!(true),
        "another page's numbers are its own"
    );
    assert_eq!(reason_kept(), json!("Another page."));
    assert_eq!(save("page-a", 3, "Later still."), json!(true));
    assert_eq!(reason_kept(), json!("Later still."));
}
