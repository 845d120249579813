//! Words that mean the same in a request to a tool: the verbs tool names are made of (people
//! say `make`, `remove` and `edit` where servers name tools `create`, `delete` and `update`)
//! and a few nouns of software tools with a common short or long form. A query word also
//! counts, at half weight, as each other member of its group.
//!
//! The list is general on purpose: it holds the vocabulary of tool names at large, not of any
//! server or request in the quality set (`docs/mcp.md`, "Tool search ranking").

use std::collections::HashMap;

use super::bm25f::Postings;
use super::text::{self, TextRules};

/// How much a synonym counts against the word the query holds.
pub(super) const SYNONYM_WEIGHT: f64 = 0.5;

/// Groups of words with one meaning. A member of several words (`pull request`) is matched
/// through the group's one-word members only and expands to all its words.
const GROUPS: &[&[&str]] = &[
    // The verbs of tool names.
    &["create", "add", "make", "new"],
    &["delete", "remove", "drop", "erase", "destroy"],
    &["get", "fetch", "retrieve", "show", "view", "display"],
    &["list", "enumerate", "show"],
    &["update", "edit", "modify", "change", "patch"],
    &["search", "find", "query", "lookup"],
    &["run", "execute", "exec", "invoke"],
    &["send", "post"],
    &["stop", "halt", "end"],
    &["start", "begin", "launch"],
    // Nouns with a short and a long form.
    &["directory", "folder", "dir"],
    &["repository", "repo"],
    &["database", "db"],
    &["pr", "pull request"],
    &["issue", "bug", "ticket"],
    &["documentation", "docs"],
];

/// For each one-word member of a group (as `rules` cut it), the term ids of the other members
/// some tool holds.
pub(super) fn table(postings: &Postings, rules: TextRules) -> HashMap<String, Vec<u32>> {
    let mut word = String::new();
    let mut table: HashMap<String, Vec<u32>> = HashMap::new();
    for group in GROUPS {
        let members: Vec<Vec<String>> = group
            .iter()
            .map(|member| {
                let mut terms = Vec::new();
                text::terms(member, rules, &mut word, |t| terms.push(t.to_owned()));
                terms
            })
            .collect();
        for (i, key) in members.iter().enumerate() {
            let [key] = key.as_slice() else { continue };
            let ids = table.entry(key.clone()).or_default();
            for (j, other) in members.iter().enumerate() {
                if i == j {
                    continue;
                }
                for id in other.iter().filter_map(|t| postings.id(t)) {
                    if !ids.contains(&id) {
                        ids.push(id);
                    }
                }
            }
        }
    }
    table
}
