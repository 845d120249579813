//! Locating and starting the peers (a missing one fails the test, saying how to install it),
//! and small helpers every test uses.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rho_component::{
    Asker, HttpServerSpec, McpServerOrigin, McpServerSpec, McpTransport, StdioCommand,
    StdioServerSpec,
};
use rho_mcp::{Cancel, ClientOptions, Connection};
use serde_json::Value;

pub(crate) fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub(crate) fn everything_bin() -> PathBuf {
    let bin = repo_root().join("tests/peers/node_modules/.bin/mcp-server-everything");
    assert!(
        bin.exists(),
        "{} is missing: install the test peers with `npm ci --prefix tests/peers`",
        bin.display()
    );
    bin
}

/// A legacy Streamable HTTP server on the TypeScript SDK that asks its form on the standalone
/// stream and holds that stream's `GET` back (`tests/peers/standalone_stream_server.mjs`).
pub(crate) async fn standalone_stream_server() -> (McpServerSpec, Peer) {
    let script = repo_root().join("tests/peers/standalone_stream_server.mjs");
    let sdk = repo_root().join("tests/peers/node_modules/@modelcontextprotocol/sdk");
    assert!(
        sdk.exists(),
        "{} is missing: install the test peers with `npm ci --prefix tests/peers`",
        sdk.display()
    );
    let port = free_port();
    let child = std::process::Command::new("node")
        .arg(&script)
        .arg(port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run node {}: {e}", script.display()));
    let peer = Peer(child);
    wait_for_port(port).await;
    (spec("standalone", http(port)), peer)
}

pub(crate) fn modern_script() -> PathBuf {
    let script = repo_root().join("tests/peers/modern_server.py");
    let probe = std::process::Command::new("python3")
        .args(["-c", "import mcp.server.mcpserver"])
        .output();
    assert!(
        probe.is_ok_and(|o| o.status.success()),
        "python3 with the mcp package is missing: `pip install -r .ci/requirements.txt`"
    );
    script
}

/// A child process killed when the test ends, however it ends.
pub(crate) struct Peer(std::process::Child);

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub(crate) async fn wait_for_port(port: u16) {
    for _ in 0..300 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("no server listening on port {port}");
}

pub(crate) fn spec(id: &str, transport: McpTransport) -> McpServerSpec {
    let mut spec = McpServerSpec::new(id, McpServerOrigin::Config, transport);
    spec.startup_timeout = Duration::from_secs(20);
    spec.call_timeout = Duration::from_secs(20);
    spec
}

pub(crate) fn stdio(command: StdioCommand, args: Vec<String>) -> McpTransport {
    McpTransport::Stdio(StdioServerSpec {
        command,
        args,
        env: vec![],
        env_from_env: vec![],
        cwd: None,
    })
}

pub(crate) fn http(port: u16) -> McpTransport {
    McpTransport::StreamableHttp(HttpServerSpec {
        url: format!("http://127.0.0.1:{port}/mcp"),
        headers: vec![],
        headers_from_env: vec![],
    })
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum Wire {
    Stdio,
    Http,
}

/// A server-everything spec for `wire` (and the HTTP server process, when there is one).
pub(crate) async fn everything(wire: Wire) -> (McpServerSpec, Option<Peer>) {
    let bin = everything_bin();
    match wire {
        Wire::Stdio => (
            spec(
                "everything",
                stdio(StdioCommand::Path(bin), vec!["stdio".into()]),
            ),
            None,
        ),
        Wire::Http => {
            let port = free_port();
            let mut command = std::process::Command::new(bin);
            command.arg("streamableHttp").env("PORT", port.to_string());
            (
                spec("everything", http(port)),
                Some(http_peer(command, port).await),
            )
        }
    }
}

/// `command` started as an HTTP server (its output dropped), once it listens on `port`.
async fn http_peer(mut command: std::process::Command, port: u16) -> Peer {
    let child = command
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let peer = Peer(child);
    wait_for_port(port).await;
    peer
}

pub(crate) async fn modern(wire: Wire) -> (McpServerSpec, Option<Peer>) {
    let script = modern_script().display().to_string();
    match wire {
        Wire::Stdio => (
            spec(
                "modern",
                stdio(
                    StdioCommand::Bare("python3".into()),
                    vec![script, "stdio".into()],
                ),
            ),
            None,
        ),
        Wire::Http => {
            let port = free_port();
            let mut command = std::process::Command::new("python3");
            command.args([script.as_str(), "http", &port.to_string()]);
            (
                spec("modern", http(port)),
                Some(http_peer(command, port).await),
            )
        }
    }
}

pub(crate) async fn connect(spec: &McpServerSpec, options: &ClientOptions) -> Connection {
    rho_mcp::connect_with(spec, &rho_mcp::process_ambient, options)
        .await
        .unwrap_or_else(|e| panic!("connect {}: {e}", spec.id))
}

/// A directory called `name` inside a fresh temporary directory; both are removed when this
/// is dropped, so a test holds it for as long as it uses the directory.
pub(crate) struct Workspace {
    _temp: tempfile::TempDir,
    path: PathBuf,
}

impl Workspace {
    /// The directory called `name`.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

pub(crate) fn workspace(name: &str) -> Workspace {
    let temp = tempfile::tempdir().unwrap();
    let path = temp.path().join(name);
    std::fs::create_dir_all(&path).unwrap();
    Workspace { _temp: temp, path }
}

/// Options declaring every client capability, with a workspace called `my workspace` as the
/// one root (held by the second half).
pub(crate) fn everything_options() -> (ClientOptions, Workspace) {
    all_capabilities("my workspace")
}

/// Options declaring every client capability, with a workspace called `root_name` as the one
/// root (held by the second half).
pub(crate) fn all_capabilities(root_name: &str) -> (ClientOptions, Workspace) {
    let root = workspace(root_name);
    let options = ClientOptions {
        roots: Some(root.path().to_path_buf()),
        elicitation: true,
        sampling: true,
        skip_offers: false,
        oauth: None,
    };
    (options, root)
}

pub(crate) fn offers(connection: &Connection, tool: &str) -> bool {
    connection.tools.iter().any(|t| t.name == tool)
}

/// The text of a tool result.
pub(crate) fn text_of(result: &Value) -> String {
    result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| b["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

pub(crate) async fn call(
    connection: &Connection,
    tool: &str,
    arguments: Value,
    asker: Option<Arc<dyn Asker>>,
) -> Value {
    connection
        .call_tool_with(
            tool,
            arguments.as_object().cloned(),
            None,
            Cancel::new(),
            asker,
        )
        .await
        .unwrap_or_else(|e| panic!("call {tool}: {e}"))
}
