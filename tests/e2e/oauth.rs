//! rho's OAuth 2.1 client end to end: the real `rho` binary against a real authorization
//! server (`oidc-provider`) in front of a real MCP server (the Python `mcp` SDK, checking each
//! bearer by introspection), with `rho-test-browser` as the person's browser (`$BROWSER`):
//! login, reuse, refresh, logout, and the refusals (forged state, wrong `iss`, a wrong callback
//! path, a hand-edited token file, no metadata, plaintext endpoints, redirects to another
//! host, a refused registration). A canary check proves no token reaches any
//! output.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rho_e2e::oauth::{AuthServer, ProtectedServer, TEST_LOGIN, test_browser};
use rho_e2e::{Run, Sandbox, mcp_server, rho_bin};
use serde_json::Value;

/// A sandbox whose config has the OAuth server `remote` at `url`.
fn oauth_sandbox(url: &str) -> Sandbox {
    let sandbox = Sandbox::new();
    point_remote_at(&sandbox, url);
    sandbox
}

/// Writes the config with the OAuth server `remote` at `url` (as a hand edit or a plugin
/// update that moves a server does).
fn point_remote_at(sandbox: &Sandbox, url: &str) {
    sandbox.write_config(&format!(
        "[mcp.servers.remote]\nurl = \"{url}\"\nstartup_timeout_sec = 20\n\n[mcp.servers.remote.oauth]\n"
    ));
}

/// `rho` with the test browser as `$BROWSER` and every log on.
fn rho(sandbox: &Sandbox, env: &[(&str, &str)], args: &[&str]) -> Run {
    sandbox.rho_env(&with_browser(env).as_borrowed(), args)
}

/// `rho mcp login remote` as a person at a terminal runs it (a browser login needs one), with
/// the test browser as `$BROWSER`.
fn login(sandbox: &Sandbox, env: &[(&str, &str)]) -> Run {
    sandbox.rho_on_terminal(
        &with_browser(env).as_borrowed(),
        &["mcp", "login", "remote"],
    )
}

