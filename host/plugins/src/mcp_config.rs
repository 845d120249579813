//! A plugin's `mcp.json` (Agent Plugins §7.2, §9): top-level validation first, then each server
//! entry on its own, then translation into the shared [`McpServerSpec`].
//!
//! Failure boundaries (§7.2.2): an unreadable, invalid, unsupported or version-mismatched
//! document disables MCP for the plugin only; an invalid entry disables only itself; a legacy
//! `sse` entry is skipped as an unsupported transport.

use std::path::{Path, PathBuf};

use rho_component::endpoint::{check_headers, check_remote_url};
use rho_component::{
    Diagnostic, DiagnosticCode, HttpServerSpec, McpServerOrigin, McpServerSpec, McpTransport,
    StdioCommand, StdioServerSpec, json_kind,
};
use serde_json::{Map, Value};
use sha2::Digest as _;

use crate::containment::{Beneath, ContainError, resolve_fast_meta, resolve_within};
use crate::json_doc;
use crate::manifest::quote;
use crate::placeholder::{expand_placeholders, has_placeholder};
use crate::schema::{Contract, SpecVersion, violations};

/// The file name of a plugin's MCP configuration.
pub const MCP_FILE: &str = "mcp.json";

/// `mcp.json` larger than this is refused before parsing.
pub const MCP_CONFIG_MAX_BYTES: u64 = 1024 * 1024;

/// At most this many servers are taken from one plugin; the rest are reported and ignored.
pub const MAX_SERVERS_PER_PLUGIN: usize = 128;

/// What a plugin's `mcp.json` contributes.
#[derive(Debug, Default)]
pub(crate) struct McpOutcome {
    pub servers: Vec<McpServerSpec>,
    pub diagnostics: Vec<Diagnostic>,
    /// The SHA-256 of the bytes read, when the file could be read.
    pub sha256: Option<[u8; 32]>,
}

/// The plugin facts server translation needs.
pub(crate) struct PluginContext<'a> {
    pub name: &'a str,
    /// The filesystem-resolved plugin root.
    pub root: &'a Path,
    /// The same root, opened for contained reads.
    pub beneath: &'a Beneath,
    /// `<resolved plugins root>/data/<name>` (may not exist yet).
    pub data_dir: &'a Path,
    pub spec: SpecVersion,
}

/// Loads `<root>/mcp.json` if present.
pub(crate) fn load_mcp_config(ctx: &PluginContext<'_>) -> McpOutcome {
    let path = ctx.root.join(MCP_FILE);
    let component = format!("{}/mcp", ctx.name);
    let bytes = match ctx.beneath.read(Path::new(MCP_FILE), MCP_CONFIG_MAX_BYTES) {
        Ok(bytes) => bytes,
        // A missing location is not an error (§6.2); a dangling link named mcp.json is.
        Err(ContainError::Missing) if std::fs::symlink_metadata(&path).is_err() => {
            return McpOutcome::default();
        }
        Err(ContainError::Escape(target)) => {
            let d = Diagnostic::error(
                DiagnosticCode::PathEscape,
                format!(
                    "mcp.json resolves outside the plugin root (to {}); MCP disabled for this plugin",
                    target.display()
                ),
            );
            return one(d.with_path(path).with_component(component));
        }
        Err(e) => {
            let d = Diagnostic::error(
                DiagnosticCode::McpConfigInvalid,
                format!("mcp.json cannot be read: it {e}; MCP disabled for this plugin"),
            );
            return one(d.with_path(path).with_component(component));
        }
    };
    McpOutcome {
        sha256: Some(sha2::Sha256::digest(&bytes).into()),
        ..validate_mcp_bytes(&bytes, &path, ctx)
    }
}

fn one(d: Diagnostic) -> McpOutcome {
    McpOutcome {
        diagnostics: vec![d],
        ..McpOutcome::default()
    }
}

