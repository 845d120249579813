//! WASM tool components through the real binary: the committed `data-tools` example plugin
//! (`dev.rho/tools/data.wasm`) installed into a temporary home, the built-in `text_stats`
//! component, a plugin with a broken component and one with invalid settings, a session that
//! calls a WASM tool (`rho rpc` against the scripted `fake-model`), and the compiled-component
//! cache under `$RHO_HOME/cache/wasm`.

use std::collections::BTreeMap;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use rho_e2e::*;
use serde_json::{Value, json};

const FAKE_MODEL: &str = env!("CARGO_BIN_EXE_fake-model");
const CONVERT: &str = "wasm__data-tools__convert";
const QUERY: &str = "wasm__data-tools__query";

/// The example plugin's source directory.
fn example() -> PathBuf {
    repo_root().join("examples/plugins/data-tools")
}

/// The committed component of the example plugin.
fn data_wasm() -> PathBuf {
    example().join("dev.rho/tools/data.wasm")
}

/// `rho plugins install <repo>/examples/plugins/data-tools` into the sandbox's user scope.
fn install_example(sb: &Sandbox) {
    let run = sb
        .rho(&["plugins", "install", example().to_str().unwrap()])
        .ok();
    assert!(
        run.stdout.contains("installed data-tools (user scope)"),
        "{}",
        run.stdout
    );
}

fn tools_list(sb: &Sandbox) -> Value {
    sb.rho(&["tools", "list", "--json"]).ok().json()
}

/// `rho tools call <name> <args> --json` that must succeed; returns the result document.
fn call_ok(sb: &Sandbox, name: &str, args: &Value) -> Value {
    let result = sb
        .rho(&["tools", "call", name, &args.to_string(), "--json"])
        .ok()
        .json();
    assert_eq!(result["tool"], name, "{result:#}");
    assert_eq!(result["is_error"], false, "{result:#}");
    assert_eq!(result["truncated"], false, "{result:#}");
    result
}

/// `rho tools call <name> <args> --json` that must fail (exit 1); returns the error text.
fn call_err(sb: &Sandbox, name: &str, args: &str) -> String {
    let result = sb
        .rho(&["tools", "call", name, args, "--json"])
        .code(1)
        .json();
    assert_eq!(result["is_error"], true, "{args}: {result:#}");
    assert_eq!(result["structured_content"], Value::Null, "{result:#}");
    result["text"].as_str().unwrap().to_owned()
}

/// The diagnostics of a document (`tools list`, `plugins inspect`, `plugins validate`).
fn diagnostics(doc: &Value) -> &Vec<Value> {
    doc["diagnostics"].as_array().unwrap()
}

/// The one diagnostic of `doc` for `component`.
fn diagnostic_for<'a>(doc: &'a Value, component: &str) -> &'a Value {
    let found: Vec<&Value> = diagnostics(doc)
        .iter()
        .filter(|d| d["component"] == component)
        .collect();
    assert_eq!(found.len(), 1, "one diagnostic for {component}: {doc:#}");
    found[0]
}

