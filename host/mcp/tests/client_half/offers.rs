//! Prompts, resources and completions against server-everything, and a list change followed.

use std::collections::BTreeMap;
use std::time::Duration;

use rho_mcp::{ClientOptions, McpError};
use serde_json::json;

use crate::peers::*;

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