/// Validates `mcp.json` bytes and translates the valid entries.
pub(crate) fn validate_mcp_bytes(bytes: &[u8], path: &Path, ctx: &PluginContext<'_>) -> McpOutcome {
    let component = format!("{}/mcp", ctx.name);
    let top_error = |code: DiagnosticCode, message: String| {
        one(
            Diagnostic::error(code, format!("{message}; MCP disabled for this plugin"))
                .with_path(path)
                .with_component(component.clone()),
        )
    };
    let doc = match json_doc::parse(bytes) {
        Ok(doc) => doc,
        Err(e) => return top_error(DiagnosticCode::McpConfigInvalid, format!("mcp.json: {e}")),
    };
    let value = doc.value;
    let Value::Object(top) = &value else {
        return top_error(
            DiagnosticCode::McpConfigInvalid,
            "mcp.json must contain a JSON object at the top level".into(),
        );
    };
    match top.get("$schema") {
        None => {
            return top_error(
                DiagnosticCode::McpConfigInvalid,
                "mcp.json is missing the required field \"$schema\"".into(),
            );
        }
        Some(Value::String(id)) if id == ctx.spec.mcp_schema_id() => {}
        Some(Value::String(id)) => {
            let code = if SpecVersion::from_mcp_schema(id).is_some() || looks_like_mcp_schema(id) {
                DiagnosticCode::McpVersionMismatch
            } else {
                DiagnosticCode::McpConfigInvalid
            };
            return top_error(
                code,
                format!(
                    "mcp.json declares \"$schema\" {} but plugin.json targets Agent Plugins {} \
                     (expected {})",
                    quote(id),
                    ctx.spec.as_str(),
                    ctx.spec.mcp_schema_id()
                ),
            );
        }
        Some(other) => {
            return top_error(
                DiagnosticCode::McpConfigInvalid,
                format!(
                    "mcp.json \"$schema\" must be a string, found {}",
                    json_kind(other)
                ),
            );
        }
    }
    // Repeated keys at the top level or among server names make the document ambiguous; a
    // repeated key inside one entry only invalidates that entry (below).
    let mut entry_dups: Vec<(String, String)> = Vec::new();
    for pointer in &doc.duplicates {
        let parts: Vec<&str> = pointer.split('/').skip(1).collect();
        match parts.as_slice() {
            ["mcpServers", server, _, ..] => {
                entry_dups.push((unescape_token(server), pointer.clone()));
            }
            _ => {
                return top_error(
                    DiagnosticCode::McpConfigInvalid,
                    format!("mcp.json repeats the key at {pointer}"),
                );
            }
        }
    }
    let problems = violations(ctx.spec, Contract::McpTop, &value);
    if !problems.is_empty() {
        return top_error(
            DiagnosticCode::McpConfigInvalid,
            format!("mcp.json {}", problems.join("; ")),
        );
    }
    let Some(Value::Object(servers)) = top.get("mcpServers") else {
        return McpOutcome::default(); // unreachable after schema validation
    };

    let mut outcome = McpOutcome::default();
    if servers.len() > MAX_SERVERS_PER_PLUGIN {
        outcome.diagnostics.push(
            Diagnostic::warning(
                DiagnosticCode::McpTooManyServers,
                format!(
                    "mcp.json declares {} servers; only the first {MAX_SERVERS_PER_PLUGIN} \
                     (by name) are used",
                    servers.len()
                ),
            )
            .with_path(path)
            .with_component(component.clone()),
        );
    }
    for (name, entry) in servers.iter().take(MAX_SERVERS_PER_PLUGIN) {
        let id = format!("{}/{}", ctx.name, name);
        let diag = |code, message: String| {
            Diagnostic::error(code, message)
                .with_path(path)
                .with_component(id.clone())
        };
        if let Some((_, pointer)) = entry_dups.iter().find(|(server, _)| server == name) {
            outcome.diagnostics.push(diag(
                DiagnosticCode::McpServerInvalid,
                format!("server {} repeats the key at {pointer}", quote(name)),
            ));
            continue;
        }
        match translate_server(name, entry, ctx) {
            // Plugin servers get every runtime default; in particular they can never opt
            // into sampling (only the user's config can).
            Ok(Some(transport)) => outcome.servers.push(McpServerSpec::new(
                id,
                McpServerOrigin::Plugin {
                    plugin: ctx.name.to_owned(),
                    server: name.clone(),
                    root: ctx.root.to_path_buf(),
                    data_dir: ctx.data_dir.to_path_buf(),
                },
                transport,
            )),
            Ok(None) => outcome.diagnostics.push(
                Diagnostic::warning(
                    DiagnosticCode::McpTransportUnsupported,
                    format!(
                        "server {} uses the legacy \"sse\" transport, which rho does not \
                         support; skipped",
                        quote(name)
                    ),
                )
                .with_path(path)
                .with_component(id.clone()),
            ),
            Err(problems) => outcome.diagnostics.push(diag(
                DiagnosticCode::McpServerInvalid,
                format!("server {} is invalid: {}", quote(name), problems.join("; ")),
            )),
        }
    }
    outcome
}

fn looks_like_mcp_schema(id: &str) -> bool {
    id.starts_with("https://agent-plugins.org/schemas/") && id.ends_with("/mcp.schema.json")
}

