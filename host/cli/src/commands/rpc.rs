//! `rho rpc`: JSON-RPC 2.0 on stdin/stdout. stdout carries only protocol; logs and
//! diagnostics go to stderr.

use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Arc;

use rho_core::host::{HostOptions, SessionHost, SessionStart};
use rho_core::{MountOptions, ProviderFlags};

use super::runtime;
use crate::cli::RpcArgs;
use crate::context::Context;

/// The host of a session run with these flags over `registry`; `login` says whether an OAuth login may open
/// a browser, `accepts_questions` whether a person can answer servers' forms.
pub(super) fn host_options(
    ctx: &Context,
    registry: rho_core::Registry,
    args: RpcArgs,
    login: rho_mcp::oauth::LoginPolicy,
    accepts_questions: bool,
) -> HostOptions {
    for d in &registry.diagnostics {
        tracing::warn!(code = d.code.as_str(), "{}", d.message);
    }
    let start = match (&args.session, args.continue_session) {
        (Some(path), _) => SessionStart::Resume(ctx.arg_path(path)),
        (None, true) => SessionStart::Continue,
        (None, false) => SessionStart::New,
    };
    HostOptions {
        registry,
        flags: ProviderFlags {
            endpoint: args.provider.endpoint,
            api_key_env: args.provider.api_key_env,
            model: args.provider.model,
            accept_external_provider: args.provider.accept_external_provider,
        },
        ephemeral: args.ephemeral,
        start,
        mount: MountOptions {
            oauth_login: login,
            ..MountOptions::default()
        },
        ambient: Arc::new(|name| std::env::var(name).ok()),
        accepts_questions,
        fixed_provider: None,
    }
}

/// Waits for `signal` (forever when it could not be installed).
async fn received(signal: Option<&mut tokio::signal::unix::Signal>) {
    match signal {
        Some(signal) => {
            signal.recv().await;
        }
        None => std::future::pending().await,
    }
}

/// Aborts what runs and stops the host on SIGINT, SIGTERM or SIGHUP.
pub(super) fn stop_on_signals(stop: &rho_component::CancelSignal) {
    let on_signal = stop.clone();
    tokio::spawn(async move {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = signal(SignalKind::terminate()).ok();
        let mut hangup = signal(SignalKind::hangup()).ok();
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            () = received(term.as_mut()) => {}
            () = received(hangup.as_mut()) => {}
        }
        on_signal.cancel();
    });
}

pub fn run(ctx: &Context, args: RpcArgs) -> anyhow::Result<ExitCode> {
    // stdin and stdout carry JSON-RPC; a person may still be at the terminal stderr goes to
    // (plain `rho` with piped input), and only then may a login open a browser.
    let login = rho_mcp::oauth::LoginPolicy::for_run(std::io::stderr().is_terminal());
    let accepts_questions = args.accept_questions;
    let options = host_options(ctx, ctx.registry(), args, login, accepts_questions);
    let runtime = runtime()?;
    runtime.block_on(async move {
        let (host, handle, events) = SessionHost::start(options)
            .await
            .map_err(anyhow::Error::msg)?;
        let (transport, writer) = rho_rpc::transport::stdio();
        // SIGINT, SIGTERM and SIGHUP abort what runs and stop; EOF lets received work finish.
        let stop = rho_component::CancelSignal::new();
        stop_on_signals(&stop);
        rho_rpc::serve(host, handle, events, transport, stop).await;
        let _ = writer.await;
        Ok::<_, anyhow::Error>(())
    })?;
    // The stdin reader thread may still be blocked in read(2); nothing is left to do.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    Ok(ExitCode::SUCCESS)
}
