//! `rho-conformance-client`: the MCP client the official conformance suite drives, built only on
//! `rho-mcp` and used the way rho's sessions use it (connect, list, call, close).
//!
//! The suite's client contract (`@modelcontextprotocol/conformance`, pinned in
//! `tests/conformance/`): it starts one fixture server per scenario and runs
//! `rho-conformance-client <server-url>` with `MCP_CONFORMANCE_SCENARIO` (the scenario),
//! `MCP_CONFORMANCE_PROTOCOL_VERSION` (the revision under test) and, for some scenarios,
//! `MCP_CONFORMANCE_CONTEXT` (JSON, e.g. `toolCalls`). The suite judges what reaches the fixture;
//! this client only has to do what a host does for that scenario (including answering a form:
//! [`Defaults`] accepts every field's default). Everything it reports goes to
//! stderr (the suite keeps it as `stderr.txt`); it exits 0 when every step succeeded.
#![allow(clippy::print_stderr)] // stderr is this tool's report

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use rho_component::OAuthSpec;
use rho_component::{
    AskFuture, Asker, Form, HttpServerSpec, McpServerOrigin, McpServerSpec, McpTransport,
    QuestionAnswer, SamplingAnswer, SamplingRequest,
};
use rho_mcp::oauth::{Browser, BrowserError, BrowserFuture, Handover, LoginPolicy, OAuthAccess};
use rho_mcp::{ClientOptions, Connection, ServerTool};
use serde_json::{Map, Value, json};

/// Budgets stay well under the suite's 30 s per-scenario timeout, so a hang is reported by us
/// and costs the test little (every scenario finishes in about a second).
const BUDGET: Duration = Duration::from_secs(10);

/// One tool call the scenario asks for.
struct Call {
    tool: String,
    arguments: Map<String, Value>,
}

/// What a scenario needs the client to do once connected (the handshake and `tools/list` are
/// part of every connection).
enum Plan {
    /// Nothing more: connect, list, close.
    Connect,
    /// These calls, in order.
    Calls(Vec<Call>),
    /// Every tool the connection kept, with the required arguments made up from its schema.
    EveryTool,
    /// Send the input schema of `focal`, exactly as listed, to the `echo` tool.
    EchoSchema {
        focal: &'static str,
        echo: &'static str,
    },
}

/// The person a host would put forms in front of, for the suite: accepts every form with each
/// field's default (what `elicitation-sep1034-client-defaults` checks arrives typed), and
/// refuses sampling (no scenario asks for it).
struct Defaults;

impl Asker for Defaults {
    fn ask_form<'a>(&'a self, server: &'a str, form: Form) -> AskFuture<'a, QuestionAnswer> {
        Box::pin(async move {
            eprintln!("form from {server}: {:?}", form.message);
            let answers = form
                .fields
                .into_iter()
                .filter_map(|field| Some((field.name, field.default?)))
                .collect();
            QuestionAnswer::Accept(answers)
        })
    }

    fn sample<'a>(
        &'a self,
        _server: &'a str,
        _request: SamplingRequest,
    ) -> AskFuture<'a, SamplingAnswer> {
        Box::pin(async { SamplingAnswer::Refused("the conformance client has no model".into()) })
    }
}

/// The suite's authorization pages have no form: `/authorize` redirects at once. So the
/// "person" fetches the page without following redirects and takes the browser where the
/// `Location` points, which is rho's loopback listener (the suite's reference clients do the
/// first half the same way).
struct Headless;

impl Browser for Headless {
    fn open<'a>(&'a self, url: &'a str) -> BrowserFuture<'a> {
        Box::pin(async move {
            let http = reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .timeout(BUDGET)
                .build()
                .map_err(other)?;
            let page = http.get(url).send().await.map_err(other)?;
            let location = page
                .headers()
                .get("location")
                .and_then(|v| v.to_str().ok())
                .ok_or_else(|| {
                    BrowserError::Other(format!(
                        "the authorization page answered {} without a redirect",
                        page.status()
                    ))
                })?
                .to_owned();
            eprintln!("authorization page redirected to rho's listener");
            let back = http.get(&location).send().await.map_err(other)?;
            eprintln!("rho's listener answered {}", back.status());
            Ok(Handover::Opened)
        })
    }
}

/// A reason of the headless browser's, in its own words.
fn other(error: impl std::fmt::Display) -> BrowserError {
    BrowserError::Other(error.to_string())
}

/// The client id metadata document the suite's CIMD scenario expects (an `https` URL the
/// fixture accepts without fetching).
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// The variable the client secret of a pre-registered client is read from (its value comes
/// from the suite's context, through `ambient`).
const CLIENT_SECRET_VARIABLE: &str = "CONFORMANCE_CLIENT_SECRET";

