//! `rho mcp list/show` through the real binary: config.toml and plugin servers, strict config
//! errors, the guarantee that listing without `--connect` starts and contacts nothing, and
//! `--connect` progress on a terminal (under `script`, a real pty) that scripts never see.

use std::net::TcpListener;
use std::time::Duration;

use rho_e2e::*;
use serde_json::Value;

#[test]
fn lists_config_and_plugin_servers_without_starting_anything() {
    let sb = Sandbox::new();
    let marker = sb.outside("marker").join("started");
    let script = sb.outside("bin").join("fake-server");
    write_script(
        &script,
        &format!("#!/bin/sh\ntouch {}\nsleep 5\n", marker.display()),
    );
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    write(
        &sb.rho_home.join("config.toml"),
        format!(
            r#"
[mcp.servers.local]
command = "{}"
env_from_env = {{ TOKEN = "RHO_TEST_CANARY_TOKEN" }}

[mcp.servers.remote]
url = "http://127.0.0.1:{port}/mcp"
headers = {{ X-Secret = "canary-header-value" }}

[mcp.servers.off]
command = "npx"
enabled = false

[mcp.servers.broken]
command = "npx"
timeout = 3
"#,
            script.display()
        ),
    );
    let plugin = sb.user_plugins().join("pl");
    make_plugin(&plugin, "pl");
    make_mcp(
        &plugin,
        r#"{"srv":{"type":"stdio","command":"npx","args":["-y","pkg"]},"old":{"type":"sse","url":"https://h/sse"}}"#,
    );

    let run = sb.rho(&["mcp", "list", "--json"]).ok();
    std::thread::sleep(Duration::from_millis(200));
    assert!(!marker.exists(), "a server process was started");
    assert!(
        listener.accept().is_err(),
        "something connected to the HTTP server"
    );
    assert!(
        !run.stdout.contains("canary-header-value")
            && !run.stdout.contains("RHO_TEST_CANARY_TOKEN")
    );
    let list = run.json();
    let local = mcp_server(&list, "local");
    assert_eq!(local["source"], "config");
    assert_eq!(local["transport"], "stdio");
    assert_eq!(local["status"], "configured");
    assert_eq!(local["enabled"], true);
    assert_eq!(local["plugin"], Value::Null);
    assert_eq!(local["tools"], serde_json::json!([]));
    assert_eq!(mcp_server(&list, "remote")["transport"], "streamable_http");
    assert_eq!(mcp_server(&list, "off")["status"], "disabled");
    let broken = mcp_server(&list, "broken");
    assert_eq!(broken["status"], "failed");
    assert!(
        broken["error"]
            .as_str()
            .unwrap()
            .contains("mcp.servers.broken"),
        "{broken}"
    );
    assert!(
        broken["defined_in"]
            .as_str()
            .unwrap()
            .ends_with("config.toml:14"),
        "{broken}"
    );
    let srv = mcp_server(&list, "pl/srv");
    assert_eq!(srv["source"], "plugin");
    assert_eq!(srv["plugin"], "pl");
    assert_eq!(mcp_server(&list, "pl/old")["status"], "failed");

    let human = sb.rho(&["mcp", "list"]).ok().stdout;
    assert!(
        human.starts_with("ID") && human.contains("pl/srv"),
        "{human}"
    );
    let shown = sb.rho(&["mcp", "show", "pl/srv", "--json"]).ok().json();
    assert_eq!(shown["target"], "npx -y pkg");
    assert!(
        sb.rho(&["mcp", "show", "nope"])
            .code(1)
            .stderr
            .contains("no MCP server")
    );
    assert!(!marker.exists());
}

