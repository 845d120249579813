//! `[agent]` (the default model and provider, the permission mode, iteration budget, extra
//! file roots and the tool search) and `[providers.<id>]` (OpenAI-compatible endpoints) of `config.toml`.
//!
//! Like server entries, a bad provider entry disables only that provider and its problems name
//! the key; `[agent]` is small and strict, so a problem there makes the file unusable.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rho_component::endpoint::check_remote_url;
use rho_component::{PermissionMode, valid_env_name};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::agent_runtime::{AgentRuntime, resolve_claude_command};
use crate::config_file::MAX_TIMEOUT_SEC;

/// The iteration budget of one prompt when `[agent] max_iterations` is not set.
pub const DEFAULT_MAX_ITERATIONS: u32 = 50;

/// The share of the model's context window (in percent) that tool definitions may take before
/// `tool_search = "auto"` defers them, when `[agent] tool_search_budget_percent` is not set.
pub const DEFAULT_TOOL_SEARCH_BUDGET_PERCENT: u8 = 10;

/// Whether MCP tool definitions wait behind the tool search (`[agent] tool_search`,
/// `docs/sessions.md`, "The tool search").
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum ToolSearch {
    /// Deferred only when the definitions would take more than
    /// [`AgentSettings::tool_search_budget_percent`] of the model's context window.
    #[default]
    Auto,
    /// Always deferred (pinned servers' tools excepted).
    Always,
    /// Never deferred: every definition goes to the model.
    Never,
}

impl ToolSearch {
    /// Every mode.
    pub const ALL: [ToolSearch; 3] = [Self::Auto, Self::Always, Self::Never];

    /// The configuration name: `auto`, `always` or `never`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Always => "always",
            Self::Never => "never",
        }
    }

    /// The mode named `name`.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.as_str() == name)
    }
}

impl std::fmt::Display for ToolSearch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `[agent]`, resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentSettings {
    /// The model to use (`id`, or `provider:id`).
    pub model: Option<String>,
    /// The provider to use.
    pub provider: Option<String>,
    /// How much the session may do without asking.
    pub permission_mode: PermissionMode,
    /// Model requests per prompt before the loop stops.
    pub max_iterations: u32,
    /// Directories file tools may reach besides the workspace (absolute).
    pub extra_roots: Vec<PathBuf>,
    /// Whether MCP tool definitions wait behind the tool search.
    pub tool_search: ToolSearch,
    /// With [`ToolSearch::Auto`]: the share of the model's context window, in percent (1 to
    /// 100), that tool definitions may take before they are deferred.
    pub tool_search_budget_percent: u8,
    /// Which agent runs prompts (`runtime`).
    pub runtime: AgentRuntime,
    /// The Claude Code CLI to start for [`AgentRuntime::Claude`] (`claude_command`): a bare
    /// name looked up in `PATH`, or an absolute path. `None`: `claude` in `PATH`.
    pub claude_command: Option<PathBuf>,
}

impl Default for AgentSettings {
    fn default() -> Self {
        Self {
            model: None,
            provider: None,
            permission_mode: PermissionMode::default(),
            max_iterations: DEFAULT_MAX_ITERATIONS,
            extra_roots: Vec::new(),
            tool_search: ToolSearch::default(),
            tool_search_budget_percent: DEFAULT_TOOL_SEARCH_BUDGET_PERCENT,
            runtime: AgentRuntime::default(),
            claude_command: None,
        }
    }
}

/// `[providers.<id>]`, resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderSettings {
    /// The table key.
    pub id: String,
    /// The chat-completions URL (or a base URL ending in `/v1`).
    pub endpoint: String,
    /// The environment variable holding the API key (never the key itself).
    pub api_key_env: Option<String>,
    /// The model used when none is chosen.
    pub default_model: Option<String>,
    /// Models to list without asking the endpoint.
    pub models: Vec<String>,
    /// The context window in tokens, for usage statistics.
    pub context_window: Option<u64>,
    /// Budget for the first byte of an answer.
    pub request_timeout: Option<Duration>,
    /// Budget between two chunks of a streamed answer.
    pub idle_timeout: Option<Duration>,
}

