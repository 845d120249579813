//! The tool search ranking: which of a session's tools best match a request written in words,
//! or an exact tool name (`docs/mcp.md`, "Tool search ranking").
//!
//! A [`SearchIndex`] is built once per tool set from one [`SearchDoc`] per tool and answers
//! [`SearchIndex::search`] with the best matches first. The ranking is BM25F over four fields
//! of each tool: its own name (split at `_`, `-`, `.`, `/`, camelCase and digits), its server,
//! its parameter names and its description, with light English stemming and stop words; an
//! exact exported name, own name or display name always ranks first. The quality of this
//! ranking is measured against a plain BM25 baseline ([`SearchIndex::plain_bm25_baseline`])
//! on real servers' tools (`docs/benchmarks.md`, "Tool search quality").
//!
//! Pure data and arithmetic: no IO, nothing async, no panics on any input.

mod bm25f;
mod synonyms;
mod text;

use std::cmp::Ordering;
use std::collections::HashMap;

use rho_component::{SERVER_HINT_PREFIX, ToolSpec, tool_display_name};
use serde_json::Value;

use bm25f::{FIELDS, FieldParams, Fields, Postings};
use text::TextRules;

/// The longest query read, in characters; the rest is ignored.
pub const MAX_QUERY_CHARS: usize = 1_000;

/// The most distinct query terms scored; later ones are ignored.
const MAX_QUERY_TERMS: usize = 64;

/// The most of each field read for ranking (a description, a name, the parameter names), in
/// bytes, cut at a character boundary: a server's text cannot make a build slow.
const MAX_FIELD_BYTES: usize = 16 * 1024;

/// The most parameter names read from one tool.
const MAX_PARAMETERS: usize = 256;

/// The longest parameter name read, in bytes.
const MAX_PARAMETER_BYTES: usize = 256;

/// One searchable tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchDoc {
    /// The exported name the model calls (`mcp__github__create_issue`).
    pub name: String,
    /// The tool's owner: the MCP server identity, or the plugin of a WASM tool; `None` for a
    /// built-in tool.
    pub server: Option<String>,
    /// The tool's own name (`create_issue`; the exported name for a built-in tool).
    pub tool: String,
    /// The description, without the server's hint lines.
    pub description: String,
    /// The names of the top-level properties of the tool's input schema.
    pub parameters: Vec<String>,
}

impl SearchDoc {
    /// The searchable parts of `spec`: its names, its description less the `Server hint:`
    /// lines (annotations say how a tool behaves, not what it is for), and the top-level
    /// property names of its input schema.
    pub fn from_spec(spec: &ToolSpec) -> Self {
        let description = spec
            .description
            .lines()
            .filter(|line| !line.starts_with(SERVER_HINT_PREFIX))
            .collect::<Vec<_>>()
            .join("\n");
        let parameters = spec
            .input_schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|properties| properties.keys().take(MAX_PARAMETERS).cloned().collect())
            .unwrap_or_default();
        Self {
            name: spec.name.clone(),
            server: spec.origin.owner().map(str::to_owned),
            tool: spec.own_name().to_owned(),
            description: description.trim().to_owned(),
            parameters,
        }
    }
}

/// One search result.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    /// The tool: an index into [`SearchIndex::docs`].
    pub index: usize,
    /// Its lexical relevance to the query (BM25F, 0 or more; higher is better). Exact name
    /// matches rank first whatever their score.
    pub score: f64,
}

/// How an index ranks. [`Ranking::default`] is rho's ranking; the other settings exist to
/// measure what each part contributes (`docs/benchmarks.md`, "Tool search quality").
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ranking {
    /// Split words at camelCase and letter/digit boundaries too (text is always split at
    /// everything that is not a letter or a digit).
    pub split_case_and_digits: bool,
    /// Light English stemming: plural `-s`/`-es`/`-ies`, `-ing`, `-ed`, final `-e`.
    pub stemming: bool,
    /// Leave out English function words (`the`, `to`, `my`, `what`, ...).
    pub stop_words: bool,
    /// How much each field counts.
    pub weights: FieldWeights,
    /// A query word also counts, at half weight, as its synonyms (`make` as `create`,
    /// `folder` as `directory`; a short general list of the words of tool names).
    pub synonyms: bool,
    /// An exact exported name, own name or display name ranks first.
    pub exact_names: bool,
}

/// The weight of each field of a tool in rho's BM25F (0 leaves a field out).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FieldWeights {
    /// The tool's own name.
    pub name: f64,
    /// Its server (or plugin).
    pub server: f64,
    /// Its parameter names.
    pub parameters: f64,
    /// Its description.
    pub description: f64,
}

