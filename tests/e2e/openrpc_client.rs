//! The OpenRPC document works with generated clients: `@open-rpc/generator` (pinned with
//! TypeScript and the packages its client needs in `tests/openrpc-client/`) generates a
//! TypeScript client from `schemas/rho-rpc.openrpc.json`, `tsc` compiles it with the driver
//! beside it (`tests/openrpc-client/src/`) under the generated `tsconfig.json`, and the driver
//! calls every method of the document through the generated client against the real `rho rpc`
//! (over stdio), with `fake-model` as the model and the reference `server-everything` as an MCP
//! server (prompts, completions, resources and a form to answer).

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rho_component::naming::ExportedNames;
use rho_e2e::{FakeModel, Sandbox, everything, repo_root, rho_bin, write};
use serde_json::{Value, json};

const FAKE_MODEL: &str = env!("CARGO_BIN_EXE_fake-model");
const INSTALL: &str = "install the OpenRPC generator and TypeScript with \
                       `npm ci --prefix tests/openrpc-client` (bash .ci/run does)";

/// The pinned tools: the generator's and TypeScript's command-line entry points.
struct Tools {
    generator: PathBuf,
    tsc: PathBuf,
    node_modules: PathBuf,
}

impl Tools {
    /// The installed tools; `None` (the test is skipped) only when `node` is not on PATH
    /// outside CI. In CI (`CI` set), and whenever node is there, missing tools fail the test.
    #[allow(clippy::print_stderr)] // a skip is reported where the test's output goes
    fn installed() -> Option<Self> {
        let node = Command::new("node").arg("--version").output();
        if !node.as_ref().is_ok_and(|o| o.status.success()) {
            assert!(
                std::env::var_os("CI").is_none(),
                "node is not on PATH ({node:?}) and CI is set: install Node.js 20 or later, then {INSTALL}"
            );
            eprintln!(
                "SKIPPED: node is not on PATH ({node:?}); install Node.js 20 or later, then {INSTALL}"
            );
            return None;
        }
        let node_modules = repo_root().join("tests/openrpc-client/node_modules");
        let tools = Self {
            generator: node_modules.join("@open-rpc/generator/build/cli.js"),
            tsc: node_modules.join("typescript/bin/tsc"),
            node_modules,
        };
        for path in [&tools.generator, &tools.tsc] {
            assert!(path.exists(), "{} is missing: {INSTALL}", path.display());
        }
        Some(tools)
    }
}