#[test]
fn the_installed_example_reports_its_component_and_mounts_its_tools() {
    let sb = Sandbox::new();
    install_example(&sb);
    // The component was copied with the rest of the package, byte for byte.
    let installed = sb.user_plugins().join("data-tools");
    assert_eq!(
        std::fs::read(installed.join("dev.rho/tools/data.wasm")).unwrap(),
        std::fs::read(data_wasm()).unwrap()
    );

    let inspect = sb
        .rho(&["plugins", "inspect", "data-tools", "--json"])
        .ok()
        .json();
    assert_eq!(inspect["status"], "loaded", "{inspect:#}");
    assert_eq!(inspect["scope"], "user", "{inspect:#}");
    assert_eq!(inspect["origin"], "install", "{inspect:#}");
    assert_eq!(inspect["tool_components"], json!(["data"]), "{inspect:#}");
    let mut details = inspect["tool_component_details"].clone();
    let tools: Vec<String> = details[0]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("inspect lists the component's tools: {inspect:#}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(tools, ["convert", "query"], "{inspect:#}");
    // Each tool with the name a session exports it under and its risk level.
    let query = &details[0]["tools"][1];
    assert_eq!(query["exported_name"], QUERY, "{query:#}");
    assert_eq!(query["risk"], "read", "{query:#}");
    details[0].as_object_mut().unwrap().remove("tools");
    assert_eq!(
        details,
        json!([{
            "name": "data",
            "path": installed.join("dev.rho/tools/data.wasm").to_str().unwrap(),
            "workspace": "read",
            "env": [],
            "timeout_ms": 5000,
            "memory_mib": 64,
            "risk": "read",
            "error": null,
            "rejected_tools": [],
            "tools_not_listed": null,
        }]),
        "the manifest's settings: {inspect:#}"
    );
    assert_eq!(inspect["skills"], json!(["data-conversion"]), "{inspect:#}");
    assert_eq!(inspect["diagnostics"], json!([]), "{inspect:#}");
    let listed = sb.plugin("data-tools");
    assert_eq!(listed["tool_components"], json!(["data"]), "{listed:#}");

    let list = tools_list(&sb);
    assert_eq!(list["diagnostics"], json!([]), "{list:#}");
    let all = listed_names(&list);
    assert_eq!(
        all[all.len() - 2..],
        [CONVERT, QUERY],
        "plugin WASM tools mount after the built-ins: {all:?}"
    );
    for (name, tool_name, required) in [(CONVERT, "convert", "to"), (QUERY, "query", "select")] {
        let t = listed_tool(&list, name);
        assert_eq!(t["source"], "wasm", "{t:#}");
        assert_eq!(t["plugin"], "data-tools", "{t:#}");
        assert_eq!(t["server"], Value::Null, "{t:#}");
        assert_eq!(t["risk"], "read", "{t:#}");
        assert_eq!(t["input_schema"]["type"], "object", "{t:#}");
        assert_eq!(t["input_schema"]["required"], json!([required]), "{t:#}");
        assert_eq!(
            t["input_schema"]["properties"]["path"]["type"], "string",
            "{t:#}"
        );
        let description = t["description"].as_str().unwrap();
        assert!(
            description.ends_with(&format!(
                "\n(WASM tool `{tool_name}` of plugin `data-tools`)"
            )),
            "{description}"
        );
    }
    assert_eq!(
        listed_tool(&list, CONVERT)["title"],
        "Convert JSON / TOML / YAML"
    );
    assert_eq!(
        listed_tool(&list, QUERY)["title"],
        "Query JSON / TOML / YAML"
    );

    let text = sb.rho(&["tools", "list"]).ok().stdout;
    // The plugin and the tool's own name first, the exported name second.
    let row = text
        .lines()
        .find(|l| l.starts_with("data-tools › query "))
        .unwrap_or_else(|| panic!("no data-tools › query row:\n{text}"));
    let columns: Vec<&str> = row.split_whitespace().take(6).collect();
    assert_eq!(
        columns,
        ["data-tools", "›", "query", QUERY, "wasm", "read"],
        "{row}"
    );
}

#[test]
fn the_example_plugin_validates() {
    let sb = Sandbox::new();
    let path = example();
    let run = sb
        .rho(&["plugins", "validate", path.to_str().unwrap()])
        .ok();
    assert!(
        run.stdout.starts_with("valid plugin data-tools:"),
        "{}",
        run.stdout
    );
    let doc = sb
        .rho(&["plugins", "validate", path.to_str().unwrap(), "--json"])
        .ok()
        .json();
    assert_eq!(doc["valid"], true, "{doc:#}");
    assert_eq!(doc["loadable"], true, "{doc:#}");
    assert_eq!(doc["name"], "data-tools", "{doc:#}");
    assert_eq!(doc["skills"], json!(["data-conversion"]), "{doc:#}");
    assert_eq!(doc["diagnostics"], json!([]), "{doc:#}");
}

#[test]
fn convert_and_query_read_workspace_files_and_inline_text() {
    let sb = Sandbox::new();
    install_example(&sb);
    write(
        &sb.project.join("config/app.toml"),
        "title = \"demo\"\n\n[server]\nhost = \"db.internal\"\nports = [8001, 8002]\n\n\
         [owner]\nname = \"Ann\"\n",
    );
    write(
        &sb.project.join("deploy.yaml"),
        "replicas: 3\nimage:\n  name: rho\n  tag: \"1.4\"\n",
    );

    // A TOML workspace file as JSON (key order kept).
    let result = call_ok(
        &sb,
        CONVERT,
        &json!({"path": "config/app.toml", "to": "json"}),
    );
    assert_eq!(
        result["text"],
        "{\n  \"title\": \"demo\",\n  \"server\": {\n    \"host\": \"db.internal\",\n    \
         \"ports\": [\n      8001,\n      8002\n    ]\n  },\n  \"owner\": {\n    \"name\": \"Ann\"\n  }\n}"
    );
    assert_eq!(result["structured_content"], Value::Null, "{result:#}");
    let compact = call_ok(
        &sb,
        CONVERT,
        &json!({"path": "config/app.toml", "to": "json", "compact": true}),
    );
    assert_eq!(
        compact["text"],
        r#"{"title":"demo","server":{"host":"db.internal","ports":[8001,8002]},"owner":{"name":"Ann"}}"#
    );
    // `/workspace/...` (the guest's view of the workspace) names the same file.
    let guest_path = call_ok(
        &sb,
        CONVERT,
        &json!({"path": "/workspace/config/app.toml", "to": "json", "compact": true}),
    );
    assert_eq!(guest_path["text"], compact["text"]);

    // Inline JSON text as YAML.
    let result = call_ok(
        &sb,
        CONVERT,
        &json!({"input": "{\"name\": \"rho\", \"tags\": [\"a\", \"b\"], \"nested\": {\"x\": 1}}", "to": "yaml"}),
    );
    assert_eq!(
        result["text"],
        "name: rho\ntags:\n- a\n- b\nnested:\n  x: 1\n"
    );
    // A YAML workspace file as TOML, through the human output.
    let run = sb
        .rho(&[
            "tools",
            "call",
            CONVERT,
            r#"{"path":"deploy.yaml","to":"toml"}"#,
        ])
        .ok();
    assert_eq!(
        run.stdout,
        "replicas = 3\n\n[image]\nname = \"rho\"\ntag = \"1.4\"\n"
    );

    // query: a dotted path and a JSON Pointer into workspace files, a negative index inline.
    let result = call_ok(
        &sb,
        QUERY,
        &json!({"path": "config/app.toml", "select": "server.host"}),
    );
    assert_eq!(
        result["structured_content"],
        json!({"value": "db.internal"})
    );
    assert!(
        result["text"].as_str().unwrap().contains("\"db.internal\""),
        "{result:#}"
    );
    let result = call_ok(
        &sb,
        QUERY,
        &json!({"path": "config/app.toml", "select": "/server/ports/1"}),
    );
    assert_eq!(result["structured_content"], json!({"value": 8002}));
    let result = call_ok(
        &sb,
        QUERY,
        &json!({"path": "deploy.yaml", "select": "image"}),
    );
    assert_eq!(
        result["structured_content"],
        json!({"value": {"name": "rho", "tag": "1.4"}})
    );
    let result = call_ok(
        &sb,
        QUERY,
        &json!({"input": "a: [1, 2, 3]", "select": "a[-1]"}),
    );
    assert_eq!(result["structured_content"], json!({"value": 3}));

    // A miss and a missing file are failed calls that say what is there.
    let text = call_err(
        &sb,
        QUERY,
        r#"{"path":"config/app.toml","select":"server.user"}"#,
    );
    assert_eq!(
        text,
        "no key \"user\" at `server` (keys there: host, ports)"
    );
    let text = call_err(&sb, CONVERT, r#"{"path":"missing.toml","to":"json"}"#);
    assert!(text.contains("missing.toml"), "{text}");
    assert!(text.contains("does not exist"), "{text}");
}

#[test]
fn invalid_arguments_fail_the_call_and_name_the_field() {
    let sb = Sandbox::new();
    install_example(&sb);
    let cases = [
        (
            CONVERT,
            r#"{"input":"a: 1","to":"xml"}"#,
            "invalid arguments for `convert`: to: unknown variant `xml`",
        ),
        (
            CONVERT,
            r#"{"input":"a: 1"}"#,
            "invalid arguments for `convert`: missing field `to`",
        ),
        (
            CONVERT,
            r#"{"input":"a: 1","to":"json","colour":1}"#,
            "invalid arguments for `convert`: colour: unknown field `colour`",
        ),
        (
            CONVERT,
            r#"{"input":3,"to":"json"}"#,
            "invalid arguments for `convert`: input: ",
        ),
        (
            CONVERT,
            r#"{"to":"json"}"#,
            "invalid arguments for `convert`: give `input`",
        ),
        (
            CONVERT,
            r#"{"input":"{\"a\": null}","to":"toml"}"#,
            "`a`: TOML has no null",
        ),
        (
            QUERY,
            r#"{"input":"{}"}"#,
            "invalid arguments for `query`: missing field `select`",
        ),
        (
            QUERY,
            r#"{"input":"{}","select":"a..b"}"#,
            "invalid arguments for `query`: select: ",
        ),
    ];
    for (name, args, needle) in cases {
        let text = call_err(&sb, name, args);
        assert!(text.contains(needle), "{name} {args}: {text}");
    }
    // Arguments that are not a JSON object never reach the component.
    let run = sb.rho(&["tools", "call", QUERY, "[1]"]).code(1);
    assert!(
        run.stderr.contains("arguments must be a JSON object"),
        "{}",
        run.stderr
    );
}

#[test]
fn paths_outside_the_workspace_are_refused_and_the_canary_never_leaks() {
    let sb = Sandbox::new();
    install_example(&sb);
    let canary = Canary::new(&sb);
    // The project is <base>/project and the canary <base>/outside/canary.
    symlink(&canary.file, sb.project.join("link.txt"));
    symlink(&canary.dir, sb.project.join("linkdir"));
    write(&sb.project.join("inside.yaml"), "ok: true\n");
    let absolute = canary.file.to_str().unwrap().to_owned();
    let attempts = [
        (CONVERT, "../outside/canary/secret.txt"),
        (CONVERT, "sub/../../outside/canary/secret.txt"),
        (CONVERT, absolute.as_str()),
        (CONVERT, "/workspace/../outside/canary/secret.txt"),
        (QUERY, "link.txt"),
        (QUERY, "linkdir/secret.txt"),
        (QUERY, absolute.as_str()),
    ];
    for (name, path) in attempts {
        let args = if name == CONVERT {
            json!({"path": path, "to": "json", "from": "yaml"})
        } else {
            json!({"path": path, "select": ".", "from": "yaml"})
        };
        let run = sb.rho(&["tools", "call", name, &args.to_string(), "--json"]);
        canary.assert_absent(&run.stdout);
        canary.assert_absent(&run.stderr);
        let result = run.code(1).json();
        assert_eq!(result["is_error"], true, "{name} {path}: {result:#}");
        let text = result["text"].as_str().unwrap();
        assert!(
            text.starts_with(&format!("`{path}` is outside the workspace")),
            "{name} {path}: {text}"
        );
    }
    // The same calls read a file inside (the refusals are about the path, not the tool).
    let result = call_ok(&sb, QUERY, &json!({"path": "inside.yaml", "select": "ok"}));
    assert_eq!(result["structured_content"], json!({"value": true}));
    canary.assert_untouched();
}

#[test]
fn builtin_text_stats_counts_text_and_a_workspace_file() {
    let sb = Sandbox::new();
    let list = tools_list(&sb);
    let stats = listed_tool(&list, "text_stats");
    assert_eq!(stats["source"], "builtin", "{stats:#}");
    assert_eq!(stats["plugin"], Value::Null, "{stats:#}");
    assert_eq!(stats["server"], Value::Null, "{stats:#}");
    assert_eq!(stats["risk"], "read", "{stats:#}");
    assert_eq!(stats["input_schema"]["type"], "object", "{stats:#}");
    assert!(
        !listed_names(&list).iter().any(|n| n.starts_with("wasm__")),
        "no plugin is installed: {list:#}"
    );
    assert_eq!(list["diagnostics"], json!([]), "{list:#}");

    let result = call_ok(
        &sb,
        "text_stats",
        &json!({"text": "rho runs tools.\n\nTools run in rho!\n", "top": 2}),
    );
    assert_eq!(
        result["structured_content"],
        json!({
            "source": "text",
            "lines": 3,
            "blank_lines": 1,
            "words": 7,
            "unique_words": 5,
            "characters": 35,
            "bytes": 35,
            "longest_line": {"line": 3, "characters": 17},
            "top_words": [{"word": "rho", "count": 2}, {"word": "tools", "count": 2}],
        }),
        "{result:#}"
    );
    // Characters are Unicode scalar values, bytes UTF-8.
    let result = call_ok(&sb, "text_stats", &json!({"text": "héllo wörld", "top": 0}));
    let s = &result["structured_content"];
    assert_eq!(
        (&s["words"], &s["characters"], &s["bytes"], &s["top_words"]),
        (&json!(2), &json!(11), &json!(13), &json!([])),
        "{result:#}"
    );
    // A workspace file (the built-in component reads the workspace).
    write(&sb.project.join("docs/a.md"), "# Title\n\none two two\n");
    let result = call_ok(&sb, "text_stats", &json!({"path": "docs/a.md", "top": 1}));
    let s = &result["structured_content"];
    assert_eq!(s["source"], "docs/a.md", "{result:#}");
    assert_eq!(s["lines"], 3, "{result:#}");
    assert_eq!(s["words"], 5, "{result:#}");
    assert_eq!(s["top_words"], json!([{"word": "two", "count": 2}]));
    let text = call_err(&sb, "text_stats", r#"{"top": 1000, "text": "x"}"#);
    assert!(text.contains("top"), "{text}");
}

/// Writes `<dir>/plugin.json` for `name` (via `make_plugin`) with `extensions` added.
fn make_plugin_with_extensions(dir: &Path, name: &str, extensions: &Value) {
    make_plugin(dir, name);
    let path = dir.join("plugin.json");
    let mut manifest: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    manifest["extensions"] = extensions.clone();
    write(&path, serde_json::to_vec_pretty(&manifest).unwrap());
}

#[test]
fn a_broken_component_and_invalid_settings_fail_only_that_component() {
    let sb = Sandbox::new();
    let plugin = sb.user_plugins().join("mixed");
    let tools_dir = plugin.join("dev.rho/tools");
    write(
        &tools_dir.join("bad.wasm"),
        "this is not a WebAssembly component\n",
    );
    std::fs::copy(data_wasm(), tools_dir.join("good.wasm")).unwrap();
    // A second valid component, left out only for its settings.
    std::fs::copy(
        repo_root().join("builtin-plugins/wasm/text_stats.wasm"),
        tools_dir.join("stats.wasm"),
    )
    .unwrap();
    let settings = |stats_timeout: u64| {
        json!({"dev.rho": {"tools": {
            "bad": {"workspace": "none"},
            "good": {"workspace": "read", "timeout_ms": 3000},
            "stats": {"workspace": "read", "timeout_ms": stats_timeout},
        }}})
    };
    make_plugin_with_extensions(&plugin, "mixed", &settings(0));
    write(
        &sb.project.join("Cargo.toml"),
        "[package]\nname = \"demo\"\n",
    );

    let list = tools_list(&sb);
    let all = listed_names(&list);
    for name in ["wasm__mixed__convert", "wasm__mixed__query"] {
        let t = listed_tool(&list, name);
        assert_eq!(t["source"], "wasm", "{t:#}");
        assert_eq!(t["plugin"], "mixed", "{t:#}");
        assert_eq!(t["risk"], "read", "{t:#}");
    }
    assert!(
        !all.iter().any(|n| n == "wasm__mixed__text_stats"),
        "the component with invalid settings contributes no tool: {all:?}"
    );
    assert_eq!(diagnostics(&list).len(), 1, "{list:#}");
    let bad = diagnostic_for(&list, "mixed/bad");
    assert_eq!(bad["code"], "wasm-component-invalid", "{bad:#}");
    assert_eq!(bad["severity"], "error", "{bad:#}");
    assert_eq!(
        bad["path"],
        tools_dir.join("bad.wasm").to_str().unwrap(),
        "{bad:#}"
    );
    assert!(
        bad["message"]
            .as_str()
            .unwrap()
            .starts_with("component mixed/bad is not a valid wasm component"),
        "{bad:#}"
    );
    let text = sb.rho(&["tools", "list"]).ok().stdout;
    assert!(
        text.lines()
            .any(|l| l.contains("wasm-component-invalid") && l.contains("bad.wasm")),
        "{text}"
    );

    // The good component works next to the broken one.
    let result = call_ok(
        &sb,
        "wasm__mixed__query",
        &json!({"path": "Cargo.toml", "select": "package.name"}),
    );
    assert_eq!(result["structured_content"], json!({"value": "demo"}));

    // The invalid settings are the plugin's problem, named by key; the plugin still loads.
    let inspect = sb
        .rho(&["plugins", "inspect", "mixed", "--json"])
        .ok()
        .json();
    assert_eq!(inspect["status"], "loaded", "{inspect:#}");
    assert_eq!(
        inspect["tool_components"],
        json!(["bad", "good"]),
        "{inspect:#}"
    );
    assert_eq!(
        inspect["tool_component_details"][1]["timeout_ms"], 3000,
        "{inspect:#}"
    );
    let stats = diagnostic_for(&inspect, "mixed/stats");
    assert_eq!(stats["code"], "wasm-component-invalid", "{stats:#}");
    assert_eq!(stats["severity"], "error", "{stats:#}");
    assert_eq!(
        stats["path"],
        plugin.join("plugin.json").to_str().unwrap(),
        "{stats:#}"
    );
    let message = stats["message"].as_str().unwrap();
    assert!(
        message.contains("extensions.dev.rho.tools.stats.timeout_ms"),
        "{message}"
    );
    assert!(
        !diagnostics(&inspect)
            .iter()
            .any(|d| d["component"] == "mixed/good"),
        "{inspect:#}"
    );
    let validate = sb
        .rho(&["plugins", "validate", plugin.to_str().unwrap(), "--json"])
        .code(1)
        .json();
    assert_eq!(validate["valid"], false, "{validate:#}");
    assert_eq!(validate["loadable"], true, "{validate:#}");
    assert!(
        diagnostic_for(&validate, "mixed/stats")["message"]
            .as_str()
            .unwrap()
            .contains("extensions.dev.rho.tools.stats.timeout_ms"),
        "{validate:#}"
    );

    // With valid settings the same file loads: its absence above was the settings' doing.
    make_plugin_with_extensions(&plugin, "mixed", &settings(1000));
    let list = tools_list(&sb);
    let t = listed_tool(&list, "wasm__mixed__text_stats");
    assert_eq!(t["plugin"], "mixed", "{t:#}");
    assert_eq!(listed_tool(&list, "text_stats")["source"], "builtin");
    assert_eq!(diagnostics(&list).len(), 1, "only bad is left: {list:#}");
    diagnostic_for(&list, "mixed/bad");
    let inspect = sb
        .rho(&["plugins", "inspect", "mixed", "--json"])
        .ok()
        .json();
    assert_eq!(
        inspect["tool_components"],
        json!(["bad", "good", "stats"]),
        "{inspect:#}"
    );
}

/// The cache's `.cwasm` files: name -> (inode, modification time, length).
fn cache_snapshot(dir: &Path) -> BTreeMap<String, (u64, std::time::SystemTime, u64)> {
    let mut map = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().into_string().unwrap();
        assert!(
            name.ends_with(".cwasm"),
            "only artifacts in the cache: {name}"
        );
        let meta = entry.metadata().unwrap();
        assert!(meta.is_file(), "{name}");
        map.insert(name, (meta.ino(), meta.modified().unwrap(), meta.len()));
    }
    map
}

/// Calls the plugin's `query` tool and the built-in `text_stats`, so both components load.
fn use_both(sb: &Sandbox) {
    let result = call_ok(sb, QUERY, &json!({"input": "a: 1", "select": "a"}));
    assert_eq!(result["structured_content"], json!({"value": 1}));
    call_ok(sb, "text_stats", &json!({"text": "a b"}));
}

#[test]
fn compiled_components_are_cached_and_reused() {
    let sb = Sandbox::new();
    install_example(&sb);
    let cache = sb.rho_home.join("cache/wasm");
    assert!(!cache.exists(), "installing compiles nothing");

    let first = tools_list(&sb);
    listed_tool(&first, QUERY);
    listed_tool(&first, "text_stats");
    assert_eq!(
        cache_snapshot(&cache).len(),
        1,
        "listing compiles the plugin's component; the built-in one compiles when first called"
    );
    use_both(&sb);
    let snapshot = cache_snapshot(&cache);
    assert_eq!(
        snapshot.len(),
        2,
        "one artifact for text_stats, one for data: {snapshot:#?}"
    );
    for name in snapshot.keys() {
        let bytes = std::fs::read(cache.join(name)).unwrap();
        // wasmtime's ELF image first (mapped page-aligned), rho's checksum trailer last.
        assert!(bytes.starts_with(b"\x7fELF"), "{name}");
        assert!(bytes.ends_with(b"RHOCWASM"), "{name}");
    }
    let mode = std::fs::metadata(&cache).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700, "only rho may write the cache");

    // A second run and a call load the artifacts: nothing is compiled, so nothing is written
    // (a compile always stores its artifact through a new file renamed into place).
    let second = tools_list(&sb);
    assert_eq!(listed_names(&second), listed_names(&first));
    use_both(&sb);
    assert_eq!(cache_snapshot(&cache), snapshot, "the cache was reused");

    // The contrast: a missing artifact is compiled and stored again under the same name.
    let (gone, _) = snapshot.iter().next().unwrap();
    std::fs::remove_file(cache.join(gone)).unwrap();
    use_both(&sb);
    let refilled = cache_snapshot(&cache);
    assert_eq!(
        refilled.keys().collect::<Vec<_>>(),
        snapshot.keys().collect::<Vec<_>>()
    );
    assert!(
        std::fs::read(cache.join(gone))
            .unwrap()
            .ends_with(b"RHOCWASM"),
        "{gone} was stored again"
    );

    // A corrupt artifact is discarded and replaced; the tools still work.
    let (victim, _) = snapshot.iter().last().unwrap();
    let garbage = b"not a compiled component\x03\0\0\0RHOCWASM".to_vec();
    std::fs::write(cache.join(victim), &garbage).unwrap();
    let list = tools_list(&sb);
    assert_eq!(listed_names(&list), listed_names(&first));
    assert_eq!(list["diagnostics"], json!([]), "{list:#}");
    use_both(&sb);
    let replaced = std::fs::read(cache.join(victim)).unwrap();
    assert_ne!(replaced, garbage);
    assert!(replaced.ends_with(b"RHOCWASM"));
    assert_eq!(cache_snapshot(&cache).len(), 2);
}

/// The scripted model server, started with this test binary's `fake-model`.
struct Model;

impl Model {
    fn start(dir: &Path, script: &Value) -> FakeModel {
        FakeModel::start(FAKE_MODEL, dir, script)
    }
}

#[test]
fn a_session_runs_a_read_wasm_tool_without_approval() {
    let sandbox = Sandbox::new();
    install_example(&sandbox);
    write(
        &sandbox.project.join("config/app.yaml"),
        "server:\n  host: db-7f3a.internal\n  port: 5432\n",
    );
    let arguments = json!({"path": "config/app.yaml", "select": "server.host"});
    let model = Model::start(
        &sandbox.dir.path().join("model"),
        &json!([
            {"tool_calls": [{"name": QUERY, "arguments": arguments}],
             "expect": {"last_role": "user", "tools_include": [QUERY, CONVERT, "text_stats"],
                        "any_message_contains": "data-conversion"}},
            {"content": "The database host is db-7f3a.internal.",
             "expect": {"last_role": "tool", "last_message_contains": "db-7f3a.internal"}}
        ]),
    );
    let mut rpc = Rpc::start_with(
        &sandbox,
        &[
            "--endpoint",
            &model.endpoint(),
            "--model",
            "fake-model-1",
            "--ephemeral",
        ],
    );
    rpc.request(
        1,
        "prompt",
        json!({"message": "which host does the app use?"}),
    );
    let (notes, response) = rpc.response(1);
    assert_eq!(
        response["result"]["reply"], "The database host is db-7f3a.internal.",
        "{response:#}\n{notes:#?}"
    );
    let call = notes
        .iter()
        .find(|n| n["method"] == "tool/call")
        .unwrap_or_else(|| panic!("no tool/call: {notes:#?}"));
    assert_eq!(call["params"]["name"], QUERY, "{call:#}");
    let sent: Value = serde_json::from_str(call["params"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(sent, arguments);
    let result = notes
        .iter()
        .find(|n| n["method"] == "tool/result")
        .unwrap_or_else(|| panic!("no tool/result: {notes:#?}"));
    assert_eq!(result["params"]["name"], QUERY, "{result:#}");
    assert_eq!(result["params"]["is_error"], false, "{result:#}");
    assert!(
        result["params"]["output"]
            .as_str()
            .unwrap()
            .contains("\"db-7f3a.internal\""),
        "{result:#}"
    );
    // ask-destructive (the default) runs a read tool without asking.
    let asked: Vec<&Value> = rpc
        .seen
        .iter()
        .filter(|m| m["method"] == "approval/request" || m["method"] == "tool/denied")
        .collect();
    assert!(asked.is_empty(), "{asked:#?}");
    let end = &notes.last().unwrap()["params"];
    assert_eq!(end["toolCalls"][0]["name"], QUERY, "{end:#}");
    assert_eq!(end["toolCalls"][0]["outcome"]["kind"], "success", "{end:#}");
    assert_eq!(end["iterations"], 2, "{end:#}");

    // The model read the tool's result as the answer to its call.
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    let last = requests[1]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["role"], "tool", "{last:#}");
    assert!(
        last["content"]
            .as_str()
            .unwrap()
            .contains("db-7f3a.internal"),
        "{last:#}"
    );
    assert_eq!(rpc.finish(), 0);
}

#[test]
fn query_raw_and_format_shape_the_text_the_model_reads() {
    let sb = Sandbox::new();
    install_example(&sb);
    write(
        &sb.project.join("Cargo.toml"),
        "[package]\nname = \"demo\"\nversion = \"1.2.3\"\n",
    );
    // The README's own example: a raw string is written as it is (like `jq -r`).
    let run = sb
        .rho(&[
            "tools",
            "call",
            QUERY,
            r#"{"path": "Cargo.toml", "select": "package.name", "raw": true}"#,
        ])
        .ok();
    assert_eq!(run.stdout, "demo\n");
    let result = call_ok(
        &sb,
        QUERY,
        &json!({"path": "Cargo.toml", "select": "package", "format": "yaml"}),
    );
    assert_eq!(result["text"], "name: demo\nversion: \"1.2.3\"\n");
}

#[test]
fn a_plugin_with_only_tool_components_is_not_reported_as_empty() {
    let sb = Sandbox::new();
    let plugin = sb.user_plugins().join("only-tools");
    make_plugin_with_extensions(
        &plugin,
        "only-tools",
        &json!({"dev.rho": {"tools": {"data": {"workspace": "read"}}}}),
    );
    std::fs::create_dir_all(plugin.join("dev.rho/tools")).unwrap();
    std::fs::copy(data_wasm(), plugin.join("dev.rho/tools/data.wasm")).unwrap();
    let list = tools_list(&sb);
    listed_tool(&list, "wasm__only-tools__query");
    let listed = sb.plugin("only-tools");
    assert_eq!(listed["tool_components"], json!(["data"]), "{listed:#}");
    assert!(
        !codes(&listed).contains(&"plugin-no-components".to_owned()),
        "the plugin contributes two tools: {listed:#}"
    );
}

#[test]
fn plugins_new_scaffolds_a_tool_plugin_from_the_template() {
    let sb = Sandbox::new();
    let sdk = repo_root().join("plugin-sdk");
    let run = sb
        .rho(&[
            "plugins",
            "new",
            "word-tools",
            "--tool",
            "word_count",
            "--sdk-path",
            sdk.to_str().unwrap(),
            "--json",
        ])
        .ok()
        .json();
    assert_eq!(run["plugin"], "word-tools");
    let dir = sb.project.join("word-tools");
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("plugin.json")).unwrap()).unwrap();
    assert_eq!(manifest["name"], "word-tools");
    assert!(manifest["extensions"]["dev.rho"]["tools"]["word_count"].is_object());
    let cargo = std::fs::read_to_string(dir.join("tool/Cargo.toml")).unwrap();
    assert!(cargo.contains("rho-tool-word_count"), "{cargo}");
    assert!(
        cargo.contains(&format!(
            "rho-plugin-sdk = {{ path = \"{}\" }}",
            dunce::canonicalize(&sdk).unwrap().display()
        )),
        "{cargo}"
    );
    let lib = std::fs::read_to_string(dir.join("tool/src/lib.rs")).unwrap();
    assert!(
        lib.contains("\"word_count\"") && !lib.contains("{{"),
        "{lib}"
    );
    assert!(dir.join("skills/word-tools/SKILL.md").is_file());
    let mode = std::fs::metadata(dir.join("build.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o111, 0o111, "build.sh is executable");
    // Until built, validation says exactly what is missing.
    let validate = sb.rho(&["plugins", "validate", "word-tools", "--json"]);
    assert_eq!(validate.code, 1);
    assert!(
        validate.stdout.contains("word_count.wasm"),
        "{}",
        validate.stdout
    );
    // Bad names and an existing directory are refused.
    for (dir, tool) in [("Word", "x"), ("ok-name", "Bad-Name"), ("word-tools", "x")] {
        let run = sb.rho(&[
            "plugins",
            "new",
            dir,
            "--tool",
            tool,
            "--sdk-path",
            sdk.to_str().unwrap(),
        ]);
        assert_eq!(run.code, 1, "{dir} {tool}: {}", run.stdout);
    }
}

/// An installed rho starts a plugin that builds with nothing but the binary and the package
/// registries: the tool crate depends on the SDK the binary carries, written to
/// `$RHO_HOME/sdk/<version>-<hash>/`, never on the checkout rho was built from. Run from a
/// copy of the binary outside the repository and built offline (the local registry cache
/// stands in for the registry), then loaded and called.
#[test]
fn a_new_plugin_builds_offline_from_a_copy_of_rho_outside_the_repository() {
    let libdir = std::process::Command::new("rustc")
        .args(["--print", "target-libdir", "--target", "wasm32-wasip2"])
        .output()
        .unwrap();
    assert!(
        libdir.status.success()
            && Path::new(String::from_utf8_lossy(&libdir.stdout).trim()).is_dir(),
        "the wasm32-wasip2 target is missing: rustup target add wasm32-wasip2"
    );
    let sb = Sandbox::new();
    let repo = dunce::canonicalize(repo_root()).unwrap();
    let bin = sb.outside("bin").join("rho");
    if std::fs::hard_link(rho_bin(), &bin).is_err() {
        std::fs::copy(rho_bin(), &bin).unwrap();
    }
    let rho = |args: &[&str]| {
        let mut command = sb.command_of(&bin, args);
        command.stdin(std::process::Stdio::null());
        Run::from(command.output().unwrap())
    };

    let doc = rho(&[
        "plugins",
        "new",
        "word-tools",
        "--tool",
        "word_count",
        "--json",
    ])
    .ok()
    .json();
    let sdk = PathBuf::from(doc["sdk"].as_str().unwrap());
    assert!(sdk.starts_with(sb.rho_home.join("sdk")), "{doc:#}");
    assert!(sdk.join("Cargo.toml").is_file() && sdk.join("wit").is_dir());
    let dir = sb.project.join("word-tools");
    let cargo_toml = std::fs::read_to_string(dir.join("tool/Cargo.toml")).unwrap();
    assert!(
        cargo_toml.contains(&format!(
            "rho-plugin-sdk = {{ path = \"{}\" }}",
            sdk.display()
        )),
        "{cargo_toml}"
    );
    assert!(dir.join("tool/Cargo.lock").is_file());
    // A second plugin reuses the same SDK directory.
    let again = rho(&["plugins", "new", "other-tools", "--tool", "other", "--json"])
        .ok()
        .json();
    assert_eq!(again["sdk"], doc["sdk"]);

    // Nothing written names the repository.
    let needle = repo.to_str().unwrap();
    for file in walk(&sb.project)
        .into_iter()
        .chain(walk(&sb.rho_home))
        .filter(|p| p.is_file())
    {
        let text = String::from_utf8_lossy(&std::fs::read(&file).unwrap()).into_owned();
        assert!(!text.contains(needle), "{} names {needle}", file.display());
    }

    let target = sb.outside("target");
    let cargo = |args: &[&str]| {
        let out = std::process::Command::new("cargo")
            .args(args)
            .current_dir(dir.join("tool"))
            .env("CARGO_TARGET_DIR", &target)
            .env_remove("RUSTFLAGS")
            .env_remove("CARGO_ENCODED_RUSTFLAGS")
            .env_remove("CARGO_BUILD_TARGET")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "cargo {args:?} failed (offline: the registry cache needs the SDK's dependencies; \
             `cargo fetch --manifest-path plugin-sdk/Cargo.toml` fills it):\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    // Every crate of the build comes from the sandbox or the registry, none from the checkout.
    let metadata: Value =
        serde_json::from_str(&cargo(&["metadata", "--offline", "--format-version", "1"])).unwrap();
    for package in metadata["packages"].as_array().unwrap() {
        let manifest = package["manifest_path"].as_str().unwrap();
        assert!(!manifest.starts_with(needle), "{manifest}");
        if package["name"] == "rho-plugin-sdk" {
            assert_eq!(Path::new(manifest), sdk.join("Cargo.toml"), "{package:#}");
        }
    }
    cargo(&["build", "--offline", "--target", "wasm32-wasip2"]);

    let tools = dir.join("dev.rho/tools");
    std::fs::create_dir_all(&tools).unwrap();
    std::fs::copy(
        target.join("wasm32-wasip2/debug/rho_tool_word_count.wasm"),
        tools.join("word_count.wasm"),
    )
    .unwrap();
    rho(&["plugins", "validate", "word-tools"]).ok();
    rho(&["plugins", "install", "word-tools"]).ok();
    let run = rho(&[
        "tools",
        "call",
        "wasm__word-tools__word_count",
        r#"{"text": "hello"}"#,
    ])
    .ok();
    assert_eq!(run.stdout.trim_end(), "HELLO", "{}", run.stderr);
}

/// A project plugin's components run code with the capabilities its manifest grants, so they
/// load only once the user trusted the plugin, and a replaced `.wasm` or widened settings need
/// trust again (adversarial catalogue J1/J2, for components).
#[test]
fn a_project_plugins_components_load_only_once_trusted() {
    let sb = Sandbox::new();
    let plugin = sb.project_plugins().join("data-tools");
    copy_tree(&example(), &plugin);

    let untrusted = tools_list(&sb);
    assert!(
        !listed_names(&untrusted).contains(&QUERY.to_owned()),
        "{untrusted:#}"
    );
    let d = diagnostic_for(&untrusted, "data-tools/data");
    assert_eq!(d["code"], "plugin-untrusted", "{d:#}");
    assert!(
        d["message"]
            .as_str()
            .unwrap()
            .contains("rho plugins trust data-tools"),
        "{d:#}"
    );
    let run = sb.rho(&["tools", "call", QUERY, r#"{"input": "{}", "select": "a"}"#]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    // doctor names the component that will not run.
    let doctor: Value =
        serde_json::from_str(&sb.rho(&["doctor", "--no-connect", "--json"]).stdout).unwrap();
    let trust_row = doctor["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == "plugin trust")
        .unwrap();
    assert_eq!(trust_row["status"], "warning", "{trust_row:#}");
    assert!(
        trust_row["detail"]
            .as_str()
            .unwrap()
            .contains("0 server(s) and 1 WASM component(s) of untrusted project plugins will not run: data-tools/data (WASM)"),
        "{trust_row:#}"
    );

    let trusted = sb.rho(&["plugins", "trust", "data-tools"]).ok();
    assert!(
        trusted
            .stdout
            .contains("WASM component data: workspace read, env [], risk read"),
        "{}",
        trusted.stdout
    );
    let doc = sb
        .rho(&["plugins", "trust", "data-tools", "--json"])
        .ok()
        .json();
    assert_eq!(doc["components"][0]["workspace"], "read", "{doc:#}");
    let list = tools_list(&sb);
    listed_tool(&list, QUERY);
    let result = call_ok(&sb, QUERY, &json!({"input": "{\"a\": 1}", "select": "a"}));
    assert_eq!(
        result["structured_content"],
        json!({"value": 1}),
        "{result:#}"
    );

    // Widening the capabilities (read -> read-write, one env name) breaks the trust.
    let manifest_path = plugin.join("plugin.json");
    let mut manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest_path).unwrap()).unwrap();
    manifest["extensions"]["dev.rho"]["tools"]["data"]["workspace"] = json!("read-write");
    manifest["extensions"]["dev.rho"]["tools"]["data"]["env"] = json!(["HOME"]);
    std::fs::write(&manifest_path, manifest.to_string()).unwrap();
    let changed = tools_list(&sb);
    assert!(
        !listed_names(&changed).contains(&QUERY.to_owned()),
        "{changed:#}"
    );
    let d = diagnostic_for(&changed, "data-tools/data");
    assert!(
        d["message"]
            .as_str()
            .unwrap()
            .contains("changed since you trusted it"),
        "{d:#}"
    );

    // Trusted again, then the component's bytes are replaced: untrusted again.
    sb.rho(&["plugins", "trust", "data-tools"]).ok();
    listed_tool(&tools_list(&sb), QUERY);
    let mut bytes = std::fs::read(data_wasm()).unwrap();
    bytes.extend_from_slice(b"\0");
    std::fs::write(plugin.join("dev.rho/tools/data.wasm"), &bytes).unwrap();
    let replaced = tools_list(&sb);
    assert!(
        !listed_names(&replaced).contains(&QUERY.to_owned()),
        "{replaced:#}"
    );
    assert_eq!(
        diagnostic_for(&replaced, "data-tools/data")["code"],
        "plugin-untrusted"
    );
}

/// Two components of one plugin that declare the same tool: the first keeps the name, the
/// second's tool is left out, and the diagnostic names both components.
#[test]
fn two_components_declaring_one_tool_name_are_reported_by_component() {
    let sb = Sandbox::new();
    let plugin = sb.user_plugins().join("twice");
    make_plugin_with_extensions(
        &plugin,
        "twice",
        &json!({"dev.rho": {"tools": {"a": {"workspace": "read"}, "b": {"workspace": "read"}}}}),
    );
    std::fs::create_dir_all(plugin.join("dev.rho/tools")).unwrap();
    for name in ["a", "b"] {
        std::fs::copy(
            data_wasm(),
            plugin.join(format!("dev.rho/tools/{name}.wasm")),
        )
        .unwrap();
    }
    let list = tools_list(&sb);
    let query = listed_tool(&list, "wasm__twice__query");
    assert_eq!(query["plugin"], "twice", "{query:#}");
    let collisions: Vec<&Value> = diagnostics(&list)
        .iter()
        .filter(|d| d["code"] == "tool-name-collision")
        .collect();
    assert_eq!(collisions.len(), 2, "convert and query: {list:#}");
    for d in collisions {
        assert_eq!(d["component"], "twice/b", "{d:#}");
        let message = d["message"].as_str().unwrap();
        assert!(
            message.contains("of WASM component `twice/a` is kept")
                && message.contains("of WASM component `twice/b` is left out"),
            "{message}"
        );
    }
    // The kept tool works.
    let result = call_ok(
        &sb,
        "wasm__twice__query",
        &json!({"input": "a: 1", "select": "a"}),
    );
    assert_eq!(result["structured_content"], json!({"value": 1}));
}

/// Inspecting a project plugin runs none of its code until it is trusted: the component is
/// reported from its manifest, nothing is compiled into the cache, and the output says its
/// tools are listed once trusted. Trusting it lists the tools (and fills the cache).
#[test]
fn inspecting_an_untrusted_project_plugin_compiles_and_runs_nothing() {
    let sb = Sandbox::new();
    let plugin = sb.project_plugins().join("pt");
    std::fs::create_dir_all(plugin.join("dev.rho/tools")).unwrap();
    std::fs::copy(data_wasm(), plugin.join("dev.rho/tools/data.wasm")).unwrap();
    make_plugin_with_extensions(
        &plugin,
        "pt",
        &json!({"dev.rho": {"tools": {"data": {"workspace": "read"}}}}),
    );
    let cache = sb.rho_home.join("cache/wasm");

    let inspect = sb.rho(&["plugins", "inspect", "pt", "--json"]).ok().json();
    assert_eq!(inspect["trust"], "untrusted", "{inspect:#}");
    assert_eq!(inspect["tool_components"], json!(["data"]), "{inspect:#}");
    let details = &inspect["tool_component_details"][0];
    assert_eq!(details["tools"], Value::Null, "{inspect:#}");
    assert!(
        details["path"]
            .as_str()
            .unwrap()
            .ends_with("dev.rho/tools/data.wasm"),
        "{inspect:#}"
    );
    let note = details["tools_not_listed"].as_str().unwrap_or_default();
    assert!(note.contains("rho plugins trust pt"), "{inspect:#}");
    let text = sb.rho(&["plugins", "inspect", "pt"]).ok().stdout;
    assert!(
        text.contains("tools not listed: the plugin is not trusted"),
        "{text}"
    );
    assert!(
        !text.contains(CONVERT.replace("data-tools", "pt").as_str()),
        "{text}"
    );
    sb.rho(&["plugins", "list"]).ok();
    assert!(
        !cache.exists() || cache_snapshot(&cache).is_empty(),
        "an untrusted component is never compiled"
    );

    sb.rho(&["plugins", "trust", "pt"]).ok();
    let inspect = sb.rho(&["plugins", "inspect", "pt", "--json"]).ok().json();
    let details = &inspect["tool_component_details"][0];
    let tools: Vec<&str> = details["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("a trusted plugin lists its tools: {inspect:#}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["convert", "query"], "{inspect:#}");
    assert_eq!(details["tools_not_listed"], Value::Null, "{inspect:#}");
    assert_eq!(
        cache_snapshot(&cache).len(),
        1,
        "trusted: compiled and cached"
    );
}

/// Under a `RHO_HOME` whose path is not UTF-8, `rho plugins new` cannot name the SDK it carries
/// in the new plugin's `Cargo.toml` (UTF-8 text): it says so and how to go on, and writes no
/// plugin directory, instead of naming a directory that does not exist.
#[test]
fn plugins_new_refuses_an_sdk_path_that_is_not_utf8() {
    use std::os::unix::ffi::OsStrExt;

    let sb = Sandbox::new();
    let odd_home = sb
        .outside("homes")
        .join(std::ffi::OsStr::from_bytes(b"h\xe9"))
        .join(".rho");
    std::fs::create_dir_all(&odd_home).unwrap();
    let run = Run::from(
        sb.command(&["plugins", "new", "odd-tools", "--tool", "count"])
            .env("RHO_HOME", &odd_home)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap(),
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("is not a UTF-8 path") && run.stderr.contains("--sdk-path"),
        "{}",
        run.stderr
    );
    assert!(!sb.project.join("odd-tools").exists());
}
