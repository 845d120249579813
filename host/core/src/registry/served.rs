//! What `rho mcp serve` offers another MCP client (`docs/mcp.md`, "rho as an MCP server"):
//! the tools a session mounts, under their exported names, filtered by component and, for
//! built-in tools, by risk. Each call runs as a session's would (the workspace, its extra
//! roots, secrets hidden from the processes tools start); no person is asked anything, so
//! servers are told rho shows no forms and has no model for sampling.

use std::collections::BTreeSet;
use std::sync::Arc;

use rho_component::{CancelSignal, ProgressSink, RiskLevel, ToolContext, ToolOrigin, ToolSpec};
use rho_mcp::serving::{ServeInfo, Served, ServedCall, ServedList};

use super::Registry;
use super::skill_tool::ACTIVATE_SKILL;
use super::tool_set::{MountOptions, ToolSet};

/// Which tools `rho mcp serve` offers.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// Offer built-in tools (file tools, `run_command`, ...) up to `max_risk`.
    pub builtins: bool,
    /// The highest risk of a built-in tool offered.
    pub max_risk: RiskLevel,
    /// Offer only these components' tools (MCP server identities or plugin names); all when
    /// empty.
    pub only: Vec<String>,
    /// Never offer these components' tools.
    pub exclude: Vec<String>,
}

/// Why `rho mcp serve` could not serve.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// `--only` or `--exclude` names no component rho has.
    #[error("{flag} names no MCP server or plugin: {names} (known: {known})")]
    UnknownComponent {
        /// The flag.
        flag: &'static str,
        /// The unknown names.
        names: String,
        /// The components rho has.
        known: String,
    },
    /// The client side failed.
    #[error(transparent)]
    Serving(#[from] rho_mcp::serving::ServeError),
}

impl Registry {
    /// Serves this registry's tools as one MCP server on stdin and stdout until the client
    /// closes stdin or `stop` fires, then closes every server it started.
    pub async fn serve_mcp(
        &self,
        options: ServeOptions,
        stop: CancelSignal,
    ) -> Result<(), ServeError> {
        self.check_components(&options)?;
        let mount = MountOptions {
            oauth_login: rho_mcp::oauth::LoginPolicy::Never,
            ..MountOptions::default()
        };
        let set = Arc::new(self.mount(&mount).await);
        for d in &set.diagnostics {
            tracing::warn!(target: "rho::serve", code = d.code.as_str(), "{}", d.message);
        }
        let mut context = ToolContext::new(&self.paths.project.cwd);
        context.extra_roots = self.config.agent.extra_roots.clone();
        context.hidden_env = self.secret_variables();
        let served = Arc::new(ServedTools {
            set: set.clone(),
            options,
            context,
        });
        let info = ServeInfo {
            name: "rho".to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            instructions: None,
        };
        let result = rho_mcp::serving::serve_stdio(served, info, stop).await;
        match Arc::try_unwrap(set) {
            Ok(set) => set.close().await,
            Err(_) => {
                tracing::warn!(target: "rho::serve", "a call still holds the tool set; its servers stop when it ends")
            }
        }
        Ok(result?)
    }

    /// Fails when `--only` or `--exclude` names a component rho does not have.
    fn check_components(&self, options: &ServeOptions) -> Result<(), ServeError> {
        let mut known: BTreeSet<&str> = self.servers.iter().map(|s| s.id.as_str()).collect();
        known.extend(self.plugins.plugins.iter().map(|p| p.name.as_str()));
        for (flag, names) in [("--only", &options.only), ("--exclude", &options.exclude)] {
            let unknown: Vec<&str> = names
                .iter()
                .map(String::as_str)
                .filter(|n| !known.contains(n))
                .collect();
            if !unknown.is_empty() {
                return Err(ServeError::UnknownComponent {
                    flag,
                    names: unknown.join(", "),
                    known: if known.is_empty() {
                        "none".to_owned()
                    } else {
                        known.iter().copied().collect::<Vec<_>>().join(", ")
                    },
                });
            }
        }
        Ok(())
    }
}

/// The tools of a mounted set that `rho mcp serve` offers.
struct ServedTools {
    set: Arc<ToolSet>,
    options: ServeOptions,
    /// What every call runs with (each gets its own cancellation and progress).
    context: ToolContext,
}

impl ServedTools {
    /// Whether `spec` is offered.
    fn offers(&self, spec: &ToolSpec) -> bool {
        if spec.name == ACTIVATE_SKILL {
            return false;
        }
        let names = component_names(&spec.origin);
        if names.is_empty() {
            // A built-in tool.
            return self.options.builtins && spec.risk <= self.options.max_risk;
        }
        let named = |list: &[String]| names.iter().any(|n| list.iter().any(|l| l == n));
        (self.options.only.is_empty() || named(&self.options.only)) && !named(&self.options.exclude)
    }
}

/// The component names a tool answers to in `--only` and `--exclude`: its MCP server
/// identity and the plugin that declares it, or the plugin of a WASM tool; none for a
/// built-in tool.
fn component_names(origin: &ToolOrigin) -> Vec<&str> {
    match origin {
        ToolOrigin::Builtin => Vec::new(),
        ToolOrigin::Mcp { server, plugin, .. } => std::iter::once(server.as_str())
            .chain(plugin.as_deref())
            .collect(),
        ToolOrigin::Wasm { plugin, .. } => vec![plugin.as_str()],
    }
}

impl Served for ServedTools {
    fn tools(&self) -> ServedList<'_> {
        Box::pin(async move {
            // Tools a lazy server's background start found join here, as at a session's
            // turn boundary.
            self.set.reconcile().await;
            self.set
                .specs()
                .into_iter()
                .filter(|spec| self.offers(spec))
                .collect()
        })
    }

    fn call<'a>(
        &'a self,
        name: &'a str,
        arguments: serde_json::Value,
        cancel: CancelSignal,
        progress: Option<ProgressSink>,
    ) -> ServedCall<'a> {
        Box::pin(async move {
            let tool = self.set.get(name).filter(|t| self.offers(t.spec()))?;
            let mut context = self.context.clone();
            context.cancel = cancel;
            context.progress = progress;
            Some(tool.call(arguments, &context).await)
        })
    }
}