/// What the client declares for a scenario: forms only where the scenario asks one, so every
/// other scenario sees the declarations of a run that cannot ask; for `auth/*`, a credential
/// store of its own and the headless browser.
fn options(scenario: &str, store: &std::path::Path) -> ClientOptions {
    ClientOptions {
        elicitation: scenario.starts_with("elicitation-"),
        oauth: scenario.starts_with("auth/").then(|| OAuthAccess {
            store: rho_config::CredentialStore::new(store.join("credentials")),
            login: LoginPolicy::Browser(Arc::new(Headless)),
        }),
        ..ClientOptions::default()
    }
}

fn call(tool: &str, arguments: Value) -> Call {
    Call {
        tool: tool.to_owned(),
        arguments: match arguments {
            Value::Object(map) => map,
            _ => Map::new(),
        },
    }
}

/// What each scenario of the suite asks of a client. `toolCalls` in the context win: the
/// fixture chose those arguments on purpose (encoding edge cases).
fn plan(scenario: &str, context: &Value) -> Result<Plan, String> {
    if let Some(calls) = context.get("toolCalls").and_then(Value::as_array) {
        let calls = calls
            .iter()
            .map(|c| {
                let tool = c
                    .get("name")
                    .and_then(Value::as_str)
                    .ok_or("a toolCalls entry has no name")?;
                Ok(call(tool, c.get("arguments").cloned().unwrap_or(json!({}))))
            })
            .collect::<Result<Vec<_>, String>>()?;
        return Ok(Plan::Calls(calls));
    }
    Ok(match scenario {
        // The handshake itself; per-request `_meta` and headers (the fixture refuses the first
        // request with -32022 to see the retry); a schema with a network `$ref` that must not
        // be fetched. Connecting (handshake and `tools/list`) is the whole exercise.
        "initialize" | "request-metadata" | "json-schema-ref-no-deref" => Plan::Connect,
        "tools_call" => Plan::Calls(vec![call("add_numbers", json!({"a": 2, "b": 3}))]),
        // The fixture closes the call's SSE stream early: the result arrives after a reconnect.
        "sse-retry" => Plan::Calls(vec![call("test_reconnection", json!({}))]),
        // The tool asks the client for a form (elicitation) while the call runs.
        "elicitation-sep1034-client-defaults" => {
            Plan::Calls(vec![call("test_client_elicitation_defaults", json!({}))])
        }
        // Multi round-trip requests: the first two tools answer `input_required`; the
        // unrelated call in between proves one call's round state does not leak into another.
        "sep-2322-client-request-state" => Plan::Calls(vec![
            call("test_mrtr_echo_state", json!({})),
            call("test_mrtr_unrelated", json!({})),
            call("test_mrtr_no_state", json!({})),
            call("test_mrtr_no_result_type", json!({})),
        ]),
        // `Mcp-Method`/`Mcp-Name` on every call; and only the tools kept after those with an
        // invalid `x-mcp-header` were refused (the fixture checks the valid one was called).
        "http-standard-headers" | "http-invalid-tool-headers" => Plan::EveryTool,
        // The listed schema goes back unchanged: nothing stripped from a 2020-12 schema.
        "json-schema-2020-12-preservation" => Plan::EchoSchema {
            focal: "json_schema_2020_12_tool",
            echo: "json_schema_echo",
        },
        // OAuth: connect (discovery, registration, login), then call every tool (where the
        // step-up, retry-limit and migration scenarios refuse tokens).
        auth if auth.starts_with("auth/") => Plan::EveryTool,
        other => return Err(format!("no behaviour is defined for scenario {other:?}")),
    })
}

