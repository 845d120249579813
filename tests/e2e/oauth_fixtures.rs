//! Self-test of the OAuth fixtures (not a test of rho): the authorization server, the protected
//! MCP server and `rho-test-browser` together do what rho's OAuth client will rely on. Each test
//! plays an OAuth 2.1 client by hand: discovery from the 401, registration, an authorization
//! request with PKCE and a resource indicator, the browser leg into a one-shot loopback
//! listener, the code exchange, MCP calls with the bearer, refresh and revocation.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, WWW_AUTHENTICATE};
use rho_e2e::oauth::{AuthServer, ProtectedServer, TEST_LOGIN, require_chromium, test_browser};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use url::Url;

const SCOPE: &str = "mcp:tools offline_access";
const PROTOCOL_VERSION: &str = "2025-11-25";

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(10))
        .no_proxy()
        .build()
        .unwrap()
}

/// base64url without padding (RFC 7636 appendix A).
fn base64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(char::from(ALPHABET[(n >> (18 - 6 * i) & 63) as usize]));
        }
    }
    out
}

/// Something unguessable enough for a test (PKCE verifier, state): 64 hex characters.
fn nonce(tag: &str) -> String {
    let seed = format!(
        "{tag}-{}-{:?}-{:?}",
        std::process::id(),
        Instant::now(),
        std::thread::current().id()
    );
    Sha256::digest(seed.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A loopback listener standing in for rho's: answers `/callback` 200 (and stops), any other
/// path 404 (and keeps listening), and hands over each request target (`/callback?code=…`).
struct Listener {
    port: u16,
    target: mpsc::Receiver<String>,
}

impl Listener {
    fn bind() -> Self {
        let socket = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = socket.local_addr().unwrap().port();
        let (tx, target) = mpsc::channel();
        std::thread::spawn(move || {
            while let Ok((mut stream, _)) = socket.accept() {
                stream
                    .set_read_timeout(Some(Duration::from_secs(10)))
                    .unwrap();
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
                    head.push(byte[0]);
                }
                let head = String::from_utf8_lossy(&head).into_owned();
                let target = head
                    .split_whitespace()
                    .nth(1)
                    .unwrap_or_default()
                    .to_owned();
                let callback = target.starts_with("/callback");
                let (status, body) = if callback {
                    (
                        "200 OK",
                        "<html><body>Signed in. You may close this window.</body></html>",
                    )
                } else {
                    ("404 Not Found", "not found")
                };
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status}\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\
                     Connection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = tx.send(target);
                if callback {
                    return;
                }
            }
        });
        Self { port, target }
    }

    fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}/callback", self.port)
    }

    /// The request target that reached it.
    fn received(&self) -> String {
        self.target
            .recv_timeout(Duration::from_secs(10))
            .expect("nothing reached the loopback listener")
    }
}

/// What discovery and registration found, as an OAuth client keeps it.
struct Client {
    http: reqwest::Client,
    issuer: String,
    mcp: String,
    metadata: Value,
    client_id: String,
}

/// One authorization request in flight.
struct Request {
    url: Url,
    state: String,
    verifier: String,
    redirect_uri: String,
}

#[derive(Debug)]
struct Tokens {
    access: String,
    refresh: String,
}

