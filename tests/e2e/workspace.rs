//! Rules about the workspace itself: the crate dependency graph that ARCHITECTURE.md's crate
//! table and rules lay down, the documentation tables that must stay in step with the code, and
//! that the repository stands alone (it cites only documents it holds).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use rho_e2e::repo_root;
use serde_json::Value;

/// `cargo metadata --no-deps` of the workspace whose manifest is `manifest` (relative to the
/// repository root).
fn metadata(manifest: &str) -> Value {
    let out = std::process::Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
            "--manifest-path",
            manifest,
        ])
        .current_dir(repo_root())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn workspace_graph() -> BTreeMap<String, BTreeSet<String>> {
    let meta = metadata("Cargo.toml");
    let mut graph = BTreeMap::new();
    for package in meta["packages"].as_array().unwrap() {
        let deps = package["dependencies"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["kind"].is_null()) // normal dependencies only
            .map(|d| d["name"].as_str().unwrap().to_owned())
            .collect();
        graph.insert(package["name"].as_str().unwrap().to_owned(), deps);
    }
    graph
}

fn rho_deps(graph: &BTreeMap<String, BTreeSet<String>>, krate: &str) -> BTreeSet<String> {
    graph
        .get(krate)
        .map(|d| {
            d.iter()
                .filter(|n| n.starts_with("rho-"))
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

/// The crate table of ARCHITECTURE.md: each package and the rho crates its row says it may
/// depend on ("—": none; "everything above": every package of the rows before it; short
/// names as the table writes them, `config` for `rho-config`, a remark in parentheses
/// ignored).
fn architecture_rules() -> Vec<(String, BTreeSet<String>)> {
    let text = std::fs::read_to_string(rho_e2e::repo_root().join("ARCHITECTURE.md")).unwrap();
    let mut rules: Vec<(String, BTreeSet<String>)> = Vec::new();
    for line in text.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // | folder | package | holds | may depend on |
        let (package, deps) = (cells[2], cells[cells.len() - 2]);
        let Some(package) = package
            .strip_prefix('`')
            .and_then(|p| p.split('`').next())
            .filter(|p| p.starts_with("rho-"))
        else {
            continue;
        };
        let allowed: BTreeSet<String> = match deps {
            "—" => BTreeSet::new(),
            "everything above" => rules.iter().map(|(k, _)| k.clone()).collect(),
            list => {
                let mut depth = 0;
                let without_remarks: String = list
                    .chars()
                    .filter(|c| {
                        match c {
                            '(' => depth += 1,
                            ')' => {
                                depth -= 1;
                                return false;
                            }
                            _ => {}
                        }
                        depth == 0
                    })
                    .collect();
                without_remarks
                    .split(',')
                    .map(|d| format!("rho-{}", d.trim()))
                    .collect()
            }
        };
        rules.push((package.to_owned(), allowed));
    }
    rules
}

#[test]
fn crate_graph_follows_the_architecture() {
    let graph = workspace_graph();
    let rules = architecture_rules();
    assert!(
        rules.iter().any(|(k, _)| k == "rho-core"),
        "ARCHITECTURE.md's crate table was not read: {rules:?}"
    );
    // What the table says is what the manifests say: no dependency the table forbids, and no
    // dependency the table claims that does not exist.
    for (krate, allowed) in &rules {
        let actual = rho_deps(&graph, krate);
        assert_eq!(
            &actual, allowed,
            "{krate}: Cargo.toml says {actual:?}, ARCHITECTURE.md says {allowed:?}"
        );
    }
    for (krate, deps) in &graph {
        if !krate.starts_with("rho-") {
            continue;
        }
        assert!(
            rules.iter().any(|(k, _)| k == krate) || krate == "rho-plugin-sdk",
            "{krate} has no row in ARCHITECTURE.md's crate table"
        );
        // Leaves know nothing: rho-component is plain data, no IO runtime (libc only for the
        // open flags of its one file reader; the JSON Schema crates for json_schema.rs; strum's
        // derives for the lists and spellings of its enums).
        if krate == "rho-component" {
            let leaf = [
                "serde",
                "serde_json",
                "url",
                "libc",
                "jsonschema",
                "schemars",
                "strum",
            ];
            assert!(deps.iter().all(|d| leaf.contains(&d.as_str())), "{deps:?}");
        }
    }
    // rmcp and wasmtime each live in exactly one crate.
    for (heavy, home) in [("rmcp", "rho-mcp"), ("wasmtime", "rho-wasm")] {
        let users: Vec<_> = graph
            .iter()
            .filter(|(_, d)| d.contains(heavy))
            .map(|(k, _)| k.clone())
            .collect();
        assert!(
            users.is_empty() || users == [home.to_string()],
            "{heavy} used by {users:?}"
        );
    }
}

/// The SDK never depends on the host: it is its own workspace (so the workspace graph above
/// does not see it), and none of its dependencies is a rho crate or a path into the checkout.
#[test]
fn the_sdk_never_depends_on_the_host() {
    let meta = metadata("plugin-sdk/Cargo.toml");
    let packages = meta["packages"].as_array().unwrap();
    assert_eq!(packages.len(), 1, "{packages:?}");
    assert_eq!(packages[0]["name"], "rho-plugin-sdk");
    let dependencies = packages[0]["dependencies"].as_array().unwrap();
    assert!(
        !dependencies.is_empty(),
        "the SDK's dependencies were not read"
    );
    for dependency in dependencies {
        let name = dependency["name"].as_str().unwrap();
        assert!(!name.starts_with("rho-"), "the SDK depends on {name}");
        assert!(
            dependency["path"].is_null(),
            "the SDK depends on {name} by path: {}",
            dependency["path"]
        );
    }
}

#[test]
fn every_diagnostic_code_is_documented_and_every_documented_code_exists() {
    let doc = std::fs::read_to_string(repo_root().join("docs/diagnostics.md")).unwrap();
    let documented: BTreeSet<String> = doc
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .map(str::to_owned)
        .collect();
    let codes: BTreeSet<String> = rho_component::DiagnosticCode::ALL
        .iter()
        .map(|c| c.as_str().to_owned())
        .collect();
    assert_eq!(documented, codes);
}

/// Every text file of the repository, by path relative to its root: everything but `.git`,
/// build output (`target`), installed packages (`node_modules`), links, and files that are
/// not UTF-8 (components, images).
fn repository_text_files() -> Vec<(PathBuf, String)> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(PathBuf, String)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let kind = entry.file_type().unwrap();
            let name = entry.file_name();
            if kind.is_dir() {
                if !matches!(name.to_str(), Some(".git" | "target" | "node_modules")) {
                    walk(root, &path, out);
                }
            } else if kind.is_file()
                && let Ok(text) = std::fs::read_to_string(&path)
            {
                out.push((path.strip_prefix(root).unwrap().to_path_buf(), text));
            }
        }
    }
    let root = repo_root();
    let mut out = Vec::new();
    walk(&root, &root, &mut out);
    out.sort();
    out
}

