//! Loading: components that are not tool providers or not components at all fail with an error
//! naming them; invalid tool declarations drop only that tool; the artifact cache is used,
//! shared between hosts and survives corruption.

use rho_wasm::{WasmError, WasmHost};
use serde_json::json;

use crate::support::{self, FixtureTool, World, call, tools};

const OTHER_WORLD: &str = r#"
package acme:other@0.1.0;

world thing {
    export run: func() -> u32;
}
"#;

const SNEAKY_WORLD: &str = r#"
package acme:secret@1.0.0;

interface api {
    peek: func() -> u32;
}

world sneaky {
    include rho:tool/tool-provider@0.1.0;
    import api;
}
"#;

#[tokio::test]
async fn a_component_of_another_world_is_refused_by_name() {
    let host = WasmHost::new(None).unwrap();
    let bytes = support::encode_with(
        r#"(module (func (export "run") (result i32) (i32.const 7)))"#,
        "acme:other/thing@0.1.0",
        &[("other.wit", OTHER_WORLD)],
    );
    let err = host
        .load(&support::spec("other"), &bytes)
        .await
        .unwrap_err();
    assert!(matches!(err, WasmError::WrongWorld { .. }), "{err}");
    let message = err.to_string();
    assert!(
        message.starts_with(
            "component fixtures/other does not implement rho:tool/tool-provider@0.1.x"
        ),
        "{message}"
    );
    assert!(message.contains("rho:tool/tools"), "{message}");
}

#[tokio::test]
async fn a_component_importing_what_rho_does_not_provide_is_refused() {
    let host = WasmHost::new(None).unwrap();
    let wat = support::core_wat(&[tools::echo()], World::ToolProvider).replacen(
        "(module",
        r#"(module (import "acme:secret/api@1.0.0" "peek" (func (result i32)))"#,
        1,
    );
    let bytes = support::encode_with(
        &wat,
        "acme:secret/sneaky@1.0.0",
        &[("sneaky.wit", SNEAKY_WORLD)],
    );
    let err = host
        .load(&support::spec("sneaky"), &bytes)
        .await
        .unwrap_err();
    assert!(matches!(err, WasmError::WrongWorld { .. }), "{err}");
    assert!(err.to_string().contains("fixtures/sneaky"), "{err}");
    assert!(err.to_string().contains("acme:secret/api"), "{err}");
}

#[tokio::test]
async fn a_guest_of_the_same_minor_line_loads_and_another_major_does_not() {
    let host = WasmHost::new(None).unwrap();
    let bytes = support::component_for_version(&[tools::echo(), tools::chatty()], "0.1.3");
    let newer = host.load(&support::spec("newer"), &bytes).await.unwrap();
    assert_eq!(newer.tools().len(), 2);
    let ctx = rho_component::ToolContext::new(std::env::temp_dir());
    let out = call(&newer, "chatty", json!({}), &ctx).await;
    assert_eq!(out.text, "done");

    let bytes = support::component_for_version(&[tools::echo()], "0.2.0");
    let err = host.load(&support::spec("next"), &bytes).await.unwrap_err();
    assert!(matches!(err, WasmError::WrongWorld { .. }), "{err}");
}

#[tokio::test]
async fn truncated_corrupt_and_core_module_bytes_are_load_errors() {
    let host = WasmHost::new(None).unwrap();
    let good = support::component(&[tools::echo()], World::ToolProvider);

    let truncated = &good[..good.len() / 2];
    let mut corrupt = good.clone();
    for b in &mut corrupt[8..40] {
        *b = 0xff;
    }
    let core = wat::parse_str("(module)").unwrap();
    for (what, bytes) in [
        ("truncated", truncated.to_vec()),
        ("corrupt", corrupt),
        ("core", core),
        ("empty", Vec::new()),
        ("text", b"hello".to_vec()),
    ] {
        let err = host.load(&support::spec(what), &bytes).await.unwrap_err();
        assert!(matches!(err, WasmError::Compile { .. }), "{what}: {err}");
        assert!(
            err.to_string().starts_with(&format!(
                "component fixtures/{what} is not a valid wasm component"
            )),
            "{what}: {err}"
        );
    }
    // The host is unaffected.
    let component = host.load(&support::spec("good"), &good).await.unwrap();
    assert_eq!(component.tools().len(), 1);
}

#[tokio::test]
async fn invalid_tool_declarations_drop_only_that_tool() {
    let host = WasmHost::new(None).unwrap();
    let mut bad_schema = tools::echo();
    bad_schema.name = "bad-schema".to_owned();
    bad_schema.input_schema = r#"{"type":"array"}"#.to_owned();
    let mut bad_name = tools::echo();
    bad_name.name = "bad name".to_owned();
    let fixtures: Vec<FixtureTool> = vec![tools::echo(), bad_schema, bad_name, tools::echo()];
    let component = support::load(&host, &support::spec("mixed"), &fixtures).await;
    assert_eq!(component.tools().len(), 1);
    let reasons: Vec<String> = component
        .rejected()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(reasons.len(), 3, "{reasons:#?}");
    assert!(reasons[0].contains("\"bad-schema\""), "{}", reasons[0]);
    assert!(reasons[1].contains("\"bad name\""), "{}", reasons[1]);
    assert!(reasons[2].contains("another tool"), "{}", reasons[2]);
}