/// `env` after the test browser as `$BROWSER`, every log on and no proxy for loopback.
fn with_browser(env: &[(&str, &str)]) -> Env {
    let mut all = vec![
        (
            "BROWSER".to_owned(),
            test_browser().to_str().unwrap().to_owned(),
        ),
        ("RHO_LOG".to_owned(), "trace".to_owned()),
        ("NO_PROXY".to_owned(), "127.0.0.1,localhost".to_owned()),
    ];
    all.extend(env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
    Env(all)
}

/// Environment variables, owned.
struct Env(Vec<(String, String)>);

impl Env {
    fn as_borrowed(&self) -> Vec<(&str, &str)> {
        self.0
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect()
    }
}

/// `rho mcp call remote whoami` as CI would run it (no login may start).
fn whoami(sandbox: &Sandbox) -> Run {
    rho(
        sandbox,
        &[("CI", "1")],
        &["mcp", "call", "remote", "whoami"],
    )
}

fn credential_file(sandbox: &Sandbox) -> PathBuf {
    sandbox.rho_home.join("credentials/remote.json")
}

/// The access and refresh tokens stored for `remote`.
fn stored_tokens(sandbox: &Sandbox) -> Vec<String> {
    let file: Value =
        serde_json::from_str(&std::fs::read_to_string(credential_file(sandbox)).unwrap()).unwrap();
    ["access_token", "refresh_token"]
        .iter()
        .filter_map(|k| file["token"][k].as_str().map(str::to_owned))
        .collect()
}

fn assert_no_token(runs: &[&Run], tokens: &[String]) {
    for run in runs {
        for token in tokens {
            assert!(
                !run.stdout.contains(token.as_str()) && !run.stderr.contains(token.as_str()),
                "a token reached rho's output:\n{}\n{}",
                run.stdout,
                run.stderr
            );
        }
    }
}

#[test]
fn login_reuse_call_and_logout() {
    let auth = AuthServer::start(&[]);
    let server = ProtectedServer::start(auth.issuer());
    let sandbox = oauth_sandbox(server.url());
    let visited = sandbox.dir.path().join("visited.txt");

    // Before a login: listed as needing one, and `--connect` fails saying how to log in,
    // without opening a browser.
    let before = rho(&sandbox, &[], &["mcp", "list", "--json", "--connect"]).ok();
    let entry = mcp_server(&before.json(), "remote").clone();
    assert_eq!(entry["status"], "failed", "{entry}");
    assert!(
        entry["error"]
            .as_str()
            .unwrap()
            .contains("rho mcp login remote"),
        "{entry}"
    );
    assert_eq!(entry["auth"]["state"], "needs_login");
    assert!(!visited.exists(), "an inventory opened a browser");

    let login = login(
        &sandbox,
        &[("RHO_TEST_BROWSER_LOG", visited.to_str().unwrap())],
    )
    .ok();
    assert!(login.stdout.contains(auth.issuer()), "{}", login.stdout);
    let opened = std::fs::read_to_string(&visited).unwrap();
    let first = opened.lines().next().unwrap();
    for part in [
        "code_challenge_method=S256",
        "resource=",
        "state=",
        "redirect_uri=http%3A%2F%2F127.0.0.1%3A",
    ] {
        assert!(first.contains(part), "{part} missing from {first}");
    }

    // Files: the directory 0700, the credential 0600.
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&sandbox.rho_home.join("credentials")), 0o700);
    assert_eq!(mode(&credential_file(&sandbox)), 0o600);

    // Reused: connected without a browser, the tool answers as the logged-in user.
    let registrations = auth.stats()["registrations"].as_u64().unwrap();
    let listed = rho(
        &sandbox,
        &[("CI", "1")],
        &["mcp", "list", "--json", "--connect"],
    )
    .ok();
    let entry = mcp_server(&listed.json(), "remote").clone();
    assert_eq!(entry["status"], "started", "{entry}");
    assert_eq!(entry["auth"]["state"], "logged_in", "{entry}");
    let human = rho(&sandbox, &[], &["mcp", "list"]).ok();
    assert!(
        human.stdout.contains("remote: OAuth logged in"),
        "{}",
        human.stdout
    );
    let called = rho(&sandbox, &[], &["mcp", "call", "remote", "whoami"]).ok();
    assert!(called.stdout.contains(TEST_LOGIN), "{}", called.stdout);
    assert_eq!(
        auth.stats()["registrations"].as_u64().unwrap(),
        registrations
    );

    assert_no_token(
        &[&before, &login, &listed, &human, &called],
        &stored_tokens(&sandbox),
    );
    // Nor the authorization code (rmcp's debug lines quote it; rho caps them).
    let codes: Vec<String> = opened
        .lines()
        .filter_map(|line| url::Url::parse(line).ok())
        .flat_map(|u| {
            u.query_pairs()
                .filter(|(k, _)| k == "code")
                .map(|(_, v)| v.into_owned())
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(
        !codes.is_empty(),
        "the browser log holds no redirect: {opened}"
    );
    assert_no_token(&[&login], &codes);

    let logout = rho(&sandbox, &[], &["mcp", "logout", "remote"]).ok();
    assert!(logout.stdout.contains("logged out"), "{}", logout.stdout);
    assert!(!credential_file(&sandbox).exists());
    let after = rho(&sandbox, &[], &["mcp", "list", "--json"]).ok();
    assert_eq!(
        mcp_server(&after.json(), "remote")["auth"]["state"],
        "needs_login"
    );
}

#[test]
fn an_expired_token_is_refreshed_with_exactly_one_token_request() {
    let auth = AuthServer::start(&[("AS_ACCESS_TOKEN_TTL", "2")]);
    let server = ProtectedServer::start(auth.issuer());
    let sandbox = oauth_sandbox(server.url());
    login(&sandbox, &[]).ok();
    let first = stored_tokens(&sandbox);
    std::thread::sleep(Duration::from_millis(2500));
    let before = auth.stats();
    let called = whoami(&sandbox).ok();
    assert!(called.stdout.contains(TEST_LOGIN), "{}", called.stdout);
    let after = auth.stats();
    let delta = |key: &str| after[key].as_u64().unwrap() - before[key].as_u64().unwrap();
    assert_eq!(delta("token_requests"), 1, "{before} -> {after}");
    assert_eq!(delta("refresh_requests"), 1, "{before} -> {after}");
    let second = stored_tokens(&sandbox);
    assert_ne!(first, second, "the refreshed token was not stored");
    assert_no_token(&[&called], &first);
    assert_no_token(&[&called], &second);
}

#[test]
fn two_processes_refreshing_at_once_lose_no_token() {
    let auth = AuthServer::start(&[("AS_ACCESS_TOKEN_TTL", "2")]);
    let server = ProtectedServer::start(auth.issuer());
    let sandbox = oauth_sandbox(server.url());
    login(&sandbox, &[]).ok();
    std::thread::sleep(Duration::from_millis(2500));
    let runs: Vec<Run> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..2)
            .map(|_| {
                scope.spawn(|| {
                    rho(
                        &sandbox,
                        &[("CI", "1")],
                        &["mcp", "call", "remote", "whoami"],
                    )
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for run in &runs {
        assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
        assert!(run.stdout.contains(TEST_LOGIN), "{}", run.stdout);
    }
    // Rotation spends each refresh token once: the stored one still works afterwards.
    std::thread::sleep(Duration::from_millis(2500));
    let later = whoami(&sandbox);
    assert_eq!(later.code, 0, "{}\n{}", later.stdout, later.stderr);
}

#[test]
fn a_revoked_refresh_token_leads_to_a_login_request_not_a_loop() {
    let auth = AuthServer::start(&[("AS_ACCESS_TOKEN_TTL", "2")]);
    let server = ProtectedServer::start(auth.issuer());
    let sandbox = oauth_sandbox(server.url());
    login(&sandbox, &[]).ok();
    auth.revoke_all();
    std::thread::sleep(Duration::from_millis(2500));
    let before = auth.stats();
    let run = whoami(&sandbox);
    assert_ne!(run.code, 0);
    assert!(
        run.stderr.contains("rho mcp login remote"),
        "{}",
        run.stderr
    );
    let after = auth.stats();
    let refreshes =
        after["refresh_requests"].as_u64().unwrap() - before["refresh_requests"].as_u64().unwrap();
    assert!(refreshes <= 1, "refreshed {refreshes} times");
}

#[test]
fn a_forged_state_or_a_wrong_issuer_finishes_no_login() {
    let auth = AuthServer::start(&[]);
    let server = ProtectedServer::start(auth.issuer());
    for (tamper, expected) in [("state", "state"), ("iss", "issuer")] {
        let sandbox = oauth_sandbox(server.url());
        let run = login(&sandbox, &[("RHO_TEST_BROWSER_TAMPER", tamper)]);
        assert_ne!(run.code, 0, "{tamper}: {}", run.stdout);
        assert!(
            run.stderr.to_lowercase().contains(expected),
            "{tamper}: {}",
            run.stderr
        );
        assert!(
            !credential_file(&sandbox).exists(),
            "{tamper}: a token was kept"
        );
    }
}

#[test]
fn no_browser_login_takes_the_pasted_address() {
    let auth = AuthServer::start(&[]);
    let server = ProtectedServer::start(auth.issuer());
    let sandbox = oauth_sandbox(server.url());
    let mut child = Command::new(rho_bin())
        .args([
            "--cwd",
            sandbox.project.to_str().unwrap(),
            "mcp",
            "login",
            "remote",
            "--no-browser",
        ])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &sandbox.home)
        .env("RHO_HOME", &sandbox.rho_home)
        .env("BROWSER", "/nonexistent-browser")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut url = None;
    let mut line = String::new();
    while stderr.read_line(&mut line).unwrap() > 0 {
        if let Some(found) = line.trim().strip_prefix("http") {
            url = Some(format!("http{found}"));
            break;
        }
        line.clear();
    }
    let url = url.expect("rho printed no URL");
    let held = sandbox.dir.path().join("held.txt");
    let browser = Command::new(test_browser())
        .arg(&url)
        .env("RHO_TEST_BROWSER_HOLD", &held)
        .status()
        .unwrap();
    assert!(browser.success());
    let redirect = std::fs::read_to_string(&held).unwrap();
    writeln!(child.stdin.take().unwrap(), "{}", redirect.trim()).unwrap();
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{rest}");
    assert!(String::from_utf8_lossy(&output.stdout).contains("logged in to remote"));
    assert!(credential_file(&sandbox).exists());
}

#[test]
fn a_hand_edited_token_file_is_reported_and_kept() {
    let auth = AuthServer::start(&[]);
    let server = ProtectedServer::start(auth.issuer());
    let sandbox = oauth_sandbox(server.url());
    login(&sandbox, &[]).ok();
    let file = credential_file(&sandbox);
    let edited = "{ \"format\": 1, \"server\": \"remote\", oops";
    std::fs::write(&file, edited).unwrap();
    let listed = rho(&sandbox, &[], &["mcp", "list", "--json", "--connect"]).ok();
    let entry = mcp_server(&listed.json(), "remote").clone();
    assert_eq!(entry["status"], "failed", "{entry}");
    assert!(
        entry["error"].as_str().unwrap().contains("remote.json"),
        "{entry}"
    );
    assert_eq!(entry["auth"]["state"], "unreadable", "{entry}");
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        edited,
        "the file was rewritten"
    );
}

/// One answer of a [`Stub`]: the status line, extra header lines and the JSON body.
struct Reply {
    status: &'static str,
    headers: String,
    body: String,
}

impl Reply {
    fn json(body: String) -> Reply {
        Reply {
            status: "200 OK",
            headers: String::new(),
            body,
        }
    }

    fn redirect(to: &str) -> Reply {
        Reply {
            status: "302 Found",
            headers: format!("Location: {to}\r\n"),
            body: "{}".to_owned(),
        }
    }
}

/// A stand-in server on a loopback address: the replies `routes(origin)` gives by path, `401`
/// with a `resource_metadata` challenge at `/mcp` otherwise, `404` elsewhere; it counts the
/// requests it got and keeps each one whole (head and body).
struct Stub {
    origin: String,
    requests: Arc<AtomicUsize>,
    received: Arc<Mutex<Vec<String>>>,
}

impl Stub {
    fn start(host: &str, routes: impl Fn(&str) -> Vec<(&'static str, Reply)>) -> Stub {
        let listener = TcpListener::bind((host, 0)).unwrap();
        let origin = format!("http://{host}:{}", listener.local_addr().unwrap().port());
        let routes = routes(&origin);
        let requests = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&requests);
        let received = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&received);
        let challenge = format!(
            "WWW-Authenticate: Bearer resource_metadata=\"{origin}/.well-known/oauth-protected-resource/mcp\"\r\n"
        );
        std::thread::spawn(move || {
            for mut stream in listener.incoming().flatten() {
                counted.fetch_add(1, Ordering::SeqCst);
                let (path, request) = read_request(&mut stream);
                kept.lock().unwrap().push(request);
                let not_found = Reply {
                    status: "404 Not Found",
                    headers: String::new(),
                    body: "{}".to_owned(),
                };
                let mcp = Reply {
                    status: "401 Unauthorized",
                    headers: challenge.clone(),
                    body: "{}".to_owned(),
                };
                let reply = match routes.iter().find(|(p, _)| *p == path) {
                    Some((_, reply)) => reply,
                    None if path == "/mcp" => &mcp,
                    None => &not_found,
                };
                let response = format!(
                    "HTTP/1.1 {}\r\nContent-Type: application/json\r\n{}Content-Length: {}\r\nConnection: close\r\n\r\n{}",
                    reply.status,
                    reply.headers,
                    reply.body.len(),
                    reply.body
                );
                let _ = stream.write_all(response.as_bytes());
            }
        });
        Stub {
            origin,
            requests,
            received,
        }
    }

    fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }

    /// Every request received so far, head and body, as text.
    fn received(&self) -> Vec<String> {
        self.received.lock().unwrap().clone()
    }
}

