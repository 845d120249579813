//! `rho run`: one prompt to completion with the session's tools and no person to ask
//! (`docs/cli.md`, "rho run"). The answer goes to stdout and what happens on the way to stderr;
//! with `--json`, stdout carries every session event as the notification line RPC mode writes.
//! Servers' forms are declined and no model is bound for sampling (the host is told no person
//! answers questions, so neither capability is declared).

use std::collections::HashSet;
use std::io::{IsTerminal, Read};
use std::process::ExitCode;

use rho_component::{PermissionMode, RiskLevel};
use rho_core::host::{HostEvent, Operation, PromptReply, Response, SessionHost};
use rho_core::provider::FinishReason;
use rho_core::session::{
    ApprovalAsked, ApprovalDecision, CallDenied, CallFinished, CallOutcome, CallStarted,
    SessionEvent,
};

use super::rpc::host_options;
use crate::cli::{Approve, RunArgs};
use crate::context::Context;
use crate::output::{clean, error_line, first_line};
use crate::runtime;

/// The longest prompt read from stdin.
const MAX_PROMPT_BYTES: usize = 1 << 20;
/// The request id of the run's one prompt.
const PROMPT: u64 = 1;
/// How much of a call's arguments a progress line shows.
const ARGUMENTS_SHOWN: usize = 120;

pub fn run(ctx: &Context, args: RunArgs) -> anyhow::Result<ExitCode> {
    let message = match prompt(args.prompt.as_deref()) {
        Ok(message) => message,
        Err(usage) => {
            error_line(&format!("error: {usage}"));
            return Ok(ExitCode::from(2));
        }
    };
    let mut registry = ctx.registry()?;
    match args.approve {
        Approve::Never => {}
        Approve::Read => registry.config.agent.permission_mode = PermissionMode::ReadOnly,
        Approve::All => registry.config.agent.permission_mode = PermissionMode::AllowAll,
    }
    // A person may be at the terminal stderr goes to: only then may a login open a browser.
    let login = rho_mcp::oauth::LoginPolicy::for_run(std::io::stderr().is_terminal());
    let options = host_options(ctx, registry, args.session, login, false);
    let json = ctx.json;
    let approve = args.approve;
    runtime::run(|stop| async move {
        let (host, handle, mut events) = tokio::select! {
            started = SessionHost::start(options) => started?,
            () = stop.cancelled() => anyhow::bail!("stopped before the session started"),
        };
        let host = tokio::spawn(host.run(stop.clone()));
        let (lines, writer) = rho_rpc::transport::stdout_lines();
        let mut handle = Some(handle);
        if let Some(handle) = &handle {
            handle
                .submit(
                    PROMPT,
                    Operation::Prompt {
                        message,
                        attachments: Vec::new(),
                    },
                )
                .await?;
        }
        let mut narrator = Narrator::new(approve);
        let mut next_id = PROMPT;
        let mut reply = None;
        while let Some(event) = events.recv().await {
            match event {
                HostEvent::Session(event) => {
                    if json {
                        // A reader that went away drops the rest; the run still ends as it would.
                        let _ = lines.send(rho_rpc::event_line(&event)).await;
                    }
                    if let Some(decision) = narrator.decide(&event)
                        && let Some(handle) = &handle
                    {
                        next_id += 1;
                        handle
                            .submit(next_id, Operation::AnswerApproval(decision))
                            .await?;
                    }
                    if let Some(line) = narrator.narrate(&event)
                        && !json
                    {
                        error_line(&line);
                    }
                }
                HostEvent::Reply { id, result } if id == PROMPT => {
                    reply = Some(result);
                    // The host ends once its input closes; its events end after its servers close.
                    handle = None;
                }
                HostEvent::Reply { .. } => {}
            }
        }
        drop(lines);
        let _ = host.await;
        let _ = writer.await;
        // A signal ends rho with 128 + its number, whatever the run printed.
        if stop.is_cancelled() {
            anyhow::bail!("stopped by a signal");
        }
        let failure = match reply {
            Some(Ok(Response::Prompt(PromptReply {
                reply,
                finish_reason,
            }))) => {
                if !json {
                    // The answer as the model wrote it when stdout is a file or a pipe
                    // (`rho run "write a Makefile" > Makefile`); made safe on a terminal.
                    let mut text = reply.strip_suffix('\n').unwrap_or(&reply).to_owned();
                    text.push('\n');
                    crate::output::out_content(&text);
                }
                unfinished(&finish_reason)
            }
            Some(Ok(_)) => Some("the session host answered the prompt with something else".into()),
            Some(Err(error)) => Some(error.message),
            None => Some("the session host stopped before the prompt ended".into()),
        };
        // A person read the model's failure as it happened; with --json it is said here.
        let said = !json && narrator.failure.is_some();
        match failure.or(narrator.failure) {
            Some(failure) => {
                if !said {
                    error_line(&format!("error: {failure}"));
                }
                Ok(ExitCode::from(1))
            }
            None => Ok(ExitCode::SUCCESS),
        }
    })
}

