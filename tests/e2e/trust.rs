//! Project plugins start their MCP servers only once trusted, and only with the launch spec
//! that was trusted (adversarial catalogue J1, J2; H21 in headless mode).

use std::path::{Path, PathBuf};

use rho_e2e::{Sandbox, make_fifo, make_mcp, make_plugin, mcp_server, write, write_script};
use serde_json::Value;

const FAKE: &str = env!("CARGO_BIN_EXE_fake-mcp");

/// A project plugin `pp` whose server is `./bin/server`: a script that records that it ran,
/// then becomes `fake-mcp`.
fn project_plugin(sb: &Sandbox) -> (PathBuf, PathBuf) {
    let dir = sb.project_plugins().join("pp");
    make_plugin(&dir, "pp");
    let marker = sb.outside("marks").join("started");
    write_script(
        &dir.join("bin/server"),
        &format!(
            "#!/bin/sh\necho started >> '{}'\nexec '{FAKE}' --mode ok\n",
            marker.display()
        ),
    );
    make_mcp(
        &dir,
        r#"{"srv": {"type": "stdio", "command": "./bin/server"}}"#,
    );
    (dir, marker)
}

/// A plugin `name` at `dir` whose one server, `srv`, is `./bin/server`: a script that becomes
/// `fake-mcp`.
fn fake_server_plugin(dir: &Path, name: &str) {
    make_plugin(dir, name);
    write_script(
        &dir.join("bin/server"),
        &format!("#!/bin/sh\nexec '{FAKE}' --mode ok\n"),
    );
    make_mcp(
        dir,
        r#"{"srv": {"type": "stdio", "command": "./bin/server"}}"#,
    );
}

fn status(sb: &Sandbox) -> Value {
    let list = sb.rho(&["mcp", "list", "--connect", "--json"]).ok().json();
    mcp_server(&list, "pp/srv").clone()
}