/// Reads one request (head and `Content-Length` body, 5 s at most) and returns its path and
/// the whole request as text.
fn read_request(stream: &mut std::net::TcpStream) -> (String, String) {
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok();
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return (String::new(), String::from_utf8_lossy(&buffer).into()),
            Ok(n) => buffer.extend_from_slice(&chunk[..n]),
        }
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).to_string();
    let length: usize = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse().ok())?
        })
        .unwrap_or(0);
    while buffer.len() < head_end + length {
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => buffer.extend_from_slice(&chunk[..n]),
        }
    }
    let target = head.split_whitespace().nth(1).unwrap_or("/");
    let path = target.split('?').next().unwrap_or("/").to_owned();
    (path, String::from_utf8_lossy(&buffer).into_owned())
}

/// Protected-resource metadata for `origin`'s `/mcp`, naming `authorization_server`.
fn resource_metadata(origin: &str, authorization_server: &str) -> String {
    format!(
        "{{\"resource\":\"{origin}/mcp\",\"authorization_servers\":[\"{authorization_server}\"]}}"
    )
}

#[test]
fn a_server_without_metadata_or_with_a_plaintext_endpoint_is_refused() {
    // No documents at all: refused, never guessed.
    let stub = Stub::start("127.0.0.1", |_| vec![]);
    let sandbox = oauth_sandbox(&format!("{}/mcp", stub.origin));
    let run = login(&sandbox, &[]);
    assert_ne!(run.code, 0);
    assert!(run.stderr.contains("metadata"), "{}", run.stderr);

    // Metadata that moves the authorization server onto plaintext HTTP off loopback.
    let stub = Stub::start("127.0.0.1", |origin| {
        vec![(
            "/.well-known/oauth-protected-resource/mcp",
            Reply::json(resource_metadata(origin, "http://auth.example.com")),
        )]
    });
    let sandbox = oauth_sandbox(&format!("{}/mcp", stub.origin));
    let run = login(&sandbox, &[]);
    assert_ne!(run.code, 0);
    assert!(
        run.stderr.to_lowercase().contains("https"),
        "{}",
        run.stderr
    );
    assert!(!credential_file(&sandbox).exists());
}

