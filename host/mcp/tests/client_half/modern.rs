//! The Python `mcp` 2.3 server, 2026-07-28 era: questions ride inside the call as input
//! requests, and the declarations ride in every request.

use std::collections::BTreeMap;

use rho_component::{FieldKind, QuestionAnswer, SamplingPolicy};
use rho_mcp::{Cancel, ClientOptions};
use serde_json::json;

use crate::askers::*;
use crate::peers::*;

async fn modern_questions(wire: Wire) {
    let (mut spec, _peer) = modern(wire).await;
    spec.sampling = SamplingPolicy::Ask;
    let (options, _root) = all_capabilities("modern ws");
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

    let decliner = TestAsker::new(|_| QuestionAnswer::Decline);
    let result = call(&connection, "profile", json!({}), Some(decliner)).await;
    assert_eq!(text_of(&result), "not accepted: decline", "{wire:?}");
    let result = call(&connection, "profile", json!({}), None).await;
    assert_eq!(text_of(&result), "not accepted: decline", "{wire:?}");

    let sampler = TestAsker::new(|_| QuestionAnswer::Decline);
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
