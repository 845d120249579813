//! `[agent] runtime` and `[agent] claude_command`: which agent runs a session's prompts (rho's
//! own loop, or the Claude Code CLI) and where the Claude Code CLI is (`docs/sessions.md`,
//! "The Claude CLI runtime").

use std::path::{Path, PathBuf};

/// Which agent runs a session's prompts.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum AgentRuntime {
    /// rho's own agent loop over an OpenAI-compatible provider, with rho's tools and MCP
    /// servers.
    #[default]
    Rho,
    /// The Claude Code CLI (`claude -p` in stream-json mode) with its own tools; rho loads no
    /// MCP server for it and passes it none.
    Claude,
}

impl AgentRuntime {
    /// Every runtime.
    pub const ALL: [AgentRuntime; 2] = [Self::Rho, Self::Claude];

    /// The configuration name: `rho` or `claude`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Rho => "rho",
            Self::Claude => "claude",
        }
    }

    /// The runtime named `name`.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.as_str() == name)
    }
}

impl std::fmt::Display for AgentRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The command rho starts for the Claude runtime when `[agent] claude_command` is not set
/// (looked up in `PATH`).
pub const DEFAULT_CLAUDE_COMMAND: &str = "claude";

/// Resolves `[agent] claude_command`: a bare name is looked up in `PATH` when the session
/// starts, a path with a `/` is taken as it is (relative ones anchor at `base`, the config
/// file's directory). Empty values and values with a NUL byte are refused.
pub(crate) fn resolve_claude_command(value: &Path, base: &Path) -> Result<PathBuf, String> {
    let text = value.as_os_str();
    if text.is_empty() || value.to_string_lossy().trim().is_empty() {
        return Err("agent.claude_command: must not be empty".into());
    }
    if text.as_encoded_bytes().contains(&0) {
        return Err("agent.claude_command: must not contain a NUL byte".into());
    }
    let is_bare = value.components().count() == 1 && !text.as_encoded_bytes().contains(&b'/');
    Ok(if is_bare || value.is_absolute() {
        value.to_path_buf()
    } else {
        base.join(value)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runtimes_round_trip_their_names() {
        for runtime in AgentRuntime::ALL {
            assert_eq!(AgentRuntime::parse(runtime.as_str()), Some(runtime));
        }
        assert_eq!(AgentRuntime::parse("Claude"), None);
        assert_eq!(AgentRuntime::default(), AgentRuntime::Rho);
    }

    #[test]
    fn a_bare_command_stays_bare_and_a_relative_path_anchors_at_the_config() {
        let base = Path::new("/project/.rho");
        assert_eq!(
            resolve_claude_command(Path::new("claude"), base).unwrap(),
            PathBuf::from("claude")
        );
        assert_eq!(
            resolve_claude_command(Path::new("bin/claude"), base).unwrap(),
            PathBuf::from("/project/.rho/bin/claude")
        );
        assert_eq!(
            resolve_claude_command(Path::new("/opt/claude"), base).unwrap(),
            PathBuf::from("/opt/claude")
        );
        assert!(resolve_claude_command(Path::new(" "), base).is_err());
    }
}