/// Discovery from the 401, AS metadata and dynamic registration of a native public client.
async fn discover_and_register(rs: &ProtectedServer, redirect_uri: &str) -> Client {
    let http = http();
    let challenge = http
        .post(rs.url())
        .header(ACCEPT, "application/json, text/event-stream")
        .header(CONTENT_TYPE, "application/json")
        .body(initialize().to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(challenge.status(), StatusCode::UNAUTHORIZED);
    let header = challenge.headers()[WWW_AUTHENTICATE].to_str().unwrap();
    let prm_url = quoted(header, "resource_metadata")
        .unwrap_or_else(|| panic!("no resource_metadata in {header}"));
    assert!(
        header.contains(r#"error="invalid_token""#),
        "401 challenge: {header}"
    );

    let prm = get_json(&http, &prm_url).await;
    assert_eq!(prm["resource"], rs.url(), "{prm}");
    let issuer = prm["authorization_servers"][0].as_str().unwrap().to_owned();
    assert!(
        !issuer.ends_with('/'),
        "issuer with a trailing slash: {prm}"
    );
    assert_eq!(prm["scopes_supported"], json!(["mcp:tools"]), "{prm}");

    let metadata = get_json(
        &http,
        &format!("{issuer}/.well-known/oauth-authorization-server"),
    )
    .await;
    // RFC 8414 §3.3: exactly the issuer the metadata was looked up for.
    assert_eq!(metadata["issuer"], issuer.as_str(), "{metadata}");
    assert_eq!(
        metadata["code_challenge_methods_supported"],
        json!(["S256"])
    );
    assert_eq!(
        metadata["authorization_response_iss_parameter_supported"],
        true
    );
    for scope in ["offline_access", "mcp:tools", "mcp:admin"] {
        assert!(
            metadata["scopes_supported"]
                .as_array()
                .unwrap()
                .contains(&json!(scope)),
            "{scope} not in {metadata}"
        );
    }
    for endpoint in [
        "introspection_endpoint",
        "revocation_endpoint",
        "registration_endpoint",
    ] {
        assert!(metadata[endpoint].is_string(), "no {endpoint}: {metadata}");
    }

    let registration = http
        .post(metadata["registration_endpoint"].as_str().unwrap())
        .header(CONTENT_TYPE, "application/json")
        .body(
            json!({
                "client_name": "oauth fixture self-test",
                "redirect_uris": [redirect_uri],
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
                "token_endpoint_auth_method": "none",
                "application_type": "native",
                "scope": SCOPE,
            })
            .to_string(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(registration.status(), StatusCode::CREATED);
    let registered: Value = serde_json::from_str(&registration.text().await.unwrap()).unwrap();
    Client {
        http,
        issuer,
        mcp: rs.url().to_owned(),
        client_id: registered["client_id"].as_str().unwrap().to_owned(),
        metadata,
    }
}

impl Client {
    fn endpoint(&self, name: &str) -> &str {
        self.metadata[name].as_str().unwrap()
    }

    /// An authorization URL with PKCE S256 and the MCP server as resource.
    fn authorization(&self, redirect_uri: &str, scope: &str) -> Request {
        let verifier = nonce("verifier");
        let state = nonce("state");
        let challenge = base64url(&Sha256::digest(verifier.as_bytes()));
        let mut url = Url::parse(self.endpoint("authorization_endpoint")).unwrap();
        url.query_pairs_mut()
            .append_pair("response_type", "code")
            .append_pair("client_id", &self.client_id)
            .append_pair("redirect_uri", redirect_uri)
            .append_pair("scope", scope)
            .append_pair("state", &state)
            .append_pair("code_challenge", &challenge)
            .append_pair("code_challenge_method", "S256")
            .append_pair("resource", &self.mcp);
        Request {
            url,
            state,
            verifier,
            redirect_uri: redirect_uri.to_owned(),
        }
    }

    /// POSTs a form to the token endpoint: (status, JSON body).
    async fn token(&self, form: &[(&str, &str)]) -> (StatusCode, Value) {
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(form)
            .finish();
        let response = self
            .http
            .post(self.endpoint("token_endpoint"))
            .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(body)
            .send()
            .await
            .unwrap();
        let status = response.status();
        (
            status,
            serde_json::from_str(&response.text().await.unwrap()).unwrap(),
        )
    }

    /// Checks the redirect that reached the listener and exchanges its code for tokens with
    /// `scope`.
    async fn exchange(&self, request: &Request, target: &str, scope: &str) -> Tokens {
        let callback = Url::parse("http://127.0.0.1")
            .unwrap()
            .join(target)
            .unwrap();
        assert_eq!(callback.path(), "/callback");
        let query = |key: &str| {
            callback
                .query_pairs()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.into_owned())
                .unwrap_or_else(|| panic!("no {key} in {target}"))
        };
        assert_eq!(query("state"), request.state);
        // RFC 9207: the issuer, exactly.
        assert_eq!(query("iss"), self.issuer);
        let code = query("code");
        let (status, body) = self
            .token(&[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", &request.redirect_uri),
                ("client_id", &self.client_id),
                ("code_verifier", &request.verifier),
                ("resource", &self.mcp),
            ])
            .await;
        assert_eq!(status, StatusCode::OK, "code exchange: {body}");
        assert_eq!(body["token_type"], "Bearer", "{body}");
        assert_eq!(body["scope"], scope, "{body}");
        Tokens {
            access: body["access_token"].as_str().unwrap().to_owned(),
            refresh: body["refresh_token"]
                .as_str()
                .unwrap_or_else(|| panic!("no refresh token: {body}"))
                .to_owned(),
        }
    }

    async fn refresh(&self, refresh_token: &str) -> (StatusCode, Value) {
        self.token(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh_token),
            ("client_id", &self.client_id),
        ])
        .await
    }
}

/// Runs `rho-test-browser` on `url` as rho would (`$BROWSER <url>`); returns its stderr.
fn browse(url: &Url, env: &[(&str, &str)], log: &Path) -> String {
    let mut command = Command::new(test_browser());
    command.arg(url.as_str()).env("RHO_TEST_BROWSER_LOG", log);
    for name in [
        "RHO_TEST_BROWSER",
        "RHO_TEST_BROWSER_TAMPER",
        "RHO_TEST_BROWSER_HOLD",
    ] {
        command.env_remove(name);
    }
    for (k, v) in env {
        command.env(k, v);
    }
    let output = command.output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        output.status.success(),
        "rho-test-browser failed ({}):\n{stderr}",
        output.status
    );
    assert!(output.stdout.is_empty(), "rho-test-browser wrote to stdout");
    stderr
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": PROTOCOL_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "oauth-fixture-self-test", "version": "0"},
    }})
}

