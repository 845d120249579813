//! The environment a stdio server starts with: a sanitized base (paths, home, locale), then the
//! entry's literal `env`, then `env_from_env` (applied after sanitization, so it may restore a
//! variable on purpose), then, for plugin servers, `PLUGIN_ROOT` and `PLUGIN_DATA` last
//! (Agent Plugins §9.1). Credentials in rho's own environment never leak to a server by default.

use std::collections::BTreeMap;
use std::ffi::OsString;

use rho_component::{McpServerOrigin, McpServerSpec, McpTransport};

use crate::McpError;

/// Variables kept from rho's environment: where programs and the home are, the locale, the
/// terminal and the temporary directory. Nothing else (no tokens, no proxies, no `LD_*`).
pub const BASE_VARIABLES: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "TERM",
    "TMPDIR",
    "TZ",
    "XDG_RUNTIME_DIR",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
];

/// Computes the child environment of a stdio server. `ambient` looks a variable up in rho's
/// own environment (the process environment in production, a map in tests).
pub fn server_environment(
    spec: &McpServerSpec,
    ambient: &dyn Fn(&str) -> Option<OsString>,
) -> Result<BTreeMap<OsString, OsString>, McpError> {
    let mut env = BTreeMap::new();
    for name in BASE_VARIABLES {
        if let Some(value) = ambient(name) {
            env.insert(OsString::from(name), value);
        }
    }
    let McpTransport::Stdio(stdio) = &spec.transport else {
        return Ok(env);
    };
    for (name, value) in &stdio.env {
        env.insert(OsString::from(name), OsString::from(value));
    }
    for (name, from) in &stdio.env_from_env {
        // The error names the variable, never a value.
        let value = ambient(from).ok_or_else(|| McpError::MissingEnv {
            server: spec.id.clone(),
            variable: from.clone(),
        })?;
        env.insert(OsString::from(name), value);
    }
    if let McpServerOrigin::Plugin { root, data_dir, .. } = &spec.origin {
        env.insert(OsString::from("PLUGIN_ROOT"), root.clone().into_os_string());
        env.insert(
            OsString::from("PLUGIN_DATA"),
            data_dir.clone().into_os_string(),
        );
    }
    Ok(env)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rho_component::{StdioCommand, StdioServerSpec};

    fn spec(origin: McpServerOrigin) -> McpServerSpec {
        McpServerSpec::new(
            "s",
            origin,
            McpTransport::Stdio(StdioServerSpec {
                command: StdioCommand::Bare("x".into()),
                args: vec![],
                env: vec![("A".into(), "1".into()), ("PATH".into(), "/custom".into())],
                env_from_env: vec![("TOKEN".into(), "MY_TOKEN".into())],
                cwd: None,
            }),
        )
    }

    #[test]
    fn sanitized_then_overlaid_then_plugin_variables_last() {
        let ambient = |name: &str| match name {
            "PATH" => Some("/usr/bin".into()),
            "HOME" => Some("/home/me".into()),
            "MY_TOKEN" => Some("canary-secret".into()),
            "OPENAI_API_KEY" | "AWS_SECRET_ACCESS_KEY" | "LD_PRELOAD" | "SSH_AUTH_SOCK" => {
                Some("leak".into())
            }
            _ => None,
        };
        let env = server_environment(
            &spec(McpServerOrigin::Plugin {
                plugin: "p".into(),
                server: "s".into(),
                root: "/r".into(),
                data_dir: "/d".into(),
            }),
            &ambient,
        )
        .unwrap();
        assert_eq!(env.get(&OsString::from("PATH")).unwrap(), "/custom");
        assert_eq!(env.get(&OsString::from("HOME")).unwrap(), "/home/me");
        assert_eq!(env.get(&OsString::from("TOKEN")).unwrap(), "canary-secret");
        assert_eq!(env.get(&OsString::from("PLUGIN_ROOT")).unwrap(), "/r");
        assert_eq!(env.get(&OsString::from("PLUGIN_DATA")).unwrap(), "/d");
        assert!(env.values().all(|v| v != "leak"));
    }

    #[test]
    fn missing_env_from_env_names_the_variable_only() {
        let err = server_environment(&spec(McpServerOrigin::Config), &|_| None).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("MY_TOKEN") && text.contains('s'), "{text}");
    }
}
