//! `rho mcp serve --http`: clients of both revisions over loopback Streamable HTTP, the path
//! and `Host` checks, and a remote listener's `--allow-remote` and bearer token.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rho_e2e::*;
use serde_json::json;

use crate::mcp_serve::{Client, ECHO, echo_sandbox, names, over_http};

/// `rho mcp serve --http <addr> <extra>` running in the sandbox (with `env` added); stopped
/// with SIGTERM when dropped.
pub(crate) struct HttpGateway {
    child: std::process::Child,
    /// `http://127.0.0.1:<port>/mcp`.
    pub(crate) url: String,
    port: u16,
    stderr: std::path::PathBuf,
}

impl HttpGateway {
    pub(crate) fn start(
        sandbox: &Sandbox,
        addr: &str,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Self {
        let stderr = sandbox
            .dir
            .path()
            .join(format!("serve-{}.stderr", std::process::id()));
        let mut command = sandbox.command(&[&["mcp", "serve", "--http", addr], extra].concat());
        for (k, v) in env {
            command.env(k, v);
        }
        let child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        let port = loop {
            let text = std::fs::read_to_string(&stderr).unwrap_or_default();
            if let Some(rest) = text.split("listening on http://").nth(1) {
                let authority = rest.split('/').next().unwrap();
                break authority.rsplit(':').next().unwrap().parse().unwrap();
            }
            assert!(
                Instant::now() < deadline,
                "rho mcp serve did not listen: {text}"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        Self {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
            port,
            stderr,
        }
    }

    /// The status code of a raw `POST <path>` of an `initialize` with `headers`.
    fn status(&self, path: &str, headers: &[&str]) -> u16 {
        use std::io::{Read, Write};
        let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}})
        .to_string();
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut request = format!(
            "POST {path} HTTP/1.1\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
             Connection: close\r\n",
            body.len()
        );
        if !headers.iter().any(|h| h.starts_with("Host:")) {
            request.push_str(&format!("Host: 127.0.0.1:{}\r\n", self.port));
        }
        for header in headers {
            request.push_str(header);
            request.push_str("\r\n");
        }
        request.push_str("\r\n");
        request.push_str(&body);
        stream.write_all(request.as_bytes()).unwrap();
        let mut head = [0u8; 12];
        stream.read_exact(&mut head).unwrap();
        String::from_utf8_lossy(&head[9..12]).parse().unwrap()
    }
}

impl Drop for HttpGateway {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }
}

#[test]
fn clients_of_both_revisions_call_over_streamable_http() {
    let dir = tempfile::tempdir().unwrap();
    let sandbox = echo_sandbox(&dir.path().join("pids"));
    let gateway = HttpGateway::start(&sandbox, "localhost:0", &[], &[]);
    let calls = [(ECHO, json!({"text": "hi"}))];
    for (client, version) in [
        (Client::Python("auto"), "2026-07-28"),
        (Client::Python("legacy"), "2025-11-25"),
        (Client::TypeScript, "2025-11-25"),
    ] {
        let report = over_http(&sandbox, client, &gateway.url, None, &calls);
        assert_eq!(report["protocolVersion"], version, "{client:?}: {report:#}");
        assert_eq!(names(&report), [ECHO]);
        assert_eq!(
            report["calls"][0]["text"],
            json!(["called echo with {\"text\":\"hi\"}"]),
            "{report:#}"
        );
    }
    // Only the endpoint answers, and only to loopback names (DNS rebinding).
    assert_eq!(gateway.status("/other", &[]), 404);
    assert_ne!(gateway.status("/mcp", &["Host: attacker.example"]), 200);
    assert_eq!(gateway.status("/mcp", &[]), 200);
}

#[test]
fn a_remote_listener_needs_allow_remote_and_a_token() {
    let sandbox = Sandbox::new();
    let refused = sandbox
        .rho(&["mcp", "serve", "--http", "0.0.0.0:0"])
        .code(1);
    assert_eq!(
        refused.stderr,
        "error: 0.0.0.0:0 is not a loopback address: pass --allow-remote (with --token-env VAR) \
         to serve other machines\n"
    );
    let refused = sandbox
        .rho(&["mcp", "serve", "--http", "0.0.0.0:0", "--allow-remote"])
        .code(1);
    assert_eq!(
        refused.stderr,
        "error: --allow-remote needs --token-env VAR: the bearer token every client must send\n"
    );
    let refused = sandbox
        .rho(&[
            "mcp",
            "serve",
            "--http",
            "0.0.0.0:0",
            "--allow-remote",
            "--token-env",
            "NOPE",
        ])
        .code(1);
    assert_eq!(
        refused.stderr,
        "error: --token-env NOPE: the variable is not set (or empty)\n"
    );
    let refused = sandbox.rho(&["mcp", "serve", "--allow-remote"]).code(2);
    assert!(refused.stderr.contains("--http"), "{}", refused.stderr);

    let dir = tempfile::tempdir().unwrap();
    let sandbox = echo_sandbox(&dir.path().join("pids"));
    let token = "s3cret-token-for-the-test";
    let gateway = HttpGateway::start(
        &sandbox,
        "0.0.0.0:0",
        &[
            "--allow-remote",
            "--token-env",
            "RHO_SERVE_TOKEN",
            "--builtins",
            "--max-risk",
            "destructive",
        ],
        &[("RHO_SERVE_TOKEN", token)],
    );
    assert_eq!(gateway.status("/mcp", &[]), 401);
    assert_eq!(
        gateway.status("/mcp", &["Authorization: Bearer wrong"]),
        401
    );
    let bearer = format!("Authorization: Bearer {token}");
    assert_eq!(gateway.status("/mcp", &[&bearer]), 200);
    // Remote clients name the machine as they reach it.
    assert_eq!(
        gateway.status("/mcp", &[&bearer, "Host: rho.example:8765"]),
        200
    );
    let report = over_http(
        &sandbox,
        Client::TypeScript,
        &gateway.url,
        Some(token),
        &[
            (ECHO, json!({})),
            ("run_command", json!({"command": "env"})),
        ],
    );
    assert_eq!(report["calls"][0]["isError"], false, "{report:#}");
    // A command a served tool runs never sees the token.
    let env = report["calls"][1]["text"][0].as_str().unwrap();
    assert!(env.contains("HOME="), "{report:#}");
    assert!(!env.contains(token), "the token reached a command: {env}");
    let stderr = std::fs::read_to_string(&gateway.stderr).unwrap();
    assert!(!stderr.contains(token), "the token leaked: {stderr}");
}