/// Runs `node <args>` in `dir` to its end; panics with its output unless it succeeds.
fn node(dir: &Path, args: &[&OsStr], what: &str) {
    let output = Command::new("node")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("cannot run node for {what}: {e}"));
    assert!(
        output.status.success(),
        "{what} failed ({}):\n{}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Generates the TypeScript client from the checked-in document into `work` and compiles it,
/// with the driver, as the generator set it up; returns the generated project's directory.
fn generate_and_compile(tools: &Tools, document: &Path, work: &Path) -> PathBuf {
    let config = work.join("generator.json");
    write(
        &config,
        json!({
            "openrpcDocument": document,
            "outDir": work,
            "components": [{"type": "client", "language": "typescript", "name": "rho-client"}],
        })
        .to_string(),
    );
    node(
        work,
        &[
            tools.generator.as_os_str(),
            OsStr::new("generate"),
            OsStr::new("-c"),
            config.as_os_str(),
        ],
        "@open-rpc/generator",
    );
    let project = work.join("client/typescript");
    let driver = repo_root().join("tests/openrpc-client/src");
    for file in ["driver.ts", "stdio_transport.ts"] {
        std::fs::copy(driver.join(file), project.join("src").join(file)).unwrap();
    }
    std::os::unix::fs::symlink(&tools.node_modules, project.join("node_modules")).unwrap();
    node(
        &project,
        &[tools.tsc.as_os_str(), OsStr::new("-p"), OsStr::new(".")],
        "tsc on the generated client",
    );
    project
}

/// Waits for `child` at most `seconds`; kills it after that and panics with its `stderr`.
fn wait(child: &mut std::process::Child, seconds: u64, stderr: &Path) -> std::process::ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(seconds);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            let stderr = std::fs::read_to_string(stderr).unwrap_or_default();
            panic!("the driver did not finish within {seconds} s:\n{stderr}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn call(name: &str, arguments: Value) -> Value {
    json!({"name": name, "arguments": arguments})
}

#[test]
fn a_generated_typescript_client_compiles_and_makes_every_call() {
    let Some(tools) = Tools::installed() else {
        return;
    };
    let document_path = repo_root().join("schemas/rho-rpc.openrpc.json");
    let sandbox = Sandbox::new();
    let work = sandbox.outside("openrpc-client");
    let project = generate_and_compile(&tools, &document_path, &work);

    sandbox.write_config(&everything::stdio_table("everything", ""));
    let elicit = ExportedNames::default().assign("everything", "trigger-elicitation-request");
    // One model turn per request, in the order the driver causes them.
    let model = FakeModel::start(
        FAKE_MODEL,
        &sandbox.dir.path().join("model"),
        &json!([
            {"content": "hello", "expect": {"model": "fake-model-2", "last_message_contains": "say hello"}},
            {"tool_calls": [call(&elicit, json!({}))]},
            {"content": "thanks, Ada", "expect": {"last_role": "tool", "last_message_contains": "Ada"}},
            {"tool_calls": [call("run_command", json!({"argv": ["echo", "never"]}))]},
            {"content": "read it", "expect": {"last_message_contains": "Resource 1: This is a plaintext resource"}},
            {"content": "we talked"}
        ]),
    );
    let report_path = work.join("report.json");
    let stderr_path = work.join("stderr.txt");
    let mut driver = Command::new("node");
    driver
        .arg(project.join("build/driver.js"))
        .arg(&document_path)
        .arg(&report_path)
        .arg(rho_bin())
        .arg("--cwd")
        .arg(&sandbox.project)
        .args([
            "rpc",
            "--endpoint",
            &model.endpoint(),
            "--model",
            "fake-model-1",
            "--accept-questions",
        ])
        .current_dir(&project)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &sandbox.home)
        .env("RHO_HOME", &sandbox.rho_home)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&stderr_path).unwrap());
    let mut child = driver.spawn().unwrap();
    let status = wait(&mut child, 180, &stderr_path);
    let stderr = std::fs::read_to_string(&stderr_path).unwrap_or_default();
    assert!(status.success(), "the driver failed ({status}):\n{stderr}");

    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(&report_path).unwrap()).unwrap();
    assert_eq!(report["exit"], 0, "rho's exit code");
    let document: Value =
        serde_json::from_str(&std::fs::read_to_string(&document_path).unwrap()).unwrap();
    let methods: BTreeSet<&str> = document["methods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    let called: BTreeSet<&str> = report["called"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    assert_eq!(called, methods, "every method, called through the client");

    // The wire: the generated client sends params by position, in the document's order, and
    // rho answered every request it sent.
    let lines = |direction: &str| -> Vec<Value> {
        report["transcript"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|entry| entry[0] == direction)
            .map(|entry| serde_json::from_str(entry[1].as_str().unwrap()).unwrap())
            .collect()
    };
    let sent = lines(">");
    let received = lines("<");
    for request in &sent {
        assert!(request["params"].is_array(), "{request}");
        let answer = received
            .iter()
            .find(|r| r.get("id") == request.get("id"))
            .unwrap_or_else(|| panic!("no answer to {request}"));
        assert!(answer.get("error").is_none(), "{request} → {answer}");
    }
    let params_of = |method: &str| -> Vec<&Value> {
        sent.iter()
            .filter(|r| r["method"] == method)
            .map(|r| &r["params"])
            .collect()
    };
    assert!(
        params_of("complete").contains(&&json!([
            "/mcp:everything:completable-prompt",
            "name",
            "",
            {"department": "Engineering"}
        ])),
        "{:?}",
        params_of("complete")
    );
    assert!(
        params_of("prompt").contains(&&json!(["keep it short", null, true])),
        "{:?}",
        params_of("prompt")
    );
    // rpc.discover answered the document the file holds.
    let discover = sent.iter().find(|r| r["method"] == "rpc.discover").unwrap();
    let answer = received
        .iter()
        .find(|r| r.get("id") == discover.get("id"))
        .unwrap();
    assert_eq!(answer["result"], document);
    // One chat request per scripted turn (the rest are `GET /v1/models`, which have no body).
    let chats = model
        .requests()
        .into_iter()
        .filter(Value::is_object)
        .count();
    assert_eq!(chats, 6);
}
