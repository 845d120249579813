//! Capabilities: `read-file` within the workspace and only with read access, the environment
//! limited to the declared names minus secrets, progress reported to the caller.

use std::sync::{Arc, Mutex};

use rho_component::{ToolContext, ToolProgress, WorkspaceAccess};
use rho_wasm::WasmHost;
use serde_json::json;

use crate::support::{self, World, call, tools};

#[tokio::test]
async fn read_file_stays_inside_the_workspace() {
    let workspace = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir(workspace.path().join("data")).unwrap();
    std::fs::write(workspace.path().join("data/hello.txt"), "hello, guest").unwrap();
    std::fs::write(outside.path().join("secret.txt"), "secret").unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("secret.txt"),
        workspace.path().join("escape.txt"),
    )
    .unwrap();

    let host = WasmHost::new(None).unwrap();
    let mut spec = support::spec("reader");
    spec.workspace = WorkspaceAccess::Read;
    let reader = support::load(&host, &spec, &[tools::read()]).await;
    let ctx = ToolContext::new(workspace.path());

    let out = call(&reader, "read", json!({"path": "data/hello.txt"}), &ctx).await;
    assert!(!out.is_error, "{}", out.text);
    assert_eq!(out.text, "hello, guest");
    let out = call(
        &reader,
        "read",
        json!({"path": "/workspace/data/hello.txt"}),
        &ctx,
    )
    .await;
    assert_eq!(out.text, "hello, guest");

    let absolute = outside.path().join("secret.txt");
    for path in [
        "../secret.txt",
        "data/../../x",
        absolute.to_str().unwrap(),
        "escape.txt",
    ] {
        let out = call(&reader, "read", json!({ "path": path }), &ctx).await;
        assert!(out.is_error, "{path}: {}", out.text);
        assert!(
            out.text.contains("outside the workspace"),
            "{path}: {}",
            out.text
        );
        assert!(!out.text.contains("secret\n") && out.text != "secret");
    }

    spec.name = "blind".to_owned();
    spec.workspace = WorkspaceAccess::None;
    let blind = support::load(&host, &spec, &[tools::read()]).await;
    let out = call(&blind, "read", json!({"path": "data/hello.txt"}), &ctx).await;
    assert!(out.is_error);
    assert!(out.text.contains("no workspace access"), "{}", out.text);
}

/// A FIFO (or a file swapped for one) never blocks `read-file`: it is opened without waiting
/// for a writer and refused by its handle; a directory is refused the same way.
#[tokio::test]
async fn read_file_refuses_fifos_and_directories_without_blocking() {
    let workspace = tempfile::tempdir().unwrap();
    let fifo = workspace.path().join("pipe");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    std::fs::create_dir(workspace.path().join("dir")).unwrap();
    let host = WasmHost::new(None).unwrap();
    let mut spec = support::spec("fifo");
    spec.workspace = WorkspaceAccess::Read;
    let reader = support::load(&host, &spec, &[tools::read()]).await;
    let ctx = ToolContext::new(workspace.path());
    let out = tokio::time::timeout(
        std::time::Duration::from_secs(5),
        call(&reader, "read", json!({"path": "pipe"}), &ctx),
    )
    .await
    .expect("read-file blocked on a FIFO");
    assert!(out.is_error);
    assert!(
        out.text.contains("`pipe` is not a regular file"),
        "{}",
        out.text
    );
    let out = call(&reader, "read", json!({"path": "dir"}), &ctx).await;
    assert!(out.text.contains("`dir` is a directory"), "{}", out.text);
}

#[tokio::test]
async fn the_environment_holds_only_declared_non_secret_variables() {
    let host = WasmHost::new(None).unwrap();
    let mut spec = support::spec("env");
    // PATH and HOME exist in any test environment; the third name is never set.
    spec.env = vec![
        "PATH".to_owned(),
        "HOME".to_owned(),
        "RHO_WASM_TEST_NEVER_SET".to_owned(),
    ];
    let bytes = support::component(&[tools::env()], World::WithEnv);
    let component = host.load(&spec, &bytes).await.unwrap();
    let mut ctx = ToolContext::new(std::env::temp_dir());
    ctx.hidden_env = vec!["HOME".to_owned()];
    let out = call(&component, "env", json!({}), &ctx).await;
    assert!(!out.is_error, "{}", out.text);
    let path = std::env::var("PATH").unwrap();
    assert_eq!(out.text, format!("PATH\n\n{path}"));
}

#[tokio::test]
async fn progress_reaches_the_caller_and_logs_do_not_fail() {
    let host = WasmHost::new(None).unwrap();
    let component = support::load(&host, &support::spec("chatty"), &[tools::chatty()]).await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut ctx = ToolContext::new(std::env::temp_dir());
    let sink = seen.clone();
    ctx.progress = Some(Arc::new(move |p: ToolProgress| {
        sink.lock().unwrap().push(p)
    }));
    let out = call(&component, "chatty", json!({}), &ctx).await;
    assert!(!out.is_error, "{}", out.text);
    assert_eq!(out.text, "done");
    assert_eq!(
        *seen.lock().unwrap(),
        vec![ToolProgress {
            progress: 0.5,
            total: Some(1.0),
            message: None
        }]
    );
}

/// A guest cannot flood the session with progress: reports past the per-call cap are dropped.
#[tokio::test]
async fn progress_reports_are_capped_per_call() {
    let host = WasmHost::new(None).unwrap();
    let component = support::load(&host, &support::spec("flood"), &[tools::progress_flood()]).await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut ctx = ToolContext::new(std::env::temp_dir());
    let sink = seen.clone();
    ctx.progress = Some(Arc::new(move |p: ToolProgress| {
        sink.lock().unwrap().push(p.progress)
    }));
    for _ in 0..2 {
        seen.lock().unwrap().clear();
        let out = call(&component, "flood", json!({}), &ctx).await;
        assert_eq!(out.text, "done");
        // The first 1,000 arrive, in order; each call has its own allowance.
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 1000);
        assert_eq!(seen[999], 999.0);
    }
}

#[tokio::test]
async fn there_is_no_network() {
    let host = WasmHost::new(None).unwrap();
    let mut spec = support::spec("net");
    // Even a component with every other capability gets no socket.
    spec.workspace = WorkspaceAccess::ReadWrite;
    let bytes = support::component(&[tools::tcp_socket()], World::WithSockets);
    let component = host.load(&spec, &bytes).await.unwrap();
    let out = call(
        &component,
        "tcp",
        json!({}),
        &ToolContext::new(std::env::temp_dir()),
    )
    .await;
    assert!(!out.is_error, "{}", out.text);
    // `E` + `error-code::access-denied` (1).
    assert_eq!(out.text, "E1");
}
