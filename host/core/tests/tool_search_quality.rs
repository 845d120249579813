//! The tool search ranking against a plain BM25 baseline on real servers' tools: 399 tool
//! definitions listed from 28 MCP servers published on npm and PyPI
//! (`data/tool_search/tool_sets.json`, rebuilt by `data/tool_search/collect/run.sh`) and 181
//! requests written as a person would ask them (`data/tool_search/queries.json`). Both indexes
//! see each tool as a session does: its exported name from rho's naming table, the description
//! rho-mcp writes for the model, and [`SearchDoc::from_spec`].
//!
//! Run with `-- --nocapture` to see the tables (`docs/benchmarks.md`, "Tool search quality").
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr
)]

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::time::{Duration, Instant};

use rho_component::naming::ExportedNames;
use rho_component::{RiskLevel, ToolOrigin, ToolSpec, tool_display_name};
use rho_core::tool_search::{FieldWeights, Hit, Ranking, SearchDoc, SearchIndex};
use rho_mcp::ServerTool;
use serde::Deserialize;
use serde_json::Value;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolSets {
    #[allow(dead_code)]
    about: String,
    client: Value,
    servers: Vec<Server>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Server {
    id: String,
    package: String,
    registry: String,
    version: String,
    license: String,
    collected: String,
    #[allow(dead_code)]
    started_as: String,
    #[allow(dead_code)]
    #[serde(default)]
    dummy_env: Option<Value>,
    #[allow(dead_code)]
    #[serde(default)]
    note: Option<String>,
    /// Each tool as the server listed it (`name`, `title`, `description`, `inputSchema`,
    /// `annotations`).
    tools: Vec<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Queries {
    #[allow(dead_code)]
    about: String,
    queries: Vec<Query>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Query {
    kind: String,
    /// The request's words (or an exact own tool name).
    #[serde(default)]
    query: Option<String>,
    /// A server and tool whose exported name is the request.
    #[serde(default)]
    exported: Option<[String; 2]>,
    /// The tools that serve the request (server, tool); any one of them does.
    relevant: Vec<[String; 2]>,
}

fn data(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/tool_search")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The data set: one [`SearchDoc`] per tool (built as a session builds them), the exported
/// name table, and the requests.
struct Fixture {
    docs: Vec<SearchDoc>,
    names: ExportedNames,
    queries: Vec<Query>,
}

fn fixture() -> Fixture {
    let sets: ToolSets = serde_json::from_str(&data("tool_sets.json")).unwrap();
    let queries: Queries = serde_json::from_str(&data("queries.json")).unwrap();
    assert!(
        sets.client.get("package").is_some(),
        "the client is recorded"
    );
    let mut names = ExportedNames::default();
    let mut docs = Vec::new();
    let mut registries = BTreeSet::new();
    for server in &sets.servers {
        for (field, value) in [
            ("package", &server.package),
            ("version", &server.version),
            ("license", &server.license),
            ("collected", &server.collected),
        ] {
            assert!(!value.is_empty(), "{}: {field} is recorded", server.id);
        }
        registries.insert(server.registry.as_str());
        for definition in &server.tools {
            let tool = ServerTool {
                name: definition["name"].as_str().unwrap().to_owned(),
                definition: definition.clone(),
                needs_tasks: false,
            };
            // As `McpTool::new` mounts a server's tool.
            let spec = ToolSpec {
                name: names.assign(&server.id, &tool.name),
                title: tool.title().map(str::to_owned),
                description: rho_mcp::exported_description(&server.id, &tool),
                input_schema: definition["inputSchema"].clone(),
                output_schema: None,
                risk: RiskLevel::Destructive,
                origin: ToolOrigin::Mcp {
                    server: server.id.clone(),
                    plugin: None,
                    tool: tool.name.clone(),
                },
            };
            docs.push(SearchDoc::from_spec(&spec));
        }
    }
    assert_eq!(registries, BTreeSet::from(["PyPI", "npm"]));
    assert!(sets.servers.len() >= 10, "{} servers", sets.servers.len());
    assert!(docs.len() >= 300, "{} tools", docs.len());
    assert!(
        queries.queries.len() >= 100,
        "{} requests",
        queries.queries.len()
    );
    Fixture {
        docs,
        names,
        queries: queries.queries,
    }
}

/// A request resolved against the data: its text and the indexes of the tools that serve it.
struct Case<'a> {
    kind: &'a str,
    text: String,
    relevant: BTreeSet<usize>,
}

fn cases(fixture: &Fixture) -> Vec<Case<'_>> {
    let by_name: HashMap<&str, usize> = fixture
        .docs
        .iter()
        .enumerate()
        .map(|(i, doc)| (doc.name.as_str(), i))
        .collect();
    // The exported name of (server, tool), from rho's naming table (never hand-encoded).
    let exported = |[server, tool]: &[String; 2]| -> String {
        let name = fixture
            .names
            .iter()
            .find(|(_, target)| target.server == *server && target.tool == *tool)
            .map(|(name, _)| name.to_owned());
        name.unwrap_or_else(|| panic!("no tool {tool} on server {server} in tool_sets.json"))
    };
    let mut servers_asked = BTreeSet::new();
    let cases: Vec<Case<'_>> = fixture
        .queries
        .iter()
        .map(|query| {
            let text = match (&query.query, &query.exported) {
                (Some(text), None) => text.clone(),
                (None, Some(pair)) => exported(pair),
                _ => panic!("a request has either `query` or `exported`"),
            };
            let relevant = query
                .relevant
                .iter()
                .map(|pair| {
                    servers_asked.insert(pair[0].clone());
                    by_name[exported(pair).as_str()]
                })
                .collect();
            Case {
                kind: &query.kind,
                text,
                relevant,
            }
        })
        .collect();
    let servers: BTreeSet<String> = fixture
        .docs
        .iter()
        .filter_map(|d| d.server.clone())
        .collect();
    assert_eq!(servers_asked, servers, "every server has a request");
    cases
}

/// recall@1, recall@5 and MRR@10 of one ranking over some requests, and where each request's
/// first relevant tool ranked.
#[derive(Default)]
struct Scores {
    requests: usize,
    at1: usize,
    at5: usize,
    reciprocal: f64,
}

impl Scores {
    fn add(&mut self, rank: Option<usize>) {
        self.requests += 1;
        if let Some(rank) = rank {
            self.at1 += usize::from(rank == 1);
            self.at5 += usize::from(rank <= 5);
            self.reciprocal += 1.0 / rank as f64;
        }
    }
    fn recall1(&self) -> f64 {
        self.at1 as f64 / self.requests.max(1) as f64
    }
    fn recall5(&self) -> f64 {
        self.at5 as f64 / self.requests.max(1) as f64
    }
    fn mrr(&self) -> f64 {
        self.reciprocal / self.requests.max(1) as f64
    }
    fn row(&self, label: &str) -> String {
        format!(
            "| {label:<34} | {:>8} | {:>8.3} | {:>8.3} | {:>6.3} |",
            self.requests,
            self.recall1(),
            self.recall5(),
            self.mrr()
        )
    }
}

const HEADER: &str = "| ranking                            | requests | recall@1 | recall@5 | MRR@10 |\n\
                      | ---------------------------------- | -------: | -------: | -------: | -----: |";

/// The 1-based rank of the first relevant tool within the first 10 hits.
fn first_relevant(hits: &[Hit], relevant: &BTreeSet<usize>) -> Option<usize> {
    hits.iter()
        .position(|hit| relevant.contains(&hit.index))
        .map(|i| i + 1)
}

/// Every request against `index`: all together, by kind, and by half (odd and even lines of
/// queries.json).
fn evaluate(index: &SearchIndex, cases: &[Case<'_>]) -> (Scores, BTreeMap<String, Scores>) {
    let mut all = Scores::default();
    let mut parts: BTreeMap<String, Scores> = BTreeMap::new();
    for (i, case) in cases.iter().enumerate() {
        let rank = first_relevant(&index.search(&case.text, 10), &case.relevant);
        all.add(rank);
        parts
            .entry(format!("kind {}", case.kind))
            .or_default()
            .add(rank);
        let half = if i % 2 == 0 {
            "odd lines"
        } else {
            "even lines"
        };
        parts.entry(half.to_owned()).or_default().add(rank);
    }
    (all, parts)
}

fn median_build(docs: &[SearchDoc], build: impl Fn(Vec<SearchDoc>) -> SearchIndex) -> Duration {
    let mut times: Vec<Duration> = (0..11)
        .map(|_| {
            let owned = docs.to_vec();
            let start = Instant::now();
            let index = build(owned);
            let elapsed = start.elapsed();
            assert_eq!(index.docs().len(), docs.len());
            elapsed
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

#[test]
fn tool_search_ranking_beats_plain_bm25_on_real_tools() {
    let fixture = fixture();
    let cases = cases(&fixture);
    let rho = SearchIndex::new(fixture.docs.clone());
    let baseline = SearchIndex::plain_bm25_baseline(fixture.docs.clone());
    let (rho_all, rho_parts) = evaluate(&rho, &cases);
    let (base_all, base_parts) = evaluate(&baseline, &cases);

    println!(
        "\n{} requests over {} tools\n\n{HEADER}",
        cases.len(),
        fixture.docs.len()
    );
    println!("{}", rho_all.row("rho"));
    println!("{}", base_all.row("plain BM25 (names + descriptions)"));
    println!(
        "\nrecall@5 ratio rho / baseline: {:.3}",
        rho_all.recall5() / base_all.recall5()
    );
    println!(
        "MRR ratio rho / baseline: {:.3}",
        rho_all.mrr() / base_all.mrr()
    );

    println!("\nBy kind and by half of the set (rho, then baseline):\n\n{HEADER}");
    for (part, scores) in &rho_parts {
        println!("{}", scores.row(&format!("rho, {part}")));
        println!("{}", base_parts[part].row(&format!("baseline, {part}")));
    }

    // What each part of rho's ranking adds: the same index with that part taken away.
    let full = Ranking::default();
    let w = full.weights;
    let variants: [(&str, Ranking); 9] = [
        ("rho", full),
        (
            "without stemming",
            Ranking {
                stemming: false,
                ..full
            },
        ),
        (
            "without stop words",
            Ranking {
                stop_words: false,
                ..full
            },
        ),
        (
            "without camelCase/digit split",
            Ranking {
                split_case_and_digits: false,
                ..full
            },
        ),
        (
            "without parameter names",
            Ranking {
                weights: FieldWeights {
                    parameters: 0.0,
                    ..w
                },
                ..full
            },
        ),
        (
            "without the server field",
            Ranking {
                weights: FieldWeights { server: 0.0, ..w },
                ..full
            },
        ),
        (
            "name weighted as description",
            Ranking {
                weights: FieldWeights {
                    name: w.description,
                    ..w
                },
                ..full
            },
        ),
        (
            "without synonyms",
            Ranking {
                synonyms: false,
                ..full
            },
        ),
        (
            "without the exact-name rule",
            Ranking {
                exact_names: false,
                ..full
            },
        ),
    ];
    println!("\nAblation (each row takes one part away from rho's ranking):\n\n{HEADER}");
    for (label, ranking) in variants {
        let index = SearchIndex::with_ranking(fixture.docs.clone(), ranking);
        println!("{}", evaluate(&index, &cases).0.row(label));
    }

    println!("\nRequests rho misses at 5 (the tools that serve it; rho's first five):");
    let shown = |index: usize| {
        let doc = &fixture.docs[index];
        tool_display_name(doc.server.as_deref(), &doc.tool)
    };
    for case in &cases {
        let hits = rho.search(&case.text, 5);
        if first_relevant(&hits, &case.relevant).is_none() {
            let expected: Vec<String> = case.relevant.iter().map(|&i| shown(i)).collect();
            let got: Vec<String> = hits.iter().map(|h| shown(h.index)).collect();
            println!("- {:?} ({}): {expected:?}; {got:?}", case.text, case.kind);
        }
    }

    let rho_time = median_build(&fixture.docs, SearchIndex::new);
    let base_time = median_build(&fixture.docs, SearchIndex::plain_bm25_baseline);
    // 1,000 tools: the real ones again under other server names, as a large session has them.
    let mut thousand = Vec::new();
    for copy in 0.. {
        for doc in &fixture.docs {
            if thousand.len() == 1_000 {
                break;
            }
            let mut doc = doc.clone();
            doc.server = doc.server.map(|s| format!("{s}-{copy}"));
            doc.name = format!("{}_{copy}", doc.name);
            thousand.push(doc);
        }
        if thousand.len() == 1_000 {
            break;
        }
    }
    let thousand_time = median_build(&thousand, SearchIndex::new);
    let index = SearchIndex::new(thousand);
    let start = Instant::now();
    for case in &cases {
        index.search(&case.text, 5);
    }
    let per_search = start.elapsed() / cases.len() as u32;
    println!(
        "\nIndex build (median of 11): rho {rho_time:?}, baseline {base_time:?} for {} tools; \
         rho {thousand_time:?} for 1,000 tools; one search over 1,000 tools {per_search:?}",
        fixture.docs.len()
    );

    // Exact names always win: each such request's first hit serves it.
    for case in cases.iter().filter(|c| c.kind == "exact") {
        let first = rho.search(&case.text, 1);
        assert!(
            first
                .first()
                .is_some_and(|hit| case.relevant.contains(&hit.index)),
            "{:?} did not rank its tool first",
            case.text
        );
    }
    assert!(
        rho_all.recall5() >= 0.90,
        "rho's recall@5 is {:.3}",
        rho_all.recall5()
    );
    assert!(
        rho_all.recall5() >= base_all.recall5(),
        "rho {:.3} < baseline {:.3} (recall@5)",
        rho_all.recall5(),
        base_all.recall5()
    );
    assert!(
        rho_all.mrr() >= base_all.mrr(),
        "rho {:.3} < baseline {:.3} (MRR)",
        rho_all.mrr(),
        base_all.mrr()
    );
}
