//! Which agent answers a host's prompts ([`Runtime`]): rho's own loop (the session over the
//! chosen provider and the mounted tool set), or the Claude Code CLI. A Claude runtime host
//! mounts nothing (every configured MCP server is listed as not loaded), keeps no session file
//! and refuses what only rho's loop can do (switching models, compaction, resuming rho session
//! files, prompt commands and attachments from MCP servers).

use std::sync::Arc;

use rho_component::CancelSignal;

use super::Work;
use crate::claude::{ClaudeError, ClaudeRuntime, ClaudeSettings};
use crate::host::desk::DeskApprover;
use crate::host::operation::{HostError, Operation, PromptReply, Response};
use crate::host::{SessionStart, server_prompts};
use crate::session::{Session, SessionError};
use crate::{NotLoadedReason, ToolSet};

/// Which agent runs the prompts of a host.
pub(crate) enum Runtime {
    /// rho's own agent loop ([`Session::prompt`]).
    Rho,
    /// The Claude Code CLI.
    Claude(Box<ClaudeRuntime>),
}

/// The provider name the host reports for a Claude runtime session.
pub(crate) const CLAUDE_PROVIDER: &str = "claude-cli";

impl Work {
    /// Makes this a Claude runtime host: finds `claude` (a missing one fails the start, saying
    /// how to install it), lists the servers as not loaded and opens an ephemeral session
    /// (rho keeps no file; Claude keeps its own).
    pub(super) fn start_claude(&mut self, start: &SessionStart) -> Result<(), SessionError> {
        if !matches!(start, SessionStart::New) {
            return Err(SessionError::Claude(ClaudeError::Unsupported {
                what: "resuming a rho session file (--continue, --session)",
            }));
        }
        let agent = &self.registry.config.agent;
        let settings = ClaudeSettings {
            command: agent
                .claude_command
                .clone()
                .unwrap_or_else(|| rho_config::DEFAULT_CLAUDE_COMMAND.into()),
            workspace: self.registry.paths.project.cwd.clone(),
            permission_mode: agent.permission_mode,
            model: self.flags.model.clone().or_else(|| agent.model.clone()),
            extra_roots: agent.extra_roots.clone(),
            hidden_env: self.registry.secret_variables(),
        };
        let claude =
            ClaudeRuntime::new(settings, std::env::vars_os()).map_err(SessionError::Claude)?;
        self.tools = Arc::new(self.registry.unmounted(NotLoadedReason::ClaudeRuntime));
        let config = self.session_config(String::new(), None);
        let provider = self.unavailable_provider();
        self.replace_session(Session::ephemeral(config, provider, self.tools.clone()));
        self.provider_error = None;
        self.runtime = Runtime::Claude(Box::new(claude));
        Ok(())
    }

    /// Whether the Claude CLI answers this host's prompts.
    pub(super) fn is_claude(&self) -> bool {
        matches!(self.runtime, Runtime::Claude(_))
    }

    /// The Claude runtime, when this host runs one.
    pub(super) fn claude(&mut self) -> Option<&mut ClaudeRuntime> {
        match &mut self.runtime {
            Runtime::Claude(claude) => Some(claude),
            Runtime::Rho => None,
        }
    }

    /// What a Claude runtime host refuses, before it is handled; `None` for everything else.
    pub(super) fn refused_by_runtime(&self, operation: &Operation) -> Option<HostError> {
        if matches!(self.runtime, Runtime::Rho) {
            return None;
        }
        let what = match operation {
            Operation::SetModel(_) => "switching models (start rho with --model instead)",
            Operation::Compact => "compaction",
            Operation::ResumeSession(_) => "resuming a rho session file",
            Operation::ReadResource { .. } => "reading MCP resources",
            Operation::Prompt { attachments, .. } if !attachments.is_empty() => {
                "attaching MCP resources"
            }
            Operation::Prompt { message, .. }
                if server_prompts::split_command(message).is_some() =>
            {
                "MCP prompt commands"
            }
            _ => return None,
        };
        Some(HostError::invalid_request(
            ClaudeError::Unsupported { what }.to_string(),
        ))
    }

    /// One prompt through Claude.
    pub(super) async fn claude_prompt(
        &mut self,
        message: &str,
        cancel: &CancelSignal,
    ) -> Result<Response, HostError> {
        let outbox = self.outbox.clone();
        let approver = DeskApprover(self.desk.clone());
        let Some(claude) = self.claude() else {
            return Err(HostError::internal("not a claude runtime session"));
        };
        let turn = claude
            .prompt(message, outbox.as_ref(), &approver, cancel)
            .await
            .map_err(|e| HostError::internal(e.to_string()))?;
        Ok(Response::Prompt(PromptReply {
            reply: turn.reply,
            finish_reason: turn.finish_reason,
        }))
    }

    /// A new tool set after `reloadExtensions` in a Claude runtime host: still nothing loaded.
    pub(super) fn claude_tools(&self) -> Option<Arc<ToolSet>> {
        match self.runtime {
            Runtime::Claude(_) => Some(Arc::new(
                self.registry.unmounted(NotLoadedReason::ClaudeRuntime),
            )),
            Runtime::Rho => None,
        }
    }
}