fn unescape_token(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

/// Validates one entry. `Ok(None)` is a valid but unsupported (`sse`) entry.
fn translate_server(
    name: &str,
    entry: &Value,
    ctx: &PluginContext<'_>,
) -> Result<Option<McpTransport>, Vec<String>> {
    let Value::Object(fields) = entry else {
        return Err(vec![format!(
            "an entry must be an object, found {}",
            json_kind(entry)
        )]);
    };
    let contract = match fields.get("type") {
        None => return Err(vec!["missing required field \"type\"".into()]),
        Some(Value::String(t)) => match t.as_str() {
            "stdio" => Contract::Stdio,
            "streamable-http" => Contract::StreamableHttp,
            "sse" => Contract::Sse,
            other => {
                return Err(vec![format!(
                    "unknown type {} (expected \"stdio\", \"streamable-http\" or \"sse\")",
                    quote(other)
                )]);
            }
        },
        Some(other) => {
            return Err(vec![format!(
                "\"type\" must be a string, found {}",
                json_kind(other)
            )]);
        }
    };
    let problems = violations(ctx.spec, contract, entry);
    if !problems.is_empty() {
        return Err(problems);
    }
    let _ = name;
    match contract {
        Contract::Stdio => stdio_server(fields, ctx).map(|s| Some(McpTransport::Stdio(s))),
        Contract::StreamableHttp => {
            http_server(fields).map(|s| Some(McpTransport::StreamableHttp(s)))
        }
        Contract::Sse => http_server(fields).map(|_| None),
        Contract::Manifest | Contract::McpTop => Ok(None),
    }
}

fn str_field<'a>(fields: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    fields.get(key).and_then(Value::as_str)
}

fn string_map(fields: &Map<String, Value>, key: &str) -> Vec<(String, String)> {
    match fields.get(key) {
        Some(Value::Object(map)) => map
            .iter()
            .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_owned())))
            .collect(),
        _ => Vec::new(),
    }
}

fn stdio_server(
    fields: &Map<String, Value>,
    ctx: &PluginContext<'_>,
) -> Result<StdioServerSpec, Vec<String>> {
    let mut problems = Vec::new();
    let root_text = ctx.root.to_str();
    let data_text = ctx.data_dir.to_str();

    // command: one token, bare or `./`, never expanded (§7.2.1, §9.2).
    let raw_command = str_field(fields, "command").unwrap_or_default();
    let command = match command_token(raw_command, ctx.root) {
        Ok(command) => Some(command),
        Err(problem) => {
            problems.push(problem);
            None
        }
    };

    // `what` names the field in a problem; it is only rendered when there is one.
    let expand = |text: &str, what: &dyn Fn() -> String, problems: &mut Vec<String>| -> String {
        if text.contains('\0') {
            problems.push(format!("{} contains a NUL character", what()));
        }
        if !has_placeholder(text) {
            return text.to_owned();
        }
        match (root_text, data_text) {
            (Some(root), Some(data)) => expand_placeholders(text, root, data),
            _ => {
                problems.push(format!(
                    "{} uses a placeholder but the plugin path is not valid UTF-8",
                    what()
                ));
                text.to_owned()
            }
        }
    };

    let args: Vec<String> = match fields.get("args") {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .enumerate()
            .map(|(i, a)| expand(a, &|| format!("args[{i}]"), &mut problems))
            .collect(),
        _ => Vec::new(),
    };

    let mut env = Vec::new();
    for (key, value) in string_map(fields, "env") {
        if key.is_empty() || key.contains('=') || key.contains('\0') {
            problems.push(format!(
                "env name {} is not a valid variable name",
                quote(&key)
            ));
            continue;
        }
        // Unix variable names are case-sensitive, so only the exact reserved names clash
        // (the schema already refuses them; kept here for the rule's own sake).
        if key == "PLUGIN_ROOT" || key == "PLUGIN_DATA" {
            problems.push(format!("env must not set the reserved variable {key}"));
            continue;
        }
        let value = expand(&value, &|| format!("env {}", quote(&key)), &mut problems);
        env.push((key, value));
    }

    let cwd = match str_field(fields, "cwd") {
        // §7.2.1: without `cwd` the plugin root is the working directory.
        None => Some(ctx.root.to_path_buf()),
        Some(raw) => {
            let expanded = expand(raw, &|| "cwd".into(), &mut problems);
            match resolve_cwd(raw, &expanded, ctx) {
                Ok(cwd) => Some(cwd),
                Err(problem) => {
                    problems.push(problem);
                    None
                }
            }
        }
    };

    match command {
        Some(command) if problems.is_empty() => Ok(StdioServerSpec {
            command,
            args,
            env,
            env_from_env: Vec::new(),
            cwd,
        }),
        _ => Err(problems),
    }
}