#[test]
fn discovery_never_follows_a_redirect_to_another_host() {
    let auth = AuthServer::start(&[]);
    // The other host serves metadata that would lead to a working login.
    let elsewhere = Stub::start("127.0.0.2", |origin| {
        vec![
            (
                "/.well-known/oauth-protected-resource/mcp",
                Reply::json(resource_metadata(origin, auth.issuer())),
            ),
            (
                "/.well-known/oauth-authorization-server",
                Reply::redirect(&format!(
                    "{}/.well-known/oauth-authorization-server",
                    auth.issuer()
                )),
            ),
        ]
    });
    let to_elsewhere = |path: &'static str| {
        let target = format!("{}{path}", elsewhere.origin);
        move |_: &str| vec![(path, Reply::redirect(&target))]
    };
    // The resource's metadata redirects away; then the authorization server's does.
    let resource = Stub::start(
        "127.0.0.1",
        to_elsewhere("/.well-known/oauth-protected-resource/mcp"),
    );
    let resource_then_issuer = Stub::start("127.0.0.1", |origin| {
        let issuer_path = "/.well-known/oauth-authorization-server";
        vec![
            (
                "/.well-known/oauth-protected-resource/mcp",
                Reply::json(resource_metadata(origin, origin)),
            ),
            (
                issuer_path,
                Reply::redirect(&format!("{}{issuer_path}", elsewhere.origin)),
            ),
        ]
    });
    for stub in [&resource, &resource_then_issuer] {
        let sandbox = oauth_sandbox(&format!("{}/mcp", stub.origin));
        let run = login(&sandbox, &[]);
        assert_ne!(run.code, 0, "{}", run.stdout);
        assert!(
            run.stderr
                .contains("redirect to non-same-origin URL rejected"),
            "{}",
            run.stderr
        );
        assert!(!credential_file(&sandbox).exists());
    }
    assert_eq!(elsewhere.requests(), 0, "a redirect was followed");
    assert_eq!(auth.stats()["registrations"], 0);
}

