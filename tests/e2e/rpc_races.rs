//! The RPC dispatcher driven in-process through the channel transport, so a test decides when
//! each message becomes readable: aborts raced against completions must yield exactly one
//! response per request, and the dispatcher must keep serving afterwards.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rho_core::{ConfigSource, MountOptions, PathsEnv, ProviderFlags, Registry, RhoPaths};
use rho_e2e::{FakeModel, Sandbox};
use rho_rpc::{App, Inbound, RpcOptions, SessionStart};
use serde_json::{Value, json};

const FAKE_MODEL: &str = env!("CARGO_BIN_EXE_fake-model");

fn start_model(dir: &std::path::Path, script: &Value) -> (FakeModel, u16) {
    let model = FakeModel::start(FAKE_MODEL, dir, script);
    let port = model.port();
    (model, port)
}

async fn app(sandbox: &Sandbox, port: u16) -> App {
    let env = PathsEnv {
        home: Some(sandbox.home.clone().into()),
        rho_home: Some(sandbox.rho_home.clone().into()),
    };
    let paths = RhoPaths::resolve(&env, &sandbox.project).unwrap();
    let config = ConfigSource::Default(sandbox.rho_home.join("config.toml"));
    let registry = Registry::load(paths, &config);
    App::start(RpcOptions {
        registry,
        flags: ProviderFlags {
            endpoint: Some(format!("http://127.0.0.1:{port}/v1")),
            model: Some("m".into()),
            ..ProviderFlags::default()
        },
        ephemeral: true,
        start: SessionStart::New,
        mount: MountOptions::default(),
        ambient: Arc::new(|_| None),
    })
    .await
    .unwrap()
}