/// An MCP session over Streamable HTTP, by plain JSON-RPC POSTs.
struct Mcp<'a> {
    client: &'a Client,
    session: Option<String>,
}

struct Answer {
    status: StatusCode,
    challenge: Option<String>,
    message: Option<Value>,
}

impl<'a> Mcp<'a> {
    async fn open(client: &'a Client, token: &str) -> Mcp<'a> {
        let mut mcp = Mcp {
            client,
            session: None,
        };
        let answer = mcp.post(token, initialize()).await;
        assert_eq!(answer.status, StatusCode::OK);
        assert_eq!(
            answer.message.unwrap()["result"]["serverInfo"]["name"],
            "rho-test-protected"
        );
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert_eq!(mcp.post(token, note).await.status, StatusCode::ACCEPTED);
        mcp
    }

    async fn post(&mut self, token: &str, message: Value) -> Answer {
        let mut request = self
            .client
            .http
            .post(&self.client.mcp)
            .header(ACCEPT, "application/json, text/event-stream")
            .header(CONTENT_TYPE, "application/json")
            .header(AUTHORIZATION, format!("Bearer {token}"))
            .header("mcp-protocol-version", PROTOCOL_VERSION);
        if let Some(session) = &self.session {
            request = request.header("mcp-session-id", session);
        }
        let response = request.body(message.to_string()).send().await.unwrap();
        let status = response.status();
        if let Some(session) = response.headers().get("mcp-session-id") {
            self.session = Some(session.to_str().unwrap().to_owned());
        }
        let challenge = response
            .headers()
            .get(WWW_AUTHENTICATE)
            .map(|v| v.to_str().unwrap().to_owned());
        let sse = response
            .headers()
            .get(CONTENT_TYPE)
            .is_some_and(|v| v.to_str().unwrap().starts_with("text/event-stream"));
        let text = response.text().await.unwrap();
        let message = if sse {
            text.lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
                .find(|m| m.get("id").is_some())
        } else {
            serde_json::from_str(&text).ok()
        };
        Answer {
            status,
            challenge,
            message,
        }
    }

    async fn call(&mut self, token: &str, id: u64, tool: &str) -> Answer {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                          "params": {"name": tool, "arguments": {}}});
        self.post(token, call).await
    }

    /// `whoami`'s answer, parsed.
    async fn whoami(&mut self, token: &str, id: u64) -> Value {
        let answer = self.call(token, id, "whoami").await;
        assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.challenge);
        let message = answer.message.unwrap();
        let text = message["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("{message}"));
        serde_json::from_str(text).unwrap()
    }
}

