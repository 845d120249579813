//! The client half of MCP against real servers: roots, questions (elicitation, sampling),
//! prompts, resources and completions, with `@modelcontextprotocol/server-everything` (legacy
//! era, stdio and Streamable HTTP) and a Python `mcp` 2.3 server (2026-07-28 era, input
//! requests inside the call), plus start-up failures reported with the server's stderr.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rho_component::{
    AskFuture, Asker, FieldKind, Form, FormAnswer, HttpServerSpec, McpServerOrigin, McpServerSpec,
    McpTransport, SamplingAnswer, SamplingPolicy, SamplingRequest, StdioCommand, StdioServerSpec,
};
use rho_mcp::{Cancel, ClientOptions, Connection, McpError};
use serde_json::{Value, json};

// ---- locating the peers (a missing one fails the test, saying how to install it) ----

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn everything_bin() -> PathBuf {
    let bin = repo_root().join("tests/peers/node_modules/.bin/mcp-server-everything");
    assert!(
        bin.exists(),
        "{} is missing: install the test peers with `npm ci --prefix tests/peers`",
        bin.display()
    );
    bin
}

fn modern_script() -> PathBuf {
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
struct Peer(std::process::Child);

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

async fn wait_for_port(port: u16) {
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

fn spec(id: &str, transport: McpTransport) -> McpServerSpec {
    let mut spec = McpServerSpec::new(id, McpServerOrigin::Config, transport);
    spec.startup_timeout = Duration::from_secs(20);
    spec.call_timeout = Duration::from_secs(20);
    spec
}

fn stdio(command: StdioCommand, args: Vec<String>) -> McpTransport {
    McpTransport::Stdio(StdioServerSpec {
        command,
        args,
        env: vec![],
        env_from_env: vec![],
        cwd: None,
    })
}

fn http(port: u16) -> McpTransport {
    McpTransport::StreamableHttp(HttpServerSpec {
        url: format!("http://127.0.0.1:{port}/mcp"),
        headers: vec![],
        headers_from_env: vec![],
    })
}

#[derive(Clone, Copy, Debug)]
enum Wire {
    Stdio,
    Http,
}

/// A server-everything spec for `wire` (and the HTTP server process, when there is one).
async fn everything(wire: Wire) -> (McpServerSpec, Option<Peer>) {
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
            let child = std::process::Command::new(bin)
                .arg("streamableHttp")
                .env("PORT", port.to_string())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap();
            let peer = Peer(child);
            wait_for_port(port).await;
            (spec("everything", http(port)), Some(peer))
        }
    }
}

async fn modern(wire: Wire) -> (McpServerSpec, Option<Peer>) {
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
            let child = std::process::Command::new("python3")
                .args([script.as_str(), "http", &port.to_string()])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap();
            let peer = Peer(child);
            wait_for_port(port).await;
            (spec("modern", http(port)), Some(peer))
        }
    }
}

async fn connect(spec: &McpServerSpec, options: &ClientOptions) -> Connection {
    rho_mcp::connect_with(spec, &rho_mcp::process_ambient, options)
        .await
        .unwrap_or_else(|e| panic!("connect {}: {e}", spec.id))
}