/// One `[providers.<id>]` entry: resolved, or why it cannot be used.
#[derive(Debug, Clone)]
pub struct ConfigProvider {
    /// The table key.
    pub id: String,
    /// The line of the entry (1-based).
    pub line: usize,
    /// The provider, or the problems (each naming its key).
    pub settings: Result<ProviderSettings, Vec<String>>,
}

/// `[agent]`: the session defaults.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "agent")]
pub(crate) struct AgentToml {
    /// The model to use: an id, or provider:id.
    #[schemars(length(min = 1))]
    model: Option<String>,
    /// The provider to use (a key of [providers]).
    #[schemars(length(min = 1))]
    provider: Option<String>,
    /// How much the session may do without asking. read-only: only read tools run; ask: write
    /// and destructive tools ask first; ask-destructive (default): destructive tools ask first;
    /// allow-all: nothing asks.
    #[serde(default)]
    #[schemars(
        schema_with = "crate::schema::permission_mode_schema",
        extend("default" = PermissionMode::default().as_str())
    )]
    permission_mode: Option<String>,
    /// Model requests per prompt before the loop stops.
    #[schemars(range(min = 1), extend("default" = DEFAULT_MAX_ITERATIONS))]
    max_iterations: Option<u32>,
    /// Directories file tools may reach besides the workspace (relative paths anchor at the config file's directory).
    extra_roots: Option<Vec<PathBuf>>,
    /// Whether MCP tool definitions wait behind a tool search the model calls. auto (default): only when they would take more than tool_search_budget_percent of the model's context window; always; never.
    #[serde(default)]
    #[schemars(
        schema_with = "crate::schema::tool_search_schema",
        extend("default" = ToolSearch::default().as_str())
    )]
    tool_search: Option<toml::Spanned<String>>,
    /// With tool_search = "auto": the share of the model's context window, in percent, that tool definitions may take before they are deferred.
    #[serde(default)]
    #[schemars(
        with = "u8",
        range(min = 1, max = 100),
        extend("default" = DEFAULT_TOOL_SEARCH_BUDGET_PERCENT)
    )]
    tool_search_budget_percent: Option<toml::Spanned<i64>>,
    /// Which agent runs prompts. rho (default): rho's own agent loop with rho's tools and MCP servers; claude: the Claude Code CLI (claude -p) with its own tools, and no MCP server of rho's loaded.
    #[serde(default)]
    #[schemars(
        schema_with = "crate::schema::runtime_schema",
        extend("default" = AgentRuntime::default().as_str())
    )]
    runtime: Option<toml::Spanned<String>>,
    /// The Claude Code CLI the claude runtime starts: a command name looked up in PATH (default claude), or a path (relative paths anchor at the config file's directory).
    #[schemars(length(min = 1))]
    claude_command: Option<PathBuf>,
}

/// One OpenAI-compatible endpoint, `[providers.<id>]`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "provider")]
pub(crate) struct ProviderToml {
    /// The chat-completions URL, or a base URL ending in /v1. HTTPS except to loopback.
    #[schemars(required, length(min = 1))]
    endpoint: Option<String>,
    /// The environment variable holding the API key (never the key itself).
    #[schemars(regex(pattern = r"^[A-Za-z_][A-Za-z0-9_]*$"))]
    api_key_env: Option<String>,
    /// The model used when none is chosen.
    default_model: Option<String>,
    /// Models to list without asking the endpoint.
    models: Option<Vec<String>>,
    /// Context window in tokens, for usage statistics.
    #[schemars(range(min = 1))]
    context_window: Option<u64>,
    /// Budget for the first byte of an answer, in seconds.
    #[schemars(extend("exclusiveMinimum" = 0, "maximum" = MAX_TIMEOUT_SEC))]
    request_timeout_sec: Option<f64>,
    /// Budget between two chunks of a streamed answer, in seconds.
    #[schemars(extend("exclusiveMinimum" = 0, "maximum" = MAX_TIMEOUT_SEC))]
    idle_timeout_sec: Option<f64>,
}