#[test]
fn a_refused_registration_says_to_configure_a_client_id() {
    let auth = AuthServer::start(&[("AS_REGISTRATION", "closed")]);
    let server = ProtectedServer::start(auth.issuer());
    let sandbox = oauth_sandbox(server.url());
    let run = login(&sandbox, &[]);
    assert_ne!(run.code, 0, "{}", run.stdout);
    assert!(
        run.stderr
            .contains("refused to register rho as a client: HTTP 401"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("set `client_id`"), "{}", run.stderr);
    assert!(!credential_file(&sandbox).exists());
    assert_eq!(auth.stats()["authorization_requests"], 0);
}

#[test]
fn a_wrong_callback_path_gets_404_and_the_login_goes_on() {
    let auth = AuthServer::start(&[]);
    let server = ProtectedServer::start(auth.issuer());
    let sandbox = oauth_sandbox(server.url());
    let log = sandbox.dir.path().join("visits.txt");
    // The browser first takes the redirect to `/wrong` (it exits non-zero unless that got a
    // 404), then to the real callback path.
    login(
        &sandbox,
        &[
            ("RHO_TEST_BROWSER_TAMPER", "path"),
            ("RHO_TEST_BROWSER_LOG", log.to_str().unwrap()),
        ],
    )
    .ok();
    let visits = std::fs::read_to_string(&log).unwrap();
    let last_two: Vec<&str> = visits.lines().rev().take(2).collect();
    assert!(last_two[0].contains("/callback?"), "{visits}");
    assert!(last_two[1].contains("/wrong?"), "{visits}");
    assert!(credential_file(&sandbox).exists());
    assert!(whoami(&sandbox).ok().stdout.contains(TEST_LOGIN));
}

#[test]
fn login_through_a_real_headless_browser() {
    rho_e2e::oauth::require_chromium();
    let auth = AuthServer::start(&[]);
    let server = ProtectedServer::start(auth.issuer());
    let sandbox = oauth_sandbox(server.url());
    let login = login(&sandbox, &[("RHO_TEST_BROWSER", "chromium")]);
    assert_eq!(login.code, 0, "{}", login.stderr);
    let called = whoami(&sandbox).ok();
    assert!(called.stdout.contains(TEST_LOGIN), "{}", called.stdout);
}

/// The stored credential file of `remote`, as JSON.
fn credential_json(sandbox: &Sandbox) -> Value {
    serde_json::from_str(&std::fs::read_to_string(credential_file(sandbox)).unwrap()).unwrap()
}

#[test]
fn a_stored_token_never_goes_to_a_server_at_another_address() {
    let auth = AuthServer::start(&[]);
    let first = ProtectedServer::start(auth.issuer());
    let sandbox = oauth_sandbox(first.url());
    login(&sandbox, &[]).ok();
    // The canary: the real tokens the login stored.
    let tokens = stored_tokens(&sandbox);
    assert_eq!(tokens.len(), 2, "an access and a refresh token");

    // `remote` now points at another origin (another loopback port), which records every
    // request it gets and answers each with a 401 challenge.
    let elsewhere = Stub::start("127.0.0.1", |_| vec![]);
    point_remote_at(&sandbox, &format!("{}/mcp", elsewhere.origin));
    let connected = rho(
        &sandbox,
        &[("CI", "1")],
        &["mcp", "list", "--json", "--connect"],
    )
    .ok();
    let called = whoami(&sandbox);
    // A person at a terminal, where a login may start: the old token stays home too.
    let at_terminal = sandbox.rho_on_terminal(
        &with_browser(&[]).as_borrowed(),
        &["mcp", "call", "remote", "whoami"],
    );
    for request in elsewhere.received() {
        for token in &tokens {
            assert!(
                !request.contains(token.as_str()),
                "the server at the new address received a stored token:\n{request}"
            );
        }
        assert!(
            !request.to_ascii_lowercase().contains("\r\nauthorization:"),
            "the server at the new address received credentials:\n{request}"
        );
    }

    let entry = mcp_server(&connected.json(), "remote").clone();
    assert_eq!(entry["status"], "failed", "{entry}");
    let error = entry["error"].as_str().unwrap();
    assert!(error.contains("the server's address changed"), "{entry}");
    assert!(error.contains("rho mcp login remote"), "{entry}");
    assert_eq!(entry["auth"]["state"], "address_changed", "{entry}");
    assert_eq!(
        entry["auth"]["summary"],
        "login needed: the server's address changed"
    );
    assert_ne!(called.code, 0, "{}", called.stdout);
    assert!(
        called.stderr.contains("the server's address changed"),
        "{}",
        called.stderr
    );
    assert_ne!(at_terminal.code, 0, "{}", at_terminal.stdout);
    // With CI set nothing was even asked of the new address.
    let human = rho(&sandbox, &[], &["mcp", "list"]).ok();
    assert!(
        human
            .stdout
            .contains("remote: OAuth login needed: the server's address changed"),
        "{}",
        human.stdout
    );
    assert_no_token(&[&connected, &called, &at_terminal, &human], &tokens);
    assert_eq!(
        stored_tokens(&sandbox),
        tokens,
        "kept for a login to replace"
    );

    // A real server at another address: a login there replaces the credential, which then
    // works at the new address only.
    let second = ProtectedServer::start(auth.issuer());
    point_remote_at(&sandbox, second.url());
    let listed = rho(&sandbox, &[], &["mcp", "list", "--json"]).ok();
    assert_eq!(
        mcp_server(&listed.json(), "remote")["auth"]["state"],
        "address_changed"
    );
    login(&sandbox, &[]).ok();
    let file = credential_json(&sandbox);
    assert_eq!(file["format"], 2, "{file}");
    assert_eq!(file["resource"], second.url(), "{file}");
    assert_ne!(stored_tokens(&sandbox), tokens);
    let listed = rho(&sandbox, &[], &["mcp", "list", "--json"]).ok();
    assert_eq!(
        mcp_server(&listed.json(), "remote")["auth"]["state"],
        "logged_in"
    );
    assert!(whoami(&sandbox).ok().stdout.contains(TEST_LOGIN));
    point_remote_at(&sandbox, first.url());
    let back = whoami(&sandbox);
    assert!(
        back.stderr.contains("the server's address changed"),
        "{}",
        back.stderr
    );
}

#[test]
fn a_login_saved_before_credentials_named_their_server_is_not_used() {
    let auth = AuthServer::start(&[]);
    let server = ProtectedServer::start(auth.issuer());
    let sandbox = oauth_sandbox(server.url());
    login(&sandbox, &[]).ok();
    // What an older rho wrote: format 1, no `resource`.
    let mut file = credential_json(&sandbox);
    let object = file.as_object_mut().unwrap();
    object.remove("resource");
    object.insert("format".into(), 1.into());
    std::fs::write(
        credential_file(&sandbox),
        serde_json::to_string_pretty(&file).unwrap(),
    )
    .unwrap();

    let listed = rho(
        &sandbox,
        &[("CI", "1")],
        &["mcp", "list", "--json", "--connect"],
    )
    .ok();
    let entry = mcp_server(&listed.json(), "remote").clone();
    assert_eq!(entry["status"], "failed", "{entry}");
    assert_eq!(entry["auth"]["state"], "unbound", "{entry}");
    let error = entry["error"].as_str().unwrap();
    assert!(error.contains("older rho"), "{entry}");
    assert!(error.contains("rho mcp login remote"), "{entry}");

    login(&sandbox, &[]).ok();
    let file = credential_json(&sandbox);
    assert_eq!(file["format"], 2, "{file}");
    assert_eq!(file["resource"], server.url(), "{file}");
    assert!(whoami(&sandbox).ok().stdout.contains(TEST_LOGIN));
}

#[test]
fn login_opens_no_browser_in_ci_or_without_a_terminal() {
    let auth = AuthServer::start(&[]);
    let server = ProtectedServer::start(auth.issuer());
    let sandbox = oauth_sandbox(server.url());
    let visited = sandbox.dir.path().join("visited.txt");
    let browser = test_browser();
    let env = [
        ("BROWSER", browser.to_str().unwrap()),
        ("RHO_TEST_BROWSER_LOG", visited.to_str().unwrap()),
        ("NO_PROXY", "127.0.0.1,localhost"),
    ];
    let in_ci: Vec<(&str, &str)> = env.iter().copied().chain([("CI", "1")]).collect();
    let runs = [
        (
            "CI",
            sandbox.rho_on_terminal(&in_ci, &["mcp", "login", "remote"]),
        ),
        (
            "no terminal",
            sandbox.rho_env(&env, &["mcp", "login", "remote"]),
        ),
    ];
    for (case, run) in runs {
        assert_eq!(run.code, 1, "{case}: {}\n{}", run.stdout, run.stderr);
        assert!(!visited.exists(), "{case}: a browser was opened");
        let lines: Vec<&str> = run
            .stderr
            .lines()
            .filter(|l| !l.trim().is_empty())
            .collect();
        assert_eq!(lines.len(), 1, "{case}: {}", run.stderr);
        assert!(lines[0].contains("terminal"), "{case}: {}", run.stderr);
        assert!(lines[0].contains("--no-browser"), "{case}: {}", run.stderr);
        assert!(!credential_file(&sandbox).exists(), "{case}");
    }
    assert_eq!(auth.stats()["authorization_requests"], 0);
    // On a terminal outside CI it does open one.
    sandbox
        .rho_on_terminal(&env, &["mcp", "login", "remote"])
        .ok();
    assert!(visited.exists(), "no browser was opened on a terminal");
}
