//! Test components built from WAT without the wasm32 target: a core module implementing the
//! canonical ABI of `rho:tool/tools@0.1.0` (generated from a list of tools, each a small WAT
//! function), given the world's metadata by `wit-component` and encoded as a component.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rho_component::{RiskLevel, ToolOrigin, ToolSpec, WasmComponentSpec, WorkspaceAccess};
use serde_json::json;

/// Where static data starts in the fixture's memory (page 0); the heap starts at page 1.
const DATA_BASE: u32 = 1024;

/// The real contract, plus a test package that adds `wasi:cli/environment` to the world.
const TEST_WIT: &str = r#"
package rho-test:fixtures;

world with-env {
    include rho:tool/tool-provider@0.1.0;
    import wasi:cli/environment@0.2.0;
}

world with-sockets {
    include rho:tool/tool-provider@0.1.0;
    import wasi:sockets/tcp-create-socket@0.2.0;
}
"#;

const WASI_CLI_ENV: &str = r#"
package wasi:cli@0.2.0;

interface environment {
    get-environment: func() -> list<tuple<string, string>>;
}
"#;

/// The part of `wasi:sockets` a guest needs to ask for a TCP socket.
const WASI_SOCKETS_TCP: &str = r#"
package wasi:sockets@0.2.0;

interface network {
    enum error-code {
        unknown, access-denied, not-supported, invalid-argument, out-of-memory, timeout,
        concurrency-conflict, not-in-progress, would-block, invalid-state, new-socket-limit,
        address-not-bindable, address-in-use, remote-unreachable, connection-refused,
        connection-reset, connection-aborted, datagram-too-large, name-unresolvable,
        temporary-resolver-failure, permanent-resolver-failure,
    }
    enum ip-address-family { ipv4, ipv6 }
}

interface tcp {
    resource tcp-socket;
}

interface tcp-create-socket {
    use network.{error-code, ip-address-family};
    use tcp.{tcp-socket};
    create-tcp-socket: func(address-family: ip-address-family) -> result<tcp-socket, error-code>;
}
"#;

/// The world a fixture's metadata comes from.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum World {
    /// `rho:tool/tool-provider@0.1.0`.
    ToolProvider,
    /// `tool-provider` plus `wasi:cli/environment`.
    WithEnv,
    /// `tool-provider` plus `wasi:sockets/tcp-create-socket`.
    WithSockets,
}

/// Laid-out static data.
#[derive(Default)]
pub struct Data {
    bytes: Vec<u8>,
}

impl Data {
    /// Places `bytes` (aligned to 4) and returns their address.
    pub fn put(&mut self, bytes: &[u8]) -> u32 {
        while !self.bytes.len().is_multiple_of(4) {
            self.bytes.push(0);
        }
        let at = DATA_BASE + self.bytes.len() as u32;
        self.bytes.extend_from_slice(bytes);
        at
    }

    /// Places a string: `(ptr, len)`.
    pub fn str(&mut self, s: &str) -> (u32, u32) {
        (self.put(s.as_bytes()), s.len() as u32)
    }

    fn segment(&self) -> String {
        let mut out = format!("(data (i32.const {DATA_BASE}) \"");
        for b in &self.bytes {
            let _ = write!(out, "\\{b:02x}");
        }
        out.push_str("\")");
        out
    }
}

/// One tool of a fixture: its declaration and the WAT body of
/// `(func (param $args i32) (param $args_len i32) (result i32))` returning the result area.
pub struct FixtureTool {
    pub name: String,
    pub input_schema: String,
    pub output_schema: Option<String>,
    pub body: Box<dyn Fn(&mut Data) -> String>,
}

impl FixtureTool {
    pub fn new(name: &str, body: impl Fn(&mut Data) -> String + 'static) -> Self {
        Self {
            name: name.to_owned(),
            input_schema: r#"{"type":"object"}"#.to_owned(),
            output_schema: None,
            body: Box::new(body),
        }
    }
}

/// The fixture tools the tests use.
pub mod tools {
    use super::*;

    /// Returns its arguments as one text block.
    pub fn echo() -> FixtureTool {
        FixtureTool::new("echo", |_| {
            "(call $ret_text (local.get $args) (local.get $args_len))".to_owned()
        })
    }