#[tokio::test]
async fn list_tools_runs_under_the_component_limits() {
    let host = WasmHost::new(None).unwrap();
    let mut spec = support::spec("slow-list");
    spec.timeout = std::time::Duration::from_millis(100);
    let wat = support::core_wat(&[tools::echo()], World::ToolProvider).replace(
        "(func (export \"rho:tool/tools@0.1.0#list-tools\") (result i32)",
        "(func (export \"rho:tool/tools@0.1.0#list-tools\") (result i32) (loop $l (br $l))",
    );
    let bytes = support::encode(&wat, "rho:tool/tool-provider@0.1.0");
    let err = host.load(&spec, &bytes).await.unwrap_err();
    assert!(matches!(err, WasmError::ListTools { .. }), "{err}");
    assert_eq!(
        err.to_string(),
        "component fixtures/slow-list failed to list its tools: exceeded its 100 ms budget"
    );
}

/// A long call timeout does not stretch the listing: every session start waits for it.
#[tokio::test]
async fn list_tools_is_capped_at_its_own_budget_whatever_the_call_timeout() {
    let host = WasmHost::new(None).unwrap();
    let mut spec = support::spec("slow-list");
    spec.timeout = std::time::Duration::from_secs(600);
    let wat = support::core_wat(&[tools::echo()], World::ToolProvider).replace(
        "(func (export \"rho:tool/tools@0.1.0#list-tools\") (result i32)",
        "(func (export \"rho:tool/tools@0.1.0#list-tools\") (result i32) (loop $l (br $l))",
    );
    let bytes = support::encode(&wat, "rho:tool/tool-provider@0.1.0");
    let started = std::time::Instant::now();
    let err = host.load(&spec, &bytes).await.unwrap_err();
    let took = started.elapsed();
    assert_eq!(
        err.to_string(),
        format!(
            "component fixtures/slow-list failed to list its tools: exceeded its {} ms budget",
            rho_wasm::LIST_TOOLS_TIMEOUT.as_millis()
        )
    );
    assert!(
        took >= rho_wasm::LIST_TOOLS_TIMEOUT && took < rho_wasm::LIST_TOOLS_TIMEOUT * 2,
        "{took:?}"
    );
}

fn cache_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "cwasm"))
        .collect();
    files.sort();
    files
}

#[tokio::test]
async fn compiled_components_are_cached_and_shared_between_hosts() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("wasm-cache");
    let bytes = support::component(&[tools::echo()], World::ToolProvider);
    let spec = support::spec("cached");

    let first = WasmHost::new(Some(cache.clone())).unwrap();
    let cold = first.load(&spec, &bytes).await.unwrap();
    assert!(!cold.from_cache());
    let files = cache_files(&cache);
    assert_eq!(files.len(), 1, "{files:?}");
    let warm = first.load(&spec, &bytes).await.unwrap();
    assert!(warm.from_cache());

    // Another host (as in a later rho process) reuses the artifact without compiling.
    let second = WasmHost::new(Some(cache.clone())).unwrap();
    let reused = second.load(&spec, &bytes).await.unwrap();
    assert!(reused.from_cache());
    let out = call(
        &reused,
        "echo",
        json!({"cached": true}),
        &rho_component::ToolContext::new(dir.path()),
    )
    .await;
    assert_eq!(out.text, r#"{"cached":true}"#);

    // Other bytes are another entry.
    let other = support::component(&[tools::echo(), tools::trap()], World::ToolProvider);
    assert!(!second.load(&spec, &other).await.unwrap().from_cache());
    assert_eq!(cache_files(&cache).len(), 2);
}

#[tokio::test]
async fn a_corrupt_cache_entry_is_recompiled() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = support::component(&[tools::echo()], World::ToolProvider);
    let spec = support::spec("corrupt-cache");
    let host = WasmHost::new(Some(dir.path().to_path_buf())).unwrap();
    assert!(!host.load(&spec, &bytes).await.unwrap().from_cache());
    let file = cache_files(dir.path()).pop().unwrap();

    // A bit flipped in the middle of the machine code.
    let mut data = std::fs::read(&file).unwrap();
    let middle = data.len() / 2;
    data[middle] ^= 0x40;
    std::fs::write(&file, &data).unwrap();
    let reloaded = host.load(&spec, &bytes).await.unwrap();
    assert!(!reloaded.from_cache());
    let out = call(
        &reloaded,
        "echo",
        json!({}),
        &rho_component::ToolContext::new(dir.path()),
    )
    .await;
    assert!(!out.is_error, "{}", out.text);
    // The entry was rewritten and is used again.
    assert!(host.load(&spec, &bytes).await.unwrap().from_cache());

    // A truncated file, and garbage.
    std::fs::write(&file, &data[..100]).unwrap();
    assert!(!host.load(&spec, &bytes).await.unwrap().from_cache());
    std::fs::write(&file, b"garbage").unwrap();
    assert!(!host.load(&spec, &bytes).await.unwrap().from_cache());
    assert!(host.load(&spec, &bytes).await.unwrap().from_cache());
}

#[test]
fn loading_is_a_send_future() {
    fn assert_send<T: Send>(_: &T) {}
    let host = WasmHost::new(None).unwrap();
    let spec = support::spec("send");
    let loading = host.load(&spec, &[]);
    assert_send(&loading);
}

/// A released WIT package is frozen: changing `rho:tool@0.1.0` in place would break every
/// component built against it without any version telling so. A change must go into a new
/// version directory beside it (`plugin-sdk/wit/rho-tool-<version>/`), where
/// `tests/wit_semver.rs` checks that versions on one semver line stay compatible.
#[test]
fn the_released_wit_package_is_frozen() {
    use sha2::Digest;
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../plugin-sdk/wit/rho-tool-0.1.0/tool.wit");
    let text = std::fs::read(&path).unwrap();
    let digest: String = sha2::Sha256::digest(&text)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(
        digest, "65590878e02fcc2bfb38e6636fc75d139f5a861d73b125c4557bfdb28b6ef03d",
        "rho:tool@0.1.0 is released and frozen: put changes in a new version directory"
    );
}
