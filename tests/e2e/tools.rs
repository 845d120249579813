//! `rho tools list/call` and `rho doctor` through the real binary: built-in tools, skill
//! activation, real MCP servers (npm `server-everything`), workspace containment and the
//! setup report.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rho_e2e::*;
use serde_json::Value;

const BUILTINS: [(&str, &str); 7] = [
    ("read_file", "read"),
    ("write_file", "write"),
    ("edit_file", "write"),
    ("list_directory", "read"),
    ("glob", "read"),
    ("grep", "read"),
    ("run_command", "destructive"),
];

/// The `name` enum of `activate_skill`'s input schema.
fn skill_enum(list: &Value) -> Vec<String> {
    strings(&listed_tool(list, "activate_skill")["input_schema"]["properties"]["name"]["enum"])
}

/// The built-in names, the built-in WASM tool `text_stats`, then `activate_skill`, in mount
/// order.
fn builtin_names() -> Vec<String> {
    BUILTINS
        .iter()
        .map(|(n, _)| (*n).to_owned())
        .chain(["text_stats".to_owned(), "activate_skill".to_owned()])
        .collect()
}

/// The rows of a `rho doctor --json` document named `check`.
fn checks<'a>(doctor: &'a Value, check: &str) -> Vec<&'a Value> {
    doctor["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["check"] == check)
        .collect()
}

fn check<'a>(doctor: &'a Value, name: &str) -> &'a Value {
    let rows = checks(doctor, name);
    assert_eq!(rows.len(), 1, "one {name} row expected: {doctor:#}");
    rows[0]
}

/// A wrapper around server-everything that records that it started (`<dir>/started`) and its
/// pid (`<dir>/pid`), and carries `marker` on the server's command line.
fn recording_server(dir: &Path, marker: &str) -> std::path::PathBuf {
    let script = dir.join("server");
    write_script(
        &script,
        &format!(
            "#!/bin/sh\ntouch {started:?}\necho $$ > {pid:?}\nexec {everything} {marker}\n",
            started = dir.join("started"),
            pid = dir.join("pid"),
            everything = everything::stdio_shell(),
        ),
    );
    script
}

#[test]
fn list_without_servers_has_exactly_the_builtins_and_activate_skill() {
    let sb = Sandbox::new();
    let list = sb.rho(&["tools", "list", "--json"]).ok().json();
    assert_eq!(listed_names(&list), builtin_names(), "{list:#}");
    for (name, risk) in BUILTINS {
        let t = listed_tool(&list, name);
        assert_eq!(t["risk"], risk, "{t:#}");
        assert_eq!(t["source"], "builtin", "{t:#}");
        assert_eq!(t["server"], Value::Null, "{t:#}");
        assert_eq!(t["plugin"], Value::Null, "{t:#}");
        assert_eq!(t["input_schema"]["type"], "object", "{t:#}");
        assert!(!t["description"].as_str().unwrap().is_empty(), "{t:#}");
    }
    let activate = listed_tool(&list, "activate_skill");
    assert_eq!(activate["risk"], "read");
    assert_eq!(activate["source"], "builtin");
    assert_eq!(
        skill_enum(&list),
        ["rho-plugin-authoring"],
        "the built-in skill is the only one"
    );
    assert_eq!(
        activate["input_schema"]["required"],
        serde_json::json!(["name"])
    );
    // Zero-server fast path: nothing configured, nothing started, nothing to report.
    assert_eq!(list["servers"], serde_json::json!([]), "{list:#}");
    assert_eq!(list["diagnostics"], serde_json::json!([]), "{list:#}");

    let text = sb.rho(&["tools", "list"]).ok().stdout;
    let row = text
        .lines()
        .find(|l| l.starts_with("run_command "))
        .unwrap_or_else(|| panic!("no run_command row:\n{text}"));
    assert!(
        row.contains("builtin") && row.contains("destructive"),
        "{row}"
    );
}