    /// Returns a text block and structured content `{"ok":true,"n":3}`.
    pub fn structured() -> FixtureTool {
        let mut tool = FixtureTool::new("structured", |d| {
            let (tp, tl) = d.str("mirrored text");
            let (jp, jl) = d.str(r#"{"ok":true,"n":3}"#);
            format!(
                "(call $ret_structured (i32.const {tp}) (i32.const {tl}) (i32.const {jp}) (i32.const {jl}))"
            )
        });
        tool.output_schema = Some(r#"{"type":"object"}"#.to_owned());
        tool
    }

    /// Returns a `failed` tool error.
    pub fn fails() -> FixtureTool {
        FixtureTool::new("fails", |d| {
            let (p, l) = d.str("the disk is full");
            format!("(call $ret_error (i32.const 2) (i32.const {p}) (i32.const {l}))")
        })
    }

    /// Loops forever without calling the host.
    pub fn spin() -> FixtureTool {
        FixtureTool::new("spin", |_| {
            "(loop $forever (br $forever)) (unreachable)".to_owned()
        })
    }

    /// Grows memory 1 MiB at a time until something stops it.
    pub fn memory_bomb() -> FixtureTool {
        FixtureTool::new("bomb", |_| {
            "(loop $more (drop (memory.grow (i32.const 16))) (br $more)) (unreachable)".to_owned()
        })
    }

    /// Recurses without end.
    pub fn recurse() -> FixtureTool {
        FixtureTool::new("recurse", |_| "(call $recurse (i32.const 0))".to_owned())
    }

    /// Executes `unreachable`.
    pub fn trap() -> FixtureTool {
        FixtureTool::new("trap", |_| "(unreachable)".to_owned())
    }

    /// Returns a text block of `len` bytes of `a`.
    pub fn big(len: u32) -> FixtureTool {
        FixtureTool::new("big", move |_| {
            format!(
                "(local.set $p (call $alloc (i32.const {len}) (i32.const 1)))
                 (memory.fill (local.get $p) (i32.const 97) (i32.const {len}))
                 (call $ret_text (local.get $p) (i32.const {len}))"
            )
        })
    }

    /// Returns a string whose length points far past the end of memory.
    pub fn bogus_length() -> FixtureTool {
        FixtureTool::new("bogus", |_| {
            "(call $ret_text (i32.const 0) (i32.const 0x7fff0000))".to_owned()
        })
    }

    /// `read-file` of the path in `{"path":"..."}` (the arguments as serde_json writes them,
    /// without escapes): the bytes as text, or the error as `failed`.
    pub fn read() -> FixtureTool {
        FixtureTool::new("read", |_| {
            "(local.set $p (call $alloc (i32.const 12) (i32.const 4)))
             (call $read_file
                (i32.add (local.get $args) (i32.const 9))
                (i32.sub (local.get $args_len) (i32.const 11))
                (local.get $p))
             (if (result i32) (i32.load8_u (local.get $p))
                (then (call $ret_error (i32.const 2) (i32.load offset=4 (local.get $p)) (i32.load offset=8 (local.get $p))))
                (else (call $ret_text (i32.load offset=4 (local.get $p)) (i32.load offset=8 (local.get $p)))))"
                .to_owned()
        })
    }

    /// Logs a message, reports progress 0.5 of 1, and returns `done`.
    pub fn chatty() -> FixtureTool {
        FixtureTool::new("chatty", |d| {
            let (mp, ml) = d.str("hello from the guest");
            let (dp, dl) = d.str("done");
            format!(
                "(call $log (i32.const 2) (i32.const {mp}) (i32.const {ml}))
                 (call $report_progress (f64.const 0.5) (i32.const 1) (f64.const 1) (i32.const 0) (i32.const 0) (i32.const 0))
                 (call $ret_text (i32.const {dp}) (i32.const {dl}))"
            )
        })
    }

    /// Reports progress 5,000 times, then returns `done`.
    pub fn progress_flood() -> FixtureTool {
        FixtureTool::new("flood", |d| {
            let (dp, dl) = d.str("done");
            format!(
                "(local.set $i (i32.const 0))
                 (loop $more
                   (call $report_progress (f64.convert_i32_u (local.get $i)) (i32.const 0) (f64.const 0) (i32.const 0) (i32.const 0) (i32.const 0))
                   (local.set $i (i32.add (local.get $i) (i32.const 1)))
                   (br_if $more (i32.lt_u (local.get $i) (i32.const 5000))))
                 (call $ret_text (i32.const {dp}) (i32.const {dl}))"
            )
        })
    }

    /// Loops until `is-cancelled` says so, then returns `tool-error::cancelled`.
    pub fn polls_cancel() -> FixtureTool {
        FixtureTool::new("polls-cancel", |_| {
            "(block $stop (loop $more (br_if $stop (call $is_cancelled)) (br $more)))
             (call $ret_error (i32.const 3) (i32.const 0) (i32.const 0))"
                .to_owned()
        })
    }

    /// Asks WASI for an IPv4 TCP socket: `O` + 0 when it got one, `E` + the `error-code`
    /// (as `'0' + code`) when refused.
    pub fn tcp_socket() -> FixtureTool {
        FixtureTool::new("tcp", |_| {
            "(local.set $p (call $alloc (i32.const 8) (i32.const 4)))
             (call $create_tcp_socket (i32.const 0) (local.get $p))
             (local.set $b (call $alloc (i32.const 2) (i32.const 1)))
             (i32.store8 (local.get $b)
                (select (i32.const 69) (i32.const 79) (i32.load8_u (local.get $p))))
             (i32.store8 offset=1 (local.get $b)
                (i32.add (i32.const 48) (i32.load8_u offset=4 (local.get $p))))
             (call $ret_text (local.get $b) (i32.const 2))"
                .to_owned()
        })
    }

    /// The environment as text blocks: key, value, key, value, ...
    pub fn env() -> FixtureTool {
        FixtureTool::new("env", |_| ENV_BODY.to_owned())
    }

    const ENV_BODY: &str = "
        (local.set $p (call $alloc (i32.const 8) (i32.const 4)))
        (call $get_environment (local.get $p))
        (local.set $list (i32.load (local.get $p)))
        (local.set $n (i32.load offset=4 (local.get $p)))
        (local.set $blocks (call $alloc (i32.mul (local.get $n) (i32.const 40)) (i32.const 4)))
        (block $done (loop $next
            (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
            (local.set $e (i32.add (local.get $list) (i32.mul (local.get $i) (i32.const 16))))
            (local.set $b (i32.add (local.get $blocks) (i32.mul (local.get $i) (i32.const 40))))
            (i32.store8 (local.get $b) (i32.const 0))
            (i32.store offset=4 (local.get $b) (i32.load (local.get $e)))
            (i32.store offset=8 (local.get $b) (i32.load offset=4 (local.get $e)))
            (i32.store8 offset=20 (local.get $b) (i32.const 0))
            (i32.store offset=24 (local.get $b) (i32.load offset=8 (local.get $e)))
            (i32.store offset=28 (local.get $b) (i32.load offset=12 (local.get $e)))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $next)))
        (local.set $p (call $alloc (i32.const 24) (i32.const 4)))
        (i32.store offset=4 (local.get $p) (local.get $blocks))
        (i32.store offset=8 (local.get $p) (i32.mul (local.get $n) (i32.const 2)))
        (local.get $p)";
}

/// Runtime helpers every fixture module has: a bump allocator, result builders, string
/// comparison, a recursive function.
const HELPERS: &str = r#"
  (global $heap (mut i32) (i32.const 65536))
  (func $alloc (param $size i32) (param $align i32) (result i32)
    (local $ptr i32) (local $end i32) (local $have i32)
    (local.set $ptr
      (i32.and
        (i32.add (global.get $heap) (i32.sub (local.get $align) (i32.const 1)))
        (i32.xor (i32.sub (local.get $align) (i32.const 1)) (i32.const -1))))
    (local.set $end (i32.add (local.get $ptr) (local.get $size)))
    (local.set $have (i32.mul (memory.size) (i32.const 65536)))
    (if (i32.gt_u (local.get $end) (local.get $have))
      (then
        (if (i32.eq
              (memory.grow (i32.div_u
                (i32.add (i32.sub (local.get $end) (local.get $have)) (i32.const 65535))
                (i32.const 65536)))
              (i32.const -1))
          (then unreachable))))
    (global.set $heap (local.get $end))
    (local.get $ptr))
  (func (export "cabi_realloc") (param $old i32) (param $old_size i32) (param $align i32) (param $new_size i32) (result i32)
    (local $p i32)
    (local.set $p (call $alloc (local.get $new_size) (local.get $align)))
    (if (local.get $old_size)
      (then (memory.copy (local.get $p) (local.get $old) (local.get $old_size))))
    (local.get $p))
  (func $streq (param $a i32) (param $al i32) (param $b i32) (param $bl i32) (result i32)
    (local $i i32)
    (if (i32.ne (local.get $al) (local.get $bl)) (then (return (i32.const 0))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $al)))
        (if (i32.ne
              (i32.load8_u (i32.add (local.get $a) (local.get $i)))
              (i32.load8_u (i32.add (local.get $b) (local.get $i))))
          (then (return (i32.const 0))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (i32.const 1))
  ;; result<tool-result, tool-error> is 24 bytes: discriminant at 0, payload at 4.
  ;; tool-result: content list at 4/8, structured-content option at 12 (string at 16/20).
  ;; content-block is 20 bytes: discriminant at 0, text string at 4/8.
  (func $ret_structured (param $tp i32) (param $tl i32) (param $jp i32) (param $jl i32) (result i32)
    (local $block i32) (local $ret i32)
    (local.set $block (call $alloc (i32.const 20) (i32.const 4)))
    (i32.store8 (local.get $block) (i32.const 0))
    (i32.store offset=4 (local.get $block) (local.get $tp))
    (i32.store offset=8 (local.get $block) (local.get $tl))
    (local.set $ret (call $alloc (i32.const 24) (i32.const 4)))
    (i32.store8 (local.get $ret) (i32.const 0))
    (i32.store offset=4 (local.get $ret) (local.get $block))
    (i32.store offset=8 (local.get $ret) (i32.const 1))
    (if (local.get $jl)
      (then
        (i32.store8 offset=12 (local.get $ret) (i32.const 1))
        (i32.store offset=16 (local.get $ret) (local.get $jp))
        (i32.store offset=20 (local.get $ret) (local.get $jl))))
    (local.get $ret))
  (func $ret_text (param $p i32) (param $l i32) (result i32)
    (call $ret_structured (local.get $p) (local.get $l) (i32.const 0) (i32.const 0)))
  ;; tool-error: discriminant at 4 (0 invalid-arguments, 1 unknown-tool, 2 failed, 3 cancelled),
  ;; string at 8/12.
  (func $ret_error (param $kind i32) (param $p i32) (param $l i32) (result i32)
    (local $ret i32)
    (local.set $ret (call $alloc (i32.const 24) (i32.const 4)))
    (i32.store8 (local.get $ret) (i32.const 1))
    (i32.store8 offset=4 (local.get $ret) (local.get $kind))
    (i32.store offset=8 (local.get $ret) (local.get $p))
    (i32.store offset=12 (local.get $ret) (local.get $l))
    (local.get $ret))
  (func $recurse (param $depth i32) (result i32)
    (call $recurse (i32.add (local.get $depth) (i32.const 1))))
"#;

/// The WAT of a core module implementing `rho:tool/tools@0.1.0` with `tools`.
pub fn core_wat(tools: &[FixtureTool], world: World) -> String {
    let mut data = Data::default();
    // tool-spec is 56 bytes: name 0, title option 8 (string 12/16), description 20,
    // input-schema 28, output-schema option 36 (string 40/44), annotations option 48.
    let mut specs = Vec::new();
    let mut names = Vec::new();
    for tool in tools {
        let (np, nl) = data.str(&tool.name);
        names.push((np, nl));
        let (dp, dl) = data.str(&format!("the {} fixture", tool.name));
        let (ip, il) = data.str(&tool.input_schema);
        let mut spec = [0u8; 56];
        let mut put = |at: usize, v: u32| spec[at..at + 4].copy_from_slice(&v.to_le_bytes());
        put(0, np);
        put(4, nl);
        put(20, dp);
        put(24, dl);
        put(28, ip);
        put(32, il);
        if let Some(out) = &tool.output_schema {
            let (op, ol) = data.str(out);
            spec[36] = 1;
            spec[40..44].copy_from_slice(&op.to_le_bytes());
            spec[44..48].copy_from_slice(&ol.to_le_bytes());
        }
        specs.extend_from_slice(&spec);
    }
    let specs_at = data.put(&specs);
    let mut list_ret = Vec::new();
    list_ret.extend_from_slice(&specs_at.to_le_bytes());
    list_ret.extend_from_slice(&(tools.len() as u32).to_le_bytes());
    let list_ret_at = data.put(&list_ret);

    let mut funcs = String::new();
    let mut dispatch = String::new();
    for (i, tool) in tools.iter().enumerate() {
        let body = (tool.body)(&mut data);
        let _ = write!(
            funcs,
            "(func $tool_{i} (param $args i32) (param $args_len i32) (result i32)
               (local $p i32) (local $list i32) (local $n i32) (local $blocks i32)
               (local $i i32) (local $e i32) (local $b i32)
               {body})\n"
        );
        let (np, nl) = names[i];
        let _ = write!(
            dispatch,
            "(if (call $streq (local.get $n) (local.get $nl) (i32.const {np}) (i32.const {nl}))
               (then (return (call $tool_{i} (local.get $a) (local.get $al)))))\n"
        );
    }
    let env_import = match world {
        World::ToolProvider => "",
        World::WithEnv => {
            r#"(import "wasi:cli/environment@0.2.0" "get-environment" (func $get_environment (param i32)))"#
        }
        World::WithSockets => {
            r#"(import "wasi:sockets/tcp-create-socket@0.2.0" "create-tcp-socket" (func $create_tcp_socket (param i32 i32)))"#
        }
    };
    format!(
        r#"(module
  (import "rho:tool/host@0.1.0" "log" (func $log (param i32 i32 i32)))
  (import "rho:tool/host@0.1.0" "report-progress" (func $report_progress (param f64 i32 f64 i32 i32 i32)))
  (import "rho:tool/host@0.1.0" "is-cancelled" (func $is_cancelled (result i32)))
  (import "rho:tool/host@0.1.0" "read-file" (func $read_file (param i32 i32 i32)))
  {env_import}
  (memory (export "memory") 2)
  {helpers}
  {data}
  {funcs}
  (func (export "rho:tool/tools@0.1.0#list-tools") (result i32)
    (i32.const {list_ret_at}))
  (func (export "rho:tool/tools@0.1.0#call-tool") (param $n i32) (param $nl i32) (param $a i32) (param $al i32) (result i32)
    {dispatch}
    (call $ret_error (i32.const 1) (local.get $n) (local.get $nl)))
)"#,
        helpers = HELPERS,
        data = data.segment(),
    )
}

