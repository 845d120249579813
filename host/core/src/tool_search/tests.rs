//! Unit tests of the tool search ranking; its quality on real servers' tools is measured in
//! `host/core/tests/tool_search_quality.rs`.

use std::time::Instant;

use rho_component::{RiskLevel, ToolOrigin, ToolSpec, naming::ExportedNames};
use serde_json::json;

use super::*;

fn doc(names: &mut ExportedNames, server: &str, tool: &str, description: &str) -> SearchDoc {
    SearchDoc {
        name: names.assign(server, tool),
        server: Some(server.to_owned()),
        tool: tool.to_owned(),
        description: description.to_owned(),
        parameters: Vec::new(),
    }
}

fn sample() -> Vec<SearchDoc> {
    let mut names = ExportedNames::default();
    vec![
        doc(
            &mut names,
            "github",
            "create_issue",
            "Create a new issue in a GitHub repository",
        ),
        doc(
            &mut names,
            "gitlab",
            "create_issue",
            "Create a new issue in a GitLab project",
        ),
        doc(
            &mut names,
            "github",
            "list_issues",
            "List issues in a GitHub repository",
        ),
        doc(
            &mut names,
            "time",
            "get_current_time",
            "Get current time in a specific timezone",
        ),
        doc(
            &mut names,
            "everything",
            "get-env",
            "Returns all environment variables",
        ),
        // Says the words of another tool's name over and over.
        doc(
            &mut names,
            "noise",
            "get_env_report",
            "Get env: get the env, get env, get env. Create issue, create issue.",
        ),
    ]
}

fn names_of(index: &SearchIndex, hits: &[Hit]) -> Vec<String> {
    hits.iter()
        .map(|hit| index.docs()[hit.index].name.clone())
        .collect()
}

#[test]
fn an_exact_exported_name_ranks_first() {
    let index = SearchIndex::new(sample());
    // Hex-encoded (`get-env` holds a `-`): the exported name is still an exact match.
    let exported = ExportedNames::default().assign("everything", "get-env");
    assert!(exported.contains("_rho_"), "{exported}");
    let hits = index.search(&exported, 5);
    assert_eq!(names_of(&index, &hits)[0], exported);

    // Two servers share `create_issue`; the exported name picks one.
    let gitlab = ExportedNames::default().assign("gitlab", "create_issue");
    let hits = index.search(&format!("  {gitlab}\n"), 5);
    assert_eq!(names_of(&index, &hits)[0], gitlab);
}

#[test]
fn an_exact_own_name_ranks_first_for_every_server_that_has_it() {
    let index = SearchIndex::new(sample());
    let hits = index.search("create_issue", 5);
    let mut first_two = names_of(&index, &hits)[..2].to_vec();
    first_two.sort();
    assert_eq!(
        first_two,
        ["mcp__github__create_issue", "mcp__gitlab__create_issue"]
    );

    // The display name a person reads works too, and picks its server.
    let hits = index.search("gitlab › create_issue", 5);
    assert_eq!(names_of(&index, &hits)[0], "mcp__gitlab__create_issue");

    // Without the rule, the tool whose description repeats the words wins.
    let plain = SearchIndex::with_ranking(
        sample(),
        Ranking {
            exact_names: false,
            ..Ranking::default()
        },
    );
    let hits = plain.search("get-env", 5);
    assert_eq!(names_of(&plain, &hits)[0], "mcp__noise__get_env_report");
    let hits = index.search("get-env", 5);
    assert_eq!(
        names_of(&index, &hits)[0],
        "mcp__everything___rho_6765742d656e76"
    );
}