#[test]
fn explicit_config_replaces_the_default_and_must_exist() {
    let sb = Sandbox::new();
    write(
        &sb.rho_home.join("config.toml"),
        "[mcp.servers.from_default]\ncommand = \"npx\"\n",
    );
    let other = sb.project.join(".rho/config.toml");
    write(&other, "[mcp.servers.from_project]\ncommand = \"npx\"\n");
    let list = sb
        .rho(&["--config", ".rho/config.toml", "mcp", "list", "--json"])
        .ok()
        .json();
    let ids: Vec<&str> = list["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["from_project"], "no merge");
    let run = sb.rho(&["--config", "missing.toml", "mcp", "list"]).code(1);
    assert!(run.stderr.contains("missing.toml"), "{}", run.stderr);
}

#[test]
fn config_syntax_and_unknown_sections_are_fatal_with_file_and_line() {
    let sb = Sandbox::new();
    write(
        &sb.rho_home.join("config.toml"),
        "[mcp.servers.a]\ncommand = \"npx\"\n\n[mcpp]\nx = \"secret-ish\"\n",
    );
    let run = sb.rho(&["mcp", "list"]).code(1);
    assert!(
        run.stderr.contains("config.toml")
            && run.stderr.contains("mcpp")
            && run.stderr.contains("line 4"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("secret-ish"));
    write(&sb.rho_home.join("config.toml"), "[mcp.servers.a\n");
    let run = sb.rho(&["mcp", "list"]).code(1);
    assert!(run.stderr.contains("line 1"), "{}", run.stderr);
}

/// A broken `config.toml` fails every command that reads it the same way: the same error on
/// stderr, exit 1 and nothing on stdout; `rho doctor` reports it as its failed config row.
#[test]
fn a_broken_config_fails_every_command_that_reads_it_alike() {
    let sb = Sandbox::new();
    write(&sb.rho_home.join("config.toml"), "[mcp.servers.a\n");
    let expected = sb.rho(&["mcp", "list"]).code(1);
    assert!(expected.stderr.contains("line 1"), "{}", expected.stderr);
    for args in [
        &["mcp", "list", "--json"][..],
        &["mcp", "show", "a"],
        &["tools", "list"],
        &["tools", "list", "--json"],
        &["tools", "call", "read_file", "{\"path\": \"x\"}"],
        &["rpc", "--ephemeral"],
    ] {
        let run = sb.rho(args).code(1);
        assert_eq!(run.stdout, "", "{args:?} printed output");
        assert_eq!(run.stderr, expected.stderr, "{args:?}");
    }
    let doctor = sb.rho(&["doctor", "--json"]).code(1).json();
    let config = doctor["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == "config")
        .unwrap()
        .clone();
    assert_eq!(config["status"], "error", "{doctor:#}");
}

#[test]
fn empty_configuration_lists_nothing() {
    let sb = Sandbox::new();
    assert_eq!(
        sb.rho(&["mcp", "list"]).ok().stdout,
        "no MCP servers configured\n"
    );
    assert_eq!(
        sb.rho(&["mcp", "list", "--json"]).ok().json(),
        serde_json::json!({"servers": []})
    );
}

const FAKE: &str = env!("CARGO_BIN_EXE_fake-mcp");

/// A config with a server that answers at once, one that never answers the handshake (within
/// `budget` seconds), and one whose failure message carries terminal escape sequences.
fn fast_hung_and_evil(sb: &Sandbox, budget: u32) {
    sb.write_config(&format!(
        r#"
[mcp.servers.fast]
command = {FAKE:?}

[mcp.servers.hung]
command = {FAKE:?}
args = ["--mode", "never-answer"]
startup_timeout_sec = {budget}

[mcp.servers.evil]
command = "/nonexistent/\u001b]0;pwned\u0007\u001b[31mred"
"#
    ));
}

/// Single-quoted for `sh`.
fn sh_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// Runs rho like [`Sandbox::rho`] but with stderr on a real terminal: under `script` (a pty),
/// with stdout sent to a file. Returns what the terminal showed (stderr), stdout, exit code.
fn rho_on_terminal(sb: &Sandbox, args: &[&str]) -> (String, String, i32) {
    let stdout_file = sb.outside("terminal").join("stdout");
    let mut words = vec![
        sh_quote(&rho_bin().to_string_lossy()),
        "--cwd".into(),
        sh_quote(&sb.project.to_string_lossy()),
    ];
    words.extend(args.iter().map(|a| sh_quote(a)));
    let line = format!(
        "{} > {}",
        words.join(" "),
        sh_quote(&stdout_file.to_string_lossy())
    );
    let output = std::process::Command::new("script")
        .args([
            "--quiet",
            "--return",
            "--flush",
            "--command",
            &line,
            "/dev/null",
        ])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &sb.home)
        .env("RHO_HOME", &sb.rho_home)
        .env("SHELL", "/bin/sh")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run `script` ({e}): it gives rho a terminal; install util-linux")
        });
    let terminal = String::from_utf8_lossy(&output.stdout).replace("\r\n", "\n");
    let stdout = std::fs::read_to_string(&stdout_file).unwrap();
    (terminal, stdout, output.status.code().unwrap_or(-1))
}