fn trust_state(sb: &Sandbox) -> String {
    sb.rho(&["plugins", "inspect", "pp", "--json"]).ok().json()["trust"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn started(marker: &Path) -> usize {
    std::fs::read_to_string(marker).map_or(0, |t| t.lines().count())
}

#[test]
fn an_untrusted_project_plugin_never_starts_its_servers() {
    let sb = Sandbox::new();
    let (_, marker) = project_plugin(&sb);
    let server = status(&sb);
    assert_eq!(server["status"], "untrusted", "{server:#}");
    assert!(
        server["error"]
            .as_str()
            .unwrap()
            .contains("rho plugins trust pp"),
        "{server:#}"
    );
    let tools = sb.rho(&["tools", "list", "--json"]).ok().json();
    assert_eq!(tools["servers"][0]["status"], "untrusted", "{tools:#}");
    let run = sb.rho(&["tools", "call", "mcp__x__y", "{}"]);
    assert_eq!(run.code, 1);
    let call = sb.rho(&["mcp", "call", "pp/srv", "echo"]);
    assert_eq!(call.code, 1);
    assert!(call.stderr.contains("untrusted"), "{}", call.stderr);
    assert_eq!(started(&marker), 0, "an untrusted server was started");
    assert_eq!(trust_state(&sb), "untrusted");
    // Skills and the listing are unaffected: only starting processes needs trust.
    let plugins = sb.plugins();
    assert_eq!(plugins[0]["status"], "loaded");
}

#[test]
fn trust_is_bound_to_the_launch_spec() {
    let sb = Sandbox::new();
    let (dir, marker) = project_plugin(&sb);
    let trusted = sb.rho(&["plugins", "trust", "pp", "--json"]).ok().json();
    assert_eq!(trusted["trusted"], true);
    assert!(
        trusted["fingerprint"]
            .as_str()
            .unwrap()
            .starts_with("sha256:")
    );
    assert_eq!(trust_state(&sb), "trusted");
    assert_eq!(status(&sb)["status"], "started");
    assert_eq!(started(&marker), 1);

    // Any change to mcp.json withdraws trust.
    make_mcp(
        &dir,
        r#"{"srv": {"type": "stdio", "command": "./bin/server", "args": ["--extra"]}}"#,
    );
    assert_eq!(trust_state(&sb), "changed");
    let server = status(&sb);
    assert_eq!(server["status"], "untrusted");
    assert!(server["error"].as_str().unwrap().contains("changed since"));
    assert_eq!(started(&marker), 1);

    // Trusting again, then replacing the executable, withdraws it too.
    sb.rho(&["plugins", "trust", "pp"]).ok();
    assert_eq!(status(&sb)["status"], "started");
    assert_eq!(started(&marker), 2);
    let script = std::fs::read_to_string(dir.join("bin/server")).unwrap();
    write_script(
        &dir.join("bin/server"),
        &script.replace("started", "started-again"),
    );
    assert_eq!(trust_state(&sb), "changed");
    assert_eq!(status(&sb)["status"], "untrusted");
    assert_eq!(started(&marker), 2);

    // Untrust forgets the record.
    sb.rho(&["plugins", "trust", "pp"]).ok();
    let untrusted = sb.rho(&["plugins", "untrust", "pp", "--json"]).ok().json();
    assert_eq!(untrusted["changed"], true);
    assert_eq!(trust_state(&sb), "untrusted");
    let store = std::fs::read_to_string(sb.rho_home.join("trusted-plugins.toml")).unwrap();
    assert!(!store.contains("pp"), "{store}");
}

#[test]
fn user_plugins_need_no_trust() {
    let sb = Sandbox::new();
    let dir = sb.user_plugins().join("up");
    fake_server_plugin(&dir, "up");
    let list = sb.rho(&["mcp", "list", "--connect", "--json"]).ok().json();
    assert_eq!(mcp_server(&list, "up/srv")["status"], "started");
    let run = sb.rho(&["plugins", "trust", "up"]);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("need no trust"), "{}", run.stderr);
    let inspect = sb.rho(&["plugins", "inspect", "up", "--json"]).ok().json();
    assert_eq!(inspect["trust"], "not-needed");
}

#[test]
fn a_corrupt_trust_store_trusts_nothing_and_says_so() {
    let sb = Sandbox::new();
    let (_, marker) = project_plugin(&sb);
    sb.rho(&["plugins", "trust", "pp"]).ok();
    write(
        &sb.rho_home.join("trusted-plugins.toml"),
        "this is = not [valid",
    );
    let tools = sb.rho(&["tools", "list", "--json"]).ok().json();
    assert_eq!(tools["servers"][0]["status"], "untrusted", "{tools:#}");
    assert_eq!(started(&marker), 0);
    let doctor = sb.rho(&["doctor", "--json", "--no-connect"]).json();
    let text = doctor.to_string();
    assert!(text.contains("trusted-plugins.toml"), "{doctor:#}");
}

/// A trust store that is a FIFO is refused at once, never opened (opening it would wait for a
/// writer and hang every command): nothing is trusted, and trusting says why.
#[test]
fn a_trust_store_that_is_a_fifo_is_refused_without_waiting() {
    let sb = Sandbox::new();
    let (_, marker) = project_plugin(&sb);
    make_fifo(&sb.rho_home.join("trusted-plugins.toml"));
    let tools = sb.rho(&["tools", "list", "--json"]).ok().json();
    assert_eq!(tools["servers"][0]["status"], "untrusted", "{tools:#}");
    let run = sb.rho(&["plugins", "trust", "pp"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("trusted-plugins.toml") && run.stderr.contains("not a regular file"),
        "{}",
        run.stderr
    );
    assert_eq!(started(&marker), 0);
}

/// A project whose path is not UTF-8 can trust its plugins: the trust record keeps the
/// plugin root as its bytes (serde refuses it as text, which used to make `plugins trust` fail
/// there, so such a project's servers could never start), and reads back as the same root.
#[test]
fn a_plugin_in_a_project_whose_path_is_not_utf8_can_be_trusted() {
    use std::os::unix::ffi::OsStrExt;

    let sb = Sandbox::new();
    let project = sb
        .outside("projects")
        .join(std::ffi::OsStr::from_bytes(b"w\xe9rk"));
    let dir = project.join(".agents/plugins/pp");
    fake_server_plugin(&dir, "pp");
    let trust = |args: &[&str]| sb.rho_in(&project, args).ok();
    let before = trust(&["plugins", "inspect", "pp", "--json"]).json();
    assert_eq!(before["trust"], "untrusted", "{before:#}");
    let trusted = trust(&["plugins", "trust", "pp", "--json"]).json();
    assert_eq!(trusted["trusted"], true, "{trusted:#}");
    let after = trust(&["plugins", "inspect", "pp", "--json"]).json();
    assert_eq!(after["trust"], "trusted", "{after:#}");
    let list = trust(&["mcp", "list", "--connect", "--json"]).json();
    assert_eq!(mcp_server(&list, "pp/srv")["status"], "started", "{list:#}");
}