/// The value of `key="…"` in a `WWW-Authenticate` header.
fn quoted(header: &str, key: &str) -> Option<String> {
    let start = header.find(&format!("{key}=\""))? + key.len() + 2;
    let len = header[start..].find('"')?;
    Some(header[start..start + len].to_owned())
}

async fn get_json(http: &reqwest::Client, url: &str) -> Value {
    let response = http.get(url).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK, "GET {url}");
    serde_json::from_str(&response.text().await.unwrap()).unwrap()
}

/// Discovery, registration and one login through `rho-test-browser` in `mode`.
async fn log_in(rs: &ProtectedServer, mode: &str, dir: &Path) -> (Client, Tokens) {
    let listener = Listener::bind();
    let client = discover_and_register(rs, &listener.redirect_uri()).await;
    let request = client.authorization(&listener.redirect_uri(), SCOPE);
    let log = dir.join(format!("{mode}-visited.txt"));
    browse(&request.url, &[("RHO_TEST_BROWSER", mode)], &log);
    let visited = std::fs::read_to_string(&log).unwrap();
    assert_eq!(visited.lines().next(), Some(request.url.as_str()));
    assert!(
        visited
            .lines()
            .last()
            .unwrap()
            .starts_with(&listener.redirect_uri()),
        "{visited}"
    );
    let tokens = client
        .exchange(&request, &listener.received(), "mcp:tools")
        .await;
    (client, tokens)
}

#[tokio::test]
async fn the_fixtures_do_what_an_oauth_client_relies_on() {
    let dir = tempfile::tempdir().unwrap();
    let auth = AuthServer::start(&[]);
    let rs = ProtectedServer::start(auth.issuer());
    let (client, tokens) = log_in(&rs, "form", dir.path()).await;
    assert_eq!(auth.stats()["registrations"], 1);

    let mut mcp = Mcp::open(&client, &tokens.access).await;
    let me = mcp.whoami(&tokens.access, 2).await;
    assert_eq!(me["subject"], TEST_LOGIN);
    assert_eq!(me["client_id"], client.client_id.as_str());
    assert_eq!(me["scopes"], json!(["mcp:tools"]));

    // Step-up: admin_op needs mcp:admin, and the 403 says which scopes to ask for.
    let denied = mcp.call(&tokens.access, 3, "admin_op").await;
    assert_eq!(denied.status, StatusCode::FORBIDDEN);
    let challenge = denied.challenge.unwrap();
    assert!(challenge.starts_with("Bearer "), "{challenge}");
    assert_eq!(quoted(&challenge, "error").unwrap(), "insufficient_scope");
    assert_eq!(quoted(&challenge, "scope").unwrap(), "mcp:tools mcp:admin");
    assert_eq!(
        quoted(&challenge, "resource_metadata").unwrap(),
        format!(
            "{}/.well-known/oauth-protected-resource/mcp",
            rs.url().trim_end_matches("/mcp")
        )
    );
    // ... and asking for them works without registering again.
    let listener = Listener::bind();
    let wider = client.authorization(
        &listener.redirect_uri(),
        "mcp:tools mcp:admin offline_access",
    );
    browse(&wider.url, &[], &dir.path().join("step-up.txt"));
    let admin = client
        .exchange(&wider, &listener.received(), "mcp:tools mcp:admin")
        .await;
    let allowed = mcp.call(&admin.access, 6, "admin_op").await;
    assert_eq!(allowed.status, StatusCode::OK, "{:?}", allowed.challenge);
    assert_eq!(
        allowed.message.unwrap()["result"]["content"][0]["text"],
        "admin ok"
    );

    // One refresh is one token request.
    let before = auth.stats();
    let (status, refreshed) = client.refresh(&tokens.refresh).await;
    assert_eq!(status, StatusCode::OK, "{refreshed}");
    let after = auth.stats();
    let grew = |key: &str| after[key].as_u64().unwrap() - before[key].as_u64().unwrap();
    assert_eq!((grew("token_requests"), grew("refresh_requests")), (1, 1));
    let access = refreshed["access_token"].as_str().unwrap();
    let rotated = refreshed["refresh_token"].as_str().unwrap();
    assert_ne!(
        rotated, tokens.refresh,
        "public-client refresh tokens rotate"
    );
    assert_eq!(mcp.whoami(access, 4).await["subject"], TEST_LOGIN);

    // Revoked: the refresh token is refused, and so is the access token at the server.
    assert!(auth.revoke_all() > 0);
    let (status, error) = client.refresh(rotated).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{error}");
    assert_eq!(error["error"], "invalid_grant");
    let refused = mcp.call(access, 5, "whoami").await;
    assert_eq!(refused.status, StatusCode::UNAUTHORIZED);
    assert!(refused.challenge.unwrap().contains("resource_metadata="));
}

