//! Which agent answers a host's prompts ([`Runtime`]): rho's own loop (the session over the
//! chosen provider and the mounted tool set), or the Claude Code CLI. A Claude runtime host
//! mounts nothing (every configured MCP server is listed as not loaded), records each turn in
//! the session file as rho's loop does (plus Claude's session id, so a resumed file resumes
//! Claude's session too), passes model switches and compaction to Claude, and refuses what
//! needs rho's MCP servers (prompt commands, attachments and reads of their resources).

use std::sync::Arc;

use rho_component::CancelSignal;

use super::Work;
use crate::claude::{ClaudeError, ClaudeRuntime, ClaudeSettings};
use crate::host::desk::DeskApprover;
use crate::host::operation::{HostError, Operation, PromptReply, Response};
use crate::host::{SessionStart, server_prompts};
use crate::session::{Session, SessionError, list_sessions};
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

/// What the user reads when a Claude runtime resumes a file without a Claude session (one of
/// rho's own runtime).
pub(crate) const NO_CLAUDE_SESSION_NOTE: &str = "This session was not recorded by the \
    Claude runtime, so Claude starts a new session without the earlier conversation (rho's \
    history still shows it)";

/// Points `claude` at the Claude session `session`'s file recorded; without one (a file of
/// rho's own runtime with a conversation), the user is told Claude starts afresh.
fn continue_in_claude(session: &Session, claude: &mut ClaudeRuntime) {
    match session.claude_session() {
        Some(id) => claude.resume_session(id.to_owned()),
        None if !session.messages().is_empty() => {
            claude.notify(NO_CLAUDE_SESSION_NOTE.to_owned());
        }
        None => {}
    }
}

impl Work {
    /// Makes this a Claude runtime host: finds `claude` (a missing one fails the start, saying
    /// how to install it), lists the servers as not loaded and opens the session: a new one
    /// (its file written from the first prompt unless ephemeral), or the file `start` names,
    /// whose Claude session the first prompt resumes.
    pub(super) async fn start_claude(&mut self, start: &SessionStart) -> Result<(), SessionError> {
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
        let model = settings.model.clone().unwrap_or_default();
        let mut claude =
            ClaudeRuntime::new(settings, std::env::vars_os()).map_err(SessionError::Claude)?;
        self.tools = Arc::new(self.registry.unmounted(NotLoadedReason::ClaudeRuntime));
        let config = self.session_config(model, None);
        let provider = self.unavailable_provider();
        let path = match start {
            SessionStart::New => None,
            SessionStart::Resume(path) => Some(path.clone()),
            SessionStart::Continue => list_sessions(
                &self.registry.sessions_dir(),
                &self.registry.paths.project.cwd,
            )
            .into_iter()
            .next()
            .map(|latest| latest.path),
        };
        let session = match path {
            Some(path) => {
                let session = super::resume(
                    path,
                    config,
                    provider,
                    self.tools.clone(),
                    &CancelSignal::new(),
                )
                .await?;
                continue_in_claude(&session, &mut claude);
                session
            }
            None => Session::new(
                config,
                provider,
                self.tools.clone(),
                self.sessions_dir().as_deref(),
            )?,
        };
        self.replace_session(session);
        self.provider_error = None;
        self.runtime = Runtime::Claude(Box::new(claude));
        Ok(())
    }

    /// Resumes the file at `path` in a Claude runtime host (`resumeSession`): the conversation
    /// shows as rho recorded it, and the next prompt resumes its Claude session.
    pub(super) async fn claude_resume(
        &mut self,
        path: std::path::PathBuf,
        cancel: &CancelSignal,
    ) -> Result<(), HostError> {
        let session = super::resume(
            path,
            self.session.config().clone(),
            self.session.provider().clone(),
            self.tools.clone(),
            cancel,
        )
        .await
        .map_err(|e| HostError::invalid_params(e.to_string()))?;
        if let Runtime::Claude(claude) = &mut self.runtime {
            claude.clear().await;
            continue_in_claude(&session, claude);
        }
        self.replace_session(session);
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
        let steering = self.session.steering();
        let Runtime::Claude(claude) = &mut self.runtime else {
            return Err(HostError::internal("not a claude runtime session"));
        };
        let turn = claude
            .prompt(message, &steering, outbox.as_ref(), &approver, cancel)
            .await;
        let record = claude.take_record();
        if let Err(error) =
            self.session
                .record_external_turn(record.messages, record.usage, claude.session_id())
        {
            tracing::warn!(target: "rho::claude", "the session file was not written: {error}");
        }
        let turn = turn.map_err(|e| HostError::internal(e.to_string()))?;
        Ok(Response::Prompt(PromptReply {
            reply: turn.reply,
            finish_reason: turn.finish_reason,
        }))
    }

    /// `setModel` in a Claude runtime host: Claude switches (and checks the name).
    pub(super) async fn claude_set_model(&mut self, model: &str) -> Result<Response, HostError> {
        let Runtime::Claude(claude) = &mut self.runtime else {
            return Err(HostError::internal("not a claude runtime session"));
        };
        claude
            .set_model(model)
            .await
            .map_err(|e| HostError::invalid_params(e.to_string()))?;
        Ok(Response::Model {
            model: model.to_owned(),
            provider: CLAUDE_PROVIDER.to_owned(),
        })
    }

    /// `compact` in a Claude runtime host: Claude's own `/compact`; the answer is Claude's
    /// summary.
    pub(super) async fn claude_compact(
        &mut self,
        cancel: &CancelSignal,
    ) -> Result<Response, HostError> {
        let Runtime::Claude(claude) = &mut self.runtime else {
            return Err(HostError::internal("not a claude runtime session"));
        };
        let summary = claude
            .compact(cancel)
            .await
            .map_err(|e| HostError::invalid_request(e.to_string()))?;
        Ok(Response::Compacted(summary))
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