/// Checks the `command` token: a bare executable name, or a `./` path that resolves to a file
/// inside the plugin root.
fn command_token(raw: &str, root: &Path) -> Result<StdioCommand, String> {
    if raw.contains('\0') {
        return Err("command contains a NUL character".into());
    }
    if let Some(rel) = raw.strip_prefix("./") {
        let path = root.join(rel);
        // Common case: a plain file reached without links; one lstat per component.
        if Path::new(rel)
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
            && let Ok((resolved, Some(meta))) = resolve_fast_meta(root, Path::new(rel))
            && meta.is_file()
        {
            return Ok(StdioCommand::Path(resolved));
        }
        return match resolve_within(root, &path) {
            Ok(resolved) if resolved.is_file() => Ok(StdioCommand::Path(resolved)),
            Ok(resolved) if resolved.exists() => Err(format!(
                "command {} is not a file ({})",
                quote(raw),
                resolved.display()
            )),
            Ok(_) | Err(ContainError::Missing) => Err(format!(
                "command {} does not exist in the plugin",
                quote(raw)
            )),
            Err(ContainError::Escape(target)) => Err(format!(
                "command {} resolves outside the plugin root (to {})",
                quote(raw),
                target.display()
            )),
            Err(e) => Err(format!("command {}: {e}", quote(raw))),
        };
    }
    if raw.contains('/') || raw.contains('\\') {
        return Err(format!(
            "command {} must be a bare executable name or a plugin-relative path starting \
             with ./",
            quote(raw)
        ));
    }
    if raw.chars().any(char::is_whitespace) {
        return Err(format!(
            "command {} must be one executable token, not a shell command; put arguments in \
             \"args\"",
            quote(raw)
        ));
    }
    if raw == "." || raw == ".." {
        return Err(format!("command {} is not an executable name", quote(raw)));
    }
    Ok(StdioCommand::Bare(raw.to_owned()))
}

/// Checks a `cwd` form and its containment after expansion (§7.2.1).
fn resolve_cwd(raw: &str, expanded: &str, ctx: &PluginContext<'_>) -> Result<PathBuf, String> {
    let (base, path) = if let Some(rel) = raw.strip_prefix("./") {
        (ctx.root, ctx.root.join(rel))
    } else if raw == "${PLUGIN_ROOT}" || raw.starts_with("${PLUGIN_ROOT}/") {
        (ctx.root, PathBuf::from(expanded))
    } else if raw == "${PLUGIN_DATA}" || raw.starts_with("${PLUGIN_DATA}/") {
        (ctx.data_dir, PathBuf::from(expanded))
    } else {
        return Err(format!(
            "cwd {} must start with ./, ${{PLUGIN_ROOT}} or ${{PLUGIN_DATA}}",
            quote(raw)
        ));
    };
    match resolve_within(base, &path) {
        Ok(resolved) => Ok(resolved),
        Err(ContainError::Escape(target)) => Err(format!(
            "cwd {} resolves outside {} (to {})",
            quote(raw),
            if base == ctx.root {
                "the plugin root"
            } else {
                "the plugin data directory"
            },
            target.display()
        )),
        Err(e) => Err(format!("cwd {}: {e}", quote(raw))),
    }
}

fn http_server(fields: &Map<String, Value>) -> Result<HttpServerSpec, Vec<String>> {
    let mut problems = Vec::new();
    let raw_url = str_field(fields, "url").unwrap_or_default();
    if let Err(problem) = check_remote_url(raw_url) {
        problems.push(problem.to_string());
    }
    let headers = string_map(fields, "headers");
    problems.extend(check_headers(&headers));
    if problems.is_empty() {
        Ok(HttpServerSpec {
            url: raw_url.to_owned(),
            headers,
            headers_from_env: Vec::new(),
        })
    } else {
        Err(problems)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_tokens() {
        let root = Path::new("/nonexistent-root");
        assert_eq!(
            command_token("npx", root),
            Ok(StdioCommand::Bare("npx".into()))
        );
        for bad in [
            "node server.js",
            "/usr/bin/env",
            "bin/server",
            "../bin/server",
            "${PLUGIN_ROOT}/bin/x",
            ".",
            "..",
            "a\\b",
        ] {
            assert!(command_token(bad, root).is_err(), "{bad}");
        }
    }
}
