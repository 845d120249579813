//! Servers at scale (adversarial catalogue §D): a server listing 100,000 tools is held to its
//! startup budget and to the per-server caps, and 2,000 configured servers all start under a
//! low soft open-file limit (starts are bounded, the limit raised towards the hard one).

use std::process::Command;
use std::time::{Duration, Instant};

use rho_e2e::*;
use serde_json::Value;

const FAKE: &str = env!("CARGO_BIN_EXE_fake-mcp");

fn many(id: &str, mode: &str, count: usize, extra: &str) -> String {
    format!(
        "[mcp.servers.{id}]\ncommand = {FAKE:?}\nargs = [\"--mode\", {mode:?}, \"--count\", \"{count}\"]\n{extra}\n"
    )
}

fn diagnostics_of<'a>(list: &'a Value, code: &str) -> Vec<&'a Value> {
    list["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == code)
        .collect()
}

#[test]
fn a_server_listing_100k_tools_is_capped_within_its_startup_budget() {
    let sb = Sandbox::new();
    sb.write_config(&many(
        "huge",
        "many-tools",
        100_000,
        "startup_timeout_sec = 2",
    ));
    let started = Instant::now();
    let list = sb.rho(&["tools", "list", "--json"]).ok().json();
    let elapsed = started.elapsed();
    assert!(
        elapsed < Duration::from_secs(4),
        "the 2 s startup budget held (took {elapsed:?})"
    );
    let server = mcp_server(&list, "huge");
    match server["status"].as_str().unwrap() {
        "started" => {
            let tools = list["tools"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|t| t["server"] == "huge")
                .count();
            assert_eq!(tools, rho_mcp::MAX_SERVER_TOOLS, "capped");
            let capped = diagnostics_of(&list, "mcp-tools-capped");
            assert_eq!(capped.len(), 1, "{:#}", list["diagnostics"]);
            assert_eq!(capped[0]["severity"], "warning");
            assert_eq!(capped[0]["component"], "huge");
            let message = capped[0]["message"].as_str().unwrap();
            assert!(
                message.contains("`huge`") && message.contains(": 99000 are left out"),
                "names the server and how many were left out: {message}"
            );
        }
        "failed" => {
            let error = server["error"].as_str().unwrap();
            assert!(
                error.contains("huge") && error.contains("2.0 s startup budget"),
                "failed by its timeout: {error}"
            );
        }
        other => panic!("unexpected status {other}: {server:#}"),
    }
}

#[test]
fn prompts_and_resources_beyond_the_caps_are_not_offered() {
    let sb = Sandbox::new();
    let count = rho_mcp::MAX_SERVER_RESOURCES + 500;
    sb.write_config(&many(
        "offers",
        "many-offers",
        count,
        "startup_timeout_sec = 20",
    ));
    let shown = sb
        .rho(&["mcp", "show", "offers", "--connect", "--json"])
        .ok();
    let json = shown.json();
    assert_eq!(json["status"], "started", "{}", shown.stderr);
    let prompts = json["prompts"].as_array().unwrap();
    assert_eq!(prompts.len(), rho_mcp::MAX_SERVER_PROMPTS);
    assert_eq!(prompts[0]["name"], "t0", "the first ones are kept");
    let resources = json["resources"].as_array().unwrap();
    assert_eq!(resources.len(), rho_mcp::MAX_SERVER_RESOURCES);
    assert!(
        resources.iter().all(|r| r["template"] == false),
        "resources first"
    );
    let left_out = count - rho_mcp::MAX_SERVER_PROMPTS;
    assert!(
        shown.stderr.contains(&format!(
            "more prompts than the 1000 rho keeps from one server: {left_out} are not offered"
        )),
        "{}",
        shown.stderr
    );
    let left_out = 500 + count;
    assert!(
        shown.stderr.contains(&format!(
            "more resources than the 10000 rho keeps from one server: {left_out} are not offered"
        )),
        "{}",
        shown.stderr
    );
}

#[test]
fn two_thousand_servers_start_under_a_low_soft_open_file_limit() {
    const SERVERS: usize = 2_000;
    const SOFT: u64 = 256;
    let hard = rustix::process::getrlimit(rustix::process::Resource::Nofile).maximum;
    assert!(
        hard.is_none_or(|hard| hard >= 4 * SERVERS as u64),
        "this test needs a hard open-file limit of at least {} (it is {hard:?})",
        4 * SERVERS
    );
    let sb = Sandbox::new();
    let config: String = (0..SERVERS)
        .map(|n| {
            format!("[mcp.servers.s{n:04}]\ncommand = {FAKE:?}\nargs = [\"--mode\", \"ok\"]\n")
        })
        .collect();
    sb.write_config(&config);
    let started = Instant::now();
    // Only the soft limit is lowered: rho raises it again, up to the hard one.
    let output = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -S -n {SOFT} && exec \"$0\" \"$@\""))
        .arg(rho_bin())
        .arg("--cwd")
        .arg(&sb.project)
        .args(["tools", "list", "--json"])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &sb.home)
        .env("RHO_HOME", &sb.rho_home)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let elapsed = started.elapsed();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let list: Value = serde_json::from_str(&stdout).unwrap();
    let servers = list["servers"].as_array().unwrap();
    assert_eq!(servers.len(), SERVERS);
    let failed: Vec<&Value> = servers
        .iter()
        .filter(|s| s["status"] != "started")
        .collect();
    assert!(
        failed.is_empty(),
        "{} of {SERVERS} did not connect, e.g. {:#}",
        failed.len(),
        failed[0]
    );
    assert!(!stderr.contains("Too many open files"), "{stderr}");
    assert!(
        elapsed < Duration::from_secs(30),
        "all started in {elapsed:?}"
    );
}
