//! Which provider and model a run uses, decided without any network call: command-line flags
//! (`--endpoint`, `--api-key-env`, `--model`, `--accept-external-provider`), then `[agent]`
//! and `[providers.*]` in `config.toml`, then the built-in default (a local Ollama-style
//! endpoint). A provider outside this machine needs `--accept-external-provider`: the
//! conversation, files included, leaves the machine.

use std::sync::Arc;

use rho_component::endpoint::is_loopback_host;
use rho_config::{AgentSettings, RhoConfig};
use serde::Serialize;

use crate::provider::{OpenAiCompatible, OpenAiConfig, Provider, ProviderError};

/// The provider used when neither flags nor configuration name one.
pub const BUILTIN_PROVIDER: &str = "local";
/// Its endpoint.
pub const BUILTIN_ENDPOINT: &str = "http://127.0.0.1:11434/v1";
/// Its model.
pub const BUILTIN_MODEL: &str = "qwen3";

/// What to do when no model is configured, as every report says it.
pub const CONFIGURE_A_MODEL: &str = "add a [providers.<id>] table to config.toml or pass \
     --endpoint and --model (see docs/sessions.md)";

/// Provider choices from the command line.
#[derive(Debug, Clone, Default)]
pub struct ProviderFlags {
    /// `--endpoint`: an OpenAI-compatible URL that replaces configured providers.
    pub endpoint: Option<String>,
    /// `--api-key-env`: the variable holding the key for `--endpoint`.
    pub api_key_env: Option<String>,
    /// `--model`: `id` or `provider:id`.
    pub model: Option<String>,
    /// `--accept-external-provider`.
    pub accept_external_provider: bool,
}

/// Where a provider entry comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ProviderSource {
    /// `--endpoint` on the command line.
    Flags,
    /// `[providers.<id>]` in `config.toml`.
    Config,
    /// rho's built-in default (a local endpoint).
    Builtin,
}

impl ProviderSource {
    /// `flags`, `config` or `builtin`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Flags => "flags",
            Self::Config => "config",
            Self::Builtin => "builtin",
        }
    }
}

/// One provider a run could use. `Debug` leaves out the full URL (it may hold a credential).
#[derive(Clone, PartialEq, Serialize)]
pub struct ProviderEntry {
    /// The identity (`cli` for `--endpoint`, `local` for the built-in default).
    pub id: String,
    /// `flags`, `config` or `builtin`.
    pub source: ProviderSource,
    /// The endpoint as shown: scheme, host, port and path; never user information or a query
    /// string (either may carry a credential).
    pub endpoint: String,
    #[serde(skip)]
    url: String,
    /// Whether the endpoint is outside this machine.
    pub external: bool,
    /// The model used when none is chosen.
    pub default_model: Option<String>,
    /// Models listed in the configuration.
    pub models: Vec<String>,
    /// The variable the key comes from (never the key).
    pub api_key_env: Option<String>,
    /// The context window, when configured.
    pub context_window: Option<u64>,
    /// Why the entry cannot be used, when it cannot.
    pub problem: Option<String>,
    #[serde(skip)]
    request_timeout: Option<std::time::Duration>,
    #[serde(skip)]
    idle_timeout: Option<std::time::Duration>,
}

impl std::fmt::Debug for ProviderEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderEntry")
            .field("id", &self.id)
            .field("source", &self.source)
            .field("endpoint", &self.endpoint)
            .field("external", &self.external)
            .field("default_model", &self.default_model)
            .field("api_key_env", &self.api_key_env)
            .field("problem", &self.problem)
            .finish_non_exhaustive()
    }
}