/// A component with `tools`, for `world`.
pub fn component(tools: &[FixtureTool], world: World) -> Vec<u8> {
    encode(&core_wat(tools, world), world_name(world))
}

fn world_name(world: World) -> &'static str {
    match world {
        World::ToolProvider => "rho:tool/tool-provider@0.1.0",
        World::WithEnv => "rho-test:fixtures/with-env",
        World::WithSockets => "rho-test:fixtures/with-sockets",
    }
}

/// Encodes core-module WAT as a component of the named world (an ID such as
/// `rho:tool/tool-provider@0.1.0`), from the real WIT plus the test packages.
pub fn encode(wat: &str, world: &str) -> Vec<u8> {
    encode_with(wat, world, &[])
}

/// Like [`encode`], with more WIT packages (`(file name, text)`) pushed first.
pub fn encode_with(wat: &str, world: &str, extra_wit: &[(&str, &str)]) -> Vec<u8> {
    let mut resolve = wit_parser::Resolve::default();
    let (tool_pkg, _) = resolve
        .push_dir(wit_dir())
        .expect("the rho:tool WIT parses");
    resolve
        .push_str("wasi-cli.wit", WASI_CLI_ENV)
        .expect("the wasi:cli excerpt parses");
    resolve
        .push_str("wasi-sockets.wit", WASI_SOCKETS_TCP)
        .expect("the wasi:sockets excerpt parses");
    let test_pkg = resolve
        .push_str("fixtures.wit", TEST_WIT)
        .expect("the test WIT parses");
    let mut packages = vec![tool_pkg, test_pkg];
    for (name, text) in extra_wit {
        packages.push(resolve.push_str(name, text).expect("extra WIT parses"));
    }
    let world = resolve
        .select_world(&packages, Some(world))
        .unwrap_or_else(|e| panic!("world {world}: {e:#}"));
    embed(&resolve, world, wat)
}