/// Resolves `[agent]`; problems are file-level (they name the key, never the value). `text`
/// is the file, for the line of a key that carries its position.
pub(crate) fn resolve_agent(
    raw: AgentToml,
    base: &Path,
    text: &str,
) -> Result<AgentSettings, String> {
    let permission_mode = match raw.permission_mode.as_deref() {
        None => PermissionMode::default(),
        Some(name) => PermissionMode::parse(name).ok_or_else(|| {
            let known: Vec<&str> = PermissionMode::ALL.iter().map(|m| m.as_str()).collect();
            format!("agent.permission_mode: must be one of {}", known.join(", "))
        })?,
    };
    let max_iterations = raw.max_iterations.unwrap_or(DEFAULT_MAX_ITERATIONS);
    if max_iterations == 0 {
        return Err("agent.max_iterations: must be at least 1".into());
    }
    for (key, value) in [("model", &raw.model), ("provider", &raw.provider)] {
        if value.as_deref().is_some_and(|v| v.trim().is_empty()) {
            return Err(format!("agent.{key}: must not be empty"));
        }
    }
    let extra_roots = raw
        .extra_roots
        .unwrap_or_default()
        .into_iter()
        .map(|p| if p.is_absolute() { p } else { base.join(p) })
        .collect();
    let at = |span: std::ops::Range<usize>| crate::config_file::position(text, span.start);
    let tool_search = match &raw.tool_search {
        None => ToolSearch::default(),
        Some(name) => ToolSearch::parse(name.get_ref()).ok_or_else(|| {
            let known: Vec<&str> = ToolSearch::ALL.iter().map(|m| m.as_str()).collect();
            format!(
                "{}agent.tool_search: must be one of {}",
                at(name.span()),
                known.join(", ")
            )
        })?,
    };
    let tool_search_budget_percent = match &raw.tool_search_budget_percent {
        None => DEFAULT_TOOL_SEARCH_BUDGET_PERCENT,
        Some(percent) => u8::try_from(*percent.get_ref())
            .ok()
            .filter(|p| (1..=100).contains(p))
            .ok_or_else(|| {
                format!(
                    "{}agent.tool_search_budget_percent: must be a whole number from 1 to 100",
                    at(percent.span())
                )
            })?,
    };
    let runtime = match &raw.runtime {
        None => AgentRuntime::default(),
        Some(name) => AgentRuntime::parse(name.get_ref()).ok_or_else(|| {
            let known: Vec<&str> = AgentRuntime::ALL.iter().map(|m| m.as_str()).collect();
            format!(
                "{}agent.runtime: must be one of {}",
                at(name.span()),
                known.join(", ")
            )
        })?,
    };
    let claude_command = raw
        .claude_command
        .as_deref()
        .map(|command| resolve_claude_command(command, base))
        .transpose()?;
    Ok(AgentSettings {
        runtime,
        claude_command,
        model: raw.model,
        provider: raw.provider,
        permission_mode,
        max_iterations,
        extra_roots,
        tool_search,
        tool_search_budget_percent,
    })
}

