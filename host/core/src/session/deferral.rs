//! Deferred tool definitions and the `tool_search` tool (`docs/mcp.md`, "Tool search").
//!
//! Tools that may wait are the MCP tools of servers not pinned with `defer = false`, and plugin
//! WASM tools. When their definitions would cost too much (`[agent] tool_search`: `auto` past
//! `tool_search_budget_percent` of the model's context window, `always`, `never`), a model
//! request carries the pinned tools (built-in ones, `activate_skill`, pinned servers' tools),
//! the waiting tools loaded so far and `tool_search`, and the system prompt names the servers
//! whose tools wait. A search loads its matches for the rest of the session, recorded in the
//! session file so `--continue` keeps them; calling a waiting tool by its name works and loads
//! it too. The plan is made again before every model request, so what a search loads is there
//! from the next request on.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use rho_component::{RiskLevel, Tool, ToolContext, ToolFuture, ToolOrigin, ToolOutput, ToolSpec};
use rho_config::ToolSearch;
use serde_json::{Value, json};

use crate::provider::ToolDefinition;
use crate::registry::ToolSet;
use crate::tool_search::{SearchDoc, SearchIndex};

/// The exported name of the search tool.
pub const TOOL_SEARCH: &str = "tool_search";

/// The context window assumed when the model's is not known.
pub const ASSUMED_CONTEXT_WINDOW: u64 = 128_000;

/// Bytes of a definition's JSON per token, for the estimate the budget is checked against.
const BYTES_PER_TOKEN: u64 = 4;

/// Matches a search returns (and loads) unless it asks for another number.
const DEFAULT_MATCHES: u64 = 5;

/// The most matches one search returns.
const MAX_MATCHES: u64 = 20;

/// Longest description shown per match, in characters.
const MATCH_DESCRIPTION_CHARS: usize = 240;

/// What one model request carries.
#[derive(Debug, Default)]
pub(crate) struct Plan {
    /// The definitions sent.
    pub(crate) definitions: Vec<ToolDefinition>,
    /// The owners (server ids, `<plugin>/<component>`) of tools that may wait, with how many
    /// tools each has behind the search (loaded ones included): empty when nothing is deferred.
    pub(crate) waiting: Vec<(String, usize)>,
    /// What the definitions cost, and what the search holds back.
    pub(crate) budget: ToolBudget,
}

/// What a session's tool definitions cost the model's context, as the next request would
/// send them (estimates: about 4 bytes a token).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolBudget {
    /// `[agent] tool_search`: `auto`, `always` or `never`.
    pub mode: ToolSearch,
    /// Whether tools wait behind `tool_search` now.
    pub deferring: bool,
    /// The context window the budget is a share of (the model's, or 128k when not known).
    pub context_window: u64,
    /// Whether `context_window` is the model's own (else assumed).
    pub window_known: bool,
    /// Past this many tokens of definitions, `auto` defers.
    pub budget_tokens: u64,
    /// Tokens of every tool's definition.
    pub all_tokens: u64,
    /// Tokens of the definitions the next request sends.
    pub sent_tokens: u64,
    /// Per tool owner (server id, `<plugin>/<component>`; built-in tools under `rho`).
    pub owners: BTreeMap<String, OwnerBudget>,
}

/// One owner's tools in a [`ToolBudget`].
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OwnerBudget {
    /// Its tools.
    pub tools: usize,
    /// Tokens of all their definitions.
    pub tokens: u64,
    /// Tools waiting behind the search (not loaded).
    pub waiting: usize,
    /// Tools that waited and were loaded (by a search or a call).
    pub loaded: usize,
}

/// The estimated tokens of `definition` (its JSON, about 4 bytes a token).
pub fn definition_tokens(definition: &ToolDefinition) -> u64 {
    let bytes = definition.name.len()
        + definition.description.len()
        + serde_json::to_string(&definition.parameters).map_or(0, |s| s.len());
    (bytes as u64).div_ceil(BYTES_PER_TOKEN)
}

/// The estimated tokens of `bytes` bytes of text (about 4 bytes a token).
pub fn text_tokens(bytes: usize) -> u64 {
    (bytes as u64).div_ceil(BYTES_PER_TOKEN)
}

/// What the next model request costs the context, by part (estimates).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContextBudget {
    /// The system prompt (with the note on waiting tools).
    pub system_tokens: u64,
    /// The tool definitions.
    pub tools: ToolBudget,
    /// The conversation so far.
    pub conversation_tokens: u64,
}

/// What the session and its `tool_search` tool share.
#[derive(Default)]
struct Shared {
    /// Exported names of waiting tools the model may use now.
    loaded: BTreeSet<String>,
    /// Loaded since the session last recorded them.
    unrecorded: Vec<String>,
    /// The index over the waiting tools, with the names it was built from (`None` while
    /// nothing is deferred).
    index: Option<(Vec<String>, Arc<SearchIndex>)>,
}