/// A component with `tools` built against `rho:tool@<version>` (the real WIT with its
/// package version replaced): what a guest built with a later SDK of the same line exports.
pub fn component_for_version(tools: &[FixtureTool], version: &str) -> Vec<u8> {
    let wit = std::fs::read_to_string(wit_dir().join("tool.wit"))
        .expect("tool.wit reads")
        .replace(
            "package rho:tool@0.1.0;",
            &format!("package rho:tool@{version};"),
        );
    let mut resolve = wit_parser::Resolve::default();
    let pkg = resolve.push_str("tool.wit", &wit).expect("the WIT parses");
    let world = resolve
        .select_world(&[pkg], Some("tool-provider"))
        .expect("the world exists");
    let wat = core_wat(tools, World::ToolProvider).replace("@0.1.0", &format!("@{version}"));
    embed(&resolve, world, &wat)
}

fn embed(resolve: &wit_parser::Resolve, world: wit_parser::WorldId, wat: &str) -> Vec<u8> {
    let mut module = wat::parse_str(wat).unwrap_or_else(|e| panic!("fixture WAT: {e}"));
    wit_component::embed_component_metadata(
        &mut module,
        resolve,
        world,
        wit_component::StringEncoding::UTF8,
    )
    .expect("metadata embeds");
    wit_component::ComponentEncoder::default()
        .module(&module)
        .expect("module accepted")
        .validate(true)
        .encode()
        .expect("component encodes")
}