/// The providers of a run, in the order they are considered.
pub fn provider_entries(config: &RhoConfig, flags: &ProviderFlags) -> Vec<ProviderEntry> {
    let entry = |id: &str, source, endpoint: &str| ProviderEntry {
        id: id.to_owned(),
        source,
        endpoint: shown(endpoint),
        url: endpoint.to_owned(),
        external: is_external(endpoint),
        default_model: None,
        models: Vec::new(),
        api_key_env: None,
        context_window: None,
        problem: None,
        request_timeout: None,
        idle_timeout: None,
    };
    if let Some(endpoint) = &flags.endpoint {
        let mut e = entry("cli", ProviderSource::Flags, endpoint);
        e.api_key_env = flags.api_key_env.clone();
        if let Err(problem) = rho_component::endpoint::check_remote_url(endpoint) {
            // The rule's message never quotes the URL, which may hold a credential.
            e.problem = Some(format!("--endpoint: {problem}"));
        }
        return vec![e];
    }
    let mut out = Vec::new();
    for provider in &config.providers {
        match &provider.settings {
            Ok(settings) => {
                let mut e = entry(&provider.id, ProviderSource::Config, &settings.endpoint);
                e.default_model = settings.default_model.clone();
                e.models = settings.models.clone();
                e.api_key_env = settings.api_key_env.clone();
                e.context_window = settings.context_window;
                e.request_timeout = settings.request_timeout;
                e.idle_timeout = settings.idle_timeout;
                out.push(e);
            }
            Err(problems) => {
                let mut e = entry(&provider.id, ProviderSource::Config, "");
                e.external = false;
                e.problem = Some(problems.join("; "));
                out.push(e);
            }
        }
    }
    if out.is_empty() {
        let mut e = entry(BUILTIN_PROVIDER, ProviderSource::Builtin, BUILTIN_ENDPOINT);
        e.default_model = Some(BUILTIN_MODEL.to_owned());
        out.push(e);
    }
    out
}

/// `endpoint` without user information, query or fragment.
fn shown(endpoint: &str) -> String {
    match url::Url::parse(endpoint) {
        Ok(mut url) => {
            let _ = url.set_username("");
            let _ = url.set_password(None);
            url.set_query(None);
            url.set_fragment(None);
            url.to_string()
        }
        Err(_) => "(an invalid URL)".to_owned(),
    }
}

fn is_external(endpoint: &str) -> bool {
    match url::Url::parse(endpoint) {
        Ok(url) => !url.host().as_ref().is_some_and(is_loopback_host),
        Err(_) => true,
    }
}

/// The provider and model a session uses.
pub struct ChosenModel {
    /// The provider.
    pub provider: Arc<dyn Provider>,
    /// Its entry.
    pub entry: ProviderEntry,
    /// The model id sent to it.
    pub model: String,
}

impl std::fmt::Debug for ChosenModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChosenModel")
            .field("provider", &self.entry.id)
            .field("model", &self.model)
            .finish()
    }
}

/// Why no provider and model could be chosen, or a provider's models not listed; every
/// variant names the provider (and the variable or endpoint) involved, never a key.
#[derive(Debug, thiserror::Error)]
pub enum ModelChoiceError {
    /// The provider asked for is not configured.
    #[error("no provider {provider:?} (configure [providers.{provider}])")]
    UnknownProvider {
        /// The provider id asked for.
        provider: String,
    },
    /// No provider is configured at all.
    #[error("no provider configured")]
    NoProvider,
    /// The provider's configuration has a problem.
    #[error("provider {provider:?} cannot be used: {problem}")]
    Unusable {
        /// The provider id.
        provider: String,
        /// What is wrong with its configuration.
        problem: String,
    },
    /// The provider's configuration has a problem (as [`list_provider_models`] reports it:
    /// the problem alone, since the caller names the provider).
    #[error("{problem}")]
    Misconfigured {
        /// The provider id.
        provider: String,
        /// What is wrong with its configuration.
        problem: String,
    },
    /// The provider is outside this machine and `--accept-external-provider` was not given.
    #[error(
        "provider {provider:?} at {endpoint} is outside this machine: the conversation \
         (including file contents) would be sent there; pass --accept-external-provider to \
         allow it"
    )]
    External {
        /// The provider id.
        provider: String,
        /// Its endpoint.
        endpoint: String,
    },
    /// No model was named and the provider has no default.
    #[error("no model chosen for provider {provider:?}: pass --model or set [agent] model")]
    NoModel {
        /// The provider id.
        provider: String,
    },
    /// The provider's API key variable is not set (named, never its value).
    #[error(
        "the environment variable {variable} (the API key of provider {provider:?}) is not set"
    )]
    MissingKey {
        /// The provider id.
        provider: String,
        /// The environment variable.
        variable: String,
    },
    /// The provider could not be set up or did not answer.
    #[error(transparent)]
    Provider(#[from] ProviderError),
    /// Listing the provider's models took longer than the budget.
    #[error("no answer within {seconds} s")]
    NoAnswer {
        /// The provider id.
        provider: String,
        /// The budget.
        seconds: u64,
    },
}

