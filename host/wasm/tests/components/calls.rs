//! Calls: round trips, and every way a guest can misbehave ending as a failed output while the
//! host keeps serving.

use std::time::{Duration, Instant};

use rho_component::ToolContext;
use rho_wasm::WasmHost;
use serde_json::json;

use crate::support::{self, call, load, tools};

fn context() -> ToolContext {
    ToolContext::new(std::env::temp_dir())
}

#[tokio::test]
async fn tools_are_listed_and_called() {
    let host = WasmHost::new(None).unwrap();
    let component = load(
        &host,
        &support::spec("basic"),
        &[tools::echo(), tools::structured(), tools::fails()],
    )
    .await;
    let names: Vec<&str> = component.tools().iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["echo", "structured", "fails"]);
    assert!(component.rejected().is_empty());
    assert_eq!(component.identity(), "fixtures/basic");
    assert!(!component.from_cache());
    let echo = &component.tools()[0];
    assert_eq!(echo.description, "the echo fixture");
    assert_eq!(echo.input_schema, json!({"type": "object"}));
    assert_eq!(
        component.tools()[1].output_schema,
        Some(json!({"type": "object"}))
    );

    let ctx = context();
    let out = call(&component, "echo", json!({"a": [1, 2]}), &ctx).await;
    assert!(!out.is_error, "{}", out.text);
    assert_eq!(out.text, r#"{"a":[1,2]}"#);
    let out = call(&component, "echo", serde_json::Value::Null, &ctx).await;
    assert_eq!(out.text, "{}");
    let out = call(&component, "echo", json!([1]), &ctx).await;
    assert!(
        out.is_error && out.text.contains("must be a JSON object"),
        "{}",
        out.text
    );

    let out = call(&component, "structured", json!({}), &ctx).await;
    assert!(!out.is_error, "{}", out.text);
    assert_eq!(out.structured, Some(json!({"ok": true, "n": 3})));
    // The tool's own text is what the model reads; the structured content rides along.
    assert_eq!(out.text, "mirrored text");

    let out = call(&component, "fails", json!({}), &ctx).await;
    assert!(out.is_error);
    assert_eq!(out.text, "the disk is full");

    let out = call(&component, "nope", json!({}), &ctx).await;
    assert!(out.is_error);
    assert!(out.text.starts_with("unknown tool `nope`"), "{}", out.text);
}

#[tokio::test]
async fn an_infinite_loop_ends_at_the_deadline_and_the_host_keeps_serving() {
    let host = WasmHost::new(None).unwrap();
    let mut spec = support::spec("loop");
    spec.timeout = Duration::from_millis(200);
    let component = load(&host, &spec, &[tools::spin(), tools::echo()]).await;
    let ctx = context();
    let started = Instant::now();
    let out = call(&component, "spin", json!({}), &ctx).await;
    let elapsed = started.elapsed();
    assert!(out.is_error);
    assert_eq!(
        out.text,
        "component fixtures/loop exceeded its 200 ms budget"
    );
    assert!(elapsed >= Duration::from_millis(200), "{elapsed:?}");
    // Deadline plus one 10 ms tick, with generous slack for a loaded 2-core CI machine.
    assert!(elapsed < Duration::from_millis(1000), "{elapsed:?}");
    let out = call(&component, "echo", json!({}), &ctx).await;
    assert!(!out.is_error, "{}", out.text);
}

#[tokio::test]
async fn cancellation_stops_a_loop_that_never_calls_the_host() {
    let host = WasmHost::new(None).unwrap();
    let mut spec = support::spec("cancel");
    spec.timeout = Duration::from_secs(30);
    let component = load(&host, &spec, &[tools::spin(), tools::polls_cancel()]).await;

    for tool in ["spin", "polls-cancel"] {
        let ctx = context();
        let cancel = ctx.cancel.clone();
        let canceller = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            cancel.cancel();
        });
        let started = Instant::now();
        let out = call(&component, tool, json!({}), &ctx).await;
        let elapsed = started.elapsed();
        canceller.join().unwrap();
        assert!(out.is_error);
        // A guest that polls `is-cancelled` stops itself within its grace and returns its
        // own `cancelled` error; one that never looks is stopped when the grace ends.
        let expected = if tool == "spin" {
            "component fixtures/cancel was cancelled".to_owned()
        } else {
            format!("`{tool}` was cancelled")
        };
        assert!(out.text.contains(&expected), "{tool}: {}", out.text);
        // 100 ms, plus the grace for the spinning one, plus one tick, with slack for a
        // loaded machine.
        assert!(
            elapsed < Duration::from_millis(1000) + rho_wasm::CANCEL_GRACE,
            "{tool}: {elapsed:?}"
        );
        if tool == "spin" {
            assert!(
                elapsed >= Duration::from_millis(100) + rho_wasm::CANCEL_GRACE,
                "the grace was not given: {elapsed:?}"
            );
        }
    }

    // Already cancelled: nothing runs.
    let ctx = context();
    ctx.cancel.cancel();
    let out = call(&component, "spin", json!({}), &ctx).await;
    assert_eq!(out.text, "component fixtures/cancel was cancelled");
}

