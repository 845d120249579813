//! `rho mcp serve` driven by two more clients no one here wrote, run as their users run them:
//! the MCP Inspector's CLI mode (`mcp-inspector --cli`, which lists and calls tools) and Claude
//! Code (`claude mcp add`, then `claude mcp list`, which starts each server, does the MCP
//! handshake and reports it connected). Both are pinned in `tests/peers/package.json`.

use std::io::{Read, Seek};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use rho_e2e::*;
use serde_json::Value;

const FAKE: &str = env!("CARGO_BIN_EXE_fake-mcp");
const ECHO: &str = "mcp__echoer__echo";
/// How long one client command may take (each takes well under a second here).
const LIMIT: Duration = Duration::from_secs(60);

/// A sandbox with `fake-mcp --mode ok` as server `echoer`.
fn echo_sandbox() -> Sandbox {
    let sandbox = Sandbox::new();
    sandbox.write_config(&format!(
        "[mcp.servers.echoer]\ncommand = {FAKE:?}\nargs = [\"--mode\", \"ok\"]\n"
    ));
    sandbox
}

/// What a client printed.
struct Printed {
    stdout: String,
    stderr: String,
}

/// Runs `command` (stdin closed, in the project, its own process group) for at most [`LIMIT`]
/// and kills its process group afterwards, so a server it started and left behind goes too.
/// Panics with what it printed unless it exits 0 in time.
fn run(what: &str, command: &mut Command) -> Printed {
    let mut stdout = tempfile::tempfile().unwrap();
    let mut stderr = tempfile::tempfile().unwrap();
    let mut child = command
        .stdin(Stdio::null())
        .stdout(stdout.try_clone().unwrap())
        .stderr(stderr.try_clone().unwrap())
        .process_group(0)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
    let deadline = Instant::now() + LIMIT;
    let status: Option<ExitStatus> = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if Instant::now() > deadline {
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    if let Some(group) = i32::try_from(child.id())
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
    }
    let _ = child.wait();
    let read = |file: &mut std::fs::File| {
        let mut text = String::new();
        file.rewind().unwrap();
        file.read_to_string(&mut text).unwrap();
        text
    };
    let printed = Printed {
        stdout: read(&mut stdout),
        stderr: read(&mut stderr),
    };
    match status {
        Some(status) if status.success() => printed,
        Some(status) => panic!(
            "{what} failed ({status})\n--- stdout\n{}\n--- stderr\n{}",
            printed.stdout, printed.stderr
        ),
        None => panic!(
            "{what} did not finish within {LIMIT:?}\n--- stdout\n{}\n--- stderr\n{}",
            printed.stdout, printed.stderr
        ),
    }
}

/// A command for a client in the sandbox: in the project, with only `PATH` (`path_first`
/// before the usual one), `HOME` and `RHO_HOME` set.
fn client(sandbox: &Sandbox, program: &Path, path_first: &[&Path]) -> Command {
    let mut path: Vec<PathBuf> = path_first.iter().map(|p| p.to_path_buf()).collect();
    path.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    let mut command = Command::new(program);
    command
        .current_dir(&sandbox.project)
        .env_clear()
        .env("PATH", std::env::join_paths(path).unwrap())
        .env("HOME", &sandbox.home)
        .env("RHO_HOME", &sandbox.rho_home);
    command
}

/// Runs the Inspector's CLI mode with `args` against `rho --cwd <project> mcp serve`, and
/// returns the JSON it prints. It runs on the Node 22 of `tests/conformance` (the Inspector
/// 2.x wants Node 22.19 or later; the system's may be older).
fn inspector(sandbox: &Sandbox, args: &[&str]) -> Value {
    let node = oauth::node22();
    let mut command = client(sandbox, &node, &[node.parent().unwrap()]);
    command
        .arg(peer_bin("mcp-inspector"))
        .arg("--cli")
        .args(args)
        // The Inspector starts a stdio server with a minimal environment of its own: rho's
        // home is passed as a user passes it.
        .arg("-e")
        .arg(format!("RHO_HOME={}", sandbox.rho_home.display()))
        .arg("--")
        .arg(rho_bin())
        .arg("--cwd")
        .arg(&sandbox.project)
        .args(["mcp", "serve"]);
    let printed = run(
        &format!("mcp-inspector --cli {}", args.join(" ")),
        &mut command,
    );
    serde_json::from_str(&printed.stdout).unwrap_or_else(|e| {
        panic!(
            "the Inspector printed no JSON ({e})\n--- stdout\n{}\n--- stderr\n{}",
            printed.stdout, printed.stderr
        )
    })
}

#[test]
fn the_inspector_cli_lists_and_calls_tools_through_the_gateway() {
    let sandbox = echo_sandbox();
    let listed = inspector(&sandbox, &["--method", "tools/list"]);
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools: {listed:#}"))
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, [ECHO], "{listed:#}");
    assert_eq!(
        listed["tools"][0]["annotations"]["destructiveHint"], true,
        "{listed:#}"
    );
    // `--tool-arg` values are JSON when they parse as JSON: the number arrives as a number.
    let called = inspector(
        &sandbox,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            ECHO,
            "--tool-arg",
            "text=hi",
            "count=3",
        ],
    );
    // Passed on as the server sent it: no `isError` (false).
    assert_ne!(called["isError"], true, "{called:#}");
    assert_eq!(
        called["content"],
        serde_json::json!([{"type": "text", "text": "called echo with {\"count\":3,\"text\":\"hi\"}"}]),
        "{called:#}"
    );
}

/// `claude <args>` in the sandbox (its settings in the sandbox's home), told to make no
/// connection but to its MCP servers: no telemetry, error reports, update checks or other
/// nonessential traffic (with these set, `claude mcp add` and `claude mcp list` connect to
/// nothing but their servers' pipes; without them they look names up in DNS).
fn claude(sandbox: &Sandbox, args: &[&str]) -> Printed {
    let mut command = client(sandbox, &peer_bin("claude"), &[]);
    command
        .args(args)
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("DISABLE_ERROR_REPORTING", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
    run(&format!("claude {}", args.join(" ")), &mut command)
}

#[test]
fn claude_code_adds_the_gateway_and_reports_it_connected() {
    let sandbox = echo_sandbox();
    let rho = rho_bin();
    let rho = rho.to_str().unwrap();
    let project = sandbox.project.to_str().unwrap();
    // As docs/mcp.md tells a user to add it (the default scope: this project, for this user).
    claude(
        &sandbox,
        &[
            "mcp", "add", "rho", "--", rho, "--cwd", project, "mcp", "serve",
        ],
    );
    // `claude mcp list` starts every server it lists, does the handshake and lists its tools,
    // and prints one line per server.
    let listed = claude(&sandbox, &["mcp", "list"]);
    let expected = format!("rho: {rho} --cwd {project} mcp serve - ✔ Connected");
    assert!(
        listed.stdout.lines().any(|line| line == expected),
        "no line {expected:?}\n--- stdout\n{}\n--- stderr\n{}",
        listed.stdout,
        listed.stderr
    );
}