/// Picks the provider and model: `model` (`id` or `provider:id`, e.g. from `setModel`) or
/// `--model`, then `[agent] model`/`provider`, then the provider's default model. The key is
/// read from the environment through `ambient`; its value never appears in an error.
pub fn choose_model(
    entries: &[ProviderEntry],
    agent: &AgentSettings,
    flags: &ProviderFlags,
    model: Option<&str>,
    ambient: &dyn Fn(&str) -> Option<String>,
) -> Result<ChosenModel, ModelChoiceError> {
    let wanted = model.or(flags.model.as_deref()).or(agent.model.as_deref());
    let (prefix, model_id) = match wanted {
        Some(text) => match text.split_once(':') {
            Some((p, id)) if entries.iter().any(|e| e.id == p) => (Some(p), Some(id)),
            _ => (None, Some(text)),
        },
        None => (None, None),
    };
    let provider_id = prefix.or(agent.provider.as_deref());
    let entry = match provider_id {
        Some(id) if flags.endpoint.is_none() => {
            entries.iter().find(|e| e.id == id).ok_or_else(|| {
                ModelChoiceError::UnknownProvider {
                    provider: id.to_owned(),
                }
            })?
        }
        _ => entries
            .iter()
            .find(|e| e.problem.is_none())
            .or(entries.first())
            .ok_or(ModelChoiceError::NoProvider)?,
    };
    if let Some(problem) = &entry.problem {
        return Err(ModelChoiceError::Unusable {
            provider: entry.id.clone(),
            problem: problem.clone(),
        });
    }
    if entry.external && !flags.accept_external_provider {
        return Err(ModelChoiceError::External {
            provider: entry.id.clone(),
            endpoint: entry.endpoint.clone(),
        });
    }
    let model = model_id
        .map(str::to_owned)
        .or_else(|| entry.default_model.clone())
        .ok_or_else(|| ModelChoiceError::NoModel {
            provider: entry.id.clone(),
        })?;
    let mut config = OpenAiConfig::new(&entry.id, &entry.url, &model);
    if let Some(timeout) = entry.request_timeout {
        config.request_timeout = timeout;
    }
    if let Some(timeout) = entry.idle_timeout {
        config.idle_timeout = timeout;
    }
    let provider = open_provider(entry, config, ambient)?;
    Ok(ChosenModel {
        provider: Arc::new(provider),
        entry: entry.clone(),
        model,
    })
}

/// The client of `entry` with `config`, its API key taken from `ambient` when the entry names
/// a variable for one.
fn open_provider(
    entry: &ProviderEntry,
    mut config: OpenAiConfig,
    ambient: &dyn Fn(&str) -> Option<String>,
) -> Result<OpenAiCompatible, ModelChoiceError> {
    if let Some(variable) = &entry.api_key_env {
        let key = ambient(variable).ok_or_else(|| ModelChoiceError::MissingKey {
            provider: entry.id.clone(),
            variable: variable.clone(),
        })?;
        config = config.with_api_key(key);
    }
    Ok(OpenAiCompatible::new(config)?)
}