#[tokio::test]
async fn the_browser_leg_works_in_headless_chromium() {
    require_chromium();
    let dir = tempfile::tempdir().unwrap();
    let auth = AuthServer::start(&[]);
    let rs = ProtectedServer::start(auth.issuer());
    let (client, tokens) = log_in(&rs, "chromium", dir.path()).await;
    let mut mcp = Mcp::open(&client, &tokens.access).await;
    assert_eq!(mcp.whoami(&tokens.access, 2).await["subject"], TEST_LOGIN);
}

#[tokio::test]
async fn tampered_and_held_redirects_are_what_a_negative_test_needs() {
    let dir = tempfile::tempdir().unwrap();
    let auth = AuthServer::start(&[("AS_ACCESS_TOKEN_TTL", "30")]);
    let rs = ProtectedServer::start(auth.issuer());
    let first = Listener::bind();
    let client = discover_and_register(&rs, &first.redirect_uri()).await;
    let log = dir.path().join("visited.txt");

    for (tamper, check) in [
        ("state", "state=rho-test-browser-tampered-state"),
        ("iss", "iss=http%3A%2F%2F127.0.0.1%3A1"),
        ("path", "/wrong?code="),
    ] {
        // A native client may use any loopback port (RFC 8252 §7.3), so each run has its own.
        let listener = Listener::bind();
        let request = client.authorization(&listener.redirect_uri(), SCOPE);
        browse(&request.url, &[("RHO_TEST_BROWSER_TAMPER", tamper)], &log);
        let target = listener.received();
        assert!(target.contains(check), "{tamper}: {target}");
        if tamper == "path" {
            // After the 404 the browser goes on to the real callback path.
            let then = listener.received();
            assert!(then.starts_with("/callback?code="), "{then}");
        }
    }

    // Held: the redirect is written down instead of delivered, and its code is still good.
    let held = dir.path().join("held.txt");
    let request = client.authorization(&first.redirect_uri(), SCOPE);
    browse(
        &request.url,
        &[("RHO_TEST_BROWSER_HOLD", held.to_str().unwrap())],
        &log,
    );
    let redirect = Url::parse(std::fs::read_to_string(&held).unwrap().trim()).unwrap();
    assert_eq!(redirect.port(), Some(first.port));
    assert!(
        first.target.try_recv().is_err(),
        "a held redirect reached the listener"
    );
    let code = redirect
        .query_pairs()
        .find(|(k, _)| k == "code")
        .map(|(_, v)| v.into_owned())
        .unwrap();
    let (status, body) = client
        .token(&[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", &request.redirect_uri),
            ("client_id", &client.client_id),
            ("code_verifier", &request.verifier),
        ])
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["expires_in"], 30, "AS_ACCESS_TOKEN_TTL: {body}");
}