/// The prompt: the argument, or stdin when there is none (or it is `-`). A usage error when
/// there is nothing to run.
fn prompt(argument: Option<&str>) -> Result<String, String> {
    let text = match argument {
        Some(text) if text != "-" => text.to_owned(),
        _ => {
            let stdin = std::io::stdin();
            if stdin.is_terminal() {
                return Err("no prompt: give one as an argument, or pipe it to stdin".into());
            }
            let mut bytes = Vec::new();
            stdin
                .lock()
                .take(MAX_PROMPT_BYTES as u64 + 1)
                .read_to_end(&mut bytes)
                .map_err(|e| format!("cannot read the prompt from stdin: {e}"))?;
            if bytes.len() > MAX_PROMPT_BYTES {
                return Err(format!(
                    "the prompt on stdin is over {} MiB",
                    MAX_PROMPT_BYTES >> 20
                ));
            }
            String::from_utf8(bytes).map_err(|_| "the prompt on stdin is not UTF-8".to_owned())?
        }
    };
    if text.trim().is_empty() {
        return Err("the prompt is empty".into());
    }
    Ok(text)
}

/// Why a prompt that ended with `reason` did not run to completion, if it did not.
fn unfinished(reason: &FinishReason) -> Option<String> {
    match reason {
        FinishReason::Stop | FinishReason::Other(_) => None,
        FinishReason::Length => Some("the answer was cut at the model's output limit".into()),
        FinishReason::ContentFilter => {
            Some("the provider's content filter withheld the answer".into())
        }
        FinishReason::ToolCalls | FinishReason::MaxIterations => Some(
            "the run spent `[agent] max_iterations` model requests before the model answered"
                .into(),
        ),
        FinishReason::FunctionCall => Some("the model ended on a legacy function call".into()),
        FinishReason::Aborted => Some("the run was aborted".into()),
    }
}

/// Answers approvals for a run without a person, and tells stderr what happens.
struct Narrator {
    approve: Approve,
    /// The calls refused at an approval request (their denial says so).
    refused: HashSet<String>,
    /// The model's failure, when it failed.
    failure: Option<String>,
}

impl Narrator {
    fn new(approve: Approve) -> Self {
        Self {
            approve,
            refused: HashSet::new(),
            failure: None,
        }
    }

    /// The answer to an approval request, for `event`s that are one.
    fn decide(&mut self, event: &SessionEvent) -> Option<ApprovalDecision> {
        let SessionEvent::ApprovalRequest(ApprovalAsked { call_id, risk, .. }) = event else {
            return None;
        };
        let approved = match self.approve {
            Approve::All => true,
            Approve::Read => *risk == RiskLevel::Read,
            Approve::Never => false,
        };
        if approved {
            return Some(ApprovalDecision::Approve);
        }
        self.refused.insert(call_id.clone());
        Some(ApprovalDecision::Deny)
    }

    /// The stderr line for `event`, when a person reading along should see one.
    fn narrate(&mut self, event: &SessionEvent) -> Option<String> {
        match event {
            SessionEvent::ToolCall(CallStarted {
                display_name,
                arguments,
                ..
            }) => Some(format!(
                "→ {} {}",
                clean(display_name),
                clean(&first_line(arguments, ARGUMENTS_SHOWN))
            )),
            SessionEvent::ToolResult(CallFinished {
                name,
                outcome,
                output,
                ..
            }) => match outcome {
                CallOutcome::Success => Some(format!("✓ {}", clean(name))),
                // A refusal was told by `ToolDenied`.
                CallOutcome::Denied | CallOutcome::Redirected => None,
                CallOutcome::Error { .. } | CallOutcome::Cancelled => Some(format!(
                    "✗ {}: {}",
                    clean(name),
                    clean(&first_line(output, ARGUMENTS_SHOWN))
                )),
            },
            SessionEvent::ToolDenied(CallDenied {
                call_id,
                display_name,
                ..
            }) => {
                let why = if self.refused.contains(call_id) {
                    "it needs approval, and `rho run` has no one to ask (`--approve all` runs it)"
                } else if self.approve == Approve::Read {
                    "`--approve read` runs only read tools"
                } else {
                    "the permission mode refuses it"
                };
                Some(format!("✗ {} refused: {why}", clean(display_name)))
            }
            SessionEvent::AgentError(message) => {
                self.failure = Some(message.clone());
                Some(format!("error: {}", clean(message)))
            }
            SessionEvent::Notice(notice) => Some(format!("note: {}", clean(&notice.message))),
            SessionEvent::ServerRestart(restart) => Some(match &restart.gave_up {
                Some(gave_up) => format!("note: {}", clean(gave_up)),
                None => format!(
                    "note: MCP server `{}` started again ({})",
                    clean(&restart.server),
                    clean(&restart.reason)
                ),
            }),
            _ => None,
        }
    }
}