impl Default for Ranking {
    fn default() -> Self {
        Self {
            split_case_and_digits: true,
            stemming: true,
            stop_words: true,
            weights: FieldWeights {
                name: 3.0,
                server: 1.5,
                parameters: 0.5,
                description: 1.0,
            },
            synonyms: true,
            exact_names: true,
        }
    }
}

/// What an index is: rho's ranking with some settings, or the plain baseline.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Scheme {
    Rho(Ranking),
    PlainBaseline,
}

impl Scheme {
    fn rules(self) -> TextRules {
        match self {
            Self::Rho(ranking) => TextRules {
                split_case_and_digits: ranking.split_case_and_digits,
                stemming: ranking.stemming,
                stop_words: ranking.stop_words,
            },
            Self::PlainBaseline => TextRules::PLAIN,
        }
    }

    /// Field parameters in [`Fields`] order: name, server, parameters, description. Short
    /// fields are barely length-normalised: a two-word name is not less about its words than a
    /// three-word one.
    fn params(self) -> [FieldParams; FIELDS] {
        match self {
            Self::Rho(Ranking { weights: w, .. }) => [
                FieldParams {
                    weight: w.name,
                    b: 0.3,
                },
                FieldParams {
                    weight: w.server,
                    b: 0.0,
                },
                FieldParams {
                    weight: w.parameters,
                    b: 0.5,
                },
                FieldParams {
                    weight: w.description,
                    b: 0.75,
                },
            ],
            // Everything in the last field, with BM25's usual b.
            Self::PlainBaseline => {
                let off = FieldParams {
                    weight: 0.0,
                    b: 0.0,
                };
                [
                    off,
                    off,
                    off,
                    FieldParams {
                        weight: 1.0,
                        b: 0.75,
                    },
                ]
            }
        }
    }

    fn synonyms(self) -> bool {
        match self {
            Self::Rho(ranking) => ranking.synonyms,
            Self::PlainBaseline => false,
        }
    }

    fn exact_names(self) -> bool {
        match self {
            Self::Rho(ranking) => ranking.exact_names,
            Self::PlainBaseline => false,
        }
    }
}

/// A searchable tool set, built once (`SearchIndex::new`) and searched many times.
#[derive(Debug)]
pub struct SearchIndex {
    docs: Vec<SearchDoc>,
    scheme: Scheme,
    postings: Postings,
    /// Query words to the terms they also count as (empty without synonyms).
    synonyms: HashMap<String, Vec<u32>>,
    /// Exported names to their tool.
    exported: HashMap<String, usize>,
    /// Own names and display names to their tools (several servers may share a name).
    own: HashMap<String, Vec<usize>>,
}

impl SearchIndex {
    /// Indexes `docs` with rho's ranking.
    pub fn new(docs: Vec<SearchDoc>) -> Self {
        Self::with_ranking(docs, Ranking::default())
    }

    /// Indexes `docs` with `ranking` (to measure a variant of rho's ranking).
    pub fn with_ranking(docs: Vec<SearchDoc>, ranking: Ranking) -> Self {
        Self::build(docs, Scheme::Rho(ranking))
    }

    /// The baseline rho's ranking is measured against, and nothing else: plain BM25 (k1 1.2,
    /// b 0.75) over one text per tool, its server, own name and description, lower-cased and
    /// split at everything that is not a letter or a digit; no stemming, stop words, field
    /// weights or exact-name rule.
    pub fn plain_bm25_baseline(docs: Vec<SearchDoc>) -> Self {
        Self::build(docs, Scheme::PlainBaseline)
    }

    fn build(docs: Vec<SearchDoc>, scheme: Scheme) -> Self {
        let params = scheme.params();
        // The one field text that is not a SearchDoc string as it is: the parameter names
        // (rho) or everything (the baseline).
        let joined: Vec<String> = docs
            .iter()
            .map(|doc| match scheme {
                Scheme::Rho(_) => {
                    let names = doc.parameters.iter().take(MAX_PARAMETERS);
                    let names: Vec<&str> = names.map(|p| capped(p, MAX_PARAMETER_BYTES)).collect();
                    names.join(" ")
                }
                Scheme::PlainBaseline => format!(
                    "{} {} {}",
                    capped(doc.server.as_deref().unwrap_or(""), MAX_FIELD_BYTES),
                    capped(&doc.tool, MAX_FIELD_BYTES),
                    capped(&doc.description, MAX_FIELD_BYTES)
                ),
            })
            .collect();
        let fields = docs.iter().zip(&joined).map(|(doc, joined)| -> Fields<'_> {
            let joined = capped(joined, MAX_FIELD_BYTES);
            match scheme {
                Scheme::Rho(_) => [
                    capped(&doc.tool, MAX_FIELD_BYTES),
                    capped(doc.server.as_deref().unwrap_or(""), MAX_FIELD_BYTES),
                    joined,
                    capped(&doc.description, MAX_FIELD_BYTES),
                ],
                Scheme::PlainBaseline => ["", "", "", joined],
            }
        });
        let postings = Postings::build(fields, scheme.rules(), &params);
        let synonyms = if scheme.synonyms() {
            synonyms::table(&postings, scheme.rules())
        } else {
            HashMap::new()
        };