/// The `.md` names in `line` (`docs/mcp.md`, `rho-example.md`): runs of path characters ending in
/// `.md` that the next character does not continue.
fn md_names(line: &str) -> Vec<&str> {
    let is_path = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-');
    let mut names = Vec::new();
    for (at, _) in line.match_indices(".md") {
        let end = at + 3;
        if line[end..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric())
        {
            continue;
        }
        let start = line[..at]
            .char_indices()
            .rev()
            .take_while(|(_, c)| is_path(*c))
            .last()
            .map_or(at, |(i, _)| i);
        names.push(&line[start..end]);
    }
    names
}

/// Whether a `.md` name must be a document the repository holds: one shaped like rho's
/// behaviour documents (`rho-<topic>.md`, `peer-<name>.md`) anywhere, and, outside tests (whose
/// texts are sample content), a document named in capitals (`README.md`, `ARCHITECTURE.md`).
fn must_be_held(name: &str, in_tests: bool) -> bool {
    let file = name.rsplit('/').next().unwrap_or(name);
    let stem = file.trim_end_matches(".md");
    file.starts_with("rho-")
        || file.starts_with("peer-")
        || (!in_tests
            && !stem.is_empty()
            && stem
                .chars()
                .all(|c| c.is_ascii_uppercase() || c == '_' || c == '-'))
}

/// Whether a path written in a file of `dir` (relative to the repository root) climbs out of
/// the repository with `..`.
fn leaves_the_repository(dir: &Path, path: &str) -> bool {
    let mut depth = dir.components().count();
    for part in path.split('/') {
        match part {
            ".." if depth == 0 => return true,
            ".." => depth -= 1,
            "" | "." => {}
            _ => depth += 1,
        }
    }
    false
}

/// The runs of path characters in `line` that start with `../` and name a document (`.md`);
/// other such paths are examples of traversal, not citations.
fn parent_paths(line: &str) -> Vec<&str> {
    let is_path = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-');
    let mut paths = Vec::new();
    for (at, _) in line.match_indices("../") {
        if line[..at].chars().next_back().is_some_and(is_path) {
            continue;
        }
        let end = line[at..]
            .char_indices()
            .find(|(_, c)| !is_path(*c))
            .map_or(line.len(), |(i, _)| at + i);
        if line[at..end].ends_with(".md") {
            paths.push(&line[at..end]);
        }
    }
    paths
}