/// The line of `terminal` that starts with `prefix`, and its position among the lines.
fn terminal_line<'a>(terminal: &'a str, prefix: &str) -> (usize, &'a str) {
    terminal
        .lines()
        .enumerate()
        .find(|(_, l)| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no line starting with {prefix:?} in:\n{terminal}"))
}

#[test]
fn connect_on_a_terminal_reports_each_server_as_it_answers() {
    let sb = Sandbox::new();
    fast_hung_and_evil(&sb, 6);
    // The same listing without a terminal, at the same time (each waits out the hung server).
    let (piped, (terminal, stdout, code)) = std::thread::scope(|scope| {
        let piped = scope.spawn(|| sb.rho(&["mcp", "list", "--connect"]));
        let terminal = rho_on_terminal(&sb, &["mcp", "list", "--connect"]);
        (piped.join().unwrap(), terminal)
    });
    assert_eq!(code, 0, "{terminal}");
    assert!(
        terminal.starts_with("connecting 3 MCP servers…\n"),
        "{terminal}"
    );
    // Each result is shown when it arrives: the quick ones long before the hung one's budget
    // runs out, and meanwhile the hung one is named as pending.
    let (fast, _) = terminal_line(&terminal, "  fast ✓ 1 tool (");
    let (evil, evil_line) = terminal_line(&terminal, "  evil ✗ cannot start /nonexistent/");
    let (waiting, _) = terminal_line(&terminal, "  waiting for hung (");
    let (hung, _) = terminal_line(
        &terminal,
        "  hung ✗ no answer within the 6.0 s startup budget (6.",
    );
    assert!(
        fast < waiting && evil < waiting && waiting < hung,
        "{terminal}"
    );
    // Text from the configuration or a server cannot drive the terminal.
    assert!(
        evil_line.contains(r"\u{1b}]0;pwned\u{7}\u{1b}[31mred"),
        "{evil_line}"
    );
    assert!(
        !terminal.contains('\u{7}')
            && !terminal.contains("\u{1b}]0;")
            && !terminal.contains("\u{1b}[31m"),
        "{terminal:?}"
    );

    // stdout carries the same table as without a terminal; without one, stderr stays quiet.
    let piped = piped.ok();
    assert_eq!(stdout, piped.stdout);
    assert!(stdout.starts_with("ID "), "{stdout}");
    for quiet in ["connecting", "✓", "✗", "waiting for"] {
        assert!(!piped.stderr.contains(quiet), "{}", piped.stderr);
    }
}

#[test]
fn connect_with_json_shows_no_progress_even_on_a_terminal() {
    let sb = Sandbox::new();
    fast_hung_and_evil(&sb, 1);
    let (terminal, stdout, code) = rho_on_terminal(&sb, &["--json", "mcp", "list", "--connect"]);
    assert_eq!(code, 0, "{terminal}");
    let list: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(mcp_server(&list, "fast")["status"], "started");
    assert_eq!(mcp_server(&list, "hung")["status"], "failed");
    let piped = sb.rho(&["--json", "mcp", "list", "--connect"]).ok();
    for stderr in [&terminal, &piped.stderr] {
        for quiet in ["connecting", "✓", "✗", "waiting for"] {
            assert!(!stderr.contains(quiet), "{stderr}");
        }
    }
}

/// `rho --config <path> mcp list`, which must exit within 10 s (else it is killed and the test
/// fails).
fn mcp_list_with_config(sb: &Sandbox, config: &std::path::Path) -> Run {
    let mut child = std::process::Command::new(rho_bin())
        .arg("--cwd")
        .arg(&sb.project)
        .arg("--config")
        .arg(config)
        .args(["mcp", "list"])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &sb.home)
        .env("RHO_HOME", &sb.rho_home)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("rho --config {} mcp list hung", config.display());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let output = child.wait_with_output().unwrap();
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

#[test]
fn a_config_that_is_a_fifo_a_device_or_huge_is_refused_naming_it() {
    let sb = Sandbox::new();
    let files = HostileFiles::make(&sb.project, "toml");
    for (path, problem) in files.refusals() {
        let run = mcp_list_with_config(&sb, path).code(1);
        assert!(
            run.stderr
                .contains(&format!("cannot read {}: {problem}", path.display())),
            "{}",
            run.stderr
        );
    }
    // The default config.toml is held to the same rules.
    symlink("/dev/zero", sb.rho_home.join("config.toml"));
    let run = sb.rho(&["mcp", "list"]).code(1);
    assert!(
        run.stderr.contains("config.toml: a character device"),
        "{}",
        run.stderr
    );
}