        let mut exported = HashMap::new();
        let mut own: HashMap<String, Vec<usize>> = HashMap::new();
        if scheme.exact_names() {
            for (index, doc) in docs.iter().enumerate() {
                exported.entry(doc.name.clone()).or_insert(index);
                let display = tool_display_name(doc.server.as_deref(), &doc.tool);
                own.entry(doc.tool.clone()).or_default().push(index);
                if display != doc.tool {
                    own.entry(display).or_default().push(index);
                }
            }
        }
        Self {
            docs,
            scheme,
            postings,
            synonyms,
            exported,
            own,
        }
    }

    /// The indexed tools, in the order given; [`Hit::index`] points here.
    pub fn docs(&self) -> &[SearchDoc] {
        &self.docs
    }

    /// The best matches for `query` (words, or an exact name), best first, at most `limit`.
    /// A tool whose exported name is the query ranks first; then tools whose own name or
    /// display name (`github › create_issue`) is the query; then every tool that shares a
    /// term with the query, by score (ties keep index order). Only the first
    /// [`MAX_QUERY_CHARS`] characters of `query` are read.
    pub fn search(&self, query: &str, limit: usize) -> Vec<Hit> {
        if limit == 0 || self.docs.is_empty() {
            return Vec::new();
        }
        let query = capped_chars(query, MAX_QUERY_CHARS);
        let mut scores = vec![0f64; self.docs.len()];
        for (term, weight) in self.query_terms(query) {
            self.postings.add(term, weight, &mut scores);
        }

        // Rank 0: the exported name; 1: an own or display name; 2: words only.
        let mut tier = vec![2u8; self.docs.len()];
        let wanted = query.trim();
        if !wanted.is_empty() {
            if let Some(&index) = self.exported.get(wanted) {
                tier[index] = 0;
            }
            for &index in self.own.get(wanted).into_iter().flatten() {
                tier[index] = tier[index].min(1);
            }
        }
        let mut hits: Vec<(u8, Hit)> = scores
            .iter()
            .enumerate()
            .filter(|&(index, &score)| tier[index] < 2 || score > 0.0)
            .map(|(index, &score)| (tier[index], Hit { index, score }))
            .collect();
        hits.sort_by(|(ta, a), (tb, b)| {
            ta.cmp(tb)
                .then_with(|| b.score.partial_cmp(&a.score).unwrap_or(Ordering::Equal))
                .then_with(|| a.index.cmp(&b.index))
        });
        hits.truncate(limit);
        hits.into_iter().map(|(_, hit)| hit).collect()
    }

    /// The distinct terms of `query` that some tool holds, with their synonyms, each with the
    /// weight it counts with (a word the query holds counts fully).
    fn query_terms(&self, query: &str) -> Vec<(u32, f64)> {
        let mut terms: Vec<(u32, f64)> = Vec::new();
        let mut put = |id: u32, weight: f64| {
            if let Some(known) = terms.iter_mut().find(|(term, _)| *term == id) {
                known.1 = known.1.max(weight);
            } else if terms.len() < MAX_QUERY_TERMS {
                terms.push((id, weight));
            }
        };
        text::terms(query, self.scheme.rules(), &mut String::new(), |term| {
            if let Some(id) = self.postings.id(term) {
                put(id, 1.0);
            }
            for &id in self.synonyms.get(term).into_iter().flatten() {
                put(id, synonyms::SYNONYM_WEIGHT);
            }
        });
        terms
    }
}

/// At most `max` bytes of `text`, cut at a character boundary.
fn capped(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// At most `max` characters of `text`.
fn capped_chars(text: &str, max: usize) -> &str {
    match text.char_indices().nth(max) {
        Some((end, _)) => &text[..end],
        None => text,
    }
}

#[cfg(test)]
mod tests;
