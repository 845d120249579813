//! The MCP runtime against real servers: the reference `server-everything` (npm, pinned) over
//! stdio and Streamable HTTP, plus small misbehaving commands, through the real binary.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rho_e2e::*;
use serde_json::Value;

#[test]
fn stdio_connect_lists_tools_with_exported_names_and_instructions() {
    let sb = Sandbox::new();
    sb.write_config(&format!(
        "{}\n{}",
        everything::stdio_table("everything", ""),
        everything::stdio_table(
            "narrow",
            "tools = { allow = [\"echo\", \"get-sum\"], deny = [\"get-sum\"] }\n"
        )
    ));
    let list = sb.rho(&["mcp", "list", "--connect", "--json"]).ok().json();
    let e = mcp_server(&list, "everything");
    assert_eq!(e["status"], "started", "{e:#}");
    assert_eq!(
        e["protocol_version"], "2025-11-25",
        "legacy era negotiated automatically"
    );
    assert_eq!(e["server_info"]["name"], "mcp-servers/everything");
    assert!(e["instructions"].as_str().unwrap().contains("Everything"));
    let tools = e["tools"].as_array().unwrap();
    let echo = tools.iter().find(|t| t["name"] == "echo").unwrap();
    assert_eq!(echo["exported_name"], "mcp__everything__echo");
    assert_eq!(echo["title"], "Echo Tool");
    let sum = tools.iter().find(|t| t["name"] == "get-sum").unwrap();
    assert_eq!(sum["exported_name"], "mcp__everything___rho_6765742d73756d");
    for t in tools {
        let name = t["exported_name"].as_str().unwrap();
        assert!(
            name.len() <= 64
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'),
            "{name}"
        );
    }
    let narrow: Vec<&str> = mcp_server(&list, "narrow")["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(narrow, ["echo"], "allow list applied, deny wins");
}

#[test]
fn call_renders_text_structured_content_images_and_progress() {
    let sb = Sandbox::new();
    sb.write_config(&everything::stdio_table("everything", ""));
    let run = sb
        .rho(&[
            "mcp",
            "call",
            "everything",
            "echo",
            r#"{"message":"hello rho"}"#,
        ])
        .ok();
    assert_eq!(run.stdout, "Echo: hello rho\n");
    let run = sb
        .rho(&[
            "mcp",
            "call",
            "everything",
            "mcp__everything___rho_6765742d73756d",
            r#"{"a":2,"b":40}"#,
        ])
        .ok();
    assert!(run.stdout.contains("42"), "{}", run.stdout);
    let run = sb
        .rho(&[
            "mcp",
            "call",
            "everything",
            "get-structured-content",
            r#"{"location":"New York"}"#,
            "--json",
        ])
        .ok()
        .json();
    assert!(
        run["structured_content"]["temperature"].is_number(),
        "{run:#}"
    );
    assert!(
        run["text"].as_str().unwrap().starts_with('{'),
        "structured content is what the model reads"
    );
    let run = sb
        .rho(&["mcp", "call", "everything", "get-tiny-image", "--json"])
        .ok()
        .json();
    assert!(
        run["text"].as_str().unwrap().contains("[image image/png,"),
        "{run:#}"
    );
    assert!(
        !run["text"].as_str().unwrap().contains("iVBOR"),
        "no base64 reaches the model"
    );
    assert_eq!(run["image"]["mime_type"], "image/png");
    assert!(run["image"]["bytes"].as_u64().unwrap() > 0, "{run:#}");
    // `rho tools call` reports the same result, in both forms.
    let tools = sb.rho(&["tools", "list", "--json"]).ok().json();
    let exported = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["tool"] == "get-tiny-image")
        .and_then(|t| t["name"].as_str())
        .unwrap_or_else(|| panic!("no get-tiny-image in {tools:#}"))
        .to_owned();
    let run = sb.rho(&["tools", "call", &exported, "--json"]).ok().json();
    assert_eq!(run["image"]["mime_type"], "image/png", "{run:#}");
    let run = sb.rho(&["tools", "call", &exported]).ok();
    assert!(
        run.stdout.contains("[image kept for display: image/png, "),
        "{}",
        run.stdout
    );
    let run = sb
        .rho(&[
            "mcp",
            "call",
            "everything",
            "trigger-long-running-operation",
            r#"{"duration":1,"steps":2}"#,
        ])
        .ok();
    assert!(
        // The report for the last step races the result inside rmcp (its notifications are
        // handled on spawned tasks), so only the first one is certain to arrive.
        run.stderr.contains("progress 1/2"),
        "{}",
        run.stderr
    );
    let run = sb
        .rho(&["mcp", "call", "everything", "no-such-tool"])
        .code(1);
    assert!(run.stderr.contains("no tool"), "{}", run.stderr);
    let run = sb
        .rho(&["mcp", "call", "everything", "echo", "[1]"])
        .code(1);
    assert!(run.stderr.contains("JSON object"), "{}", run.stderr);
}