#[test]
fn activate_skill_enum_lists_loose_and_plugin_skills() {
    let sb = Sandbox::new();
    make_skill(
        &sb.project.join(".agents/skills"),
        "loose-project",
        "A loose project skill. Use when testing.",
    );
    make_skill(
        &sb.home.join(".agents/skills"),
        "loose-user",
        "A loose user skill. Use when testing.",
    );
    let plugin = sb.project_plugins().join("pp");
    make_plugin(&plugin, "pp");
    make_skill(
        &plugin.join("skills"),
        "plugin-skill",
        "A plugin skill. Use when testing.",
    );
    let list = sb.rho(&["tools", "list", "--json"]).ok().json();
    let mut enumerated = skill_enum(&list);
    enumerated.sort();
    assert_eq!(
        enumerated,
        [
            "loose-project",
            "loose-user",
            "plugin-skill",
            "rho-plugin-authoring"
        ],
        "{list:#}"
    );
    assert_eq!(
        listed_names(&list),
        builtin_names(),
        "skills add no other tool"
    );

    // The plugin skill is activatable too (its body is re-read under the plugin's rules).
    let run = sb
        .rho(&[
            "tools",
            "call",
            "activate_skill",
            r#"{"name":"plugin-skill"}"#,
            "--json",
        ])
        .ok()
        .json();
    assert_eq!(run["is_error"], false, "{run:#}");
    let text = run["text"].as_str().unwrap();
    assert!(
        text.starts_with("<skill_content name=\"plugin-skill\">\n# plugin-skill"),
        "{text}"
    );
    assert!(text.contains(&format!(
        "Skill directory: {}",
        plugin.join("skills/plugin-skill").display()
    )));
}

#[test]
fn list_connects_config_servers_and_isolates_a_failed_one() {
    let sb = Sandbox::new();
    let marker = format!("rho-tools-list-{}", std::process::id());
    sb.write_config(&format!(
        "{}\n[mcp.servers.broken]\ncommand = \"/nonexistent/rho-no-such-server\"\n",
        everything::stdio_table_args("everything", &[&marker], "")
    ));
    let list = sb.rho(&["tools", "list", "--json"]).ok().json();
    let all = listed_names(&list);
    assert_eq!(all[..9], builtin_names()[..], "built-ins first: {all:?}");
    let echo = listed_tool(&list, "mcp__everything__echo");
    assert_eq!(echo["source"], "mcp", "{echo:#}");
    assert_eq!(echo["server"], "everything", "{echo:#}");
    assert_eq!(echo["plugin"], Value::Null, "{echo:#}");
    assert_eq!(echo["risk"], "destructive", "MCP tools are destructive");
    assert_eq!(echo["title"], "Echo Tool");
    assert_eq!(
        echo["input_schema"]["properties"]["message"]["type"], "string",
        "{echo:#}"
    );
    let mcp: Vec<&Value> = listed_tools(&list)
        .iter()
        .filter(|t| t["source"] == "mcp")
        .collect();
    assert!(mcp.len() > 5, "server-everything has many tools: {all:?}");
    for t in &mcp {
        assert_eq!(t["server"], "everything", "{t:#}");
        assert_eq!(t["risk"], "destructive", "{t:#}");
        assert!(
            t["name"].as_str().unwrap().starts_with("mcp__everything__"),
            "{t:#}"
        );
    }
    assert!(
        !all.iter().any(|n| n.contains("broken")),
        "a failed server contributes no tools: {all:?}"
    );

    let servers = list["servers"].as_array().unwrap();
    assert_eq!(servers.len(), 2, "{list:#}");
    let broken = servers.iter().find(|s| s["id"] == "broken").unwrap();
    assert_eq!(broken["status"], "failed", "{broken:#}");
    assert!(
        broken["error"]
            .as_str()
            .unwrap()
            .contains("/nonexistent/rho-no-such-server"),
        "{broken:#}"
    );
    let good = servers.iter().find(|s| s["id"] == "everything").unwrap();
    assert_eq!(good["status"], "started", "{good:#}");
    assert_eq!(good["error"], Value::Null);

    let diagnostics = list["diagnostics"].as_array().unwrap();
    assert_eq!(diagnostics.len(), 1, "{list:#}");
    assert_eq!(diagnostics[0]["code"], "mcp-server-failed");
    assert_eq!(diagnostics[0]["component"], "broken");
    assert_eq!(diagnostics[0]["severity"], "error");

    // Listing starts the servers and stops them again.
    assert_no_process(&marker);

    // The human table reports the failure too.
    let text = sb.rho(&["tools", "list"]).ok().stdout;
    assert!(text.contains("1 server(s) failed:"), "{text}");
    assert!(text.contains("  broken: "), "{text}");
    assert!(text.contains("mcp__everything__echo"), "{text}");
    assert_no_process(&marker);
}