#[test]
fn words_find_tools_by_name_parameters_and_description() {
    let mut names = ExportedNames::default();
    let mut docs = sample();
    let mut with_params = doc(
        &mut names,
        "maps",
        "maps_elevation",
        "Get data for locations",
    );
    with_params.parameters = vec!["latitudeDegrees".to_owned()];
    docs.push(with_params);
    let index = SearchIndex::new(docs);

    let hits = index.search("what time is it in Tokyo?", 5);
    assert_eq!(names_of(&index, &hits)[0], "mcp__time__get_current_time");
    // camelCase parameter names are split.
    let hits = index.search("latitude", 5);
    assert_eq!(names_of(&index, &hits), ["mcp__maps__maps_elevation"]);
    // Stemming: `issue` meets `issues`; the name outweighs the description.
    let hits = index.search("list the issues", 5);
    assert_eq!(names_of(&index, &hits)[0], "mcp__github__list_issues");
    // Stop words match nothing.
    assert!(index.search("what is this", 5).is_empty());
    // Nothing shares a word: nothing comes back.
    assert!(index.search("xylophone", 5).is_empty());
    // `limit` is a maximum.
    assert_eq!(index.search("issue", 2).len(), 2);
    assert!(index.search("issue", 0).is_empty());
}

#[test]
fn the_baseline_reads_names_and_descriptions_plainly() {
    let index = SearchIndex::plain_bm25_baseline(sample());
    // No exact-name rule and no stop words: `get-env` is just two words.
    let hits = index.search("get-env", 5);
    assert_eq!(names_of(&index, &hits)[0], "mcp__noise__get_env_report");
    // No stemming: `issue` does not meet `issues`.
    let hits = index.search("issue", 10);
    assert!(!names_of(&index, &hits).contains(&"mcp__github__list_issues".to_owned()));
}

#[test]
fn only_the_first_thousand_characters_of_a_query_are_read() {
    let index = SearchIndex::new(sample());
    let query = format!("{} timezone", "x".repeat(MAX_QUERY_CHARS));
    assert!(index.search(&query, 5).is_empty());
    let query = format!("{} timezone", "é".repeat(MAX_QUERY_CHARS - 9));
    assert_eq!(
        names_of(&index, &index.search(&query, 5)),
        ["mcp__time__get_current_time"]
    );
}

#[test]
fn odd_input_never_panics() {
    let empty = SearchIndex::new(Vec::new());
    assert!(empty.search("anything", 5).is_empty());
    assert!(
        SearchIndex::plain_bm25_baseline(Vec::new())
            .search("", 5)
            .is_empty()
    );

    let mut docs = sample();
    docs.push(SearchDoc {
        name: String::new(),
        server: None,
        tool: String::new(),
        description: "\u{0}\u{1b}[31m 🦀 İ̇ ǅ ".repeat(5_000),
        parameters: vec![String::new(), "🦀".to_owned()],
    });
    // Fields far past every bound: the build reads only their start.
    docs.push(SearchDoc {
        name: "n".repeat(1_000_000),
        server: Some("s".repeat(1_000_000)),
        tool: "get_".repeat(250_000),
        description: "word ".repeat(1_000_000),
        parameters: vec!["p".repeat(100_000); 10_000],
    });
    let start = Instant::now();
    let index = SearchIndex::new(docs);
    assert!(start.elapsed().as_secs() < 5, "{:?}", start.elapsed());
    let huge = "create issue ".repeat(100_000);
    for query in [
        "",
        " ",
        "\n",
        "\u{0}",
        "🦀",
        "İ̇",
        "___",
        "-",
        "›",
        " › ",
        &huge,
        "a",
        "the the the",
    ] {
        for limit in [0, 1, 5, usize::MAX] {
            let hits = index.search(query, limit);
            assert!(hits.len() <= limit.min(index.docs().len()));
            assert!(
                hits.iter()
                    .all(|hit| hit.score.is_finite() && hit.score >= 0.0)
            );
        }
    }
    // An empty query is no name, not even of a tool whose name is empty.
    assert!(index.search("", 5).is_empty());
    assert!(index.search(" \n", 5).is_empty());
}