#[test]
fn output_is_capped_by_max_output_bytes() {
    let sb = Sandbox::new();
    sb.write_config(&everything::stdio_table(
        "everything",
        "max_output_bytes = 20\n",
    ));
    let run = sb
        .rho(&[
            "mcp",
            "call",
            "everything",
            "echo",
            r#"{"message":"a message longer than twenty bytes"}"#,
            "--json",
        ])
        .ok()
        .json();
    assert_eq!(run["truncated"], true);
    assert!(
        run["text"]
            .as_str()
            .unwrap()
            .starts_with("Echo: a message long\n[output truncated"),
        "{run:#}"
    );
}

#[test]
fn environment_is_sanitized_and_secrets_stay_out_of_rho_output() {
    let sb = Sandbox::new();
    sb.write_config(&everything::stdio_table(
        "everything",
        "env = { VISIBLE = \"yes\" }\nenv_from_env = { SERVER_TOKEN = \"RHO_CANARY_SOURCE\" }\n",
    ));
    let canary = "canary-7f3a9c";
    let env = [
        ("RHO_CANARY_SOURCE", canary),
        ("OPENAI_API_KEY", "leak-openai"),
        ("AWS_SECRET_ACCESS_KEY", "leak-aws"),
        ("LD_PRELOAD", ""),
    ];
    let run = sb
        .rho_env(&env, &["mcp", "call", "everything", "get-env", "--json"])
        .ok();
    let text = run.json()["text"].as_str().unwrap().to_owned();
    let child_env: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(child_env["VISIBLE"], "yes");
    assert_eq!(
        child_env["SERVER_TOKEN"], canary,
        "env_from_env restores on purpose"
    );
    assert!(
        child_env.get("OPENAI_API_KEY").is_none()
            && child_env.get("AWS_SECRET_ACCESS_KEY").is_none()
    );
    assert!(child_env.get("RHO_CANARY_SOURCE").is_none());
    let list = sb
        .rho_env(&env, &["mcp", "list", "--connect", "--json"])
        .ok();
    assert!(!list.stdout.contains(canary) && !list.stderr.contains(canary));
    let show = sb
        .rho_env(&env, &["mcp", "show", "everything", "--connect"])
        .ok();
    assert!(!show.stdout.contains(canary));
    // An unset env_from_env variable fails that server, naming the variable only.
    let list = sb.rho(&["mcp", "list", "--connect", "--json"]).ok().json();
    let e = mcp_server(&list, "everything");
    assert_eq!(e["status"], "failed");
    assert!(
        e["error"].as_str().unwrap().contains("RHO_CANARY_SOURCE"),
        "{e}"
    );
}

