//! The Agent Skills frontmatter rules: which fields exist, their types and limits.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use rho_component::{SkillMeta, SkillSource};

use crate::yaml::{Entry, Node, Scalar, ScalarKind};

/// Longest `name`, in characters.
pub const NAME_MAX_CHARS: usize = 64;
/// Longest `description`, in characters (Unicode scalar values).
pub const DESCRIPTION_MAX_CHARS: usize = 1024;
/// Longest `compatibility`, in characters (Unicode scalar values).
pub const COMPATIBILITY_MAX_CHARS: usize = 500;

/// The top-level fields the specification defines; any other is an error.
pub const ALLOWED_FIELDS: &[&str] = &[
    "name",
    "description",
    "license",
    "compatibility",
    "metadata",
    "allowed-tools",
];

/// Everything wrong with `name` as a skill name, ignoring the directory-name rule.
/// Empty when the name is valid.
pub fn name_problems(name: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if name.is_empty() {
        problems.push("`name` must not be empty".to_owned());
        return problems;
    }
    let chars = name.chars().count();
    if chars > NAME_MAX_CHARS {
        problems.push(format!(
            "`name` is {chars} characters long; the limit is {NAME_MAX_CHARS}"
        ));
    }
    let bad: BTreeSet<char> = name
        .chars()
        .filter(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-'))
        .collect();
    if !bad.is_empty() {
        let shown: Vec<String> = bad.iter().take(8).map(|c| format!("{c:?}")).collect();
        problems.push(format!(
            "`name` `{}` may contain only lowercase ascii letters a-z, digits and hyphens (found {})",
            name.escape_debug(),
            shown.join(", ")
        ));
    }
    if name.starts_with('-') || name.ends_with('-') {
        problems.push("`name` must not start or end with a hyphen".to_owned());
    }
    if name.contains("--") {
        problems.push("`name` must not contain consecutive hyphens (`--`)".to_owned());
    }
    problems
}

/// Reads one string field. `Ok(None)` for a null value (empty, `~`, `null`).
fn string_field(key: &str, node: &Node, problems: &mut Vec<String>) -> Option<String> {
    match node {
        Node::Scalar(scalar) => match scalar.kind() {
            ScalarKind::String => Some(scalar.text.clone()),
            ScalarKind::Null => None,
            kind => {
                problems.push(not_a_string(key, kind.describe(), Some(scalar)));
                None
            }
        },
        Node::Mapping(_) => {
            problems.push(not_a_string(key, "a mapping", None));
            None
        }
        Node::Sequence => {
            problems.push(not_a_string(key, "a sequence", None));
            None
        }
    }
}

fn not_a_string(key: &str, found: &str, scalar: Option<&Scalar>) -> String {
    match scalar {
        Some(s) => format!(
            "`{key}` must be a string, found {found} (`{}`); quote it to make it a string",
            s.text.escape_debug()
        ),
        None => format!("`{key}` must be a string, found {found}"),
    }
}

fn required(key: &str, value: Option<&Node>, problems: &mut Vec<String>) -> Option<String> {
    let Some(node) = value else {
        problems.push(format!("missing required field `{key}`"));
        return None;
    };
    let before = problems.len();
    let text = string_field(key, node, problems);
    if text.is_none() && problems.len() == before {
        problems.push(format!("`{key}` must be a non-empty string, found null"));
    }
    text
}

fn metadata_field(node: &Node, problems: &mut Vec<String>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let entries = match node {
        Node::Mapping(entries) => entries,
        Node::Scalar(scalar) if scalar.kind() == ScalarKind::Null => return out,
        Node::Scalar(_) => {
            problems
                .push("`metadata` must be a mapping of strings to strings, found a scalar".into());
            return out;
        }
        Node::Sequence => {
            problems.push(
                "`metadata` must be a mapping of strings to strings, found a sequence".into(),
            );
            return out;
        }
    };
    report_duplicates("metadata.", entries, problems);
    for entry in entries {
        match &entry.value {
            // Scalars are kept as written: `version: 1.0` is "1.0", `beta: true` is "true".
            Node::Scalar(scalar) => {
                out.entry(entry.key.clone())
                    .or_insert_with(|| scalar.text.clone());
            }
            Node::Mapping(_) => problems.push(format!(
                "`metadata.{}` must be a string, found a mapping",
                entry.key.escape_debug()
            )),
            Node::Sequence => problems.push(format!(
                "`metadata.{}` must be a string, found a sequence",
                entry.key.escape_debug()
            )),
        }
    }
    out
}

fn report_duplicates(prefix: &str, entries: &[Entry], problems: &mut Vec<String>) {
    let mut seen = BTreeSet::new();
    for entry in entries {
        if !seen.insert(entry.key.as_str()) {
            problems.push(format!(
                "duplicate key `{prefix}{}` (line {})",
                entry.key.escape_debug(),
                entry.line
            ));
        }
    }
}

/// Checks a parsed frontmatter against every rule and builds the metadata.
///
/// `line_offset` turns YAML-text line numbers into file line numbers.
pub(crate) fn build_meta(
    root: Option<Node>,
    dir_name: &str,
    location: PathBuf,
    source: SkillSource,
    line_offset: usize,
) -> Result<SkillMeta, Vec<String>> {
    let entries = match root {
        Some(Node::Mapping(entries)) => entries,
        None => {
            return Err(vec![
                "the frontmatter is empty; it must be a yaml mapping".into(),
            ]);
        }
        Some(_) => return Err(vec!["the frontmatter must be a yaml mapping".into()]),
    };
    let mut problems = Vec::new();
    let entries: Vec<Entry> = entries
        .into_iter()
        .map(|e| Entry {
            line: e.line + line_offset,
            ..e
        })
        .collect();
    report_duplicates("", &entries, &mut problems);
    for entry in &entries {
        if !ALLOWED_FIELDS.contains(&entry.key.as_str()) {
            problems.push(format!(
                "unknown field `{}` (line {}); allowed fields are {}",
                entry.key.escape_debug(),
                entry.line,
                ALLOWED_FIELDS.join(", ")
            ));
        }
    }
    // The first occurrence of each key counts; later ones were reported as duplicates.
    let field = |key: &str| entries.iter().find(|e| e.key == key).map(|e| &e.value);

    let name = required("name", field("name"), &mut problems);
    if let Some(name) = &name {
        problems.extend(name_problems(name));
        // An empty name was reported already; comparing it with the directory adds nothing.
        if !name.is_empty() && name != dir_name {
            problems.push(format!(
                "`name` `{}` does not match the directory name `{}`",
                name.escape_debug(),
                dir_name.escape_debug()
            ));
        }
    }

    let description = required("description", field("description"), &mut problems);
    if let Some(description) = &description {
        let chars = description.chars().count();
        if description.trim().is_empty() {
            problems.push("`description` must not be empty".to_owned());
        } else if chars > DESCRIPTION_MAX_CHARS {
            problems.push(format!(
                "`description` is {chars} characters long; the limit is {DESCRIPTION_MAX_CHARS}"
            ));
        }
    }

    let license = field("license").and_then(|n| string_field("license", n, &mut problems));

    let compatibility =
        field("compatibility").and_then(|n| string_field("compatibility", n, &mut problems));
    if let Some(compatibility) = &compatibility {
        let chars = compatibility.chars().count();
        if chars == 0 || chars > COMPATIBILITY_MAX_CHARS {
            problems.push(format!(
                "`compatibility` is {chars} characters long; it must be 1-{COMPATIBILITY_MAX_CHARS}"
            ));
        }
    }

    let metadata = field("metadata")
        .map(|n| metadata_field(n, &mut problems))
        .unwrap_or_default();

    let allowed_tools =
        field("allowed-tools").and_then(|n| string_field("allowed-tools", n, &mut problems));

    match (name, description) {
        (Some(name), Some(description)) if problems.is_empty() => Ok(SkillMeta {
            name,
            description: description.trim().to_owned(),
            license,
            compatibility,
            metadata,
            allowed_tools,
            location,
            source,
        }),
        _ => Err(problems),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_names() {
        for name in [
            "a",
            "pdf-processing",
            "a1-b2",
            "2024-report",
            &"a".repeat(64),
        ] {
            assert!(name_problems(name).is_empty(), "{name}");
        }
    }

    #[test]
    fn invalid_names() {
        let cases: &[(&str, &str)] = &[
            ("", "empty"),
            ("PDF", "lowercase ascii"),
            ("-pdf", "hyphen"),
            ("pdf-", "hyphen"),
            ("pdf--x", "consecutive"),
            ("pdf_x", "lowercase ascii"),
            ("pdf x", "lowercase ascii"),
            ("pdf.x", "lowercase ascii"),
            ("a/b", "lowercase ascii"),
            ("pdf-pr\u{43e}cessing", "lowercase ascii"),
            ("\u{e9}", "lowercase ascii"),
        ];
        for (name, needle) in cases {
            let problems = name_problems(name);
            assert!(
                problems.iter().any(|p| p.contains(needle)),
                "{name:?}: {problems:?}"
            );
        }
        let long = "a".repeat(65);
        assert!(name_problems(&long)[0].contains("65 characters"));
    }

    #[test]
    fn several_name_problems_at_once() {
        assert_eq!(name_problems("-A--").len(), 3);
    }
}