#[tokio::test]
async fn a_memory_bomb_hits_the_memory_limit() {
    let host = WasmHost::new(None).unwrap();
    let mut spec = support::spec("bomb");
    spec.memory_limit = 4 * 1024 * 1024;
    let component = load(&host, &spec, &[tools::memory_bomb(), tools::echo()]).await;
    let ctx = context();
    let out = call(&component, "bomb", json!({}), &ctx).await;
    assert!(out.is_error);
    assert_eq!(
        out.text,
        "component fixtures/bomb exceeded its memory limit of 4 MiB"
    );
    let out = call(&component, "echo", json!({"still": "fine"}), &ctx).await;
    assert!(!out.is_error, "{}", out.text);
}

#[tokio::test]
async fn deep_recursion_is_a_stack_overflow_trap() {
    let host = WasmHost::new(None).unwrap();
    let component = load(&host, &support::spec("deep"), &[tools::recurse()]).await;
    let out = call(&component, "recurse", json!({}), &context()).await;
    assert!(out.is_error);
    assert!(
        out.text.starts_with("component fixtures/deep trapped: "),
        "{}",
        out.text
    );
    assert!(out.text.contains("stack"), "{}", out.text);
}

#[tokio::test]
async fn a_trap_mid_call_does_not_affect_the_next_call() {
    let host = WasmHost::new(None).unwrap();
    let component = load(
        &host,
        &support::spec("trap"),
        &[tools::trap(), tools::echo()],
    )
    .await;
    let ctx = context();
    let out = call(&component, "trap", json!({}), &ctx).await;
    assert!(out.is_error);
    assert!(
        out.text.starts_with("component fixtures/trap trapped: "),
        "{}",
        out.text
    );
    assert!(out.text.contains("unreachable"), "{}", out.text);
    let out = call(&component, "echo", json!({"x": 1}), &ctx).await;
    assert!(!out.is_error, "{}", out.text);
    assert_eq!(out.text, r#"{"x":1}"#);
}

fn resident_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

#[tokio::test]
async fn a_thousand_traps_leave_memory_flat() {
    let host = WasmHost::new(None).unwrap();
    let component = load(
        &host,
        &support::spec("traps"),
        &[tools::trap(), tools::echo()],
    )
    .await;
    let ctx = context();
    // Warm up allocator pools and lazily initialised state first.
    for _ in 0..50 {
        assert!(call(&component, "trap", json!({}), &ctx).await.is_error);
    }
    let before = resident_bytes();
    let started = Instant::now();
    for _ in 0..1000 {
        let out = call(&component, "trap", json!({}), &ctx).await;
        assert!(out.is_error);
    }
    let elapsed = started.elapsed();
    let after = resident_bytes();
    let out = call(&component, "echo", json!({}), &ctx).await;
    assert!(!out.is_error, "{}", out.text);
    let growth = after.saturating_sub(before);
    assert!(
        growth < 32 * 1024 * 1024,
        "RSS grew by {growth} bytes over 1,000 traps ({before} -> {after})"
    );
    eprintln!("1,000 trapping calls took {elapsed:?}; RSS {before} -> {after}");
}

#[tokio::test]
async fn a_huge_result_is_capped() {
    let host = WasmHost::new(None).unwrap();
    let mut spec = support::spec("big");
    spec.max_output_bytes = 1000;
    let component = load(
        &host,
        &spec,
        &[tools::big(4 * 1024 * 1024), tools::bogus_length()],
    )
    .await;
    let ctx = context();
    let out = call(&component, "big", json!({}), &ctx).await;
    assert!(!out.is_error);
    assert!(out.truncated);
    assert!(
        out.text.starts_with(&"a".repeat(1000)),
        "{}",
        &out.text[..50]
    );
    assert!(
        out.text
            .ends_with("\n[output truncated: 1000 of 4194304 bytes shown]"),
        "{}",
        &out.text[1000..]
    );
    // A length beyond the guest's memory is refused before the host allocates anything.
    let out = call(&component, "bogus", json!({}), &ctx).await;
    assert!(out.is_error);
    assert!(
        out.text.starts_with("component fixtures/big trapped: "),
        "{}",
        out.text
    );
    assert!(out.text.contains("out of bounds"), "{}", out.text);
}

#[tokio::test]
async fn a_call_dropped_mid_flight_leaves_the_host_serving() {
    let host = WasmHost::new(None).unwrap();
    let mut spec = support::spec("dropped");
    spec.timeout = Duration::from_secs(30);
    let component = load(&host, &spec, &[tools::spin(), tools::echo()]).await;
    let ctx = context();
    let abandoned = tokio::time::timeout(
        Duration::from_millis(50),
        call(&component, "spin", json!({}), &ctx),
    )
    .await;
    assert!(abandoned.is_err(), "the spin call cannot finish");
    let out = call(&component, "echo", json!({"after": "drop"}), &ctx).await;
    assert_eq!(out.text, r#"{"after":"drop"}"#);
}

// One executor thread: a guest that never returns must still let other tasks run.
#[tokio::test(flavor = "current_thread")]
async fn busy_guests_do_not_hold_the_executor_thread() {
    let host = WasmHost::new(None).unwrap();
    let mut spec = support::spec("busy");
    // A budget well above what 20 echoes take on a loaded machine (the epoch ticker that makes
    // a guest yield is itself a thread that may wait for a core).
    spec.timeout = Duration::from_millis(5000);
    let component = load(&host, &spec, &[tools::spin(), tools::echo()]).await;
    let spinners: Vec<_> = (0..2)
        .map(|_| {
            let component = component.clone();
            tokio::spawn(async move { call(&component, "spin", json!({}), &context()).await })
        })
        .collect();
    let started = Instant::now();
    // Lets the spinners start running guest code on this thread.
    tokio::time::sleep(Duration::from_millis(50)).await;
    for i in 0..20 {
        let out = call(&component, "echo", json!({ "i": i }), &context()).await;
        assert!(!out.is_error, "{}", out.text);
    }
    let echo_time = started.elapsed();
    // Had a guest held the thread, the echoes would have waited for its 5 s budget.
    assert!(echo_time < Duration::from_millis(2500), "{echo_time:?}");
    assert!(
        spinners.iter().all(|s| !s.is_finished()),
        "the echoes ended before the spinners' budget"
    );
    for spinner in spinners {
        let out = spinner.await.unwrap();
        assert_eq!(
            out.text,
            "component fixtures/busy exceeded its 5000 ms budget"
        );
    }
}

/// Tables live on the host heap outside the linear-memory limit, so their elements are capped
/// for all tables of an instance together: two tables each under the cap still trap.
#[tokio::test]
async fn many_tables_together_hit_the_table_cap() {
    let host = WasmHost::new(None).unwrap();
    let spec = support::spec("tables");
    let grow = |n: u32, tables: &[&str]| {
        let grows: String = tables
            .iter()
            .map(|t| format!("(drop (table.grow {t} (ref.null func) (i32.const {n})))"))
            .collect();
        support::FixtureTool::new("grow", move |_| format!("{grows} (unreachable)"))
    };
    let with_tables = |tool| {
        let wat = support::core_wat(&[tool], support::World::ToolProvider).replace(
            "(memory (export \"memory\") 2)",
            "(memory (export \"memory\") 2) (table $t0 0 funcref) (table $t1 0 funcref)",
        );
        support::encode(&wat, "rho:tool/tool-provider@0.1.0")
    };
    let ctx = context();

    // One table of 600,000 elements is allowed: the call reaches its own `unreachable`.
    let one = host
        .load(&spec, &with_tables(grow(600_000, &["$t0"])))
        .await
        .unwrap();
    let out = call(&one, "grow", json!({}), &ctx).await;
    assert!(out.text.contains("unreachable"), "{}", out.text);

    // Two of them are not.
    let two = host
        .load(&spec, &with_tables(grow(600_000, &["$t0", "$t1"])))
        .await
        .unwrap();
    let out = call(&two, "grow", json!({}), &ctx).await;
    assert!(out.is_error);
    // 1,200,000 plus the few elements of the shim tables wit-component adds.
    assert!(
        out.text
            .starts_with("component fixtures/tables trapped: its tables grew to 12000")
            && out.text.ends_with(" elements together, beyond the limit"),
        "{}",
        out.text
    );
}
