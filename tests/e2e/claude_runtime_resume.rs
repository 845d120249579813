//! Session files of the Claude CLI runtime, with the real Claude Code CLI against
//! `fake-anthropic`: a turn is recorded as rho's usual entries plus Claude's session id;
//! `--continue` resumes Claude's session (the earlier turn reaches the model again) and shows
//! rho's history; `--ephemeral` writes nothing; rho's own runtime continues a Claude file from
//! its recorded history; a Claude runtime resuming a file of rho's own runtime, or a Claude
//! session Claude no longer has, starts a new Claude session and says so.

use std::path::{Path, PathBuf};

use rho_e2e::*;
use serde_json::{Value, json};

use crate::claude_runtime::{API_KEY, ClaudeSandbox};

const FAKE_MODEL: &str = env!("CARGO_BIN_EXE_fake-model");

/// Every file under `dir`.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .flat_map(|entry| {
            let path = entry.path();
            if path.is_dir() {
                files_under(&path)
            } else {
                vec![path]
            }
        })
        .collect()
}

/// The conversation texts of the last request that offered Claude's tools.
fn last_agent_texts(claude: &ClaudeSandbox) -> Vec<String> {
    let requests = claude.requests();
    let last = requests
        .iter()
        .rev()
        .find(|r| r["tools"].as_u64().unwrap_or(0) > 0)
        .unwrap_or_else(|| panic!("no agent request: {requests:#?}"));
    last["texts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_owned())
        .collect()
}

/// rho's own notes in `notes` (`notice`), one a line; none of them is reasoning.
fn rho_notes(notes: &[Value]) -> String {
    let reasoning: String = notes
        .iter()
        .filter(|n| n["method"] == "reasoning/delta")
        .filter_map(|n| n["params"]["delta"].as_str())
        .collect();
    assert!(
        !reasoning.contains("rho"),
        "a note went out as reasoning: {reasoning}"
    );
    notes
        .iter()
        .filter(|n| n["method"] == "notice")
        .filter_map(|n| n["params"]["message"].as_str())
        .map(|m| format!("{m}\n"))
        .collect()
}

#[test]
fn a_claude_session_is_recorded_and_continue_resumes_claudes_session() {
    let claude = ClaudeSandbox::new(
        |_| {
            json!([
                {"text": "I will remember kiwi."},
                {"text": "The word was kiwi."}
            ])
        },
        "",
    );
    let mut rpc = claude.rpc(&[]);
    let reply = rpc.call(1, "prompt", json!({"message": "remember the word kiwi"}));
    assert_eq!(reply["reply"], "I will remember kiwi.", "{reply}");
    let state = rpc.call(2, "getState", json!({}));
    let claude_id = state["sessionId"].as_str().unwrap().to_owned();
    let file = PathBuf::from(state["sessionFile"].as_str().unwrap());
    assert!(
        file.starts_with(claude.sandbox.rho_home.join("sessions")),
        "{state}"
    );
    assert_eq!(rpc.finish(), 0);

    // rho's usual entries, and Claude's session id in an entry of its own; no secret.
    let text = std::fs::read_to_string(&file).unwrap();
    let entries: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(entries[0]["type"], "header", "{text}");
    let kinds: Vec<&str> = entries
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["header", "message", "message", "usage", "claude_session"],
        "{text}"
    );
    assert_eq!(entries[1]["message"]["content"], "remember the word kiwi");
    assert_eq!(entries[2]["message"]["content"], "I will remember kiwi.");
    assert_eq!(entries[4]["id"], claude_id.as_str());
    assert!(
        !text.contains(API_KEY),
        "the API key reached the session file"
    );

    // --continue resumes it: history shown, and Claude resumed its own session.
    let mut rpc = claude.rpc(&["--continue"]);
    let messages = rpc.call(1, "getMessages", json!({}));
    assert_eq!(messages["messages"][0]["content"], "remember the word kiwi");
    assert_eq!(messages["messages"][1]["content"], "I will remember kiwi.");
    rpc.request(2, "prompt", json!({"message": "which word?"}));
    let (notes, response) = rpc.response(2);
    assert_eq!(
        response["result"]["reply"], "The word was kiwi.",
        "{response}"
    );
    assert_eq!(rho_notes(&notes), "", "{notes:#?}");
    let texts = last_agent_texts(&claude);
    for earlier in [
        "remember the word kiwi",
        "I will remember kiwi.",
        "which word?",
    ] {
        assert!(
            texts.iter().any(|t| t.contains(earlier)),
            "{earlier:?} did not reach the model: {texts:?}"
        );
    }
    let state = rpc.call(3, "getState", json!({}));
    assert_eq!(state["sessionFile"], json!(file), "{state}");
    let sessions = rpc.call(4, "listSessions", json!({}));
    assert_eq!(
        sessions["sessions"].as_array().unwrap().len(),
        1,
        "{sessions}"
    );
    assert_eq!(sessions["sessions"][0]["messages"], 4, "{sessions}");
    assert_eq!(rpc.finish(), 0);
    claude.assert_contained();

    // rho's own runtime continues the same file from its recorded history.
    let model = FakeModel::start(
        FAKE_MODEL,
        &claude.sandbox.dir.path().join("rho-model"),
        &json!([{"content": "Still kiwi.", "expect": {"any_message_contains": "The word was kiwi."}}]),
    );
    let mut rpc = Rpc::start(&claude.sandbox, &model, &["--continue"]);
    let reply = rpc.call(1, "prompt", json!({"message": "and now?"}));
    assert_eq!(reply["reply"], "Still kiwi.", "{reply}");
    assert_eq!(rpc.finish(), 0);
}