fn workspace(name: &str) -> PathBuf {
    let dir = std::env::temp_dir()
        .join(format!("rho-mcp-client-half-{}", std::process::id()))
        .join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn everything_options() -> ClientOptions {
    ClientOptions {
        roots: Some(workspace("my workspace")),
        elicitation: true,
        sampling: true,
    }
}

fn offers(connection: &Connection, tool: &str) -> bool {
    connection.tools.iter().any(|t| t.name == tool)
}

/// The text of a tool result.
fn text_of(result: &Value) -> String {
    result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| b["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

async fn call(
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

// ---- a test asker ----

/// Answers forms with `form`, sampling with a fixed reply, and records what it was asked.
struct TestAsker {
    form: Box<dyn Fn(&Form) -> FormAnswer + Send + Sync>,
    forms: Mutex<Vec<(String, Form)>>,
    samples: Mutex<Vec<(String, SamplingRequest)>>,
}

impl TestAsker {
    fn new(form: impl Fn(&Form) -> FormAnswer + Send + Sync + 'static) -> Arc<Self> {
        Arc::new(Self {
            form: Box::new(form),
            forms: Mutex::default(),
            samples: Mutex::default(),
        })
    }

    fn forms(&self) -> Vec<(String, Form)> {
        self.forms.lock().unwrap().clone()
    }
}

impl Asker for TestAsker {
    fn ask_form<'a>(&'a self, server: &'a str, form: Form) -> AskFuture<'a, FormAnswer> {
        Box::pin(async move {
            let answer = (self.form)(&form);
            self.forms.lock().unwrap().push((server.to_owned(), form));
            answer
        })
    }

    fn sample<'a>(
        &'a self,
        server: &'a str,
        request: SamplingRequest,
    ) -> AskFuture<'a, SamplingAnswer> {
        Box::pin(async move {
            self.samples
                .lock()
                .unwrap()
                .push((server.to_owned(), request));
            SamplingAnswer::Reply {
                model: "test-model".into(),
                text: "a fixed reply".into(),
                stop_reason: "endTurn".into(),
            }
        })
    }
}

fn accept(pairs: &[(&str, &str)]) -> FormAnswer {
    FormAnswer::Accept(
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
    )
}

// ---- server-everything (legacy era) ----

async fn roots_and_questions(wire: Wire) {
    let (mut spec, _peer) = everything(wire).await;
    spec.sampling = SamplingPolicy::Ask;
    let connection = connect(&spec, &everything_options()).await;
    assert!(connection.is_legacy(), "{wire:?}");

    let roots = text_of(&call(&connection, "get-roots-list", json!({}), None).await);
    assert!(roots.contains("(1 total)"), "{wire:?}: {roots}");
    assert!(roots.contains("my workspace"), "{wire:?}: {roots}");
    assert!(roots.contains("/my%20workspace"), "{wire:?}: {roots}");
    assert!(roots.contains("URI: file:///"), "{wire:?}: {roots}");

    let asker = TestAsker::new(|_| {
        accept(&[
            ("name", "Ada"),
            ("check", "yes"),
            ("integer", "7"),
            ("number", "2.5"),
            ("untitledSingleSelectEnum", "Joey"),
            ("untitledMultipleSelectEnum", "Guitar, Piano"),
            ("titledSingleSelectEnum", "Wonder Woman"),
            ("titledMultipleSelectEnum", "Tuna"),
            ("legacyTitledEnum", "Dogs"),
        ])
    });
    let result = call(
        &connection,
        "trigger-elicitation-request",
        json!({}),
        Some(asker.clone()),
    )
    .await;
    let text = text_of(&result);
    for typed in [
        r#""name": "Ada""#,
        r#""check": true"#,
        r#""integer": 7"#,
        r#""number": 2.5"#,
        r#""untitledSingleSelectEnum": "Joey""#,
        r#""titledSingleSelectEnum": "hero-3""#,
        r#""legacyTitledEnum": "pet-2""#,
        r#""fish-1""#,
        r#""Piano""#,
    ] {
        assert!(
            text.contains(typed),
            "{wire:?}: {typed} missing from {text}"
        );
    }
    assert!(
        !text.contains("firstLine"),
        "unanswered optional fields are omitted: {text}"
    );
    let forms = asker.forms();
    assert_eq!(forms.len(), 1);
    let (server, form) = &forms[0];
    assert_eq!(server, "everything");
    assert_eq!(form.fields.len(), 13);
    assert_eq!(form.fields[0].name, "name", "the schema's own order");
    assert!(form.fields[0].required);
    let first_line = form.fields.iter().find(|f| f.name == "firstLine").unwrap();
    assert_eq!(
        first_line.default.as_deref(),
        Some("It was a dark and stormy night.")
    );
    let integer = form.fields.iter().find(|f| f.name == "integer").unwrap();
    assert_eq!(integer.kind, FieldKind::Integer);
    assert!(
        integer.help.as_deref().unwrap().contains("at least 1"),
        "{:?}",
        integer.help
    );
    let titled = form
        .fields
        .iter()
        .find(|f| f.name == "titledMultipleSelectEnum")
        .unwrap();
    assert_eq!(titled.kind, FieldKind::MultiChoice);
    assert_eq!(titled.choices[0].title.as_deref(), Some("Tuna"));

    let decliner = TestAsker::new(|_| FormAnswer::Decline);
    let result = call(
        &connection,
        "trigger-elicitation-request",
        json!({}),
        Some(decliner),
    )
    .await;
    assert!(text_of(&result).contains("declined"), "{wire:?}: {result}");

    // An answer that cannot carry its type declines rather than sending a string.
    let wrong = TestAsker::new(|_| accept(&[("name", "Ada"), ("integer", "seven")]));
    let result = call(
        &connection,
        "trigger-elicitation-request",
        json!({}),
        Some(wrong),
    )
    .await;
    assert!(text_of(&result).contains("declined"), "{wire:?}: {result}");

    // Cancel is the server's to hear.
    let dismisser = TestAsker::new(|_| FormAnswer::Cancel);
    let result = call(
        &connection,
        "trigger-elicitation-request",
        json!({}),
        Some(dismisser),
    )
    .await;
    assert!(text_of(&result).contains("cancelled"), "{wire:?}: {result}");

    // A call without an asker is in flight but cannot ask.
    let result = call(&connection, "trigger-elicitation-request", json!({}), None).await;
    assert!(text_of(&result).contains("declined"), "{wire:?}: {result}");

    let sampler = TestAsker::new(|_| FormAnswer::Decline);
    let result = call(
        &connection,
        "trigger-sampling-request",
        json!({"prompt": "tell me a joke", "maxTokens": 12}),
        Some(sampler.clone()),
    )
    .await;
    let text = text_of(&result);
    assert!(text.contains("a fixed reply"), "{wire:?}: {text}");
    assert!(text.contains("test-model"), "{wire:?}: {text}");
    assert!(text.contains("assistant"), "{wire:?}: {text}");
    let samples = sampler.samples.lock().unwrap().clone();
    assert_eq!(samples.len(), 1);
    let (server, request) = &samples[0];
    assert_eq!(server, "everything");
    assert_eq!(request.max_tokens, 12);
    assert_eq!(
        request.system_prompt.as_deref(),
        Some("You are a helpful test server.")
    );
    assert!(
        request.messages[0].text.contains("tell me a joke"),
        "{request:?}"
    );
    connection.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_over_stdio_gets_roots_forms_and_sampling() {
    roots_and_questions(Wire::Stdio).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_over_http_gets_roots_forms_and_sampling() {
    roots_and_questions(Wire::Http).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_is_not_declared_is_not_offered() {
    // server-everything registers its roots, elicitation and sampling tools only for clients
    // that declare the capability, which makes the declarations observable.
    let (mut spec, _peer) = everything(Wire::Stdio).await;
    spec.sampling = SamplingPolicy::Ask;
    let bare = connect(&spec, &ClientOptions::default()).await;
    for tool in [
        "get-roots-list",
        "trigger-elicitation-request",
        "trigger-sampling-request",
    ] {
        assert!(
            !offers(&bare, tool),
            "{tool} offered to a client that declared nothing"
        );
    }
    assert!(offers(&bare, "echo"));
    bare.close().await;
    // Config left at `deny`: no sampling, whatever the run could do.
    spec.sampling = SamplingPolicy::Deny;
    let denied = connect(&spec, &everything_options()).await;
    assert!(!offers(&denied, "trigger-sampling-request"));
    assert!(offers(&denied, "trigger-elicitation-request"));
    assert!(offers(&denied, "get-roots-list"));
    denied.close().await;
    // A run without a model: no sampling either.
    spec.sampling = SamplingPolicy::Ask;
    let options = ClientOptions {
        sampling: false,
        ..everything_options()
    };
    let no_model = connect(&spec, &options).await;
    assert!(!offers(&no_model, "trigger-sampling-request"));
    no_model.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_two_calls_in_flight_a_question_is_declined_unasked() {
    let (spec, _peer) = everything(Wire::Stdio).await;
    let connection = connect(&spec, &everything_options()).await;
    let asker = TestAsker::new(|_| accept(&[("name", "Ada")]));
    let long = call(
        &connection,
        "trigger-long-running-operation",
        json!({"duration": 2, "steps": 2}),
        Some(asker.clone()),
    );
    let asking = async {
        // Let the long call get going first.
        tokio::time::sleep(Duration::from_millis(300)).await;
        call(
            &connection,
            "trigger-elicitation-request",
            json!({}),
            Some(asker.clone()),
        )
        .await
    };
    let (_, asked) = tokio::join!(long, asking);
    assert!(text_of(&asked).contains("declined"), "{asked}");
    assert!(asker.forms().is_empty(), "nobody was asked");
    connection.close().await;
}

async fn prompts_resources_completions(wire: Wire) {
    let (spec, _peer) = everything(wire).await;
    let connection = connect(&spec, &ClientOptions::default()).await;
    assert!(
        connection.summary.prompts && connection.summary.resources,
        "{wire:?}"
    );
    assert!(connection.supports_completions());
    let prompts = connection.prompts();
    let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
    for name in [
        "simple-prompt",
        "args-prompt",
        "completable-prompt",
        "resource-prompt",
    ] {
        assert!(names.contains(&name), "{wire:?}: {name} not in {names:?}");
    }
    let args = prompts.iter().find(|p| p.name == "args-prompt").unwrap();
    assert_eq!(args.title.as_deref(), Some("Arguments Prompt"));
    assert!(
        args.arguments
            .iter()
            .any(|a| a.name == "city" && a.required)
    );
    assert!(
        args.arguments
            .iter()
            .any(|a| a.name == "state" && !a.required)
    );

    let arguments = BTreeMap::from([("city".to_owned(), "Oslo".to_owned())]);
    let messages = connection
        .get_prompt("args-prompt", arguments, None)
        .await
        .unwrap();
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0].text, "What's weather in Oslo?");
    let arguments = BTreeMap::from([
        ("resourceType".to_owned(), "Text".to_owned()),
        ("resourceId".to_owned(), "2".to_owned()),
    ]);
    let messages = connection
        .get_prompt("resource-prompt", arguments, None)
        .await
        .unwrap();
    let all: String = messages
        .iter()
        .map(|m| m.text.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        all.contains("[resource demo://resource/dynamic/text/2]"),
        "{all}"
    );
    assert!(
        all.contains("Resource 2: This is a plaintext resource"),
        "{all}"
    );
    let missing = connection
        .get_prompt("no-such-prompt", BTreeMap::new(), None)
        .await;
    assert!(
        matches!(missing, Err(McpError::Prompt { .. })),
        "{missing:?}"
    );

    let departments = connection
        .complete("completable-prompt", "department", "E", BTreeMap::new())
        .await;
    assert_eq!(departments, ["Engineering"]);
    let context = BTreeMap::from([("department".to_owned(), "Sales".to_owned())]);
    let people = connection
        .complete("completable-prompt", "name", "", context)
        .await;
    assert_eq!(people, ["David", "Eve", "Frank"]);
    // Asked again: the same answer (from the cache).
    let again = connection
        .complete("completable-prompt", "department", "E", BTreeMap::new())
        .await;
    assert_eq!(again, ["Engineering"]);

    let resources = connection.resources();
    let plain = resources.iter().filter(|r| !r.template).count();
    assert!(plain > 0, "{wire:?}: {resources:?}");
    let templates: Vec<&str> = resources
        .iter()
        .filter(|r| r.template)
        .map(|r| r.uri.as_str())
        .collect();
    assert!(
        templates.contains(&"demo://resource/dynamic/text/{resourceId}"),
        "{templates:?}"
    );
    assert!(
        templates.contains(&"demo://resource/dynamic/blob/{resourceId}"),
        "{templates:?}"
    );
    assert!(
        resources.iter().position(|r| r.template) > resources.iter().position(|r| !r.template),
        "resources first, then templates"
    );
    let text = connection
        .read_resource("demo://resource/dynamic/text/1")
        .await
        .unwrap();
    assert!(
        text.text
            .starts_with("Resource 1: This is a plaintext resource"),
        "{text:?}"
    );
    assert!(text.image.is_none() && !text.truncated);
    let blob = connection
        .read_resource("demo://resource/dynamic/blob/1")
        .await
        .unwrap();
    assert!(blob.text.starts_with("[resource text/plain, "), "{blob:?}");
    assert!(
        !blob.text.contains("UmVzb3VyY2"),
        "no base64 in the text: {blob:?}"
    );
    let missing = connection.read_resource("demo://nothing/here").await;
    match missing {
        Err(McpError::Resource { uri, .. }) => assert_eq!(uri, "demo://nothing/here"),
        other => panic!("{other:?}"),
    }
    connection.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resource_list_change_is_relisted_by_the_connection() {
    let (spec, _peer) = everything(Wire::Stdio).await;
    let connection = connect(&spec, &ClientOptions::default()).await;
    let before = connection.resources().len();
    let arguments = json!({"name": "hello.txt.gz", "data": "data:text/plain;base64,aGVsbG8=", "outputType": "resourceLink"});
    call(&connection, "gzip-file-as-resource", arguments, None).await;
    // The server registers a session resource and says its list changed; the snapshot
    // follows without anyone asking.
    let mut added = None;
    for _ in 0..100 {
        added = connection
            .resources()
            .into_iter()
            .find(|r| r.uri.ends_with("hello.txt.gz"));
        if added.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let added = added.unwrap_or_else(|| panic!("not relisted: {:?}", connection.resources()));
    assert_eq!(connection.resources().len(), before + 1);
    let read = connection.read_resource(&added.uri).await.unwrap();
    assert!(
        read.text.starts_with("[resource application/gzip, "),
        "{read:?}"
    );
    connection.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_over_stdio_offers_prompts_resources_and_completions() {
    prompts_resources_completions(Wire::Stdio).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_over_http_offers_prompts_resources_and_completions() {
    prompts_resources_completions(Wire::Http).await;
}

// ---- the Python mcp 2.3 server (2026-07-28 era: questions ride inside the call) ----

async fn modern_questions(wire: Wire) {
    let (mut spec, _peer) = modern(wire).await;
    spec.sampling = SamplingPolicy::Ask;
    let options = ClientOptions {
        roots: Some(workspace("modern ws")),
        elicitation: true,
        sampling: true,
    };
    let connection = connect(&spec, &options).await;
    assert_eq!(
        connection.summary.protocol_version, "2026-07-28",
        "{wire:?}"
    );

    let asker = TestAsker::new(|form| {
        assert_eq!(form.message, "Tell rho's tests about yourself");
        accept(&[("name", "Ada"), ("age", "36"), ("subscribe", "y")])
    });
    let result = call(&connection, "profile", json!({}), Some(asker.clone())).await;
    assert_eq!(
        text_of(&result),
        "accepted name='Ada' age=36 subscribe=True",
        "{wire:?}"
    );
    let forms = asker.forms();
    assert_eq!(forms.len(), 1);
    let subscribe = forms[0]
        .1
        .fields
        .iter()
        .find(|f| f.name == "subscribe")
        .unwrap();
    assert_eq!(subscribe.kind, FieldKind::Boolean);
    assert_eq!(subscribe.default.as_deref(), Some("false"));

    let decliner = TestAsker::new(|_| FormAnswer::Decline);
    let result = call(&connection, "profile", json!({}), Some(decliner)).await;
    assert_eq!(text_of(&result), "not accepted: decline", "{wire:?}");
    let result = call(&connection, "profile", json!({}), None).await;
    assert_eq!(text_of(&result), "not accepted: decline", "{wire:?}");

    let sampler = TestAsker::new(|_| FormAnswer::Decline);
    let result = call(
        &connection,
        "summarize",
        json!({"topic": "otters"}),
        Some(sampler.clone()),
    )
    .await;
    assert_eq!(
        text_of(&result),
        "model=test-model text=a fixed reply",
        "{wire:?}"
    );
    let samples = sampler.samples.lock().unwrap().clone();
    assert_eq!(samples[0].1.messages[0].text, "Write about otters");
    assert_eq!(samples[0].1.system_prompt.as_deref(), Some("Be brief."));
    // Without an asker the sampling request is refused, and the call says why.
    let refused = connection
        .call_tool(
            "summarize",
            json!({"topic": "x"}).as_object().cloned(),
            None,
            Cancel::new(),
        )
        .await;
    assert!(
        refused
            .as_ref()
            .is_err_and(|e| e.to_string().contains("sampling refused")),
        "{refused:?}"
    );

    let roots = text_of(&call(&connection, "roots", json!({}), None).await);
    assert!(roots.starts_with("file:///"), "{wire:?}: {roots}");
    assert!(
        roots.ends_with("/modern%20ws modern ws"),
        "{wire:?}: {roots}"
    );

    assert_eq!(connection.prompts().len(), 1);
    let arguments = BTreeMap::from([("name".to_owned(), "Grace".to_owned())]);
    let messages = connection
        .get_prompt("greet", arguments, None)
        .await
        .unwrap();
    assert_eq!(messages[0].text, "Please greet Grace warmly.");
    let resources = connection.resources();
    assert_eq!(resources[0].uri, "memo://modern/note");
    let note = connection
        .read_resource("memo://modern/note")
        .await
        .unwrap();
    assert_eq!(note.text, "a note from the modern server");
    connection.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn modern_server_over_stdio_asks_inside_the_call() {
    modern_questions(Wire::Stdio).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn modern_server_over_http_asks_inside_the_call() {
    modern_questions(Wire::Http).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_modern_server_reads_the_declarations_in_each_request() {
    // 2026-07-28 requests carry the client's capabilities in their `_meta`; declaring no
    // roots, rho is told so by the server instead of being asked.
    let (spec, _peer) = modern(Wire::Stdio).await;
    let connection = connect(&spec, &ClientOptions::default()).await;
    let refused = connection
        .call_tool("roots", Some(serde_json::Map::new()), None, Cancel::new())
        .await;
    assert!(
        refused.as_ref().is_err_and(|e| e
            .to_string()
            .contains("did not declare the roots capability")),
        "{refused:?}"
    );
    connection.close().await;
}

// ---- start-up failures ----

fn python(code: &str) -> McpTransport {
    stdio(
        StdioCommand::Bare("python3".into()),
        vec!["-c".into(), code.into()],
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_failing_its_handshake_is_reported_with_its_stderr_redacted() {
    let code = "import os, sys\n\
                sys.stderr.write('starting\\n')\n\
                sys.stderr.write('fatal: bad token ' + os.environ['TOKEN'] + '\\n')\n\
                sys.exit(3)";
    let mut spec = spec("failing", python(code));
    if let McpTransport::Stdio(stdio) = &mut spec.transport {
        stdio.env_from_env = vec![("TOKEN".into(), "RHO_TEST_CANARY".into())];
    }
    let ambient = |name: &str| (name == "RHO_TEST_CANARY").then(|| "canary-s3cr3t".into());
    let error = rho_mcp::connect_with(&spec, &ambient, &ClientOptions::default())
        .await
        .err()
        .expect("the handshake fails");
    let message = error.to_string();
    assert!(message.contains("handshake failed"), "{message}");
    assert!(message.contains("fatal: bad token [redacted]"), "{message}");
    assert!(message.contains("starting"), "{message}");
    assert!(!message.contains("canary-s3cr3t"), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_discovery_failure_closes_the_session_instead_of_killing_it() {
    // A legacy server that shakes hands, refuses tools/list, and records how it ended: a
    // closed stdin (the bounded close) rather than a kill (drop).
    let marker = workspace("discovery").join("ended");
    let _ = std::fs::remove_file(&marker);
    let code = format!(
        r#"
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    method, id = message.get("method"), message.get("id")
    if id is None:
        continue
    if method == "initialize":
        result = {{"protocolVersion": "2025-11-25", "capabilities": {{"tools": {{}}}}, "serverInfo": {{"name": "half", "version": "1"}}}}
        print(json.dumps({{"jsonrpc": "2.0", "id": id, "result": result}}), flush=True)
    else:
        error = {{"code": -32601, "message": "no " + str(method)}}
        print(json.dumps({{"jsonrpc": "2.0", "id": id, "error": error}}), flush=True)
open({marker:?}, "w").write("stdin closed")
"#,
        marker = marker.display().to_string()
    );
    let spec = spec("half", python(&code));
    let error = rho_mcp::connect_with(&spec, &rho_mcp::process_ambient, &ClientOptions::default())
        .await
        .err()
        .expect("discovery fails");
    assert!(error.to_string().contains("tools/list failed"), "{error}");
    assert_eq!(
        std::fs::read_to_string(&marker).unwrap_or_default(),
        "stdin closed"
    );
}