fn wit_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../plugin-sdk/wit/rho-tool-0.1.0")
}

/// A component declaration with test defaults: 5 s budget, 16 MiB of memory, no workspace.
pub fn spec(name: &str) -> WasmComponentSpec {
    WasmComponentSpec {
        plugin: "fixtures".to_owned(),
        name: name.to_owned(),
        path: PathBuf::from(format!("/plugins/fixtures/dev.rho/tools/{name}.wasm")),
        workspace: WorkspaceAccess::None,
        env: Vec::new(),
        timeout: Duration::from_secs(5),
        memory_limit: 16 * 1024 * 1024,
        risk: RiskLevel::Read,
        max_output_bytes: 64 * 1024,
    }
}

/// The exported declaration the registry would give guest tool `tool`.
pub fn tool_spec(component: &rho_wasm::LoadedComponent, tool: &str) -> ToolSpec {
    ToolSpec {
        name: format!("wasm__fixtures__{tool}"),
        title: None,
        description: format!("{tool} (test)"),
        input_schema: json!({"type": "object"}),
        output_schema: None,
        risk: RiskLevel::Read,
        origin: ToolOrigin::Wasm {
            plugin: "fixtures".to_owned(),
            component: component.spec().name.clone(),
            tool: tool.to_owned(),
        },
    }
}

/// Loads `tools` as component `name` on `host`.
pub async fn load(
    host: &rho_wasm::WasmHost,
    spec: &WasmComponentSpec,
    tools: &[FixtureTool],
) -> Arc<rho_wasm::LoadedComponent> {
    let bytes = component(tools, World::ToolProvider);
    host.load(spec, &bytes).await.expect("fixture loads")
}

/// Calls guest tool `tool` of `component` with `arguments` in `context`.
pub async fn call(
    component: &Arc<rho_wasm::LoadedComponent>,
    tool: &str,
    arguments: serde_json::Value,
    context: &rho_component::ToolContext,
) -> rho_component::ToolOutput {
    let t = component.tool(tool, tool_spec(component, tool));
    t.call(arguments, context).await
}