/// Arguments for a tool's required properties, one plausible value per declared type.
fn made_up_arguments(tool: &ServerTool) -> Map<String, Value> {
    let schema = tool.definition.get("inputSchema");
    let properties = schema.and_then(|s| s.get("properties"));
    let required = schema
        .and_then(|s| s.get("required"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    required
        .iter()
        .filter_map(Value::as_str)
        .map(|name| {
            let kind = properties
                .and_then(|p| p.get(name))
                .and_then(|p| p.get("type"))
                .and_then(Value::as_str);
            let value = match kind {
                Some("integer" | "number") => json!(1),
                Some("boolean") => json!(true),
                Some("array") => json!([]),
                Some("object") => json!({}),
                _ => json!("conformance"),
            };
            (name.to_owned(), value)
        })
        .collect()
}

fn spec(url: &str, version: &str, scenario: &str, context: &Value) -> McpServerSpec {
    let mut spec = McpServerSpec::new(
        "conformance",
        McpServerOrigin::Config,
        McpTransport::StreamableHttp(HttpServerSpec {
            url: url.to_owned(),
            headers: vec![],
            headers_from_env: vec![],
        }),
    );
    spec.startup_timeout = BUDGET;
    spec.call_timeout = BUDGET;
    // The suite asks for one revision per run; its fixtures are not all dual-era.
    spec.protocol_version = (!version.is_empty()).then(|| version.to_owned());
    if scenario.starts_with("auth/") {
        let text = |key: &str| context.get(key).and_then(Value::as_str).map(str::to_owned);
        spec.oauth = Some(OAuthSpec {
            client_id: text("client_id"),
            client_secret_env: text("client_secret").map(|_| CLIENT_SECRET_VARIABLE.to_owned()),
            client_metadata_url: Some(CLIENT_METADATA_URL.to_owned()),
            scopes: vec![],
        });
    }
    spec
}

/// Runs the calls and reports each; the first failure does not stop the rest (later calls are
/// checks of their own).
async fn run_calls(connection: &Connection, calls: Vec<Call>) -> Result<(), String> {
    let mut failed = Vec::new();
    let asker: Arc<dyn Asker> = Arc::new(Defaults);
    for Call { tool, arguments } in calls {
        match connection
            .call_tool_with(
                &tool,
                Some(arguments),
                None,
                rho_mcp::Cancel::new(),
                Some(Arc::clone(&asker)),
            )
            .await
        {
            Ok(result) => eprintln!("called {tool}: {result}"),
            Err(e) => {
                eprintln!("call {tool} failed: {e}");
                failed.push(tool);
            }
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!("calls failed: {}", failed.join(", ")))
    }
}

async fn run(url: &str, scenario: &str, version: &str, context: &Value) -> Result<(), String> {
    let plan = plan(scenario, context)?;
    let store = tempfile::tempdir().map_err(|e| e.to_string())?;
    let secret = context.get("client_secret").and_then(Value::as_str);
    let ambient = |name: &str| match (name, secret) {
        (CLIENT_SECRET_VARIABLE, Some(secret)) => Some(secret.into()),
        _ => rho_mcp::process_ambient(name),
    };
    let connection = rho_mcp::connect_with(
        &spec(url, version, scenario, context),
        &ambient,
        &options(scenario, store.path()),
    )
    .await
    .map_err(|e| e.to_string())?;
    let negotiated = &connection.summary.protocol_version;
    eprintln!("connected: protocol {negotiated} (run for {version})");
    let names: Vec<&str> = connection.tools.iter().map(|t| t.name.as_str()).collect();
    eprintln!("tools: {names:?}");
    let outcome = match plan {
        Plan::Connect => Ok(()),
        Plan::Calls(calls) => run_calls(&connection, calls).await,
        Plan::EveryTool => {
            let calls = connection
                .tools
                .iter()
                .map(|t| Call {
                    tool: t.name.clone(),
                    arguments: made_up_arguments(t),
                })
                .collect();
            run_calls(&connection, calls).await
        }
        Plan::EchoSchema { focal, echo } => {
            match connection.tools.iter().find(|t| t.name == focal) {
                Some(tool) => {
                    let schema = tool.definition.get("inputSchema").cloned();
                    let calls = vec![call(echo, json!({ "schema": schema }))];
                    run_calls(&connection, calls).await
                }
                None => Err(format!("the server did not offer {focal}")),
            }
        }
    };
    connection.close().await;
    outcome
}

fn main() -> ExitCode {
    let Some(url) = std::env::args().nth(1) else {
        eprintln!("usage: rho-conformance-client <server-url>");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let version = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").unwrap_or_default();
    let context = match std::env::var("MCP_CONFORMANCE_CONTEXT") {
        Ok(text) => match serde_json::from_str(&text) {
            Ok(value) => value,
            Err(e) => {
                eprintln!("MCP_CONFORMANCE_CONTEXT is not JSON: {e}");
                return ExitCode::from(2);
            }
        },
        Err(_) => Value::Null,
    };
    eprintln!("scenario {scenario:?}, protocol version {version:?}, server {url}");
    // A worker a core, every driver enabled.
    let Ok(runtime) = tokio::runtime::Runtime::new().inspect_err(|e| {
        eprintln!("cannot start the async runtime: {e}");
    }) else {
        return ExitCode::FAILURE;
    };
    match runtime.block_on(run(&url, &scenario, &version, &context)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rho-conformance-client: {e}");
            ExitCode::FAILURE
        }
    }
}
