//! Plain `rho` on a terminal: the interactive session (`rho-tui`) over the same session host
//! `rho rpc` drives. Logs go to `$RHO_HOME/logs/rho.log`; the screen is the session's.

use std::process::ExitCode;

use rho_core::host::{SessionHost, SessionStart};

use super::rpc::{host_options, stop_on_signals};
use super::runtime;
use crate::cli::RpcArgs;
use crate::context::Context;

pub fn run(ctx: &Context, args: RpcArgs) -> anyhow::Result<ExitCode> {
    // A person is at the terminal: a login may open their browser (not in CI), and they can
    // answer servers' forms on the tool cards.
    let login = rho_mcp::oauth::LoginPolicy::for_run(true);
    let options = host_options(ctx, args, login, true);
    let resumed = !matches!(options.start, SessionStart::New);
    let runtime = runtime()?;
    runtime.block_on(async move {
        let (host, handle, events) = SessionHost::start(options)
            .await
            .map_err(anyhow::Error::msg)?;
        let stop = rho_component::CancelSignal::new();
        stop_on_signals(&stop);
        let options = rho_tui::Options {
            resumed,
            theme: rho_tui::theme::Theme::from_env(),
        };
        rho_tui::run(host, handle, events, stop, options).await?;
        Ok::<_, anyhow::Error>(())
    })?;
    // The terminal reader thread may still be blocked in read(2); nothing is left to do.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    Ok(ExitCode::SUCCESS)
}