/// The relative link targets of a Markdown text: `[text](target)` and `[label]: target`,
/// without their `#fragment`; URLs and in-page anchors are left out.
fn markdown_links(text: &str) -> Vec<&str> {
    let mut targets = Vec::new();
    for (at, _) in text.match_indices("](") {
        let rest = &text[at + 2..];
        if let Some(end) = rest.find(')') {
            targets.push(rest[..end].split_whitespace().next().unwrap_or(""));
        }
    }
    for line in text.lines() {
        if line.starts_with('[')
            && let Some((_, target)) = line.split_once("]: ")
        {
            targets.push(target.split_whitespace().next().unwrap_or(""));
        }
    }
    targets
        .into_iter()
        .map(|t| t.split('#').next().unwrap_or(""))
        .filter(|t| !t.is_empty() && !t.contains(':'))
        .collect()
}

/// The repository stands alone: no path in it climbs out of the repository, every `.md` name
/// shaped like one of its documents names a file it holds, and every relative Markdown link
/// resolves.
#[test]
fn the_repository_cites_only_documents_it_holds() {
    let root = repo_root();
    let files = repository_text_files();
    let held: BTreeSet<String> = files
        .iter()
        .filter(|(p, _)| p.extension().is_some_and(|e| e == "md"))
        .flat_map(|(p, _)| {
            let path = p.to_string_lossy().into_owned();
            let file = p.file_name().unwrap().to_string_lossy().into_owned();
            [path, file]
        })
        .collect();
    let this_file = Path::new("tests/e2e/workspace.rs");
    let mut problems = Vec::new();
    for (path, text) in &files {
        if path == this_file {
            continue;
        }
        for (n, line) in text.lines().enumerate() {
            let at = format!("{}:{}", path.display(), n + 1);
            let dir = path.parent().unwrap_or(Path::new(""));
            let in_tests = path.components().any(|c| c.as_os_str() == "tests");
            for outside in parent_paths(line)
                .into_iter()
                .filter(|p| leaves_the_repository(dir, p))
            {
                problems.push(format!("{at}: points outside the repository ({outside})"));
            }
            for name in md_names(line) {
                let file = name.rsplit('/').next().unwrap_or(name);
                if must_be_held(name, in_tests)
                    && !held.contains(name.trim_start_matches("./"))
                    && !held.contains(file)
                {
                    problems.push(format!("{at}: {name} is not in the repository"));
                }
            }
        }
        let in_fixtures = path.starts_with("tests/fixtures");
        if path.extension().is_some_and(|e| e == "md") && !in_fixtures {
            let dir = root.join(path.parent().unwrap());
            for target in markdown_links(text) {
                if !dir.join(target).exists() {
                    problems.push(format!(
                        "{}: links to {target}, which does not exist",
                        path.display()
                    ));
                }
            }
        }
    }
    assert!(
        problems.is_empty(),
        "cite the repository's own docs/ instead (and say there what rho does):\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_reference_check_sees_what_it_looks_for() {
    assert_eq!(
        md_names("see `docs/mcp.md`, rho-example.md and (../x/rho-other.md) but not a.mdx"),
        ["docs/mcp.md", "rho-example.md", "../x/rho-other.md"]
    );
    assert!(must_be_held("rho-any-behaviour.md", true));
    assert!(must_be_held("peer-everything.md", false));
    assert!(must_be_held("ARCHITECTURE.md", false));
    assert!(!must_be_held("CHANGELOG.md", true));
    assert!(!must_be_held("docs/mcp.md", false));
    assert!(!must_be_held("decisions.md", false));
    assert_eq!(
        parent_paths("at (../README.md) and ../../x/y.md, not a/../b.md or ../../etc/passwd"),
        ["../README.md", "../../x/y.md"]
    );
    assert!(!leaves_the_repository(Path::new("docs"), "../README.md"));
    assert!(leaves_the_repository(Path::new("docs"), "../../x/y.md"));
    assert!(leaves_the_repository(Path::new(""), "../x"));
    assert!(!leaves_the_repository(Path::new("a/b"), "../../c"));
    assert_eq!(
        markdown_links("[a](docs/a.md#x) [b](https://x.org) [c](#top)\n[d]: ../README.md\n"),
        ["docs/a.md", "../README.md"]
    );
}

/// The end-to-end tests are one binary (`tests/e2e/main.rs`): a file of `tests/e2e/` that it
/// does not declare as a module would never be compiled or run.
#[test]
fn every_e2e_file_is_a_module_of_the_one_test_binary() {
    let dir = repo_root().join("tests/e2e");
    let main = std::fs::read_to_string(dir.join("main.rs")).unwrap();
    let declared: BTreeSet<String> = main
        .lines()
        .filter_map(|l| l.strip_prefix("mod ")?.strip_suffix(';'))
        .map(str::to_owned)
        .collect();
    let files: BTreeSet<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .filter(|stem| stem != "main")
        .collect();
    assert_eq!(declared, files, "tests/e2e/main.rs declares each file once");
}