impl Shared {
    fn load(&mut self, name: &str) {
        if self.loaded.insert(name.to_owned()) {
            self.unrecorded.push(name.to_owned());
        }
    }
}

/// A session's deferral: its settings and what has been loaded.
pub(crate) struct Deferral {
    mode: ToolSearch,
    budget_percent: u8,
    shared: Arc<Mutex<Shared>>,
    tool: Arc<dyn Tool>,
}

impl std::fmt::Debug for Deferral {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Deferral")
            .field("mode", &self.mode)
            .field("budget_percent", &self.budget_percent)
            .finish_non_exhaustive()
    }
}

impl Deferral {
    /// A deferral with nothing loaded.
    pub(crate) fn new(mode: ToolSearch, budget_percent: u8) -> Self {
        let shared = Arc::new(Mutex::new(Shared::default()));
        let tool = Arc::new(SearchTool {
            spec: search_spec(),
            shared: shared.clone(),
        });
        Self {
            mode,
            budget_percent,
            shared,
            tool,
        }
    }

    fn shared(&self) -> MutexGuard<'_, Shared> {
        lock(&self.shared)
    }

    /// Takes new settings (after a reload); what was loaded stays.
    pub(crate) fn set_mode(&mut self, mode: ToolSearch, budget_percent: u8) {
        self.mode = mode;
        self.budget_percent = budget_percent;
    }

    /// Marks `names` loaded (a resumed session's record); they are not recorded again.
    pub(crate) fn restore(&self, names: impl IntoIterator<Item = String>) {
        self.shared().loaded.extend(names);
    }

    /// The `tool_search` tool.
    pub(crate) fn tool(&self) -> &Arc<dyn Tool> {
        &self.tool
    }

    /// The tools loaded since the last call, to record in the session file.
    pub(crate) fn take_unrecorded(&self) -> Vec<String> {
        std::mem::take(&mut self.shared().unrecorded)
    }

    /// A call of `name` by the model: a waiting tool called by its name is loaded.
    pub(crate) fn called(&self, name: &str) {
        let mut shared = self.shared();
        let waits = shared
            .index
            .as_ref()
            .is_some_and(|(names, _)| names.iter().any(|n| n == name));
        if waits {
            shared.load(name);
        }
    }

    /// What the next request carries, given `tools` and the model's context window.
    pub(crate) fn plan(&self, tools: &ToolSet, context_window: Option<u64>) -> Plan {
        let specs = tools.specs();
        let all: Vec<ToolDefinition> = specs.iter().map(definition).collect();
        let tokens: Vec<u64> = all.iter().map(definition_tokens).collect();
        let (pinned, waiting): (Vec<usize>, Vec<usize>) =
            (0..specs.len()).partition(|&i| tools.pinned(&specs[i]));
        let window = context_window.unwrap_or(ASSUMED_CONTEXT_WINDOW);
        let mut budget = ToolBudget {
            mode: self.mode,
            deferring: false,
            context_window: window,
            window_known: context_window.is_some(),
            budget_tokens: window * u64::from(self.budget_percent) / 100,
            all_tokens: tokens.iter().sum(),
            sent_tokens: 0,
            owners: BTreeMap::new(),
        };
        budget.deferring = !waiting.is_empty()
            && match self.mode {
                ToolSearch::Never => false,
                ToolSearch::Always => true,
                ToolSearch::Auto => budget.all_tokens > budget.budget_tokens,
            };
        for (spec, tokens) in specs.iter().zip(&tokens) {
            let owner = budget.owners.entry(owner(&spec.origin)).or_default();
            owner.tools += 1;
            owner.tokens += tokens;
        }
        let mut shared = self.shared();
        if !budget.deferring {
            shared.index = None;
            budget.sent_tokens = budget.all_tokens;
            return Plan {
                definitions: all,
                waiting: Vec::new(),
                budget,
            };
        }
        let names: Vec<String> = waiting.iter().map(|&i| specs[i].name.clone()).collect();
        if shared
            .index
            .as_ref()
            .is_none_or(|(built, _)| *built != names)
        {
            let docs = waiting
                .iter()
                .map(|&i| SearchDoc::from_spec(&specs[i]))
                .collect();
            shared.index = Some((names, Arc::new(SearchIndex::new(docs))));
        }
        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        let mut definitions: Vec<ToolDefinition> = pinned.iter().map(|&i| all[i].clone()).collect();
        for &i in &waiting {
            let owner = owner(&specs[i].origin);
            // The note counts every tool of the owner that may wait, loaded or not, so the
            // system prompt stays the same as searches load tools (a stable prefix for the
            // provider's prompt cache).
            *counts.entry(owner.clone()).or_default() += 1;
            if shared.loaded.contains(&specs[i].name) {
                definitions.push(all[i].clone());
                budget.owners.entry(owner).or_default().loaded += 1;
            } else {
                budget.owners.entry(owner).or_default().waiting += 1;
            }
        }
        definitions.push(definition(self.tool.spec()));
        budget.sent_tokens = definitions.iter().map(definition_tokens).sum();
        Plan {
            definitions,
            waiting: counts.into_iter().collect(),
            budget,
        }
    }
}