#[test]
fn from_spec_takes_names_description_and_parameters() {
    let spec = ToolSpec {
        name: "mcp__github__create_issue".to_owned(),
        title: Some("Create issue".to_owned()),
        description: format!(
            "Create issue: Create a new issue\n(MCP tool `create_issue` of server `github`)\n\
             {SERVER_HINT_PREFIX}may modify its environment (readOnlyHint: false)"
        ),
        input_schema: json!({"type": "object", "properties": {"owner": {}, "repo": {}, "title": {}}}),
        output_schema: None,
        risk: RiskLevel::Destructive,
        origin: ToolOrigin::Mcp {
            server: "github".to_owned(),
            plugin: None,
            tool: "create_issue".to_owned(),
        },
    };
    let doc = SearchDoc::from_spec(&spec);
    assert_eq!(
        doc,
        SearchDoc {
            name: "mcp__github__create_issue".to_owned(),
            server: Some("github".to_owned()),
            tool: "create_issue".to_owned(),
            description:
                "Create issue: Create a new issue\n(MCP tool `create_issue` of server `github`)"
                    .to_owned(),
            parameters: vec!["owner".to_owned(), "repo".to_owned(), "title".to_owned()],
        }
    );

    let wasm = ToolSpec {
        name: "wasm__data-tools__convert".to_owned(),
        origin: ToolOrigin::Wasm {
            plugin: "data-tools".to_owned(),
            component: "convert".to_owned(),
            tool: "convert".to_owned(),
        },
        input_schema: json!({"type": "object", "properties": "not an object"}),
        ..spec.clone()
    };
    let doc = SearchDoc::from_spec(&wasm);
    assert_eq!(
        (doc.server.as_deref(), doc.tool.as_str()),
        (Some("data-tools"), "convert")
    );
    assert!(doc.parameters.is_empty());

    let builtin = ToolSpec {
        name: "read_file".to_owned(),
        origin: ToolOrigin::Builtin,
        input_schema: json!(true),
        ..spec
    };
    let doc = SearchDoc::from_spec(&builtin);
    assert_eq!((doc.server, doc.tool.as_str()), (None, "read_file"));
}

/// A thousand tools of realistic size are indexed and searched quickly. The time is printed
/// (`--nocapture`); the bound is generous so that a loaded two-core CI machine in a debug build
/// never fails it. The release figure is in `docs/benchmarks.md`, "Tool search quality".
#[test]
fn a_thousand_tools_index_and_search_quickly() {
    let verbs = [
        "create", "list", "get", "update", "delete", "search", "run", "export",
    ];
    let nouns = [
        "issue", "branch", "page", "table", "invoice", "message", "chart", "document", "paper",
        "trace", "file", "channel",
    ];
    let mut names = ExportedNames::default();
    let docs: Vec<SearchDoc> = (0..1_000)
        .map(|i| {
            let verb = verbs[i % verbs.len()];
            let noun = nouns[(i / verbs.len()) % nouns.len()];
            let server = format!("server-{}", i / 40);
            let tool = format!("{verb}_{noun}_{i}");
            let mut doc = doc(
                &mut names,
                &server,
                &tool,
                &format!(
                    "{verb} a {noun} in the workspace. Use this when the user asks to {verb} one \
                     or more {noun}s; it returns the {noun} identifiers, their titles, owners and \
                     the time they were last changed, paginated by a cursor. {}",
                    "Extra detail about limits and errors. ".repeat(i % 7)
                ),
            );
            doc.parameters = vec![
                "pageId".to_owned(),
                format!("{noun}_id"),
                "limit".to_owned(),
            ];
            doc
        })
        .collect();
    let start = Instant::now();
    let index = SearchIndex::new(docs);
    let built = start.elapsed();
    let start = Instant::now();
    let hits = index.search("delete the old invoices from last month", 5);
    let searched = start.elapsed();
    eprintln!("1,000 tools: index built in {built:?}, one search in {searched:?}");
    assert_eq!(hits.len(), 5);
    assert!(
        index.docs()[hits[0].index]
            .tool
            .starts_with("delete_invoice")
    );
    assert!(built.as_secs() < 5, "building took {built:?}");
}