#[test]
fn plugin_servers_get_plugin_root_and_a_fresh_plugin_data() {
    let sb = Sandbox::new();
    let dir = sb.user_plugins().join("ev");
    make_plugin(&dir, "ev");
    let bin_dir = everything::bin_dir().to_str().unwrap().to_owned();
    let mut all = everything::mcp_json_entry(everything::BIN);
    all["env"] = serde_json::json!({"CACHE": "${PLUGIN_DATA}/cache"});
    make_mcp(&dir, &serde_json::json!({ "all": all }).to_string());
    let data = sb.user_plugins().join("data/ev");
    assert!(!data.exists());
    let path = format!("{bin_dir}:{}", std::env::var("PATH").unwrap_or_default());
    let run = sb
        .rho_env(
            &[("PATH", &path)],
            &["mcp", "call", "ev/all", "get-env", "--json"],
        )
        .ok();
    let child_env: Value = serde_json::from_str(run.json()["text"].as_str().unwrap()).unwrap();
    assert_eq!(child_env["PLUGIN_ROOT"], dir.to_str().unwrap());
    assert_eq!(child_env["PLUGIN_DATA"], data.to_str().unwrap());
    assert_eq!(child_env["CACHE"], format!("{}/cache", data.display()));
    assert!(data.is_dir(), "created right before the start");
}

#[test]
fn one_failing_server_never_takes_down_its_siblings() {
    let sb = Sandbox::new();
    sb.write_config(
        &format!(
            "{}\n[mcp.servers.missing]\ncommand = \"rho-no-such-executable\"\n\n[mcp.servers.exits]\ncommand = \"true\"\n\n[mcp.servers.refused]\nurl = \"http://127.0.0.1:{}/mcp\"\n",
            everything::stdio_table("good", ""),
            free_port()
        ),
    );
    let list = sb.rho(&["mcp", "list", "--connect", "--json"]).ok().json();
    assert_eq!(mcp_server(&list, "good")["status"], "started");
    let missing = mcp_server(&list, "missing");
    assert_eq!(missing["status"], "failed");
    assert!(
        missing["error"]
            .as_str()
            .unwrap()
            .contains("rho-no-such-executable"),
        "{missing}"
    );
    assert_eq!(mcp_server(&list, "exits")["status"], "failed");
    assert_eq!(mcp_server(&list, "refused")["status"], "failed");
}

#[test]
fn startup_budget_stops_a_silent_server_and_its_process_group() {
    let sb = Sandbox::new();
    let marker = format!("31.{}", std::process::id());
    let script = sb.outside("bin").join("silent");
    write_script(
        &script,
        &format!("#!/bin/sh\nsleep {marker} &\nexec sleep {marker}\n"),
    );
    sb.write_config(&format!(
        "[mcp.servers.silent]\ncommand = {:?}\nstartup_timeout_sec = 0.5\n",
        script.to_str().unwrap()
    ));
    let started = Instant::now();
    let list = sb.rho(&["mcp", "list", "--connect", "--json"]).ok().json();
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
    let s = mcp_server(&list, "silent");
    assert_eq!(s["status"], "failed");
    assert!(
        s["error"].as_str().unwrap().contains("startup budget"),
        "{s}"
    );
    assert_no_process(&marker);
}