/// The system prompt's note on what waits behind the search (`None` when nothing does).
pub(crate) fn waiting_note(waiting: &[(String, usize)]) -> Option<String> {
    if waiting.is_empty() {
        return None;
    }
    let mut note = format!(
        "Some tools are not listed to save context. Call `{TOOL_SEARCH}` with words describing \
         what you need (or a tool's exact name) to load the best matches; they are available \
         from your next step. Servers whose tools are found through the search:"
    );
    for (owner, count) in waiting {
        let s = if *count == 1 { "" } else { "s" };
        let _ = write!(note, "\n- {owner}: {count} tool{s}");
    }
    Some(note)
}

fn lock(shared: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    shared.lock().unwrap_or_else(PoisonError::into_inner)
}

fn definition(spec: &ToolSpec) -> ToolDefinition {
    ToolDefinition {
        name: spec.name.clone(),
        description: spec.description.clone(),
        parameters: spec.input_schema.clone(),
    }
}

/// Who a waiting tool belongs to, as the system prompt names it.
fn owner(origin: &ToolOrigin) -> String {
    match origin {
        ToolOrigin::Builtin => "rho".to_owned(),
        ToolOrigin::Mcp { server, .. } => server.clone(),
        ToolOrigin::Wasm {
            plugin, component, ..
        } => format!("{plugin}/{component}"),
    }
}

/// The `tool_search` tool's declaration (a session's, and `rho mcp serve --tool-search`'s).
pub(crate) fn search_spec() -> ToolSpec {
    ToolSpec {
        name: TOOL_SEARCH.to_owned(),
        title: Some("Tool search".to_owned()),
        description: "Finds tools that are not listed yet, by what they do. Give words \
                      describing the task (\"create a pull request\", \"read a web page\") or a \
                      tool's exact name. The best matches are loaded: you can call them from \
                      your next step."
            .to_owned(),
        input_schema: json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "words describing the task, or a tool's exact name"},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_MATCHES, "description": "how many matches to load (default 5)"}
            },
            "required": ["query"]
        }),
        output_schema: None,
        risk: RiskLevel::Read,
        origin: ToolOrigin::Builtin,
    }
}

/// The `tool_search` tool of one session.
struct SearchTool {
    spec: ToolSpec,
    shared: Arc<Mutex<Shared>>,
}

impl Tool for SearchTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(&'a self, arguments: Value, _context: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let Some(index) = lock(&self.shared).index.as_ref().map(|(_, i)| i.clone()) else {
                return ToolOutput::text(
                    "Every tool is listed already: nothing waits behind the search.",
                );
            };
            let (output, found) = search_call(&index, &arguments);
            let mut shared = lock(&self.shared);
            for name in &found {
                shared.load(name);
            }
            output
        })
    }
}

/// One `tool_search` call over `index` with the model's `arguments`: what the caller reads,
/// and the exported names of the matches (to load), best first.
pub(crate) fn search_call(index: &SearchIndex, arguments: &Value) -> (ToolOutput, Vec<String>) {
    let Some(query) = arguments.get("query").and_then(Value::as_str) else {
        return (
            ToolOutput::error("`query` (a string) is required"),
            Vec::new(),
        );
    };
    let limit = arguments
        .get("limit")
        .and_then(Value::as_u64)
        .unwrap_or(DEFAULT_MATCHES)
        .clamp(1, MAX_MATCHES);
    let limit = usize::try_from(limit).unwrap_or(1);
    let hits = index.search(query, limit);
    if hits.is_empty() {
        return (
            ToolOutput::text(format!(
                "No tool matches {query:?}. Try other words for the task."
            )),
            Vec::new(),
        );
    }
    let mut found = Vec::new();
    let mut text = String::from("Loaded (call them from your next step):");
    for hit in hits {
        let Some(doc) = index.docs().get(hit.index) else {
            continue;
        };
        found.push(doc.name.clone());
        let description: String = doc
            .description
            .chars()
            .take(MATCH_DESCRIPTION_CHARS)
            .collect();
        let description = description.split_whitespace().collect::<Vec<_>>().join(" ");
        let _ = write!(text, "\n- {}: {description}", doc.name);
    }
    (ToolOutput::text(text), found)
}
