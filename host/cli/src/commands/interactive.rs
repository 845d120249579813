//! Plain `rho` on a terminal: the interactive session (`rho-tui`) over the same session host
//! `rho rpc` drives. The screen opens while the host starts its servers. Logs go to
//! `$RHO_HOME/logs/rho.log`; the screen is the session's, so an OAuth login's address is shown
//! as a notice in it rather than printed, and a project plugin that would run something
//! untrusted is asked about on screen first (answered as `rho plugins trust` would be).

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use rho_core::Registry;
use rho_core::host::{SessionHost, SessionStart};
use rho_mcp::oauth::{Browser, BrowserFuture, Handover, LoginPolicy, SystemBrowser};
use tokio::sync::{mpsc, oneshot};

use super::rpc::host_options;
use crate::cli::RpcArgs;
use crate::context::Context;
use crate::runtime;

/// The system browser, with its message shown in the session instead of printed.
struct ScreenBrowser {
    notices: mpsc::UnboundedSender<String>,
}

impl Browser for ScreenBrowser {
    fn open<'a>(&'a self, url: &'a str) -> BrowserFuture<'a> {
        Box::pin(async move {
            let _ = self
                .notices
                .send(rho_mcp::oauth::opening_message(url).trim_end().to_owned());
            SystemBrowser::launch(url)?;
            Ok(Handover::Opened)
        })
    }
}

/// Asks about each untrusted project plugin on screen; trusts those the user says yes to, and
/// says so on screen when a yes cannot be recorded (the plugin stays untrusted). Whether any
/// was trusted.
async fn ask_trust(
    ctx: &Context,
    registry: &Registry,
    confirms: &mpsc::UnboundedSender<rho_tui::Confirm>,
    notices: &mpsc::UnboundedSender<String>,
) -> bool {
    let mut trusted_any = false;
    for question in registry.trust_questions() {
        let record = question.record;
        let (answer, answered) = oneshot::channel();
        let question = rho_tui::Confirm {
            title: question.title,
            details: question.details,
            answer,
        };
        if confirms.send(question).is_err() || !answered.await.unwrap_or(false) {
            continue;
        }
        let trusted = rho_plugins::TrustStore::load(&ctx.paths.trust_file())
            .and_then(|mut store| store.trust(record));
        match trusted {
            Ok(()) => trusted_any = true,
            Err(e) => {
                tracing::warn!("cannot trust {}: {e}", record.name);
                let _ = notices.send(format!(
                    "rho could not record your trust in {}, so its servers and tools stay off: {e}",
                    record.name
                ));
            }
        }
    }
    trusted_any
}

pub fn run(ctx: &Context, args: RpcArgs, started_at: Instant) -> anyhow::Result<ExitCode> {
    let (notices_tx, notices) = mpsc::unbounded_channel();
    let trust_notices = notices_tx.clone();
    let (confirms_tx, confirms) = mpsc::unbounded_channel();
    // A person is at the terminal: a login may open their browser (not in CI), and they can
    // answer servers' forms on the tool cards.
    let login = match LoginPolicy::for_run(true) {
        LoginPolicy::Never => LoginPolicy::Never,
        LoginPolicy::Browser(_) => LoginPolicy::Browser(Arc::new(ScreenBrowser {
            notices: notices_tx,
        })),
    };
    let resumed = args.session.session.is_some() || args.session.continue_session;
    // A configuration that cannot be used stops rho before the screen takes the terminal.
    let first = ctx.registry()?;
    // A signal raises `stop`: the screen leaves, restoring the terminal, and the host closes
    // its servers.
    runtime::run(|stop| async move {
        let screen = rho_tui::Options {
            resumed,
            theme: rho_tui::theme::Theme::from_env(),
            started_at,
            workspace: ctx.paths.project.cwd.clone(),
        };
        let start = async move {
            let mut registry = first;
            if ask_trust(ctx, &registry, &confirms_tx, &trust_notices).await {
                // Trusted now: load again so its servers and tools mount.
                registry = ctx.registry()?;
            }
            drop(confirms_tx);
            drop(trust_notices);
            let options = host_options(ctx, registry, args.session, login, true);
            debug_assert_eq!(resumed, !matches!(options.start, SessionStart::New));
            Ok::<_, anyhow::Error>(SessionHost::start(options).await?)
        };
        let embedding = rho_tui::Embedding { notices, confirms };
        let saved = rho_tui::run(start, embedding, stop, screen).await?;
        tracing::debug!(?saved, "the session screen closed");
        if saved.is_some() {
            crate::output::out(&resume_hint(&ctx.paths.project.cwd));
        }
        Ok(ExitCode::SUCCESS)
    })
}

/// The line printed on leaving a session that was saved (made terminal-safe by
/// [`crate::output::out`]): how to resume it. `--continue`
/// resumes the project's latest session, so the project is named when rho runs from
/// another directory.
fn resume_hint(project: &Path) -> String {
    let here = std::env::current_dir()
        .ok()
        .and_then(|dir| dunce::canonicalize(dir).ok());
    let elsewhere = here.as_deref() != Some(project);
    let cwd = if elsewhere {
        let path = crate::output::path_str(project);
        format!(" --cwd {}", rho_component::shell_word(&path))
    } else {
        String::new()
    };
    format!("resume this session with: rho{cwd} --continue\n")
}