/// Resolves one `[providers.<id>]` table.
pub(crate) fn resolve_provider(
    id: &str,
    table: toml::Table,
) -> Result<ProviderSettings, Vec<String>> {
    let key = |k: &str| format!("providers.{id}.{k}");
    if !crate::valid_server_id(id) {
        return Err(vec![format!(
            "provider identity {id:?} may contain only ASCII letters, digits, '-' and '_' \
             (at most 64)"
        )]);
    }
    let raw: ProviderToml =
        serde_path_to_error::deserialize(toml::Value::Table(table)).map_err(|e| {
            let inner = e.path().to_string();
            let at = if inner == "." {
                format!("providers.{id}")
            } else {
                key(&inner)
            };
            vec![format!("{at}: {}", e.inner().message().trim_end())]
        })?;
    let mut problems = Vec::new();
    let endpoint = match raw.endpoint {
        None => {
            problems.push(format!("{}: missing", key("endpoint")));
            String::new()
        }
        Some(url) => {
            if let Err(e) = check_remote_url(&url) {
                problems.push(format!("{}: {e}", key("endpoint")));
            }
            url
        }
    };
    if let Some(name) = &raw.api_key_env
        && !valid_env_name(name)
    {
        // Never quoted: a key pasted here instead of a variable name must not be echoed.
        problems.push(format!(
            "{}: must be the name of an environment variable (ASCII letters, digits and '_'), \
             not the key itself",
            key("api_key_env")
        ));
    }
    let duration = |value: Option<f64>, k: &str, problems: &mut Vec<String>| match value {
        None => None,
        Some(s) if s.is_finite() && s > 0.0 && s <= f64::from(MAX_TIMEOUT_SEC) => {
            Some(Duration::from_secs_f64(s))
        }
        Some(_) => {
            problems.push(format!(
                "{}: must be a number of seconds above 0 and at most {MAX_TIMEOUT_SEC}",
                key(k)
            ));
            None
        }
    };
    let request_timeout = duration(
        raw.request_timeout_sec,
        "request_timeout_sec",
        &mut problems,
    );
    let idle_timeout = duration(raw.idle_timeout_sec, "idle_timeout_sec", &mut problems);
    if raw.context_window == Some(0) {
        problems.push(format!("{}: must be at least 1", key("context_window")));
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(ProviderSettings {
        id: id.to_owned(),
        endpoint,
        api_key_env: raw.api_key_env,
        default_model: raw.default_model,
        models: raw.models.unwrap_or_default(),
        context_window: raw.context_window,
        request_timeout,
        idle_timeout,
    })
}

/// `[providers]` as written: tables by identity, with spans for line numbers.
pub(crate) type ProvidersToml = BTreeMap<String, toml::Spanned<toml::Table>>;

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn tool_search_modes_serialize_as_configured() {
        for mode in ToolSearch::ALL {
            assert_eq!(serde_json::to_value(mode).unwrap(), mode.as_str());
        }
    }

    fn parse(text: &str) -> Result<crate::RhoConfig, String> {
        crate::parse_config(text, Path::new("/etc/rho/c.toml")).map_err(|e| e.to_string())
    }

    #[test]
    fn tool_search_keys_resolve_with_defaults() {
        let agent = parse("").unwrap().agent;
        assert_eq!(agent.tool_search, ToolSearch::Auto);
        assert_eq!(agent.tool_search_budget_percent, 10);
        for (mode, expected) in [
            ("auto", ToolSearch::Auto),
            ("always", ToolSearch::Always),
            ("never", ToolSearch::Never),
        ] {
            let agent = parse(&format!(
                "[agent]\ntool_search = \"{mode}\"\ntool_search_budget_percent = 25\n"
            ))
            .unwrap()
            .agent;
            assert_eq!(agent.tool_search, expected);
            assert_eq!(agent.tool_search.to_string(), mode);
            assert_eq!(agent.tool_search_budget_percent, 25);
        }
        for percent in [1, 100] {
            let text = format!("[agent]\ntool_search_budget_percent = {percent}\n");
            assert_eq!(
                u64::from(parse(&text).unwrap().agent.tool_search_budget_percent),
                percent
            );
        }
    }

    #[test]
    fn bad_tool_search_values_name_the_key_and_line() {
        let err = parse("[agent]\nmodel = \"m\"\ntool_search = \"sometimes\"\n").unwrap_err();
        assert!(
            err.contains("line 3")
                && err.contains("agent.tool_search:")
                && err.contains("auto, always, never"),
            "{err}"
        );
        for bad in ["0", "101", "-5", "4294967306"] {
            let err =
                parse(&format!("[agent]\n\ntool_search_budget_percent = {bad}\n")).unwrap_err();
            assert!(
                err.contains("line 3") && err.contains("agent.tool_search_budget_percent"),
                "{bad}: {err}"
            );
        }
        let err = parse("[agent]\ntool_search_budget_percent = 12.5\n").unwrap_err();
        assert!(err.contains("line 2"), "{err}");
        let err = parse("[agent]\ntool_search = true\n").unwrap_err();
        assert!(err.contains("line 2"), "{err}");
    }

    #[test]
    fn the_runtime_is_a_strict_enum_and_claude_command_anchors_at_the_config() {
        let config =
            parse("[agent]\nruntime = \"claude\"\nclaude_command = \"bin/claude\"\n").unwrap();
        assert_eq!(config.agent.runtime, crate::AgentRuntime::Claude);
        assert_eq!(
            config.agent.claude_command,
            Some(PathBuf::from("/etc/rho/bin/claude"))
        );
        assert_eq!(parse("").unwrap().agent.runtime, crate::AgentRuntime::Rho);
        let err = parse("[agent]\n\nruntime = \"codex\"\n").unwrap_err();
        assert!(
            err.contains("line 3") && err.contains("agent.runtime: must be one of rho, claude"),
            "{err}"
        );
        let err = parse("[agent]\nclaude_command = \"\"\n").unwrap_err();
        assert!(err.contains("agent.claude_command"), "{err}");
    }

    #[test]
    fn agent_and_providers_resolve_with_defaults() {
        let config = parse(
            "[agent]\nmodel = \"local:qwen\"\npermission_mode = \"ask\"\nextra_roots = [\"data\", \"/srv\"]\n\
             [providers.local]\nendpoint = \"http://127.0.0.1:8080/v1\"\napi_key_env = \"LOCAL_KEY\"\n\
             default_model = \"qwen\"\nrequest_timeout_sec = 30\n",
        )
        .unwrap();
        assert_eq!(config.agent.model.as_deref(), Some("local:qwen"));
        assert_eq!(config.agent.permission_mode, PermissionMode::Ask);
        assert_eq!(config.agent.max_iterations, DEFAULT_MAX_ITERATIONS);
        assert_eq!(
            config.agent.extra_roots,
            [PathBuf::from("/etc/rho/data"), PathBuf::from("/srv")]
        );
        let provider = config.providers[0].settings.as_ref().unwrap();
        assert_eq!(provider.api_key_env.as_deref(), Some("LOCAL_KEY"));
        assert_eq!(provider.request_timeout, Some(Duration::from_secs(30)));
        assert_eq!(parse("").unwrap().agent, AgentSettings::default());
    }

    #[test]
    fn a_bad_provider_fails_alone_and_never_quotes_a_pasted_key() {
        let config = parse(
            "[providers.good]\nendpoint = \"https://api.example.com/v1\"\n\
             [providers.bad]\nendpoint = \"http://api.example.com/v1\"\napi_key_env = \"sk-canary-123\"\n\
             [providers.odd]\nendpoint = \"https://h/v1\"\ncolour = 1\n",
        )
        .unwrap();
        let by_id = |id: &str| config.providers.iter().find(|p| p.id == id).unwrap();
        assert!(by_id("good").settings.is_ok());
        let problems = by_id("bad").settings.clone().unwrap_err().join("; ");
        assert!(problems.contains("providers.bad.endpoint"), "{problems}");
        assert!(problems.contains("providers.bad.api_key_env"), "{problems}");
        assert!(!problems.contains("sk-canary-123"), "{problems}");
        let problems = by_id("odd").settings.clone().unwrap_err().join("; ");
        assert!(problems.contains("colour"), "{problems}");
    }

    #[test]
    fn agent_problems_make_the_file_unusable_and_name_the_key() {
        let err = parse("[agent]\npermission_mode = \"yolo\"\n").unwrap_err();
        assert!(
            err.contains("agent.permission_mode") && err.contains("allow-all"),
            "{err}"
        );
        let err = parse("[agent]\nmax_iterations = 0\n").unwrap_err();
        assert!(err.contains("agent.max_iterations"), "{err}");
        let err = parse("[agent]\ntemperature = 1\n").unwrap_err();
        assert!(
            err.contains("temperature") && err.contains("line 2"),
            "{err}"
        );
    }
}
