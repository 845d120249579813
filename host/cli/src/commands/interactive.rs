//! Plain `rho` on a terminal: the interactive session (`rho-tui`) over the same session host
//! `rho rpc` drives. The screen opens while the host starts its servers. Logs go to
//! `$RHO_HOME/logs/rho.log`; the screen is the session's, so an OAuth login's address is shown
//! as a notice in it rather than printed.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use rho_core::host::{SessionHost, SessionStart};
use rho_mcp::oauth::{Browser, BrowserFuture, Handover, LoginPolicy, SystemBrowser};
use tokio::sync::mpsc;

use super::rpc::{host_options, stop_on_signals};
use super::runtime;
use crate::cli::RpcArgs;
use crate::context::Context;

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

pub fn run(ctx: &Context, args: RpcArgs, started_at: Instant) -> anyhow::Result<ExitCode> {
    let (notices_tx, notices) = mpsc::unbounded_channel();
    // A person is at the terminal: a login may open their browser (not in CI), and they can
    // answer servers' forms on the tool cards.
    let login = match LoginPolicy::for_run(true) {
        LoginPolicy::Never => LoginPolicy::Never,
        LoginPolicy::Browser(_) => LoginPolicy::Browser(Arc::new(ScreenBrowser {
            notices: notices_tx,
        })),
    };
    let options = host_options(ctx, args, login, true);
    let resumed = !matches!(options.start, SessionStart::New);
    let runtime = runtime()?;
    runtime.block_on(async move {
        let stop = rho_component::CancelSignal::new();
        stop_on_signals(&stop);
        let screen = rho_tui::Options {
            resumed,
            theme: rho_tui::theme::Theme::from_env(),
            started_at,
            workspace: ctx.paths.project.cwd.clone(),
        };
        rho_tui::run(SessionHost::start(options), notices, stop, screen).await
    })?;
    // The terminal reader thread may still be blocked in read(2); nothing is left to do.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    Ok(ExitCode::SUCCESS)
}
