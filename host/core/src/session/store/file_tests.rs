//! Tests of the session files on disk: created lazily and owner-only, torn lines closed, entries read back.
#![allow(clippy::unwrap_used)]

use std::os::unix::fs::PermissionsExt;

use super::tests::close_torn;
use super::*;

#[test]
fn files_are_created_lazily_and_privately_and_torn_lines_are_closed() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("sessions/p");
    let mut file = SessionFile::create(&sessions, Path::new("/w"), "m").unwrap();
    assert!(
        !file.path().exists(),
        "nothing is written before the first entry"
    );
    file.append(&Entry::Message {
        message: ChatMessage::user("one"),
    })
    .unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(file.path()), 0o600);
    assert_eq!(mode(&sessions), 0o700);
    let path = close_torn(file, b"{\"type\":\"message\",\"message\":{\"role\":\"us");
    let mut file = SessionFile::open(&path).unwrap();
    file.append(&Entry::Message {
        message: ChatMessage::user("two"),
    })
    .unwrap();
    let loaded = load(&path).unwrap();
    let texts: Vec<&str> = loaded.messages.iter().map(|m| m.content.as_str()).collect();
    assert_eq!(texts, ["one", "two"]);
    assert_eq!(loaded.skipped_lines, 1);
}

fn toolset(server: &str, digest: &str) -> ServerToolset {
    ServerToolset {
        server: server.to_owned(),
        transport: rho_component::Transport::Stdio,
        live: true,
        tools: 2,
        resources: 0,
        prompts: 1,
        sampling: false,
        digest: digest.to_owned(),
    }
}

#[test]
fn toolset_entries_wait_for_the_conversation_and_resume_with_the_last_digest() {
    let dir = tempfile::tempdir().unwrap();
    let mut file = SessionFile::create(dir.path(), Path::new("/w"), "m").unwrap();
    file.note(Entry::ToolsetInitialized(toolset("a", "1111")))
        .unwrap();
    assert!(!file.path().exists(), "evidence alone creates no file");
    file.append(&Entry::Message {
        message: ChatMessage::user("one"),
    })
    .unwrap();
    file.note(Entry::ToolsetClosed(toolset("a", "2222")))
        .unwrap();
    file.note(Entry::ToolsetInitialized(toolset("b", "3333")))
        .unwrap();
    let text = std::fs::read_to_string(file.path()).unwrap();
    let kinds: Vec<String> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["type"].to_string())
        .collect();
    assert_eq!(
        kinds,
        [
            "\"header\"",
            "\"toolset_initialized\"",
            "\"message\"",
            "\"toolset_closed\"",
            "\"toolset_initialized\""
        ]
    );
    assert!(
        text.contains(r#"{"type":"toolset_initialized","server":"a","transport":"stdio","live":true,"tools":2,"resources":0,"prompts":1,"sampling":false,"digest":"1111"}"#),
        "{text}"
    );
    let loaded = load(file.path()).unwrap();
    assert_eq!(loaded.toolset_digests.get("a").unwrap(), "2222");
    assert_eq!(loaded.toolset_digests.get("b").unwrap(), "3333");
    assert_eq!(loaded.skipped_lines, 0);
    assert_eq!(loaded.messages.len(), 1);
}

#[test]
fn entries_of_a_kind_this_rho_does_not_know_are_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    std::fs::write(
        &path,
        "{\"type\":\"header\",\"version\":1,\"id\":\"s\",\"cwd\":\"/w\",\"created\":0,\"model\":\"m\"}\n\
         {\"type\":\"toolset_future\",\"server\":\"a\"}\n\
         {\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n",
    )
    .unwrap();
    let loaded = load(&path).unwrap();
    assert_eq!(loaded.messages.len(), 1);
    assert_eq!(loaded.skipped_lines, 1);
    assert!(loaded.toolset_digests.is_empty());
}

#[test]
fn project_keys_keep_similar_paths_apart() {
    let root = Path::new("/s");
    assert_ne!(
        project_dir(root, Path::new("/tmp/k/a")),
        project_dir(root, Path::new("/tmp/k-a"))
    );
    let key = project_dir(root, Path::new("/home/u/project"));
    let name = key.file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with("home-u-project-"), "{name}");
}

#[test]
fn the_claude_session_entry_is_spelled_plainly_kept_until_a_clear_and_listed_as_usual() {
    let entry = Entry::ClaudeSession {
        id: "5f0c7a9e-claude".into(),
    };
    assert_eq!(
        serde_json::to_string(&entry).unwrap(),
        r#"{"type":"claude_session","id":"5f0c7a9e-claude"}"#
    );
    let dir = tempfile::tempdir().unwrap();
    let mut file = SessionFile::create(dir.path(), Path::new("/w"), "").unwrap();
    file.append(&Entry::Message {
        message: ChatMessage::user("remember kiwi"),
    })
    .unwrap();
    file.append(&Entry::Message {
        message: ChatMessage::assistant("kiwi noted", vec![]),
    })
    .unwrap();
    file.append(&Entry::ClaudeSession { id: "first".into() })
        .unwrap();
    file.append(&Entry::ClaudeSession {
        id: "second".into(),
    })
    .unwrap();
    let path = file.path().to_path_buf();
    let loaded = load(&path).unwrap();
    assert_eq!(loaded.claude_session.as_deref(), Some("second"));
    assert_eq!(loaded.messages.len(), 2);
    assert_eq!(loaded.skipped_lines, 0);
    let listed = list(dir.path(), Path::new("/w"));
    assert_eq!(listed[0].messages, 2);
    assert_eq!(listed[0].first_prompt.as_deref(), Some("remember kiwi"));
    // A clear ends the Claude session with the conversation; a file of rho's own runtime has
    // none.
    file.append(&Entry::Clear).unwrap();
    assert_eq!(load(&path).unwrap().claude_session, None);
    file.append(&Entry::ClaudeSession { id: "third".into() })
        .unwrap();
    assert_eq!(
        load(&path).unwrap().claude_session.as_deref(),
        Some("third")
    );
}