#[test]
fn no_mcp_and_builtin_calls_start_no_server() {
    let sb = Sandbox::new();
    let dir = sb.outside("server");
    let marker = format!("rho-tools-no-mcp-{}", std::process::id());
    let script = recording_server(&dir, &marker);
    sb.write_server_command("everything", &script);
    let list = sb.rho(&["tools", "list", "--no-mcp", "--json"]).ok().json();
    assert_eq!(listed_names(&list), builtin_names(), "{list:#}");
    for s in list["servers"].as_array().unwrap() {
        assert_ne!(s["status"], "started", "{s:#}");
        assert_ne!(s["status"], "failed", "{s:#}");
    }
    assert_eq!(list["diagnostics"], serde_json::json!([]), "{list:#}");
    assert!(!dir.join("started").exists(), "--no-mcp started a server");

    // A built-in tool needs no server either.
    write(&sb.project.join("a.txt"), "alpha\n");
    let run = sb
        .rho(&["tools", "call", "read_file", r#"{"path":"a.txt"}"#])
        .ok();
    assert!(run.stdout.contains("alpha"), "{}", run.stdout);
    let run = sb
        .rho(&[
            "tools",
            "call",
            "activate_skill",
            r#"{"name":"rho-plugin-authoring"}"#,
        ])
        .ok();
    assert!(
        run.stdout
            .starts_with("<skill_content name=\"rho-plugin-authoring\">"),
        "{}",
        run.stdout
    );
    assert!(
        !dir.join("started").exists(),
        "a built-in call started a server"
    );

    // The same server does start without --no-mcp (the marker file is a real witness).
    let list = sb.rho(&["tools", "list", "--json"]).ok().json();
    assert_eq!(
        listed_tool(&list, "mcp__everything__echo")["server"],
        "everything"
    );
    assert!(
        dir.join("started").exists(),
        "the recording server never ran"
    );
    assert_no_process(&marker);
}

#[test]
fn call_read_file_reads_a_project_file() {
    let sb = Sandbox::new();
    write(&sb.project.join("a.txt"), "first line\nsecond line\n");
    let run = sb
        .rho(&["tools", "call", "read_file", r#"{"path":"a.txt"}"#])
        .ok();
    assert_eq!(run.stdout, "     1 first line\n     2 second line\n");

    let run = sb
        .rho(&[
            "tools",
            "call",
            "read_file",
            r#"{"path":"a.txt"}"#,
            "--json",
        ])
        .ok()
        .json();
    assert_eq!(
        run,
        serde_json::json!({
            "tool": "read_file",
            "is_error": false,
            "text": "     1\tfirst line\n     2\tsecond line\n",
            "truncated": false,
            "structured_content": null,
            "image": null,
        })
    );

    // offset/limit select lines.
    let run = sb
        .rho(&[
            "tools",
            "call",
            "read_file",
            r#"{"path":"a.txt","offset":2,"limit":1}"#,
            "--json",
        ])
        .ok()
        .json();
    let text = run["text"].as_str().unwrap();
    assert!(text.contains("second line"), "{text}");
    assert!(!text.contains("first line"), "{text}");

    // A missing file is a failed call, not a crash.
    let run = sb
        .rho(&[
            "tools",
            "call",
            "read_file",
            r#"{"path":"missing.txt"}"#,
            "--json",
        ])
        .code(1)
        .json();
    assert_eq!(run["is_error"], true, "{run:#}");
    assert!(
        run["text"].as_str().unwrap().contains("missing.txt"),
        "{run:#}"
    );
}

#[test]
fn calls_outside_the_project_are_refused_and_the_canary_never_leaks() {
    let sb = Sandbox::new();
    let canary = Canary::new(&sb);
    // The project is <base>/project and the canary <base>/outside/canary.
    symlink(&canary.file, sb.project.join("link.txt"));
    symlink(&canary.dir, sb.project.join("linkdir"));
    let absolute = canary.file.to_str().unwrap().to_owned();
    let attempts: Vec<(&str, String)> = vec![
        (
            "read_file",
            r#"{"path":"../outside/canary/secret.txt"}"#.to_owned(),
        ),
        ("read_file", format!(r#"{{"path":{absolute:?}}}"#)),
        ("read_file", r#"{"path":"link.txt"}"#.to_owned()),
        ("read_file", r#"{"path":"linkdir/secret.txt"}"#.to_owned()),
        (
            "grep",
            format!(
                r#"{{"pattern":"CANARY","path":{:?}}}"#,
                canary.dir.to_str().unwrap()
            ),
        ),
        (
            "grep",
            r#"{"pattern":"CANARY","path":"linkdir"}"#.to_owned(),
        ),
        (
            "list_directory",
            r#"{"path":"../outside/canary"}"#.to_owned(),
        ),
        (
            "write_file",
            format!(r#"{{"path":{absolute:?},"content":"overwritten"}}"#),
        ),
        (
            "write_file",
            r#"{"path":"link.txt","content":"overwritten"}"#.to_owned(),
        ),
        (
            "edit_file",
            r#"{"path":"link.txt","old_string":"CANARY","new_string":"x"}"#.to_owned(),
        ),
        (
            "run_command",
            r#"{"argv":["cat","secret.txt"],"cwd":"linkdir"}"#.to_owned(),
        ),
    ];
    for (name, args) in &attempts {
        let run = sb.rho(&["tools", "call", name, args, "--json"]);
        canary.assert_absent(&run.stdout);
        canary.assert_absent(&run.stderr);
        let run = run.code(1).json();
        assert_eq!(run["is_error"], true, "{name} {args}: {run:#}");
        let text = run["text"].as_str().unwrap();
        assert!(
            text.contains("is outside the workspace"),
            "{name} {args}: {text}"
        );
    }
    // Human output refuses the same way.
    let run = sb.rho(&[
        "tools",
        "call",
        "read_file",
        r#"{"path":"../outside/canary/secret.txt"}"#,
    ]);
    canary.assert_absent(&run.stdout);
    canary.assert_absent(&run.stderr);
    let run = run.code(1);
    assert!(
        run.stdout.contains("`../outside/canary/secret.txt`"),
        "{}",
        run.stdout
    );
    // A search of the whole project neither follows the links nor finds the marker.
    let run = sb.rho(&["tools", "call", "grep", r#"{"pattern":"CANARY"}"#, "--json"]);
    canary.assert_absent(&run.stdout);
    canary.assert_untouched();
    canary.assert_not_copied_into(&sb.project);
}

#[test]
fn call_write_file_then_edit_file_change_a_file() {
    let sb = Sandbox::new();
    let run = sb
        .rho(&[
            "tools",
            "call",
            "write_file",
            r#"{"path":"sub/dir/new.txt","content":"hello world\nsecond\n"}"#,
            "--json",
        ])
        .ok()
        .json();
    assert_eq!(run["tool"], "write_file");
    assert_eq!(run["is_error"], false, "{run:#}");
    let file = sb.project.join("sub/dir/new.txt");
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "hello world\nsecond\n",
        "parents created, content written"
    );

    let run = sb
        .rho(&[
            "tools",
            "call",
            "edit_file",
            r#"{"path":"sub/dir/new.txt","old_string":"world","new_string":"rho"}"#,
            "--json",
        ])
        .ok()
        .json();
    assert_eq!(run["is_error"], false, "{run:#}");
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "hello rho\nsecond\n"
    );

    // A failed edit is exit code 1 and leaves the file alone.
    let run = sb
        .rho(&[
            "tools",
            "call",
            "edit_file",
            r#"{"path":"sub/dir/new.txt","old_string":"absent text","new_string":"x"}"#,
            "--json",
        ])
        .code(1)
        .json();
    assert_eq!(run["is_error"], true);
    assert!(
        run["text"].as_str().unwrap().contains("was not found"),
        "{run:#}"
    );
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "hello rho\nsecond\n"
    );

    // write_file replaces the whole file.
    sb.rho(&[
        "tools",
        "call",
        "write_file",
        r#"{"path":"sub/dir/new.txt","content":"replaced"}"#,
    ])
    .ok();
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "replaced");
}

#[test]
fn call_run_command_prints_output_in_the_project() {
    let sb = Sandbox::new();
    let run = sb
        .rho(&["tools", "call", "run_command", r#"{"argv":["echo","hi"]}"#])
        .ok();
    assert_eq!(
        run.stdout,
        "exit code: 0\n--- stdout ---\nhi\n--- stderr ---\n(empty)\n"
    );
    let run = sb
        .rho(&[
            "tools",
            "call",
            "run_command",
            r#"{"argv":["pwd"]}"#,
            "--json",
        ])
        .ok()
        .json();
    assert_eq!(run["tool"], "run_command");
    assert_eq!(run["is_error"], false);
    assert_eq!(
        run["text"],
        format!(
            "exit code: 0\n--- stdout ---\n{}\n--- stderr ---\n(empty)\n",
            sb.project.display()
        ),
        "the workspace is --cwd"
    );
    // A command's own failure is a result to read (exit code and both streams).
    let run = sb
        .rho(&[
            "tools",
            "call",
            "run_command",
            r#"{"command":"echo out; echo err >&2; exit 3"}"#,
            "--json",
        ])
        .ok()
        .json();
    assert_eq!(
        run["text"],
        "exit code: 3\n--- stdout ---\nout\n--- stderr ---\nerr\n"
    );
    // A program that cannot start is a failed call.
    let run = sb
        .rho(&[
            "tools",
            "call",
            "run_command",
            r#"{"argv":["rho-no-such-program-xyz"]}"#,
            "--json",
        ])
        .code(1)
        .json();
    assert_eq!(run["is_error"], true);
    assert!(
        run["text"]
            .as_str()
            .unwrap()
            .contains("rho-no-such-program-xyz"),
        "{run:#}"
    );
}

#[test]
fn call_rejects_bad_arguments_and_unknown_tools() {
    let sb = Sandbox::new();
    let run = sb.rho(&["tools", "call", "read_file", "{bad"]).code(1);
    assert!(
        run.stderr.contains("arguments are not valid JSON"),
        "{}",
        run.stderr
    );
    assert_eq!(run.stdout, "");
    let run = sb.rho(&["tools", "call", "read_file", "[1]"]).code(1);
    assert!(
        run.stderr.contains("arguments must be a JSON object"),
        "{}",
        run.stderr
    );
    let run = sb
        .rho(&["tools", "call", "no_such_tool", "{}", "--json"])
        .code(1);
    assert!(
        run.stderr.contains("no tool named \"no_such_tool\""),
        "{}",
        run.stderr
    );
    // Valid JSON that does not fit the schema is a failed call naming the field.
    let run = sb
        .rho(&["tools", "call", "read_file", r#"{"path":3}"#, "--json"])
        .code(1)
        .json();
    assert_eq!(run["is_error"], true);
    assert!(run["text"].as_str().unwrap().contains("path"), "{run:#}");

    // An MCP-looking name whose server failed says which server failed.
    sb.write_config("[mcp.servers.broken]\ncommand = \"/nonexistent/rho-no-such-server\"\n");
    let run = sb
        .rho(&["tools", "call", "mcp__broken__echo", "{}"])
        .code(1);
    assert!(
        run.stderr.contains("no tool named \"mcp__broken__echo\""),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("servers that failed: broken ("),
        "{}",
        run.stderr
    );
}

#[test]
fn call_mcp_tool_through_server_everything_and_stop_it() {
    let sb = Sandbox::new();
    let dir = sb.outside("server");
    let marker = format!("rho-tools-call-{}", std::process::id());
    let script = recording_server(&dir, &marker);
    sb.write_server_command("everything", &script);
    let run = sb
        .rho(&[
            "tools",
            "call",
            "mcp__everything__echo",
            r#"{"message":"hi"}"#,
            "--json",
        ])
        .ok()
        .json();
    assert_eq!(
        run,
        serde_json::json!({
            "tool": "mcp__everything__echo",
            "is_error": false,
            "text": "Echo: hi",
            "truncated": false,
            "structured_content": null,
            "image": null,
        })
    );
    assert!(dir.join("started").exists(), "the server never ran");
    let pid = std::fs::read_to_string(dir.join("pid")).unwrap();
    let pid = pid.trim();
    assert_no_process(&marker);
    let proc_dir = Path::new("/proc").join(pid);
    if let Ok(cmdline) = std::fs::read(proc_dir.join("cmdline")) {
        assert!(
            !String::from_utf8_lossy(&cmdline).contains(&marker),
            "server {pid} still runs"
        );
    }

    let run = sb
        .rho(&[
            "tools",
            "call",
            "mcp__everything__echo",
            r#"{"message":"hello rho"}"#,
        ])
        .ok();
    assert_eq!(run.stdout, "Echo: hello rho\n");
    assert_no_process(&marker);
}

#[test]
fn activate_skill_returns_body_directory_and_resource_list_without_contents() {
    let sb = Sandbox::new();
    let skill_dir = sb.project.join(".agents/skills/deploy-helper");
    write(
        &skill_dir.join("SKILL.md"),
        "---\nname: deploy-helper\ndescription: Deploys things. Use when deploying.\n---\n\n\
         # Deploy helper\n\nRun scripts/run.sh with the target BODY-MARKER-91.\n",
    );
    write_script(
        &skill_dir.join("scripts/run.sh"),
        "#!/bin/sh\necho SCRIPT-CONTENT-MARKER-57\n",
    );
    write(
        &skill_dir.join("references/guide.md"),
        "GUIDE-CONTENT-MARKER-33\n",
    );
    let run = sb
        .rho(&[
            "tools",
            "call",
            "activate_skill",
            r#"{"name":"deploy-helper"}"#,
            "--json",
        ])
        .ok()
        .json();
    assert_eq!(run["tool"], "activate_skill");
    assert_eq!(run["is_error"], false, "{run:#}");
    let text = run["text"].as_str().unwrap();
    assert!(
        text.starts_with("<skill_content name=\"deploy-helper\">\n# Deploy helper\n"),
        "{text}"
    );
    assert!(
        text.contains("Run scripts/run.sh with the target BODY-MARKER-91."),
        "{text}"
    );
    assert!(
        !text.contains("description: Deploys"),
        "frontmatter is not body: {text}"
    );
    assert!(
        text.contains(&format!("Skill directory: {}\n", skill_dir.display())),
        "{text}"
    );
    let resources = text
        .split_once("<skill_resources>\n")
        .and_then(|(_, rest)| rest.split_once("</skill_resources>"))
        .map(|(list, _)| list)
        .unwrap_or_else(|| panic!("no <skill_resources> in {text}"));
    assert!(
        resources.contains("  <file>scripts/run.sh</file>\n"),
        "{resources}"
    );
    assert!(
        resources.contains("  <file>references/guide.md</file>\n"),
        "{resources}"
    );
    assert!(
        !resources.contains("SKILL.md"),
        "SKILL.md is not a resource: {resources}"
    );
    assert!(text.ends_with("</skill_content>"), "{text}");
    assert!(
        !text.contains("SCRIPT-CONTENT-MARKER-57") && !text.contains("GUIDE-CONTENT-MARKER-33"),
        "bundled files are listed, never read eagerly: {text}"
    );

    let run = sb
        .rho(&[
            "tools",
            "call",
            "activate_skill",
            r#"{"name":"no-such-skill"}"#,
            "--json",
        ])
        .code(1)
        .json();
    assert_eq!(run["is_error"], true);
    let text = run["text"].as_str().unwrap();
    assert!(text.contains("no skill named \"no-such-skill\""), "{text}");
    assert!(text.contains("deploy-helper"), "lists what exists: {text}");
}

#[test]
fn doctor_in_a_clean_sandbox() {
    let sb = Sandbox::new();
    let run = sb.rho(&["doctor", "--no-connect", "--json"]);
    let doctor = run.json();
    let all: Vec<&str> = doctor["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["check"].as_str().unwrap())
        .collect();
    assert_eq!(
        all,
        [
            "config",
            "agent plugins",
            "plugin trust",
            "skills",
            "mcp servers",
            "provider"
        ],
        "{doctor:#}"
    );
    let trust = check(&doctor, "plugin trust");
    assert_eq!(trust["status"], "ok");
    assert_eq!(
        trust["detail"],
        "no untrusted project plugin servers or components"
    );
    let config = check(&doctor, "config");
    assert_eq!(config["status"], "ok");
    assert_eq!(
        config["detail"],
        format!(
            "no config file ({} does not exist); defaults apply",
            sb.rho_home.join("config.toml").display()
        )
    );
    assert_eq!(check(&doctor, "agent plugins")["status"], "ok");
    assert_eq!(
        check(&doctor, "agent plugins")["detail"],
        "0 loaded, 0 disabled, 0 rejected, 0 shadowed; 0 problem(s)"
    );
    assert_eq!(check(&doctor, "skills")["status"], "ok");
    assert_eq!(
        check(&doctor, "skills")["detail"],
        "1 available, 0 shadowed; 0 problem(s)",
        "the built-in skill"
    );
    let mcp = check(&doctor, "mcp servers");
    assert_eq!(mcp["status"], "ok");
    assert_eq!(
        mcp["detail"],
        "0 enabled, 0 invalid (not started: --no-connect)"
    );
    let provider = check(&doctor, "provider");
    let detail = provider["detail"].as_str().unwrap();
    assert!(
        detail.starts_with("local at http://127.0.0.1:11434/v1"),
        "{detail}"
    );
    // The built-in provider is whatever listens on 11434 (normally nothing): unreachable is a
    // warning, never an error, so the setup is still ok.
    if std::net::TcpStream::connect(("127.0.0.1", 11434)).is_err() {
        assert_eq!(provider["status"], "warning", "{provider:#}");
        // One line saying what to do, not a connection error.
        assert_eq!(
            detail,
            "local at http://127.0.0.1:11434/v1: nothing answers, so no model is configured: \
             add a [providers.<id>] table to config.toml or pass --endpoint and --model (see \
             docs/sessions.md)"
        );
    } else {
        assert_ne!(provider["status"], "error", "{provider:#}");
    }
    assert_eq!(doctor["ok"], true, "{doctor:#}");
    assert_eq!(run.code, 0, "{}", run.stderr);

    let text = sb.rho(&["doctor", "--no-connect"]).ok().stdout;
    assert!(text.starts_with("CHECK"), "{text}");
    assert!(text.contains("mcp servers"), "{text}");
}

#[test]
fn doctor_reports_a_broken_config_with_its_file_and_line() {
    let sb = Sandbox::new();
    sb.write_config("[agent]\npermission_mode = \"ask\"\n\n[providers.x\nendpoint = 3\n");
    let run = sb.rho(&["doctor", "--no-connect", "--json"]).code(1);
    let doctor = run.json();
    assert_eq!(doctor["ok"], false, "{doctor:#}");
    let config = check(&doctor, "config");
    assert_eq!(config["status"], "error", "{config:#}");
    let detail = config["detail"].as_str().unwrap();
    assert!(
        detail.starts_with(&format!(
            "{}: line 4",
            sb.rho_home.join("config.toml").display()
        )),
        "{detail}"
    );
    // The other rows are still reported.
    assert_eq!(checks(&doctor, "skills").len(), 1, "{doctor:#}");
    assert_eq!(checks(&doctor, "mcp servers").len(), 1, "{doctor:#}");
}

#[test]
fn doctor_never_prints_a_key_pasted_as_api_key_env() {
    let sb = Sandbox::new();
    let canary = format!("sk-canary-{}-7f3a9c0d1e2b", std::process::id());
    // A key pasted where the variable's name belongs, for an external and a local provider,
    // and once on a line that does not parse.
    sb.write_config(&format!(
        "[providers.hosted]\nendpoint = \"https://api.example.com/v1\"\napi_key_env = {canary:?}\n\n\
         [providers.loc]\nendpoint = \"http://127.0.0.1:9/v1\"\napi_key_env = {canary:?}\n"
    ));
    for args in [
        &["doctor", "--no-connect", "--json"][..],
        &["doctor", "--no-connect"][..],
        &["doctor", "--json"][..],
    ] {
        let run = sb.rho(args);
        assert!(
            !run.stdout.contains(&canary),
            "{args:?} leaked:\n{}",
            run.stdout
        );
        assert!(
            !run.stderr.contains(&canary),
            "{args:?} leaked:\n{}",
            run.stderr
        );
        assert_eq!(run.code, 1, "{args:?}: {}\n{}", run.stdout, run.stderr);
    }
    let doctor = sb.rho(&["doctor", "--no-connect", "--json"]).json();
    let providers = checks(&doctor, "provider");
    assert_eq!(providers.len(), 2, "{doctor:#}");
    for row in providers {
        assert_eq!(row["status"], "error", "{row:#}");
        assert!(
            row["detail"].as_str().unwrap().contains("api_key_env"),
            "{row:#}"
        );
    }
    assert_eq!(doctor["ok"], false);

    sb.write_config(&format!(
        "[providers.hosted]\nendpoint = \"https://api.example.com/v1\"\napi_key_env = \"{canary}\n"
    ));
    let run = sb.rho(&["doctor", "--no-connect", "--json"]).code(1);
    assert!(!run.stdout.contains(&canary), "leaked:\n{}", run.stdout);
    assert!(!run.stderr.contains(&canary), "leaked:\n{}", run.stderr);
    assert_eq!(check(&run.json(), "config")["status"], "error");
}

#[test]
fn doctor_reports_a_reachable_local_provider() {
    let sb = Sandbox::new();
    let dir = sb.outside("model");
    let script = dir.join("script.json");
    write(&script, "[]");
    let port_file = dir.join("port");
    let _server = KillOnDrop(
        Command::new(env!("CARGO_BIN_EXE_fake-model"))
            .arg("--script")
            .arg(&script)
            .arg("--port-file")
            .arg(&port_file)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    let port: u16 = loop {
        if let Some(port) = std::fs::read_to_string(&port_file)
            .ok()
            .and_then(|t| t.trim().parse().ok())
        {
            break port;
        }
        assert!(Instant::now() < deadline, "fake-model wrote no port file");
        std::thread::sleep(Duration::from_millis(20));
    };
    wait_for_port(port, 10, "fake-model");
    sb.write_config(&format!(
        "[providers.fake]\nendpoint = \"http://127.0.0.1:{port}/v1\"\n"
    ));
    let doctor = sb.rho(&["doctor", "--no-connect", "--json"]).ok().json();
    let provider = check(&doctor, "provider");
    assert_eq!(provider["status"], "ok", "{provider:#}");
    assert_eq!(
        provider["detail"],
        format!("fake at http://127.0.0.1:{port}/v1: reachable, 2 model(s)")
    );
    assert_eq!(doctor["ok"], true);
    let config = check(&doctor, "config");
    assert_eq!(config["status"], "ok");
    assert_eq!(
        config["detail"],
        format!(
            "{} (permission mode ask-destructive)",
            sb.rho_home.join("config.toml").display()
        )
    );
}

/// A provider whose endpoint answers with an HTML error page (a proxy's 502, a web server's
/// 404) is reported as its status and one line, never the page.
#[test]
fn doctor_reports_an_html_error_page_as_its_status_alone() {
    use std::io::{Read as _, Write as _};
    let sb = Sandbox::new();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut request = [0u8; 4096];
            let _ = stream.read(&mut request);
            let page = "<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>\n\
                        <body><h1>Bad Gateway</h1><p>nginx page-canary</p></body></html>\n";
            let _ = write!(
                stream,
                "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n{page}",
                page.len()
            );
        }
    });
    sb.write_config(&format!(
        "[providers.proxy]\nendpoint = \"http://127.0.0.1:{port}/v1\"\n"
    ));
    for args in [
        &["doctor", "--no-connect"][..],
        &["doctor", "--no-connect", "--json"],
    ] {
        let run = sb.rho(args);
        assert!(!run.stdout.contains("page-canary"), "{}", run.stdout);
        assert!(!run.stdout.contains("<html"), "{}", run.stdout);
    }
    let doctor = sb.rho(&["doctor", "--no-connect", "--json"]).json();
    assert_eq!(
        check(&doctor, "provider")["detail"],
        format!(
            "proxy at http://127.0.0.1:{port}/v1: proxy: http://127.0.0.1:{port}/v1/models answered HTTP 502: Bad Gateway"
        )
    );
}

#[test]
fn doctor_connects_mcp_servers_and_reports_a_failed_one() {
    let sb = Sandbox::new();
    let marker = format!("rho-tools-doctor-{}", std::process::id());
    sb.write_config(&format!(
        "{}\n[mcp.servers.broken]\ncommand = \"/nonexistent/rho-no-such-server\"\n",
        everything::stdio_table_args("everything", &[&marker], "")
    ));
    let doctor = sb.rho(&["doctor", "--json"]).code(1).json();
    let mcp = check(&doctor, "mcp servers");
    assert_eq!(mcp["status"], "error", "{mcp:#}");
    let detail = mcp["detail"].as_str().unwrap();
    assert!(detail.starts_with("1/2 running, "), "{detail}");
    assert!(detail.contains("failed: broken: "), "{detail}");
    assert!(!detail.contains("everything:"), "{detail}");
    assert_eq!(doctor["ok"], false);
    assert_no_process(&marker);

    let doctor = sb.rho(&["doctor", "--no-connect", "--json"]).json();
    assert_eq!(
        check(&doctor, "mcp servers")["detail"],
        "2 enabled, 0 invalid (not started: --no-connect)"
    );
}