fn line(value: Value) -> Inbound {
    Inbound::Line(value.to_string().into_bytes())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aborts_raced_against_completions_get_exactly_one_response_each() {
    const ROUNDS: u64 = 150;
    let sandbox = Sandbox::new();
    let turns: Vec<Value> = (0..ROUNDS)
        .map(|i| json!({"content": "one two three four", "chunk_delay_ms": i % 3}))
        .collect();
    let (_model, port) = start_model(&sandbox.dir.path().join("model"), &Value::Array(turns));
    let (transport, mut peer) = rho_rpc::transport::channel();
    let server = tokio::spawn(rho_rpc::serve(app(&sandbox, port).await, transport));
    let first = peer.from_rho.recv().await.unwrap();
    assert!(first.contains("\"ready\""), "{first}");
    let mut responses: HashMap<u64, Vec<Value>> = HashMap::new();
    let mut aborted = 0;
    for round in 0..ROUNDS {
        let prompt_id = round * 2;
        let abort_id = prompt_id + 1;
        peer.to_rho
            .send(line(json!({"jsonrpc": "2.0", "id": prompt_id, "method": "prompt", "params": {"message": "go"}})))
            .await
            .unwrap();
        // Sweep the abort across the whole prompt: before the request, mid-stream, after.
        tokio::time::sleep(Duration::from_micros((round * 97) % 9000)).await;
        peer.to_rho
            .send(line(
                json!({"jsonrpc": "2.0", "id": abort_id, "method": "abort"}),
            ))
            .await
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while !(responses.contains_key(&prompt_id) && responses.contains_key(&abort_id)) {
            let remaining = deadline.saturating_duration_since(Instant::now());
            let text = tokio::time::timeout(remaining, peer.from_rho.recv())
                .await
                .unwrap_or_else(|_| panic!("round {round}: no response; got {responses:?}"))
                .unwrap();
            let message: Value = serde_json::from_str(&text).unwrap();
            if let Some(id) = message.get("id").and_then(Value::as_u64) {
                responses.entry(id).or_default().push(message);
            }
        }
        let prompt = &responses[&prompt_id][0];
        let finish = prompt["result"]["finishReason"]
            .as_str()
            .unwrap_or_else(|| panic!("round {round}: the prompt failed: {prompt}"));
        assert!(finish == "stop" || finish == "aborted", "{prompt}");
        let abort = &responses[&abort_id][0];
        match finish {
            // The abort acknowledged before the prompt ended.
            "aborted" => {
                aborted += 1;
                assert_eq!(abort["result"], json!({}), "{abort}");
            }
            // The abort came first and was acknowledged, but too late to matter, or came after
            // the prompt ended and found nothing to abort.
            _ => assert!(
                abort["result"] == json!({}) || abort["error"]["code"] == -32600,
                "{abort}"
            ),
        }
    }
    // Drain anything late: no second response for any id may ever arrive.
    tokio::time::sleep(Duration::from_millis(100)).await;
    while let Ok(text) = peer.from_rho.try_recv() {
        let message: Value = serde_json::from_str(&text).unwrap();
        if let Some(id) = message.get("id").and_then(Value::as_u64) {
            responses.entry(id).or_default().push(message);
        }
    }
    for (id, list) in &responses {
        assert_eq!(
            list.len(),
            1,
            "id {id} answered {} times: {list:?}",
            list.len()
        );
    }
    assert_eq!(responses.len() as u64, ROUNDS * 2);
    assert!(
        aborted > 0,
        "no round was actually aborted: the sweep missed the prompts"
    );
    assert!(
        aborted < ROUNDS,
        "every round was aborted: the sweep missed completions"
    );
    // Still serving, and EOF ends the dispatcher.
    peer.to_rho
        .send(line(
            json!({"jsonrpc": "2.0", "id": "last", "method": "getState"}),
        ))
        .await
        .unwrap();
    let text = tokio::time::timeout(Duration::from_secs(5), peer.from_rho.recv())
        .await
        .unwrap()
        .unwrap();
    assert!(
        text.contains("\"id\":\"last\"") && text.contains("\"result\""),
        "{text}"
    );
    drop(peer.to_rho);
    tokio::time::timeout(Duration::from_secs(5), server)
        .await
        .expect("serve returns after EOF")
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn messages_injected_mid_turn_are_handled_while_the_turn_runs() {
    let sandbox = Sandbox::new();
    let (_model, port) = start_model(
        &sandbox.dir.path().join("model"),
        &json!([{"content": "a b c d e f g h", "chunk_delay_ms": 40}]),
    );
    let (transport, mut peer) = rho_rpc::transport::channel();
    let server = tokio::spawn(rho_rpc::serve(app(&sandbox, port).await, transport));
    assert!(peer.from_rho.recv().await.unwrap().contains("ready"));
    peer.to_rho
        .send(line(
            json!({"jsonrpc": "2.0", "id": 1, "method": "prompt", "params": {"message": "go"}}),
        ))
        .await
        .unwrap();
    // Wait for the first streamed chunk, then steer: the answer comes before the turn ends.
    loop {
        let text = peer.from_rho.recv().await.unwrap();
        if text.contains("message/delta") {
            break;
        }
    }
    peer.to_rho
        .send(line(json!({"jsonrpc": "2.0", "id": 2, "method": "prompt", "params": {"message": "later", "steer": true}})))
        .await
        .unwrap();
    // Queued behind the turn: answered only after the prompt's response.
    peer.to_rho
        .send(line(
            json!({"jsonrpc": "2.0", "id": 3, "method": "getMessages"}),
        ))
        .await
        .unwrap();
    let mut order = Vec::new();
    while order.len() < 3 {
        let text = peer.from_rho.recv().await.unwrap();
        let message: Value = serde_json::from_str(&text).unwrap();
        if let Some(id) = message.get("id").and_then(Value::as_u64) {
            order.push((id, message));
        }
    }
    let ids: Vec<u64> = order.iter().map(|(id, _)| *id).collect();
    assert_eq!(
        ids,
        [2, 1, 3],
        "steering is answered mid-turn; getMessages waits"
    );
    // The steering message had no seam in this turn (no tool batch), so it waits in the queue.
    let messages = order[2].1["result"]["messages"].as_array().unwrap().clone();
    assert_eq!(messages.len(), 2, "{messages:?}");
    drop(peer.to_rho);
    tokio::time::timeout(Duration::from_secs(5), server)
        .await
        .unwrap()
        .unwrap();
}
