//! The generated plugin root: N Agent Plugins 1.0.0 packages shaped like real ones, each with a
//! manifest, three skills with ~2 KB bodies, an `mcp.json` of three servers and a bundled server.

use std::path::{Path, PathBuf};

/// Skills per plugin.
pub const SKILLS_PER_PLUGIN: usize = 3;
/// MCP servers per plugin.
pub const SERVERS_PER_PLUGIN: usize = 3;
/// The size a `SKILL.md` body is padded to, roughly what real skills carry.
const SKILL_BODY_BYTES: usize = 2048;

/// A generated root and what was written into it.
pub struct Corpus {
    /// The plugins root (`<home>/.agents/plugins`).
    pub root: PathBuf,
    /// Files written.
    pub files: usize,
    /// Bytes written.
    pub bytes: u64,
}

/// Skill themes; each plugin takes three consecutive ones so sibling plugins differ a little.
const THEMES: [(&str, &str, &str); 6] = [
    (
        "code-review",
        "Code review",
        "Review a change for correctness, readability and risk. Use when asked to review a diff, \
         a commit or a pull request.",
    ),
    (
        "release-notes",
        "Release notes",
        "Draft release notes from merged changes. Use when preparing a release or a changelog entry.",
    ),
    (
        "test-triage",
        "Test triage",
        "Triage failing tests and separate real regressions from flaky ones. Use when CI is red.",
    ),
    (
        "api-docs",
        "API documentation",
        "Write reference documentation for public functions and types. Use when an API lacks docs.",
    ),
    (
        "dependency-audit",
        "Dependency audit",
        "Audit third-party dependencies for licences, advisories and staleness. Use before releases.",
    ),
    (
        "incident-summary",
        "Incident summary",
        "Summarize an incident timeline, impact and follow-ups. Use after an outage or a near miss.",
    ),
];

/// Writes `plugins` packages under `<home>/.agents/plugins`.
pub fn generate(home: &Path, plugins: usize) -> Result<Corpus, String> {
    let mut corpus = Corpus {
        root: home.join(".agents").join("plugins"),
        files: 0,
        bytes: 0,
    };
    for index in 1..=plugins {
        write_plugin(&mut corpus, index)?;
    }
    Ok(corpus)
}

fn write_plugin(corpus: &mut Corpus, index: usize) -> Result<(), String> {
    let name = format!("plugin-{index:04}");
    let dir = corpus.root.join(&name);
    let version = format!("1.{}.{}", index % 7, index % 13);
    write(
        corpus,
        &dir.join("plugin.json"),
        &format!(
            r#"{{
  "$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json",
  "name": "{name}",
  "version": "{version}",
  "description": "Team workflows for {name}: code review, release notes and test triage helpers with a bundled MCP server."
}}
"#
        ),
    )?;
    for k in 0..SKILLS_PER_PLUGIN {
        let theme = THEMES[(index + k) % THEMES.len()];
        let skill = format!("{}-{index:04}", theme.0);
        write(
            corpus,
            &dir.join("skills").join(&skill).join("SKILL.md"),
            &skill_md(&skill, theme.1, theme.2, &name),
        )?;
    }
    write(corpus, &dir.join("mcp.json"), &mcp_json(&name))?;
    let server = dir.join("bin").join("server");
    write(
        corpus,
        &server,
        "#!/bin/sh\n# Stand-in for the plugin's bundled MCP server; the benchmark never starts it.\n\
         exec true\n",
    )?;
    make_executable(&server)
}

fn mcp_json(plugin: &str) -> String {
    format!(
        r#"{{
  "$schema": "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json",
  "mcpServers": {{
    "bundled": {{
      "type": "stdio",
      "command": "./bin/server",
      "args": ["--config", "${{PLUGIN_ROOT}}/config/server.toml", "--cache", "${{PLUGIN_DATA}}/cache"],
      "env": {{
        "SERVER_CONFIG": "${{PLUGIN_ROOT}}/config/server.toml",
        "SERVER_STATE": "${{PLUGIN_DATA}}/state"
      }},
      "cwd": "${{PLUGIN_ROOT}}"
    }},
    "everything": {{
      "type": "stdio",
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-everything"]
    }},
    "remote": {{
      "type": "streamable-http",
      "url": "https://mcp.example.com/{plugin}/mcp",
      "headers": {{ "X-Tenant": "{plugin}" }}
    }}
  }}
}}
"#
    )
}

fn skill_md(skill: &str, title: &str, description: &str, plugin: &str) -> String {
    let mut text = format!(
        "---\n\
         name: {skill}\n\
         description: {description}\n\
         license: Apache-2.0\n\
         metadata:\n  \
           author: {plugin} maintainers\n  \
           version: \"1.0\"\n\
         ---\n\n\
         # {title}\n\n\
         This skill ships with `{plugin}`. Follow the steps in order and keep the user informed of\n\
         anything you could not check.\n\n\
         ## When to use\n\n\
         - The user asks for it by name or describes the task in the description above.\n\
         - The repository has the files the steps below refer to.\n\n\
         ## Steps\n\n\
         1. Read the relevant files before forming an opinion; do not guess at their contents.\n\
         2. List what you found, grouped by severity, with file and line for each item.\n\
         3. Propose the smallest change that addresses each item and explain the trade-off.\n\
         4. Run the project's checks when you can and report their output verbatim.\n\n\
         ## Output\n\n\
         A short summary paragraph, then one bullet per finding, then open questions.\n\n\
         ## Checklist\n\n"
    );
    let mut item = 1;
    while text.len() < SKILL_BODY_BYTES {
        text.push_str(&format!(
            "- Item {item}: confirm the behaviour is covered by a test and that the change keeps \
             the public interface stable.\n"
        ));
        item += 1;
    }
    text
}

fn write(corpus: &mut Corpus, path: &Path, contents: &str) -> Result<(), String> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    std::fs::write(path, contents).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    corpus.files += 1;
    corpus.bytes += contents.len() as u64;
    Ok(())
}

#[cfg(unix)]
fn make_executable(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| format!("cannot make {} executable: {e}", path.display()))
}

#[cfg(not(unix))]
fn make_executable(_path: &Path) -> Result<(), String> {
    Ok(())
}