#[test]
fn an_ephemeral_claude_session_writes_no_file() {
    let claude = ClaudeSandbox::new(|_| json!([{"text": "Nothing kept."}]), "");
    let mut rpc = claude.rpc(&["--ephemeral"]);
    let reply = rpc.call(1, "prompt", json!({"message": "hello"}));
    assert_eq!(reply["reply"], "Nothing kept.", "{reply}");
    let state = rpc.call(2, "getState", json!({}));
    assert_eq!(state["sessionFile"], Value::Null, "{state}");
    assert_eq!(rpc.finish(), 0);
    let written = files_under(&claude.sandbox.rho_home.join("sessions"));
    assert!(written.is_empty(), "{written:?}");
}

#[test]
fn claude_starts_afresh_and_says_so_on_a_rho_file_or_a_claude_session_it_lost() {
    let claude = ClaudeSandbox::new(
        |_| {
            json!([
                {"text": "A new Claude session."},
                {"text": "Another new one."}
            ])
        },
        "",
    );
    // A session of rho's own runtime first.
    let model = FakeModel::start(
        FAKE_MODEL,
        &claude.sandbox.dir.path().join("rho-model"),
        &json!([{"content": "Noted, mango."}]),
    );
    let mut rpc = Rpc::start(&claude.sandbox, &model, &[]);
    rpc.call(1, "prompt", json!({"message": "remember mango"}));
    assert_eq!(rpc.finish(), 0);

    // The Claude runtime continues it: history shown, Claude starts afresh and it is said.
    let mut rpc = claude.rpc(&["--continue"]);
    let messages = rpc.call(1, "getMessages", json!({}));
    assert_eq!(messages["messages"][0]["content"], "remember mango");
    rpc.request(2, "prompt", json!({"message": "what fruit?"}));
    let (notes, response) = rpc.response(2);
    assert_eq!(
        response["result"]["reply"], "A new Claude session.",
        "{response}"
    );
    assert!(
        rho_notes(&notes).contains("not recorded by the Claude runtime"),
        "{notes:#?}"
    );
    let texts = last_agent_texts(&claude);
    assert!(!texts.iter().any(|t| t.contains("mango")), "{texts:?}");
    assert_eq!(rpc.finish(), 0);

    // Claude loses its session (its files gone): the next --continue says so and goes on.
    std::fs::remove_dir_all(claude.sandbox.home.join(".claude/projects")).unwrap();
    let mut rpc = claude.rpc(&["--continue"]);
    rpc.request(1, "prompt", json!({"message": "still there?"}));
    let (notes, response) = rpc.response(1);
    assert_eq!(
        response["result"]["reply"], "Another new one.",
        "{response}"
    );
    assert!(
        rho_notes(&notes).contains("could not resume its session"),
        "{notes:#?}"
    );
    let messages = rpc.call(2, "getMessages", json!({}));
    assert_eq!(messages["messages"][0]["content"], "remember mango");
    assert_eq!(rpc.finish(), 0);
    // (Not `assert_contained`: rho's own runtime, first, rightly started the MCP server.)
}
