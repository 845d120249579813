//! Roots and questions (forms, sampling) against server-everything, the legacy era: server
//! requests during a call, routed to the one call in flight.

use std::sync::Arc;
use std::time::Duration;

use rho_component::{FieldKind, QuestionAnswer, SamplingPolicy};
use rho_mcp::ClientOptions;
use serde_json::json;

use crate::askers::*;
use crate::peers::*;

async fn roots_and_questions(wire: Wire) {
    let (mut spec, _peer) = everything(wire).await;
    spec.sampling = SamplingPolicy::Ask;
    let (options, _root) = everything_options();
    let connection = connect(&spec, &options).await;
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

    let decliner = TestAsker::new(|_| QuestionAnswer::Decline);
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
    let dismisser = TestAsker::new(|_| QuestionAnswer::Cancel);
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

    let sampler = TestAsker::new(|_| QuestionAnswer::Decline);
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
    let (denied_options, _denied_root) = everything_options();
    let denied = connect(&spec, &denied_options).await;
    assert!(!offers(&denied, "trigger-sampling-request"));
    assert!(offers(&denied, "trigger-elicitation-request"));
    assert!(offers(&denied, "get-roots-list"));
    denied.close().await;
    // A run without a model: no sampling either.
    spec.sampling = SamplingPolicy::Ask;
    let (options, _root) = everything_options();
    let options = ClientOptions {
        sampling: false,
        ..options
    };
    let no_model = connect(&spec, &options).await;
    assert!(!offers(&no_model, "trigger-sampling-request"));
    no_model.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_two_calls_in_flight_a_question_is_declined_unasked() {
    let (spec, _peer) = everything(Wire::Stdio).await;
    let (options, _root) = everything_options();
    let connection = connect(&spec, &options).await;
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

/// A legacy server with one tool, `slow_ask`, that works 0.6 s, asks for a form, and works
/// 0.6 s more before answering with what it got back.
const SLOW_ASKER_SERVER: &str = r#"
import json, sys, time
def send(message):
    print(json.dumps(message), flush=True)
for line in sys.stdin:
    message = json.loads(line)
    method, id = message.get("method"), message.get("id")
    if id is None:
        continue
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": id, "result": {"protocolVersion": "2025-11-25",
              "capabilities": {"tools": {}}, "serverInfo": {"name": "slow", "version": "1"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": id, "result": {"tools": [{"name": "slow_ask",
              "inputSchema": {"type": "object"}}]}})
    elif method == "tools/call":
        time.sleep(0.6)
        schema = {"type": "object", "properties": {"name": {"type": "string"}}}
        send({"jsonrpc": "2.0", "id": "q1", "method": "elicitation/create",
              "params": {"message": "name?", "requestedSchema": schema}})
        answer = json.loads(sys.stdin.readline())
        time.sleep(0.6)
        text = json.dumps(answer.get("result"))
        send({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}]}})
    else:
        send({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "no"}})
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_question_pauses_the_call_budget_and_is_bounded_by_it() {
    // 1.2 s of server work plus a 0.8 s answer: over a 1.5 s budget unless the time the
    // question was open is given back.
    let mut spec = spec("slow", crate::startup::python(SLOW_ASKER_SERVER));
    spec.protocol_version = Some("2025-11-25".into());
    spec.call_timeout = Duration::from_millis(1500);
    let (options, _root) = everything_options();
    let connection = connect(&spec, &options).await;
    let slow = Arc::new(SlowAsker {
        delay: Some(Duration::from_millis(800)),
    });
    let result = call(&connection, "slow_ask", json!({}), Some(slow)).await;
    assert!(text_of(&result).contains("Slow Ada"), "{result}");
    // Nobody answers: after the call budget the question is declined and the call goes on.
    let absent = Arc::new(SlowAsker { delay: None });
    let result = call(&connection, "slow_ask", json!({}), Some(absent)).await;
    assert!(text_of(&result).contains("decline"), "{result}");
    connection.close().await;
}