/// Asks `entry`'s endpoint for its models (`GET …/models`) within `budget`. Reaching an
/// external endpoint is the caller's decision (consent); the key comes from `ambient`.
pub async fn list_provider_models(
    entry: &ProviderEntry,
    ambient: &(dyn Fn(&str) -> Option<String> + Sync),
    budget: std::time::Duration,
) -> Result<Vec<String>, ModelChoiceError> {
    if let Some(problem) = &entry.problem {
        return Err(ModelChoiceError::Misconfigured {
            provider: entry.id.clone(),
            problem: problem.clone(),
        });
    }
    let config = OpenAiConfig::new(&entry.id, &entry.url, "");
    let provider = open_provider(entry, config, ambient)?;
    match tokio::time::timeout(budget, provider.list_models()).await {
        Ok(Ok(models)) => Ok(models),
        Ok(Err(e)) => Err(e.into()),
        Err(_) => Err(ModelChoiceError::NoAnswer {
            provider: entry.id.clone(),
            seconds: budget.as_secs(),
        }),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn config(text: &str) -> RhoConfig {
        rho_config::parse_config(text, std::path::Path::new("/c.toml")).unwrap()
    }

    #[test]
    fn flags_then_config_then_the_builtin_default() {
        // `provider:model` of the choice for a config, the flags and a `--model` value.
        let choose = |config: &RhoConfig, flags: &ProviderFlags, model: Option<&str>| {
            let entries = provider_entries(config, flags);
            let chosen = choose_model(&entries, &config.agent, flags, model, &|_| None).unwrap();
            format!("{}:{}", chosen.entry.id, chosen.model)
        };
        let no_flags = ProviderFlags::default();
        assert_eq!(
            choose(&config(""), &no_flags, None),
            format!("{BUILTIN_PROVIDER}:{BUILTIN_MODEL}")
        );

        let configured = config(
            "[agent]\nmodel = \"b:big\"\n[providers.a]\nendpoint = \"http://127.0.0.1:1/v1\"\n\
             default_model = \"small\"\n[providers.b]\nendpoint = \"http://localhost:2/v1\"\n",
        );
        assert_eq!(choose(&configured, &no_flags, None), "b:big");
        assert_eq!(choose(&configured, &no_flags, Some("a:tiny")), "a:tiny");

        let flags = ProviderFlags {
            endpoint: Some("http://127.0.0.1:9/v1/chat/completions".into()),
            model: Some("m".into()),
            ..ProviderFlags::default()
        };
        assert_eq!(choose(&configured, &flags, None), "cli:m");
    }

    #[test]
    fn endpoints_are_shown_without_credentials() {
        let flags = ProviderFlags {
            endpoint: Some("https://user:pw@api.example.com/v1?api-key=SECRETQ#x".into()),
            ..ProviderFlags::default()
        };
        let entries = provider_entries(&RhoConfig::default(), &flags);
        let text = format!("{entries:?}");
        assert!(!text.contains("SECRETQ") && !text.contains("pw@"), "{text}");
        assert_eq!(entries[0].endpoint, "https://api.example.com/v1");
        let err = choose_model(
            &entries,
            &AgentSettings::default(),
            &flags,
            Some("m"),
            &|_| None,
        )
        .unwrap_err()
        .to_string();
        assert!(!err.contains("SECRETQ"), "{err}");
    }

    #[test]
    fn external_endpoints_need_consent_and_keys_come_from_the_environment() {
        let flags = ProviderFlags {
            endpoint: Some("https://api.example.com/v1".into()),
            api_key_env: Some("EXAMPLE_KEY".into()),
            model: Some("m".into()),
            accept_external_provider: false,
        };
        let agent = AgentSettings::default();
        let entries = provider_entries(&RhoConfig::default(), &flags);
        let err = choose_model(&entries, &agent, &flags, None, &|_| None).unwrap_err();
        assert!(
            matches!(&err, ModelChoiceError::External { provider, .. } if provider == "cli"),
            "{err}"
        );
        assert!(
            err.to_string().contains("--accept-external-provider"),
            "{err}"
        );
        let flags = ProviderFlags {
            accept_external_provider: true,
            ..flags
        };
        let err = choose_model(&entries, &agent, &flags, None, &|_| None).unwrap_err();
        assert!(
            matches!(&err, ModelChoiceError::MissingKey { variable, .. } if variable == "EXAMPLE_KEY"),
            "{err}"
        );
        let key = |name: &str| (name == "EXAMPLE_KEY").then(|| "sk-canary-42".to_owned());
        let chosen = choose_model(&entries, &agent, &flags, None, &key).unwrap();
        assert!(!format!("{chosen:?}").contains("sk-canary-42"));
    }
}
