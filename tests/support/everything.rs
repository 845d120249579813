//! The one owner of the reference MCP server the tests run against,
//! `@modelcontextprotocol/server-everything` (npm, pinned in `tests/peers`): where its launcher
//! is, the `config.toml` and `mcp.json` forms that run it over stdio, a shell line for wrapper
//! scripts, and a Streamable HTTP instance on a port, stopped when dropped.

use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::{KillOnDrop, Sandbox, peer_bin, wait_for_port};

/// The launcher's file name, as `mcp.json` names it when its directory is on `PATH`.
pub const BIN: &str = "mcp-server-everything";

/// The installed launcher (`tests/peers/node_modules/.bin/mcp-server-everything`); panics,
/// saying how to install the peers, when it is missing.
pub fn path() -> PathBuf {
    peer_bin(BIN)
}

/// [`path`] as a string, for command lines and config text.
pub fn command() -> String {
    path().to_string_lossy().into_owned()
}

/// The directory holding the launcher (to put on `PATH` for a bare [`BIN`]).
pub fn bin_dir() -> PathBuf {
    path().parent().unwrap().to_path_buf()
}

/// A shell command line that starts the server over stdio (the quoted launcher, then `stdio`),
/// for wrapper scripts to `exec`, with more arguments appended by the caller.
pub fn stdio_shell() -> String {
    format!("{:?} stdio", command())
}

/// The `[mcp.servers.<id>]` table of `config.toml` that runs the server over stdio, with
/// `extra` lines (each ending in a newline) appended to the table.
pub fn stdio_table(id: &str, extra: &str) -> String {
    stdio_table_args(id, &[], extra)
}

/// [`stdio_table`] with `args` after `stdio` on the server's command line (such as a marker
/// that finds its process).
pub fn stdio_table_args(id: &str, args: &[&str], extra: &str) -> String {
    let args: Vec<&str> = ["stdio"].iter().chain(args).copied().collect();
    format!(
        "[mcp.servers.{id}]\ncommand = {}\nargs = {}\n{extra}",
        json!(command()),
        json!(args)
    )
}

/// A sandbox whose `config.toml` lets every tool run without asking and runs the server as
/// `everything`, with `extra` lines in its table.
pub fn allow_all_sandbox(extra: &str) -> Sandbox {
    let sandbox = Sandbox::new();
    sandbox.write_config(&format!(
        "[agent]\npermission_mode = \"allow-all\"\n\n{}",
        stdio_table("everything", extra)
    ));
    sandbox
}

/// An `mcpServers` entry of `mcp.json` that runs `command` (the launcher's path, or [`BIN`]
/// when its directory is on `PATH`) over stdio; add fields such as `env` to it.
pub fn mcp_json_entry(command: &str) -> Value {
    json!({"type": "stdio", "command": command, "args": ["stdio"]})
}

/// Starts the server over Streamable HTTP on `127.0.0.1:port` (its endpoint is [`http_url`])
/// and waits until it listens; the process is killed when the returned value is dropped.
pub fn start_http(port: u16) -> KillOnDrop {
    let child = Command::new(path())
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let server = KillOnDrop(child);
    wait_for_port(port, 15, "server-everything");
    server
}

/// The Streamable HTTP endpoint of a server started by [`start_http`] on `port`.
pub fn http_url(port: u16) -> String {
    format!("http://127.0.0.1:{port}/mcp")
}