#[test]
fn grandchildren_of_a_server_are_stopped_with_it() {
    let sb = Sandbox::new();
    let marker = format!("45.{}", std::process::id());
    let script = sb.outside("bin").join("forking");
    write_script(
        &script,
        &format!(
            "#!/bin/sh\nsleep {marker} &\nexec {}\n",
            everything::stdio_shell()
        ),
    );
    sb.write_server_command("forking", &script);
    sb.rho(&["mcp", "call", "forking", "echo", r#"{"message":"x"}"#])
        .ok();
    assert_no_process(&marker);
}

#[test]
fn streamable_http_connects_and_calls_with_headers_from_the_environment() {
    let port = free_port();
    let _peer = everything::start_http(port);
    let sb = Sandbox::new();
    sb.write_config(
        &format!(
            "[mcp.servers.web]\nurl = \"{}\"\nheaders = {{ X-Tenant = \"public\" }}\nheaders_from_env = {{ X-Api-Key = \"RHO_TEST_API_KEY\" }}\n",
            everything::http_url(port)
        ),
    );
    let env = [("RHO_TEST_API_KEY", "canary-header-secret")];
    let list = sb
        .rho_env(&env, &["mcp", "list", "--connect", "--json"])
        .ok();
    assert!(!list.stdout.contains("canary-header-secret"));
    let web = mcp_server(&list.json(), "web").clone();
    assert_eq!(web["status"], "started", "{web:#}");
    assert_eq!(web["transport"], "streamable_http");
    assert_eq!(web["ping"], "ok", "legacy HTTP sessions are pinged");
    let run = sb
        .rho_env(
            &env,
            &["mcp", "call", "web", "echo", r#"{"message":"over http"}"#],
        )
        .ok();
    assert_eq!(run.stdout, "Echo: over http\n");
}

#[test]
fn redirects_are_not_followed_so_headers_never_reach_another_origin() {
    let other = TcpListener::bind("127.0.0.1:0").unwrap();
    other.set_nonblocking(true).unwrap();
    let other_port = other.local_addr().unwrap().port();
    let redirector = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = redirector.local_addr().unwrap().port();
    let serve = std::thread::spawn(move || {
        redirector.set_nonblocking(true).unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok((mut stream, _)) = redirector.accept() {
                stream.set_nonblocking(false).unwrap();
                let mut buf = [0u8; 4096];
                let _ = stream.read(&mut buf);
                let reply = format!(
                    "HTTP/1.1 307 Temporary Redirect\r\nLocation: http://127.0.0.1:{other_port}/mcp\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                );
                let _ = stream.write_all(reply.as_bytes());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    });
    let sb = Sandbox::new();
    sb.write_config(
        &format!(
            "[mcp.servers.hop]\nurl = \"http://127.0.0.1:{port}/mcp\"\nheaders = {{ Authorization = \"Bearer canary\" }}\nstartup_timeout_sec = 5\n"
        ),
    );
    let list = sb.rho(&["mcp", "list", "--connect", "--json"]).ok().json();
    assert_eq!(mcp_server(&list, "hop")["status"], "failed");
    assert!(other.accept().is_err(), "the other origin was contacted");
    drop(serve);
}

#[test]
fn zero_enabled_servers_connect_nothing() {
    let sb = Sandbox::new();
    sb.write_config("[mcp.servers.off]\ncommand = \"npx\"\nenabled = false\n");
    let started = Instant::now();
    let list = sb.rho(&["mcp", "list", "--connect", "--json"]).ok().json();
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(mcp_server(&list, "off")["status"], "disabled");
}

#[test]
fn call_budget_cancels_and_fails_the_call() {
    let sb = Sandbox::new();
    sb.write_config(&everything::stdio_table(
        "everything",
        "call_timeout_sec = 0.8\n",
    ));
    let started = Instant::now();
    let run = sb
        .rho(&[
            "mcp",
            "call",
            "everything",
            "trigger-long-running-operation",
            r#"{"duration":10,"steps":10}"#,
        ])
        .code(1);
    assert!(run.stderr.contains("call budget"), "{}", run.stderr);
    assert!(
        started.elapsed() < Duration::from_secs(6),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn server_stderr_reaches_the_log_with_secrets_redacted() {
    let sb = Sandbox::new();
    let script = sb.outside("bin").join("chatty");
    write_script(
        &script,
        &format!(
            "#!/bin/sh\necho \"booting with token=$SERVER_TOKEN\" >&2\nexec {}\n",
            everything::stdio_shell()
        ),
    );
    sb.write_config(
        &format!(
            "[mcp.servers.chatty]\ncommand = {:?}\nenv_from_env = {{ SERVER_TOKEN = \"RHO_TEST_SECRET\" }}\nlog_level = \"debug\"\n",
            script.to_str().unwrap()
        ),
    );
    let run = sb
        .rho_env(
            &[
                ("RHO_TEST_SECRET", "canary-s3cr3t"),
                ("RHO_LOG", "rho::mcp::server=debug"),
            ],
            &["mcp", "call", "chatty", "echo", r#"{"message":"x"}"#],
        )
        .ok();
    assert!(
        run.stderr.contains("booting with token=[redacted]"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("canary-s3cr3t") && !run.stdout.contains("canary-s3cr3t"));
    assert!(run.stderr.contains("chatty"), "the log names the server");
}

#[test]
fn declared_output_schemas_are_enforced() {
    let sb = Sandbox::new();
    sb.write_config(&everything::stdio_table("everything", ""));
    // server-everything declares an outputSchema for this tool and honours it.
    let run = sb
        .rho(&[
            "mcp",
            "call",
            "everything",
            "get-structured-content",
            r#"{"location":"Chicago"}"#,
        ])
        .ok();
    assert!(run.stdout.contains("temperature"), "{}", run.stdout);
}

fn modern_server() -> String {
    let script = repo_root().join("tests/peers/modern_server.py");
    rho_e2e::require_python_mcp();
    script.to_string_lossy().into_owned()
}

#[test]
fn modern_era_server_over_stdio_negotiates_2026_07_28() {
    let sb = Sandbox::new();
    sb.write_config(&format!(
        "[mcp.servers.modern]\ncommand = \"python3\"\nargs = [{:?}, \"stdio\"]\n",
        modern_server()
    ));
    let list = sb.rho(&["mcp", "list", "--connect", "--json"]).ok().json();
    let m = mcp_server(&list, "modern");
    assert_eq!(m["status"], "started", "{m:#}");
    assert_eq!(m["protocol_version"], "2026-07-28");
    assert_eq!(
        m["instructions"],
        "Test server for rho: tools add, shout and weather."
    );
    let run = sb
        .rho(&[
            "mcp",
            "call",
            "modern",
            "add",
            r#"{"a":20,"b":22}"#,
            "--json",
        ])
        .ok()
        .json();
    assert_eq!(run["structured_content"]["result"], 42);
    let run = sb
        .rho(&[
            "mcp",
            "call",
            "modern",
            "mcp__modern__weather",
            r#"{"city":"Oslo"}"#,
        ])
        .ok();
    assert!(run.stdout.contains("\"city\": \"Oslo\""), "{}", run.stdout);
}

#[test]
fn modern_era_server_over_streamable_http() {
    let script = modern_server();
    let port = free_port();
    let child = Command::new("python3")
        .args([script.as_str(), "http", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let _peer = KillOnDrop(child);
    wait_for_port(port, 20, "the Python server");
    let sb = Sandbox::new();
    sb.write_config(&format!(
        "[mcp.servers.web]\nurl = \"http://localhost:{port}/mcp\"\n"
    ));
    let list = sb.rho(&["mcp", "list", "--connect", "--json"]).ok().json();
    assert_eq!(
        mcp_server(&list, "web")["protocol_version"],
        "2026-07-28",
        "{list:#}"
    );
    let run = sb
        .rho(&[
            "mcp",
            "call",
            "web",
            "shout",
            r#"{"text":"quiet"}"#,
            "--json",
        ])
        .ok()
        .json();
    assert_eq!(run["structured_content"]["result"], "QUIET");
}

#[test]
fn log_level_reaches_modern_servers_per_request_and_logs_land_in_tracing() {
    let sb = Sandbox::new();
    let script = modern_server();
    let env = [("RHO_LOG", "rho::mcp::server=info")];
    sb.write_config(&format!(
        "[mcp.servers.modern]\ncommand = \"python3\"\nargs = [{script:?}, \"stdio\"]\n"
    ));
    let quiet = sb.rho_env(&env, &["mcp", "call", "modern", "chatter"]).ok();
    assert!(
        !quiet.stderr.contains("modern log line"),
        "no level asked, no log sent: {}",
        quiet.stderr
    );
    sb.write_config(
        &format!(
            "[mcp.servers.modern]\ncommand = \"python3\"\nargs = [{script:?}, \"stdio\"]\nlog_level = \"info\"\n"
        ),
    );
    let run = sb.rho_env(&env, &["mcp", "call", "modern", "chatter"]).ok();
    let line = run
        .stderr
        .lines()
        .find(|l| l.contains("modern log line"))
        .unwrap_or_else(|| panic!("{}", run.stderr));
    assert!(
        line.contains("rho::mcp::server") && line.contains("modern"),
        "{line}"
    );
}
