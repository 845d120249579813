//! `fake-mcp`: a deliberately misbehaving MCP server (2025-11-25 era, stdio) for rho's tests of
//! misbehaving servers (`docs/adversarial.md` §D). `--mode <name>` picks the misbehaviour; `--record
//! <file>` appends every method received, one per line, so tests can assert what rho sent.
#![allow(clippy::print_stdout, clippy::print_stderr)] // a stdio server owns both streams
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test tool

use std::io::{BufRead, Write};
use std::time::Duration;

use serde_json::{Value, json};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let mode = arg("--mode").unwrap_or_else(|| "ok".into());
    let record = arg("--record");
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout().lock();
    let mut lines = stdin.lock().lines();
    let mut calls = 0;
    if mode == "banner" {
        writeln!(stdout, "Starting fake server v1.0 ...").unwrap();
        writeln!(stdout, "\u{1b}[32mready\u{1b}[0m").unwrap();
    }
    loop {
        let Some(Ok(line)) = lines.next() else {
            if mode == "ignore-stdin-close" {
                loop {
                    std::thread::sleep(Duration::from_secs(1));
                }
            }
            return;
        };
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let method = message["method"].as_str().unwrap_or("").to_owned();
        if let Some(path) = &record {
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .unwrap();
            writeln!(f, "{method} {}", message["params"]).unwrap();
        }
        let Some(id) = message.get("id").cloned() else {
            continue;
        }; // notifications
        if mode == "never-answer" {
            continue;
        }
        let reply = |result: Value| json!({"jsonrpc": "2.0", "id": id, "result": result});
        let error = |code: i64, text: &str| json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": text}});
        let response = match method.as_str() {
            "initialize" => reply(json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {"listChanged": true}, "logging": {}},
                "serverInfo": {"name": "fake-mcp", "version": "1.0.0"},
                "instructions": "fake server for rho tests"
            })),
            "ping" | "logging/setLevel" => reply(json!({})),
            "tools/list" if mode == "list-changed" && calls > 0 => reply(json!({"tools": [
                json!({"name": "echo", "description": "echo, revised", "inputSchema": {"type": "object"}}),
                tool("newcomer")
            ]})),
            "tools/list" if mode == "list-changed" => {
                reply(json!({"tools": [tool("echo"), tool("retired")]}))
            }
            "tools/list" => reply(tools_list(&mode, &message)),
            "tools/call" => {
                let name = message["params"]["name"].as_str().unwrap_or("").to_owned();
                match mode.as_str() {
                    "crash-on-call" => std::process::exit(3),
                    "huge-line" => {
                        // 20 MiB in one line: above rho's 16 MiB message cap.
                        let big = "x".repeat(20 * 1024 * 1024);
                        reply(json!({"content": [{"type": "text", "text": big}]}))
                    }
                    // Never answers the call but keeps reading, so the notifications/cancelled
                    // rho sends is recorded.
                    "slow-call" => continue,
                    "bad-structured" => reply(json!({
                        "content": [{"type": "text", "text": "{\"temp\": \"warm\"}"}],
                        "structuredContent": {"temp": "warm"}
                    })),
                    _ => reply(
                        json!({"content": [{"type": "text", "text": format!("called {name} with {}", message["params"]["arguments"])}]}),
                    ),
                }
            }
            _ => error(-32601, "method not found"),
        };
        if mode == "non-json" {
            writeln!(stdout, "debug: handling {method}").unwrap();
            writeln!(stdout, "{{not json").unwrap();
        }
        writeln!(stdout, "{response}").unwrap();
        if mode == "list-changed" && method == "tools/call" {
            calls += 1;
            let notification =
                json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
            writeln!(stdout, "{notification}").unwrap();
        }
        stdout.flush().unwrap();
    }
}

fn tool(name: &str) -> Value {
    json!({"name": name, "description": format!("tool {name}"), "inputSchema": {"type": "object"}})
}

fn tools_list(mode: &str, message: &Value) -> Value {
    match mode {
        "odd-names" => json!({"tools": [
            tool("a__b"), tool("a.b"), tool("a_b"), tool("é"), tool(""), tool(&"x".repeat(300)),
            tool("with space"), tool("dup"), tool("dup"), tool("_rho_x")
        ]}),
        "repeat-cursor" => json!({"tools": [tool("page")], "nextCursor": "same"}),
        "paged" => {
            let cursor = message["params"]["cursor"].as_str().unwrap_or("0");
            let n: u32 = cursor.parse().unwrap_or(0);
            if n < 3 {
                json!({"tools": [tool(&format!("t{n}"))], "nextCursor": (n + 1).to_string()})
            } else {
                json!({"tools": [tool("last")]})
            }
        }
        "bad-structured" => json!({"tools": [{
            "name": "temp", "inputSchema": {"type": "object"},
            "outputSchema": {"type": "object", "properties": {"temp": {"type": "number"}}, "required": ["temp"]}
        }]}),
        _ => json!({"tools": [tool("echo")]}),
    }
}
